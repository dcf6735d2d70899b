//! How far the embedders are through the files in their hands, for a run's
//! bar: one large file is minutes of the model's time, and a bar that
//! counted whole files stood still through it while its estimate of the
//! time left grew to hours (audit 237).

use std::sync::atomic::{AtomicU64, Ordering};

/// The bytes of the files with the embedders, each file counted in
/// proportion to the steps of its work done (`Share`), and nearly whole
/// once the embedders are through, until the run writes it (`written`).
#[derive(Debug, Default)]
pub(super) struct InHand(AtomicU64);

impl InHand {
    pub(super) fn bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// A file done by the embedders is written: its `bytes`, which its
    /// `Share` left here whole, are counted with the files written instead.
    pub(super) fn written(&self, bytes: u64) {
        self.0.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Where a file's work stands, in thousandths of its bytes: the steps of a
/// run with the model (whose batches take nearly all of the time) and of a
/// static run (chunking about half, the static vectors a third: a 10 MB
/// file, debug build), up to `DONE` when the embedders are through. The
/// rest is the write's: a bar at its end said `eta 0s` for the seconds a
/// file of thousands of chunks took to write (review 246).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Chunked,
    Named,
    /// `done` of `of` static vectors made.
    Statics {
        done: usize,
        of: usize,
    },
    /// `done` of `of` texts embedded by the model.
    Embedded {
        done: usize,
        of: usize,
    },
}

/// The thousandths of a file counted once the embedders are through with it.
const DONE: u64 = 950;

impl Step {
    /// The thousandths of the file's bytes that this step stands at.
    fn permille(self, with_model: bool) -> u64 {
        let between =
            |from: u64, to: u64, done: usize, of: usize| from + (to - from) * done.min(of) as u64 / of.max(1) as u64;
        match (self, with_model) {
            (Step::Chunked, false) => 430,
            (Step::Named, false) => 540,
            (Step::Statics { done, of }, false) => between(540, DONE, done, of),
            (Step::Chunked, true) => 30,
            (Step::Named, true) => 40,
            (Step::Statics { done, of }, true) => between(40, 60, done, of),
            (Step::Embedded { done, of }, _) => between(60, DONE, done, of),
        }
    }
}

/// What a file whose walked size is `size` counts in `InHand` from when the
/// embedders are through with it until it is written (`InHand::written`).
pub(super) fn counted_when_done(size: u64) -> u64 {
    part(size, DONE)
}

fn part(size: u64, permille: u64) -> u64 {
    u64::try_from(u128::from(size) * u128::from(permille) / 1000).unwrap_or(size)
}

/// One file's part of `InHand`: its bytes as the walk saw them (what the
/// bar's total counts it as), in proportion to the steps done. Dropped
/// before `whole`, as when the file fails or the run stops, it takes its
/// part back.
pub(super) struct Share<'a> {
    in_hand: &'a InHand,
    size: u64,
    with_model: bool,
    counted: u64,
    kept: bool,
}

impl<'a> Share<'a> {
    pub(super) fn new(in_hand: &'a InHand, size: u64, with_model: bool) -> Self {
        Share { in_hand, size, with_model, counted: 0, kept: false }
    }

    pub(super) fn reached(&mut self, step: Step) {
        self.count_up_to(part(self.size, step.permille(self.with_model)));
    }

    /// The embedders are through: `counted_when_done` stays counted until
    /// the file is written.
    pub(super) fn whole(mut self) {
        self.count_up_to(counted_when_done(self.size));
        self.kept = true;
    }

    fn count_up_to(&mut self, bytes: u64) {
        if bytes > self.counted {
            self.in_hand.0.fetch_add(bytes - self.counted, Ordering::Relaxed);
            self.counted = bytes;
        }
    }
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.in_hand.written(self.counted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_share_grows_with_its_steps_and_leaves_when_written_or_given_up() {
        let in_hand = InHand::default();
        let mut share = Share::new(&in_hand, 1000, true);
        share.reached(Step::Chunked);
        assert_eq!(in_hand.bytes(), 30);
        share.reached(Step::Embedded { done: 1, of: 2 });
        assert_eq!(in_hand.bytes(), 505);
        let mut other = Share::new(&in_hand, 1000, false);
        other.reached(Step::Statics { done: 1, of: 2 });
        assert_eq!(in_hand.bytes(), 505 + 745);
        drop(other); // failed, or the run stopped
        assert_eq!(in_hand.bytes(), 505);
        share.reached(Step::Chunked); // never back
        assert_eq!(in_hand.bytes(), 505);
        share.whole();
        assert_eq!(in_hand.bytes(), counted_when_done(1000), "counted until written");
        assert!(counted_when_done(1000) < 1000, "the write is still to come");
        in_hand.written(counted_when_done(1000));
        assert_eq!(in_hand.bytes(), 0);
        // No texts for the model: through at once.
        let mut none = Share::new(&in_hand, 7, true);
        none.reached(Step::Embedded { done: 0, of: 0 });
        none.whole();
        assert_eq!(in_hand.bytes(), counted_when_done(7));
    }
}
