//! The tables of a project's index in Postgres, and creating, checking and
//! entering its schema.

use std::collections::BTreeMap;

use super::PgIndex;
use crate::store::parts::{self, Tables};
use crate::store::{IndexReader, StoreError};

/// Bumped when the tables change shape; an index of another version is
/// rebuilt by a writer and refused by a reader.
const SCHEMA_VERSION: i64 = 1;

/// Everything but the schema itself, created in it. `chunk_terms` is the
/// word index: each chunk's terms (`store::word_terms::Tokenizer`) with how often they
/// occur and the chunk's length, all BM25 needs besides meta's
/// 'word_rows' and 'word_tokens'; `term_stats` (`term_stats::TABLE`) sums it up per term.
const TABLES: &str = "
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE files (
    id bigserial PRIMARY KEY,
    path text NOT NULL UNIQUE,
    size bigint NOT NULL,
    mtime_ns bigint NOT NULL,
    hash bytea NOT NULL
);
CREATE TABLE chunks (
    id bigserial PRIMARY KEY,
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    text text NOT NULL,
    embedding vector,
    static_embedding vector,
    around text NOT NULL DEFAULT '',
    embed_key bytea,
    names text NOT NULL DEFAULT '',
    word_count integer NOT NULL DEFAULT 0
);
CREATE INDEX chunks_by_file ON chunks(file_id);
CREATE INDEX chunks_by_embed_key ON chunks(embed_key) WHERE embed_key IS NOT NULL;
CREATE INDEX chunks_unembedded ON chunks(id) WHERE embedding IS NULL;
CREATE TABLE chunk_terms (
    term text NOT NULL,
    chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    tf integer NOT NULL,
    dl integer NOT NULL,
    PRIMARY KEY (term, chunk_id) INCLUDE (tf, dl)
);
CREATE INDEX chunk_terms_by_chunk ON chunk_terms(chunk_id);
CREATE TABLE name_terms (term text PRIMARY KEY, chunks bigint NOT NULL);
CREATE TABLE jobs (
    id text PRIMARY KEY,
    state text NOT NULL,
    started_ms bigint NOT NULL,
    finished_ms bigint,
    files bigint, chunks bigint, embedded bigint, removed bigint,
    error text
);
";

impl PgIndex {
    pub(super) fn schema_exists(&self) -> Result<bool, StoreError> {
        self.has_table("meta")
    }

    /// Whether the project's schema itself exists, with or without tables.
    fn namespace_exists(&self) -> Result<bool, StoreError> {
        let bare = self.schema.trim_matches('"');
        Ok(self.row("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&bare])?.is_some())
    }

    /// Whether the project's schema has the table `name`.
    fn has_table(&self, name: &str) -> Result<bool, StoreError> {
        let bare = self.schema.trim_matches('"');
        Ok(self.row("SELECT to_regclass($1) IS NOT NULL", &[&format!("{bare}.{name}")])?.is_some_and(|r| r.get(0)))
    }

    /// Name the project's schema first, and pgvector's, in every statement.
    pub(super) fn enter_schema(&self) -> Result<(), StoreError> {
        let vector = self
            .row(
                "SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname = 'vector'",
                &[],
            )?
            .map(|r| r.get::<_, String>(0))
            .ok_or_else(|| StoreError::Damaged {
                path: self.place.clone(),
                cause: "the database has no pgvector extension (CREATE EXTENSION vector)".into(),
            })?;
        self.batch(&format!("SET search_path TO {}, \"{}\"", self.schema, vector.replace('"', "\"\"")))
    }

    /// An index made before `term_stats` gains the table, filled at the
    /// end of the run; asked first, so that a role that may not create
    /// tables can still write to an index that has it.
    fn add_term_stats(&self) -> Result<(), StoreError> {
        if self.has_table("term_stats")? {
            return Ok(());
        }
        // Another role's run, one that may write the index but not add to
        // its schema, failed on "permission denied for schema".
        if let Some(owner) = self.owner_if_another()? {
            let cause = format!(
                "this index was made before vecgrep kept each word's bounds, and only its owner, role {owner}, \
                 may add their table: run vg-index once as {owner}"
            );
            return Err(StoreError::Backend { path: self.place.clone(), source: cause.into() });
        }
        self.batch(super::term_stats::TABLE)
    }

    /// `files.ctime_ns` (`store::FileState::ctime_ns`), added after schema
    /// 1 without bumping it: an index made before it gains the column, 0 in
    /// every row (each file read again once), when a writer opens it.
    /// Asked first, so that a role that may write but not alter the table
    /// can still write to an index that has it.
    fn add_ctime(&self) -> Result<(), StoreError> {
        if self.files_have_ctime()? {
            return Ok(());
        }
        // Asked, not tried: a refused ALTER would end the transaction it is in.
        let bare = self.schema.trim_matches('"');
        let owner = self.row(
            "SELECT tableowner::text,
                    pg_has_role(current_user, tableowner, 'MEMBER')
                    OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
             FROM pg_tables WHERE schemaname = $1 AND tablename = 'files'",
            &[&bare],
        )?;
        match owner {
            Some(row) if !row.get::<_, bool>(1) => Err(self.needs_the_owner(&row.get::<_, String>(0))),
            _ => self.batch("ALTER TABLE files ADD COLUMN IF NOT EXISTS ctime_ns bigint NOT NULL DEFAULT 0"),
        }
    }

    /// What a role that may write the index but not alter it (another
    /// checkout's role, README) is told: the column is added once, by the
    /// owner's next run or by hand.
    fn needs_the_owner(&self, owner: &str) -> StoreError {
        let cause = format!(
            "this index was made before vecgrep kept each file's ctime, and only its owner, role {owner}, may add \
             the column: run vg-index once as {owner}, or ALTER TABLE {schema}.files ADD COLUMN ctime_ns bigint \
             NOT NULL DEFAULT 0",
            schema = self.schema
        );
        StoreError::Backend { path: self.place.clone(), source: cause.into() }
    }

    /// Whether `files` has the column `ctime_ns` (`add_ctime`): a reader of
    /// an index no writer of this version has opened takes 0 for every file.
    pub(super) fn files_have_ctime(&self) -> Result<bool, StoreError> {
        let bare = self.schema.trim_matches('"');
        let found = self.row(
            "SELECT 1 FROM pg_attribute a
             JOIN pg_class c ON a.attrelid = c.oid JOIN pg_namespace n ON c.relnamespace = n.oid
             WHERE n.nspname = $1 AND c.relname = 'files' AND a.attname = 'ctime_ns' AND NOT a.attisdropped",
            &[&bare],
        )?;
        Ok(found.is_some())
    }

    /// The index's version is this one's, and it has every table and
    /// column of it: one dropped by hand is damage (`first_missing_part`).
    pub(super) fn check_schema(&self) -> Result<(), StoreError> {
        match self.meta_value("schema")? {
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            other => {
                return Err(StoreError::OtherSchema {
                    path: self.place.clone(),
                    found: other.unwrap_or_else(|| "none".into()),
                    wanted: SCHEMA_VERSION,
                })
            }
        }
        match self.first_missing_part()? {
            Some(cause) => Err(StoreError::Damaged { path: self.place.clone(), cause }),
            None => Ok(()),
        }
    }

    /// The role that owns the project's schema when it is not this
    /// session's (nor one it is a member of, nor a superuser): only the
    /// owner may drop the schema to rebuild it.
    pub(super) fn owner_unless_ours(&self) -> Result<Option<String>, StoreError> {
        let bare = self.schema.trim_matches('"');
        let row = self.row(
            "SELECT pg_get_userbyid(nspowner)::text, pg_has_role(current_user, nspowner, 'USAGE')
                    OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
             FROM pg_namespace WHERE nspname = $1",
            &[&bare],
        )?;
        Ok(row.filter(|r| !r.get::<_, bool>(1)).map(|r| r.get(0)))
    }

    /// When the project's schema is another role's that this session may
    /// act as (a member that may SET it, or a superuser), act as it until
    /// the transaction ends; that owner, if so.
    fn act_for_owner(&self) -> Result<Option<String>, StoreError> {
        let bare = self.schema.trim_matches('"');
        // pg_has_role's SET (PostgreSQL 16) is what SET ROLE asks; before
        // it, membership was.
        let row = self.row(
            "SELECT pg_get_userbyid(n.nspowner)::text,
                    coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false)
                    OR pg_has_role(current_user, n.nspowner,
                        CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'SET' ELSE 'MEMBER' END)
             FROM pg_namespace n WHERE n.nspname = $1 AND pg_get_userbyid(n.nspowner) <> current_user",
            &[&bare],
        )?;
        let Some(owner) = row.filter(|r| r.get::<_, bool>(1)).map(|r| r.get::<_, String>(0)) else { return Ok(None) };
        self.batch(&format!("SET LOCAL ROLE \"{}\"", owner.replace('"', "\"\"")))?;
        Ok(Some(owner))
    }

    /// The role that owns the project's schema when it is another than
    /// the one this session acts as.
    fn owner_if_another(&self) -> Result<Option<String>, StoreError> {
        let bare = self.schema.trim_matches('"');
        let row = self.row(
            "SELECT pg_get_userbyid(nspowner)::text FROM pg_namespace
             WHERE nspname = $1 AND pg_get_userbyid(nspowner) <> current_user",
            &[&bare],
        )?;
        Ok(row.map(|r| r.get(0)))
    }

    /// What a role that may write the index but not drop it (another
    /// checkout's role, README) is told of damage only a rebuild mends: it
    /// tried to drop the schema and failed on "must be owner", every run
    /// and search (review 231).
    fn rebuild_needs_the_owner(&self, owner: &str, why: &str) -> StoreError {
        let cause = format!("{why}, and only its owner, role {owner}, may rebuild it: run vg-index once as {owner}");
        StoreError::Backend { path: self.place.clone(), source: cause.into() }
    }

    /// The first table or column of `TABLES` the project's schema lacks
    /// (`parts::first_missing`).
    fn first_missing_part(&self) -> Result<Option<String>, StoreError> {
        let bare = self.schema.trim_matches('"');
        // The catalog itself, not information_schema's views: 0.4 ms, not 2-5.
        let rows = self.rows(
            "SELECT c.relname::text, a.attname::text, t.typname::text FROM pg_attribute a
             JOIN pg_class c ON a.attrelid = c.oid JOIN pg_namespace n ON c.relnamespace = n.oid
             JOIN pg_type t ON a.atttypid = t.oid
             WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped",
            &[&bare],
        )?;
        let mut found = Tables::new();
        let mut found_types = BTreeMap::new();
        for row in rows {
            let (table, column, typ): (String, String, String) = (row.get(0), row.get(1), row.get(2));
            found.entry(table.clone()).or_default().push(column.clone());
            found_types.insert((table, column), typ);
        }
        // The term bounds are an index's own once it has made them (meta
        // 'term_stats_at'); one made before them lacks them, rightly.
        let mut made = vec![TABLES];
        if self.meta_value("term_stats_at")?.is_some() {
            made.push(super::term_stats::TABLE);
        }
        let expected: Tables = made.iter().flat_map(|sql| tables_in(sql)).collect();
        if let Some(missing) = parts::first_missing(&expected, &found) {
            return Ok(Some(missing));
        }
        // A column of another type (one altered by hand) failed every
        // search with the server's words, and no run rebuilt it (audit 190).
        let mistyped = made.iter().flat_map(|sql| column_types_in(sql)).find_map(|(table, column, wanted)| {
            let has = found_types.get(&(table.clone(), column.clone()))?;
            (*has != wanted).then(|| format!("column {table}.{column} is of type {has}, not {wanted}"))
        });
        Ok(mistyped)
    }

    /// Make the schema and its tables when missing, or rebuild them when of
    /// another version (saying so to `rebuilt`), one opener at a time. A
    /// writer that will run also checks the whole index when a reader
    /// marked damage, and rebuilds it if the damage is there. One writing
    /// beside a run (`in_place`: a server's job state) leaves both to the
    /// run: an index of another version or damaged is its error, never
    /// dropped under a run that may be writing it.
    pub(super) fn create_schema(&self, rebuilt: &mut dyn FnMut(&str), in_place: bool) -> Result<(), StoreError> {
        // pgvector may already be there for a role that cannot create it.
        if let Err(e) = self.batch("CREATE EXTENSION IF NOT EXISTS vector") {
            if self.row("SELECT 1 FROM pg_extension WHERE extname = 'vector'", &[])?.is_none() {
                return Err(e);
            }
        }
        self.batch("BEGIN")?;
        let made = self.create_schema_locked(rebuilt, in_place).and_then(|()| {
            super::writer_lock::check_still_held(&mut *self.client.borrow_mut(), &self.shared, &self.place)
        });
        self.batch(if made.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
        made?;
        self.enter_schema()
    }

    fn create_schema_locked(&self, rebuilt: &mut dyn FnMut(&str), in_place: bool) -> Result<(), StoreError> {
        self.row("SELECT pg_advisory_xact_lock(hashtext($1))", &[&self.schema])?;
        let exists = self.schema_exists()?;
        super::writers::claim(&mut *self.client.borrow_mut(), &self.shared, exists, &self.place)?;
        // A member of the owning role, or a superuser, makes what it makes
        // in the project's schema as the owner: made as itself, a rebuilt
        // schema, or a table added to an older index, became its own, and
        // an owner that is no superuser was refused them (reviews 233, 236).
        let acting_for = self.act_for_owner()?;
        self.check_or_make(rebuilt, in_place, exists, acting_for.as_deref())?;
        if acting_for.is_some() {
            self.batch("RESET ROLE")?;
        }
        Ok(())
    }

    /// The project's schema as it is, brought up to this version's
    /// additions, or made anew (see `create_schema`); `acting_for`, the
    /// owner this session acts as.
    fn check_or_make(
        &self,
        rebuilt: &mut dyn FnMut(&str),
        in_place: bool,
        exists: bool,
        acting_for: Option<&str>,
    ) -> Result<(), StoreError> {
        let why = if exists {
            self.enter_schema()?;
            let marked = |()| if in_place { Ok(None) } else { self.damage_if_marked() };
            match self.check_schema().and_then(marked) {
                Ok(None) => {
                    self.add_term_stats()?;
                    self.name_the_schema()?;
                    return self.add_ctime();
                }
                Err(e) if in_place => return Err(e),
                Ok(Some(cause)) => Some(format!("it is damaged: {cause}")),
                Err(StoreError::OtherSchema { found, .. }) => Some(format!("it was built with schema {found}")),
                Err(StoreError::Damaged { cause, .. }) => Some(format!("it is damaged: {cause}")),
                Err(e) => return Err(e),
            }
        } else {
            // The schema without its meta table: one transaction makes both,
            // so it was dropped since.
            let meta_dropped = self.namespace_exists()?;
            if meta_dropped && in_place {
                return Err(StoreError::Damaged { path: self.place.clone(), cause: "no such table: meta".into() });
            }
            meta_dropped.then(|| "it is damaged: no such table: meta".to_string())
        };
        if let Some(why) = why {
            // Only the owner drops it: a role it cannot act as would make the
            // schema anew as its own (review 236: a member without SET).
            if let Some(owner) = self.owner_if_another()? {
                return Err(self.rebuild_needs_the_owner(&owner, &why));
            }
            rebuilt(&format!("rebuilding the index of {}: {why}", self.place.display()));
            self.batch(&format!("DROP SCHEMA {} CASCADE", self.schema))?;
        }
        self.make_tables(acting_for)
    }

    /// The schema's name is a hash: the project's, kept in the schema's
    /// comment, lets a clear find the revisions other checkouts indexed
    /// from the catalog alone (`revision_shas`). Written by each run that
    /// writes where it says otherwise, so that a schema an older vecgrep
    /// made is named too (review 268); only by a role that may (its owner's
    /// rights), as a failed statement would end the run's transaction.
    fn name_the_schema(&self) -> Result<(), StoreError> {
        let named = format!("{}{}", super::PROJECT_COMMENT, self.shared.project);
        let comment = self.row(
            "SELECT format('COMMENT ON SCHEMA %s IS %L', $1::text, $2::text) FROM pg_namespace \
             WHERE oid = to_regnamespace($1) AND pg_has_role(nspowner, 'USAGE') \
             AND obj_description(oid, 'pg_namespace') IS DISTINCT FROM $2",
            &[&self.schema, &named],
        )?;
        match comment {
            Some(comment) => self.batch(&comment.get::<_, String>(0)),
            None => Ok(()),
        }
    }

    /// The project's schema and tables, made where there are none (as
    /// `acting_for`, when this session acts as the owner).
    fn make_tables(&self, acting_for: Option<&str>) -> Result<(), StoreError> {
        let created = self.batch(&format!("CREATE SCHEMA IF NOT EXISTS {}", self.schema));
        created.map_err(|e| needs_create_right(e, acting_for))?;
        self.enter_schema()?;
        self.batch(TABLES)?;
        self.batch(super::term_stats::TABLE)?;
        self.add_ctime()?;
        self.rows("INSERT INTO meta VALUES ('schema', $1)", &[&SCHEMA_VERSION.to_string()])?;
        self.name_the_schema()?;
        let generation = crate::store::first_generation().to_string();
        self.rows("INSERT INTO meta VALUES ('generation', $1), ('term_stats_at', $1)", &[&generation])?;
        Ok(())
    }
}

/// A refused `CREATE SCHEMA` with what the role lacks: making the writers'
/// schema by hand (README) is not enough, as each project is a schema.
fn needs_create_right(e: StoreError, acting_for: Option<&str>) -> StoreError {
    let StoreError::Backend { path, source } = e else { return e };
    let refused = source
        .downcast_ref::<postgres::Error>()
        .and_then(postgres::Error::as_db_error)
        .filter(|db| *db.code() == postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
        .map(|db| db.message().to_string());
    let Some(refused) = refused else { return StoreError::Backend { path, source } };
    let role = match acting_for {
        // A superuser or member rebuilding it does so as the owner, which
        // lacks the right: the owner is the role to name (review 236).
        Some(owner) => format!("role {owner}, which owns the index and as which it is made,"),
        None => "the role".to_string(),
    };
    let why = format!(
        "{refused}: each project's index is a schema of its own, so {role} needs CREATE on the database \
         (GRANT CREATE ON DATABASE ... TO ...)"
    );
    StoreError::Backend { path, source: why.into() }
}

/// Each table `sql` creates, with its columns: what an index of this
/// version must have. Read from the statements themselves, so that the
/// check cannot drift from them.
fn tables_in(sql: &str) -> Vec<(String, Vec<String>)> {
    let mut tables = Vec::new();
    for made in sql.split("CREATE TABLE ").skip(1) {
        let made = made.strip_prefix("IF NOT EXISTS ").unwrap_or(made);
        let Some((name, body)) = made.split_once('(') else { continue };
        tables.push((name.trim().to_string(), columns_in(body)));
    }
    tables
}

/// Each column of the tables `sql` makes, with the type the server names
/// it by (`pg_type.typname`), where the definition's type is one of those
/// the tables use.
fn column_types_in(sql: &str) -> Vec<(String, String, String)> {
    let mut columns = Vec::new();
    for made in sql.split("CREATE TABLE ").skip(1) {
        let made = made.strip_prefix("IF NOT EXISTS ").unwrap_or(made);
        let Some((name, body)) = made.split_once('(') else { continue };
        for (column, declared) in column_items(body) {
            let typname = match declared.to_ascii_lowercase().as_str() {
                "bigserial" | "bigint" => "int8",
                "integer" => "int4",
                "text" => "text",
                "bytea" => "bytea",
                "vector" => "vector",
                _ => continue,
            };
            columns.push((name.trim().to_string(), column, typname.to_string()));
        }
    }
    columns
}

/// The columns a table's definition (`body`, after its opening
/// parenthesis) declares: the first word of each top-level item that is
/// not a constraint.
fn columns_in(body: &str) -> Vec<String> {
    column_items(body).into_iter().map(|(name, _)| name).collect()
}

/// `columns_in`'s columns, each with the first word of its type.
fn column_items(body: &str) -> Vec<(String, String)> {
    let mut items = vec![String::new()];
    let mut depth = 0;
    for c in body.chars() {
        match c {
            ')' if depth == 0 => break,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        items.last_mut().expect("one item at least").push(c);
    }
    const CONSTRAINTS: [&str; 6] = ["PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT", "EXCLUDE"];
    items
        .iter()
        .filter_map(|item| {
            let mut words = item.split_whitespace();
            Some((words.next()?, words.next().unwrap_or_default()))
        })
        .filter(|(word, _)| !CONSTRAINTS.contains(word))
        .map(|(name, typ)| (name.to_string(), typ.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_and_columns_are_read_from_the_statements() {
        let tables = tables_in(TABLES);
        let names: Vec<&str> = tables.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["meta", "files", "chunks", "chunk_terms", "name_terms", "jobs"]);
        let columns = |t: &str| tables.iter().find(|(n, _)| n == t).unwrap().1.join(" ");
        assert_eq!(columns("chunk_terms"), "term chunk_id tf dl");
        assert_eq!(columns("jobs"), "id state started_ms finished_ms files chunks embedded removed error");
        assert_eq!(columns("meta"), "key value");
        assert_eq!(columns("chunks").split(' ').count(), 11);
        let types = column_types_in(TABLES);
        let type_of =
            |t: &str, c: &str| types.iter().find(|(tt, cc, _)| tt == t && cc == c).map(|(.., ty)| ty.as_str());
        assert_eq!(types.len(), tables.iter().map(|(_, c)| c.len()).sum::<usize>(), "every column's type is known");
        assert_eq!((type_of("chunks", "embedding"), type_of("files", "id")), (Some("vector"), Some("int8")));
        let stats = tables_in(super::super::term_stats::TABLE);
        assert_eq!(
            stats,
            [(
                "term_stats".to_string(),
                vec!["term", "chunks", "max_tf", "min_dl"].into_iter().map(String::from).collect()
            )]
        );
    }
}
