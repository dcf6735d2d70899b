//! The word index's terms as FTS5 makes them: its tokenizer, run on a
//! private in-memory SQLite table, for the backends and searches that hold
//! words elsewhere (Postgres's tables, a searcher's memory) and must split
//! them exactly as SQLite's index does.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::StoreError;

/// FTS5's tokenizer, on a table that only ever holds the texts being split.
pub(crate) struct Tokenizer {
    conn: rusqlite::Connection,
}

/// One text's terms with how often each occurs, and how many tokens it has.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct TermCounts {
    pub(crate) terms: BTreeMap<String, i32>,
    pub(crate) tokens: i32,
}

impl Tokenizer {
    pub(crate) fn new() -> Result<Tokenizer, StoreError> {
        let conn = rusqlite::Connection::open_in_memory()?;
        conn.execute_batch(concat!(
            "CREATE VIRTUAL TABLE split USING fts5(terms, tokenize = '",
            word_tokenizer!(),
            "');
             CREATE VIRTUAL TABLE temp.split_terms USING fts5vocab(main, split, instance);"
        ))?;
        Ok(Tokenizer { conn })
    }

    /// The terms of each of `texts`, in order.
    pub(crate) fn count(&self, texts: &[&str]) -> Result<Vec<TermCounts>, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut add = tx.prepare_cached("INSERT INTO split (rowid, terms) VALUES (?1, ?2)")?;
            for (i, text) in texts.iter().enumerate() {
                add.execute(rusqlite::params![i as i64, text])?;
            }
        }
        let mut out: Vec<TermCounts> = texts.iter().map(|_| TermCounts::default()).collect();
        {
            let mut terms = tx.prepare_cached("SELECT doc, term, count(*) FROM split_terms GROUP BY doc, term")?;
            let mut rows = terms.query([])?;
            while let Some(row) = rows.next()? {
                let (doc, term, n): (i64, String, i32) = (row.get(0)?, row.get(1)?, row.get(2)?);
                let counts = &mut out[doc as usize];
                counts.tokens += n;
                counts.terms.insert(term, n);
            }
        }
        tx.execute("DELETE FROM split", [])?;
        tx.commit()?;
        Ok(out)
    }

    /// The terms a full-text expression (`search::lexical::match_expression`,
    /// quoted terms joined by OR) asks for, one per quoted term as FTS5
    /// counts them: a term asked for twice weighs twice. A quoted term that
    /// splits into several (rare: the expression's terms are single words)
    /// gives each of them, where FTS5 would want them side by side. (The
    /// shared store's word search; its tests here run in every build.)
    #[cfg_attr(not(feature = "shared-store"), allow(dead_code))]
    pub(crate) fn query_terms(&self, expr: &str) -> Result<Vec<String>, StoreError> {
        let quoted = quoted_terms(expr);
        let split = self.count(&quoted.iter().map(String::as_str).collect::<Vec<_>>())?;
        Ok(split.into_iter().flat_map(|c| c.terms.into_keys()).collect())
    }
}

/// The quoted strings of an FTS5 expression, a doubled quote standing for one.
fn quoted_terms(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut term = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    term.push('"');
                }
                '"' => break,
                c => term.push(c),
            }
        }
        out.push(term);
    }
    out
}

/// The term each quoted word of a full-text expression asks for, in order
/// (a word asked for twice weighs twice, as FTS5 counts it), with a
/// tokenizer kept per thread; None when a word splits into more than one
/// term or none, which FTS5 would match as a phrase.
pub fn expression_terms(expr: &str) -> Result<Option<Vec<String>>, StoreError> {
    let quoted = quoted_terms(expr);
    let split = with_tokenizer(|t| t.count(&quoted.iter().map(String::as_str).collect::<Vec<_>>()))?;
    Ok(split
        .into_iter()
        .map(|c| match (c.tokens, c.terms.into_keys().next()) {
            (1, Some(term)) => Some(term),
            _ => None,
        })
        .collect())
}

/// The terms of each of `texts` as the word index holds them, each once:
/// what a search's explanation checks a hit's words against
/// (`search::matched_words`).
pub fn text_terms(texts: &[&str]) -> Result<Vec<Vec<String>>, StoreError> {
    let split = with_tokenizer(|t| t.count(texts))?;
    Ok(split.into_iter().map(|c| c.terms.into_keys().collect()).collect())
}

/// `f` with this thread's tokenizer, made on first use.
fn with_tokenizer<T>(f: impl FnOnce(&Tokenizer) -> Result<T, StoreError>) -> Result<T, StoreError> {
    thread_local! {
        static TOKENIZER: RefCell<Option<Tokenizer>> = const { RefCell::new(None) };
    }
    TOKENIZER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let tokenizer = match slot.as_mut() {
            Some(t) => t,
            None => slot.insert(Tokenizer::new()?),
        };
        f(tokenizer)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_split_and_stemmed_as_fts5_does() {
        let tokenizer = Tokenizer::new().unwrap();
        let counts = tokenizer.count(&["retry failed uploads retrying", "", "Café naïve"]).unwrap();
        assert_eq!(counts[0].tokens, 4);
        assert_eq!(
            counts[0].terms.iter().map(|(t, n)| (t.as_str(), *n)).collect::<Vec<_>>(),
            [("fail", 1), ("retri", 2), ("upload", 1)]
        );
        assert_eq!(counts[1], TermCounts::default());
        assert_eq!(counts[2].terms.keys().collect::<Vec<_>>(), ["cafe", "naiv"]);
        // The table is emptied after every call.
        assert_eq!(tokenizer.count(&["upload"]).unwrap()[0].tokens, 1);
    }

    #[test]
    fn an_expression_asks_for_its_quoted_terms_stemmed() {
        let tokenizer = Tokenizer::new().unwrap();
        assert_eq!(tokenizer.query_terms(r#""retry" OR "failed" OR "fails""#).unwrap(), ["retri", "fail", "fail"]);
        assert_eq!(quoted_terms(r#""a""b" OR "c""#), ["a\"b", "c"]);
        assert!(tokenizer.query_terms("").unwrap().is_empty());
    }

    #[test]
    fn an_expression_of_single_words_has_one_term_each() {
        let terms = expression_terms(r#""retry" OR "failed" OR "fails""#).unwrap();
        assert_eq!(terms.unwrap(), ["retri", "fail", "fail"]);
        // A quoted word FTS5 splits is a phrase: not single terms.
        assert_eq!(expression_terms(r#""retry" OR "a.b""#).unwrap(), None);
        assert_eq!(expression_terms("").unwrap(), Some(Vec::new()));
    }
}
