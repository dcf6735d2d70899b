//! The lexical side of hybrid search: the words a chunk is indexed under in
//! SQLite FTS5, the match expression for a query, and how a lexical ranking
//! and a semantic one are fused.
//!
//! Code spells one idea many ways (`retryUpload`, `retry_upload`,
//! `RETRY_UPLOAD`), so identifiers are split into their parts, and the joined
//! form is kept too so that a query naming the identifier exactly still
//! matches it best. FTS5's porter stemmer then folds `uploads` into `upload`.

use std::collections::HashMap;

/// Words of `text` for the full-text index, separated by spaces.
pub fn terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in words(text) {
        push_word_terms(&mut out, word);
    }
    out
}

/// The FTS5 match expression for `query`: any of its content words.
/// None when the query has no word worth matching (only punctuation or
/// stop words), so the caller ranks by meaning alone.
pub fn match_expression(query: &str) -> Option<String> {
    let mut seen = Vec::new();
    let mut buf = String::new();
    for word in words(query) {
        buf.clear();
        push_word_terms(&mut buf, word);
        for t in buf.split(' ').filter(|t| !t.is_empty()) {
            if !STOP_WORDS.contains(&t) && !seen.iter().any(|s: &String| s == t) {
                seen.push(t.to_string());
            }
        }
    }
    if seen.is_empty() {
        return None;
    }
    // Terms hold only letters, digits and no quotes, but quote them anyway:
    // a bare word like AND or NEAR would be an FTS5 operator.
    Some(seen.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" OR "))
}

/// The parts of the query's identifiers and words worth matching, in
/// order, lowercased: no stop words, single letters or numbers.
pub fn content_words(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in words(query) {
        for part in split_identifier(word) {
            if says_something(&part) && !STOP_WORDS.contains(&part.as_str()) {
                out.push(part);
            }
        }
    }
    out
}

/// Runs of letters, digits and underscores.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
}

/// Append the parts of one identifier that say something, and the whole
/// of it when it has several parts.
fn push_word_terms(out: &mut String, word: &str) {
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
pub fn says_something(part: &str) -> bool {
    part.chars().count() >= 2 && !part.chars().all(|c| c.is_ascii_digit())
}

/// `parseHTTPResponse_v2` → `parse`, `http`, `response`, `v`, `2`, lowercased.
pub fn split_identifier(word: &str) -> Vec<String> {
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

/// Words of questions that say nothing about code. Verbs that are also
/// the parts of identifiers (`get`, `handle`, `find`, `use`, `show`:
/// `getLogger`, `handleError`, `find_caller`) are not among them: "get a
/// logger" should match `getLogger` on both words, and BM25's IDF already
/// gives little weight to those that are everywhere. Dropping them from
/// this list moved hybrid mrr@10 on the dev evals from 0.550 / 0.622 /
/// 0.432 to 0.558 / 0.623 / 0.431.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "doing",
    "for",
    "from",
    "how",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "of",
    "on",
    "or",
    "so",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "those",
    "to",
    "via",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "with",
    "you",
    "your",
    "code",
    "function",
    "functions",
    "method",
    "methods",
    "implementation",
    "implemented",
    "logic",
];

/// Reciprocal-rank fusion's damping constant: ranks below ~60 matter little.
pub const RRF_K: f32 = 60.0;

/// Fuse rankings (ids best first, each with a weight) by weighted
/// reciprocal-rank fusion; returns ids with fused scores, best first.
pub fn fuse(rankings: &[(&[i64], f32)]) -> Vec<(i64, f32)> {
    let mut scores: HashMap<i64, f32> = HashMap::new();
    for (ranking, weight) in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            *scores.entry(*id).or_default() += weight / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f32)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// How many times a chunk's context line (its file's path and the names of
/// the definitions around it, `chunk::contexts`) is counted in its words.
/// Those names say what the chunk is about better than most words of its
/// body; counting them more is BM25F's field weighting done with one field.
/// Hybrid mrr@10 on the dev evals (py-logging / py-asyncio /
/// rs-regex-automata) by weight: 1: 0.457 / 0.488 / 0.352; 2: 0.469 /
/// 0.513 / 0.356; 3: 0.473 / 0.533 / 0.361; 5: 0.473 / 0.548 / 0.361;
/// 8: 0.477 / 0.551 / 0.364. Past 5 the gains are within noise, and a path's
/// words would start to outweigh the code.
pub const CONTEXT_WEIGHT: usize = 5;

/// BM25 (as FTS5 reports it: more negative is better) mapped onto 0..1, so
/// that lexical-only results have a score and a threshold means something.
pub fn bm25_score(bm25: f64) -> f32 {
    let x = (-bm25).max(0.0);
    (x / (1.0 + x)) as f32
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
    fn match_expression_drops_stop_words_and_quotes_terms() {
        assert_eq!(
            match_expression("where do we retry failed uploads?").unwrap(),
            r#""retry" OR "failed" OR "uploads""#
        );
        assert_eq!(match_expression("AND NEAR or").unwrap(), r#""near""#);
        assert_eq!(match_expression("how is it"), None);
        assert_eq!(match_expression("?!#"), None);
        assert_eq!(match_expression("parse_config parse").unwrap(), r#""parse" OR "config" OR "parseconfig""#);
        // Verbs that name code (getLogger, handleError) are searched for.
        assert_eq!(match_expression("how do we get the logger").unwrap(), r#""get" OR "logger""#);
        assert_eq!(match_expression("handle errors").unwrap(), r#""handle" OR "errors""#);
    }

    #[test]
    fn fusion_rewards_agreement_and_respects_weights() {
        let semantic = [1, 2, 3];
        let lexical = [3, 4];
        let fused = fuse(&[(&semantic, 1.0), (&lexical, 1.0)]);
        assert_eq!(fused[0].0, 3, "ranked by both beats ranked first by one");
        let ids: Vec<i64> = fused.iter().map(|f| f.0).collect();
        assert_eq!(ids, [3, 1, 2, 4]);
        let heavy = fuse(&[(&semantic, 1.0), (&lexical, 0.01)]);
        assert_eq!(heavy[0].0, 1);
    }

    #[test]
    fn bm25_scores_are_ordered_and_bounded() {
        assert!(bm25_score(-10.0) > bm25_score(-1.0));
        assert!(bm25_score(-1000.0) < 1.0);
        assert_eq!(bm25_score(0.0), 0.0);
    }
}
