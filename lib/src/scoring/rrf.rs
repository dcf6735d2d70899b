//! Reciprocal-rank fusion: rankings, each best first and weighted, become
//! one, for hybrid search (meaning and words; a model's and a static
//! table's meaning) and for vg-log's commits alike.

use std::collections::HashMap;
use std::hash::Hash;

/// Reciprocal-rank fusion's damping constant: ranks below ~60 matter little.
pub(crate) const RRF_K: f32 = 60.0;

/// Weight of the lexical ranking in hybrid fusion (the semantic one has 1).
pub(crate) const LEXICAL_WEIGHT: f32 = 1.0;

/// Weight of the static ranking against the model's (1) where both rank
/// meaning: an index the fill has reached in part.
pub(crate) const STATIC_WEIGHT: f32 = 1.0;

/// Fuse rankings (ids best first, each with a weight) by weighted
/// reciprocal-rank fusion; returns ids with fused scores, best first, equal
/// scores by id so that orders are reproducible.
pub(crate) fn fuse<Id: Copy + Eq + Hash + Ord>(rankings: &[(&[Id], f32)]) -> Vec<(Id, f32)> {
    let mut scores: HashMap<Id, f32> = HashMap::new();
    for (ranking, weight) in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            *scores.entry(*id).or_default() += weight / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(Id, f32)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// A hybrid candidate's fused (and reranked) score as a relevance, in units
/// of a chunk ranked first by both sides: 1 is the top of meaning and words
/// alike, names and file evidence may lift a chunk past it.
pub(crate) fn relevance(fused: f32) -> f32 {
    fused * (RRF_K + 1.0) / (1.0 + LEXICAL_WEIGHT)
}

/// What `weight` times first place in one ranking adds to a fused score.
pub(crate) fn first_places(weight: f32) -> f32 {
    weight / (RRF_K + 1.0)
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
        let ids: Vec<i64> = fused.iter().map(|f| f.0).collect();
        assert_eq!(ids, [3, 1, 2, 4]);
        let heavy = fuse(&[(&semantic, 1.0), (&lexical, 0.01)]);
        assert_eq!(heavy[0].0, 1);
    }

    #[test]
    fn first_by_both_sides_is_relevance_one() {
        let both = fuse(&[(&[7], 1.0), (&[7], LEXICAL_WEIGHT)]);
        assert!((relevance(both[0].1) - 1.0).abs() < 1e-6);
        assert!((first_places(1.0 + LEXICAL_WEIGHT) - both[0].1).abs() < 1e-9);
    }
}
