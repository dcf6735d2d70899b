//! Code-aware reranking of hybrid search's fused candidates (semble's
//! recipe, measured here): a file whose chunks match in numbers lifts its
//! best chunk, a file named after the symbol a query names lifts its
//! chunks, and tests (unless asked for), examples and prose step back.
//!
//! SB dev NDCG@10 (`--regime chunk`, simulated over the fused candidates;
//! each row adds one means to those above it): fusion and names alone
//! 0.783; file coherence 0.809; prose, tests, examples and symbol files
//! 0.818 (0.819 measured). Demoting each further chunk of a file (semble's
//! saturation decay, x0.5) would reach 0.839 on SB but costs the docstring
//! evals 0.06-0.08 mrr@10 (x0.9 still 0.02-0.03): there the answer is one
//! function among many of one large file. It is left out.

use std::collections::HashMap;

use super::paths;
use crate::store::ChunkId;

/// What the file whose chunks sum highest adds to its best chunk, as a
/// share of the best fused score; other files add in proportion.
/// SB, fusion and names with coherence alone: 0.1: 0.795, 0.2: 0.809, 0.4: 0.808.
pub(super) const COHERENCE: f32 = 0.2;

/// What a file named after the symbol a query names adds to each of its
/// chunks, as a share of the best fused score (SB symbol 0.901 → 0.918).
pub(super) const SYMBOL_FILE: f32 = 0.5;

/// Factors for files that are rarely what a question about code wants.
pub(super) const TEST_PRIOR: f32 = 0.7;
pub(super) const EXAMPLE_PRIOR: f32 = 0.7;
pub(super) const PROSE_PRIOR: f32 = 0.5;

/// Words that ask for tests, which then keep their place.
const TEST_WORDS: &[&str] = &["test", "tests", "testing", "spec", "specs", "mock", "mocks", "fixture", "fixtures"];

/// What the query says about the files it wants.
pub(super) struct QueryShape {
    /// The symbol a query that is one identifier names (its last part for
    /// `a::b`, `a.b`, `a\b`, `a->b`), lowercased without underscores.
    symbol: Option<String>,
    asks_for_tests: bool,
}

impl QueryShape {
    pub(super) fn of(query: &str) -> QueryShape {
        let asks_for_tests = query
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| TEST_WORDS.iter().any(|t| w.eq_ignore_ascii_case(t)));
        QueryShape { symbol: symbol_named(query.trim()), asks_for_tests }
    }

    /// The factor of a file's chunks by what its path says it is.
    fn prior(&self, path: &str) -> f32 {
        let mut prior = 1.0;
        if !self.asks_for_tests && paths::is_test(path) {
            prior *= TEST_PRIOR;
        }
        if paths::is_example(path) {
            prior *= EXAMPLE_PRIOR;
        }
        if paths::is_prose(path) {
            prior *= PROSE_PRIOR;
        }
        prior
    }

    /// Whether the file is named after the query's symbol.
    fn names_file(&self, path: &str) -> bool {
        self.symbol.as_ref().is_some_and(|s| *s == folded(paths::stem(path)))
    }
}

/// A name compared without case or underscores (`type_adapter` = `TypeAdapter`).
fn folded(name: &str) -> String {
    name.chars().filter(|&c| c != '_').flat_map(char::to_lowercase).collect()
}

/// The symbol `query` names when it is one identifier that looks like code
/// rather than a word: qualified (`Rails::Engine`), with an underscore or
/// a capital (`getLogger`, `_private`, `Router`). A plain lowercase word
/// (`quantize`) is a question, not a symbol.
fn symbol_named(query: &str) -> Option<String> {
    let mut parts = Vec::new();
    let mut rest = query;
    while let Some(at) = ["::", "->", "\\", "."].iter().filter_map(|sep| rest.find(sep).map(|i| (i, sep.len()))).min() {
        parts.push(&rest[..at.0]);
        rest = &rest[at.0 + at.1..];
    }
    parts.push(rest);
    let identifier = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !parts.iter().all(|p| identifier(p)) {
        return None;
    }
    let last = parts[parts.len() - 1];
    let code_like = parts.len() > 1 || last.contains('_') || last.chars().any(|c| c.is_ascii_uppercase());
    code_like.then(|| folded(last))
}

/// `fused` (best first) reranked for what the files are: returns the same
/// candidates with their new scores, best first. `places` gives each
/// candidate's file; one it lacks (gone from the index) keeps its score.
pub(super) fn rerank(
    fused: &[(ChunkId, f32)],
    places: &HashMap<ChunkId, (String, usize)>,
    query: &QueryShape,
) -> Vec<(ChunkId, f32)> {
    let Some(best) = fused.iter().map(|f| f.1).reduce(f32::max) else { return Vec::new() };
    let file = |id: &ChunkId| places.get(id).map(|p| p.0.as_str());
    let mut scored: Vec<(ChunkId, f32)> = fused.to_vec();
    add_coherence(&mut scored, &file, best);
    for (id, score) in scored.iter_mut() {
        if let Some(path) = file(id) {
            if query.names_file(path) {
                *score += SYMBOL_FILE * best;
            }
            *score *= query.prior(path);
        }
    }
    sort(&mut scored);
    scored
}

/// Each file's best chunk raised by `COHERENCE` of `best` in proportion to
/// the sum of the file's candidates' scores against the highest such sum.
fn add_coherence<'a>(scored: &mut [(ChunkId, f32)], file: &dyn Fn(&ChunkId) -> Option<&'a str>, best: f32) {
    let mut files: HashMap<&str, (f32, usize)> = HashMap::new();
    for (at, (id, score)) in scored.iter().enumerate() {
        let Some(path) = file(id) else { continue };
        let entry = files.entry(path).or_insert((0.0, at));
        entry.0 += score;
        if *score > scored[entry.1].1 {
            entry.1 = at;
        }
    }
    let Some(top) = files.values().map(|f| f.0).reduce(f32::max).filter(|t| *t > 0.0) else { return };
    for (sum, at) in files.into_values() {
        scored[at].1 += COHERENCE * best * sum / top;
    }
}

/// Best first; equal scores by id, so that orders are reproducible.
fn sort(scored: &mut [(ChunkId, f32)]) {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(files: &[(ChunkId, &str)]) -> HashMap<ChunkId, (String, usize)> {
        files.iter().map(|(id, f)| (*id, (f.to_string(), 1))).collect()
    }

    fn order(scored: &[(ChunkId, f32)]) -> Vec<ChunkId> {
        scored.iter().map(|s| s.0).collect()
    }

    #[test]
    fn symbols_are_identifiers_that_look_like_code() {
        assert_eq!(symbol_named("TypeAdapter").as_deref(), Some("typeadapter"));
        assert_eq!(symbol_named("Rails::Engine").as_deref(), Some("engine"));
        assert_eq!(symbol_named("fmt.Println").as_deref(), Some("println"));
        assert_eq!(symbol_named("parse_config").as_deref(), Some("parseconfig"));
        assert_eq!(symbol_named("quantize"), None, "a plain word is a question");
        assert_eq!(symbol_named("how routes work"), None);
        assert_eq!(symbol_named("a::"), None);
    }

    #[test]
    fn tests_examples_and_prose_step_back_unless_tests_are_asked_for() {
        let fused = [(1, 0.030), (2, 0.029), (3, 0.028), (4, 0.027)];
        let at = places(&[(1, "src/mux_test.go"), (2, "docs/guide.md"), (3, "_examples/main.go"), (4, "src/mux.go")]);
        let reranked = rerank(&fused, &at, &QueryShape::of("route matching"));
        assert_eq!(reranked[0].0, 4, "the implementation first: {reranked:?}");
        let asked = rerank(&fused, &at, &QueryShape::of("tests of route matching"));
        assert_eq!(asked[0].0, 1, "{asked:?}");
    }

    #[test]
    fn a_file_named_after_the_symbol_rises() {
        let fused = [(1, 0.030), (2, 0.020)];
        let at = places(&[(1, "gson/TypeAdapters.java"), (2, "gson/TypeAdapter.java")]);
        assert_eq!(order(&rerank(&fused, &at, &QueryShape::of("TypeAdapter"))), [2, 1]);
        assert_eq!(order(&rerank(&fused, &at, &QueryShape::of("type adapters"))), [1, 2]);
    }

    #[test]
    fn a_file_with_many_matching_chunks_lifts_its_best() {
        // b.rs's three chunks together outweigh a.rs's one.
        let fused = [(1, 0.0300), (2, 0.0295), (3, 0.0290), (4, 0.0285)];
        let at = places(&[(1, "a.rs"), (2, "b.rs"), (3, "b.rs"), (4, "b.rs")]);
        let reranked = rerank(&fused, &at, &QueryShape::of("store"));
        assert_eq!(reranked[0].0, 2, "{reranked:?}");
        assert_eq!(reranked[1].0, 1);
    }
}
