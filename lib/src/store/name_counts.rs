//! How many chunks name each term (`terms::terms_of_names`), as a change
//! to what a backend keeps: gathered over a batch so that each term's
//! count is written once, and recounted from the chunks to verify it.

use std::collections::HashMap;

/// Changes to the chunks-per-name-term counts and to the count of chunks
/// with names.
#[derive(Default)]
pub(super) struct NameCounts {
    pub(super) terms: HashMap<String, i64>,
    pub(super) named_chunks: i64,
}

impl NameCounts {
    /// Count (`delta` 1) or uncount (-1) a chunk's names.
    pub(super) fn count(&mut self, names: &str, delta: i64) {
        let terms = crate::terms::terms_of_names(names);
        if terms.is_empty() {
            return;
        }
        self.named_chunks += delta;
        for t in terms {
            *self.terms.entry(t).or_default() += delta;
        }
    }
}
