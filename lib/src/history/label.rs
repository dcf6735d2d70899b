//! A catalog's label (`--label NAME`): the revision NAME names in each of
//! its projects, searched as one. Each project's tree at that commit is
//! written from its object database under the label's root, a revision
//! root of the catalog (`.vecgrep/revs/<key>/`, the key a hash of every
//! project's commit), indexed as one tree, and removed; vectors the
//! catalog's other indexes hold are copied, as a revision's are. A label
//! is searched only once its run completed, so a partial one never answers
//! as if it were whole.

use anyhow::{anyhow, bail, Context as _, Result};
use serde::{Deserialize, Serialize};

use super::git::GitRepo;
use super::revision::{completed, index_written, made_no_index};
use crate::index::{self, EmbedderPool, IndexObserver, IndexSummary};
use crate::project::catalog::{check_label_name, Catalog};
use crate::project::{ProjectRoot, ResolvedConfig, Skip};
use crate::store;

/// Where a label's state is kept, beside its index.
const STATE_FILE: &str = "label.toml";

/// The commit a label names in each project of a catalog, and the projects
/// where it names none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelState {
    pub label: String,
    /// Each project it resolved in, with that commit, by project name.
    #[serde(rename = "project")]
    pub projects: Vec<LabelCommit>,
    /// Seconds since the epoch when its index run completed; None while partial.
    pub updated: Option<u64>,
}

/// One project's commit for a label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelCommit {
    pub name: String,
    pub sha: String,
}

/// A label as resolved now: its state, where its index is, and why some
/// projects are without it.
#[derive(Clone, Debug)]
pub struct Label {
    pub state: LabelState,
    pub root: ProjectRoot,
    /// (project, why) for each project the label names nothing in.
    pub unresolved: Vec<(String, String)>,
}

/// What indexing a label did: None when it was indexed already.
#[derive(Debug)]
pub struct LabelRun {
    pub label: Label,
    pub summary: Option<IndexSummary>,
}

/// Resolve `label` in every project of `catalog`, whose root (with the
/// store it is kept in) is `root` (a project that is not a git
/// repository, or does not know the name, is listed as unresolved).
pub fn resolve_label(catalog: &Catalog, root: &ProjectRoot, label: &str) -> Result<Label> {
    check_label_name(label)?;
    let mut projects = Vec::new();
    let mut unresolved = Vec::new();
    // Projects the label names a commit of, from before their directory.
    let mut too_early = Vec::new();
    for p in &catalog.projects {
        // Moved or gone (a link in its place too), said as a run says it,
        // not as "not in a git repository".
        if !p.path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            unresolved.push((p.name.clone(), format!("the catalog's project is not at {} any more", p.path.display())));
            continue;
        }
        match GitRepo::open(&p.path).and_then(|repo| Ok((branch_or_tag(&repo, label)?, repo))) {
            // A project in a directory of its repository the label's commit
            // lacks: its tree there is nothing to write (every run failed).
            Ok((sha, repo)) if !repo.root_exists_at(&sha).unwrap_or(true) => {
                let why = format!("its directory did not exist at commit {}", &sha[..12]);
                too_early.push(format!("{}: {why}", p.name));
                unresolved.push((p.name.clone(), why));
            }
            Ok((sha, _)) => projects.push(LabelCommit { name: p.name.clone(), sha }),
            Err(e) => unresolved.push((p.name.clone(), crate::project::shown::error_line(&e))),
        }
    }
    if projects.is_empty() && !too_early.is_empty() {
        let why = crate::project::shown::clipped(&too_early.join("; "), 400);
        bail!("label '{label}' names no revision of catalog '{}' that holds a project ({why})", catalog.name);
    }
    if projects.is_empty() {
        // Why, project by project: a tag of no commit, a damaged ref, said
        // as the label's, not only as "none" (audit 194).
        let why: Vec<String> = unresolved.iter().map(|(name, why)| format!("{name}: {why}")).collect();
        let why = crate::project::shown::clipped(&why.join("; "), 400);
        bail!("label '{label}' names a revision in none of the projects of catalog '{}' ({why})", catalog.name);
    }
    let key = label_key(label, &projects);
    let root = store::revision_root(root, &key);
    Ok(Label { state: LabelState { label: label.into(), projects, updated: None }, root, unresolved })
}

/// The commit a branch or tag named `label` points at: a label names a
/// ref, never an abbreviated sha (`cafe`) or an expression (`main~2`). The
/// first ref there is of the name is the label's, as git takes it: a tag
/// that names no commit (a tree's) or one the repository lacks is said so,
/// where a branch of the same name was taken in silence (audit 194).
fn branch_or_tag(repo: &GitRepo, label: &str) -> Result<String> {
    let name = ["refs/tags/", "refs/heads/", "refs/remotes/"]
        .iter()
        .map(|prefix| format!("{prefix}{label}"))
        .find(|name| repo.names_a_ref(name))
        .ok_or_else(|| anyhow!("no branch or tag named {label:?}"))?;
    repo.resolve_commit(&name)
}

/// The rules from outside the trees of a catalog's projects, in short
/// (`GitRepo::outside_rules_key`, each project's in turn).
fn outside_rules_key(catalog: &Catalog) -> String {
    let key = |path: &std::path::Path| GitRepo::open(path).map_or_else(|_| "none".into(), |r| r.outside_rules_key());
    catalog.projects.iter().map(|p| key(&p.path)).collect::<Vec<_>>().join(",")
}

/// The label's index directory name: a hash of its name and commits,
/// shaped as a sha, so that the catalog's revision store keeps and relates
/// it (two labels at the same commits have an index each, the second
/// copying the first's vectors).
fn label_key(label: &str, projects: &[LabelCommit]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(label.as_bytes()).update(b"\n");
    for p in projects {
        h.update(p.name.as_bytes()).update(b" ").update(p.sha.as_bytes()).update(b"\n");
    }
    h.finalize().to_hex()[..40].to_string()
}

/// Index `label` of `catalog` (at `root`) unless its index is complete already.
pub fn index_label(
    catalog: &Catalog,
    root: &ProjectRoot,
    label: &str,
    config: &ResolvedConfig,
    (embedders, obs): (&mut EmbedderPool, &mut dyn IndexObserver),
    reindex: bool,
) -> Result<LabelRun> {
    // Resolved first: a label that names nothing now keeps its index.
    let mut resolved = resolve_label(catalog, root, label)?;
    let outside = outside_rules_key(catalog);
    let whole = |label: &Label| {
        let built = || super::revision::built_as_configured(&label.root, config, &outside);
        completed_state(&label.root).filter(|_| !reindex && built())
    };
    if let Some(state) = whole(&resolved) {
        resolved.state = state;
        return Ok(LabelRun { label: resolved, summary: None });
    }
    let project = root;
    let Some(_lock) = index::wait_for_lock(project, obs)? else {
        return Ok(LabelRun { label: resolved, summary: Some(index::stopped_waiting()) });
    };
    // Another run may have completed it while this one waited for the lock.
    if let Some(state) = whole(&resolved) {
        resolved.state = state;
        return Ok(LabelRun { label: resolved, summary: None });
    }
    if reindex {
        forget_label(project, label)?;
    }
    let dir = &resolved.root.path;
    store::check_tree_root(&resolved.root)?;
    let fresh = !dir.exists();
    let key = label_key(label, &resolved.state.projects);
    std::fs::create_dir_all(resolved.root.data_dir()).with_context(|| format!("cannot create {}", dir.display()))?;
    // Listed as partial until the run completes.
    write_state(&resolved.root, &resolved.state)?;
    let mut submodules = Vec::new();
    let run = index_written(&resolved.root, config, (embedders, obs), |dir| {
        let (unwritten, left_out) = write_trees(catalog, &resolved.state, dir, config.max_filesize)?;
        submodules = left_out;
        Ok(unwritten)
    });
    super::revision::note_submodules(obs, &submodules);
    // A first run that failed before it made an index, or was declined or
    // stopped at the large-run question, leaves no label `show` calls
    // partial (one that failed after leaves its index to resume).
    let made_nothing = match &run {
        Err(_) => !store::has_index(&resolved.root).unwrap_or(true),
        Ok(run) => made_no_index(run, &resolved.root),
    };
    if fresh && made_nothing {
        let _ = store::forget_marks(project, &key);
    }
    let run = run?;
    if completed(&run) {
        super::revision::record_admission(&resolved.root, config, &outside)?;
        store::record_unwritten(&resolved.root, &run.unwritten)?;
        store::record_submodules(&resolved.root, &submodules)?;
        resolved.state.updated = Some(now());
        write_state(&resolved.root, &resolved.state)?;
        store::mark_complete(project, &key, label)?;
        forget_superseded(project, label, &key)?;
    }
    Ok(LabelRun { label: resolved, summary: Some(run.summary) })
}

/// Drop every index of `label` in the catalog at `root`, complete or not;
/// how many there were. The caller holds the catalog's write lock.
pub fn forget_label(root: &ProjectRoot, label: &str) -> Result<usize> {
    check_label_name(label)?;
    forget_label_but(root, label, None)
}

/// Drop the indexes `label` had at commits it no longer names, now that
/// its index at the current ones is whole: a branch that moved leaves no
/// index behind (its vectors were copied into the new one).
fn forget_superseded(root: &ProjectRoot, label: &str, current: &str) -> Result<()> {
    forget_label_but(root, label, Some(current)).map(drop)
}

/// Drop the indexes of `label` but the one at revision key `kept`; how many.
fn forget_label_but(root: &ProjectRoot, label: &str, kept: Option<&str>) -> Result<usize> {
    let mut forgotten = 0;
    for r in store::revisions(root)? {
        // By its state, or where that cannot be read, by the names its
        // revision mark holds (review 210: such an index was never dropped).
        let of_label = match read_state(&store::revision_root(root, &r.sha)) {
            Some(state) => state.label == label,
            None => r.names.iter().any(|n| n == label),
        };
        if of_label && kept != Some(r.sha.as_str()) {
            forgotten += usize::from(store::forget_revision(root, &r.sha)?);
        }
    }
    Ok(forgotten)
}

/// Each project's tree at the label's commit, under `<dir>/<project>/`;
/// the entries that could not be written, named by catalog path.
fn write_trees(
    catalog: &Catalog,
    state: &LabelState,
    dir: &std::path::Path,
    max_bytes: u64,
) -> Result<(Vec<Skip>, Vec<String>)> {
    let (mut unwritten, mut submodules) = (Vec::new(), Vec::new());
    for commit in &state.projects {
        let project = catalog.projects.iter().find(|p| p.name == commit.name).expect("resolved from the catalog");
        let tree = GitRepo::open(&project.path)?
            .write_tree(&commit.sha, &dir.join(&commit.name), max_bytes)
            .with_context(|| format!("project {}", commit.name))?;
        unwritten.extend(tree.unwritten.into_iter().map(|skip| in_project(&commit.name, skip)));
        // Left out as a revision's are, and said so (audit 194: a label
        // lost them in silence).
        submodules.extend(tree.submodules.into_iter().map(|sub| format!("{}/{sub}", commit.name)));
    }
    Ok((unwritten, submodules))
}

/// A skip in a project's tree, named by its catalog path: the tree's root
/// (an empty path) is the project's directory, under which every entry is
/// kept, never `<project>/`, which names no stored path.
fn in_project(project: &str, skip: Skip) -> Skip {
    match skip.path.is_empty() {
        true => Skip { path: project.to_string(), ..skip },
        false => Skip { path: format!("{project}/{}", skip.path), ..skip },
    }
}

/// The label, for a search: an error unless its index, in the store
/// `root` is kept in, is complete for the commits it names now.
pub fn indexed_label(catalog: &Catalog, root: &ProjectRoot, label: &str, model: &str) -> Result<Label> {
    let mut resolved = resolve_label(catalog, root, label)?;
    let how = format!("run vg-index --catalog {} --label {label}", catalog.name);
    // The state is kept on this machine; the index may be in another store.
    let state = completed_state(&resolved.root).filter(|_| store::open_for_reading(&resolved.root).is_ok());
    let state = state.ok_or_else(|| {
        anyhow!("label '{label}' of catalog '{}' is not fully indexed at its commits; {how}", catalog.name)
    })?;
    super::revision::check_model(&resolved.root, model, &format!("{how} to rebuild it"))?;
    resolved.state = state;
    Ok(resolved)
}

/// Every label of `catalog` with an index, complete or not.
pub fn labels(catalog: &Catalog) -> Vec<(LabelState, bool)> {
    let root = catalog.root();
    let mut out: Vec<(LabelState, bool)> = store::revisions(&root)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| {
            let state = read_state(&store::revision_root(&root, &r.sha))?;
            Some((state, r.complete))
        })
        .collect();
    out.sort_by(|a, b| a.0.label.cmp(&b.0.label).then(b.0.updated.cmp(&a.0.updated)));
    out
}

/// A label's index of a catalog whose state cannot be read (its
/// `label.toml` removed or damaged): `labels` cannot say its commits, and
/// a search of it fails until a run of its label writes the state again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableLabel {
    /// The names its revision mark gives (a completed run's), if any.
    pub names: Vec<String>,
    /// Its key in the catalog's revisions (a hash of every commit).
    pub key: String,
}

/// Every label index of `catalog` that `labels` leaves out, its state
/// unreadable (review 211: `vg-catalog show` said nothing of one that
/// `--stats` listed).
pub fn unreadable_labels(catalog: &Catalog) -> Vec<UnreadableLabel> {
    let root = catalog.root();
    store::revisions(&root)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| read_state(&store::revision_root(&root, &r.sha)).is_none())
        .map(|r| UnreadableLabel { names: r.names, key: r.sha })
        .collect()
}

/// What mends or drops a label's index whose name cannot be read: no
/// `--label L --clear-cache` knows it for L's (review 211).
pub fn unnamed_label_advice(catalog: &str) -> String {
    format!(
        "its label cannot be read; a run of that label (vg-index --catalog {catalog} --label LABEL) rebuilds it while the label names the same commits, and vg-index --catalog {catalog} --clear-cache drops every index of the catalog"
    )
}

/// The label a catalog's stored revision `key` is the index of, complete
/// or not: a run not yet complete has written no names to the revision's
/// mark, only to the label's state (review 209).
pub fn label_indexed_at(catalog_root: &ProjectRoot, key: &str) -> Option<String> {
    read_state(&store::revision_root(catalog_root, key)).map(|s| s.label)
}

/// The state of the label indexed at `root`, when its run completed.
fn completed_state(root: &ProjectRoot) -> Option<LabelState> {
    read_state(root).filter(|s| s.updated.is_some())
}

fn read_state(root: &ProjectRoot) -> Option<LabelState> {
    let text = crate::project::small_file::read_own_text(&root.data_dir().join(STATE_FILE))?;
    toml::from_str(&text).ok()
}

/// Written whole, so a kill leaves the old state or the new, and never
/// through a link left at its temporary name.
fn write_state(root: &ProjectRoot, state: &LabelState) -> Result<()> {
    let path = root.data_dir().join(STATE_FILE);
    crate::project::small_file::replace_own(&path, toml::to_string(state)?.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::SkipReason;

    #[test]
    fn a_skip_of_a_projects_root_keeps_every_entry_of_that_project_only() {
        let skip = |path: &str| Skip { path: path.into(), reason: SkipReason::Error("denied".into()) };
        let root = in_project("api", skip(""));
        assert_eq!(root.path, "api");
        assert!(crate::project::is_under("api/src/main.rs", root.unseen_under()));
        assert!(!crate::project::is_under("web/src/main.rs", root.unseen_under()));
        assert!(!crate::project::is_under("apis/main.rs", root.unseen_under()));
        assert_eq!(in_project("api", skip("src/gen")).path, "api/src/gen");
    }
}
