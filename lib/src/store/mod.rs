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

/// How both backends split words for the word index: FTS5's tokenizer
/// settings (SQLite's table; Postgres runs the same tokenizer itself).
macro_rules! word_tokenizer {
    () => {
        "porter unicode61 remove_diacritics 2"
    };
}

#[cfg(test)]
pub(crate) mod backend_checks;
mod commits;
mod cut;
mod error;
mod fill;
mod interface;
mod lock;
mod name_counts;
mod open;
mod parts;
mod poll;
#[cfg(feature = "shared-store")]
mod postgres;
#[cfg(not(feature = "shared-store"))]
#[path = "postgres_absent.rs"]
mod postgres;
mod revisions;
mod rows;
mod signs;
mod sqlite;
mod word_terms;

pub use commits::{CommitRow, CommitStore, CommitWrite, PieceKind, PieceRef, PieceWrite, StoredCommit, StoredPiece};
pub use cut::keep_best_with_ties;
pub use error::*;
pub use interface::*;
pub use lock::{
    ensure_data_dir, lock_for_writing, lock_for_writing_unless, mark_server, own_data_dir, run_under_way,
    try_lock_for_writing, writer_waiting, ServerMark, WriteLock,
};
pub use open::*;
pub use revisions::{
    admission, check_tree_root, forget_marks, forget_revision, is_commit_id, mark_complete, mark_unfinished,
    record_admission, record_name, record_submodules, record_unwritten, related_roots, remove_revision_files,
    revision_root, revisions, submodules, unwritten, Revision,
};
pub use rows::*;
pub use signs::SignCodes;
pub use sqlite::{file_identity, first_pass_size, FileIdentity, CODES_FROM};
pub use word_terms::{expression_terms, text_terms};
