//! How scores are computed, apart from where the data lives: BM25 term by
//! term and its bounded form, the MaxScore bounds that let a word search
//! leave chunks unsummed, and reciprocal-rank fusion with its weights.
//! `store` asks these for the sums it runs; `search` and `history` for the
//! orders they make.

pub(crate) mod bm25;
// Only the shared store's word search leaves chunks unsummed.
#[cfg(feature = "shared-store")]
pub(crate) mod maxscore;
pub(crate) mod rrf;
