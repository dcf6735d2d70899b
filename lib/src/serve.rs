//! vg-serve's server: a warm model and index answering HTTP searches while
//! a background thread keeps the index fresh (the spec's SearchServer and
//! its HTTP rules; ProgressiveModesContinueWhileIndexing).
//!
//! Threads: `workers` connection handlers, each with its own read-only
//! SQLite connection, the indexer of a `live::LiveIndex` that re-walks the
//! served paths every `refresh`, and the caller's thread, which waits for
//! `shutdown`. Searching and indexing themselves are `live`'s.

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use crate::config::SearchMode;
use crate::http::{self, Limits, Request, Response};
use crate::index::{EmbedderPool, LazyEmbedder};
use crate::live::{LiveIndex, Searcher, Target};
use crate::records::HitRecord;
use crate::search;
use crate::store::Store;

/// Largest `k` a request may ask for.
pub const MAX_K: usize = 1000;

/// How it is served.
pub struct ServeSettings {
    pub addr: SocketAddr,
    /// Bearer token every request must carry, if set.
    pub token: Option<String>,
    pub workers: usize,
    /// How often the indexer looks for changed files.
    pub refresh: Duration,
    pub limits: Limits,
}

/// Where the server reports: the URL once listening, and notes.
pub trait ServeEvents: Send + Sync {
    fn listening(&self, url: &str);
    fn note(&self, message: &str);
}

struct Shared {
    searcher: Searcher,
    token: Option<String>,
    shutdown: Arc<AtomicBool>,
    events: Arc<dyn ServeEvents>,
    limits: Limits,
}

impl Shared {
    fn target(&self) -> &Target {
        &self.searcher.live().target
    }
}

/// Serve until `shutdown` is set. With `config.full_index`, the index is
/// brought up to date before the server listens. `query_embedder` is loaded
/// before listening; `index_embedders` only when something needs embedding.
pub fn serve(
    target: Target,
    settings: ServeSettings,
    query_embedder: LazyEmbedder,
    mut index_embedders: EmbedderPool,
    shutdown: Arc<AtomicBool>,
    events: Arc<dyn ServeEvents>,
) -> Result<()> {
    let full_index = target.config.full_index;
    let notes = Arc::clone(&events);
    let live = LiveIndex::new(target, Arc::clone(&shutdown), Box::new(move |m| notes.note(m)));
    let searcher = Searcher::new(Arc::clone(&live), query_embedder);
    searcher.load_model().context("cannot load the query model")?;
    let mut first = true;
    if full_index {
        live.index_once(&mut index_embedders, true)?;
        first = false;
    }
    let shared =
        Arc::new(Shared { searcher, token: settings.token, shutdown, events, limits: settings.limits });
    let listener = TcpListener::bind(settings.addr).with_context(|| format!("cannot listen on {}", settings.addr))?;
    let local = listener.local_addr().context("cannot read the listening address")?;
    shared.events.listening(&format!("http://{local}"));
    let indexer = live.spawn(index_embedders, settings.refresh, first);
    for _ in 0..settings.workers.max(1) {
        let listener = listener.try_clone().context("cannot share the listening socket")?;
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || accept_loop(&shared, &listener));
    }
    while !shared.shutdown.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    shared.events.note("shutting down");
    // The indexer stops after the file in hand; what it wrote is committed.
    let _ = indexer.join();
    Ok(())
}

fn accept_loop(shared: &Shared, listener: &TcpListener) {
    // Each worker reads through its own connection to the index.
    let mut store: Option<Store> = None;
    loop {
        match listener.accept() {
            Ok((stream, _)) => connection(shared, stream, &mut store),
            // Out of file descriptors and the like: back off, keep serving.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Answer requests on one connection until it closes or asks to.
fn connection(shared: &Shared, stream: TcpStream, store: &mut Option<Store>) {
    let idle = shared.limits.head_deadline;
    let _ = stream.set_read_timeout(Some(idle));
    let _ = stream.set_write_timeout(Some(idle));
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    loop {
        let request = match http::read_request(&mut reader, &shared.limits) {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                if let Some(status) = e.status() {
                    let _ = http::write_response(&mut writer, &Response::error(status, &e.message()), false, true);
                }
                return;
            }
        };
        let keep_alive = request.keep_alive() && !shared.shutdown.load(Ordering::SeqCst);
        let response = catch_unwind(AssertUnwindSafe(|| respond(shared, &request, store))).unwrap_or_else(|_| {
            *store = None;
            shared.events.note(&format!("a request handler panicked on {}", request.target));
            Response::error(500, "internal error while handling the request")
        });
        let with_body = request.method != "HEAD";
        if http::write_response(&mut writer, &response, keep_alive, with_body).is_err() || !keep_alive {
            let _ = writer.flush();
            return;
        }
    }
}

/// The response to one request (the spec's HTTP rules, in order).
fn respond(shared: &Shared, request: &Request, store: &mut Option<Store>) -> Response {
    if let Some(token) = &shared.token {
        let offered = request.header("authorization").and_then(bearer_token);
        if !offered.is_some_and(|o| http::secrets_equal(o, token)) {
            return Response::error(401, "a valid bearer token is required (Authorization: Bearer TOKEN)")
                .with_header("WWW-Authenticate", "Bearer");
        }
    }
    if request.method != "GET" {
        return Response::error(405, &format!("method {} is not allowed; use GET", request.method))
            .with_header("Allow", "GET");
    }
    let target = match http::parse_target(&request.target) {
        Ok(t) => t,
        Err(e) => return Response::error(400, &e),
    };
    match target.path.as_str() {
        "/search" => search_response(shared, &target, store),
        "/status" => status_response(shared, store),
        "/health" => Response::json(200, &json!({ "status": "ok" })),
        other => Response::error(404, &format!("no such path {other:?}; the paths are /search, /status and /health")),
    }
}

fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A search's parameters, checked.
struct SearchParams {
    query: String,
    k: usize,
    threshold: f32,
    mode: SearchMode,
}

fn search_params(shared: &Shared, target: &http::Target) -> Result<SearchParams, String> {
    let config = &shared.target().config;
    let query = target.param("q").unwrap_or("").to_string();
    if query.trim().is_empty() {
        return Err("the query parameter q is missing or empty".into());
    }
    search::check_query(&query).map_err(|e| e.to_string())?;
    let k = match target.param("k") {
        None => config.top_k.min(MAX_K),
        Some(v) => match v.parse::<usize>() {
            Ok(k) if (1..=MAX_K).contains(&k) => k,
            _ => return Err(format!("k must be a whole number from 1 to {MAX_K}, got {v:?}")),
        },
    };
    let threshold = match target.param("threshold") {
        None => config.threshold,
        Some(v) => match v.parse::<f32>() {
            Ok(t) if t.is_finite() && (-1.0..=1.0).contains(&t) => t,
            _ => return Err(format!("threshold must be a number from -1 to 1, got {v:?}")),
        },
    };
    let mode = match target.param("mode") {
        None => config.mode,
        Some("hybrid") => SearchMode::Hybrid,
        Some("semantic") => SearchMode::Semantic,
        Some("lexical") => SearchMode::Lexical,
        Some(v) => return Err(format!("mode must be hybrid, semantic or lexical, got {v:?}")),
    };
    Ok(SearchParams { query, k, threshold, mode })
}

fn search_response(shared: &Shared, target: &http::Target, store: &mut Option<Store>) -> Response {
    let params = match search_params(shared, target) {
        Ok(p) => p,
        Err(message) => return Response::error(400, &message),
    };
    match run_search(shared, &params, store) {
        Ok(body) => Response { status: 200, content_type: "application/x-ndjson", headers: Vec::new(), body },
        Err(e) => Response::error(500, &format!("search failed: {e:#}")),
    }
}

/// NDJSON hit records for a search (HttpSearchReturnsResults), or the
/// failure (HttpSearchReturnsFailure).
fn run_search(shared: &Shared, params: &SearchParams, store: &mut Option<Store>) -> Result<Vec<u8>> {
    let hits = shared.searcher.search(store, &params.query, params.k, params.threshold, params.mode)?;
    let root = &shared.target().root;
    let mut body = Vec::with_capacity(hits.len() * 512);
    for hit in hits {
        crate::records::write_record(&mut body, &HitRecord::new(root, hit, &params.query))?;
    }
    Ok(body)
}

fn status_response(shared: &Shared, store: &mut Option<Store>) -> Response {
    let t = shared.target();
    if store.is_none() {
        *store = Store::open_for_reading(&t.root).ok();
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
