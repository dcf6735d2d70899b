//! What a Postgres index holds, counted, and the damage a bug could leave
//! in it (a crash cannot: every change is one transaction).

use std::collections::HashMap;

use super::PgIndex;
use crate::store::name_counts::NameCounts;
use crate::store::{IndexReader, IndexStats, StoreError};

/// The meta key of the damage a reader found (`--verify`), left for the
/// next writer, as SQLite's `index.db-damaged` is: a run whose files are
/// unchanged reads nothing that would find it, and `--verify` said "vg-index
/// rebuilds it" of damage no run rebuilt (audit 228).
pub(super) const DAMAGE_MARK: &str = "damage_found";

impl PgIndex {
    /// Leave `cause` in the index's meta for the next writer. Best effort:
    /// a role that may only read still reports the damage.
    pub(super) fn leave_damage_mark(&self, cause: &str) {
        let sql = "INSERT INTO meta VALUES ($1, $2) ON CONFLICT (key) DO NOTHING";
        let _ = self.rows(sql, &[&DAMAGE_MARK, &cause]);
    }

    /// The damage a whole check finds when a reader left a mark of it (an
    /// error to rebuild from); a check that finds none drops the mark (what
    /// was read has been rewritten since). Asked of the role that owns the
    /// index only: a role the README lets write beside it may not drop the
    /// owner's schema, and failed every run and search once a --verify
    /// marked damage (review 230); it goes on as before, the mark kept for
    /// the owner's next run.
    pub(super) fn damage_if_marked(&self) -> Result<Option<String>, StoreError> {
        if self.meta_value(DAMAGE_MARK)?.is_none() || self.owner_unless_ours()?.is_some() {
            return Ok(None);
        }
        let (_, problems) = self.check()?;
        if problems.is_empty() {
            self.rows("DELETE FROM meta WHERE key = $1", &[&DAMAGE_MARK])?;
        }
        Ok(problems.into_iter().next())
    }

    /// The spec's IndexStats; db_size_bytes counts the project's tables and their indexes.
    pub(super) fn counts(&self) -> Result<IndexStats, StoreError> {
        let bare = self.schema.trim_matches('"');
        let row = self
            .row(
                "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks),
                        (SELECT count(*) FROM chunks WHERE embedding IS NULL AND static_embedding IS NULL),
                        (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
                         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'),
                        (SELECT count(*) FROM chunks WHERE embedding IS NULL AND static_embedding IS NOT NULL)",
                &[&bare],
            )?
            .expect("one row");
        let n = |i: usize| row.get::<_, i64>(i).max(0) as u64;
        Ok(IndexStats { files: n(0), chunks: n(1), holes: n(2), pending: n(4), db_size_bytes: n(3) })
    }

    /// Words without their chunk's length, vectors of the wrong size,
    /// impossible line ranges, and counters out of step with the rows.
    pub(super) fn check(&self) -> Result<(IndexStats, Vec<String>), StoreError> {
        // The size the index recorded (a remote model's may differ), as SQLite's check takes it.
        let dims = self.dims()?.unwrap_or(crate::embed::DIMS) as i32;
        // Static vectors are the shipped table's size, whatever the model's.
        let static_dims = crate::embed::DIMS as i32;
        let mut problems = Vec::new();
        // Each query with the size `$1` stands for, where it names one.
        for (sql, what, size) in [
            (
                "SELECT count(*) FROM chunks c WHERE c.word_count <> coalesce(
                     (SELECT sum(t.tf) FROM chunk_terms t WHERE t.chunk_id = c.id), 0)",
                "chunks have word entries that do not add up to their length",
                None,
            ),
            (
                "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL AND vector_dims(embedding) <> $1",
                "vectors have the wrong size",
                Some(dims),
            ),
            (
                // pgvector refuses NaN and infinities, so a zero vector is
                // the one without an angle; the model never gives one, and
                // a search passes it over as near nothing.
                "SELECT count(*) FROM chunks
                 WHERE embedding IS NOT NULL AND vector_dims(embedding) = $1 AND vector_norm(embedding) = 0",
                "vectors are zero or not finite",
                Some(dims),
            ),
            (
                // A search compares every static vector with the question's:
                // one of another size fails each search.
                "SELECT count(*) FROM chunks WHERE static_embedding IS NOT NULL AND vector_dims(static_embedding) <> $1",
                "static vectors have the wrong size",
                Some(static_dims),
            ),
            (
                "SELECT count(*) FROM chunks WHERE start_line < 1 OR end_line < start_line",
                "chunks have impossible line ranges",
                None,
            ),
        ] {
            let row = match &size {
                Some(size) => self.row(sql, &[size])?,
                None => self.row(sql, &[])?,
            };
            let n: i64 = row.map_or(0, |r| r.get(0));
            if n > 0 {
                problems.push(format!("{n} {what}"));
            }
        }
        let stats = self.counts()?;
        let words = self
            .row("SELECT count(*), coalesce(sum(word_count), 0)::bigint FROM chunks", &[])?
            .map_or((0, 0), |r| (r.get::<_, i64>(0), r.get::<_, i64>(1)));
        if words != (self.meta_count("word_rows")?, self.meta_count("word_tokens")?) {
            problems.push("the word index's totals do not match the chunks".into());
        }
        if !self.term_stats_agree()? {
            problems.push("the word terms' counts do not match the word index".into());
        }
        if !self.name_counts_agree()? {
            problems.push("the name counts do not match the chunks' names".into());
        }
        if stats.files > 0 && self.meta()?.is_none() {
            problems.push("the index holds files but does not say what built it".into());
        }
        let paths: Vec<String> = self.rows("SELECT path FROM files", &[])?.iter().map(|r| r.get(0)).collect();
        problems.extend(crate::store::parts::stored_paths_problem(paths.iter().map(String::as_str)));
        Ok((stats, problems))
    }

    /// Whether `name_terms` and meta 'named_chunks' count what the chunks hold.
    fn name_counts_agree(&self) -> Result<bool, StoreError> {
        let mut expected = NameCounts::default();
        for row in self.rows("SELECT names FROM chunks WHERE names <> ''", &[])? {
            expected.count(row.get(0), 1);
        }
        let stored: HashMap<String, i64> =
            self.rows("SELECT term, chunks FROM name_terms", &[])?.iter().map(|r| (r.get(0), r.get(1))).collect();
        Ok(stored == expected.terms && self.named_chunks()? == expected.named_chunks as u64)
    }
}
