//! What an SQLite index holds, counted, and the damage a crash or a bug
//! could leave in it.

use std::collections::HashMap;

use super::SqliteIndex;
use crate::store::name_counts::NameCounts;
use crate::store::{IndexReader, IndexStats, StoreError};

impl SqliteIndex {
    /// The spec's IndexStats; db_size_bytes counts the database, its WAL,
    /// and its `-shm` unless this connection made it.
    pub(super) fn counts(&self) -> Result<IndexStats, StoreError> {
        let (files, chunks, holes, pending): (i64, i64, i64, i64) = self
            .conn
            .query_row(
                "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks),
                        (SELECT count(*) FROM chunks WHERE embedding IS NULL AND static_embedding IS NULL),
                        (SELECT count(*) FROM chunks WHERE embedding IS NULL AND static_embedding IS NOT NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(|e| self.damaged(e))?;
        let suffixes: &[&str] = if self.shm_made_here { &["", "-wal"] } else { &["", "-wal", "-shm"] };
        let db_size_bytes = suffixes
            .iter()
            .filter_map(|suffix| std::fs::metadata(super::sidecar(&self.path, suffix)).ok())
            .map(|m| m.len())
            .sum();
        Ok(IndexStats {
            files: files as u64,
            chunks: chunks as u64,
            holes: holes as u64,
            pending: pending as u64,
            db_size_bytes,
        })
    }

    /// SQLite's own integrity check, the word index's, chunks without a
    /// file, words without a chunk or a chunk without words, vectors of the
    /// wrong size, impossible line ranges and name counts out of step.
    pub(super) fn check(&self) -> Result<(IndexStats, Vec<String>), StoreError> {
        // One snapshot for every count compared: a run writing meanwhile
        // (between the chunks and their name counts, say) is not damage.
        let snapshot = self.conn.unchecked_transaction().map_err(|e| self.damaged(e))?;
        let (stats, mut problems) = self.check_snapshot()?;
        snapshot.commit().map_err(|e| self.damaged(e))?;
        // FTS5's own check writes (a command row), so it runs apart; it
        // compares the word index with the chunks in one statement.
        if let Err(e) = self.check_words() {
            problems.push(format!("the word index is inconsistent: {e}"));
        }
        Ok((stats, problems))
    }

    /// FTS5's own check of the word index. An index this user may only
    /// read (`connect_for_reading`) cannot take the check's command row, so
    /// it is checked in a copy in memory: being read-only is not damage.
    /// The copy costs the index's size in memory for the check's length;
    /// `--verify` is asked for, and a read-only index is the rare case.
    fn check_words(&self) -> rusqlite::Result<()> {
        const CHECK: &str = "INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')";
        match self.conn.execute(CHECK, []) {
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) => {
                let mut copy = rusqlite::Connection::open_in_memory()?;
                copy_whole(&self.conn, &mut copy)?;
                copy.execute(CHECK, []).map(drop)
            }
            done => done.map(drop),
        }
    }

    /// `check` but for FTS5's own check, inside the caller's snapshot.
    fn check_snapshot(&self) -> Result<(IndexStats, Vec<String>), StoreError> {
        let mut problems = self.integrity_problems()?;
        // The model's vectors have the size the index recorded (a remote
        // model's may differ); the static table's rows are MiniLM's.
        let model_bytes = (self.dims()?.unwrap_or(crate::embed::DIMS) * 4) as i64;
        let static_bytes = (crate::embed::DIMS * 4) as i64;
        for (sql, what, size) in [
            (
                "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)",
                "chunks belong to no file",
                None,
            ),
            (
                "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)",
                "word entries belong to no chunk",
                None,
            ),
            (
                "SELECT count(*) FROM chunks WHERE id NOT IN (SELECT rowid FROM chunks_fts)",
                "chunks have no word entry",
                None,
            ),
            (
                "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL AND length(embedding) != ?1",
                "vectors have the wrong size",
                Some(model_bytes),
            ),
            (
                // The model never gives a zero or non-finite vector (a
                // static one may be zero: a text of no known token), and a
                // search passes one over as near nothing.
                "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL AND length(embedding) = ?1
                 AND vec_distance_cosine(embedding, embedding) IS NULL",
                "vectors are zero or not finite",
                Some(model_bytes),
            ),
            (
                "SELECT count(*) FROM chunks WHERE static_embedding IS NOT NULL AND length(static_embedding) != ?1",
                "static vectors have the wrong size",
                Some(static_bytes),
            ),
            (
                // A static vector may be zero (a text of no token the table
                // knows), never other than finite: a search passes it over.
                "SELECT count(*) FROM chunks WHERE static_embedding IS NOT NULL AND length(static_embedding) = ?1
                 AND vec_distance_l2(static_embedding, static_embedding) IS NULL",
                "static vectors are not finite",
                Some(static_bytes),
            ),
            (
                "SELECT count(*) FROM chunks WHERE start_line < 1 OR end_line < start_line",
                "chunks have impossible line ranges",
                None,
            ),
        ] {
            let mut stmt = self.conn.prepare(sql).map_err(|e| self.damaged(e))?;
            let n: i64 = match size {
                Some(bytes) => stmt.query_row([bytes], |r| r.get(0)),
                None => stmt.query_row([], |r| r.get(0)),
            }
            .map_err(|e| self.damaged(e))?;
            if n > 0 {
                problems.push(format!("{n} {what}"));
            }
        }
        if !self.name_counts_agree()? {
            problems.push("the name counts do not match the chunks' names".into());
        }
        let unreadable = self.texts_not_utf8()?;
        if unreadable > 0 {
            problems.push(format!("{unreadable} chunks or file paths hold text that is not UTF-8"));
        }
        problems.extend(self.codes_problems()?);
        problems.extend(self.paths_problem()?);
        let stats = self.counts()?;
        if stats.files > 0 && self.meta()?.is_none() {
            problems.push("the index holds files but does not say what built it".into());
        }
        Ok((stats, problems))
    }

    /// How many chunks (their text, what they are embedded with, their
    /// names) and file paths are not UTF-8: vecgrep writes none, so each is
    /// a byte damaged where SQLite's own check does not look (a page's
    /// structure is sound, the text in it is not), which every search
    /// meeting it failed on.
    fn texts_not_utf8(&self) -> Result<u64, StoreError> {
        let mut count = 0;
        for sql in [
            "SELECT CAST(text AS BLOB), CAST(around AS BLOB), CAST(names AS BLOB) FROM chunks",
            "SELECT CAST(path AS BLOB) FROM files",
        ] {
            let mut stmt = self.conn.prepare(sql).map_err(|e| self.damaged(e))?;
            let columns = stmt.column_count();
            let mut rows = stmt.query([]).map_err(|e| self.damaged(e))?;
            while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
                let readable =
                    |i| row.get_ref(i).map(|v| v.as_bytes().map_or(true, |b| std::str::from_utf8(b).is_ok()));
                for i in 0..columns {
                    if !readable(i).map_err(|e| self.damaged(e))? {
                        count += 1;
                        break;
                    }
                }
            }
        }
        Ok(count)
    }

    /// A stored file path that climbs out of the root or is absolute, or
    /// one that is no text at all (a blob, a number); one whose text is not
    /// UTF-8 is `texts_not_utf8`'s to count (review 230: read as a string,
    /// either failed the whole check).
    fn paths_problem(&self) -> Result<Option<String>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT path FROM files").map_err(|e| self.damaged(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.damaged(e))?;
        let mut paths = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
            match row.get_ref(0).map_err(|e| self.damaged(e))? {
                rusqlite::types::ValueRef::Text(bytes) => {
                    paths.extend(std::str::from_utf8(bytes).ok().map(str::to_owned))
                }
                // No path: counted as the empty one is.
                _ => paths.push(String::new()),
            }
        }
        Ok(crate::store::parts::stored_paths_problem(paths.iter().map(String::as_str)))
    }

    /// What SQLite's own integrity check finds.
    fn integrity_problems(&self) -> Result<Vec<String>, StoreError> {
        let mut problems = Vec::new();
        let mut integrity = self.conn.prepare("PRAGMA integrity_check").map_err(|e| self.damaged(e))?;
        let messages: Vec<String> = integrity
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.damaged(e))?;
        if messages != ["ok"] {
            problems.extend(messages.into_iter().map(|m| format!("sqlite: {m}")));
        }
        problems.extend(super::parts::foreign_object(&self.conn).map_err(|e| self.damaged(e))?);
        Ok(problems)
    }

    /// Whether `name_terms` and meta 'named_chunks' count what the chunks hold.
    fn name_counts_agree(&self) -> Result<bool, StoreError> {
        let damaged = |e| self.damaged(e);
        let mut expected = NameCounts::default();
        let mut stmt = self.conn.prepare("SELECT names FROM chunks WHERE names != ''").map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        while let Some(row) = rows.next().map_err(damaged)? {
            expected.count(row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?, 1);
        }
        let mut stmt = self.conn.prepare("SELECT term, chunks FROM name_terms").map_err(damaged)?;
        let stored: HashMap<String, i64> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).and_then(|rows| rows.collect()).map_err(damaged)?;
        Ok(stored == expected.terms && self.named_chunks()? == expected.named_chunks as u64)
    }
}
/// How often a copy of the index that finds it busy is tried again.
const COPY_TRIES: usize = 100;

/// Copy the whole of `from` into `to` in one step. From a source SQLite
/// may not write (its directory read-only, a `-wal` a killed process left
/// empty) a backup starts again at every step, so one of several steps
/// never ended: `--verify` of an index over 1024 pages spun for good.
fn copy_whole(from: &rusqlite::Connection, to: &mut rusqlite::Connection) -> rusqlite::Result<()> {
    let backup = rusqlite::backup::Backup::new(from, to)?;
    for _ in 0..COPY_TRIES {
        if backup.step(-1)? == rusqlite::backup::StepResult::Done {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Err(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
        Some("the index stayed busy while it was copied to check its words".into()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of more than one backup step's worth of pages comes back whole
    /// (a read-only source restarted each step, so several never ended: the
    /// case itself needs a read-only mount, tried by hand).
    #[test]
    fn an_index_of_many_pages_is_copied_whole_in_one_step() {
        let from = rusqlite::Connection::open_in_memory().unwrap();
        from.execute_batch("PRAGMA page_size = 4096; CREATE TABLE t(x BLOB);").unwrap();
        for _ in 0..3000 {
            from.execute("INSERT INTO t VALUES (randomblob(2000))", []).unwrap();
        }
        let pages: i64 = from.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
        assert!(pages > 1024, "{pages}");
        let mut to = rusqlite::Connection::open_in_memory().unwrap();
        copy_whole(&from, &mut to).unwrap();
        assert_eq!(to.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).unwrap(), 3000);
    }
}
