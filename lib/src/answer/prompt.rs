//! What the model is sent: a short instruction, the question, and the top
//! results as numbered excerpts with their paths and lines, each cut to a
//! bound so that a few long chunks cannot fill a small model's context.

use serde::Serialize;

use crate::records::HitRecord;

/// Longest excerpt sent, in characters; a hit is cut at a line end before it.
const MAX_EXCERPT_CHARS: usize = 1500;

const INSTRUCTION: &str = "You answer questions about a code base using only the numbered excerpts of it you are given. \
Name the functions, types and files that answer the question. After each statement, cite the excerpt it comes from as [1], [2] and so on. \
If the excerpts do not answer the question, say so. Be brief: at most five sentences.";

/// One chat message, as OpenAI's chat completions API takes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Message {
    pub(crate) role: &'static str,
    pub(crate) content: String,
}

/// The messages that ask `query` of the excerpts `given`.
pub(super) fn messages(query: &str, given: &[HitRecord]) -> Vec<Message> {
    let mut user = format!("Question: {query}\n\nExcerpts:\n");
    for (i, hit) in given.iter().enumerate() {
        user.push_str(&format!(
            "\n[{}] {}:{}-{}\n```\n{}\n```\n",
            i + 1,
            // A stream is anyone's to write: its paths are bounded too.
            crate::project::shown::clipped_middle(&hit.cited_name(), MAX_EXCERPT_CHARS),
            hit.start_line,
            hit.end_line,
            excerpt(&hit.text)
        ));
    }
    user.push_str(&format!("\nQuestion: {query}\nAnswer, citing the excerpts:"));
    vec![Message { role: "system", content: INSTRUCTION.into() }, Message { role: "user", content: user }]
}

/// `text` up to `MAX_EXCERPT_CHARS`, cut after a whole line, marked when cut.
fn excerpt(text: &str) -> String {
    match shown_of(text) {
        (shown, false) => shown.to_string(),
        (shown, true) => format!("{shown}\n…"),
    }
}

/// What of `text` an excerpt shows, and whether it was cut.
fn shown_of(text: &str) -> (std::borrow::Cow<'_, str>, bool) {
    let text = text.trim_end();
    if text.chars().count() <= MAX_EXCERPT_CHARS {
        return (text.into(), false);
    }
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if out.chars().count() + line.chars().count() > MAX_EXCERPT_CHARS {
            break;
        }
        out.push_str(line);
    }
    if out.is_empty() {
        out = text.chars().take(MAX_EXCERPT_CHARS).collect();
    }
    (out.trim_end().to_string().into(), true)
}

/// The last line of `hit` its excerpt shows the model: a citation of a
/// line past it names what the model was never given.
pub(super) fn last_line_shown(hit: &HitRecord) -> usize {
    match shown_of(&hit.text) {
        (shown, true) => hit.start_line + shown.lines().count().max(1) - 1,
        (_, false) => hit.end_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(file: &str, text: &str) -> HitRecord {
        serde_json::from_value(serde_json::json!({"file": file, "start_line": 3, "end_line": 9, "text": text})).unwrap()
    }

    #[test]
    fn excerpts_are_numbered_with_their_places_and_bounded() {
        let long = "let x = 1;\n".repeat(400);
        let m = messages("where is the ledger", &[hit("src/book.rs", "struct AccountBook;"), hit("a.rs", &long)]);
        assert_eq!((m.len(), m[0].role, m[1].role), (2, "system", "user"));
        assert!(m[1].content.contains("[1] src/book.rs:3-9\n```\nstruct AccountBook;\n```"), "{}", m[1].content);
        assert!(m[1].content.contains("[2] a.rs:3-9"));
        assert!(m[1].content.len() < 2 * MAX_EXCERPT_CHARS, "the long hit is cut");
        assert!(m[1].content.contains("let x = 1;\n…"));
        // 1,500 characters hold 136 of its lines of 11: lines 3 to 138.
        assert_eq!(last_line_shown(&hit("a.rs", &long)), 3 + 136 - 1);
        assert_eq!(last_line_shown(&hit("a.rs", "short")), 9, "a whole excerpt shows the hit's lines");
        // A path of 200,000 characters went whole: 30 of them sent 4 MB.
        let deep = format!("{}x.py", "a/".repeat(100_000));
        let m = messages("q", &[hit(&deep, "short")]);
        assert!(
            m[1].content.len() < 2 * MAX_EXCERPT_CHARS && m[1].content.contains("x.py:3-9"),
            "{}",
            m[1].content.len()
        );
    }
}
