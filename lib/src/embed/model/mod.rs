//! The embedding model as ONNX Runtime is to run it: rewrites of the
//! shipped ONNX graph, done once and cached by `embed`.

mod edit;
pub(super) mod graph;
pub(super) mod int8;
mod onnx;

use std::path::Path;

use anyhow::{anyhow, Context, Result};

use crate::embed::DIMS;

/// The model as ONNX Runtime is to run it: `model.onnx` simplified for one
/// text per run (`graph::simplify`), with its products moved to int8
/// (`int8::rewrite`). Each layer's feed-forward output projection (the
/// weights with more rows than the model has dimensions) keeps the
/// `WIDEST_IN_FP32` input channels that its input projection can make
/// widest in fp32: its input, after GELU, has a few channels up to 4x wider
/// than the rest (at most 24 against 6 on tokio's chunks), and one 8-bit
/// range for all of them resolved the rest poorly. 128 moved the evals
/// least at 1.4x the throughput of that projection in fp32 (bench/TUNING.md).
const WIDEST_IN_FP32: usize = 128;

/// Names the policy in the model cache's key.
const INT8_POLICY: &str = "int8 but the feed-forward output's widest input channels";

pub(crate) fn model_bytes(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read model file {}", path.display()))?;
    let policy = |rows: u64, _| {
        if rows > DIMS as u64 {
            int8::Precision::Int8ButWidest(WIDEST_IN_FP32)
        } else {
            int8::Precision::Int8
        }
    };
    // What cannot be read is a damaged file, to install again (review 185).
    let damaged = |e: anyhow::Error| {
        let why = crate::project::shown::error_line(&e);
        anyhow!("cannot read the embedding model {}: {why}; {}", path.display(), super::assets::fix_for(path))
    };
    let (rewritten, _) = int8::rewrite(&bytes, &policy).map_err(damaged)?;
    // Valid because `embed` gives the model one text per run (see `graph`).
    let (simplified, _) = graph::simplify(&rewritten).map_err(damaged)?;
    Ok(simplified)
}

/// Feeds the cache key (`session`) with what decides `model_bytes`'s
/// output besides the model file: a change to a rewrite or its policy names
/// a new cache.
pub(crate) fn fingerprint(key: &mut blake3::Hasher) {
    key.update(&int8::VERSION.to_le_bytes());
    key.update(&graph::VERSION.to_le_bytes());
    key.update(INT8_POLICY.as_bytes());
    key.update(&WIDEST_IN_FP32.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::local::{load_tokenizer, LocalEmbedder};
    use crate::embed::session::{runtime, OPTIMIZATION, UNFUSED};
    use crate::embed::Embedder;
    use ort::session::Session;

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
    fn the_code_model_takes_the_same_rewrites_and_knows_code() {
        // vecgrep-code-minilm-l6 is exported by train/transformer/ from a
        // plain BERT graph: every product must still run in int8 (other
        // arithmetic, other vectors) and every GELU as one operator. Its mask
        // is one broadcast Add with no NaN guard and its heads are moved by
        // four transposes, patterns `graph` leaves alone: measured 1-8%
        // slower than MiniLM's export (lib/examples/embed_speed.rs).
        let assets =
            crate::embed::assets::locate(crate::embed::CODE_MODEL).expect("the test command fetches the model");
        let exported = std::fs::read(assets.model_dir.join("model.onnx")).unwrap();
        let policy = |_, _| crate::embed::model::int8::Precision::Int8;
        let (int8, products) = crate::embed::model::int8::rewrite(&exported, &policy).unwrap();
        assert_eq!(products, 36);
        let (simplified, done) = crate::embed::model::graph::simplify(&int8).unwrap();
        assert_eq!(done, crate::embed::model::graph::Simplified { masks: 0, gelus: 6, heads: 0 });
        assert!(!simplified.is_empty());

        // What it was trained for: a question in plain words finds the code
        // that does it, above code that shares none of its meaning.
        let mut embedder =
            LocalEmbedder::load(&assets, crate::embed::CODE_MODEL, crate::embed::Profile::Query, 1).unwrap();
        let texts = [
            "where do we retry failed uploads",
            "def upload_with_retry(path, attempts=3):\n    for i in range(attempts):\n        try:\n            return client.put(path)\n        except IOError:\n            time.sleep(2 ** i)",
            "def parse_config(text):\n    return toml.loads(text)",
        ];
        let v = embedder.embed(&texts).unwrap();
        let cosine = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
        let (retry, config) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
        assert!(retry > config + 0.05, "retry {retry}, config {config}");
    }

    /// What the rewrites make of the pinned model (scripts/assets.lock),
    /// as (`int8::VERSION`, `graph::VERSION`, BLAKE3 of the bytes). Caches
    /// of the rewritten model are named by the versions, so a change to
    /// what the rewrites produce must bump a version and then this pin; a
    /// change that must not move a byte (a refactor) must leave both alone.
    const REWRITTEN: (u32, u32, &str) = (6, 2, "1ecc26a47a1510381d2f37e96da7cde57a789d8717777e114f9de03fb753d525");

    #[test]
    fn the_rewritten_model_is_what_its_versions_name() {
        let assets = crate::embed::assets::locate("all-MiniLM-L6-v2").expect("the test command fetches the model");
        let bytes = model_bytes(&assets.model_dir.join("model.onnx")).unwrap();
        let got = (int8::VERSION, graph::VERSION, blake3::hash(&bytes).to_hex().to_string());
        assert_eq!(got, (REWRITTEN.0, REWRITTEN.1, REWRITTEN.2.to_string()), "bump a VERSION, then the pin");
    }
}
