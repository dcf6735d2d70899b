//! Writers of a shared project take turns through an advisory lock that a
//! connection of its own holds for the whole run, which the server drops
//! with a dead writer's session. The server may also end that session
//! while the writer lives (an admin's `pg_terminate_backend`, an idle
//! timeout, a network cut): the lock is then gone, another writer may take
//! it, and two runs would change one index at once. So every change a
//! writer commits first checks, in its own transaction, that the session
//! this process took the lock with still holds it.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use postgres::{Client, GenericClient};

use super::connection::connect_unless;
use crate::project::SharedIndex;
use crate::store::StoreError;

/// The writer locks this process holds: the server's URL and the project,
/// with the server's process id of the session that holds it.
static HELD: Mutex<Vec<(String, String, i32)>> = Mutex::new(Vec::new());

/// How often a writer waiting for the lock asks for it again.
const LOCK_POLL: Duration = Duration::from_millis(100);

/// The number of the advisory lock writers of a project take turns with.
fn lock_key(project: &str) -> i64 {
    let hash = blake3::hash(format!("vecgrep writer {project}").as_bytes());
    i64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
}

/// The lock's connection; the lock is let go with it.
struct HeldLock {
    _client: Client,
    url: String,
    project: String,
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        held.retain(|(url, project, _)| !(*url == self.url && *project == self.project));
    }
}

/// Hold the project's writer lock, waited for (calling `waiting` once if
/// another writer holds it), or None once `give_up` says so while
/// connecting or waiting. The lock lasts as long as the returned value.
pub(in crate::store) fn lock(
    shared: &SharedIndex,
    waiting: &mut dyn FnMut(),
    give_up: &dyn Fn() -> bool,
) -> Result<Option<Box<dyn Send>>, StoreError> {
    let Some((mut client, place)) = connect_unless(shared, give_up)? else { return Ok(None) };
    let key = lock_key(&shared.project);
    let failed = |e: postgres::Error| StoreError::Backend { path: place.clone(), source: e.into() };
    let taken = crate::store::poll::poll_for(LOCK_POLL, waiting, give_up, || {
        let taken: bool = client.query_one("SELECT pg_try_advisory_lock($1)", &[&key]).map_err(failed)?.get(0);
        Ok(taken.then_some(()))
    })?;
    if taken.is_none() {
        return Ok(None);
    }
    super::connection::never_idle_out(&mut client);
    let session: i32 = client.query_one("SELECT pg_backend_pid()", &[]).map_err(failed)?.get(0);
    let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    held.push((shared.url.clone(), shared.project.clone(), session));
    Ok(Some(Box::new(HeldLock { _client: client, url: shared.url.clone(), project: shared.project.clone() })))
}

/// Refuse to commit the transaction `tx` changes the index in when this
/// process took a writer lock on the index's project, or on the project
/// whose revision it is (forgetting a revision takes the project's lock
/// only; indexing one takes both), and the session it took it with holds
/// it no more. A process that holds no such lock (a test of the backend
/// alone, a server marking its jobs) is not checked.
pub(super) fn check_still_held(
    tx: &mut impl GenericClient,
    shared: &SharedIndex,
    place: &Path,
) -> Result<(), StoreError> {
    let sessions: Vec<(String, i32)> = {
        let held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let ours = |project: &str| project == shared.project || project == shared.writers_project();
        held.iter()
            .filter(|(url, project, _)| *url == shared.url && ours(project))
            .map(|h| (h.1.clone(), h.2))
            .collect()
    };
    let failed = |e: postgres::Error| StoreError::Backend { path: place.to_path_buf(), source: e.into() };
    let mut lost = false;
    for (project, session) in sessions {
        let key = lock_key(&project);
        // An advisory lock on a bigint is shown as its two halves.
        let (high, low) = ((key >> 32) as u32, key as u32);
        let still: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                   AND pid = $1 AND classid = $2 AND objid = $3 AND objsubid = 1)",
                &[&session, &high, &low],
            )
            .map_err(failed)?
            .get(0);
        lost |= !still;
    }
    if !lost {
        return Ok(());
    }
    let why = "the writer lock was lost: the server ended the session that held it, so another run may be writing; \
               this change was not kept; run vg-index again";
    Err(StoreError::Backend { path: place.to_path_buf(), source: why.into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::IndexWriter;

    #[test]
    fn a_writer_whose_lock_session_the_server_ended_commits_nothing_more() {
        let server = super::super::test_server::PgServer::start();
        let shared = SharedIndex { url: server.url.clone(), project: "t".into(), writer: "tests".into(), adopt: false };
        let held = lock(&shared, &mut || {}, &|| false).unwrap().expect("free");
        let mut index = super::super::test_server::index(&server, "t");
        index.set_meta_value("mark", "before").unwrap();
        let ended = server
            .sql("SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_locks WHERE locktype = 'advisory' AND granted")
            .unwrap();
        assert_eq!(ended, "1");
        let err = index.set_meta_value("mark", "after").expect_err("the lost lock is seen before the commit");
        assert!(format!("{}", std::error::Error::source(&err).unwrap()).contains("writer lock was lost"), "{err}");
        assert_eq!(index.as_reader().meta_value("mark").unwrap().as_deref(), Some("before"));
        // Another writer takes the lock the server let go; the first one's
        // stale session is no longer what the check asks about once dropped.
        drop(held);
        let again = lock(&shared, &mut || {}, &|| false).unwrap().expect("free again");
        index.set_meta_value("mark", "after").unwrap();
        drop(again);
    }

    #[test]
    fn a_servers_idle_timeout_ends_neither_the_lock_nor_the_writes_of_a_run() {
        let server = super::super::test_server::PgServer::start();
        server.sql("ALTER ROLE CURRENT_USER SET idle_session_timeout = '300ms'").unwrap();
        let shared = SharedIndex { url: server.url.clone(), project: "t".into(), writer: "tests".into(), adopt: false };
        let held = lock(&shared, &mut || {}, &|| false).unwrap().expect("free");
        let mut index = super::super::test_server::index(&server, "t");
        // A batch being embedded: neither connection says a word meanwhile.
        std::thread::sleep(Duration::from_millis(900));
        index.set_meta_value("mark", "after a pause").unwrap();
        drop(held);
    }

    #[test]
    fn a_revisions_index_changed_under_its_projects_lock_is_checked_against_it() {
        let server = super::super::test_server::PgServer::start();
        let project =
            SharedIndex { url: server.url.clone(), project: "t".into(), writer: "tests".into(), adopt: false };
        // Forgetting a revision takes the project's lock only.
        let held = lock(&project, &mut || {}, &|| false).unwrap().expect("free");
        let mut revision = super::super::test_server::index(&server, &format!("t@{}", "a".repeat(40)));
        revision.set_meta_value("mark", "before").unwrap();
        assert_eq!(
            server
                .sql("SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_locks WHERE locktype = 'advisory'")
                .unwrap(),
            "1"
        );
        let err = revision.set_meta_value("mark", "after").expect_err("the project's lost lock is seen");
        assert!(format!("{}", std::error::Error::source(&err).unwrap()).contains("writer lock was lost"), "{err}");
        drop(held);
    }
}
