//! One file's way into the index: read and hashed (skipped, unchanged or
//! changed), then, when changed, chunked and embedded, reusing the vectors
//! of chunks whose embedded text the index or the file already has.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Result};

use super::in_hand::{InHand, Share, Step};
use crate::chunk::{self, chunk_text, Chunk, Context};
use crate::embed::{Embedder, StaticModel, MAX_TOKENS, SPECIAL_TOKENS};
use crate::project::ProjectRoot;
use crate::project::ResolvedConfig;
use crate::project::{looks_binary, SkipReason, WalkedFile};
use crate::store::{self, ChunkWrite, FileState, FileWrite, IndexReader, StoredFile};

/// A file whose content changed, to chunk and embed.
pub(super) struct EmbedJob {
    pub rel: String,
    pub state: FileState,
    pub text: String,
    /// The size the walk saw, which the run's bar counts the file as (the
    /// file may have grown or shrunk since).
    pub walked_size: u64,
}

/// What becomes of a file in the index.
pub(super) enum Prepared {
    Skip(SkipReason),
    /// Not read for a reason that may pass (too many open files, a failing
    /// read): skipped as an error, and what is stored of it kept, not
    /// removed as a file gone or closed to the user would be (a burst of
    /// open files emptied an index of most of its files).
    Unread(SkipReason),
    /// Same content as stored; only stat data changed.
    Touch(FileState),
    Write(FileWrite),
}

/// What reading a new or changed file found.
pub(super) enum Read {
    Done(Prepared),
    Embed(EmbedJob),
    /// The bytes as stored: its chunks are kept once what the index keeps
    /// of them is found made of its text (`kept`), else it is embedded.
    Same(EmbedJob),
}

/// Read and hash one new or changed file: skip it, note that only its stat
/// data changed, or hand its text on to be embedded.
/// In a full run (`full`) a file with chunks still lacking the model's
/// vector is read again to embed them; otherwise those are left to searches
/// and fills.
pub(super) fn read_file(
    f: &WalkedFile,
    previous: Option<&StoredFile>,
    config: &ResolvedConfig,
    full: bool,
    confined: &Confinement,
) -> Read {
    let skip = |reason| Read::Done(Prepared::Skip(reason));
    let read_at = SystemTime::now();
    let (bytes, stamps) = match read_regular(&f.abs, config.max_filesize, confined) {
        Ok(Opened::Read(bytes, stamps)) => (bytes, stamps),
        // Replaced by a directory since the walk: the file is gone (the
        // next walk finds what is in it).
        Ok(Opened::NotRegular) if f.abs.is_dir() => return skip(SkipReason::Vanished),
        // Replaced by a FIFO or a device since the walk: never waited on.
        Ok(Opened::NotRegular) => return skip(SkipReason::Special),
        // Replaced by a link since the walk, as the walk would have found it.
        Ok(Opened::Link) => return skip(SkipReason::Symlink),
        // Opened just before the project moved, then found outside where it
        // was: the move's, and its entry stays for the next run (a CI run
        // lost one entry of a thousand so).
        Ok(Opened::Outside) if confined.a_root_is_gone() => return Read::Done(Prepared::Unread(SkipReason::Vanished)),
        Ok(Opened::Outside) => return skip(SkipReason::OutsideRoot),
        Ok(Opened::Binary) => return skip(SkipReason::Binary),
        // Its directory replaced by a file since the walk is gone too; not
        // so the files of a project moved during the run, whose entries
        // (and model vectors) stay for the next run where it went.
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return match confined.a_root_is_gone() {
                true => Read::Done(Prepared::Unread(SkipReason::Vanished)),
                false => skip(SkipReason::Vanished),
            };
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return skip(SkipReason::Error(e.to_string())),
        Err(e) => return Read::Done(Prepared::Unread(SkipReason::Error(e.to_string()))),
    };
    // The file may have grown since it was walked: the read stopped past the limit.
    if bytes.len() as u64 > config.max_filesize {
        return skip(SkipReason::TooLarge { size: stamps.size.max(bytes.len() as u64), limit: config.max_filesize });
    }
    if looks_binary(&bytes) {
        return skip(SkipReason::Binary);
    }
    let generated = crate::project::by_content(&crate::project::as_utf8(&bytes));
    if let Some(kind) = generated.filter(|_| !config.include_generated) {
        return skip(SkipReason::Generated(kind));
    }
    // The file may have changed since it was walked; record what was read.
    let size = bytes.len() as u64;
    let mtime_ns = stamps.mtime_ns;
    let ctime_ns = if stamps.changed_while_read { 0 } else { settled(stamps.ctime_ns, read_at) };
    let hash = blake3::hash(&bytes).as_bytes().to_vec();
    let state = FileState { size, mtime_ns, hash, ctime_ns };
    let same = previous.is_some_and(|p| p.state.hash == state.hash && (!full || p.holes == Some(0)));
    let job = EmbedJob { rel: f.rel.clone(), state, text: crate::project::decode_text(bytes), walked_size: f.size };
    match same {
        true => Read::Same(job),
        false => Read::Embed(job),
    }
}

/// How long before a read a file's last change must be for its status-change
/// time to tell any later write apart. File systems stamp times from a clock
/// that ticks coarsely (a few milliseconds on ext4, a second or two on
/// others), so a write just after the read, in the same tick, would leave
/// every stamp as the read found it, and the edit would go unseen until the
/// next one. Git's index has the same race ("racy git").
const SETTLED: Duration = Duration::from_secs(2);

/// The ctime to store for a file read at `read_at`: its own once settled,
/// else 0, so that the next run reads it again (and, the bytes the same,
/// rewrites only its stat data).
fn settled(ctime_ns: i64, read_at: SystemTime) -> i64 {
    let settled_before = read_at.checked_sub(SETTLED).and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    match settled_before {
        Some(t) if (ctime_ns as i128) < t.as_nanos() as i128 => ctime_ns,
        _ => 0,
    }
}

/// Why a file's work was given up: the run was abandoned (`Embedding`).
const RUN_STOPPED: &str = "the index run was stopped";

/// How a worker embeds: with the model (a full run), with the static
/// table, or both; at least one of the two.
pub(super) struct Embedding<'a> {
    pub model: Option<&'a mut (dyn Embedder + 'static)>,
    pub statics: Option<&'a StaticModel>,
    /// Set when the run is abandoned: the work stops between steps, and
    /// the model between batches.
    pub abandoned: &'a AtomicBool,
    /// Where the file's part of the embedders' work done is counted.
    pub in_hand: &'a InHand,
}

impl Embedding<'_> {
    /// Tokens the model would see for `text` (a static run counts with the
    /// static table's tokenizer instead, `CheckedTokens`).
    fn count_tokens(&self, text: &str) -> usize {
        self.model.as_ref().map_or(usize::MAX, |m| m.count_tokens(text))
    }
}

/// The tokens of the texts the chunker asked about, kept for the static
/// vectors of the chunks it cuts: in a static run tokenizing is most of the
/// work, and each chunk's text is then tokenized once, not twice.
struct CheckedTokens<'a> {
    statics: &'a StaticModel,
    seen: RefCell<HashMap<String, Vec<u32>>>,
}

impl<'a> CheckedTokens<'a> {
    fn new(statics: &'a StaticModel) -> Self {
        CheckedTokens { statics, seen: RefCell::default() }
    }

    /// Whether `text` fits the model's window.
    fn fits(&self, text: &str) -> bool {
        let Some(ids) = self.statics.token_ids(text) else { return false };
        let fits = ids.len() + SPECIAL_TOKENS <= MAX_TOKENS;
        self.seen.borrow_mut().insert(text.to_string(), ids);
        fits
    }

    /// The static vector of a chunk's embedded text (`chunk::embedded_text`).
    fn embed(&self, around: &str, text: &str) -> Vec<f32> {
        let text_ids = self.seen.borrow_mut().remove(text).or_else(|| self.statics.token_ids(text));
        let around_ids = self.statics.token_ids(around).unwrap_or_default();
        self.statics.embed_ids(&[&around_ids, &text_ids.unwrap_or_default()])
    }
}

/// Chunk and embed one file's text. A chunk whose embedded text is already
/// in the index, or earlier in the same file, takes that vector instead;
/// without the model, the others wait for a search or a fill.
pub(super) fn chunk_and_embed(
    job: EmbedJob,
    mut with: Embedding<'_>,
    known: Option<&KnownVectors>,
    size: usize,
    overlap: usize,
) -> Result<FileWrite> {
    // A file of megabytes is seconds of work before the model's first
    // batch (audit 237: Ctrl-C waited 9 s for a 10 MB file): an abandoned
    // run stops between its steps, and the chunker, which then measures
    // nothing more, ends at once; what it cut is thrown away.
    let stopped = || with.abandoned.load(Ordering::SeqCst);
    let mut share = Share::new(with.in_hand, job.walked_size, with.model.is_some());
    let checked = with.statics.map(CheckedTokens::new);
    let mut chunks: Vec<Chunk> = Vec::new();
    if !job.text.trim().is_empty() {
        chunks = chunk_text(&job.text, chunk::Syntax::of_path(&job.rel), size, overlap, &|t| match &checked {
            _ if stopped() => true,
            Some(checked) => checked.fits(t),
            None => with.count_tokens(t) <= MAX_TOKENS,
        });
    }
    if stopped() {
        return Err(anyhow!(RUN_STOPPED));
    }
    share.reached(Step::Chunked);
    let contexts = chunk::contexts(&job.rel, &job.text, &chunks);
    share.reached(Step::Named);
    let embedded: Vec<String> =
        chunks.iter().zip(&contexts).map(|(c, ctx)| chunk::embedded_text(&ctx.around, &c.text)).collect();
    let embed_keys: Vec<[u8; 16]> = embedded.iter().map(|text| chunk::embed_key(text)).collect();
    let mut statics: Vec<Option<Vec<f32>>> = Vec::with_capacity(chunks.len());
    for (i, (c, ctx)) in chunks.iter().zip(&contexts).enumerate() {
        if stopped() {
            return Err(anyhow!(RUN_STOPPED));
        }
        statics.push(checked.as_ref().map(|k| k.embed(&ctx.around, &c.text)));
        share.reached(Step::Statics { done: i + 1, of: chunks.len() });
    }
    let model = with.model.take().map(|m| m as &mut dyn Embedder);
    let found = vectors_for((model, with.abandoned, &mut share), &embedded, &embed_keys, known)?;
    share.whole();
    let chunks = chunks
        .into_iter()
        .zip(contexts)
        .zip(found.vectors.into_iter().zip(statics))
        .zip(embed_keys)
        .map(|(((chunk, context), vectors), embed_key)| chunk_write(chunk, context, vectors, embed_key))
        .collect();
    Ok(FileWrite {
        rel: job.rel,
        state: job.state,
        chunks,
        copied: found.copied,
        tokens: found.tokens,
        pending: found.pending,
    })
}

/// What the store keeps of one chunk.
fn chunk_write(
    chunk: Chunk,
    context: Context,
    (vector, static_vector): (Option<Vec<f32>>, Option<Vec<f32>>),
    embed_key: [u8; 16],
) -> ChunkWrite {
    let words = crate::terms::chunk_words(&chunk.text, &context.words());
    let names = context.names.join(" ");
    ChunkWrite { chunk, vector, static_vector, around: context.around, embed_key, names, words }
}

/// The vectors of a file's chunks and how they were had.
struct Found {
    /// One per chunk; None for a hole.
    vectors: Vec<Option<Vec<f32>>>,
    /// Taken from the index or an earlier chunk of the file with the same text.
    copied: u64,
    /// Tokens the model was given.
    tokens: u64,
    /// Left without the model's vector for later (no model in this run).
    pending: u64,
}

/// A vector for each of `embedded` (a file's chunks as the model sees them,
/// named by `keys`): the index's when it has one, an earlier chunk's with
/// the same text, or the model's.
fn vectors_for(
    (model, abandoned, share): (Option<&mut dyn Embedder>, &AtomicBool, &mut Share<'_>),
    embedded: &[String],
    keys: &[[u8; 16]],
    known: Option<&KnownVectors>,
) -> Result<Found> {
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; embedded.len()];
    let mut first_with_key: HashMap<[u8; 16], usize> = HashMap::new();
    let mut repeats: Vec<(usize, usize)> = Vec::new(); // (chunk, the earlier chunk with its text)
    let mut to_embed: Vec<usize> = Vec::new();
    // Another index of the project may hold vectors of another size (made
    // before a server behind the model's name changed): never copied in
    // beside the model's (a --reindex copied a revision's 384 beside 100).
    let dims = model.as_ref().map(|m| m.dims());
    for (i, &key) in keys.iter().enumerate() {
        if let Some(&earlier) = first_with_key.get(&key) {
            repeats.push((i, earlier));
            continue;
        }
        first_with_key.insert(key, i);
        match known.and_then(|k| k.get(&key)).filter(|v| dims.is_none_or(|d| v.len() == d)) {
            Some(v) => vectors[i] = Some(v),
            None => to_embed.push(i),
        }
    }
    let mut copied = (embedded.len() - to_embed.len() - repeats.len()) as u64;
    let texts: Vec<&str> = to_embed.iter().map(|&i| embedded[i].as_str()).collect();
    let (mut tokens, mut pending) = (0, 0);
    match model {
        Some(model) => {
            // What the model sees: longer texts are cut to its window.
            tokens = texts.iter().map(|t| model.count_tokens(t).min(MAX_TOKENS) as u64).sum();
            for (i, v) in to_embed.into_iter().zip(embed_chunks(model, &texts, abandoned, share)?) {
                vectors[i] = v;
            }
        }
        None => pending = to_embed.len() as u64,
    }
    for (i, earlier) in repeats {
        vectors[i] = vectors[earlier].clone();
        copied += vectors[i].is_some() as u64;
        pending += vectors[i].is_none() as u64;
    }
    Ok(Found { vectors, copied, tokens, pending })
}

/// The vectors already in the index, or in another index of the project
/// (its revisions, or for a revision the working tree's and the others':
/// `store::related_roots`), looked up by `chunk::embed_key` from the
/// embedder threads over connections of their own. A failed lookup is a
/// miss: the chunk is embedded, which is slower but gives the same vector.
pub(super) struct KnownVectors(Mutex<Vec<Box<dyn IndexReader>>>);

impl KnownVectors {
    /// The indexes of `root`'s project embedded with `model`.
    pub(super) fn open(root: &ProjectRoot, model: &str) -> Option<Arc<KnownVectors>> {
        let readers: Vec<Box<dyn IndexReader>> = std::iter::once(root.clone())
            .chain(store::related_roots(root))
            .filter_map(|r| store::open_for_reading(&r).ok())
            .filter(|r| r.meta().ok().flatten().is_some_and(|m| m.model == model))
            .collect();
        (!readers.is_empty()).then(|| Arc::new(KnownVectors(Mutex::new(readers))))
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<Vec<f32>> {
        self.0.lock().ok()?.iter().find_map(|r| r.vector_for_key(key).ok().flatten())
    }
}

/// Embed texts in small batches of similar length, returning vectors in order.
/// The embedder batches as suits it (the local model one text at a time, a
/// server by `embedder_batch_size`); sorting by length keeps the texts of a
/// batch alike, so that little of it is padding. None marks a hole.
fn embed_chunks(
    model: &mut dyn Embedder,
    chunks: &[&str],
    abandoned: &AtomicBool,
    share: &mut Share<'_>,
) -> Result<Vec<Option<Vec<f32>>>> {
    if chunks.is_empty() {
        return Ok(Vec::new());
    }
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by_key(|&i| chunks[i].len());
    let texts: Vec<&str> = order.iter().map(|&i| chunks[i]).collect();
    let mut vectors = Vec::with_capacity(texts.len());
    // A big file is seconds of the model's time: an abandoned run stops
    // between calls (what it embedded is not written), within one text of
    // the local model's however busy the machine.
    for slice in texts.chunks(model.texts_per_call().max(1)) {
        if abandoned.load(Ordering::SeqCst) {
            return Err(anyhow!(RUN_STOPPED));
        }
        vectors.extend(model.embed_each(slice)?);
        share.reached(Step::Embedded { done: vectors.len(), of: texts.len() });
    }
    if vectors.len() != chunks.len() {
        return Err(anyhow!("the embedder returned {} vectors for {} texts", vectors.len(), chunks.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; chunks.len()];
    for (i, v) in order.into_iter().zip(vectors) {
        out[i] = v;
    }
    Ok(out)
}

/// Where a run may read: the root (its real path; a catalog's, each of its
/// projects') and whether links are followed. The walk checked each file
/// against both; a file swapped for a link (or a directory for one) between
/// the walk and the read is checked again on the file opened, so that what
/// lies outside the project is never indexed under a name inside it.
pub(super) struct Confinement {
    roots: Vec<std::path::PathBuf>,
    /// The roots that were directories when the run began.
    standing: Vec<std::path::PathBuf>,
    follow: bool,
}

impl Confinement {
    pub(super) fn new(root: &crate::project::ProjectRoot, follow: bool) -> Confinement {
        let roots = match root.marker {
            crate::project::RootMarker::Catalog => crate::project::catalog::Catalog::read(&root.path)
                .map(|c| c.projects.into_iter().map(|p| p.path).collect())
                .unwrap_or_default(),
            _ => vec![root.path.clone()],
        };
        Confinement::within(&roots, follow)
    }

    fn within(roots: &[std::path::PathBuf], follow: bool) -> Confinement {
        let real = |r: &std::path::PathBuf| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone());
        let roots: Vec<std::path::PathBuf> = roots.iter().map(real).collect();
        let standing = roots.iter().filter(|r| r.is_dir()).cloned().collect();
        Confinement { roots, standing, follow }
    }

    /// Whether a root (a catalog's project) there when the run began is no
    /// longer: the project moved or was removed during the run, and its
    /// files did not vanish one by one. One gone before is a catalog's
    /// skip, not this.
    fn a_root_is_gone(&self) -> bool {
        self.standing.iter().any(|r| !r.is_dir())
    }
}

/// What opening a walked file found.
enum Opened {
    /// At most the limit and one byte more, and the stamps of what was read.
    Read(Vec<u8>, Stamps),
    /// No longer a regular file.
    NotRegular,
    /// A link, where links are not followed.
    Link,
    /// A file outside the root.
    Outside,
    /// Its first bytes say it is binary: the rest is not read.
    Binary,
}

/// The bytes of the regular file at `path`, at most `limit` and one more (a
/// file grown past `max_filesize` since the walk is never held whole).
fn read_regular(path: &std::path::Path, limit: u64, confined: &Confinement) -> std::io::Result<Opened> {
    use std::io::Read;
    let file = match crate::project::small_file::open_regular_as(path, confined.follow) {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(Opened::NotRegular),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) && !confined.follow => return Ok(Opened::Link),
        Err(e) => return Err(e),
    };
    if !confined.roots.iter().any(|root| crate::project::small_file::opened_within(&file, root)) {
        return Ok(Opened::Outside);
    }
    let before = file.metadata()?;
    let mut bytes = Vec::new();
    let mut head = file.take(limit.saturating_add(1));
    // The head first: a disk image or a dump is known binary by it, and
    // never held whole (a 400 MB one took 446 MB and 4 s).
    (&mut head).take(crate::project::BINARY_SNIFF as u64).read_to_end(&mut bytes)?;
    if crate::project::looks_binary(&bytes) {
        return Ok(Opened::Binary);
    }
    head.read_to_end(&mut bytes)?;
    let file = head.into_inner();
    Ok(Opened::Read(bytes, Stamps::of(&before, &file.metadata()?)))
}

/// The stamps of the file a read opened, taken from its handle before the
/// read: a write after them moves the ctime the next walk finds, whatever
/// the clocks say. A file rewritten in place or renamed over since the
/// walk is judged by what was read, not by the path's new inode.
struct Stamps {
    mtime_ns: i64,
    ctime_ns: i64,
    /// A write landed during the read (the stamps moved): the bytes may mix
    /// two versions, and the next run reads the file again.
    changed_while_read: bool,
    /// The file's size once read.
    size: u64,
}

impl Stamps {
    fn of(before: &std::fs::Metadata, after: &std::fs::Metadata) -> Stamps {
        use crate::project::{ctime_ns, mtime_ns};
        let (ctime, mtime) = (ctime_ns(before), mtime_ns(before));
        let changed_while_read = ctime != ctime_ns(after) || mtime != mtime_ns(after) || before.len() != after.len();
        Stamps { mtime_ns: mtime, ctime_ns: ctime, changed_while_read, size: after.len() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes and stamps of the regular file at `path`, read within its directory.
    fn read_in(path: &std::path::Path, limit: u64) -> (Vec<u8>, Stamps) {
        match read_regular(path, limit, &Confinement::within(&[path.parent().unwrap().into()], false)).unwrap() {
            Opened::Read(bytes, stamps) => (bytes, stamps),
            _ => panic!("{} was not read", path.display()),
        }
    }

    /// Bytes this thread has read so far (`rchar`: whatever the cache held).
    fn read_by_this_thread() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines().find_map(|l| l.strip_prefix("rchar: ")).unwrap().trim().parse().unwrap()
    }

    /// A static run's work on one file (chunking, names, static vectors)
    /// is given up once the run is abandoned, as the model's batches were:
    /// Ctrl-C waited 9 s for a 10 MB file (audit 237).
    #[test]
    fn an_abandoned_runs_file_is_given_up_without_the_model_too() {
        let dir = crate::embed::locate_model(crate::project::DEFAULT_EMBEDDER_MODEL).expect("the model is fetched");
        let statics = StaticModel::load(&dir).unwrap();
        let text: String = (0..2_000).map(|i| format!("def step_{i}(x):\n    return x + {i}\n")).collect();
        let job = || EmbedJob {
            rel: "big.py".into(),
            state: FileState { size: text.len() as u64, mtime_ns: 1, hash: Vec::new(), ctime_ns: 1 },
            text: text.clone(),
            walked_size: text.len() as u64,
        };
        let embed = |abandoned: bool| {
            let abandoned = AtomicBool::new(abandoned);
            let in_hand = InHand::default();
            let with = Embedding { model: None, statics: Some(&statics), abandoned: &abandoned, in_hand: &in_hand };
            chunk_and_embed(job(), with, None, 500, 100)
        };
        assert!(embed(false).unwrap().chunks.len() > 100);
        assert_eq!(embed(true).err().map(|e| e.to_string()).as_deref(), Some(RUN_STOPPED));
    }

    /// A model that counts how often the chunker measures a text, and
    /// abandons the run at the first: vectors are never asked of it.
    struct AbandonsAtFirstCount {
        abandoned: Arc<AtomicBool>,
        counted: std::sync::atomic::AtomicUsize,
    }

    impl Embedder for AbandonsAtFirstCount {
        fn model_name(&self) -> &str {
            "abandons"
        }
        fn dims(&self) -> usize {
            crate::embed::DIMS
        }
        fn embed(&mut self, _: &[&str]) -> Result<Vec<Vec<f32>>> {
            Err(anyhow!("an abandoned run asks for no vector"))
        }
        fn count_tokens(&self, text: &str) -> usize {
            self.counted.fetch_add(1, Ordering::SeqCst);
            self.abandoned.store(true, Ordering::SeqCst);
            text.len() / 4
        }
    }

    /// Ctrl-C in the middle of chunking a big file: the chunker measures
    /// nothing more, and what it cut is never embedded or written.
    #[test]
    fn a_run_abandoned_while_chunking_stops_measuring_at_once() {
        let abandoned = Arc::new(AtomicBool::new(false));
        let mut model = AbandonsAtFirstCount { abandoned: Arc::clone(&abandoned), counted: Default::default() };
        let text: String = (0..2_000).map(|i| format!("def step_{i}(x):\n    return x + {i}\n")).collect();
        let job = EmbedJob {
            rel: "big.py".into(),
            state: FileState { size: text.len() as u64, mtime_ns: 1, hash: Vec::new(), ctime_ns: 1 },
            walked_size: text.len() as u64,
            text,
        };
        let in_hand = InHand::default();
        let with = Embedding { model: Some(&mut model), statics: None, abandoned: &abandoned, in_hand: &in_hand };
        let done = chunk_and_embed(job, with, None, 500, 100);
        assert_eq!(done.err().map(|e| e.to_string()).as_deref(), Some(RUN_STOPPED));
        assert_eq!(model.counted.load(Ordering::SeqCst), 1, "measured once, then no more");
        assert_eq!(in_hand.bytes(), 0, "its part of the bar given back");
    }

    #[test]
    fn a_binary_file_is_known_by_its_head_and_never_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("disk.img");
        // Sparse: 64 MiB of NUL bytes that take no disk.
        std::fs::File::create(&image).unwrap().set_len(64 << 20).unwrap();
        let confined = Confinement::within(&[dir.path().into()], false);
        let before = read_by_this_thread();
        assert!(matches!(read_regular(&image, 1 << 30, &confined).unwrap(), Opened::Binary));
        let read = read_by_this_thread() - before;
        assert!(read < 1 << 20, "{read} bytes read of a binary file");
        // A text file of any size is read whole.
        let text = dir.path().join("big.txt");
        std::fs::write(&text, "x\n".repeat(10_000)).unwrap();
        assert_eq!(read_in(&text, 1 << 30).0.len(), 20_000);
    }

    #[test]
    fn a_file_swapped_for_a_link_after_the_walk_is_not_read_through_it() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "the secret\n").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("src")).unwrap();
        let walked =
            |rel: &str| WalkedFile { rel: rel.into(), abs: root.path().join(rel), size: 4, mtime_ns: 0, ctime_ns: 0 };
        let config = crate::project::ConfigLayers::default().resolve().unwrap();
        let confined = |follow| Confinement::within(&[root.path().into()], follow);
        let skipped = |f: &WalkedFile, follow: bool| match read_file(f, None, &config, false, &confined(follow)) {
            Read::Done(Prepared::Skip(reason) | Prepared::Unread(reason)) => Some(reason),
            _ => None,
        };
        // The file itself, now a link out.
        symlink(outside.path().join("secret.txt"), root.path().join("src/a.rs")).unwrap();
        assert_eq!(skipped(&walked("src/a.rs"), false), Some(SkipReason::Symlink));
        assert_eq!(skipped(&walked("src/a.rs"), true), Some(SkipReason::OutsideRoot), "followed, it leads out");
        // A directory above it, now a link out.
        std::fs::write(outside.path().join("b.rs"), "fn b() {}\n").unwrap();
        symlink(outside.path(), root.path().join("lib")).unwrap();
        for follow in [false, true] {
            assert_eq!(skipped(&walked("lib/b.rs"), follow), Some(SkipReason::OutsideRoot), "follow: {follow}");
        }
        // A link within the root, followed, is read.
        std::fs::write(root.path().join("src/c.rs"), "fn c() {}\n").unwrap();
        symlink(root.path().join("src/c.rs"), root.path().join("src/d.rs")).unwrap();
        assert_eq!(skipped(&walked("src/d.rs"), true), None);
        // The file, now a directory: gone, not a FIFO or a device.
        std::fs::create_dir(root.path().join("src/e.rs")).unwrap();
        assert_eq!(skipped(&walked("src/e.rs"), false), Some(SkipReason::Vanished));
    }

    #[test]
    fn a_ctime_is_kept_only_once_a_later_write_could_not_share_its_tick() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        std::fs::write(&path, "fn a() {}\n").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let ctime = crate::project::ctime_ns(&meta);
        assert!(ctime > 0);
        assert_eq!(settled(ctime, SystemTime::now()), 0, "changed just before the read");
        let later = SystemTime::now() + SETTLED + Duration::from_millis(10);
        assert_eq!(settled(ctime, later), ctime, "changed well before the read");
    }

    #[test]
    fn a_file_grown_past_the_limit_since_the_walk_is_read_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grown.rs");
        std::fs::write(&path, "x".repeat(5000)).unwrap();
        let (bytes, stamps) = read_in(&path, 1000);
        assert_eq!((bytes.len(), stamps.size), (1001, 5000));
        let (bytes, _) = read_in(&path, 5000);
        assert_eq!(bytes.len(), 5000, "a file at the limit is read whole");
        // As the indexer meets it: walked small, read large.
        let defaults = crate::project::ConfigLayers::default().resolve().unwrap();
        let config = ResolvedConfig { max_filesize: 1000, ..defaults };
        let walked = WalkedFile { rel: "grown.rs".into(), abs: path, size: 10, mtime_ns: 0, ctime_ns: 0 };
        match read_file(&walked, None, &config, false, &Confinement::within(&[dir.path().into()], false)) {
            Read::Done(Prepared::Skip(SkipReason::TooLarge { size, limit })) => assert_eq!((size, limit), (5000, 1000)),
            _ => panic!("a grown file is skipped as too large"),
        }
    }

    #[test]
    fn a_file_opened_as_its_project_moves_is_unread_not_outside() {
        let parent = tempfile::tempdir().unwrap();
        let (root, moved) = (parent.path().join("p"), parent.path().join("p.moved"));
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.py"), "def a():\n    pass\n").unwrap();
        let config = crate::project::ConfigLayers::default().resolve().unwrap();
        let confined = Confinement::within(std::slice::from_ref(&root), false);
        std::fs::rename(&root, &moved).unwrap();
        // As a read that opened the file just before the move sees it: outside the root.
        let walked = WalkedFile { rel: "a.py".into(), abs: moved.join("a.py"), size: 18, mtime_ns: 0, ctime_ns: 0 };
        match read_file(&walked, None, &config, false, &confined) {
            Read::Done(Prepared::Unread(SkipReason::Vanished)) => {}
            _ => panic!("the file of a moved project is left unread, its entry kept"),
        }
    }

    #[test]
    fn a_file_whose_directory_became_a_file_since_the_walk_has_vanished() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sub"), "now a file\n").unwrap();
        let config = crate::project::ConfigLayers::default().resolve().unwrap();
        let abs = dir.path().join("sub/inner.py");
        let walked = WalkedFile { rel: "sub/inner.py".into(), abs, size: 10, mtime_ns: 0, ctime_ns: 0 };
        match read_file(&walked, None, &config, false, &Confinement::within(&[dir.path().into()], false)) {
            Read::Done(Prepared::Skip(SkipReason::Vanished)) => {}
            _ => panic!("gone, not an error"),
        }
    }

    #[test]
    fn a_file_is_judged_by_the_stamps_of_what_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        std::fs::write(&path, "fn a() {}\n").unwrap();
        let (bytes, stamps) = read_in(&path, 1 << 20);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(bytes, b"fn a() {}\n");
        assert_eq!(
            (stamps.ctime_ns, stamps.mtime_ns),
            (crate::project::ctime_ns(&meta), crate::project::mtime_ns(&meta))
        );
        assert!(!stamps.changed_while_read);
        // Stamps that moved between the two looks mean a write during the read.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, "fn b() {}\n").unwrap();
        let moved = Stamps::of(&meta, &std::fs::metadata(&path).unwrap());
        assert!(moved.changed_while_read);
        assert_eq!(moved.ctime_ns, crate::project::ctime_ns(&meta), "the stamps from before the read");
    }
}
