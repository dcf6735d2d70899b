//! The tables of a project's index in Postgres, and creating, checking and
//! entering its schema.

use super::PgIndex;
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
        self.batch(super::term_stats::TABLE)
    }

    pub(super) fn check_schema(&self) -> Result<(), StoreError> {
        match self.meta_value("schema")? {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
            other => Err(StoreError::OtherSchema {
                path: self.place.clone(),
                found: other.unwrap_or_else(|| "none".into()),
                wanted: SCHEMA_VERSION,
            }),
        }
    }

    /// Make the schema and its tables when missing, or rebuild them when of
    /// another version (saying so to `rebuilt`), one opener at a time.
    pub(super) fn create_schema(&self, rebuilt: &mut dyn FnMut(&str)) -> Result<(), StoreError> {
        // pgvector may already be there for a role that cannot create it.
        if let Err(e) = self.batch("CREATE EXTENSION IF NOT EXISTS vector") {
            if self.row("SELECT 1 FROM pg_extension WHERE extname = 'vector'", &[])?.is_none() {
                return Err(e);
            }
        }
        self.batch("BEGIN")?;
        let made = self.create_schema_locked(rebuilt);
        self.batch(if made.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
        made?;
        self.enter_schema()
    }

    fn create_schema_locked(&self, rebuilt: &mut dyn FnMut(&str)) -> Result<(), StoreError> {
        self.row("SELECT pg_advisory_xact_lock(hashtext($1))", &[&self.schema])?;
        let exists = self.schema_exists()?;
        super::writers::claim(&mut *self.client.borrow_mut(), &self.shared, exists, &self.place)?;
        if exists {
            self.enter_schema()?;
            match self.check_schema() {
                Ok(()) => return self.add_term_stats(),
                Err(StoreError::OtherSchema { found, .. }) => {
                    rebuilt(&format!(
                        "rebuilding the index of {}: it was built with schema {found}",
                        self.place.display()
                    ));
                    self.batch(&format!("DROP SCHEMA {} CASCADE", self.schema))?;
                }
                Err(e) => return Err(e),
            }
        }
        self.batch(&format!("CREATE SCHEMA IF NOT EXISTS {}", self.schema))?;
        self.enter_schema()?;
        self.batch(TABLES)?;
        self.batch(super::term_stats::TABLE)?;
        self.rows("INSERT INTO meta VALUES ('schema', $1)", &[&SCHEMA_VERSION.to_string()])?;
        let generation = crate::store::first_generation().to_string();
        self.rows("INSERT INTO meta VALUES ('generation', $1), ('term_stats_at', $1)", &[&generation])?;
        Ok(())
    }
}
