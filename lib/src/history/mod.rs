//! vg-log's decisions: the project's git history as something to search.
//! `git.rs` reads commits from the object database (gix; git is never
//! spawned), `diff.rs` turns a commit's changes into the pieces indexed,
//! `index.rs` brings the commit log (`store::CommitStore`) up to date with
//! HEAD's history, `filter.rs` and `rank.rs` answer a question with commits,
//! ranked as code search ranks chunks: meaning and words, fused.
//! `revision.rs` indexes a revision's tree without a checkout (`--rev`),
//! `label.rs` a catalog's label, the revision it names in each project.

mod diff;
mod filter;
mod git;
mod index;
mod label;
mod rank;
mod revision;

pub use diff::{changed_pieces, DiffPiece, MAX_PIECE_LINES};
pub use filter::{parse_date, CommitFilter};
pub use git::{CommitData, GitRepo, MAX_PIECES_PER_COMMIT};
pub use index::{update_log, LoadEmbedder, LogObserver, LogSummary};
pub use label::{index_label, indexed_label, labels, resolve_label, Label, LabelCommit, LabelRun, LabelState};
pub use rank::{search_log, CommitHit, LogQuery, MatchedLine, Pieces, MAX_MATCHED_LINES};
pub use revision::{check_model, index_revision, indexed_revision, resolve_revision, RevisionRun};

/// A commit's author date as ISO 8601 with the author's offset
/// (`2024-05-01T14:03:00+02:00`).
pub fn iso_date(seconds: i64, offset: i32) -> String {
    gix::date::Time::new(seconds, offset)
        .format(gix::date::time::format::ISO8601_STRICT)
        .unwrap_or_else(|_| format!("@{seconds}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_shown_in_the_authors_offset() {
        assert_eq!(iso_date(1_714_521_600, 7200), "2024-05-01T02:00:00+02:00");
        assert_eq!(iso_date(0, 0), "1970-01-01T00:00:00+00:00");
    }
}
