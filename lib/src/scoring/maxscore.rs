//! Which chunks a word search can leave unsummed, and whether leaving them
//! pays (MaxScore): the query's terms weighed and bounded from what the
//! store counts of each (`TermStats`), the seed that gives a score the
//! results reach, and the terms that cannot carry a chunk to it on their
//! own. Postgres's word search asks this before it sums.

use std::collections::{BTreeMap, HashMap};

use super::bm25;

/// How far a bound or a score computed in Rust may be from the same sum
/// computed by Postgres, relative to the score; a term is left out only
/// when it is short of the mark by more.
const SLACK: f64 = 1e-9;

/// A term of a query as the search weighs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Weighed {
    pub term: String,
    /// The term's IDF times how often the query names it.
    pub weight: f64,
    /// The most the term adds to any chunk's score.
    pub bound: f64,
    /// How many chunks have the term.
    pub chunks: i64,
}

/// What `term_stats` holds of a term: how many chunks have it, the most
/// times one has it and the fewest tokens of one that has it (the last
/// two only ever loosen between rebuilds, which keeps them bounds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TermStats {
    pub chunks: i64,
    pub max_tf: i32,
    pub min_dl: i32,
}

/// The average chunk length FTS5 divides by, from the word index's totals.
pub(crate) fn average_length(rows: i64, tokens: i64) -> f64 {
    (tokens as f64 / rows.max(1) as f64).max(1e-9)
}

/// The query's terms (a term listed twice counts twice) with their weights
/// and bounds, in term order; terms no chunk has are left out.
pub(crate) fn weigh(asked: &[String], stats: &HashMap<String, TermStats>, rows: i64, average: f64) -> Vec<Weighed> {
    let mut times: BTreeMap<&str, f64> = BTreeMap::new();
    for term in asked {
        *times.entry(term.as_str()).or_default() += 1.0;
    }
    let rows = rows.max(1) as f64;
    times
        .into_iter()
        .filter_map(|(term, times)| {
            let s = stats.get(term).filter(|s| s.chunks > 0)?;
            let weight = times * bm25::idf(rows, s.chunks as f64);
            let most = bm25::term_part(f64::from(s.max_tf.max(1)), f64::from(s.min_dl.max(0)), average);
            Some(Weighed { term: term.to_string(), weight, bound: weight * most, chunks: s.chunks })
        })
        .collect()
}

/// What each way of reading postings costs, in units of one posting summed
/// into its chunk's score (a hash table entry per chunk). Measured on
/// Postgres 18 at a million chunks: reading a posting without summing it
/// costs about a third; looking a (term, chunk) pair up in the term
/// table's index about five.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WordCosts {
    pub read: f64,
    pub look_up: f64,
    /// The seed is tried only when it costs less than this share of
    /// summing everything, which is what it costs when it does not help.
    pub seed_share: f64,
}

impl WordCosts {
    pub(crate) const MEASURED: WordCosts = WordCosts { read: 0.3, look_up: 5.0, seed_share: 0.25 };
    /// Narrow whenever the bounds allow, whatever it costs (tests).
    #[cfg(test)]
    pub(crate) const FREE: WordCosts = WordCosts { read: 0.0, look_up: 0.0, seed_share: f64::INFINITY };
}

/// The terms whose chunks a seed is taken from: the weightiest, and the
/// next ones while they have fewer than `limit` chunks between them.
pub(crate) fn seed_terms(terms: &[Weighed], limit: usize) -> Vec<&Weighed> {
    let mut by_bound: Vec<&Weighed> = terms.iter().collect();
    by_bound.sort_by(|a, b| b.bound.total_cmp(&a.bound).then(a.term.cmp(&b.term)));
    let mut chunks = 0;
    let mut seed = Vec::new();
    for term in by_bound {
        if chunks >= limit as i64 {
            break;
        }
        chunks += term.chunks;
        seed.push(term);
    }
    seed
}

/// Whether a seed from `seed` (`seed_terms`) is worth taking: ranking its
/// chunks and looking every term up for the best `limit` of them, against
/// summing every posting of `terms`.
pub(crate) fn seed_pays(terms: &[Weighed], seed: &[&Weighed], limit: usize, costs: &WordCosts) -> bool {
    if terms.len() < 2 {
        return false;
    }
    let every: f64 = terms.iter().map(|t| t.chunks as f64).sum();
    let ranked: f64 = seed.iter().map(|t| t.chunks as f64).sum();
    let ranking = if seed.len() > 1 { ranked } else { ranked * costs.read };
    ranking + (limit * terms.len()) as f64 * costs.look_up < every * costs.seed_share
}

/// How a search is narrowed once `limit` chunks are known to reach a
/// score: the chunks of `summed` are the candidates, those below `floor` on
/// `summed` alone are dropped, and `looked_up` is added to the rest.
#[derive(Debug, PartialEq)]
pub(crate) struct Narrowed<'a> {
    pub summed: Vec<&'a Weighed>,
    pub looked_up: Vec<&'a Weighed>,
    pub floor: f64,
    /// Whether the candidates look their other terms up one by one
    /// (cheaper for few candidates) rather than read all their postings.
    pub one_by_one: bool,
}

/// Leave out of the candidates the terms of least bound whose bounds sum
/// below `reached`; None when not even one can be. What is left costs less
/// than summing everything: the left-out terms' postings are read or
/// looked up, not summed.
pub(crate) fn narrow<'a>(terms: &'a [Weighed], reached: f64, costs: &WordCosts) -> Option<Narrowed<'a>> {
    let slack = reached.abs() * SLACK;
    let mut by_bound: Vec<&Weighed> = terms.iter().collect();
    by_bound.sort_by(|a, b| a.bound.total_cmp(&b.bound).then(a.term.cmp(&b.term)));
    let (mut left_out, mut most) = (0, 0.0);
    while left_out < by_bound.len() && most + by_bound[left_out].bound < reached - slack {
        most += by_bound[left_out].bound;
        left_out += 1;
    }
    // All of them would mean bounds below a score they add up to: wrong
    // bounds, which summing everything does not depend on.
    if left_out == 0 || left_out == by_bound.len() {
        return None;
    }
    let (looked_up, summed) = by_bound.split_at(left_out);
    // Every chunk of `summed` may be a candidate, at worst.
    let candidates: f64 = summed.iter().map(|t| t.chunks as f64).sum();
    let read_all: f64 = looked_up.iter().map(|t| t.chunks as f64).sum::<f64>() * costs.read;
    Some(Narrowed {
        summed: summed.to_vec(),
        looked_up: looked_up.to_vec(),
        floor: reached - most - slack,
        one_by_one: candidates * looked_up.len() as f64 * costs.look_up <= read_all,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(list: &[(&str, i64, i32, i32)]) -> HashMap<String, TermStats> {
        list.iter().map(|&(t, chunks, max_tf, min_dl)| (t.to_string(), TermStats { chunks, max_tf, min_dl })).collect()
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn terms_are_weighed_as_fts5_does_and_bounded_by_their_extremes() {
        let s = stats(&[("spawn", 10, 3, 4), ("task", 40, 5, 2), ("gone", 0, 0, 0)]);
        let w = weigh(&words(&["task", "spawn", "task", "gone", "missing"]), &s, 100, 8.0);
        assert_eq!(w.iter().map(|w| w.term.as_str()).collect::<Vec<_>>(), ["spawn", "task"]);
        assert_eq!(w[0].weight, bm25::idf(100.0, 10.0));
        assert_eq!(w[1].weight, 2.0 * bm25::idf(100.0, 40.0));
        assert_eq!(w[0].bound, w[0].weight * bm25::term_part(3.0, 4.0, 8.0));
        // No chunk with the term scores more than its bound.
        for tf in 1..=5 {
            for dl in 2..50 {
                assert!(w[1].weight * bm25::term_part(f64::from(tf), f64::from(dl), 8.0) <= w[1].bound);
            }
        }
        assert_eq!(average_length(0, 0), 1e-9);
        assert_eq!(average_length(4, 10), 2.5);
    }

    fn weighed(list: &[(&str, f64, i64)]) -> Vec<Weighed> {
        list.iter()
            .map(|&(t, bound, chunks)| Weighed { term: t.to_string(), weight: bound / 2.0, bound, chunks })
            .collect()
    }

    #[test]
    fn terms_whose_bounds_sum_below_the_mark_are_only_looked_up() {
        let w = weighed(&[("a", 1.0, 900), ("b", 2.0, 500), ("c", 4.0, 30)]);
        let free = WordCosts::FREE;
        let n = narrow(&w, 3.5, &free).unwrap();
        assert_eq!((n.looked_up.len(), n.summed.len()), (2, 1));
        assert_eq!((n.looked_up[0].term.as_str(), n.summed[0].term.as_str()), ("a", "c"));
        assert!((n.floor - 0.5).abs() < 1e-8 && n.floor < 0.5);
        let n = narrow(&w, 2.5, &free).unwrap();
        assert_eq!((n.looked_up.len(), n.summed.len()), (1, 2));
        // Below the least bound nothing is left out; at the sum of all the
        // bounds are wrong, and summing everything is safe.
        assert_eq!(narrow(&w, 1.0, &free), None);
        assert_eq!(narrow(&w, 0.5, &free), None);
        assert_eq!(narrow(&w, 8.0, &free), None);
        // A bound short of the mark by rounding alone is not left out.
        assert_eq!(narrow(&w, 1.0 + 1e-12, &free), None);
    }

    #[test]
    fn narrowing_is_chosen_only_where_it_reads_less() {
        let costs = WordCosts::MEASURED;
        // A rare term beside common ones: its few chunks look the others up.
        let w = weighed(&[("common", 1.0, 300_000), ("often", 1.5, 200_000), ("rare", 9.0, 50)]);
        let n = narrow(&w, 5.0, &costs).unwrap();
        assert_eq!(n.summed.iter().map(|t| t.term.as_str()).collect::<Vec<_>>(), ["rare"]);
        assert!(n.one_by_one);
        // Many candidates read the other terms' postings instead.
        let w = weighed(&[("runtim", 1.7, 312_702), ("task", 2.5, 244_416), ("spawn", 4.4, 113_202)]);
        let n = narrow(&w, 7.9, &costs).unwrap();
        assert_eq!((n.summed.len(), n.one_by_one), (1, false));
    }

    #[test]
    fn the_seed_comes_from_the_weightiest_terms_until_they_have_enough_chunks() {
        let w = weighed(&[("a", 1.0, 900), ("b", 2.0, 500), ("c", 4.0, 30)]);
        let names = |s: Vec<&Weighed>| s.iter().map(|w| w.term.clone()).collect::<Vec<_>>();
        assert_eq!(names(seed_terms(&w, 10)), ["c"]);
        assert_eq!(names(seed_terms(&w, 100)), ["c", "b"]);
        assert_eq!(names(seed_terms(&w, 10_000)), ["c", "b", "a"]);
    }

    #[test]
    fn a_seed_is_taken_only_where_summing_everything_costs_much_more() {
        let costs = WordCosts::MEASURED;
        let big = weighed(&[("runtim", 1.7, 312_702), ("task", 2.5, 244_416), ("spawn", 4.4, 113_202)]);
        assert!(seed_pays(&big, &seed_terms(&big, 100), 100, &costs));
        let small = weighed(&[("a", 1.0, 3_000), ("b", 2.0, 1_500), ("c", 4.0, 300)]);
        assert!(!seed_pays(&small, &seed_terms(&small, 100), 100, &costs));
        assert!(seed_pays(&small, &seed_terms(&small, 100), 100, &WordCosts::FREE));
        assert!(!seed_pays(&small[..1], &seed_terms(&small[..1], 100), 100, &WordCosts::FREE));
    }
}
