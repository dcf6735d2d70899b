//! Each word term's chunk count and bounds (`term_stats`), kept beside the
//! word index so that a search need not count a term's chunks (50 ms for
//! three common terms at a million) and can bound what a term adds
//! (`words`). Meta 'term_stats_at' names the word generation they
//! describe: a writer that does not keep them (an older vecgrep) leaves them
//! behind, searches then count as they go, and the end of the next run
//! rebuilds them.

use std::collections::HashMap;

use postgres::Transaction;

use super::PgIndex;
use crate::store::StoreError;

/// The table, made with the schema or added to an index made before it.
pub(super) const TABLE: &str = "
CREATE TABLE IF NOT EXISTS term_stats (
    term text PRIMARY KEY,
    chunks bigint NOT NULL,
    max_tf integer NOT NULL,
    min_dl integer NOT NULL
)";

/// The word generation (`IndexReader::word_generation`) of the state a
/// statement sees.
pub(super) const WORD_GENERATION: &str = "
    coalesce((SELECT value::bigint FROM meta WHERE key = 'generation'), 0)
  - coalesce((SELECT value::bigint FROM meta WHERE key = 'wordless_changes'), 0)";

/// Whether the stats describe the state a statement sees: true, or null
/// when they were never made.
fn current_sql() -> String {
    format!("(SELECT value FROM meta WHERE key = 'term_stats_at') = ({WORD_GENERATION})::text")
}

/// Whether the stats describe the state `tx` sees.
pub(super) fn current(tx: &mut Transaction<'_>) -> Result<bool, postgres::Error> {
    let sql = format!("SELECT {}", current_sql());
    Ok(tx.query_one(&sql, &[])?.get::<_, Option<bool>>(0).unwrap_or(false))
}

/// Record that the stats describe the state `tx` is making.
pub(super) fn mark_current(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    let sql = format!(
        "INSERT INTO meta VALUES ('term_stats_at', ({WORD_GENERATION})::text)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    );
    tx.execute(&sql, &[])?;
    Ok(())
}

/// What one write batch changes in the stats: chunks gained (or lost) per
/// term, and the largest count and shortest chunk among those gained.
#[derive(Default)]
pub(super) struct TermChanges {
    terms: HashMap<String, (i64, i32, i32)>,
}

impl TermChanges {
    /// A chunk of `length` tokens that has `term` `tf` times was added.
    pub(super) fn add(&mut self, term: &str, tf: i32, length: i32) {
        let entry = self.entry(term.to_string());
        *entry = (entry.0 + 1, entry.1.max(tf), entry.2.min(length));
    }

    /// A term's change so far: none, with bounds that widen nothing.
    fn entry(&mut self, term: String) -> &mut (i64, i32, i32) {
        self.terms.entry(term).or_insert((0, 0, i32::MAX))
    }

    /// Uncount the terms of the chunks of the files `filter` selects (on
    /// `files f`, bound to `value`), before they are deleted. The bounds
    /// stay: looser than need be, until a rebuild.
    pub(super) fn forget(
        &mut self,
        tx: &mut Transaction<'_>,
        filter: &str,
        value: &(dyn postgres::types::ToSql + Sync),
    ) -> Result<(), postgres::Error> {
        let sql = format!(
            "SELECT t.term, count(*) FROM chunk_terms t JOIN chunks c ON c.id = t.chunk_id
             JOIN files f ON f.id = c.file_id WHERE {filter} GROUP BY t.term"
        );
        for row in tx.query(&sql, &[value])? {
            self.entry(row.get(0)).0 -= row.get::<_, i64>(1);
        }
        Ok(())
    }

    /// Apply the changes; the batch's generation is counted already.
    pub(super) fn write(self, tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
        let (mut terms, mut chunks, mut max_tfs, mut min_dls) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (term, &(n, max_tf, min_dl)) in &self.terms {
            terms.push(term.as_str());
            chunks.push(n);
            max_tfs.push(max_tf);
            min_dls.push(min_dl);
        }
        if !terms.is_empty() {
            tx.execute(
                "INSERT INTO term_stats AS s
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[])
             ON CONFLICT (term) DO UPDATE SET chunks = s.chunks + excluded.chunks,
                 max_tf = greatest(s.max_tf, excluded.max_tf), min_dl = least(s.min_dl, excluded.min_dl)",
                &[&terms, &chunks, &max_tfs, &min_dls],
            )?;
        }
        if chunks.iter().any(|&n| n < 0) {
            tx.execute("DELETE FROM term_stats WHERE chunks <= 0", &[])?;
        }
        mark_current(tx)
    }
}

/// Counted anew from the word index, with the tightest bounds.
const REBUILD: &str = "
DELETE FROM term_stats;
INSERT INTO term_stats SELECT term, count(*), max(tf), min(dl) FROM chunk_terms GROUP BY term;";

impl PgIndex {
    /// Rebuild the stats when they do not describe the index (3.6 s at a
    /// million chunks); called at the end of every run, under the writers' lock.
    pub(super) fn refresh_term_stats(&self) -> Result<(), StoreError> {
        self.in_transaction(|tx| {
            if !current(tx)? {
                tx.batch_execute(REBUILD)?;
                mark_current(tx)?;
            }
            Ok(())
        })
    }

    /// The word index's rows and tokens, when the stats describe the state
    /// this connection sees; None when they do not (or were never made).
    pub(super) fn term_stats_totals(&self) -> Result<Option<(i64, i64)>, StoreError> {
        let row = self.row(
            &format!(
                "SELECT {},
                        coalesce((SELECT value::bigint FROM meta WHERE key = 'word_rows'), 0),
                        coalesce((SELECT value::bigint FROM meta WHERE key = 'word_tokens'), 0)",
                current_sql()
            ),
            &[],
        )?;
        Ok(row.filter(|r| r.get::<_, Option<bool>>(0) == Some(true)).map(|r| (r.get(1), r.get(2))))
    }

    /// Whether stats said to be current count what the word index holds,
    /// with bounds no chunk exceeds.
    pub(super) fn term_stats_agree(&self) -> Result<bool, StoreError> {
        if self.term_stats_totals()?.is_none() {
            return Ok(true);
        }
        let wrong = self.row(
            "SELECT count(*) FROM (SELECT term, count(*) AS chunks, max(tf) AS max_tf, min(dl) AS min_dl
                                   FROM chunk_terms GROUP BY term) t
             FULL JOIN term_stats s ON s.term = t.term
             WHERE t.term IS NULL OR s.term IS NULL OR s.chunks <> t.chunks
                OR s.max_tf < t.max_tf OR s.min_dl > t.min_dl",
            &[],
        )?;
        Ok(wrong.is_some_and(|r| r.get::<_, i64>(0) == 0))
    }
}
