//! The two traits every backend implements: the questions a search and
//! an index run ask of an index, and the changes a run makes.

use std::collections::HashMap;

use super::*;

/// The meta key of `IndexReader::run_unfinished`.
const RUN_UNFINISHED: &str = "run_unfinished";

/// The questions searches and index runs ask of an index.
pub trait IndexReader: Send {
    /// One value of the index's `meta` table, as stored; None when absent.
    fn meta_value(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// A counter of the `meta` table; 0 when absent.
    fn meta_count(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.meta_value(key)?.and_then(|v| v.parse().ok()).unwrap_or(0))
    }
    /// What the index was built with, or None for a fresh index.
    fn meta(&self) -> Result<Option<IndexMeta>, StoreError> {
        IndexMeta::read(&|key| self.meta_value(key))
    }
    /// The spec's IndexStats.
    fn stats(&self) -> Result<IndexStats, StoreError>;
    /// Damage a crash or a bug could leave, as sentences (none when sound),
    /// with the counts; damage found is marked for the next writer to
    /// rebuild, where this user may mark it.
    fn verify(&self) -> Result<(IndexStats, Vec<String>), StoreError>;
    /// Whether a mark of damage is left that this user's next run acts on
    /// (`verify`'s): a user who may only read the index cannot leave one,
    /// and a shared index's co-writer's run leaves the mark to its owner's;
    /// `--reindex` then rebuilds it.
    fn damage_marked(&self) -> bool;
    /// A number that changes whenever the chunks do.
    fn generation(&self) -> Result<i64, StoreError> {
        self.meta_count("generation")
    }
    /// A number that changes whenever the word index does: the generation
    /// less the changes that left words alone (files only touched, the
    /// model's vectors stored into chunks a fill found unchanged, and
    /// vectors stored by searches of older vecgreps), so that words held in
    /// memory outlast them. A change by a vecgrep that does not count those
    /// moves it too.
    fn word_generation(&self) -> Result<i64, StoreError>;
    /// Every indexed file with what is known of it; with `holes`, how many
    /// of its chunks lack the model's vector, which only a full run asks
    /// (counting them reads every chunk's row: 16-20 ms of each one-shot
    /// search's index pass on tokio, against 1 ms without).
    fn files(&self, holes: bool) -> Result<HashMap<String, StoredFile>, StoreError>;
    /// The size of the vectors the index holds, once known.
    fn dims(&self) -> Result<Option<usize>, StoreError> {
        Ok(self.meta_value("dims")?.and_then(|v| v.parse().ok()))
    }
    /// Whether this index was made here, or checked here against its files
    /// since it came (`IndexWriter::mark_checked_here`): one copied in, or
    /// committed beside the code, may keep text no file holds (audit 235),
    /// which only a run over the whole project finds.
    fn checked_here(&self) -> Result<bool, StoreError> {
        Ok(true)
    }
    /// Whether every stored file has been read since generated files were
    /// last let in (`project::generated`): false for an index from before the check.
    fn generated_checked(&self) -> Result<bool, StoreError> {
        Ok(self.meta_value("generated_checked")?.as_deref() == Some("1"))
    }
    /// While not every stored file has been read so (`generated_checked`),
    /// the directories (root-relative) whose files all have: runs over part
    /// of the project record theirs, so that the next run over the same part
    /// does not read it all again.
    fn generated_checked_under(&self) -> Result<Vec<String>, StoreError> {
        let listed = self.meta_value(GENERATED_CHECKED_UNDER)?.unwrap_or_default();
        Ok(listed.lines().map(str::to_string).collect())
    }
    /// Whether an index run over the whole project began changing the index
    /// and none has finished since (killed, interrupted, refused by the
    /// disk): files may be missing from it, and the next run adds them.
    fn run_unfinished(&self) -> Result<bool, StoreError> {
        Ok(self.meta_value(RUN_UNFINISHED)?.as_deref() == Some("1"))
    }
    /// The stored vector of a chunk whose embedded text had this key
    /// (`chunk::embed_key`), if any. Holes do not count.
    fn vector_for_key(&self, key: &[u8]) -> Result<Option<Vec<f32>>, StoreError>;
    /// Answer the questions that follow from one state of the index.
    fn snapshot(&self) -> Result<Snapshot<'_>, StoreError>;
    /// Chunks in scope by cosine similarity to `query`, best first, at most
    /// `limit`; equal scores in path and line order. Holes are never candidates.
    fn nearest_chunks(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError>;
    /// Chunks in scope by cosine similarity of their static vectors to
    /// `query` (a static vector too), best first, at most `limit`, whether
    /// or not they have the model's vector.
    fn nearest_static(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError>;
    /// Whether the index this connection reads has since been removed or
    /// replaced by another (rebuilt after damage, cleared and made again).
    /// A reader that lives long (a server's) then opens it again: a
    /// connection to a removed file would go on reading it.
    fn replaced(&self) -> bool {
        false
    }
    /// How many chunks lack the model's vector.
    fn unembedded_count(&self) -> Result<u64, StoreError>;
    /// How many chunks have the model's vector and how many lack it, in
    /// one statement: the chunks without are counted once, from an index
    /// of them, and no row is read.
    fn vector_counts(&self) -> Result<VectorCounts, StoreError>;
    /// The chunks that lack the model's vector, in no order: as many as
    /// `unembedded_count`, read from an index of them, not from the rows.
    fn unembedded_ids(&self) -> Result<Vec<ChunkId>, StoreError>;
    /// Hand the model's vector of each chunk in `ids` that has one to
    /// `visit`, in path and line order: a searcher that holds the vectors
    /// stored so far in memory catches up with what a fill added.
    fn vectors_of(&self, ids: &[ChunkId], visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<(), StoreError>;
    /// The cosine similarity of one chunk's vector to `query`; None for a hole or a chunk gone.
    fn cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError>;
    /// The cosine similarity of one chunk's static vector to `query` (a
    /// static vector too); None for a chunk without one or gone.
    fn static_cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError>;
    /// The `limit` chunks in `scope` whose words best match the full-text
    /// expression `expr` (`search::lexical::match_expression`), by BM25
    /// (more negative is better), best first, holes included; and every
    /// other one as good as the last of them (`keep_best_with_ties`), for
    /// the caller to order by place.
    fn best_word_matches(&self, expr: &str, scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f64)>, StoreError>;
    /// File and first line of each chunk in `ids` still in the index.
    fn places(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (String, usize)>, StoreError>;
    /// The own names (space-separated, as stored) of each chunk in `ids`
    /// that is still in the index and has some.
    fn names_of(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, String>, StoreError>;
    /// How many chunks have names.
    fn named_chunks(&self) -> Result<u64, StoreError> {
        Ok(self.meta_count("named_chunks")?.max(0) as u64)
    }
    /// How many chunks have `term` (`terms::terms_of_names`) among their names' terms.
    fn chunks_naming(&self, term: &str) -> Result<u64, StoreError>;
    /// A chunk's file, lines and text; None for a chunk gone.
    fn chunk(&self, id: ChunkId) -> Result<Option<StoredChunk>, StoreError>;
    /// A quick look at the index's structure, for when a chunk it ranked
    /// cannot be read: damage is an error (`Damaged`), not results that
    /// silently lack it; Ok when the chunk was only replaced meanwhile.
    fn check_structure(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// The lines of every chunk of `file`, (first, last), in no order: for
    /// a search's join, which lines are blank (every line that is not blank
    /// is in a chunk) and which long lines are cut into pieces. One read per
    /// file; asked per result, a file of thousands of chunks was read again
    /// for each (`-k 6000` over one 6.7 MB file: 36 s).
    fn chunk_spans(&self, file: &str) -> Result<Vec<(usize, usize)>, StoreError>;
    /// What is kept of each chunk of `file` that its text decides, in the
    /// order it was written: for a run that finds the file's bytes as
    /// stored to check that the rest agrees (`index::kept`).
    fn kept_chunks(&self, file: &str) -> Result<Vec<KeptChunk>, StoreError>;
    /// Hand every stored vector to `visit`, in path and line order, from one
    /// state of the index; returns that state's generation.
    fn each_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError>;
    /// Hand every stored static vector to `visit`, in path and line order,
    /// from one state of the index; returns that state's word generation,
    /// which changes whenever a chunk's static vector does (chunks are only
    /// added, rewritten or removed with their words, and a new static table
    /// is not a wordless change), so that static vectors held in memory
    /// outlast a fill.
    fn each_static_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError>;
    /// Hand every term of the word index to `visit` with each chunk that
    /// has it and how often (term, chunk, occurrences), a term's chunks
    /// together and in id order, from one state of the index; returns that
    /// state's totals. What `best_word_matches` ranks by, for a searcher
    /// that ranks words in memory.
    fn each_word(&self, visit: &mut dyn FnMut(&str, ChunkId, u32)) -> Result<WordTotals, StoreError>;
    /// The index job named `id`, if the index keeps one.
    fn index_job(&self, id: &str) -> Result<Option<IndexJob>, StoreError>;
}

/// Chunks `IndexWriter::restatic` reads and updates at a time: the chunks
/// are never all in memory, and a stop is heard within one page.
pub(crate) const RESTATIC_PAGE: usize = 1024;

/// The changes an index run makes; each call is atomic, so a kill at any
/// moment leaves each file either fully old or fully new.
pub trait IndexWriter: IndexReader {
    fn as_reader(&self) -> &dyn IndexReader;
    /// Empty the index and record what it is now built with.
    fn reset(&mut self, meta: &IndexMeta) -> Result<(), StoreError>;
    /// Set one value of the index's `meta` table.
    fn set_meta_value(&mut self, key: &str, value: &str) -> Result<(), StoreError>;
    /// Mark the index as changed by a run that has not finished
    /// (`IndexReader::run_unfinished`), or clear the mark.
    fn set_run_unfinished(&mut self, unfinished: bool) -> Result<(), StoreError> {
        self.set_meta_value(RUN_UNFINISHED, if unfinished { "1" } else { "0" })
    }
    /// Record whether every stored file has been read since generated files
    /// were last let in; either way, no directory is recorded apart.
    fn set_generated_checked(&mut self, checked: bool) -> Result<(), StoreError> {
        self.set_meta_value(GENERATED_CHECKED_UNDER, "")?;
        self.set_meta_value("generated_checked", if checked { "1" } else { "0" })
    }
    /// Record the directories whose files have all been read so
    /// (`IndexReader::generated_checked_under`).
    fn set_generated_checked_under(&mut self, dirs: &[String]) -> Result<(), StoreError> {
        self.set_meta_value(GENERATED_CHECKED_UNDER, &dirs.join("\n"))
    }
    /// Give every chunk the static vector `embed(around, text)` gives it and
    /// record `meta`, in one transaction: the index was built with another
    /// static table and nothing else changed, so the model's vectors stay.
    /// After each page of `RESTATIC_PAGE` chunks `go_on(done, of)` hears how
    /// far it is; when it answers false the transaction is rolled back and
    /// None returned.
    /// An interrupted call leaves the old vectors and meta, and the next run
    /// does it again. Returns how many chunks it gave new vectors.
    fn restatic(
        &mut self,
        meta: &IndexMeta,
        embed: &mut dyn FnMut(&str, &str) -> Vec<f32>,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Option<u64>, StoreError>;
    /// Record that the index was checked here: a run over the whole project
    /// read every file whose stamps changed since it stored it, and checked
    /// what it keeps of each (`index::kept`).
    fn mark_checked_here(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Record the size of the vectors the index holds.
    fn set_dims(&mut self, dims: usize) -> Result<(), StoreError> {
        self.set_meta_value("dims", &dims.to_string())
    }
    /// Apply one batch at once: new content for some files, new stat data
    /// for files whose content did not change, and removals. A file written
    /// again as it is stored but with the model's vectors its chunks lacked
    /// (a fill) has them stored into its rows: the chunks keep their ids,
    /// words and static vectors, and the word generation stays (so a
    /// searcher holding the vectors stored so far catches up by id,
    /// `live::Filled`).
    fn write_batch(
        &mut self,
        writes: &[FileWrite],
        touches: &[(String, FileState)],
        removals: &[String],
    ) -> Result<(), StoreError>;
    /// Tidy the word index after a run that changed it.
    fn compact_words(&self) -> Result<(), StoreError>;
    /// At the end of every run: bring up to date what an index keeps so
    /// that a one-shot search need not read everything (SQLite: the
    /// vectors' sign codes; Postgres: each word term's chunk count and
    /// bounds; each rebuilt when behind the index, which an older vecgrep
    /// may leave them). Postgres searches vectors through an HNSW index,
    /// built by `compact_words`.
    fn refresh_search_aids(&self) -> Result<(), StoreError>;
    /// At the end of every run: give the disk back the space of what was
    /// deleted when it is a large share of the index; true when it did.
    /// Never an error: a file left as it was (a disk too full for the
    /// rewrite) is whole, only larger than it needs to be.
    fn give_back_space(&self) -> bool;
    /// Keep `job` (replacing what was kept under its id), and of the others
    /// the latest `KEPT_JOBS`. Rebuilding the index keeps its jobs.
    fn put_index_job(&mut self, job: &IndexJob) -> Result<(), StoreError>;
    /// Mark every job still running as failed, for `reason` (the server that
    /// ran them stopped); returns how many.
    fn fail_running_jobs(&mut self, reason: &str, now_ms: i64) -> Result<u64, StoreError>;
}

/// The meta key of `IndexReader::generated_checked_under`.
const GENERATED_CHECKED_UNDER: &str = "generated_checked_under";

/// The generation a new index starts at: the time in milliseconds, so that
/// an index removed and made again (`--clear-cache`, a damaged one rebuilt)
/// never reaches a generation that a server holding the old one's vectors
/// or words has seen.
pub(crate) fn first_generation() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX / 2)
}
