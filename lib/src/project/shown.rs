//! How text that came from outside (a path a client sent, a value read from
//! a stream) is shown in an error: bounded, so that an 8 MiB path makes a
//! one-line error, not an 8 MiB one; and text from a file or a model as a
//! terminal may show it (`escape_controls`).

use std::borrow::Cow;

/// The most characters of a path a line on stderr shows (its start and its
/// end, `clipped_middle`), so that the cause after it is said.
pub const SHOWN_PATH_CHARS: usize = 400;

/// At most `max_chars` characters of `text`, and `…` where it was cut.
pub fn clipped(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A root-relative path as a message names it: the root itself, whose
/// path is empty in records, as `.` ("vg-index: : Too many open files" named
/// nothing, audit 245).
pub fn rel_or_dot(rel: &str) -> &str {
    if rel.is_empty() {
        "."
    } else {
        rel
    }
}

/// At most `max_chars` characters of a path, its start and its end with
/// `…` between: what the error says of it comes after it, and the file's
/// own name is at its end (a path 5,000 characters deep cut from the end
/// lost both, and the line the cause).
pub fn clipped_middle(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_string();
    }
    let head: String = text.chars().take(max_chars / 2).collect();
    let tail: String = text.chars().skip(count - (max_chars - max_chars / 2)).collect();
    format!("{head}…{tail}")
}

/// `message` with each run of characters without a space cut to
/// `max_chars`, and the whole to `max_whole`: for an error whose wording is
/// another library's (serde's "unknown variant `…`"), where the value a
/// client sent cannot be clipped before it is quoted.
pub(crate) fn words_clipped(message: &str, max_chars: usize, max_whole: usize) -> String {
    let mut out = String::with_capacity(message.len().min(max_whole + 8));
    for (i, word) in message.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&clipped(word, max_chars));
    }
    clipped(&out, max_whole)
}

/// The bidirectional embeddings, overrides and isolates: a terminal that
/// obeys them shows what follows in another order than it is
/// ("Trojan Source").
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with its control characters made visible, as `cat -v` and
/// `less` show them: `^[` for ESC, `^?` for DEL, `<U+009B>` for the C1
/// controls a terminal also obeys; tabs stay. The bidirectional overrides
/// and isolates are shown as `<U+202E>` too: a terminal that obeys them
/// shows a line's code in another order than it runs ("Trojan Source").
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| (c.is_control() && c != '\t') || is_bidi_control(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            '\u{7f}' => out.push_str("^?"),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(c as u8 + 0x40));
            }
            c if c.is_control() || is_bidi_control(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// An error and its causes as one line, each cause said once: a cause
/// that only says again what the one before it said is left out (SQLite's
/// errors wrap one that repeats their message: "attempt to write a readonly
/// database: Error code 1544: attempt to write a readonly database").
pub fn error_line(e: &anyhow::Error) -> String {
    let mut said: Vec<String> = Vec::new();
    for cause in e.chain().map(|c| c.to_string().replace('\n', " ")) {
        if said.last().is_some_and(|last| cause.ends_with(last.as_str()) || last.ends_with(cause.as_str())) {
            continue;
        }
        said.push(cause);
    }
    said.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_line_says_each_cause_once() {
        #[derive(Debug)]
        struct Wrapped(std::io::Error);
        impl std::fmt::Display for Wrapped {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "attempt to write a readonly database")
            }
        }
        impl std::error::Error for Wrapped {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let inner = std::io::Error::other("Error code 1544: attempt to write a readonly database");
        let e = anyhow::Error::new(Wrapped(inner)).context("index /p/.vecgrep/index.db");
        assert_eq!(error_line(&e), "index /p/.vecgrep/index.db: attempt to write a readonly database");
        let e = anyhow::Error::new(std::io::Error::other("No such file or directory")).context("cannot read config x");
        assert_eq!(error_line(&e), "cannot read config x: No such file or directory", "distinct causes all stay");
    }

    #[test]
    fn a_path_keeps_its_start_and_its_name() {
        assert_eq!(clipped_middle("src/a.rs", 20), "src/a.rs");
        assert_eq!(clipped_middle("abcdefghij/name.rs", 10), "abcde…me.rs");
        assert_eq!(clipped_middle("日本語日本語/ファイル", 4), "日本…イル");
    }

    #[test]
    fn a_long_word_is_cut_and_the_words_around_it_kept() {
        let long = "x".repeat(5000);
        let said = words_clipped(&format!("unknown variant `{long}`, expected `hybrid`"), 200, 300);
        assert!(said.starts_with("unknown variant `xxx") && said.ends_with("… expected `hybrid`"), "{said}");
        assert!(said.chars().count() < 260, "{}", said.chars().count());
        let spaced = format!("a {}", "word ".repeat(2000));
        assert_eq!(words_clipped(&spaced, 200, 300).chars().count(), 301, "the whole is bounded too");
        assert_eq!(words_clipped("short and sweet", 200, 300), "short and sweet");
    }

    #[test]
    fn long_text_is_cut_at_a_character() {
        assert_eq!(clipped("short", 80), "short");
        assert_eq!(clipped("ééééé", 3), "ééé…");
        assert_eq!(clipped(&"x".repeat(8 << 20), 200).chars().count(), 201);
    }
}
