//! Whether the served tree has changed while a fill runs: the fill makes
//! way for the refresh only then, so that an edit is searchable within
//! seconds and an unchanged tree costs the fill a walk now and then, not a
//! stop and a start.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::Target;
use crate::project::{self, WalkedFile};

/// Each walked file as the walk saw it: where, size, mtime and ctime.
pub(super) type TreeStamp = Vec<(String, u64, i64, i64)>;

/// The stamp of what a walk admitted.
pub(super) fn stamp_of(files: &[WalkedFile]) -> TreeStamp {
    files.iter().map(|f| (f.rel.clone(), f.size, f.mtime_ns, f.ctime_ns)).collect()
}

/// A fill looks at the tree no more often than every this many times
/// what a look costs (a walk): on a tree that takes long to walk, looking
/// stays a small part of the fill's time.
const FILL_PER_LOOK: u32 = 10;

/// The tree as the round's index run walked it, and when to look again.
pub(super) struct TreeLook {
    /// None when the walk failed: the next run says why.
    stamp: Option<TreeStamp>,
    every: Cell<Duration>,
    next: Cell<Instant>,
}

fn stamp(target: &Target) -> Option<TreeStamp> {
    let walked = project::walk(&target.root, &target.paths, &target.walk).ok()?;
    Some(stamp_of(&walked.files))
}

impl TreeLook {
    /// The tree as `walked` by the round's index run (an edit made since,
    /// even while that run wrote, is then seen, never missed; walked now
    /// when the run did not walk), looked at again once `refresh` has
    /// passed since `round_began` and as often after.
    pub(super) fn new(target: &Target, walked: Option<TreeStamp>, round_began: Instant, refresh: Duration) -> TreeLook {
        let stamp = walked.or_else(|| stamp(target));
        TreeLook { stamp, every: Cell::new(refresh), next: Cell::new(round_began + refresh) }
    }

    /// Whether the tree has changed, when a look is due; false between looks.
    pub(super) fn changed(&self, target: &Target) -> bool {
        let began = Instant::now();
        if began < self.next.get() {
            return false;
        }
        let changed = stamp(target) != self.stamp;
        self.every.set(self.every.get().max(began.elapsed() * FILL_PER_LOOK));
        self.next.set(Instant::now() + self.every.get());
        changed
    }
}
