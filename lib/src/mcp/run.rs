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
    #[schemars(range(max = MAX_WAIT_SECONDS))]
    // `skip_serializing_if` keeps `"default": null` out of the published schema.
    #[serde(default, deserialize_with = "super::args::whole_number", skip_serializing_if = "Option::is_none")]
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
    let mut told = ProgressTold::default();
    loop {
        if let Some(outcome) = live.run_outcome(ticket) {
            return Ok(IndexOutput::of(outcome));
        }
        if Instant::now() >= deadline || ctx.ct.is_cancelled() || client_gone.load(Ordering::SeqCst) {
            return Ok(IndexOutput::running());
        }
        // Only of a run at work: one that ended before the call left its
        // numbers, sent as the call's progress ("40 of 40 files" before the
        // run asked for began).
        let progress = live.progress();
        if let Some(token) = progress_token.as_ref().filter(|_| progress.indexing) {
            if last_progress.is_none_or(|at| at.elapsed() >= PROGRESS_EVERY) {
                last_progress = Some(Instant::now());
                // A client that stopped listening does not stop the run.
                if let Some(news) = told.news(&progress, token) {
                    let _ = ctx.peer.notify_progress(news).await;
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = ctx.ct.cancelled() => {}
        }
    }
}

/// What a call's progress notifications have said: MCP wants each to say
/// more than the last. The runs a call waits through each count from 0
/// (a refresh, then the run asked for), so the files of the runs before
/// are added to the run in hand's; a notification that would say no more
/// is not sent (a run waiting for another's lock sent "0" every second).
#[derive(Default)]
struct ProgressTold {
    /// Files done by the runs before the one in hand.
    before: u64,
    /// The run in hand's files done when last looked at.
    last_indexed: u64,
    /// The last value sent.
    sent: Option<u64>,
}

impl ProgressTold {
    fn news(&mut self, p: &crate::live::Progress, token: &ProgressToken) -> Option<ProgressNotificationParam> {
        if p.indexed < self.last_indexed {
            self.before += self.last_indexed;
        }
        self.last_indexed = p.indexed;
        let value = self.before + p.indexed;
        if self.sent.is_some_and(|sent| value <= sent) {
            return None;
        }
        self.sent = Some(value);
        let message = match p.total {
            Some(total) => format!("indexed {} of {total} files", p.indexed),
            None => "walking the files".to_string(),
        };
        let param = ProgressNotificationParam::new(token.clone(), value as f64).with_message(message);
        Some(match p.total {
            Some(total) => param.with_total((self.before + total) as f64),
            None => param,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::Progress;
    use rmcp::model::NumberOrString;

    /// Each notification says more than the last, through the runs a call
    /// waits for, and one that would say no more is not sent.
    #[test]
    fn progress_told_only_grows() {
        let token = ProgressToken(NumberOrString::Number(1));
        let mut told = ProgressTold::default();
        let at = |indexed, total| Progress { indexed, total, ..Progress::default() };
        let mut sent = Vec::new();
        for p in [
            at(0, None),
            at(0, None),
            at(0, None),
            at(5847, Some(6003)),
            at(5933, Some(6003)),
            at(11, Some(1500)),
            at(186, Some(1500)),
            at(186, Some(1500)),
        ] {
            if let Some(news) = told.news(&p, &token) {
                sent.push((news.progress, news.total));
            }
        }
        assert_eq!(
            sent,
            [
                (0.0, None),
                (5847.0, Some(6003.0)),
                (5933.0, Some(6003.0)),
                (5944.0, Some(7433.0)),
                (6119.0, Some(7433.0))
            ]
        );
    }
}
