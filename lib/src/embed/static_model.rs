//! The static first tier: a token → vector table distilled from the shipped
//! model by model2vec's recipe, so that every chunk gets a vector at index
//! time in microseconds, without the transformer. Each vocabulary token is
//! run through MiniLM once, alone between `[CLS]` and `[SEP]`; the vectors
//! are centred (what every token shares says nothing) and weighted down the
//! more common the token (SIF weights over the vocabulary's frequency
//! order). A text's static vector is the sum of its tokens' rows, unit
//! length. The table is built once per model file and cached beside the
//! optimized graph, named by the model file and this recipe's version.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};

use super::assets::Assets;
use super::local::{load_tokenizer, LocalEmbedder};
use super::{Profile, DIMS};

/// What a tool says before distilling a table (once per model file).
pub const DISTILLING: &str =
    "distilling the static tier from the embedding model (once per model, about 15 s on two cores)";

/// Bumped when the recipe changes: the cache name changes with it.
const RECIPE_VERSION: u32 = 1;

/// SIF's smoothing: a token of probability p weighs a / (a + p).
const SIF_A: f32 = 1e-4;

/// BERT's vocabulary: ids below this are padding, unused slots and the
/// special tokens; the rest are characters, then word pieces roughly in
/// order of frequency, which is what the weights take as the token's rank.
const FIRST_REAL_TOKEN: usize = 999;

/// The cache file's first bytes: magic, version, vocabulary size, dims.
const MAGIC: &[u8; 8] = b"VGSTATIC";
const HEADER_BYTES: usize = 16 + 32;

/// Loads a static table; it calls its argument before distilling one.
pub type StaticLoader = Box<dyn FnOnce(&mut dyn FnMut()) -> Result<StaticModel> + Send>;

/// A static table loaded at its first use, or none to be had. A table that
/// fails to load is an error once; after that there is none.
pub enum LazyStatic {
    Unloaded(StaticLoader),
    Loaded(Arc<StaticModel>),
    None,
}

impl LazyStatic {
    pub fn new(loader: Option<StaticLoader>) -> Self {
        loader.map_or(LazyStatic::None, LazyStatic::Unloaded)
    }

    /// Whether there is no table to be had (any more).
    pub fn is_none(&self) -> bool {
        matches!(self, LazyStatic::None)
    }

    /// The table, loaded (or distilled, calling `distilling` first) at the
    /// first call.
    pub fn get(&mut self, distilling: &mut dyn FnMut()) -> Result<Option<Arc<StaticModel>>> {
        *self = match std::mem::replace(self, LazyStatic::None) {
            LazyStatic::Unloaded(loader) => LazyStatic::Loaded(Arc::new(loader(distilling)?)),
            loaded_or_none => loaded_or_none,
        };
        Ok(match self {
            LazyStatic::Loaded(model) => Some(Arc::clone(model)),
            _ => None,
        })
    }
}

/// A token → vector table and the tokenizer that names its rows.
pub struct StaticModel {
    tokenizer: tokenizers::Tokenizer,
    table: Table,
}

/// The rows, mapped from the cache (or held, when there is no cache to map).
enum Table {
    Mapped(memmap2::Mmap),
    Held(Vec<u8>),
}

impl Table {
    fn bytes(&self) -> &[u8] {
        match self {
            Table::Mapped(m) => &m[HEADER_BYTES..],
            Table::Held(v) => &v[HEADER_BYTES..],
        }
    }
}

impl StaticModel {
    /// The cached table for the model in `assets`, distilled first if there
    /// is none (about half a minute on two cores, once per model file);
    /// `distilling` is called before that starts.
    pub fn load(assets: &Assets, distilling: &mut dyn FnMut()) -> Result<StaticModel> {
        let tokenizer = load_tokenizer(assets)?;
        let vocab = tokenizer.get_vocab_size(true);
        let cache = cache_path(assets);
        if let Some(table) = cache.as_deref().and_then(|p| map_table(p, vocab)) {
            return Ok(StaticModel { tokenizer, table });
        }
        // One process distils; others starting meanwhile wait for its table
        // rather than spend the same cores on the same work.
        let _distilling = cache.as_deref().and_then(lock_distilling);
        if let Some(table) = cache.as_deref().and_then(|p| map_table(p, vocab)) {
            return Ok(StaticModel { tokenizer, table });
        }
        distilling();
        let bytes = encode_table(&distil(assets, vocab)?, vocab, model_hash(assets)?);
        if let Some(path) = &cache {
            // Best effort, as for the graph: without a cache the next run distils again.
            let _ = write_atomically(path, &bytes);
            if let Some(table) = map_table(path, vocab) {
                return Ok(StaticModel { tokenizer, table });
            }
        }
        Ok(StaticModel { tokenizer, table: Table::Held(bytes) })
    }

    pub fn dims(&self) -> usize {
        DIMS
    }

    /// The tokens of `text` without the special ones (`SPECIAL_TOKENS` more
    /// are what the model sees: the same tokenizer, so static runs cut the
    /// chunks full runs cut); None if the tokenizer fails on it.
    pub fn token_ids(&self, text: &str) -> Option<Vec<u32>> {
        self.tokenizer.encode_fast(text, false).ok().map(|e| e.get_ids().to_vec())
    }

    /// The static vector of `text`: its tokens' rows summed, unit length
    /// (all zeros for a text without a token the table knows).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_ids(&[&self.token_ids(text).unwrap_or_default()])
    }

    /// The static vector of the texts whose tokens (`token_ids`) are
    /// `parts`, joined by whitespace: BERT's tokenizer never joins tokens
    /// across whitespace, so that text's tokens are the parts' in order, and
    /// each text is tokenized once however it is put together.
    pub fn embed_ids(&self, parts: &[&[u32]]) -> Vec<f32> {
        let mut sum = vec![0f32; DIMS];
        for &id in parts.iter().copied().flatten() {
            self.add_row(id as usize, &mut sum);
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }

    fn add_row(&self, id: usize, sum: &mut [f32]) {
        let row = DIMS * 4;
        let Some(bytes) = self.table.bytes().get(id * row..(id + 1) * row) else { return };
        for (s, b) in sum.iter_mut().zip(bytes.chunks_exact(4)) {
            *s += f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
}

/// Each token's sentence vector, centred and weighted; rows of ids below
/// `FIRST_REAL_TOKEN` stay zero. Half the vocabulary on each of two models.
fn distil(assets: &Assets, vocab: usize) -> Result<Vec<f32>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let ids: Vec<usize> = (FIRST_REAL_TOKEN..vocab).collect();
    let share = ids.len().div_ceil(cores);
    let parts: Vec<Result<Vec<f32>>> = std::thread::scope(|s| {
        let handles: Vec<_> = ids.chunks(share).map(|part| s.spawn(move || token_vectors(assets, part))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("distilling panicked")))).collect()
    });
    let mut rows = vec![0f32; FIRST_REAL_TOKEN * DIMS];
    for part in parts {
        rows.extend(part?);
    }
    centre_and_weigh(&mut rows, vocab);
    Ok(rows)
}

/// The model's vector for each token alone, in order.
fn token_vectors(assets: &Assets, ids: &[usize]) -> Result<Vec<f32>> {
    let mut model = LocalEmbedder::load(assets, "distil", Profile::Index, 1)?;
    let (cls, sep) = special_ids(model.tokenizer())?;
    let mut rows = Vec::with_capacity(ids.len() * DIMS);
    for &id in ids {
        rows.extend(model.embed_ids(vec![cls, id as i64, sep])?);
    }
    Ok(rows)
}

fn special_ids(tokenizer: &tokenizers::Tokenizer) -> Result<(i64, i64)> {
    let id = |t: &str| tokenizer.token_to_id(t).map(i64::from).ok_or_else(|| anyhow!("the tokenizer has no {t}"));
    Ok((id("[CLS]")?, id("[SEP]")?))
}

/// Subtract the mean of the real tokens' rows, then scale each by its SIF
/// weight, taking a token's frequency from its rank (Zipf).
fn centre_and_weigh(rows: &mut [f32], vocab: usize) {
    let real = FIRST_REAL_TOKEN..vocab;
    let mut mean = vec![0f32; DIMS];
    for id in real.clone() {
        mean.iter_mut().zip(&rows[id * DIMS..(id + 1) * DIMS]).for_each(|(m, x)| *m += x);
    }
    mean.iter_mut().for_each(|m| *m /= real.len().max(1) as f32);
    let harmonic: f32 = (1..=real.len()).map(|r| 1.0 / (r as f32 + 1.0)).sum();
    for (rank, id) in real.enumerate() {
        let p = 1.0 / ((rank as f32 + 2.0) * harmonic);
        let weight = SIF_A / (SIF_A + p);
        for (x, m) in rows[id * DIMS..(id + 1) * DIMS].iter_mut().zip(&mean) {
            *x = (*x - m) * weight;
        }
    }
}

/// The cache file's bytes: header, then the rows as little-endian f32.
fn encode_table(rows: &[f32], vocab: usize, model_hash: [u8; 32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_BYTES + rows.len() * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(vocab as u32).to_le_bytes());
    bytes.extend_from_slice(&(DIMS as u32).to_le_bytes());
    bytes.extend_from_slice(&model_hash);
    rows.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
    bytes
}

/// The cached table when it is whole and of this shape.
fn map_table(path: &Path, vocab: usize) -> Option<Table> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the cache file is only ever replaced by rename, never written
    // in place, so the mapped bytes cannot change under the model.
    #[allow(unsafe_code)]
    let mapped = unsafe { memmap2::Mmap::map(&file).ok()? };
    let header_ok = mapped.len() == HEADER_BYTES + vocab * DIMS * 4
        && &mapped[..8] == MAGIC
        && mapped[8..12] == (vocab as u32).to_le_bytes()
        && mapped[12..16] == (DIMS as u32).to_le_bytes();
    header_ok.then_some(Table::Mapped(mapped))
}

/// The model file's hash, recorded in the table it was distilled from.
fn model_hash(assets: &Assets) -> Result<[u8; 32]> {
    let path = assets.model_dir.join("model.onnx");
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(*blake3::hash(&bytes).as_bytes())
}

/// Where the table is cached: named by the model file (path, size, time)
/// and the recipe, so a changed model or recipe is never read stale.
fn cache_path(assets: &Assets) -> Option<PathBuf> {
    let dir = super::session::cache_dir()?;
    let model = assets.model_dir.join("model.onnx");
    let meta = std::fs::metadata(&model).ok()?;
    let mtime = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    let mut key = blake3::Hasher::new();
    key.update(model.to_string_lossy().as_bytes());
    key.update(&meta.len().to_le_bytes());
    key.update(&mtime.to_le_bytes());
    key.update(&RECIPE_VERSION.to_le_bytes());
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(format!("static-{}.bin", &key.finalize().to_hex()[..16])))
}

/// The lock held while distilling the table cached at `path`; None when it
/// cannot be had (then this process distils without waiting).
fn lock_distilling(path: &Path) -> Option<std::fs::File> {
    let file =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path.with_extension("lock")).ok()?;
    file.lock().ok()?;
    Some(file)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = path.with_extension(format!("tmp{}", std::process::id()));
    let result =
        std::fs::File::create(&temp).and_then(|mut f| f.write_all(bytes)).and_then(|_| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lazy_table_loads_once_and_stays_loaded() {
        let mut loads = 0;
        let mut lazy = LazyStatic::new(Some(Box::new(|_: &mut dyn FnMut()| Err(anyhow!("no model here")))));
        assert!(lazy.get(&mut || loads += 1).is_err(), "a failure is an error once");
        assert!(lazy.is_none() && lazy.get(&mut || loads += 1).unwrap().is_none(), "then there is none");
        assert_eq!(loads, 0, "nothing was distilled");
        let assets =
            crate::embed::locate(crate::project::DEFAULT_EMBEDDER_MODEL).expect("the test command fetches the model");
        let mut lazy = LazyStatic::new(Some(Box::new(move |d: &mut dyn FnMut()| StaticModel::load(&assets, d))));
        let first = lazy.get(&mut || ()).unwrap().expect("loaded");
        let again = lazy.get(&mut || ()).unwrap().expect("still loaded");
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!lazy.is_none());
    }

    #[test]
    fn weights_fall_as_tokens_get_common_and_the_mean_is_removed() {
        let vocab = FIRST_REAL_TOKEN + 3;
        let mut rows = vec![0f32; vocab * DIMS];
        for (i, id) in (FIRST_REAL_TOKEN..vocab).enumerate() {
            rows[id * DIMS] = 1.0;
            rows[id * DIMS + 1] = i as f32;
        }
        centre_and_weigh(&mut rows, vocab);
        let row = |id: usize| &rows[id * DIMS..id * DIMS + 2];
        assert_eq!(row(FIRST_REAL_TOKEN)[0], 0.0, "what every token shares is removed");
        // The commonest token (first) is below the mean; the rarest above it, weighted more.
        assert!(row(FIRST_REAL_TOKEN)[1] < 0.0 && row(vocab - 1)[1] > 0.0);
        assert!(row(vocab - 1)[1].abs() > row(FIRST_REAL_TOKEN)[1].abs());
        assert!(rows[..FIRST_REAL_TOKEN * DIMS].iter().all(|&x| x == 0.0), "special rows stay zero");
    }

    #[test]
    fn a_text_put_together_from_parts_has_the_vector_and_count_of_the_whole() {
        let assets =
            crate::embed::locate(crate::project::DEFAULT_EMBEDDER_MODEL).expect("the test command fetches the model");
        let model = StaticModel::load(&assets, &mut || ()).unwrap();
        let (around, text) = (
            "impl Pool { // src/runtime/pool.rs",
            "fn spawn_blocking(&self, f: F) -> JoinHandle<T> {\n\tself.inner.spawn(f) // Ünïcode 数据\n}",
        );
        let whole = crate::chunk::embedded_text(around, text);
        let parts = model.embed_ids(&[&model.token_ids(around).unwrap(), &model.token_ids(text).unwrap()]);
        let joined = model.embed(&whole);
        assert!(parts.iter().zip(&joined).all(|(a, b)| (a - b).abs() < 1e-6));
        assert!(joined.iter().any(|&x| x != 0.0));
        let counted = model.tokenizer.encode(whole.as_str(), true).unwrap().len();
        let ids = model.token_ids(&whole).unwrap();
        assert_eq!(
            ids.len() + crate::embed::SPECIAL_TOKENS,
            counted,
            "the special tokens are counted as the model sees them"
        );
    }

    #[test]
    fn a_table_of_another_shape_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        std::fs::write(&path, encode_table(&vec![0.5; 4 * DIMS], 4, [0; 32])).unwrap();
        assert!(map_table(&path, 4).is_some());
        assert!(map_table(&path, 5).is_none());
        std::fs::write(&path, b"VGSTATIC").unwrap();
        assert!(map_table(&path, 4).is_none());
    }
}
