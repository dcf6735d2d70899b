//! The questions a Postgres index answers (`IndexReader`), each one query.

use std::collections::HashMap;

use pgvector::Vector;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;

use super::PgIndex;
use crate::store::{
    cosine_of_row, ChunkId, FileState, IndexJob, IndexReader, IndexStats, JobState, KeptChunk, Scope, Snapshot,
    StoreError, StoredChunk, StoredFile, VectorCounts, VectorRow, WordTotals,
};

impl PgIndex {
    /// A read-only transaction that sees one state of the index throughout.
    fn snapshot_of<'c>(&self, client: &'c mut postgres::Client) -> Result<postgres::Transaction<'c>, StoreError> {
        client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| self.failed(e))
    }

    /// A meta count as `tx` sees it; 0 when unset.
    fn meta_count_in(&self, tx: &mut postgres::Transaction<'_>, key: &str) -> Result<i64, StoreError> {
        Ok(tx
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
            .map_err(|e| self.failed(e))?
            .and_then(|r| r.get::<_, String>(0).parse().ok())
            .unwrap_or(0))
    }
}

impl IndexReader for PgIndex {
    fn meta_value(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self.row("SELECT value FROM meta WHERE key = $1", &[&key])?.map(|r| r.get(0)))
    }

    fn stats(&self) -> Result<IndexStats, StoreError> {
        self.counts()
    }

    fn verify(&self) -> Result<(IndexStats, Vec<String>), StoreError> {
        let (stats, problems) = self.check()?;
        if let Some(problem) = problems.first() {
            self.leave_damage_mark(problem);
        }
        Ok((stats, problems))
    }

    fn damage_marked(&self) -> bool {
        // Acted on by the owner's run alone (`damage_if_marked`).
        self.meta_value(super::verify::DAMAGE_MARK).is_ok_and(|mark| mark.is_some())
            && self.owner_unless_ours().is_ok_and(|other| other.is_none())
    }

    fn word_generation(&self) -> Result<i64, StoreError> {
        let row = self.row(&format!("SELECT {}", super::term_stats::WORD_GENERATION), &[])?;
        Ok(row.map_or(0, |r| r.get(0)))
    }

    fn files(&self, holes: bool) -> Result<HashMap<String, StoredFile>, StoreError> {
        let ctime = if self.files_have_ctime()? { "f.ctime_ns" } else { "0::bigint" };
        let holes = if holes { "count(c.id) - count(c.embedding)" } else { "NULL::bigint" };
        let rows = self.rows(
            &format!(
                "SELECT f.path, f.size, f.mtime_ns, f.hash, count(c.id), {holes}, {ctime}
                 FROM files f LEFT JOIN chunks c ON c.file_id = f.id GROUP BY f.id"
            ),
            &[],
        )?;
        Ok(rows
            .iter()
            .map(|r| {
                let state = FileState {
                    size: r.get::<_, i64>(1) as u64,
                    mtime_ns: r.get(2),
                    hash: r.get(3),
                    ctime_ns: r.get(6),
                };
                let file = StoredFile {
                    state,
                    chunks: r.get::<_, i64>(4) as u64,
                    holes: r.get::<_, Option<i64>>(5).map(|n| n as u64),
                };
                (r.get(0), file)
            })
            .collect())
    }

    fn vector_for_key(&self, key: &[u8]) -> Result<Option<Vec<f32>>, StoreError> {
        let row =
            self.row("SELECT embedding FROM chunks WHERE embed_key = $1 AND embedding IS NOT NULL LIMIT 1", &[&key])?;
        Ok(row.map(|r| r.get::<_, Vector>(0).to_vec()))
    }

    fn snapshot(&self) -> Result<Snapshot<'_>, StoreError> {
        self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        self.in_snapshot.set(true);
        let open = OpenSnapshot { index: self, ended: false };
        Ok(Snapshot::new(move || open.end()))
    }

    fn nearest_chunks(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        self.nearest_by("embedding", query, scope, limit)
    }

    fn nearest_static(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        self.nearest_by("static_embedding", query, scope, limit)
    }

    fn unembedded_count(&self) -> Result<u64, StoreError> {
        Ok(self.row("SELECT count(*) FROM chunks WHERE embedding IS NULL", &[])?.map_or(0, |r| r.get::<_, i64>(0))
            as u64)
    }

    fn vector_counts(&self) -> Result<VectorCounts, StoreError> {
        // All of them less those without, which the partial index
        // `chunks_unembedded` lists: no row is read (a scan of the rows
        // with a vector took 40-85 ms at 70k chunks).
        let sql = "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunks WHERE embedding IS NULL)";
        let count = |n: i64| n.max(0) as u64;
        let (chunks, unembedded) =
            self.row(sql, &[])?.map_or((0, 0), |r| (count(r.get::<_, i64>(0)), count(r.get::<_, i64>(1))));
        Ok(VectorCounts { vectors: chunks.saturating_sub(unembedded), unembedded })
    }

    fn unembedded_ids(&self) -> Result<Vec<ChunkId>, StoreError> {
        // The partial index `chunks_unembedded` answers.
        Ok(self.rows("SELECT id FROM chunks WHERE embedding IS NULL", &[])?.iter().map(|r| r.get(0)).collect())
    }

    fn vectors_of(&self, ids: &[ChunkId], visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<(), StoreError> {
        let rows = self.rows(
            "SELECT c.id, f.path, c.embedding, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.id = ANY($1) AND c.embedding IS NOT NULL ORDER BY f.path, c.start_line",
            &[&ids],
        )?;
        for row in &rows {
            visit_vector_row(row, visit);
        }
        Ok(())
    }

    fn cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError> {
        let row = self.row(
            "SELECT 1 - (embedding <=> $2) FROM chunks WHERE id = $1 AND embedding IS NOT NULL",
            &[&id, &Vector::from(query.to_vec())],
        )?;
        Ok(row.and_then(|r| cosine_of_row(r.get(0))))
    }

    fn static_cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError> {
        let row = self.row(
            "SELECT 1 - (static_embedding <=> $2) FROM chunks WHERE id = $1 AND static_embedding IS NOT NULL",
            &[&id, &Vector::from(query.to_vec())],
        )?;
        Ok(row.and_then(|r| cosine_of_row(r.get(0))))
    }

    fn best_word_matches(&self, expr: &str, scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f64)>, StoreError> {
        let terms = self.tokenizer.query_terms(expr)?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        self.best_matches(&terms, scope, limit)
    }

    fn places(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (String, usize)>, StoreError> {
        let rows = self.rows(
            "SELECT c.id, f.path, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY($1)",
            &[&ids],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), (r.get(1), r.get::<_, i32>(2).max(0) as usize))).collect())
    }

    fn names_of(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, String>, StoreError> {
        // One round trip for all: a hybrid search asks for a hundred or more.
        let rows = self.rows("SELECT id, names FROM chunks WHERE id = ANY($1) AND names <> ''", &[&ids])?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn chunks_naming(&self, term: &str) -> Result<u64, StoreError> {
        let row = self.row("SELECT chunks FROM name_terms WHERE term = $1", &[&term])?;
        Ok(row.map_or(0, |r| r.get::<_, i64>(0)).max(0) as u64)
    }

    fn chunk(&self, id: ChunkId) -> Result<Option<StoredChunk>, StoreError> {
        let row = self.row(
            "SELECT f.path, c.start_line, c.end_line, c.text FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.id = $1",
            &[&id],
        )?;
        Ok(row.map(|r| StoredChunk {
            file: r.get(0),
            start_line: r.get::<_, i32>(1).max(0) as usize,
            end_line: r.get::<_, i32>(2).max(0) as usize,
            text: r.get(3),
        }))
    }

    fn chunk_spans(&self, file: &str) -> Result<Vec<(usize, usize)>, StoreError> {
        let rows = self.rows(
            "SELECT c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = $1",
            &[&file],
        )?;
        Ok(rows.iter().map(|r| (r.get::<_, i32>(0).max(0) as usize, r.get::<_, i32>(1).max(0) as usize)).collect())
    }

    fn kept_chunks(&self, file: &str) -> Result<Vec<KeptChunk>, StoreError> {
        let rows = self.rows(
            "SELECT c.start_line, c.end_line, c.text, c.around, c.names FROM chunks c
             JOIN files f ON f.id = c.file_id WHERE f.path = $1 ORDER BY c.id",
            &[&file],
        )?;
        Ok(rows
            .iter()
            .map(|r| KeptChunk {
                start_line: r.get::<_, i32>(0).max(0) as usize,
                end_line: r.get::<_, i32>(1).max(0) as usize,
                text: r.get(2),
                around: r.get(3),
                names: r.get(4),
            })
            .collect())
    }

    fn each_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError> {
        self.each_vector_in("embedding", &[], visit)
    }

    fn each_static_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError> {
        self.each_vector_in("static_embedding", &["wordless_changes"], visit)
    }

    fn each_word(&self, visit: &mut dyn FnMut(&str, ChunkId, u32)) -> Result<WordTotals, StoreError> {
        let mut client = self.client.borrow_mut();
        let mut tx = self.snapshot_of(&mut client)?;
        let mut meta = |key: &str| self.meta_count_in(&mut tx, key);
        let (generation, rows, tokens) =
            (meta("generation")? - meta("wordless_changes")?, meta("word_rows")?, meta("word_tokens")?);
        let no_params: [&(dyn ToSql + Sync); 0] = [];
        let mut terms = tx
            .query_raw("SELECT term, chunk_id, tf FROM chunk_terms ORDER BY term, chunk_id", no_params)
            .map_err(|e| self.failed(e))?;
        while let Some(row) = terms.next().map_err(|e| self.failed(e))? {
            visit(row.get(0), row.get(1), row.get::<_, i32>(2).max(0) as u32);
        }
        drop(terms);
        tx.commit().map_err(|e| self.failed(e))?;
        Ok(WordTotals { generation, rows: rows.max(0) as u64, tokens: tokens.max(0) as u64 })
    }

    fn index_job(&self, id: &str) -> Result<Option<IndexJob>, StoreError> {
        let row = self.row(
            "SELECT state, started_ms, finished_ms, files, chunks, embedded, removed, error FROM jobs WHERE id = $1",
            &[&id],
        )?;
        let Some(r) = row else { return Ok(None) };
        let count = |i: usize| r.get::<_, Option<i64>>(i).map(|n| n.max(0) as u64);
        let state: String = r.get(0);
        let state = JobState::named(&state).ok_or_else(|| StoreError::Damaged {
            path: self.place.clone(),
            cause: format!("job {id} has the state {state:?}"),
        })?;
        Ok(Some(IndexJob {
            id: id.to_string(),
            state,
            started_ms: r.get(1),
            finished_ms: r.get(2),
            files: count(3),
            chunks: count(4),
            embedded: count(5),
            removed: count(6),
            error: r.get(7),
        }))
    }
}

/// A read-only transaction a snapshot's questions are answered in; rolled
/// back if the snapshot is dropped rather than finished.
struct OpenSnapshot<'a> {
    index: &'a PgIndex,
    ended: bool,
}

impl OpenSnapshot<'_> {
    fn end(mut self) -> Result<(), StoreError> {
        self.ended = true;
        self.index.in_snapshot.set(false);
        self.index.batch("COMMIT")
    }
}

impl Drop for OpenSnapshot<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.index.in_snapshot.set(false);
            let _ = self.index.batch("ROLLBACK");
        }
    }
}

impl PgIndex {
    /// Hand every vector in `column` to `visit`, in path and line order,
    /// from one state of the index; returns that state's generation less
    /// the meta counts named in `less` (`word_generation`'s, for instance).
    fn each_vector_in(
        &self,
        column: &str,
        less: &[&str],
        visit: &mut dyn FnMut(VectorRow<'_>),
    ) -> Result<i64, StoreError> {
        let mut client = self.client.borrow_mut();
        let mut tx = self.snapshot_of(&mut client)?;
        let mut meta = |key: &str| self.meta_count_in(&mut tx, key);
        let mut generation = meta("generation")?;
        for key in less {
            generation -= meta(key)?;
        }
        let no_params: [&(dyn ToSql + Sync); 0] = [];
        let mut rows = tx
            .query_raw(
                &format!(
                    "SELECT c.id, f.path, c.{column}, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id
                     WHERE c.{column} IS NOT NULL ORDER BY f.path, c.start_line"
                ),
                no_params,
            )
            .map_err(|e| self.failed(e))?;
        while let Some(row) = rows.next().map_err(|e| self.failed(e))? {
            visit_vector_row(&row, visit);
        }
        drop(rows);
        tx.commit().map_err(|e| self.failed(e))?;
        Ok(generation)
    }
}

/// Hand a row of (id, path, vector, start line) to `visit`.
fn visit_vector_row(row: &postgres::Row, visit: &mut dyn FnMut(VectorRow<'_>)) {
    let vector: Vector = row.get(2);
    visit(VectorRow {
        id: row.get(0),
        file: row.get(1),
        start_line: row.get::<_, i32>(3).max(0) as usize,
        vector: vector.as_slice(),
    });
}
