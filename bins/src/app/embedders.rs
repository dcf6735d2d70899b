//! Loading the embedders an invocation's settings name, and the one-shot
//! search that may need one.

use anyhow::{anyhow, Result};
use vecgrep::embed::{Embedder, LocalEmbedder, Profile};
use vecgrep::index::EmbedderPool;
use vecgrep::project::ProjectRoot;
use vecgrep::project::{EmbedderSource, ResolvedConfig};
use vecgrep::search::MeaningSides;

use super::invocation::Invocation;

/// Embedders for `config` set up for indexing, loaded when first needed.
pub fn embedder_pool(config: &ResolvedConfig) -> EmbedderPool {
    let statics = static_loader(config);
    let config = config.clone();
    let pool = EmbedderPool::new(move |threads| load_embedder(&config, Profile::Index, threads));
    match statics {
        Some(loader) => pool.with_static(loader),
        None => pool,
    }
}

/// The static tier's table for the local model; None with a remote
/// embedder, whose vectors a table trained on the local model's would not match.
pub fn static_loader(config: &ResolvedConfig) -> Option<vecgrep::embed::StaticLoader> {
    if config.embedder_source == EmbedderSource::Remote {
        return None;
    }
    let model = config.embedder_model.clone();
    Some(Box::new(move || vecgrep::embed::StaticModel::load(&vecgrep::embed::locate_model(&model)?)))
}

/// Threads a query model uses: all the cores, for the one text it embeds.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Load the embedder `config` names for embedding chunks, prepared for
/// `profile`, on `threads` threads.
pub fn load_embedder(config: &ResolvedConfig, profile: Profile, threads: usize) -> Result<Box<dyn Embedder>> {
    load_embedder_for(config, profile, threads, false)
}

/// Load the embedder `config` names for embedding questions (a remote
/// server's requests are tried once: `RemoteSettings::for_queries`).
pub fn load_query_embedder(config: &ResolvedConfig, profile: Profile, threads: usize) -> Result<Box<dyn Embedder>> {
    load_embedder_for(config, profile, threads, true)
}

fn load_embedder_for(
    config: &ResolvedConfig,
    profile: Profile,
    threads: usize,
    queries: bool,
) -> Result<Box<dyn Embedder>> {
    if config.embedder_source == EmbedderSource::Remote {
        let url = config.embedder_url.as_deref().ok_or_else(|| {
            anyhow!("embedder_source = \"remote\" needs embedder_url, the server's /v1/embeddings endpoint (set it in your global config or pass --embedder-url)")
        })?;
        let settings = vecgrep::embed::RemoteSettings::new(
            url,
            &config.embedder_model,
            std::time::Duration::from_secs_f64(config.embedder_timeout),
            config.embedder_batch_size,
        );
        let settings = if queries { settings.for_queries() } else { settings };
        let count = vecgrep::embed::local_token_counter(&config.embedder_model)
            .unwrap_or_else(|| Box::new(vecgrep::embed::estimate_tokens));
        return Ok(Box::new(vecgrep::embed::RemoteEmbedder::connect(settings, count)?));
    }
    let assets = vecgrep::embed::locate(&config.embedder_model)?;
    Ok(Box::new(LocalEmbedder::load(&assets, &config.embedder_model, profile, threads)?))
}

/// Start loading the query embedder on another thread, so that its start-up
/// overlaps the index freshness check instead of following it.
pub fn preload_query_embedder(config: &ResolvedConfig) -> std::thread::JoinHandle<Result<Box<dyn Embedder>>> {
    let config = config.clone();
    std::thread::spawn(move || load_query_embedder(&config, Profile::Query, all_cores()))
}

/// The embedder `preload_query_embedder` started loading.
pub fn join_embedder(handle: std::thread::JoinHandle<Result<Box<dyn Embedder>>>) -> Result<Box<dyn Embedder>> {
    handle.join().unwrap_or_else(|_| Err(anyhow!("loading the embedding model panicked")))
}

/// The models a one-shot search may rank by, loading on other threads while
/// its index pass runs: the model for the query where the index holds the
/// model's vectors, the static table where it ranks statically (reading
/// the tokenizer and the table is a fifth of a search on tokio).
#[derive(Default)]
pub struct Preloading {
    pub query_embedder: Option<std::thread::JoinHandle<Result<Box<dyn Embedder>>>>,
    pub statics: Option<std::thread::JoinHandle<Result<vecgrep::embed::StaticModel>>>,
}

impl Preloading {
    /// Start loading what a search in `config`'s mode needs: the model when
    /// `model_likely`, else the static table (none for a lexical search).
    pub fn start(config: &ResolvedConfig, model_likely: bool) -> Preloading {
        if !vecgrep::search::needs_embedder(config.mode) {
            return Preloading::default();
        }
        if model_likely {
            return Preloading { query_embedder: Some(preload_query_embedder(config)), statics: None };
        }
        Preloading { query_embedder: None, statics: static_loader(config).map(std::thread::spawn) }
    }

    /// `start` for a search of `inv`'s index (vg-query, vg-ask).
    pub fn start_for(inv: &Invocation) -> Preloading {
        Preloading::start(&inv.config, may_need_model(inv))
    }

    /// Wait for what is still loading: a process that exits under a loading
    /// ONNX Runtime can crash.
    pub fn finish(self) {
        if let Some(loading) = self.query_embedder {
            let _ = loading.join();
        }
        if let Some(loading) = self.statics {
            let _ = loading.join();
        }
    }
}

/// Whether the search may need the model for the query, to start loading it
/// (else the static table) while the index is brought up to date: not for
/// a static index, whose meaning the static table ranks (nor for one not
/// made yet, which an index run makes static), unless the config asks
/// every chunk to be embedded. A shared index is not looked at: that would
/// be a connection of its own to a server that may be far away or not
/// answering, before the run's; its search loads the model if it must.
fn may_need_model(inv: &Invocation) -> bool {
    let has_statics = static_loader(&inv.config).is_some();
    let sides_now = |s: &dyn vecgrep::store::IndexReader| MeaningSides::of(s, inv.config.mode, true);
    let local_has_model_vectors = || {
        inv.root.shared.is_none()
            && vecgrep::store::open_for_reading(&inv.root).is_ok_and(|s| sides_now(&*s).is_ok_and(|m| m.by_model))
    };
    vecgrep::search::needs_embedder(inv.config.mode)
        && (!has_statics || inv.config.embed_all || local_has_model_vectors())
}

/// A one-shot search (vg-query, vg-ask) of `store`, the index of
/// `searched`: with the static table where the index has chunks with
/// static vectors only (the index's first tier), and with the model for
/// the query only where it has chunks with the model's vector; each the
/// one `preloading` is loading, or loaded now.
pub fn search_once(
    store: &dyn vecgrep::store::IndexReader,
    preloading: &mut Preloading,
    request: &vecgrep::search::SearchRequest<'_>,
    config: &ResolvedConfig,
    searched: &ProjectRoot,
) -> Result<Vec<vecgrep::search::Hit>> {
    let loader = static_loader(config);
    let sides = MeaningSides::of(store, request.mode, loader.is_some())?;
    let statics = match loader {
        Some(load) if sides.by_statics => {
            if !vecgrep::search::statics_match(store)? {
                return Err(anyhow!(
                    "the index's static vectors come from another static table ({}); run vg-index, or search without --no-index, to recompute them",
                    vecgrep::embed::why_another_table()
                ));
            }
            Some(match preloading.statics.take() {
                Some(loading) => {
                    loading.join().unwrap_or_else(|_| Err(anyhow!("loading the static table panicked")))?
                }
                None => load()?,
            })
        }
        _ => None,
    };
    if sides.by_model {
        refuse_another_model(store, config)?;
    }
    let mut model = match preloading.query_embedder.take() {
        Some(loading) => Some(join_embedder(loading)?),
        None if sides.by_model => Some(load_query_embedder(config, Profile::Query, all_cores())?),
        None => None,
    };
    let embedder = model.as_mut().map(|e| &mut **e as &mut dyn Embedder);
    let hits = vecgrep::search::search_index(searched, store, embedder, statics.as_ref(), sides, request);
    // Freeing the tokenizer's 60k strings one by one takes ~8 ms: done
    // beside the hits' output, or not at all if the process ends first.
    if let Some(statics) = statics {
        std::thread::spawn(move || drop(statics));
    }
    hits
}

/// A query embedded by one model is not compared with chunks embedded by
/// another: their cosines mean nothing (an index run rebuilds such an
/// index first; `--no-index` searches it as it is).
fn refuse_another_model(store: &dyn vecgrep::store::IndexReader, config: &ResolvedConfig) -> Result<()> {
    match vecgrep::store::other_model(store, &config.embedder_model)? {
        Some(other) => Err(anyhow!(
            "the index's vectors were made by {other}, not {}; run vg-index, or search without --no-index, to rebuild it",
            config.embedder_model
        )),
        None => Ok(()),
    }
}
