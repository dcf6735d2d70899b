//! FTS5's `bm25()` term by term, defined once for every ranking of words
//! done outside FTS5: the word table a server holds, Postgres's search and
//! the bounds that let Postgres skip chunks that cannot make the cut
//! (`maxscore`); and BM25 on a bounded scale, the score of a word-only hit.

/// FTS5's `bm25()` constants.
pub(crate) const K1: f64 = 1.2;
pub(crate) const B: f64 = 0.75;

/// FTS5's IDF of a term found in `hits` of `rows` chunks: never 0 or below,
/// so that a term in most chunks still counts a little.
pub(crate) fn idf(rows: f64, hits: f64) -> f64 {
    let idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
    if idf <= 0.0 {
        1e-6
    } else {
        idf
    }
}

/// What a term found `tf` times in a chunk of `length` tokens adds to the
/// chunk's score, per unit of the term's IDF, the average chunk being
/// `average` tokens long. It grows with `tf` and shrinks with `length`,
/// which is what makes a term's largest count and shortest chunk a bound.
pub(crate) fn term_part(tf: f64, length: f64, average: f64) -> f64 {
    (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * length / average))
}

/// BM25 (as FTS5 reports it: more negative is better) mapped onto 0..1, so
/// that lexical-only results have a score and a threshold means something.
pub(crate) fn bounded(bm25: f64) -> f32 {
    let x = (-bm25).max(0.0);
    (x / (1.0 + x)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_scores_are_ordered_and_below_one() {
        assert!(bounded(-10.0) > bounded(-1.0));
        assert!(bounded(-1000.0) < 1.0);
        assert_eq!(bounded(0.0), 0.0);
    }

    #[test]
    fn the_part_grows_with_the_count_and_shrinks_with_the_length() {
        assert!(term_part(2.0, 10.0, 10.0) > term_part(1.0, 10.0, 10.0));
        assert!(term_part(1.0, 5.0, 10.0) > term_part(1.0, 10.0, 10.0));
        // At the average length, one occurrence adds exactly one IDF.
        assert_eq!(term_part(1.0, 10.0, 10.0), 1.0);
        assert!(term_part(1e9, 1.0, 10.0) < K1 + 1.0);
    }

    #[test]
    fn a_term_in_most_chunks_still_counts_a_little() {
        assert_eq!(idf(10.0, 9.0), 1e-6);
        assert!((idf(100.0, 1.0) - (99.5f64 / 1.5).ln()).abs() < 1e-12);
    }
}
