//! The changes an index run makes to a Postgres index (`IndexWriter`), each
//! in one transaction, with the counts kept beside the chunks: the name
//! terms' chunk counts, the word index's rows and tokens, the word terms'
//! stats (`term_stats`) and the generation.

use pgvector::Vector;
use postgres::Transaction;

use super::term_stats::{self, TermChanges};
use super::PgIndex;
use crate::store::fill::{self, StoredChunk};
use crate::store::name_counts::NameCounts;
use crate::store::{FileState, FileWrite, IndexJob, IndexMeta, IndexReader, IndexWriter, StoreError};

impl IndexWriter for PgIndex {
    fn as_reader(&self) -> &dyn IndexReader {
        self
    }

    fn reset(&mut self, meta: &IndexMeta) -> Result<(), StoreError> {
        if let Some(why) = self.graph_needs_the_owner()? {
            return Err(StoreError::Backend { path: self.place.clone(), source: why.into() });
        }
        self.in_transaction(|tx| {
            tx.batch_execute(
                "TRUNCATE chunk_terms, chunks, files, name_terms, term_stats;
                 DROP INDEX IF EXISTS chunks_embedding_hnsw;
                 DELETE FROM meta WHERE key IN ('dims', 'named_chunks', 'word_rows', 'word_tokens', 'hnsw_dims');",
            )?;
            set_meta(tx, "generated_checked", "1")?;
            for (k, v) in meta.entries() {
                set_meta(tx, k, &v)?;
            }
            add_to_meta(tx, "generation", 1)?;
            term_stats::mark_current(tx)
        })
    }

    fn set_meta_value(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.in_transaction(|tx| set_meta(tx, key, value))
    }

    fn restatic(
        &mut self,
        meta: &IndexMeta,
        embed: &mut dyn FnMut(&str, &str) -> Vec<f32>,
        go_on: &mut dyn FnMut(u64, u64) -> bool,
    ) -> Result<Option<u64>, StoreError> {
        self.in_transaction_if_done(|tx| {
            let of: i64 = tx.query_one("SELECT count(*) FROM chunks", &[])?.get(0);
            // A page at a time by id: the chunks are never all in memory.
            let page = tx.prepare(&format!(
                "SELECT id, around, text FROM chunks WHERE id > $1 ORDER BY id LIMIT {}",
                crate::store::RESTATIC_PAGE
            ))?;
            let update = tx.prepare("UPDATE chunks SET static_embedding = $2 WHERE id = $1")?;
            let (mut after, mut done) = (i64::MIN, 0u64);
            loop {
                let rows = tx.query(&page, &[&after])?;
                let Some(last) = rows.last() else { break };
                after = last.get(0);
                for row in &rows {
                    let vector = Vector::from(embed(row.get(1), row.get(2)));
                    tx.execute(&update, &[&row.get::<_, i64>(0), &vector])?;
                }
                done += rows.len() as u64;
                if !go_on(done, of as u64) {
                    return Ok(None);
                }
            }
            for (k, v) in meta.entries() {
                set_meta(tx, k, &v)?;
            }
            add_to_meta(tx, "generation", 1)?;
            Ok(Some(done))
        })
    }

    fn write_batch(
        &mut self,
        writes: &[FileWrite],
        touches: &[(String, FileState)],
        removals: &[String],
    ) -> Result<(), StoreError> {
        let words: Vec<_> = writes
            .iter()
            .map(|w| self.tokenizer.count(&w.chunks.iter().map(|c| c.words.as_str()).collect::<Vec<_>>()))
            .collect::<Result<_, _>>()?;
        self.in_transaction(|tx| {
            let mut batch = Batch { terms: term_stats::current(tx)?.then(TermChanges::default), ..Batch::default() };
            for rel in removals {
                batch.forget(tx, "f.path = $1", rel)?;
                tx.execute("DELETE FROM files WHERE path = $1", &[rel])?;
            }
            for (rel, state) in touches {
                tx.execute(
                    "UPDATE files SET size = $2, mtime_ns = $3, ctime_ns = $4 WHERE path = $1",
                    &[rel, &(state.size as i64), &state.mtime_ns, &state.ctime_ns],
                )?;
            }
            if !crate::store::changes_what_searches_hold(writes, removals) {
                return Ok(());
            }
            let mut words_changed = !removals.is_empty();
            for (write, words) in writes.iter().zip(&words) {
                words_changed |= batch.replace(tx, write, words)?;
            }
            // Fills leave every chunk row as it was but its vector. Counted
            // before `finish` marks the term stats current at the word
            // generation the batch leaves.
            if !words_changed {
                add_to_meta(tx, "wordless_changes", 1)?;
            }
            batch.finish(tx)?;
            Ok(())
        })
    }

    /// Postgres keeps its word index whole on its own; what a run that
    /// changed many rows leaves is planner statistics out of date, and
    /// perhaps a project grown big enough for an HNSW index.
    fn compact_words(&self) -> Result<(), StoreError> {
        // VACUUM marks the pages a run wrote all-visible, so that a word
        // search counts and reads each term's rows from the index alone: at
        // a million chunks, 570 ms a search instead of 850 ms. It costs what
        // the run changed (13 s after a million chunks, 13 ms after none).
        self.batch("VACUUM (ANALYZE) files, chunks, chunk_terms")?;
        self.index_vectors_when_it_pays()
    }

    fn refresh_search_aids(&self) -> Result<(), StoreError> {
        self.refresh_term_stats()?;
        self.make_the_graph_left_to_the_owner()
    }

    /// Postgres reuses a deleted row's space once VACUUM has passed
    /// (`compact_words`); giving it back to the disk takes VACUUM FULL,
    /// whose lock would stop every search of a shared index meanwhile.
    fn give_back_space(&self) -> bool {
        false
    }

    fn put_index_job(&mut self, job: &IndexJob) -> Result<(), StoreError> {
        let count = |n: Option<u64>| n.map(|n| n.min(i64::MAX as u64) as i64);
        self.in_transaction(|tx| {
            tx.execute(
                "INSERT INTO jobs (id, state, started_ms, finished_ms, files, chunks, embedded, removed, error)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 ON CONFLICT (id) DO UPDATE SET state = $2, started_ms = $3, finished_ms = $4, files = $5,
                     chunks = $6, embedded = $7, removed = $8, error = $9",
                &[
                    &job.id,
                    &job.state.as_str(),
                    &job.started_ms,
                    &job.finished_ms,
                    &count(job.files),
                    &count(job.chunks),
                    &count(job.embedded),
                    &count(job.removed),
                    &job.error,
                ],
            )?;
            tx.execute(
                "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs ORDER BY started_ms DESC, id DESC OFFSET $1)",
                &[&crate::store::KEPT_JOBS],
            )?;
            Ok(())
        })
    }

    fn fail_running_jobs(&mut self, reason: &str, now_ms: i64) -> Result<u64, StoreError> {
        self.in_transaction(|tx| {
            tx.execute(
                "UPDATE jobs SET state = 'failed', finished_ms = $2, error = $1 WHERE state = 'running'",
                &[&reason, &now_ms],
            )
        })
    }
}

impl PgIndex {
    /// Run `change` in a transaction of its own: committed whole, or not at all.
    pub(super) fn in_transaction<T>(
        &self,
        change: impl FnOnce(&mut Transaction<'_>) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(|e| self.failed(e))?;
        let out = change(&mut tx).map_err(|e| self.failed(e))?;
        super::writer_lock::check_still_held(&mut tx, &self.shared, &self.place)?;
        tx.commit().map_err(|e| self.failed(e))?;
        Ok(out)
    }

    /// `in_transaction` for a change that may stop part way: committed when
    /// it returns Some, rolled back when None.
    fn in_transaction_if_done<T>(
        &self,
        change: impl FnOnce(&mut Transaction<'_>) -> Result<Option<T>, postgres::Error>,
    ) -> Result<Option<T>, StoreError> {
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(|e| self.failed(e))?;
        let out = change(&mut tx).map_err(|e| self.failed(e))?;
        if out.is_some() {
            super::writer_lock::check_still_held(&mut tx, &self.shared, &self.place)?;
            tx.commit().map_err(|e| self.failed(e))?;
        }
        Ok(out)
    }
}

/// What one `write_batch` changes besides the rows it writes.
#[derive(Default)]
struct Batch {
    names: NameCounts,
    /// Chunks added less chunks removed: the word index's rows.
    word_rows: i64,
    /// Tokens added less tokens removed.
    word_tokens: i64,
    /// The terms' changes, when the stats were current before the batch.
    terms: Option<TermChanges>,
}

impl Batch {
    /// Uncount the chunks of the file `filter` selects (on `files f`, bound
    /// to `value`) before they are deleted.
    fn forget(
        &mut self,
        tx: &mut Transaction<'_>,
        filter: &str,
        value: &(dyn postgres::types::ToSql + Sync),
    ) -> Result<(), postgres::Error> {
        let sql = format!("SELECT c.names, c.word_count FROM chunks c JOIN files f ON f.id = c.file_id WHERE {filter}");
        for row in tx.query(&sql, &[value])? {
            self.names.count(row.get(0), -1);
            self.word_rows -= 1;
            self.word_tokens -= i64::from(row.get::<_, i32>(1));
        }
        match self.terms.as_mut() {
            Some(terms) => terms.forget(tx, filter, value),
            None => Ok(()),
        }
    }

    /// Put a file's new content in place of what it had, if anything;
    /// returns whether its words changed (not for a fill).
    fn replace(
        &mut self,
        tx: &mut Transaction<'_>,
        w: &FileWrite,
        words: &[crate::store::word_terms::TermCounts],
    ) -> Result<bool, postgres::Error> {
        let st = &w.state;
        let found = tx
            .query_opt("SELECT id, hash FROM files WHERE path = $1", &[&w.rel])?
            .map(|r| (r.get::<_, i64>(0), r.get::<_, Vec<u8>>(1)));
        if let Some((id, hash)) = &found {
            if *hash == st.hash && fill_in_place(tx, *id, w)? {
                return Ok(false);
            }
        }
        let id = match found.map(|f| f.0) {
            Some(id) => {
                self.forget(tx, "f.id = $1", &id)?;
                tx.execute("DELETE FROM chunks WHERE file_id = $1", &[&id])?;
                tx.execute(
                    "UPDATE files SET size = $2, mtime_ns = $3, hash = $4, ctime_ns = $5 WHERE id = $1",
                    &[&id, &(st.size as i64), &st.mtime_ns, &st.hash, &st.ctime_ns],
                )?;
                id
            }
            None => tx
                .query_one(
                    "INSERT INTO files (path, size, mtime_ns, hash, ctime_ns) VALUES ($1, $2, $3, $4, $5) RETURNING id",
                    &[&w.rel, &(st.size as i64), &st.mtime_ns, &st.hash, &st.ctime_ns],
                )?
                .get(0),
        };
        let add = tx.prepare(
            "INSERT INTO chunks (file_id, start_line, end_line, text, embedding, embed_key, names, static_embedding,
                 around, word_count)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )?;
        let (mut terms, mut chunk_ids, mut tfs, mut dls) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (c, words) in w.chunks.iter().zip(words) {
            let line = |n: usize| n.min(i32::MAX as usize) as i32;
            let chunk_id: i64 = tx
                .query_one(
                    &add,
                    &[
                        &id,
                        &line(c.chunk.start_line),
                        &line(c.chunk.end_line),
                        &c.chunk.text,
                        &c.vector.clone().map(Vector::from),
                        &&c.embed_key[..],
                        &c.names,
                        &c.static_vector.clone().map(Vector::from),
                        &c.around,
                        &words.tokens,
                    ],
                )?
                .get(0);
            self.names.count(&c.names, 1);
            self.word_rows += 1;
            self.word_tokens += i64::from(words.tokens);
            for (term, &tf) in &words.terms {
                if let Some(changes) = self.terms.as_mut() {
                    changes.add(term, tf, words.tokens);
                }
                terms.push(term.as_str());
                chunk_ids.push(chunk_id);
                tfs.push(tf);
                dls.push(words.tokens);
            }
        }
        tx.execute(
            "INSERT INTO chunk_terms (term, chunk_id, tf, dl)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[])",
            &[&terms, &chunk_ids, &tfs, &dls],
        )?;
        Ok(true)
    }

    /// Write the counts the batch changed, and tell readers the chunks did.
    fn finish(self, tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
        let change = tx.prepare(
            "INSERT INTO name_terms VALUES ($1, $2) ON CONFLICT (term) DO UPDATE SET chunks = name_terms.chunks + $2",
        )?;
        for (term, &delta) in &self.names.terms {
            if delta != 0 {
                tx.execute(&change, &[term, &delta])?;
            }
        }
        if self.names.terms.values().any(|&d| d < 0) {
            tx.execute("DELETE FROM name_terms WHERE chunks <= 0", &[])?;
        }
        add_to_meta(tx, "named_chunks", self.names.named_chunks)?;
        add_to_meta(tx, "word_rows", self.word_rows)?;
        add_to_meta(tx, "word_tokens", self.word_tokens)?;
        add_to_meta(tx, "generation", 1)?;
        match self.terms {
            Some(terms) => terms.write(tx),
            None => Ok(()),
        }
    }
}

/// When the file's chunks are stored already as `w` cuts them (a fill:
/// the text is the same, only vectors are new), store the vectors they
/// lacked into their rows and say so; otherwise change nothing
/// (`store::fill`).
fn fill_in_place(tx: &mut Transaction<'_>, file_id: i64, w: &FileWrite) -> Result<bool, postgres::Error> {
    let stored: Vec<StoredChunk> = tx
        .query(
            "SELECT id, start_line, end_line, embed_key, names, static_embedding IS NOT NULL, embedding IS NULL,
                    text, around
             FROM chunks WHERE file_id = $1 ORDER BY id",
            &[&file_id],
        )?
        .iter()
        .map(|r| StoredChunk {
            id: r.get(0),
            lines: (r.get::<_, i32>(1).into(), r.get::<_, i32>(2).into()),
            embed_key: r.get(3),
            names: r.get(4),
            text: r.get(7),
            around: r.get(8),
            has_static: r.get(5),
            hole: r.get(6),
        })
        .collect();
    let Some(holes) = fill::holes_filled(&stored, w) else { return Ok(false) };
    let st = &w.state;
    tx.execute(
        "UPDATE files SET size = $2, mtime_ns = $3, ctime_ns = $4 WHERE id = $1",
        &[&file_id, &(st.size as i64), &st.mtime_ns, &st.ctime_ns],
    )?;
    let store = tx.prepare("UPDATE chunks SET embedding = $2 WHERE id = $1")?;
    for (s, vector) in holes {
        tx.execute(&store, &[&s.id, &Vector::from(vector.to_vec())])?;
    }
    Ok(true)
}

/// Set `key` to `value`, leaving the row as it is when it holds it already:
/// a run that finds nothing to do sets values as they were, and a server
/// refreshes every two seconds (audit 252: SQLite's log grew by 120 KB/s).
fn set_meta(tx: &mut Transaction<'_>, key: &str, value: &str) -> Result<(), postgres::Error> {
    tx.execute(
        "INSERT INTO meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2
         WHERE meta.value IS DISTINCT FROM EXCLUDED.value",
        &[&key, &value],
    )?;
    Ok(())
}

/// Add `n` to the counter `key` in meta, which starts from 0 when absent.
fn add_to_meta(tx: &mut Transaction<'_>, key: &str, n: i64) -> Result<(), postgres::Error> {
    if n == 0 && key != "generation" {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO meta VALUES ($1, $2::bigint::text)
         ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + $2::bigint)::text",
        &[&key, &n],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::postgres::test_server::{self, PgServer};
    use crate::store::postgres::PgIndex;

    #[test]
    fn a_restatic_told_to_stop_keeps_the_previous_tables_vectors_and_meta() {
        let server = PgServer::start();
        crate::store::backend_checks::restatic_stops_whole_or_completes(&mut test_server::index(&server, "restatic"));
    }

    #[test]
    fn static_vectors_are_read_whole_at_the_word_generation() {
        let server = PgServer::start();
        let mut index = test_server::index(&server, "statics");
        crate::store::backend_checks::static_vectors_are_read_whole_at_the_word_generation(&mut index);
    }

    #[test]
    fn a_fill_keeps_the_chunks_rows_and_words() {
        let server = PgServer::start();
        crate::store::backend_checks::a_fill_keeps_the_chunks_rows_and_words(&mut test_server::index(&server, "fill"));
    }

    #[test]
    fn only_the_latest_jobs_are_kept() {
        let server = PgServer::start();
        crate::store::backend_checks::only_the_latest_jobs_are_kept(&mut test_server::index(&server, "jobs"));
    }

    #[test]
    fn a_path_out_of_the_root_is_damage() {
        let server = PgServer::start();
        crate::store::backend_checks::a_path_out_of_the_root_is_damage(&mut test_server::index(&server, "paths"));
    }

    #[test]
    fn every_write_keeps_the_files_ctime() {
        let server = PgServer::start();
        crate::store::backend_checks::every_write_keeps_the_files_ctime(&mut test_server::index(&server, "ctimes"));
    }

    /// An index made before `files.ctime_ns` is read with 0 for every file,
    /// and gains the column, keeping its files, when a writer opens it.
    #[test]
    fn an_index_made_before_ctimes_gains_them_when_opened_for_writing() {
        use crate::store::{FileWrite, IndexMeta, IndexReader, IndexWriter};
        let server = PgServer::start();
        let mut index = test_server::index(&server, "older");
        index.reset(&IndexMeta::for_tests()).unwrap();
        let mut file = FileWrite::of_texts("a.rs", &["body".into()], None);
        file.state.ctime_ns = 5;
        index.write_batch(&[file], &[], &[]).unwrap();
        index.batch("ALTER TABLE files DROP COLUMN ctime_ns").unwrap();
        assert!(!index.files_have_ctime().unwrap());
        assert_eq!(index.files(false).unwrap()["a.rs"].state.ctime_ns, 0, "read as unknown");
        let reopened = test_server::index(&server, "older");
        assert!(reopened.files_have_ctime().unwrap());
        let files = reopened.files(false).unwrap();
        assert_eq!((files.len(), files["a.rs"].state.ctime_ns, files["a.rs"].chunks), (1, 0, 1), "kept, not rebuilt");
    }

    /// A server writes a job's state beside a run that may hold the index:
    /// one of another version, or damaged, is its error there, never
    /// dropped and made anew under the run (as a run's own open does).
    #[test]
    fn an_index_opened_beside_a_run_is_never_rebuilt() {
        use crate::store::{FileWrite, IndexMeta, IndexReader, IndexWriter, StoreError};
        let server = PgServer::start();
        let mut index = test_server::index(&server, "beside");
        index.reset(&IndexMeta::for_tests()).unwrap();
        index.write_batch(&[FileWrite::of_texts("a.rs", &["body".into()], None)], &[], &[]).unwrap();
        let root = test_server::root(&server, "beside");
        index.batch("UPDATE meta SET value = '99' WHERE key = 'schema'").unwrap();
        let opened = PgIndex::open_in_place(&root).err();
        assert!(matches!(opened, Some(StoreError::OtherSchema { .. })), "{opened:?}");
        assert_eq!(index.files(false).unwrap().len(), 1, "kept");
        index.batch("DROP TABLE meta").unwrap();
        let opened = PgIndex::open_in_place(&root).err();
        assert!(matches!(&opened, Some(StoreError::Damaged { cause, .. }) if cause.contains("meta")), "{opened:?}");
        assert_eq!(index.files(false).unwrap().len(), 1, "kept");
        // A run's own open rebuilds it.
        assert!(test_server::index(&server, "beside").files(false).unwrap().is_empty());
    }

    /// The HNSW graph is the owning role's to make: a co-writer's run
    /// (README's grants) that passed the count failed on "must be owner of
    /// table chunks" (review 233), and now leaves it to the owner's.
    #[test]
    fn only_a_role_that_owns_the_chunks_makes_their_graph() {
        use crate::store::{FileWrite, IndexMeta, IndexReader, IndexWriter};
        let server = PgServer::start();
        let mut index = test_server::index(&server, "graph");
        index.reset(&IndexMeta::for_tests()).unwrap();
        let mut file = FileWrite::of_texts("a.py", &["one".into(), "two".into()], None);
        file = file.filled(|i| (0..4).map(|d| if d == i { 1.0 } else { 0.0 }).collect());
        index.write_batch(&[file], &[], &[]).unwrap();
        index.set_dims(4).unwrap();
        let schema = index.schema.trim_matches('"').to_string();
        server
            .sql(&format!(
                "CREATE ROLE other LOGIN; GRANT USAGE ON SCHEMA vecgrep_writers TO other;
                 GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA vecgrep_writers TO other;
                 GRANT USAGE ON SCHEMA {schema} TO other; GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO other;
                 GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO other;"
            ))
            .unwrap();
        let mut root = test_server::root(&server, "graph");
        let shared = root.shared.as_mut().unwrap();
        shared.url = shared.url.replace("user=vecgrep", "user=other");
        let mut other = PgIndex::open_for_writing(&root, &mut |_| {}).unwrap();
        other.index_vectors_past(1).unwrap();
        assert_eq!(other.hnsw_dims().unwrap(), None, "left to the owner");
        other.make_the_graph_left_past(1).unwrap();
        assert_eq!(other.hnsw_dims().unwrap(), None, "still the owner's");
        // The owner's next run makes it, though it changed nothing (review 236).
        index.make_the_graph_left_past(1).unwrap();
        assert_eq!(index.hnsw_dims().unwrap(), Some(4));
        // A rebuild drops the graph, which only the owner may (review 236:
        // a co-writer's --chunk-size run failed on "must be owner of index").
        let refused = format!("{:#}", anyhow::Error::new(other.reset(&IndexMeta::for_tests()).unwrap_err()));
        assert!(refused.contains("only its owner, role vecgrep, may do"), "{refused}");
        assert_eq!(index.files(false).unwrap().len(), 1, "kept");
        index.reset(&IndexMeta::for_tests()).unwrap();
    }

    #[test]
    fn a_fills_vectors_are_found_by_id() {
        let server = PgServer::start();
        crate::store::backend_checks::a_fills_vectors_are_found_by_id(&mut test_server::index(&server, "filled"));
    }
}
