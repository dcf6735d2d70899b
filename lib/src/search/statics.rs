//! The static tier at search time. An index run gives every chunk a static
//! vector (`embed::StaticModel`) and the model's vector only when asked
//! (`--full`) or when a server's background fill reaches it. A search ranks
//! meaning by both, and never runs the model over candidates to answer:
//! the static ranking covers every chunk in scope, the model's ranking the
//! chunks that have its vector, and where both exist they are fused into one
//! ranking of meaning (`fusion::meaning`).
//! A chunk's score is its cosine to the query by the model where it has the
//! model's vector; otherwise its static cosine mapped onto the model's
//! scale by the table's calibration (`StaticModel::score_of`), so that a
//! threshold cuts the same either way.

use super::VectorTable;
use crate::embed::StaticModel;
use crate::store::{ChunkId, IndexReader, Scope, StoreError};

/// The query as the static table sees it.
pub(super) struct StaticQuery<'a> {
    table: &'a StaticModel,
    vector: Vec<f32>,
    /// No token of the query is in the table (control or invisible
    /// characters only): its vector is zero, and a cosine to it is no
    /// number, so the static side ranks and scores nothing.
    knows_nothing: bool,
    /// The chunks' static vectors in memory (a server's), to rank by
    /// instead of asking the store: an SQL scan of them is most of a search
    /// during a fill (~30 of ~60 ms on tokio).
    held: Option<&'a VectorTable>,
}

impl<'a> StaticQuery<'a> {
    pub(super) fn new(table: &'a StaticModel, query: &str, held: Option<&'a VectorTable>) -> Self {
        let vector = table.embed(query);
        let knows_nothing = vector.iter().all(|&x| x == 0.0);
        StaticQuery { table, vector, knows_nothing, held }
    }

    /// Chunks in scope by their static vectors, best first, at most `pool`,
    /// each with its score on the model's scale.
    pub(super) fn ranking(
        &self,
        store: &dyn IndexReader,
        scope: &Scope,
        pool: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        if self.knows_nothing {
            return Ok(Vec::new());
        }
        let nearest = match self.held {
            Some(held) => held.ranking(&self.vector, scope, pool),
            None => store.nearest_static(&self.vector, scope, pool)?,
        };
        Ok(nearest.into_iter().map(|(id, cosine)| (id, self.table.score_of(cosine))).collect())
    }

    /// One chunk's score on the model's scale; None without a static vector.
    pub(super) fn score(&self, store: &dyn IndexReader, id: ChunkId) -> Result<Option<f32>, StoreError> {
        if self.knows_nothing {
            return Ok(None);
        }
        // A chunk written since the vectors were read is the store's to score.
        let cosine = match self.held.and_then(|held| held.score(id, &self.vector)) {
            Some(cosine) => Some(cosine),
            None => store.static_cosine(id, &self.vector)?,
        };
        Ok(cosine.map(|cosine| self.table.score_of(cosine)))
    }
}
