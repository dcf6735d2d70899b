//! How the candidates of each side become one ranking: reciprocal-rank
//! fusion of the semantic and the lexical ranking, raised for chunks whose
//! own names answer the query, reranked for what their files are
//! (`rerank`), cut at the threshold.
//!
//! What `score` means: in semantic and hybrid mode it is the cosine
//! similarity of query and chunk (-1..1) whatever decided the order, so a
//! threshold means the same in both. In lexical mode it is BM25 mapped onto
//! 0..1 (`lexical::bm25_score`). What `relevance` means: what the order
//! follows, so that it is descending: the fused score in hybrid mode
//! (`relevance`), the score otherwise.

use std::collections::{HashMap, HashSet};

use super::fill::{embed_missing, static_ranking};
use super::lexical;
use super::names::{score_chunks, QueryWords};
use super::rerank::{rerank, Evidence, QueryShape, LEADERS};
use super::vectors::VectorTable;
use super::{Ranking, SearchRequest};
use crate::store::{ChunkId, IndexReader, StoreError};

/// Reciprocal-rank fusion's damping constant: ranks below ~60 matter little.
pub(super) const RRF_K: f32 = 60.0;

/// Weight of the lexical ranking in hybrid fusion (the semantic one has 1).
pub(super) const LEXICAL_WEIGHT: f32 = 1.0;

/// How many candidates each ranking contributes before fusion.
pub(super) const CANDIDATE_POOL: usize = 100;

/// Candidates looked at per result wanted, for the places that chunks
/// joining better ones leave free (`join`).
pub(super) const JOIN_SPARE: usize = 3;

/// A candidate chunk with its score (what the threshold cuts) and its
/// relevance (what it is ordered by).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Scored {
    pub id: ChunkId,
    pub score: f32,
    pub relevance: f32,
}

impl Scored {
    /// A candidate whose score is what it is ordered by.
    fn ordered_by_score((id, score): (ChunkId, f32)) -> Scored {
        Scored { id, score, relevance: score }
    }
}

/// A hybrid candidate's fused (and reranked) score as a relevance, in units
/// of a chunk ranked first by both sides: 1 is the top of meaning and words
/// alike, names and file evidence may lift a chunk past it.
pub(super) fn relevance(fused: f32) -> f32 {
    fused * (RRF_K + 1.0) / (1.0 + LEXICAL_WEIGHT)
}

/// Fuse rankings (ids best first, each with a weight) by weighted
/// reciprocal-rank fusion; returns ids with fused scores, best first.
pub(super) fn fuse(rankings: &[(&[ChunkId], f32)]) -> Vec<(ChunkId, f32)> {
    let mut scores: HashMap<ChunkId, f32> = HashMap::new();
    for (ranking, weight) in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            *scores.entry(*id).or_default() += weight / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(ChunkId, f32)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// What one search ranks by, worked out from the request and its mode.
pub(super) struct Sides<'a> {
    /// The query's vector, when the mode ranks by meaning.
    pub vector: Option<&'a [f32]>,
    /// The full-text expression, when the mode ranks by words.
    pub words: Option<String>,
    /// The query's words for the name signal (hybrid mode).
    pub names: Option<QueryWords>,
}

/// The best candidates for `request`, each with its score, best first, at
/// least `threshold` and at most `k * JOIN_SPARE` of them.
pub(super) fn scored_candidates(
    store: &dyn IndexReader,
    ranking: &mut Ranking<'_>,
    sides: &Sides<'_>,
    request: &SearchRequest<'_>,
) -> anyhow::Result<Vec<Scored>> {
    let (k, scope) = (request.k, &request.scope);
    let pool = k.max(CANDIDATE_POOL);
    let mut semantic = match (sides.vector, ranking.semantic.take(), ranking.vectors) {
        (Some(_), Some(ranked), _) => ranked,
        (Some(v), None, Some(table)) => table.ranking(v, scope, pool),
        (Some(v), None, None) => store.nearest_chunks(v, scope, pool)?,
        (None, _, _) => Vec::new(),
    };
    let lexical = match (&sides.words, &ranking.lexical) {
        (Some(_), Some(ranked)) => ranked.clone(),
        (Some(expr), None) => lexical::word_ranking(store, expr, scope, pool, ranking.vectors, None)?,
        (None, _) => Vec::new(),
    };
    if let (Some(vector), Some(filling)) = (sides.vector, ranking.filling.as_mut()) {
        if let Some(by_static) = static_ranking(store, filling, &request.words()?, scope, pool)? {
            let best = candidates_to_fill(store, &semantic, &by_static, &lexical, sides.names.as_ref())?;
            semantic = embed_missing(store, filling, &best, vector, semantic)?;
        }
    }
    let mut scored = match (sides.vector, sides.words.is_some()) {
        (Some(vector), true) => {
            let (fused, named) = fused_ranking(store, &semantic, &lexical, sides.names.as_ref())?;
            let places = lexical::places(store, &ids(&fused), ranking.vectors)?;
            let cosines: HashMap<ChunkId, f32> = semantic.iter().copied().collect();
            let kept = kept_in_place(named, &semantic, &lexical);
            let evidence = Evidence { places: &places, cosines: &cosines, kept: &kept };
            let fused = rerank(&fused, &evidence, &QueryShape::of(request.query));
            with_cosines(store, fused, &cosines, vector, ranking.vectors, request)?
        }
        (Some(_), false) => semantic.into_iter().map(Scored::ordered_by_score).collect(),
        (None, _) => {
            lexical.into_iter().map(|(id, bm25)| Scored::ordered_by_score((id, lexical::bm25_score(bm25)))).collect()
        }
    };
    scored.retain(|s| s.score >= request.threshold);
    scored.truncate(k * JOIN_SPARE);
    Ok(scored)
}

/// The candidates of an index with chunks lacking the model's vector, best
/// first: the model's ranking, the static one and the word one fused
/// equally, raised by the name signal.
fn candidates_to_fill(
    store: &dyn IndexReader,
    semantic: &[(ChunkId, f32)],
    by_static: &[(ChunkId, f32)],
    lexical: &[(ChunkId, f64)],
    names: Option<&QueryWords>,
) -> Result<Vec<ChunkId>, StoreError> {
    let rankings = [(&ids(semantic)[..], 1.0), (&ids(by_static)[..], 1.0), (&ids(lexical)[..], 1.0)];
    Ok(fused_with_names(store, &rankings, names)?.0.into_iter().map(|f| f.0).collect())
}

/// A fused ranking, best first, with the chunks the name signal raised.
type NamedFusion = (Vec<(ChunkId, f32)>, HashSet<ChunkId>);

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
        None => HashSet::new(),
    };
    Ok((fused, named))
}

/// The candidates that keep their place as further chunks of a file
/// (`Evidence::kept`): those the name signal raised and the `LEADERS` best
/// of each ranking.
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

/// The fused order with each chunk's cosine as its score and its fused score
/// as its relevance, those under the threshold left out, up to `k *
/// JOIN_SPARE`; chunks the semantic side did not rank get their cosine from
/// memory or the store.
fn with_cosines(
    store: &dyn IndexReader,
    fused: Vec<(ChunkId, f32)>,
    cosine: &HashMap<ChunkId, f32>,
    vector: &[f32],
    table: Option<&VectorTable>,
    request: &SearchRequest<'_>,
) -> Result<Vec<Scored>, StoreError> {
    let mut scored = Vec::with_capacity(request.k);
    for (id, fused) in fused {
        let score = match (cosine.get(&id), table) {
            (Some(&c), _) => Some(c),
            (None, Some(table)) => table.score(id, vector),
            (None, None) => store.cosine(id, vector)?,
        };
        let Some(score) = score else { continue };
        if score >= request.threshold {
            scored.push(Scored { id, score, relevance: relevance(fused) });
            if scored.len() == request.k * JOIN_SPARE {
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
/// Hybrid mrr@10 as for `QUERY_SHARE`, by weight:
/// 0 (no name signal): 0.554 / 0.626 / 0.432 / 0.569 / 0.487 (mean 0.534);
/// 0.5: 0.639 / 0.635 / 0.488 / 0.602 / 0.605 (0.594);
/// 0.75: 0.659 / 0.640 / 0.498 / 0.586 / 0.606 (0.598);
/// 1.0: 0.670 / 0.627 / 0.506 / 0.577 / 0.621 (0.600).
/// Past 0.75 the mean barely moves while py-asyncio and py-email lose:
/// a name starts to outweigh what the chunk says.
pub(super) const NAME_WEIGHT: f32 = 0.75;

/// The boost fusion adds for a chunk whose names score `score`.
pub(super) fn boost(score: f32) -> f32 {
    if score > MIN_NAME_SCORE {
        NAME_WEIGHT * score / (RRF_K + 1.0)
    } else {
        0.0
    }
}

/// Each fused candidate's name-match boost (`boost`) added to its score,
/// re-ranked: a chunk whose own name says what the query asks rises above
/// those that only mention its words. Returns the chunks it raised.
pub(super) fn boost_by_names(
    store: &dyn IndexReader,
    fused: &mut [(ChunkId, f32)],
    query: &QueryWords,
) -> Result<HashSet<ChunkId>, StoreError> {
    let mut names = store.names_of(&fused.iter().map(|f| f.0).collect::<Vec<_>>())?;
    let chunks: Vec<(ChunkId, String)> =
        fused.iter().filter_map(|&(id, _)| names.remove(&id).map(|n| (id, n))).collect();
    if chunks.is_empty() {
        return Ok(HashSet::new());
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
    let mut named = HashSet::new();
    for (id, fused_score) in fused.iter_mut() {
        let raised = scores.get(id).map_or(0.0, |&s| boost(s));
        if raised > 0.0 {
            *fused_score += raised;
            named.insert(*id);
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement_and_respects_weights() {
        let semantic = [1, 2, 3];
        let lexical = [3, 4];
        let fused = fuse(&[(&semantic, 1.0), (&lexical, 1.0)]);
        assert_eq!(fused[0].0, 3, "ranked by both beats ranked first by one");
        let ids: Vec<ChunkId> = fused.iter().map(|f| f.0).collect();
        assert_eq!(ids, [3, 1, 2, 4]);
        let heavy = fuse(&[(&semantic, 1.0), (&lexical, 0.01)]);
        assert_eq!(heavy[0].0, 1);
    }

    #[test]
    fn weak_matches_add_nothing_and_strong_ones_add_at_most_the_weight() {
        assert_eq!(boost(MIN_NAME_SCORE), 0.0);
        assert!(boost(1.0) > boost(0.5));
        assert!((boost(1.0) - NAME_WEIGHT / (RRF_K + 1.0)).abs() < 1e-6);
    }
}
