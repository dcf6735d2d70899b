//! The commit log in SQLite (`CommitStore`): tables `commits`,
//! `commit_pieces` and the full-text table `commit_fts` (rowid = piece id).

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction};

use super::{blob_floats, vector_to_blob, SqliteIndex};
use crate::store::commits::{CommitRow, CommitStore, CommitWrite, PieceKind, PieceRef, StoredCommit, StoredPiece};
use crate::store::{IndexReader, StoreError};

impl SqliteIndex {
    /// Whether the log's tables exist: an index written before them, and
    /// never opened for writing since, lacks them (and reading adds none).
    pub(in crate::store) fn has_log(&self) -> Result<bool, StoreError> {
        self.has_table("commits")
    }
}

/// The meta key that says which file the commit log was made or read
/// again in (`SqliteIndex::log_made_here`), as `CHECKED_AS` says it of the
/// code index: no run checks stored commits against git.
const LOG_MADE_AS: &str = "log_made_as";

impl SqliteIndex {
    /// Whether the commit log was made in this file, here: an empty one is too.
    pub(crate) fn log_made_here(&self) -> Result<bool, StoreError> {
        Ok(self.marked_here(LOG_MADE_AS)? || self.log_is_empty()?)
    }

    /// A commit log not made here (one committed beside the code) is read
    /// from git again: its rows were never checked against git's commits
    /// (review 240: a forged subject and author under a real sha).
    pub(crate) fn forget_a_log_not_made_here(&mut self) -> Result<(), StoreError> {
        let Some(here) = self.mark_here() else { return Ok(()) };
        if self.marked_here(LOG_MADE_AS)? {
            return Ok(());
        }
        // Every table of it, whatever each holds: pieces left with no
        // commit took the ids of the commits read next (review 241). A log
        // with nothing keeps its model unset (review 242).
        if !self.log_is_empty()? {
            let model = self.log_model()?.unwrap_or_default();
            self.reset_log(&model)?;
        }
        crate::store::IndexWriter::set_meta_value(self, LOG_MADE_AS, &here)
    }

    /// Whether the log holds no commit, no piece and no word.
    fn log_is_empty(&self) -> Result<bool, StoreError> {
        let empty = self.conn.query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM commits) AND NOT EXISTS (SELECT 1 FROM commit_pieces)
                    AND NOT EXISTS (SELECT 1 FROM commit_fts)",
            [],
            |r| r.get(0),
        );
        empty.map_err(|e| self.damaged(e))
    }
}

impl CommitStore for SqliteIndex {
    fn log_model(&self) -> Result<Option<String>, StoreError> {
        self.meta_value("log_model")
    }

    fn reset_log(&mut self, model: &str) -> Result<(), StoreError> {
        reset_log_in(&mut self.conn, model).map_err(|e| self.damaged(e))
    }

    // `log_boundary`, not the `log_shallow` of logs whose boundary commits
    // were stored touching nothing: one that lacks it has them read again.
    fn log_shallow(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .meta_value("log_boundary")?
            .map(|v| v.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default())
    }

    fn set_log_shallow(&mut self, shas: &[String]) -> Result<(), StoreError> {
        crate::store::IndexWriter::set_meta_value(self, "log_boundary", &shas.join(" "))
    }

    fn log_value(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.meta_value(key)
    }

    fn set_log_value(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        crate::store::IndexWriter::set_meta_value(self, key, value)
    }

    fn stored_commits(&self) -> Result<HashMap<String, StoredCommit>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.sha, c.diffs, EXISTS (SELECT 1 FROM commit_pieces p WHERE p.commit_id = c.id AND p.embedding IS NULL),
                        c.subject = ''
                 FROM commits c",
            )
            .map_err(|e| self.damaged(e))?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                StoredCommit {
                    diffs: r.get::<_, i64>(1)? != 0,
                    holes: r.get::<_, i64>(2)? != 0,
                    no_subject: r.get::<_, i64>(3)? != 0,
                },
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>().map_err(|e| self.damaged(e))
    }

    fn write_commits(&mut self, commits: &[CommitWrite]) -> Result<(), StoreError> {
        write_commits_in(&mut self.conn, commits).map_err(|e| self.damaged(e))
    }

    fn commit_rows(&self, shas: &[&str]) -> Result<Vec<CommitRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT sha, time, offset, author, email, subject, body, paths, diffs FROM commits WHERE sha = ?1",
            )
            .map_err(|e| self.damaged(e))?;
        let mut rows = Vec::with_capacity(shas.len());
        for sha in shas {
            let row = stmt
                .query_row([sha], |r| {
                    Ok(CommitRow {
                        sha: r.get(0)?,
                        time: r.get(1)?,
                        offset: r.get(2)?,
                        author: r.get(3)?,
                        email: r.get(4)?,
                        subject: r.get(5)?,
                        body: r.get(6)?,
                        paths: stored_paths(&r.get::<_, String>(7)?),
                        diffs: r.get::<_, i64>(8)? != 0,
                    })
                })
                .optional()
                .map_err(|e| self.damaged(e))?;
            rows.extend(row);
        }
        Ok(rows)
    }

    fn each_piece_vector(&self, visit: &mut dyn FnMut(PieceRef<'_>, &[f32])) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT p.id, c.sha, p.kind, p.embedding FROM commit_pieces p JOIN commits c ON c.id = p.commit_id
                 WHERE p.embedding IS NOT NULL",
            )
            .map_err(|e| self.damaged(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.damaged(e))?;
        let mut vector = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
            let sha: String = row.get(1)?;
            let blob = row.get_ref(3)?.as_blob().map_err(|e| StoreError::Database(Box::new(e)))?;
            vector.clear();
            vector.extend(blob_floats(blob));
            visit(PieceRef { id: row.get(0)?, sha: &sha, kind: PieceKind::from_code(row.get(2)?) }, &vector);
        }
        Ok(())
    }

    fn each_word_match(&self, expr: &str, visit: &mut dyn FnMut(PieceRef<'_>, f64) -> bool) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT f.rowid, c.sha, p.kind, bm25(commit_fts) AS rank FROM commit_fts f
                 JOIN commit_pieces p ON p.id = f.rowid JOIN commits c ON c.id = p.commit_id
                 WHERE commit_fts MATCH ?1 ORDER BY rank",
            )
            .map_err(|e| self.damaged(e))?;
        let mut rows = stmt.query([expr]).map_err(|e| self.damaged(e))?;
        while let Some(row) = rows.next().map_err(|e| self.damaged(e))? {
            let sha: String = row.get(1)?;
            let piece = PieceRef { id: row.get(0)?, sha: &sha, kind: PieceKind::from_code(row.get(2)?) };
            if !visit(piece, row.get(3)?) {
                break;
            }
        }
        Ok(())
    }

    fn piece(&self, id: i64) -> Result<Option<StoredPiece>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT c.sha, p.kind, p.path, p.line, p.text FROM commit_pieces p JOIN commits c ON c.id = p.commit_id
                 WHERE p.id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    Ok(StoredPiece {
                        sha: r.get(0)?,
                        kind: PieceKind::from_code(r.get(1)?),
                        path: r.get(2)?,
                        line: r.get::<_, i64>(3)? as usize,
                        text: r.get(4)?,
                    })
                })
                .optional()
            })
            .map_err(|e| self.damaged(e))
    }

    fn log_counts(&self) -> Result<(u64, u64, u64), StoreError> {
        self.conn
            .query_row(
                "SELECT (SELECT count(*) FROM commits), count(*), count(*) - count(embedding) FROM commit_pieces",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64)),
            )
            .map_err(|e| self.damaged(e))
    }
}

// The writes' transactions run apart from `self`, as `write_batch_in` does,
// so that their SQLite error is described by `damaged` (the index's path,
// and the system's reason behind a refused write) once the connection is free.

/// `reset_log`'s transaction.
fn reset_log_in(conn: &mut rusqlite::Connection, model: &str) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM commit_fts", [])?;
    tx.execute("DELETE FROM commit_pieces", [])?;
    tx.execute("DELETE FROM commits", [])?;
    tx.execute("INSERT OR REPLACE INTO meta VALUES ('log_model', ?1)", [model])?;
    tx.commit()
}

/// `write_commits`' transaction.
fn write_commits_in(conn: &mut rusqlite::Connection, commits: &[CommitWrite]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for write in commits {
        replace_commit(&tx, write)?;
    }
    tx.commit()
}

/// Store one commit and its pieces in `tx`, replacing what was stored for its sha.
fn replace_commit(tx: &Transaction<'_>, write: &CommitWrite) -> rusqlite::Result<()> {
    let c = &write.commit;
    let old: Option<i64> =
        tx.prepare_cached("SELECT id FROM commits WHERE sha = ?1")?.query_row([&c.sha], |r| r.get(0)).optional()?;
    if let Some(old) = old {
        tx.execute("DELETE FROM commit_fts WHERE rowid IN (SELECT id FROM commit_pieces WHERE commit_id = ?1)", [old])?;
        tx.execute("DELETE FROM commits WHERE id = ?1", [old])?;
    }
    tx.prepare_cached(
        "INSERT INTO commits (sha, time, offset, author, email, subject, body, paths, diffs)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        c.sha,
        c.time,
        c.offset,
        c.author,
        c.email,
        c.subject,
        c.body,
        paths_to_store(&c.paths),
        c.diffs
    ])?;
    let commit_id = tx.last_insert_rowid();
    let mut add_piece = tx.prepare_cached(
        "INSERT INTO commit_pieces (commit_id, kind, path, line, text, embedding) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut add_words = tx.prepare_cached("INSERT INTO commit_fts (rowid, terms) VALUES (?1, ?2)")?;
    for p in &write.pieces {
        let blob = p.vector.as_deref().map(vector_to_blob);
        add_piece.execute(params![commit_id, p.kind.code(), p.path, p.line as i64, p.text, blob])?;
        add_words.execute(params![tx.last_insert_rowid(), p.words])?;
    }
    Ok(())
}

/// A commit's paths as the `paths` column keeps them: each ended by a NUL,
/// which no path holds (a newline or a carriage return may be in a name).
fn paths_to_store(paths: &[String]) -> String {
    paths.iter().flat_map(|p| [p.as_str(), "\0"]).collect()
}

/// `paths_to_store`'s inverse; a row written before NULs (none in it) has
/// its paths one a line.
fn stored_paths(column: &str) -> Vec<String> {
    if column.contains('\0') {
        column.split_terminator('\0').map(str::to_string).collect()
    } else {
        column.split('\n').filter(|p| !p.is_empty()).map(str::to_string).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::empty_store;
    use super::*;
    use crate::store::PieceWrite;

    #[test]
    fn paths_with_newlines_come_back_as_they_went_in() {
        let paths = vec!["with\nnewline.txt".to_string(), "cr\r".into(), "src/a.rs".into()];
        assert_eq!(stored_paths(&paths_to_store(&paths)), paths);
        assert_eq!(stored_paths(&paths_to_store(&["one\nname".into()])), ["one\nname"]);
        assert!(stored_paths(&paths_to_store(&[])).is_empty());
        // Rows written before: one path a line.
        assert_eq!(stored_paths("src/a.rs\nsrc/b.rs"), ["src/a.rs", "src/b.rs"]);
    }

    fn write(sha: &str, words: &[&str], vector: Option<Vec<f32>>) -> CommitWrite {
        let commit = CommitRow {
            sha: sha.into(),
            time: 1,
            offset: 0,
            author: "Ada".into(),
            email: "ada@example.org".into(),
            subject: format!("subject of {sha}"),
            body: String::new(),
            paths: vec!["src/a.rs".into(), "README.md".into()],
            diffs: words.len() > 1,
        };
        let pieces = words
            .iter()
            .enumerate()
            .map(|(i, w)| PieceWrite {
                kind: if i == 0 { PieceKind::Message } else { PieceKind::Diff },
                path: (i > 0).then(|| "src/a.rs".to_string()),
                line: i,
                text: w.to_string(),
                vector: vector.clone(),
                words: w.to_string(),
            })
            .collect();
        CommitWrite { commit, pieces }
    }

    #[test]
    fn commits_round_trip_and_a_rewrite_replaces_pieces_and_words() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        store.reset_log("m").unwrap();
        store.write_commits(&[write("a", &["retry"], Some(vec![1.0, 0.0])), write("b", &["cache"], None)]).unwrap();
        assert_eq!(store.log_counts().unwrap(), (2, 2, 1));
        let stored = store.stored_commits().unwrap();
        assert_eq!(stored["a"], StoredCommit { diffs: false, holes: false, no_subject: false });
        assert_eq!(
            stored["b"],
            StoredCommit { diffs: false, holes: true, no_subject: false },
            "b's piece has no vector"
        );
        let rows = store.commit_rows(&["b", "missing", "a"]).unwrap();
        assert_eq!(rows.iter().map(|r| r.sha.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(rows[1].paths, ["src/a.rs", "README.md"]);

        store.write_commits(&[write("a", &["backoff", "sleep"], Some(vec![0.0, 1.0]))]).unwrap();
        assert_eq!(store.log_counts().unwrap(), (2, 3, 1));
        let mut matched = Vec::new();
        store
            .each_word_match("retry", &mut |p, _| {
                matched.push(p.sha.to_string());
                true
            })
            .unwrap();
        assert!(matched.is_empty(), "the old words went with the old pieces");
        store
            .each_word_match("sleep", &mut |p, _| {
                matched.push(format!("{}:{}", p.sha, p.kind.as_str()));
                true
            })
            .unwrap();
        assert_eq!(matched, ["a:diff"]);
        let mut vectors = Vec::new();
        store.each_piece_vector(&mut |p, v| vectors.push((p.sha.to_string(), v.to_vec()))).unwrap();
        assert_eq!(vectors, [("a".to_string(), vec![0.0, 1.0]), ("a".to_string(), vec![0.0, 1.0])]);
        let piece = store.piece(1).unwrap();
        assert!(piece.is_none(), "the first piece of a was replaced");
    }

    #[test]
    fn a_reset_empties_the_log_but_not_the_files_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        crate::store::IndexWriter::write_batch(
            &mut store,
            &[super::super::tests::file_of_words("a.rs", "x")],
            &[],
            &[],
        )
        .unwrap();
        store.reset_log("m").unwrap();
        store.write_commits(&[write("a", &["retry"], None)]).unwrap();
        store.reset_log("other").unwrap();
        assert_eq!(store.log_counts().unwrap(), (0, 0, 0));
        assert_eq!(store.log_model().unwrap().as_deref(), Some("other"));
        assert_eq!(crate::store::IndexReader::stats(&store).unwrap().files, 1);
    }
}
