//! Who may write a project's index in a shared database. Anyone who can
//! reach the database may name any project (`store_project`), and a cloned
//! repository once could, from its own config: so the store records which
//! checkouts write each project (`SharedIndex::writer`: the machine and the
//! root's path, which a repository's files cannot choose). The first to
//! create a project's index is its creator; any other checkout must be told
//! to join (`store_adopt`) before it changes or clears that index. A
//! project's git revisions (`<project>@<sha>`) are written by the
//! project's writers, recorded under the project.
//!
//! This guards against a mistake or a hostile repository, not a hostile
//! database user: whoever holds the database's credentials can change any
//! row, and Postgres roles are what keep such users apart.

use std::path::Path;

use postgres::GenericClient;

use crate::project::SharedIndex;
use crate::store::StoreError;

/// The writers of every project, in a schema of its own so that dropping
/// a project's index (a clear, a rebuild) leaves who may write it.
const TABLE: &str = "vecgrep_writers.writers";

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS vecgrep_writers.writers (
    project text NOT NULL,
    writer text NOT NULL,
    creator boolean NOT NULL,
    since_ms bigint NOT NULL,
    PRIMARY KEY (project, writer)
);
";

/// Make sure `shared.writer` may write `shared.project`, recording it when
/// it creates the project (`index_exists` false and no writer recorded) or
/// is told to adopt it. Run inside the transaction that creates or drops
/// the project's schema, under its lock, so that two first writers cannot
/// both be creators.
pub(super) fn claim(
    client: &mut impl GenericClient,
    shared: &SharedIndex,
    index_exists: bool,
    place: &Path,
) -> Result<(), StoreError> {
    let failed = |e: postgres::Error| StoreError::Backend { path: place.to_path_buf(), source: e.into() };
    ensure_table(client).map_err(failed)?;
    let project = shared.writers_project();
    let rows = client
        .query(&format!("SELECT writer, creator FROM {TABLE} WHERE project = $1"), &[&project])
        .map_err(failed)?;
    let writers: Vec<(String, bool)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    if writers.iter().any(|(w, _)| *w == shared.writer) {
        return Ok(());
    }
    // A revision's first writer creates the project only where the
    // project has no index either (one an older vecgrep made, with no
    // writers kept, is adopted, not taken).
    let project_exists = project != shared.project && super::has_index(client, project).map_err(failed)?;
    let creates = writers.is_empty() && !index_exists && !project_exists;
    if !creates && !shared.adopt {
        let creator = writers.iter().find(|(_, c)| *c).or(writers.first()).map(|(w, _)| w.clone());
        return Err(StoreError::NotWriter { path: place.to_path_buf(), creator, writer: shared.writer.clone() });
    }
    client
        .execute(
            &format!("INSERT INTO {TABLE} VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING"),
            &[&project, &shared.writer, &writers.is_empty(), &crate::store::epoch_ms()],
        )
        .map_err(failed)?;
    Ok(())
}

/// Forget `shared.writer` as its project's writer where this run made the
/// claim (at `since_ms` or later; the client's clock writes both) and no
/// other writer has joined: a first run that made the index, or a
/// revision's, and gave it up leaves the project as unclaimed as it found
/// it. A claim made before (a cleared index's, one kept by its revisions)
/// stays.
pub(super) fn forget_claim_made_since(
    client: &mut impl GenericClient,
    shared: &SharedIndex,
    since_ms: i64,
) -> Result<(), postgres::Error> {
    let others = format!("SELECT 1 FROM {TABLE} WHERE project = $1 AND writer <> $2");
    let forget =
        format!("DELETE FROM {TABLE} WHERE project = $1 AND writer = $2 AND since_ms >= $3 AND NOT EXISTS ({others})");
    client.execute(&forget, &[&shared.writers_project(), &shared.writer, &since_ms]).map(drop)
}

/// The table, made by the first writer of the database (one at a time:
/// `IF NOT EXISTS` alone races), in a schema an admin may have made for a
/// role that cannot create schemas.
fn ensure_table(client: &mut impl GenericClient) -> Result<(), postgres::Error> {
    let exists: bool = client.query_one(&format!("SELECT to_regclass('{TABLE}') IS NOT NULL"), &[])?.get(0);
    if exists {
        return Ok(());
    }
    client.execute("SELECT pg_advisory_xact_lock(hashtext('vecgrep writers table'))", &[])?;
    let schema: bool =
        client.query_one("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'vecgrep_writers')", &[])?.get(0);
    if !schema {
        client.batch_execute("CREATE SCHEMA vecgrep_writers")?;
    }
    client.batch_execute(CREATE)
}
