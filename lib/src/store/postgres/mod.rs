//! The Postgres backend: a project's index in a schema of its own in a
//! shared database (`store_url`), vectors in pgvector columns, and words in
//! a table of terms that BM25 is computed from as FTS5 computes it, with
//! FTS5's own tokenizer (`words`), so that both backends rank alike.
//!
//! Every change is one transaction, so a writer killed at any moment leaves
//! each file fully old or fully new, and readers only ever see what was
//! committed. Writers take turns through an advisory lock on the project
//! ([`lock`]), which the server drops with a dead writer's connection and
//! which every change checks is still held (`writer_lock`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;

use postgres::types::ToSql;
use postgres::{Client, Row, Statement};

use connection::connect;
pub(super) use connection::{connection_lost, describe};
pub(super) use writer_lock::lock;

use super::{IndexReader, IndexWriter, StoreError};
use crate::project::{ProjectRoot, SharedIndex};

mod connection;
mod ports;
mod read;
mod schema;
mod scope;
mod term_stats;
#[cfg(test)]
mod test_server;
mod vectors;
mod verify;
mod words;
mod write;
mod writer_lock;
mod writers;

/// A project's index in a shared database, open through one connection.
pub(super) struct PgIndex {
    client: RefCell<Client>,
    /// The project and who writes it (`writers`).
    shared: SharedIndex,
    /// The project's schema, quoted for SQL.
    schema: String,
    /// How errors name the index: database, server and project, never the
    /// URL (it may hold a password).
    place: PathBuf,
    tokenizer: crate::store::word_terms::Tokenizer,
    /// Statements prepared on this connection, by their SQL.
    statements: RefCell<HashMap<String, Statement>>,
    /// Whether a snapshot (`IndexReader::snapshot`) holds a transaction open.
    in_snapshot: Cell<bool>,
    /// What a word search weighs its ways of reading postings by.
    word_costs: words::WordCosts,
}

/// Statements kept prepared per connection, at most; searches in many
/// scopes make many.
const PREPARED_KEPT: usize = 256;

/// The shared index a root names; every caller checked that it names one.
fn shared_of(root: &ProjectRoot) -> &SharedIndex {
    root.shared.as_ref().expect("a root whose index is shared")
}

/// Open the shared index of `root` to read it.
pub(super) fn open_for_reading(root: &ProjectRoot) -> Result<Box<dyn IndexReader>, StoreError> {
    Ok(Box::new(PgIndex::open_for_reading(root)?))
}

/// Open the shared index of `root` for writing (`store::open_for_writing`).
pub(super) fn open_for_writing(
    root: &ProjectRoot,
    rebuilt: &mut dyn FnMut(&str),
) -> Result<Box<dyn IndexWriter>, StoreError> {
    Ok(Box::new(PgIndex::open_for_writing(root, rebuilt)?))
}

/// Open the shared index of `root` beside a running index run (`store::open_in_place`).
pub(super) fn open_in_place(root: &ProjectRoot) -> Result<Box<dyn IndexWriter>, StoreError> {
    Ok(Box::new(PgIndex::open_in_place(root)?))
}

/// Whether `project` has an index in the database: its schema's `meta`
/// table, made in the transaction that makes the schema.
fn has_index(client: &mut impl postgres::GenericClient, project: &str) -> Result<bool, postgres::Error> {
    let meta = format!("{}.meta", schema_name(project));
    Ok(client.query_one("SELECT to_regclass($1) IS NOT NULL", &[&meta])?.get(0))
}

/// The schema a project's index lives in: a name Postgres accepts whatever
/// the project is called (its name is kept in meta 'project').
fn schema_name(project: &str) -> String {
    format!("vg_{}", &blake3::hash(project.as_bytes()).to_hex()[..24])
}

/// Whether the shared database holds an index of `shared`'s project.
pub(super) fn exists(shared: &SharedIndex) -> Result<bool, StoreError> {
    let (mut client, place) = connect(shared)?;
    has_index(&mut client, &shared.project).map_err(|e| StoreError::Backend { path: place, source: e.into() })
}

/// What a project's schema's comment begins with, before the project's name.
const PROJECT_COMMENT: &str = "vecgrep project ";

/// The git revisions of `shared`'s project indexed in the database, by
/// any checkout: the schemas named as vecgrep names them whose comment
/// names `<project>@<sha>` (one an older vecgrep made has none). Read from
/// the catalog alone: a schema any role may make is never read from, as a
/// view or a policy there would run its owner's code as whoever clears
/// (review 266). A clear removed only the revisions this checkout
/// remembered, and said it had removed the project for every checkout
/// (audit 263); a name found here is only a candidate, dropped as the
/// revision's own schema by its writers' rules.
pub(super) fn revision_shas(shared: &SharedIndex) -> Result<Vec<String>, StoreError> {
    let (mut client, place) = connect(shared)?;
    let failed = |e: postgres::Error| StoreError::Backend { path: place.clone(), source: e.into() };
    // Only schemas this role may act for: another role may plant one named
    // for any project, to fail every clear (review 268).
    let listed = "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace \
                  WHERE nspname ~ '^vg_[0-9a-f]{24}$' AND pg_has_role(nspowner, 'USAGE')";
    let rows = client.query(listed, &[]).map_err(failed)?;
    let prefix = format!("{PROJECT_COMMENT}{}@", shared.project);
    let comments = rows.iter().filter_map(|r| r.get::<_, Option<String>>(0));
    let shas = comments.filter_map(|c| c.strip_prefix(&prefix).map(str::to_string));
    Ok(shas.filter(|sha| crate::project::is_commit_id(sha)).collect())
}

/// Drop a project's index from the shared database, if this checkout is
/// one of its writers (or told to adopt it); whether there was one: a
/// project never indexed is no error. Who may write it is kept.
pub(super) fn remove(shared: &SharedIndex) -> Result<bool, StoreError> {
    drop_index(shared, None)
}

/// As `remove`, for the index a first run that began at `since_ms` made
/// and gave up before writing to (a declined question): the claim that
/// run made is forgotten too (`writers::forget_claim_made_since`). Kept,
/// it refused every other checkout a project with no index.
pub(super) fn remove_made(shared: &SharedIndex, since_ms: i64) -> Result<bool, StoreError> {
    drop_index(shared, Some(since_ms))
}

fn drop_index(shared: &SharedIndex, unclaim_since: Option<i64>) -> Result<bool, StoreError> {
    let (mut client, place) = connect(shared)?;
    let schema = schema_name(&shared.project);
    let failed = |e: postgres::Error| StoreError::Backend { path: place.clone(), source: e.into() };
    let mut tx = client.transaction().map_err(failed)?;
    tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&format!("\"{schema}\"")]).map_err(failed)?;
    if !has_index(&mut tx, &shared.project).map_err(failed)? {
        return Ok(false);
    }
    writers::claim(&mut tx, shared, true, &place)?;
    tx.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).map_err(failed)?;
    if let Some(since_ms) = unclaim_since {
        writers::forget_claim_made_since(&mut tx, shared, since_ms).map_err(failed)?;
    }
    writer_lock::check_still_held(&mut tx, shared, &place)?;
    tx.commit().map_err(failed)?;
    Ok(true)
}

impl PgIndex {
    pub(super) fn open_for_reading(root: &ProjectRoot) -> Result<PgIndex, StoreError> {
        let shared = shared_of(root);
        let index = Self::connected(shared)?;
        if !index.schema_exists()? {
            return Err(StoreError::Missing(index.place));
        }
        index.enter_schema()?;
        index.check_schema()?;
        index.tune_searches();
        Ok(index)
    }

    /// Open for writing, creating the project's schema when missing; one of
    /// another version is rebuilt, and `rebuilt` hears why.
    pub(super) fn open_for_writing(root: &ProjectRoot, rebuilt: &mut dyn FnMut(&str)) -> Result<PgIndex, StoreError> {
        let index = Self::connected(shared_of(root))?;
        connection::never_idle_out(&mut index.client.borrow_mut());
        index.create_schema(rebuilt, false)?;
        Ok(index)
    }

    /// Open to write beside a running index run: created when missing, but
    /// one of another version, or damaged, is an error here, not rebuilt.
    pub(super) fn open_in_place(root: &ProjectRoot) -> Result<PgIndex, StoreError> {
        let index = Self::connected(shared_of(root))?;
        connection::never_idle_out(&mut index.client.borrow_mut());
        index.create_schema(&mut |_| {}, true)?;
        Ok(index)
    }

    fn connected(shared: &SharedIndex) -> Result<PgIndex, StoreError> {
        let (client, place) = connect(shared)?;
        let tokenizer = crate::store::word_terms::Tokenizer::new()?;
        Ok(PgIndex {
            client: RefCell::new(client),
            shared: shared.clone(),
            schema: format!("\"{}\"", schema_name(&shared.project)),
            place,
            tokenizer,
            statements: RefCell::default(),
            in_snapshot: Cell::new(false),
            word_costs: words::WordCosts::MEASURED,
        })
    }

    /// A failure while reading or writing this index, with where it is.
    fn failed(&self, e: postgres::Error) -> StoreError {
        StoreError::Backend { path: self.place.clone(), source: e.into() }
    }

    /// Run `sql` (prepared once per connection) and collect its rows.
    fn rows(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        let mut client = self.client.borrow_mut();
        let statement = self.prepared(&mut client, sql)?;
        client.query(&statement, params).map_err(|e| self.failed(e))
    }

    fn prepared(&self, client: &mut Client, sql: &str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql).map_err(|e| self.failed(e))?;
        let mut kept = self.statements.borrow_mut();
        if kept.len() >= PREPARED_KEPT {
            kept.clear();
        }
        kept.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// The one row `sql` returns, if any.
    fn row(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Option<Row>, StoreError> {
        Ok(self.rows(sql, params)?.into_iter().next())
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        self.client.borrow_mut().batch_execute(sql).map_err(|e| self.failed(e))
    }

    /// Run `read`, whose questions must see one state of the index, in a
    /// read-only transaction of its own, or in the snapshot already open.
    fn in_one_state<T>(&self, read: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        if self.in_snapshot.get() {
            return read();
        }
        self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        let out = read();
        let end = self.batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
        let out = out?;
        end?;
        Ok(out)
    }
}
