//! Project root selection and path admission: which directory owns the index
//! for this invocation, and which of the user's paths may be searched.
//!
//! Implements the spec rules PreferCurrentProjectRoot,
//! OtherwiseUseSingleDirectoryCandidate, OtherwiseUseCurrentDirectory,
//! RejectOutsideRootPaths, SkipOutsideRootPaths, AdmitInsideRootPaths and
//! FailIfNoPathsRemain.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// What made a directory a project root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RootMarker {
    Git,
    Hg,
    Jj,
    Vecgrep,
    None,
    /// A git revision's files, written from the object database into the
    /// project's `.vecgrep/revs/` to be indexed: nothing above it applies.
    Revision,
    /// A catalog's directory (`catalog::Catalog`): its files are its
    /// projects' files.
    Catalog,
}

impl RootMarker {
    pub fn as_str(self) -> &'static str {
        match self {
            RootMarker::Git => "git",
            RootMarker::Hg => "hg",
            RootMarker::Jj => "jj",
            RootMarker::Vecgrep => "vecgrep",
            RootMarker::None => "none",
            RootMarker::Revision => "revision",
            RootMarker::Catalog => "catalog",
        }
    }
}

impl fmt::Display for RootMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The directory that owns the index for one invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRoot {
    /// Canonical absolute path.
    pub path: PathBuf,
    pub marker: RootMarker,
    /// The shared database that holds its index instead of
    /// `<root>/.vecgrep/index.db` (`store_url`), once the config is read.
    pub shared: Option<SharedIndex>,
}

/// A project's index in a shared Postgres database: the server's URL and
/// the name the project is kept under there (`store_project`).
#[derive(Clone, PartialEq, Eq)]
pub struct SharedIndex {
    /// May hold a password: never printed, and left out of `Debug`.
    pub url: String,
    pub project: String,
    /// Who writes: this machine and the project root's path. The store
    /// records who created a project's index and lets no other writer
    /// change or clear it unless told to (`adopt`), so that a repository
    /// that names another project (`store_project`) cannot write into it.
    pub writer: String,
    /// `store_adopt`: become one of the project's writers if not one yet.
    pub adopt: bool,
}

impl SharedIndex {
    /// The project whose writers may write this index: for a git
    /// revision's (kept as `<project>@<sha>`, `store::revision_root`), its
    /// project's, since a checkout that may not write a project may not
    /// write its revisions either; else its own.
    pub fn writers_project(&self) -> &str {
        super::settings::revision_of_project(&self.project).unwrap_or(&self.project)
    }
}

/// Where `root`'s index lives under `config`: None for its own directory.
/// Unnamed, a project is kept under its directory's name and a hash of its
/// path, so that two checkouts share an index only when told to.
pub fn shared_index(root: &ProjectRoot, config: &crate::project::ResolvedConfig) -> Option<SharedIndex> {
    let url = config.store_url.clone()?;
    let project = config.store_project.clone().unwrap_or_else(|| default_project_name(&root.path));
    Some(SharedIndex { url, project, writer: writer_identity(&root.path), adopt: config.store_adopt })
}

/// The name a shared index of the project at `root` is kept under when
/// none is given: its directory's name and a hash of its path. The name
/// is held to what `store_project` may be (audit 263: a directory named
/// with a newline and an escape put both into the shared database and
/// onto terminals): its control characters become `_`, and it is cut to
/// `DEFAULT_NAME_BYTES`.
fn default_project_name(root: &Path) -> String {
    let base = root.file_name().map_or("root".into(), |n| n.to_string_lossy().into_owned());
    let mut kept = String::new();
    for c in base.chars().map(|c| if c.is_control() { '_' } else { c }) {
        if kept.len() + c.len_utf8() > DEFAULT_NAME_BYTES {
            break;
        }
        kept.push(c);
    }
    let hash = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
    format!("{kept}-{}", &hash[..8])
}

/// The most bytes of a directory's name a default project name keeps: with
/// `-` and its hash, `store_project`'s 200. A name that fitted is kept as
/// it was, and with it its index (review 266).
const DEFAULT_NAME_BYTES: usize = 191;

/// This machine's name and `root`: what a repository's own files cannot
/// choose (where it was cloned to, and on which machine).
fn writer_identity(root: &Path) -> String {
    let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok().map(|h| h.trim().to_string()).filter(|h| !h.is_empty()))
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", root.display())
}

impl fmt::Debug for SharedIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndex").field("url", &"<not shown>").field("project", &self.project).finish()
    }
}

impl ProjectRoot {
    /// `<root>/.vecgrep`, where the index and the project config live.
    pub fn data_dir(&self) -> PathBuf {
        self.path.join(crate::project::PROJECT_DIR)
    }

    pub fn index_path(&self) -> PathBuf {
        self.data_dir().join("index.db")
    }

    pub fn config_path(&self) -> PathBuf {
        self.data_dir().join(crate::project::CONFIG_FILE)
    }
}

/// The file that makes a directory a catalog's (`catalog`).
pub const CATALOG_FILE: &str = ".vecgrep-catalog.toml";

/// Markers in the order they are reported when one directory has several:
/// `.vecgrep` comes last because every indexed root grows one, and the VCS
/// marker says more about the project.
const MARKERS: [(&str, RootMarker); 5] = [
    (CATALOG_FILE, RootMarker::Catalog),
    (".git", RootMarker::Git),
    (".hg", RootMarker::Hg),
    (".jj", RootMarker::Jj),
    (crate::project::PROJECT_DIR, RootMarker::Vecgrep),
];

/// The nearest ancestor of `start` (itself included) that carries a marker.
pub(super) fn find_marked_root(start: &Path) -> Option<ProjectRoot> {
    for dir in start.ancestors().filter(|dir| !among_kept_revisions(dir)) {
        for (name, marker) in MARKERS {
            let candidate = dir.join(name);
            // `.git` may be a file (worktrees, submodules); a catalog's is a file; the others are directories.
            let present = match marker {
                RootMarker::Git => candidate.exists(),
                RootMarker::Catalog => candidate.is_file() && is_users_catalog(dir),
                _ => candidate.is_dir(),
            };
            if present && may_choose_the_root(&candidate) {
                return Some(ProjectRoot { path: dir.to_path_buf(), marker, shared: None });
            }
        }
    }
    None
}

/// Whether `dir` is in the revisions' indexes a project keeps
/// (`.vecgrep/revs/`, `store::revision_root`): a revision's or a label's
/// root holds a `.vecgrep` of its own, but is no project to index. A run
/// from within took it for one, walked it (its files are written there
/// only while it is indexed) and emptied its index, which stayed marked
/// complete (audit 214).
/// Only a directory named as vecgrep names them (a commit id, or a shared
/// store's `shared-…`): a project of its own at `.vecgrep/revs/proj` is
/// still a root (review 216).
fn among_kept_revisions(dir: &Path) -> bool {
    let names: Vec<String> = dir.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    names.windows(3).any(|w| {
        w[0] == crate::project::PROJECT_DIR
            && w[1] == crate::project::REVS_DIR
            && (super::settings::is_commit_id(&w[2]) || w[2].starts_with(crate::project::SHARED_REVS_PREFIX))
    })
}

/// Whether the marker at `path` may choose the root: not when another
/// user's stands in a shared directory such as `/tmp` (anyone may add to
/// it, only an entry's owner remove it: the sticky bit), where anyone could
/// have put it: their `.vecgrep` would choose what is searched, set its
/// settings, and show its stored text as this user's files' lines. A
/// marker elsewhere is as good as its directory (a teammate's checkout,
/// read as it is).
fn may_choose_the_root(path: &Path) -> bool {
    planted_by(path).is_none()
}

/// The owner of the file or directory at `path` when it is another user's
/// in a shared directory (sticky and writable by anyone, as `/tmp`): what
/// vecgrep does not take as a root's marker or index (`store::own_data_dir`).
pub fn planted_by(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let owner = path.symlink_metadata().ok()?.uid();
    let dir_mode = path.parent()?.metadata().ok()?.mode();
    (!owner_trusted(owner, super::user::effective_uid(), dir_mode)).then_some(owner)
}

fn owner_trusted(owner: u32, me: u32, dir_mode: u32) -> bool {
    const SHARED: u32 = 0o1002;
    owner == me || dir_mode & SHARED != SHARED
}

/// The markers another user planted (`planted_by`) that were passed over
/// on the way up to `root` from `cwd`, and from the directory of a single
/// PATH (`paths`, those that chose the root) when `cwd` chose none
/// (`select_root`), nearest first: said, so that a root other than the
/// one expected comes with its reason. One passed over on the way up from
/// a PATH was said only when the search ran from within (audit 203).
pub fn markers_passed_over(cwd: &Path, paths: &[PathBuf], root: &ProjectRoot) -> Vec<(PathBuf, u32)> {
    if matches!(root.marker, RootMarker::Catalog | RootMarker::Revision) {
        return Vec::new();
    }
    let Ok(cwd) = cwd.canonicalize() else { return Vec::new() };
    let from_path = match paths {
        [single] if find_marked_root(&cwd).is_none() => {
            absolutize(&cwd, single).canonicalize().ok().map(|p| if p.is_dir() { p } else { parent_of(p) })
        }
        _ => None,
    };
    let stop = (root.marker != RootMarker::None).then_some(root.path.as_path());
    let mut passed: Vec<(PathBuf, u32)> = Vec::new();
    for start in std::iter::once(cwd).chain(from_path) {
        for dir in start.ancestors().take_while(|dir| Some(*dir) != stop) {
            for (name, _) in MARKERS.iter().filter(|(_, m)| *m != RootMarker::Catalog) {
                let marker = dir.join(name);
                if passed.iter().any(|(said, _)| *said == marker) {
                    continue;
                }
                if let Some(owner) = planted_by(&marker) {
                    passed.push((marker, owner));
                }
            }
        }
    }
    passed
}

/// The directory a file is in (a root's own, `/`, for itself).
fn parent_of(file: PathBuf) -> PathBuf {
    file.parent().map(Path::to_path_buf).unwrap_or(file)
}

/// Whether `dir` is one of the user's catalogs, a directory of the
/// catalogs' own (`vg-catalog add` makes them there): the file alone
/// makes no catalog, or a repository that ships one would have vecgrep
/// search, index and serve any directory its file names.
pub(crate) fn is_users_catalog(dir: &Path) -> bool {
    let Ok(catalogs) = super::base_dirs::catalogs_dir() else { return false };
    dir.parent() == Some(catalogs.canonicalize().unwrap_or(catalogs).as_path())
}

/// Errors of root selection and admission; each names the paths involved.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    // The cause is in the message and not a `source`, which `{:#}` would
    // print a second time.
    #[error("cannot use the current directory '{}': {cause}", shown(path))]
    Cwd { path: PathBuf, cause: std::io::Error },
    #[error("'{}': {cause}", shown(path))]
    Path { path: PathBuf, cause: std::io::Error },
    #[error(
        "path '{}' is outside the project root '{}' (pass --skip-outside-root to skip it)",
        shown(path),
        shown(root)
    )]
    OutsideRoot { path: PathBuf, root: PathBuf },
    #[error("every path given is outside the project root '{}'", shown(root))]
    NoPathsRemain { root: PathBuf },
    #[error("path '{}' is not valid UTF-8; vecgrep records need UTF-8 paths", shown(path))]
    NotUtf8 { path: PathBuf },
    #[error(
        "the project root '{}' is not valid UTF-8; vecgrep records need UTF-8 paths (rename the directory)",
        shown(path)
    )]
    RootNotUtf8 { path: PathBuf },
    #[error(
        "'{}' is a bare git repository, whose files are git's own (its config may hold credentials); search a clone with a work tree",
        shown(path)
    )]
    BareRepository { path: PathBuf },
    /// Whether a directory holding a catalog's file is one of the user's
    /// catalogs cannot be told (a relative `VECGREP_CATALOG_DIR`).
    #[error("{0}")]
    CatalogsUnknown(String),
    /// Chosen by its name (`Catalogs::open`) or from within (`select_root`).
    #[error(
        "catalog '{}' ({}) belongs to another user (uid {owner}) in a shared directory: its definition would choose which of your directories are indexed, and its index would be theirs; make one of your own",
        path.file_name().unwrap_or_default().to_string_lossy(),
        shown(path)
    )]
    AnotherUsersCatalog { path: PathBuf, owner: u32 },
}

/// A path as an error quotes it: its start and end, so that the cause after
/// it is said (a path 4,000 characters deep filled the line, and the
/// cause, "File name too long", was cut off).
fn shown(path: &Path) -> String {
    super::shown::clipped_middle(&path.display().to_string(), super::shown::SHOWN_PATH_CHARS)
}

/// Choose the project root for an invocation run in `cwd` with `paths`.
///
/// The root found from the current directory wins; otherwise a single path
/// argument (a directory, or a file's directory) may supply one; otherwise
/// the current directory itself becomes an unmarked root.
pub fn select_root(cwd: &Path, paths: &[PathBuf]) -> Result<ProjectRoot, RootError> {
    // A catalog's directory read as no catalog (review 255: a relative
    // `VECGREP_CATALOG_DIR`, refused where catalogs are named, made it a
    // plain project of links, and a run there emptied the catalog's index).
    if let Some(why) = catalogs_unknown(cwd, paths) {
        return Err(RootError::CatalogsUnknown(why));
    }
    let root = select_any_root(cwd, paths)?;
    if let Some(path) = bare_repository_holding(&root) {
        return Err(RootError::BareRepository { path });
    }
    // As by its name (`Catalogs::open`): chosen from within, it indexed
    // what its owner's definition named into their index (review 281).
    if let Some(owner) = (root.marker == RootMarker::Catalog).then(|| planted_by(&root.path)).flatten() {
        return Err(RootError::AnotherUsersCatalog { path: root.path, owner });
    }
    // Every record names the root, and every shown path is made from it: one
    // that is not UTF-8 would be printed as paths that do not exist.
    match root.path.to_str() {
        Some(_) => Ok(root),
        None => Err(RootError::RootNotUtf8 { path: root.path }),
    }
}

fn select_any_root(cwd: &Path, paths: &[PathBuf]) -> Result<ProjectRoot, RootError> {
    let cwd = cwd.canonicalize().map_err(|cause| RootError::Cwd { path: cwd.to_path_buf(), cause })?;
    if let Some(root) = find_marked_root(&cwd) {
        return Ok(root);
    }
    if let [single] = paths {
        let abs = absolutize(&cwd, single);
        let canonical = abs.canonicalize().map_err(|cause| RootError::Path { path: single.clone(), cause })?;
        let dir = if canonical.is_dir() { canonical } else { parent_of(canonical) };
        if let Some(root) = find_marked_root(&dir) {
            return Ok(root);
        }
    }
    Ok(ProjectRoot { path: cwd, marker: RootMarker::None, shared: None })
}

/// Why the catalogs' directory cannot be had, when a directory at or above
/// `cwd` or the single PATH holds a catalog's file: whether it is a catalog
/// turns on it.
fn catalogs_unknown(cwd: &Path, paths: &[PathBuf]) -> Option<String> {
    // Only a variable given (a relative one, `catalogs_dir` says): with no
    // home at all, a directory that ships a catalog's file is a project, as it was.
    std::env::var_os(super::base_dirs::CATALOG_DIR_ENV).filter(|v| !v.is_empty())?;
    let why = super::base_dirs::catalogs_dir().err()?;
    // A PATH chooses the root only when it is the one given.
    let single = match paths {
        [single] => Some(cwd.join(single).canonicalize().unwrap_or_else(|_| cwd.join(single))),
        _ => None,
    };
    let starts = std::iter::once(cwd.to_path_buf()).chain(single);
    let holds_one = starts.into_iter().any(|start| start.ancestors().any(|d| d.join(CATALOG_FILE).is_file()));
    holds_one.then(|| why.to_string())
}

/// The bare git repository `root` is, or lies in with no marker between
/// (audit 253: `vg-index` in `repo.git` indexed its config, hooks and
/// objects, and wrote `.vecgrep` among them, where `.git` is never
/// searched). A marked root is checked alone: a work tree of a bare
/// repository may be kept inside it (`repo.git/main/`).
pub(crate) fn bare_repository_holding(root: &ProjectRoot) -> Option<PathBuf> {
    let mut dirs = root.path.ancestors();
    let looked_at = match root.marker {
        RootMarker::None => dirs.find(|d| is_git_directory(d)),
        _ => dirs.next().filter(|d| is_git_directory(d)),
    };
    looked_at.map(Path::to_path_buf)
}

/// Whether `dir` is a git directory, by git's own test: a `HEAD` that
/// names a branch or a commit, beside `objects/` and `refs/`.
pub(crate) fn is_git_directory(dir: &Path) -> bool {
    // `HEAD` first: one look, which most directories a walk passes fail.
    let Ok(Some(head)) = super::small_file::read_small(&dir.join("HEAD"), 256) else { return false };
    if !dir.join("objects").is_dir() || !dir.join("refs").is_dir() {
        return false;
    }
    let head = String::from_utf8_lossy(&head);
    let head = head.trim_end();
    head.starts_with("ref: refs/") || (head.len() >= 40 && head.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The root a record names (its `root` field), for a tool downstream of the
/// one that chose it: that directory, with the marker it carries.
pub fn root_named(path: &Path) -> Result<ProjectRoot, RootError> {
    let path = path.canonicalize().map_err(|cause| RootError::Path { path: path.to_path_buf(), cause })?;
    let marker = find_marked_root(&path).filter(|r| r.path == path).map_or(RootMarker::None, |r| r.marker);
    Ok(ProjectRoot { path, marker, shared: None })
}

/// A user path that passed admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmittedPath {
    /// Canonical absolute path.
    pub abs: PathBuf,
    /// Root-relative path with `/` separators; empty for the root itself.
    pub rel: String,
    pub is_dir: bool,
}

impl AdmittedPath {
    /// The whole of `root`, as a PATH of `.` at the root admits it.
    pub fn whole(root: &ProjectRoot) -> AdmittedPath {
        AdmittedPath { abs: root.path.clone(), rel: String::new(), is_dir: true }
    }
}

/// The outcome of admitting the user's paths against a root.
#[derive(Debug, Default)]
pub struct Admission {
    pub admitted: Vec<AdmittedPath>,
    /// Paths skipped under `--skip-outside-root`, as the user wrote them.
    pub skipped: Vec<PathBuf>,
}

/// Admit `paths` (relative to `cwd`) against `root`. No paths means the
/// current directory, as with ripgrep.
pub fn admit_paths(
    root: &ProjectRoot,
    cwd: &Path,
    paths: &[PathBuf],
    skip_outside_root: bool,
) -> Result<Admission, RootError> {
    let defaulted;
    let paths = if paths.is_empty() {
        defaulted = [PathBuf::from(".")];
        &defaulted[..]
    } else {
        paths
    };
    let mut out = Admission::default();
    for path in paths {
        let abs = absolutize(cwd, path);
        let canonical = match abs.canonicalize() {
            Ok(c) => c,
            Err(source) => {
                // A path that does not exist cannot be inside anything; one
                // outside the root is skipped as such when asked (the spec's
                // PathOutsideRoot is lexical, from the part that exists, so
                // that a link on the way in is followed), else its absence is
                // the error: a typo is not fixed by moving the root.
                if skip_outside_root && !resolved_as_far_as_it_exists(&abs).starts_with(&root.path) {
                    out.skipped.push(path.clone());
                    continue;
                }
                return Err(RootError::Path { path: path.clone(), cause: source });
            }
        };
        match canonical.strip_prefix(&root.path) {
            Ok(rel) => {
                // Named as found: "." says nothing of which name is not UTF-8.
                let rel = rel_to_string(rel).ok_or_else(|| RootError::NotUtf8 { path: canonical.clone() })?;
                let is_dir = canonical.is_dir();
                out.admitted.push(AdmittedPath { abs: canonical, rel, is_dir });
            }
            Err(_) if skip_outside_root => out.skipped.push(path.clone()),
            Err(_) => return Err(RootError::OutsideRoot { path: path.clone(), root: root.path.clone() }),
        }
    }
    if out.admitted.is_empty() {
        return Err(RootError::NoPathsRemain { root: root.path.clone() });
    }
    // A path given twice is walked once. One inside another's directory is
    // kept: walked from itself, as ripgrep walks each PATH, it may add what
    // the outer walk leaves out (a file named, which no type, glob, hidden
    // or ignore rule refuses; what --max-depth counts from it), and the
    // walk drops the files both find.
    let mut seen = std::collections::HashSet::new();
    out.admitted.retain(|p| seen.insert(p.rel.clone()));
    Ok(out)
}

/// Is root-relative `path` equal to or below root-relative directory `dir`?
pub fn is_under(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || (path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

/// Whether `file` is relative, names something, and stays below the
/// directory it is joined to: what a record's path and an index's stored
/// path must be.
pub fn is_below_root(file: &str) -> bool {
    // No path holds a NUL; `--files -0` would cut the name at it.
    if file.contains('\0') {
        return false;
    }
    let mut parts = Path::new(file).components().filter(|c| *c != Component::CurDir).peekable();
    parts.peek().is_some() && parts.all(|c| matches!(c, Component::Normal(_)))
}

/// Root-relative path as a `/`-separated string, or None if not UTF-8.
pub(super) fn rel_to_string(rel: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// Root-relative forms of `paths` (relative to `cwd`) that need not exist
/// now: a file the history knew, a directory since deleted. Each is placed
/// where it enters the root, and taken as written from there
/// (`entered_as_written`): a link of the working tree is no link of the
/// revision or the history (`old`, a directory in the revision and a link
/// to `lib` now, searched the revision's `lib`). No paths means the
/// current directory. As for
/// `admit_paths`, every path skipped is an error (FailIfNoPathsRemain): a
/// search of none of them is no search of everything.
pub fn admit_paths_lexically(
    root: &ProjectRoot,
    cwd: &Path,
    paths: &[PathBuf],
    skip_outside_root: bool,
) -> Result<LexicalAdmission, RootError> {
    let here = [PathBuf::from(".")];
    let paths = if paths.is_empty() { &here[..] } else { paths };
    let base = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let mut out = LexicalAdmission::default();
    for path in paths {
        let abs = absolutize(&base, path);
        let resolved = entered_as_written(&abs, &root.path);
        match resolved.strip_prefix(&root.path) {
            // Inside, but a name no record can hold: said as such, not as outside.
            Ok(rel) => out.admitted.push(rel_to_string(rel).ok_or_else(|| RootError::NotUtf8 { path: path.clone() })?),
            Err(_) if skip_outside_root => out.skipped.push(path.clone()),
            Err(_) => return Err(RootError::OutsideRoot { path: path.clone(), root: root.path.clone() }),
        }
    }
    if out.admitted.is_empty() {
        return Err(RootError::NoPathsRemain { root: root.path.clone() });
    }
    Ok(out)
}

/// The outcome of `admit_paths_lexically`: root-relative paths, and those
/// skipped under `--skip-outside-root`, as the user wrote them.
#[derive(Debug, Default)]
pub struct LexicalAdmission {
    pub admitted: Vec<String>,
    pub skipped: Vec<PathBuf>,
}

fn absolutize(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// `path` with the longest start of it that exists, as written, resolved
/// (links followed, as `canonicalize` does) and the rest taken by its
/// text: a missing file reached through a linked directory is placed where
/// the link leads, and a `..` after a link climbs from where it leads, as
/// the system reads it (`link/../missing` was placed beside the link by
/// its text: audit 203).
pub(crate) fn resolved_as_far_as_it_exists(path: &Path) -> PathBuf {
    for existing in path.ancestors() {
        if let Ok(real) = existing.canonicalize() {
            let rest = path.strip_prefix(existing).unwrap_or(Path::new(""));
            return normalize_lexically(&real.join(rest));
        }
    }
    normalize_lexically(path)
}

/// A `path`, placed in `root` where it enters it: its
/// shortest start that resolves into the root (through a linked directory
/// outside, as `/tmp` is on some systems, or a link to a directory of the
/// root), with the rest taken as written, so that no link met inside the
/// root is followed: a file a revision had, named through a link the
/// working tree has made since, is that revision's path. Taken as written
/// where no start of it resolves into the root.
fn entered_as_written(path: &Path, root: &Path) -> PathBuf {
    // The starts as written, `..` and all: the one after a link outside
    // the root climbs from where the link leads, as the system reads it
    // (`plib/../lib/a.py`, plib a link into the root, was refused).
    // A start whose rest climbs back out (`sub/../../plib/a.py` from the
    // root) is no place in it: a longer start, through the link, may be.
    let starts: Vec<&Path> = path.ancestors().collect();
    for start in starts.into_iter().rev() {
        match start.canonicalize() {
            Ok(real) if real.starts_with(root) => {
                let rest = path.strip_prefix(start).unwrap_or(Path::new(""));
                let placed = normalize_lexically(&real.join(rest));
                if placed.starts_with(root) {
                    return placed;
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    normalize_lexically(path)
}

/// Resolve `.` and `..` without touching the file system.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `target` expressed relative to `base` (both absolute), with `..` as needed.
pub fn relative_to(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<_> = target.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory's name with control characters, or too long, gives a
    /// name `store_project` would take (audit 263).
    #[test]
    fn a_default_project_name_is_one_store_project_would_take() {
        for dir in [
            "/tmp/od\nd\u{1b}[31mX",
            &format!("/tmp/{}", "d".repeat(300)),
            &format!("/tmp/{}", "é".repeat(150)),
            "/srv/plain",
        ] {
            let name = default_project_name(Path::new(dir));
            assert!(crate::project::settings::check_store_project(name.clone()).is_ok(), "{name:?}");
        }
        assert!(default_project_name(Path::new("/srv/plain")).starts_with("plain-"));
    }

    #[test]
    fn is_under_respects_component_boundaries() {
        assert!(is_under("src/a.rs", "src"));
        assert!(is_under("src", "src"));
        assert!(is_under("anything", ""));
        assert!(!is_under("srcx/a.rs", "src"));
        assert!(!is_under("sr", "src"));
    }

    #[test]
    fn relative_to_walks_up_and_down() {
        assert_eq!(relative_to(Path::new("/r/a/b.rs"), Path::new("/r/c")), PathBuf::from("../a/b.rs"));
        assert_eq!(relative_to(Path::new("/r/a/b.rs"), Path::new("/r")), PathBuf::from("a/b.rs"));
        assert_eq!(relative_to(Path::new("/r"), Path::new("/r")), PathBuf::from("."));
    }

    #[test]
    fn marker_priority_prefers_vcs_over_vecgrep() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".vecgrep")).unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let root = find_marked_root(dir.path()).unwrap();
        assert_eq!(root.marker, RootMarker::Git);
    }

    #[test]
    fn another_users_marker_is_trusted_unless_it_is_in_a_shared_directory() {
        let (shared, open, owners_only, sticky_group) = (0o41777, 0o40777, 0o40755, 0o41775);
        assert!(owner_trusted(1000, 1000, shared), "one's own, anywhere");
        assert!(owner_trusted(1001, 1000, owners_only), "a teammate's checkout");
        assert!(owner_trusted(1001, 1000, sticky_group));
        // Where anyone may replace anything, ownership says nothing.
        assert!(owner_trusted(1001, 1000, open));
        assert!(!owner_trusted(1001, 1000, shared), "planted in /tmp");
        assert!(!owner_trusted(0, 1000, shared), "root's too: not this user's index");
        assert!(!owner_trusted(1000, 0, shared), "and root takes none");
    }

    #[test]
    fn nested_paths_are_kept_and_a_repeated_one_admitted_once() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("src/sub")).unwrap();
        let root = ProjectRoot { path: base.clone(), marker: RootMarker::None, shared: None };
        let given = ["src/sub", "src", "./src/sub/", "src"].map(PathBuf::from);
        let adm = admit_paths(&root, &base, &given, false).unwrap();
        let rels: Vec<&str> = adm.admitted.iter().map(|p| p.rel.as_str()).collect();
        assert_eq!(rels, ["src/sub", "src"], "each walked from itself (walk_tree drops what both find)");
    }
}
