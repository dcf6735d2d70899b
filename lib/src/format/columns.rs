//! Long lines under `-M` (ripgrep's `--max-columns`): one hit on a line of
//! minified code printed hundreds of kilobytes to the terminal (audit 237).

use std::borrow::Cow;

use super::FormatOptions;

/// What is shown of a line: the part to print (all of it, its first
/// `max_columns` bytes under `--max-columns-preview`, or none) and, when it
/// was cut, what says so.
pub(super) struct Cut<'t> {
    pub shown: &'t str,
    pub note: Option<String>,
}

/// `text` as `opts.max_columns` leaves it. Counted in bytes as ripgrep's
/// limit is, and cut at a character's boundary, never inside one.
pub(super) fn within_columns<'t>(text: &'t str, opts: &FormatOptions) -> Cut<'t> {
    let Some(max) = opts.max_columns.filter(|&max| max > 0 && text.len() > max) else {
        return Cut { shown: text, note: None };
    };
    if !opts.max_columns_preview {
        return Cut { shown: "", note: Some(format!("[Omitted long line of {} bytes]", text.len())) };
    }
    let end = (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    Cut { shown: &text[..end], note: Some(format!(" [... {} more bytes]", text.len() - end)) }
}

impl Cut<'_> {
    /// The line as printed: `body` (what `shown` became, escaped or
    /// highlighted) and the note, dimmed when colored.
    pub(super) fn with_note(&self, body: Cow<'_, str>, color: bool) -> String {
        match &self.note {
            None => body.into_owned(),
            Some(note) => format!("{body}{}", super::paint(color, super::DIM, note)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::OutputMode;

    fn opts(max: Option<usize>, preview: bool) -> FormatOptions {
        FormatOptions {
            mode: OutputMode::Flat,
            color: false,
            before: 0,
            after: 0,
            cwd: "/r".into(),
            lines_per_hit: 1,
            line_number: true,
            with_filename: true,
            terminal: false,
            null: false,
            max_columns: max,
            max_columns_preview: preview,
        }
    }

    #[test]
    fn a_line_over_the_limit_is_left_out_or_cut_at_a_character() {
        let line = "let é = 1;"; // 11 bytes: 'é' is bytes 4 and 5
        let shown = |max, preview| {
            let cut = within_columns(line, &opts(max, preview));
            cut.with_note(Cow::Borrowed(cut.shown), false)
        };
        assert_eq!(shown(None, false), line);
        assert_eq!(shown(Some(0), false), line, "0 is no limit, as rg's");
        assert_eq!(shown(Some(11), false), line);
        assert_eq!(shown(Some(10), false), "[Omitted long line of 11 bytes]");
        assert_eq!(shown(Some(5), true), "let  [... 7 more bytes]");
        assert_eq!(shown(Some(6), true), "let é [... 5 more bytes]");
    }
}
