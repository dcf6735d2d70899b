//! vg-mcp's server: the Model Context Protocol over stdio, through the
//! official Rust SDK (rmcp), for coding agents. Like vg-serve it keeps a
//! warm model and a live index (`live`): it answers at once while a
//! background thread indexes the served paths, then re-walks them every
//! `refresh`. What a client may reach is confined to those paths
//! (`live::confine`).
//!
//! Threads: tokio's (the protocol; tool work on its blocking pool), the
//! indexer, and one that loads the query model at start, so that the
//! handshake does not wait for it and the first search waits as little as
//! it can. `tools.rs` holds the tools, `args.rs` the search's arguments and
//! answer, `run.rs` the `index` tool's wait, `transport.rs` the lines read
//! and written (a malformed message answered as JSON-RPC says), `turns.rs`
//! how many searches run at once, `owed.rs` the answers owed and the bound
//! on them, `held.rs` the lines read past that bound, `writer.rs` stdout's
//! own thread; what a client's paths may reach is `live::confine`'s.

mod args;
mod cut;
mod held;
mod owed;
mod run;
mod tools;
mod transport;
mod turns;
mod writer;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;

pub use args::{AskArgs, IndexProgress, McpHit, ModeArg, PrivacyArg, SearchArgs, SearchOutput, StatusArgs};
pub use run::{IndexArgs, IndexOutput, RunState};

use crate::embed::LazyEmbedder;
use crate::index::EmbedderPool;
use crate::live::{LiveIndex, Searcher, Target};
use tools::{Tools, VecgrepServer};

/// Where the server reports: notes for the user, on stderr (stdout is the protocol's).
pub trait McpEvents: Send + Sync {
    fn note(&self, message: &str);
}

/// Serve MCP on stdin/stdout until the client closes stdin or `shutdown`
/// is set (a signal). With `config.full_index`, the index is brought up to
/// date before the first message is read.
pub fn serve_stdio(
    target: Target,
    refresh: Duration,
    query_embedder: LazyEmbedder,
    mut index_embedders: EmbedderPool,
    shutdown: Arc<AtomicBool>,
    events: Arc<dyn McpEvents>,
) -> Result<()> {
    let full_index = target.config.full_index;
    if let Some(said) = crate::search::capped_top_k_note(target.config.top_k) {
        events.note(&said);
    }
    let notes = Arc::clone(&events);
    let live = LiveIndex::new(target, Arc::clone(&shutdown), Box::new(move |m| notes.note(m)));
    live.say_notable_skips();
    let blocking_run = full_index.then(std::time::Instant::now);
    if full_index {
        live.index_once(&mut index_embedders, true)?;
        live.fill(&mut index_embedders)?;
    }
    let unanswered = Arc::new(owed::Unanswered::default());
    let stdout = writer::stdout_handle().context("cannot open stdout")?;
    let writer = writer::LineWriter::spawn(stdout, Arc::clone(&unanswered))
        .context("cannot start the thread that writes answers")?;
    let writer = Arc::new(writer);
    let tools = Arc::new(Tools::new(Searcher::new(Arc::clone(&live), query_embedder), Arc::clone(&unanswered)));
    let preload = Arc::clone(&tools);
    let model_events = Arc::clone(&events);
    std::thread::spawn(move || {
        if let Err(e) = preload.searcher().load_model() {
            model_events.note(&format!("cannot load the query model: {}", crate::project::shown::error_line(&e)));
        }
    });
    // Dropped last, after the runtime: a shared store's connections close
    // by blocking on a runtime of their own, which panicked inside ours
    // (exit 101 when the client left).
    let kept_past_the_runtime = Arc::clone(&tools);
    let indexer = live.spawn(index_embedders, refresh, blocking_run).context("cannot start the indexing thread")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let transport = transport::stdio(unanswered, Arc::clone(&writer));
    let served = runtime.block_on(serve_until_closed(VecgrepServer::new(tools), transport, &shutdown, &writer));
    if shutdown.swap(true, Ordering::SeqCst) {
        // A signal: the line in hand is finished, no other begun.
        writer.stop_after_line();
    }
    // The indexer stops after the file in hand; what it wrote is committed.
    let _ = indexer.join();
    runtime.shutdown_timeout(Duration::from_secs(1));
    writer.wait_written(LAST_LINES_STALL);
    drop(kept_past_the_runtime);
    if let Some(why) = writer.write_error() {
        return Err(anyhow::anyhow!("cannot write to stdout: {why}"));
    }
    served
}

/// How long the lines still unwritten as the process ends wait for a
/// client that takes nothing: one that reads gets them all (on a signal,
/// the line in hand), one that stopped reading (at the end of input,
/// waited for already) lets the process end.
const LAST_LINES_STALL: Duration = Duration::from_secs(3);

/// Serve until the client leaves or `shutdown` is set.
async fn serve_until_closed(
    server: VecgrepServer,
    transport: transport::ScreenedLines<tokio::io::Stdin>,
    shutdown: &AtomicBool,
    writer: &writer::LineWriter,
) -> Result<()> {
    let running = tokio::select! {
        started = server.serve(transport) => match started {
            Ok(running) => running,
            // The client left before the handshake ended: nothing to serve.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            // Or closed our stdout as we answered it: a closed pipe is success.
            Err(rmcp::service::ServerInitializeError::TransportError { error, .. }) if reader_left(&*error.error) => {
                return Ok(())
            }
            // The SDK's words quote the message whole: a line of up to 1 MiB.
            Err(e) => {
                let why = crate::project::shown::words_clipped(&e.to_string(), 200, 400);
                return Err(anyhow::anyhow!("the MCP handshake failed: {why}"));
            }
        },
        () = signalled(shutdown) => return Ok(()),
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        quit = running.waiting() => {
            quit.context("the MCP session ended abnormally")?;
        }
        () = signalled(shutdown) => cancel.cancel(),
        // No answer reaches the client any more (a full disk, the client
        // gone): the input was read on until it ended, as long as that took.
        () = unwritable(writer) => cancel.cancel(),
    }
    Ok(())
}

/// Resolves once a write to stdout has failed.
async fn unwritable(writer: &writer::LineWriter) {
    while !writer.failed() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `e` or a cause of it is a write to a pipe whose reader left.
fn reader_left(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Resolves once `shutdown` is set.
async fn signalled(shutdown: &AtomicBool) {
    while !shutdown.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
