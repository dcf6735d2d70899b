//! The embedder threads of an index run: each owns a model and takes
//! changed files from one queue; results come back tagged with the file's
//! place in the walk, so that they are written in the walk's order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{anyhow, Result};

use super::file::{chunk_and_embed, EmbedJob, Embedding, KnownVectors};
use super::in_hand::InHand;
use crate::embed::{Embedder, StaticModel};
use crate::project::ResolvedConfig;
use crate::store::FileWrite;

/// Embedder threads, each owning a model (none in a static run), taking
/// jobs from one queue.
pub(super) struct Workers {
    pub count: usize,
    jobs: Option<mpsc::Sender<(usize, EmbedJob)>>,
    results: mpsc::Receiver<(usize, Option<Result<FileWrite>>)>,
    handles: Vec<JoinHandle<Option<Box<dyn Embedder>>>>,
    /// Set when the run is abandoned: the threads take no further job.
    abandoned: Arc<AtomicBool>,
    /// Set when the run winds down: the threads hand each job they take
    /// back unembedded (`None`), finishing only those in hand.
    winding_down: Arc<AtomicBool>,
    /// How far the threads are through the files they took.
    in_hand: Arc<InHand>,
}

impl Workers {
    pub(super) fn start(
        embedders: Vec<Option<Box<dyn Embedder>>>,
        statics: Option<Arc<StaticModel>>,
        known: Option<Arc<KnownVectors>>,
        config: &ResolvedConfig,
    ) -> Workers {
        let (job_tx, job_rx) = mpsc::channel::<(usize, EmbedJob)>();
        let (result_tx, result_rx) = mpsc::channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let count = embedders.len();
        let abandoned = Arc::new(AtomicBool::new(false));
        let winding_down = Arc::new(AtomicBool::new(false));
        let in_hand = Arc::new(InHand::default());
        let handles = embedders
            .into_iter()
            .map(|mut embedder| {
                let (jobs, results, known) = (Arc::clone(&job_rx), result_tx.clone(), known.clone());
                let (statics, abandoned) = (statics.clone(), Arc::clone(&abandoned));
                let (winding_down, in_hand) = (Arc::clone(&winding_down), Arc::clone(&in_hand));
                let (size, overlap) = (config.chunk_size, config.chunk_overlap);
                std::thread::spawn(move || {
                    loop {
                        // The lock is held only to take a job, not while embedding it.
                        let next = jobs.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()));
                        let Ok((index, job)) = next else { break };
                        if abandoned.load(Ordering::SeqCst) {
                            break;
                        }
                        if winding_down.load(Ordering::SeqCst) {
                            if results.send((index, None)).is_err() {
                                break;
                            }
                            continue;
                        }
                        let with = Embedding {
                            model: embedder.as_deref_mut(),
                            statics: statics.as_deref(),
                            abandoned: &abandoned,
                            in_hand: &in_hand,
                        };
                        let write = chunk_and_embed(job, with, known.as_deref(), size, overlap);
                        if results.send((index, Some(write))).is_err() {
                            break;
                        }
                    }
                    embedder
                })
            })
            .collect();
        Workers { count, jobs: Some(job_tx), results: result_rx, handles, abandoned, winding_down, in_hand }
    }

    pub(super) fn send(&self, index: usize, job: EmbedJob) -> Result<()> {
        self.jobs
            .as_ref()
            .and_then(|j| j.send((index, job)).ok())
            .ok_or_else(|| anyhow!("the embedding threads stopped"))
    }

    /// How far the threads are through the files they took, and what the
    /// run counts as written when it writes one of them (`InHand`).
    pub(super) fn in_hand(&self) -> &InHand {
        &self.in_hand
    }

    /// Embed no more of the queued files: each comes back unembedded, and
    /// only those in hand are finished.
    pub(super) fn wind_down(&self) {
        self.winding_down.store(true, Ordering::SeqCst);
    }

    /// The next file back from the embedders (None inside when it came back
    /// unembedded, `wind_down`), or None when none came within `wait`.
    pub(super) fn receive_within(
        &self,
        wait: std::time::Duration,
    ) -> Result<Option<(usize, Option<Result<FileWrite>>)>> {
        match self.results.recv_timeout(wait) {
            Ok(received) => Ok(Some(received)),
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(anyhow!("the embedding threads stopped")),
        }
    }

    /// Stop taking jobs and hand the models back: `abandon` leaves the
    /// queued files alone (a cancelled run does not write them), and waits
    /// only for the files in hand.
    pub(super) fn finish(mut self, abandon: bool) -> Vec<Box<dyn Embedder>> {
        self.abandoned.store(abandon, Ordering::SeqCst);
        drop(self.jobs.take());
        self.handles.drain(..).filter_map(|h| h.join().ok().flatten()).collect()
    }
}
