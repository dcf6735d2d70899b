//! `GET /status` (how far indexing is) and `GET /health` (whether the
//! server answers, and with what).

use serde_json::json;

use super::http::Response;
use super::{Shared, StoreSlot};
use crate::store;

pub(super) fn status_response(shared: &Shared, store: &mut StoreSlot) -> Response {
    let t = shared.target();
    if store.is_none() {
        *store = store::open_for_reading(&t.root).ok();
    }
    let stats = store.as_ref().and_then(|s| s.stats().ok());
    let state = shared.searcher.live().progress();
    Response::json(
        200,
        &json!({
            "status": if state.indexing { "indexing" } else { "ready" },
            "indexed": state.indexed,
            "total": state.total,
            "files": stats.as_ref().map_or(0, |s| s.files),
            "chunks": stats.as_ref().map_or(0, |s| s.chunks),
            "holes": stats.as_ref().map_or(0, |s| s.holes),
            "version": env!("CARGO_PKG_VERSION"),
            "root": t.root.path.to_string_lossy(),
            "scope": t.scope_names(),
            "error": state.error,
        }),
    )
}

/// `GET /health`: the server answers; whether the index has completed a
/// run, what it holds and what embeds, and whether requests need a token.
pub(super) fn health_response(shared: &Shared, store: &mut StoreSlot) -> Response {
    let t = shared.target();
    if store.is_none() {
        *store = store::open_for_reading(&t.root).ok();
    }
    let chunks = store.as_ref().and_then(|s| s.stats().ok()).map_or(0, |s| s.chunks);
    let state = shared.searcher.live().progress();
    Response::json(
        200,
        &json!({
            "status": "ok",
            "index_ready": state.ran && !state.indexing,
            "chunks": chunks,
            "embedder_model": t.config.embedder_model,
            "auth_enabled": shared.token.is_some(),
            "version": env!("CARGO_PKG_VERSION"),
        }),
    )
}
