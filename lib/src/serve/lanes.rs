//! Which workers answer a request: one client must not leave a monitor's
//! `/health` or everyone's searches waiting behind requests that each hold
//! a worker for seconds (a batch of texts waiting for one of the few
//! models, a question waiting for a chat model up to `llm_timeout`).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::ask::ASK_PATH;
use super::embeddings::EMBEDDINGS_PATH;
use super::http::{Request, Response};
use super::{jobs, raw_path};

/// The workers of their own that answer the routes that only report.
pub(super) const REPORT_WORKERS: usize = 2;

/// Where a request is answered.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Lane {
    /// `/health`, `/status`, a job's status: workers of their own, so that
    /// a busy server is never read as a dead one.
    Report,
    /// `/v1/embeddings`, `/v1/ask`: the shared workers, a share of them at most.
    Slow,
    /// Everything else: the shared workers.
    Shared,
}

pub(super) fn lane_of(request: &Request) -> Lane {
    match raw_path(&request.target) {
        "/health" | "/status" | jobs::STATUS_PATH => Lane::Report,
        EMBEDDINGS_PATH | ASK_PATH => Lane::Slow,
        _ => Lane::Shared,
    }
}

/// How many slow requests hold the shared workers: half of them at most,
/// so that the other half stay for searches.
pub(super) struct SlowSlots {
    in_use: AtomicUsize,
    most: usize,
}

/// One slow request's hold on a shared worker, given back when dropped.
pub(super) struct SlowSlot<'a>(&'a AtomicUsize);

impl SlowSlots {
    pub(super) fn for_workers(workers: usize) -> SlowSlots {
        SlowSlots { in_use: AtomicUsize::new(0), most: (workers / 2).max(1) }
    }

    /// A slot, or the 503 that says to come back when none is free.
    pub(super) fn take(&self) -> Result<SlowSlot<'_>, Response> {
        let taken = self.in_use.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < self.most).then_some(n + 1));
        match taken {
            Ok(_) => Ok(SlowSlot(&self.in_use)),
            Err(_) => Err(Response::error(
                503,
                &format!(
                    "the server is answering {} embedding and ask requests, all it takes at once; try again shortly",
                    self.most
                ),
            )
            .with_header("Retry-After", "1")),
        }
    }
}

impl Drop for SlowSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_requests_take_half_the_workers_at_most() {
        let slots = SlowSlots::for_workers(4);
        let (a, b) = (slots.take().ok(), slots.take().ok());
        assert!(a.is_some() && b.is_some());
        let refused = slots.take().err().expect("a third is refused");
        assert_eq!(refused.status, 503);
        drop(a);
        assert!(slots.take().is_ok(), "a slot given back is taken again");
        assert_eq!(SlowSlots::for_workers(1).most, 1, "one worker still answers them");
    }
}
