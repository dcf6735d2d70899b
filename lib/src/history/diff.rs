//! A file's change in a commit as the pieces vg-log indexes: runs of
//! removed (`-`) and added (`+`) lines, close runs merged, long ones cut,
//! each placed at its line in the new file.

use gix::diff::blob::{Algorithm, Diff, InternedInput};

/// Most lines in one piece: about what the model reads whole.
pub const MAX_PIECE_LINES: usize = 24;

/// Runs of changes this few lines apart are one piece (one edit, seen whole).
const MERGE_GAP: u32 = 3;

/// Changed lines of one file in one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffPiece {
    /// Relative to the project root.
    pub path: String,
    /// The line of the new file where the piece starts (1-based); for a
    /// piece that only removes, the line that follows the removal.
    pub line: usize,
    /// The lines, each starting with `-`, `+` or (unchanged, between two
    /// changes) a space; `+` and space lines are consecutive lines of the new file.
    pub text: String,
}

/// The pieces of the change from `before` to `after` of the file at `path`.
pub fn changed_pieces(path: &str, before: &str, after: &str) -> Vec<DiffPiece> {
    let input = InternedInput::new(before, after);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let mut pieces = Vec::new();
    let mut run: Vec<(usize, String)> = Vec::new();
    let mut last_after_end: Option<u32> = None;
    for hunk in diff.hunks() {
        match last_after_end {
            Some(end) if hunk.after.start > end + MERGE_GAP => flush(path, &mut run, &mut pieces),
            // The unchanged lines between two close runs join them, as in a unified diff.
            Some(end) => {
                for i in end..hunk.after.start {
                    run.push((i as usize + 1, format!(" {}", new.get(i as usize).copied().unwrap_or_default())));
                }
            }
            None => {}
        }
        let line = hunk.after.start as usize + 1;
        for i in hunk.before.clone() {
            run.push((line, format!("-{}", old.get(i as usize).copied().unwrap_or_default())));
        }
        for i in hunk.after.clone() {
            run.push((i as usize + 1, format!("+{}", new.get(i as usize).copied().unwrap_or_default())));
        }
        last_after_end = Some(hunk.after.end);
    }
    flush(path, &mut run, &mut pieces);
    pieces
}

/// The run so far as pieces of at most `MAX_PIECE_LINES` lines that say something.
fn flush(path: &str, run: &mut Vec<(usize, String)>, pieces: &mut Vec<DiffPiece>) {
    for lines in run.chunks(MAX_PIECE_LINES) {
        if lines.iter().all(|(_, l)| l[1..].trim().is_empty()) {
            continue;
        }
        let text = lines.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
        pieces.push(DiffPiece { path: path.to_string(), line: lines[0].0, text });
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_becomes_its_removed_and_added_lines_at_the_new_line() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nB\nc\nd\n";
        let pieces = changed_pieces("x.rs", before, after);
        assert_eq!(pieces, [DiffPiece { path: "x.rs".into(), line: 2, text: "-b\n+B".into() }]);
    }

    #[test]
    fn close_edits_are_one_piece_and_distant_ones_two() {
        let before: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 2\n", "two\n").replace("line 4\n", "four\n").replace("line 30\n", "thirty\n");
        let pieces = changed_pieces("x.rs", &before, &after);
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(pieces[0].text, "-line 2\n+two\n line 3\n-line 4\n+four");
        assert_eq!(pieces[1].line, 30);
    }

    #[test]
    fn a_new_file_is_cut_into_pieces_that_fit() {
        let after: String = (1..=60).map(|i| format!("fn f{i}() {{}}\n")).collect();
        let pieces = changed_pieces("new.rs", "", &after);
        assert_eq!(pieces.len(), 3);
        assert_eq!((pieces[0].line, pieces[1].line, pieces[2].line), (1, 25, 49));
        assert!(pieces.iter().all(|p| p.text.lines().count() <= MAX_PIECE_LINES));
    }

    #[test]
    fn blank_changes_make_no_piece() {
        assert!(changed_pieces("x.rs", "a\n", "a\n\n\n").is_empty());
    }
}
