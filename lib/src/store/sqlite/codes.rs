//! Sign codes of a large index's vectors (`store::SignCodes`), kept in the
//! index beside the chunks, so that a one-shot search reads 64 bytes a
//! vector instead of every chunk's row: the exact scan of a million chunks
//! read 4 GB and took 1.3 s (bench/scale.sh). The model's vectors and the
//! static tier's have codes of their own (`Coded`), in tables of their own,
//! kept alike: a new question on a large index not yet embedded ranks by
//! the static vectors, whose scan took 210 ms at 70k chunks.
//!
//! The codes are packed into blocks of `BLOCK_ENTRIES` (id, file id, code),
//! behind block 0, the mean the signs are taken about. Every write that
//! adds vectors appends their codes in its own transaction, so the codes
//! follow the chunks without a rebuild; meta 'codes_generation' (for the
//! static codes 'static_codes_generation') says which
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
use crate::store::{finite_cosine, ChunkId, IndexReader, Scope, SignCodes, StoreError};

/// The tables of the codes, added within schema 5 (an index opened for
/// writing gains them; without them, searches scan every row), and the
/// chunks without a static vector, so that counting those with one does
/// not read every row (as `chunks_unembedded` does for the model's).
pub(super) const SCHEMA_CODES: &str = "
CREATE TABLE IF NOT EXISTS vector_codes (block INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS static_codes (block INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_without_static ON chunks(id) WHERE static_embedding IS NULL;
";

/// Which of a chunk's vectors a set of codes stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Coded {
    /// The model's vectors (`chunks.embedding`).
    Model,
    /// The static tier's (`chunks.static_embedding`).
    Static,
}

/// Where the codes of a kind, and its vectors, are kept.
struct Names {
    /// The chunks' column of the vectors.
    column: &'static str,
    table: &'static str,
    /// Meta: the generation the codes cover.
    generation_key: &'static str,
    /// Meta: how many entries the blocks hold, removed chunks' included.
    entries_key: &'static str,
    /// What `--verify` calls the vectors.
    what: &'static str,
}

impl Coded {
    pub(super) const BOTH: [Coded; 2] = [Coded::Model, Coded::Static];

    fn names(self) -> &'static Names {
        match self {
            Coded::Model => &Names {
                column: "embedding",
                table: "vector_codes",
                generation_key: "codes_generation",
                entries_key: "codes_entries",
                what: "vectors",
            },
            Coded::Static => &Names {
                column: "static_embedding",
                table: "static_codes",
                generation_key: "static_codes_generation",
                entries_key: "static_codes_entries",
                what: "static vectors",
            },
        }
    }

    /// The chunks' column of these vectors.
    pub(super) fn column(self) -> &'static str {
        self.names().column
    }

    fn table(self) -> &'static str {
        self.names().table
    }

    fn generation_key(self) -> &'static str {
        self.names().generation_key
    }

    fn entries_key(self) -> &'static str {
        self.names().entries_key
    }

    fn what(self) -> &'static str {
        self.names().what
    }

    /// SQL that drops these codes and what meta says of them.
    fn drop_sql(self) -> String {
        let Names { table, generation_key, entries_key, .. } = self.names();
        format!("DELETE FROM {table}; DELETE FROM meta WHERE key IN ('{generation_key}', '{entries_key}');")
    }

    /// What a reset empties: every kind's codes.
    pub(super) fn reset_sql() -> String {
        Coded::BOTH.iter().map(|k| k.drop_sql()).collect()
    }
}

/// Indexes with at least this many vectors of a kind keep codes of that
/// kind (and a server ranks a table of them in two passes,
/// `search::VectorTable`): below it the exact scan takes under 50 ms.
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
fn stored_mean(conn: &rusqlite::Connection, kind: Coded) -> rusqlite::Result<Option<Vec<f32>>> {
    let sql = format!("SELECT data FROM {} WHERE block = 0", kind.table());
    let blob: Option<Vec<u8>> = conn.query_row(&sql, [], |r| r.get(0)).optional()?;
    Ok(blob.map(|b| blob_floats(&b).collect()))
}

/// Append the entries of `vectors` to the blocks, the last one first.
fn append(
    tx: &rusqlite::Connection,
    kind: Coded,
    signs: &mut SignCodes,
    vectors: &[NewVector<'_>],
) -> rusqlite::Result<()> {
    let entry = ENTRY_HEAD + signs.code_size();
    let table = kind.table();
    let last: Option<(i64, Vec<u8>)> = tx
        .query_row(&format!("SELECT block, data FROM {table} WHERE block > 0 ORDER BY block DESC LIMIT 1"), [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let (mut block, mut data) = last.unwrap_or((1, Vec::new()));
    let mut put = tx.prepare_cached(&format!("INSERT OR REPLACE INTO {table} (block, data) VALUES (?1, ?2)"))?;
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

/// After a write that bumped the generation in `tx`: when the `kind` codes
/// covered the state before it, append those of `vectors` (the write's new
/// vectors of that kind) and say they cover this one too; otherwise leave
/// them behind (`refresh_codes` rebuilds).
pub(super) fn follow_write(tx: &Transaction<'_>, kind: Coded, vectors: &[NewVector<'_>]) -> rusqlite::Result<()> {
    let generation = meta_i64(tx, "generation")?.unwrap_or(0);
    if meta_i64(tx, kind.generation_key())? != Some(generation - 1) {
        return Ok(());
    }
    if !vectors.is_empty() {
        let Some(mean) = stored_mean(tx, kind)? else { return Ok(()) };
        // Vectors of another size than the codes' (another model's, written
        // without a reset): left behind, for the end of the run to rebuild.
        if vectors.iter().any(|v| v.vector.len() != mean.len()) {
            return Ok(());
        }
        append(tx, kind, &mut SignCodes::about(mean), vectors)?;
        add_to_meta(tx, kind.entries_key(), vectors.len() as i64)?;
    }
    set_meta(tx, kind.generation_key(), generation)
}

impl SqliteIndex {
    /// At the end of an index run: an index of `CODES_FROM` vectors of a
    /// kind or more gets codes of that kind that cover it, rebuilt (about
    /// the vectors' mean as it is now) when they are behind it or when
    /// removed chunks' codes make up a fifth of them; a smaller one has
    /// none. One transaction each: a kill leaves the codes as they were.
    pub(super) fn refresh_codes(&self) -> Result<(), StoreError> {
        Coded::BOTH.iter().try_for_each(|&kind| self.refresh_codes_from(kind, CODES_FROM))
    }

    /// `refresh_codes` of one kind, with codes for `at_least` vectors or more.
    fn refresh_codes_from(&self, kind: Coded, at_least: u64) -> Result<(), StoreError> {
        // From the partial indexes of the chunks without (not `counts()`,
        // whose static tallies read every row: ~20 ms on tokio's 12k chunks,
        // at the end of every index run).
        let vectors = self.count_with_vector(kind.column())?;
        let damaged = |e| self.damaged(e);
        let tx = self.conn.unchecked_transaction().map_err(damaged)?;
        let (table, generation_key, entries_key) = (kind.table(), kind.generation_key(), kind.entries_key());
        if vectors < at_least {
            // Most indexes never had codes: no write for them.
            if meta_i64(&tx, entries_key).map_err(damaged)?.is_none() {
                return Ok(());
            }
            tx.execute_batch(&kind.drop_sql()).map_err(damaged)?;
            return tx.commit().map_err(damaged);
        }
        let generation = meta_i64(&tx, "generation").map_err(damaged)?;
        let entries = meta_i64(&tx, entries_key).map_err(damaged)?.unwrap_or(0).max(0) as u64;
        // Every vector has a code when they cover the index, so there are at
        // least as many; and they are of the vectors' size.
        let covered = meta_i64(&tx, generation_key).map_err(damaged)? == generation
            && entries >= vectors
            && stored_mean(&tx, kind).map_err(damaged)?.map(|m| m.len()) == self.vector_size(kind)?;
        if covered && entries * 4 <= vectors * 5 {
            return Ok(());
        }
        // Taken anew: the vectors may be another model's by now, or many more.
        let mean = self.vector_mean(kind)?;
        tx.execute(&format!("DELETE FROM {table}"), []).map_err(damaged)?;
        tx.execute(&format!("INSERT INTO {table} (block, data) VALUES (0, ?1)"), [super::vector_to_blob(&mean)])
            .map_err(damaged)?;
        let written = self.append_every_vector(&tx, kind, SignCodes::about(mean)).map_err(damaged)?;
        set_meta(&tx, entries_key, written).map_err(damaged)?;
        set_meta(&tx, generation_key, generation.unwrap_or(0)).map_err(damaged)?;
        tx.commit().map_err(damaged)
    }

    /// Append the code of every stored vector of `kind`, by chunk id, a
    /// block at a time; returns how many.
    fn append_every_vector(&self, tx: &Transaction<'_>, kind: Coded, mut signs: SignCodes) -> rusqlite::Result<i64> {
        let column = kind.column();
        let mut rows =
            tx.prepare(&format!("SELECT id, file_id, {column} FROM chunks WHERE {column} IS NOT NULL ORDER BY id"))?;
        let mut rows = rows.query([])?;
        let mut batch: Vec<(ChunkId, i64, Vec<f32>)> = Vec::with_capacity(BLOCK_ENTRIES);
        let mut written = 0i64;
        loop {
            let row = rows.next()?;
            if let Some(row) = row {
                let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
                batch.push((row.get(0)?, row.get(1)?, blob_floats(blob).collect()));
            }
            if batch.len() == BLOCK_ENTRIES || (row.is_none() && !batch.is_empty()) {
                let new: Vec<NewVector<'_>> =
                    batch.iter().map(|(id, file_id, v)| NewVector { id: *id, file_id: *file_id, vector: v }).collect();
                append(tx, kind, &mut signs, &new)?;
                written += new.len() as i64;
                batch.clear();
            }
            if row.is_none() {
                return Ok(written);
            }
        }
    }

    /// How many components the vectors of `kind` have, from one of them.
    fn vector_size(&self, kind: Coded) -> Result<Option<usize>, StoreError> {
        let column = kind.column();
        self.conn
            .query_row(
                &format!("SELECT length({column}) / 4 FROM chunks WHERE {column} IS NOT NULL LIMIT 1"),
                [],
                |r| r.get::<_, i64>(0),
            )
            .optional()
            .map(|n| n.map(|n| n.max(0) as usize))
            .map_err(|e| self.damaged(e))
    }

    /// The mean of every vector of `kind`, in one pass over the rows.
    fn vector_mean(&self, kind: Coded) -> Result<Vec<f32>, StoreError> {
        let damaged = |e| self.damaged(e);
        let column = kind.column();
        let mut stmt =
            self.conn.prepare(&format!("SELECT {column} FROM chunks WHERE {column} IS NOT NULL")).map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        let (mut sum, mut count) = (Vec::<f64>::new(), 0usize);
        while let Some(row) = rows.next().map_err(damaged)? {
            let blob = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
            // A damaged vector (`--verify` counts them) would make every code alike.
            if !blob_floats(blob).all(f32::is_finite) {
                continue;
            }
            sum.resize(sum.len().max(blob.len() / 4), 0.0);
            for (s, x) in sum.iter_mut().zip(blob_floats(blob)) {
                *s += f64::from(x);
            }
            count += 1;
        }
        Ok(sum.iter().map(|s| (s / count.max(1) as f64) as f32).collect())
    }

    /// The codes of `kind`, if they cover the index as this connection reads it now.
    fn current_codes(&self, kind: Coded) -> Result<Option<Codes>, StoreError> {
        let damaged = |e| self.damaged(e);
        if !self.has_table(kind.table())?
            || meta_i64(&self.conn, kind.generation_key()).map_err(damaged)? != Some(self.generation()?)
        {
            return Ok(None);
        }
        let mut stmt =
            self.conn.prepare(&format!("SELECT block, data FROM {} ORDER BY block", kind.table())).map_err(damaged)?;
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

    /// What `--verify` finds wrong with the codes: for each kind that says
    /// it covers the index, how many of its vectors lack a code.
    pub(super) fn codes_problems(&self) -> Result<Vec<String>, StoreError> {
        let mut problems = Vec::new();
        for kind in Coded::BOTH {
            let uncoded = self.vectors_without_codes(kind)?;
            if uncoded > 0 {
                let what = kind.what();
                problems.push(format!("{uncoded} {what} have no sign code, though the codes say they cover the index"));
            }
        }
        Ok(problems)
    }

    /// How many chunks with a vector of `kind` its codes lack, when they
    /// say they cover the index; 0 when they do not say so.
    fn vectors_without_codes(&self, kind: Coded) -> Result<u64, StoreError> {
        let Some(codes) = self.current_codes(kind)? else { return Ok(0) };
        // By id and file: a removed chunk's code under an id used again
        // (SQLite reuses the highest) does not stand for the new chunk.
        let coded: HashSet<(ChunkId, i64)> = codes.ids.into_iter().zip(codes.files).collect();
        let damaged = |e| self.damaged(e);
        let column = kind.column();
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT id, file_id FROM chunks WHERE {column} IS NOT NULL"))
            .map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        let mut missing = 0;
        while let Some(row) = rows.next().map_err(damaged)? {
            missing += u64::from(!coded.contains(&(row.get(0)?, row.get(1)?)));
        }
        Ok(missing)
    }

    /// The chunks in `scope` nearest `query` by their vectors of `kind`,
    /// found through the codes (three passes), best first, at most
    /// `limit`; None when there are no codes covering the index as it is now.
    pub(super) fn nearest_by_codes(
        &self,
        kind: Coded,
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Option<Vec<(ChunkId, f32)>>, StoreError> {
        let Some(codes) = self.current_codes(kind)? else { return Ok(None) };
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
        Ok(Some(self.exact_order(kind, &best, query, scope, limit)?))
    }

    /// `ids` by sqlite-vec's cosine of their `kind` vectors to `query`, as
    /// the exact scan orders them (ties by path and line), those gone or
    /// out of scope left out.
    fn exact_order(
        &self,
        kind: Coded,
        ids: &[ChunkId],
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        let damaged = |e| self.damaged(e);
        let column = kind.column();
        let mut find = self
            .conn
            .prepare_cached(&format!(
                "SELECT 1.0 - vec_distance_cosine(c.{column}, ?2), f.path, c.start_line
                 FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1 AND c.{column} IS NOT NULL"
            ))
            .map_err(damaged)?;
        let query = super::vector_to_blob(query);
        let mut scored: Vec<(f64, String, i64, ChunkId)> = Vec::with_capacity(ids.len());
        for &id in ids {
            let row = find
                .query_row(params![id, query], |r| Ok((r.get(0)?, r.get::<_, String>(1)?, r.get(2)?)))
                .optional()
                .map_err(damaged)?;
            if let Some((Some(score), path, line)) = row.map(|(s, p, l)| (finite_cosine(s), p, l)) {
                if scope.admits(&path) {
                    scored.push((score, path, line, id));
                }
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

        /// A file of `chunks` chunks, each with a vector of `kind` only.
        fn file(&mut self, kind: Coded, rel: &str, chunks: usize) -> FileWrite {
            let chunks = (0..chunks)
                .map(|i| {
                    let vector = Some(self.next());
                    let (vector, static_vector) = match kind {
                        Coded::Model => (vector, None),
                        Coded::Static => (None, vector),
                    };
                    ChunkWrite {
                        chunk: crate::chunk::Chunk { start_line: i + 1, end_line: i + 1, text: format!("chunk {i}") },
                        vector,
                        static_vector,
                        around: String::new(),
                        embed_key: [0; 16],
                        names: String::new(),
                        words: String::new(),
                    }
                })
                .collect::<Vec<_>>();
            let state = FileState { size: 1, mtime_ns: 1, hash: crate::store::content_hash(rel, &chunks), ctime_ns: 1 };
            FileWrite { rel: rel.into(), state, chunks, copied: 0, tokens: 0, pending: 0 }
        }
    }

    fn scope(prefix: &str) -> Scope {
        Scope { prefixes: vec![prefix.to_string()], files: None }
    }

    /// The codes of `kind` answer as the exact scan does (every vector is
    /// a candidate at this size), in the whole index and under `d1`, and
    /// so does the store's ranking of that kind.
    fn assert_codes_answer_as_the_scan(store: &SqliteIndex, kind: Coded, random: &mut RandomVectors) {
        for _ in 0..5 {
            let query = random.next();
            for scope in [scope(""), scope("d1")] {
                let by_codes =
                    store.nearest_by_codes(kind, &query, &scope, 10).unwrap().expect("the codes cover the index");
                assert_eq!(by_codes, store.nearest_by(kind.column(), &query, &scope, 10).unwrap());
                assert_eq!(by_codes, store.nearest_of(kind, &query, &scope, 10).unwrap());
                assert_eq!(by_codes.len(), 10);
            }
        }
    }

    fn entries(store: &SqliteIndex, kind: Coded) -> Option<i64> {
        meta_i64(&store.conn, kind.entries_key()).unwrap()
    }

    #[test]
    fn codes_answer_as_the_exact_scan_and_follow_every_write() {
        for kind in Coded::BOTH {
            let dir = tempfile::tempdir().unwrap();
            let mut store = empty_store(dir.path());
            let mut random = RandomVectors(0x2545f4914f6cdd1d);
            let files: Vec<FileWrite> =
                (0..30).map(|f| random.file(kind, &format!("d{}/f{f}.rs", f % 3), 10)).collect();
            store.write_batch(&files, &[], &[]).unwrap();
            let none = store.nearest_by_codes(kind, &random.next(), &scope(""), 10).unwrap();
            assert_eq!(none, None, "{kind:?}: none before a run's end");
            store.refresh_codes_from(kind, 1).unwrap();
            assert_eq!(entries(&store, kind), Some(300));
            assert_codes_answer_as_the_scan(&store, kind, &mut random);
            // A file rewritten, one removed, a chunk without a vector of this
            // kind given one (its file rewritten): the codes follow.
            let mut later = random.file(kind, "d1/late.rs", 2);
            let kept = later.chunks[0].clone();
            (later.chunks[1].vector, later.chunks[1].static_vector) = (None, None);
            store.write_batch(&[random.file(kind, "d1/f1.rs", 4), later], &[], &["d2/f2.rs".into()]).unwrap();
            assert_eq!(entries(&store, kind), Some(305));
            assert_codes_answer_as_the_scan(&store, kind, &mut random);
            let mut later = random.file(kind, "d1/late.rs", 2);
            let filled = later.chunks[1].vector.clone().or(later.chunks[1].static_vector.clone()).unwrap();
            later.chunks[0] = kept;
            store.write_batch(&[later], &[], &[]).unwrap();
            let unfilled = store.nearest_by_codes(kind, &filled, &scope("d1"), 1).unwrap().unwrap()[0].0;
            assert_eq!(store.chunk(unfilled).unwrap().unwrap().file, "d1/late.rs");
            // A change the codes did not follow: the scan answers until a run's end rebuilds them.
            store.conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'", []).unwrap();
            assert_eq!(store.nearest_by_codes(kind, &filled, &scope(""), 10).unwrap(), None);
            assert_eq!(store.nearest_of(kind, &filled, &scope(""), 1).unwrap()[0].0, unfilled);
            store.refresh_codes_from(kind, 1).unwrap();
            assert_eq!(entries(&store, kind), Some(286), "{kind:?}: rebuilt from the rows");
            assert_codes_answer_as_the_scan(&store, kind, &mut random);
            assert_eq!(store.vectors_without_codes(kind).unwrap(), 0);
            // A vector put in behind the codes' back, as they still say they cover it: --verify tells.
            store.conn.execute(&format!("DELETE FROM {} WHERE block = 1", kind.table()), []).unwrap();
            assert_eq!(store.vectors_without_codes(kind).unwrap(), 286);
            let problem = format!("286 {} have no sign code", kind.what());
            assert!(store.check().unwrap().1.iter().any(|p| p.contains(&problem)), "{kind:?}");
        }
    }

    #[test]
    fn a_damaged_vector_leaves_the_codes_mean_as_the_others_make_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let mut random = RandomVectors(0x9e3779b97f4a7c15);
        let files: Vec<FileWrite> = (0..4).map(|f| random.file(Coded::Model, &format!("f{f}.rs"), 5)).collect();
        store.write_batch(&files, &[], &[]).unwrap();
        let mean = store.vector_mean(Coded::Model).unwrap();
        // One more chunk, all NaN: right-sized, so only its numbers are wrong.
        store.write_batch(&[random.file(Coded::Model, "g.rs", 1)], &[], &[]).unwrap();
        let nan = f32::NAN.to_le_bytes().repeat(mean.len());
        let sql = "UPDATE chunks SET embedding = ?1 WHERE file_id = (SELECT id FROM files WHERE path = 'g.rs')";
        assert_eq!(store.conn.execute(sql, [nan]).unwrap(), 1);
        assert_eq!(store.vector_mean(Coded::Model).unwrap(), mean);
    }

    #[test]
    fn a_fill_of_the_models_vectors_leaves_the_static_codes_covering_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let mut random = RandomVectors(0x9e3779b97f4a7c15);
        let files: Vec<FileWrite> =
            (0..20).map(|f| random.file(Coded::Static, &format!("d{}/f{f}.rs", f % 2), 10)).collect();
        store.write_batch(&files, &[], &[]).unwrap();
        store.refresh_codes().unwrap();
        store.refresh_codes_from(Coded::Static, 1).unwrap();
        assert_eq!((entries(&store, Coded::Model), entries(&store, Coded::Static)), (None, Some(200)));
        // The same files with the model's vectors: stored into their rows, ids kept.
        let filled: Vec<FileWrite> = files
            .iter()
            .map(|f| FileWrite {
                rel: f.rel.clone(),
                state: f.state.clone(),
                chunks: f.chunks.iter().map(|c| ChunkWrite { vector: Some(random.next()), ..c.clone() }).collect(),
                copied: 0,
                tokens: 0,
                pending: 0,
            })
            .collect();
        store.write_batch(&filled[..10], &[], &[]).unwrap();
        assert_eq!(store.vector_counts().unwrap().vectors, 100, "a fill");
        assert_eq!(entries(&store, Coded::Static), Some(200), "no static vector was written");
        assert_codes_answer_as_the_scan(&store, Coded::Static, &mut random);
        // A restatic rewrites every static vector: the scan answers until a run's end.
        store.conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'", []).unwrap();
        assert_eq!(store.nearest_by_codes(Coded::Static, &random.next(), &scope(""), 3).unwrap(), None);
        store.refresh_codes_from(Coded::Static, 1).unwrap();
        assert_codes_answer_as_the_scan(&store, Coded::Static, &mut random);
    }

    #[test]
    fn vectors_of_another_size_leave_the_codes_behind_until_a_rebuild_takes_them() {
        for kind in Coded::BOTH {
            let dir = tempfile::tempdir().unwrap();
            let mut store = empty_store(dir.path());
            let mut random = RandomVectors(11);
            store.write_batch(&[random.file(kind, "d1/a.rs", 20)], &[], &[]).unwrap();
            store.refresh_codes_from(kind, 1).unwrap();
            // Another model's vectors, written as an older vecgrep would after its reset (which kept the codes).
            store.conn.execute_batch("DELETE FROM chunks_fts; DELETE FROM chunks; DELETE FROM files;").unwrap();
            let mut other = random.file(kind, "d1/b.rs", 20);
            for c in &mut other.chunks {
                let small = Some(random.of_size(16));
                match kind {
                    Coded::Model => c.vector = small,
                    Coded::Static => c.static_vector = small,
                }
            }
            store.write_batch(&[other], &[], &[]).unwrap();
            let query = random.of_size(16);
            let stale = store.nearest_by_codes(kind, &query, &scope(""), 3).unwrap();
            assert_eq!(stale, None, "{kind:?}: the codes no longer cover the index");
            store.refresh_codes_from(kind, 1).unwrap();
            assert_eq!(stored_mean(&store.conn, kind).unwrap().map(|m| m.len()), Some(16));
            assert_eq!(
                store.nearest_by_codes(kind, &query, &scope(""), 3).unwrap().unwrap(),
                store.nearest_by(kind.column(), &query, &scope(""), 3).unwrap()
            );
        }
    }

    #[test]
    fn removed_chunks_codes_are_dropped_once_they_are_a_fifth_and_small_indexes_keep_none() {
        for kind in Coded::BOTH {
            let dir = tempfile::tempdir().unwrap();
            let mut store = empty_store(dir.path());
            let mut random = RandomVectors(7);
            let files: Vec<FileWrite> =
                (0..20).map(|f| random.file(kind, &format!("d{}/f{f}.rs", f % 2), 10)).collect();
            store.write_batch(&files, &[], &[]).unwrap();
            store.refresh_codes_from(kind, 1).unwrap();
            store.write_batch(&[], &[], &["d0/f0.rs".into(), "d1/f1.rs".into(), "d0/f2.rs".into()]).unwrap();
            store.refresh_codes_from(kind, 1).unwrap();
            assert_eq!(entries(&store, kind), Some(200), "{kind:?}: 30 of 170 live vectors: kept");
            assert_codes_answer_as_the_scan(&store, kind, &mut random);
            store.write_batch(&[], &[], &["d1/f3.rs".into(), "d0/f4.rs".into()]).unwrap();
            store.refresh_codes_from(kind, 1).unwrap();
            assert_eq!(entries(&store, kind), Some(150), "{kind:?}: 50 of 150: rebuilt");
            assert_codes_answer_as_the_scan(&store, kind, &mut random);
            store.refresh_codes_from(kind, 151).unwrap();
            let none = store.nearest_by_codes(kind, &random.next(), &scope(""), 3).unwrap();
            assert_eq!((entries(&store, kind), none), (None, None));
            store.refresh_codes_from(kind, 1).unwrap();
            store.reset(&crate::store::IndexMeta::for_tests()).unwrap();
            let blocks: i64 =
                store.conn.query_row(&format!("SELECT count(*) FROM {}", kind.table()), [], |r| r.get(0)).unwrap();
            assert_eq!((blocks, entries(&store, kind)), (0, None), "{kind:?}: a reset empties them");
        }
    }
}
