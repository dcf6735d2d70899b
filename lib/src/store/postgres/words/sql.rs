//! The statements of a Postgres word search. In each, $1 is the average
//! chunk length and $2, $3 the terms with their weights (`w`); the rest of
//! the parameters are the statement's own.

use crate::scoring::bm25;

/// What `c` (a row of chunk_terms) adds per unit of weight, the average
/// length being $1: `bm25::term_part` in doubles, in its order (numeric
/// literals would make Postgres compute in `numeric`: slower, and rounded
/// otherwise).
fn part() -> String {
    part_over("$1::float8")
}

/// `part` with the average length `average` (an SQL expression).
fn part_over(average: &str) -> String {
    let (k1, b) = (bm25::K1, bm25::B);
    format!(
        "((c.tf::float8 * ({k1}::float8 + 1.0::float8)) / (c.tf::float8 + {k1}::float8 \
         * (1.0::float8 - {b}::float8 + {b}::float8 * c.dl::float8 / {average})))"
    )
}

/// `score` (a float8 expression) rounded to 12 significant digits: Postgres
/// sums a chunk's terms in the order its rows arrive, which a plan may vary
/// from chunk to chunk, so two chunks of the same text scored a last bit
/// apart and a cut `WITH TIES` kept one (review 215). The round is to
/// digits, not to a fixed step: a term in most chunks weighs 1e-6, and a
/// billionth's step made chunks it tells apart equal (review 216). SQLite's
/// sums go in the query's order and tie exactly.
fn settled(score: &str) -> String {
    let step = format!("power(10::float8, floor(log(abs({score}))) - 11)");
    format!("(CASE WHEN {score} = 0 THEN 0::float8 ELSE round(({score}) / {step}) * {step} END)")
}

const WEIGHTS: &str = "w AS (SELECT * FROM unnest($2::text[], $3::float8[]) AS w(term, weight))";

/// The postings of the term of the row `of` (a table with a `term`), as `c`.
fn postings(of: &str) -> String {
    format!("CROSS JOIN LATERAL (SELECT c.chunk_id, c.tf, c.dl FROM chunk_terms c WHERE c.term = {of}.term) c")
}

/// The least full score of the seed and how many chunks it has: the $5
/// chunks where the terms $4 (of $2) add most, ranked by those alone
/// (`grouped` when they are several, a chunk having more than one).
pub(super) fn seed(grouped: bool) -> String {
    let (part, postings) = (part(), postings("w"));
    let order = if grouped {
        format!("GROUP BY c.chunk_id ORDER BY sum(w.weight * {part}) DESC")
    } else {
        format!("ORDER BY w.weight * {part} DESC")
    };
    format!(
        "WITH {WEIGHTS},
         seed AS (SELECT c.chunk_id FROM w {postings} WHERE w.term = ANY($4::text[])
                  {order}, c.chunk_id LIMIT $5)
         SELECT min(p.score), count(*) FROM seed s CROSS JOIN LATERAL (
             SELECT sum(w.weight * {part}) AS score
             FROM w JOIN chunk_terms c ON c.term = w.term AND c.chunk_id = s.chunk_id) p"
    )
}

/// The best $4 chunks by every posting of the terms, and every other one
/// as good as the last of them (as `store::keep_best_with_ties`: a cut by
/// chunk id kept one of two equal matches by when each was indexed): chunk
/// and score (more negative is better), in no order; `scoped`: of the
/// files $5 alone. `WITH TIES` needs Postgres 13, as pgvector 0.8 does.
pub(super) fn every_posting(scoped: bool) -> String {
    let (part, postings) = (part(), postings("w"));
    let inside = if scoped { inside(5) } else { String::new() };
    let score = settled(&format!("-sum(w.weight * {part})"));
    format!(
        "WITH {WEIGHTS}
         SELECT c.chunk_id, {score} AS score FROM w {postings} {inside}
         GROUP BY c.chunk_id ORDER BY score FETCH FIRST $4 ROWS WITH TIES"
    )
}

/// As `every_posting` of the files $5, each of their chunks looking its
/// terms up: for a scope with few chunks beside the terms' postings.
pub(super) fn each_chunk_in_scope() -> String {
    let part = part();
    let score = settled("-p.score");
    format!(
        "WITH {WEIGHTS}
         SELECT ch.id, {score} AS score FROM chunks ch CROSS JOIN LATERAL (
             SELECT sum(w.weight * {part}) AS score
             FROM w JOIN chunk_terms c ON c.term = w.term AND c.chunk_id = ch.id) p
         WHERE ch.file_id = ANY($5::bigint[]) AND p.score IS NOT NULL
         ORDER BY score FETCH FIRST $4 ROWS WITH TIES"
    )
}

/// Keep the postings `c` of the chunks of the files `$first`.
fn inside(first: usize) -> String {
    format!("WHERE c.chunk_id IN (SELECT ch.id FROM chunks ch WHERE ch.file_id = ANY(${first}::bigint[]))")
}

/// The best $7 chunks as `every_posting` ranks and cuts them, from the candidates:
/// chunks of the terms $4 (weights $5) whose score from those reaches $6,
/// the terms $2 added to it (`one_by_one`: looked up for each candidate;
/// else their postings read and kept for the candidates).
pub(super) fn narrowed(many_summed: bool, one_by_one: bool) -> String {
    let part = part();
    let from_summed = postings("s");
    let kept = if many_summed {
        format!(
            "SELECT c.chunk_id, sum(s.weight * {part}) AS partial FROM s {from_summed}
             GROUP BY c.chunk_id HAVING sum(s.weight * {part}) >= $6::float8"
        )
    } else {
        format!(
            "SELECT * FROM (SELECT c.chunk_id, s.weight * {part} AS partial FROM s {from_summed}) t
             WHERE partial >= $6::float8"
        )
    };
    let (rest, joined) = if one_by_one {
        (
            String::new(),
            format!(
                "kept k CROSS JOIN LATERAL (SELECT sum(w.weight * {part}) AS rest
                     FROM w JOIN chunk_terms c ON c.term = w.term AND c.chunk_id = k.chunk_id) r"
            ),
        )
    } else {
        (
            format!(
                ", rest AS (SELECT c.chunk_id, sum(w.weight * {part}) AS rest FROM w {}
                            WHERE c.chunk_id IN (SELECT chunk_id FROM kept) GROUP BY c.chunk_id)",
                postings("w")
            ),
            "kept k LEFT JOIN rest r ON r.chunk_id = k.chunk_id".to_string(),
        )
    };
    let score = settled("-(k.partial + coalesce(r.rest, 0::float8))");
    format!(
        "WITH {WEIGHTS},
         s AS (SELECT * FROM unnest($4::text[], $5::float8[]) AS s(term, weight)),
         kept AS ({kept}){rest}
         SELECT k.chunk_id, {score} AS score FROM {joined}
         ORDER BY score FETCH FIRST $7 ROWS WITH TIES"
    )
}

/// The chunks that best match the terms `$1` (a term listed twice counts
/// twice), the best `$2` with their ties, counting each term's chunks as it goes: for an
/// index whose `term_stats` are behind it (left so by an older vecgrep);
/// `scoped`: of the files $3 alone.
pub(super) fn counting_as_it_goes(scoped: bool) -> String {
    let part = part_over("w.avgdl");
    let inside = if scoped { inside(3) } else { String::new() };
    let score = settled(&format!("-sum(w.idf * {part})"));
    format!(
        "WITH asked AS (SELECT term, count(*)::float8 AS times FROM unnest($1::text[]) AS term GROUP BY term),
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
         SELECT c.chunk_id, {score} AS score
         FROM weights w JOIN chunk_terms c ON c.term = w.term {inside}
         GROUP BY c.chunk_id ORDER BY score FETCH FIRST $2 ROWS WITH TIES"
    )
}
