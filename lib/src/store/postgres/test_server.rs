//! A throwaway Postgres for the backend's own tests: the integration tests'
//! `PgServer` (tests/common/pg_server.rs, on scripts/pg-server.sh), with
//! the index of a project in it.

use super::PgIndex;
use crate::project::{ProjectRoot, RootMarker, SharedIndex};

#[path = "../../../../tests/common/pg_server.rs"]
mod pg_server;
pub(crate) use pg_server::PgServer;

/// The index of `project` in `server`, open for writing.
pub(crate) fn index(server: &PgServer, project: &str) -> PgIndex {
    PgIndex::open_for_writing(&root(server, project), &mut |_| {}).unwrap()
}

/// A checkout whose index is that of `project` in `server`.
pub(crate) fn root(server: &PgServer, project: &str) -> ProjectRoot {
    ProjectRoot {
        path: server.dir.path().to_path_buf(),
        marker: RootMarker::None,
        shared: Some(SharedIndex {
            url: server.url.clone(),
            project: project.into(),
            writer: "tests".into(),
            adopt: false,
        }),
    }
}
