//! The changes an index run makes to an SQLite index (`IndexWriter`), each
//! in one transaction, with the counts kept beside the chunks: the name
//! terms' chunk counts, the generation, and the word rows changed since the
//! word index was last merged.

use rusqlite::{params, CachedStatement, OptionalExtension, Transaction};

use super::codes::{follow_write, Coded, NewVector};
use super::{add_to_meta, vector_to_blob, SqliteIndex};
use crate::store::fill::{self, StoredChunk};
use crate::store::name_counts::NameCounts;
use crate::store::{FileState, FileWrite, IndexJob, IndexMeta, IndexReader, IndexWriter, StoreError};

/// Indexes of up to this many chunks have their word index merged whole
/// after every run that changed it (`compact_words`): about 100–150 ms at
/// this size, against 25–45 ms on tokio's 12k chunks.
const COMPACT_ALWAYS_CHUNKS: u64 = 50_000;

/// A larger word index is merged whole once the rows changed since the last
/// merge reach this fraction (1/N) of its chunks.
const COMPACT_CHANGED_SHARE: u64 = 50;

impl IndexWriter for SqliteIndex {
    fn as_reader(&self) -> &dyn IndexReader {
        self
    }

    fn reset(&mut self, meta: &IndexMeta) -> Result<(), StoreError> {
        reset_in(&mut self.conn, meta).map_err(|e| self.damaged(e))
    }

    fn restatic(
        &mut self,
        meta: &IndexMeta,
        embed: &mut dyn FnMut(&str, &str) -> Vec<f32>,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Option<u64>, StoreError> {
        restatic_in(&mut self.conn, meta, embed, go_on).map_err(|e| self.damaged(e))
    }

    fn mark_checked_here(&mut self) -> Result<(), StoreError> {
        match self.mark_here() {
            Some(here) => self.set_meta_value(super::CHECKED_AS, &here),
            None => Ok(()),
        }
    }

    /// Written only when it changes: a run that found nothing to do set
    /// three values as they were, and a server's refresh every two seconds
    /// wrote 120 KB/s into an idle project's write-ahead log (audit 252).
    fn set_meta_value(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        let damaged = |e| self.damaged(e);
        let same = self.conn.query_row("SELECT value IS ?2 FROM meta WHERE key = ?1", [key, value], |r| r.get(0));
        if !same.optional().map_err(damaged)?.unwrap_or(false) {
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", [key, value]).map_err(damaged)?;
        }
        Ok(())
    }

    fn write_batch(
        &mut self,
        writes: &[FileWrite],
        touches: &[(String, FileState)],
        removals: &[String],
    ) -> Result<(), StoreError> {
        write_batch_in(&mut self.conn, writes, touches, removals).map_err(|e| self.damaged(e))
    }

    /// FTS5 keeps each batch's words as a new segment and a deleted chunk's
    /// words as a tombstone that every search must skip: after a one-file
    /// update of tokio, a word search took 3.5 ms instead of 2.7 ms until
    /// the segments were merged into one ('optimize').
    ///
    /// Merging everything rewrites the whole word index (25–45 ms on
    /// tokio's 12k chunks), so it is done after every changed run only on
    /// indexes of up to `COMPACT_ALWAYS_CHUNKS` chunks. A larger index is
    /// merged whole once the word rows changed since the last merge reach
    /// 1/`COMPACT_CHANGED_SHARE` of its chunks, which keeps the cost per
    /// changed row the same at any size; in between, each run does a bounded
    /// step of incremental merging, which keeps the segments few.
    fn compact_words(&self) -> Result<(), StoreError> {
        self.compact_words_above(COMPACT_ALWAYS_CHUNKS)
    }

    fn refresh_search_aids(&self) -> Result<(), StoreError> {
        self.refresh_codes()
    }

    fn give_back_space(&self) -> bool {
        SqliteIndex::give_back_space(self)
    }

    fn put_index_job(&mut self, job: &IndexJob) -> Result<(), StoreError> {
        self.put_job(job)
    }

    fn fail_running_jobs(&mut self, reason: &str, now_ms: i64) -> Result<u64, StoreError> {
        self.fail_running(reason, now_ms)
    }
}

impl SqliteIndex {
    fn compact_words_above(&self, always: u64) -> Result<(), StoreError> {
        let read = |sql: &str| self.conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map_err(|e| self.damaged(e));
        let changed =
            read("SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'words_changed'), 0)")?;
        let chunks = read("SELECT count(*) FROM chunks")?;
        let whole = chunks as u64 <= always || changed as u64 * COMPACT_CHANGED_SHARE >= chunks as u64;
        let step = if whole {
            "INSERT INTO chunks_fts(chunks_fts) VALUES('optimize');
             INSERT OR REPLACE INTO meta VALUES ('words_changed', '0');"
        } else {
            "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('merge', -16);"
        };
        self.conn.execute_batch(&format!("BEGIN; {step} COMMIT;")).map_err(|e| self.damaged(e))?;
        Ok(())
    }
}

/// `reset`'s transaction, whose SQLite error the caller describes
/// (`SqliteIndex::damaged`): a disk that refuses the write is named with
/// the index's path and the system's reason.
fn reset_in(conn: &mut rusqlite::Connection, meta: &IndexMeta) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM chunks_fts", [])?;
    tx.execute("DELETE FROM chunks", [])?;
    tx.execute("DELETE FROM files", [])?;
    tx.execute("DELETE FROM name_terms", [])?;
    tx.execute_batch(&Coded::reset_sql())?;
    tx.execute("DELETE FROM meta WHERE key IN ('dims', 'named_chunks')", [])?;
    tx.execute("INSERT OR REPLACE INTO meta VALUES ('generated_checked', '1')", [])?;
    for (k, v) in meta.entries() {
        tx.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", params![k, v])?;
    }
    bump_generation(&tx)?;
    tx.commit()?;
    Ok(())
}

/// `restatic`'s transaction, its error described as `reset_in`'s.
fn restatic_in(
    conn: &mut rusqlite::Connection,
    meta: &IndexMeta,
    embed: &mut dyn FnMut(&str, &str) -> Vec<f32>,
    go_on: &mut dyn FnMut(u64, u64) -> bool,
) -> rusqlite::Result<Option<u64>> {
    let tx = conn.transaction()?;
    let of: i64 = tx.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
    let mut done = 0u64;
    {
        // A page at a time by id, so that the chunks are never all in memory
        // and no cursor reads the rows being updated.
        let mut page = tx.prepare(&format!(
            "SELECT id, around, text FROM chunks WHERE id > ?1 ORDER BY id LIMIT {}",
            crate::store::RESTATIC_PAGE
        ))?;
        let mut update = tx.prepare("UPDATE chunks SET static_embedding = ?2 WHERE id = ?1")?;
        let mut after = i64::MIN;
        loop {
            let rows: Vec<(i64, String, String)> =
                page.query_map([after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
            let Some(last) = rows.last() else { break };
            after = last.0;
            for (id, around, text) in &rows {
                update.execute(params![id, super::vector_to_blob(&embed(around, text))])?;
            }
            done += rows.len() as u64;
            if !go_on(done, of as u64) {
                // Dropped uncommitted: rolled back, the old table's vectors stay.
                return Ok(None);
            }
        }
    }
    for (k, v) in meta.entries() {
        tx.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", params![k, v])?;
    }
    bump_generation(&tx)?;
    tx.commit()?;
    Ok(Some(done))
}

/// `write_batch`'s transaction, whose SQLite error the caller describes
/// (`SqliteIndex::damaged`) once the connection is free to ask.
fn write_batch_in(
    conn: &mut rusqlite::Connection,
    writes: &[FileWrite],
    touches: &[(String, FileState)],
    removals: &[String],
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let (added, words_changed) = {
        let mut batch = Batch::prepare(&tx)?;
        for rel in removals {
            batch.remove(rel)?;
        }
        for (rel, state) in touches {
            batch.touch.execute(params![rel, state.size as i64, state.mtime_ns, state.ctime_ns])?;
        }
        for write in writes {
            batch.replace(write)?;
        }
        let words_changed = batch.words_changed > 0;
        (batch.finish()?, words_changed)
    };
    if crate::store::changes_what_searches_hold(writes, removals) {
        bump_generation(&tx)?;
    }
    // Fills leave every chunk row as it was but its vector.
    if !words_changed && !writes.is_empty() {
        add_to_meta(&tx, "wordless_changes", 1)?;
    }
    follow_write(&tx, Coded::Model, &added.vectors)?;
    follow_write(&tx, Coded::Static, &added.statics)?;
    tx.commit()?;
    Ok(())
}

/// One `write_batch` in its transaction: the statements it runs, prepared
/// once, and the counts it changes.
struct Batch<'tx, 'w> {
    tx: &'tx Transaction<'tx>,
    forget_words: CachedStatement<'tx>,
    remove_chunks: CachedStatement<'tx>,
    remove: CachedStatement<'tx>,
    touch: CachedStatement<'tx>,
    find: CachedStatement<'tx>,
    stored_chunks: CachedStatement<'tx>,
    fill_vector: CachedStatement<'tx>,
    drop_words: CachedStatement<'tx>,
    drop_chunks: CachedStatement<'tx>,
    add_words: CachedStatement<'tx>,
    update: CachedStatement<'tx>,
    insert: CachedStatement<'tx>,
    add_chunk: CachedStatement<'tx>,
    /// Word rows deleted and added, for `compact_words`.
    words_changed: usize,
    names: NameCounts,
    /// The vectors the batch stored, for their codes.
    added: AddedVectors<'w>,
}

/// The vectors a batch stored, of each kind (`codes::Coded`).
#[derive(Default)]
struct AddedVectors<'w> {
    /// The model's: chunks written with one, and holes filled.
    vectors: Vec<NewVector<'w>>,
    /// Static: chunks written with one (a fill keeps those it finds).
    statics: Vec<NewVector<'w>>,
}

impl<'tx, 'w> Batch<'tx, 'w> {
    fn prepare(tx: &'tx Transaction<'tx>) -> rusqlite::Result<Self> {
        Ok(Batch {
            tx,
            forget_words: tx.prepare_cached(
                "DELETE FROM chunks_fts WHERE rowid IN (SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1)",
            )?,
            // Its chunks by name, not by the foreign key's cascade: an index
            // made elsewhere may lack the key, and chunks left so took the id
            // of the next file added (review 242).
            remove_chunks: tx
                .prepare_cached("DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE path = ?1)")?,
            remove: tx.prepare_cached("DELETE FROM files WHERE path = ?1")?,
            touch: tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3, ctime_ns = ?4 WHERE path = ?1")?,
            find: tx.prepare_cached("SELECT id, hash FROM files WHERE path = ?1")?,
            stored_chunks: tx.prepare_cached(
                "SELECT id, start_line, end_line, embed_key, names, static_embedding IS NOT NULL, embedding IS NULL,
                        text, around
                 FROM chunks WHERE file_id = ?1 ORDER BY id",
            )?,
            fill_vector: tx.prepare_cached("UPDATE chunks SET embedding = ?2 WHERE id = ?1")?,
            drop_words: tx
                .prepare_cached("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?1)")?,
            drop_chunks: tx.prepare_cached("DELETE FROM chunks WHERE file_id = ?1")?,
            add_words: tx.prepare_cached("INSERT INTO chunks_fts (rowid, terms) VALUES (?1, ?2)")?,
            update: tx.prepare_cached("UPDATE files SET size = ?2, mtime_ns = ?3, hash = ?4, ctime_ns = ?5 WHERE id = ?1")?,
            insert: tx
                .prepare_cached("INSERT INTO files (path, size, mtime_ns, hash, ctime_ns) VALUES (?1, ?2, ?3, ?4, ?5)")?,
            add_chunk: tx.prepare_cached(
                "INSERT INTO chunks (file_id, start_line, end_line, text, embedding, embed_key, names, static_embedding, around)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?,
            words_changed: 0,
            names: NameCounts::default(),
            added: AddedVectors::default(),
        })
    }

    /// Remove a file and its chunks.
    fn remove(&mut self, rel: &str) -> rusqlite::Result<()> {
        self.names.forget_file(self.tx, "f.path = ?1", rel)?;
        self.words_changed += self.forget_words.execute([rel])?;
        self.remove_chunks.execute([rel])?;
        self.remove.execute([rel])?;
        Ok(())
    }

    /// Put a file's new content in place of what it had, if anything.
    fn replace(&mut self, w: &'w FileWrite) -> rusqlite::Result<()> {
        let st = &w.state;
        let found: Option<(i64, Vec<u8>)> = self.find.query_row([&w.rel], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
        if let Some((id, hash)) = &found {
            if *hash == st.hash && self.fill_in_place(*id, w)? {
                return Ok(());
            }
        }
        let id: i64 = match found.map(|f| f.0) {
            Some(id) => {
                self.names.forget_file(self.tx, "f.id = ?1", id)?;
                self.words_changed += self.drop_words.execute([id])?;
                self.drop_chunks.execute([id])?;
                self.update.execute(params![id, st.size as i64, st.mtime_ns, st.hash, st.ctime_ns])?;
                id
            }
            None => {
                self.insert.execute(params![w.rel, st.size as i64, st.mtime_ns, st.hash, st.ctime_ns])?;
                self.tx.last_insert_rowid()
            }
        };
        for c in &w.chunks {
            self.add_chunk.execute(params![
                id,
                c.chunk.start_line as i64,
                c.chunk.end_line as i64,
                c.chunk.text,
                c.vector.as_deref().map(vector_to_blob),
                &c.embed_key[..],
                c.names,
                c.static_vector.as_deref().map(vector_to_blob),
                c.around
            ])?;
            self.names.count(&c.names, 1);
            let chunk = self.tx.last_insert_rowid();
            if let Some(vector) = c.vector.as_deref() {
                self.added.vectors.push(NewVector { id: chunk, file_id: id, vector });
            }
            if let Some(vector) = c.static_vector.as_deref() {
                self.added.statics.push(NewVector { id: chunk, file_id: id, vector });
            }
            self.add_words.execute(params![chunk, c.words])?;
            self.words_changed += 1;
        }
        Ok(())
    }

    /// When the file's chunks are stored already as `w` cuts them (a fill:
    /// the text is the same, only vectors are new), store the vectors they
    /// lacked into their rows and say so; otherwise change nothing
    /// (`store::fill`).
    fn fill_in_place(&mut self, file_id: i64, w: &'w FileWrite) -> rusqlite::Result<bool> {
        let stored: Vec<StoredChunk> = self
            .stored_chunks
            .query_map([file_id], |r| {
                Ok(StoredChunk {
                    id: r.get(0)?,
                    lines: (r.get(1)?, r.get(2)?),
                    embed_key: r.get(3)?,
                    names: r.get(4)?,
                    text: r.get(7)?,
                    around: r.get(8)?,
                    has_static: r.get(5)?,
                    hole: r.get(6)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(holes) = fill::holes_filled(&stored, w) else { return Ok(false) };
        let st = &w.state;
        self.update.execute(params![file_id, st.size as i64, st.mtime_ns, st.hash, st.ctime_ns])?;
        for (s, vector) in holes {
            self.fill_vector.execute(params![s.id, vector_to_blob(vector)])?;
            self.added.vectors.push(NewVector { id: s.id, file_id, vector });
        }
        Ok(true)
    }

    /// Write the counts the batch changed; returns the vectors it stored.
    fn finish(self) -> rusqlite::Result<AddedVectors<'w>> {
        if self.words_changed > 0 {
            add_to_meta(self.tx, "words_changed", self.words_changed as i64)?;
        }
        self.names.write(self.tx)?;
        Ok(self.added)
    }
}

/// Count every change to the chunks, so that a reader holding vectors in
/// memory (`search::VectorTable`) can tell when they are stale.
fn bump_generation(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    add_to_meta(tx, "generation", 1)
}

/// The name counts as SQLite keeps them: `name_terms` and meta 'named_chunks'.
impl NameCounts {
    /// Uncount the names of the chunks of the file `filter` selects (on
    /// `files f`, bound to `value`) before they are deleted.
    fn forget_file(&mut self, tx: &Transaction<'_>, filter: &str, value: impl rusqlite::ToSql) -> rusqlite::Result<()> {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT c.names FROM chunks c JOIN files f ON f.id = c.file_id WHERE {filter} AND c.names != ''"
        ))?;
        let names: Vec<String> = stmt.query_map([value], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        for n in names {
            self.count(&n, -1);
        }
        Ok(())
    }

    fn write(&self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        let mut change = tx.prepare_cached(
            "INSERT INTO name_terms VALUES (?1, ?2) ON CONFLICT(term) DO UPDATE SET chunks = chunks + ?2",
        )?;
        let mut drop_unused = tx.prepare_cached("DELETE FROM name_terms WHERE term = ?1 AND chunks <= 0")?;
        for (term, &delta) in &self.terms {
            if delta != 0 {
                change.execute(params![term, delta])?;
            }
            if delta < 0 {
                drop_unused.execute([term])?;
            }
        }
        if self.named_chunks != 0 {
            add_to_meta(tx, "named_chunks", self.named_chunks)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{empty_store, file_of_words, file_with_names};
    use super::*;
    use crate::store::Scope;

    #[test]
    fn a_restatic_told_to_stop_keeps_the_previous_tables_vectors_and_meta() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::backend_checks::restatic_stops_whole_or_completes(&mut empty_store(dir.path()));
    }

    #[test]
    fn static_vectors_are_read_whole_at_the_word_generation() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::backend_checks::static_vectors_are_read_whole_at_the_word_generation(&mut empty_store(
            dir.path(),
        ));
    }

    #[test]
    fn a_fills_vectors_are_found_by_id() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::backend_checks::a_fills_vectors_are_found_by_id(&mut empty_store(dir.path()));
    }

    #[test]
    fn name_counts_follow_writes_replacements_and_removals() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let count = |store: &SqliteIndex, term: &str| -> i64 {
            store
                .conn
                .query_row("SELECT chunks FROM name_terms WHERE term = ?1", [term], |r| r.get(0))
                .optional()
                .unwrap()
                .unwrap_or(0)
        };
        store
            .write_batch(
                &[
                    file_with_names("a.py", &["Handler emit", "Handler flush", ""], "body"),
                    file_with_names("b.py", &["emit_all"], "body"),
                ],
                &[],
                &[],
            )
            .unwrap();
        assert_eq!((count(&store, "handler"), count(&store, "emit"), count(&store, "all")), (2, 2, 1));
        assert_eq!(store.named_chunks().unwrap(), 3);
        // Replacing a file uncounts its old names.
        store.write_batch(&[file_with_names("a.py", &["Writer flush"], "body")], &[], &[]).unwrap();
        assert_eq!((count(&store, "handler"), count(&store, "emit"), count(&store, "writer")), (0, 1, 1));
        assert_eq!(store.named_chunks().unwrap(), 2);
        store.write_batch(&[], &[], &["b.py".to_string()]).unwrap();
        assert_eq!((count(&store, "emit"), count(&store, "all")), (0, 0));
        let rows: i64 = store.conn.query_row("SELECT count(*) FROM name_terms", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 2, "terms no chunk has are dropped");
        let (_, problems) = store.verify().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // A count out of step with the chunks is damage `verify` reports.
        store.conn.execute("UPDATE name_terms SET chunks = 5 WHERE term = 'flush'", []).unwrap();
        assert_eq!(store.verify().unwrap().1, ["the name counts do not match the chunks' names"]);
    }

    #[test]
    fn only_the_latest_jobs_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::backend_checks::only_the_latest_jobs_are_kept(&mut empty_store(dir.path()));
    }

    #[test]
    fn a_path_out_of_the_root_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        crate::store::backend_checks::a_path_out_of_the_root_is_damage(&mut store);
        // A path that is no text, or text that is not UTF-8, is damage said
        // with the rest, not an error of the whole check (review 230).
        store.conn.execute("UPDATE files SET path = CAST('src/a.rs' AS BLOB) WHERE path = 'src/a.rs'", []).unwrap();
        let problems = store.verify().unwrap().1;
        assert!(problems.iter().any(|p| p.starts_with("3 file paths are not paths below the root")), "{problems:?}");
        store
            .conn
            .execute("UPDATE files SET path = CAST(x'7372632fff2e7273' AS TEXT) WHERE typeof(path) = 'blob'", [])
            .unwrap();
        let problems = store.verify().unwrap().1;
        assert!(problems.iter().any(|p| p.contains("hold text that is not UTF-8")), "{problems:?}");
    }

    #[test]
    fn every_write_keeps_the_files_ctime() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::backend_checks::every_write_keeps_the_files_ctime(&mut empty_store(dir.path()));
    }

    #[test]
    fn a_fill_keeps_the_chunks_rows_and_words() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::backend_checks::a_fill_keeps_the_chunks_rows_and_words(&mut empty_store(dir.path()));
    }

    #[test]
    fn a_large_word_index_is_merged_whole_only_after_enough_changes() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let writes: Vec<FileWrite> =
            (0..200).map(|i| file_of_words(&format!("f{i}.txt"), &format!("common word{i}"))).collect();
        store.write_batch(&writes, &[], &[]).unwrap();
        let changed = |store: &SqliteIndex| -> i64 {
            store
                .conn
                .query_row("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'words_changed'", [], |r| r.get(0))
                .unwrap()
        };
        let finds = |store: &SqliteIndex, word: &str| -> usize {
            store.best_word_matches(word, &Scope::default(), 10).unwrap().len()
        };
        assert_eq!(changed(&store), 200);
        // 200 chunks is over a threshold of 10: merged whole after the first
        // run (every row changed), then only once 1/50 of them has.
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 0);
        store.write_batch(&[file_of_words("f0.txt", "common renamed0")], &[], &[]).unwrap();
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 2, "one row deleted and one added: a step of merging only");
        assert_eq!((finds(&store, "word0"), finds(&store, "renamed0")), (0, 1), "a replaced chunk's words are gone");
        store.write_batch(&[], &[], &["f1.txt".to_string()]).unwrap();
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 3);
        assert_eq!(finds(&store, "word1"), 0, "a removed file's words are gone");
        store.write_batch(&[file_of_words("f2.txt", "common renamed2")], &[], &[]).unwrap();
        store.compact_words_above(10).unwrap();
        assert_eq!(changed(&store), 0, "5 of 199 rows changed: merged whole");
        // Every file's chunk holds it once among two words: all tie, and a
        // cut keeps ties (`keep_best_with_ties`).
        assert_eq!(finds(&store, "common"), 199);
        // At the default threshold an index this size is merged after every run.
        store.write_batch(&[file_of_words("f3.txt", "common renamed3")], &[], &[]).unwrap();
        store.compact_words().unwrap();
        assert_eq!(changed(&store), 0);
        let (_, problems) = store.verify().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    }
}
