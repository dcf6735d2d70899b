//! The static tier at search time. An index built without the model holds
//! static vectors only; a search then finds its candidates by words, names
//! and static vectors as well as the model's vectors it has, embeds the best
//! of them that lack the model's vector, and ranks the semantic side by the
//! model's vectors alone, as on a fully embedded index: nothing is scored
//! against a vector it does not have. What was embedded goes back to the
//! caller to store, so it is never embedded twice.

use super::fusion::{boost_by_names, fuse};
use super::names::QueryWords;
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

/// The candidates of one search, before fusion.
pub(super) struct Candidates<'r> {
    pub query: &'r str,
    pub vector: &'r [f32],
    pub lexical: &'r [(ChunkId, f64)],
    pub names: Option<&'r QueryWords>,
    pub scope: &'r Scope,
    pub pool: usize,
}

/// `semantic` (the model's ranking over the chunks that have its vector)
/// with the best candidates that lacked it embedded and ranked in; the
/// same ranking when every chunk has the model's vector.
pub(super) fn fill_semantic(
    store: &dyn IndexReader,
    filling: &mut Filling<'_>,
    semantic: Vec<(ChunkId, f32)>,
    c: &Candidates<'_>,
) -> anyhow::Result<Vec<(ChunkId, f32)>> {
    if store.unembedded_count()? == 0 {
        return Ok(semantic);
    }
    let by_static = store.nearest_static(&filling.statics.embed(c.query), c.scope, c.pool)?;
    let ids = |ranking: &[(ChunkId, f32)]| ranking.iter().map(|r| r.0).collect::<Vec<_>>();
    let lexical: Vec<ChunkId> = c.lexical.iter().map(|l| l.0).collect();
    let mut fused = fuse(&[(&ids(&semantic), 1.0), (&ids(&by_static), 1.0), (&lexical, 1.0)]);
    if let Some(words) = c.names.filter(|w| !w.is_empty()) {
        boost_by_names(store, &mut fused, words)?;
    }
    let best: Vec<ChunkId> = fused.iter().take(LAZY_CANDIDATES).map(|f| f.0).collect();
    let missing = store.unembedded(&best)?;
    if missing.is_empty() {
        return Ok(semantic);
    }
    let texts: Vec<&str> = missing.iter().map(|m| m.text.as_str()).collect();
    let vectors = filling.embedder.embed(&texts)?;
    let mut ranked = semantic;
    for (m, v) in missing.iter().zip(vectors) {
        ranked.push((m.id, dot(&v, c.vector)));
        filling.embedded.push((m.id, v));
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(ranked)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
