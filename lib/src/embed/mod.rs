//! Turning text into vectors, behind one seam: the [`Embedder`] trait.
//! `local` runs all-MiniLM-L6-v2 through ONNX Runtime on this machine
//! (`session` prepares and caches its graph, `model` rewrites it first);
//! `remote` asks an OpenAI-compatible server; `assets` finds the model and
//! the runtime on disk, `tokenizer` reads the model's tokenizer. Index runs and searches see only the trait.

use anyhow::Result;

mod assets;
mod distil;
mod local;
mod model;
mod remote;
mod session;
mod static_model;
mod tokenizer;

pub use assets::{locate, locate_model, AssetError, Assets, CODE_MODEL, LOCAL_MODELS};
pub use distil::distil_table;
pub use local::{local_token_counter, LocalEmbedder};
pub(crate) use remote::{check_api_key, http_agent, status_hint};
pub use remote::{estimate_tokens, RemoteEmbedder, RemoteSettings, API_KEY_VAR};
pub use session::ORT_TELEMETRY_OFF;
pub use static_model::{
    encode_table, table_id, why_another_table, LazyStatic, StaticLoader, StaticModel, TokenWeighting, TABLE_FILE,
    TABLE_OVERRIDE_VAR,
};

/// Dimensions of all-MiniLM-L6-v2's sentence vectors.
pub const DIMS: usize = 384;

/// How the tool hears that its user asked the run to stop (Ctrl-C,
/// SIGTERM): set once by the binary; a remote embedder's retries stop then.
static STOP_CHECK: std::sync::OnceLock<fn() -> bool> = std::sync::OnceLock::new();

/// Have the embedders ask `check` whether the run is to stop.
pub fn stop_when(check: fn() -> bool) {
    let _ = STOP_CHECK.set(check);
}

/// Whether the user asked the run to stop (`stop_when`).
pub(crate) fn stop_asked() -> bool {
    STOP_CHECK.get().is_some_and(|check| check())
}

/// The model's input window in tokens, counting `[CLS]` and `[SEP]`; text
/// beyond it would be silently truncated, so the chunker keeps below it.
pub const MAX_TOKENS: usize = 256;

/// `[CLS]` and `[SEP]`, which the model sees around every text.
pub const SPECIAL_TOKENS: usize = 2;

/// Anything that turns text into unit-length vectors of one fixed size.
pub trait Embedder: Send {
    /// The name recorded in the index; changing it rebuilds the index.
    fn model_name(&self) -> &str;
    fn dims(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// One vector per text, or None for a text the embedder finally could
    /// not embed (a hole, stored without a vector and retried next run). An
    /// error still stops the run. The local model succeeds or fails whole.
    fn embed_each(&mut self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        Ok(self.embed(texts)?.into_iter().map(Some).collect())
    }
    /// Texts worth handing over in one call: the local model runs one text
    /// at a time, so a call of one costs nothing more, while a server answers
    /// a batch per request. An index run that is stopped notices between
    /// calls, so this bounds how long a Ctrl-C or a shutdown waits.
    fn texts_per_call(&self) -> usize {
        1
    }
    /// Tokens the model would see for `text`, special tokens included.
    fn count_tokens(&self, text: &str) -> usize;
}

/// What a session is for; it decides how ONNX Runtime prepares the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// A few short texts right after start-up: start fast.
    Query,
    /// Many chunks: spend start-up time on a faster graph.
    Index,
}

/// Counts tokens the way the chunker needs (does a chunk fit the window?):
/// the local model's tokenizer when the remote model is the same model, so
/// that local and remote indexes of a tree cut the same chunks; otherwise
/// a conservative estimate of one token per three bytes.
pub type TokenCounter = Box<dyn Fn(&str) -> usize + Send>;

/// Loads an embedder; Send so that a background thread can own one. It may
/// be called again after a failure (a server that was down comes back).
pub type EmbedderLoader = Box<dyn FnMut() -> Result<Box<dyn Embedder>> + Send>;

/// How long a query embedder that failed to load, or to embed a query, is
/// not tried again: a search in the meantime learns why at once instead of
/// waiting on a server that did not answer a moment ago.
pub const RELOAD_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// A remote embedder's server did not answer (a timeout, connection trouble,
/// 429 or 5xx after every attempt): unlike a text it refused, a reason not to
/// ask it again for a while (`LazyEmbedder::failed`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServerAway(pub String);

/// The query's embedder, loaded only when something needs embedding, and
/// the static table of the same model (`StaticModel`), loaded only when a
/// search meets chunks that lack the model's vector.
pub struct LazyEmbedder {
    loader: EmbedderLoader,
    loaded: Option<Box<dyn Embedder>>,
    /// The last failure to load or to embed, when, and why.
    failed: Option<(std::time::Instant, String)>,
    statics: LazyStatic,
}

impl LazyEmbedder {
    pub fn new(loader: impl FnMut() -> Result<Box<dyn Embedder>> + Send + 'static) -> Self {
        LazyEmbedder { loader: Box::new(loader), loaded: None, failed: None, statics: LazyStatic::new(None) }
    }

    /// The embedder with the static table `loader` gives (None: there is none
    /// for this model, as for a remote one).
    pub fn with_static(mut self, loader: Option<StaticLoader>) -> Self {
        self.statics = LazyStatic::new(loader);
        self
    }

    /// The embedder, loaded at the first call. After a failure (`failed`
    /// too) the cause is given again, without trying, until `RELOAD_AFTER`
    /// has passed.
    pub fn get(&mut self) -> Result<&mut dyn Embedder> {
        if let Some((at, why)) = &self.failed {
            if at.elapsed() < RELOAD_AFTER {
                anyhow::bail!("{why} (tried {}s ago)", at.elapsed().as_secs());
            }
        }
        if self.loaded.is_none() {
            match (self.loader)() {
                Ok(embedder) => {
                    self.loaded = Some(embedder);
                    self.failed = None;
                }
                Err(e) => {
                    let why = crate::project::shown::error_line(&e);
                    self.failed = Some((std::time::Instant::now(), why.clone()));
                    anyhow::bail!(why);
                }
            }
        }
        Ok(self.loaded.as_deref_mut().expect("just loaded"))
    }

    /// The embedder loaded failed to embed a query: when its server did not
    /// answer (`ServerAway`), searches in the next `RELOAD_AFTER` learn why
    /// at once, rather than each waiting out its own timeout in turn behind
    /// the query embedder's lock (three searches answered after 30, 61 and
    /// 92 s, and held a server's workers so long). A query the server
    /// refused (too long for it) is that query's failure alone.
    pub fn failed(&mut self, e: &anyhow::Error) {
        if e.downcast_ref::<ServerAway>().is_some() {
            self.failed = Some((std::time::Instant::now(), crate::project::shown::error_line(e)));
        }
    }

    /// Whether the embedder's model has a static table to be had (one that
    /// failed to load has none).
    pub fn has_statics(&self) -> bool {
        !self.statics.is_none()
    }

    /// The static table of the embedder's model, loaded at the first call;
    /// None when there is none.
    pub fn statics(&mut self) -> Result<Option<std::sync::Arc<StaticModel>>> {
        self.statics.get()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_failed_load_is_told_again_without_trying_until_it_is_time() {
        let tries = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&tries);
        let mut lazy = LazyEmbedder::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            anyhow::bail!("the embedding server at http://h/v1 does not work: no answer within 1s")
        });
        let first = lazy.get().err().unwrap().to_string();
        let again = lazy.get().err().unwrap().to_string();
        assert!(first.contains("no answer within 1s"), "{first}");
        assert!(again.starts_with(&first) && again.contains("tried 0s ago"), "{again}");
        assert_eq!(tries.load(Ordering::SeqCst), 1);
        // Once RELOAD_AFTER has passed, the loader is called again.
        lazy.failed.as_mut().unwrap().0 -= RELOAD_AFTER;
        assert!(lazy.get().is_err());
        assert_eq!(tries.load(Ordering::SeqCst), 2);
    }

    /// An embedder loaded, whose vectors no test here reads.
    struct Unread;

    impl Embedder for Unread {
        fn model_name(&self) -> &str {
            "all-MiniLM-L6-v2"
        }

        fn dims(&self) -> usize {
            1
        }

        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts.iter().map(|_| vec![1.0]).collect())
        }

        fn count_tokens(&self, text: &str) -> usize {
            text.len()
        }
    }

    #[test]
    fn a_failure_to_embed_is_told_again_without_trying_until_it_is_time() {
        let loads = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&loads);
        let mut lazy = LazyEmbedder::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(Box::new(Unread) as Box<dyn Embedder>)
        });
        assert!(lazy.get().is_ok());
        // A query the server refused is no reason to stop asking it.
        lazy.failed(&anyhow::anyhow!("embedding failed: input is too long"));
        assert!(lazy.get().is_ok());
        let away = anyhow::Error::new(ServerAway("the embedding server did not answer within 30s".into()));
        lazy.failed(&away.context("cannot embed the query"));
        let again = lazy.get().err().unwrap().to_string();
        assert!(again.contains("did not answer within 30s") && again.contains("tried 0s ago"), "{again}");
        // Then the embedder loaded is tried again, not loaded anew.
        lazy.failed.as_mut().unwrap().0 -= RELOAD_AFTER;
        assert!(lazy.get().is_ok());
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }
}
