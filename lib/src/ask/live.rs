//! Asking over a live index (vg-serve's `/v1/ask`, vg-mcp's `ask`): the
//! warm searcher, the caller's connection to the index, and the scope the
//! request is confined to.

use std::collections::HashMap;

use anyhow::Result;

use super::AskSearcher;
use crate::concepts::Expansion;
use crate::live::{Searcher, StoreSlot};
use crate::search::{Hit, SearchRequest};
use crate::store::Scope;

/// A live index to ask of: `searcher` through the caller's `store`, within `scope`.
pub struct LiveAsk<'a> {
    pub searcher: &'a Searcher,
    pub store: &'a mut StoreSlot,
    pub scope: Scope,
}

impl AskSearcher for LiveAsk<'_> {
    fn search(&mut self, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        self.searcher.search(self.store, request)
    }

    fn expand(&self, query: &str) -> Expansion {
        self.searcher.expand(query)
    }

    fn scope(&self) -> Scope {
        self.scope.clone()
    }

    fn counts(&mut self) -> (u64, u64) {
        let status = self.searcher.status(self.store);
        (status.chunks, status.files)
    }

    fn file_states(&mut self) -> HashMap<String, (u64, i64)> {
        let files = self.store.as_ref().and_then(|s| s.files(false).ok()).unwrap_or_default();
        files.into_iter().map(|(path, f)| (path, (f.state.size, f.state.mtime_ns))).collect()
    }
}
