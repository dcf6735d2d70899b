//! How code text becomes terms, the same at index time and at query time:
//! the words a chunk is indexed under in the full-text index, and the
//! stemmed parts of the names it defines.
//!
//! Code spells one idea many ways (`retryUpload`, `retry_upload`,
//! `RETRY_UPLOAD`), so identifiers are split into their parts, and the joined
//! form is kept too so that a query naming the identifier exactly still
//! matches it best. FTS5's porter stemmer then folds `uploads` into `upload`.
//! Changing anything here changes what an index holds, so it bumps
//! `chunk::FORMAT`.

/// Words of `text` for the full-text index, separated by spaces.
pub(crate) fn terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in words(text) {
        push_word_terms(&mut out, word);
    }
    out
}

/// What the full-text index holds for one chunk: the terms of its text,
/// then those of its context line (`chunk::Context::words`), counted
/// `CONTEXT_WEIGHT` times.
pub(crate) fn chunk_words(text: &str, context: &str) -> String {
    let mut words = terms(text);
    let context_terms = terms(context);
    for _ in 0..CONTEXT_WEIGHT {
        words.push(' ');
        words.push_str(&context_terms);
    }
    words
}

/// How many times a chunk's context line (its file's path and the names of
/// the definitions around it, `chunk::contexts`) is counted in its words.
/// Those names say what the chunk is about better than most words of its
/// body; counting them more is BM25F's field weighting done with one field.
/// Past 5 a path's words would start to outweigh the code (bench/TUNING.md).
pub(crate) const CONTEXT_WEIGHT: usize = 5;

/// Runs of letters, digits and underscores.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
}

/// Append the parts of one identifier that say something, and the whole
/// of it when it has several parts.
pub(crate) fn push_word_terms(out: &mut String, word: &str) {
    let parts = split_identifier(word);
    let mut push = |t: &str| {
        if !says_something(t) {
            return;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    };
    for p in &parts {
        push(p);
    }
    if parts.len() > 1 {
        push(&parts.concat());
    }
}

/// Whether an identifier's part carries meaning: single characters and
/// pure numbers do not.
pub(crate) fn says_something(part: &str) -> bool {
    part.chars().count() >= 2 && !part.chars().all(|c| c.is_ascii_digit())
}

/// `parseHTTPResponse_v2` → `parse`, `http`, `response`, `v`, `2`, lowercased.
pub(crate) fn split_identifier(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut parts = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|j| chars.get(j)) {
            let next = chars.get(i + 1).copied();
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
                || (prev.is_alphabetic() && c.is_ascii_digit())
                || (prev.is_ascii_digit() && c.is_alphabetic());
            if boundary && !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// Stems and parts of identifiers as the name index stores them: changing
/// anything here changes what the index holds, so it bumps `chunk::FORMAT`.
///
/// A light stemmer, the same on both sides: plurals and the common verb
/// endings fold (`handlers` → `handler`; `rotate`, `rotates`, `rotated`
/// and `rotating` → `rotat`), which is all a paraphrase of a name usually
/// needs. Unlike Porter's it leaves `-er`, `-ion` and `-ness` alone, so
/// `handler` and `handle` stay apart.
pub(crate) fn stem(word: &str) -> String {
    let mut w = word.to_lowercase();
    let chars = |s: &str| s.chars().count();
    if w.ends_with("ies") && chars(&w) >= 5 {
        w.truncate(w.len() - 3);
        w.push('y');
        return w;
    }
    if !(w.ends_with("ss") || w.ends_with("us") || w.ends_with("is")) {
        let verb_ending = ["ing", "ed"].into_iter().find(|e| w.ends_with(e) && chars(&w) >= e.len() + 3);
        if let Some(ending) = verb_ending {
            w.truncate(w.len() - ending.len());
            // `getting` → `gett` → `get`, `stopped` → `stop`; `added` → `add`.
            let mut tail = w.chars().rev();
            if let (Some(a), Some(b)) = (tail.next(), tail.next()) {
                if a == b && a.is_ascii_alphabetic() && !"aeioulsz".contains(a) && chars(&w) >= 4 {
                    w.pop();
                }
            }
        } else if w.ends_with("es") && chars(&w) >= 5 && ends_sibilant(&w[..w.len() - 2]) {
            // `classes` → `class`, `boxes` → `box`; `names` loses its `s` below.
            w.truncate(w.len() - 2);
        } else if w.ends_with('s') && chars(&w) >= 4 {
            w.truncate(w.len() - 1);
        }
    }
    if w.ends_with('e') && chars(&w) >= 4 {
        w.pop();
    }
    w
}

fn ends_sibilant(stem: &str) -> bool {
    ["ss", "x", "ch", "sh", "z"].iter().any(|s| stem.ends_with(s))
}

/// The stemmed parts of one name (`getEffectiveLevel` → `get`, `effective`,
/// `level`), each once; single letters and numbers say nothing.
pub(crate) fn name_terms(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in split_identifier(name).iter().filter(|p| says_something(p)) {
        let s = stem(part);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// A chunk's names as stored (space-separated, `index::file`), each whole.
pub(crate) fn stored_names(names: &str) -> impl Iterator<Item = &str> {
    names.split(' ').filter(|n| !n.is_empty())
}

/// A chunk's names as stored, each as its terms.
pub(crate) fn parse_names(names: &str) -> Vec<Vec<String>> {
    stored_names(names).map(name_terms).collect()
}

/// The distinct terms of all of a chunk's names, for the name index's counts.
pub(crate) fn terms_of_names(names: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in parse_names(names).into_iter().flatten() {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers_in_every_style() {
        assert_eq!(split_identifier("parseHTTPResponse_v2"), ["parse", "http", "response", "v", "2"]);
        assert_eq!(split_identifier("retry_failed_uploads"), ["retry", "failed", "uploads"]);
        assert_eq!(split_identifier("RETRY_UPLOAD"), ["retry", "upload"]);
        assert_eq!(split_identifier("RotatingFileHandler"), ["rotating", "file", "handler"]);
        assert_eq!(split_identifier("x"), ["x"]);
    }

    #[test]
    fn terms_keep_parts_and_the_joined_identifier() {
        assert_eq!(terms("fn retryUpload(n: u32)"), "fn retry upload retryupload u32");
        assert_eq!(terms("a = b + 1"), "");
        assert_eq!(terms("naïve café"), "naïve café");
    }

    #[test]
    fn stems_fold_plurals_and_verb_endings() {
        for (word, stemmed) in [
            ("handlers", "handler"),
            ("Rotating", "rotat"),
            ("rotated", "rotat"),
            ("rotates", "rotat"),
            ("rotate", "rotat"),
            ("classes", "class"),
            ("class", "class"),
            ("names", "nam"),
            ("name", "nam"),
            ("caches", "cach"),
            ("entries", "entry"),
            ("status", "status"),
            ("is", "is"),
            ("bus", "bus"),
            ("getting", "get"),
            ("get", "get"),
            ("saved", "sav"),
            ("save", "sav"),
            ("added", "add"),
            ("stopped", "stop"),
            ("add", "add"),
            ("running", "run"),
            ("processing", "process"),
            ("processes", "process"),
        ] {
            assert_eq!(stem(word), stemmed, "{word}");
        }
    }

    #[test]
    fn name_terms_split_and_stem() {
        assert_eq!(name_terms("getEffectiveLevel"), ["get", "effectiv", "level"]);
        assert_eq!(name_terms("__init__"), ["init"]);
        assert_eq!(name_terms("parse_v2_headers"), ["pars", "header"]);
        assert_eq!(terms_of_names("Handler emit handle_error"), ["handler", "emit", "handl", "error"]);
    }

    #[test]
    fn a_chunk_counts_its_context_more_than_its_text() {
        assert_eq!(
            chunk_words("emit(record)", "log.py: Handler"),
            "emit record log py handler log py handler log py handler log py handler log py handler"
        );
    }
}
