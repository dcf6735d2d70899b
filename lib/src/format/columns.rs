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

/// `text` as printed under `-M`: what is left of it, shown as `opts` shows
/// a repository's text (`FormatOptions::shown`), then dressed by `style`
/// (highlighted, painted), then the note of what was cut, dimmed.
pub(super) fn shown_within_columns<'t>(
    text: &'t str,
    opts: &FormatOptions,
    style: impl FnOnce(Cow<'t, str>) -> Cow<'t, str>,
) -> String {
    let cut = within_columns(text, opts);
    cut.with_note(style(opts.shown(cut.shown)), opts.color)
}

/// `text` as `opts.max_columns` leaves it. Counted in bytes as ripgrep's
/// limit is, and cut at a character's boundary, never inside one.
fn within_columns<'t>(text: &'t str, opts: &FormatOptions) -> Cut<'t> {
    let Some(max) = opts.max_columns.filter(|&max| max > 0 && text.len() > max) else {
        return Cut { shown: text, note: None };
    };
    if !opts.max_columns_preview {
        return Cut { shown: "", note: Some(format!("[Omitted long line of {} bytes]", text.len())) };
    }
    let end = (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let end = before_open_escape(&text[..end]);
    Cut { shown: &text[..end], note: Some(format!(" [... {} more bytes]", text.len() - end)) }
}

/// Where `text` ends without an escape sequence cut open: a pipe gets a
/// line's bytes as they are, and a cut CSI or OSC sequence (a title, a
/// link) went on to swallow what followed it on the terminal at the end
/// of the pipe (review 246). The start of the first sequence left open,
/// or the whole.
fn before_open_escape(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == 0x1b) {
        let start = at + offset;
        match escape_end(&bytes[start..]) {
            Some(len) => at = start + len,
            None => return start,
        }
    }
    text.len()
}

/// The length of the escape sequence `seq` starts with (at its ESC), or
/// None when it does not end within `seq`, as a terminal reads it: CSI
/// (`ESC [`) ends at a byte from `@` to `~` (one broken by a control byte
/// is open); OSC, DCS, SOS, PM and APC (`ESC ]`, `P`, `X`, `^`, `_`)
/// end at BEL or `ESC \\`; ESC ESC ends with the second's sequence; any other
/// is its intermediate bytes (space to `/`) and one final byte.
fn escape_end(seq: &[u8]) -> Option<usize> {
    match seq.get(1)? {
        // ESCs in a row end where the last one's sequence does: cut between
        // them, a lone ESC would take the note's first bytes (review 248).
        // Counted, not recursed: a line may hold a million of them.
        0x1b => {
            let more = seq.iter().skip(1).take_while(|&&b| b == 0x1b).count();
            escape_end(&seq[more..]).map(|len| len + more)
        }
        // One broken by a control byte (an ESC) is taken as open: the cut
        // may leave out what broke it, and the note would end it.
        b'[' => match seq[2..].iter().position(|&b| (0x40..=0x7e).contains(&b) || b < 0x20)? {
            end if seq[2 + end] < 0x20 => None,
            end => Some(3 + end),
        },
        // One scan to whichever ends it first: two searches each to the
        // end of the line made a line of many such sequences quadratic
        // (review 249: 18 s for 40,000 of them).
        b']' | b'P' | b'X' | b'^' | b'_' => (2..seq.len()).find_map(|i| match seq[i] {
            0x07 => Some(i + 1),
            0x1b if seq.get(i + 1) == Some(&b'\\') => Some(i + 2),
            _ => None,
        }),
        _ => {
            let intermediates = seq[1..].iter().take_while(|&&b| (0x20..=0x2f).contains(&b)).count();
            seq.get(1 + intermediates).filter(|&&b| (0x30..=0x7e).contains(&b)).map(|_| 2 + intermediates)
        }
    }
}

impl Cut<'_> {
    /// The line as printed: `body` (what `shown` became, escaped or
    /// highlighted) and the note, dimmed when colored.
    fn with_note(&self, body: Cow<'_, str>, color: bool) -> String {
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

    #[test]
    fn a_preview_never_ends_inside_an_escape_sequence() {
        let cut_at = |line: &str, max| within_columns(line, &opts(Some(max), true)).shown.to_string();
        let colored = "a \x1b[31mred\x1b[0m and more text after it";
        assert_eq!(cut_at(colored, 4), "a ", "inside the CSI");
        assert_eq!(cut_at(colored, 9), "a \x1b[31mre");
        let titled = "x\x1b]0;a title\x07 then the rest of the line";
        assert_eq!(cut_at(titled, 8), "x", "inside the OSC");
        assert_eq!(cut_at(titled, 20), "x\x1b]0;a title\x07 then t");
        let st = "x\x1b]8;;http://h\x1b\\link\x1b]8;;\x1b\\ and the rest";
        assert_eq!(cut_at(st, 10), "x", "inside the link's opening");
        assert_eq!(cut_at(st, 22), "x\x1b]8;;http://h\x1b\\link");
        assert_eq!(cut_at("ab\x1b[1mcd", 3), "ab", "an ESC alone at the end");
        assert_eq!(cut_at("ab\x1b\x1b[31mred text", 5), "ab", "ESC ESC, the second cut");
        assert_eq!(cut_at("ab\x1b\x1b[31mred text", 9), "ab\x1b\x1b[31mr");
        let escapes = format!("ab{}x and more", "\x1b".repeat(1_000_000));
        assert_eq!(cut_at(&escapes, 999_990), "ab", "a million ESCs, counted");
        assert_eq!(cut_at("ab\x1b[3\x1b[1mbold text", 12), "ab", "a CSI broken by an ESC");
        assert_eq!(cut_at("ab\x1b(Bcd and more", 3), "ab", "ESC ( without its final byte");
        assert_eq!(cut_at("ab\x1b(Bcd and more", 5), "ab\x1b(B");
    }
}
