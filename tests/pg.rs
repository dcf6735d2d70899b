//! scripts/pg-server.sh: the throwaway Postgres with pgvector that the
//! shared-index tests and benchmarks run against (issue 28), from a pinned
//! registry wheel, on a Unix socket only.

use std::process::Command;

pub(crate) use crate::common::pg_server::PgServer;
use crate::common::pg_server::{pg_script, pg_script_on as server};

#[test]
fn a_throwaway_postgres_with_pgvector_starts_on_a_socket_and_stops() {
    let pg = PgServer::start();
    let dir = pg.dir.path().canonicalize().unwrap();
    assert_eq!(pg.url, format!("postgres:///vecgrep?host={}&user=vecgrep", dir.display()));
    assert!(pg.sql("SELECT version()").unwrap().starts_with("PostgreSQL 18"));
    assert!(pg.sql("SELECT extversion FROM pg_extension WHERE extname = 'vector'").unwrap().starts_with("0.8"));
    // pgvector answers a nearest-neighbour question, and builds an HNSW index.
    pg.sql("CREATE TABLE v (id int, e vector(3)); INSERT INTO v VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0,0,1]'); CREATE INDEX ON v USING hnsw (e vector_cosine_ops)").unwrap();
    assert_eq!(pg.sql("SELECT id FROM v ORDER BY e <=> '[0.1,0.9,0.2]' LIMIT 1").unwrap(), "2");
    // It listens on no TCP port, and a second start on the same cluster is refused.
    assert_eq!(pg.sql("SHOW listen_addresses").unwrap(), "");
    let again = server(&["start"], pg.dir.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("still running"));
    // Stopped, it answers no more; started again, the data is still there.
    assert!(server(&["stop"], pg.dir.path()).status.success());
    assert!(pg.sql("SELECT 1").is_err());
    assert!(!dir.join("data/postmaster.pid").exists());
    let o = server(&["start"], pg.dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(pg.sql("SELECT count(*) FROM v").unwrap(), "3");
    // Stopping twice is no error.
    assert!(server(&["stop"], pg.dir.path()).status.success());
    assert!(server(&["stop"], pg.dir.path()).status.success());
    // A server killed leaves its postmaster.pid: it is started again, not
    // "still running" (audit 217: neither start nor stop got past it).
    assert!(server(&["start"], pg.dir.path()).status.success());
    let pid = std::fs::read_to_string(dir.join("data/postmaster.pid")).unwrap();
    let pid = pid.lines().next().unwrap().trim().to_string();
    assert!(Command::new("kill").args(["-9", &pid]).status().unwrap().success());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let o = server(&["start"], pg.dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(pg.sql("SELECT count(*) FROM v").unwrap(), "3");
    assert!(server(&["stop"], pg.dir.path()).status.success());
    // A cluster an earlier version of the script made, with no mark, is
    // taken as it is (review 218).
    std::fs::remove_file(dir.join(".pg-server")).unwrap();
    let o = server(&["start"], pg.dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(pg.sql("SELECT count(*) FROM v").unwrap(), "3");
    assert!(server(&["stop"], pg.dir.path()).status.success());
}

/// A directory the script did not make is the user's: refused, untouched
/// (audit 217: its data/ was removed, and as root it was given to nobody).
#[test]
fn a_directory_of_the_users_is_refused_and_left_as_it_is() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/notes.txt"), "mine\n").unwrap();
    let owner = std::fs::metadata(dir.path()).unwrap().uid();
    let o = server(&["start"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds files of its own"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("data/notes.txt")).unwrap(), "mine\n");
    assert_eq!(std::fs::metadata(dir.path()).unwrap().uid(), owner);
    // A cluster's file beside files of the user's is no directory of an
    // earlier version's (review 219: its pg/ was replaced).
    std::fs::write(dir.path().join("data/PG_VERSION"), "18\n").unwrap();
    std::fs::create_dir(dir.path().join("pg")).unwrap();
    std::fs::write(dir.path().join("pg/mine.txt"), "precious\n").unwrap();
    let o = server(&["start"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(dir.path().join("pg/mine.txt")).unwrap(), "precious\n");
    // A lock naming a process that is no postgres of it stops nothing
    // (review 219: stop sent it SIGINT).
    let mut other = Command::new("sleep").arg("30").spawn().unwrap();
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    std::fs::write(
        dir.path().join("data/postmaster.pid"),
        format!("{}\n{}\n{started}\n", other.id(), dir.path().display()),
    )
    .unwrap();
    assert!(server(&["stop"], dir.path()).status.success());
    assert!(other.try_wait().unwrap().is_none(), "the process named was signalled");
    let _ = other.kill();
    let _ = other.wait();
}

#[test]
fn the_server_script_says_how_it_is_used() {
    let o = Command::new(pg_script()).arg("begin").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("pg-server: usage: scripts/pg-server.sh start DIR"), "{err}");
}
