//! The names an answer gives that look like code (`AccountBook`,
//! `post_entry`, a word quoted alone): what `--learn` may teach, and what
//! `denial` weighs clause by clause. Apart from both, which read it.

use crate::terms::words;

/// The identifiers a text names that look like code: with an underscore, a
/// lower-then-upper case step (`AccountBook`, `getUser`), or alone in
/// backticks. A fenced block (```) is code quoted whole, not a name: its
/// words count only as they look (its fence flipped which spans read as
/// quoted, and every word of a docstring in it, "and", "out", was learned).
pub(super) fn named_identifiers(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (fence, block) in text.split("```").enumerate() {
        let spans: Vec<&str> = if fence % 2 == 1 { vec![block] } else { block.split('`').collect() };
        for (i, part) in spans.iter().enumerate() {
            // A span of one word is a name; one of a call or a path
            // (`post_entry(entry)`) names what looks like code in it, not
            // its argument (review 273: `entry` was learned).
            let quoted =
                fence % 2 == 0 && i % 2 == 1 && !part.trim().contains(char::is_whitespace) && words(part).count() == 1;
            for id in words(part) {
                let code_like = id.contains('_') || has_case_step(id) || (quoted && id.len() >= 3);
                if code_like && id.chars().any(|c| c.is_alphabetic()) && !is_keyword(id) {
                    out.push(id);
                }
            }
        }
    }
    out
}

/// A word that languages reserve, which an answer may quote (`self`,
/// `return`) and which names nothing of the project's: as a concept's
/// synonym it matched most code (audit 232).
fn is_keyword(id: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "and",
        "async",
        "await",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "continue",
        "def",
        "default",
        "defer",
        "del",
        "elif",
        "else",
        "enum",
        "except",
        "export",
        "extends",
        "false",
        "final",
        "finally",
        "float",
        "for",
        "from",
        "func",
        "function",
        "impl",
        "import",
        "int",
        "interface",
        "lambda",
        "let",
        "match",
        "mod",
        "mut",
        "new",
        "nil",
        "none",
        "not",
        "null",
        "package",
        "pass",
        "private",
        "protected",
        "pub",
        "public",
        "raise",
        "return",
        "self",
        "static",
        "str",
        "string",
        "struct",
        "super",
        "switch",
        "this",
        "throw",
        "trait",
        "true",
        "try",
        "type",
        "undefined",
        "use",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ];
    KEYWORDS.contains(&id.to_ascii_lowercase().as_str())
}

fn has_case_step(id: &str) -> bool {
    id.chars().zip(id.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase())
}
