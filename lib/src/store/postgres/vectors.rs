//! Nearest vectors: an exact scan, or pgvector's HNSW index on the model's
//! vectors once a project is big enough for it to pay (built after an index
//! run, by the writer holding the lock) and the scope is not small.

use pgvector::Vector;
use postgres::types::ToSql;

use super::scope::ScopeParams;
use super::PgIndex;
use crate::store::{cosine_of_row, ChunkId, IndexReader, Scope, StoreError};

/// Projects with at least this many of the model's vectors get an HNSW
/// index. Below it an exact scan is fast enough, and exact: results match
/// the SQLite backend's.
const HNSW_MIN_VECTORS: i64 = 50_000;

/// The meta key a co-writer's run leaves when the project is past
/// `HNSW_MIN_VECTORS` and the graph is the owner's to make.
const GRAPH_WANTED: &str = "hnsw_left_to_owner";

/// How many candidates an HNSW search keeps while it walks the graph;
/// more finds more of the true nearest at more cost. Searches ask for at
/// most a few hundred.
const HNSW_EF_SEARCH: i64 = 400;

/// A scope of at most this many chunks is searched by an exact scan of its
/// own, even where there is an HNSW index: a filtered walk of the graph
/// costs 300 ms at a million chunks, a scan of 8,800 chunks 40 ms.
const EXACT_IN_SCOPE: i64 = 20_000;

impl PgIndex {
    /// Chunks in scope by cosine similarity of `column` (a vector column) to
    /// `query`, best first; equal scores in path and line order.
    pub(super) fn nearest_by(
        &self,
        column: &str,
        query: &[f32],
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        let scope = ScopeParams::of(scope);
        let hnsw = if column == "embedding" { self.hnsw_dims()? } else { None };
        if hnsw.is_some() && !scope.admits_all() {
            let (files, chunks) = self.files_in(&scope)?;
            if chunks <= EXACT_IN_SCOPE {
                return self.nearest_in_files(column, query, &files, limit);
            }
        }
        // The HNSW index is on the column cast to its size; a query must say the same to use it.
        let distance = match hnsw {
            Some(dims) => format!("c.{column}::vector({dims}) <=> $1::vector({dims})"),
            None => format!("c.{column} <=> $1"),
        };
        let filter = format!("c.{column} IS NOT NULL AND {}", ScopeParams::filter(2));
        let score = no_angle_last(&format!("1 - ({distance})"));
        let sql = match hnsw {
            // The index finds the nearest in its own order; ties are ordered after.
            Some(_) => format!(
                "SELECT id, score FROM (
                     SELECT c.id, f.path, c.start_line, {score} AS score
                     FROM chunks c JOIN files f ON f.id = c.file_id WHERE {filter}
                     ORDER BY {distance} LIMIT $7) best
                 ORDER BY score DESC NULLS LAST, path, start_line"
            ),
            None => format!(
                "SELECT c.id, {score} AS score
                 FROM chunks c JOIN files f ON f.id = c.file_id WHERE {filter}
                 ORDER BY score DESC NULLS LAST, f.path, c.start_line LIMIT $7"
            ),
        };
        let limit = limit.min(i64::MAX as usize) as i64;
        let query = Vector::from(query.to_vec());
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&query];
        params.extend(scope.params());
        params.push(&limit);
        let rows = self.rows(&sql, &params)?;
        Ok(rows.iter().filter_map(|r| Some((r.get(0), cosine_of_row(r.get(1))?))).collect())
    }

    /// `nearest_by` over the chunks of `files` alone, by an exact scan.
    fn nearest_in_files(
        &self,
        column: &str,
        query: &[f32],
        files: &[i64],
        limit: usize,
    ) -> Result<Vec<(ChunkId, f32)>, StoreError> {
        let score = no_angle_last(&format!("1 - (c.{column} <=> $1)"));
        let sql = format!(
            "SELECT c.id, {score} AS score
             FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.{column} IS NOT NULL AND c.file_id = ANY($2::bigint[])
             ORDER BY score DESC NULLS LAST, f.path, c.start_line LIMIT $3"
        );
        let (query, limit) = (Vector::from(query.to_vec()), limit.min(i64::MAX as usize) as i64);
        let rows = self.rows(&sql, &[&query, &files, &limit])?;
        Ok(rows.iter().filter_map(|r| Some((r.get(0), cosine_of_row(r.get(1))?))).collect())
    }

    /// The size of the vectors the HNSW index holds, if the project has one.
    pub(super) fn hnsw_dims(&self) -> Result<Option<i32>, StoreError> {
        Ok(self.meta_value("hnsw_dims")?.and_then(|v| v.parse().ok()))
    }

    /// Build the HNSW index once the project has enough of the model's
    /// vectors, and let this connection's searches walk it far enough and
    /// past what the scope filters out.
    pub(super) fn index_vectors_when_it_pays(&self) -> Result<(), StoreError> {
        self.index_vectors_past(HNSW_MIN_VECTORS)
    }

    /// As `index_vectors_when_it_pays`, from `min` vectors.
    pub(super) fn index_vectors_past(&self, min: i64) -> Result<(), StoreError> {
        if self.hnsw_dims()?.is_some() {
            return Ok(());
        }
        let Some(dims) = self.dims()?.map(|d| d as i32) else { return Ok(()) };
        let vectors: i64 =
            self.row("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL", &[])?.map_or(0, |r| r.get(0));
        if vectors < min {
            return Ok(());
        }
        // Only the table's owner may index it: the run of another role that
        // may write it (README's co-writers) failed on "must be owner". It
        // leaves the graph to the owner's next run, which a mark asks of
        // even when it changes nothing; searches scan until then.
        if !self.may_index_chunks()? {
            return self
                .batch(&format!("INSERT INTO meta VALUES ('{GRAPH_WANTED}', '1') ON CONFLICT (key) DO NOTHING"));
        }
        self.batch("SET maintenance_work_mem = '1GB'")?;
        let built = self.in_transaction(|tx| {
            tx.batch_execute(&format!(
                "CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw ON chunks
                     USING hnsw ((embedding::vector({dims})) vector_cosine_ops);
                 INSERT INTO meta VALUES ('hnsw_dims', '{dims}') ON CONFLICT (key) DO UPDATE SET value = '{dims}';
                 DELETE FROM meta WHERE key = '{GRAPH_WANTED}';"
            ))
        });
        let reset = self.batch("RESET maintenance_work_mem");
        built?;
        reset
    }

    /// The graph a co-writer's run left to the owner's, made now if this
    /// run may (`index_vectors_past`).
    pub(super) fn make_the_graph_left_to_the_owner(&self) -> Result<(), StoreError> {
        self.make_the_graph_left_past(HNSW_MIN_VECTORS)
    }

    /// As `make_the_graph_left_to_the_owner`, from `min` vectors.
    pub(super) fn make_the_graph_left_past(&self, min: i64) -> Result<(), StoreError> {
        match self.meta_value(GRAPH_WANTED)? {
            Some(_) if self.may_index_chunks()? => self.index_vectors_past(min),
            _ => Ok(()),
        }
    }

    /// Why a rebuild would fail dropping the HNSW graph, if it would: only
    /// its owner may (review 236: a co-writer's `--chunk-size` run failed
    /// on "must be owner of index chunks_embedding_hnsw").
    pub(super) fn graph_needs_the_owner(&self) -> Result<Option<String>, StoreError> {
        let row = self.row(
            "SELECT pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = to_regclass('chunks_embedding_hnsw')",
            &[],
        )?;
        let Some(owner) = row.map(|r| r.get::<_, String>(0)) else { return Ok(None) };
        if self.may_index_chunks()? {
            return Ok(None);
        }
        Ok(Some(format!(
            "rebuilding the index drops its HNSW graph, which only its owner, role {owner}, may do: \
             run vg-index once as {owner}"
        )))
    }

    /// Whether this session may make an index on `chunks`: as its owner, a
    /// member of the owning role, or a superuser.
    fn may_index_chunks(&self) -> Result<bool, StoreError> {
        let row = self.row(
            "SELECT pg_has_role(current_user, relowner, 'USAGE')
                    OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
             FROM pg_class WHERE oid = 'chunks'::regclass",
            &[],
        )?;
        Ok(row.is_some_and(|r| r.get(0)))
    }

    /// Settings for a reading connection's searches: through the HNSW
    /// index (pgvector 0.8's iterative scan keeps looking when a scope
    /// filters out what it found), and the memory for ranking words.
    pub(super) fn tune_searches(&self) {
        let _ = self.batch(&format!("SET hnsw.ef_search = {HNSW_EF_SEARCH}"));
        let _ = self.batch("SET hnsw.iterative_scan = relaxed_order");
        // The word ranking sums each matching chunk's terms in a hash table:
        // 37 MB for 444k chunks at a million; with the default 4 MB it
        // spills to disk, a third slower.
        let _ = self.batch("SET work_mem = '64MB'");
    }
}

/// A cosine as SQL to order by, NULL where there is none: pgvector gives
/// NaN for a zero vector, which Postgres sorts above every number, so a
/// chunk without an angle took one of `limit` places before it was
/// dropped (`store::cosine_of_row`); NULL goes last.
fn no_angle_last(cosine: &str) -> String {
    format!("NULLIF(({cosine})::float8, 'NaN'::float8)")
}
