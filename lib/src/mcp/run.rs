//! The `index` tool: ask the indexer for a run now and wait for it, with
//! progress notifications to a client that asked for them, up to a bound a
//! client's own request timeout can live with.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::live::{LiveIndex, RunOutcome};

/// Longest wait a client may ask for.
const MAX_WAIT_SECONDS: u64 = 600;
/// The wait when the client names none: under the minute many clients
/// allow a tool call.
const DEFAULT_WAIT_SECONDS: u64 = 50;
/// How often the run is looked at, and progress sent.
const POLL: Duration = Duration::from_millis(100);
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Arguments of `index`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexArgs {
    /// Seconds to wait for the run to end, 0 to 600 (default 50). With 0
    /// the run starts and the answer comes at once; `status` follows it.
    pub wait_seconds: Option<u64>,
}

/// How the run stands when `index` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// The run ended and the index is up to date with the files.
    Completed,
    /// The run failed; `error` says why.
    Failed,
    /// The wait ended first; the run goes on (`status` follows it).
    Running,
}

/// The answer of `index`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct IndexOutput {
    pub status: RunState,
    /// Files in the index after the run.
    pub files: Option<u64>,
    /// Chunks those files have.
    pub chunks: Option<u64>,
    /// Chunks embedded by the run (new or changed code).
    pub embedded: Option<u64>,
    /// Files the run removed from the index (deleted or no longer admitted).
    pub removed: Option<u64>,
    /// How long the run took, in seconds.
    pub seconds: Option<f64>,
    /// Why the run failed, or null.
    pub error: Option<String>,
}

impl IndexOutput {
    fn running() -> IndexOutput {
        IndexOutput {
            status: RunState::Running,
            files: None,
            chunks: None,
            embedded: None,
            removed: None,
            seconds: None,
            error: None,
        }
    }

    fn of(outcome: RunOutcome) -> IndexOutput {
        match outcome {
            RunOutcome::Completed(s) => IndexOutput {
                status: RunState::Completed,
                files: Some(s.files),
                chunks: Some(s.chunks),
                embedded: Some(s.embedded),
                removed: Some(s.removed),
                seconds: Some((s.seconds * 100.0).round() / 100.0),
                error: None,
            },
            RunOutcome::Failed(why) => IndexOutput { status: RunState::Failed, error: Some(why), ..Self::running() },
        }
    }
}

/// Ask for a run and wait for it as `args` say, or until the client has
/// closed its side (`client_gone`): it then still gets its answer.
pub(super) async fn run_and_wait(
    live: Arc<LiveIndex>,
    args: &IndexArgs,
    ctx: &RequestContext<RoleServer>,
    client_gone: &AtomicBool,
) -> Result<IndexOutput, String> {
    let wait = args.wait_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
    if wait > MAX_WAIT_SECONDS {
        return Err(format!("wait_seconds must be from 0 to {MAX_WAIT_SECONDS}, got {wait}"));
    }
    let ticket = live.request_run();
    let deadline = Instant::now() + Duration::from_secs(wait);
    let progress_token = ctx.meta.get_progress_token();
    let mut last_progress: Option<Instant> = None;
    loop {
        if let Some(outcome) = live.run_outcome(ticket) {
            return Ok(IndexOutput::of(outcome));
        }
        if Instant::now() >= deadline || ctx.ct.is_cancelled() || client_gone.load(Ordering::SeqCst) {
            return Ok(IndexOutput::running());
        }
        if let Some(token) = &progress_token {
            if last_progress.is_none_or(|at| at.elapsed() >= PROGRESS_EVERY) {
                last_progress = Some(Instant::now());
                // A client that stopped listening does not stop the run.
                let _ = ctx.peer.notify_progress(progress(&live, token.clone())).await;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = ctx.ct.cancelled() => {}
        }
    }
}

/// Files done of those the run has to do.
fn progress(live: &LiveIndex, token: ProgressToken) -> ProgressNotificationParam {
    let p = live.progress();
    let message = match p.total {
        Some(total) => format!("indexed {} of {total} files", p.indexed),
        None => "walking the files".to_string(),
    };
    let param = ProgressNotificationParam::new(token, p.indexed as f64).with_message(message);
    match p.total {
        Some(total) => param.with_total(total as f64),
        None => param,
    }
}
