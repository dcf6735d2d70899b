//! Running a search against an index: embed the query, score, scope.
//! Implements SearchCompletesOrFails: a query that cannot be embedded is an
//! error, never an empty result.

use anyhow::{anyhow, Context, Result};

use crate::embed::Embedder;
use crate::store::{Hit, Scope, Store};

/// Embed `query` and return the best hits in `scope`.
pub fn search(store: &Store, embedder: &mut dyn Embedder, query: &str, scope: &Scope, k: usize, threshold: f32) -> Result<Vec<Hit>> {
    let query = check_query(query)?;
    let mut vectors = embedder.embed(&[query]).context("cannot embed the query")?;
    let vector = vectors.pop().ok_or_else(|| anyhow!("cannot embed the query: no vector returned"))?;
    store.search(&vector, scope, k, threshold)
}

/// Longest query accepted, in bytes; the model sees at most 256 tokens anyway.
pub const MAX_QUERY_BYTES: usize = 4096;

/// Reject queries that cannot mean anything to the model.
pub fn check_query(query: &str) -> Result<&str> {
    let trimmed = query.trim();
    if trimmed.is_empty() {
        return Err(anyhow!("the query is empty"));
    }
    if trimmed.len() > MAX_QUERY_BYTES {
        return Err(anyhow!("the query is {} bytes; the limit is {MAX_QUERY_BYTES}", trimmed.len()));
    }
    Ok(trimmed)
}
