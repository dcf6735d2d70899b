//! Turning text into vectors. The local embedder runs all-MiniLM-L6-v2
//! (int8 ONNX) through ONNX Runtime, loaded at run time from the file that
//! `assets` found, so a missing or broken runtime is an error, never a panic.

use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use fastembed::{InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};

use crate::assets::Assets;

/// Dimensions of all-MiniLM-L6-v2's sentence vectors.
pub const DIMS: usize = 384;

/// The model's input window in tokens, counting `[CLS]` and `[SEP]`; text
/// beyond it would be silently truncated, so the chunker keeps below it.
pub const MAX_TOKENS: usize = 256;

/// Anything that turns text into unit-length vectors of one fixed size.
pub trait Embedder {
    /// The name recorded in the index; changing it rebuilds the index.
    fn model_name(&self) -> &str;
    fn dims(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// Tokens the model would see for `text`, special tokens included.
    fn count_tokens(&self, text: &str) -> usize;
}

/// all-MiniLM-L6-v2 on the local CPU.
pub struct LocalEmbedder {
    name: String,
    model: TextEmbedding,
    /// A copy of the model's tokenizer without truncation, for counting.
    counter: tokenizers::Tokenizer,
}

static ORT_INIT: OnceLock<Result<(), String>> = OnceLock::new();

fn init_runtime(assets: &Assets) -> Result<()> {
    ORT_INIT
        .get_or_init(|| {
            ort::init_from(&assets.ort_library)
                .map(|_| ())
                .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", assets.ort_library.display()))
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

impl LocalEmbedder {
    /// Load the model; about 100–200 ms, so callers do it only when something needs embedding.
    pub fn load(assets: &Assets, name: &str) -> Result<Self> {
        init_runtime(assets)?;
        let read = |file: &str| {
            let p = assets.model_dir.join(file);
            std::fs::read(&p).with_context(|| format!("cannot read model file {}", p.display()))
        };
        let model = UserDefinedEmbeddingModel::new(
            read("model.onnx")?,
            TokenizerFiles {
                tokenizer_file: read("tokenizer.json")?,
                config_file: read("config.json")?,
                special_tokens_map_file: read("special_tokens_map.json")?,
                tokenizer_config_file: read("tokenizer_config.json")?,
            },
        )
        .with_pooling(Pooling::Mean);
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let options = InitOptionsUserDefined::new().with_max_length(MAX_TOKENS).with_intra_threads(threads);
        let model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| anyhow!("cannot load the embedding model from {}: {e}", assets.model_dir.display()))?;
        let mut counter = model.tokenizer.clone();
        counter.with_truncation(None).map_err(|e| anyhow!("tokenizer: {e}"))?;
        counter.with_padding(None);
        Ok(LocalEmbedder { name: name.to_string(), model, counter })
    }
}

impl Embedder for LocalEmbedder {
    fn model_name(&self) -> &str {
        &self.name
    }

    fn dims(&self) -> usize {
        DIMS
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let vectors = self.model.embed(texts, Some(texts.len())).map_err(|e| anyhow!("embedding failed: {e}"))?;
        if vectors.len() != texts.len() || vectors.iter().any(|v| v.len() != DIMS || v.iter().any(|x| !x.is_finite())) {
            return Err(anyhow!("the model returned malformed vectors"));
        }
        Ok(vectors)
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.counter.encode(text, true).map(|e| e.len()).unwrap_or(usize::MAX)
    }
}

/// Vectors as stored in SQLite: little-endian f32, the layout sqlite-vec reads.
pub fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
