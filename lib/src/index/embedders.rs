//! The models an index run embeds with: one per core for a run with many
//! files, one using every core for a run with a few; and the static tier's
//! table, which a run uses instead of the models unless it embeds fully.

use std::sync::Arc;

use anyhow::{anyhow, Result};

use crate::embed::{Embedder, LazyStatic, StaticLoader, StaticModel};

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
    statics: LazyStatic,
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
        EmbedderPool {
            loader: Arc::new(loader),
            cores: cores.max(1),
            loaded: Vec::new(),
            statics: LazyStatic::new(None),
        }
    }

    /// The pool with the static tier: runs that do not embed fully give
    /// chunks static vectors and leave the model's to searches and fills.
    pub fn with_static(mut self, loader: StaticLoader) -> Self {
        self.statics = LazyStatic::new(Some(loader));
        self
    }

    /// Whether a run with `config` gives chunks the model's vectors: asked
    /// to (`embed_all`), or the pool has no static tier.
    pub(super) fn embeds_fully(&self, config: &crate::project::ResolvedConfig) -> bool {
        config.embed_all || self.statics.is_none()
    }

    /// The static table, loaded at the first call; None when the pool has
    /// none. A table that cannot be had is an error, not a quiet turn to a
    /// run a hundred times longer: it fails for what the model would fail
    /// for (not installed, damaged).
    pub(super) fn statics(&mut self) -> Result<Option<Arc<StaticModel>>> {
        self.statics.get()
    }

    /// How many threads a static run over `files` files chunks on.
    pub(super) fn static_threads(&self, files: usize) -> usize {
        self.wanted(files)
    }

    fn wanted(&self, files: usize) -> usize {
        if files >= PARALLEL_FILES {
            self.cores
        } else {
            1
        }
    }

    /// Whether a run over `files` files must load a model first (seconds).
    pub(super) fn needs_loading(&self, files: usize) -> bool {
        self.loaded.len() < self.wanted(files)
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
