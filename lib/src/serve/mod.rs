//! vg-serve's server: a warm model and index answering HTTP searches while
//! a background thread keeps the index fresh (the spec's SearchServer and
//! its HTTP rules; ProgressiveModesContinueWhileIndexing).
//!
//! Threads: `workers` connection handlers, each with its own read-only
//! SQLite connection, the indexer of a `live::LiveIndex` that re-walks the
//! served paths every `refresh` (and at once for an index job), and the
//! caller's thread, which waits for `shutdown`. Searching and indexing
//! themselves are `live`'s. `http` reads and writes the protocol; each route
//! has a file: `search`, `status` (and `/health`), `jobs`, `embeddings`;
//! `limit` counts each client's requests.

mod embeddings;
mod http;
mod jobs;
mod limit;
mod search;
mod status;

use std::io::{BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

pub use http::Limits;

use crate::embed::LazyEmbedder;
use crate::index::{EmbedderPool, ThreadedLoader};
use crate::live::{LiveIndex, Searcher, StoreSlot, Target};
use crate::store;
use embeddings::{ModelPool, EMBEDDINGS_PATH, MAX_BODY_BYTES};
use http::{Request, Response};
use limit::RateLimiter;

/// How it is served.
pub struct ServeSettings {
    pub addr: SocketAddr,
    /// Bearer token every request must carry, if set.
    pub token: Option<String>,
    pub workers: usize,
    /// How often the indexer looks for changed files.
    pub refresh: Duration,
    pub limits: Limits,
    /// Requests a minute from one client address; 0 is no limit.
    pub rate_limit: u32,
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
    limiter: RateLimiter,
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
    fail_stopped_jobs(&target, &*events);
    let live = LiveIndex::new(target, Arc::clone(&shutdown), Box::new(move |m| notes.note(m)));
    let searcher = Searcher::new(Arc::clone(&live), query_embedder);
    searcher.load_model().context("cannot load the query model")?;
    let mut first = true;
    if full_index {
        live.index_once(&mut index_embedders, true)?;
        live.fill(&mut index_embedders)?;
        first = false;
    }
    let shared = Arc::new(Shared {
        searcher,
        models: ModelPool::new(embeddings_loader),
        token: settings.token,
        shutdown,
        events,
        limits: settings.limits,
        limiter: RateLimiter::new(settings.rate_limit),
    });
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

/// Jobs a previous server left running will never finish: say so.
fn fail_stopped_jobs(target: &Target, events: &dyn ServeEvents) {
    if !target.root.index_path().is_file() {
        return;
    }
    let failed = store::open_in_place(&target.root)
        .and_then(|mut s| s.fail_running_jobs(crate::live::JOB_STOPPED, crate::live::now_ms()));
    if let Err(e) = failed {
        events.note(&format!("cannot mark the index jobs of a stopped server as failed: {:#}", anyhow::Error::new(e)));
    }
}

fn accept_loop(shared: &Shared, listener: &TcpListener) {
    // Each worker reads through its own connection to the index.
    let mut store: StoreSlot = None;
    loop {
        match listener.accept() {
            Ok((stream, peer)) => connection(shared, stream, peer.ip(), &mut store),
            // Out of file descriptors and the like: back off, keep serving.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Answer requests on one connection until it closes or asks to.
fn connection(shared: &Shared, stream: TcpStream, client: IpAddr, store: &mut StoreSlot) {
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
        if let Err(response) = admit(shared, &request, client) {
            let _ = http::write_response(&mut writer, &response, false, true);
            return;
        }
        // The routes with a body: read it here, so that the connection
        // stays in step for the next request.
        let mut body = None;
        if let Some(limit) = body_limit(&request) {
            match http::read_body(&mut reader, &request, &shared.limits, limit) {
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

/// HttpLimitsRequestsPerClient: a client over its share is answered 429
/// with when to try again. Two kinds of route are left out: what only
/// reports (`/health`, `/status`, a job's status), since polling it is how
/// clients wait and a monitor must never read a busy server as a dead one;
/// and `/v1/embeddings`, the bulk route another machine indexes through (a
/// batch a request: a limit a minute would stall a large index run).
/// Then the token, before any body is read: a client without it costs
/// no more than its head.
fn admit(shared: &Shared, request: &Request, client: IpAddr) -> Result<(), Response> {
    let exempt = ["/health", "/status", jobs::STATUS_PATH, EMBEDDINGS_PATH].contains(&raw_path(&request.target));
    if !exempt {
        shared.limiter.admit(client, Instant::now()).map_err(|retry_after| {
            Response::error(429, &format!("too many requests from {client}; try again in {retry_after} s"))
                .with_header("Retry-After", retry_after.to_string())
        })?;
    }
    if let Some(token) = &shared.token {
        let offered = request.header("authorization").and_then(bearer_token);
        if !offered.is_some_and(|o| http::secrets_equal(o, token)) {
            return Err(Response::error(401, "a valid bearer token is required (Authorization: Bearer TOKEN)")
                .with_header("WWW-Authenticate", "Bearer"));
        }
    }
    Ok(())
}

/// How much body the request's route reads, for the routes that take one.
fn body_limit(request: &Request) -> Option<usize> {
    if request.method != "POST" {
        return None;
    }
    match raw_path(&request.target) {
        EMBEDDINGS_PATH => Some(MAX_BODY_BYTES),
        jobs::START_PATH => Some(jobs::MAX_START_BODY),
        _ => None,
    }
}

/// The response to an admitted request (the spec's HTTP rules, in order).
fn respond(shared: &Shared, request: &Request, body: Option<&[u8]>, store: &mut StoreSlot) -> Response {
    // The routes that take a body take POST (and nothing else); every other
    // path GET only, as HttpRejectsNonGetRequests says.
    let path = raw_path(&request.target);
    if [EMBEDDINGS_PATH, jobs::START_PATH].contains(&path) {
        return match (request.method.as_str(), body) {
            ("POST", Some(body)) if path == EMBEDDINGS_PATH => embeddings::embeddings_response(shared, body),
            ("POST", Some(body)) => jobs::start_response(shared, body),
            _ => Response::error(405, &format!("method {} is not allowed on {path}; use POST", request.method))
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
        "/search" => search::search_response(shared, &target, store),
        "/status" => status::status_response(shared, store),
        "/health" => status::health_response(shared, store),
        jobs::STATUS_PATH => jobs::status_response(shared, &target, store),
        other => Response::error(
            404,
            &format!(
                "no such path {other:?}; the paths are /search, /status, /health, {} and (POST) {EMBEDDINGS_PATH} and {}",
                jobs::STATUS_PATH,
                jobs::START_PATH
            ),
        ),
    }
}

fn raw_path(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}

fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}
