//! The models an index run embeds with: one per core for a run with many
//! files, one using every core for a run with a few.

use std::sync::Arc;

use anyhow::{anyhow, Result};

use crate::embed::Embedder;

/// Runs with at least this many files to read embed on every core at once;
/// smaller ones (one edited file) use one model on all cores instead, which
/// embeds a single file faster and loads one model, not one per core.
pub(super) const PARALLEL_FILES: usize = 8;

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

    pub(super) fn with_cores(
        loader: impl Fn(usize) -> Result<Box<dyn Embedder>> + Send + Sync + 'static,
        cores: usize,
    ) -> Self {
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
    pub(super) fn load_for(&mut self, files: usize) -> Result<()> {
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

    pub(super) fn take(&mut self, files: usize) -> Result<Vec<Box<dyn Embedder>>> {
        self.load_for(files)?;
        let wanted = self.wanted(files).min(self.loaded.len());
        let rest = self.loaded.split_off(wanted);
        Ok(std::mem::replace(&mut self.loaded, rest))
    }

    pub(super) fn give_back(&mut self, embedders: Vec<Box<dyn Embedder>>) {
        self.loaded.extend(embedders);
    }
}
