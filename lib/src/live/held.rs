//! Tables a live searcher holds in memory (the index's words, its static
//! vectors), each read at a word generation (`IndexReader::word_generation`,
//! which a fill does not move) and read again in the background when that
//! changes: no search waits for one, the store answers meanwhile.

use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Result};

use super::{lock, LiveIndex};
use crate::search::{VectorTable, WordTable};
use crate::store::{self, IndexReader};

/// A table read at one word generation of the index, which it names.
pub(super) trait HeldTable: Send + Sync + 'static {
    /// What it is, for the note when it cannot be read.
    const WHAT: &'static str;
    /// The word generation it was read at.
    fn generation(&self) -> i64;
    /// Read it from `store`.
    fn load(store: &dyn IndexReader) -> Result<Self>
    where
        Self: Sized;
}

impl HeldTable for WordTable {
    const WHAT: &'static str = "words";
    fn generation(&self) -> i64 {
        self.generation
    }
    fn load(store: &dyn IndexReader) -> Result<Self> {
        WordTable::load(store)
    }
}

/// The chunks' static vectors, read at a word generation: only a change
/// to the words changes them (`IndexReader::each_static_vector`).
impl HeldTable for VectorTable {
    const WHAT: &'static str = "static vectors";
    fn generation(&self) -> i64 {
        self.generation
    }
    fn load(store: &dyn IndexReader) -> Result<Self> {
        Ok(VectorTable::load_statics(store)?)
    }
}

/// One held table and its loader.
pub(super) struct Held<T> {
    /// The table as last read; used only while the index is at its generation.
    table: Option<Arc<T>>,
    /// A loader is reading it now.
    loading: bool,
    /// The generation reading failed at, not tried again.
    failed: Option<i64>,
}

impl<T> Default for Held<T> {
    fn default() -> Self {
        Held { table: None, loading: false, failed: None }
    }
}

impl<T: HeldTable> Held<T> {
    /// The table if it was read at `generation` (the index's word
    /// generation now); otherwise None, and it is read again in the background, one
    /// reader at a time, so that a later search has it. A million chunks'
    /// words take a while to read; no search waits for them.
    pub(super) fn current(held: &Arc<Mutex<Self>>, generation: i64, live: &Arc<LiveIndex>) -> Option<Arc<T>> {
        let mut state = lock(held);
        if let Some(table) = state.table.as_ref().filter(|t| t.generation() == generation) {
            return Some(Arc::clone(table));
        }
        // A table of another generation never answers again: free it now.
        state.table = None;
        if !state.loading && state.failed != Some(generation) {
            state.loading = true;
            let (held, live) = (Arc::clone(held), Arc::clone(live));
            std::thread::spawn(move || load_into(&held, &live));
        }
        None
    }

    /// Whether the table is held, read at `generation`.
    pub(super) fn is_at(held: &Mutex<Self>, generation: i64) -> bool {
        lock(held).table.as_ref().is_some_and(|t| t.generation() == generation)
    }

    /// Let the table go (no search needs it now).
    pub(super) fn release(held: &Mutex<Self>) {
        lock(held).table = None;
    }
}

/// Read the live index's table into `held`, on a connection of its own.
fn load_into<T: HeldTable>(held: &Mutex<Held<T>>, live: &LiveIndex) {
    let mut generation = None;
    let load = || -> Result<T> {
        let store = store::open_for_reading(&live.target.root)?;
        generation = Some(store.word_generation()?);
        T::load(&*store)
    };
    // A panic must not leave `loading` set, or no search would read it again.
    let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load))
        .unwrap_or_else(|_| Err(anyhow!("reading the {} panicked", T::WHAT)));
    let mut state = lock(held);
    state.loading = false;
    match loaded {
        Ok(table) => state.table = Some(Arc::new(table)),
        Err(e) => {
            state.failed = generation;
            drop(state);
            let why = crate::project::shown::error_line(&e);
            live.note(&format!("cannot hold the index's {} in memory, so the index answers for them: {why}", T::WHAT));
        }
    }
}
