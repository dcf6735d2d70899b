//! Code-aware reranking of hybrid search's fused candidates (semble's
//! recipe, measured here): a file whose chunks match in numbers lifts its
//! best chunk, a file named after the symbol a query names lifts its
//! chunks and the chunk that defines the symbol rises further, tests
//! (unless asked for), examples and prose step back, a file close in
//! meaning or named in the question's words lifts its chunks, and each
//! further chunk of a file already placed steps back unless its own names
//! answer the query or a side ranks it among its very best; the last
//! places of the first page go to files not shown before them; and what a
//! side ranks first is never pushed out of the results asked for. What
//! each means gave, and how each constant was chosen: bench/TUNING.md.

use std::collections::{HashMap, HashSet};

use super::why::Lift;
use crate::store::ChunkId;
pub(super) use shape::QueryShape;

mod paths;
mod shape;

/// What the file whose chunks sum highest adds to its best chunk, as a
/// share of the best fused score; other files add in proportion.
pub(super) const COHERENCE: f32 = 0.2;

/// What a file named after the symbol a query names adds to each of its
/// chunks, as a share of the best fused score.
pub(super) const SYMBOL_FILE: f32 = 0.5;

/// What a chunk that defines the symbol a query names adds, as a share of
/// the best fused score: someone who types `APIRouter` wants `class
/// APIRouter` first, not the ten chunks of its file that use it.
pub(super) const SYMBOL_DEFINITION: f32 = 0.5;

/// Factors for files that are rarely what a question about code wants.
pub(super) const TEST_PRIOR: f32 = 0.7;
pub(super) const EXAMPLE_PRIOR: f32 = 0.7;
/// Prose only leans back: a page that answers a question better than the
/// code is an answer too (0.5 sank such pages for 0.0003 of SB).
pub(super) const PROSE_PRIOR: f32 = 0.75;

/// What a file's meaning adds to each of its chunks, as a share of the
/// best fused score times the mean cosine of its `FILE_MEANING_CHUNKS`
/// closest candidates: a chunk of a file that is about the question as a
/// whole rises above an equally ranked one of a file that mentions it once.
/// It also keeps repeats stepping back from costing docstring questions,
/// whose answer is one function among many of a large file.
pub(super) const FILE_MEANING: f32 = 0.5;

/// How many of a file's candidates make its meaning.
pub(super) const FILE_MEANING_CHUNKS: usize = 3;

/// What a file whose name or directory says the question's words adds to
/// each of its chunks, as a share of the best fused score times the share
/// of the words said (semble's stem boost).
pub(super) const PATH_WORDS: f32 = 0.5;

/// The factor of each further chunk of a file already placed (squared for
/// the third, and so on), unless it is `kept`: ten places hold ten answers
/// rather than one file's ten chunks, while a second function of a file
/// that the question names keeps its place (keeping none costs docstring
/// questions, whose answers share a file).
pub(super) const REPEAT_DECAY: f32 = 0.5;

/// How many of the best of each ranking (meaning, words) keep their place
/// as further chunks of a file. On a static index, where only the static
/// table ranks meaning, its best are not leaders (`fusion`).
pub(super) const LEADERS: usize = 3;

/// What reranking knows of the candidates besides their fused scores.
pub(super) struct Evidence<'a> {
    /// Each candidate's file and first line; one it lacks (gone from the
    /// index) keeps its score.
    pub places: &'a HashMap<ChunkId, (String, usize)>,
    /// The cosines of the candidates ranked by meaning.
    pub cosines: &'a HashMap<ChunkId, f32>,
    /// The candidates that keep their place as further chunks of a file:
    /// those whose own names answer the query (`boost_by_names`) or that
    /// define the symbol it names, and the `LEADERS` best of each ranking.
    pub kept: &'a HashSet<ChunkId>,
    /// The candidates that define the symbol the query names.
    pub defining: &'a HashSet<ChunkId>,
}

/// What reranking did to each candidate (`why::Lift`), amounts in fused units.
pub(super) type Lifts = HashMap<ChunkId, Vec<Lift>>;

/// `fused` (best first) reranked for what the candidates' files are:
/// returns the same candidates with their new scores, best first, and what
/// was done to each (for `why`, written as it is done).
pub(super) fn rerank(
    fused: &[(ChunkId, f32)],
    evidence: &Evidence<'_>,
    query: &QueryShape,
) -> (Vec<(ChunkId, f32)>, Lifts) {
    let mut lifts = Lifts::new();
    let Some(best) = fused.iter().map(|f| f.1).reduce(f32::max) else { return (Vec::new(), lifts) };
    let file = |id: &ChunkId| evidence.places.get(id).map(|p| p.0.as_str());
    let mut scored: Vec<(ChunkId, f32)> = fused.to_vec();
    add_coherence(&mut scored, &file, best, &mut lifts);
    let by_file = file_lifts(&scored, &file, evidence.cosines, query);
    for (id, score) in scored.iter_mut() {
        let Some(path) = file(id) else { continue };
        let said = lifts.entry(*id).or_default();
        if query.names_file(path) {
            *score += SYMBOL_FILE * best;
            said.push(Lift::SymbolFile { added: SYMBOL_FILE * best });
        }
        if evidence.defining.contains(id) {
            *score += SYMBOL_DEFINITION * best;
            said.push(Lift::Defines { added: SYMBOL_DEFINITION * best });
        }
        let (prior, kinds) = query.prior(path, TEST_PRIOR, EXAMPLE_PRIOR, PROSE_PRIOR);
        *score *= prior;
        said.extend(kinds.into_iter().map(|(file_is, factor)| Lift::StepBack { file_is, factor }));
        // After the prior, which weighs the chunk's own evidence, not the
        // file's: a test file about the question still says so.
        let (meaning, share) = by_file.get(path).copied().unwrap_or((0.0, 0.0));
        *score += best * (FILE_MEANING * meaning + PATH_WORDS * share);
        if meaning > 0.0 {
            said.push(Lift::FileMeaning { cosine: meaning, added: best * FILE_MEANING * meaning });
        }
        if share > 0.0 {
            said.push(Lift::PathWords { share, added: best * PATH_WORDS * share });
        }
    }
    sort(&mut scored);
    step_back_repeats(&mut scored, &file, evidence.kept, &mut lifts);
    fresh_files_last(&mut scored, &file, &mut lifts);
    (scored, lifts)
}

/// What each candidate file adds to its chunks: its meaning (the mean
/// cosine of its `FILE_MEANING_CHUNKS` candidates closest to the query, of
/// those ranked by meaning; none, 0), which adds `FILE_MEANING` of it in
/// units of the best fused score, and the share of the question's words
/// its path says, which adds `PATH_WORDS` of it. Worked out once a file,
/// not a chunk.
fn file_lifts<'a>(
    scored: &[(ChunkId, f32)],
    file: &dyn Fn(&ChunkId) -> Option<&'a str>,
    cosines: &HashMap<ChunkId, f32>,
    query: &QueryShape,
) -> HashMap<&'a str, (f32, f32)> {
    let mut by_file: HashMap<&str, Vec<f32>> = HashMap::new();
    for (id, _) in scored {
        let Some(path) = file(id) else { continue };
        let closeness = by_file.entry(path).or_default();
        closeness.extend(cosines.get(id));
    }
    by_file
        .into_iter()
        .map(|(path, mut closeness)| {
            closeness.sort_by(|a, b| b.total_cmp(a));
            closeness.truncate(FILE_MEANING_CHUNKS);
            let meaning =
                if closeness.is_empty() { 0.0 } else { closeness.iter().sum::<f32>() / closeness.len() as f32 };
            (path, (meaning, query.path_share(path)))
        })
        .collect()
}

/// Each chunk after the first of its file, best first, multiplied by
/// `REPEAT_DECAY` once per chunk of the file before it unless it is
/// `kept`; then sorted again.
fn step_back_repeats<'a>(
    scored: &mut [(ChunkId, f32)],
    file: &dyn Fn(&ChunkId) -> Option<&'a str>,
    kept: &HashSet<ChunkId>,
    lifts: &mut Lifts,
) {
    let mut placed: HashMap<&str, i32> = HashMap::new();
    for (id, score) in scored.iter_mut() {
        let Some(path) = file(id) else { continue };
        let before = placed.entry(path).or_insert(0);
        if *before > 0 {
            let nth = (*before + 1) as u32;
            let lift = if kept.contains(id) {
                Lift::KeptInPlace { nth }
            } else {
                let factor = REPEAT_DECAY.powi(*before);
                *score *= factor;
                Lift::Repeat { nth, factor }
            };
            lifts.entry(*id).or_default().push(lift);
        }
        *before += 1;
    }
    sort(scored);
}

/// Each file's best chunk raised by `COHERENCE` of `best` in proportion to
/// the sum of the file's candidates' scores against the highest such sum.
fn add_coherence<'a>(
    scored: &mut [(ChunkId, f32)],
    file: &dyn Fn(&ChunkId) -> Option<&'a str>,
    best: f32,
    lifts: &mut Lifts,
) {
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
        let added = COHERENCE * best * sum / top;
        scored[at].1 += added;
        lifts.entry(scored[at].0).or_default().push(Lift::FileCoherence { share: sum / top, added });
    }
}

/// How many places the first page of results has, and how many of its
/// last places go to files that its first places do not show
/// (`fresh_files_last`).
pub(super) const PAGE: usize = 10;
pub(super) const FRESH_PLACES: usize = 2;

/// The last `FRESH_PLACES` of the first `PAGE` places go to the best
/// candidates from files the places before them do not show, where there
/// are any: a question about how a part of a project works has its answer
/// in two or three files, and one file's chunks kept in place by their
/// names can fill the page. The best places are left as ranked, where a
/// question about one function finds it among its file's chunks.
fn fresh_files_last<'a>(scored: &mut [(ChunkId, f32)], file: &dyn Fn(&ChunkId) -> Option<&'a str>, lifts: &mut Lifts) {
    let first_fresh = PAGE - FRESH_PLACES;
    if scored.len() <= first_fresh {
        return;
    }
    let mut shown: HashSet<&str> = scored[..first_fresh].iter().filter_map(|s| file(&s.0)).collect();
    for place in first_fresh..PAGE.min(scored.len()) {
        let fresh = |s: &(ChunkId, f32)| file(&s.0).is_some_and(|f| !shown.contains(f));
        let Some(at) = scored[place..].iter().position(fresh).map(|i| place + i) else { return };
        shown.extend(file(&scored[at].0));
        if at > place {
            // Just above what held the place, never above the place before it.
            let holder = scored[place].1;
            scored[at].1 = (holder + holder.abs().max(f32::EPSILON) * 1e-4).min(scored[place - 1].1);
            scored[place..=at].rotate_right(1);
            lifts.entry(scored[place].0).or_default().push(Lift::FreshFile { place: place as u32 + 1 });
        }
    }
}

/// Each of `firsts` (what a side ranks first, with the side's name) that
/// reranking placed at or below `within` rises to place `within`, just
/// above what held it: a ranking never hides what one of its inputs is
/// surest of (the best function by meaning, 11th behind ten chunks of one
/// file that all say the question's words).
pub(super) fn keep_firsts_within(
    scored: &mut [(ChunkId, f32)],
    firsts: &[(ChunkId, &'static str)],
    within: usize,
    lifts: &mut Lifts,
) {
    for &(first, by) in firsts {
        let Some(at) = scored.iter().position(|s| s.0 == first) else { continue };
        if within == 0 || at < within {
            continue;
        }
        // Just above what held the place, never above the place before it
        // (a tie there must not carry it higher).
        let place = within - 1;
        let holder = scored[place].1;
        let lifted = holder + holder.abs().max(f32::EPSILON) * 1e-4;
        scored[at].1 = if place > 0 { lifted.min(scored[place - 1].1) } else { lifted };
        scored[place..=at].rotate_right(1);
        lifts.entry(first).or_default().push(Lift::SideFirst { by, within: within as u32 });
    }
}

/// Best first; equal scores by id, so that orders are reproducible.
fn sort(scored: &mut [(ChunkId, f32)]) {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates in `files`, none ranked by meaning or named.
    fn rerank_in(fused: &[(ChunkId, f32)], files: &[(ChunkId, &str)], query: &str) -> Vec<(ChunkId, f32)> {
        rerank_with(fused, files, &HashMap::new(), &HashSet::new(), query)
    }

    fn rerank_defining(
        fused: &[(ChunkId, f32)],
        files: &[(ChunkId, &str)],
        defining: &HashSet<ChunkId>,
        query: &str,
    ) -> Vec<(ChunkId, f32)> {
        rerank_by(fused, files, &HashMap::new(), defining, defining, query)
    }

    fn rerank_with(
        fused: &[(ChunkId, f32)],
        files: &[(ChunkId, &str)],
        cosines: &HashMap<ChunkId, f32>,
        kept: &HashSet<ChunkId>,
        query: &str,
    ) -> Vec<(ChunkId, f32)> {
        rerank_by(fused, files, cosines, kept, &HashSet::new(), query)
    }

    /// Candidates in `files`, with what reranking knows of them besides.
    fn rerank_by(
        fused: &[(ChunkId, f32)],
        files: &[(ChunkId, &str)],
        cosines: &HashMap<ChunkId, f32>,
        kept: &HashSet<ChunkId>,
        defining: &HashSet<ChunkId>,
        query: &str,
    ) -> Vec<(ChunkId, f32)> {
        let places = files.iter().map(|(id, f)| (*id, (f.to_string(), 1))).collect();
        rerank(fused, &Evidence { places: &places, cosines, kept, defining }, &QueryShape::of(query)).0
    }

    fn order(scored: &[(ChunkId, f32)]) -> Vec<ChunkId> {
        scored.iter().map(|s| s.0).collect()
    }

    #[test]
    fn tests_examples_and_prose_step_back_unless_tests_are_asked_for() {
        let fused = [(1, 0.030), (2, 0.029), (3, 0.028), (4, 0.027)];
        let at = [(1, "src/mux_test.go"), (2, "docs/guide.md"), (3, "_examples/main.go"), (4, "src/mux.go")];
        let reranked = rerank_in(&fused, &at, "route matching");
        assert_eq!(reranked[0].0, 4, "the implementation first: {reranked:?}");
        let asked = rerank_in(&fused, &at, "tests of route matching");
        assert_eq!(asked[0].0, 1, "{asked:?}");
    }

    #[test]
    fn a_file_named_after_the_symbol_rises() {
        let fused = [(1, 0.030), (2, 0.020)];
        let at = [(1, "gson/TypeAdapters.java"), (2, "gson/TypeAdapter.java")];
        assert_eq!(order(&rerank_in(&fused, &at, "TypeAdapter")), [2, 1]);
        assert_eq!(order(&rerank_in(&fused, &at, "type adapters")), [1, 2]);
    }

    #[test]
    fn the_chunk_that_defines_the_symbol_rises_above_its_file() {
        // routing.py's first chunks use APIRouter; its fourth defines it.
        let fused = [(1, 0.030), (2, 0.029), (3, 0.028), (4, 0.024), (5, 0.019)];
        let at = [(1, "routing.py"), (2, "routing.py"), (3, "routing.py"), (4, "routing.py"), (5, "app.py")];
        let defining = HashSet::from([4]);
        assert_eq!(rerank_defining(&fused, &at, &defining, "APIRouter")[0].0, 4);
        assert_eq!(rerank_defining(&fused, &at, &HashSet::new(), "APIRouter")[0].0, 1, "nothing defines it: no change");
    }

    #[test]
    fn a_file_with_many_matching_chunks_lifts_its_best() {
        // b.rs's three chunks together outweigh a.rs's one.
        let fused = [(1, 0.0300), (2, 0.0295), (3, 0.0290), (4, 0.0285)];
        let at = [(1, "a.rs"), (2, "b.rs"), (3, "b.rs"), (4, "b.rs")];
        let reranked = rerank_in(&fused, &at, "store");
        assert_eq!(reranked[0].0, 2, "{reranked:?}");
        assert_eq!(reranked[1].0, 1);
    }

    #[test]
    fn a_file_named_in_the_question_rises() {
        let fused = [(1, 0.030), (2, 0.028)];
        let at = [(1, "engine.rb"), (2, "paths.rb")];
        assert_eq!(order(&rerank_in(&fused, &at, "path management for rails apps")), [2, 1]);
        assert_eq!(order(&rerank_in(&fused, &at, "load order of gems")), [1, 2], "no word shared: no change");
    }

    #[test]
    fn a_file_close_in_meaning_lifts_its_chunks() {
        // a.py's one chunk is ranked first; b.py's are all about the question.
        let fused = [(1, 0.030), (2, 0.025), (3, 0.002), (4, 0.002), (5, 0.0001)];
        let at = [(1, "a.py"), (2, "b.py"), (3, "b.py"), (4, "b.py"), (5, "b.py")];
        assert_eq!(rerank_in(&fused, &at, "store")[0].0, 1, "without cosines");
        // Only the closest three count: a far chunk does not sink a file.
        let cosines = HashMap::from([(1, 0.1), (2, 0.6), (3, 0.6), (4, 0.6), (5, -0.5)]);
        let reranked = rerank_with(&fused, &at, &cosines, &HashSet::new(), "store");
        assert_eq!(reranked[0].0, 2, "{reranked:?}");
    }

    #[test]
    fn what_a_side_ranks_first_stays_among_the_results_asked_for() {
        let mut scored: Vec<(ChunkId, f32)> = (1..=12).map(|id| (id, 1.0 - id as f32 * 0.01)).collect();
        let mut lifts = Lifts::new();
        keep_firsts_within(&mut scored, &[(11, "meaning"), (2, "words")], 10, &mut lifts);
        assert_eq!(order(&scored), [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10, 12], "11 just above the tenth");
        assert!(scored[9].1 > scored[10].1);
        assert_eq!(lifts[&11], [Lift::SideFirst { by: "meaning", within: 10 }]);
        assert!(!lifts.contains_key(&2), "already within: nothing done");
        // A tie above the place does not carry the lifted one past it.
        let mut tied = vec![(1, 0.5), (2, 0.5), (3, 0.4), (4, 0.3)];
        keep_firsts_within(&mut tied, &[(4, "words")], 2, &mut Lifts::new());
        assert_eq!(order(&tied), [1, 4, 2, 3], "{tied:?}");
        assert!(tied.windows(2).all(|w| w[0].1 >= w[1].1), "still best first: {tied:?}");
    }

    #[test]
    fn the_last_places_of_the_first_page_go_to_files_not_yet_shown() {
        // Eleven chunks of a.rs lead; b.rs's and c.rs's come 12th and 13th.
        let mut scored: Vec<(ChunkId, f32)> = (1..=13).map(|id| (id, 1.0 - id as f32 * 0.01)).collect();
        let file = |id: &ChunkId| {
            Some(match id {
                12 => "b.rs",
                13 => "c.rs",
                _ => "a.rs",
            })
        };
        let mut lifts = Lifts::new();
        fresh_files_last(&mut scored, &file, &mut lifts);
        assert_eq!(order(&scored), [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 9, 10, 11]);
        assert!(scored.windows(2).all(|w| w[0].1 >= w[1].1), "still best first: {scored:?}");
        assert_eq!(lifts[&12], [Lift::FreshFile { place: 9 }]);
        assert_eq!(lifts[&13], [Lift::FreshFile { place: 10 }]);
        // A page that shows other files already, or no other file: no change.
        let mut mixed: Vec<(ChunkId, f32)> = (1..=13).map(|id| (id, 1.0 - id as f32 * 0.01)).collect();
        let alternate = |id: &ChunkId| Some(if id % 2 == 0 { "b.rs" } else { "a.rs" });
        fresh_files_last(&mut mixed, &alternate, &mut Lifts::new());
        assert_eq!(order(&mixed), (1..=13).collect::<Vec<_>>());
        let mut alone: Vec<(ChunkId, f32)> = (1..=13).map(|id| (id, 1.0 - id as f32 * 0.01)).collect();
        fresh_files_last(&mut alone, &|_| Some("a.rs"), &mut Lifts::new());
        assert_eq!(order(&alone), (1..=13).collect::<Vec<_>>());
    }

    #[test]
    fn further_chunks_of_a_file_step_back_unless_kept() {
        // a.rs's three chunks lead; b.rs's one comes fourth.
        let fused = [(1, 0.0300), (2, 0.0299), (3, 0.0298), (4, 0.0250)];
        let at = [(1, "a.rs"), (2, "a.rs"), (3, "a.rs"), (4, "b.rs")];
        assert_eq!(order(&rerank_in(&fused, &at, "store")), [1, 4, 2, 3]);
        // A further chunk kept (its own names answer the query, or a side ranks it among its best) keeps its place.
        let kept = HashSet::from([2]);
        assert_eq!(order(&rerank_with(&fused, &at, &HashMap::new(), &kept, "store")), [1, 2, 4, 3]);
    }
}
