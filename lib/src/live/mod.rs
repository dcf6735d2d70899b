//! A project kept searchable while it changes: a background thread indexes
//! the target's paths and re-walks them every `refresh`, while searches read
//! the index as it stands (ProgressiveModesContinueWhileIndexing). vg-serve
//! and the interactive picker are both built on this.
//!
//! Searches never wait for indexing: each searcher reads through its own
//! SQLite connection (WAL lets readers and the one writer proceed together),
//! and the query model is shared behind a mutex held only while embedding.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Result;

mod runs;
mod searcher;
mod status;

pub use runs::{RunOutcome, RunTicket, JOB_STOPPED};
pub use searcher::Searcher;
pub use status::{IndexingState, LiveStatus};

use crate::index::{self, EmbedderPool, FileOutcome, IndexObserver, IndexRequest, IndexSummary, WalkedSet};
use crate::project::ResolvedConfig;
use crate::project::{AdmittedPath, ProjectRoot};
use crate::project::{Skip, WalkOptions};
use crate::store::{IndexReader, Scope};
use runs::Runs;

/// A thread's connection to the index, opened when first needed and
/// dropped after a failure (the index may have been rebuilt under it).
pub type StoreSlot = Option<Box<dyn IndexReader>>;

/// What is kept searchable.
pub struct Target {
    pub root: ProjectRoot,
    pub paths: Vec<AdmittedPath>,
    pub walk: WalkOptions,
    pub config: ResolvedConfig,
}

impl Target {
    /// The served paths relative to the root (`""` is the whole root).
    pub fn scope_names(&self) -> Vec<String> {
        self.paths.iter().map(|p| p.rel.clone()).collect()
    }
}

/// How far indexing is, as the indexer last reported it.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// An index run has files to embed right now.
    pub indexing: bool,
    /// Files processed of `total` in the current (or last) run that had work.
    pub indexed: u64,
    /// Files needing work in that run; None while walking.
    pub total: Option<u64>,
    /// Why the last index run failed.
    pub error: Option<String>,
    /// An index run has completed since the start.
    pub ran: bool,
}

#[derive(Default)]
struct State {
    progress: Progress,
    /// The files the last walk admitted, to scope searches under filters.
    walked: Option<Arc<WalkedSet>>,
    /// Runs asked for, begun and ended (`runs.rs`).
    runs: Runs,
}

/// The index of a target, kept up to date by a background thread.
pub struct LiveIndex {
    pub target: Target,
    state: Mutex<State>,
    shutdown: Arc<AtomicBool>,
    notes: Box<dyn Fn(&str) + Send + Sync>,
}

/// Milliseconds since the epoch, as index jobs record times.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().min(i64::MAX as u128) as i64)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking thread leaves the data usable: every update is a plain assignment.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LiveIndex {
    /// `notes` hears what the user should know (runs that changed something,
    /// failures); `shutdown` stops the indexer after the file in hand.
    pub fn new(target: Target, shutdown: Arc<AtomicBool>, notes: Box<dyn Fn(&str) + Send + Sync>) -> Arc<Self> {
        let state = State { progress: Progress { indexing: true, ..Default::default() }, ..Default::default() };
        Arc::new(LiveIndex { target, state: Mutex::new(state), shutdown, notes })
    }

    /// The caller has just brought the paths up to date in a blocking run
    /// (`full_index`): start out ready, not "indexing", until the first
    /// refresh says otherwise.
    pub fn mark_indexed(&self) {
        let mut state = lock(&self.state);
        state.progress.indexing = false;
        state.progress.ran = true;
    }

    /// Tell the user something, as the index runs do.
    pub fn note(&self, message: &str) {
        (self.notes)(message);
    }

    pub fn progress(&self) -> Progress {
        lock(&self.state).progress.clone()
    }

    /// Which files a search may return: those under the paths, and under
    /// walk filters only those the last walk admitted.
    pub fn scope(&self) -> Scope {
        let walked = lock(&self.state).walked.clone();
        Scope {
            prefixes: self.target.scope_names(),
            files: if self.target.walk.is_filtered() { walked.map(|w| (*w).clone()) } else { None },
        }
    }

    /// One index run over the paths, in the caller's thread. `first` says
    /// whether it is the first since the start (it is then always reported).
    pub fn index_once(&self, embedders: &mut EmbedderPool, first: bool) -> Result<IndexSummary> {
        let t = &self.target;
        // Runs here embed fully, whatever `static_tier` says: searchers
        // rank from the vectors in memory and do not embed candidates, so a
        // chunk without the model's vector would never be found by meaning.
        // (A static index is filled by the first run, file by file.)
        let config = ResolvedConfig { static_tier: false, ..t.config.clone() };
        let request = IndexRequest {
            root: &t.root,
            paths: &t.paths,
            walk: &t.walk,
            config: &config,
            reindex: false,
            warn_on_large: false,
            smallest_first: true,
        };
        let mut observer = LiveObserver { live: self, first };
        let result = index::run(&request, embedders, &mut observer);
        let mut state = lock(&self.state);
        state.progress.indexing = false;
        state.progress.ran = true;
        match result {
            Ok((summary, walked)) => {
                state.walked = Some(Arc::new(walked));
                state.progress.error = None;
                drop(state);
                if first || summary.embedded > 0 || summary.removed > 0 {
                    (self.notes)(&format!(
                        "index: {} files, {} chunks ({} embedded, {} removed) in {:.1} s",
                        summary.files, summary.chunks, summary.embedded, summary.removed, summary.seconds
                    ));
                }
                Ok(summary)
            }
            Err(e) => {
                let message = format!("{e:#}");
                // Say it once, not at every refresh while it persists.
                let repeated = state.progress.error.as_deref() == Some(message.as_str());
                state.progress.error = Some(message.clone());
                drop(state);
                if !repeated {
                    (self.notes)(&format!("indexing failed: {message}"));
                }
                Err(e)
            }
        }
    }

    /// Index in a background thread now and then every `refresh`, until
    /// shutdown, and at once when a run is asked for (`runs.rs`).
    pub fn spawn(self: &Arc<Self>, mut embedders: EmbedderPool, refresh: Duration, mut first: bool) -> JoinHandle<()> {
        let live = Arc::clone(self);
        std::thread::spawn(move || {
            while !live.shutdown.load(Ordering::SeqCst) {
                let jobs = live.begin_run();
                // A failure is in `progress` and was reported; the next round tries again.
                let result = live.index_once(&mut embedders, first);
                live.end_run(&jobs, &result);
                first = false;
                let until = Instant::now() + refresh;
                while Instant::now() < until && !live.shutdown.load(Ordering::SeqCst) && !live.run_requested() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        })
    }
}

struct LiveObserver<'a> {
    live: &'a LiveIndex,
    first: bool,
}

impl IndexObserver for LiveObserver<'_> {
    fn note(&mut self, message: &str) {
        (self.live.notes)(message);
    }

    fn planned(&mut self, _files: usize, to_embed: usize) {
        let mut state = lock(&self.live.state);
        if self.first || to_embed > 0 {
            state.progress.indexing = true;
            state.progress.indexed = 0;
            state.progress.total = Some(to_embed as u64);
        }
    }

    fn confirm_large(&mut self, _to_embed: usize, _threshold: u64) -> bool {
        // The large-index prompt belongs to blocking runs only.
        true
    }

    fn skipped(&mut self, skip: &Skip) {
        if skip.reason.is_error() {
            (self.live.notes)(&format!("skipping {}: {}", skip.path, skip.reason.describe()));
        }
    }

    fn file(&mut self, _rel: &str, _outcome: FileOutcome, _chunks: u64) {}

    fn progress(&mut self, done: usize, _total: usize, _chunks: u64) {
        lock(&self.live.state).progress.indexed = done as u64;
    }

    fn cancelled(&self) -> bool {
        self.live.shutdown.load(Ordering::SeqCst)
    }
}
