//! The ONNX Runtime session a local embedder runs: the model rewritten
//! (`model`), optimized once by ONNX Runtime and cached in its own format,
//! then memory-mapped, so that a search loads the model in ~30 ms and an
//! index run in ~90 ms instead of ~400 ms.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;

use super::assets::Assets;
use super::Profile;

// Telemetry off: ONNX Runtime 1.31 otherwise keeps an event database under
// ~/.cache/Microsoft, and this tool promises to work offline and keep to itself.
// The API's switch (`with_telemetry(false)`) comes after the environment has
// made its store; only the variable keeps it from being made, so the
// binaries set it as they start (`ORT_TELEMETRY_OFF`).
static ORT_ENV: OnceLock<Result<Environment, String>> = OnceLock::new();

/// The variable, and its value, that keeps ONNX Runtime from making its
/// telemetry store; read when its environment is made.
pub const ORT_TELEMETRY_OFF: (&str, &str) = ("ORT_DISABLE_TELEMETRY", "1");

pub(super) fn runtime(assets: &Assets) -> Result<Environment> {
    ORT_ENV
        .get_or_init(|| {
            ort::init_from(&assets.ort_library)
                .map_err(|e| load_error_line(&e))
                .and_then(|b| b.with_name("vecgrep").with_telemetry(false).build().map_err(|e| e.to_string()))
                // Its own log wrote a second, coloured line beside the tool's
                // error (which carries the same cause) when a run failed.
                .inspect(|env| env.set_log_level(ort::logging::LogLevel::Fatal))
                .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", assets.ort_library.display()))
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// Why the library did not load, with the loader's own words: under ort's
/// "dlopen failed" sits `dlerror`'s ("libfoo.so: cannot open shared object
/// file"), which ort's error does not give as its source (audit 183).
fn load_error_line(e: &ort::LoadDynamicError) -> String {
    let mut line = e.to_string();
    if let ort::LoadDynamicError::Dlopen { error, .. } = e {
        if let Some(cause) = std::error::Error::source(error) {
            line.push_str(&format!(": {cause}"));
        }
    }
    line.replace('\n', " ")
}

/// A loaded session, and the memory map its weights live in when it was
/// loaded from the model cache.
pub(super) struct LoadedSession {
    pub session: Session,
    pub mapped: Option<memmap2::Mmap>,
}

/// How ONNX Runtime prepares the graph, for every session: the vectors of
/// queries and of chunks must come from the same arithmetic, and with int8
/// products a different set of fused operators shifts a vector enough to
/// reorder near ties. The model cache holds the graph prepared this way.
pub(super) const OPTIMIZATION: GraphOptimizationLevel = GraphOptimizationLevel::Level3;

/// Fusions of that level left out, comma-separated. ONNX Runtime's fused
/// SkipLayerNormalization took 15% of embedding time on this model, 7x what
/// the plain Add and LayerNormalization it replaces take (ORT 1.31,
/// per-operator profile of `lib/examples/embed_speed.rs`'s texts); without
/// it the model embeds about 14% more tokens per second.
pub(super) const UNFUSED: &str = "SkipLayerNormFusion";

pub(super) fn load_session(assets: &Assets, profile: Profile, threads: usize) -> Result<LoadedSession> {
    let env = runtime(assets)?;
    let path = assets.model_dir.join("model.onnx");
    let fail = |e: String| anyhow!("cannot load the embedding model from {}: {e}", path.display());
    let builder = || {
        Session::builder(&env)
            .map_err(|e| fail(e.to_string()))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| fail(e.to_string()))?
            .with_config_entry("optimization.disable_specified_optimizers", UNFUSED)
            .map_err(|e| fail(e.to_string()))
            // For performance work: ONNX Runtime's per-operator timings, as JSON.
            .and_then(|b| match std::env::var_os("VECGREP_ORT_PROFILE").filter(|p| !p.is_empty()) {
                Some(p) => b.with_profiling(p).map_err(|e| fail(e.to_string())),
                None => Ok(b),
            })
    };
    // Both profiles start from the cached graph when there is one, which
    // skips parsing, rewriting and optimizing the model (~30 ms instead of
    // ~400 ms to load). A query uses its weights in place from the map; an
    // index session lets ONNX Runtime repack them for its kernels first,
    // which costs memory and ~50 ms but makes each run faster.
    if let Some(cache) = model_cache(assets) {
        match map_cached_model(&cache) {
            Ok(Some(mapped)) => {
                let session = (|| -> Result<Session, String> {
                    let mut b = builder()
                        .map_err(|e| e.to_string())?
                        .with_optimization_level(GraphOptimizationLevel::Disable)
                        .map_err(|e| e.to_string())?
                        .with_config_entry("session.use_ort_model_bytes_directly", "1")
                        .map_err(|e| e.to_string())?
                        .with_config_entry("session.use_ort_model_bytes_for_initializers", "1")
                        .map_err(|e| e.to_string())?;
                    if profile == Profile::Query {
                        b = b.with_config_entry("session.disable_prepacking", "1").map_err(|e| e.to_string())?;
                    }
                    b.commit_from_memory(&mapped).map_err(|e| e.to_string())
                })();
                if let Ok(session) = session {
                    // `LocalEmbedder` drops the session before the map.
                    return Ok(LoadedSession { session, mapped: Some(mapped) });
                }
                // A cache written by another ONNX Runtime: build it again below.
            }
            Ok(None) => {}
            Err(_) => return load_onnx(builder()?, &path, OPTIMIZATION, None, &fail),
        }
        // A cache ONNX Runtime cannot write fails the load itself: one this
        // user may not write (a directory another user made) is not asked
        // to hold it, and after a failed save (a full disk) the model is
        // loaded again without it.
        let writable = cache.parent().is_some_and(|dir| crate::project::small_file::may(dir, libc::W_OK));
        if !writable {
            return load_onnx(builder()?, &path, OPTIMIZATION, None, &fail);
        }
        return load_onnx(builder()?, &path, OPTIMIZATION, Some(&cache), &fail)
            .or_else(|_| load_onnx(builder()?, &path, OPTIMIZATION, None, &fail));
    }
    load_onnx(builder()?, &path, OPTIMIZATION, None, &fail)
}

/// Load `model.onnx`; with `save_to`, also write the optimized graph there
/// in ONNX Runtime's own format (atomically: a temporary file renamed).
fn load_onnx(
    builder: ort::session::builder::SessionBuilder,
    path: &Path,
    level: GraphOptimizationLevel,
    save_to: Option<&Path>,
    fail: &dyn Fn(String) -> anyhow::Error,
) -> Result<LoadedSession> {
    let bytes = super::model::model_bytes(path)?;
    let mut builder = builder.with_optimization_level(level).map_err(|e| fail(e.to_string()))?;
    let temp = save_to.map(|p| p.with_extension(format!("tmp{}", std::process::id())));
    if let Some(temp) = &temp {
        builder = builder
            .with_optimized_model_path(temp)
            .map_err(|e| fail(e.to_string()))?
            .with_config_entry("session.save_model_format", "ORT")
            .map_err(|e| fail(e.to_string()))?;
    }
    let session = builder.commit_from_memory(&bytes).map_err(|e| {
        // What a failed save left (a full disk's part of the graph).
        if let Some(temp) = &temp {
            let _ = std::fs::remove_file(temp);
        }
        // What ONNX Runtime cannot parse is a damaged file, to fetch again.
        fail(format!("{e}; {}", super::assets::fix_for(path)))
    })?;
    if let (Some(temp), Some(dest)) = (&temp, save_to) {
        // Best effort: a cache that cannot be written costs speed, not results.
        if std::fs::rename(temp, dest).is_err() {
            let _ = std::fs::remove_file(temp);
        } else {
            remove_stale_caches(dest);
        }
    }
    Ok(LoadedSession { session, mapped: None })
}

/// How long a cached graph other than the one just written is kept: each
/// upgrade of vecgrep or ONNX Runtime names a new one (24 MB each), and an
/// old one is only read by another installation. A graph still in use is
/// merely rebuilt (~0.4 s) the next time that installation starts.
const STALE_CACHE_AGE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Best effort: remove cached graphs beside `fresh` not written for
/// `STALE_CACHE_AGE`, and temporary files of interrupted writes as old.
/// A running process that maps one keeps its copy until it exits.
fn remove_stale_caches(fresh: &Path) {
    let Some(dir) = fresh.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // `query-model-*` is what versions before 01417a5 cached.
        let cached = name.starts_with("model-") || name.starts_with("query-model-");
        let ours = cached && (name.ends_with(".ort") || name.contains(".tmp"));
        let age = entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        if ours && path != fresh && age.is_some_and(|a| a > STALE_CACHE_AGE) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Where the optimized graph is cached, or None when there is no cache
/// directory to use. The name changes with the model file, the runtime
/// library and the rewrite, so a stale cache is never read.
fn model_cache(assets: &Assets) -> Option<PathBuf> {
    let dir = cache_dir()?;
    let mut key = blake3::Hasher::new();
    // What `model::model_bytes` and ONNX Runtime make of the file, besides the file itself.
    super::model::fingerprint(&mut key);
    key.update(UNFUSED.as_bytes());
    for file in [assets.model_dir.join("model.onnx"), assets.ort_library.clone()] {
        let meta = std::fs::metadata(&file).ok()?;
        let mtime = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
        key.update(file.to_string_lossy().as_bytes());
        key.update(&meta.len().to_le_bytes());
        key.update(&mtime.to_le_bytes());
    }
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(format!("model-{}.ort", &key.finalize().to_hex()[..16])))
}

/// vecgrep's cache directory (`$XDG_CACHE_HOME/vecgrep`, default
/// `~/.cache/vecgrep`); None without a home to put it in.
pub(super) fn cache_dir() -> Option<PathBuf> {
    crate::project::BaseDir::Cache.path().map(|cache| cache.join("vecgrep"))
}

/// Map the cached graph; Ok(None) when it is not there yet, Err when the
/// cache exists but cannot be read (then we do not try to rewrite it).
fn map_cached_model(path: &Path) -> std::io::Result<Option<memmap2::Mmap>> {
    // Not waited on when something else (a FIFO) is there.
    let file = match crate::project::small_file::open_regular(path) {
        Ok(Some(f)) => f,
        Ok(None) => return Err(std::io::Error::other("not a regular file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // SAFETY: the cache file is only ever replaced by rename, never written
    // in place, so the mapped bytes cannot change under the session.
    #[allow(unsafe_code)]
    let mapped = unsafe { memmap2::Mmap::map(&file)? };
    Ok(Some(mapped))
}
