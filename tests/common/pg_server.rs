//! A throwaway Postgres with pgvector for a test (scripts/pg-server.sh),
//! stopped when dropped: one definition for the integration tests and the
//! library's own (`lib/src/store/postgres/test_server.rs` includes it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A cluster started for one test; stopped when dropped.
pub(crate) struct PgServer {
    pub dir: tempfile::TempDir,
    pub url: String,
}

/// scripts/pg-server.sh, from either crate's manifest directory.
pub(crate) fn pg_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/pg-server.sh")
}

/// The script run with `args` and then `dir`.
pub(crate) fn pg_script_on(args: &[&str], dir: &Path) -> Output {
    Command::new(pg_script()).args(args).arg(dir).output().unwrap()
}

impl PgServer {
    pub(crate) fn start() -> PgServer {
        let dir = tempfile::tempdir().unwrap();
        let o = pg_script_on(&["start"], dir.path());
        assert!(o.status.success(), "scripts/pg-server.sh start failed: {}", String::from_utf8_lossy(&o.stderr));
        let url = String::from_utf8(o.stdout).unwrap().trim().to_string();
        PgServer { dir, url }
    }

    /// Run SQL through the server's own psql; its output, unaligned.
    #[allow(dead_code)] // the library's tests ask through the store
    pub(crate) fn sql(&self, sql: &str) -> Result<String, String> {
        let o = Command::new(pg_script()).arg("bin").output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let psql = Path::new(String::from_utf8(o.stdout).unwrap().trim()).join("psql");
        let o = Command::new(psql).args(["-qAtX", "-v", "ON_ERROR_STOP=1", &self.url, "-c", sql]).output().unwrap();
        if o.status.success() {
            Ok(String::from_utf8(o.stdout).unwrap().trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = pg_script_on(&["stop"], self.dir.path());
    }
}
