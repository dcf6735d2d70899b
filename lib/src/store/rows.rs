//! What an index keeps and what it answers with: files, chunks, vectors,
//! jobs, a search's scope, its meta; the same for every backend.

use std::collections::HashSet;

use crate::chunk::Chunk;

use super::*;

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
    pub(super) fn entries(&self) -> [(&'static str, String); 5] {
        [
            ("model", self.model.clone()),
            ("chunk_size", self.chunk_size.to_string()),
            ("chunk_overlap", self.chunk_overlap.to_string()),
            ("chunk_format", self.chunk_format.to_string()),
            ("static_table", self.static_table.clone()),
        ]
    }

    /// The meta an index keeps as named values (`get`), or None for a fresh index.
    pub(super) fn read(
        get: &dyn Fn(&str) -> Result<Option<String>, StoreError>,
    ) -> Result<Option<IndexMeta>, StoreError> {
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
pub(crate) fn changes_what_searches_hold(writes: &[FileWrite], removals: &[String]) -> bool {
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

/// What the index keeps of a chunk that its file's text decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptChunk {
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
    /// `chunk::Context::around`.
    pub around: String,
    /// `chunk::Context::names`, space-separated.
    pub names: String,
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
