//! `GET /status` (how far indexing is) and `GET /health` (whether the
//! server answers, and with what).

use serde_json::json;

use super::http::Response;
use super::{Shared, StoreSlot};

pub(super) fn status_response(shared: &Shared, store: &mut StoreSlot) -> Response {
    Response::json(200, &serde_json::to_value(shared.searcher.status(store)).unwrap_or_default())
}

/// `GET /health`: the server answers; whether the index has completed a
/// run and can be read, what it holds and what embeds, and whether requests need a token.
pub(super) fn health_response(shared: &Shared, store: &mut StoreSlot) -> Response {
    let live = shared.searcher.live();
    let status = live.status(store);
    Response::json(
        200,
        &json!({
            "status": "ok",
            // Not while another process's run is under way (`/status` says indexing).
            "index_ready": live.is_ready() && status.index_error.is_none() && live.others_run(store).is_none(),
            "chunks": status.chunks,
            "embedder_model": status.embedder_model,
            "auth_enabled": shared.token.is_some(),
            "version": status.version,
        }),
    )
}
