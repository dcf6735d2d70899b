//! The on-disk index: one SQLite database per project root at
//! `<root>/.vecgrep/index.db`, with vectors scored by sqlite-vec.
//!
//! A file's row and its chunks change together in one transaction, so a kill
//! at any moment leaves each file either fully old or fully new. WAL mode lets
//! searches read while an index run writes; `index.lock` makes writers take
//! turns.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::chunk::Chunk;
use crate::embed::{blob_floats, blob_to_vector, vector_to_blob};
use crate::project::root::ProjectRoot;
use crate::search::lexical;
use crate::search::names::QueryWords;

/// Bumped when the tables change shape; an index of another schema is
/// rebuilt. 2: the full-text table `chunks_fts`. 3: `chunks.embed_key`.
/// 4: `chunks.names` and the table `name_terms`.
pub const SCHEMA_VERSION: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    -- little-endian f32 vector; NULL marks a hole (a chunk whose embedding failed)
    embedding BLOB,
    -- chunk::embed_key of what was embedded
    embed_key BLOB,
    -- the chunk's own names (chunk::Context::names), space-separated
    names TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_id);
-- How many chunks have each term (names::terms_of_names) in their names,
-- for how rare a term is; meta 'named_chunks' counts the chunks with names.
CREATE TABLE IF NOT EXISTS name_terms (term TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID;
";

/// A chunk whose embedded text is already in the index takes the stored
/// vector instead of being embedded again (`Store::vector_for_key`).
const SCHEMA_KEYS: &str = "
CREATE INDEX IF NOT EXISTS chunks_by_embed_key ON chunks(embed_key) WHERE embed_key IS NOT NULL;
";

/// The words of each chunk (see `lexical::terms`), rowid = chunk id.
/// Contentless: the text is already in `chunks`.
const SCHEMA_FTS: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    terms, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
);
";

/// What an index was built with; a mismatch with the resolved config rebuilds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexMeta {
    pub model: String,
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    /// How chunks are turned into what is embedded (`chunk::FORMAT`);
    /// indexes from before it was recorded have format 1.
    pub chunk_format: u32,
}

/// What the index knows about one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileState {
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: Vec<u8>,
}

/// A stored file's state and how many chunks it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFile {
    pub state: FileState,
    pub chunks: u64,
    /// Chunks stored without a vector; the file is embedded again next run.
    pub holes: u64,
}

/// A file's new content: replaces whatever the index held for it.
#[derive(Debug)]
pub struct FileWrite {
    pub rel: String,
    pub state: FileState,
    /// Each chunk with its vector, or None for a hole.
    pub chunks: Vec<(Chunk, Option<Vec<f32>>)>,
    /// Each chunk's context line (`chunk::contexts`), indexed with its words.
    pub contexts: Vec<String>,
    /// Each chunk's `chunk::embed_key`, by which later runs find its vector.
    pub embed_keys: Vec<[u8; 16]>,
    /// Each chunk's own names (`chunk::Context::names`), space-separated.
    pub names: Vec<String>,
    /// How many of the vectors were copied from chunks with the same
    /// embedded text rather than embedded.
    pub copied: u64,
    /// Tokens given to the model for the rest.
    pub tokens: u64,
}

/// The spec's IndexStats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexStats {
    pub files: u64,
    pub chunks: u64,
    pub holes: u64,
    pub db_size_bytes: u64,
}

/// One search hit before it becomes a record.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub file: String,
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    pub text: String,
}

/// Why an existing index could not be used as it is.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no index at {0}; run vg-index first")]
    Missing(PathBuf),
    #[error("the index at {path} is damaged ({cause}); run vg-index --clear-cache to rebuild it")]
    Damaged { path: PathBuf, cause: String },
    #[error("the index at {path} has schema {found}, this vecgrep uses {SCHEMA_VERSION}; run vg-index --clear-cache to rebuild it")]
    OtherSchema { path: PathBuf, found: String },
}

static REGISTER_VEC: Once = Once::new();

/// Make sqlite-vec's functions available on every connection opened after this.
#[allow(unsafe_code)]
fn register_sqlite_vec() {
    REGISTER_VEC.call_once(|| {
        // SAFETY: sqlite3_vec_init has the signature of an SQLite extension
        // entry point; sqlite3_auto_extension expects exactly that function.
        unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            let entry: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(entry));
        }
    });
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Create `<root>/.vecgrep` readable by the user only, with a `.gitignore`
/// that keeps the cache out of version control but not the project config.
pub fn ensure_data_dir(root: &ProjectRoot) -> Result<PathBuf> {
    let dir = root.data_dir();
    if !dir.is_dir() {
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        std::fs::write(&gi, "# Written by vecgrep: the index is a local cache; config.toml may be committed.\n*\n!.gitignore\n!config.toml\n")
            .with_context(|| format!("cannot write {}", gi.display()))?;
    }
    Ok(dir)
}

/// Exclusive right to write one root's index, held until dropped.
pub struct WriteLock {
    _file: File,
}

/// Take the write lock, calling `waiting` once if another writer holds it.
pub fn lock_for_writing(root: &ProjectRoot, waiting: &mut dyn FnMut()) -> Result<WriteLock> {
    let dir = ensure_data_dir(root)?;
    let path = dir.join("index.lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            waiting();
            file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
    Ok(WriteLock { _file: file })
}

/// Remove the index files (ClearCacheResetsIndex); config.toml stays.
pub fn clear(root: &ProjectRoot) -> Result<()> {
    let dir = root.data_dir();
    for name in ["index.db", "index.db-wal", "index.db-shm", "index.db-journal"] {
        let p = dir.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", p.display())),
        }
    }
    Ok(())
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(30))?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

impl Store {
    /// Open the index for writing, creating it if needed. A damaged index or
    /// one of another schema is cache, not data: it is removed and rebuilt,
    /// and `rebuilt` hears why.
    pub fn open_for_writing(root: &ProjectRoot, rebuilt: &mut dyn FnMut(&str)) -> Result<Store> {
        register_sqlite_vec();
        ensure_data_dir(root)?;
        let path = root.index_path();
        match Self::try_open_rw(&path) {
            Ok(store) => Ok(store),
            Err(e) => {
                let cause = match e.downcast_ref::<StoreError>() {
                    Some(StoreError::OtherSchema { found, .. }) => {
                        format!("it was built with schema {found}")
                    }
                    Some(StoreError::Damaged { cause, .. }) => format!("it is damaged: {cause}"),
                    _ => return Err(e),
                };
                rebuilt(&format!("rebuilding the index at {}: {cause}", path.display()));
                clear(root)?;
                Self::try_open_rw(&path)
            }
        }
    }

    fn try_open_rw(path: &Path) -> Result<Store> {
        let conn = Connection::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let store = Store { conn, path: path.to_path_buf() };
        let damaged = |e| store.damaged(e);
        configure(&store.conn).map_err(damaged)?;
        // A chunk row (vector, text, key) is a little over 2 KB: a 4 KB page
        // holds one and wastes the rest, a 16 KB page seven. Only a new
        // database takes the setting; it must precede WAL mode.
        store.conn.pragma_update(None, "page_size", 16384).map_err(damaged)?;
        store.conn.pragma_update(None, "journal_mode", "WAL").map_err(damaged)?;
        store.conn.pragma_update(None, "synchronous", "NORMAL").map_err(damaged)?;
        let has_meta: bool = store
            .conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'meta'", [], |r| r.get::<_, i64>(0))
            .map_err(damaged)?
            > 0;
        if has_meta {
            store.check_schema()?;
        } else {
            store.conn.execute_batch(SCHEMA).map_err(damaged)?;
            store.conn.execute_batch(SCHEMA_FTS).map_err(damaged)?;
            store.conn.execute_batch(SCHEMA_KEYS).map_err(damaged)?;
            store
                .conn
                .execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?1)", [SCHEMA_VERSION.to_string()])
                .map_err(damaged)?;
        }
        Ok(store)
    }

    /// Open an existing index read-only (searching with `--no-index`, stats).
    pub fn open_for_reading(root: &ProjectRoot) -> Result<Store> {
        register_sqlite_vec();
        let path = root.index_path();
        if !path.is_file() {
            return Err(StoreError::Missing(path).into());
        }
        // Read-write open (not SQLITE_OPEN_READ_ONLY) so WAL recovery can run if a writer was killed.
        let conn =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .with_context(|| format!("cannot open {}", path.display()))?;
        configure(&conn)?;
        let store = Store { conn, path };
        store.check_schema()?;
        Ok(store)
    }

    fn schema(&self) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.damaged(e))
    }

    fn check_schema(&self) -> Result<()> {
        let found = self.schema()?;
        match found {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
            other => {
                Err(StoreError::OtherSchema { path: self.path.clone(), found: other.unwrap_or_else(|| "none".into()) }
                    .into())
            }
        }
    }

    fn damaged(&self, e: rusqlite::Error) -> anyhow::Error {
        if is_corruption(&e) {
            StoreError::Damaged { path: self.path.clone(), cause: e.to_string() }.into()
        } else {
            anyhow!(e).context(format!("index {}", self.path.display()))
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the index was built with, or None for a fresh index.
    pub fn meta(&self) -> Result<Option<IndexMeta>> {
        let get = |key: &str| -> Result<Option<String>> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .map_err(|e| self.damaged(e))
        };
        let (Some(model), Some(size), Some(overlap)) = (get("model")?, get("chunk_size")?, get("chunk_overlap")?)
        else {
            return Ok(None);
        };
        Ok(Some(IndexMeta {
            model,
            chunk_size: size.parse().unwrap_or(0),
            chunk_overlap: overlap.parse().unwrap_or(0),
            chunk_format: get("chunk_format")?.and_then(|f| f.parse().ok()).unwrap_or(1),
        }))
    }

    /// Empty the index and record what it is now built with.
    pub fn reset(&mut self, meta: &IndexMeta) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM chunks_fts", [])?;
        tx.execute("DELETE FROM chunks", [])?;
        tx.execute("DELETE FROM files", [])?;
        tx.execute("DELETE FROM name_terms", [])?;
        tx.execute("DELETE FROM meta WHERE key IN ('dims', 'named_chunks')", [])?;
        tx.execute("INSERT OR REPLACE INTO meta VALUES ('generated_checked', '1')", [])?;
        for (k, v) in [
            ("model", meta.model.clone()),
            ("chunk_size", meta.chunk_size.to_string()),
            ("chunk_overlap", meta.chunk_overlap.to_string()),
            ("chunk_format", meta.chunk_format.to_string()),
        ] {
            tx.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", params![k, v])?;
        }
        bump_generation(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// Whether every stored file has been read since generated files were
    /// last let in (`generated`): false for an index from before the check.
    pub fn generated_checked(&self) -> Result<bool> {
        let value: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'generated_checked'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.damaged(e))?;
        Ok(value.as_deref() == Some("1"))
    }

    pub fn set_generated_checked(&mut self, checked: bool) -> Result<()> {
        self.conn
            .execute("INSERT OR REPLACE INTO meta VALUES ('generated_checked', ?1)", [if checked { "1" } else { "0" }])
            .map_err(|e| self.damaged(e))?;
        Ok(())
    }

    /// The size of the vectors the index holds, once known.
    pub fn dims(&self) -> Result<Option<usize>> {
        let value: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'dims'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.damaged(e))?;
        Ok(value.and_then(|v| v.parse().ok()))
    }

    /// Record the size of the vectors the index holds.
    pub fn set_dims(&mut self, dims: usize) -> Result<()> {
        self.conn
            .execute("INSERT OR REPLACE INTO meta VALUES ('dims', ?1)", [dims.to_string()])
            .map_err(|e| self.damaged(e))?;
        Ok(())
    }

    /// Every indexed file with what is known of it.
    pub fn files(&self) -> Result<HashMap<String, StoredFile>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT f.path, f.size, f.mtime_ns, f.hash, count(c.id), count(c.id) - count(c.embedding) FROM files f
                 LEFT JOIN chunks c ON c.file_id = f.id GROUP BY f.id",
            )
            .map_err(|e| self.damaged(e))?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                StoredFile {
                    state: FileState { size: r.get::<_, i64>(1)? as u64, mtime_ns: r.get(2)?, hash: r.get(3)? },
                    chunks: r.get::<_, i64>(4)? as u64,
                    holes: r.get::<_, i64>(5)? as u64,
                },
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.damaged(e))
    }

    /// Tidy the word index after a run that changed it. FTS5 keeps each
    /// batch's words as a new segment and a deleted chunk's words as a
    /// tombstone that every search must skip: after a one-file update of
    /// tokio, a word search took 3.5 ms instead of 2.7 ms until the segments
    /// were merged into one ('optimize').
    ///
    /// Merging everything rewrites the whole word index (25–45 ms on
    /// tokio's 12k chunks), so it is done after every changed run only on
    /// indexes of up to `COMPACT_ALWAYS_CHUNKS` chunks. A larger index is
    /// merged whole once the word rows changed since the last merge reach
    /// 1/`COMPACT_CHANGED_SHARE` of its chunks, which keeps the cost per
    /// changed row the same at any size; in between, each run does a bounded
    /// step of incremental merging, which keeps the segments few.
    pub fn compact_words(&self) -> Result<()> {
        self.compact_words_above(COMPACT_ALWAYS_CHUNKS)
    }

    fn compact_words_above(&self, always: u64) -> Result<()> {
        let read = |sql: &str| self.conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map_err(|e| self.damaged(e));
        let changed =
            read("SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'words_changed'), 0)")?;
        let chunks = read("SELECT count(*) FROM chunks")?;
        let whole = chunks as u64 <= always || changed as u64 * COMPACT_CHANGED_SHARE >= chunks as u64;
        let step = if whole {
            "INSERT INTO chunks_fts(chunks_fts) VALUES('optimize');
             INSERT OR REPLACE INTO meta VALUES ('words_changed', '0');"
        } else {
            "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('merge', -16);"
        };
        self.conn.execute_batch(&format!("BEGIN; {step} COMMIT;")).map_err(|e| self.damaged(e))?;
        Ok(())
    }

    /// Apply one batch in a single transaction: new content for some files,
    /// new stat data for files whose content did not change, and removals.
    pub fn write_batch(
        &mut self,
        writes: &[FileWrite],
        touches: &[(String, FileState)],
        removals: &[String],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut forget_words = tx.prepare_cached(
                "DELETE FROM chunks_fts WHERE rowid IN (SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1)",
            )?;
            let mut remove = tx.prepare_cached("DELETE FROM files WHERE path = ?1")?;
            // Word rows deleted and added, for `compact_words`.
            let mut words_changed = 0usize;
            let mut names = NameCounts::default();
            for rel in removals {
                names.forget_file(&tx, "f.path = ?1", rel)?;
                words_changed += forget_words.execute([rel])?;
                remove.execute([rel])?;
            }
            let mut touch = tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3 WHERE path = ?1")?;
            for (rel, st) in touches {
                touch.execute(params![rel, st.size as i64, st.mtime_ns])?;
            }
            let mut find = tx.prepare_cached("SELECT id FROM files WHERE path = ?1")?;
            let mut drop_words =
                tx.prepare_cached("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?1)")?;
            let mut drop_chunks = tx.prepare_cached("DELETE FROM chunks WHERE file_id = ?1")?;
            let mut add_words = tx.prepare_cached("INSERT INTO chunks_fts (rowid, terms) VALUES (?1, ?2)")?;
            let mut update = tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3, hash = ?4 WHERE id = ?1")?;
            let mut insert =
                tx.prepare_cached("INSERT INTO files (path, size, mtime_ns, hash) VALUES (?1, ?2, ?3, ?4)")?;
            let mut add_chunk = tx.prepare_cached(
                "INSERT INTO chunks (file_id, start_line, end_line, text, embedding, embed_key, names)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for w in writes {
                let st = &w.state;
                let id: i64 = match find.query_row([&w.rel], |r| r.get(0)).optional()? {
                    Some(id) => {
                        names.forget_file(&tx, "f.id = ?1", id)?;
                        words_changed += drop_words.execute([id])?;
                        drop_chunks.execute([id])?;
                        update.execute(params![id, st.size as i64, st.mtime_ns, st.hash])?;
                        id
                    }
                    None => {
                        insert.execute(params![w.rel, st.size as i64, st.mtime_ns, st.hash])?;
                        tx.last_insert_rowid()
                    }
                };
                for (i, (chunk, vector)) in w.chunks.iter().enumerate() {
                    let blob = vector.as_deref().map(vector_to_blob);
                    let key = w.embed_keys.get(i);
                    let chunk_names = w.names.get(i).map_or("", String::as_str);
                    add_chunk.execute(params![
                        id,
                        chunk.start_line as i64,
                        chunk.end_line as i64,
                        chunk.text,
                        blob,
                        key.map(|k| &k[..]),
                        chunk_names
                    ])?;
                    names.count(chunk_names, 1);
                    let mut words = lexical::terms(&chunk.text);
                    if let Some(context) = w.contexts.get(i) {
                        let context_terms = lexical::terms(context);
                        for _ in 0..lexical::CONTEXT_WEIGHT {
                            words.push(' ');
                            words.push_str(&context_terms);
                        }
                    }
                    add_words.execute(params![tx.last_insert_rowid(), words])?;
                    words_changed += 1;
                }
            }
            if words_changed > 0 {
                add_to_meta(&tx, "words_changed", words_changed as i64)?;
            }
            names.write(&tx)?;
        }
        bump_generation(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// The stored vector of a chunk whose embedded text had this key
    /// (`chunk::embed_key`), if the index holds one. Holes do not count.
    pub fn vector_for_key(&self, key: &[u8]) -> Result<Option<Vec<f32>>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT embedding FROM chunks WHERE embed_key = ?1 AND embedding IS NOT NULL LIMIT 1")
            .map_err(|e| self.damaged(e))?;
        let blob: Option<Vec<u8>> = stmt.query_row([key], |r| r.get(0)).optional().map_err(|e| self.damaged(e))?;
        Ok(blob.map(|b| blob_to_vector(&b)))
    }

    /// The spec's IndexStats; db_size_bytes counts the database and its WAL.
    pub fn stats(&self) -> Result<IndexStats> {
        let (files, chunks, holes): (i64, i64, i64) = self
            .conn
            .query_row(
                "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks),
                        (SELECT count(*) FROM chunks WHERE embedding IS NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| self.damaged(e))?;
        let db_size_bytes = ["", "-wal", "-shm"]
            .iter()
            .filter_map(|suffix| {
                let mut p = self.path.as_os_str().to_owned();
                p.push(suffix);
                std::fs::metadata(PathBuf::from(p)).ok().map(|m| m.len())
            })
            .sum();
        Ok(IndexStats { files: files as u64, chunks: chunks as u64, holes: holes as u64, db_size_bytes })
    }

    /// Check the index for damage a crash or a bug could leave: SQLite's own
    /// integrity check, the word index's, chunks without a file, words
    /// without a chunk or a chunk without words, vectors of the wrong size,
    /// and impossible line ranges. Returns what is wrong (nothing when all
    /// is well); the counts come with it.
    pub fn verify(&self) -> Result<(IndexStats, Vec<String>)> {
        let mut problems = Vec::new();
        let mut integrity = self.conn.prepare("PRAGMA integrity_check").map_err(|e| self.damaged(e))?;
        let messages: Vec<String> = integrity
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.damaged(e))?;
        if messages != ["ok"] {
            problems.extend(messages.into_iter().map(|m| format!("sqlite: {m}")));
        }
        if let Err(e) = self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')", []) {
            problems.push(format!("the word index is inconsistent: {e}"));
        }
        let dims = (crate::embed::DIMS * 4) as i64;
        for (sql, what) in [
            ("SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)", "chunks belong to no file"),
            (
                "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)",
                "word entries belong to no chunk",
            ),
            ("SELECT count(*) FROM chunks WHERE id NOT IN (SELECT rowid FROM chunks_fts)", "chunks have no word entry"),
            (
                "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL AND length(embedding) != ?1",
                "vectors have the wrong size",
            ),
            (
                "SELECT count(*) FROM chunks WHERE start_line < 1 OR end_line < start_line",
                "chunks have impossible line ranges",
            ),
        ] {
            let mut stmt = self.conn.prepare(sql).map_err(|e| self.damaged(e))?;
            let n: i64 = if sql.contains("?1") {
                stmt.query_row([dims], |r| r.get(0))
            } else {
                stmt.query_row([], |r| r.get(0))
            }
            .map_err(|e| self.damaged(e))?;
            if n > 0 {
                problems.push(format!("{n} {what}"));
            }
        }
        if !self.name_counts_agree()? {
            problems.push("the name counts do not match the chunks' names".into());
        }
        let stats = self.stats()?;
        if stats.files > 0 && self.meta()?.is_none() {
            problems.push("the index holds files but does not say what built it".into());
        }
        Ok((stats, problems))
    }

    /// Whether `name_terms` and meta 'named_chunks' count what the chunks hold.
    fn name_counts_agree(&self) -> Result<bool> {
        let damaged = |e| self.damaged(e);
        let mut expected = NameCounts::default();
        let mut stmt = self.conn.prepare("SELECT names FROM chunks WHERE names != ''").map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        while let Some(row) = rows.next().map_err(damaged)? {
            expected.count(row.get_ref(0)?.as_str()?, 1);
        }
        let mut stmt = self.conn.prepare("SELECT term, chunks FROM name_terms").map_err(damaged)?;
        let stored: HashMap<String, i64> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).and_then(|rows| rows.collect()).map_err(damaged)?;
        Ok(stored == expected.terms && self.named_chunks()? == expected.named_chunks as u64)
    }

    fn named_chunks(&self) -> Result<u64> {
        let value: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'named_chunks'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.damaged(e))?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// Each fused candidate's name-match boost (`names::boost`) added to its
    /// score, re-ranked: a chunk whose own name says what the query asks
    /// rises above those that only mention its words.
    fn boost_by_names(&self, fused: &mut [(i64, f32)], query: &QueryWords) -> Result<()> {
        let damaged = |e| self.damaged(e);
        let mut names_of = self.conn.prepare_cached("SELECT names FROM chunks WHERE id = ?1").map_err(damaged)?;
        let mut chunks: Vec<(i64, String)> = Vec::with_capacity(fused.len());
        for &(id, _) in fused.iter() {
            if let Some(names) = names_of.query_row([id], |r| r.get::<_, String>(0)).optional().map_err(damaged)? {
                if !names.is_empty() {
                    chunks.push((id, names));
                }
            }
        }
        if chunks.is_empty() {
            return Ok(());
        }
        let named_chunks = self.named_chunks()?;
        let mut df_of = self.conn.prepare_cached("SELECT chunks FROM name_terms WHERE term = ?1").map_err(damaged)?;
        let mut failed = None;
        let scores = crate::search::names::score_chunks(&chunks, query, named_chunks, &mut |term| match df_of
            .query_row([term], |r| r.get::<_, i64>(0))
            .optional()
        {
            Ok(n) => n.unwrap_or(0).max(0) as u64,
            Err(e) => {
                failed.get_or_insert(e);
                0
            }
        });
        if let Some(e) = failed {
            return Err(self.damaged(e));
        }
        for (id, fused_score) in fused.iter_mut() {
            if let Some(&s) = scores.get(id) {
                *fused_score += crate::search::names::boost(s);
            }
        }
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(())
    }

    /// The best `k` chunks in `scope` for `query`, ranked as its mode says,
    /// keeping only those whose score is at least `threshold`.
    pub fn search(&self, query: &SearchQuery<'_>, scope: &Scope, k: usize, threshold: f32) -> Result<Vec<Hit>> {
        // One snapshot for all the queries below, whatever a writer commits meanwhile.
        let snapshot = self.conn.unchecked_transaction().map_err(|e| self.damaged(e))?;
        let hits = self.search_in_snapshot(query, scope, k, threshold)?;
        snapshot.finish().map_err(|e| self.damaged(e))?;
        Ok(hits)
    }

    fn search_in_snapshot(&self, query: &SearchQuery<'_>, scope: &Scope, k: usize, threshold: f32) -> Result<Vec<Hit>> {
        let pool = k.max(CANDIDATE_POOL);
        let semantic = match (query.vector, query.vectors) {
            (Some(v), Some(table)) => table.ranking(v, scope, pool),
            (Some(v), None) => self.semantic_ranking(v, scope, pool)?,
            (None, _) => Vec::new(),
        };
        let lexical = match (&query.lexical, &query.lexical_ranked) {
            (Some(_), Some(ranked)) => ranked.clone(),
            (Some(expr), None) => self.lexical_ranking(expr, scope, pool, query.vectors)?,
            (None, _) => Vec::new(),
        };
        let mut scored: Vec<(i64, f32)> = Vec::with_capacity(k);
        match (query.vector, query.lexical.is_some()) {
            (Some(vector), true) => {
                let cosine: HashMap<i64, f32> = semantic.iter().copied().collect();
                let semantic_ids: Vec<i64> = semantic.iter().map(|s| s.0).collect();
                let lexical_ids: Vec<i64> = lexical.iter().map(|l| l.0).collect();
                let mut fused = lexical::fuse(&[(&semantic_ids, 1.0), (&lexical_ids, query.lexical_weight)]);
                if let Some(words) = query.names.as_ref().filter(|w| !w.is_empty()) {
                    self.boost_by_names(&mut fused, words)?;
                }
                for (id, _) in fused {
                    let score = match (cosine.get(&id), query.vectors) {
                        (Some(&c), _) => c,
                        (None, Some(table)) => match table.score(id, vector) {
                            Some(c) => c,
                            None => continue,
                        },
                        (None, None) => match self.cosine(id, vector)? {
                            Some(c) => c,
                            None => continue,
                        },
                    };
                    if score >= threshold {
                        scored.push((id, score));
                        if scored.len() == k * JOIN_SPARE {
                            break;
                        }
                    }
                }
            }
            (Some(_), false) => scored = semantic,
            (None, _) => scored = lexical.into_iter().map(|(id, bm25)| (id, lexical::bm25_score(bm25))).collect(),
        }
        scored.retain(|s| s.1 >= threshold);
        scored.truncate(k * JOIN_SPARE);
        self.fetch_hits(&scored, k)
    }

    /// The lexical ranking a search for `k` results fuses, for a caller that
    /// runs it apart from the rest (`SearchQuery::lexical_ranked`).
    pub fn lexical_candidates(
        &self,
        expr: &str,
        scope: &Scope,
        k: usize,
        table: Option<&VectorTable>,
    ) -> Result<Vec<(i64, f64)>> {
        self.lexical_ranking(expr, scope, k.max(CANDIDATE_POOL), table)
    }

    /// Chunks in scope by cosine similarity to `query`, best first, at most `limit`.
    fn semantic_ranking(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(i64, f32)>> {
        let mut values: Vec<rusqlite::types::Value> = vec![vector_to_blob(query).into()];
        let mut sql = String::from(
            "SELECT c.id, f.path, 1.0 - vec_distance_cosine(c.embedding, ?1) AS score
             FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.embedding IS NOT NULL",
        );
        sql.push_str(&scope_clause(scope, &mut values));
        sql.push_str(" ORDER BY score DESC, f.path, c.start_line");
        self.ranked(sql, values, scope, limit, |row| Ok(row.get::<_, f64>(2)? as f32))
    }

    /// Chunks in scope matching the FTS5 expression `expr`, by BM25 (more
    /// negative is better), best first, at most `limit`. Holes are left out:
    /// a chunk without a vector is never a result.
    ///
    /// FTS5 ranks fastest on its own: joining every match to its chunk and
    /// file to test the scope cost several milliseconds a query on a large
    /// project. So it is asked for its best rows alone, and those out of
    /// scope (or holes) are dropped afterwards, asking for more while too
    /// many were. Equal scores are ordered by path and line, as in every
    /// ranking. `table`, when given, knows every non-hole chunk's file.
    fn lexical_ranking(
        &self,
        expr: &str,
        scope: &Scope,
        limit: usize,
        table: Option<&VectorTable>,
    ) -> Result<Vec<(i64, f64)>> {
        let mut best = self
            .conn
            .prepare_cached(
                "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY rank LIMIT ?2",
            )
            .map_err(|e| self.damaged(e))?;
        let mut fetch = limit.max(1);
        loop {
            let rows: Vec<(i64, f64)> = best
                .query_map(params![expr, fetch as i64], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect())
                .map_err(|e| self.damaged(e))?;
            let exhausted = rows.len() < fetch;
            let places = self.places(rows.iter().map(|r| r.0), table)?;
            let mut kept: Vec<(f64, &str, usize, i64)> = rows
                .iter()
                .filter_map(|&(id, rank)| places.get(&id).map(|(path, line)| (rank, path.as_str(), *line, id)))
                .filter(|(_, path, _, _)| scope.admits(path))
                .collect();
            if kept.len() >= limit || exhausted {
                kept.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
                return Ok(kept.into_iter().take(limit).map(|(rank, _, _, id)| (id, rank)).collect());
            }
            fetch = fetch.saturating_mul(4);
        }
    }

    /// File and first line of each chunk in `ids` that has a vector.
    fn places(
        &self,
        ids: impl Iterator<Item = i64>,
        table: Option<&VectorTable>,
    ) -> Result<HashMap<i64, (String, usize)>> {
        let ids: Vec<i64> = ids.collect();
        if let Some(table) = table {
            return Ok(ids
                .into_iter()
                .filter_map(|id| table.place(id).map(|(p, l)| (id, (p.to_string(), l))))
                .collect());
        }
        let mut out = HashMap::with_capacity(ids.len());
        let mut find = self
            .conn
            .prepare_cached(
                "SELECT f.path, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id
                 WHERE c.id = ?1 AND c.embedding IS NOT NULL",
            )
            .map_err(|e| self.damaged(e))?;
        for id in ids {
            let place = find
                .query_row([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize)))
                .optional()
                .map_err(|e| self.damaged(e))?;
            if let Some(place) = place {
                out.insert(id, place);
            }
        }
        Ok(out)
    }

    /// Run a ranking query whose rows are (id, path, score), keeping rows
    /// whose file is in `scope.files` (when set) up to `limit`.
    fn ranked<T>(
        &self,
        mut sql: String,
        values: Vec<rusqlite::types::Value>,
        scope: &Scope,
        limit: usize,
        score: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<(i64, T)>> {
        // With a file list, rows outside it are skipped here, so SQL cannot stop at `limit`.
        if scope.files.is_none() {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.damaged(e))?;
        let mut rows = stmt.query(rusqlite::params_from_iter(values)).map_err(|e| self.damaged(e))?;
        let mut out = Vec::with_capacity(limit.min(1024));
        while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
            if out.len() >= limit {
                break;
            }
            if let Some(files) = &scope.files {
                if !files.contains(row.get_ref(1)?.as_str()?) {
                    continue;
                }
            }
            out.push((row.get(0)?, score(row)?));
        }
        Ok(out)
    }

    fn cosine(&self, id: i64, query: &[f32]) -> Result<Option<f32>> {
        self.conn
            .prepare_cached("SELECT 1.0 - vec_distance_cosine(embedding, ?2) FROM chunks WHERE id = ?1")
            .and_then(|mut s| s.query_row(params![id, vector_to_blob(query)], |r| r.get::<_, f64>(0)).optional())
            .map(|c| c.map(|c| c as f32))
            .map_err(|e| self.damaged(e))
    }

    /// The hits for `scored`, best first, at most `k`: a chunk overlapping,
    /// touching or only blank lines away from a better one of the same file
    /// joins it (`join_hit`) instead of taking a place of its own.
    fn fetch_hits(&self, scored: &[(i64, f32)], k: usize) -> Result<Vec<Hit>> {
        let mut fetch = self
            .conn
            .prepare_cached(
                "SELECT f.path, c.start_line, c.end_line, c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1",
            )
            .map_err(|e| self.damaged(e))?;
        let mut hits = Vec::with_capacity(scored.len());
        for &(id, score) in scored {
            let hit = fetch
                .query_row([id], |r| {
                    Ok(Hit {
                        file: r.get(0)?,
                        start_line: r.get::<_, i64>(1)? as usize,
                        end_line: r.get::<_, i64>(2)? as usize,
                        text: r.get(3)?,
                        score,
                    })
                })
                .optional()
                .map_err(|e| self.damaged(e))?;
            // A chunk ranked from vectors in memory may since have been replaced.
            let Some(hit) = hit else { continue };
            // Every line that is not blank is in a chunk, so lines in no chunk
            // are blank. A failed lookup counts as not blank: no join.
            let mut blank = |first: usize, last: usize| -> bool {
                self.conn
                    .prepare_cached(
                        "SELECT NOT EXISTS (SELECT 1 FROM chunks c JOIN files f ON f.id = c.file_id
                         WHERE f.path = ?1 AND c.start_line <= ?3 AND c.end_line >= ?2)",
                    )
                    .and_then(|mut s| s.query_row(params![hit.file, first as i64, last as i64], |r| r.get(0)))
                    .unwrap_or(false)
            };
            match hits.iter_mut().position(|better: &mut Hit| join_hit(better, &hit, &mut blank)) {
                Some(grown) => join_grown(&mut hits, grown, &mut blank),
                None if hits.len() == k => break,
                None => hits.push(hit),
            }
        }
        Ok(hits)
    }
}

/// Indexes of up to this many chunks have their word index merged whole
/// after every run that changed it (`Store::compact_words`): about 100–150
/// ms at this size, against 25–45 ms on tokio's 12k chunks.
const COMPACT_ALWAYS_CHUNKS: u64 = 50_000;

/// A larger word index is merged whole once the rows changed since the last
/// merge reach this fraction (1/N) of its chunks.
const COMPACT_CHANGED_SHARE: u64 = 50;

/// How many candidates each ranking contributes before fusion.
const CANDIDATE_POOL: usize = 100;

/// Candidates looked at per result wanted, for the places that chunks
/// joining better ones leave free.
const JOIN_SPARE: usize = 3;

/// The most lines a result grows to by taking in its neighbours.
pub const MAX_JOINED_LINES: usize = 40;

/// After `hits[grown]` took in a chunk, join to it the other hits it now
/// overlaps or touches (`join_hit`), the worse into the better, until none
/// does: two places that grew towards each other become one.
fn join_grown(hits: &mut Vec<Hit>, mut grown: usize, blank: &mut dyn FnMut(usize, usize) -> bool) {
    let mut other = 0;
    while other < hits.len() {
        if other != grown {
            let (better, worse) = (grown.min(other), grown.max(other));
            let next = hits[worse].clone();
            if join_hit(&mut hits[better], &next, blank) {
                hits.remove(worse);
                grown = better;
                other = 0;
                continue;
            }
        }
        other += 1;
    }
}

/// Extend `better` by `next` when they are chunks of one file that overlap,
/// touch, or have only blank lines between them (`blank(first, last)` says
/// whether lines `first..=last` of the file are all blank), and together
/// span at most `MAX_JOINED_LINES`: one result for one place in the code.
/// `better` keeps its score. False, and nothing changes, otherwise.
pub fn join_hit(better: &mut Hit, next: &Hit, blank: &mut dyn FnMut(usize, usize) -> bool) -> bool {
    let whole_lines = |h: &Hit| h.text.split('\n').count() == h.end_line + 1 - h.start_line;
    let (start, end) = (better.start_line.min(next.start_line), better.end_line.max(next.end_line));
    if better.file != next.file || end + 1 - start > MAX_JOINED_LINES || !whole_lines(better) || !whole_lines(next) {
        return false;
    }
    // The lines between them, if any, first to last.
    let gap = if next.start_line > better.end_line + 1 {
        Some((better.end_line + 1, next.start_line - 1))
    } else if next.end_line + 1 < better.start_line {
        Some((next.end_line + 1, better.start_line - 1))
    } else {
        None
    };
    if gap.is_some_and(|(first, last)| !blank(first, last)) {
        return false;
    }
    let mut text: Vec<&str> = vec![""; end + 1 - start];
    for hit in [next, &*better] {
        for (i, line) in hit.text.split('\n').enumerate() {
            text[hit.start_line - start + i] = line;
        }
    }
    better.text = text.join("\n");
    better.start_line = start;
    better.end_line = end;
    true
}

/// What to rank by. Hybrid when both sides are present.
#[derive(Clone, Debug, Default)]
pub struct SearchQuery<'a> {
    /// The query's vector: rank by meaning.
    pub vector: Option<&'a [f32]>,
    /// An FTS5 match expression (`lexical::match_expression`): rank by words.
    pub lexical: Option<String>,
    /// The lexical ranking's weight in fusion, relative to the semantic one's 1.
    pub lexical_weight: f32,
    /// The vectors in memory, to rank by instead of asking SQLite.
    pub vectors: Option<&'a VectorTable>,
    /// The lexical ranking, when the caller ran it already (`lexical_candidates`).
    pub lexical_ranked: Option<Vec<(i64, f64)>>,
    /// The query's words to match the chunks' own names against, in hybrid
    /// search (`Store::boost_by_names`).
    pub names: Option<QueryWords>,
}

/// SQL restricting `f.path` to the scope's prefixes, binding into `values`.
fn scope_clause(scope: &Scope, values: &mut Vec<rusqlite::types::Value>) -> String {
    if scope.prefixes.is_empty() || scope.prefixes.iter().any(|s| s.is_empty()) {
        return String::new();
    }
    let mut alternatives = Vec::new();
    for s in &scope.prefixes {
        let n = values.len();
        alternatives.push(format!("f.path = ?{} OR substr(f.path, 1, ?{}) = ?{}", n + 1, n + 2, n + 3));
        let prefix = format!("{s}/");
        values.push(s.clone().into());
        values.push((prefix.chars().count() as i64).into());
        values.push(prefix.into());
    }
    format!(" AND ({})", alternatives.join(" OR "))
}

/// Count every change to the chunks, so that a reader holding vectors in
/// memory (`VectorTable`) can tell when they are stale.
fn bump_generation(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    add_to_meta(tx, "generation", 1)
}

/// Add `n` to the counter `key` in meta, which starts from 0 when absent.
/// The changes one batch makes to `name_terms` and meta 'named_chunks',
/// gathered so that each term's row is written once.
#[derive(Default)]
struct NameCounts {
    terms: HashMap<String, i64>,
    named_chunks: i64,
}

impl NameCounts {
    fn count(&mut self, names: &str, delta: i64) {
        let terms = crate::search::names::terms_of_names(names);
        if terms.is_empty() {
            return;
        }
        self.named_chunks += delta;
        for t in terms {
            *self.terms.entry(t).or_default() += delta;
        }
    }

    /// Uncount the names of the chunks of the file `filter` selects (on
    /// `files f`, bound to `value`) before they are deleted.
    fn forget_file(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        filter: &str,
        value: impl rusqlite::ToSql,
    ) -> rusqlite::Result<()> {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT c.names FROM chunks c JOIN files f ON f.id = c.file_id WHERE {filter} AND c.names != ''"
        ))?;
        let names: Vec<String> = stmt.query_map([value], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        for n in names {
            self.count(&n, -1);
        }
        Ok(())
    }

    fn write(&self, tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
        let mut change = tx.prepare_cached(
            "INSERT INTO name_terms VALUES (?1, ?2) ON CONFLICT(term) DO UPDATE SET chunks = chunks + ?2",
        )?;
        let mut drop_unused = tx.prepare_cached("DELETE FROM name_terms WHERE term = ?1 AND chunks <= 0")?;
        for (term, &delta) in &self.terms {
            if delta != 0 {
                change.execute(params![term, delta])?;
            }
            if delta < 0 {
                drop_unused.execute([term])?;
            }
        }
        if self.named_chunks != 0 {
            add_to_meta(tx, "named_chunks", self.named_chunks)?;
        }
        Ok(())
    }
}

fn add_to_meta(tx: &rusqlite::Transaction<'_>, key: &str, n: i64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO meta VALUES (?1, CAST(?2 AS TEXT))
         ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + ?2 AS TEXT)",
        params![key, n],
    )?;
    Ok(())
}

/// Every vector of an index in memory, for a long-running searcher (the
/// server): scoring them here takes about a millisecond, where asking
/// SQLite to compute each distance takes several.
pub struct VectorTable {
    /// The index generation the vectors were read at (`Store::generation`).
    pub generation: i64,
    ids: Vec<i64>,
    /// Position of each id in `ids`.
    position: HashMap<i64, u32>,
    /// Index into `paths` per vector.
    files: Vec<u32>,
    /// First line of each vector's chunk.
    lines: Vec<u32>,
    paths: Vec<String>,
    dims: usize,
    data: Vec<f32>,
}

impl std::fmt::Debug for VectorTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the vectors themselves: there are thousands.
        f.debug_struct("VectorTable")
            .field("generation", &self.generation)
            .field("vectors", &self.ids.len())
            .field("files", &self.paths.len())
            .field("dims", &self.dims)
            .finish()
    }
}

impl VectorTable {
    /// Cosine similarity of chunk `id` to `query`, if the table has it.
    pub fn score(&self, id: i64, query: &[f32]) -> Option<f32> {
        let i = *self.position.get(&id)? as usize;
        (query.len() == self.dims).then(|| dot(&self.data[i * self.dims..(i + 1) * self.dims], query))
    }

    /// File and first line of chunk `id`, if the table has it.
    pub fn place(&self, id: i64) -> Option<(&str, usize)> {
        let i = *self.position.get(&id)? as usize;
        Some((self.paths[self.files[i] as usize].as_str(), self.lines[i] as usize))
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Vectors in scope by cosine similarity to `query` (all vectors are
    /// unit length, so the dot product), best first, at most `limit`; ties
    /// keep path and line order, as the SQL ranking does.
    pub fn ranking(&self, query: &[f32], scope: &Scope, limit: usize) -> Vec<(i64, f32)> {
        if query.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        let in_scope: Vec<bool> = self.paths.iter().map(|p| scope.admits(p)).collect();
        let mut scored: Vec<(usize, f32)> = Vec::with_capacity(self.ids.len());
        for (i, v) in self.data.chunks_exact(self.dims).enumerate() {
            if in_scope[self.files[i] as usize] {
                scored.push((i, dot(v, query)));
            }
        }
        let by_score = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored.into_iter().map(|(i, s)| (self.ids[i], s)).collect()
    }
}

/// Dot product in eight lanes, so that the compiler can vectorize it.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

impl Store {
    /// A number that changes whenever the chunks do.
    pub fn generation(&self) -> Result<i64> {
        let value: Option<String> = self
            .conn
            .prepare_cached("SELECT value FROM meta WHERE key = 'generation'")
            .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
            .map_err(|e| self.damaged(e))?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// Read every vector into memory.
    pub fn load_vectors(&self) -> Result<VectorTable> {
        // Read in one transaction so that the generation matches the vectors.
        let tx = self.conn.unchecked_transaction().map_err(|e| self.damaged(e))?;
        let generation = self.generation()?;
        let mut table = VectorTable {
            generation,
            ids: Vec::new(),
            position: HashMap::new(),
            files: Vec::new(),
            lines: Vec::new(),
            paths: Vec::new(),
            dims: 0,
            data: Vec::new(),
        };
        {
            let mut stmt = tx
                .prepare(
                    "SELECT c.id, f.path, c.embedding, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id
                     WHERE c.embedding IS NOT NULL ORDER BY f.path, c.start_line",
                )
                .map_err(|e| self.damaged(e))?;
            let mut rows = stmt.query([]).map_err(|e| self.damaged(e))?;
            while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
                let path = row.get_ref(1)?.as_str()?;
                if table.paths.last().map(String::as_str) != Some(path) {
                    table.paths.push(path.to_string());
                }
                let blob = row.get_ref(2)?.as_blob()?;
                let dims = blob.len() / 4;
                if table.dims == 0 {
                    table.dims = dims;
                }
                if dims != table.dims || blob.len() % 4 != 0 {
                    return Err(self.damaged(rusqlite::Error::InvalidColumnType(
                        2,
                        "embedding".into(),
                        rusqlite::types::Type::Blob,
                    )));
                }
                let id: i64 = row.get(0)?;
                table.position.insert(id, table.ids.len() as u32);
                table.ids.push(id);
                table.files.push((table.paths.len() - 1) as u32);
                table.lines.push(row.get::<_, i64>(3)?.clamp(0, i64::from(u32::MAX)) as u32);
                table.data.extend(blob_floats(blob));
            }
        }
        tx.finish().map_err(|e| self.damaged(e))?;
        Ok(table)
    }
}

/// Which files a search may return.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Root-relative directories or files; empty, or an empty string, means the whole root.
    pub prefixes: Vec<String>,
    /// When set, only these files (the result of a filtered walk).
    pub files: Option<std::collections::HashSet<String>>,
}

impl Scope {
    /// Whether the file at root-relative `path` may be returned; the same
    /// rule as `scope_clause` and `ranked` apply in SQL.
    pub fn admits(&self, path: &str) -> bool {
        let under = self.prefixes.is_empty()
            || self.prefixes.iter().any(|p| {
                p.is_empty() || path == p || (path.starts_with(p.as_str()) && path[p.len()..].starts_with('/'))
            });
        under && self.files.as_ref().is_none_or(|f| f.contains(path))
    }
}

fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) | Some(rusqlite::ErrorCode::NotADatabase)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(prefixes: &[&str]) -> Scope {
        Scope { prefixes: prefixes.iter().map(|p| p.to_string()).collect(), files: None }
    }

    fn hit(start: usize, end: usize) -> Hit {
        let text = (start..=end).map(|l| format!("line {l}")).collect::<Vec<_>>().join("\n");
        Hit { file: "a.rs".into(), start_line: start, end_line: end, score: 0.5, text }
    }

    fn file_of_words(rel: &str, words: &str) -> FileWrite {
        let chunk = crate::chunk::Chunk { start_line: 1, end_line: 1, text: words.to_string() };
        FileWrite {
            rel: rel.to_string(),
            state: FileState { size: words.len() as u64, mtime_ns: 1, hash: rel.as_bytes().to_vec() },
            chunks: vec![(chunk, Some(vec![1.0; crate::embed::DIMS]))],
            contexts: vec![String::new()],
            embed_keys: vec![[0; 16]],
            names: vec![String::new()],
            copied: 0,
            tokens: 0,
        }
    }

    /// A new index in `dir`, reset as vg-index would leave it.
    fn empty_store(dir: &Path) -> Store {
        let root = crate::project::root::ProjectRoot {
            path: dir.to_path_buf(),
            marker: crate::project::root::RootMarker::None,
        };
        let mut store = Store::open_for_writing(&root, &mut |_| {}).unwrap();
        let meta =
            IndexMeta { model: "m".into(), chunk_size: 500, chunk_overlap: 100, chunk_format: crate::chunk::FORMAT };
        store.reset(&meta).unwrap();
        store
    }

    fn file_with_names(rel: &str, names: &[&str]) -> FileWrite {
        let mut write = file_of_words(rel, "body");
        write.chunks = names
            .iter()
            .enumerate()
            .map(|(i, _)| {
                (
                    crate::chunk::Chunk { start_line: i + 1, end_line: i + 1, text: "body".into() },
                    Some(vec![1.0; crate::embed::DIMS]),
                )
            })
            .collect();
        write.contexts = vec![String::new(); names.len()];
        write.embed_keys = vec![[0; 16]; names.len()];
        write.names = names.iter().map(|n| n.to_string()).collect();
        write
    }

    #[test]
    fn name_counts_follow_writes_replacements_and_removals() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let count = |store: &Store, term: &str| -> i64 {
            store
                .conn
                .query_row("SELECT chunks FROM name_terms WHERE term = ?1", [term], |r| r.get(0))
                .optional()
                .unwrap()
                .unwrap_or(0)
        };
        store
            .write_batch(
                &[
                    file_with_names("a.py", &["Handler emit", "Handler flush", ""]),
                    file_with_names("b.py", &["emit_all"]),
                ],
                &[],
                &[],
            )
            .unwrap();
        assert_eq!((count(&store, "handler"), count(&store, "emit"), count(&store, "all")), (2, 2, 1));
        assert_eq!(store.named_chunks().unwrap(), 3);
        // Replacing a file uncounts its old names.
        store.write_batch(&[file_with_names("a.py", &["Writer flush"])], &[], &[]).unwrap();
        assert_eq!((count(&store, "handler"), count(&store, "emit"), count(&store, "writer")), (0, 1, 1));
        assert_eq!(store.named_chunks().unwrap(), 2);
        store.write_batch(&[], &[], &["b.py".to_string()]).unwrap();
        assert_eq!((count(&store, "emit"), count(&store, "all")), (0, 0));
        let rows: i64 = store.conn.query_row("SELECT count(*) FROM name_terms", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 2, "terms no chunk has are dropped");
        let (_, problems) = store.verify().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // A count out of step with the chunks is damage `verify` reports.
        store.conn.execute("UPDATE name_terms SET chunks = 5 WHERE term = 'flush'", []).unwrap();
        assert_eq!(store.verify().unwrap().1, ["the name counts do not match the chunks' names"]);
    }

    #[test]
    fn a_large_word_index_is_merged_whole_only_after_enough_changes() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let writes: Vec<FileWrite> =
            (0..200).map(|i| file_of_words(&format!("f{i}.txt"), &format!("common word{i}"))).collect();
        store.write_batch(&writes, &[], &[]).unwrap();
        let changed = |store: &Store| -> i64 {
            store
                .conn
                .query_row("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'words_changed'", [], |r| r.get(0))
                .unwrap()
        };
        let finds = |store: &Store, word: &str| -> usize {
            store.lexical_ranking(word, &Scope::default(), 10, None).unwrap().len()
        };
        assert_eq!(changed(&store), 200);
        // 200 chunks is over a threshold of 10: merged whole after the first
        // run (every row changed), then only once 1/50 of them has.
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 0);
        store.write_batch(&[file_of_words("f0.txt", "common renamed0")], &[], &[]).unwrap();
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 2, "one row deleted and one added: a step of merging only");
        assert_eq!((finds(&store, "word0"), finds(&store, "renamed0")), (0, 1), "a replaced chunk's words are gone");
        store.write_batch(&[], &[], &["f1.txt".to_string()]).unwrap();
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 3);
        assert_eq!(finds(&store, "word1"), 0, "a removed file's words are gone");
        store.write_batch(&[file_of_words("f2.txt", "common renamed2")], &[], &[]).unwrap();
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 0, "5 of 199 rows changed: merged whole");
        assert_eq!(finds(&store, "common"), 10);
        // At the default threshold an index this size is merged after every run.
        store.write_batch(&[file_of_words("f3.txt", "common renamed3")], &[], &[]).unwrap();
        store.compact_words().unwrap();
        assert_eq!(changed(&store), 0);
        let (_, problems) = store.verify().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn neighbouring_and_overlapping_hits_join() {
        for (better, next, joined) in [
            ((10, 20), (18, 25), Some((10, 25))), // overlapping after
            ((10, 20), (21, 25), Some((10, 25))), // touching after
            ((10, 20), (4, 12), Some((4, 20))),   // overlapping before
            ((10, 20), (4, 9), Some((4, 20))),    // touching before
            ((10, 20), (12, 15), Some((10, 20))), // inside
            ((10, 20), (20, 60), None),           // would span more than MAX_JOINED_LINES
        ] {
            let mut a = hit(better.0, better.1);
            let joins = join_hit(&mut a, &hit(next.0, next.1), &mut |_, _| panic!("no gap to look at"));
            assert_eq!(joins.then_some((a.start_line, a.end_line)), joined, "{better:?} + {next:?}");
            assert_eq!(a.text, hit(a.start_line, a.end_line).text, "the text is the joined lines");
            assert_eq!(a.score, 0.5);
        }
        let mut a = hit(10, 20);
        assert!(!join_hit(&mut a, &Hit { file: "b.rs".into(), ..hit(12, 14) }, &mut |_, _| true), "another file");
        // A text whose lines do not match its span is left alone.
        assert!(!join_hit(&mut hit(10, 20), &Hit { text: "x\ny".into(), ..hit(21, 21) }, &mut |_, _| true));
    }

    #[test]
    fn hits_join_across_blank_lines_only() {
        let mut asked = Vec::new();
        let mut a = hit(10, 20);
        assert!(!join_hit(&mut a, &hit(23, 25), &mut |f, l| {
            asked.push((f, l));
            false
        }));
        assert_eq!((a.start_line, a.end_line), (10, 20));
        assert!(join_hit(&mut a, &hit(23, 25), &mut |f, l| {
            asked.push((f, l));
            true
        }));
        assert!(join_hit(&mut a, &hit(4, 7), &mut |f, l| {
            asked.push((f, l));
            true
        }));
        assert_eq!(asked, [(21, 22), (21, 22), (8, 9)]);
        assert_eq!((a.start_line, a.end_line), (4, 25));
        let lines: Vec<&str> = a.text.split('\n').collect();
        assert_eq!(lines.len(), 22);
        assert_eq!((lines[0], lines[3], lines[4], lines[5], lines[6]), ("line 4", "line 7", "", "", "line 10"));
        assert_eq!((lines[16], lines[17], lines[18], lines[19]), ("line 20", "", "", "line 23"));
    }

    #[test]
    fn scope_admits_paths_under_its_prefixes() {
        assert!(scope(&[]).admits("a/b.rs"));
        assert!(scope(&[""]).admits("a/b.rs"));
        assert!(scope(&["a"]).admits("a/b.rs"));
        assert!(scope(&["a/b.rs"]).admits("a/b.rs"));
        assert!(!scope(&["a"]).admits("ab/c.rs"), "a prefix is a whole path component");
        assert!(!scope(&["b", "c"]).admits("a/b.rs"));
        let only = Scope { prefixes: vec![], files: Some(["x.rs".to_string()].into()) };
        assert!(only.admits("x.rs") && !only.admits("y.rs"));
    }

    #[test]
    fn vector_table_ranks_by_dot_product_within_scope() {
        let dims = 10; // not a multiple of the 8 lanes
        let unit = |i: usize| (0..dims).map(|d| if d == i { 1.0 } else { 0.0 }).collect::<Vec<f32>>();
        let mut data = Vec::new();
        for i in [0, 1, 9, 0] {
            data.extend(unit(i));
        }
        let table = VectorTable {
            generation: 1,
            ids: vec![10, 11, 12, 13],
            position: [(10, 0), (11, 1), (12, 2), (13, 3)].into(),
            files: vec![0, 0, 1, 1],
            lines: vec![1, 9, 1, 20],
            paths: vec!["a.rs".into(), "b/c.rs".into()],
            dims,
            data,
        };
        let mut query = unit(0);
        query[9] = 0.5;
        let all = table.ranking(&query, &scope(&[]), 10);
        // Equal scores keep table (path, line) order: 10 before 13.
        assert_eq!(all, vec![(10, 1.0), (13, 1.0), (12, 0.5), (11, 0.0)]);
        assert_eq!(table.ranking(&query, &scope(&[]), 2), vec![(10, 1.0), (13, 1.0)]);
        assert_eq!(table.ranking(&query, &scope(&["b"]), 10), vec![(13, 1.0), (12, 0.5)]);
        assert!(table.ranking(&[1.0], &scope(&[]), 10).is_empty(), "a vector of other dimensions matches nothing");
        assert_eq!(table.score(12, &query), Some(0.5));
        assert_eq!(table.score(99, &query), None);
        assert_eq!(table.place(13), Some(("b/c.rs", 20)));
    }
}
