//! One index run: walk, compare with what is stored, embed what changed,
//! remove what is gone. Implements the spec's index lifecycle rules
//! (ReindexOrConfigChangeRebuildsIndex, BlockingIndexMayWarnAndAbort,
//! SingleDirectoryWalkRemovesStaleEntries,
//! MultiPathAndFileWalksPreserveOtherEntries).
//!
//! The run reports what it does through [`IndexObserver`] so that binaries
//! can write records and progress without the library knowing about
//! terminals.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};

use crate::chunk::{self, chunk_text, Chunk};
use crate::embed::{Embedder, MAX_TOKENS};
use crate::project::config::ResolvedConfig;
use crate::project::root::{is_under, AdmittedPath, ProjectRoot};
use crate::project::walk::{looks_binary, walk, Skip, SkipReason, WalkOptions, WalkedFile};
use crate::store::{self, FileState, FileWrite, IndexMeta, Store, StoredFile};

/// Chunks written per transaction: bounds the work lost to a kill.
const WRITE_BATCH_CHUNKS: usize = 256;
/// Runs with at least this many files to read embed on every core at once;
/// smaller ones (one edited file) use one model on all cores instead, which
/// embeds a single file faster and loads one model, not one per core.
const PARALLEL_FILES: usize = 8;
/// Files read ahead of the embedders, per embedder: keeps them busy while
/// bounding the text held in memory.
const READ_AHEAD_PER_EMBEDDER: usize = 4;

/// Loads an embedder that may use `threads` threads.
pub type ThreadedLoader = Arc<dyn Fn(usize) -> Result<Box<dyn Embedder>> + Send + Sync>;

/// The embedders of index runs: loaded only once something needs embedding,
/// and kept for later runs (a server re-indexes every few seconds).
///
/// Two cores embed faster as two models with a thread each than as one
/// model with two threads (lib/examples/embed_speed.rs), so a run with many
/// files gets one model per core; a run with a few gets one model using
/// every core.
pub struct EmbedderPool {
    loader: ThreadedLoader,
    cores: usize,
    loaded: Vec<Box<dyn Embedder>>,
}

impl EmbedderPool {
    pub fn new(loader: impl Fn(usize) -> Result<Box<dyn Embedder>> + Send + Sync + 'static) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_cores(loader, cores)
    }

    fn with_cores(loader: impl Fn(usize) -> Result<Box<dyn Embedder>> + Send + Sync + 'static, cores: usize) -> Self {
        EmbedderPool { loader: Arc::new(loader), cores: cores.max(1), loaded: Vec::new() }
    }

    fn wanted(&self, files: usize) -> usize {
        if files >= PARALLEL_FILES {
            self.cores
        } else {
            1
        }
    }

    /// Load what a run over `files` files needs, if not loaded yet.
    fn load_for(&mut self, files: usize) -> Result<()> {
        let wanted = self.wanted(files);
        if self.loaded.len() >= wanted {
            return Ok(());
        }
        let threads = if wanted == 1 { self.cores } else { 1 };
        let missing = wanted - self.loaded.len();
        let loader = &self.loader;
        let loaded: Vec<Result<Box<dyn Embedder>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..missing).map(|_| s.spawn(|| loader(threads))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("loading the embedding model panicked"))))
                .collect()
        });
        for embedder in loaded {
            self.loaded.push(embedder?);
        }
        Ok(())
    }

    fn take(&mut self, files: usize) -> Result<Vec<Box<dyn Embedder>>> {
        self.load_for(files)?;
        let wanted = self.wanted(files).min(self.loaded.len());
        let rest = self.loaded.split_off(wanted);
        Ok(std::mem::replace(&mut self.loaded, rest))
    }

    fn give_back(&mut self, embedders: Vec<Box<dyn Embedder>>) {
        self.loaded.extend(embedders);
    }
}

/// Loads an embedder; Send so that a background thread can own one.
pub type EmbedderLoader = Box<dyn FnOnce() -> Result<Box<dyn Embedder>> + Send>;

/// The embedder, loaded only when something needs embedding.
pub struct LazyEmbedder {
    loader: Option<EmbedderLoader>,
    loaded: Option<Box<dyn Embedder>>,
}

impl LazyEmbedder {
    pub fn new(loader: impl FnOnce() -> Result<Box<dyn Embedder>> + Send + 'static) -> Self {
        LazyEmbedder { loader: Some(Box::new(loader)), loaded: None }
    }

    pub fn get(&mut self) -> Result<&mut dyn Embedder> {
        if self.loaded.is_none() {
            let loader = self.loader.take().context("the embedder failed to load earlier")?;
            self.loaded = Some(loader()?);
        }
        Ok(self.loaded.as_deref_mut().expect("just loaded"))
    }
}

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
    /// The walk is done: `files` candidates, `to_embed` of them new or changed.
    fn planned(&mut self, files: usize, to_embed: usize);
    /// `to_embed` is over index_warn_threshold: may the run go on?
    fn confirm_large(&mut self, to_embed: usize, threshold: u64) -> bool;
    fn skipped(&mut self, skip: &Skip);
    fn file(&mut self, rel: &str, outcome: FileOutcome, chunks: u64);
    /// `done` of `total` files needing work processed, `chunks` embedded so far.
    fn progress(&mut self, done: usize, total: usize, chunks: u64);
    /// Whether to stop after the file in hand (a server shutting down). What
    /// was done so far is committed; the next run continues from there.
    fn cancelled(&self) -> bool {
        false
    }
}

/// Totals of one run; the `summary` record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexSummary {
    /// Files walked that are in the index after the run.
    pub files: u64,
    /// Chunks those files have.
    pub chunks: u64,
    /// Chunks embedded in this run.
    pub embedded: u64,
    /// Chunks of new or changed files that took the vector of a chunk with
    /// the same embedded text instead of being embedded.
    pub copied: u64,
    /// Tokens of the chunks embedded, as the model saw them.
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
    /// The user declined a large index run; nothing was changed.
    pub aborted: bool,
    /// The index was emptied first (reindex, config change, or a damaged
    /// index or one of another schema, removed on open).
    pub rebuilt: bool,
    pub seconds: f64,
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
}

impl IndexRequest<'_> {
    fn meta(&self) -> IndexMeta {
        IndexMeta {
            model: self.config.embedder_model.clone(),
            chunk_size: self.config.chunk_size,
            chunk_overlap: self.config.chunk_overlap,
            chunk_format: chunk::FORMAT,
        }
    }
}

/// The files a walk found, for scoping a search to the same filters.
pub type WalkedSet = HashSet<String>;

/// Bring the index of `req.root` up to date for `req.paths`.
pub fn run(
    req: &IndexRequest<'_>,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
) -> Result<(IndexSummary, WalkedSet)> {
    let started = Instant::now();
    let _lock =
        store::lock_for_writing(req.root, &mut || obs.note("waiting for another index run on this project to finish"))?;
    // A damaged index, or one of another schema, is removed and started
    // again on open: that run rebuilds it as surely as `--reindex` does.
    let mut reopened = false;
    let mut store = Store::open_for_writing(req.root, &mut |m| {
        reopened = true;
        obs.note(m)
    })?;
    let mut summary = IndexSummary::default();

    // ReindexOrConfigChangeRebuildsIndex. The rebuild itself waits until the
    // user has agreed to the run and the model is known to load, so that a
    // declined prompt or a bad model name leaves the old index untouched.
    let wanted = req.meta();
    let have = store.meta()?;
    let rebuild = match &have {
        Some(have) => req.reindex || *have != wanted,
        None => true,
    };
    if let Some(have) = have.as_ref().filter(|h| **h != wanted && !req.reindex) {
        obs.note(&format!("rebuilding the index: {}", describe_change(have, &wanted)));
    }
    summary.rebuilt = reopened || (rebuild && have.is_some());

    let walked = walk(req.root, req.paths, req.walk)?;
    let stored = if rebuild { HashMap::new() } else { store.files()? };
    let mut removals: Vec<String> = Vec::new();
    let mut error_dirs: Vec<String> = Vec::new();
    for skip in &walked.skips {
        obs.skipped(skip);
        summary.skipped += 1;
        if skip.reason.is_error() {
            summary.errors += 1;
            error_dirs.push(skip.path.clone());
        } else if stored.contains_key(&skip.path) {
            removals.push(skip.path.clone());
        }
    }

    // Stored files were indexed by a run that let generated files in (or by
    // a version that did not look): read the walked ones again, so that those
    // whose content marks them generated leave the index now, not when they
    // change. Once done the mark is set even for a partial walk, so that a
    // user who indexes one directory does not re-read it on every run; files
    // outside it are checked when they change (or on --reindex).
    let recheck_generated = !req.config.include_generated && !rebuild && !store.generated_checked()?;

    let mut walked_set: WalkedSet = HashSet::with_capacity(walked.files.len());
    let mut work: Vec<&WalkedFile> = Vec::new();
    for f in &walked.files {
        walked_set.insert(f.rel.clone());
        match stored.get(&f.rel) {
            // A file with holes is embedded again: the server may answer now.
            Some(s)
                if s.state.size == f.size && s.state.mtime_ns == f.mtime_ns && s.holes == 0 && !recheck_generated =>
            {
                summary.files += 1;
                summary.chunks += s.chunks;
                summary.reused += s.chunks;
                obs.file(&f.rel, FileOutcome::Unchanged, s.chunks);
            }
            _ => work.push(f),
        }
    }

    // Stale cleanup: a single walked path owns everything under it.
    if let [only] = req.paths {
        let filtered = req.walk.is_filtered();
        for (rel, _) in stored.iter() {
            if !is_under(rel, &only.rel) || walked_set.contains(rel) || removals.contains(rel) {
                continue;
            }
            // Entries under a directory the walk could not read are kept, not lost.
            if error_dirs.iter().any(|d| is_under(rel, d)) {
                continue;
            }
            // A filtered walk did not look at everything: remove only what is gone from disk.
            if filtered && req.root.path.join(rel).exists() {
                continue;
            }
            removals.push(rel.clone());
        }
    }
    removals.sort();
    removals.dedup();

    if req.warn_on_large
        && req.config.index_warn_threshold > 0
        && work.len() as u64 > req.config.index_warn_threshold
        && !obs.confirm_large(work.len(), req.config.index_warn_threshold)
    {
        summary.aborted = true;
        summary.seconds = started.elapsed().as_secs_f64();
        return Ok((summary, walked_set));
    }
    obs.planned(walked.files.len(), work.len());

    if rebuild {
        if !work.is_empty() {
            embedders.load_for(work.len())?;
        }
        store.reset(&wanted)?;
    }
    if !removals.is_empty() {
        store.write_batch(&[], &[], &removals)?;
        for rel in &removals {
            obs.file(rel, FileOutcome::Removed, 0);
        }
        summary.removed += removals.len() as u64;
    }

    // Files are read and hashed here, in order; those whose content changed
    // go to the embedders (started at the first one), and what comes back
    // is written in the walk's order, so records and batches are the same
    // whatever the timing.
    let mut batch = Batch::default();
    let total = work.len();
    let mut workers: Option<Workers> = None;
    let mut ready: BTreeMap<usize, Prepared> = BTreeMap::new();
    let (mut next_read, mut next_emit, mut in_flight) = (0, 0, 0);
    let mut stopped = false;
    let result = (|| -> Result<()> {
        // Read on until the embedders (started by the first file that needs
        // one) have their share queued, asked at each step: a big first file
        // must not leave the other embedders idle until it is done.
        let read_ahead = |workers: &Option<Workers>| workers.as_ref().map_or(1, |w| w.count * READ_AHEAD_PER_EMBEDDER);
        while next_emit < total {
            while !stopped && next_read < total && in_flight < read_ahead(&workers) {
                if obs.cancelled() {
                    stopped = true;
                    break;
                }
                let f = work[next_read];
                match read_file(f, stored.get(&f.rel), req.config) {
                    Read::Done(prepared) => {
                        ready.insert(next_read, prepared);
                    }
                    Read::Embed(job) => {
                        if workers.is_none() {
                            let taken = embedders.take(total - next_read)?;
                            if let Err(e) = check_dims(&mut store, &taken) {
                                embedders.give_back(taken);
                                return Err(e);
                            }
                            workers = Some(Workers::start(taken, KnownVectors::open(req.root), req.config));
                        }
                        workers.as_ref().expect("started").send(next_read, job)?;
                        in_flight += 1;
                    }
                }
                next_read += 1;
            }
            while let Some(prepared) = ready.remove(&next_emit) {
                let f = work[next_emit];
                record(prepared, f, stored.get(&f.rel), &mut batch, &mut summary, obs);
                if batch.chunks >= WRITE_BATCH_CHUNKS || batch.writes.len() + batch.touches.len() >= 64 {
                    batch.flush(&mut store)?;
                }
                next_emit += 1;
                obs.progress(next_emit, total, summary.embedded);
            }
            if next_emit == next_read && (stopped || next_read == total) {
                break;
            }
            if in_flight > 0 && !ready.contains_key(&next_emit) {
                let (index, write) = workers.as_ref().expect("in flight").receive()?;
                in_flight -= 1;
                ready.insert(index, Prepared::Write(write.with_context(|| format!("embedding {}", work[index].rel))?));
            }
        }
        Ok(())
    })();
    if let Some(w) = workers {
        embedders.give_back(w.finish());
    }
    result?;
    batch.flush(&mut store)?;
    if summary.embedded + summary.copied + summary.removed > 0 {
        store.compact_words()?;
    }
    if req.config.include_generated {
        store.set_generated_checked(false)?;
    } else if !stopped {
        store.set_generated_checked(true)?;
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok((summary, walked_set))
}

/// The vectors about to be stored must have the size of those stored: a
/// server may answer for the same model name with another model.
fn check_dims(store: &mut Store, embedders: &[Box<dyn Embedder>]) -> Result<()> {
    let Some(dims) = embedders.first().map(|e| e.dims()) else { return Ok(()) };
    match store.dims()? {
        Some(held) if held != dims => Err(anyhow!(
            "the embedder gives {dims}-dimensional vectors but the index holds {held}-dimensional ones (another model behind the name {:?}?); vg-index --reindex rebuilds the index",
            embedders[0].model_name()
        )),
        Some(_) => Ok(()),
        None => store.set_dims(dims),
    }
}

/// Account for one file's outcome: the summary, the next batch, the observer.
fn record(
    prepared: Prepared,
    f: &WalkedFile,
    previous: Option<&StoredFile>,
    batch: &mut Batch,
    summary: &mut IndexSummary,
    obs: &mut dyn IndexObserver,
) {
    match prepared {
        Prepared::Skip(reason) => {
            let skip = Skip { path: f.rel.clone(), reason };
            obs.skipped(&skip);
            summary.skipped += 1;
            if skip.reason.is_error() {
                summary.errors += 1;
            } else if previous.is_some() {
                batch.removals.push(f.rel.clone());
                summary.removed += 1;
                obs.file(&f.rel, FileOutcome::Removed, 0);
            }
        }
        Prepared::Touch(state) => {
            let chunks = previous.map_or(0, |p| p.chunks);
            summary.files += 1;
            summary.chunks += chunks;
            summary.reused += chunks;
            batch.touches.push((f.rel.clone(), state));
            obs.file(&f.rel, FileOutcome::Unchanged, chunks);
        }
        Prepared::Write(write) => {
            let n = write.chunks.len() as u64;
            let holes = write.chunks.iter().filter(|(_, v)| v.is_none()).count() as u64;
            summary.files += 1;
            summary.chunks += n;
            summary.embedded += n - holes - write.copied;
            summary.copied += write.copied;
            summary.tokens += write.tokens;
            summary.holes += holes;
            batch.chunks += write.chunks.len();
            batch.writes.push(write);
            obs.file(&f.rel, FileOutcome::Indexed, n);
        }
    }
}

/// A file whose content changed, to chunk and embed.
struct EmbedJob {
    rel: String,
    state: FileState,
    text: String,
}

/// Embedder threads, each owning a model, taking jobs from one queue.
struct Workers {
    count: usize,
    jobs: Option<mpsc::Sender<(usize, EmbedJob)>>,
    results: mpsc::Receiver<(usize, Result<FileWrite>)>,
    handles: Vec<JoinHandle<Box<dyn Embedder>>>,
}

impl Workers {
    fn start(embedders: Vec<Box<dyn Embedder>>, known: Option<Arc<KnownVectors>>, config: &ResolvedConfig) -> Workers {
        let (job_tx, job_rx) = mpsc::channel::<(usize, EmbedJob)>();
        let (result_tx, result_rx) = mpsc::channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let count = embedders.len();
        let handles = embedders
            .into_iter()
            .map(|mut embedder| {
                let (jobs, results, known) = (Arc::clone(&job_rx), result_tx.clone(), known.clone());
                let (size, overlap) = (config.chunk_size, config.chunk_overlap);
                std::thread::spawn(move || {
                    loop {
                        // The lock is held only to take a job, not while embedding it.
                        let next = jobs.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()));
                        let Ok((index, job)) = next else { break };
                        let write = chunk_and_embed(job, &mut *embedder, known.as_deref(), size, overlap);
                        if results.send((index, write)).is_err() {
                            break;
                        }
                    }
                    embedder
                })
            })
            .collect();
        Workers { count, jobs: Some(job_tx), results: result_rx, handles }
    }

    fn send(&self, index: usize, job: EmbedJob) -> Result<()> {
        self.jobs
            .as_ref()
            .and_then(|j| j.send((index, job)).ok())
            .ok_or_else(|| anyhow!("the embedding threads stopped"))
    }

    fn receive(&self) -> Result<(usize, Result<FileWrite>)> {
        self.results.recv().map_err(|_| anyhow!("the embedding threads stopped"))
    }

    /// Stop taking jobs and hand the models back.
    fn finish(mut self) -> Vec<Box<dyn Embedder>> {
        drop(self.jobs.take());
        self.handles.drain(..).filter_map(|h| h.join().ok()).collect()
    }
}

fn describe_change(have: &IndexMeta, wanted: &IndexMeta) -> String {
    let mut changes = Vec::new();
    if have.model != wanted.model {
        changes.push(format!("embedder_model {} -> {}", have.model, wanted.model));
    }
    if have.chunk_size != wanted.chunk_size {
        changes.push(format!("chunk_size {} -> {}", have.chunk_size, wanted.chunk_size));
    }
    if have.chunk_overlap != wanted.chunk_overlap {
        changes.push(format!("chunk_overlap {} -> {}", have.chunk_overlap, wanted.chunk_overlap));
    }
    if have.chunk_format != wanted.chunk_format {
        changes.push(format!(
            "this version indexes chunks differently (chunk format {} -> {})",
            have.chunk_format, wanted.chunk_format
        ));
    }
    changes.join(", ")
}

#[derive(Default)]
struct Batch {
    writes: Vec<FileWrite>,
    touches: Vec<(String, FileState)>,
    removals: Vec<String>,
    chunks: usize,
}

impl Batch {
    fn flush(&mut self, store: &mut Store) -> Result<()> {
        if !self.writes.is_empty() || !self.touches.is_empty() || !self.removals.is_empty() {
            store.write_batch(&self.writes, &self.touches, &self.removals)?;
        }
        *self = Batch::default();
        Ok(())
    }
}

enum Prepared {
    Skip(SkipReason),
    /// Same content as stored; only stat data changed.
    Touch(FileState),
    Write(FileWrite),
}

/// What reading a new or changed file found.
enum Read {
    Done(Prepared),
    Embed(EmbedJob),
}

/// Read and hash one new or changed file: skip it, note that only its stat
/// data changed, or hand its text on to be embedded.
fn read_file(f: &WalkedFile, previous: Option<&StoredFile>, config: &ResolvedConfig) -> Read {
    let skip = |reason| Read::Done(Prepared::Skip(reason));
    let bytes = match std::fs::read(&f.abs) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return skip(SkipReason::Vanished),
        Err(e) => return skip(SkipReason::Error(e.to_string())),
    };
    if looks_binary(&bytes) {
        return skip(SkipReason::Binary);
    }
    if let Some(kind) = crate::project::generated::by_content(&bytes).filter(|_| !config.include_generated) {
        return skip(SkipReason::Generated(kind));
    }
    // The file may have changed since it was walked; record what was read.
    let size = bytes.len() as u64;
    if size > config.max_filesize {
        return skip(SkipReason::TooLarge { size, limit: config.max_filesize });
    }
    let mtime_ns = std::fs::metadata(&f.abs).map(|m| crate::project::walk::mtime_ns(&m)).unwrap_or(f.mtime_ns);
    let hash = blake3::hash(&bytes).as_bytes().to_vec();
    let state = FileState { size, mtime_ns, hash };
    if previous.is_some_and(|p| p.state.hash == state.hash && p.holes == 0) {
        return Read::Done(Prepared::Touch(state));
    }
    // Invalid UTF-8 (Latin-1 comments, say) is indexed with replacement characters.
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Read::Embed(EmbedJob { rel: f.rel.clone(), state, text })
}

/// Chunk and embed one file's text. A chunk whose embedded text is already
/// in the index, or earlier in the same file, takes that vector instead.
fn chunk_and_embed(
    job: EmbedJob,
    model: &mut dyn Embedder,
    known: Option<&KnownVectors>,
    size: usize,
    overlap: usize,
) -> Result<FileWrite> {
    let mut chunks: Vec<Chunk> = Vec::new();
    if !job.text.trim().is_empty() {
        chunks = chunk_text(&job.text, chunk::Syntax::of_path(&job.rel), size, overlap, &|t| {
            model.count_tokens(t) <= MAX_TOKENS
        });
    }
    let contexts = chunk::contexts(&job.rel, &job.text, &chunks);
    let embedded: Vec<String> =
        chunks.iter().zip(&contexts).map(|(c, ctx)| chunk::embedded_text(&ctx.around, &c.text)).collect();

    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; chunks.len()];
    let mut first_with_key: HashMap<[u8; 16], usize> = HashMap::new();
    let mut repeats: Vec<(usize, usize)> = Vec::new(); // (chunk, the earlier chunk with its text)
    let mut to_embed: Vec<usize> = Vec::new();
    let embed_keys: Vec<[u8; 16]> = embedded.iter().map(|text| chunk::embed_key(text)).collect();
    for (i, &key) in embed_keys.iter().enumerate() {
        if let Some(&earlier) = first_with_key.get(&key) {
            repeats.push((i, earlier));
            continue;
        }
        first_with_key.insert(key, i);
        match known.and_then(|k| k.get(&key)) {
            Some(v) => vectors[i] = Some(v),
            None => to_embed.push(i),
        }
    }
    let mut copied = (chunks.len() - to_embed.len() - repeats.len()) as u64;
    let texts: Vec<&str> = to_embed.iter().map(|&i| embedded[i].as_str()).collect();
    // What the model sees: longer texts are cut to its window.
    let tokens = texts.iter().map(|t| model.count_tokens(t).min(MAX_TOKENS) as u64).sum();
    for (i, v) in to_embed.into_iter().zip(embed_chunks(model, &texts)?) {
        vectors[i] = v;
    }
    for (i, earlier) in repeats {
        vectors[i] = vectors[earlier].clone();
        copied += vectors[i].is_some() as u64;
    }
    Ok(FileWrite {
        rel: job.rel,
        state: job.state,
        chunks: chunks.into_iter().zip(vectors).collect(),
        contexts: contexts.iter().map(chunk::Context::words).collect(),
        names: contexts.iter().map(|c| c.names.join(" ")).collect(),
        embed_keys,
        copied,
        tokens,
    })
}

/// The vectors already in the index, looked up by `chunk::embed_key` from
/// the embedder threads over a connection of their own. A failed lookup is
/// a miss: the chunk is embedded, which is slower but gives the same vector.
struct KnownVectors(Mutex<Store>);

impl KnownVectors {
    fn open(root: &ProjectRoot) -> Option<Arc<KnownVectors>> {
        Store::open_for_reading(root).ok().map(|s| Arc::new(KnownVectors(Mutex::new(s))))
    }

    fn get(&self, key: &[u8]) -> Option<Vec<f32>> {
        self.0.lock().ok()?.vector_for_key(key).ok().flatten()
    }
}

/// Embed texts in small batches of similar length, returning vectors in order.
/// The embedder batches as suits it (the local model one text at a time, a
/// server by `embedder_batch_size`); sorting by length keeps the texts of a
/// batch alike, so that little of it is padding. None marks a hole.
fn embed_chunks(model: &mut dyn Embedder, chunks: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
    if chunks.is_empty() {
        return Ok(Vec::new());
    }
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by_key(|&i| chunks[i].len());
    let texts: Vec<&str> = order.iter().map(|&i| chunks[i]).collect();
    let vectors = model.embed_each(&texts)?;
    if vectors.len() != chunks.len() {
        return Err(anyhow!("the embedder returned {} vectors for {} texts", vectors.len(), chunks.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; chunks.len()];
    for (i, v) in order.into_iter().zip(vectors) {
        out[i] = v;
    }
    Ok(out)
}

/// ClearCacheResetsIndex: remove the index, keeping the project config.
pub fn clear_cache(root: &ProjectRoot, obs: &mut dyn IndexObserver) -> Result<()> {
    if !root.data_dir().is_dir() {
        return Ok(());
    }
    let _lock =
        store::lock_for_writing(root, &mut || obs.note("waiting for another index run on this project to finish"))?;
    store::clear(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::config::ConfigLayers;
    use std::sync::Condvar;
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

    struct Quiet;

    impl IndexObserver for Quiet {
        fn note(&mut self, _: &str) {}
        fn planned(&mut self, _: usize, _: usize) {}
        fn confirm_large(&mut self, _: usize, _: u64) -> bool {
            true
        }
        fn skipped(&mut self, _: &Skip) {}
        fn file(&mut self, _: &str, _: FileOutcome, _: u64) {}
        fn progress(&mut self, _: usize, _: usize, _: u64) {}
    }

    #[test]
    fn other_embedders_work_while_the_first_file_is_embedded() {
        let dir = tempfile::tempdir().unwrap();
        let root =
            ProjectRoot { path: dir.path().canonicalize().unwrap(), marker: crate::project::root::RootMarker::None };
        std::fs::write(root.path.join("a.txt"), "the first file, a long one\n").unwrap();
        for i in 0..PARALLEL_FILES * 2 {
            std::fs::write(root.path.join(format!("b{i:02}.txt")), format!("file number {i}\n")).unwrap();
        }
        let paths = [AdmittedPath { abs: root.path.clone(), rel: String::new(), is_dir: true }];
        let walk = WalkOptions { max_filesize: 1 << 20, ..Default::default() };
        let config = ConfigLayers::default().resolve().unwrap();
        let req = IndexRequest {
            root: &root,
            paths: &paths,
            walk: &walk,
            config: &config,
            reindex: false,
            warn_on_large: false,
        };
        let gate = Arc::new(Gate { others_embedded: Mutex::new(false), changed: Condvar::new() });
        let shared = Arc::clone(&gate);
        let mut pool =
            EmbedderPool::with_cores(move |_| Ok(Box::new(GatedEmbedder(Arc::clone(&shared))) as Box<dyn Embedder>), 2);
        let (summary, _) = run(&req, &mut pool, &mut Quiet).unwrap();
        assert_eq!((summary.files, summary.embedded), (1 + 2 * PARALLEL_FILES as u64, 1 + 2 * PARALLEL_FILES as u64));
    }
}
