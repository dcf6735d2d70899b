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

use anyhow::{anyhow, Result};

use crate::embed::LazyEmbedder;
use crate::index::{self, EmbedderPool, FileOutcome, IndexObserver, IndexRequest, IndexSummary, WalkedSet};
use crate::project::{AdmittedPath, ProjectRoot};
use crate::project::{ResolvedConfig, SearchMode};
use crate::project::{Skip, WalkOptions};
use crate::search::{self, Hit, SearchRequest, VectorTable};
use crate::store::{self, IndexReader, JobState, Scope};

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
    /// Index jobs asked for since the last run began, by id: the next run
    /// is theirs, and it begins at once.
    jobs: Vec<String>,
}

/// The index of a target, kept up to date by a background thread.
pub struct LiveIndex {
    pub target: Target,
    state: Mutex<State>,
    shutdown: Arc<AtomicBool>,
    notes: Box<dyn Fn(&str) + Send + Sync>,
}

/// What an index job reads as when its server stopped before the run ended.
pub const JOB_STOPPED: &str = "the server stopped before the run finished";

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
        let request = IndexRequest {
            root: &t.root,
            paths: &t.paths,
            walk: &t.walk,
            config: &t.config,
            reindex: false,
            warn_on_large: false,
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
    /// shutdown, and at once when a job asks for a run (`start_job`).
    pub fn spawn(self: &Arc<Self>, mut embedders: EmbedderPool, refresh: Duration, mut first: bool) -> JoinHandle<()> {
        let live = Arc::clone(self);
        std::thread::spawn(move || {
            while !live.shutdown.load(Ordering::SeqCst) {
                let jobs = std::mem::take(&mut lock(&live.state).jobs);
                // A failure is in `progress` and was reported; the next round tries again.
                let result = live.index_once(&mut embedders, first);
                live.finish_jobs(&jobs, &result);
                first = false;
                let until = Instant::now() + refresh;
                while Instant::now() < until
                    && !live.shutdown.load(Ordering::SeqCst)
                    && lock(&live.state).jobs.is_empty()
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        })
    }

    /// Ask for an index run now, on behalf of the job `id` (kept in the
    /// index as running by the caller); the run records how it ended.
    pub fn start_job(&self, id: String) {
        lock(&self.state).jobs.push(id);
    }

    /// Record in the index how the run of `jobs` ended.
    fn finish_jobs(&self, jobs: &[String], result: &Result<IndexSummary>) {
        if jobs.is_empty() {
            return;
        }
        let now = now_ms();
        let recorded = store::open_in_place(&self.target.root).and_then(|mut store| {
            for id in jobs {
                let Some(mut job) = store.index_job(id)? else { continue };
                job.finished_ms = Some(now);
                match result {
                    Ok(s) if s.cancelled => (job.state, job.error) = (JobState::Failed, Some(JOB_STOPPED.into())),
                    Ok(s) => {
                        job.state = JobState::Completed;
                        (job.files, job.chunks, job.embedded, job.removed) =
                            (Some(s.files), Some(s.chunks), Some(s.embedded), Some(s.removed));
                    }
                    Err(e) => (job.state, job.error) = (JobState::Failed, Some(format!("{e:#}"))),
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

/// Searches over a live index, shared by any number of threads; each
/// thread passes its own store slot (its own connection to the index).
pub struct Searcher {
    live: Arc<LiveIndex>,
    embedder: Mutex<LazyEmbedder>,
    /// The index's vectors in memory, reloaded when the index changes.
    vectors: Mutex<Option<Arc<VectorTable>>>,
}

impl Searcher {
    pub fn new(live: Arc<LiveIndex>, embedder: LazyEmbedder) -> Self {
        Searcher { live, embedder: Mutex::new(embedder), vectors: Mutex::new(None) }
    }

    pub fn live(&self) -> &Arc<LiveIndex> {
        &self.live
    }

    /// Load the query model now rather than at the first search.
    pub fn load_model(&self) -> Result<()> {
        lock(&self.embedder).get().map(|_| ())
    }

    /// A search of `query` over the live index's scope.
    pub fn request<'q>(&self, query: &'q str, k: usize, threshold: f32, mode: SearchMode) -> SearchRequest<'q> {
        SearchRequest { query, mode, scope: self.live.scope(), k, threshold, filter: Default::default() }
    }

    /// The best hits for `request`. `store` is the caller's connection,
    /// opened on first use and dropped after a failure so that the next
    /// search opens a fresh one (the index may have been rebuilt under it).
    /// Before the first index run has created the index there is nothing to
    /// find, which is not a failure.
    pub fn search(&self, store: &mut Option<Box<dyn IndexReader>>, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        let result = self.search_with(store, request);
        if result.is_err() {
            *store = None;
        }
        result
    }

    fn search_with(&self, store: &mut Option<Box<dyn IndexReader>>, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        if store.is_none() {
            match store::open_for_reading(&self.live.target.root) {
                Ok(s) => *store = Some(s),
                Err(_) if !self.live.progress().ran => return Ok(Vec::new()),
                Err(e) => return Err(e.into()),
            }
        }
        let store = store.as_deref().ok_or_else(|| anyhow!("no index"))?;
        let request = &request.clone().narrowed(store)?;
        let needs_model = search::needs_embedder(request.mode);
        let vectors = if needs_model { Some(self.current_vectors(store)?) } else { None };
        // The query is embedded while the word index is searched: they take
        // about as long as each other, and together most of a search. With
        // the query model on one thread, each has a core (tokio: 4.2 ms
        // per /search instead of 5.8 ms, bench/perf.sh).
        let (vector, lexical) = std::thread::scope(|s| {
            let embedding = needs_model.then(|| {
                s.spawn(|| {
                    let mut embedder = lock(&self.embedder);
                    search::embed_query(Some(embedder.get()?), request)
                })
            });
            let lexical = search::lexical_ranking(store, vectors.as_deref(), request);
            let vector = match embedding {
                Some(handle) => handle.join().unwrap_or_else(|_| Err(anyhow!("embedding the query panicked"))),
                None => Ok(None),
            };
            (vector, lexical)
        });
        let (vector, lexical) = (vector?, lexical?);
        let ranking = search::Ranking { vectors: vectors.as_deref(), vector: vector.as_deref(), lexical };
        search::search_embedded(store, ranking, request)
    }

    /// The vectors of the index as it is now: those in memory if the index
    /// has not changed since they were read, otherwise read again (once, by
    /// the first search that notices).
    fn current_vectors(&self, store: &dyn IndexReader) -> Result<Arc<VectorTable>> {
        let generation = store.generation()?;
        let mut cached = lock(&self.vectors);
        if let Some(table) = cached.as_ref().filter(|t| t.generation == generation) {
            return Ok(Arc::clone(table));
        }
        let table = Arc::new(VectorTable::load(store)?);
        *cached = Some(Arc::clone(&table));
        Ok(table)
    }
}
