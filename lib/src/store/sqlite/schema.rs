//! The tables of an SQLite index, and the version that names their shape.

/// Bumped when the tables change shape; an index of another schema is
/// rebuilt. 2: the full-text table `chunks_fts`. 3: `chunks.embed_key`.
/// 4: `chunks.names` and the table `name_terms`. 5: `chunks.static_embedding`
/// and `chunks.around` (the static tier: chunks without the model's vector).
pub(super) const SCHEMA_VERSION: i64 = 5;

pub(super) const SCHEMA: &str = "
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
    -- the model's vector, little-endian f32; NULL until the chunk is embedded
    -- (lazily by a search, by a fill, or by a full index run) or when that failed
    embedding BLOB,
    -- the static tier's vector (embed::StaticModel), little-endian f32; NULL
    -- when the index was built without one (a remote embedder)
    static_embedding BLOB,
    -- what the chunk is embedded with besides its text (chunk::embedded_text),
    -- so that it can be embedded later without its file
    around TEXT NOT NULL DEFAULT '',
    -- chunk::embed_key of what was embedded
    embed_key BLOB,
    -- the chunk's own names (chunk::Context::names), space-separated
    names TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_id);
-- The chunks still without the model's vector, for counting and filling them.
CREATE INDEX IF NOT EXISTS chunks_unembedded ON chunks(id) WHERE embedding IS NULL;
-- How many chunks have each term (terms::terms_of_names) in their names,
-- for how rare a term is; meta 'named_chunks' counts the chunks with names.
CREATE TABLE IF NOT EXISTS name_terms (term TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID;
";

/// A chunk whose embedded text is already in the index takes the stored
/// vector instead of being embedded again (`IndexReader::vector_for_key`).
pub(super) const SCHEMA_KEYS: &str = "
CREATE INDEX IF NOT EXISTS chunks_by_embed_key ON chunks(embed_key) WHERE embed_key IS NOT NULL;
";

/// Index runs asked for through vg-serve, kept across restarts. Added after
/// schema 4 without bumping it: older versions ignore the table, and this
/// one creates it on any index it writes.
pub(super) const SCHEMA_JOBS: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    finished_ms INTEGER,
    files INTEGER, chunks INTEGER, embedded INTEGER, removed INTEGER,
    error TEXT
) WITHOUT ROWID;
";

/// `files.ctime_ns` (`store::FileState::ctime_ns`), added after schema 5
/// without bumping it: an index made before it gains the column, 0 in
/// every row (read again once), when first opened for writing; older
/// versions write rows without it, which read as 0 too. A reader of an
/// index no writer has opened since takes 0 for every file
/// (`files_have_ctime`).
pub(super) fn add_ctime(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    if !files_have_ctime(conn)? {
        conn.execute_batch("ALTER TABLE files ADD COLUMN ctime_ns INTEGER NOT NULL DEFAULT 0")?;
    }
    Ok(())
}

/// Whether the `files` table has the column `ctime_ns` (`add_ctime`).
pub(super) fn files_have_ctime(conn: &rusqlite::Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'ctime_ns'")?
        .query_row([], |r| r.get::<_, i64>(0))
        .map(|n| n > 0)
}

/// The words of each chunk (`terms::chunk_words`), rowid = chunk id.
/// Contentless: the text is already in `chunks`.
pub(super) const SCHEMA_FTS: &str = concat!(
    "
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    terms, content = '', contentless_delete = 1, tokenize = '",
    word_tokenizer!(),
    "'
);
"
);

/// The commit log (vg-log), added after schema 4 without bumping it: older
/// versions ignore the tables, and this one creates them on any index it
/// opens for writing. Its own model is kept in meta 'log_model'.
pub(super) const SCHEMA_COMMITS: &str = "
CREATE TABLE IF NOT EXISTS commits (
    id INTEGER PRIMARY KEY,
    sha TEXT NOT NULL UNIQUE,
    time INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    author TEXT NOT NULL,
    email TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    -- touched files, relative to the root, each ended by a NUL (rows written
    -- before vecgrep kept names with newlines: one a line)
    paths TEXT NOT NULL,
    diffs INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS commit_pieces (
    id INTEGER PRIMARY KEY,
    commit_id INTEGER NOT NULL REFERENCES commits(id) ON DELETE CASCADE,
    -- 0 the message, 1 changed lines of one file
    kind INTEGER NOT NULL,
    path TEXT,
    line INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS commit_pieces_by_commit ON commit_pieces(commit_id);
CREATE VIRTUAL TABLE IF NOT EXISTS commit_fts USING fts5(
    terms, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
);
";
