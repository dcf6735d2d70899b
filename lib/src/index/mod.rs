//! One index run: walk, compare with what is stored, embed what changed,
//! remove what is gone. Implements the spec's index lifecycle rules
//! (ReindexOrConfigChangeRebuildsIndex, BlockingIndexMayWarnAndAbort,
//! SingleDirectoryWalkRemovesStaleEntries,
//! MultiPathAndFileWalksPreserveOtherEntries).
//!
//! A run plans (`plan`: what to rebuild, read and remove), then reads,
//! embeds and writes in one loop (`pipeline`, `file`, `workers`), through
//! the store's `IndexWriter`. It reports what it does through
//! [`IndexObserver`] so that binaries can write records and progress
//! without the library knowing about terminals.

use std::collections::HashSet;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::project::ResolvedConfig;
use crate::project::{is_under, AdmittedPath, ProjectRoot};
use crate::project::{walk, Skip, WalkOptions};
use crate::store::{self, IndexMeta, IndexReader, IndexWriter};

mod embedders;
mod file;
mod in_hand;
mod kept;
mod pipeline;
mod plan;
pub(crate) use plan::wanted_static_table;
mod workers;

pub use embedders::{EmbedderPool, ThreadedLoader};
pub use plan::{leaves_unwalked_entries, search_keeps_to_walk};

/// What became of one file in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOutcome {
    /// New or changed content was chunked and embedded.
    Indexed,
    /// Content unchanged; stored chunks kept.
    Unchanged,
    /// Removed from the index (deleted, now ignored, or no longer indexable).
    Removed,
}

impl FileOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            FileOutcome::Indexed => "indexed",
            FileOutcome::Unchanged => "unchanged",
            FileOutcome::Removed => "removed",
        }
    }
}

/// Receives what an index run does, as it happens.
pub trait IndexObserver {
    /// Something the user should hear about (a rebuild, waiting for a lock).
    fn note(&mut self, message: &str);
    /// A warning about what the run was given that holds until the user
    /// changes it (an ignore file's rule that does not parse): said by each
    /// run, where a server's observer says it once while it persists.
    fn warned(&mut self, message: &str) {
        self.note(message);
    }
    /// The walk is done: `files` candidates, `to_embed` of them to read as
    /// new or changed, `bytes` their size together (what the run's time
    /// goes by). `rechecks` of the `to_embed` are read only because their
    /// ctime moved, their size and mtime as stored: most likely unchanged.
    fn planned(&mut self, files: usize, to_embed: usize, rechecks: usize, bytes: u64);
    /// The files the walk admitted, as it saw them, before any is read.
    fn walked(&mut self, _files: &[crate::project::WalkedFile]) {}
    /// The embedding model is loading: seconds before the first file.
    fn loading_model(&mut self) {}
    /// Waiting for another run's lock (true) or done waiting (false), said
    /// besides the note: a status line said "walking" all the wait.
    fn waiting_for_lock(&mut self, _waiting: bool) {}
    /// `to_embed` is over index_warn_threshold: may the run go on?
    fn confirm_large(&mut self, to_embed: usize, threshold: u64) -> bool;
    fn skipped(&mut self, skip: &Skip);
    fn file(&mut self, rel: &str, outcome: FileOutcome, chunks: u64);
    /// How far the run is, after each file needing work.
    fn progress(&mut self, progress: &RunProgress);
    /// The run waits on its embedders, asked about every tenth of a
    /// second: one large file can take minutes, which a person's bar should
    /// show passing (audit 237: it said "loading the model (0s)" for all of
    /// them, or was never drawn).
    fn still_working(&mut self) {}
    /// How far the recomputing of static vectors for another table is
    /// (`done` chunks of `of`), before the walk.
    fn restatic_progress(&mut self, _done: u64, _of: u64) {}
    /// Whether to stop after the file in hand (a server shutting down). What
    /// was done so far is committed; the next run continues from there.
    fn cancelled(&self) -> bool {
        false
    }
    /// Whether to read no more files: those the embedders have in hand
    /// are finished and written, those queued for them left, and the run
    /// ends there as a cancelled one does. A server's fill makes way for
    /// the refresh so, soon and without losing the model's work in hand.
    fn winding_down(&self) -> bool {
        false
    }
    /// Another run holds the lock: whether to pass this run over rather
    /// than wait, saying nothing (a server's periodic refresh, which a
    /// peer's fill would otherwise make way for at every round).
    fn passes_over_a_busy_lock(&mut self) -> bool {
        false
    }
}

/// How far an index run is through the files needing work. Bytes are what
/// its time goes by (files range from a line to a megabyte); the count of
/// files is what a user recognises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunProgress {
    pub files: usize,
    pub of_files: usize,
    pub bytes: u64,
    pub of_bytes: u64,
    /// Chunks stored so far: embedded by the model, copied from another
    /// index, or with static vectors alone (awaiting the model's).
    pub chunks: u64,
    /// The bytes' worth of the files with the embedders that is done: each
    /// in proportion to the steps of its work (`in_hand::Step`), not in
    /// `bytes` until written.
    pub bytes_in_hand: u64,
}

/// Totals of one run; the `summary` record (`records::SummaryRecord`)
/// carries them as they are, in this order. Fields added within version 1
/// read as 0 from older streams.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IndexSummary {
    /// Files walked that are in the index after the run.
    pub files: u64,
    /// Chunks those files have.
    pub chunks: u64,
    /// Chunks embedded in this run.
    pub embedded: u64,
    /// Chunks of new or changed files that took the vector of a chunk with
    /// the same embedded text instead of being embedded. Added within version 1.
    pub copied: u64,
    /// Tokens of the chunks embedded, each counted up to the model's
    /// window. Added within version 1.
    pub tokens: u64,
    /// Chunks kept from earlier runs because their file did not change.
    pub reused: u64,
    /// Files removed from the index.
    pub removed: u64,
    pub skipped: u64,
    /// Skips that were errors (unreadable files, loops): the run ends with status 2.
    pub errors: u64,
    /// Chunks stored without a vector (their embedding failed).
    pub holes: u64,
    /// Chunks of this run stored with a static vector only, left for a
    /// search or a fill to embed with the model (the static tier; not with
    /// `embed_all`). Added within version 1.
    pub pending: u64,
    /// The index was emptied first (reindex, config change, or a damaged
    /// index or one of another schema, removed on open).
    pub rebuilt: bool,
    /// The user declined a large index run; nothing was changed.
    pub aborted: bool,
    /// The observer cancelled (or wound down) the run after the files in
    /// hand: what was written is committed, but the run did not reach
    /// every file. Said by the exit status and a note, and by the record
    /// as `interrupted` (added within version 1), for a reader of stdout
    /// alone.
    #[serde(rename = "interrupted", default)]
    pub cancelled: bool,
    pub seconds: f64,
    /// Files and directories the run could not read for a reason that may
    /// pass (`SkipReason::may_pass`: too many open files, a failing read): what the index held of
    /// them stays, but a file it never held is missing, so the index is
    /// not whole until a run reads them. Not in the record: `errors` counts them.
    #[serde(skip)]
    pub unread: u64,
}

/// Everything one run needs to know.
pub struct IndexRequest<'a> {
    pub root: &'a ProjectRoot,
    pub paths: &'a [AdmittedPath],
    pub walk: &'a WalkOptions,
    pub config: &'a ResolvedConfig,
    /// `--reindex`: rebuild from nothing.
    pub reindex: bool,
    /// Whether BlockingIndexMayWarnAndAbort applies (blocking runs only).
    pub warn_on_large: bool,
    /// Embed the smallest files first rather than in the walk's order: a
    /// run searched while it works (a server's) then makes the most files
    /// searchable soonest, instead of holding every file behind a large one
    /// early in the walk. Blocking runs keep the walk's order, which their
    /// records follow.
    pub smallest_first: bool,
}

/// The files a walk found, for scoping a search to the same filters.
pub type WalkedSet = HashSet<String>;

/// Bring the index of `req.root` up to date for `req.paths`. A write that
/// met a damaged page of a local index fails saying so, and how to rebuild
/// it, rather than in SQLite's words alone.
pub fn run(
    req: &IndexRequest<'_>,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
) -> Result<(IndexSummary, WalkedSet)> {
    run_to_end(req, embedders, obs).map_err(|e| match e.downcast::<store::StoreError>() {
        Ok(e) => store::name_damage(req.root, e).into(),
        Err(e) => e,
    })
}

fn run_to_end(
    req: &IndexRequest<'_>,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
) -> Result<(IndexSummary, WalkedSet)> {
    let started = Instant::now();
    // A mistyped `-t` or a glob that does not parse is the user's to fix
    // before anything is written: the run made an index and a `.vecgrep`,
    // which marked a root from then on (audit 235). A run that fails later
    // (a model that cannot load) leaves its index marked incomplete.
    crate::project::check_walk_options(req.root, req.walk)?;
    let Some(lock) = wait_for_lock(req.root, obs)? else {
        let summary = IndexSummary { seconds: started.elapsed().as_secs_f64(), ..stopped_waiting() };
        return Ok((summary, WalkedSet::new()));
    };
    let root_at_start = roots_identity(req.root);
    // A damaged index, or one of another schema, is removed and started
    // again on open: that run rebuilds it as surely as `--reindex` does.
    let mut reopened = false;
    // One that cannot be looked at is left as it is (opening it says why).
    let made_here = store::has_index(req.root).is_ok_and(|has| !has).then(store::epoch_ms);
    let store = store::open_for_writing(req.root, &mut |m| {
        reopened = true;
        obs.note(m)
    })?;
    let opened = Opened { started, root_at_start, reopened, made_here };
    run_opened(req, embedders, obs, store, (opened, &lock))
}

/// What `run_to_end` knew when it had opened the index.
struct Opened {
    started: Instant,
    root_at_start: Vec<(std::path::PathBuf, store::FileIdentity)>,
    /// The index was removed on open and made again.
    reopened: bool,
    /// When the run made the index (there was none): `leave_no_index_if`.
    made_here: Option<i64>,
}

/// The run, once the index is open (`run_to_end`).
fn run_opened(
    req: &IndexRequest<'_>,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
    mut store: Box<dyn IndexWriter>,
    (opened, lock): (Opened, &store::WriteLock),
) -> Result<(IndexSummary, WalkedSet)> {
    let Opened { started, root_at_start, reopened, made_here } = opened;
    let mut summary = IndexSummary::default();
    let rebuild = plan::rebuild(req, store.as_reader())?;
    summary.rebuilt = reopened || (rebuild.needed && rebuild.had_index);
    if !rebuild.had_index {
        // An index made by this run holds nothing until it ends: one that
        // fails, is declined or is killed before then must not read as a
        // whole index of nothing.
        store.set_run_unfinished(true)?;
    }
    let say_change = |obs: &mut dyn IndexObserver| {
        if let Some(change) = &rebuild.change {
            obs.note(change);
        }
    };
    if rebuild.restatic {
        // The table loads first: one that cannot is the run's error, with no
        // note of a recomputing that never begins.
        embedders.statics()?;
        say_change(obs);
    }
    if rebuild.restatic && !restatic(&mut *store, &rebuild.wanted, embedders, obs)? {
        let summary = IndexSummary { cancelled: true, seconds: started.elapsed().as_secs_f64(), ..summary };
        return Ok((summary, WalkedSet::new()));
    }

    let walked = walk(req.root, req.paths, req.walk)?;
    walked.ignore_file_warnings.iter().for_each(|w| obs.warned(&w.to_string()));
    obs.walked(&walked.files);
    let full = embedders.embeds_fully(req.config);
    let stored = if rebuild.needed { Default::default() } else { store.files(full)? };
    // Stored files were indexed by a run that let generated files in (or by
    // a version that did not look): read the walked ones again, so that those
    // whose content marks them generated leave the index now, not when they
    // change. Only a run over the whole project marks them all checked
    // (`finish`): one over part of it marked files it never read, and they
    // stayed in every search after; it records its own directories, read
    // again by no later run over them.
    let recheck_generated = !req.config.include_generated
        && !rebuild.needed
        && !store.generated_checked()?
        && !generated_checked_for(&*store, req.paths)?;
    let plan = plan::plan(req, &walked, stored, recheck_generated, full, &mut summary, obs);

    if declined(req, plan.work.len() - plan.rechecks, obs) {
        // Declined before the rebuild emptied anything: only an index
        // removed on open (damaged, another schema) is gone. "rebuilt" with
        // "aborted" says the index was emptied (ndjson.md).
        let summary = IndexSummary { seconds: started.elapsed().as_secs_f64(), ..not_begun(reopened, &*obs, summary) };
        // "Left as it was": no index, not an empty one this run made, nor
        // the directory it made for one.
        leave_no_index_if(made_here, store, (req.root, lock))?;
        return Ok((summary, plan.walked));
    }
    obs.planned(walked.files.len(), plan.work.len(), plan.rechecks, plan.work.iter().map(|f| f.size).sum());
    if plan.rechecks >= RECHECKS_WORTH_SAYING {
        obs.note(&rechecks_note(plan.rechecks));
    }
    let changes = rebuild.needed || !plan.work.is_empty() || !plan.removals.is_empty();
    // A rebuilt index holds only what this run walks: one over part of the
    // project leaves the rest out, as an unfinished run would.
    let was_unfinished = store.run_unfinished()? || rebuild.needed;
    // What a rebuild embeds with must load before the old index goes, and
    // before the mark: a model that cannot load (`--embedder-model foo`)
    // leaves the index as it was, not marked unfinished.
    if rebuild.needed && !plan.work.is_empty() && !loaded_for_rebuild(req, embedders, plan.work.len(), obs)? {
        summary.cancelled = true;
        summary.seconds = started.elapsed().as_secs_f64();
        return Ok((summary, plan.walked));
    }
    if changes && covers_the_project(req) && alters_files(&plan, rebuild.needed || recheck_generated) {
        // Before the first change, so that a run killed at any point
        // leaves the mark (a reset index would look whole without it). A
        // run over part of the project leaves it as it was (ndjson.md): one
        // killed in src/ marked the whole index incomplete, searches of
        // other/ said so, and only a whole run cleared it.
        store.set_run_unfinished(true)?;
    }
    if rebuild.needed {
        say_change(obs);
        store = store::reset_or_remake(req.root, store, &rebuild.wanted, &mut |m| obs.note(m))?;
        // An index made again starts without the mark.
        store.set_run_unfinished(true)?;
    }
    root_stayed(&mut *store, req, root_at_start.clone())?;
    let stopped =
        pipeline::embed_and_write(req, &plan.work, &plan.stored, &mut *store, embedders, (&mut summary, obs))?;
    // Moved during the walk: what it did not see is no file gone.
    root_stayed(&mut *store, req, root_at_start)?;
    // What is gone goes last, so that a run killed at any point leaves a
    // renamed file's text under one name or the other: a run over part of
    // the project (`vg-index src`), which leaves the index marked complete,
    // removed the old name first and, killed before it read the new one,
    // left that text nowhere, unsaid (audit 191). A run stopped before its
    // end (Ctrl-C, a server's shutdown or wind-down) removes nothing, for
    // the same reason: the new name may be among the files it left for the
    // next run (audit 245).
    if !stopped {
        remove(&mut *store, &plan.removals, &mut summary, obs)?;
    }
    finish(&mut *store, req, &summary, stopped)?;
    index_stayed(&*store, req)?;
    // A run over part of the project finishes only its part; one over the
    // whole that had nothing to change found the index whole (a fill that
    // was stopped leaves every file in). One that could not read some files
    // did not (`ulimit -n 9` left 49 of 50 files out of a new index, which
    // read complete).
    if summary.unread > 0 && !stopped {
        store.set_run_unfinished(true)?;
    } else if (changes || was_unfinished) && !stopped {
        store.set_run_unfinished(was_unfinished && !covers_the_project(req))?;
    }
    // Every file whose stamps changed since it was stored was read, and
    // what the index keeps of it checked: the index, if it came from
    // elsewhere, is now as if made here (`IndexReader::checked_here`).
    if !stopped && summary.unread == 0 && covers_the_project(req) {
        store.mark_checked_here()?;
    }
    summary.cancelled = stopped;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok((summary, plan.walked))
}

/// What tells a run whether its root is still the directory it walked (one
/// moved or removed meanwhile had every file left "vanish", and the run, exit
/// 0, left an index of a quarter of the files reading complete): the root's
/// directory and, for a catalog, each of its projects' (reached through links
/// a check of the root's alone does not see move), with their identities: those there when the run began are the ones
/// watched (a project added to the catalog meanwhile, or one gone before,
/// is no move).
fn roots_identity(root: &ProjectRoot) -> Vec<(std::path::PathBuf, store::FileIdentity)> {
    let mut dirs = vec![root.path.clone()];
    if root.marker == crate::project::RootMarker::Catalog {
        if let Ok(catalog) = crate::project::catalog::Catalog::read(&root.path) {
            dirs.extend(catalog.projects.into_iter().map(|p| p.path));
        }
    }
    dirs.into_iter().filter_map(|d| store::file_identity(&d).map(|id| (d, id))).collect()
}

/// An error, the index marked incomplete, when the root (or a catalog's
/// project) is no longer the directory (`at_start`) the run began in.
fn root_stayed(
    store: &mut dyn IndexWriter,
    req: &IndexRequest<'_>,
    at_start: Vec<(std::path::PathBuf, store::FileIdentity)>,
) -> Result<()> {
    if at_start.iter().all(|(dir, id)| store::file_identity(dir) == Some(*id)) {
        return Ok(());
    }
    store.set_run_unfinished(true)?;
    anyhow::bail!(
        "the project directory {} (or a catalog's project) was moved or removed during the run: what the index held \
         of the files left to read is kept, and the index marked incomplete; run vg-index again where the project \
         is now",
        req.root.path.display()
    )
}

/// An error when the index this run wrote was removed or replaced while it
/// ran (`git clean -fdX` removes `.vecgrep/`): the run wrote on into a file
/// no longer there, and its summary said every file was stored, exit 0
/// (audit 191). Nothing of it is left to mark incomplete.
fn index_stayed(store: &dyn IndexWriter, req: &IndexRequest<'_>) -> Result<()> {
    if !store.as_reader().replaced() {
        return Ok(());
    }
    anyhow::bail!(
        "the index {} was removed or replaced during the run (git clean -X removes .vecgrep/): what the run wrote \
         went with it; run vg-index again",
        store::location(req.root)
    )
}

/// From how many rechecks (files whose ctime alone moved) a run says why
/// it reads them: an index made before ctimes were kept, a tree copied with
/// `cp -a` or `rsync -a`, a `chmod -R`. Fewer are read in a moment.
const RECHECKS_WORTH_SAYING: usize = 1000;

fn rechecks_note(rechecks: usize) -> String {
    format!(
        "checking {rechecks} files whose size and mtime are as indexed but whose ctime is new, or was too recent \
         to trust when last read (an index made before vecgrep kept ctimes, a copied tree, a chmod): only those \
         whose content changed are embedded again"
    )
}

/// Whether a run may leave files out if stopped: it adds, changes or
/// removes some. One that only gives unchanged files the model's vectors
/// (`--full`, a server's fill) leaves every file in, stopped or not, and
/// a search of it misses nothing. A file read again only because its ctime
/// moved counts as unchanged here, as it did before ctimes were kept: the
/// index held it as it is before the run, and holds it no worse after.
fn alters_files(plan: &plan::Plan<'_>, rebuilds: bool) -> bool {
    let unchanged = |f: &&crate::project::WalkedFile| {
        plan.stored.get(&f.rel).is_some_and(|s| plan::same_size_and_mtime(&s.state, f))
    };
    rebuilds || !plan.removals.is_empty() || !plan.work.iter().all(unchanged)
}

/// Whether a run walks every file of the project: from its root, with no
/// filter narrowing the walk.
fn covers_the_project(req: &IndexRequest<'_>) -> bool {
    walks_the_whole_project(req.walk, req.paths)
}

/// Whether a walk of `paths` with `walk` reads every file of the project:
/// from its root, with no filter narrowing it (a server's served paths too).
pub fn walks_the_whole_project(walk: &WalkOptions, paths: &[AdmittedPath]) -> bool {
    paths.iter().any(|p| p.rel.is_empty()) && !walk.leaves_out_for_this_run()
}

/// Give the index's chunks the static vectors of the table in use, keeping
/// everything else (the model's vectors above all). False when the observer
/// cancelled it: then the index keeps the old table's vectors, whole.
fn restatic(
    store: &mut dyn IndexWriter,
    wanted: &IndexMeta,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
) -> Result<bool> {
    let started = Instant::now();
    let statics = embedders.statics()?.context("no static table to recompute the index's static vectors with")?;
    let done = store.restatic(
        wanted,
        &mut |around, text| statics.embed(&crate::chunk::embedded_text(around, text)),
        &mut |done, of| {
            obs.restatic_progress(done, of);
            !obs.cancelled()
        },
    )?;
    let Some(chunks) = done else {
        obs.note(RESTATIC_STOPPED);
        return Ok(false);
    };
    obs.note(&format!("recomputed the static vectors of {chunks} chunks in {:.1} s", started.elapsed().as_secs_f64()));
    Ok(true)
}

/// What a run stopped while it recomputed the static vectors says.
pub const RESTATIC_STOPPED: &str =
    "stopped recomputing the static vectors: the index keeps the previous table's, and the next run recomputes them";

/// What a writer says while another holds the project's write lock.
pub const LOCK_WAIT: &str = "waiting for another index run on this project to finish";

/// What a writer says when a signal ended its wait for the lock.
const STOPPED_WAITING: &str = "stopped while waiting for the other run: the index was left as it was";

/// What a writer says when a signal came before it had the lock: while it
/// waited for another run (it said so), or while a shared index's server
/// had not answered yet.
pub fn stopped_before_the_lock(waited: bool) -> &'static str {
    if waited {
        STOPPED_WAITING
    } else {
        "stopped before the run began: the index was left as it was"
    }
}

/// Load what a rebuild embeds `files` with; false when told to stop
/// meanwhile (a remote embedder's check given up): the run stops with the
/// index as it was, not failed.
fn loaded_for_rebuild(
    req: &IndexRequest<'_>,
    embedders: &mut EmbedderPool,
    files: usize,
    obs: &mut dyn IndexObserver,
) -> Result<bool> {
    if !embedders.embeds_fully(req.config) {
        embedders.statics()?;
        return Ok(true);
    }
    if embedders.needs_loading(files) {
        obs.loading_model();
    }
    match embedders.load_for(files) {
        Ok(()) => Ok(true),
        Err(_) if obs.cancelled() => Ok(false),
        Err(e) => Err(e),
    }
}

/// What a run that a signal stopped while it waited for the lock did: nothing.
pub(crate) fn stopped_waiting() -> IndexSummary {
    IndexSummary { cancelled: true, ..Default::default() }
}

/// The root's write lock, waited for while another run holds it (saying
/// so), or None when the observer cancels the run meanwhile (saying that).
pub(crate) fn wait_for_lock(root: &ProjectRoot, obs: &mut dyn IndexObserver) -> Result<Option<store::WriteLock>> {
    if root.shared.is_none() {
        if let Some(lock) = store::try_lock_for_writing(root)? {
            return Ok(Some(lock));
        }
        if obs.passes_over_a_busy_lock() {
            return Ok(None);
        }
    }
    let cell = std::cell::RefCell::new(&mut *obs);
    let waited = std::cell::Cell::new(false);
    let waiting = &mut || {
        waited.set(true);
        cell.borrow_mut().note(LOCK_WAIT);
        cell.borrow_mut().waiting_for_lock(true);
    };
    let lock = store::lock_for_writing_unless(root, waiting, &|| cell.borrow().cancelled());
    if waited.get() {
        obs.waiting_for_lock(false);
    }
    let lock = lock?;
    if lock.is_none() {
        obs.note(stopped_before_the_lock(waited.get()));
    }
    Ok(lock)
}

/// BlockingIndexMayWarnAndAbort: the user declined a run over more files
/// than index_warn_threshold.
fn declined(req: &IndexRequest<'_>, to_embed: usize, obs: &mut dyn IndexObserver) -> bool {
    let threshold = req.config.index_warn_threshold;
    req.warn_on_large && threshold > 0 && to_embed as u64 > threshold && !obs.confirm_large(to_embed, threshold)
}

/// The summary of a run that the large-run question stopped. Ctrl-C at
/// the question stops it before it began: cancelled, as one stopped at any
/// other point, not declined.
fn not_begun(reopened: bool, obs: &dyn IndexObserver, summary: IndexSummary) -> IndexSummary {
    let stopped = obs.cancelled();
    IndexSummary { aborted: !stopped, cancelled: stopped, rebuilt: reopened, ..summary }
}

/// Remove the index this run opened when `made_here` (when the run began):
/// the run made it; and the data directory, when taking the lock made it.
fn leave_no_index_if(
    made_here: Option<i64>,
    store: Box<dyn IndexWriter>,
    (root, lock): (&ProjectRoot, &store::WriteLock),
) -> Result<()> {
    drop(store);
    if let Some(since_ms) = made_here {
        store::remove_made_index(root, since_ms)?;
    }
    lock.remove_unused_data_dir(root);
    Ok(())
}

/// Remove the files that left the walk.
fn remove(
    store: &mut dyn IndexWriter,
    removals: &[String],
    summary: &mut IndexSummary,
    obs: &mut dyn IndexObserver,
) -> Result<()> {
    if removals.is_empty() {
        return Ok(());
    }
    store.write_batch(&[], &[], removals)?;
    for rel in removals {
        obs.file(rel, FileOutcome::Removed, 0);
    }
    summary.removed += removals.len() as u64;
    Ok(())
}

/// After the last batch: tidy the word index if the run changed it, bring
/// what spares one-shot searches a full read up to date (another writer
/// may have left it behind), give back the space of what was deleted when
/// it is much of the file, and record whether every stored file has been checked for
/// generated content.
fn finish(store: &mut dyn IndexWriter, req: &IndexRequest<'_>, summary: &IndexSummary, stopped: bool) -> Result<()> {
    if summary.embedded + summary.copied + summary.pending + summary.removed > 0 {
        store.compact_words()?;
    }
    store.refresh_search_aids()?;
    // Not for a run stopped before its end: a Ctrl-C, a server's shutdown,
    // or a fill making way for a waiting writer would wait for the rewrite.
    if !stopped {
        store.give_back_space();
    }
    if req.config.include_generated {
        store.set_generated_checked(false)?;
    } else if !stopped && covers_the_project(req) {
        store.set_generated_checked(true)?;
    } else if !stopped && !req.walk.leaves_out_for_this_run() && !store.generated_checked()? {
        let walked = req.paths.iter().filter(|p| p.is_dir).map(|p| p.rel.as_str());
        store.set_generated_checked_under(&with_dirs_checked(store.generated_checked_under()?, walked))?;
    }
    Ok(())
}

/// Whether every file under `paths` has been read since generated files
/// were last let in, by a run over a directory holding it.
fn generated_checked_for(store: &dyn IndexReader, paths: &[AdmittedPath]) -> Result<bool> {
    Ok(all_under(&store.generated_checked_under()?, paths.iter().map(|p| p.rel.as_str())))
}

fn all_under<'a>(dirs: &[String], mut paths: impl Iterator<Item = &'a str>) -> bool {
    !dirs.is_empty() && paths.all(|p| dirs.iter().any(|d| is_under(p, d)))
}

/// The directories `under` and those `walked`, none inside another.
fn with_dirs_checked<'a>(mut under: Vec<String>, walked: impl Iterator<Item = &'a str>) -> Vec<String> {
    for dir in walked {
        if !under.iter().any(|d| is_under(dir, d)) {
            under.retain(|d| !is_under(d, dir));
            under.push(dir.to_string());
        }
    }
    under
}

/// Run `change` (to a catalog's definition, say) while no index run works
/// on `root`'s index, local or shared: a run under way is waited for
/// (`waiting` hears it), and none starts until `change` is done, so that a
/// run never writes an index for what the catalog no longer holds. A local
/// index never made needs no wait.
pub fn while_not_indexing<T>(
    root: &ProjectRoot,
    waiting: &mut dyn FnMut(),
    change: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let local = store::checkout_root(root);
    let _local = match local.data_dir().is_dir() {
        true => Some(store::lock_for_writing(&local, waiting)?),
        false => None,
    };
    let _shared = match root.shared.is_some() {
        true => Some(store::lock_for_writing(root, waiting)?),
        false => None,
    };
    change()
}

/// Take every file under `dirs` (root-relative) out of `root`'s index, if
/// it has one; how many went. For the projects taken out of a catalog: a
/// `--no-index` search must not find them until the next run. The caller
/// holds the write lock (`while_not_indexing`).
pub fn forget_paths_under(root: &ProjectRoot, dirs: &[String]) -> Result<usize> {
    let stored = match store::open_for_reading(root) {
        Ok(reader) => reader.files(false)?,
        Err(store::StoreError::Missing(_)) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let gone: Vec<String> =
        stored.into_keys().filter(|rel| dirs.iter().any(|dir| crate::project::is_under(rel, dir))).collect();
    if !gone.is_empty() {
        store::open_in_place(root)?.write_batch(&[], &[], &gone)?;
    }
    Ok(gone.len())
}

/// ClearCacheResetsIndex: remove the index, keeping the project config;
/// false when there was none: no index file, revision or shared index (a
/// second `--clear-cache` finds the `.vecgrep` directory it left, empty).
/// None when told to stop (`obs.cancelled`) while another run held the
/// lock: nothing was removed, and `obs` heard so.
pub fn clear_cache(root: &ProjectRoot, obs: &mut dyn IndexObserver) -> Result<Option<bool>> {
    if root.shared.is_none() && !root.data_dir().is_dir() {
        return Ok(Some(false));
    }
    // Under a shared store the checkout's own index still holds the commit
    // log (`store::checkout_root`), which vg-log writes under that index's lock:
    // taken first, as `while_not_indexing` takes them, so a log being
    // written is not removed under its writer.
    let local = store::checkout_root(root);
    let _local = match root.shared.is_some() && local.data_dir().is_dir() {
        true => match wait_for_lock(&local, obs)? {
            Some(lock) => Some(lock),
            None => return Ok(None),
        },
        false => None,
    };
    let Some(_lock) = wait_for_lock(root, obs)? else { return Ok(None) };
    Ok(Some(store::clear(root)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::Embedder;
    use crate::project::ConfigLayers;
    use crate::project::RootMarker;
    use anyhow::anyhow;
    use std::sync::Condvar;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// Holds back the file whose text says "the first file" until another
    /// file has been embedded, or fails after a while. The real model is what the
    /// integration tests use; this tests how files reach the embedders.
    struct Gate {
        others_embedded: Mutex<bool>,
        changed: Condvar,
    }

    struct GatedEmbedder(Arc<Gate>);

    impl Embedder for GatedEmbedder {
        fn model_name(&self) -> &str {
            "all-MiniLM-L6-v2"
        }

        fn dims(&self) -> usize {
            4
        }

        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            let gate = &self.0;
            if texts.iter().any(|t| t.contains("the first file")) {
                let done = gate.others_embedded.lock().unwrap();
                let (_done, wait) =
                    gate.changed.wait_timeout_while(done, Duration::from_secs(20), |done| !*done).unwrap();
                if wait.timed_out() {
                    return Err(anyhow!("no other file reached an embedder while the first was embedded"));
                }
            } else {
                *gate.others_embedded.lock().unwrap() = true;
                gate.changed.notify_all();
            }
            Ok(texts.iter().map(|_| vec![1.0, 0.0, 0.0, 0.0]).collect())
        }

        fn count_tokens(&self, text: &str) -> usize {
            text.split_whitespace().count() + 2
        }
    }

    /// A run over part of the project records the directories it read for
    /// generated files (each run over them read them all again, for ever,
    /// until one over the whole project).
    #[test]
    fn directories_read_for_generated_files_are_recorded_and_cover_what_is_inside() {
        let under = with_dirs_checked(Vec::new(), ["src/sub", "docs"].into_iter());
        assert_eq!(under, ["src/sub", "docs"]);
        assert!(all_under(&under, ["src/sub/x", "docs"].into_iter()));
        assert!(!all_under(&under, ["src"].into_iter()), "src/ holds more than src/sub/");
        let under = with_dirs_checked(under, ["src"].into_iter());
        assert_eq!(under, ["docs", "src"], "src/ takes in src/sub/");
        assert!(all_under(&under, ["src", "src/sub", "docs/a.md"].into_iter()));
        assert!(!all_under(&[], ["src"].into_iter()), "nothing recorded covers nothing");
    }

    #[test]
    fn other_embedders_work_while_the_first_file_is_embedded() {
        let p = Project::new();
        std::fs::write(p.root.path.join("a.txt"), "the first file, a long one\n").unwrap();
        for i in 0..embedders::PARALLEL_FILES * 2 {
            std::fs::write(p.root.path.join(format!("b{i:02}.txt")), format!("file number {i}\n")).unwrap();
        }
        let req = p.request(false);
        let gate = Arc::new(Gate { others_embedded: Mutex::new(false), changed: Condvar::new() });
        let shared = Arc::clone(&gate);
        let mut pool =
            EmbedderPool::with_cores(move |_| Ok(Box::new(GatedEmbedder(Arc::clone(&shared))) as Box<dyn Embedder>), 2);
        let (summary, _) = run(&req, &mut pool, &mut Order::default()).unwrap();
        assert_eq!(
            (summary.files, summary.embedded),
            (1 + 2 * embedders::PARALLEL_FILES as u64, 1 + 2 * embedders::PARALLEL_FILES as u64)
        );
    }

    /// A project in a temp dir, indexed whole with the default settings.
    struct Project {
        _dir: tempfile::TempDir,
        root: ProjectRoot,
        paths: [AdmittedPath; 1],
        walk: WalkOptions,
        config: ResolvedConfig,
    }

    impl Project {
        fn new() -> Project {
            let dir = tempfile::tempdir().unwrap();
            let root = ProjectRoot { path: dir.path().canonicalize().unwrap(), marker: RootMarker::None, shared: None };
            let paths = [AdmittedPath::whole(&root)];
            let walk = WalkOptions { max_filesize: 1 << 20, ..Default::default() };
            let config = ConfigLayers::default().resolve().unwrap();
            Project { _dir: dir, root, paths, walk, config }
        }

        fn request(&self, smallest_first: bool) -> IndexRequest<'_> {
            IndexRequest {
                root: &self.root,
                paths: &self.paths,
                walk: &self.walk,
                config: &self.config,
                reindex: false,
                warn_on_large: false,
                smallest_first,
            }
        }
    }

    /// Vectors whose meaning no test here looks at.
    struct Flat;

    impl Embedder for Flat {
        fn model_name(&self) -> &str {
            "all-MiniLM-L6-v2"
        }

        fn dims(&self) -> usize {
            4
        }

        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts.iter().map(|_| vec![1.0, 0.0, 0.0, 0.0]).collect())
        }

        fn count_tokens(&self, text: &str) -> usize {
            text.split_whitespace().count() + 2
        }
    }

    /// The files a run reported, in order.
    #[derive(Default)]
    struct Order(Vec<String>);

    impl IndexObserver for Order {
        fn note(&mut self, _: &str) {}
        fn planned(&mut self, _: usize, _: usize, _: usize, _: u64) {}
        fn confirm_large(&mut self, _: usize, _: u64) -> bool {
            true
        }
        fn skipped(&mut self, _: &Skip) {}
        fn file(&mut self, rel: &str, _: FileOutcome, _: u64) {
            self.0.push(rel.to_string());
        }
        fn progress(&mut self, _: &RunProgress) {}
    }

    /// Passes over a lock another run holds, as a server's refresh does.
    struct PassesOver;

    impl IndexObserver for PassesOver {
        fn note(&mut self, _: &str) {}
        fn planned(&mut self, _: usize, _: usize, _: usize, _: u64) {}
        fn confirm_large(&mut self, _: usize, _: u64) -> bool {
            true
        }
        fn skipped(&mut self, _: &Skip) {}
        fn file(&mut self, _: &str, _: FileOutcome, _: u64) {}
        fn progress(&mut self, _: &RunProgress) {}
        fn passes_over_a_busy_lock(&mut self) -> bool {
            true
        }
    }

    /// Under a shared store, clearing the cache takes the checkout's own
    /// lock first: its index holds the commit log, which vg-log writes
    /// under that lock (the clear removed it under its writer).
    #[test]
    fn clearing_a_shared_projects_cache_waits_for_the_local_logs_writer() {
        let project = Project::new();
        std::fs::create_dir_all(project.root.data_dir()).unwrap();
        std::fs::write(project.root.index_path(), b"the log").unwrap();
        let writing_the_log = store::try_lock_for_writing(&project.root).unwrap().expect("free");
        let shared = crate::project::SharedIndex {
            url: "postgres://127.0.0.1:1/never".into(),
            project: "p".into(),
            writer: "w".into(),
            adopt: false,
        };
        let root = ProjectRoot { shared: Some(shared), ..project.root.clone() };
        assert!(clear_cache(&root, &mut PassesOver).unwrap().is_none(), "it went on past the log's writer");
        assert!(project.root.index_path().exists());
        drop(writing_the_log);
    }

    /// Counts the texts it embeds, a long while each: files queue for the
    /// embedders while others are in hand.
    struct Counted(Arc<std::sync::atomic::AtomicUsize>);

    impl Embedder for Counted {
        fn model_name(&self) -> &str {
            "all-MiniLM-L6-v2"
        }

        fn dims(&self) -> usize {
            4
        }

        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            std::thread::sleep(Duration::from_millis(150) * texts.len() as u32);
            self.0.fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
            Ok(texts.iter().map(|_| vec![1.0, 0.0, 0.0, 0.0]).collect())
        }

        fn count_tokens(&self, text: &str) -> usize {
            text.split_whitespace().count() + 2
        }
    }

    /// Winds the run down once it has a file ready to write.
    #[derive(Default)]
    struct WindsDownAfterOne {
        written: Order,
        ready: usize,
    }

    impl IndexObserver for WindsDownAfterOne {
        fn note(&mut self, _: &str) {}
        fn planned(&mut self, _: usize, _: usize, _: usize, _: u64) {}
        fn confirm_large(&mut self, _: usize, _: u64) -> bool {
            true
        }
        fn skipped(&mut self, _: &Skip) {}
        fn file(&mut self, rel: &str, outcome: FileOutcome, chunks: u64) {
            self.written.file(rel, outcome, chunks);
        }
        fn progress(&mut self, progress: &RunProgress) {
            self.ready = progress.files;
        }
        fn winding_down(&self) -> bool {
            self.ready > 0
        }
    }

    #[test]
    fn a_run_wound_down_writes_the_files_in_hand_and_the_next_run_does_the_rest() {
        let p = Project::new();
        for i in 0..20 {
            std::fs::write(p.root.path.join(format!("f{i:02}.txt")), format!("file number {i}\n")).unwrap();
        }
        let config = ResolvedConfig { embed_all: true, ..p.config.clone() };
        let req = IndexRequest { config: &config, ..p.request(false) };
        let texts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&texts);
        let mut pool =
            EmbedderPool::with_cores(move |_| Ok(Box::new(Counted(Arc::clone(&counter))) as Box<dyn Embedder>), 2);
        let embedded = || texts.load(std::sync::atomic::Ordering::SeqCst) as u64;
        let mut wound = WindsDownAfterOne::default();
        let (first, _) = run(&req, &mut pool, &mut wound).unwrap();
        assert!(first.cancelled, "{first:?}");
        // Files were read ahead for both embedders (4 each); those still
        // queued were left, not embedded.
        assert!((1..8).contains(&first.embedded), "{first:?}");
        // What the embedders had in hand was written, what was queued was
        // not embedded: no work thrown away.
        assert_eq!(embedded(), first.embedded, "texts embedded, chunks written");
        assert_eq!(wound.written.0.len() as u64, first.embedded);
        let (second, _) = run(&req, &mut pool, &mut Order::default()).unwrap();
        assert!(!second.cancelled, "{second:?}");
        assert_eq!((first.embedded + second.embedded, embedded()), (20, 20));
    }

    #[test]
    fn a_run_searched_while_it_works_embeds_the_smallest_files_first() {
        let p = Project::new();
        for (name, words) in [("a.txt", 300), ("b.txt", 5), ("c.txt", 40), ("d.txt", 5)] {
            std::fs::write(p.root.path.join(name), "word ".repeat(words)).unwrap();
        }
        let order_of = |smallest_first: bool| {
            let _ = std::fs::remove_dir_all(p.root.path.join(".vecgrep"));
            let mut pool = EmbedderPool::with_cores(|_| Ok(Box::new(Flat) as Box<dyn Embedder>), 2);
            let mut order = Order::default();
            run(&p.request(smallest_first), &mut pool, &mut order).unwrap();
            order.0
        };
        assert_eq!(order_of(true), ["b.txt", "d.txt", "c.txt", "a.txt"]);
        assert_eq!(order_of(false), ["a.txt", "b.txt", "c.txt", "d.txt"]);
    }
}
