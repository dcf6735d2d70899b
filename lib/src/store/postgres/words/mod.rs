//! Word search over a Postgres index: BM25 computed as FTS5's `bm25()`
//! does (`scoring::bm25`), over each chunk's terms, which FTS5's own
//! tokenizer made (`store::word_terms`), so that both backends rank alike.
//!
//! Summing every posting of a query's terms costs half a second at a
//! million chunks, and most of those chunks cannot reach the best hundred.
//! Each term's chunk count and bounds (`term_stats`) give the most it adds
//! to any chunk. When it pays (`scoring::maxscore`), a search first scores the
//! chunks where its weightiest terms count most (the seed): the least of
//! their full scores is one the results reach. Terms whose bounds together
//! stay below it cannot carry a chunk that has none of the other terms that
//! far, so only the chunks of the other terms are candidates, and the
//! former terms are added to those alone (MaxScore). The results are those
//! of summing everything.

mod sql;

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::Row;

use super::scope::ScopeParams;
use super::PgIndex;
pub(super) use crate::scoring::maxscore::WordCosts;
use crate::scoring::maxscore::{self, narrow, seed_pays, seed_terms, weigh, TermStats, Weighed};
use crate::store::{ChunkId, Scope, StoreError};

/// A query's terms as statements take them: names and weights.
struct Terms<'a> {
    names: Vec<&'a str>,
    weights: Vec<f64>,
}

impl<'a> Terms<'a> {
    fn of(terms: &[&'a Weighed]) -> Terms<'a> {
        Terms {
            names: terms.iter().map(|t| t.term.as_str()).collect(),
            weights: terms.iter().map(|t| t.weight).collect(),
        }
    }
}

/// How a word search read the postings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Plan {
    /// Counting each term's chunks as it went (`term_stats` behind).
    Counting,
    /// Every posting summed.
    Every,
    /// Narrowed to the chunks of some terms (`many`: more than one), the
    /// others looked up for each (`one_by_one`) or read for all.
    Narrowed { many: bool, one_by_one: bool },
    /// In a scope narrower than the root: each chunk in scope looking its
    /// terms up (`one_by_one`), or every posting kept if in scope.
    Scoped { one_by_one: bool },
}

impl PgIndex {
    /// The `limit` chunks in `scope` that best match `terms` (a term listed
    /// twice counts twice) by FTS5's BM25 (more negative is better), ties
    /// by chunk, from one state of the index.
    pub(super) fn best_matches(
        &self,
        terms: &[String],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ChunkId, f64)>, StoreError> {
        Ok(self.in_one_state(|| self.best_matches_by_plan(terms, &ScopeParams::of(scope), limit))?.0)
    }

    fn best_matches_by_plan(
        &self,
        terms: &[String],
        scope: &ScopeParams,
        limit: usize,
    ) -> Result<(Vec<(ChunkId, f64)>, Plan), StoreError> {
        let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
        let inside = if scope.admits_all() { None } else { Some(self.files_in(scope)?) };
        let (rows, plan) = match (self.weighed(terms)?, &inside) {
            (None, _) => {
                let mut params: Vec<&(dyn ToSql + Sync)> = vec![&terms, &limit_sql];
                params.extend(inside.as_ref().map(|(files, _)| files as &(dyn ToSql + Sync)));
                (self.rows(&sql::counting_as_it_goes(inside.is_some()), &params)?, Plan::Counting)
            }
            (Some((weighed, average)), Some((files, chunks))) => {
                self.matches_in_files(&weighed, average, files, *chunks, limit_sql)?
            }
            (Some((weighed, average)), None) => self.matches_in_index(&weighed, average, limit)?,
        };
        let mut matches: Vec<(ChunkId, f64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        matches.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        Ok((matches, plan))
    }

    /// The best matches in `files` (with `chunks` between them). The best
    /// of the whole index say nothing of the best in a directory: no seed,
    /// no narrowing.
    fn matches_in_files(
        &self,
        weighed: &[Weighed],
        average: f64,
        files: &[i64],
        chunks: i64,
        limit: i64,
    ) -> Result<(Vec<Row>, Plan), StoreError> {
        let all = Terms::of(&weighed.iter().collect::<Vec<_>>());
        let postings: i64 = weighed.iter().map(|t| t.chunks).sum();
        let one_by_one = (chunks * weighed.len() as i64) as f64 * self.word_costs.look_up < postings as f64;
        let statement = if one_by_one { sql::each_chunk_in_scope() } else { sql::every_posting(true) };
        let rows = self.rows(&statement, &[&average, &all.names, &all.weights, &limit, &files])?;
        Ok((rows, Plan::Scoped { one_by_one }))
    }

    /// The best matches in the whole index, narrowed when it pays.
    fn matches_in_index(
        &self,
        weighed: &[Weighed],
        average: f64,
        limit: usize,
    ) -> Result<(Vec<Row>, Plan), StoreError> {
        let all = Terms::of(&weighed.iter().collect::<Vec<_>>());
        let limit_sql = i64::try_from(limit).unwrap_or(i64::MAX);
        let reached = self.seed_reaches(weighed, &all, average, limit)?;
        let Some(narrowed) = reached.and_then(|reached| narrow(weighed, reached, &self.word_costs)) else {
            let rows = self.rows(&sql::every_posting(false), &[&average, &all.names, &all.weights, &limit_sql])?;
            return Ok((rows, Plan::Every));
        };
        let (looked_up, summed) = (Terms::of(&narrowed.looked_up), Terms::of(&narrowed.summed));
        let (many, one_by_one) = (summed.names.len() > 1, narrowed.one_by_one);
        let params: [&(dyn ToSql + Sync); 7] = [
            &average,
            &looked_up.names,
            &looked_up.weights,
            &summed.names,
            &summed.weights,
            &narrowed.floor,
            &limit_sql,
        ];
        Ok((self.rows(&sql::narrowed(many, one_by_one), &params)?, Plan::Narrowed { many, one_by_one }))
    }

    /// The query's terms weighed, with the average chunk length; None when
    /// `term_stats` do not describe this state of the index.
    fn weighed(&self, terms: &[String]) -> Result<Option<(Vec<Weighed>, f64)>, StoreError> {
        let Some((rows, tokens)) = self.term_stats_totals()? else { return Ok(None) };
        let stats: HashMap<String, TermStats> = self
            .rows("SELECT term, chunks, max_tf, min_dl FROM term_stats WHERE term = ANY($1)", &[&terms])?
            .iter()
            .map(|r| (r.get(0), TermStats { chunks: r.get(1), max_tf: r.get(2), min_dl: r.get(3) }))
            .collect();
        let average = maxscore::average_length(rows, tokens);
        Ok(Some((weigh(terms, &stats, rows, average), average)))
    }

    /// A score `limit` chunks reach, from the seed; None when a seed does
    /// not pay or has fewer chunks.
    fn seed_reaches(
        &self,
        weighed: &[Weighed],
        all: &Terms<'_>,
        average: f64,
        limit: usize,
    ) -> Result<Option<f64>, StoreError> {
        let seed = seed_terms(weighed, limit);
        if limit == 0 || !seed_pays(weighed, &seed, limit, &self.word_costs) {
            return Ok(None);
        }
        let seed = Terms::of(&seed).names;
        let size = i64::try_from(limit).unwrap_or(i64::MAX);
        let row = self.row(&sql::seed(seed.len() > 1), &[&average, &all.names, &all.weights, &seed, &size])?;
        Ok(row.filter(|r| r.get::<_, i64>(1) == size).and_then(|r| r.get::<_, Option<f64>>(0)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::store::postgres::test_server::{self, PgServer};
    use crate::store::{FileWrite, IndexMeta, IndexReader, IndexWriter};

    const WORDS: [&str; 10] = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "zeta", "theta", "lambda"];

    /// A little random number generator, so that the corpus is the same every run.
    struct Draw(u64);

    impl Draw {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }

        /// A word, the first ones far more often (about as in prose).
        fn word(&mut self) -> &'static str {
            let weights: Vec<usize> = (1..=WORDS.len()).map(|i| 2520 / i).collect();
            let mut at = self.below(weights.iter().sum());
            for (word, w) in WORDS.iter().zip(weights) {
                if at < w {
                    return word;
                }
                at -= w;
            }
            unreachable!()
        }

        fn text(&mut self) -> String {
            let length = 1 + self.below(25);
            let mut words: Vec<&str> = (0..length).map(|_| self.word()).collect();
            words.extend(std::iter::repeat_n("filler", self.below(40)));
            words.join(" ")
        }
    }

    /// The same chunks with the same scores in the same order, but for the
    /// last bits of the scores: summed in another order, chunks whose
    /// scores differ by no more may change places.
    fn assert_same_up_to_rounding(got: &[(ChunkId, f64)], expected: &[(ChunkId, f64)], what: &str) {
        // Each score is rounded to 12 significant digits (sql.rs).
        let close = |a: f64, b: f64| (a - b).abs() <= 2e-12 * a.abs().max(b.abs());
        assert_eq!(got.len(), expected.len(), "{what}");
        let scores: HashMap<ChunkId, f64> = expected.iter().copied().collect();
        let last = expected.last().map_or(0.0, |e| e.1);
        for ((id, score), e) in got.iter().zip(expected) {
            assert!(close(*score, e.1), "{what}: {id} scores {score}, the chunk in its place {e:?}");
            assert!(close(*score, scores.get(id).copied().unwrap_or(last)), "{what}: {id} scores {score}");
        }
    }

    /// The first `limit` of `ranked` (best first) and every other one as
    /// good as the last of them.
    fn best_with_ties(ranked: &[(ChunkId, f64)], limit: usize) -> Vec<(ChunkId, f64)> {
        let Some(last) = ranked.get(limit.saturating_sub(1)).filter(|_| limit > 0) else {
            return ranked[..limit.min(ranked.len())].to_vec();
        };
        ranked.iter().take_while(|m| m.1 <= last.1).copied().collect()
    }

    /// The whole root, a directory, a file and a filtered walk's files.
    fn scopes() -> Vec<Scope> {
        let prefixes = |p: &[&str]| Scope { prefixes: p.iter().map(|p| p.to_string()).collect(), files: None };
        let walked: HashSet<String> = (0..600).step_by(5).map(path).collect();
        vec![
            Scope::default(),
            prefixes(&["d1"]),
            prefixes(&["d2/f6.txt", "d3"]),
            Scope { prefixes: vec!["d0".into()], files: Some(walked) },
        ]
    }

    fn path(file: usize) -> String {
        format!("d{}/f{file}.txt", file % 4)
    }

    /// Search `queries` every way the costs allow and by counting as it
    /// goes (what summing every posting always gave); the plans taken.
    fn same_as_summing_everything(index: &mut PgIndex, queries: &[Vec<String>]) -> HashSet<Plan> {
        let mut plans = HashSet::new();
        for costs in [
            WordCosts::MEASURED,
            WordCosts::FREE,
            WordCosts { read: 0.0, look_up: f64::INFINITY, seed_share: f64::INFINITY },
        ] {
            index.word_costs = costs;
            for terms in queries {
                let every: Vec<(ChunkId, f64)> = index
                    .rows(&sql::counting_as_it_goes(false), &[terms, &i64::MAX])
                    .unwrap()
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                let places = index.places(&every.iter().map(|e| e.0).collect::<Vec<_>>()).unwrap();
                for scope in scopes() {
                    for limit in [1, 10, 100] {
                        let params = ScopeParams::of(&scope);
                        let (got, plan) =
                            index.in_one_state(|| index.best_matches_by_plan(terms, &params, limit)).unwrap();
                        let admitted: Vec<(ChunkId, f64)> =
                            every.iter().filter(|e| scope.admits(&places[&e.0].0)).copied().collect();
                        let expected = best_with_ties(&admitted, limit);
                        let what = format!("{terms:?} in {scope:?} at {limit} by {plan:?}");
                        assert_same_up_to_rounding(&got, &expected, &what);
                        plans.insert(plan);
                    }
                }
            }
        }
        plans
    }

    /// Chunks of one text tie whatever order a plan sums their terms in
    /// (review 215: sorted by chunk alone, each chunk's rows came in
    /// their own order, and its sum differed in the last bits).
    #[test]
    fn chunks_of_one_text_tie_whatever_order_their_terms_are_summed_in() {
        let server = PgServer::start();
        let mut index = test_server::index(&server, "ties");
        index.reset(&IndexMeta::for_tests()).unwrap();
        // Words of its own put it first; the others make sums of many terms.
        let text = "walrus pelican pelican alpha beta beta gamma gamma gamma delta kappa kappa sigma omega zeta";
        let mut draw = Draw(11);
        let files: Vec<FileWrite> = (0..3000)
            .map(|f| match f % 5 {
                0 => FileWrite::of_texts(&path(f), &[text.to_string()], None),
                _ => FileWrite::of_texts(&path(f), &[draw.text()], None),
            })
            .collect();
        index.write_batch(&files, &[], &[]).unwrap();
        let asked: Vec<String> = WORDS.iter().chain(&["walrus", "pelican"]).map(|w| format!("\"{w}\"")).collect();
        let terms = index.tokenizer.query_terms(&asked.join(" OR ")).unwrap();
        // Sorted by chunk, in runs on disk: each chunk's rows in an order of its own.
        index.batch("SET enable_hashagg = off; SET work_mem = 64").unwrap();
        for costs in [WordCosts::MEASURED, WordCosts::FREE] {
            index.word_costs = costs;
            for scope in scopes() {
                let params = ScopeParams::of(&scope);
                let (got, plan) = index.in_one_state(|| index.best_matches_by_plan(&terms, &params, 2)).unwrap();
                let places = index.places(&got.iter().map(|g| g.0).collect::<Vec<_>>()).unwrap();
                let same_text = (0..3000).step_by(5).filter(|f| scope.admits(&path(*f))).count();
                let tied = got.iter().filter(|g| g.1 == got[0].1).count();
                assert!(places.values().take(tied).all(|p| scope.admits(&p.0)), "{plan:?}");
                assert_eq!(tied, same_text.max(got.len().min(2)), "{scope:?} by {plan:?}: {got:?}");
            }
        }
    }

    /// A term in every chunk weighs 1e-6, and what it tells apart differs
    /// by far less than a billionth: the rounding keeps digits, not a step
    /// (review 216: rounded to 1e-9, long chunks tied and went by file).
    #[test]
    fn a_term_in_every_chunk_still_tells_chunks_apart() {
        let server = PgServer::start();
        let mut index = test_server::index(&server, "faint");
        index.reset(&IndexMeta::for_tests()).unwrap();
        let mut files: Vec<FileWrite> =
            (0..200).map(|i| FileWrite::of_texts(&format!("short/s{i}.txt"), &["common".to_string()], None)).collect();
        // The longest first by path, so that an order by path is the wrong one.
        for i in 0..20 {
            let text = format!("common {}", "filler ".repeat(2000 + i));
            files.push(FileWrite::of_texts(&format!("long/f{:02}.txt", 19 - i), &[text], None));
        }
        index.write_batch(&files, &[], &[]).unwrap();
        let terms = index.tokenizer.query_terms("\"common\"").unwrap();
        let scope = Scope { prefixes: vec!["long".into()], files: None };
        let got = index.best_matches(&terms, &scope, 5).unwrap();
        let places = index.places(&got.iter().map(|g| g.0).collect::<Vec<_>>()).unwrap();
        let files: Vec<&str> = got.iter().map(|g| places[&g.0].0.as_str()).collect();
        assert_eq!(files, ["long/f19.txt", "long/f18.txt", "long/f17.txt", "long/f16.txt", "long/f15.txt"], "{got:?}");
        assert!(got.windows(2).all(|w| w[0].1 < w[1].1), "each scores apart: {got:?}");
    }

    #[test]
    fn every_way_of_narrowing_or_scoping_finds_what_summing_every_posting_finds() {
        let server = PgServer::start();
        let mut index = test_server::index(&server, "words");
        index.reset(&IndexMeta::for_tests()).unwrap();
        let mut draw = Draw(7);
        let files: Vec<FileWrite> = (0..600)
            .map(|f| FileWrite::of_texts(&path(f), &(0..1 + f % 3).map(|_| draw.text()).collect::<Vec<_>>(), None))
            .collect();
        index.write_batch(&files, &[], &[]).unwrap();
        let queries: Vec<Vec<String>> = (0..40)
            .map(|_| {
                let words: Vec<String> = (0..2 + draw.below(4)).map(|_| format!("\"{}\"", draw.word())).collect();
                index.tokenizer.query_terms(&words.join(" OR ")).unwrap()
            })
            .collect();
        let plans = same_as_summing_everything(&mut index, &queries);
        for plan in [
            Plan::Every,
            Plan::Narrowed { many: false, one_by_one: false },
            Plan::Narrowed { many: false, one_by_one: true },
            Plan::Narrowed { many: true, one_by_one: false },
            Plan::Narrowed { many: true, one_by_one: true },
            Plan::Scoped { one_by_one: false },
            Plan::Scoped { one_by_one: true },
        ] {
            assert!(plans.contains(&plan), "no search was {plan:?}: {plans:?}");
        }
        // Rewrites and removals keep the stats current and exact.
        let rewritten: Vec<FileWrite> =
            (0..600).step_by(7).map(|f| FileWrite::of_texts(&path(f), &[draw.text()], None)).collect();
        let removed: Vec<String> = (1..600).step_by(11).map(path).collect();
        index.write_batch(&rewritten, &[], &removed).unwrap();
        assert!(index.term_stats_totals().unwrap().is_some());
        assert!(index.term_stats_agree().unwrap());
        same_as_summing_everything(&mut index, &queries);
        // Left behind (as by an older vecgrep), the stats are not used
        // until the end of a run rebuilds them.
        index.batch("UPDATE meta SET value = '0' WHERE key = 'term_stats_at'").unwrap();
        assert_eq!(same_as_summing_everything(&mut index, &queries[..2]), HashSet::from([Plan::Counting]));
        index.batch("UPDATE term_stats SET chunks = chunks + 1").unwrap();
        index.refresh_search_aids().unwrap();
        assert!(index.term_stats_agree().unwrap());
        assert!(same_as_summing_everything(&mut index, &queries).len() > 1);
        // Within a snapshot the search asks in it, and the snapshot goes on.
        let snapshot = index.snapshot().unwrap();
        let words = index.best_matches(&queries[0], &Scope::default(), 10).unwrap();
        assert_eq!(index.best_matches(&queries[0], &Scope::default(), 10).unwrap(), words);
        snapshot.finish().unwrap();
        assert!(!index.in_snapshot.get());
    }
}
