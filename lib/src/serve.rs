//! vg-serve's server: a warm model and index answering HTTP searches while
//! a background thread keeps the index fresh (the spec's SearchServer and
//! its HTTP rules; ProgressiveModesContinueWhileIndexing).
//!
//! Threads: `workers` connection handlers, each with its own read-only
//! SQLite connection (WAL lets them read while the indexer writes, so a
//! search never waits for indexing), one indexer that re-walks the served
//! paths every `refresh` and embeds what changed, and the caller's thread,
//! which waits for `shutdown`. The query model is shared behind a mutex that
//! is held only while embedding.

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use serde_json::json;

use crate::config::{ResolvedConfig, SearchMode};
use crate::embed::Embedder;
use crate::http::{self, Limits, Request, Response};
use crate::index::{self, EmbedderLoader, FileOutcome, IndexObserver, IndexRequest, LazyEmbedder, WalkedSet};
use crate::records::HitRecord;
use crate::root::{AdmittedPath, ProjectRoot};
use crate::search;
use crate::store::{Scope, Store, VectorTable};
use crate::walk::{Skip, WalkOptions};

/// Largest `k` a request may ask for.
pub const MAX_K: usize = 1000;

/// What is served.
pub struct ServeTarget {
    pub root: ProjectRoot,
    pub paths: Vec<AdmittedPath>,
    pub walk: WalkOptions,
    pub config: ResolvedConfig,
}

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

/// The index as the indexer last reported it.
#[derive(Default)]
struct IndexState {
    indexing: bool,
    /// Files processed of `total` in the current (or last) run that had work.
    indexed: u64,
    /// Files needing work in that run; None while walking.
    total: Option<u64>,
    /// The files the last walk admitted, to scope searches under filters.
    walked: Option<Arc<WalkedSet>>,
    error: Option<String>,
    /// Whether an index run has completed since the server started.
    ran: bool,
}

struct Shared {
    target: ServeTarget,
    token: Option<String>,
    query_embedder: Mutex<Box<dyn Embedder>>,
    /// The index's vectors in memory, reloaded when the index changes.
    vectors: Mutex<Option<Arc<VectorTable>>>,
    state: Mutex<IndexState>,
    shutdown: Arc<AtomicBool>,
    events: Arc<dyn ServeEvents>,
    limits: Limits,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking handler is answered with 500; the data it held stays usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serve until `shutdown` is set. With `config.full_index`, the index is
/// brought up to date before the server listens.
pub fn serve(
    target: ServeTarget,
    settings: ServeSettings,
    query_embedder: Box<dyn Embedder>,
    index_embedder: EmbedderLoader,
    shutdown: Arc<AtomicBool>,
    events: Arc<dyn ServeEvents>,
) -> Result<()> {
    let full_index = target.config.full_index;
    let shared = Arc::new(Shared {
        target,
        token: settings.token,
        query_embedder: Mutex::new(query_embedder),
        vectors: Mutex::new(None),
        state: Mutex::new(IndexState { indexing: true, ..Default::default() }),
        shutdown,
        events,
        limits: settings.limits,
    });
    let mut index_embedder = Some(index_embedder);
    let mut first_run_done = false;
    if full_index {
        let mut embedder = LazyEmbedder::new(index_embedder.take().expect("not taken yet"));
        index_once(&shared, &mut embedder, true)?;
        first_run_done = true;
        let refresh = settings.refresh;
        let indexer_shared = Arc::clone(&shared);
        return run_server(shared, settings.addr, settings.workers, move || {
            std::thread::spawn(move || index_loop(indexer_shared, embedder, refresh, first_run_done))
        });
    }
    let refresh = settings.refresh;
    let indexer_shared = Arc::clone(&shared);
    let loader = index_embedder.take().expect("not taken yet");
    run_server(shared, settings.addr, settings.workers, move || {
        std::thread::spawn(move || index_loop(indexer_shared, LazyEmbedder::new(loader), refresh, first_run_done))
    })
}

fn run_server(
    shared: Arc<Shared>,
    addr: SocketAddr,
    workers: usize,
    start_indexer: impl FnOnce() -> std::thread::JoinHandle<()>,
) -> Result<()> {
    let listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("cannot read the listening address")?;
    shared.events.listening(&format!("http://{local}"));
    let indexer = start_indexer();
    for _ in 0..workers.max(1) {
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

fn index_loop(shared: Arc<Shared>, mut embedder: LazyEmbedder, refresh: Duration, mut first_run_done: bool) {
    while !shared.shutdown.load(Ordering::SeqCst) {
        if let Err(e) = index_once(&shared, &mut embedder, !first_run_done) {
            let message = format!("{e:#}");
            let mut state = lock(&shared.state);
            if state.error.as_deref() != Some(&message) {
                shared.events.note(&format!("indexing failed: {message}"));
            }
            state.error = Some(message);
            state.indexing = false;
            state.ran = true;
        }
        first_run_done = true;
        let until = Instant::now() + refresh;
        while Instant::now() < until && !shared.shutdown.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One index run over the served paths.
fn index_once(shared: &Shared, embedder: &mut LazyEmbedder, first: bool) -> Result<()> {
    let t = &shared.target;
    let request = IndexRequest {
        root: &t.root,
        paths: &t.paths,
        walk: &t.walk,
        config: &t.config,
        reindex: false,
        warn_on_large: false,
    };
    let mut observer = ServeObserver { shared, first };
    let (summary, walked) = index::run(&request, embedder, &mut observer)?;
    let mut state = lock(&shared.state);
    state.walked = Some(Arc::new(walked));
    state.indexing = false;
    state.ran = true;
    state.error = None;
    if first || summary.embedded > 0 || summary.removed > 0 {
        shared.events.note(&format!(
            "index: {} files, {} chunks ({} embedded, {} removed) in {:.1} s",
            summary.files, summary.chunks, summary.embedded, summary.removed, summary.seconds
        ));
    }
    Ok(())
}

struct ServeObserver<'a> {
    shared: &'a Shared,
    first: bool,
}

impl IndexObserver for ServeObserver<'_> {
    fn note(&mut self, message: &str) {
        self.shared.events.note(message);
    }

    fn planned(&mut self, _files: usize, to_embed: usize) {
        let mut state = lock(&self.shared.state);
        if self.first || to_embed > 0 {
            state.indexing = true;
            state.indexed = 0;
            state.total = Some(to_embed as u64);
        }
    }

    fn confirm_large(&mut self, _to_embed: usize, _threshold: u64) -> bool {
        // The large-index prompt belongs to blocking runs only.
        true
    }

    fn skipped(&mut self, skip: &Skip) {
        if skip.reason.is_error() {
            self.shared.events.note(&format!("skipping {}: {}", skip.path, skip.reason.describe()));
        }
    }

    fn file(&mut self, _rel: &str, _outcome: FileOutcome, _chunks: u64) {}

    fn progress(&mut self, done: usize, _total: usize, _chunks: u64) {
        lock(&self.shared.state).indexed = done as u64;
    }

    fn cancelled(&self) -> bool {
        self.shared.shutdown.load(Ordering::SeqCst)
    }
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
    let config = &shared.target.config;
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
        Err(e) => {
            // The connection may be what failed (an index rebuilt under it): open a new one next time.
            *store = None;
            Response::error(500, &format!("search failed: {e:#}"))
        }
    }
}

/// NDJSON hit records for a search (HttpSearchReturnsResults), or the
/// failure (HttpSearchReturnsFailure).
fn run_search(shared: &Shared, params: &SearchParams, store: &mut Option<Store>) -> Result<Vec<u8>> {
    let t = &shared.target;
    let (ran, walked) = {
        let state = lock(&shared.state);
        (state.ran, state.walked.clone())
    };
    if store.is_none() {
        match Store::open_for_reading(&t.root) {
            Ok(s) => *store = Some(s),
            // The first run has not yet created (or finished creating) the
            // index: there are no results so far, which is not a failure.
            Err(_) if !ran => return Ok(Vec::new()),
            Err(e) => return Err(e),
        }
    }
    let store = store.as_ref().ok_or_else(|| anyhow!("no index"))?;
    let vectors = if search::needs_embedder(params.mode) { Some(current_vectors(shared, store)?) } else { None };
    let vector = if search::needs_embedder(params.mode) {
        let mut embedder = lock(&shared.query_embedder);
        search::embed_query(Some(&mut **embedder), &params.query, params.mode)?
    } else {
        None
    };
    let scope = Scope {
        prefixes: t.paths.iter().map(|p| p.rel.clone()).collect(),
        files: if t.walk.is_filtered() { walked.map(|w| (*w).clone()) } else { None },
    };
    let hits = search::search_embedded(
        store,
        vectors.as_deref(),
        vector.as_deref(),
        &params.query,
        params.mode,
        &scope,
        params.k,
        params.threshold,
    )?;
    let mut body = Vec::with_capacity(hits.len() * 512);
    for hit in hits {
        crate::records::write_record(&mut body, &HitRecord::new(&t.root, hit, &params.query))?;
    }
    Ok(body)
}

/// The vectors of the index as it is now: those in memory if the index has
/// not changed since they were read, otherwise read again (once, by the
/// first request that notices).
fn current_vectors(shared: &Shared, store: &Store) -> Result<Arc<VectorTable>> {
    let generation = store.generation()?;
    let mut cached = lock(&shared.vectors);
    if let Some(table) = cached.as_ref().filter(|t| t.generation == generation) {
        return Ok(Arc::clone(table));
    }
    let table = Arc::new(store.load_vectors()?);
    *cached = Some(Arc::clone(&table));
    Ok(table)
}

fn status_response(shared: &Shared, store: &mut Option<Store>) -> Response {
    let t = &shared.target;
    if store.is_none() {
        *store = Store::open_for_reading(&t.root).ok();
    }
    let stats = store.as_ref().and_then(|s| s.stats().ok());
    let state = lock(&shared.state);
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
            "scope": t.paths.iter().map(|p| p.rel.clone()).collect::<Vec<_>>(),
            "error": state.error,
        }),
    )
}
