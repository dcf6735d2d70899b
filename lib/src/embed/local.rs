//! all-MiniLM-L6-v2 on the local CPU, through ONNX Runtime loaded at run
//! time from the file that `assets` found, so a missing or broken runtime
//! is an error, never a panic.
//!
//! We drive ONNX Runtime directly rather than through fastembed because the
//! two jobs want different sessions: a query wants the session that starts
//! fastest, while indexing wants the fully optimized graph (`session`).
//! fastembed fixes the optimization level.

use anyhow::{anyhow, Result};
use ort::session::Session;
use ort::value::Tensor;

use super::assets::Assets;
use super::session::{load_session, LoadedSession};
use super::{Embedder, Profile, TokenCounter, DIMS, MAX_TOKENS};

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

impl LocalEmbedder {
    pub(super) fn tokenizer(&self) -> &tokenizers::Tokenizer {
        &self.tokenizer
    }
}

pub(super) fn load_tokenizer(assets: &Assets) -> Result<tokenizers::Tokenizer> {
    super::tokenizer::tokenizer_in(&assets.model_dir)
}

/// Counts tokens as the local model does, for a remote server that runs the
/// same model: the chunker then cuts the same chunks either way. None when
/// the model is another or its tokenizer is not installed here.
pub fn local_token_counter(model: &str) -> Option<TokenCounter> {
    let assets = super::assets::locate(model).ok()?;
    let tokenizer = load_tokenizer(&assets).ok()?;
    Some(Box::new(move |t: &str| tokenizer.encode_fast(t, true).map(|e| e.len()).unwrap_or(usize::MAX)))
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
    pub(super) fn with_session(
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
        let encoding = self.tokenizer.encode_fast(text, true).map_err(|e| anyhow!("tokenizer: {e}"))?;
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
        self.embed_ids(ids)
    }

    /// The sentence vector of token ids already cut to the window.
    pub(super) fn embed_ids(&mut self, ids: Vec<i64>) -> Result<Vec<f32>> {
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
        self.tokenizer.encode_fast(text, true).map(|e| e.len()).unwrap_or(usize::MAX)
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

#[cfg(test)]
mod tests {
    use super::*;

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
