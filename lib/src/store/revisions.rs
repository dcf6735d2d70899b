//! Where the indexes of git revisions live, and which indexes share their
//! vectors. A revision indexed with `vg-index --rev` is an index of its own
//! at `<root>/.vecgrep/revs/<sha>/.vecgrep/index.db`, its files read from
//! the object database; a chunk whose embedded text any index of the
//! project already holds takes that vector instead of being embedded again.

use std::path::{Path, PathBuf};

use super::StoreError;
pub use crate::project::is_commit_id;
use crate::project::small_file::{self, read_own_text};
use crate::project::urls::without_password;
use crate::project::{ProjectRoot, RootMarker, SharedIndex};
use crate::project::{REVS_DIR, SHARED_REVS_PREFIX as SHARED_PREFIX};

/// The file that marks a revision's index complete: its sha, then the
/// names it was asked for by, one per line.
const MARK: &str = "revision";

/// The file that says a run over a revision's index began and has not
/// completed since: a run that rebuilds a complete index (other settings)
/// and is killed leaves the index partial, which the mark alone would
/// still call complete.
const UNFINISHED: &str = "revision.unfinished";

/// A revision with an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    pub sha: String,
    /// The names it was indexed as (`main`, `v1.2`, a sha), first first.
    pub names: Vec<String>,
    /// Whether its index run completed; an incomplete one is resumed by the next.
    pub complete: bool,
}

/// Where the revisions of `project` are kept: `revs/<sha>` for its own
/// index; for a shared index, `revs/shared-<key>/<sha>`, one directory a
/// store and project (`shared_key`), so that what one index says of a
/// revision (complete, unfinished, forgotten) is never read as another's.
fn revisions_dir(project: &ProjectRoot) -> PathBuf {
    let revs = project.data_dir().join(REVS_DIR);
    match &project.shared {
        Some(shared) => revs.join(format!("{SHARED_PREFIX}{}", shared_key(shared))),
        None => revs,
    }
}

/// A shared index's name on disk: a hash of its store's URL, the password
/// left out, and its project.
fn shared_key(shared: &SharedIndex) -> String {
    let mut hash = blake3::Hasher::new();
    hash.update(without_password(&shared.url).as_bytes());
    hash.update(b"\n");
    hash.update(shared.writers_project().as_bytes());
    hash.finalize().to_hex()[..16].to_string()
}

/// Whether `dir` is one a shared index's revisions are kept in
/// (`revisions_dir`).
fn is_shared_dir(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with(SHARED_PREFIX))
}

/// The root whose index holds revision `sha` of `project`; its files are
/// written there while it is indexed and removed after.
pub fn revision_root(project: &ProjectRoot, sha: &str) -> ProjectRoot {
    // A shared index keeps a revision's beside the project's, under its
    // own name (`SharedIndex::writers_project` reads it back).
    let shared = project.shared.as_ref().map(|s| SharedIndex { project: format!("{}@{sha}", s.project), ..s.clone() });
    ProjectRoot { path: revisions_dir(project).join(sha), marker: RootMarker::Revision, shared }
}

/// A revision's (or label's) root is vecgrep's own to write and empty:
/// refused when it, or the `revs` directory above it, is a link. A
/// repository may ship `.vecgrep/revs/<sha>` as a link to any directory,
/// whose files a run would overwrite with the revision's and then remove.
pub fn check_tree_root(root: &ProjectRoot) -> Result<(), StoreError> {
    let is_revs = |p: &&Path| p.file_name() == Some(std::ffi::OsStr::new(REVS_DIR));
    let parent = root.path.parent();
    let shared = parent.filter(|p| is_shared_dir(p)).filter(|p| p.parent().as_ref().is_some_and(is_revs));
    let revs = parent.filter(is_revs).or_else(|| shared.and_then(Path::parent));
    for path in [Some(root.path.as_path()), shared, revs].into_iter().flatten() {
        refuse_link(path, "a revision's files are written and removed there; remove it")?;
    }
    Ok(())
}

/// `path` is a directory of vecgrep's own, or nothing yet: a link there is
/// refused, saying `why` vecgrep keeps it to itself.
fn refuse_link(path: &Path, why: &str) -> Result<(), StoreError> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(());
    }
    let why = format!("a link, which vecgrep never makes: {why}");
    Err(StoreError::File { action: "use", path: path.to_path_buf(), source: why.into() })
}

/// How to rebuild the index at `path`, said where it is damaged: a git
/// revision's by forgetting and indexing that revision again (indexing
/// alone took a damaged one, complete, for indexed already), a catalog
/// label's by clearing that label's, any other by a run, which rebuilds a
/// damaged index (`--clear-cache`, advised before, threw away every
/// revision's index and the commit log too: audit 212).
pub(super) fn rebuild_advice(path: &Path) -> String {
    // One of the user's catalogs: a project that ships the file is none
    // (review 216: told to run a catalog that does not exist).
    rebuild_advice_with(path, |dir| {
        dir.join(crate::project::CATALOG_FILE).exists() && crate::project::is_users_catalog(dir)
    })
}

/// `rebuild_advice`, with `is_catalog` telling a catalog's directory.
fn rebuild_advice_with(path: &Path, is_catalog: impl Fn(&Path) -> bool) -> String {
    let parts: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let at =
        parts.windows(3).position(|w| w[0] == crate::project::PROJECT_DIR && w[1] == REVS_DIR && is_commit_id(&w[2]));
    let catalog_of = |owner: &Path| {
        is_catalog(owner).then(|| owner.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
    };
    let Some(at) = at else {
        // A catalog's own index is made by a run of the catalog (review
        // 215: a plain run in one of its projects indexed that project).
        let owner = path.parent().and_then(Path::parent);
        return match owner.and_then(catalog_of) {
            Some(name) => format!("run vg-index --catalog {name} to rebuild it"),
            None => "run vg-index to rebuild it".into(),
        };
    };
    let owner: PathBuf = path.components().take(at).collect();
    if let Some(name) = catalog_of(&owner) {
        return format!(
            "run vg-index --catalog {name} --label LABEL --clear-cache, then search it again, to rebuild it"
        );
    }
    let sha = &parts[at + 2][..12];
    format!("run vg-index --forget {sha}, then vg-index --rev {sha}, to rebuild it")
}

/// The revisions of `project` that have an index, complete or not, by sha.
pub fn revisions(project: &ProjectRoot) -> Result<Vec<Revision>, StoreError> {
    let dir = revisions_dir(project);
    refuse_link(&dir, "the revisions' indexes are kept in a directory of its own")?;
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            super::lock::refuse_file_in_the_way(project)?;
            return Err(StoreError::File { action: "read", path: dir, source: e.into() });
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Only a directory holds a revision: a stray file of a sha's name
        // was listed as one, and failed every --clear-cache and --forget.
        if !is_commit_id(&name) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let data = entry.path().join(".vecgrep");
        let mark = read_own_text(&data.join(MARK));
        let names = mark.as_deref().map(|m| m.lines().skip(1).map(str::to_string).collect()).unwrap_or_default();
        let unfinished = std::fs::symlink_metadata(data.join(UNFINISHED)).is_ok();
        // A checkout's own revision is whole only with its index there: a
        // mark without one is a shared index's, from before they were kept
        // apart (`revisions_dir`), and the revision is indexed again here.
        let index_here = project.shared.is_some() || data.join("index.db").is_file();
        out.push(Revision { sha: name, names, complete: mark.is_some() && !unfinished && index_here });
    }
    out.sort_by(|a, b| a.sha.cmp(&b.sha));
    Ok(out)
}

/// Record that revision `sha` is fully indexed, asked for as `name`: what
/// the run that completed it says, under the project's lock.
pub fn mark_complete(project: &ProjectRoot, sha: &str, name: &str) -> Result<(), StoreError> {
    write_names(project, sha, name)?;
    let unfinished = revision_root(project, sha).data_dir().join(UNFINISHED);
    match std::fs::remove_file(&unfinished) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(StoreError::File { action: "remove", path: unfinished, source: e.into() })
        }
        _ => Ok(()),
    }
}

/// Record that complete revision `sha` was asked for as `name` too (shown
/// by `--stats`), leaving whether a run is at work on it as it is. Without
/// the project's lock: a revision forgotten meanwhile (its directory gone)
/// is not made again to hold a name.
pub fn record_name(project: &ProjectRoot, sha: &str, name: &str) -> Result<(), StoreError> {
    if std::fs::symlink_metadata(revision_root(project, sha).data_dir().join(MARK)).is_err() {
        return Ok(());
    }
    write_names(project, sha, name)
}

/// Add `name` to revision `sha`'s names, writing its mark.
fn write_names(project: &ProjectRoot, sha: &str, name: &str) -> Result<(), StoreError> {
    let root = revision_root(project, sha);
    // Runs that ask for one revision by two names at once (no project lock
    // when it is complete) would each write back what they read, one name lost.
    let _names_held = lock_names(&root)?;
    let mut names: Vec<String> =
        revisions(project)?.into_iter().find(|r| r.sha == sha).map(|r| r.names).unwrap_or_default();
    if !names.iter().any(|n| n == name) {
        names.push(name.to_string());
    }
    let text = std::iter::once(sha.to_string()).chain(names).collect::<Vec<_>>().join("\n") + "\n";
    // The directory is there: `lock_names` made it.
    replace_whole(&root.data_dir().join(MARK), &text)
}

/// The file whose lock makes the read-modify-write of a revision's names
/// take turns; held only while the names file is rewritten.
const NAMES_LOCK: &str = "revision.lock";

/// Hold revision root `root`'s names lock until the file is dropped: opened
/// as the project's lock is (a link or FIFO a repository shipped there is
/// replaced, another user's file locked read-only).
fn lock_names(root: &ProjectRoot) -> Result<std::fs::File, StoreError> {
    make_data_dir(root)?;
    let (file, path) = super::lock::open_lock_file(root, NAMES_LOCK)?;
    file.lock().map_err(|source| StoreError::Lock { path, source })?;
    Ok(file)
}

/// Record that a run over revision `sha`'s index begins: until one
/// completes (`mark_complete`), the revision is listed as incomplete and
/// the next run resumes it, though an earlier run had completed it.
pub fn mark_unfinished(project: &ProjectRoot, sha: &str) -> Result<(), StoreError> {
    let root = revision_root(project, sha);
    write_whole(&root, &root.data_dir().join(UNFINISHED), "")
}

/// Make revision root `root` and its data directory, as the project's
/// own (no link on the way): a revision kept in the shared store has no
/// local index to have made them.
fn make_data_dir(root: &ProjectRoot) -> Result<(), StoreError> {
    check_tree_root(root)?;
    std::fs::create_dir_all(&root.path).map_err(|e| StoreError::File {
        action: "create",
        path: root.path.clone(),
        source: e.into(),
    })?;
    super::lock::ensure_data_dir(root).map(drop)
}

/// Write `text` to `path` in `root`'s data directory, made here
/// (`make_data_dir`), as `replace_whole` does.
fn write_whole(root: &ProjectRoot, path: &Path, text: &str) -> Result<(), StoreError> {
    make_data_dir(root)?;
    replace_whole(path, text)
}

/// Write `text` to `path` whole (`small_file::replace_own`).
fn replace_whole(path: &Path, text: &str) -> Result<(), StoreError> {
    small_file::replace_own(path, text.as_bytes()).map_err(|e| StoreError::File {
        action: "write",
        path: path.to_path_buf(),
        source: e.into(),
    })
}

/// The file that says which files of its tree a revision's (or a label's)
/// index admitted: the settings of the walk beside those its meta records.
const ADMISSION: &str = "admission";

/// The admission settings the index at revision root `root` was last
/// completed with (`record_admission`), if any were recorded.
pub fn admission(root: &ProjectRoot) -> Option<String> {
    read_own_text(&root.data_dir().join(ADMISSION))
}

/// Record the admission settings a run over revision root `root` completed with.
pub fn record_admission(root: &ProjectRoot, settings: &str) -> Result<(), StoreError> {
    write_whole(root, &root.data_dir().join(ADMISSION), settings)
}

/// The file naming the submodules a revision's tree held, which its index
/// leaves out: a later search of a PATH inside one says why it finds nothing.
const SUBMODULES: &str = "submodules";

/// The submodules (root-relative paths) recorded for revision root `root`.
pub fn submodules(root: &ProjectRoot) -> Vec<String> {
    read_lines(root, SUBMODULES)
}

/// Record the submodules the tree of revision root `root` held.
pub fn record_submodules(root: &ProjectRoot, paths: &[String]) -> Result<(), StoreError> {
    write_whole(root, &root.data_dir().join(SUBMODULES), &as_lines(paths))
}

/// `entries` one a line, a line break within one written `\n`: a tree's
/// names may hold them, and the name `a\nforged: line` made two entries of
/// one (review 236).
fn as_lines(entries: &[String]) -> String {
    entries.iter().map(|e| e.replace('\n', "\\n").replace('\r', "\\r")).collect::<Vec<_>>().join("\n")
}

/// The file beside a revision's (or label's) index that lists the entries
/// of its tree no run can write, one `path: why` a line.
const UNWRITTEN: &str = "unwritten";

/// The entries of the tree of revision root `root` that could not be
/// written (a name the disk refuses, one beyond a link of the same tree),
/// which its index, though complete, does not hold.
pub fn unwritten(root: &ProjectRoot) -> Vec<String> {
    read_lines(root, UNWRITTEN)
}

/// Record the entries `unwritten` lists for revision root `root`.
pub fn record_unwritten(root: &ProjectRoot, unwritten: &[String]) -> Result<(), StoreError> {
    write_whole(root, &root.data_dir().join(UNWRITTEN), &as_lines(unwritten))
}

/// The lines of file `name` beside revision root `root`'s index; none when
/// it is missing or unreadable.
fn read_lines(root: &ProjectRoot, name: &str) -> Vec<String> {
    let text = read_own_text(&root.data_dir().join(name)).unwrap_or_default();
    text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// Remove revision `sha`'s index and with it every vector only it held.
pub fn forget_revision(project: &ProjectRoot, sha: &str) -> Result<bool, StoreError> {
    if !is_commit_id(sha) {
        return Ok(false);
    }
    // Another checkout's revision of a shared project is removed for all
    // of them, and said so (audit 263: "has no index", exit 2).
    let removed_shared = match revision_root(project, sha).shared {
        Some(shared) => super::postgres::remove(&shared)?,
        None => false,
    };
    Ok(forget_marks(project, sha)? | removed_shared)
}

/// Remove what this checkout keeps of revision `sha` (its marks; its index
/// too, unless shared): true when there was something.
pub fn forget_marks(project: &ProjectRoot, sha: &str) -> Result<bool, StoreError> {
    if !is_commit_id(sha) {
        return Ok(false);
    }
    let dir = revisions_dir(project).join(sha);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::File { action: "remove", path: dir, source: e.into() }),
    }
}

/// Remove every file of a revision's root but its index.
pub fn remove_revision_files(root: &ProjectRoot) -> Result<(), StoreError> {
    check_tree_root(root)?;
    let entries = std::fs::read_dir(&root.path).map_err(|e| StoreError::File {
        action: "read",
        path: root.path.clone(),
        source: e.into(),
    })?;
    for entry in entries.flatten() {
        if entry.file_name() == ".vecgrep" {
            continue;
        }
        let path = entry.path();
        // The entry's own type: a revision's link to a directory is removed as a link.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let removed = if is_dir { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
        removed.map_err(|e| StoreError::File { action: "remove", path, source: e.into() })?;
    }
    Ok(())
}

/// The other indexes of the project `root` belongs to, whose vectors an
/// index run of `root` may copy: for the working tree, its revisions; for
/// a revision, the working tree and the other revisions.
pub fn related_roots(root: &ProjectRoot) -> Vec<ProjectRoot> {
    let project = project_of(root);
    let mut roots: Vec<ProjectRoot> = revisions(&project)
        .unwrap_or_default()
        .into_iter()
        .map(|r| revision_root(&project, &r.sha))
        .filter(|r| r.path != root.path)
        .collect();
    if project.path != root.path {
        roots.insert(0, project);
    }
    roots
}

/// The project whose revision `root` is, or `root` itself.
fn project_of(root: &ProjectRoot) -> ProjectRoot {
    let mut parent = root.path.parent();
    // A shared index's revisions are a level deeper (`revisions_dir`).
    if root.shared.is_some() && parent.is_some_and(is_shared_dir) {
        parent = parent.and_then(Path::parent);
    }
    let is_revision = root.path.file_name().is_some_and(|n| is_commit_id(&n.to_string_lossy()))
        && parent.and_then(Path::file_name).is_some_and(|n| n == REVS_DIR)
        && parent.and_then(Path::parent).and_then(Path::file_name).is_some_and(|n| n == ".vecgrep");
    match parent.and_then(Path::parent).and_then(Path::parent).filter(|_| is_revision) {
        Some(project) => {
            let shared =
                root.shared.as_ref().map(|s| SharedIndex { project: s.writers_project().to_string(), ..s.clone() });
            ProjectRoot { path: project.to_path_buf(), marker: RootMarker::None, shared }
        }
        None => root.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn an_entry_with_a_line_break_is_one_line_of_the_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root =
            ProjectRoot { path: dir.path().to_path_buf(), marker: crate::project::RootMarker::None, shared: None };
        std::fs::create_dir(root.data_dir()).unwrap();
        let entries = ["a/b\nforged: line".to_string(), "c\r.rs: why".to_string()];
        record_unwritten(&root, &entries).unwrap();
        assert_eq!(unwritten(&root), ["a/b\\nforged: line", "c\\r.rs: why"]);
        record_submodules(&root, &entries[..1]).unwrap();
        assert_eq!(submodules(&root).len(), 1);
    }

    #[test]
    fn a_revisions_damaged_index_is_rebuilt_by_indexing_the_revision_not_by_clearing_all() {
        let rev = PathBuf::from(format!("/p/.vecgrep/revs/{A}/.vecgrep/index.db"));
        assert_eq!(
            rebuild_advice(&rev),
            "run vg-index --forget aaaaaaaaaaaa, then vg-index --rev aaaaaaaaaaaa, to rebuild it"
        );
        let catalog = tempfile::tempdir().unwrap();
        let team = catalog.path().join("team");
        std::fs::create_dir(&team).unwrap();
        std::fs::write(team.join(crate::project::CATALOG_FILE), "").unwrap();
        let label = team.join(format!(".vecgrep/revs/{A}/.vecgrep/index.db"));
        let by_file = |dir: &Path| dir.join(crate::project::CATALOG_FILE).exists();
        assert_eq!(
            rebuild_advice_with(&label, by_file),
            "run vg-index --catalog team --label LABEL --clear-cache, then search it again, to rebuild it"
        );
        assert_eq!(
            rebuild_advice_with(&team.join(".vecgrep/index.db"), by_file),
            "run vg-index --catalog team to rebuild it"
        );
        // Not one of the user's catalogs: a project that ships the file.
        assert_eq!(rebuild_advice(&team.join(".vecgrep/index.db")), "run vg-index to rebuild it");
        for other in ["/p/.vecgrep/index.db", "/revs/aaaa/.vecgrep/index.db", "/p/src/revs/x/.vecgrep/index.db"] {
            assert_eq!(rebuild_advice(Path::new(other)), "run vg-index to rebuild it", "{other}");
        }
    }

    #[test]
    fn a_shared_index_keeps_its_revisions_apart_and_its_password_out_of_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let shared = |url: &str, project: &str| SharedIndex {
            url: url.into(),
            project: project.into(),
            writer: "w".into(),
            adopt: false,
        };
        let at =
            |shared: Option<SharedIndex>| ProjectRoot { path: dir.path().into(), marker: RootMarker::None, shared };
        let own = revision_root(&at(None), A);
        let first = revision_root(&at(Some(shared("postgres://u:secret@db/v", "p"))), A);
        let other_password = revision_root(&at(Some(shared("postgres://u:other@db/v", "p"))), A);
        let other_project = revision_root(&at(Some(shared("postgres://u:secret@db/v", "q"))), A);
        assert_ne!(own.path, first.path);
        assert_eq!(first.path, other_password.path, "the password is not part of the name");
        assert_ne!(first.path, other_project.path);
        assert_eq!(project_of(&first).path, dir.path(), "{}", first.path.display());
        check_tree_root(&first).unwrap();
    }

    #[test]
    fn revisions_are_listed_marked_related_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let project = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        for sha in [A, B] {
            std::fs::create_dir_all(revision_root(&project, sha).data_dir()).unwrap();
        }
        std::fs::create_dir_all(revisions_dir(&project).join("not-a-sha")).unwrap();
        // A stray file of a sha's name is no revision.
        std::fs::write(revisions_dir(&project).join("0123456789abcdef0123456789abcdef01234567"), b"junk").unwrap();
        std::fs::write(revision_root(&project, A).index_path(), b"").unwrap();
        mark_complete(&project, A, "main").unwrap();
        mark_complete(&project, A, "v1").unwrap();
        mark_complete(&project, A, "main").unwrap();
        let listed = revisions(&project).unwrap();
        assert_eq!(listed[0], Revision { sha: A.into(), names: vec!["main".into(), "v1".into()], complete: true });
        assert_eq!(listed[1], Revision { sha: B.into(), names: vec![], complete: false });
        assert_eq!(listed.len(), 2);

        let paths = |roots: Vec<ProjectRoot>| roots.into_iter().map(|r| r.path).collect::<Vec<_>>();
        assert_eq!(paths(related_roots(&project)), [revision_root(&project, A).path, revision_root(&project, B).path]);
        assert_eq!(
            paths(related_roots(&revision_root(&project, A))),
            [project.path.clone(), revision_root(&project, B).path]
        );

        assert!(forget_revision(&project, A).unwrap());
        assert!(!revision_root(&project, A).path.exists(), "its names lock goes with it");
        assert!(!forget_revision(&project, A).unwrap());
        assert!(!forget_revision(&project, "../..").unwrap(), "only a sha names a revision directory");
        assert_eq!(revisions(&project).unwrap().len(), 1);
    }

    #[test]
    fn names_recorded_at_once_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let project = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        mark_complete(&project, A, "main").unwrap();
        let names: Vec<String> = (0..16).map(|i| format!("name-{i}")).collect();
        std::thread::scope(|s| {
            for name in &names {
                let project = &project;
                s.spawn(move || record_name(project, A, name).unwrap());
            }
        });
        let kept = revisions(&project).unwrap().remove(0).names;
        assert_eq!(kept.len(), 17, "{kept:?}");
        assert!(names.iter().all(|n| kept.contains(n)), "{kept:?}");
    }
}
