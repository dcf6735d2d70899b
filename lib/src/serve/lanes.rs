//! Which workers answer a request: one client must not leave a monitor's
//! `/health` or everyone's searches waiting behind requests that each hold
//! a worker for seconds (a batch of texts waiting for one of the few
//! models, a question waiting for a chat model up to `llm_timeout`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::ask::ASK_PATH;
use super::embeddings::EMBEDDINGS_PATH;
use super::http::Request;
use super::{jobs, raw_path};

/// The workers of their own that answer the routes that only report.
pub(super) const REPORT_WORKERS: usize = 2;

/// Where a request is answered.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Lane {
    /// `/health`, `/status`, a job's status: workers of their own, so that
    /// a busy server is never read as a dead one.
    Report,
    /// `/v1/embeddings`: the shared workers, half of them at most.
    Embeddings,
    /// `/v1/ask`: the shared workers, a quarter of them at most.
    Ask,
    /// Everything else: the shared workers.
    Shared,
}

pub(super) fn lane_of(request: &Request) -> Lane {
    match raw_path(&request.target) {
        "/health" | "/status" | jobs::STATUS_PATH => Lane::Report,
        EMBEDDINGS_PATH => Lane::Embeddings,
        ASK_PATH => Lane::Ask,
        _ => Lane::Shared,
    }
}

/// How many requests of one slow route hold shared workers at once. One
/// past it waits on its own connection's thread, holding no worker, until
/// one ends: refused instead, a remote embedder's batches failed where
/// they used to queue (vecgrep's client retries for under two seconds).
pub(super) struct SlowSlots {
    in_use: Mutex<usize>,
    freed: Condvar,
    most: usize,
}

/// One slow request's hold on a shared worker, given back when dropped.
pub(super) struct SlowSlot<'a>(&'a SlowSlots);

impl SlowSlots {
    /// `1 / share` of `workers` (at least one).
    pub(super) fn share_of(workers: usize, share: usize) -> SlowSlots {
        SlowSlots { in_use: Mutex::new(0), freed: Condvar::new(), most: (workers / share).max(1) }
    }

    /// A slot, once one is free; None when the server stops meanwhile.
    pub(super) fn take(&self, shutdown: &AtomicBool) -> Option<SlowSlot<'_>> {
        let mut in_use = crate::live::lock(&self.in_use);
        while *in_use >= self.most {
            if shutdown.load(Ordering::SeqCst) {
                return None;
            }
            in_use = self
                .freed
                .wait_timeout(in_use, Duration::from_millis(100))
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        *in_use += 1;
        Some(SlowSlot(self))
    }
}

impl Drop for SlowSlot<'_> {
    fn drop(&mut self) {
        *crate::live::lock(&self.0.in_use) -= 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_request_past_its_share_waits_for_a_slot_and_takes_the_one_freed() {
        let slots = SlowSlots::share_of(4, 2);
        let running = AtomicBool::new(false);
        let (a, b) = (slots.take(&running), slots.take(&running));
        assert!(a.is_some() && b.is_some());
        std::thread::scope(|s| {
            let third = s.spawn(|| slots.take(&running).is_some());
            std::thread::sleep(Duration::from_millis(300));
            assert!(!third.is_finished(), "a third waits while two hold their slots");
            drop(a);
            assert!(third.join().unwrap(), "and takes the slot given back");
        });
        let c = slots.take(&running);
        assert!(c.is_some(), "b and c hold both slots");
        let stopping = AtomicBool::new(true);
        assert!(slots.take(&stopping).is_none(), "a stopping server gives none to a request that would wait");
        drop((b, c));
        assert_eq!(SlowSlots::share_of(1, 4).most, 1, "one worker still answers them");
    }
}
