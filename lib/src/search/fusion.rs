//! How the candidates of each side become one ranking: reciprocal-rank
//! fusion of the semantic and the lexical ranking, raised for chunks whose
//! own names answer the query, reranked for what their files are
//! (`rerank`), cut at the threshold.
//!
//! What `score` means: in semantic and hybrid mode it is the cosine
//! similarity of query and chunk (-1..1) whatever decided the order, so a
//! threshold means the same in both. In lexical mode it is BM25 mapped onto
//! 0..1 (`scoring::bm25::bounded`). What `relevance` means: what the order
//! follows, so that it is descending: the fused score in hybrid mode
//! (`relevance`), the score otherwise. What `fit` means: the relevance on a
//! bounded scale (`fit`), the one number people are shown.

use std::collections::{HashMap, HashSet};

use super::lexical;
use super::names::{score_chunks, QueryWords};
use super::rerank::{keep_firsts_within, rerank, Evidence, QueryShape, LEADERS};
use super::statics;
use super::vectors::VectorTable;
use super::why::{self, MeaningBy, Named, Ranked, Why};
use super::{Ranking, SearchRequest};
use crate::chunk::defined_names;
use crate::scoring::bm25;
use crate::scoring::rrf::{first_places, fuse, relevance, LEXICAL_WEIGHT, STATIC_WEIGHT};
use crate::store::{ChunkId, IndexReader, StoreError};
use crate::terms::stored_names;

/// How many candidates each ranking contributes before fusion.
pub(super) const CANDIDATE_POOL: usize = 100;

/// Candidates looked at per result wanted, for the places that chunks
/// joining better ones leave free (`join`).
pub(super) const JOIN_SPARE: usize = 3;

/// How many candidates each ranking contributes for `k` results: the
/// pool, and past it enough for the places joins free (`-k 100` over one
/// long function came back with 68 of its 98 places).
pub(super) fn candidate_pool(k: usize) -> usize {
    k.saturating_mul(JOIN_SPARE).max(CANDIDATE_POOL)
}

/// A candidate chunk with its score (what the threshold cuts), its
/// relevance (what it is ordered by) and its fit (the relevance bounded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Scored {
    pub id: ChunkId,
    pub score: f32,
    pub relevance: f32,
    pub fit: f32,
}

impl Scored {
    /// A candidate whose score is what it is ordered by: a cosine (-1..1)
    /// or mapped BM25 (0..1), bounded already, so its own fit.
    fn ordered_by_score((id, score): (ChunkId, f32)) -> Scored {
        Scored { id, score, relevance: score, fit: score }
    }

    /// A hybrid candidate, ordered by its fused score (`relevance`).
    fn fused(id: ChunkId, score: f32, fused: f32) -> Scored {
        let relevance = relevance(fused);
        Scored { id, score, relevance, fit: fit(relevance) }
    }
}

/// A hybrid relevance on 0..1, the same order: `tanh`, which keeps a weak
/// hit's small relevance about as it is (0.2 -> 0.20) and bounds what
/// names and file evidence add past first place (1 -> 0.76, 2 -> 0.96).
/// Its bands mean what a cosine's do (`format::score_band`): 0.6 and up
/// (relevance 0.69: ranked in the top 30 or so of both sides, or first by
/// one with its file's support) is strong; 0.45 and up (relevance 0.49,
/// first by one side alone) fair; below, weak.
pub(super) fn fit(relevance: f32) -> f32 {
    relevance.tanh()
}

/// One ranking of meaning from the model's (`by_model`, chunks with its
/// vector) and the static table's (`by_static`, every chunk), each a list
/// of (chunk, score) best first: fused by reciprocal ranks, each chunk
/// with the model's cosine where it has one.
pub(super) fn meaning(by_model: Vec<(ChunkId, f32)>, by_static: Vec<(ChunkId, f32)>) -> Vec<(ChunkId, f32)> {
    if by_model.is_empty() {
        return by_static;
    }
    if by_static.is_empty() {
        return by_model;
    }
    let mut scores: HashMap<ChunkId, f32> = by_static.iter().copied().collect();
    scores.extend(by_model.iter().copied());
    let rankings = [(&ids(&by_model)[..], 1.0), (&ids(&by_static)[..], STATIC_WEIGHT)];
    fuse(&rankings).into_iter().map(|(id, _)| (id, scores[&id])).collect()
}

/// What one search ranks by, worked out from the request and its mode.
pub(super) struct Sides<'a> {
    /// The query's vector by the model, when the mode ranks by meaning and
    /// the index has chunks with the model's vector.
    pub vector: Option<&'a [f32]>,
    /// The query as the static table sees it, when the mode ranks by
    /// meaning and the static side ranks too (`Ranking::statics`).
    pub statics: Option<statics::StaticQuery<'a>>,
    /// The full-text expression, when the mode ranks by words.
    pub words: Option<String>,
    /// The query's words for the name signal (hybrid mode).
    pub names: Option<QueryWords>,
}

/// How many candidates are looked at for `k` results: `k * JOIN_SPARE`,
/// or every one ranked when at most `per_file` results may come from one
/// file, since one file may hold most of the best.
fn candidates_kept(request: &SearchRequest<'_>) -> usize {
    match request.per_file {
        Some(_) => usize::MAX,
        None => request.k * JOIN_SPARE,
    }
}

/// What one draw of `pool` candidates from each side gave.
pub(super) struct Drawn {
    /// The best candidates, each with its score, best first, those the
    /// threshold keeps, at most `candidates_kept` of them.
    pub scored: Vec<Scored>,
    /// Why each ranked where it did.
    pub whys: HashMap<ChunkId, Why>,
    /// Whether a side drew all `pool` it could: it may rank more.
    pub cut_short: bool,
}

/// The best candidates for `request` from `pool` of each side (a side
/// ranked already, `Ranking`, is taken as it is).
pub(super) fn scored_candidates(
    store: &dyn IndexReader,
    ranking: &mut Ranking<'_>,
    sides: &Sides<'_>,
    request: &SearchRequest<'_>,
    pool: usize,
) -> anyhow::Result<Drawn> {
    let scope = &request.scope;
    let mut semantic = match (sides.vector, ranking.semantic.take(), ranking.vectors) {
        (Some(_), Some(ranked), _) => ranked,
        (Some(v), None, Some(table)) => table.ranking(v, scope, pool),
        (Some(v), None, None) => store.nearest_chunks(v, scope, pool)?,
        (None, _, _) => Vec::new(),
    };
    let mut cut_short = semantic.len() >= pool;
    if let Some(query) = &sides.statics {
        let by_static = query.ranking(store, scope, pool)?;
        cut_short |= by_static.len() >= pool;
        semantic = meaning(semantic, by_static);
    }
    let lexical = match (&sides.words, &ranking.lexical) {
        (Some(_), Some(ranked)) => ranked.clone(),
        (Some(expr), None) => lexical::word_ranking(store, expr, scope, pool, ranking.vectors, None)?,
        (None, _) => Vec::new(),
    };
    cut_short |= lexical.len() >= pool;
    let meaning_by = match (sides.vector.is_some(), sides.statics.is_some()) {
        (true, true) => Some(MeaningBy::ModelAndStatic),
        (true, false) => Some(MeaningBy::Model),
        (false, true) => Some(MeaningBy::Static),
        (false, false) => None,
    };
    let (mut scored, whys) = match (meaning_by, sides.words.is_some()) {
        (Some(by), true) => fused_and_reranked(store, ranking, sides, request, (&semantic, by), &lexical)?,
        (Some(by), false) => {
            // Meaning alone is ordered by its score, as semantic mode
            // promises: fused by ranks, a chunk with both vectors had two
            // votes, and every one came before the static-only chunks
            // (0.47 before 0.97 on an index the model had not filled).
            semantic.sort_by(|a, b| b.1.total_cmp(&a.1));
            let whys = why::one_side(&semantic, Some(by));
            (one_side_kept(semantic.into_iter(), request), whys)
        }
        (None, _) => {
            let whys = why::one_side(&lexical, None);
            (one_side_kept(lexical.into_iter().map(|(id, bm25)| (id, bm25::bounded(bm25))), request), whys)
        }
    };
    scored.truncate(candidates_kept(request));
    Ok(Drawn { scored, whys, cut_short })
}

/// One side's ranking as candidates ordered by their scores, those the
/// threshold cuts left out.
fn one_side_kept(ranking: impl Iterator<Item = (ChunkId, f32)>, request: &SearchRequest<'_>) -> Vec<Scored> {
    ranking.filter(|s| request.threshold.keeps(s.1, false)).map(Scored::ordered_by_score).collect()
}

/// Hybrid mode: both rankings fused, raised by the name signal, reranked
/// for what the candidates' files are, with their cosines as scores; and
/// why each of those kept ranked where it did.
fn fused_and_reranked(
    store: &dyn IndexReader,
    ranking: &Ranking<'_>,
    sides: &Sides<'_>,
    request: &SearchRequest<'_>,
    (semantic, meaning_by): (&[(ChunkId, f32)], MeaningBy),
    lexical: &[(ChunkId, f64)],
) -> anyhow::Result<(Vec<Scored>, HashMap<ChunkId, Why>)> {
    let (fused, named) = fused_ranking(store, semantic, lexical, sides.names.as_ref())?;
    let places = lexical::places(store, &ids(&fused), ranking.vectors)?;
    let cosines: HashMap<ChunkId, f32> = semantic.iter().copied().collect();
    // Meaning ranked by static vectors alone names no leaders: its best
    // are often one file's chunks that all say the question's words.
    let leaders: &[(ChunkId, f32)] = if sides.vector.is_some() { semantic } else { &[] };
    let shape = QueryShape::of(request.query);
    let defining = symbol_definitions(store, &fused, &named, lexical, &shape)?;
    let kept = kept_in_place(named.keys().chain(&defining).copied().collect(), leaders, lexical);
    let evidence = Evidence { places: &places, cosines: &cosines, kept: &kept, defining: &defining };
    let passing: HashSet<ChunkId> =
        defining.iter().copied().chain(concept_definitions(store, lexical, request)?).collect();
    let (mut reranked, mut lifts) = rerank(&fused, &evidence, &shape);
    let firsts: Vec<(ChunkId, &'static str)> = leaders
        .iter()
        .take(1)
        .map(|s| (s.0, "meaning"))
        .chain(lexical.iter().take(1).map(|l| (l.0, "words")))
        .collect();
    // Among the k results, but never in place of the best: one result
    // asked for (-k 1) is the first of ten, not a side's pick.
    keep_firsts_within(&mut reranked, &firsts, request.k.max(2), &mut lifts);
    let scored = with_cosines(store, reranked, (&cosines, &passing), sides, ranking.vectors, request)?;
    let ranked = Ranked {
        meaning: semantic,
        meaning_by: Some(meaning_by),
        words: lexical,
        fused: &fused,
        named: &named,
        lifts,
        scale: relevance(1.0),
    };
    let whys = ranked.whys(scored.iter().map(|s| s.id));
    Ok((scored, whys))
}

/// A fused ranking, best first, with the chunks the name signal raised.
type NamedFusion = (Vec<(ChunkId, f32)>, HashMap<ChunkId, Named>);

/// Both rankings fused, then raised by the name signal; with the chunks
/// it raised.
fn fused_ranking(
    store: &dyn IndexReader,
    semantic: &[(ChunkId, f32)],
    lexical: &[(ChunkId, f64)],
    names: Option<&QueryWords>,
) -> Result<NamedFusion, StoreError> {
    fused_with_names(store, &[(&ids(semantic), 1.0), (&ids(lexical), LEXICAL_WEIGHT)], names)
}

/// Rankings fused by `fuse`, then raised by the name signal; with the
/// chunks it raised.
fn fused_with_names(
    store: &dyn IndexReader,
    rankings: &[(&[ChunkId], f32)],
    names: Option<&QueryWords>,
) -> Result<NamedFusion, StoreError> {
    let mut fused = fuse(rankings);
    let named = match names.filter(|w| !w.is_empty()) {
        Some(words) => boost_by_names(store, &mut fused, words)?,
        None => HashMap::new(),
    };
    Ok((fused, named))
}

/// How many of the best candidates by a query's words are read for a line
/// that defines a name a concept it named lists.
const DEFINITIONS_READ: usize = 20;

/// How many of the candidates whose own names hold the symbol a query
/// names, and of the best by its words, are read for a line that defines
/// it: all of one side's pool. A much-used type names most chunks of its
/// file (each of its methods), and its name is in many more: the 20 best
/// of each left out `pub struct Input` in regex-automata, where `Input`
/// names 60 chunks (audit 271), and a `class Input` nested in a class of
/// another name (review 278).
const SYMBOL_DEFINITIONS_READ: usize = CANDIDATE_POOL;

/// The candidates that define the symbol the query names
/// (`QueryShape::is_symbol`): of the best `SYMBOL_DEFINITIONS_READ` whose
/// own names hold it, and as many of the best by words, those with a line
/// that defines it, at any depth. A chunk's names are the definition
/// it is in and those it makes at its top, so a method of `Engine` is
/// named `Engine` too, and a small class kept whole as one chunk is named
/// for the class alone: only its text tells `class Engine` apart, or holds
/// the method `calculateTotal() {` asked for.
fn symbol_definitions(
    store: &dyn IndexReader,
    fused: &[(ChunkId, f32)],
    named: &HashMap<ChunkId, Named>,
    lexical: &[(ChunkId, f64)],
    shape: &QueryShape,
) -> Result<HashSet<ChunkId>, StoreError> {
    let mut defining = HashSet::new();
    if !shape.names_a_symbol() {
        return Ok(defining);
    }
    let holds_symbol =
        |id: &ChunkId| named.get(id).is_some_and(|n| stored_names(&n.names).any(|name| shape.is_symbol(name)));
    let by_names = fused.iter().map(|f| f.0).filter(holds_symbol).take(SYMBOL_DEFINITIONS_READ);
    let by_words = lexical.iter().map(|l| l.0).take(SYMBOL_DEFINITIONS_READ);
    let mut read = HashSet::new();
    for id in by_names.chain(by_words).filter(|id| read.insert(*id)) {
        let Some(chunk) = store.chunk(id)? else { continue };
        if defined_names(&chunk.file, &chunk.text).into_iter().any(|name| shape.is_symbol(name)) {
            defining.insert(id);
        }
    }
    Ok(defining)
}

/// The candidates that keep their place as further chunks of a file
/// (`Evidence::kept`): `named` (those the name signal raised, and those
/// that define the symbol asked for) and the `LEADERS` best of each ranking.
fn kept_in_place(
    mut named: HashSet<ChunkId>,
    semantic: &[(ChunkId, f32)],
    lexical: &[(ChunkId, f64)],
) -> HashSet<ChunkId> {
    named.extend(semantic.iter().take(LEADERS).map(|s| s.0));
    named.extend(lexical.iter().take(LEADERS).map(|l| l.0));
    named
}

/// The ids of a ranking, in its order.
fn ids<T>(ranking: &[(ChunkId, T)]) -> Vec<ChunkId> {
    ranking.iter().map(|r| r.0).collect()
}

/// The candidates, of the best `DEFINITIONS_READ` by words, that define a
/// name a concept the query named lists (`AccountBook` for a ledger): what
/// the project taught ties them to the question, and a threshold no one
/// chose passes them as it passes a symbol's definition. A cosine says
/// nothing of a synonym the model never saw: `class AccountBook`, taught
/// as the ledger, scored 0.24 for "ledger" and was cut (audit 256).
/// Only a name no English word is (`AccountBook`, `account_book`, matched
/// ignoring case as concepts are), defined by a few candidates: a chunk
/// that only says a synonym (`user`; review 262), or one of many that
/// define `get` (a concept's synonym of fetch; review 265), is no such tie.
fn concept_definitions(
    store: &dyn IndexReader,
    lexical: &[(ChunkId, f64)],
    request: &SearchRequest<'_>,
) -> Result<HashSet<ChunkId>, StoreError> {
    let mut defining = HashSet::new();
    if request.expansion.is_empty() || request.threshold.chosen {
        return Ok(defining);
    }
    let terms: HashSet<String> =
        request.expansion.fired().iter().flat_map(|c| c.terms.iter().map(|t| t.to_lowercase())).collect();
    let taught = |name: &str| is_compound_name(name) && terms.contains(&name.to_lowercase());
    for id in lexical.iter().map(|l| l.0).take(DEFINITIONS_READ) {
        let Some(chunk) = store.chunk(id)? else { continue };
        if defined_names(&chunk.file, &chunk.text).into_iter().any(taught) {
            defining.insert(id);
        }
    }
    if defining.len() > MOST_CONCEPT_DEFINITIONS {
        defining.clear();
    }
    Ok(defining)
}

/// The most candidates that may pass as defining a concept's name: more
/// say the name is common in the project, and none ties the question.
const MOST_CONCEPT_DEFINITIONS: usize = 3;

/// Whether `name` is made of words joined as code joins them
/// (`AccountBook`, `account_book`, `parseHTTP`), not an English word.
fn is_compound_name(name: &str) -> bool {
    let c: Vec<char> = name.chars().collect();
    let hump = |i: usize| {
        c[i].is_uppercase()
            && (c[i - 1].is_lowercase() || (c[i - 1].is_uppercase() && c.get(i + 1).is_some_and(|n| n.is_lowercase())))
    };
    name.contains('_') || (1..c.len()).any(hump)
}

/// The fused order with each chunk's cosine as its score and its fused score
/// as its relevance, those the threshold cuts left out (`Threshold::keeps`;
/// `passing`: the chunks that define the symbol the query names, or a name
/// a concept it named lists), up to
/// `candidates_kept`; chunks the semantic side did not rank get their cosine from
/// memory or the store: the model's where the chunk has its vector, the
/// static one otherwise.
fn with_cosines(
    store: &dyn IndexReader,
    fused: Vec<(ChunkId, f32)>,
    (cosine, passing): (&HashMap<ChunkId, f32>, &HashSet<ChunkId>),
    sides: &Sides<'_>,
    table: Option<&VectorTable>,
    request: &SearchRequest<'_>,
) -> Result<Vec<Scored>, StoreError> {
    let mut scored = Vec::with_capacity(request.k);
    for (id, fused) in fused {
        let by_model = match (cosine.get(&id), sides.vector, table) {
            (Some(&c), _, _) => Some(c),
            (None, Some(vector), Some(table)) => table.score(id, vector),
            (None, Some(vector), None) => store.cosine(id, vector)?,
            (None, None, _) => None,
        };
        let score = match (by_model, &sides.statics) {
            (None, Some(query)) => query.score(store, id)?,
            (score, _) => score,
        };
        let Some(score) = score else { continue };
        if request.threshold.keeps(score, passing.contains(&id)) {
            scored.push(Scored::fused(id, score, fused));
            if scored.len() == candidates_kept(request) {
                break;
            }
        }
    }
    Ok(scored)
}

/// Below this score a name match is chance (one common part shared) and
/// moves nothing.
pub(super) const MIN_NAME_SCORE: f32 = 0.28;

/// What a name match adds to a chunk's fused score, in reciprocal ranks: a
/// perfect one is worth `NAME_WEIGHT` times first place in one ranking.
/// Past 0.75 a name starts to outweigh what the chunk says (bench/TUNING.md).
pub(super) const NAME_WEIGHT: f32 = 0.75;

/// The boost fusion adds for a chunk whose names score `score`.
pub(super) fn boost(score: f32) -> f32 {
    if score > MIN_NAME_SCORE {
        first_places(NAME_WEIGHT * score)
    } else {
        0.0
    }
}

/// Each fused candidate's name-match boost (`boost`) added to its score,
/// re-ranked: a chunk whose own name says what the query asks rises above
/// those that only mention its words. Returns the chunks it raised, with
/// their names, scores and boosts.
pub(super) fn boost_by_names(
    store: &dyn IndexReader,
    fused: &mut [(ChunkId, f32)],
    query: &QueryWords,
) -> Result<HashMap<ChunkId, Named>, StoreError> {
    let mut names = store.names_of(&fused.iter().map(|f| f.0).collect::<Vec<_>>())?;
    let chunks: Vec<(ChunkId, String)> =
        fused.iter().filter_map(|&(id, _)| names.remove(&id).map(|n| (id, n))).collect();
    if chunks.is_empty() {
        return Ok(HashMap::new());
    }
    let named_chunks = store.named_chunks()?;
    let mut failed = None;
    let scores = score_chunks(&chunks, query, named_chunks, &mut |term| match store.chunks_naming(term) {
        Ok(n) => n,
        Err(e) => {
            failed.get_or_insert(e);
            0
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let mut named = HashMap::new();
    let names: HashMap<ChunkId, String> = chunks.into_iter().collect();
    for (id, fused_score) in fused.iter_mut() {
        let score = scores.get(id).copied().unwrap_or(0.0);
        let raised = boost(score);
        if raised > 0.0 {
            *fused_score += raised;
            let names = names.get(id).cloned().unwrap_or_default();
            named.insert(*id, Named { names, score, added: raised });
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compound_name_is_no_english_word() {
        for name in ["AccountBook", "account_book", "parseHTTP", "getX", "HTTPServer"] {
            assert!(is_compound_name(name), "{name}");
        }
        for name in ["get", "Ledger", "ledger", "HTTP", "x"] {
            assert!(!is_compound_name(name), "{name}");
        }
    }

    #[test]
    fn one_side_of_meaning_alone_is_the_ranking() {
        let model = vec![(1, 0.9), (2, 0.5)];
        assert_eq!(meaning(model.clone(), Vec::new()), model);
        assert_eq!(meaning(Vec::new(), model.clone()), model);
    }

    #[test]
    fn both_sides_of_meaning_fuse_and_the_model_gives_the_cosine() {
        // Chunk 2 is second by the model and first by the static table:
        // ranked by both, it leads; 3 has no model vector and keeps its
        // static score.
        let fused = meaning(vec![(1, 0.8), (2, 0.7)], vec![(2, 0.4), (3, 0.35), (1, 0.1)]);
        assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 1, 3]);
        assert_eq!(fused[0].1, 0.7, "the model's cosine, not the static one");
        assert_eq!(fused[2].1, 0.35);
    }

    #[test]
    fn weak_matches_add_nothing_and_strong_ones_add_at_most_the_weight() {
        assert_eq!(boost(MIN_NAME_SCORE), 0.0);
        assert!(boost(1.0) > boost(0.5));
        assert!((boost(1.0) - first_places(NAME_WEIGHT)).abs() < 1e-6);
    }
}
