//! Running a search against an index: embed the query, score, scope.
//! Implements SearchCompletesOrFails: a query that cannot be embedded is an
//! error, never an empty result.

//!
//! What `score` means: in semantic and hybrid mode it is the cosine
//! similarity of query and chunk (-1..1) whatever decided the order, so a
//! threshold means the same in both; hybrid orders by reciprocal-rank
//! fusion of the semantic and the lexical (BM25) ranking, raised for chunks
//! whose own names match the query's words (`names`). In lexical mode no
//! model is loaded and `score` is BM25 mapped onto 0..1 (`x / (1 + x)`).

pub mod lexical;
pub mod names;

use anyhow::{anyhow, Context, Result};

use crate::embed::Embedder;
use crate::project::config::SearchMode;

use crate::store::{Hit, Scope, SearchQuery, Store, VectorTable};

/// Weight of the lexical ranking in hybrid fusion (the semantic one has 1).
pub const LEXICAL_WEIGHT: f32 = 1.0;

/// Whether `mode` needs the query embedded.
pub fn needs_embedder(mode: SearchMode) -> bool {
    mode != SearchMode::Lexical
}

/// Return the best hits in `scope` for `query`, ranked as `mode` says.
/// `embedder` may be None only in lexical mode.
pub fn search(
    store: &Store,
    embedder: Option<&mut dyn Embedder>,
    query: &str,
    mode: SearchMode,
    scope: &Scope,
    k: usize,
    threshold: f32,
) -> Result<Vec<Hit>> {
    let vector = embed_query(embedder, query, mode)?;
    let ranking = Ranking { vectors: None, vector: vector.as_deref(), lexical: None };
    search_embedded(store, ranking, query, mode, scope, k, threshold)
}

/// What a search ranks by, worked out before the search proper so that a
/// long-running caller can do it its own way (in parallel, from memory).
#[derive(Default)]
pub struct Ranking<'a> {
    /// The index's vectors in memory, to rank by instead of asking SQLite.
    pub vectors: Option<&'a VectorTable>,
    /// The query's vector (`embed_query`), when the mode needs one.
    pub vector: Option<&'a [f32]>,
    /// The lexical ranking (`lexical_ranking`), if it was already run.
    pub lexical: Option<Vec<(i64, f64)>>,
}

/// The lexical side of a search on its own: chunks by BM25, best first, as
/// many as fusion considers; None when `mode` does not rank by words or the
/// query has none.
pub fn lexical_ranking(
    store: &Store,
    vectors: Option<&VectorTable>,
    query: &str,
    mode: SearchMode,
    scope: &Scope,
    k: usize,
) -> Result<Option<Vec<(i64, f64)>>> {
    let words = lexical::match_expression(check_query(query)?);
    match words {
        Some(expr) if mode != SearchMode::Semantic => Ok(Some(store.lexical_candidates(&expr, scope, k, vectors)?)),
        _ => Ok(None),
    }
}

/// The query's vector when `mode` needs one (None in lexical mode). Split
/// from the search so that a server holds its model only while embedding.
pub fn embed_query(embedder: Option<&mut dyn Embedder>, query: &str, mode: SearchMode) -> Result<Option<Vec<f32>>> {
    let query = check_query(query)?;
    match (needs_embedder(mode), embedder) {
        (false, _) => Ok(None),
        (true, Some(e)) => {
            let mut vectors = e.embed(&[query]).context("cannot embed the query")?;
            Ok(Some(vectors.pop().ok_or_else(|| anyhow!("cannot embed the query: no vector returned"))?))
        }
        (true, None) => Err(anyhow!("{mode} search needs the embedding model")),
    }
}

/// The search itself, given what `Ranking` says was worked out already.
pub fn search_embedded(
    store: &Store,
    ranking: Ranking<'_>,
    query: &str,
    mode: SearchMode,
    scope: &Scope,
    k: usize,
    threshold: f32,
) -> Result<Vec<Hit>> {
    let Ranking { vectors, vector, lexical: lexical_ranked } = ranking;
    let query = check_query(query)?;
    let words = lexical::match_expression(query);
    if mode == SearchMode::Lexical && words.is_none() {
        return Err(anyhow!("the query has no words to match in lexical mode (only punctuation or common words)"));
    }
    if needs_embedder(mode) && vector.is_none() {
        return Err(anyhow!("{mode} search needs the query's vector"));
    }
    let request = SearchQuery {
        vector: if mode == SearchMode::Lexical { None } else { vector },
        lexical: if mode == SearchMode::Semantic { None } else { words },
        lexical_weight: LEXICAL_WEIGHT,
        vectors,
        lexical_ranked,
        names: (mode == SearchMode::Hybrid).then(|| crate::search::names::QueryWords::of(query)),
    };
    store.search(&request, scope, k, threshold)
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
