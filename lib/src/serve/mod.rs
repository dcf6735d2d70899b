//! vg-serve's server: a warm model and index answering HTTP searches while
//! a background thread keeps the index fresh (the spec's SearchServer and
//! its HTTP rules; ProgressiveModesContinueWhileIndexing).
//!
//! Threads: one accepts connections, admitted by `gate` (a bound per client
//! address and in all); each connection has a small thread of its own that
//! reads its requests and writes its responses, so a slow or silent client
//! ties up nothing but that thread; `workers` answer the requests those
//! threads hand them, each with its own read-only connection to the index;
//! the indexer of a `live::LiveIndex` re-walks the served paths every
//! `refresh` (and at once for an index job); and the caller's thread waits
//! for `shutdown`. `lanes` keeps reports on workers of their own and slow
//! requests to a share of the others. Searching and indexing themselves are `live`'s. `http`
//! reads and writes the protocol; each route has a file: `search`,
//! `status` (and `/health`), `jobs`, `embeddings`, `ask`; `limit` counts
//! each client's requests.

mod ask;
mod embeddings;
mod gate;
mod http;
mod jobs;
mod lanes;
mod limit;
mod origin;
mod search;
mod status;

use std::io::{BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

pub use http::Limits;
pub use origin::is_loopback;

use crate::embed::LazyEmbedder;
use crate::index::{EmbedderPool, ThreadedLoader};
use crate::live::{LiveIndex, Searcher, StoreSlot, Target};
use crate::store;
use ask::{ASK_PATH, MAX_ASK_BODY};
use embeddings::{ModelPool, EMBEDDINGS_PATH, MAX_BODY_BYTES};
use gate::{Gate, Slot};
use http::{Request, Response};
use lanes::{Lane, SlowSlots};
use limit::RateLimiter;

/// A connection's thread reads and writes only: a small stack does.
const CONNECTION_STACK: usize = 256 * 1024;

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

/// The token requests must carry: `--token` (`flag`), else `VECGREP_TOKEN`
/// (`env`); None serves without one. An empty one, from either, is refused
/// rather than read as "no token": an empty `--token` beside a
/// VECGREP_TOKEN (issue 42), or `VECGREP_TOKEN=$(cat a-missing-file)`,
/// would turn authentication off unseen. So is one no request could carry
/// (a header value is visible ASCII, its ends trimmed), which would refuse
/// every request.
/// A VECGREP_TOKEN that is not UTF-8 is refused as non-ASCII, never taken
/// for an unset one.
pub fn token(flag: Option<String>, env: Option<std::ffi::OsString>) -> Result<Option<String>, String> {
    let (token, from) = match (flag, env) {
        (Some(t), _) => (t, "--token"),
        // U+FFFD is no header's character: refused below.
        (None, Some(t)) => (t.to_string_lossy().into_owned(), "VECGREP_TOKEN"),
        (None, None) => return Ok(None),
    };
    if token.trim().is_empty() {
        let unset = if from == "--token" { "leave --token out" } else { "unset VECGREP_TOKEN" };
        return Err(format!("{from} is empty, which would serve without a token; {unset} for that"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "{from} holds a space, a control character or a non-ASCII character, which no Authorization header can carry"
        ));
    }
    Ok(Some(token))
}

/// Where the server reports: the URL once listening, and notes.
pub trait ServeEvents: Send + Sync {
    /// The server listens at `url`. An error (the listening record could
    /// not be written) stops it before it answers anyone: a script waiting
    /// for the record would wait for ever.
    fn listening(&self, url: &str) -> Result<()>;
    fn note(&self, message: &str);
}

struct Shared {
    searcher: Searcher,
    models: ModelPool,
    token: Option<String>,
    /// Bound to a loopback address: requests must be for this machine and
    /// not from a web page elsewhere (`origin::refused_on_loopback`).
    loopback: bool,
    /// Requests whose head has been read and whose answer is not yet
    /// written: a stopping server answers them first (`drain`).
    in_flight: AtomicUsize,
    shutdown: Arc<AtomicBool>,
    events: Arc<dyn ServeEvents>,
    limits: Limits,
    /// Requests a minute per address from clients that authenticated (or
    /// from every client, without a token).
    limiter: RateLimiter,
    /// The same, apart, for requests without a valid token: they cannot
    /// spend an authenticated client's share.
    anonymous: RateLimiter,
    /// Requests read by the connections' threads, for the workers.
    work: mpsc::Sender<Work>,
    /// The same for the routes that only report, which workers of their
    /// own answer (`lanes`).
    report_work: mpsc::Sender<Work>,
    /// The shares of `work`'s workers that embedding and ask requests may
    /// hold (`lanes`).
    embedding_slots: SlowSlots,
    ask_slots: SlowSlots,
}

/// A request for a worker to answer, and where the answer goes.
struct Work {
    request: Request,
    body: Option<Vec<u8>>,
    reply: mpsc::SyncSender<Response>,
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
    if let Some(said) = crate::search::capped_top_k_note(target.config.top_k) {
        events.note(&said);
    }
    let address = reserve(settings.addr).with_context(|| format!("cannot listen on {}", settings.addr))?;
    let notes = Arc::clone(&events);
    let mut serving = fail_stopped_jobs(&target, &*events);
    let live = LiveIndex::new(target, Arc::clone(&shutdown), Box::new(move |m| notes.note(m)));
    live.say_notable_skips();
    let searcher = Searcher::new(Arc::clone(&live), query_embedder);
    // In every mode: without the model's files (and the static table kept
    // with them) no run could keep the index up to date, which is what a
    // server is for (review 185: a lexical server started so never indexed).
    searcher.load_model().context("cannot load the query model")?;
    let blocking_run = full_index.then(Instant::now);
    if full_index {
        live.index_once(&mut index_embedders, true)?;
        live.fill(&mut index_embedders)?;
    }
    // Told to stop during that run: never listening, so that no one waiting
    // for the listening record takes a server that is going away for one up.
    if shutdown.load(Ordering::SeqCst) {
        events.note("stopped before listening");
        return Ok(());
    }
    let (work, queue) = mpsc::channel();
    let (report_work, report_queue) = mpsc::channel();
    let shared = Arc::new(Shared {
        searcher,
        models: ModelPool::new(embeddings_loader),
        token: settings.token,
        loopback: origin::is_loopback(settings.addr.ip()),
        in_flight: Default::default(),
        shutdown,
        events,
        limits: settings.limits,
        limiter: RateLimiter::new(settings.rate_limit),
        anonymous: RateLimiter::new(settings.rate_limit),
        work,
        report_work,
        embedding_slots: SlowSlots::share_of(settings.workers.max(1), 2),
        ask_slots: SlowSlots::share_of(settings.workers.max(1), 4),
    });
    let listener = listen(address).with_context(|| format!("cannot listen on {}", settings.addr))?;
    let local = listener.local_addr().context("cannot read the listening address")?;
    shared.events.listening(&format!("http://{local}"))?;
    let indexer =
        live.spawn(index_embedders, settings.refresh, blocking_run).context("cannot start the server's threads")?;
    for (queue, workers) in [(queue, settings.workers.max(1)), (report_queue, lanes::REPORT_WORKERS)] {
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..workers {
            let (shared, queue) = (Arc::clone(&shared), Arc::clone(&queue));
            started(std::thread::Builder::new().spawn(move || work_loop(&shared, &queue)))?;
        }
    }
    let total = gate::within_open_files(settings.limits.connections);
    if total < settings.limits.connections {
        shared.events.note(&format!("at most {total} connections at once: the open-file limit allows no more"));
    }
    let gate = Gate::new(settings.limits.connections_per_client, total);
    let accepting = Arc::clone(&shared);
    started(std::thread::Builder::new().spawn(move || accept_loop(&accepting, &listener, &gate)))?;
    let mut renewed = Instant::now();
    while !shared.shutdown.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        if renewed.elapsed() >= settings.refresh {
            serving.iter_mut().for_each(|mark| mark.renew(&shared.target().root));
            renewed = Instant::now();
        }
    }
    shared.events.note("shutting down");
    drain(&shared);
    // The indexer stops after the file in hand; what it wrote is committed.
    let _ = indexer.join();
    // A job a request queued as the indexer ended.
    shared.searcher.live().fail_unbegun_jobs();
    Ok(())
}

/// Jobs a stopped server left running will never finish: say so, when no
/// other server serves the root (`store::mark_server`), whose running jobs
/// are not to be failed. The mark is held for the server's life.
fn fail_stopped_jobs(target: &Target, events: &dyn ServeEvents) -> Option<store::ServerMark> {
    // One this user may not write is neither marked nor changed (audit 252:
    // its cause read "cannot open serve.lock: No such file or directory");
    // the indexer says why it is served as it is.
    if store::unwritable_index(&target.root).is_some() {
        return None;
    }
    let indexed = target.root.index_path().is_file();
    let failed = store::mark_server(&target.root).and_then(|mark| {
        if mark.alone && indexed {
            store::open_in_place(&target.root)?.fail_running_jobs(crate::live::JOB_STOPPED, crate::live::now_ms())?;
        }
        Ok(mark)
    });
    match failed {
        Ok(mark) => Some(mark),
        Err(e) if indexed => {
            let e = anyhow::Error::new(e);
            events.note(&format!(
                "cannot mark the index jobs of a stopped server as failed: {}",
                crate::project::shown::error_line(&e)
            ));
            None
        }
        Err(_) => None,
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener, gate: &Arc<Gate>) {
    loop {
        match listener.accept() {
            Ok((stream, peer)) => match gate.admit(&stream, peer.ip()) {
                Some(slot) => {
                    let shared = Arc::clone(shared);
                    let spawned = std::thread::Builder::new()
                        .stack_size(CONNECTION_STACK)
                        .spawn(move || connection(&shared, stream, peer.ip(), &slot));
                    // Out of threads: the connection (and its slot) is dropped.
                    if spawned.is_err() {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                None => refuse(stream, peer.ip()),
            },
            // Out of file descriptors and the like: back off, keep serving.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Answer a connection the gate has no room for with 503, without waiting
/// on it: what the socket's buffer takes at once is all it gets.
fn refuse(stream: TcpStream, client: IpAddr) {
    let response = Response::error(503, &format!("too many connections from {client} are answering requests"))
        .with_header("Retry-After", "1");
    let mut stream = stream;
    if stream.set_nonblocking(true).is_ok() {
        let _ = http::write_response(&mut stream, &response, false, true);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        // Closed with the request unread, the socket would be reset, and a
        // client could lose the 503 it was sent: take what has come.
        let mut unread = [0u8; 16 * 1024];
        for _ in 0..4 {
            if !matches!(std::io::Read::read(&mut stream, &mut unread), Ok(n) if n > 0) {
                break;
            }
        }
    }
}

/// A worker: answer the requests the connections' threads read, one at a
/// time, each through the worker's own connection to the index.
fn work_loop(shared: &Shared, queue: &Mutex<mpsc::Receiver<Work>>) {
    let mut store: StoreSlot = None;
    loop {
        // The lock is held only to take a request, not while answering it.
        let Ok(work) = crate::live::lock(queue).recv() else { return };
        let response =
            catch_unwind(AssertUnwindSafe(|| respond(shared, &work.request, work.body.as_deref(), &mut store)))
                .unwrap_or_else(|_| {
                    store = None;
                    shared.events.note(&format!("a request handler panicked on {}", work.request.target));
                    Response::error(500, "internal error while handling the request")
                });
        let _ = work.reply.send(response);
    }
}

/// The server's address, bound before the model loads and a `--full-index`
/// run: a port in use, or an address not this machine's, was said only
/// after them (minutes of indexing on a large tree). Bound, not listened
/// on: a client meanwhile is refused, as before, not kept waiting.
///
/// Held without SO_REUSEADDR: two sockets that both have it may bind one
/// port while neither listens, so a second server reserving it meanwhile
/// got it, and this one failed after its run. A port that a stopped
/// server's connections hold (TIME_WAIT) is bound with it, as the standard
/// library's bind does, so that a server restarts at once, and it is then
/// taken off until `listen`.
fn reserve(addr: SocketAddr) -> std::io::Result<socket2::Socket> {
    match bind_only(addr, false) {
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => bind_only(addr, true),
        bound => bound,
    }
}

fn bind_only(addr: SocketAddr, reuse_address: bool) -> std::io::Result<socket2::Socket> {
    let socket = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None)?;
    socket.set_reuse_address(reuse_address)?;
    socket.bind(&addr.into())?;
    socket.set_reuse_address(false)?;
    Ok(socket)
}

/// Listen on the address `reserve` bound. SO_REUSEADDR is set now, not
/// while the port is only reserved: the connections accepted take it on, so
/// that those left in TIME_WAIT when the server stops let the next one bind.
fn listen(socket: socket2::Socket) -> std::io::Result<TcpListener> {
    socket.set_reuse_address(true)?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// The longest a stopping server waits for the requests it is answering.
const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// Wait until the requests in flight are answered (SIGTERM used to close
/// their connections unanswered), or `DRAIN_DEADLINE` has passed. New
/// requests meanwhile are answered and their connections closed.
fn drain(shared: &Shared) {
    let deadline = Instant::now() + DRAIN_DEADLINE;
    while shared.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A request counted in flight (`Shared::in_flight`) while it lives.
struct InFlight<'s>(&'s AtomicUsize);

impl<'s> InFlight<'s> {
    fn count(counter: &'s AtomicUsize) -> InFlight<'s> {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Have a worker of the request's lane answer it.
fn answer(shared: &Shared, request: Request, body: Option<Vec<u8>>) -> Response {
    let (queue, slots) = match lanes::lane_of(&request) {
        Lane::Report => (&shared.report_work, None),
        Lane::Shared => (&shared.work, None),
        Lane::Embeddings => (&shared.work, Some(&shared.embedding_slots)),
        Lane::Ask => (&shared.work, Some(&shared.ask_slots)),
    };
    // Waited for on this connection's thread, holding no worker.
    let _held = match slots.map(|slots| slots.take(&shared.shutdown)) {
        Some(None) => return Response::error(503, "the server is shutting down"),
        held => held.flatten(),
    };
    let (reply, answered) = mpsc::sync_channel(1);
    let sent = queue.send(Work { request, body, reply });
    match sent.ok().and_then(|()| answered.recv().ok()) {
        Some(response) => response,
        None => Response::error(503, "the server is shutting down"),
    }
}

/// The least a head is given once its first bytes are in: the thread may
/// wake after them a little late on a busy machine.
const HEAD_LATE_WAKE: Duration = Duration::from_millis(200);

/// Wait for the next request's first bytes, leaving them in the socket
/// (a peek), where the gate sees them until `Slot::reading` says they are
/// in hand: false when the client closed, or sent nothing within the read
/// timeout (the connection then ends, as a head not received in time ends it).
fn bytes_came(stream: &TcpStream) -> bool {
    loop {
        match stream.peek(&mut [0u8; 1]) {
            Ok(n) => return n > 0,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

/// Read requests on one connection, have workers answer them, and write
/// the answers, until it closes or asks to (or the gate closes it).
fn connection(shared: &Shared, stream: TcpStream, client: IpAddr, slot: &Slot) {
    let idle = shared.limits.head_deadline;
    let _ = stream.set_read_timeout(Some(idle));
    let _ = stream.set_write_timeout(Some(idle));
    let _ = stream.set_nodelay(true);
    // Read and written through one descriptor (the gate holds the other).
    let mut reader = BufReader::new(&stream);
    let mut writer = &stream;
    loop {
        // A head must come whole within the deadline of the wait for it
        // (http.md), its first byte's wait included.
        let waited_from = std::time::Instant::now();
        // A next request already in the buffer (pipelined) is not waited for.
        if reader.buffer().is_empty() {
            slot.idle();
            if !bytes_came(&stream) {
                return;
            }
        }
        slot.reading();
        // What is left of it, and a moment more: a head that came whole in
        // time is not lost to this thread waking late.
        let left = shared.limits.head_deadline.saturating_sub(waited_from.elapsed()).max(HEAD_LATE_WAKE);
        let limits = http::Limits { head_deadline: left, ..shared.limits };
        // A head that stalls is cut at the deadline, not at a read's timeout past it.
        let _ = stream.set_read_timeout(Some(left));
        let read = http::read_request(&mut reader, &limits);
        let _ = stream.set_read_timeout(Some(idle));
        let request = match read {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                if let Some(status) = e.status() {
                    let _ = http::write_response(&mut writer, &Response::error(status, &e.message()), false, true);
                    close_unread(&stream, slot, (shared.limits.head_deadline, &shared.shutdown));
                }
                return;
            }
        };
        slot.busy();
        if let Err(response) = admit(shared, &request, client) {
            let _ = http::write_response(&mut writer, &response, false, true);
            close_unread(&stream, slot, (shared.limits.head_deadline, &shared.shutdown));
            return;
        }
        // Counted once admitted: a refused request is no answer to wait for.
        let _answering = InFlight::count(&shared.in_flight);
        // The routes with a body: read it here, so that the connection
        // stays in step for the next request.
        let mut body = None;
        if let Some(limit) = body_limit(&request) {
            let bound = &mut |left| {
                let _ = stream.set_read_timeout(Some(left));
            };
            let go_ahead = &mut || {
                let _ = writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").and_then(|()| writer.flush());
            };
            let read = http::read_body(&mut reader, &request, &shared.limits, limit, bound, go_ahead);
            let _ = stream.set_read_timeout(Some(idle));
            match read {
                Ok(b) => body = Some(b),
                Err(e) => {
                    if let Some(status) = e.status {
                        let _ = http::write_response(&mut writer, &Response::error(status, &e.message), false, true);
                        close_unread(&stream, slot, (shared.limits.head_deadline, &shared.shutdown));
                    }
                    return;
                }
            }
        }
        let wants_keep_alive = request.keep_alive(body.is_some());
        let with_body = request.method != "HEAD";
        let response = answer(shared, request, body);
        // Read after answering: a shutdown that began while the answer was
        // made closes this connection too, and says so.
        let keep_alive = wants_keep_alive && !shared.shutdown.load(Ordering::SeqCst);
        if http::write_response(&mut writer, &response, keep_alive, with_body).is_err() || !keep_alive {
            let _ = writer.flush();
            return;
        }
    }
}

/// The most bytes `close_unread` reads and drops: a body of several times
/// the largest a route takes (`MAX_BODY_BYTES`), sent whole before its
/// client reads.
const UNREAD_DROPPED: usize = 8 * MAX_BODY_BYTES;

/// Close a connection answered with an error before its request was read
/// whole (413, 401, 403, 405, a bad head): the answer goes out with the end
/// of what is written, then what the client still sends is read and dropped,
/// for at most `within` (the head's deadline). Closed with input unread, the
/// socket is reset, and a client that sends its whole body before it reads
/// (Python's urllib and requests) lost the answer it was sent to a
/// "connection reset" (audit 193). The connection counts as one whose head
/// drips meanwhile, which the gate closes for another client after a
/// moment, and a shutdown ends the wait (review 196: clients without the
/// token held slots, busy, for 5 s; review 197: a drain of 1 s cut off an
/// upload at 1 MB/s).
fn close_unread(stream: &TcpStream, slot: &Slot, (within, shutdown): (Duration, &AtomicBool)) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    slot.reading();
    let until = Instant::now() + within;
    let (mut stream, mut unread, mut dropped) = (stream, vec![0u8; 64 * 1024], 0);
    while dropped < UNREAD_DROPPED && !shutdown.load(Ordering::SeqCst) {
        let left = until.saturating_duration_since(Instant::now()).min(Duration::from_millis(100));
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match std::io::Read::read(&mut stream, &mut unread) {
            Ok(0) => return,
            Ok(n) => dropped += n,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// Who the request is for and from (a loopback server's), the token, then
/// HttpLimitsRequestsPerClient, before any body is read: a client without
/// the token costs no more than its head.
///
/// A request without a valid token is counted apart from those with one,
/// on every route, and answered 401 (429 past its share), so anonymous
/// requests from an address never spend the share of a client there that
/// has the token. An authenticated client (or any, without a token) over
/// its share is answered 429 with when to try again, but on two kinds of
/// route: what only reports (`/health`, `/status`, a job's status), since
/// polling it is how clients wait and a monitor must never read a busy
/// server as a dead one; and `/v1/embeddings`, the bulk route another
/// machine indexes through (a batch a request: a limit a minute would
/// stall a large index run).
fn admit(shared: &Shared, request: &Request, client: IpAddr) -> Result<(), Response> {
    let too_many = |retry_after: u64| {
        Response::error(429, &format!("too many requests from {client}; try again in {retry_after} s"))
            .with_header("Retry-After", retry_after.to_string())
    };
    if let Some(why) = shared.loopback.then(|| origin::refused_on_loopback(request)).flatten() {
        return Err(Response::error(403, &why));
    }
    if let Some(token) = &shared.token {
        let offered = request.header("authorization").and_then(bearer_token);
        if !offered.is_some_and(|o| http::secrets_equal(o, token)) {
            shared.anonymous.admit(client, Instant::now()).map_err(too_many)?;
            return Err(Response::error(401, "a valid bearer token is required (Authorization: Bearer TOKEN)")
                .with_header("WWW-Authenticate", "Bearer"));
        }
    }
    let exempt = ["/health", "/status", jobs::STATUS_PATH, EMBEDDINGS_PATH].contains(&raw_path(&request.target));
    if !exempt {
        shared.limiter.admit(client, Instant::now()).map_err(too_many)?;
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
        ASK_PATH => Some(MAX_ASK_BODY),
        _ => None,
    }
}

/// A value a client sent, as an error repeats it: 100 characters at most
/// (a model name or a job id of megabytes would come back whole).
fn shown(value: &str) -> String {
    crate::project::shown::clipped(value, 100)
}

/// The response to an admitted request (the spec's HTTP rules, in order).
fn respond(shared: &Shared, request: &Request, body: Option<&[u8]>, store: &mut StoreSlot) -> Response {
    // The routes that take a body take POST (and nothing else); every other
    // path GET only, as HttpRejectsNonGetRequests says. Then the URL, for
    // every route (a POST's query was never checked).
    let path = raw_path(&request.target);
    let takes_body = [EMBEDDINGS_PATH, jobs::START_PATH, ASK_PATH].contains(&path);
    match (takes_body, request.method.as_str()) {
        (true, "POST") | (false, "GET") => {}
        (true, method) => {
            return Response::error(405, &format!("method {method} is not allowed on {path}; use POST"))
                .with_header("Allow", "POST")
        }
        (false, method) => {
            return Response::error(405, &format!("method {method} is not allowed; use GET"))
                .with_header("Allow", "GET")
        }
    }
    let target = match http::parse_target(&request.target) {
        Ok(t) => t,
        Err(e) => return Response::error(400, &e),
    };
    if let (true, Some(body)) = (takes_body, body) {
        return match path {
            EMBEDDINGS_PATH => embeddings::embeddings_response(shared, body),
            ASK_PATH => ask::ask_response(shared, body, store),
            _ => jobs::start_response(shared, body),
        };
    }
    // Routes are matched as sent, as the POST routes and the rate limit's
    // exemptions are: `/%73earch` is no route, and is told so by that name.
    match path {
        "/search" => search::search_response(shared, &target, store),
        "/status" => status::status_response(shared, store),
        "/health" => status::health_response(shared, store),
        jobs::STATUS_PATH => jobs::status_response(shared, &target, store),
        other => Response::error(
            404,
            &format!(
                "no such path {:?}; the paths are /search, /status, /health, {} and (POST) {EMBEDDINGS_PATH}, {} and {ASK_PATH}",
                shown(other),
                jobs::STATUS_PATH,
                jobs::START_PATH
            ),
        ),
    }
}

/// The path of a request target as sent, without its query (or a
/// fragment, which `http::parse_target` refuses).
pub(super) fn raw_path(target: &str) -> &str {
    target.split(['?', '#']).next().unwrap_or(target)
}

fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A server thread started, or why not in one line: under a memory limit
/// (`ulimit -v`) the system refuses threads, and `thread::spawn` panicked.
fn started<T>(spawned: std::io::Result<std::thread::JoinHandle<T>>) -> Result<()> {
    spawned.map(drop).context("cannot start the server's threads")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second server reserving a port another reserved (neither
    /// listening yet, both in a `--full-index` run) took it, and the first
    /// failed after its run; a port freed with connections in TIME_WAIT is
    /// taken again at once.
    #[test]
    fn a_reserved_port_is_not_reserved_again_and_a_freed_one_is() {
        let first = reserve("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = first.local_addr().unwrap().as_socket().unwrap();
        let again = reserve(addr).map(|_| ()).unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AddrInUse, "{again}");
        let listener = listen(first).unwrap();
        let client = TcpStream::connect(addr).unwrap();
        let (served, _) = listener.accept().unwrap();
        // The server's side closes first, so its end of the connection waits.
        drop(served);
        drop(client);
        drop(listener);
        let restarted = reserve(addr).unwrap();
        // Reserved past the TIME_WAIT, it is no one else's either.
        let again = reserve(addr).map(|_| ()).unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AddrInUse, "{again}");
        assert!(listen(restarted).is_ok());
    }

    #[test]
    fn a_token_that_would_turn_authentication_off_or_refuse_everyone_is_refused() {
        use std::os::unix::ffi::OsStrExt;
        let some = |t: &str| Some(t.to_string());
        let env = |t: &[u8]| Some(std::ffi::OsStr::from_bytes(t).to_owned());
        assert_eq!(token(None, None), Ok(None));
        assert_eq!(token(some("s3cret"), env(b"other")), Ok(some("s3cret")), "the flag wins");
        assert_eq!(token(None, env(b"s3cret")), Ok(some("s3cret")));
        for (flag, env, says) in [
            (some(""), env(b"s3cret"), "--token is empty"),
            (None, env(b""), "VECGREP_TOKEN is empty"),
            (None, env(b"  "), "unset VECGREP_TOKEN"),
            (some("a\nb"), None, "--token holds"),
            (None, env(b" s3cret"), "VECGREP_TOKEN holds"),
            (None, env("sécret".as_bytes()), "non-ASCII"),
            // Not UTF-8: once read as unset, so served without a token.
            (None, env(b"\xff"), "VECGREP_TOKEN holds"),
            (None, env(b"s3cret\xff"), "non-ASCII"),
        ] {
            let e = token(flag.clone(), env.clone()).unwrap_err();
            assert!(e.contains(says), "{flag:?} {env:?}: {e}");
        }
    }
}
