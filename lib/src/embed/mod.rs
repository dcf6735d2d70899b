//! Turning text into vectors. The local embedder runs all-MiniLM-L6-v2
//! (int8 ONNX) through ONNX Runtime, loaded at run time from the file that
//! `assets` found, so a missing or broken runtime is an error, never a panic.
//!
//! We drive ONNX Runtime directly rather than through fastembed because the
//! two jobs want different sessions: a query wants the session that starts
//! fastest (no graph optimization: ~70 ms to load and ~70 ms for the first
//! run instead of ~320 ms to load), while indexing wants the fully optimized
//! graph (4x faster per run once loaded). fastembed fixes the optimization
//! level. Figures from `cargo run --release --example load_time`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::Tensor;

pub mod assets;
pub mod model;
pub mod remote;

use crate::embed::assets::Assets;

/// Dimensions of all-MiniLM-L6-v2's sentence vectors.
pub const DIMS: usize = 384;

/// The model's input window in tokens, counting `[CLS]` and `[SEP]`; text
/// beyond it would be silently truncated, so the chunker keeps below it.
pub const MAX_TOKENS: usize = 256;

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

/// all-MiniLM-L6-v2 on the local CPU.
pub struct LocalEmbedder {
    name: String,
    /// Declared before `_mapped` so that it is dropped first: the session
    /// may read its weights from that map.
    session: Session,
    /// Encodes without truncation or padding; `embed` does both itself.
    tokenizer: tokenizers::Tokenizer,
    needs_token_types: bool,
    output_name: String,
    _mapped: Option<memmap2::Mmap>,
}

// Telemetry off: ONNX Runtime 1.31 otherwise keeps an event database under
// ~/.cache/Microsoft, and this tool promises to work offline and keep to itself.
static ORT_ENV: OnceLock<Result<Environment, String>> = OnceLock::new();

fn runtime(assets: &Assets) -> Result<Environment> {
    ORT_ENV
        .get_or_init(|| {
            ort::init_from(&assets.ort_library)
                .map_err(|e| e.to_string())
                .and_then(|b| b.with_name("vecgrep").with_telemetry(false).build().map_err(|e| e.to_string()))
                .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", assets.ort_library.display()))
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

fn load_tokenizer(assets: &Assets) -> Result<tokenizers::Tokenizer> {
    let path = assets.model_dir.join("tokenizer.json");
    let mut tokenizer = tokenizers::Tokenizer::from_file(&path)
        .map_err(|e| anyhow!("cannot read tokenizer {}: {e}", path.display()))?;
    tokenizer.with_padding(None);
    tokenizer.with_truncation(None).map_err(|e| anyhow!("tokenizer: {e}"))?;
    Ok(tokenizer)
}

/// Counts tokens as the local model does, for a remote server that runs the
/// same model: the chunker then cuts the same chunks either way. None when
/// the model is another or its tokenizer is not installed here.
pub fn local_token_counter(model: &str) -> Option<crate::embed::remote::TokenCounter> {
    let assets = crate::embed::assets::locate(model).ok()?;
    let tokenizer = load_tokenizer(&assets).ok()?;
    Some(Box::new(move |t: &str| tokenizer.encode(t, true).map(|e| e.len()).unwrap_or(usize::MAX)))
}

/// A loaded session, and the memory map its weights live in when it was
/// loaded from the model cache.
struct LoadedSession {
    session: Session,
    mapped: Option<memmap2::Mmap>,
}

/// The model as ONNX Runtime is to run it: `model.onnx` simplified for one
/// text per run (`graph::simplify`), with its products moved to int8
/// (`int8::rewrite`). Each layer's feed-forward output projection (the
/// weights with more rows than the model has dimensions) keeps the
/// `WIDEST_IN_FP32` input channels that its input projection can make
/// widest in fp32: its input, after GELU, has a few channels up to 4x wider
/// than the rest (at most 24 against 6 on tokio's chunks), and one 8-bit
/// range for all of them resolved the rest poorly.
///
/// Measured (embed_speed on tokio, 2 models of 1 thread; hybrid mrr@10 on
/// py-logging / py-asyncio / rs-regex-automata, held-out py-email / rs-ignore):
/// - that projection wholly in fp32 (before): 16,500 tokens/s;
///   0.558 / 0.623 / 0.431, 0.566 / 0.513.
/// - 128 channels in fp32: 23,400 tokens/s; 0.556 / 0.624 / 0.431, 0.569 / 0.503.
/// - 32: 23,700 tokens/s; 0.553 / 0.607 / 0.428, 0.565 / 0.509.
/// - 256: 21,600 tokens/s; 0.532 / 0.630 / 0.424, 0.572 / 0.502.
///
/// The 256 row shows the evals' noise: any small change to the vectors
/// moves an eval by up to ~0.02 either way. 128 moved them least. Since
/// then the rewrites split that projection's input projection instead of
/// slicing its activations, fold biases into the int8 products, and
/// multiply attention heads in place, for the same vectors: 33,400-33,700
/// tokens/s against 27,300-28,100 just before, run side by side.
const WIDEST_IN_FP32: usize = 128;

/// Names the policy in the model cache's key.
const INT8_POLICY: &str = "int8 but the feed-forward output's widest input channels";

fn model_bytes(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read model file {}", path.display()))?;
    let policy = |rows: u64, _| {
        if rows > DIMS as u64 {
            crate::embed::model::int8::Precision::Int8ButWidest(WIDEST_IN_FP32)
        } else {
            crate::embed::model::int8::Precision::Int8
        }
    };
    let (rewritten, _) = crate::embed::model::int8::rewrite(&bytes, &policy)
        .with_context(|| format!("cannot read the embedding model {}", path.display()))?;
    // Valid because `embed` gives the model one text per run (see `graph`).
    let (simplified, _) = crate::embed::model::graph::simplify(&rewritten)
        .with_context(|| format!("cannot read the embedding model {}", path.display()))?;
    Ok(simplified)
}

/// How ONNX Runtime prepares the graph, for every session: the vectors of
/// queries and of chunks must come from the same arithmetic, and with int8
/// products a different set of fused operators shifts a vector enough to
/// reorder near ties. The model cache holds the graph prepared this way.
const OPTIMIZATION: GraphOptimizationLevel = GraphOptimizationLevel::Level3;

/// Fusions of that level left out, comma-separated. ONNX Runtime's fused
/// SkipLayerNormalization took 15% of embedding time on this model, 7x what
/// the plain Add and LayerNormalization it replaces take (ORT 1.31,
/// per-operator profile of `lib/examples/embed_speed.rs`'s texts); without
/// it the model embeds about 14% more tokens per second.
const UNFUSED: &str = "SkipLayerNormFusion";

fn load_session(assets: &Assets, profile: Profile, threads: usize) -> Result<LoadedSession> {
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
        return load_onnx(builder()?, &path, OPTIMIZATION, Some(&cache), &fail);
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
    let bytes = model_bytes(path)?;
    let mut builder = builder.with_optimization_level(level).map_err(|e| fail(e.to_string()))?;
    let temp = save_to.map(|p| p.with_extension(format!("tmp{}", std::process::id())));
    if let Some(temp) = &temp {
        builder = builder
            .with_optimized_model_path(temp)
            .map_err(|e| fail(e.to_string()))?
            .with_config_entry("session.save_model_format", "ORT")
            .map_err(|e| fail(e.to_string()))?;
    }
    let session = builder.commit_from_memory(&bytes).map_err(|e| fail(e.to_string()))?;
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
    let dir = match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("vecgrep"),
        None => PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?).join(".cache/vecgrep"),
    };
    let mut key = blake3::Hasher::new();
    // What `model_bytes` makes of the file, besides the file itself.
    key.update(&crate::embed::model::int8::VERSION.to_le_bytes());
    key.update(&crate::embed::model::graph::VERSION.to_le_bytes());
    key.update(INT8_POLICY.as_bytes());
    key.update(&WIDEST_IN_FP32.to_le_bytes());
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

/// Map the cached graph; Ok(None) when it is not there yet, Err when the
/// cache exists but cannot be read (then we do not try to rewrite it).
fn map_cached_model(path: &Path) -> std::io::Result<Option<memmap2::Mmap>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // SAFETY: the cache file is only ever replaced by rename, never written
    // in place, so the mapped bytes cannot change under the session.
    #[allow(unsafe_code)]
    let mapped = unsafe { memmap2::Mmap::map(&file)? };
    Ok(Some(mapped))
}

impl LocalEmbedder {
    /// Load the tokenizer and the model (in parallel: they take about the
    /// same time); the model runs on `threads` threads.
    pub fn load(assets: &Assets, name: &str, profile: Profile, threads: usize) -> Result<Self> {
        let (session, tokenizer) = std::thread::scope(|s| {
            let tokenizer = s.spawn(|| load_tokenizer(assets));
            let session = load_session(assets, profile, threads);
            (session, tokenizer.join().unwrap_or_else(|_| Err(anyhow!("the tokenizer panicked while loading"))))
        });
        let (LoadedSession { session, mapped }, tokenizer) = (session?, tokenizer?);
        Self::with_session(name, session, tokenizer, mapped)
    }

    /// An embedder over a session already made; `mapped` holds the
    /// session's weights when they are read in place.
    fn with_session(
        name: &str,
        session: Session,
        tokenizer: tokenizers::Tokenizer,
        mapped: Option<memmap2::Mmap>,
    ) -> Result<Self> {
        let needs_token_types = session.inputs().iter().any(|i| i.name() == "token_type_ids");
        let outputs: Vec<String> = session.outputs().iter().map(|o| o.name().to_string()).collect();
        let output_name = outputs
            .iter()
            .find(|n| *n == "last_hidden_state")
            .or(outputs.first())
            .cloned()
            .ok_or_else(|| anyhow!("the embedding model has no outputs"))?;
        Ok(LocalEmbedder {
            name: name.to_string(),
            session,
            tokenizer,
            needs_token_types,
            output_name,
            _mapped: mapped,
        })
    }

    /// Token ids for `text`, cut to the model's window with `[SEP]` kept last.
    fn encode(&self, text: &str) -> Result<Vec<i64>> {
        let encoding = self.tokenizer.encode(text, true).map_err(|e| anyhow!("tokenizer: {e}"))?;
        let mut ids: Vec<i64> = encoding.get_ids().iter().map(|&id| i64::from(id)).collect();
        if ids.len() > MAX_TOKENS {
            let sep = *ids.last().expect("longer than the window");
            ids.truncate(MAX_TOKENS - 1);
            ids.push(sep);
        }
        Ok(ids)
    }

    /// One text, unpadded: its attention mask is all ones.
    fn embed_one(&mut self, text: &str) -> Result<Vec<f32>> {
        let ids = self.encode(text)?;
        let width = ids.len().max(1);
        let mask = vec![1i64; width];
        let tensor =
            |data: Vec<i64>| Tensor::from_array(([1, width], data)).map_err(|e| anyhow!("embedding failed: {e}"));
        let mut inputs = ort::inputs!["input_ids" => tensor(ids)?, "attention_mask" => tensor(mask.clone())?];
        if self.needs_token_types {
            inputs.push(("token_type_ids".into(), tensor(vec![0i64; width])?.into()));
        }
        let outputs = self.session.run(inputs).map_err(|e| anyhow!("embedding failed: {e}"))?;
        let output =
            outputs.get(&self.output_name).ok_or_else(|| anyhow!("the model returned no {}", self.output_name))?;
        let (shape, data) = output.try_extract_tensor::<f32>().map_err(|e| anyhow!("embedding failed: {e}"))?;
        if shape.len() != 3 || shape[0] != 1 || shape[1] as usize != width || shape[2] as usize != DIMS {
            return Err(anyhow!("the model returned vectors of shape {shape:?}"));
        }
        let vector = mean_pool(data, &mask, 1, width).pop().ok_or_else(|| anyhow!("the model returned no vector"))?;
        if vector.iter().any(|x| !x.is_finite()) {
            return Err(anyhow!("the model returned malformed vectors"));
        }
        Ok(vector)
    }
}

impl Embedder for LocalEmbedder {
    fn model_name(&self) -> &str {
        &self.name
    }

    fn dims(&self) -> usize {
        DIMS
    }

    /// Each text in a run of its own: the graph is simplified for unpadded
    /// input (`graph`), and padding a batch to its longest text is wasted
    /// work anyway (lib/examples/embed_speed.rs).
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }

    fn embed_each(&mut self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        texts.iter().map(|t| self.embed_one(t).map(Some)).collect()
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokenizer.encode(text, true).map(|e| e.len()).unwrap_or(usize::MAX)
    }
}

/// Sentence-transformers' pooling: the mean of the token vectors the mask
/// admits, scaled to unit length.
fn mean_pool(hidden: &[f32], mask: &[i64], batch: usize, width: usize) -> Vec<Vec<f32>> {
    (0..batch)
        .map(|row| {
            let mut sum = vec![0f32; DIMS];
            let mut count = 0f32;
            for t in 0..width {
                if mask[row * width + t] == 0 {
                    continue;
                }
                count += 1.0;
                let token = &hidden[(row * width + t) * DIMS..(row * width + t + 1) * DIMS];
                for (s, x) in sum.iter_mut().zip(token) {
                    *s += x;
                }
            }
            let count = count.max(1.0);
            sum.iter_mut().for_each(|s| *s /= count);
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            sum.iter_mut().for_each(|s| *s /= norm);
            sum
        })
        .collect()
}

/// Vectors as stored in SQLite: little-endian f32, the layout sqlite-vec reads.
pub fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The inverse of `vector_to_blob`, without a copy; trailing bytes short of
/// an f32 are ignored.
pub fn blob_floats(blob: &[u8]) -> impl Iterator<Item = f32> + '_ {
    blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The inverse of `vector_to_blob`.
pub fn blob_to_vector(blob: &[u8]) -> Vec<f32> {
    blob_floats(blob).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors of `texts` from an embedder running `model` (ONNX bytes) as
    /// given, with the optimizations every session gets and no cache.
    fn vectors_of(model: &[u8], texts: &[&str]) -> Vec<Vec<f32>> {
        let assets = crate::embed::assets::locate("all-MiniLM-L6-v2").expect("the test command fetches the model");
        let env = runtime(&assets).unwrap();
        let session = Session::builder(&env)
            .unwrap()
            .with_intra_threads(1)
            .unwrap()
            .with_config_entry("optimization.disable_specified_optimizers", UNFUSED)
            .unwrap()
            .with_optimization_level(OPTIMIZATION)
            .unwrap()
            .commit_from_memory(model)
            .unwrap();
        let mut embedder =
            LocalEmbedder::with_session("test", session, load_tokenizer(&assets).unwrap(), None).unwrap();
        embedder.embed(texts).unwrap()
    }

    #[test]
    fn the_simplified_graph_computes_what_the_export_does() {
        // The simplification (masks, GELU, heads multiplied in place) is
        // checked on the real model, in fp32 against the export and in int8
        // against the int8 model: a wrong step moves vectors far.
        let assets = crate::embed::assets::locate("all-MiniLM-L6-v2").expect("the test command fetches the model");
        let path = assets.model_dir.join("model.onnx");
        let exported = std::fs::read(&path).unwrap();
        let policy = |rows: u64, _| {
            if rows > DIMS as u64 {
                crate::embed::model::int8::Precision::Int8ButWidest(WIDEST_IN_FP32)
            } else {
                crate::embed::model::int8::Precision::Int8
            }
        };
        let (int8, products) = crate::embed::model::int8::rewrite(&exported, &policy).unwrap();
        assert_eq!(products, 36, "every product of the six layers, the output projections split");
        let (simplified, done) = crate::embed::model::graph::simplify(&int8).unwrap();
        assert_eq!(done, crate::embed::model::graph::Simplified { masks: 6, gelus: 12, heads: 6 });
        assert_eq!(model_bytes(&path).unwrap(), simplified, "what the embedder runs");

        let texts = [
            "fn retry_upload(&self, attempts: u32) -> Result<()> { loop { self.send()?; } }",
            "A short line.",
            "def getLogger(name=None):\n    \"\"\"Return a logger with the specified name.\"\"\"\n    return Logger.manager.getLogger(name)",
        ];
        let cosines = |a: &[Vec<f32>], b: &[Vec<f32>]| -> Vec<f32> {
            a.iter().zip(b).map(|(w, g)| w.iter().zip(g).map(|(x, y)| x * y).sum()).collect()
        };
        // In fp32 the rewritten graph computes what the export does to the
        // last digits.
        let (exported_simplified, done) = crate::embed::model::graph::simplify(&exported).unwrap();
        assert_eq!(done, crate::embed::model::graph::Simplified { masks: 6, gelus: 6, heads: 6 });
        let fp32 = vectors_of(&exported, &texts);
        for cosine in cosines(&fp32, &vectors_of(&exported_simplified, &texts)) {
            assert!(cosine > 0.99999, "fp32: cosine {cosine}");
        }
        // In int8 an activation that lands near a rounding boundary can
        // round the other way after any change upstream, and CPUs without
        // VNNI (AVX2's u8 x s8 products saturate in pairs) amplify such
        // flips: seen 0.9987 on an AVX2-only EPYC, 0.99999 with VNNI. So
        // the rewritten int8 graph must stay that close to the int8 one
        // and no further from the export than the int8 one is.
        let (int8_vectors, simplified_vectors) = (vectors_of(&int8, &texts), vectors_of(&simplified, &texts));
        for cosine in cosines(&int8_vectors, &simplified_vectors) {
            assert!(cosine > 0.995, "int8: cosine {cosine}");
        }
        let (int8_to_fp32, simplified_to_fp32) = (cosines(&int8_vectors, &fp32), cosines(&simplified_vectors, &fp32));
        for (a, b) in int8_to_fp32.iter().zip(&simplified_to_fp32) {
            // And the int8 model stays close to the exported weights in fp32.
            assert!(*a > 0.99 && *b > 0.99 && *b > a - 0.001, "to fp32: int8 {a}, simplified {b}");
        }
    }

    #[test]
    fn vectors_survive_the_blob_round_trip() {
        let v = vec![0.0, -1.5, f32::MIN_POSITIVE, 3.25e7];
        assert_eq!(blob_to_vector(&vector_to_blob(&v)), v);
    }

    #[test]
    fn mean_pool_ignores_padding_and_normalizes() {
        let width = 2;
        let mut hidden = vec![0f32; 2 * width * DIMS];
        hidden[0] = 3.0; // row 0, token 0
        hidden[DIMS + 1] = 100.0; // row 0, token 1: padding
        hidden[2 * DIMS + 2] = 2.0; // row 1, token 0
        hidden[3 * DIMS + 2] = 4.0; // row 1, token 1
        let v = mean_pool(&hidden, &[1, 0, 1, 1], 2, width);
        assert_eq!(v[0][0], 1.0);
        assert_eq!(v[0][1], 0.0);
        assert!((v[1][2] - 1.0).abs() < 1e-6);
    }
}
