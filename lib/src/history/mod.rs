//! vg-log's decisions: the project's git history as something to search.
//! `git/` reads commits from the object database (gix; git is never
//! spawned), `diff.rs` turns a commit's changes into the pieces indexed,
//! `index.rs` brings the commit log (`store::CommitStore`) up to date with
//! HEAD's history (`read_again.rs`: which stored commits it reads again) (`loose.rs` reads the malformed commits gix refuses),
//! `filter.rs` and `rank.rs` answer a question with commits,
//! ranked as code search ranks chunks: meaning and words, fused.
//! `revision.rs` indexes a revision's tree without a checkout (`--rev`),
//! `label.rs` a catalog's label, the revision it names in each project.

mod above_root;
mod diff;
mod filter;
mod git;
mod index;
mod label;
mod loose;
mod rank;
mod read_again;
mod revision;
mod tree_files;
mod unread_diffs;

pub use diff::{changed_pieces, DiffPiece, MAX_PIECE_LINES};
pub use filter::{in_git_dir, parse_date, parse_until, untouched_paths, CommitFilter};
pub use git::{CommitData, GitRepo, MAX_PIECES_PER_COMMIT, NOT_FETCHED};
pub use index::{update_log, LoadEmbedder, LogObserver, LogSummary};
pub use label::{
    forget_label, index_label, indexed_label, label_indexed_at, labels, resolve_label, unnamed_label_advice,
    unreadable_labels, Label, LabelCommit, LabelRun, LabelState, UnreadableLabel,
};
pub use rank::{search_log, CommitHit, LogQuery, MatchedLine, Pieces, MAX_MATCHED_LINES};
pub use revision::{
    check_model, index_revision, indexed_revision, revision_to_forget, tag_taken_note, unwritten_note, RevisionRun,
};

/// A commit's author date as ISO 8601 with the author's offset
/// (`2024-05-01T14:03:00+02:00`). A commit may say anything: an offset
/// that `±HH:MM` cannot write (100 hours or more) is shown in UTC, and a
/// year outside 0000-9999 in ISO 8601's expanded form, signed
/// (`+12024-05-01T…`); the instant is always the one the commit holds.
pub fn iso_date(seconds: i64, offset: i32) -> String {
    let offset = if offset.unsigned_abs() < 100 * 3600 { offset - offset % 60 } else { 0 };
    let local = seconds.saturating_add(i64::from(offset));
    let (year, month, day) = civil_from_days(local.div_euclid(86_400));
    let second_of_day = local.rem_euclid(86_400);
    let year = match year {
        0..=9999 => format!("{year:04}"),
        _ => format!("{year:+05}"),
    };
    let sign = if offset < 0 { '-' } else { '+' };
    let minutes = offset.unsigned_abs() / 60;
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60,
        minutes / 60,
        minutes % 60
    )
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, in i64 so any commit's date fits).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_shown_in_the_authors_offset() {
        assert_eq!(iso_date(1_714_521_600, 7200), "2024-05-01T02:00:00+02:00");
        assert_eq!(iso_date(0, 0), "1970-01-01T00:00:00+00:00");
        assert_eq!(iso_date(1_714_521_600, -(5 * 3600 + 30 * 60)), "2024-04-30T18:30:00-05:30");
        assert_eq!(iso_date(-1, 0), "1969-12-31T23:59:59+00:00");
        assert_eq!(iso_date(951_782_400, 0), "2000-02-29T00:00:00+00:00");
    }

    #[test]
    fn any_date_a_commit_holds_is_written_as_iso_8601() {
        // An offset of 100 hours or more cannot be written: UTC.
        assert_eq!(iso_date(0, 360_000), "1970-01-01T00:00:00+00:00");
        assert_eq!(iso_date(0, 99 * 3600 + 59 * 60), "1970-01-05T03:59:00+99:59");
        // Years past 9999 or before 0: expanded and signed.
        assert_eq!(iso_date(253_402_300_800, 0), "+10000-01-01T00:00:00+00:00");
        assert_eq!(iso_date(-62_167_219_201, 0), "-0001-12-31T23:59:59+00:00");
        assert!(iso_date(i64::MAX, i32::MAX).starts_with('+'));
        assert!(iso_date(i64::MIN, -3600).starts_with('-'));
        // Agrees with jiff wherever jiff can write the date.
        for seconds in (-62_000_000_000i64..250_000_000_000).step_by(7_777_777_777) {
            let ts = jiff::Timestamp::from_second(seconds).unwrap();
            let expected = ts.to_zoned(jiff::tz::TimeZone::UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00").to_string();
            assert_eq!(iso_date(seconds, 0), expected);
        }
    }
}
