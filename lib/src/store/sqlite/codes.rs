//! Sign codes of a large index's vectors (`store::SignCodes`), kept in the
//! index beside the chunks, so that a one-shot search reads 64 bytes a
//! vector instead of every chunk's row: the exact scan of a million chunks
//! read 4 GB and took 1.3 s (bench/scale.sh).
//!
//! The codes are packed into blocks of `BLOCK_ENTRIES` (id, file id, code),
//! behind block 0, the mean the signs are taken about. Every write that
//! adds vectors appends their codes in its own transaction, so the codes
//! follow the chunks without a rebuild; meta 'codes_generation' says which
//! state of the index they cover, and a search uses them only when that
//! is the state it reads. Removed chunks leave their codes behind until the
//! end of a run rebuilds the blocks (`refresh_codes`): a search reads each
//! candidate's vector from its row anyway, and one gone is skipped. A write
//! that does not append (a reset, a change made by an older vecgrep) leaves
//! the codes behind the index, and searches scan every row until the next
//! run rebuilds them.
//!
//! A search by the codes takes three passes: the Hamming distance keeps as
//! many candidates as the server's two passes do (`search::VectorTable`),
//! the sign estimates keep a thousand of them (`ESTIMATED_AT_LEAST`), and
//! sqlite-vec's cosine of those, read from their rows, orders them as the
//! exact scan would.

use std::collections::HashSet;

use rusqlite::{params, OptionalExtension, Transaction};

use super::{add_to_meta, blob_floats, SqliteIndex};
use crate::store::{ChunkId, IndexReader, Scope, SignCodes, StoreError};

/// The table of the codes, added within schema 5 (an index opened for
/// writing gains it; without it, searches scan every row).
pub(super) const SCHEMA_CODES: &str =
    "CREATE TABLE IF NOT EXISTS vector_codes (block INTEGER PRIMARY KEY, data BLOB NOT NULL);";

/// Indexes with at least this many of the model's vectors keep codes (and
/// a server ranks its vectors in two passes, `search::VectorTable`): below
/// it the exact scan takes under 50 ms.
pub const CODES_FROM: u64 = 50_000;

/// How many candidates the Hamming pass keeps: `limit` × the first, at
/// least the second, and at least 1/the third of the vectors. The same for
/// the server's first pass (`search::VectorTable`), measured there.
const FIRST_PASS: (usize, usize, usize) = (20, 2_000, 25);

/// How many of those the estimate pass keeps for their rows to be read:
/// `limit` × this, at least `ESTIMATED_AT_LEAST`: as good as the exact
/// cosine of the whole first pass (bench/TUNING.md, examples/two_passes.rs).
const ESTIMATED_PER_RESULT: usize = 10;
const ESTIMATED_AT_LEAST: usize = 1_000;

/// Entries in a block (128 KB); the last block is rewritten whole when
/// codes are appended to it, so each write adds at most that much.
const BLOCK_ENTRIES: usize = 2_048;

/// Bytes of an entry's id and file id, before its code.
const ENTRY_HEAD: usize = 16;

/// How many candidates a Hamming pass keeps among `count` vectors for
/// `limit` results, here and in a server's table.
pub fn first_pass_size(count: usize, limit: usize) -> usize {
    let (per_result, at_least, share) = FIRST_PASS;
    limit.saturating_mul(per_result).max(at_least).max(count / share)
}

/// A vector that has just been written, for its code.
pub(super) struct NewVector<'a> {
    pub(super) id: ChunkId,
    pub(super) file_id: i64,
    pub(super) vector: &'a [f32],
}

/// The codes as a search reads them.
struct Codes {
    ids: Vec<ChunkId>,
    files: Vec<i64>,
    signs: SignCodes,
}

/// Read a meta counter inside `tx`.
fn meta_i64(tx: &rusqlite::Connection, key: &str) -> rusqlite::Result<Option<i64>> {
    Ok(tx
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get::<_, String>(0))
        .optional()?
        .and_then(|v| v.parse().ok()))
}

fn set_meta(tx: &rusqlite::Connection, key: &str, value: i64) -> rusqlite::Result<()> {
    tx.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", params![key, value.to_string()])?;
    Ok(())
}

/// The mean of block 0, if there are codes.
fn stored_mean(conn: &rusqlite::Connection) -> rusqlite::Result<Option<Vec<f32>>> {
    let blob: Option<Vec<u8>> =
        conn.query_row("SELECT data FROM vector_codes WHERE block = 0", [], |r| r.get(0)).optional()?;
    Ok(blob.map(|b| blob_floats(&b).collect()))
}

/// Append the entries of `vectors` to the blocks, the last one first.
fn append(tx: &rusqlite::Connection, signs: &mut SignCodes, vectors: &[NewVector<'_>]) -> rusqlite::Result<()> {
    let entry = ENTRY_HEAD + signs.code_size();
    let last: Option<(i64, Vec<u8>)> = tx
        .query_row("SELECT block, data FROM vector_codes WHERE block > 0 ORDER BY block DESC LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let (mut block, mut data) = last.unwrap_or((1, Vec::new()));
    let mut put = tx.prepare_cached("INSERT OR REPLACE INTO vector_codes (block, data) VALUES (?1, ?2)")?;
    // Whether `data` holds codes not yet written: a full last block is left as it is.
    let mut changed = false;
    for v in vectors {
        if data.len() / entry >= BLOCK_ENTRIES {
            if changed {
                put.execute(params![block, data])?;
            }
            (block, data) = (block + 1, Vec::with_capacity(BLOCK_ENTRIES * entry));
        }
        signs.push(v.vector);
        data.extend_from_slice(&v.id.to_le_bytes());
        data.extend_from_slice(&v.file_id.to_le_bytes());
        data.extend(signs.code_bytes(signs.len() - 1));
        changed = true;
    }
    if changed {
        put.execute(params![block, data])?;
    }
    Ok(())
}

/// After a write that bumped the generation in `tx`: when the codes
/// covered the state before it, append those of `vectors` and say they
/// cover this one too; otherwise leave them behind (`refresh_codes` rebuilds).
pub(super) fn follow_write(tx: &Transaction<'_>, vectors: &[NewVector<'_>]) -> rusqlite::Result<()> {
    let generation = meta_i64(tx, "generation")?.unwrap_or(0);
    if meta_i64(tx, "codes_generation")? != Some(generation - 1) {
        return Ok(());
    }
    if !vectors.is_empty() {
        let Some(mean) = stored_mean(tx)? else { return Ok(()) };
        // Vectors of another size than the codes' (another model's, written
        // without a reset): left behind, for the end of the run to rebuild.
        if vectors.iter().any(|v| v.vector.len() != mean.len()) {
            return Ok(());
        }
        append(tx, &mut SignCodes::about(mean), vectors)?;
        add_to_meta(tx, "codes_entries", vectors.len() as i64)?;
    }
    set_meta(tx, "codes_generation", generation)
}

impl SqliteIndex {
    /// At the end of an index run: an index of `CODES_FROM` vectors or
    /// more gets codes that cover it, rebuilt (about the vectors' mean as
    /// it is now) when they are behind it or when removed chunks' codes
    /// make up a fifth of them; a smaller one has none. One transaction: a
    /// kill leaves the codes as they were.
    pub(super) fn refresh_codes(&self) -> Result<(), StoreError> {
        self.refresh_codes_from(CODES_FROM)
    }

    /// `refresh_codes` with codes for `at_least` vectors or more.
    fn refresh_codes_from(&self, at_least: u64) -> Result<(), StoreError> {
        // Not `counts()`: its static-vector tallies read every chunk's row
        // (~20 ms on tokio's 12k chunks, every index run, a one-shot
        // search's included), and only the model's vectors matter here.
        let vectors = self.vector_count()?;
        let damaged = |e| self.damaged(e);
        let tx = self.conn.unchecked_transaction().map_err(damaged)?;
        if vectors < at_least {
            // Most indexes never had codes: no write for them.
            if meta_i64(&tx, "codes_entries").map_err(damaged)?.is_none() {
                return Ok(());
            }
            tx.execute_batch(
                "DELETE FROM vector_codes; DELETE FROM meta WHERE key IN ('codes_generation', 'codes_entries');",
            )
            .map_err(damaged)?;
            return tx.commit().map_err(damaged);
        }
        let generation = meta_i64(&tx, "generation").map_err(damaged)?;
        let entries = meta_i64(&tx, "codes_entries").map_err(damaged)?.unwrap_or(0).max(0) as u64;
        // Every vector has a code when they cover the index, so there are at
        // least as many; and they are of the vectors' size.
        let covered = meta_i64(&tx, "codes_generation").map_err(damaged)? == generation
            && entries >= vectors
            && stored_mean(&tx).map_err(damaged)?.map(|m| m.len()) == self.vector_size()?;
        if covered && entries * 4 <= vectors * 5 {
            return Ok(());
        }
        // Taken anew: the vectors may be another model's by now, or many more.
        let mean = self.vector_mean()?;
        tx.execute("DELETE FROM vector_codes", []).map_err(damaged)?;
        tx.execute("INSERT INTO vector_codes (block, data) VALUES (0, ?1)", [super::vector_to_blob(&mean)])
            .map_err(damaged)?;
        let mut signs = SignCodes::about(mean);
        let mut written = 0i64;
        {
            let mut rows = tx
                .prepare("SELECT id, file_id, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id")
                .map_err(damaged)?;
            let mut rows = rows.query([]).map_err(damaged)?;
            let mut batch: Vec<(ChunkId, i64, Vec<f32>)> = Vec::with_capacity(BLOCK_ENTRIES);
            loop {
                let row = rows.next().map_err(damaged)?;
                if let Some(row) = row {
                    let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
                    batch.push((row.get(0)?, row.get(1)?, blob_floats(blob).collect()));
                }
                if batch.len() == BLOCK_ENTRIES || (row.is_none() && !batch.is_empty()) {
                    let new: Vec<NewVector<'_>> = batch
                        .iter()
                        .map(|(id, file_id, v)| NewVector { id: *id, file_id: *file_id, vector: v })
                        .collect();
                    append(&tx, &mut signs, &new).map_err(damaged)?;
                    written += new.len() as i64;
                    batch.clear();
                }
                if row.is_none() {
                    break;
                }
            }
        }
        set_meta(&tx, "codes_entries", written).map_err(damaged)?;
        set_meta(&tx, "codes_generation", generation.unwrap_or(0)).map_err(damaged)?;
        tx.commit().map_err(damaged)
    }

    /// How many components the model's vectors have, from one of them.
    fn vector_size(&self) -> Result<Option<usize>, StoreError> {
        self.conn
            .query_row("SELECT length(embedding) / 4 FROM chunks WHERE embedding IS NOT NULL LIMIT 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .map(|n| n.map(|n| n.max(0) as usize))
            .map_err(|e| self.damaged(e))
    }

    /// The mean of every model vector, in one pass over the rows.
    fn vector_mean(&self) -> Result<Vec<f32>, StoreError> {
        let damaged = |e| self.damaged(e);
        let mut stmt =
            self.conn.prepare("SELECT embedding FROM chunks WHERE embedding IS NOT NULL").map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        let (mut sum, mut count) = (Vec::<f64>::new(), 0usize);
        while let Some(row) = rows.next().map_err(damaged)? {
            let blob = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
            sum.resize(sum.len().max(blob.len() / 4), 0.0);
            for (s, x) in sum.iter_mut().zip(blob_floats(blob)) {
                *s += f64::from(x);
            }
            count += 1;
        }
        Ok(sum.iter().map(|s| (s / count.max(1) as f64) as f32).collect())
    }

    /// The codes, if they cover the index as this connection reads it now.
    fn current_codes(&self) -> Result<Option<Codes>, StoreError> {
        let damaged = |e| self.damaged(e);
        if !self.has_table("vector_codes")?
            || meta_i64(&self.conn, "codes_generation").map_err(damaged)? != Some(self.generation()?)
        {
            return Ok(None);
        }
        let mut stmt = self.conn.prepare("SELECT block, data FROM vector_codes ORDER BY block").map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        let mut codes: Option<Codes> = None;
        while let Some(row) = rows.next().map_err(damaged)? {
            let data = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
            let Some(codes) = codes.as_mut() else {
                let signs = SignCodes::about(blob_floats(data).collect());
                codes = Some(Codes { ids: Vec::new(), files: Vec::new(), signs });
                continue;
            };
            let entry = ENTRY_HEAD + codes.signs.code_size();
            for e in data.chunks_exact(entry) {
                let word = |at: usize| i64::from_le_bytes(e[at..at + 8].try_into().unwrap_or_default());
                codes.ids.push(word(0));
                codes.files.push(word(8));
                codes.signs.push_bytes(&e[ENTRY_HEAD..]);
            }
        }
        Ok(codes)
    }

    /// How many chunks with the model's vector the codes lack, when they
    /// say they cover the index (`--verify`); 0 when they do not say so.
    pub(super) fn vectors_without_codes(&self) -> Result<u64, StoreError> {
        let Some(codes) = self.current_codes()? else { return Ok(0) };
        // By id and file: a removed chunk's code under an id used again
        // (SQLite reuses the highest) does not stand for the new chunk.
        let coded: HashSet<(ChunkId, i64)> = codes.ids.into_iter().zip(codes.files).collect();
        let damaged = |e| self.damaged(e);
        let mut stmt =
            self.conn.prepare("SELECT id, file_id FROM chunks WHERE embedding IS NOT NULL").map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        let mut missing = 0;
        while let Some(row) = rows.next().map_err(damaged)? {
            missing += u64::from(!coded.contains(&(row.get(0)?, row.get(1)?)));
        }
        Ok(missing)
    }

    /// The chunks in `scope` nearest `query` by their model vectors, found
    /// through the codes (three passes), best first, at most `limit`; None
    /// when there are no codes covering the index as it is now.
    pub(super) fn nearest_by_codes(
        &self,
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Option<Vec<(ChunkId, f32)>>, StoreError> {
        let Some(codes) = self.current_codes()? else { return Ok(None) };
        if codes.signs.mean().len() != query.len() {
            return Ok(None);
        }
        let admitted = self.admitted_files(scope)?;
        let admits = |i: usize| admitted.as_ref().is_none_or(|files| files.contains(&codes.files[i]));
        let kept = codes.signs.nearest(query, admits, first_pass_size(codes.ids.len(), limit));
        let second = limit.saturating_mul(ESTIMATED_PER_RESULT).max(ESTIMATED_AT_LEAST);
        let mut seen = HashSet::new();
        let best: Vec<ChunkId> = codes
            .signs
            .best_estimates(query, &kept, second)
            .into_iter()
            .map(|i| codes.ids[i])
            .filter(|id| seen.insert(*id))
            .collect();
        Ok(Some(self.exact_order(&best, query, scope, limit)?))
    }

    /// `ids` by sqlite-vec's cosine to `query`, as the exact scan orders
    /// them (ties by path and line), those gone or out of scope left out.
    fn exact_order(
        &self,
        ids: &[ChunkId],
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        let damaged = |e| self.damaged(e);
        let mut find = self
            .conn
            .prepare_cached(
                "SELECT 1.0 - vec_distance_cosine(c.embedding, ?2), f.path, c.start_line
                 FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1 AND c.embedding IS NOT NULL",
            )
            .map_err(damaged)?;
        let query = super::vector_to_blob(query);
        let mut scored: Vec<(f64, String, i64, ChunkId)> = Vec::with_capacity(ids.len());
        for &id in ids {
            let row = find
                .query_row(params![id, query], |r| Ok((r.get::<_, f64>(0)?, r.get::<_, String>(1)?, r.get(2)?)))
                .optional()
                .map_err(damaged)?;
            if let Some((score, path, line)) = row.filter(|r| scope.admits(&r.1)) {
                scored.push((score, path, line, id));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        Ok(scored.into_iter().take(limit).map(|(score, _, _, id)| (id, score as f32)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::empty_store;
    use super::*;
    use crate::store::{ChunkWrite, FileState, FileWrite, IndexReader, IndexWriter};

    /// Unit vectors of the model's size, from a fixed seed.
    struct RandomVectors(u64);

    impl RandomVectors {
        fn next(&mut self) -> Vec<f32> {
            self.of_size(crate::embed::DIMS)
        }

        fn of_size(&mut self, dims: usize) -> Vec<f32> {
            let mut v: Vec<f32> = (0..dims)
                .map(|_| {
                    self.0 ^= self.0 << 13;
                    self.0 ^= self.0 >> 7;
                    self.0 ^= self.0 << 17;
                    (self.0 % 2001) as f32 / 1000.0 - 1.0
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            v
        }

        /// A file of `chunks` chunks, each with a vector.
        fn file(&mut self, rel: &str, chunks: usize) -> FileWrite {
            let chunks = (0..chunks)
                .map(|i| ChunkWrite {
                    chunk: crate::chunk::Chunk { start_line: i + 1, end_line: i + 1, text: format!("chunk {i}") },
                    vector: Some(self.next()),
                    static_vector: None,
                    around: String::new(),
                    embed_key: [0; 16],
                    names: String::new(),
                    words: String::new(),
                })
                .collect::<Vec<_>>();
            let state = FileState { size: 1, mtime_ns: 1, hash: crate::store::content_hash(rel, &chunks) };
            FileWrite { rel: rel.into(), state, chunks, copied: 0, tokens: 0, pending: 0 }
        }
    }

    fn scope(prefix: &str) -> Scope {
        Scope { prefixes: vec![prefix.to_string()], files: None }
    }

    /// The codes answer as the exact scan does (every vector is a
    /// candidate at this size), in the whole index and under `d1`.
    fn assert_codes_answer_as_the_scan(store: &SqliteIndex, random: &mut RandomVectors) {
        for _ in 0..5 {
            let query = random.next();
            for scope in [scope(""), scope("d1")] {
                let by_codes = store.nearest_by_codes(&query, &scope, 10).unwrap().expect("the codes cover the index");
                assert_eq!(by_codes, store.nearest_by("embedding", &query, &scope, 10).unwrap());
                assert_eq!(by_codes.len(), 10);
            }
        }
    }

    fn entries(store: &SqliteIndex) -> Option<i64> {
        meta_i64(&store.conn, "codes_entries").unwrap()
    }

    #[test]
    fn codes_answer_as_the_exact_scan_and_follow_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let mut random = RandomVectors(0x2545f4914f6cdd1d);
        let files: Vec<FileWrite> = (0..30).map(|f| random.file(&format!("d{}/f{f}.rs", f % 3), 10)).collect();
        store.write_batch(&files, &[], &[]).unwrap();
        assert_eq!(store.nearest_by_codes(&random.next(), &scope(""), 10).unwrap(), None, "none before a run's end");
        store.refresh_codes_from(1).unwrap();
        assert_eq!(entries(&store), Some(300));
        assert_codes_answer_as_the_scan(&store, &mut random);
        // A file rewritten, one removed, a chunk's vector filled (its file rewritten): the codes follow.
        let mut later = random.file("d1/late.rs", 2);
        let kept = later.chunks[0].vector.clone();
        later.chunks[1].vector = None;
        store.write_batch(&[random.file("d1/f1.rs", 4), later], &[], &["d2/f2.rs".into()]).unwrap();
        assert_eq!(entries(&store), Some(305));
        assert_codes_answer_as_the_scan(&store, &mut random);
        let filled = random.next();
        let mut later = random.file("d1/late.rs", 2);
        (later.chunks[0].vector, later.chunks[1].vector) = (kept, Some(filled.clone()));
        store.write_batch(&[later], &[], &[]).unwrap();
        let unfilled = store.nearest_by_codes(&filled, &scope("d1"), 1).unwrap().unwrap()[0].0;
        assert_eq!(store.chunk(unfilled).unwrap().unwrap().file, "d1/late.rs");
        // A change the codes did not follow: the scan answers until a run's end rebuilds them.
        store.conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'", []).unwrap();
        assert_eq!(store.nearest_by_codes(&filled, &scope(""), 10).unwrap(), None);
        assert_eq!(store.nearest_chunks(&filled, &scope(""), 1).unwrap()[0].0, unfilled);
        store.refresh_codes_from(1).unwrap();
        assert_eq!(entries(&store), Some(286), "rebuilt from the rows");
        assert_codes_answer_as_the_scan(&store, &mut random);
        assert_eq!(store.vectors_without_codes().unwrap(), 0);
        // A vector put in behind the codes' back, as they still say they cover it: --verify tells.
        store.conn.execute("DELETE FROM vector_codes WHERE block = 1", []).unwrap();
        assert_eq!(store.vectors_without_codes().unwrap(), 286);
        assert!(store.check().unwrap().1.iter().any(|p| p.contains("286 vectors have no sign code")));
    }

    #[test]
    fn vectors_of_another_size_leave_the_codes_behind_until_a_rebuild_takes_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let mut random = RandomVectors(11);
        store.write_batch(&[random.file("d1/a.rs", 20)], &[], &[]).unwrap();
        store.refresh_codes_from(1).unwrap();
        // Another model's vectors, written as an older vecgrep would after its reset (which kept the codes).
        store.conn.execute_batch("DELETE FROM chunks_fts; DELETE FROM chunks; DELETE FROM files;").unwrap();
        let mut other = random.file("d1/b.rs", 20);
        for c in &mut other.chunks {
            c.vector = Some(random.of_size(16));
        }
        store.write_batch(&[other], &[], &[]).unwrap();
        let query = random.of_size(16);
        assert_eq!(store.nearest_by_codes(&query, &scope(""), 3).unwrap(), None, "the codes no longer cover the index");
        store.refresh_codes_from(1).unwrap();
        assert_eq!(stored_mean(&store.conn).unwrap().map(|m| m.len()), Some(16));
        assert_eq!(
            store.nearest_by_codes(&query, &scope(""), 3).unwrap().unwrap(),
            store.nearest_by("embedding", &query, &scope(""), 3).unwrap()
        );
    }

    #[test]
    fn removed_chunks_codes_are_dropped_once_they_are_a_fifth_and_small_indexes_keep_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let mut random = RandomVectors(7);
        let files: Vec<FileWrite> = (0..20).map(|f| random.file(&format!("d{}/f{f}.rs", f % 2), 10)).collect();
        store.write_batch(&files, &[], &[]).unwrap();
        store.refresh_codes_from(1).unwrap();
        store.write_batch(&[], &[], &["d0/f0.rs".into(), "d1/f1.rs".into(), "d0/f2.rs".into()]).unwrap();
        store.refresh_codes_from(1).unwrap();
        assert_eq!(entries(&store), Some(200), "30 of 170 live vectors: kept");
        assert_codes_answer_as_the_scan(&store, &mut random);
        store.write_batch(&[], &[], &["d1/f3.rs".into(), "d0/f4.rs".into()]).unwrap();
        store.refresh_codes_from(1).unwrap();
        assert_eq!(entries(&store), Some(150), "50 of 150: rebuilt");
        assert_codes_answer_as_the_scan(&store, &mut random);
        store.refresh_codes_from(151).unwrap();
        assert_eq!((entries(&store), store.nearest_by_codes(&random.next(), &scope(""), 3).unwrap()), (None, None));
        store.refresh_codes_from(1).unwrap();
        store.reset(&crate::store::IndexMeta::for_tests()).unwrap();
        let blocks: i64 = store.conn.query_row("SELECT count(*) FROM vector_codes", [], |r| r.get(0)).unwrap();
        assert_eq!((blocks, entries(&store)), (0, None), "a reset empties them");
    }
}
