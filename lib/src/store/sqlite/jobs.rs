//! Index jobs kept in the `jobs` table: an id, a state, when, and what the
//! run did or why it failed.

use rusqlite::{params, OptionalExtension};

use super::SqliteIndex;
use crate::store::{IndexJob, JobState, StoreError};

impl SqliteIndex {
    pub(super) fn job(&self, id: &str) -> Result<Option<IndexJob>, StoreError> {
        if !self.has_jobs_table()? {
            return Ok(None);
        }
        let row = self
            .conn
            .prepare_cached(
                "SELECT state, started_ms, finished_ms, files, chunks, embedded, removed, error FROM jobs WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    let count = |i: usize| r.get::<_, Option<i64>>(i).map(|n| n.map(|n| n.max(0) as u64));
                    Ok((
                        r.get::<_, String>(0)?,
                        IndexJob {
                            id: id.to_string(),
                            state: JobState::Failed,
                            started_ms: r.get(1)?,
                            finished_ms: r.get(2)?,
                            files: count(3)?,
                            chunks: count(4)?,
                            embedded: count(5)?,
                            removed: count(6)?,
                            error: r.get(7)?,
                        },
                    ))
                })
                .optional()
            })
            .map_err(|e| self.damaged(e))?;
        let Some((state, mut job)) = row else { return Ok(None) };
        job.state = JobState::named(&state).ok_or_else(|| StoreError::Damaged {
            path: self.path.clone(),
            cause: format!("job {id} has the state {state:?}"),
        })?;
        Ok(Some(job))
    }

    pub(super) fn put_job(&mut self, job: &IndexJob) -> Result<(), StoreError> {
        let count = |n: Option<u64>| n.map(|n| n.min(i64::MAX as u64) as i64);
        self.conn
            .execute(
                "INSERT OR REPLACE INTO jobs (id, state, started_ms, finished_ms, files, chunks, embedded, removed, error)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    job.id,
                    job.state.as_str(),
                    job.started_ms,
                    job.finished_ms,
                    count(job.files),
                    count(job.chunks),
                    count(job.embedded),
                    count(job.removed),
                    job.error
                ],
            )
            .map_err(|e| self.damaged(e))?;
        self.conn
            .execute(
                "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs ORDER BY started_ms DESC, id DESC LIMIT -1 OFFSET ?1)",
                [crate::store::KEPT_JOBS],
            )
            .map_err(|e| self.damaged(e))?;
        Ok(())
    }

    pub(super) fn fail_running(&mut self, reason: &str, now_ms: i64) -> Result<u64, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE jobs SET state = 'failed', finished_ms = ?2, error = ?1 WHERE state = 'running'",
                params![reason, now_ms],
            )
            .map_err(|e| self.damaged(e))?;
        Ok(n as u64)
    }

    /// An index written by a version before jobs has no table for them.
    fn has_jobs_table(&self) -> Result<bool, StoreError> {
        self.has_table("jobs")
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::empty_store;
    use super::*;
    use crate::store::{IndexMeta, IndexReader, IndexWriter};

    fn job(id: &str, state: JobState) -> IndexJob {
        IndexJob { state, ..IndexJob::running(id.into(), 1000) }
    }

    #[test]
    fn jobs_are_kept_across_rebuilds_and_fail_when_their_server_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        store.put_index_job(&job("a", JobState::Running)).unwrap();
        let done =
            IndexJob { finished_ms: Some(2000), files: Some(3), chunks: Some(9), ..job("b", JobState::Completed) };
        store.put_index_job(&done).unwrap();
        assert_eq!(store.index_job("b").unwrap(), Some(done.clone()));
        assert_eq!(store.index_job("nope").unwrap(), None);
        let meta = IndexMeta { chunk_size: 300, chunk_overlap: 10, chunk_format: 1, ..IndexMeta::for_tests() };
        store.reset(&meta).unwrap();
        assert_eq!(store.index_job("a").unwrap().map(|j| j.state), Some(JobState::Running));
        assert_eq!(store.fail_running_jobs("the server stopped", 5000).unwrap(), 1);
        let failed = store.index_job("a").unwrap().unwrap();
        assert_eq!(
            (failed.state, failed.finished_ms, failed.error.as_deref()),
            (JobState::Failed, Some(5000), Some("the server stopped"))
        );
        assert_eq!(store.index_job("b").unwrap(), Some(done), "finished jobs stay as they were");
        let (_, problems) = store.verify().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn an_index_from_before_jobs_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = empty_store(dir.path());
        store.conn.execute_batch("DROP TABLE jobs").unwrap();
        assert_eq!(store.index_job("a").unwrap(), None);
    }
}
