//! The index on disk, behind two traits: [`IndexReader`], the plain
//! questions a search and an index run ask (candidates by vector, candidates
//! by words, a chunk's names and text, counts), and [`IndexWriter`], the
//! changes an index run makes. Ranking (fusion, boosts, thresholds, joining
//! hits) is `search`'s, never the store's.
//!
//! Two backends implement them: SQLite (`sqlite`), a database per project
//! root at `<root>/.vecgrep/index.db`, the default; and Postgres
//! (`postgres`), a schema per project in a shared database, when the root
//! names one (`ProjectRoot::shared`, from `store_url`). They are chosen in
//! the `open_*` functions below; nothing in `index` or `search` names a
//! backend. The commit log (vg-log) stays in SQLite either way.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::chunk::Chunk;
use crate::project::ProjectRoot;

/// How both backends split words for the word index: FTS5's tokenizer
/// settings (SQLite's table; Postgres runs the same tokenizer itself).
macro_rules! word_tokenizer {
    () => {
        "porter unicode61 remove_diacritics 2"
    };
}

mod commits;
mod fill;
mod lock;
mod name_counts;
mod parts;
mod poll;
#[cfg(feature = "shared-store")]
mod postgres;
#[cfg(not(feature = "shared-store"))]
#[path = "postgres_absent.rs"]
mod postgres;
mod revisions;
mod signs;
mod sqlite;
mod word_terms;

pub use commits::{CommitRow, CommitStore, CommitWrite, PieceKind, PieceRef, PieceWrite, StoredCommit, StoredPiece};
pub use lock::{
    ensure_data_dir, lock_for_writing, lock_for_writing_unless, mark_server, own_data_dir, run_under_way,
    try_lock_for_writing, writer_waiting, ServerMark, WriteLock,
};
pub use revisions::{
    admission, check_tree_root, forget_marks, forget_revision, is_commit_id, mark_complete, mark_unfinished,
    record_admission, record_name, record_submodules, record_unwritten, related_roots, remove_revision_files,
    revision_root, revisions, submodules, unwritten, Revision,
};
pub use signs::SignCodes;
pub use sqlite::{file_identity, first_pass_size, FileIdentity, CODES_FROM};
pub use word_terms::{expression_terms, text_terms};

/// A chunk's identity in one index; stable until its file is written again.
pub type ChunkId = i64;

/// What an index was built with; a mismatch with the resolved config rebuilds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexMeta {
    pub model: String,
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    /// How chunks are turned into what is embedded (`chunk::FORMAT`);
    /// indexes from before it was recorded have format 1.
    pub chunk_format: u32,
    /// What names the static table its static vectors come from
    /// (`embed::table_id`); empty for none (a remote embedder) and for
    /// indexes from before it was recorded.
    pub static_table: String,
}

impl IndexMeta {
    /// What the tests build their indexes with.
    #[cfg(test)]
    pub(crate) fn for_tests() -> IndexMeta {
        IndexMeta {
            model: "m".into(),
            chunk_size: 500,
            chunk_overlap: 100,
            chunk_format: crate::chunk::FORMAT,
            static_table: String::new(),
        }
    }

    /// Whether the index's static vectors come from the table this process
    /// embeds a question with (`embed::table_id`); None when it records no
    /// table (built through a remote embedder, or before tables were recorded).
    pub fn static_table_in_use(&self) -> Option<bool> {
        (!self.static_table.is_empty()).then(|| self.static_table == crate::embed::table_id())
    }

    /// The named values an index keeps of its meta (`read` reads them back).
    fn entries(&self) -> [(&'static str, String); 5] {
        [
            ("model", self.model.clone()),
            ("chunk_size", self.chunk_size.to_string()),
            ("chunk_overlap", self.chunk_overlap.to_string()),
            ("chunk_format", self.chunk_format.to_string()),
            ("static_table", self.static_table.clone()),
        ]
    }

    /// The meta an index keeps as named values (`get`), or None for a fresh index.
    fn read(get: &dyn Fn(&str) -> Result<Option<String>, StoreError>) -> Result<Option<IndexMeta>, StoreError> {
        let (Some(model), Some(size), Some(overlap)) = (get("model")?, get("chunk_size")?, get("chunk_overlap")?)
        else {
            return Ok(None);
        };
        Ok(Some(IndexMeta {
            model,
            chunk_size: size.parse().unwrap_or(0),
            chunk_overlap: overlap.parse().unwrap_or(0),
            chunk_format: get("chunk_format")?.and_then(|f| f.parse().ok()).unwrap_or(1),
            static_table: get("static_table")?.unwrap_or_default(),
        }))
    }
}

/// Whether a batch changes what a search holds (chunks, vectors, words):
/// one of stat data alone (a touch, a file whose ctime moved) does not, and
/// leaves the index's generation where it was, so that servers keep the
/// vectors they hold.
fn changes_what_searches_hold(writes: &[FileWrite], removals: &[String]) -> bool {
    !(writes.is_empty() && removals.is_empty())
}

/// What the index knows about one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileState {
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: Vec<u8>,
    /// The status-change time the file had when it was read, or 0 when it
    /// had changed too recently to tell a later write in the same clock
    /// tick apart (`index::file`), or was stored by a version that kept
    /// none: a file stored with 0 is read and hashed again by the next run.
    pub ctime_ns: i64,
}

/// A stored file's state and how many chunks it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFile {
    pub state: FileState,
    pub chunks: u64,
    /// Chunks stored without the model's vector, which a full run embeds
    /// (the file is read again for them); None when not counted
    /// (`IndexReader::files`).
    pub holes: Option<u64>,
}

/// One chunk of a file's new content, with everything stored beside it.
#[derive(Clone, Debug)]
pub struct ChunkWrite {
    pub chunk: Chunk,
    /// The model's vector; None until the chunk is embedded (the static
    /// tier leaves it to searches and fills) or when its embedding failed.
    pub vector: Option<Vec<f32>>,
    /// The static tier's vector (`embed::StaticModel`), when the run had one.
    pub static_vector: Option<Vec<f32>>,
    /// What the chunk is embedded with besides its text (`chunk::embedded_text`).
    pub around: String,
    /// `chunk::embed_key` of what was embedded, by which later runs find its vector.
    pub embed_key: [u8; 16],
    /// The chunk's own names (`chunk::Context::names`), space-separated.
    pub names: String,
    /// What the full-text index holds for it (`terms::chunk_words`).
    pub words: String,
}

/// A file's new content: replaces whatever the index held for it.
#[derive(Debug)]
pub struct FileWrite {
    pub rel: String,
    pub state: FileState,
    pub chunks: Vec<ChunkWrite>,
    /// How many of the vectors were copied from chunks with the same
    /// embedded text rather than embedded.
    pub copied: u64,
    /// Tokens given to the model for the rest.
    pub tokens: u64,
    /// Chunks left without the model's vector on purpose (the static tier),
    /// for a search or a fill to embed.
    pub pending: u64,
}

#[cfg(test)]
impl FileWrite {
    /// A file of one chunk a line per text, each with `vector` if given (tests).
    pub(crate) fn of_texts(rel: &str, texts: &[String], vector: Option<&[f32]>) -> FileWrite {
        let chunks = texts
            .iter()
            .enumerate()
            .map(|(i, text)| ChunkWrite {
                chunk: crate::chunk::Chunk { start_line: i + 1, end_line: i + 1, text: text.clone() },
                vector: vector.map(<[f32]>::to_vec),
                static_vector: None,
                around: String::new(),
                embed_key: [0; 16],
                names: String::new(),
                words: crate::terms::chunk_words(text, ""),
            })
            .collect::<Vec<_>>();
        let state = FileState { size: 1, mtime_ns: 1, hash: content_hash(rel, &chunks), ctime_ns: 1 };
        FileWrite { rel: rel.into(), state, chunks, copied: 0, tokens: 0, pending: 0 }
    }

    /// This file as a fill stores it (tests): the same content, each chunk
    /// `i` with the model's vector `vector(i)`.
    #[cfg(test)]
    pub(crate) fn filled(&self, vector: impl Fn(usize) -> Vec<f32>) -> FileWrite {
        let chunks =
            self.chunks.iter().enumerate().map(|(i, c)| ChunkWrite { vector: Some(vector(i)), ..c.clone() }).collect();
        FileWrite { rel: self.rel.clone(), state: self.state.clone(), chunks, copied: 0, tokens: 0, pending: 0 }
    }
}

/// Now, in milliseconds since the epoch: what a shared store's writer
/// claims are stamped with, and what a run that may forget the claim it
/// made (`remove_made_index`) compares them with.
pub(crate) fn epoch_ms() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// A cosine as a backend computes it, or None where there is no angle: a
/// zero vector (a static vector of a text without a token the table knows,
/// or a query of such a text) gives NaN, which SQLite returns as NULL.
/// Such a chunk is never near anything; no search fails on it.
pub(crate) fn cosine_of_row(raw: Option<f64>) -> Option<f32> {
    finite_cosine(raw).map(|c| c as f32)
}

/// `cosine_of_row` at the backend's precision, for an order that ties
/// break as the exact scan's do.
pub(crate) fn finite_cosine(raw: Option<f64>) -> Option<f64> {
    raw.filter(|c| c.is_finite())
}

/// A test file's hash, of its path and its chunks as written: as with a
/// real file's, another content has another hash (a write of the same hash
/// is taken for the same text, `IndexWriter::write_batch`).
#[cfg(test)]
pub(crate) fn content_hash(rel: &str, chunks: &[ChunkWrite]) -> Vec<u8> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(rel.as_bytes());
    for c in chunks {
        hasher.update(format!("{:?}{:?}{}", c.chunk, c.vector, c.names).as_bytes());
    }
    hasher.finalize().as_bytes().to_vec()
}

impl FileWrite {
    /// Chunks stored without the model's vector because embedding failed.
    pub fn holes(&self) -> u64 {
        self.chunks.iter().filter(|c| c.vector.is_none()).count() as u64 - self.pending
    }
}

/// The spec's IndexStats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexStats {
    pub files: u64,
    pub chunks: u64,
    /// The spec's holes: chunks the embedder refused, stored with no
    /// vector at all (a full run's chunks have the model's vector or none).
    pub holes: u64,
    /// Chunks with a static vector only, awaiting the model's (the static
    /// tier: a search or a fill gives it). Not holes: they are found.
    pub pending: u64,
    pub db_size_bytes: u64,
}

impl IndexStats {
    /// Chunks with the model's vector.
    pub fn vectors(&self) -> u64 {
        self.chunks.saturating_sub(self.holes + self.pending)
    }
}

/// A stored chunk as a search returns it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredChunk {
    pub file: String,
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
}

/// An index run asked for (vg-serve's `POST /v1/index/start`), kept in the
/// index so that a restarted server still answers for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexJob {
    pub id: String,
    pub state: JobState,
    /// Milliseconds since the epoch.
    pub started_ms: i64,
    pub finished_ms: Option<i64>,
    /// What the run did, once it completed.
    pub files: Option<u64>,
    pub chunks: Option<u64>,
    pub embedded: Option<u64>,
    pub removed: Option<u64>,
    /// Why it failed.
    pub error: Option<String>,
}

/// How many index jobs an index keeps, the latest by when they started:
/// a client polls a job it just started, and each `POST /v1/index/start`
/// would otherwise add a row for good.
pub const KEPT_JOBS: i64 = 1000;

impl IndexJob {
    /// A job that has just started: nothing done yet.
    pub fn running(id: String, started_ms: i64) -> IndexJob {
        IndexJob {
            id,
            state: JobState::Running,
            started_ms,
            finished_ms: None,
            files: None,
            chunks: None,
            embedded: None,
            removed: None,
            error: None,
        }
    }
}

/// Where an index job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Running,
    Completed,
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Completed => "completed",
            JobState::Failed => "failed",
        }
    }

    pub fn named(name: &str) -> Option<JobState> {
        [JobState::Running, JobState::Completed, JobState::Failed].into_iter().find(|s| s.as_str() == name)
    }
}

/// One stored vector, as [`IndexReader::each_vector`] and
/// [`IndexReader::each_static_vector`] hand them out.
pub struct VectorRow<'a> {
    pub id: ChunkId,
    pub file: &'a str,
    pub start_line: usize,
    pub vector: &'a [f32],
}

/// The meta key of `IndexReader::run_unfinished`.
const RUN_UNFINISHED: &str = "run_unfinished";

/// How many of an index's chunks have the model's vector and how many lack
/// it, read together (`IndexReader::vector_counts`). What a search decides
/// from them is `search`'s (`MeaningSides::from_counts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VectorCounts {
    pub vectors: u64,
    pub unembedded: u64,
}

/// What BM25 weighs a term by besides its own chunks (FTS5's totals): how
/// many chunks the word index has and how many tokens they hold, in the
/// state of the word index at `generation` (`IndexReader::word_generation`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WordTotals {
    pub generation: i64,
    pub rows: u64,
    pub tokens: u64,
}

/// Which files a search may return.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Root-relative directories or files; empty, or an empty string, means the whole root.
    pub prefixes: Vec<String>,
    /// When set, only these files (the result of a filtered walk).
    pub files: Option<HashSet<String>>,
}

impl Scope {
    /// Whether the prefixes take in the whole root (a filtered walk may
    /// still leave files out).
    pub fn spans_root(&self) -> bool {
        self.prefixes.is_empty() || self.prefixes.iter().any(String::is_empty)
    }

    /// Whether every file of the root is in scope.
    pub fn admits_all(&self) -> bool {
        self.spans_root() && self.files.is_none()
    }

    /// Whether the file at root-relative `path` may be returned. A backend
    /// ranking by vector applies the same rule its own way (SQLite in SQL);
    /// search applies it to words and to the vectors in memory.
    pub fn admits(&self, path: &str) -> bool {
        let under = self.prefixes.is_empty()
            || self.prefixes.iter().any(|p| {
                p.is_empty() || path == p || (path.starts_with(p.as_str()) && path[p.len()..].starts_with('/'))
            });
        under && self.files.as_ref().is_none_or(|f| f.contains(path))
    }

    /// The prefixes under which `store` holds no file: places a search of
    /// an index whose tree is not on disk (a revision's) was asked about
    /// that name nothing in it. The root always names the tree, one with
    /// nothing to index (links and binary files alone) too.
    pub fn prefixes_naming_nothing(&self, store: &dyn IndexReader) -> Result<Vec<String>, StoreError> {
        let files = store.files(false)?;
        let holds_some = |prefix: &String| {
            let one = Scope { prefixes: vec![prefix.clone()], files: None };
            prefix.is_empty() || files.keys().any(|path| one.admits(path))
        };
        Ok(self.prefixes.iter().filter(|p| !holds_some(p)).cloned().collect())
    }
}

/// Several questions answered from one state of the index, whatever a
/// writer commits meanwhile; ended by [`Snapshot::finish`] or by dropping it.
pub struct Snapshot<'a> {
    end: Option<Box<dyn FnOnce() -> Result<(), StoreError> + 'a>>,
}

impl<'a> Snapshot<'a> {
    pub fn new(end: impl FnOnce() -> Result<(), StoreError> + 'a) -> Self {
        Snapshot { end: Some(Box::new(end)) }
    }

    pub fn finish(mut self) -> Result<(), StoreError> {
        self.end.take().map_or(Ok(()), |end| end())
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why the store could not answer; the cases callers branch on have their
/// own variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The project was never indexed.
    #[error("no index at {0}; run vg-index first")]
    Missing(PathBuf),
    /// A run under way is making the index (the first, or one that removed
    /// a damaged index), and has not written it yet (`open_for_searching`).
    #[error(
        "an index run under way is making the index at {0} and has not written it yet; search again once it has \
         (a search without --no-index waits for it)"
    )]
    BeingMade(PathBuf),
    /// What the config asks for was left out of this build of vecgrep.
    #[error("this vecgrep was built without {0}")]
    NotBuilt(&'static str),
    /// A crash or a disk left the index unreadable; it is a cache, so it is rebuilt.
    #[error("the index at {path} is damaged ({cause}); {}", revisions::rebuild_advice(path))]
    Damaged { path: PathBuf, cause: String },
    /// Built by another version of vecgrep, whose tables have another shape.
    #[error("the index at {path} has schema {found}, this vecgrep uses {wanted}; {}", revisions::rebuild_advice(path))]
    OtherSchema { path: PathBuf, found: String, wanted: i64 },
    /// The write lock could not be taken (not: another run holds it, which is waited for).
    #[error("cannot lock {path}")]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file or directory of the index could not be created, opened or removed.
    #[error("cannot {action} {path}")]
    File {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: BoxError,
    },
    /// The backend failed while answering (busy past its timeout, a full disk, ...).
    #[error("index {path}")]
    Backend {
        path: PathBuf,
        #[source]
        source: BoxError,
    },
    /// The backend failed, in words of its own (a change it was making is rolled back).
    #[error(transparent)]
    Database(BoxError),
    /// A shared project's index that another checkout created, to be
    /// changed or cleared by one not told to adopt it (`store_adopt`).
    #[error(
        "{path} was created by {}; this checkout ({writer}) may not change or clear it unless told to (--store-adopt, or store_adopt = true in the global config or a trusted project config); searching it as it is needs no change (--no-index)",
        .creator.as_deref().unwrap_or("an older vecgrep, which kept no writers")
    )]
    NotWriter { path: PathBuf, creator: Option<String>, writer: String },
}

/// The questions searches and index runs ask of an index.
pub trait IndexReader: Send {
    /// One value of the index's `meta` table, as stored; None when absent.
    fn meta_value(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// A counter of the `meta` table; 0 when absent.
    fn meta_count(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.meta_value(key)?.and_then(|v| v.parse().ok()).unwrap_or(0))
    }
    /// What the index was built with, or None for a fresh index.
    fn meta(&self) -> Result<Option<IndexMeta>, StoreError> {
        IndexMeta::read(&|key| self.meta_value(key))
    }
    /// The spec's IndexStats.
    fn stats(&self) -> Result<IndexStats, StoreError>;
    /// Damage a crash or a bug could leave, as sentences (none when sound), with the counts.
    fn verify(&self) -> Result<(IndexStats, Vec<String>), StoreError>;
    /// A number that changes whenever the chunks do.
    fn generation(&self) -> Result<i64, StoreError> {
        self.meta_count("generation")
    }
    /// A number that changes whenever the word index does: the generation
    /// less the changes that left words alone (files only touched, the
    /// model's vectors stored into chunks a fill found unchanged, and
    /// vectors stored by searches of older vecgreps), so that words held in
    /// memory outlast them. A change by a vecgrep that does not count those
    /// moves it too.
    fn word_generation(&self) -> Result<i64, StoreError>;
    /// Every indexed file with what is known of it; with `holes`, how many
    /// of its chunks lack the model's vector, which only a full run asks
    /// (counting them reads every chunk's row: 16-20 ms of each one-shot
    /// search's index pass on tokio, against 1 ms without).
    fn files(&self, holes: bool) -> Result<HashMap<String, StoredFile>, StoreError>;
    /// The size of the vectors the index holds, once known.
    fn dims(&self) -> Result<Option<usize>, StoreError> {
        Ok(self.meta_value("dims")?.and_then(|v| v.parse().ok()))
    }
    /// Whether every stored file has been read since generated files were
    /// last let in (`project::generated`): false for an index from before the check.
    fn generated_checked(&self) -> Result<bool, StoreError> {
        Ok(self.meta_value("generated_checked")?.as_deref() == Some("1"))
    }
    /// While not every stored file has been read so (`generated_checked`),
    /// the directories (root-relative) whose files all have: runs over part
    /// of the project record theirs, so that the next run over the same part
    /// does not read it all again.
    fn generated_checked_under(&self) -> Result<Vec<String>, StoreError> {
        let listed = self.meta_value(GENERATED_CHECKED_UNDER)?.unwrap_or_default();
        Ok(listed.lines().map(str::to_string).collect())
    }
    /// Whether an index run over the whole project began changing the index
    /// and none has finished since (killed, interrupted, refused by the
    /// disk): files may be missing from it, and the next run adds them.
    fn run_unfinished(&self) -> Result<bool, StoreError> {
        Ok(self.meta_value(RUN_UNFINISHED)?.as_deref() == Some("1"))
    }
    /// The stored vector of a chunk whose embedded text had this key
    /// (`chunk::embed_key`), if any. Holes do not count.
    fn vector_for_key(&self, key: &[u8]) -> Result<Option<Vec<f32>>, StoreError>;
    /// Answer the questions that follow from one state of the index.
    fn snapshot(&self) -> Result<Snapshot<'_>, StoreError>;
    /// Chunks in scope by cosine similarity to `query`, best first, at most
    /// `limit`; equal scores in path and line order. Holes are never candidates.
    fn nearest_chunks(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError>;
    /// Chunks in scope by cosine similarity of their static vectors to
    /// `query` (a static vector too), best first, at most `limit`, whether
    /// or not they have the model's vector.
    fn nearest_static(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError>;
    /// Whether the index this connection reads has since been removed or
    /// replaced by another (rebuilt after damage, cleared and made again).
    /// A reader that lives long (a server's) then opens it again: a
    /// connection to a removed file would go on reading it.
    fn replaced(&self) -> bool {
        false
    }
    /// How many chunks lack the model's vector.
    fn unembedded_count(&self) -> Result<u64, StoreError>;
    /// How many chunks have the model's vector and how many lack it, in
    /// one statement: the chunks without are counted once, from an index
    /// of them, and no row is read.
    fn vector_counts(&self) -> Result<VectorCounts, StoreError>;
    /// The chunks that lack the model's vector, in no order: as many as
    /// `unembedded_count`, read from an index of them, not from the rows.
    fn unembedded_ids(&self) -> Result<Vec<ChunkId>, StoreError>;
    /// Hand the model's vector of each chunk in `ids` that has one to
    /// `visit`, in path and line order: a searcher that holds the vectors
    /// stored so far in memory catches up with what a fill added.
    fn vectors_of(&self, ids: &[ChunkId], visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<(), StoreError>;
    /// The cosine similarity of one chunk's vector to `query`; None for a hole or a chunk gone.
    fn cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError>;
    /// The cosine similarity of one chunk's static vector to `query` (a
    /// static vector too); None for a chunk without one or gone.
    fn static_cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError>;
    /// The `limit` chunks in `scope` whose words best match the full-text
    /// expression `expr` (`search::lexical::match_expression`), by BM25
    /// (more negative is better), best first, holes included.
    fn best_word_matches(&self, expr: &str, scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f64)>, StoreError>;
    /// File and first line of each chunk in `ids` still in the index.
    fn places(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (String, usize)>, StoreError>;
    /// The own names (space-separated, as stored) of each chunk in `ids`
    /// that is still in the index and has some.
    fn names_of(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, String>, StoreError>;
    /// How many chunks have names.
    fn named_chunks(&self) -> Result<u64, StoreError> {
        Ok(self.meta_count("named_chunks")?.max(0) as u64)
    }
    /// How many chunks have `term` (`terms::terms_of_names`) among their names' terms.
    fn chunks_naming(&self, term: &str) -> Result<u64, StoreError>;
    /// A chunk's file, lines and text; None for a chunk gone.
    fn chunk(&self, id: ChunkId) -> Result<Option<StoredChunk>, StoreError>;
    /// A quick look at the index's structure, for when a chunk it ranked
    /// cannot be read: damage is an error (`Damaged`), not results that
    /// silently lack it; Ok when the chunk was only replaced meanwhile.
    fn check_structure(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// The lines of every chunk of `file`, (first, last), in no order: for
    /// a search's join, which lines are blank (every line that is not blank
    /// is in a chunk) and which long lines are cut into pieces. One read per
    /// file; asked per result, a file of thousands of chunks was read again
    /// for each (`-k 6000` over one 6.7 MB file: 36 s).
    fn chunk_spans(&self, file: &str) -> Result<Vec<(usize, usize)>, StoreError>;
    /// Hand every stored vector to `visit`, in path and line order, from one
    /// state of the index; returns that state's generation.
    fn each_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError>;
    /// Hand every stored static vector to `visit`, in path and line order,
    /// from one state of the index; returns that state's word generation,
    /// which changes whenever a chunk's static vector does (chunks are only
    /// added, rewritten or removed with their words, and a new static table
    /// is not a wordless change), so that static vectors held in memory
    /// outlast a fill.
    fn each_static_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError>;
    /// Hand every term of the word index to `visit` with each chunk that
    /// has it and how often (term, chunk, occurrences), a term's chunks
    /// together and in id order, from one state of the index; returns that
    /// state's totals. What `best_word_matches` ranks by, for a searcher
    /// that ranks words in memory.
    fn each_word(&self, visit: &mut dyn FnMut(&str, ChunkId, u32)) -> Result<WordTotals, StoreError>;
    /// The index job named `id`, if the index keeps one.
    fn index_job(&self, id: &str) -> Result<Option<IndexJob>, StoreError>;
}

/// Chunks `IndexWriter::restatic` reads and updates at a time: the chunks
/// are never all in memory, and a stop is heard within one page.
pub(crate) const RESTATIC_PAGE: usize = 1024;

/// The changes an index run makes; each call is atomic, so a kill at any
/// moment leaves each file either fully old or fully new.
pub trait IndexWriter: IndexReader {
    fn as_reader(&self) -> &dyn IndexReader;
    /// Empty the index and record what it is now built with.
    fn reset(&mut self, meta: &IndexMeta) -> Result<(), StoreError>;
    /// Set one value of the index's `meta` table.
    fn set_meta_value(&mut self, key: &str, value: &str) -> Result<(), StoreError>;
    /// Mark the index as changed by a run that has not finished
    /// (`IndexReader::run_unfinished`), or clear the mark.
    fn set_run_unfinished(&mut self, unfinished: bool) -> Result<(), StoreError> {
        self.set_meta_value(RUN_UNFINISHED, if unfinished { "1" } else { "0" })
    }
    /// Record whether every stored file has been read since generated files
    /// were last let in; either way, no directory is recorded apart.
    fn set_generated_checked(&mut self, checked: bool) -> Result<(), StoreError> {
        self.set_meta_value(GENERATED_CHECKED_UNDER, "")?;
        self.set_meta_value("generated_checked", if checked { "1" } else { "0" })
    }
    /// Record the directories whose files have all been read so
    /// (`IndexReader::generated_checked_under`).
    fn set_generated_checked_under(&mut self, dirs: &[String]) -> Result<(), StoreError> {
        self.set_meta_value(GENERATED_CHECKED_UNDER, &dirs.join("\n"))
    }
    /// Give every chunk the static vector `embed(around, text)` gives it and
    /// record `meta`, in one transaction: the index was built with another
    /// static table and nothing else changed, so the model's vectors stay.
    /// After each page of `RESTATIC_PAGE` chunks `go_on(done, of)` hears how
    /// far it is; when it answers false the transaction is rolled back and
    /// None returned.
    /// An interrupted call leaves the old vectors and meta, and the next run
    /// does it again. Returns how many chunks it gave new vectors.
    fn restatic(
        &mut self,
        meta: &IndexMeta,
        embed: &mut dyn FnMut(&str, &str) -> Vec<f32>,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Option<u64>, StoreError>;
    /// Record the size of the vectors the index holds.
    fn set_dims(&mut self, dims: usize) -> Result<(), StoreError> {
        self.set_meta_value("dims", &dims.to_string())
    }
    /// Apply one batch at once: new content for some files, new stat data
    /// for files whose content did not change, and removals. A file written
    /// again as it is stored but with the model's vectors its chunks lacked
    /// (a fill) has them stored into its rows: the chunks keep their ids,
    /// words and static vectors, and the word generation stays (so a
    /// searcher holding the vectors stored so far catches up by id,
    /// `live::Filled`).
    fn write_batch(
        &mut self,
        writes: &[FileWrite],
        touches: &[(String, FileState)],
        removals: &[String],
    ) -> Result<(), StoreError>;
    /// Tidy the word index after a run that changed it.
    fn compact_words(&self) -> Result<(), StoreError>;
    /// At the end of every run: bring up to date what an index keeps so
    /// that a one-shot search need not read everything (SQLite: the
    /// vectors' sign codes; Postgres: each word term's chunk count and
    /// bounds; each rebuilt when behind the index, which an older vecgrep
    /// may leave them). Postgres searches vectors through an HNSW index,
    /// built by `compact_words`.
    fn refresh_search_aids(&self) -> Result<(), StoreError>;
    /// Keep `job` (replacing what was kept under its id), and of the others
    /// the latest `KEPT_JOBS`. Rebuilding the index keeps its jobs.
    fn put_index_job(&mut self, job: &IndexJob) -> Result<(), StoreError>;
    /// Mark every job still running as failed, for `reason` (the server that
    /// ran them stopped); returns how many.
    fn fail_running_jobs(&mut self, reason: &str, now_ms: i64) -> Result<u64, StoreError>;
}

/// The generation a new index starts at: the time in milliseconds, so that
/// an index removed and made again (`--clear-cache`, a damaged one rebuilt)
/// never reaches a generation that a server holding the old one's vectors
/// The meta key of `IndexReader::generated_checked_under`.
const GENERATED_CHECKED_UNDER: &str = "generated_checked_under";

/// or words has seen.
pub(crate) fn first_generation() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX / 2)
}

/// Where `root`'s index is, in words safe to print (a shared one's URL may
/// hold a password, which is left out).
pub fn location(root: &ProjectRoot) -> String {
    match &root.shared {
        Some(shared) => postgres::describe(shared),
        None => root.index_path().display().to_string(),
    }
}

/// Why `root`'s local index cannot be brought up to date by this user,
/// when it exists and can be read: its directory or its file is not
/// writable to them (another user's checkout, a read-only mount). A search
/// then reads it as it is, as `--no-index` would, rather than failing in
/// SQLite's words ("attempt to write a readonly database").
pub fn unwritable_index(root: &ProjectRoot) -> Option<String> {
    let index = root.index_path();
    if root.shared.is_some() || !std::fs::symlink_metadata(&index).is_ok_and(|m| m.is_file()) {
        return None;
    }
    // One that cannot be read is not searched as it is: opening it says so.
    if !crate::project::small_file::may(&index, libc::R_OK) {
        return None;
    }
    let dir = root.data_dir();
    let closed = [dir, index].into_iter().find(|p| !crate::project::small_file::may(p, libc::W_OK))?;
    Some(format!("{} is not writable by this user", closed.display()))
}

/// The model the vectors of `index` were made by, when it is not `model`:
/// a query of one model scored against vectors of another finds nonsense.
pub fn other_model(index: &dyn IndexReader, model: &str) -> Result<Option<String>, StoreError> {
    Ok(index.meta()?.map(|m| m.model).filter(|m| m != model))
}

/// Open an existing index of `root` to read it (searching, stats).
pub fn open_for_reading(root: &ProjectRoot) -> Result<Box<dyn IndexReader>, StoreError> {
    if root.shared.is_some() {
        return postgres::open_for_reading(root);
    }
    lock::refuse_file_in_the_way(root)?;
    lock::own_data_dir(root)?;
    Ok(Box::new(sqlite::SqliteIndex::open_for_reading(root)?))
}

/// `open_for_reading`, for a search of the index as it is: an index a run
/// is making is said so (`BeingMade`), not "run vg-index first" to a user
/// whose run is under way.
pub fn open_for_searching(root: &ProjectRoot) -> Result<Box<dyn IndexReader>, StoreError> {
    match open_for_reading(root) {
        Err(StoreError::Missing(path)) if run_under_way(root) => Err(StoreError::BeingMade(path)),
        opened => opened,
    }
}

/// Open the index of `root` for writing, creating it if needed. A damaged
/// index or one of another schema is cache, not data: it is removed and
/// rebuilt, and `rebuilt` hears why. Take [`lock_for_writing`] first.
pub fn open_for_writing(root: &ProjectRoot, rebuilt: &mut dyn FnMut(&str)) -> Result<Box<dyn IndexWriter>, StoreError> {
    if root.shared.is_some() {
        return postgres::open_for_writing(root, rebuilt);
    }
    Ok(Box::new(sqlite::SqliteIndex::open_for_writing(root, rebuilt)?))
}

/// Open the index of `root` to write beside a running index run (an index
/// job's state): created when missing, but an index that is damaged or of
/// another schema is an error here, not rebuilt, since a run may hold it.
pub fn open_in_place(root: &ProjectRoot) -> Result<Box<dyn IndexWriter>, StoreError> {
    if root.shared.is_some() {
        return postgres::open_in_place(root);
    }
    Ok(Box::new(sqlite::SqliteIndex::open_in_place(root)?))
}

/// The checkout's own index, `.vecgrep/index.db`, even when its code index
/// is a shared store's: it holds the project's commit log (whose writer
/// takes this index's lock, not the store's: one that could not reach
/// Postgres refused to update a log kept on disk) and the checkout's own
/// revisions.
pub fn checkout_root(root: &ProjectRoot) -> ProjectRoot {
    ProjectRoot { shared: None, ..root.clone() }
}

/// Open the commit log of `root`'s index to bring it up to date (vg-log),
/// as [`open_for_writing`] opens the index. Take [`lock_for_writing`] first.
pub fn open_log_for_writing(
    root: &ProjectRoot,
    rebuilt: &mut dyn FnMut(&str),
) -> Result<Box<dyn CommitStore>, StoreError> {
    Ok(Box::new(sqlite::SqliteIndex::open_for_writing(root, rebuilt)?))
}

/// Open the commit log of an existing index to search it as it is;
/// `StoreError::Missing` when the index, or its log, was never written.
pub fn open_log_for_reading(root: &ProjectRoot) -> Result<Box<dyn CommitStore>, StoreError> {
    lock::own_data_dir(root)?;
    let index = sqlite::SqliteIndex::open_for_reading(root)?;
    if !index.has_log()? {
        return Err(StoreError::Missing(root.index_path()));
    }
    Ok(Box::new(index))
}

/// Whether `root` has an index: its file here, or its project's in the
/// shared database.
pub(crate) fn has_index(root: &ProjectRoot) -> Result<bool, StoreError> {
    match &root.shared {
        Some(shared) => postgres::exists(shared),
        None => Ok(std::fs::symlink_metadata(root.index_path()).is_ok()),
    }
}

/// Remove `root`'s index, the one a run that began at `since_ms` (the
/// epoch's milliseconds) made and gave up before writing to (a declined
/// prompt): it holds nothing, not even a commit log (a shared index's log
/// is the checkout's own file). A shared index's claim that run made goes too.
pub(crate) fn remove_made_index(root: &ProjectRoot, since_ms: i64) -> Result<bool, StoreError> {
    match &root.shared {
        Some(shared) => postgres::remove_made(shared, since_ms),
        None => sqlite::remove(root),
    }
}

/// Remove the index of `root` and of its revisions (ClearCacheResetsIndex); its config stays.
pub fn clear(root: &ProjectRoot) -> Result<bool, StoreError> {
    let mut removed = false;
    if let Some(shared) = &root.shared {
        removed |= postgres::remove(shared)?;
    }
    removed |= sqlite::remove(root)?;
    for revision in revisions(root)? {
        removed |= forget_revision(root, &revision.sha)?;
    }
    // The checkout's own revisions too, kept apart from a shared index's.
    if root.shared.is_some() {
        let own = checkout_root(root);
        for revision in revisions(&own)? {
            removed |= forget_revision(&own, &revision.sha)?;
        }
    }
    Ok(removed)
}

/// `e` as damage to `root`'s local index when SQLite said, in words of its
/// own, that the file is corrupt (a write that met a damaged page): the
/// error then says where, and how to rebuild it. Any other error as it is.
pub fn name_damage(root: &ProjectRoot, e: StoreError) -> StoreError {
    match e {
        StoreError::Database(source) if root.shared.is_none() => {
            match source.downcast_ref::<rusqlite::Error>().filter(|e| sqlite::is_corruption(e)) {
                Some(corrupt) => {
                    sqlite::leave_damage_mark(&root.index_path(), &corrupt.to_string());
                    StoreError::Damaged { path: root.index_path(), cause: corrupt.to_string() }
                }
                None => StoreError::Database(source),
            }
        }
        e => e,
    }
}

/// `store` emptied for a rebuild (`IndexWriter::reset`). A local index too
/// damaged to empty is removed and made again, as one found damaged when
/// opened is: it is a cache, and `--reindex` must rebuild it whatever
/// state it is in. `rebuilt` hears why.
pub fn reset_or_remake(
    root: &ProjectRoot,
    mut store: Box<dyn IndexWriter>,
    meta: &IndexMeta,
    rebuilt: &mut dyn FnMut(&str),
) -> Result<Box<dyn IndexWriter>, StoreError> {
    match store.reset(meta).map_err(|e| name_damage(root, e)) {
        Ok(()) => Ok(store),
        Err(StoreError::Damaged { path, cause }) if root.shared.is_none() => {
            rebuilt(&format!("rebuilding the index at {}: it is damaged: {cause}", path.display()));
            // The connection goes before the files it holds open.
            drop(store);
            sqlite::remove(root)?;
            let mut store = open_for_writing(root, rebuilt)?;
            store.reset(meta)?;
            Ok(store)
        }
        Err(e) => Err(e),
    }
}

/// Checks every backend passes.
#[cfg(test)]
pub(crate) mod backend_checks {
    use super::*;

    /// A unit vector along axis `i`.
    fn axis(i: usize) -> Vec<f32> {
        let mut v = vec![0.0; crate::embed::DIMS];
        v[i] = 1.0;
        v
    }

    /// Each chunk's static cosine to `to`, by the index's own ranking.
    fn static_cosines(index: &dyn IndexWriter, to: &[f32]) -> Vec<f32> {
        index.as_reader().nearest_static(to, &Scope::default(), 10_000).unwrap().into_iter().map(|c| c.1).collect()
    }

    /// `restatic` over more chunks than a page: told to stop, it rolls back
    /// whole (vectors and meta) and says how far it was; told to go on, it
    /// gives every chunk the new vector and records the new meta, and
    /// leaves the model's vectors as they were.
    pub(crate) fn restatic_stops_whole_or_completes(index: &mut dyn IndexWriter) {
        let texts: Vec<String> = (0..1500).map(|i| format!("chunk number {i}")).collect();
        let mut file = FileWrite::of_texts("a.py", &texts, Some(&axis(2)));
        file.chunks.iter_mut().for_each(|c| c.static_vector = Some(axis(0)));
        index.reset(&IndexMeta::for_tests()).unwrap();
        index.write_batch(&[file], &[], &[]).unwrap();
        let other = IndexMeta { static_table: "another".into(), ..IndexMeta::for_tests() };
        let restatic = |index: &mut dyn IndexWriter, go_on: bool| {
            let mut heard = Vec::new();
            let done = index
                .restatic(&other, &mut |_, _| axis(1), &mut |done, of| {
                    heard.push((done, of));
                    go_on
                })
                .unwrap();
            (done, heard)
        };
        assert_eq!(restatic(index, false), (None, vec![(1024, 1500)]));
        assert!(static_cosines(index, &axis(0)).iter().all(|c| (c - 1.0).abs() < 1e-5), "rolled back whole");
        assert_eq!(index.as_reader().meta().unwrap().unwrap().static_table, "");
        assert_eq!(restatic(index, true), (Some(1500), vec![(1024, 1500), (1500, 1500)]));
        let now = static_cosines(index, &axis(1));
        assert!(now.len() == 1500 && now.iter().all(|c| (c - 1.0).abs() < 1e-5), "every chunk has the new vector");
        assert_eq!(index.as_reader().meta().unwrap().unwrap().static_table, "another");
        let model = index.as_reader().nearest_chunks(&axis(2), &Scope::default(), 10_000).unwrap();
        assert!(model.len() == 1500 && model.iter().all(|c| (c.1 - 1.0).abs() < 1e-5), "the model's vectors stay");
    }

    /// `each_static_vector` hands out every chunk's static vector in path
    /// and line order, model's vector or not, at the word generation; held
    /// in memory they rank as the store does, and a new static table moves
    /// the word generation, so that vectors held from before are not used.
    pub(crate) fn static_vectors_are_read_whole_at_the_word_generation(index: &mut dyn IndexWriter) {
        index.reset(&IndexMeta::for_tests()).unwrap();
        let texts = |n: usize| (0..n).map(|i| format!("chunk {i}")).collect::<Vec<_>>();
        let mut b = FileWrite::of_texts("b.py", &texts(3), None);
        let mut a = FileWrite::of_texts("a.py", &texts(2), Some(&axis(9)));
        for (i, c) in b.chunks.iter_mut().chain(a.chunks.iter_mut()).enumerate() {
            c.static_vector = Some(axis(i));
        }
        index.write_batch(&[b, a], &[], &[]).unwrap();
        let mut rows = Vec::new();
        let generation = index
            .as_reader()
            .each_static_vector(&mut |r| rows.push((r.file.to_string(), r.start_line, r.vector.to_vec())))
            .unwrap();
        assert_eq!(generation, index.as_reader().word_generation().unwrap());
        let places: Vec<(&str, usize)> = rows.iter().map(|r| (r.0.as_str(), r.1)).collect();
        assert_eq!(places, [("a.py", 1), ("a.py", 2), ("b.py", 1), ("b.py", 2), ("b.py", 3)]);
        assert_eq!(rows[0].2, axis(3), "the static vector, not the model's");
        let held = crate::search::VectorTable::load_statics(index.as_reader()).unwrap();
        let by_store = index.as_reader().nearest_static(&axis(4), &Scope::default(), 3).unwrap();
        let by_memory = held.ranking(&axis(4), &Scope::default(), 3);
        assert_eq!(by_memory.iter().map(|r| r.0).collect::<Vec<_>>(), by_store.iter().map(|r| r.0).collect::<Vec<_>>());
        assert!((by_memory[0].1 - 1.0).abs() < 1e-6 && (by_store[0].1 - 1.0).abs() < 1e-6);
        let other = IndexMeta { static_table: "another".into(), ..IndexMeta::for_tests() };
        index.restatic(&other, &mut |_, _| axis(7), &mut |_, _| true).unwrap();
        assert_ne!(index.as_reader().word_generation().unwrap(), generation, "a new static table is a new state");
    }

    /// The chunks without the model's vector are listed, and the vectors
    /// of the chunks asked for that have one are read as `each_vector`
    /// reads them, in path and line order. A fill keeps the chunks' ids.
    pub(crate) fn a_fills_vectors_are_found_by_id(index: &mut dyn IndexWriter) {
        index.reset(&IndexMeta::for_tests()).unwrap();
        let texts = |n: usize| (0..n).map(|i| format!("chunk {i}")).collect::<Vec<_>>();
        let mut files =
            vec![FileWrite::of_texts("b.py", &texts(3), None), FileWrite::of_texts("a.py", &texts(2), None)];
        for (i, c) in files.iter_mut().flat_map(|f| f.chunks.iter_mut()).enumerate() {
            c.static_vector = Some(axis(i));
        }
        index.write_batch(&files, &[], &[]).unwrap();
        let sorted = |mut ids: Vec<ChunkId>| {
            ids.sort_unstable();
            ids
        };
        type Row = (ChunkId, String, usize, Vec<f32>);
        let row = |r: VectorRow<'_>| (r.id, r.file.to_string(), r.start_line, r.vector.to_vec());
        let all = sorted(index.as_reader().unembedded_ids().unwrap());
        assert_eq!(all.len(), 5);
        let mut read = 0;
        index.as_reader().vectors_of(&all, &mut |_| read += 1).unwrap();
        assert_eq!(read, 0, "no chunk has the model's vector yet");
        let words = index.as_reader().word_generation().unwrap();
        index.write_batch(&[files[1].filled(|i| axis(10 + i))], &[], &[]).unwrap();
        let left = sorted(index.as_reader().unembedded_ids().unwrap());
        assert_eq!(left.len(), 3);
        let mut stored: Vec<Row> = Vec::new();
        index.as_reader().each_vector(&mut |r| stored.push(row(r))).unwrap();
        let places: Vec<(&str, usize)> = stored.iter().map(|r| (r.1.as_str(), r.2)).collect();
        assert_eq!(places, [("a.py", 1), ("a.py", 2)]);
        assert_eq!((stored[0].3.clone(), stored[1].3.clone()), (axis(10), axis(11)));
        let mut asked: Vec<ChunkId> = stored.iter().map(|r| r.0).chain(left.iter().copied()).collect();
        asked.reverse();
        let mut rows: Vec<Row> = Vec::new();
        index.as_reader().vectors_of(&asked, &mut |r| rows.push(row(r))).unwrap();
        assert_eq!(rows, stored, "those with a vector, no other, in path and line order");
        assert_eq!(index.as_reader().word_generation().unwrap(), words, "a fill changes no words");
        assert!(left.iter().chain(&asked).all(|id| all.contains(id)), "ids kept");
    }

    /// Each way a file's stat data is written (a new file, a rewrite, a
    /// touch, a fill in place) keeps its ctime, and `files` reads it back.
    pub(crate) fn only_the_latest_jobs_are_kept(index: &mut dyn IndexWriter) {
        let job = |i: i64| IndexJob::running(format!("job-{i}"), 1_000 + i);
        for i in 0..KEPT_JOBS + 5 {
            index.put_index_job(&job(i)).unwrap();
        }
        for i in 0..5 {
            assert!(index.index_job(&format!("job-{i}")).unwrap().is_none(), "job-{i} is one of the oldest");
        }
        assert!(index.index_job("job-5").unwrap().is_some());
        let last = format!("job-{}", KEPT_JOBS + 4);
        let mut done = job(KEPT_JOBS + 4);
        done.state = JobState::Completed;
        index.put_index_job(&done).unwrap();
        assert_eq!(index.index_job(&last).unwrap().map(|j| j.state), Some(JobState::Completed));
        assert!(index.index_job("job-5").unwrap().is_some(), "replacing a job drops none");
    }

    pub(crate) fn every_write_keeps_the_files_ctime(index: &mut dyn IndexWriter) {
        index.reset(&IndexMeta::for_tests()).unwrap();
        let ctime = |index: &dyn IndexWriter| index.as_reader().files(false).unwrap()["a.rs"].state.ctime_ns;
        let with_ctime = |text: &str, ctime_ns| {
            let mut w = FileWrite::of_texts("a.rs", &[text.into()], None);
            w.state.ctime_ns = ctime_ns;
            w
        };
        index.write_batch(&[with_ctime("first", 5)], &[], &[]).unwrap();
        assert_eq!(ctime(index), 5, "a new file");
        index.write_batch(&[with_ctime("second", 6)], &[], &[]).unwrap();
        assert_eq!(ctime(index), 6, "a rewrite");
        let touched = FileState { ctime_ns: 0, ..with_ctime("second", 6).state };
        index.write_batch(&[], &[("a.rs".into(), touched)], &[]).unwrap();
        assert_eq!(ctime(index), 0, "a touch, of a file changed too recently to tell");
        index.write_batch(&[with_ctime("second", 8).filled(axis)], &[], &[]).unwrap();
        assert_eq!(ctime(index), 8, "a fill in place");
        assert_eq!(index.as_reader().vector_counts().unwrap().unembedded, 0);
    }

    /// A fill stores the model's vectors into the rows the chunks have:
    /// their words, names and counts stay, and the word generation with
    /// them, while the generation moves. Other text in the same lines is a
    /// rewrite: new rows, new words, found by a word search (on Postgres,
    /// through term stats that the wordless batches before it left current).
    pub(crate) fn a_fill_keeps_the_chunks_rows_and_words(index: &mut dyn IndexWriter) {
        index.reset(&IndexMeta::for_tests()).unwrap();
        let file = |text: &str| {
            let mut w = FileWrite::of_texts("a.rs", &[format!("{text} one"), format!("{text} two")], None);
            for (i, c) in w.chunks.iter_mut().enumerate() {
                (c.static_vector, c.names) = (Some(axis(i)), format!("Handler emit{i}"));
            }
            w.state.hash = content_hash("a.rs", &w.chunks);
            w
        };
        index
            .write_batch(&[file("common body"), FileWrite::of_texts("b.rs", &["other".into()], None)], &[], &[])
            .unwrap();
        let reader = |index: &dyn IndexWriter| {
            let r = index.as_reader();
            let mut ids = r.unembedded_ids().unwrap();
            r.each_vector(&mut |v| ids.push(v.id)).unwrap();
            ids.sort_unstable();
            let matches = r.best_word_matches(r#""common""#, &Scope::default(), 10).unwrap().len();
            (ids, r.word_generation().unwrap(), r.generation().unwrap(), matches, r.named_chunks().unwrap())
        };
        let (ids, words, generation, matches, named) = reader(index);
        assert_eq!((ids.len(), matches, named), (3, 2, 2));

        index.write_batch(&[file("common body").filled(|i| axis(10 + i))], &[], &[]).unwrap();
        let r = index.as_reader();
        assert_eq!(r.vector_counts().unwrap(), VectorCounts { vectors: 2, unembedded: 1 }, "b.rs is left to fill");
        assert_eq!(reader(index), (ids.clone(), words, generation + 1, 2, 2), "rows and words kept");
        let (_, problems) = index.as_reader().verify().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // New stat data alone changes nothing a search holds, nor the generation.
        let touched = FileState { mtime_ns: 2, ..FileWrite::of_texts("b.rs", &["other".into()], None).state };
        index.write_batch(&[], &[("b.rs".into(), touched)], &[]).unwrap();
        assert_eq!(reader(index), (ids.clone(), words, generation + 1, 2, 2));

        index.write_batch(&[file("changed body")], &[], &[]).unwrap();
        let (new_ids, new_words, _, matches, named) = reader(index);
        assert_ne!(new_ids, ids);
        assert_ne!(new_words, words);
        assert_eq!((matches, named), (0, 2));
        assert_eq!(index.as_reader().best_word_matches(r#""changed""#, &Scope::default(), 10).unwrap().len(), 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(prefixes: &[&str]) -> Scope {
        Scope { prefixes: prefixes.iter().map(|p| p.to_string()).collect(), files: None }
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
}
