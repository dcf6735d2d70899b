//! The word side of a Postgres index: each chunk's terms exactly as FTS5
//! makes them for the SQLite backend (its own tokenizer, run in a private
//! in-memory SQLite database), and BM25 computed as FTS5's `bm25()` does,
//! so that a word search ranks alike on both backends.

use std::collections::BTreeMap;

use crate::store::StoreError;

/// FTS5's tokenizer, on a table that only ever holds the texts being split.
pub(super) struct Tokenizer {
    conn: rusqlite::Connection,
}

/// One text's terms with how often each occurs, and how many tokens it has.
#[derive(Debug, Default, PartialEq)]
pub(super) struct TermCounts {
    pub(super) terms: BTreeMap<String, i32>,
    pub(super) tokens: i32,
}

impl Tokenizer {
    pub(super) fn new() -> Result<Tokenizer, StoreError> {
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
    pub(super) fn count(&self, texts: &[&str]) -> Result<Vec<TermCounts>, StoreError> {
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
    /// gives each of them, where FTS5 would want them side by side.
    pub(super) fn query_terms(&self, expr: &str) -> Result<Vec<String>, StoreError> {
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

/// The chunks that best match the terms `$1` (a term listed twice counts
/// twice), at most `$2`, by FTS5's BM25 (k1 = 1.2, b = 0.75; an IDF at or
/// below 0 counts as 1e-6; more negative is better), ties by chunk.
pub(super) const BEST_MATCHES: &str = "
WITH asked AS (SELECT term, count(*)::float8 AS times FROM unnest($1::text[]) AS term GROUP BY term),
totals AS (
    SELECT greatest(coalesce((SELECT value::float8 FROM meta WHERE key = 'word_rows'), 0), 1) AS n,
           coalesce((SELECT value::float8 FROM meta WHERE key = 'word_tokens'), 0) AS tokens
),
weights AS (
    SELECT a.term, a.times * CASE WHEN x.idf <= 0 THEN 1e-6 ELSE x.idf END AS idf,
           greatest(t.tokens / t.n, 1e-9) AS avgdl
    FROM asked a CROSS JOIN totals t
    CROSS JOIN LATERAL (SELECT count(*)::float8 AS hits FROM chunk_terms c WHERE c.term = a.term) h
    CROSS JOIN LATERAL (SELECT ln((t.n - h.hits + 0.5) / (h.hits + 0.5)) AS idf) x
    WHERE h.hits > 0
)
SELECT c.chunk_id, -sum(w.idf * (c.tf * 2.2) / (c.tf + 1.2 * (0.25 + 0.75 * c.dl / w.avgdl))) AS score
FROM weights w JOIN chunk_terms c ON c.term = w.term
GROUP BY c.chunk_id
ORDER BY score, c.chunk_id
LIMIT $2";

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
}
