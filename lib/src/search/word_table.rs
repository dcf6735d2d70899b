//! Every term of the word index in memory, for a long-running searcher:
//! BM25 from postings held here takes milliseconds at a million chunks,
//! where FTS5 runs its ranking function on every matching row (226 ms a
//! search at 1M chunks, bench/scale.sh). The scores are FTS5's own, to the
//! bit, so that a search ranks alike whichever answers it.

use std::collections::HashMap;

use anyhow::{bail, Result};

use crate::scoring::bm25;
use crate::store::{ChunkId, IndexReader, WordTotals};

/// The postings of every term: for each, the chunks that have it and how often.
pub struct WordTable {
    /// The word index's generation the words were read at (`IndexReader::word_generation`).
    pub generation: i64,
    /// Each term's postings are `starts[t]..starts[t + 1]` of `chunks` and `counts`.
    terms: HashMap<Box<str>, u32>,
    starts: Vec<usize>,
    /// Positions in `ids`, a term's in id order.
    chunks: Vec<u32>,
    counts: Vec<u32>,
    ids: Vec<ChunkId>,
    /// Tokens in each chunk, by position.
    lengths: Vec<u32>,
    rows: f64,
    average_length: f64,
}

impl std::fmt::Debug for WordTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordTable")
            .field("generation", &self.generation)
            .field("terms", &self.terms.len())
            .field("postings", &self.chunks.len())
            .field("chunks", &self.ids.len())
            .finish()
    }
}

impl WordTable {
    /// Read every term of `store`'s word index, from one state of it.
    pub fn load(store: &dyn IndexReader) -> Result<WordTable> {
        let mut builder = Builder::default();
        let totals = store.each_word(&mut |term, chunk, count| builder.push(term, chunk, count))?;
        builder.finish(totals)
    }

    /// How many (term, chunk) pairs the table holds.
    pub fn postings(&self) -> usize {
        self.chunks.len()
    }

    /// The `limit` chunks that `admit` lets through and best match `terms`
    /// (one per word asked for, as `store::expression_terms` gives them),
    /// and every other one as good as the last of them
    /// (`store::keep_best_with_ties`), by BM25 as FTS5 reports it (more
    /// negative is better), best first; equal scores by id.
    pub fn best_matches(&self, terms: &[String], limit: usize, admit: &dyn Fn(ChunkId) -> bool) -> Vec<(ChunkId, f64)> {
        let mut scores = vec![0.0f64; self.ids.len()];
        let mut matched: Vec<u32> = Vec::new();
        // Term after term, in the order asked, as FTS5 sums them: the same
        // additions in the same order give the same score to the bit.
        for term in terms {
            let Some(&t) = self.terms.get(term.as_str()) else { continue };
            let postings = self.starts[t as usize]..self.starts[t as usize + 1];
            let idf = self.idf(postings.len());
            for i in postings {
                let chunk = self.chunks[i];
                let score = &mut scores[chunk as usize];
                if *score == 0.0 {
                    matched.push(chunk);
                }
                let tf = f64::from(self.counts[i]);
                let length = f64::from(self.lengths[chunk as usize]);
                *score += idf * bm25::term_part(tf, length, self.average_length);
            }
        }
        matched.retain(|&c| admit(self.ids[c as usize]));
        let by_score = |a: &u32, b: &u32| scores[*b as usize].total_cmp(&scores[*a as usize]);
        crate::store::keep_best_with_ties(&mut matched, limit, by_score);
        matched.sort_unstable_by(|a, b| by_score(a, b).then(self.ids[*a as usize].cmp(&self.ids[*b as usize])));
        matched.into_iter().map(|c| (self.ids[c as usize], -scores[c as usize])).collect()
    }

    fn idf(&self, hits: usize) -> f64 {
        bm25::idf(self.rows, hits as f64)
    }
}

/// A table put together from the store's postings, term by term.
#[derive(Default)]
struct Builder {
    terms: HashMap<Box<str>, u32>,
    starts: Vec<usize>,
    chunks: Vec<u32>,
    counts: Vec<u32>,
    ids: Vec<ChunkId>,
    positions: HashMap<ChunkId, u32>,
    lengths: Vec<u32>,
    current: Option<Box<str>>,
    /// A term's postings came apart or out of id order.
    disorder: Option<String>,
}

impl Builder {
    fn push(&mut self, term: &str, chunk: ChunkId, count: u32) {
        if self.current.as_deref() != Some(term) {
            if self.terms.contains_key(term) {
                self.disorder.get_or_insert_with(|| format!("the chunks of the term {term:?} are not together"));
                return;
            }
            self.terms.insert(term.into(), self.starts.len() as u32);
            self.starts.push(self.chunks.len());
            self.current = Some(term.into());
        }
        let next = self.ids.len() as u32;
        let position = *self.positions.entry(chunk).or_insert(next);
        if position == next {
            self.ids.push(chunk);
            self.lengths.push(0);
        }
        let start = self.starts.last().copied().unwrap_or(0);
        if self.chunks.len() > start && self.ids[*self.chunks.last().unwrap_or(&0) as usize] >= chunk {
            self.disorder.get_or_insert_with(|| format!("the chunks of the term {term:?} are not in id order"));
        }
        self.chunks.push(position);
        self.counts.push(count);
        self.lengths[position as usize] = self.lengths[position as usize].saturating_add(count);
    }

    fn finish(mut self, totals: WordTotals) -> Result<WordTable> {
        if let Some(disorder) = self.disorder {
            bail!("cannot hold the word index in memory: {disorder}");
        }
        self.starts.push(self.chunks.len());
        let rows = totals.rows as f64;
        Ok(WordTable {
            generation: totals.generation,
            terms: self.terms,
            starts: self.starts,
            chunks: self.chunks,
            counts: self.counts,
            ids: self.ids,
            lengths: self.lengths,
            rows,
            average_length: totals.tokens as f64 / rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(postings: &[(&str, ChunkId, u32)], rows: u64) -> WordTable {
        let mut builder = Builder::default();
        for &(term, chunk, count) in postings {
            builder.push(term, chunk, count);
        }
        let tokens = postings.iter().map(|p| u64::from(p.2)).sum();
        builder.finish(WordTotals { generation: 7, rows, tokens }).unwrap()
    }

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn scores_are_fts5_bm25() {
        // Chunk 10: "retri upload upload" (3 tokens); 11: "upload fail" (2); 12: "fail" (1); rows 4.
        let t = table(&[("fail", 11, 1), ("fail", 12, 1), ("retri", 10, 1), ("upload", 10, 2), ("upload", 11, 1)], 4);
        let avg = 6.0 / 4.0;
        let part = |idf: f64, tf: f64, len: f64| idf * ((tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * len / avg)));
        let idf = |hits: f64| ((4.0 - hits + 0.5) / (hits + 0.5)).ln().max(1e-6);
        let got = t.best_matches(&terms(&["retri", "upload"]), 10, &|_| true);
        let ten = part(idf(1.0), 1.0, 3.0) + part(idf(2.0), 2.0, 3.0);
        assert_eq!(got, [(10, -ten), (11, -part(idf(2.0), 1.0, 2.0))]);
        assert!(t.best_matches(&terms(&["nothing"]), 10, &|_| true).is_empty());
        assert_eq!(t.generation, 7);
    }

    #[test]
    fn a_term_asked_twice_counts_twice_and_the_limit_keeps_the_best() {
        let t = table(&[("a", 1, 1), ("a", 2, 3), ("a", 3, 2), ("b", 3, 1)], 10);
        let once = t.best_matches(&terms(&["a"]), 10, &|_| true);
        let twice = t.best_matches(&terms(&["a", "a"]), 10, &|_| true);
        // Chunk 1 (1 token) beats chunk 3 (3 tokens, 2 of them a): BM25 weighs length.
        assert_eq!(once.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 1, 3]);
        assert_eq!(twice[0].1, once[0].1 * 2.0);
        assert_eq!(
            t.best_matches(&terms(&["a", "b"]), 1, &|_| true),
            [t.best_matches(&terms(&["a", "b"]), 3, &|_| true)[0]]
        );
        assert!(t.best_matches(&terms(&["a"]), 0, &|_| true).is_empty());
        // What `admit` keeps out leaves its place to the next best.
        assert_eq!(t.best_matches(&terms(&["a"]), 1, &|id| id != 2), t.best_matches(&terms(&["a"]), 2, &|_| true)[1..]);
    }

    #[test]
    fn equal_scores_go_by_id_and_a_cut_keeps_them_all() {
        let t = table(&[("a", 4, 1), ("a", 9, 1), ("b", 1, 1)], 10);
        assert_eq!(t.best_matches(&terms(&["a"]), 10, &|_| true).iter().map(|r| r.0).collect::<Vec<_>>(), [4, 9]);
        // The caller orders ties by place: a cut keeps every one.
        assert_eq!(t.best_matches(&terms(&["a"]), 1, &|_| true).iter().map(|r| r.0).collect::<Vec<_>>(), [4, 9]);
    }

    #[test]
    fn postings_out_of_id_order_are_refused() {
        let mut builder = Builder::default();
        builder.push("a", 9, 1);
        builder.push("a", 4, 1);
        assert!(builder.finish(WordTotals { generation: 0, rows: 2, tokens: 2 }).is_err());
    }

    #[test]
    fn a_term_that_comes_back_later_is_refused() {
        let mut builder = Builder::default();
        builder.push("a", 1, 1);
        builder.push("b", 1, 1);
        builder.push("a", 2, 1);
        assert!(builder.finish(WordTotals { generation: 0, rows: 2, tokens: 3 }).is_err());
    }

    fn file(rel: &str, texts: &[String]) -> crate::store::FileWrite {
        crate::store::FileWrite::of_texts(rel, texts, Some(&[1.0; crate::embed::DIMS]))
    }

    /// An empty index in `dir`, open for writing.
    fn empty_index(dir: &std::path::Path) -> Box<dyn crate::store::IndexWriter> {
        let root =
            crate::project::ProjectRoot { path: dir.into(), marker: crate::project::RootMarker::None, shared: None };
        let mut store = crate::store::open_for_writing(&root, &mut |_| {}).unwrap();
        store.reset(&crate::store::IndexMeta::for_tests()).unwrap();
        store
    }

    /// Texts of random words: stems shared, identifiers to split, accents.
    struct RandomText(u64);

    impl RandomText {
        const VOCABULARY: [&str; 20] = [
            "retry",
            "retries",
            "retrying",
            "upload",
            "uploads",
            "failed",
            "parseConfig",
            "config",
            "socket_timeout",
            "timeout",
            "the",
            "spawn",
            "task",
            "runtime",
            "Café",
            "naïve",
            "x",
            "handle",
            "error",
            "errors",
        ];

        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn text(&mut self) -> String {
            let len = 1 + self.below(40);
            (0..len).map(|_| Self::VOCABULARY[self.below(Self::VOCABULARY.len())]).collect::<Vec<_>>().join(" ")
        }
    }

    /// The best matches of each query, from `store`'s FTS5 and from its words in memory, alike.
    fn assert_ranks_alike(store: &dyn IndexReader) {
        let queries = [
            "retry failed uploads",
            "parse config timeout timeout",
            "the cafe naive",
            "spawn a task on the runtime",
            "handle errors",
            "nothing matches this",
        ];
        let table = WordTable::load(store).unwrap();
        assert_eq!(table.generation, store.word_generation().unwrap());
        for query in queries {
            let expr = super::super::lexical::match_expression(query).unwrap();
            let terms = crate::store::expression_terms(&expr).unwrap().unwrap();
            for limit in [1, 5, 1000] {
                let mut fts5 = store.best_word_matches(&expr, &crate::store::Scope::default(), limit).unwrap();
                let memory = table.best_matches(&terms, limit, &|_| true);
                // FTS5 cuts equal scores anywhere; compare what it kept, in a fixed order.
                fts5.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                let cut = fts5.last().map(|l| l.1);
                let same = |r: &&(ChunkId, f64)| Some(r.1) != cut || limit == 1000;
                assert_eq!(
                    memory.iter().filter(same).collect::<Vec<_>>(),
                    fts5.iter().filter(same).collect::<Vec<_>>(),
                    "{query} (limit {limit})"
                );
                assert_eq!(memory.len(), fts5.len(), "{query} (limit {limit})");
            }
        }
    }

    #[test]
    fn the_word_generation_moves_only_when_words_do() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_index(dir.path());
        let mut hole = file("a.rs", &["retry uploads".into()]);
        hole.chunks[0].vector = None;
        store.write_batch(&[hole, file("b.rs", &["spawn task".into()])], &[], &[]).unwrap();
        let (generation, words) = (store.generation().unwrap(), store.word_generation().unwrap());
        // Files only touched: neither generation moves.
        let touched = crate::store::FileState { size: 2, mtime_ns: 2, hash: b"b.rs".to_vec(), ctime_ns: 2 };
        store.write_batch(&[], &[("b.rs".into(), touched)], &[]).unwrap();
        assert_eq!(store.generation().unwrap(), generation);
        assert_eq!(store.word_generation().unwrap(), words);
        assert_eq!(WordTable::load(store.as_reader()).unwrap().generation, words);
        // A file rewritten, or removed: the words changed.
        store.write_batch(&[file("b.rs", &["spawn a blocking task".into()])], &[], &[]).unwrap();
        assert_eq!(store.word_generation().unwrap(), words + 1);
        store.write_batch(&[], &[], &["a.rs".into()]).unwrap();
        assert_eq!(store.word_generation().unwrap(), words + 2);
    }

    #[test]
    fn an_index_ranks_alike_from_memory_and_from_fts5() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_index(dir.path());
        let mut random = RandomText(0x2545f4914f6cdd1d);
        let files: Vec<_> = (0..60)
            .map(|f| {
                let texts: Vec<String> = (0..1 + random.below(5)).map(|_| random.text()).collect();
                file(&format!("f{f}.rs"), &texts)
            })
            .collect();
        store.write_batch(&files, &[], &[]).unwrap();
        assert_ranks_alike(store.as_reader());
        // Files rewritten and removed: FTS5's totals and ours move alike.
        let rewritten: Vec<_> = (0..20).map(|f| file(&format!("f{f}.rs"), &[random.text()])).collect();
        let removed: Vec<String> = (40..50).map(|f| format!("f{f}.rs")).collect();
        store.write_batch(&rewritten, &[], &removed).unwrap();
        store.compact_words().unwrap();
        assert_ranks_alike(store.as_reader());
    }
}
