//! A project kept searchable while it changes: a background thread indexes
//! the target's paths and re-walks them every `refresh`, while searches read
//! the index as it stands (ProgressiveModesContinueWhileIndexing). vg-serve
//! and the interactive picker are both built on this.
//!
//! Searches never wait for indexing: each searcher reads through its own
//! SQLite connection (WAL lets readers and the one writer proceed together),
//! and the query model is shared behind a mutex held only while embedding.

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Result;

mod config_watch;
mod filled;
mod held;
mod priority;
mod runs;
mod scope;
mod searcher;
mod status;
mod tree_look;

pub use runs::{RunOutcome, RunTicket, JOB_STOPPED};
pub use scope::{confine, Refusal, RefusalKind};
pub use searcher::{IndexRemoved, Searched, Searcher};
pub use status::{failed_run_note, IndexingState, LiveStatus, OthersRun};

use crate::index::{
    self, EmbedderPool, FileOutcome, IndexObserver, IndexRequest, IndexSummary, RunProgress, WalkedSet,
};
use crate::project::ResolvedConfig;
use crate::project::{AdmittedPath, ProjectRoot};
use crate::project::{Skip, SkipReason, WalkOptions};
use crate::store::{self, IndexReader, Scope};
use config_watch::ConfigWatch;
use runs::Runs;
use tree_look::{TreeLook, TreeStamp};

/// A thread's connection to the index, opened when first needed and
/// dropped after a failure or when the index was replaced under it
/// (`open_slot`).
pub type StoreSlot = Option<Box<dyn IndexReader>>;

/// Give `slot` a connection to `root`'s index when it has none, or when
/// the index it reads was removed or rebuilt since it was opened: a
/// connection to the old file would go on answering from it (a damaged
/// index rebuilt by a refresh was searched, and reported, as it was
/// before, for good). The slot stays empty when the index cannot be opened.
pub fn open_slot(slot: &mut StoreSlot, root: &ProjectRoot) -> Result<(), store::StoreError> {
    if slot.as_deref().is_some_and(|s| s.replaced()) {
        *slot = None;
    }
    if slot.is_none() {
        *slot = Some(store::open_for_reading(root)?);
    }
    Ok(())
}

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
    /// A fill is giving chunks the model's vectors (`LiveIndex::fill`):
    /// every file is searchable meanwhile; `indexed` and `total` count its files.
    pub filling: bool,
    /// An index run is giving the chunks another static table's vectors
    /// (vecgrep's table was updated), before its walk; searches read the
    /// previous ones until it commits.
    pub recomputing: Option<Recomputing>,
    /// The run is waiting for another's lock on the project, before its walk.
    pub waiting: bool,
}

/// How far the recomputing of static vectors is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct Recomputing {
    /// Chunks given the new table's vectors so far.
    pub done: u64,
    /// Chunks in all.
    pub of: u64,
}

#[derive(Default)]
struct State {
    progress: Progress,
    /// The files the last walk admitted, to scope searches under filters.
    walked: Option<Arc<WalkedSet>>,
    /// Errors the last walk met (`index::search_keeps_to_walk`).
    walk_errors: u64,
    /// The last run left the index marked unfinished itself, files it could
    /// not read for a reason that may pass (`IndexSummary::unread`): the
    /// mark is no sign of another process's run (`others_run`).
    own_mark: bool,
    /// Runs asked for, begun and ended (`runs.rs`).
    runs: Runs,
    /// A fill that made way for the refresh, to resume after it.
    fill_so_far: Option<FillSoFar>,
    /// A round of this server's fill is at work, holding the index's lock:
    /// no other process's run (`others_run`).
    fill_round_under_way: bool,
    /// The served paths the last run found gone (`say_gone_paths`).
    gone: Vec<String>,
    /// Since when runs have been passed over, another run holding the lock
    /// (`LiveObserver::passes_over_a_busy_lock`).
    passed_over_since: Option<Instant>,
    /// The tree as the last index run walked it, for the fill to look
    /// at for changes (`TreeLook`).
    walked_stamp: Option<TreeStamp>,
}

/// What the rounds of a fill that yielded to the refresh did, so that the
/// rest of it counts on from there and the whole fill is said once.
#[derive(Clone, Default)]
struct FillSoFar {
    /// Files given the model's vectors in the earlier rounds.
    files: u64,
    /// Those rounds' totals (`with_earlier_rounds`).
    summary: IndexSummary,
    /// The index file they were written to (`index_file`): an index
    /// removed or rebuilt since holds none of them.
    index: Option<store::FileIdentity>,
}

/// How long a live index passes over its refreshes while another run holds
/// the lock before it waits for it (`passes_over_a_busy_lock`).
const PASSED_OVER_AT_MOST: Duration = Duration::from_secs(30);

/// The file the index of `root` is now, for a local index that exists:
/// another file at its path is another index (`vg-index --clear-cache`,
/// `rm -rf .vecgrep`).
fn index_file(root: &crate::project::ProjectRoot) -> Option<store::FileIdentity> {
    root.shared.is_none().then(|| store::file_identity(&root.index_path())).flatten()
}

/// How a fill in the background ended.
enum FillEnd {
    /// No chunk lacked the model's vector, or the fill failed (said).
    Over,
    /// It ran to its end, or stopped for a shutdown.
    Ran,
    /// It made way for the refresh (the tree changed) after the files in
    /// hand; the next round comes at once and its fill resumes it.
    Yielded,
    /// It stopped for a run asked for or for another writer; the next
    /// round comes as usual and its fill resumes it.
    Paused,
}

/// The index of a target, kept up to date by a background thread.
pub struct LiveIndex {
    pub target: Target,
    state: Mutex<State>,
    /// The config files as they were at the start: looked at apart from
    /// `state`, which searches and `/status` take meanwhile.
    config: Mutex<ConfigWatch>,
    shutdown: Arc<AtomicBool>,
    notes: Box<dyn Fn(&str) + Send + Sync>,
    /// The skips worth saying (errors, the server's own output) and the
    /// warnings (`warned`) said by the last run and by the run under way:
    /// each is said once while it persists, not at every refresh.
    skips_said: Mutex<SkipsSaid>,
    /// Whether the skips vg-index names (`SkipReason::is_notable`) are said
    /// too (`say_notable_skips`).
    notable_skips: AtomicBool,
}

#[derive(Default)]
struct SkipsSaid {
    last_run: HashSet<String>,
    this_run: HashSet<String>,
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
        let config = Mutex::new(ConfigWatch::new(&target.root, &target.config.command_line));
        let skips_said = Mutex::default();
        let notable_skips = AtomicBool::new(false);
        Arc::new(LiveIndex { target, state: Mutex::new(state), config, shutdown, notes, skips_said, notable_skips })
    }

    /// Say the skips vg-index names as well (a file over max_filesize, a
    /// FIFO): a server's log is where its user learns what its answers
    /// leave out, which were left out in silence. The picker, a search,
    /// leaves them to vg-index, as vg-query does.
    pub fn say_notable_skips(&self) {
        self.notable_skips.store(true, Ordering::SeqCst);
    }

    /// The caller has just brought the paths up to date in a blocking run
    /// (`full_index`) that walked `walked`: start out ready, not
    /// "indexing", until the first refresh says otherwise, searching what
    /// that walk admitted.
    pub fn mark_indexed(&self, walked: WalkedSet, errors: u64) {
        let mut state = lock(&self.state);
        state.progress.indexing = false;
        state.progress.ran = true;
        state.walked = Some(Arc::new(walked));
        state.walk_errors = errors;
    }

    /// Tell the user something, as the index runs do.
    pub fn note(&self, message: &str) {
        (self.notes)(message);
    }

    pub fn progress(&self) -> Progress {
        lock(&self.state).progress.clone()
    }

    /// Which files a search may return: those under the paths, and, where
    /// the index keeps entries the walk passed over (walk filters, several
    /// paths, a directory or a catalog's project the walk could not read),
    /// only those the last walk admitted.
    pub fn scope(&self) -> Scope {
        let (files, errors) = self.admitted_files();
        let narrowed = crate::index::search_keeps_to_walk(&self.target.walk, &self.target.paths, errors);
        Scope { prefixes: self.target.scope_names(), files: narrowed.then(|| (*files).clone()) }
    }

    /// Whether `store` holds no file a search of the served paths may
    /// return, though it may hold other paths' (an earlier run's). False
    /// when the index cannot be read: that is said apart.
    pub fn holds_no_served_file(&self, store: &dyn IndexReader) -> bool {
        let scope = self.scope();
        store.files(false).is_ok_and(|files| !files.keys().any(|path| scope.admits(path)))
    }

    /// The files the last walk admitted, and the errors it met; before any
    /// run has walked, a walk of its own, kept until a run's replaces it:
    /// searched in the meantime, the index's entries went unfiltered, and a
    /// server told `-g '!secret/**'` served the secrets an earlier run had
    /// indexed. A walk that fails admits nothing.
    fn admitted_files(&self) -> (Arc<WalkedSet>, u64) {
        let last = {
            let state = lock(&self.state);
            state.walked.clone().map(|walked| (walked, state.walk_errors))
        };
        if let Some(last) = last {
            return last;
        }
        let t = &self.target;
        let (walked, errors): (WalkedSet, u64) = match crate::project::walk(&t.root, &t.paths, &t.walk) {
            Ok(w) => {
                let errors = w.skips.iter().filter(|s| s.reason.is_error()).count() as u64;
                (w.files.into_iter().map(|f| f.rel).collect(), errors)
            }
            Err(_) => (WalkedSet::new(), 0),
        };
        let mut state = lock(&self.state);
        if state.walked.is_none() {
            state.walk_errors = errors;
        }
        (state.walked.get_or_insert_with(|| Arc::new(walked)).clone(), state.walk_errors)
    }

    /// One index run over the paths, in the caller's thread: every file
    /// walked, chunked and in the word index, new chunks with static vectors
    /// (`embed_all` aside), so that it takes seconds even on a cold tree;
    /// `fill` gives them the model's vectors next. `first` says whether it
    /// is the first since the start (it is then always reported). A
    /// failure is returned, not said: the caller says it (it was said twice).
    pub fn index_once(&self, embedders: &mut EmbedderPool, first: bool) -> Result<IndexSummary> {
        self.index_once_asked(embedders, first, false, Failure::Returned)
    }

    /// `index_once`, `asked` for (an index job, a request): such a run, as
    /// the first, waits for another run holding the lock, where a refresh
    /// is passed over (`passes_over_a_busy_lock`).
    fn index_once_asked(
        &self,
        embedders: &mut EmbedderPool,
        first: bool,
        asked: bool,
        failure: Failure,
    ) -> Result<IndexSummary> {
        lock(&self.state).walked_stamp = None;
        let mut observer = LiveObserver::new(self, first, false);
        observer.asked = asked;
        let result = self.run(embedders, &self.target.config, &mut observer);
        // A fill follows a run that left chunks without the model's vector:
        // say so now, so that the status never reads `ready` in between.
        // A server shutting down asks no more of the index (for a shared
        // one, a connection that may take its time to fail).
        if result.is_ok() {
            self.say_gone_paths();
        }
        let fill_next = result.is_ok() && !self.shutdown.load(Ordering::SeqCst) && self.fill_due();
        let mut state = lock(&self.state);
        state.progress.indexing = false;
        state.progress.filling = fill_next;
        state.progress.recomputing = None;
        state.progress.ran = true;
        drop(state);
        self.report(result, |s| first || s.embedded > 0 || s.removed > 0 || s.pending > 0, failure)
    }

    /// Give every chunk that lacks it the model's vector, file by file, in
    /// the caller's thread; what each file gets is committed at once, so an
    /// interrupted fill resumes where it stopped. It stops early at
    /// shutdown or when a run is asked for (that run comes first). A
    /// failure is returned for the caller to say, as `index_once`'s.
    pub fn fill(&self, embedders: &mut EmbedderPool) -> Result<Option<IndexSummary>> {
        if !self.fill_due() {
            lock(&self.state).progress.filling = false;
            return Ok(None);
        }
        let config = ResolvedConfig { embed_all: true, ..self.target.config.clone() };
        // Before listening (`--full-index`): waited for, as promised.
        let mut observer = LiveObserver::new(self, false, true);
        observer.asked = true;
        lock(&self.state).fill_round_under_way = true;
        let result = self.run(embedders, &config, &mut observer);
        lock(&self.state).fill_round_under_way = false;
        // Said before the status reads it ended: a client that sees it end
        // finds its summary said.
        let reported = self.report(result, |s| s.embedded > 0, Failure::Returned).map(Some);
        lock(&self.state).progress.filling = false;
        reported
    }

    /// `fill` in the background: it also makes way for the refresh when
    /// the tree has changed, looked at once `refresh` has passed since the
    /// round began (at `round_began`, with its index run) and as often
    /// after (`TreeLook`). The files the embedders have in hand are stored
    /// first, and the next round's fill resumes after the index run.
    fn fill_in_rounds(&self, embedders: &mut EmbedderPool, round_began: Instant, refresh: Duration) -> FillEnd {
        // An index that cannot be read now (busy, or a shared one's
        // connection failing) keeps the fill as it was for the next round.
        let Ok(unembedded) = self.unembedded() else { return FillEnd::Paused };
        // Rounds that wrote to an index removed or rebuilt since count for nothing.
        let index = index_file(&self.target.root);
        let so_far = lock(&self.state).fill_so_far.take().filter(|f| f.index == index);
        if self.target.config.embed_all || unembedded == 0 {
            // What is left of it went with the index run (files removed).
            if let Some(so_far) = so_far {
                let summary = Ok(IndexSummary { cancelled: false, ..so_far.summary });
                let _ = self.report(summary, |s| s.embedded > 0, Failure::Said);
            }
            lock(&self.state).progress.filling = false;
            return FillEnd::Over;
        }
        let config = ResolvedConfig { embed_all: true, ..self.target.config.clone() };
        let mut observer = LiveObserver::fill_round(self, so_far.as_ref(), round_began, refresh);
        let earlier = so_far.map(|f| f.summary);
        lock(&self.state).fill_round_under_way = true;
        let result = self.run(embedders, &config, &mut observer).map(|s| with_earlier_rounds(earlier.as_ref(), s));
        lock(&self.state).fill_round_under_way = false;
        // Stopped for the refresh, a run asked for or another writer, the
        // fill goes on after it; it ends at a shutdown.
        match result {
            Ok(summary) if summary.cancelled && !self.shutdown.load(Ordering::SeqCst) => {
                let mut state = lock(&self.state);
                state.fill_so_far = Some(FillSoFar { files: state.progress.indexed, summary, index });
                if observer.tree_changed.get() {
                    FillEnd::Yielded
                } else {
                    FillEnd::Paused
                }
            }
            result => {
                let reported = self.report(result, |s| s.embedded > 0, Failure::Said);
                lock(&self.state).progress.filling = false;
                match reported {
                    Ok(_) => FillEnd::Ran,
                    Err(_) => {
                        // The fill resumes at a later round: its summary
                        // counts what the rounds before this one embedded.
                        let mut state = lock(&self.state);
                        let files = state.progress.indexed;
                        state.fill_so_far = earlier.map(|summary| FillSoFar { files, summary, index });
                        FillEnd::Over
                    }
                }
            }
        }
    }

    /// Say when a served path has gone (renamed or deleted, or replaced by
    /// a link, which the walk does not follow out of the root: its files
    /// have left the index, and a search finds nothing of it) and when it
    /// is back, once each, rather than serve an emptier index in silence.
    fn say_gone_paths(&self) {
        // A catalog's projects are its links to them by design (a served
        // path that is one of them: a name with no `/`); one gone is said
        // by the walk (a `missing_project` skip).
        let catalog = self.target.root.marker == crate::project::RootMarker::Catalog;
        let project_link = |p: &AdmittedPath| catalog && !p.rel.contains('/');
        let missing = |p: &&AdmittedPath| match std::fs::symlink_metadata(&p.abs) {
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            Ok(meta) => meta.file_type().is_symlink() && !project_link(p),
        };
        let gone: Vec<String> = self.target.paths.iter().filter(missing).map(|p| p.rel.clone()).collect();
        let was = std::mem::replace(&mut lock(&self.state).gone, gone.clone());
        let shown = |rel: &str| if rel.is_empty() { ".".to_string() } else { rel.to_string() };
        for rel in gone.iter().filter(|r| !was.contains(r)) {
            self.note(&format!(
                "{}: the served path is gone (or now a link); its files have left the index until it is back",
                shown(rel)
            ));
        }
        for rel in was.iter().filter(|r| !gone.contains(r)) {
            self.note(&format!("{}: the served path is back", shown(rel)));
        }
    }

    /// Whether chunks lack the model's vector that a fill would give them.
    fn fill_due(&self) -> bool {
        !self.target.config.embed_all && matches!(self.unembedded(), Ok(n) if n > 0)
    }

    /// How many chunks lack the model's vector.
    fn unembedded(&self) -> Result<u64, store::StoreError> {
        store::open_for_reading(&self.target.root).and_then(|s| s.unembedded_count())
    }

    fn run(
        &self,
        embedders: &mut EmbedderPool,
        config: &ResolvedConfig,
        observer: &mut LiveObserver<'_>,
    ) -> Result<IndexSummary> {
        let t = &self.target;
        // Said in words before the run, as vg-index says it, rather than by
        // SQLite at its first write (audit 252: "attempt to write a readonly
        // database"); the searches read the index as it is meanwhile.
        if let Some(why) = crate::store::unwritable_index(&t.root) {
            anyhow::bail!("{why}: searching the index as it is; results may miss recent changes");
        }
        let request = IndexRequest {
            root: &t.root,
            paths: &t.paths,
            walk: &t.walk,
            config,
            reindex: false,
            warn_on_large: false,
            smallest_first: true,
        };
        let (summary, walked) = index::run(&request, embedders, observer)?;
        // A run stopped before its walk walked nothing: what it returns
        // would leave every file out of the searches.
        if !(observer.passed_over || summary.cancelled && walked.is_empty()) {
            let mut state = lock(&self.state);
            state.walked = Some(Arc::new(walked));
            state.walk_errors = summary.errors;
            // A fill stopped part-way clears it too: kept, a run of another
            // process killed during the pause went unsaid (review 210); so
            // the server's own mark may read as another's, and its run,
            // asked for, tries its files again.
            state.own_mark = summary.unread > 0 && !summary.cancelled;
            state.passed_over_since = None;
        }
        Ok(summary)
    }

    /// Record how a run ended, and tell the user of a failure (once while it
    /// persists, and where `failure` says so) and of a run `worth_saying`
    /// says changed something.
    fn report(
        &self,
        result: Result<IndexSummary>,
        worth_saying: impl Fn(&IndexSummary) -> bool,
        failure: Failure,
    ) -> Result<IndexSummary> {
        let mut state = lock(&self.state);
        match result {
            Ok(summary) => {
                state.progress.error = None;
                drop(state);
                if worth_saying(&summary) {
                    (self.notes)(&describe(&summary));
                }
                Ok(summary)
            }
            Err(e) => {
                let message = crate::project::shown::error_line(&e);
                // Say it once, not at every refresh while it persists.
                let repeated = state.progress.error.as_deref() == Some(message.as_str());
                state.progress.error = Some(message.clone());
                drop(state);
                if !repeated && failure == Failure::Said {
                    (self.notes)(&format!("indexing failed: {message}"));
                }
                Err(e)
            }
        }
    }

    /// Index in a background thread now and then every `refresh`, until
    /// shutdown, and at once when a run is asked for (`runs.rs`); the
    /// thread is nicer than the searches (`priority.rs`). After a blocking
    /// run (`full_index`) that began at `blocking_run`, the first round
    /// comes `refresh` after that beginning: at once after a long run, so
    /// that what changed during it is seen, and not twice in a row after a
    /// short one.
    pub fn spawn(
        self: &Arc<Self>,
        mut embedders: EmbedderPool,
        refresh: Duration,
        blocking_run: Option<Instant>,
    ) -> std::io::Result<JoinHandle<()>> {
        let live = Arc::clone(self);
        let mut first = blocking_run.is_none();
        // Refused under a memory limit: the caller says so (it panicked).
        std::thread::Builder::new().spawn(move || {
            priority::lower_this_thread();
            if let Some(began) = blocking_run {
                live.wait_until(began + refresh);
            }
            while !live.shutdown.load(Ordering::SeqCst) {
                let config_changes = lock(&live.config).changes();
                config_changes.iter().for_each(|change| live.note(change));
                let (jobs, asked) = live.begin_run();
                let began = Instant::now();
                // A failure is in `progress` and was reported; the next round tries again.
                let result = live.index_once_asked(&mut embedders, first, asked, Failure::Said);
                live.end_run(&jobs, &result);
                first = false;
                // Failures were reported and are retried at the next round;
                // a server shutting down starts no fill (for a shared index,
                // a connection that may take its time to fail).
                let mut fill = FillEnd::Over;
                if result.is_ok() && !live.shutdown.load(Ordering::SeqCst) {
                    fill = live.fill_in_rounds(&mut embedders, began, refresh);
                }
                // A fill that made way for the refresh has had its wait.
                if !matches!(fill, FillEnd::Yielded) {
                    live.wait_until(Instant::now() + refresh);
                }
            }
            // A fill stopped between its rounds is said, as one stopped in
            // the middle of a round is.
            let stopped_fill = lock(&live.state).fill_so_far.take();
            if let Some(so_far) = stopped_fill {
                let _ = live.report(Ok(so_far.summary), |s| s.embedded > 0, Failure::Said);
            }
            live.fail_unbegun_jobs();
        })
    }

    /// Sleep until the next round is due at `until`, or at once when a run
    /// is asked for or the server shuts down.
    fn wait_until(&self, until: Instant) {
        while Instant::now() < until && !self.shutdown.load(Ordering::SeqCst) && !self.run_requested() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether a note is a run's report of what it did (`describe`), not one
/// of something the user should see to (a skip, a failure, a rebuild).
pub fn is_run_report(note: &str) -> bool {
    note.starts_with(RUN_REPORT)
}

const RUN_REPORT: &str = "index: ";

/// What the user is told of a run that changed something.
fn describe(s: &IndexSummary) -> String {
    let awaiting = if s.pending > 0 { format!(", {} awaiting the model's vectors", s.pending) } else { String::new() };
    // A server told to stop ends its run at the next file: not a whole index.
    let stopped = if s.cancelled { "; stopped before the end, the next run completes it" } else { "" };
    format!(
        "{RUN_REPORT}{} files, {} chunks ({} embedded, {} removed{awaiting}) in {:.1} s{stopped}",
        s.files, s.chunks, s.embedded, s.removed, s.seconds
    )
}

/// A fill's totals with those of its earlier rounds (`FillSoFar`): what
/// it embedded and the time it took add up; the counts of the index are
/// the last round's.
fn with_earlier_rounds(earlier: Option<&IndexSummary>, last: IndexSummary) -> IndexSummary {
    let Some(e) = earlier else { return last };
    IndexSummary {
        embedded: e.embedded + last.embedded,
        copied: e.copied + last.copied,
        tokens: e.tokens + last.tokens,
        seconds: e.seconds + last.seconds,
        ..last
    }
}

struct LiveObserver<'a> {
    live: &'a LiveIndex,
    first: bool,
    /// The run is a fill (`LiveIndex::fill`), not an index run.
    filling: bool,
    /// Files the fill's earlier rounds did, which its count goes on from.
    earlier_files: u64,
    /// The tree as a fill that may yield to the refresh began
    /// (`LiveIndex::fill_in_rounds`), to look at for changes.
    look: Option<TreeLook>,
    /// A look found the tree changed: the fill winds down for it.
    tree_changed: Cell<bool>,
    /// The index file a fill began writing to: once another is at its
    /// path (removed, cleared), the fill stops, as its writes go nowhere.
    index_at_start: Option<store::FileIdentity>,
    /// The run was passed over, another run holding the lock
    /// (`passes_over_a_busy_lock`): it walked nothing.
    passed_over: bool,
    /// The run was asked for (an index job, a request), not a refresh.
    asked: bool,
}

impl Drop for LiveObserver<'_> {
    /// An index run's skips are the next run's to say again only if new
    /// (a run passed over saw none, and says none again).
    fn drop(&mut self) {
        if !self.filling && !self.passed_over {
            let mut skips = lock(&self.live.skips_said);
            skips.last_run = std::mem::take(&mut skips.this_run);
        }
    }
}

impl<'a> LiveObserver<'a> {
    /// Say `said` unless the last run or this one said what `known` names.
    fn say_once(&self, known: String, said: &str) {
        let mut skips = lock(&self.live.skips_said);
        if !skips.last_run.contains(&known) && !skips.this_run.contains(&known) {
            (self.live.notes)(said);
        }
        skips.this_run.insert(known);
    }

    /// The observer of a fill that may yield to the refresh, going on from
    /// `so_far`.
    fn fill_round(live: &'a LiveIndex, so_far: Option<&FillSoFar>, round_began: Instant, refresh: Duration) -> Self {
        let walked = lock(&live.state).walked_stamp.take();
        let mut observer = LiveObserver::new(live, false, true);
        observer.earlier_files = so_far.map_or(0, |f| f.files);
        observer.look = Some(TreeLook::new(&live.target, walked, round_began, refresh));
        observer.index_at_start = index_file(&live.target.root);
        observer
    }

    fn new(live: &'a LiveIndex, first: bool, filling: bool) -> Self {
        LiveObserver {
            live,
            first,
            filling,
            earlier_files: 0,
            look: None,
            tree_changed: Cell::new(false),
            index_at_start: None,
            passed_over: false,
            asked: false,
        }
    }
}

impl IndexObserver for LiveObserver<'_> {
    fn note(&mut self, message: &str) {
        (self.live.notes)(message);
    }

    /// Said once while it persists, as a skip is: an ignore file's bad
    /// rule was said again at every refresh, once a second. Not by a fill,
    /// which walks what the index run before it said, as for skips: one
    /// kept by a fill outlived a fix the next run saw, and the rule broken
    /// again was never said (review 205).
    fn warned(&mut self, message: &str) {
        if !self.filling {
            self.say_once(message.to_string(), message);
        }
    }

    fn waiting_for_lock(&mut self, waiting: bool) {
        lock(&self.live.state).progress.waiting = waiting;
    }

    fn planned(&mut self, _files: usize, to_embed: usize, rechecks: usize, _bytes: u64) {
        let mut state = lock(&self.live.state);
        if self.filling {
            state.progress.filling = to_embed > 0;
            // A fill with nothing to do in the served paths (a chunk
            // outside them still pending) leaves the count of the last run
            // that had work, as http.md says (audit 260: it read 0 of 0),
            // what it did of it (one cut short by an edit: review 265).
            if to_embed > 0 || self.earlier_files > 0 {
                state.progress.indexed = self.earlier_files;
                state.progress.total = Some(self.earlier_files + to_embed as u64);
            } else {
                state.progress.total = Some(state.progress.indexed);
            }
        } else if self.first || to_embed > rechecks {
            // Files read again only to check them leave the status ready:
            // a run that finds them unchanged indexes nothing. One between
            // the rounds of a fill leaves the fill's count, which goes on.
            state.progress.indexing = true;
            if !state.progress.filling {
                state.progress.indexed = 0;
                state.progress.total = Some(to_embed as u64);
            }
        }
    }

    fn walked(&mut self, files: &[crate::project::WalkedFile]) {
        if !self.filling {
            lock(&self.live.state).walked_stamp = Some(tree_look::stamp_of(files));
        }
    }

    fn confirm_large(&mut self, _to_embed: usize, _threshold: u64) -> bool {
        // The large-index prompt belongs to blocking runs only.
        true
    }

    fn skipped(&mut self, skip: &Skip) {
        // A fill walks what the index run just walked and reported. A skip
        // is said once while it lasts: a file closed to the server, or its
        // own log, said at each refresh only lengthened the log.
        // A catalog's project gone missing is said too (spec/catalogs.md:
        // "every run, a search's too"): an agent got a smaller catalog unsaid.
        // Not a file gone while read: an editor's temporary file, made and
        // removed between a walk and its read, would be said at every save.
        let notable = skip.reason.is_notable()
            && !matches!(skip.reason, SkipReason::Vanished)
            && self.live.notable_skips.load(Ordering::SeqCst);
        let said = skip.reason.is_error()
            || skip.reason.is_warning()
            || notable
            || matches!(skip.reason, SkipReason::OwnOutput);
        if self.filling || !said {
            return;
        }
        let said = format!("skipping {}: {}", crate::project::shown::rel_or_dot(&skip.path), skip.reason.describe());
        // Known by its path and reason, not its words: a growing log over
        // max_filesize was said again at each size it passed through.
        let known = match skip.reason {
            SkipReason::TooLarge { .. } => format!("{} {}", skip.reason.code(), skip.path),
            _ => said.clone(),
        };
        self.say_once(known, &said);
    }

    fn file(&mut self, _rel: &str, _outcome: FileOutcome, _chunks: u64) {}

    fn progress(&mut self, progress: &RunProgress) {
        // A round that only rechecks files says nothing of them (`planned`).
        let mut state = lock(&self.live.state);
        if self.filling && state.progress.filling {
            state.progress.indexed = self.earlier_files + progress.files as u64;
        } else if !self.filling && state.progress.indexing && !state.progress.filling {
            state.progress.indexed = progress.files as u64;
        }
    }

    fn restatic_progress(&mut self, done: u64, of: u64) {
        // The last page is counted before the new vectors are committed: the
        // status says the recomputing is over when the run is (`index_once`),
        // so that a search made then ranks by the new table's vectors.
        if done < of {
            lock(&self.live.state).progress.recomputing = Some(Recomputing { done, of });
        }
    }

    /// A fill also stops for a run asked of the server, for another
    /// process waiting to write (a one-shot search's index run), and for
    /// its index removed under it (`rm -rf .vecgrep`: searches failed until
    /// it had written the whole fill into the removed file): a fill can
    /// take minutes, and resumes at the next round.
    fn cancelled(&self) -> bool {
        let root = &self.live.target.root;
        let index_gone = || self.index_at_start.is_some() && index_file(root) != self.index_at_start;
        self.live.shutdown.load(Ordering::SeqCst)
            || (self.filling && (self.live.run_requested() || store::writer_waiting(root) || index_gone()))
    }

    /// A refresh or fill round finding another run at work (a second
    /// server or vg-mcp on the project, whose fill takes minutes) is passed
    /// over until the next round, leaving no mark of a waiting writer: two
    /// servers stopped each other's fill at every refresh, for good. The
    /// first run and one asked for (an index job) wait, and are waited for;
    /// so does a refresh passed over for `PASSED_OVER_AT_MOST`, which the
    /// other's fill then makes way for once (its paths' edits waited for
    /// the whole of the other's fill).
    fn passes_over_a_busy_lock(&mut self) -> bool {
        // Asked before the state is held: it takes the state too.
        let requested = self.live.run_requested();
        let mut state = lock(&self.live.state);
        let since = *state.passed_over_since.get_or_insert_with(Instant::now);
        self.passed_over = !self.first && !self.asked && !requested && since.elapsed() < PASSED_OVER_AT_MOST;
        if !self.passed_over {
            state.passed_over_since = None;
        }
        self.passed_over
    }

    fn winding_down(&self) -> bool {
        let changed = self.look.as_ref().is_some_and(|look| look.changed(&self.live.target));
        self.tree_changed.set(self.tree_changed.get() || changed);
        changed
    }
}

/// Who tells the user that a run failed: the live index, in a note (its
/// own runs, in the background), or the caller it returns the error to (a
/// run before the server listens, which ends it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    Said,
    Returned,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live index of the whole project at `dir`, whose notes go to `said`.
    fn live_at(dir: &std::path::Path, said: &Arc<Mutex<Vec<String>>>) -> Arc<LiveIndex> {
        let root = ProjectRoot { path: dir.to_path_buf(), marker: crate::project::RootMarker::None, shared: None };
        let whole = AdmittedPath { abs: dir.to_path_buf(), rel: String::new(), is_dir: true };
        let config = crate::project::ConfigLayers::default().resolve().unwrap();
        let target = Target { root, paths: vec![whole], walk: Default::default(), config };
        let heard = Arc::clone(said);
        LiveIndex::new(target, Arc::default(), Box::new(move |m| lock(&heard).push(m.to_string())))
    }

    /// An index another process's killed run left unfinished is said to be
    /// partial until the run this server begins for it has ended: only the
    /// first answer said so, and during the run none (review 206).
    #[test]
    fn an_index_another_run_left_unfinished_is_said_until_this_servers_run_ends() {
        let dir = tempfile::tempdir().unwrap();
        let live = live_at(dir.path(), &Arc::default());
        let mark = |unfinished: bool| {
            let mut writer = store::open_for_writing(&live.target.root, &mut |_| {}).unwrap();
            writer.set_run_unfinished(unfinished).unwrap();
        };
        // After its first run, ready.
        lock(&live.state).progress = Progress { ran: true, ..Default::default() };
        mark(true);
        let mut slot: StoreSlot = None;
        open_slot(&mut slot, &live.target.root).unwrap();
        assert_eq!(live.others_run(&slot), Some(OthersRun::Stopped));
        assert!(live.run_requested(), "a run of its own is asked for");
        let (jobs, _) = live.begin_run();
        assert_eq!(live.others_run(&slot), Some(OthersRun::Stopped), "its run has begun");
        lock(&live.state).progress.indexing = true;
        assert_eq!(live.others_run(&slot), Some(OthersRun::Stopped), "its run indexes");
        mark(false);
        lock(&live.state).progress.indexing = false;
        live.end_run(&jobs, &Ok(IndexSummary::default()));
        assert_eq!(live.others_run(&slot), None, "its run completed the index");
    }

    /// A fill paused for another writer holds no lock: that writer's run,
    /// killed, is said and completed at once, as when the server is idle
    /// (review 208); a round of the fill at work is the server's own.
    #[test]
    fn a_run_killed_while_the_fill_is_paused_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let live = live_at(dir.path(), &Arc::default());
        lock(&live.state).progress = Progress { ran: true, filling: true, ..Default::default() };
        let mut writer = store::open_for_writing(&live.target.root, &mut |_| {}).unwrap();
        writer.set_run_unfinished(true).unwrap();
        drop(writer);
        let mut slot: StoreSlot = None;
        open_slot(&mut slot, &live.target.root).unwrap();
        lock(&live.state).fill_round_under_way = true;
        assert_eq!(live.others_run(&slot), None, "a round of its own fill");
        lock(&live.state).fill_round_under_way = false;
        assert_eq!(live.others_run(&slot), Some(OthersRun::Stopped), "the fill paused");
        assert!(live.run_requested());
    }

    /// A warning is said once while it persists, and again when it comes
    /// back after a run without it, whatever a fill between them saw.
    #[test]
    fn a_warning_is_said_again_when_it_comes_back_a_fill_between() {
        let dir = tempfile::tempdir().unwrap();
        let said = Arc::new(Mutex::new(Vec::<String>::new()));
        let live = live_at(dir.path(), &said);
        let run = |filling: bool, warns: bool| {
            let mut observer = LiveObserver::new(&live, false, filling);
            if warns {
                observer.warned("ignore file .gitignore, a rule left out");
            }
        };
        let times_said = || lock(&said).len();
        run(false, true);
        run(false, true);
        assert_eq!(times_said(), 1, "said once while it persists");
        run(true, true);
        run(false, false);
        run(false, true);
        assert_eq!(times_said(), 2, "said again when it comes back");
    }

    #[test]
    fn a_run_stopped_by_shutdown_says_it_did_not_finish() {
        let done = IndexSummary { files: 3, chunks: 9, embedded: 9, seconds: 1.0, ..IndexSummary::default() };
        assert_eq!(describe(&done), "index: 3 files, 9 chunks (9 embedded, 0 removed) in 1.0 s");
        let stopped = IndexSummary { cancelled: true, ..done };
        assert!(describe(&stopped).ends_with("; stopped before the end, the next run completes it"));
    }
}
