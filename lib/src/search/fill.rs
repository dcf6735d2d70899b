//! The static tier at search time. An index built without the model holds
//! static vectors only; a search then finds its candidates by words, names
//! and static vectors as well as the model's vectors it has, embeds the best
//! of them that lack the model's vector, and ranks the semantic side by the
//! model's vectors alone, as on a fully embedded index: nothing is scored
//! against a vector it does not have. What was embedded goes back to the
//! caller to store, so it is never embedded twice.

use super::vectors::dot;
use crate::embed::{Embedder, StaticModel};
use crate::store::{ChunkId, IndexReader, Scope};

/// How many of the best candidates are embedded when they lack the model's
/// vector. Hybrid mrr@10 on the dev evals (py-logging / py-asyncio /
/// rs-regex-automata) from a static index, queries in order: 40 gives
/// 0.635 / 0.637 / 0.495, 80 gives 0.654 / 0.632 / 0.502, where the fully
/// embedded index gives 0.654 / 0.633 / 0.501.
pub const LAZY_CANDIDATES: usize = 80;

/// What a search needs to embed candidates on the way.
pub struct Filling<'a> {
    pub statics: &'a StaticModel,
    pub embedder: &'a mut dyn Embedder,
    /// The vectors embedded on the way, for the caller to store
    /// (`store::IndexWriter::set_vectors`).
    pub embedded: Vec<super::Embedded>,
}

/// The static side of a search: chunks in scope by static vectors, best
/// first; None when every chunk has the model's vector (nothing to fill).
pub(super) fn static_ranking(
    store: &dyn IndexReader,
    filling: &Filling<'_>,
    query: &str,
    scope: &Scope,
    pool: usize,
) -> anyhow::Result<Option<Vec<(ChunkId, f32)>>> {
    if store.unembedded_count()? == 0 {
        return Ok(None);
    }
    Ok(Some(store.nearest_static(&filling.statics.embed(query), scope, pool)?))
}

/// `semantic` (the model's ranking over the chunks that have its vector)
/// with those of `best` (the fused candidates, best first) that lacked it
/// embedded and ranked in by their cosine to the query's `vector`.
pub(super) fn embed_missing(
    store: &dyn IndexReader,
    filling: &mut Filling<'_>,
    best: &[ChunkId],
    vector: &[f32],
    semantic: Vec<(ChunkId, f32)>,
) -> anyhow::Result<Vec<(ChunkId, f32)>> {
    let missing = store.unembedded(&best[..best.len().min(LAZY_CANDIDATES)])?;
    if missing.is_empty() {
        return Ok(semantic);
    }
    let texts: Vec<&str> = missing.iter().map(|m| m.text.as_str()).collect();
    let vectors = filling.embedder.embed(&texts)?;
    let mut ranked = semantic;
    for (m, v) in missing.iter().zip(vectors) {
        ranked.push((m.id, dot(&v, vector)));
        filling.embedded.push((m.id, v));
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(ranked)
}
