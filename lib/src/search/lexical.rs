//! The lexical side of hybrid search: the match expression for a query
//! (its words split as `terms` splits a chunk's), the chunks that match it
//! in scope, by BM25, and BM25 as a score.

use std::collections::HashMap;

use super::vectors::VectorTable;
use super::word_table::WordTable;
use crate::project::SearchMode;
use crate::store::{ChunkId, IndexReader, Scope, StoreError};
use crate::terms::{push_word_terms, says_something, split_identifier, words};

/// The FTS5 match expression for `query`: any of its content words.
/// None when the query has no word worth matching (only punctuation or
/// stop words), so the caller ranks by meaning alone.
pub(super) fn match_expression(query: &str) -> Option<String> {
    let seen = expression_words(query);
    (!seen.is_empty()).then(|| quoted_any(&seen))
}

/// The expression a search in `mode` matches words with: in lexical mode,
/// a query of common words only (`for`, `method`) matches them, as grep
/// would, since words are all it has; hybrid mode leaves such a query to
/// its meaning. None when no word of the query is indexed (punctuation,
/// numbers, single letters).
pub(super) fn match_expression_in(query: &str, mode: SearchMode) -> Option<String> {
    match_expression(query).or_else(|| {
        let every = terms_of(query, |_| true);
        (mode == SearchMode::Lexical && !every.is_empty()).then(|| quoted_any(&every))
    })
}

/// Any of `terms`, each quoted: terms hold only letters and digits, but a
/// bare word like AND or NEAR would be an FTS5 operator.
fn quoted_any(terms: &[String]) -> String {
    terms.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" OR ")
}

/// The terms `match_expression` asks for, in order, each once, as the
/// query spells them (before FTS5 stems them).
pub(super) fn expression_words(query: &str) -> Vec<String> {
    terms_of(query, |t| !STOP_WORDS.contains(&t))
}

/// The query's indexed terms that `keep` keeps, in order, each once.
fn terms_of(query: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut seen = Vec::new();
    let mut buf = String::new();
    for word in words(query) {
        buf.clear();
        push_word_terms(&mut buf, word);
        for t in buf.split(' ').filter(|t| !t.is_empty()) {
            if keep(t) && !seen.iter().any(|s: &String| s == t) {
                seen.push(t.to_string());
            }
        }
    }
    seen
}

/// The parts of the query's identifiers and words worth matching, in
/// order, lowercased: no stop words, single letters or numbers.
pub(super) fn content_words(query: &str) -> Vec<String> {
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

/// Words of questions that say nothing about code. Verbs that are also
/// the parts of identifiers (`get`, `handle`, `find`, `use`, `show`:
/// `getLogger`, `handleError`, `find_caller`) are not among them: "get a
/// logger" should match `getLogger` on both words, and BM25's IDF already
/// gives little weight to those that are everywhere.
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

/// Chunks in scope matching the full-text expression `expr`, by BM25 (more
/// negative is better), best first, at most `limit`. Beside vectors in
/// memory (`table`: hybrid) holes are left out, a chunk without a vector
/// being no result of a search by meaning; a search by words alone (no
/// table) finds them by their words, as the spec's `holes` says.
///
/// The store (or `words`) is asked for its best rows in scope, and those
/// without a place are dropped afterwards, asking for more while too many
/// were. Equal
/// scores are ordered by path and line, as in every ranking. `table`, when
/// given, knows every non-hole chunk's file; `words`, when given, holds the
/// index's words as the store does, and answers instead of it.
pub(super) fn word_ranking(
    store: &dyn IndexReader,
    expr: &str,
    scope: &Scope,
    limit: usize,
    table: Option<&VectorTable>,
    words: Option<&WordTable>,
) -> Result<Vec<(ChunkId, f64)>, StoreError> {
    // A word FTS5 would match as a phrase is left to the store.
    let terms = match words {
        Some(words) => crate::store::expression_terms(expr)?.map(|terms| (words, terms)),
        None => None,
    };
    let admits_all = scope.admits_all();
    let in_scope = |id: ChunkId| match table {
        Some(table) => table.place(id).is_some_and(|(path, _)| admits_all || scope.admits(path)),
        None => admits_all,
    };
    let mut fetch = limit.max(1);
    loop {
        let rows = match &terms {
            Some((words, terms)) if admits_all || table.is_some() => words.best_matches(terms, fetch, &in_scope),
            _ => store.best_word_matches(expr, scope, fetch)?,
        };
        let exhausted = rows.len() < fetch;
        let ids: Vec<ChunkId> = rows.iter().map(|r| r.0).collect();
        let places = places(store, &ids, table)?;
        let mut kept: Vec<(f64, &str, usize, ChunkId)> = rows
            .iter()
            .filter_map(|&(id, rank)| places.get(&id).map(|(path, line)| (rank, path.as_str(), *line, id)))
            .filter(|(_, path, _, _)| scope.admits(path))
            .collect();
        if kept.len() >= limit || exhausted {
            kept.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
            return Ok(kept.into_iter().take(limit).map(|(rank, _, _, id)| (id, rank)).collect());
        }
        fetch = fetch.saturating_mul(4);
    }
}

/// File and first line of each of `ids` that has a vector: from the
/// vectors in memory when there are, else from the store.
pub(super) fn places(
    store: &dyn IndexReader,
    ids: &[ChunkId],
    table: Option<&VectorTable>,
) -> Result<HashMap<ChunkId, (String, usize)>, StoreError> {
    match table {
        Some(table) => {
            Ok(ids.iter().filter_map(|&id| table.place(id).map(|(p, l)| (id, (p.to_string(), l)))).collect())
        }
        None => store.places(ids),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn words_alone_match_common_words_when_the_query_has_nothing_else() {
        assert_eq!(match_expression_in("for", SearchMode::Lexical).unwrap(), r#""for""#);
        assert_eq!(match_expression_in("how is it", SearchMode::Lexical).unwrap(), r#""how" OR "is" OR "it""#);
        assert_eq!(match_expression_in("how is it", SearchMode::Hybrid), None, "meaning answers it");
        assert_eq!(match_expression_in("retry the upload", SearchMode::Lexical).unwrap(), r#""retry" OR "upload""#);
        assert_eq!(match_expression_in("x ?! 42", SearchMode::Lexical), None, "nothing of it is indexed");
    }
}
