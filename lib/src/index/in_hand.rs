//! How far the embedders are through the files in their hands, for a run's
//! bar: one large file is minutes of the model's time, and a bar that
//! counted whole files stood still through it while its estimate of the
//! time left grew to hours (audit 237).

use std::sync::atomic::{AtomicU64, Ordering};

/// The bytes of the files with the embedders, each file counted in
/// proportion to its chunks embedded so far (`Share`), and whole once done
/// until the run writes it (`written`).
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

/// One file's part of `InHand`, `size` bytes at most. Dropped before
/// `whole`, as when the file fails or the run stops, it takes its part back.
pub(super) struct Share<'a> {
    in_hand: &'a InHand,
    size: u64,
    counted: u64,
    kept: bool,
}

impl<'a> Share<'a> {
    pub(super) fn new(in_hand: &'a InHand, size: u64) -> Self {
        Share { in_hand, size, counted: 0, kept: false }
    }

    /// `done` of the file's `of` texts for the model are embedded.
    pub(super) fn embedded(&mut self, done: usize, of: usize) {
        let part = u128::from(self.size) * done as u128 / of.max(1) as u128;
        self.count_up_to(u64::try_from(part).unwrap_or(self.size).min(self.size));
    }

    /// The file is done: all of its bytes stay counted until it is written.
    pub(super) fn whole(mut self) {
        self.count_up_to(self.size);
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
    fn a_files_share_grows_with_its_chunks_and_leaves_when_written_or_given_up() {
        let in_hand = InHand::default();
        let mut share = Share::new(&in_hand, 1000);
        share.embedded(1, 4);
        assert_eq!(in_hand.bytes(), 250);
        let mut other = Share::new(&in_hand, 10);
        other.embedded(1, 2);
        assert_eq!(in_hand.bytes(), 255);
        drop(other); // failed, or the run stopped
        assert_eq!(in_hand.bytes(), 250);
        share.embedded(3, 4);
        share.whole();
        assert_eq!(in_hand.bytes(), 1000, "counted whole until written");
        in_hand.written(1000);
        assert_eq!(in_hand.bytes(), 0);
        // No texts for the model at all: nothing until done.
        let mut none = Share::new(&in_hand, 7);
        none.embedded(0, 0);
        assert_eq!(in_hand.bytes(), 0);
        none.whole();
        assert_eq!(in_hand.bytes(), 7);
    }
}
