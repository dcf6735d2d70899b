//! The questions an SQLite index answers (`IndexReader`), each one query.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};

use super::codes::Coded;
use super::{blob_floats, vector_to_blob, SqliteIndex};
use crate::store::{
    cosine_of_row, ChunkId, IndexJob, IndexReader, IndexStats, KeptChunk, Scope, Snapshot, StoreError, StoredChunk,
    StoredFile, VectorCounts, VectorRow, WordTotals,
};

impl IndexReader for SqliteIndex {
    fn checked_here(&self) -> Result<bool, StoreError> {
        Ok(self.marked_here(super::CHECKED_AS).unwrap_or(false))
    }

    fn meta_value(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")
            .and_then(|mut s| s.query_row([key], |r| r.get(0)).optional())
            .map_err(|e| self.damaged(e))
    }

    /// The counts, of an index still whole: a table dropped under a
    /// connection opened before is found here too, not only by a connection
    /// opened after (what `/status` and `/health` say must not depend on
    /// which the server's worker holds).
    fn stats(&self) -> Result<IndexStats, StoreError> {
        self.check_parts(super::parts::Expected::Made)?;
        self.counts()
    }

    fn verify(&self) -> Result<(IndexStats, Vec<String>), StoreError> {
        let (stats, problems) = self.check()?;
        if let Some(problem) = problems.first() {
            super::damage_mark::leave(&self.path, problem);
        }
        Ok((stats, problems))
    }

    fn damage_marked(&self) -> bool {
        super::damage_mark::is_left(&self.path)
    }

    fn word_generation(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'), 0)
                      - coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'wordless_changes'), 0)",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.damaged(e))
    }

    fn files(&self, holes: bool) -> Result<HashMap<String, StoredFile>, StoreError> {
        let ctime = match super::schema::files_have_ctime(&self.conn).map_err(|e| self.damaged(e))? {
            true => "f.ctime_ns",
            false => "0",
        };
        let sql = match holes {
            true => format!(
                "SELECT f.path, f.size, f.mtime_ns, f.hash, count(c.id), count(c.id) - count(c.embedding), {ctime}
                 FROM files f LEFT JOIN chunks c ON c.file_id = f.id GROUP BY f.id"
            ),
            // Counted from the index of chunks by file, no row read.
            false => format!(
                "SELECT f.path, f.size, f.mtime_ns, f.hash, (SELECT count(*) FROM chunks c WHERE c.file_id = f.id), NULL,
                 {ctime} FROM files f"
            ),
        };
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.damaged(e))?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                StoredFile {
                    state: crate::store::FileState {
                        size: r.get::<_, i64>(1)? as u64,
                        mtime_ns: r.get(2)?,
                        hash: r.get(3)?,
                        ctime_ns: r.get(6)?,
                    },
                    chunks: r.get::<_, i64>(4)? as u64,
                    holes: r.get::<_, Option<i64>>(5)?.map(|n| n as u64),
                },
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.damaged(e))
    }

    fn vector_for_key(&self, key: &[u8]) -> Result<Option<Vec<f32>>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT embedding FROM chunks WHERE embed_key = ?1 AND embedding IS NOT NULL LIMIT 1")
            .map_err(|e| self.damaged(e))?;
        let blob: Option<Vec<u8>> = stmt.query_row([key], |r| r.get(0)).optional().map_err(|e| self.damaged(e))?;
        Ok(blob.map(|b| blob_floats(&b).collect()))
    }

    fn snapshot(&self) -> Result<Snapshot<'_>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.damaged(e))?;
        Ok(Snapshot::new(move || tx.finish().map_err(|e| self.damaged(e))))
    }

    fn nearest_chunks(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        self.nearest_of(Coded::Model, query, scope, limit)
    }

    fn nearest_static(&self, query: &[f32], scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        self.nearest_of(Coded::Static, query, scope, limit)
    }

    fn replaced(&self) -> bool {
        self.opened.is_some() && super::file_identity(&self.path) != self.opened
    }

    fn unembedded_count(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT count(*) FROM chunks WHERE embedding IS NULL", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.damaged(e))
    }

    fn vector_counts(&self) -> Result<VectorCounts, StoreError> {
        let (chunks, unembedded) = self.counts_without("embedding")?;
        Ok(VectorCounts { vectors: chunks.saturating_sub(unembedded), unembedded })
    }

    fn unembedded_ids(&self) -> Result<Vec<ChunkId>, StoreError> {
        // The partial index `chunks_unembedded` answers; no row is read.
        self.conn
            .prepare_cached("SELECT id FROM chunks WHERE embedding IS NULL")
            .and_then(|mut s| s.query_map([], |r| r.get(0)).and_then(|rows| rows.collect()))
            .map_err(|e| self.damaged(e))
    }

    fn vectors_of(&self, ids: &[ChunkId], visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<(), StoreError> {
        let mut find = self
            .conn
            .prepare_cached(
                "SELECT f.path, c.start_line, c.embedding FROM chunks c JOIN files f ON f.id = c.file_id
                 WHERE c.id = ?1 AND c.embedding IS NOT NULL",
            )
            .map_err(|e| self.damaged(e))?;
        let mut found: Vec<(String, usize, ChunkId, Vec<f32>)> = Vec::with_capacity(ids.len());
        let mut dims = 0;
        for &id in ids {
            let row = find
                .query_row([id], |r| {
                    let blob = r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
                    let line = r.get::<_, i64>(1)?.clamp(0, i64::from(u32::MAX)) as usize;
                    Ok((r.get::<_, String>(0)?, line, id, blob.to_vec()))
                })
                .optional()
                .map_err(|e| self.damaged(e))?;
            if let Some((file, line, id, blob)) = row {
                self.check_vector_blob(&blob, &mut dims, "embedding", id)?;
                found.push((file, line, id, blob_floats(&blob).collect()));
            }
        }
        found.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        for (file, start_line, id, vector) in &found {
            visit(VectorRow { id: *id, file, start_line: *start_line, vector });
        }
        Ok(())
    }

    fn cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError> {
        self.cosine_of("embedding", id, query)
    }

    fn static_cosine(&self, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError> {
        self.cosine_of("static_embedding", id, query)
    }

    fn best_word_matches(&self, expr: &str, scope: &Scope, limit: usize) -> Result<Vec<(ChunkId, f64)>, StoreError> {
        // Every match with its BM25, the best kept here: FTS5's own `ORDER
        // BY rank` sorts every match through a nested statement, 390 ms
        // against 270 ms for 444k matches at a million chunks. Joining each
        // match to its chunk and file would cost more still.
        let mut matches: Vec<(ChunkId, f64)> = self
            .conn
            .prepare_cached("SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1")
            .and_then(|mut s| s.query_map([expr], |r| Ok((r.get(0)?, r.get(1)?))).and_then(|rows| rows.collect()))
            .map_err(|e| self.damaged(e))?;
        if let Some(inside) = self.chunks_in(scope)? {
            matches.retain(|m| inside.contains(&m.0));
        }
        crate::store::keep_best_with_ties(&mut matches, limit, |a, b| a.1.total_cmp(&b.1));
        matches.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        Ok(matches)
    }

    fn places(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, (String, usize)>, StoreError> {
        let mut out = HashMap::with_capacity(ids.len());
        let mut find = self
            .conn
            .prepare_cached(
                "SELECT f.path, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id
                 WHERE c.id = ?1",
            )
            .map_err(|e| self.damaged(e))?;
        for &id in ids {
            let place = find
                .query_row([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize)))
                .optional()
                .map_err(|e| self.damaged(e))?;
            match place {
                Some(place) => {
                    out.insert(id, place);
                }
                // Ranked from the words of this index but not in it.
                None => self.check_structure()?,
            }
        }
        Ok(out)
    }

    fn names_of(&self, ids: &[ChunkId]) -> Result<HashMap<ChunkId, String>, StoreError> {
        let mut find =
            self.conn.prepare_cached("SELECT names FROM chunks WHERE id = ?1").map_err(|e| self.damaged(e))?;
        let mut out = HashMap::with_capacity(ids.len());
        for &id in ids {
            let names = find.query_row([id], |r| r.get::<_, String>(0)).optional().map_err(|e| self.damaged(e))?;
            if let Some(names) = names.filter(|n| !n.is_empty()) {
                out.insert(id, names);
            }
        }
        Ok(out)
    }

    fn chunks_naming(&self, term: &str) -> Result<u64, StoreError> {
        self.conn
            .prepare_cached("SELECT chunks FROM name_terms WHERE term = ?1")
            .and_then(|mut s| s.query_row([term], |r| r.get::<_, i64>(0)).optional())
            .map(|n| n.unwrap_or(0).max(0) as u64)
            .map_err(|e| self.damaged(e))
    }

    fn chunk(&self, id: ChunkId) -> Result<Option<StoredChunk>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT f.path, c.start_line, c.end_line, c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    Ok(StoredChunk {
                        file: r.get(0)?,
                        start_line: r.get::<_, i64>(1)? as usize,
                        end_line: r.get::<_, i64>(2)? as usize,
                        text: r.get(3)?,
                    })
                })
                .optional()
            })
            .map_err(|e| self.damaged(e))
    }

    /// Whether the index is sound, asked once a ranked chunk is missing:
    /// the rankings are read before the snapshot that places their chunks,
    /// so a writer's commit between them (a run under way) leaves ids that
    /// are stale, not damage. Checked on a connection of its own: this one's
    /// full-text index keeps what it read before that commit, and its check
    /// would call the pages since rewritten corrupt.
    fn check_structure(&self) -> Result<(), StoreError> {
        if self.structure_checked.replace(true) {
            return Ok(());
        }
        let fresh = super::connect_for_reading(&self.path).map_err(|e| self.damaged(e))?;
        let first: String = fresh.query_row("PRAGMA quick_check(1)", [], |r| r.get(0)).map_err(|e| self.damaged(e))?;
        match first.as_str() {
            "ok" => Ok(()),
            // One line, as every error is ("*** in database main ***" first).
            problem => {
                let cause = problem.lines().filter(|l| !l.starts_with("***")).collect::<Vec<_>>().join("; ");
                Err(self.damage(cause))
            }
        }
    }

    fn chunk_spans(&self, file: &str) -> Result<Vec<(usize, usize)>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1",
            )
            .and_then(|mut s| {
                s.query_map([file], |r| Ok((r.get::<_, i64>(0)?.max(0) as usize, r.get::<_, i64>(1)?.max(0) as usize)))?
                    .collect()
            })
            .map_err(|e| self.damaged(e))
    }

    fn kept_chunks(&self, file: &str) -> Result<Vec<KeptChunk>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT c.start_line, c.end_line, c.text, c.around, c.names FROM chunks c
                 JOIN files f ON f.id = c.file_id WHERE f.path = ?1 ORDER BY c.id",
            )
            .and_then(|mut s| {
                s.query_map([file], |r| {
                    Ok(KeptChunk {
                        start_line: r.get::<_, i64>(0)?.max(0) as usize,
                        end_line: r.get::<_, i64>(1)?.max(0) as usize,
                        text: r.get(2)?,
                        around: r.get(3)?,
                        names: r.get(4)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.damaged(e))
    }

    fn each_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError> {
        self.each_vector_in("embedding", &|| self.generation(), visit)
    }

    fn each_static_vector(&self, visit: &mut dyn FnMut(VectorRow<'_>)) -> Result<i64, StoreError> {
        self.each_vector_in("static_embedding", &|| self.word_generation(), visit)
    }

    fn each_word(&self, visit: &mut dyn FnMut(&str, ChunkId, u32)) -> Result<WordTotals, StoreError> {
        // FTS5 lists each occurrence of a term (fts5vocab's `instance`), by
        // term and then chunk; its `bm25()` counts every chunk row and token.
        self.conn
            .execute_batch(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.word_instances USING fts5vocab(main, chunks_fts, instance)",
            )
            .map_err(|e| self.damaged(e))?;
        let tx = self.conn.unchecked_transaction().map_err(|e| self.damaged(e))?;
        let generation = self.word_generation()?;
        // FTS5's own rows, as `bm25()` counts them.
        let rows: i64 =
            tx.query_row("SELECT count(*) FROM chunks_fts_docsize", [], |r| r.get(0)).map_err(|e| self.damaged(e))?;
        let mut tokens = 0u64;
        {
            let mut stmt = tx.prepare("SELECT term, doc FROM temp.word_instances").map_err(|e| self.damaged(e))?;
            let mut instances = stmt.query([]).map_err(|e| self.damaged(e))?;
            let mut run: Option<(String, ChunkId, u32)> = None;
            while let Some(row) = instances.next().map_err(|e| self.damaged(e))? {
                let term = row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
                let chunk: ChunkId = row.get(1)?;
                tokens += 1;
                match &mut run {
                    Some((t, c, n)) if *c == chunk && t.as_str() == term => *n += 1,
                    _ => {
                        if let Some((t, c, n)) = run.take() {
                            visit(&t, c, n);
                        }
                        run = Some((term.to_string(), chunk, 1));
                    }
                }
            }
            if let Some((t, c, n)) = run {
                visit(&t, c, n);
            }
        }
        tx.finish().map_err(|e| self.damaged(e))?;
        Ok(WordTotals { generation, rows: rows.max(0) as u64, tokens })
    }

    fn index_job(&self, id: &str) -> Result<Option<IndexJob>, StoreError> {
        self.job(id)
    }
}

impl SqliteIndex {
    /// Hand every vector in `column` to `visit`, in path and line order,
    /// from one state of the index; returns what `generation` says of it.
    fn each_vector_in(
        &self,
        column: &str,
        generation: &dyn Fn() -> Result<i64, StoreError>,
        visit: &mut dyn FnMut(VectorRow<'_>),
    ) -> Result<i64, StoreError> {
        // Read in one transaction so that the generation matches the vectors.
        let tx = self.conn.unchecked_transaction().map_err(|e| self.damaged(e))?;
        let generation = generation()?;
        {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT c.id, f.path, c.{column}, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id
                     WHERE c.{column} IS NOT NULL ORDER BY f.path, c.start_line"
                ))
                .map_err(|e| self.damaged(e))?;
            let mut rows = stmt.query([]).map_err(|e| self.damaged(e))?;
            let mut dims = 0;
            let mut vector: Vec<f32> = Vec::new();
            while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
                let id = row.get(0)?;
                let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
                self.check_vector_blob(blob, &mut dims, column, id)?;
                vector.clear();
                vector.extend(blob_floats(blob));
                visit(VectorRow {
                    id,
                    file: row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?,
                    start_line: row.get::<_, i64>(3)?.clamp(0, i64::from(u32::MAX)) as usize,
                    vector: &vector,
                });
            }
        }
        tx.finish().map_err(|e| self.damaged(e))?;
        Ok(generation)
    }

    /// Whether `blob`, chunk `id`'s vector in `column`, is a whole vector as
    /// long as the others read with it (`dims` floats, 0 until the first):
    /// a blob cut short is damage, never a shorter vector.
    fn check_vector_blob(&self, blob: &[u8], dims: &mut usize, column: &str, id: ChunkId) -> Result<(), StoreError> {
        let whole = !blob.is_empty() && blob.len().is_multiple_of(4);
        if *dims == 0 && whole {
            *dims = blob.len() / 4;
        }
        if whole && blob.len() == *dims * 4 {
            return Ok(());
        }
        let expected = if *dims == 0 { "whole 4-byte floats".to_string() } else { (*dims * 4).to_string() };
        let cause = format!("chunk {id}'s vector in `{column}` is {} bytes, not {expected}", blob.len());
        Err(self.damage(cause))
    }

    /// Chunks in scope by cosine similarity of `column` (a vector column) to `query`.
    /// The cosine of a chunk's vector in `column` to `query`; None without one.
    fn cosine_of(&self, column: &str, id: ChunkId, query: &[f32]) -> Result<Option<f32>, StoreError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT 1.0 - vec_distance_cosine({column}, ?2) FROM chunks WHERE id = ?1 AND {column} IS NOT NULL"
            ))
            .and_then(|mut s| s.query_row(params![id, vector_to_blob(query)], |r| r.get(0)).optional())
            .map(|c| cosine_of_row(c.flatten()))
            .map_err(|e| self.damaged(e))
    }

    /// How many chunks have a vector in `column`: all of them less those
    /// without, which a partial index lists (`chunks_unembedded`,
    /// `chunks_without_static`), so that no row is read.
    pub(super) fn count_with_vector(&self, column: &str) -> Result<u64, StoreError> {
        let (chunks, without) = self.counts_without(column)?;
        Ok(chunks.saturating_sub(without))
    }

    /// How many chunks there are and how many lack a vector in `column`:
    /// all of them less those the column's partial index lists, so that
    /// no row is read.
    fn counts_without(&self, column: &str) -> Result<(u64, u64), StoreError> {
        let sql = format!("SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunks WHERE {column} IS NULL)");
        let count = |n: i64| n.max(0) as u64;
        self.conn.query_row(&sql, [], |r| Ok((count(r.get(0)?), count(r.get(1)?)))).map_err(|e| self.damaged(e))
    }

    /// The chunks nearest `query` by their vectors of `kind`: through the
    /// codes where they cover the index, by an exact scan otherwise.
    pub(super) fn nearest_of(
        &self,
        kind: Coded,
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        match self.nearest_by_codes(kind, query, scope, limit)? {
            Some(nearest) => Ok(nearest),
            None => self.nearest_by(kind.column(), query, scope, limit),
        }
    }

    pub(super) fn nearest_by(
        &self,
        column: &str,
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        let mut values: Vec<rusqlite::types::Value> = vec![vector_to_blob(query).into()];
        let mut sql = format!(
            "SELECT c.id, f.path, 1.0 - vec_distance_cosine(c.{column}, ?1) AS score
             FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.{column} IS NOT NULL"
        );
        let prefixes_in_sql = scope.prefixes.len() <= PREFIXES_IN_SQL;
        if prefixes_in_sql {
            sql.push_str(&scope_clause(scope, &mut values));
        }
        sql.push_str(" ORDER BY score DESC, f.path, c.start_line");
        // With a file list, or prefixes matched here, rows outside them are
        // skipped here, so SQL cannot stop at `limit`.
        if scope.files.is_none() && prefixes_in_sql {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.damaged(e))?;
        let mut rows = stmt.query(rusqlite::params_from_iter(values)).map_err(|e| self.damaged(e))?;
        let mut out = Vec::with_capacity(limit.min(1024));
        while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
            if out.len() >= limit {
                break;
            }
            let matched_here = scope.files.is_some() || !prefixes_in_sql;
            if matched_here && !scope.admits(row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?) {
                continue;
            }
            if let Some(score) = cosine_of_row(row.get(2)?) {
                out.push((row.get(0)?, score));
            }
        }
        Ok(out)
    }
}

/// More prefixes than this are matched as rows come rather than in SQL:
/// each is a term of an OR that SQLite nests two deep, and some 500 (a
/// search of `$(git ls-files)`) passed its depth limit of 1000.
const PREFIXES_IN_SQL: usize = 64;

/// SQL restricting `f.path` to the scope's prefixes, binding into `values`.
fn scope_clause(scope: &Scope, values: &mut Vec<rusqlite::types::Value>) -> String {
    if scope.prefixes.is_empty() || scope.prefixes.iter().any(|s| s.is_empty()) {
        return String::new();
    }
    let mut alternatives = Vec::new();
    for s in &scope.prefixes {
        let n = values.len();
        alternatives.push(format!("f.path = ?{} OR substr(f.path, 1, ?{}) = ?{}", n + 1, n + 2, n + 3));
        let prefix = format!("{s}/");
        values.push(s.clone().into());
        values.push((prefix.chars().count() as i64).into());
        values.push(prefix.into());
    }
    format!(" AND ({})", alternatives.join(" OR "))
}
