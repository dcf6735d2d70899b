//! The read-embed-write loop of an index run. Files are read and hashed
//! here, in the walk's order; those whose content changed go to the
//! embedder threads (started at the first one), and what comes back is
//! written in the walk's order, in batches, so that records and batches are
//! the same whatever the timing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};

use super::embedders::EmbedderPool;
use super::file::{read_file, Confinement, EmbedJob, KnownVectors, Prepared, Read};
use super::in_hand::counted_when_done;
use super::kept::NotMade;
use super::workers::Workers;
use super::{FileOutcome, IndexObserver, IndexRequest, IndexSummary, RunProgress};
use crate::embed::Embedder;
use crate::project::{Skip, WalkedFile};
use crate::store::{FileState, FileWrite, IndexReader, IndexWriter, StoredFile};

/// Chunks written per transaction: bounds the work lost to a kill.
const WRITE_BATCH_CHUNKS: usize = 256;
/// Chunks of a run's first transaction; each next one may hold twice as
/// many, up to `WRITE_BATCH_CHUNKS`. A server searching while it indexes a
/// cold tree then finds the first files within moments of the start, not
/// after a full batch has been embedded (seconds, at the model's pace).
const FIRST_BATCH_CHUNKS: usize = 16;
/// Files written per transaction, however few chunks they have.
const WRITE_BATCH_FILES: usize = 64;
/// Files read ahead of the embedders, per embedder: keeps them busy while
/// bounding the text held in memory.
const READ_AHEAD_PER_EMBEDDER: usize = 4;
/// How often a run waiting for the embedders asks whether to stop.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Read, embed and write `work`; returns whether the run was cancelled or
/// wound down before the end (what was written is committed either way).
pub(super) fn embed_and_write(
    req: &IndexRequest<'_>,
    work: &[&WalkedFile],
    stored: &HashMap<String, StoredFile>,
    store: &mut dyn IndexWriter,
    embedders: &mut EmbedderPool,
    run: (&mut IndexSummary, &mut dyn IndexObserver),
) -> Result<bool> {
    let (summary, obs) = run;
    let mut pipeline = Pipeline {
        full: embedders.embeds_fully(req.config),
        confined: Confinement::new(req.root, req.walk.follow),
        req,
        work,
        stored,
        workers: None,
        ready: BTreeMap::new(),
        handed_back: BTreeSet::new(),
        embedded: BTreeSet::new(),
        next_read: 0,
        next_emit: 0,
        in_flight: 0,
        stopped: false,
        wound_down: false,
        batch: Batch::default(),
        progress: RunProgress {
            of_files: work.len(),
            of_bytes: work.iter().map(|f| f.size).sum(),
            ..RunProgress::default()
        },
    };
    let result = pipeline.run(store, embedders, summary, obs);
    // A run that failed does not wait for the files in hand either: what
    // they would give is thrown away with it.
    if let Some(w) = pipeline.workers.take() {
        embedders.give_back(w.finish(pipeline.stopped || result.is_err()));
    }
    result?;
    pipeline.batch.flush(store, obs)?;
    Ok(pipeline.stopped || pipeline.wound_down)
}

struct Pipeline<'a, 'w> {
    req: &'a IndexRequest<'a>,
    /// Every chunk gets the model's vector in this run; otherwise chunks get
    /// static vectors and the model's only when one is known already.
    full: bool,
    /// Where a file may be read from, checked again as it is opened.
    confined: Confinement,
    work: &'a [&'w WalkedFile],
    stored: &'a HashMap<String, StoredFile>,
    workers: Option<Workers>,
    /// Files read or embedded, by their place in `work`, until written.
    ready: BTreeMap<usize, Prepared>,
    /// Files the embedders handed back unembedded as the run wound down.
    handed_back: BTreeSet<usize>,
    /// Files the embedders did, by their place in `work`: each counts in
    /// their hands until written (`InHand::written`).
    embedded: BTreeSet<usize>,
    next_read: usize,
    next_emit: usize,
    /// Files with the embedders.
    in_flight: usize,
    /// The observer cancelled the run.
    stopped: bool,
    /// The observer wound the run down: no file was read after, and of
    /// those read, the ones the embedders had in hand are written.
    wound_down: bool,
    batch: Batch,
    /// What the observer was last told.
    progress: RunProgress,
}

impl Pipeline<'_, '_> {
    fn run(
        &mut self,
        store: &mut dyn IndexWriter,
        embedders: &mut EmbedderPool,
        summary: &mut IndexSummary,
        obs: &mut dyn IndexObserver,
    ) -> Result<()> {
        let total = self.work.len();
        while self.next_emit < total {
            self.read_ahead(store, embedders, obs)?;
            self.write_ready(store, summary, obs)?;
            // Cancelled, the files with the embedders are left unwritten
            // (the next run redoes them) rather than waited for: Ctrl-C and
            // a server's shutdown are answered within a file, not a queue.
            let all_read = self.next_read == total || self.wound_down;
            if self.stopped || (self.next_emit == self.next_read && all_read) {
                break;
            }
            self.receive_one(obs)?;
        }
        Ok(())
    }

    /// Read on until the embedders (started by the first file that needs
    /// one) have their share queued, asked at each step: a big first file
    /// must not leave the other embedders idle until it is done.
    fn read_ahead(
        &mut self,
        store: &mut dyn IndexWriter,
        embedders: &mut EmbedderPool,
        obs: &mut dyn IndexObserver,
    ) -> Result<()> {
        let total = self.work.len();
        let read_ahead = |workers: &Option<Workers>| workers.as_ref().map_or(1, |w| w.count * READ_AHEAD_PER_EMBEDDER);
        while !self.stopped && !self.wound_down && self.next_read < total && self.in_flight < read_ahead(&self.workers)
        {
            if obs.cancelled() {
                self.stopped = true;
                break;
            }
            if obs.winding_down() {
                self.wound_down = true;
                if let Some(workers) = &self.workers {
                    workers.wind_down();
                }
                break;
            }
            let f = self.work[self.next_read];
            let read = match read_file(f, self.stored.get(&f.rel), self.req.config, self.full, &self.confined) {
                Read::Done(prepared) => Ok(prepared),
                Read::Embed(job) => Err(job),
                Read::Same(job) => kept_or_made_again(store.as_reader(), job, obs)?,
            };
            match read {
                Ok(prepared) => {
                    self.ready.insert(self.next_read, prepared);
                }
                Err(job) => {
                    if self.workers.is_none() {
                        match self.start_workers(store, embedders, obs) {
                            Ok(workers) => self.workers = Some(workers),
                            // A remote embedder's check, given up when told
                            // to stop: the run stopped, not failed.
                            Err(_) if obs.cancelled() => {
                                self.stopped = true;
                                break;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    self.workers.as_ref().expect("started").send(self.next_read, job)?;
                    self.in_flight += 1;
                }
            }
            self.next_read += 1;
        }
        Ok(())
    }

    /// The embedder threads, with the models the rest of the run needs, or
    /// in a static run the static table alone. A full run gives chunks
    /// static vectors too (microseconds a chunk): every chunk of an index
    /// is then on the static side of a search.
    fn start_workers(
        &self,
        store: &mut dyn IndexWriter,
        embedders: &mut EmbedderPool,
        obs: &mut dyn IndexObserver,
    ) -> Result<Workers> {
        let files = self.work.len() - self.next_read;
        let known = KnownVectors::open(self.req.root, &self.req.config.embedder_model);
        let statics = embedders.statics()?;
        if let (false, Some(statics)) = (self.full, &statics) {
            store.set_dims(statics.dims())?;
            let threads = embedders.static_threads(files);
            return Ok(Workers::start(
                (0..threads).map(|_| None).collect(),
                Some(Arc::clone(statics)),
                known,
                self.req.config,
            ));
        }
        if embedders.needs_loading(files) {
            obs.loading_model();
        }
        let taken = embedders.take(files)?;
        if let Err(e) = check_dims(store, &taken) {
            embedders.give_back(taken);
            return Err(e);
        }
        Ok(Workers::start(taken.into_iter().map(Some).collect(), statics, known, self.req.config))
    }

    /// Account for and batch the files ready in the walk's order.
    fn write_ready(
        &mut self,
        store: &mut dyn IndexWriter,
        summary: &mut IndexSummary,
        obs: &mut dyn IndexObserver,
    ) -> Result<()> {
        loop {
            // Handed back unembedded (`Workers::wind_down`): the next run does it.
            if self.handed_back.remove(&self.next_emit) {
                self.next_emit += 1;
                continue;
            }
            let Some(prepared) = self.ready.remove(&self.next_emit) else { break };
            let f = self.work[self.next_emit];
            if let (true, Some(workers)) = (self.embedded.remove(&self.next_emit), &self.workers) {
                workers.in_hand().written(counted_when_done(f.size));
                self.progress.bytes_in_hand = workers.in_hand().bytes();
            }
            record(prepared, f, self.stored.get(&f.rel), &mut self.batch, summary, obs);
            if self.batch.is_full() {
                self.batch.flush(store, obs)?;
            }
            self.next_emit += 1;
            self.progress.files = self.next_emit;
            self.progress.bytes += f.size;
            // Every chunk stored, however it got its vectors: a static run
            // embeds none with the model, and its bar said 0 chunks throughout.
            self.progress.chunks = summary.embedded + summary.copied + summary.pending;
            obs.progress(&self.progress);
        }
        Ok(())
    }

    /// Wait for a file from the embedders when the next one to write is
    /// with them, asking the observer now and then whether to stop: a few
    /// big files, all read ahead, are each seconds of the model's time, and
    /// a cancelled run must not wait for them (`stopped` is set instead).
    fn receive_one(&mut self, obs: &mut dyn IndexObserver) -> Result<()> {
        if self.in_flight == 0 || self.ready.contains_key(&self.next_emit) {
            return Ok(());
        }
        let workers = self.workers.as_ref().expect("in flight");
        let (index, write) = loop {
            match workers.receive_within(CANCEL_POLL)? {
                Some(received) => break received,
                None if obs.cancelled() => {
                    self.stopped = true;
                    return Ok(());
                }
                None => {
                    let in_hand = workers.in_hand().bytes();
                    if in_hand != self.progress.bytes_in_hand {
                        self.progress.bytes_in_hand = in_hand;
                        obs.progress(&self.progress);
                    }
                    obs.still_working();
                }
            }
        };
        self.in_flight -= 1;
        let Some(write) = write else {
            self.handed_back.insert(index);
            return Ok(());
        };
        // An embedder that gave up when told to stop: the run stopped.
        if write.is_err() && obs.cancelled() {
            self.stopped = true;
            return Ok(());
        }
        let write = write.with_context(|| format!("embedding {}", self.work[index].rel))?;
        self.embedded.insert(index);
        self.ready.insert(index, Prepared::Write(write));
        Ok(())
    }
}

/// A file whose bytes are as stored keeps its chunks (Ok, only its stat
/// data written) when what the index keeps of them is made of its text;
/// otherwise they are made again from it (Err, the job to embed), and
/// said: the index showed text that no file holds (audit 235).
fn kept_or_made_again(
    store: &dyn IndexReader,
    job: EmbedJob,
    obs: &mut dyn IndexObserver,
) -> Result<Result<Prepared, EmbedJob>> {
    let kept = store.kept_chunks(&job.rel)?;
    Ok(match super::kept::not_made_of(&job.rel, &job.text, &kept) {
        None => Ok(Prepared::Touch(job.state)),
        Some(NotMade::Text(why)) => {
            obs.note(&format!("{}: {why}; its chunks are made again from the file", job.rel));
            Err(job)
        }
        // An older chunker's, most likely: made again, unsaid (review 238).
        Some(NotMade::Context) => Err(job),
    })
}

/// The vectors about to be stored must have the size of those stored: a
/// server may answer for the same model name with another model.
fn check_dims(store: &mut dyn IndexWriter, embedders: &[Box<dyn Embedder>]) -> Result<()> {
    let Some(dims) = embedders.first().map(|e| e.dims()) else { return Ok(()) };
    match store.dims()? {
        Some(held) if held != dims => Err(anyhow!(
            "the embedder gives {dims}-dimensional vectors but the index holds {held}-dimensional ones (another model behind the name {:?}?); vg-index --reindex rebuilds the index",
            embedders[0].model_name()
        )),
        Some(_) => Ok(()),
        None => Ok(store.set_dims(dims)?),
    }
}

/// The changes written in one transaction.
#[derive(Default)]
struct Batch {
    writes: Vec<FileWrite>,
    touches: Vec<(String, FileState)>,
    removals: Vec<String>,
    chunks: usize,
    /// What became of the batch's files, told once the batch is stored, so
    /// that a run a full disk stops never reports a file it did not store.
    outcomes: Vec<(String, FileOutcome, u64)>,
    /// Transactions written so far in this run.
    flushed: u32,
}

impl Batch {
    /// Whether the batch should be written now: by the files it holds, or
    /// by its chunks against a bound that grows with each transaction.
    fn is_full(&self) -> bool {
        let chunk_bound = FIRST_BATCH_CHUNKS.saturating_mul(1 << self.flushed.min(8)).min(WRITE_BATCH_CHUNKS);
        self.chunks >= chunk_bound || self.writes.len() + self.touches.len() >= WRITE_BATCH_FILES
    }

    fn flush(&mut self, store: &mut dyn IndexWriter, obs: &mut dyn IndexObserver) -> Result<()> {
        let mut flushed = self.flushed;
        if !self.writes.is_empty() || !self.touches.is_empty() || !self.removals.is_empty() {
            store.write_batch(&self.writes, &self.touches, &self.removals)?;
            flushed += 1;
        }
        for (rel, outcome, chunks) in &self.outcomes {
            obs.file(rel, *outcome, *chunks);
        }
        *self = Batch { flushed, ..Batch::default() };
        Ok(())
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
        Prepared::Unread(reason) => {
            summary.unread += u64::from(reason.may_pass());
            obs.skipped(&Skip { path: f.rel.clone(), reason });
            summary.skipped += 1;
            summary.errors += 1;
        }
        Prepared::Skip(reason) => {
            let skip = Skip { path: f.rel.clone(), reason };
            obs.skipped(&skip);
            summary.skipped += 1;
            if skip.reason.is_error() {
                summary.errors += 1;
            }
            // A file that can no longer be read (closed to the user, no
            // longer text) leaves too: its old chunks would answer for text
            // nobody can check, as rg would not.
            if previous.is_some() {
                batch.removals.push(f.rel.clone());
                summary.removed += 1;
                batch.outcomes.push((f.rel.clone(), FileOutcome::Removed, 0));
            }
        }
        Prepared::Touch(state) => {
            let chunks = previous.map_or(0, |p| p.chunks);
            summary.files += 1;
            summary.chunks += chunks;
            summary.reused += chunks;
            batch.touches.push((f.rel.clone(), state));
            batch.outcomes.push((f.rel.clone(), FileOutcome::Unchanged, chunks));
        }
        Prepared::Write(write) => {
            let n = write.chunks.len() as u64;
            let holes = write.holes();
            summary.files += 1;
            summary.chunks += n;
            summary.embedded += n - holes - write.pending - write.copied;
            summary.pending += write.pending;
            summary.copied += write.copied;
            summary.tokens += write.tokens;
            summary.holes += holes;
            batch.chunks += write.chunks.len();
            batch.writes.push(write);
            batch.outcomes.push((f.rel.clone(), FileOutcome::Indexed, n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::SkipReason;

    #[test]
    fn the_first_transactions_are_small_and_the_bound_grows_to_the_full_batch() {
        let bounds: Vec<usize> = (0..7)
            .map(|flushed| {
                let mut batch = Batch { flushed, ..Batch::default() };
                while !batch.is_full() {
                    batch.chunks += 1;
                }
                batch.chunks
            })
            .collect();
        assert_eq!(bounds, [16, 32, 64, 128, 256, 256, 256]);
        let many_files = Batch {
            touches: vec![
                (String::new(), FileState { size: 0, mtime_ns: 0, hash: Vec::new(), ctime_ns: 0 });
                WRITE_BATCH_FILES
            ],
            ..Batch::default()
        };
        assert!(many_files.is_full());
    }

    struct Skips(Vec<String>);
    impl IndexObserver for Skips {
        fn note(&mut self, _: &str) {}
        fn planned(&mut self, _: usize, _: usize, _: usize, _: u64) {}
        fn confirm_large(&mut self, _: usize, _: u64) -> bool {
            true
        }
        fn skipped(&mut self, skip: &Skip) {
            self.0.push(skip.path.clone());
        }
        fn file(&mut self, _: &str, _: FileOutcome, _: u64) {}
        fn progress(&mut self, _: &RunProgress) {}
    }

    /// A stored file that a read error that may pass kept from being read
    /// is an error, and stays stored; one closed to the user leaves.
    #[test]
    fn a_stored_file_not_read_for_a_passing_reason_stays() {
        let f = WalkedFile { rel: "a.py".into(), abs: "/nowhere/a.py".into(), size: 1, mtime_ns: 1, ctime_ns: 1 };
        let stored = StoredFile {
            state: FileState { size: 1, mtime_ns: 0, hash: Vec::new(), ctime_ns: 0 },
            chunks: 2,
            holes: Some(0),
        };
        let (mut batch, mut summary, mut obs) = (Batch::default(), IndexSummary::default(), Skips(Vec::new()));
        let busy = SkipReason::Error("Too many open files (os error 24)".into());
        record(Prepared::Unread(busy), &f, Some(&stored), &mut batch, &mut summary, &mut obs);
        assert!(batch.removals.is_empty() && summary.removed == 0);
        assert_eq!((summary.errors, obs.0.len()), (1, 1));
        let closed = SkipReason::Error("Permission denied (os error 13)".into());
        record(Prepared::Skip(closed), &f, Some(&stored), &mut batch, &mut summary, &mut obs);
        assert_eq!((batch.removals.len(), summary.removed, summary.errors), (1, 1, 2));
    }
}
