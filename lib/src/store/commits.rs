//! The commit log's part of an index (vg-log): commits, and the pieces each
//! is searched by (its message; with diffs, the lines it changed), with
//! their vectors and words. Apart from the chunks: the files' index can be
//! rebuilt without losing the log, and the log without touching the files.

use std::collections::HashMap;

use super::StoreError;

/// What a piece of a commit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    /// The subject and body.
    Message,
    /// Lines the commit removed and added in one file.
    Diff,
}

impl PieceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PieceKind::Message => "message",
            PieceKind::Diff => "diff",
        }
    }

    pub(super) fn code(self) -> i64 {
        match self {
            PieceKind::Message => 0,
            PieceKind::Diff => 1,
        }
    }

    pub(super) fn from_code(code: i64) -> PieceKind {
        if code == 0 {
            PieceKind::Message
        } else {
            PieceKind::Diff
        }
    }
}

/// A commit as stored, without its pieces.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitRow {
    pub sha: String,
    /// Author time: seconds since the epoch, and the author's UTC offset in seconds.
    pub time: i64,
    pub offset: i32,
    pub author: String,
    pub email: String,
    pub subject: String,
    pub body: String,
    /// Files touched, relative to the project root.
    pub paths: Vec<String>,
    /// Whether its diff pieces are indexed.
    pub diffs: bool,
}

/// What the log holds of one commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredCommit {
    pub diffs: bool,
    pub holes: bool,
    /// Stored with an empty subject.
    pub no_subject: bool,
}

/// One piece of a commit to store.
#[derive(Clone, Debug)]
pub struct PieceWrite {
    pub kind: PieceKind,
    /// The file of a diff piece.
    pub path: Option<String>,
    /// Where a diff piece starts in the new file.
    pub line: usize,
    pub text: String,
    /// None marks a hole (its embedding failed): found by words alone (in
    /// lexical mode), and the commit is stored again by the next update.
    pub vector: Option<Vec<f32>>,
    /// What the full-text index holds for it.
    pub words: String,
}

/// A commit and all its pieces, replacing whatever was stored for its sha.
#[derive(Clone, Debug)]
pub struct CommitWrite {
    pub commit: CommitRow,
    pub pieces: Vec<PieceWrite>,
}

/// A stored piece, as a search shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredPiece {
    pub sha: String,
    pub kind: PieceKind,
    pub path: Option<String>,
    pub line: usize,
    pub text: String,
}

/// A piece as a ranking visits it.
#[derive(Clone, Copy, Debug)]
pub struct PieceRef<'a> {
    pub id: i64,
    pub sha: &'a str,
    pub kind: PieceKind,
}

/// The commit log of one index.
pub trait CommitStore: Send {
    /// The model the stored vectors came from; None before the first commit is stored.
    fn log_model(&self) -> Result<Option<String>, StoreError>;
    /// Forget every commit and record the model the next ones are embedded with.
    fn reset_log(&mut self, model: &str) -> Result<(), StoreError>;
    /// Each stored commit's sha, with whether its diffs are indexed and
    /// whether any of its pieces lacks a vector.
    fn stored_commits(&self) -> Result<HashMap<String, StoredCommit>, StoreError>;
    /// Store a batch of commits at once (all or none).
    fn write_commits(&mut self, commits: &[CommitWrite]) -> Result<(), StoreError>;
    /// The stored commits named, without their pieces.
    fn commit_rows(&self, shas: &[&str]) -> Result<Vec<CommitRow>, StoreError>;
    /// Hand `visit` every piece that has a vector, with it.
    fn each_piece_vector(&self, visit: &mut dyn FnMut(PieceRef<'_>, &[f32])) -> Result<(), StoreError>;
    /// Hand `visit` the pieces whose words match the full-text expression
    /// `expr`, best first, with BM25 (more negative is better), until it
    /// returns false.
    fn each_word_match(&self, expr: &str, visit: &mut dyn FnMut(PieceRef<'_>, f64) -> bool) -> Result<(), StoreError>;
    /// One piece; None if it is gone.
    fn piece(&self, id: i64) -> Result<Option<StoredPiece>, StoreError>;
    /// How many commits and pieces are stored, and how many pieces lack a vector.
    fn log_counts(&self) -> Result<(u64, u64, u64), StoreError>;
    /// The shallow clone's boundary commits when the log was last brought up
    /// to date (their parents were missing, so their paths and diffs are).
    fn log_shallow(&self) -> Result<Vec<String>, StoreError>;
    /// Record the boundary as it is now.
    fn set_log_shallow(&mut self, shas: &[String]) -> Result<(), StoreError>;
    /// A value the log keeps of how its commits were read (`history::index`:
    /// the reader's version, the replacements in force); None if never set.
    fn log_value(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// Record a value of how the log's commits are read now.
    fn set_log_value(&mut self, key: &str, value: &str) -> Result<(), StoreError>;
}
