//! The static first tier: a token → vector table, so that every chunk gets
//! a vector at index time in microseconds and a new question is answered
//! without running the transformer over candidates. A text's static vector
//! is the sum of its tokens' rows, unit length.
//!
//! The table is vecgrep's own code model, trained by `train/` (see
//! `train/MODEL_CARD.md`): distilled from MiniLM (`distil`), regressed on
//! MiniLM's vectors of code (Tokenlearn), tuned on doc → code pairs. It is
//! shipped in the repository (`models/`), installed beside the model by
//! `scripts/fetch-assets.sh`, and checked by hash at load: a table of
//! another hash is refused, unless `VECGREP_STATIC_TABLE` names it on
//! purpose (how a newly trained table is measured).
//!
//! A static cosine is not on the model's scale (the table is centred: its
//! cosines sit lower), so the table carries the line that maps it there,
//! fitted when it was trained: a chunk known by its static vector alone
//! scores `score_of(cosine)`, an estimate of its cosine by the model, and a
//! threshold means the same whichever vector a chunk has.
//!
//! A token that recurs in a text adds its row `1 + ln n` times, not `n`
//! times, when the table says so (`TokenWeighting`): a chunk that repeats
//! `self` or `err` thirty times is not pulled toward those words, as a
//! question never repeats them (BM25 saturates a word's count for the same
//! reason). The shipped table is trained weighing its tokens so (SB dev
//! with the table alone 0.696 → 0.724, a new question's hybrid answer
//! 0.828 → 0.835: `train/MODEL_CARD.md`); tables packed before it keep
//! their count weighting.
//!
//! File format: the magic (`VGSTAT8\0`: tokens weighted by their count;
//! `VGSTAT9\0`: by `1 + ln count`), the vocabulary size and the dimensions
//! (u32 LE), the BLAKE3 of the tokenizer.json it was trained with, the
//! calibration's slope and intercept (f32 LE), one f32 scale per row, then
//! the rows as i8 (row = scale × bytes).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{anyhow, bail, Context, Result};

use super::assets::FIX_COMMAND;
use super::tokenizer::TokenizerFile;
use super::DIMS;

/// The environment variable that names a table other than the shipped one.
pub const TABLE_OVERRIDE_VAR: &str = "VECGREP_STATIC_TABLE";

/// The installed table's file name, beside the model's files.
pub const TABLE_FILE: &str = "static-code.bin";

/// The shipped table's BLAKE3 (hex), written by `train/rebuild.sh` with it.
fn shipped_hash() -> &'static str {
    include_str!("../../../models/static-code.blake3").trim()
}

const HEADER_BYTES: usize = 16 + 32 + 8;

/// How much a token that occurs `n` times in a text weighs in its vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenWeighting {
    /// `n`: the rows summed as they come (tables before log weighting).
    Count,
    /// `1 + ln n`: a repeated token saturates.
    LogCount,
}

impl TokenWeighting {
    fn magic(self) -> &'static [u8; 8] {
        match self {
            TokenWeighting::Count => b"VGSTAT8\0",
            TokenWeighting::LogCount => b"VGSTAT9\0",
        }
    }

    fn of_magic(bytes: &[u8]) -> Option<TokenWeighting> {
        [TokenWeighting::Count, TokenWeighting::LogCount].into_iter().find(|w| bytes.get(..8) == Some(&w.magic()[..]))
    }

    /// The weight of a token that occurs `n` (≥ 1) times.
    fn of(self, n: usize) -> f32 {
        match self {
            TokenWeighting::Count => n as f32,
            TokenWeighting::LogCount => 1.0 + (n as f32).ln(),
        }
    }
}

/// Loads a static table.
pub type StaticLoader = Box<dyn FnOnce() -> Result<StaticModel> + Send>;

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

    /// The table, loaded at the first call.
    pub fn get(&mut self) -> Result<Option<Arc<StaticModel>>> {
        *self = match std::mem::replace(self, LazyStatic::None) {
            LazyStatic::Unloaded(loader) => LazyStatic::Loaded(Arc::new(loader()?)),
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
    table: memmap2::Mmap,
    vocab: usize,
    weighting: TokenWeighting,
}

impl StaticModel {
    /// The table for the model whose files are in `model_dir`
    /// (`embed::locate_model`; `table_path` says where the table is), checked:
    /// its shape, the tokenizer it was trained with, and its hash.
    pub fn load(model_dir: &Path) -> Result<StaticModel> {
        let tokenizer_file = TokenizerFile::read_in(model_dir)?;
        let tokenizer = tokenizer_file.tokenizer()?;
        let (path, chosen) = table_path(model_dir)?;
        let file =
            std::fs::File::open(&path).with_context(|| format!("cannot open the static table {}", path.display()))?;
        // SAFETY: installed tables are only ever replaced by rename, never
        // written in place, so the mapped bytes cannot change under us.
        #[allow(unsafe_code)]
        let table = unsafe { memmap2::Mmap::map(&file) }
            .with_context(|| format!("cannot map the static table {}", path.display()))?;
        let vocab = tokenizer.get_vocab_size(true);
        // A table the user chose is theirs to fix: fetching vecgrep's own
        // changes nothing while the variable names this one.
        let fix = match chosen {
            true => format!("{TABLE_OVERRIDE_VAR} names it; point it at a whole table, or unset it"),
            false => super::assets::fix_for(&path),
        };
        check_shape(&table, vocab).map_err(|e| anyhow!("the static table {} {e}; {fix}", path.display()))?;
        let tokenizer_hash = blake3::hash(&tokenizer_file.bytes);
        if table[16..48] != *tokenizer_hash.as_bytes() {
            // One of the two is not as installed (review 187): fetched again,
            // both are.
            let tokenizer_fix = super::assets::fix_for(&tokenizer_file.path);
            let fix = match chosen {
                true => format!("{TABLE_OVERRIDE_VAR} names the table, which may be at fault; else {tokenizer_fix}"),
                false => tokenizer_fix,
            };
            bail!(
                "the static table {} was trained for another tokenizer than {}; {fix}",
                path.display(),
                model_dir.display()
            );
        }
        if !chosen {
            let got = blake3::hash(&table).to_hex();
            if got.as_str() != shipped_hash() {
                bail!(
                    "the static table {} is not the one this vecgrep ships (blake3 {got}, expected {}); {}",
                    path.display(),
                    shipped_hash(),
                    super::assets::fix_for(&path)
                );
            }
        }
        let weighting = TokenWeighting::of_magic(&table).expect("check_shape knows the magic");
        Ok(StaticModel { tokenizer, table, vocab, weighting })
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
        let mut ids: Vec<u32> = parts.iter().copied().flatten().copied().collect();
        ids.sort_unstable();
        let mut sum = vec![0f32; DIMS];
        for run in ids.chunk_by(|a, b| a == b) {
            self.add_row(run[0] as usize, self.weighting.of(run.len()), &mut sum);
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }

    /// A static cosine on the model's scale: the table's calibration line,
    /// within -1..1.
    pub fn score_of(&self, cosine: f32) -> f32 {
        let (slope, intercept) = (f32_at(&self.table, 48), f32_at(&self.table, 52));
        (slope * cosine + intercept).clamp(-1.0, 1.0)
    }

    fn add_row(&self, id: usize, weight: f32, sum: &mut [f32]) {
        if id >= self.vocab {
            return;
        }
        let scale = weight * f32_at(&self.table, HEADER_BYTES + 4 * id);
        let row = HEADER_BYTES + 4 * self.vocab + DIMS * id;
        for (s, &b) in sum.iter_mut().zip(&self.table[row..row + DIMS]) {
            *s += scale * f32::from(b as i8);
        }
    }
}

fn f32_at(bytes: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Whether `table` is a whole table of `vocab` rows of `DIMS`; the fault otherwise.
fn check_shape(table: &[u8], vocab: usize) -> Result<(), String> {
    if table.len() < HEADER_BYTES || TokenWeighting::of_magic(table).is_none() {
        return Err("is not a static table".into());
    }
    let field = |at: usize| u32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]]) as usize;
    if field(8) != vocab || field(12) != DIMS {
        return Err(format!("has {} rows of {}, not {vocab} of {DIMS}", field(8), field(12)));
    }
    if table.len() != HEADER_BYTES + vocab * (4 + DIMS) {
        return Err(format!("is {} bytes, not {} (cut short?)", table.len(), HEADER_BYTES + vocab * (4 + DIMS)));
    }
    // One NaN row scale made every text holding that token score NaN, which
    // no threshold keeps: its hits vanished in silence.
    let numbers = [48, 52].into_iter().chain((0..vocab).map(|id| HEADER_BYTES + 4 * id));
    if let Some(at) = numbers.into_iter().find(|&at| !f32_at(table, at).is_finite()) {
        return Err(format!("holds a number that is not finite at byte {at}"));
    }
    Ok(())
}

/// The table to load, and whether it was chosen on purpose
/// (`VECGREP_STATIC_TABLE`) rather than found where it is installed.
fn table_path(model_dir: &Path) -> Result<(PathBuf, bool)> {
    if let Some(path) = std::env::var_os(TABLE_OVERRIDE_VAR).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            let what = if path.exists() { "is not a file" } else { "does not exist" };
            bail!("{TABLE_OVERRIDE_VAR}={} {what}", path.display());
        }
        return Ok((path, true));
    }
    let candidates = super::assets::model_dirs(model_dir).into_iter().map(|d| d.join(TABLE_FILE)).collect::<Vec<_>>();
    match candidates.iter().find(|p| p.is_file()) {
        Some(path) => Ok((path.clone(), false)),
        None => {
            // A model directory of the user's (the five files the model
            // needs) may lack the table that comes with it (audit 183).
            let fix = match std::env::var_os("VECGREP_MODEL_DIR").filter(|v| !v.is_empty()) {
                Some(_) => format!(
                    "copy it into VECGREP_MODEL_DIR beside the model, set {TABLE_OVERRIDE_VAR}, or run {FIX_COMMAND}"
                ),
                None => format!("run {FIX_COMMAND}"),
            };
            bail!(
                "the static table {TABLE_FILE} is not installed (looked in {}); {fix}",
                super::assets::display_list(&candidates)
            )
        }
    }
}

/// Why the static table in use is another than an index's: the one
/// `VECGREP_STATIC_TABLE` names, or vecgrep's own, updated.
pub fn why_another_table() -> String {
    match std::env::var_os(TABLE_OVERRIDE_VAR).filter(|v| !v.is_empty()) {
        Some(path) => format!("{TABLE_OVERRIDE_VAR} names {}", Path::new(&path).display()),
        // An update of vecgrep, or VECGREP_STATIC_TABLE unset since: which
        // is not known, only that vecgrep's own is the one in use.
        None => "vecgrep's own is in use now: an update shipped it, or VECGREP_STATIC_TABLE was unset".to_string(),
    }
}

/// The largest table `VECGREP_STATIC_TABLE` may name: far above any
/// table's size (the shipped one is under 16 MB).
const MAX_CHOSEN_TABLE_BYTES: u64 = 256 << 20;

/// What names the static vectors an index holds: the shipped table's hash,
/// or that of the table `VECGREP_STATIC_TABLE` names (read once a process).
/// An index built with another table is rebuilt.
pub fn table_id() -> String {
    static CHOSEN: OnceLock<String> = OnceLock::new();
    match std::env::var_os(TABLE_OVERRIDE_VAR).filter(|v| !v.is_empty()) {
        Some(path) => CHOSEN
            .get_or_init(|| {
                // Never read whole unless a table's size: it may name a FIFO
                // (whose open waits) or /dev/zero; `load` says what it is.
                match crate::project::small_file::read_small(Path::new(&path), MAX_CHOSEN_TABLE_BYTES) {
                    Ok(Some(bytes)) => blake3::hash(&bytes).to_hex()[..16].to_string(),
                    _ => "unreadable".into(),
                }
            })
            .clone(),
        None => shipped_hash()[..16].to_string(),
    }
}

/// A table in the file format (`examples/pack_static.rs`, tests): `rows`
/// (vocab × DIMS) quantized to i8 by row, its tokens weighted as
/// `weighting` says, for the tokenizer whose BLAKE3 is
/// `tokenizer_hash`, with the calibration line (slope, intercept) that maps
/// its cosines onto the model's.
pub fn encode_table(
    rows: &[f32],
    vocab: usize,
    weighting: TokenWeighting,
    tokenizer_hash: [u8; 32],
    calibration: (f32, f32),
) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_BYTES + vocab * (4 + DIMS));
    bytes.extend_from_slice(weighting.magic());
    bytes.extend_from_slice(&(vocab as u32).to_le_bytes());
    bytes.extend_from_slice(&(DIMS as u32).to_le_bytes());
    bytes.extend_from_slice(&tokenizer_hash);
    bytes.extend_from_slice(&calibration.0.to_le_bytes());
    bytes.extend_from_slice(&calibration.1.to_le_bytes());
    let scales: Vec<f32> =
        rows.chunks_exact(DIMS).map(|r| r.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0).collect();
    scales.iter().for_each(|s| bytes.extend_from_slice(&s.to_le_bytes()));
    for (row, &scale) in rows.chunks_exact(DIMS).zip(&scales) {
        bytes.extend(row.iter().map(|&x| {
            if scale > 0.0 {
                (x / scale).round().clamp(-127.0, 127.0) as i8 as u8
            } else {
                0
            }
        }));
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::tokenizer::tokenizer_in;

    fn model_dir() -> PathBuf {
        crate::embed::locate_model(crate::project::DEFAULT_EMBEDDER_MODEL).expect("the test command fetches the model")
    }

    #[test]
    fn a_lazy_table_loads_once_and_stays_loaded() {
        let mut lazy = LazyStatic::new(Some(Box::new(|| Err(anyhow!("no table here")))));
        assert!(lazy.get().is_err(), "a failure is an error once");
        assert!(lazy.is_none() && lazy.get().unwrap().is_none(), "then there is none");
        let dir = model_dir();
        let mut lazy = LazyStatic::new(Some(Box::new(move || StaticModel::load(&dir))));
        let first = lazy.get().unwrap().expect("loaded");
        let again = lazy.get().unwrap().expect("still loaded");
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!lazy.is_none());
    }

    #[test]
    fn the_shipped_table_is_the_one_its_hash_names() {
        let shipped = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/", "static-code.bin")).unwrap();
        assert_eq!(blake3::hash(&shipped).to_hex().as_str(), shipped_hash(), "models/static-code.blake3 is stale");
        let vocab = tokenizer_in(&model_dir()).unwrap().get_vocab_size(true);
        assert_eq!(check_shape(&shipped, vocab), Ok(()));
        assert!(shipped.len() <= 16 << 20, "the shipped table is at most 16 MB");
    }

    #[test]
    fn a_text_put_together_from_parts_has_the_vector_and_count_of_the_whole() {
        let model = StaticModel::load(&model_dir()).unwrap();
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
    fn rows_survive_packing_to_within_a_step_of_their_scale() {
        let mut rows = vec![0f32; 3 * DIMS];
        for (i, x) in rows.iter_mut().enumerate() {
            *x = ((i * 37 % 101) as f32 - 50.0) / 50.0 * (1 + i / DIMS) as f32;
        }
        let packed = encode_table(&rows, 3, TokenWeighting::Count, [7; 32], (1.0, 0.0));
        assert_eq!(check_shape(&packed, 3), Ok(()));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.bin"), &packed).unwrap();
        let model = StaticModel {
            tokenizer: tokenizer_in(&model_dir()).unwrap(),
            table: unsafe_free_map(&dir.path().join("t.bin")),
            vocab: 3,
            weighting: TokenWeighting::Count,
        };
        for id in 0..3 {
            let mut sum = vec![0f32; DIMS];
            model.add_row(id, 1.0, &mut sum);
            let scale = (1 + id) as f32 / 127.0;
            let row = &rows[id * DIMS..(id + 1) * DIMS];
            assert!(sum.iter().zip(row).all(|(a, b)| (a - b).abs() <= scale), "row {id}");
        }
        let mut sum = vec![0f32; DIMS];
        model.add_row(3, 1.0, &mut sum);
        assert!(sum.iter().all(|&x| x == 0.0), "an id past the table adds nothing");
    }

    fn unsafe_free_map(path: &Path) -> memmap2::Mmap {
        let file = std::fs::File::open(path).unwrap();
        #[allow(unsafe_code)]
        // SAFETY: a test's own temporary file, not written while mapped.
        unsafe {
            memmap2::Mmap::map(&file).unwrap()
        }
    }

    #[test]
    fn a_static_cosine_is_put_on_the_models_scale_by_the_tables_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.bin"),
            encode_table(&[0.0; DIMS], 1, TokenWeighting::LogCount, [0; 32], (2.0, 0.1)),
        )
        .unwrap();
        let model = StaticModel {
            tokenizer: tokenizer_in(&model_dir()).unwrap(),
            table: unsafe_free_map(&dir.path().join("t.bin")),
            vocab: 1,
            weighting: TokenWeighting::LogCount,
        };
        assert!((model.score_of(0.2) - 0.5).abs() < 1e-6);
        assert_eq!(model.score_of(0.9), 1.0, "within -1..1");
        assert_eq!(model.score_of(-0.9), -1.0);
    }

    #[test]
    fn a_wrong_or_damaged_table_is_refused_with_its_cause() {
        let vocab = 4;
        let good = encode_table(&vec![0.5; vocab * DIMS], vocab, TokenWeighting::LogCount, [0; 32], (1.0, 0.0));
        assert_eq!(check_shape(&good, vocab), Ok(()));
        assert!(check_shape(&good, 5).unwrap_err().contains("not 5 of 384"));
        assert!(check_shape(&good[..good.len() - 1], vocab).unwrap_err().contains("cut short"));
        assert!(check_shape(b"VGSTATIC and more", vocab).unwrap_err().contains("not a static table"));
        // A row's scale or the calibration line that is not a number.
        for (at, bad) in [(HEADER_BYTES + 4 * 2, f32::NAN), (52, f32::INFINITY), (48, f32::NAN)] {
            let mut damaged = good.clone();
            damaged[at..at + 4].copy_from_slice(&bad.to_le_bytes());
            assert_eq!(check_shape(&damaged, vocab), Err(format!("holds a number that is not finite at byte {at}")));
        }
    }

    #[test]
    fn a_recurring_token_weighs_by_the_tables_rule() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = vec![0f32; 3 * DIMS];
        rows[DIMS] = 1.0; // token 1 points along the first axis
        rows[2 * DIMS + 1] = 1.0; // token 2 along the second
        let model_of = |weighting| {
            let path = dir.path().join(format!("{weighting:?}.bin"));
            std::fs::write(&path, encode_table(&rows, 3, weighting, [0; 32], (1.0, 0.0))).unwrap();
            let table = unsafe_free_map(&path);
            assert_eq!(TokenWeighting::of_magic(&table), Some(weighting), "the file says how it weighs");
            StaticModel { tokenizer: tokenizer_in(&model_dir()).unwrap(), table, vocab: 3, weighting }
        };
        // Token 1 four times, token 2 once, in two parts and out of order.
        let parts: [&[u32]; 2] = [&[1, 2, 1], &[1, 1]];
        let by_count = model_of(TokenWeighting::Count).embed_ids(&parts);
        assert!((by_count[0] / by_count[1] - 4.0).abs() < 0.05, "{:?}", &by_count[..2]);
        let by_log = model_of(TokenWeighting::LogCount).embed_ids(&parts);
        assert!((by_log[0] / by_log[1] - (1.0 + 4f32.ln())).abs() < 0.05, "{:?}", &by_log[..2]);
    }
}
