//! Index runs asked for rather than waited for: an index job of vg-serve
//! (kept in the index, so that it outlives the server) and a run a caller
//! waits on (vg-mcp's `index` tool). Either wakes the indexer at once; the
//! run that answers a request is one that began after it.

use anyhow::Result;

use super::{lock, now_ms, LiveIndex};
use crate::index::IndexSummary;
use crate::store::{self, JobState};

/// What an index job reads as when its server stopped before the run ended.
pub const JOB_STOPPED: &str = "the server stopped before the run finished";

/// How an index run ended.
#[derive(Clone, Debug)]
pub enum RunOutcome {
    Completed(IndexSummary),
    /// Why it failed, or that it was stopped (`JOB_STOPPED`).
    Failed(String),
}

/// The runs asked for and run, as the indexer counts them.
#[derive(Default)]
pub(super) struct Runs {
    /// Index jobs asked for since the last run began, by id.
    jobs: Vec<String>,
    /// A run was asked for since the last one began.
    requested: bool,
    begun: u64,
    ended: u64,
    last: Option<RunOutcome>,
    /// A run was asked for to complete an index another process's killed
    /// run left unfinished, when `begun` runs had begun (`others_run`).
    catching_up_after: Option<u64>,
}

/// A place in the order of runs: the run a request will be answered by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunTicket(u64);

impl LiveIndex {
    /// Ask for an index run now, on behalf of the job `id` (kept in the
    /// index as running by the caller); the run records how it ended.
    pub fn start_job(&self, id: String) {
        let mut state = lock(&self.state);
        state.runs.jobs.push(id);
        state.runs.requested = true;
    }

    /// Ask for an index run now; `run_outcome` answers once it has ended.
    pub fn request_run(&self) -> RunTicket {
        let mut state = lock(&self.state);
        state.runs.requested = true;
        RunTicket(state.runs.begun + 1)
    }

    /// How the run of `ticket` (or a later one) ended, once one has.
    pub fn run_outcome(&self, ticket: RunTicket) -> Option<RunOutcome> {
        let state = lock(&self.state);
        (state.runs.ended >= ticket.0).then(|| state.runs.last.clone()).flatten()
    }

    /// Ask for a run to complete an index another process's run left
    /// unfinished; `catching_up` holds until it has ended.
    pub(super) fn request_catch_up(&self) {
        let mut state = lock(&self.state);
        state.runs.requested = true;
        state.runs.catching_up_after = Some(state.runs.begun);
    }

    /// Whether the run `request_catch_up` asked for has yet to end.
    pub(super) fn catching_up(&self) -> bool {
        let state = lock(&self.state);
        state.runs.catching_up_after.is_some_and(|after| state.runs.ended <= after)
    }

    /// Whether a run of this process's indexer is under way: the index's
    /// lock it holds is no other process's.
    pub(super) fn own_run_under_way(&self) -> bool {
        let state = lock(&self.state);
        state.runs.begun > state.runs.ended
    }

    pub(super) fn run_requested(&self) -> bool {
        lock(&self.state).runs.requested
    }

    /// A run begins: it answers every request made so far. Returns the
    /// jobs it is for, and whether any run was asked for.
    pub(super) fn begin_run(&self) -> (Vec<String>, bool) {
        let mut state = lock(&self.state);
        let asked = std::mem::replace(&mut state.runs.requested, false);
        state.runs.begun += 1;
        (std::mem::take(&mut state.runs.jobs), asked)
    }

    /// The indexer has stopped: jobs accepted that no run began will never
    /// finish, and are recorded as stopped (`JOB_STOPPED`) rather than left
    /// `running`, which another server on the root would never correct.
    pub fn fail_unbegun_jobs(&self) {
        let jobs = std::mem::take(&mut lock(&self.state).runs.jobs);
        self.finish_jobs(&jobs, &RunOutcome::Failed(JOB_STOPPED.into()));
    }

    /// A run ended: record it for those waiting, and in the index for `jobs`.
    pub(super) fn end_run(&self, jobs: &[String], result: &Result<IndexSummary>) {
        let outcome = match result {
            Ok(s) if s.cancelled => RunOutcome::Failed(JOB_STOPPED.into()),
            Ok(s) => RunOutcome::Completed(s.clone()),
            Err(e) => RunOutcome::Failed(crate::project::shown::error_line(e)),
        };
        self.finish_jobs(jobs, &outcome);
        let mut state = lock(&self.state);
        state.runs.ended += 1;
        state.runs.last = Some(outcome);
    }

    /// Record in the index how the run of `jobs` ended: with the index's
    /// files and chunks after it (spec/http.md), not the run's, which are
    /// those of the served paths alone.
    fn finish_jobs(&self, jobs: &[String], outcome: &RunOutcome) {
        if jobs.is_empty() {
            return;
        }
        let now = now_ms();
        let recorded = store::open_in_place(&self.target.root).and_then(|mut store| {
            // Counts that cannot be read are the run's own rather than no
            // record at all (every job shown running for ever).
            let ended = match outcome {
                RunOutcome::Completed(s) => {
                    Ok((s, store.stats().map(|a| (a.files, a.chunks)).unwrap_or((s.files, s.chunks))))
                }
                RunOutcome::Failed(why) => Err(why),
            };
            for id in jobs {
                let Some(mut job) = store.index_job(id)? else { continue };
                job.finished_ms = Some(now);
                match &ended {
                    Ok((s, (files, chunks))) => {
                        // A server started meanwhile may have failed it (an
                        // older vecgrep, or one that found no mark): the run
                        // ended, and its record says so alone.
                        (job.state, job.error) = (JobState::Completed, None);
                        (job.files, job.chunks, job.embedded, job.removed) =
                            (Some(*files), Some(*chunks), Some(s.embedded), Some(s.removed));
                    }
                    Err(why) => (job.state, job.error) = (JobState::Failed, Some(why.to_string())),
                }
                store.put_index_job(&job)?;
            }
            Ok(())
        });
        if let Err(e) = recorded {
            (self.notes)(&format!(
                "cannot record how index jobs {} ended: {:#}",
                jobs.join(", "),
                anyhow::Error::new(e)
            ));
        }
    }
}
