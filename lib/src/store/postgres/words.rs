//! BM25 over a Postgres index's word table, computed as FTS5's `bm25()`
//! does, so that a word search ranks alike on both backends; the terms
//! themselves come from FTS5's own tokenizer (`store::word_terms`).

/// The chunks that best match the terms `$1` (a term listed twice counts
/// twice), at most `$2`, by FTS5's BM25 (k1 = 1.2, b = 0.75; an IDF at or
/// below 0 counts as 1e-6; more negative is better), ties by chunk. The
/// arithmetic is in doubles, in the order of FTS5's `fts5Bm25Function`:
/// numeric literals would make Postgres compute in `numeric`, slower
/// (a third of the time of a million-chunk search) and rounded otherwise.
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
SELECT c.chunk_id,
       -sum(w.idf * ((c.tf::float8 * (1.2::float8 + 1.0::float8))
                     / (c.tf::float8 + 1.2::float8 * (1.0::float8 - 0.75::float8 + 0.75::float8 * c.dl::float8 / w.avgdl))))
       AS score
FROM weights w JOIN chunk_terms c ON c.term = w.term
GROUP BY c.chunk_id
ORDER BY score, c.chunk_id
LIMIT $2";
