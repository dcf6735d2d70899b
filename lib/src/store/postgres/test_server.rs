//! A throwaway Postgres for the backend's own tests: scripts/pg-server.sh
//! (the one the integration tests and benchmarks use), stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::PgIndex;
use crate::project::{ProjectRoot, RootMarker, SharedIndex};

pub(crate) struct TestServer {
    dir: tempfile::TempDir,
    url: String,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/pg-server.sh")
}

impl TestServer {
    pub(crate) fn start() -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(script()).arg("start").arg(dir.path()).output().unwrap();
        assert!(out.status.success(), "pg-server.sh start: {}", String::from_utf8_lossy(&out.stderr));
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        TestServer { dir, url }
    }

    /// The index of `project` in this server, open for writing.
    pub(crate) fn index(&self, project: &str) -> PgIndex {
        let root = ProjectRoot {
            path: self.dir.path().to_path_buf(),
            marker: RootMarker::None,
            shared: Some(SharedIndex {
                url: self.url.clone(),
                project: project.into(),
                writer: "tests".into(),
                adopt: false,
            }),
        };
        PgIndex::open_for_writing(&root, &mut |_| {}).unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("stop").arg(self.dir.path()).output();
    }
}
