//! vg-serve's server: a warm model and index answering HTTP searches while
//! a background thread keeps the index fresh (the spec's SearchServer and
//! its HTTP rules; ProgressiveModesContinueWhileIndexing).
//!
//! Threads: `workers` connection handlers, each with its own read-only
//! SQLite connection, the indexer of a `live::LiveIndex` that re-walks the
//! served paths every `refresh`, and the caller's thread, which waits for
//! `shutdown`. Searching and indexing themselves are `live`'s.

mod http;

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use crate::embed::Embedder;
use crate::embed::LazyEmbedder;
use crate::index::{EmbedderPool, ThreadedLoader};
use crate::live::{LiveIndex, Searcher, Target};
use crate::project::SearchMode;
use crate::records::HitRecord;
use crate::search;
use crate::store::{self, IndexReader};

/// A worker's connection to the index, opened when first needed.
type StoreSlot = Option<Box<dyn IndexReader>>;
pub use http::Limits;
use http::{Request, Response};

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
    models: ModelPool,
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
    embeddings_loader: ThreadedLoader,
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
    let models = ModelPool::new(embeddings_loader);
    let shared =
        Arc::new(Shared { searcher, models, token: settings.token, shutdown, events, limits: settings.limits });
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
    let mut store: StoreSlot = None;
    loop {
        match listener.accept() {
            Ok((stream, _)) => connection(shared, stream, &mut store),
            // Out of file descriptors and the like: back off, keep serving.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Answer requests on one connection until it closes or asks to.
fn connection(shared: &Shared, stream: TcpStream, store: &mut StoreSlot) {
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
        // The one route with a body: read it here, so that the connection
        // stays in step for the next request.
        let mut body = None;
        if request.method == "POST" && raw_path(&request.target) == EMBEDDINGS_PATH {
            match http::read_body(&mut reader, &request, &shared.limits, MAX_BODY_BYTES) {
                Ok(b) => body = Some(b),
                Err(e) => {
                    if let Some(status) = e.status {
                        let _ = http::write_response(&mut writer, &Response::error(status, &e.message), false, true);
                    }
                    return;
                }
            }
        }
        let keep_alive = request.keep_alive(body.is_some()) && !shared.shutdown.load(Ordering::SeqCst);
        let response = catch_unwind(AssertUnwindSafe(|| respond(shared, &request, body.as_deref(), store)))
            .unwrap_or_else(|_| {
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
fn respond(shared: &Shared, request: &Request, body: Option<&[u8]>, store: &mut StoreSlot) -> Response {
    if let Some(token) = &shared.token {
        let offered = request.header("authorization").and_then(bearer_token);
        if !offered.is_some_and(|o| http::secrets_equal(o, token)) {
            return Response::error(401, "a valid bearer token is required (Authorization: Bearer TOKEN)")
                .with_header("WWW-Authenticate", "Bearer");
        }
    }
    // The embeddings route takes POST (and nothing else); every other path
    // GET only, as HttpRejectsNonGetRequests says.
    if raw_path(&request.target) == EMBEDDINGS_PATH {
        return match (request.method.as_str(), body) {
            ("POST", Some(body)) => embeddings_response(shared, body),
            _ => Response::error(
                405,
                &format!("method {} is not allowed on {EMBEDDINGS_PATH}; use POST", request.method),
            )
            .with_header("Allow", "POST"),
        };
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
        other => Response::error(
            404,
            &format!("no such path {other:?}; the paths are /search, /status, /health and (POST) {EMBEDDINGS_PATH}"),
        ),
    }
}

/// The OpenAI-compatible embeddings route, so that one machine can embed for
/// others (`embedder_source = "remote"` pointed at this server).
pub const EMBEDDINGS_PATH: &str = "/v1/embeddings";
/// Largest request body, in bytes.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Most texts one request may ask to embed.
pub const MAX_INPUTS: usize = 2048;

fn raw_path(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}

/// `POST /v1/embeddings` with `{"input": TEXT or [TEXT...], "model": NAME}`:
/// each text is embedded alone, exactly as an index run here would embed it,
/// so an index built through this server matches one built locally.
fn embeddings_response(shared: &Shared, body: &[u8]) -> Response {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Input {
        One(String),
        Many(Vec<String>),
    }
    #[derive(serde::Deserialize)]
    struct EmbeddingsRequest {
        input: Input,
        model: Option<String>,
        encoding_format: Option<String>,
    }
    let request: EmbeddingsRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            return Response::error(
                400,
                &format!("the body is not an embeddings request ({{\"input\": [...], \"model\": ...}}): {e}"),
            )
        }
    };
    let texts = match request.input {
        Input::One(t) => vec![t],
        Input::Many(ts) => ts,
    };
    if texts.is_empty() || texts.len() > MAX_INPUTS {
        return Response::error(400, &format!("input must hold 1 to {MAX_INPUTS} texts, got {}", texts.len()));
    }
    if request.encoding_format.as_deref().is_some_and(|f| f != "float") {
        return Response::error(400, "only encoding_format \"float\" is supported");
    }
    let model = &shared.target().config.embedder_model;
    if request.model.as_deref().is_some_and(|m| m != model) {
        return Response::error(
            400,
            &format!("this server embeds with {model}, not {:?}", request.model.unwrap_or_default()),
        );
    }
    let embedded = shared.models.with(|m| {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let tokens: usize = refs.iter().map(|t| m.count_tokens(t).min(crate::embed::MAX_TOKENS)).sum();
        m.embed_each(&refs).map(|v| (v, tokens))
    });
    let (vectors, tokens) = match embedded {
        Ok(Ok(v)) => v,
        Ok(Err(e)) | Err(e) => return Response::error(500, &format!("embedding failed: {e:#}")),
    };
    let data: Vec<serde_json::Value> = vectors
        .into_iter()
        .enumerate()
        .map(|(i, v)| json!({ "object": "embedding", "index": i, "embedding": v.unwrap_or_default() }))
        .collect();
    Response::json(
        200,
        &json!({ "object": "list", "data": data, "model": model, "usage": { "prompt_tokens": tokens, "total_tokens": tokens } }),
    )
}

/// Models for the embeddings route: loaded when first needed, one per
/// request at a time, up to one per core.
pub struct ModelPool {
    loader: ThreadedLoader,
    idle: Mutex<Vec<Box<dyn Embedder>>>,
    loaded: AtomicUsize,
    max: usize,
    returned: Condvar,
}

impl ModelPool {
    pub fn new(loader: ThreadedLoader) -> Self {
        let max = std::thread::available_parallelism().map_or(1, |n| n.get());
        ModelPool { loader, idle: Mutex::new(Vec::new()), loaded: AtomicUsize::new(0), max, returned: Condvar::new() }
    }

    /// Run `f` with a model of the pool (loading one if none is free and
    /// fewer than `max` exist, else waiting for one).
    fn with<T>(&self, f: impl FnOnce(&mut dyn Embedder) -> T) -> Result<T> {
        let mut model = {
            let mut idle = crate::live::lock(&self.idle);
            loop {
                if let Some(m) = idle.pop() {
                    break m;
                }
                if self.loaded.load(Ordering::SeqCst) < self.max {
                    self.loaded.fetch_add(1, Ordering::SeqCst);
                    drop(idle);
                    match (self.loader)(1) {
                        Ok(m) => break m,
                        Err(e) => {
                            self.loaded.fetch_sub(1, Ordering::SeqCst);
                            return Err(e);
                        }
                    }
                }
                idle = self.returned.wait(idle).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let out = f(&mut *model);
        crate::live::lock(&self.idle).push(model);
        self.returned.notify_one();
        Ok(out)
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
    filter: search::FileFilter,
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
    let when = |name: &str| target.param(name).filter(|v| !v.is_empty());
    let filter = search::FileFilter::from_flags(
        when("changed_within"),
        when("changed_before"),
        &target.all("size"),
        &target.all("exclude"),
        std::time::SystemTime::now(),
    )?;
    Ok(SearchParams { query, k, threshold, mode, filter })
}

fn search_response(shared: &Shared, target: &http::Target, store: &mut StoreSlot) -> Response {
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
fn run_search(shared: &Shared, params: &SearchParams, store: &mut StoreSlot) -> Result<Vec<u8>> {
    let mut request = shared.searcher.request(&params.query, params.k, params.threshold, params.mode);
    request.filter = params.filter.clone();
    let hits = shared.searcher.search(store, &request)?;
    let root = &shared.target().root;
    let mut body = Vec::with_capacity(hits.len() * 512);
    for hit in hits {
        crate::records::write_record(&mut body, &HitRecord::new(root, hit, &params.query))?;
    }
    Ok(body)
}

fn status_response(shared: &Shared, store: &mut StoreSlot) -> Response {
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
