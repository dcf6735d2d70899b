//! Whether the served tree has changed while a fill runs: the fill makes
//! way for the refresh only then, so that an edit is searchable within
//! seconds and an unchanged tree costs the fill a walk now and then, not a
//! stop and a start.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::Target;
use crate::project;

/// Each walked file as the walk saw it: where, size, mtime and ctime.
type TreeStamp = Vec<(String, u64, i64, i64)>;

/// A fill looks at the tree no more often than every this many times
/// what a look costs (a walk): on a tree that takes long to walk, looking
/// stays a small part of the fill's time.
const FILL_PER_LOOK: u32 = 10;

/// The tree as a fill round began, and when to look at it again.
pub(super) struct TreeLook {
    /// None when the walk failed: the next run says why.
    stamp: Option<TreeStamp>,
    every: Duration,
    next: Cell<Instant>,
}

fn stamp(target: &Target) -> Option<TreeStamp> {
    let walked = project::walk(&target.root, &target.paths, &target.walk).ok()?;
    Some(walked.files.into_iter().map(|f| (f.rel, f.size, f.mtime_ns, f.ctime_ns)).collect())
}

impl TreeLook {
    /// The tree now, before the fill walks it (a change made in between is
    /// then seen, never missed), looked at again once `refresh` has passed
    /// since `round_began` and as often after.
    pub(super) fn new(target: &Target, round_began: Instant, refresh: Duration) -> TreeLook {
        let began = Instant::now();
        let stamp = stamp(target);
        let cost = began.elapsed() * FILL_PER_LOOK;
        let first = (round_began + refresh).max(Instant::now() + cost);
        TreeLook { stamp, every: refresh.max(cost), next: Cell::new(first) }
    }

    /// Whether the tree has changed, when a look is due; false between looks.
    pub(super) fn changed(&self, target: &Target) -> bool {
        if Instant::now() < self.next.get() {
            return false;
        }
        let changed = stamp(target) != self.stamp;
        self.next.set(Instant::now() + self.every);
        changed
    }
}
