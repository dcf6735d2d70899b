//! Catalogs: a named set of projects searched as one. A catalog is a root
//! of its own (`RootMarker::Catalog`), a directory under the user's data
//! directory holding its definition, its index and a link to each project,
//! so that everything built for a root (index runs, searches, servers, the
//! picker) works on it, and a file's catalog path `<project>/<path>`
//! resolves on disk.

mod context;
mod names;
mod walk;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _, Result};
use serde::{Deserialize, Serialize};

pub use context::{context_path, load_context, save_context, DefaultContext};
pub use names::{check_catalog_name, check_label_name, check_project_name, NameError};
pub use walk::{admit_catalog_paths, missing_projects, walk_catalog};

use super::root::{normalize_lexically, ProjectRoot, RootMarker, CATALOG_FILE};

/// The variable that names another directory for the catalogs.
pub use super::base_dirs::CATALOG_DIR_ENV;

/// The definition's format; a newer one is refused rather than misread.
const CATALOG_VERSION: u32 = 1;

/// The lock changes to any catalog's definition take, in the catalogs' directory.
const CHANGES_LOCK: &str = ".catalogs.lock";

/// One catalog as its definition says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    pub name: String,
    /// Where its definition, index and links live.
    pub dir: PathBuf,
    pub projects: Vec<CatalogProject>,
}

/// A project of a catalog: its name there (the first segment of its
/// files' catalog paths) and where it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogProject {
    pub name: String,
    pub path: PathBuf,
}

impl CatalogProject {
    /// Whether its directory is where it was added: a directory replaced by
    /// a link to another has moved, as one gone has (`walk_catalog`).
    pub fn is_present(&self) -> bool {
        self.path.symlink_metadata().is_ok_and(|m| m.is_dir())
    }
}

/// The definition file, `<dir>/.vecgrep-catalog.toml`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    version: u32,
    name: String,
    #[serde(default, rename = "project")]
    projects: Vec<CatalogProject>,
}

/// The directory that holds the catalogs, one directory each.
#[derive(Clone, Debug)]
pub struct Catalogs {
    pub dir: PathBuf,
}

impl Catalogs {
    /// Where the user's catalogs live: `$VECGREP_CATALOG_DIR`, else
    /// `$XDG_DATA_HOME/vecgrep/catalogs`, else `~/.local/share/vecgrep/catalogs`.
    pub fn of_user() -> Result<Catalogs> {
        let dir = super::base_dirs::catalogs_dir()?;
        Ok(Catalogs { dir: crate::project::normalize_lexically(&dir) })
    }

    /// That the catalogs' directory is one, or may be made: a file in its
    /// way (or above it), or a link to nothing, is said as that by every
    /// command that reads or writes catalogs. `add` said "File exists",
    /// `show` "no catalog named", `list` "Not a directory".
    fn check_dir(&self) -> Result<()> {
        let not_one = |why: &str| {
            anyhow!("the catalogs' directory {} {why} (VECGREP_CATALOG_DIR, else XDG_DATA_HOME)", self.dir.display())
        };
        match std::fs::metadata(&self.dir) {
            Ok(m) if !m.is_dir() => Err(not_one("is not a directory")),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Err(not_one("lies below a file")),
            Err(_) if self.dir.symlink_metadata().is_ok() => Err(not_one("is a link that leads nowhere")),
            _ => Ok(()),
        }
    }

    /// The catalog named `name`, or an error saying none is.
    pub fn open(&self, name: &str) -> Result<Catalog> {
        check_catalog_name(name)?;
        self.check_dir()?;
        let dir = self.dir.join(name);
        match kept_as(&dir) {
            Kept::Defined => refuse_planted(&dir).and_then(|()| Catalog::read(&dir)),
            Kept::Undefined => Err(lost_definition(name, &dir)),
            Kept::Closed(e) => Err(closed(&dir, &e)),
            Kept::Nothing => {
                bail!("no catalog named '{name}' (vg-catalog list shows them; vg-catalog add {name} PATH... makes it)")
            }
        }
    }

    /// Every catalog, by name, and for each directory whose definition
    /// cannot be read, why (one bad catalog hides none of the others).
    pub fn list(&self) -> Result<(Vec<Catalog>, Vec<String>)> {
        self.check_dir()?;
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.dir.display())),
        };
        let (mut out, mut unreadable) = (Vec::new(), Vec::new());
        for entry in entries {
            let path = entry?.path();
            match kept_as(&path) {
                Kept::Defined => match Catalog::read(&path) {
                    Ok(catalog) => out.push(catalog),
                    Err(e) => unreadable.push(crate::project::shown::error_line(&e)),
                },
                // The user's own, closed to them, is said; another user's,
                // in a shared catalogs' directory, may be anything.
                Kept::Closed(e) if owned_by_user(&path) => {
                    unreadable.push(crate::project::shown::error_line(&closed(&path, &e)))
                }
                // A shared catalogs' directory may hold anything.
                Kept::Closed(_) | Kept::Undefined | Kept::Nothing => {}
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((out, unreadable))
    }

    /// Make catalog `name` if it does not exist, and add each of `paths`
    /// (directories) as a project named after its directory. Nothing is
    /// written unless every path can be added.
    pub fn add(&self, name: &str, paths: &[PathBuf]) -> Result<(Catalog, Vec<Added>)> {
        check_catalog_name(name)?;
        self.locked(|| {
            // Roots are canonical paths; the catalogs' directory is made by now.
            let dir = self.dir.canonicalize()?.join(name);
            let mut catalog = match kept_as(&dir) {
                Kept::Defined => refuse_planted(&dir).and_then(|()| Catalog::read(&dir))?,
                // Its links and index are another catalog's: never taken over.
                Kept::Undefined => return Err(lost_definition(name, &dir)),
                // Unreadable is no "new": a definition may be there.
                Kept::Closed(e) => return Err(closed(&dir, &e)),
                Kept::Nothing => Catalog { name: name.into(), dir: dir.clone(), projects: Vec::new() },
            };
            let mut added = Vec::new();
            for path in paths {
                let project = project_for(&catalog, path)?;
                match catalog.projects.iter().find(|p| p.path == project.path) {
                    Some(same) => added.push(Added::Already(same.clone())),
                    None => {
                        catalog.projects.push(project.clone());
                        added.push(Added::New(project));
                    }
                }
            }
            write(&catalog)?;
            Ok((Catalog::read(&dir)?, added))
        })
    }

    /// Take projects (by name) out of catalog `name`; their files leave
    /// its index with `index::forget_paths_under`. Every name is checked
    /// before anything changes.
    pub fn remove_projects(&self, name: &str, projects: &[String]) -> Result<Catalog> {
        check_catalog_name(name)?;
        self.locked_existing(|| {
            let mut catalog = self.open(name)?;
            if let Some(unknown) = projects.iter().find(|p| !catalog.projects.iter().any(|q| &q.name == *p)) {
                bail!("catalog '{name}' has no project '{unknown}'");
            }
            catalog.projects.retain(|p| !projects.contains(&p.name));
            write(&catalog)?;
            for project in projects {
                let link = catalog.dir.join(project);
                if link.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&link).with_context(|| format!("removing {}", link.display()))?;
                }
            }
            Ok(catalog)
        })
    }

    /// Delete catalog `name`: its definition, links and index, even when
    /// its definition cannot be read. The projects are not touched. Under
    /// the catalogs' lock, as every change: beside an `add` of the same
    /// catalog, either may go first, never both at once (audit 186: a
    /// catalog was left holding a link and no definition, or came back
    /// with a project removed before it).
    pub fn remove(&self, name: &str) -> Result<String> {
        check_catalog_name(name)?;
        self.locked_existing(|| {
            // As kept, not canonical: a catalog directory that is a link
            // loses the link, never what it points to.
            let dir = self.dir.join(name);
            match kept_as(&dir) {
                Kept::Defined => refuse_planted(&dir)?,
                Kept::Undefined => return Err(lost_definition(name, &dir)),
                Kept::Closed(e) => return Err(closed(&dir, &e)),
                Kept::Nothing => bail!("no catalog named '{name}' (vg-catalog list shows them)"),
            }
            if dir.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                std::fs::remove_file(&dir).with_context(|| format!("removing {}", dir.display()))?;
            } else {
                remove_catalog_dir(&dir)?;
            }
            Ok(dir.display().to_string())
        })
    }

    /// Run `change` holding the catalogs' lock, so that two changes at
    /// once both land. One lock for all of them: changes are rare and
    /// quick, and a lock file per name would be left for every name tried.
    fn locked<T>(&self, change: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check_dir()?;
        std::fs::create_dir_all(&self.dir).with_context(|| format!("creating {}", self.dir.display()))?;
        let path = self.dir.join(CHANGES_LOCK);
        let file = open_lock(&path).with_context(|| format!("opening {}", path.display()))?;
        file.lock().with_context(|| format!("locking {}", path.display()))?;
        change()
    }

    /// As `locked`, for a change to a catalog that must exist already:
    /// with no catalogs' directory there is none, and `change` refuses
    /// without one being made for it, nor its lock (audit 207: a refused
    /// `vg-catalog remove x` left both behind).
    fn locked_existing<T>(&self, change: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check_dir()?;
        match self.dir.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => change(),
            _ => self.locked(change),
        }
    }

    /// Where catalog `name`'s index lives, whether or not it can be read:
    /// a change to the catalog waits for an index run on it
    /// (`index::while_not_indexing`).
    pub fn root_of(&self, name: &str) -> Result<ProjectRoot> {
        check_catalog_name(name)?;
        Ok(ProjectRoot { path: self.dir.join(name), marker: RootMarker::Catalog, shared: None })
    }
}

/// That the catalog at `dir` is not another user's in a shared
/// directory, as a marker another user planted there is passed over: its
/// definition would choose which of your directories are indexed, and
/// keep the index where they read it (audit 280); nor is it yours to
/// change or remove (review 281: `remove` deleted its definition).
fn refuse_planted(dir: &Path) -> Result<()> {
    match crate::project::planted_by(dir) {
        Some(owner) => Err(crate::project::RootError::AnotherUsersCatalog { path: dir.to_path_buf(), owner }.into()),
        None => Ok(()),
    }
}

/// The changes' lock file, made if missing and never truncated nor
/// followed through a link; one another user made (a shared catalogs'
/// directory) is locked read-only, as a lock needs no write (audit 280:
/// the first user's lock refused every other user's change). Made here,
/// it is readable by all whatever the umask, and one that is no regular
/// file (a FIFO another user planted, which an open would wait on) is
/// refused (review 281).
fn open_lock(path: &Path) -> Result<std::fs::File> {
    use std::io::ErrorKind;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let mut options = std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    // Made here, it is made readable by all whatever the umask; one that
    // was there already is never changed (review 283: a file of the
    // user's, hard-linked there by another, was made readable by all).
    match options.clone().write(true).create_new(true).mode(0o644).open(path) {
        Ok(made) => {
            made.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            return Ok(made);
        }
        Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(e.into()),
        Err(_) => {}
    }
    // Not ours to write (another user's), or no file to write (a FIFO
    // with no reader, a directory): locked read-only, or said below.
    let file = options.clone().write(true).open(path).or_else(|_| options.open(path));
    let me = crate::project::user::effective_uid();
    let remedy = |uid: u32| match uid == me {
        true => "remove it".to_string(),
        false => format!("its owner (uid {uid}) may remove it"),
    };
    let file = file.map_err(|e| match path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => anyhow!("it is a link, which a lock never is; {}", remedy(m.uid())),
        Ok(m) if m.uid() != me => anyhow!("{e}: it is closed to you; {}", remedy(m.uid())),
        _ => anyhow!(e),
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        bail!("it is no regular file; {}", remedy(meta.uid()));
    }
    Ok(file)
}

/// That `projects` (of the definition at `path`) have distinct names and
/// directories, none inside another, as `add` refuses: a file would be
/// indexed, and found, twice. Directories are compared as they resolve (a
/// path through a link, or with `..`, held one inside another), but for a
/// project that is a link now, which has moved. Sorted
/// rather than each compared with those before it: a definition of 14,000
/// projects took a minute to read.
fn check_projects_apart(path: &Path, projects: &[CatalogProject]) -> Result<()> {
    let mut names: HashMap<String, &str> = HashMap::with_capacity(projects.len());
    for p in projects {
        if let Some(twin) = names.insert(p.name.to_ascii_lowercase(), &p.name) {
            bail!(
                "{} names two projects '{twin}' and '{}'; a catalog's projects need distinct names",
                path.display(),
                p.name
            );
        }
    }
    // A project replaced by a link since has moved (spec/catalogs.md), a
    // skip at each use, not a definition that names one directory twice:
    // its directory is where the link is, the link not followed. Followed,
    // it made every use of the catalog an error, `remove-project`'s too.
    let resolved = |p: &CatalogProject| {
        let linked = p.path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
        let at_the_link = || Some(p.path.parent()?.canonicalize().ok()?.join(p.path.file_name()?));
        match linked.then(at_the_link).flatten() {
            Some(link) => link,
            None => p.path.canonicalize().unwrap_or_else(|_| normalize_lexically(&p.path)),
        }
    };
    let mut dirs: Vec<(PathBuf, &CatalogProject)> = projects.iter().map(|p| (resolved(p), p)).collect();
    dirs.sort_by(|a, b| a.0.cmp(&b.0));
    // A directory inside another sorts after it, and so does everything
    // between them: each needs comparing with the one before it alone.
    for pair in dirs.windows(2) {
        let ((outer_dir, outer), (inner_dir, inner)) = (&pair[0], &pair[1]);
        if outer_dir == inner_dir {
            bail!(
                "{} names '{}' twice, as projects '{}' and '{}'",
                path.display(),
                inner_dir.display(),
                outer.name,
                inner.name
            );
        }
        if inner_dir.starts_with(outer_dir) {
            bail!(
                "{} names projects '{}' and '{}', one inside the other; a file belongs to one project",
                path.display(),
                outer.name,
                inner.name
            );
        }
    }
    Ok(())
}

impl Catalog {
    /// The catalog whose directory is `dir` (a catalog root).
    pub fn read(dir: &Path) -> Result<Catalog> {
        // A definition names a few projects; a larger file is no catalog's.
        const MAX_CATALOG_BYTES: u64 = 1 << 20;
        refuse_link(dir)?;
        let kept_as = dir.file_name().map(|n| n.to_os_string());
        let dir = dir.canonicalize().with_context(|| format!("'{}'", dir.display()))?;
        let path = dir.join(CATALOG_FILE);
        let text = crate::project::small_file::read_small_text(&path, MAX_CATALOG_BYTES)
            .and_then(|t| t.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound)))
            .with_context(|| format!("reading {}", path.display()))?;
        let file: CatalogFile = toml::from_str(&text).map_err(|e| {
            let (line, message) = crate::project::config::toml_problem(&text, &e);
            anyhow::anyhow!("{} is malformed: line {line}: {message}", path.display())
        })?;
        if file.version != CATALOG_VERSION {
            bail!("{} has format {}; this vecgrep reads {CATALOG_VERSION}", path.display(), file.version);
        }
        check_catalog_name(&file.name).with_context(|| format!("in {}", path.display()))?;
        if kept_as.is_some_and(|d| d != file.name.as_str()) {
            bail!("{} names catalog '{}', not the directory it is kept in", path.display(), file.name);
        }
        for p in &file.projects {
            check_project_name(&p.name).with_context(|| format!("in {}", path.display()))?;
            // `add` writes canonical paths; one edited by hand to a relative
            // path would name a directory that depends on where vecgrep runs.
            if !p.path.is_absolute() {
                bail!(
                    "{} gives project '{}' the relative path '{}'; a project's path is absolute",
                    path.display(),
                    p.name,
                    p.path.display()
                );
            }
        }
        check_projects_apart(&path, &file.projects)?;
        check_projects_are_work_trees(&path, &dir, &file.projects)?;
        Ok(Catalog { name: file.name, dir, projects: file.projects })
    }

    /// The root an invocation over the catalog uses.
    pub fn root(&self) -> ProjectRoot {
        ProjectRoot { path: self.dir.clone(), marker: RootMarker::Catalog, shared: None }
    }

    /// The project a catalog path (`<project>/<path>`) belongs to, and the
    /// path within it.
    pub fn locate<'a>(&self, catalog_path: &'a str) -> Option<(&CatalogProject, &'a str)> {
        let (name, rest) = catalog_path.split_once('/').unwrap_or((catalog_path, ""));
        self.projects.iter().find(|p| p.name == name).map(|p| (p, rest))
    }

    /// The project that holds real path `path`, and the path within it.
    pub fn project_holding(&self, path: &Path) -> Option<(&CatalogProject, PathBuf)> {
        self.projects.iter().find_map(|p| path.strip_prefix(&p.path).ok().map(|rest| (p, rest.to_path_buf())))
    }
}

/// What `add` did with each path.
#[derive(Debug, PartialEq, Eq)]
pub enum Added {
    New(CatalogProject),
    Already(CatalogProject),
}

/// The project `path` would be in `catalog`, or why it cannot be one.
fn project_for(catalog: &Catalog, path: &Path) -> Result<CatalogProject> {
    let real = path.canonicalize().with_context(|| format!("'{}'", path.display()))?;
    if !real.is_dir() {
        bail!("'{}' is not a directory; a catalog's projects are directories", path.display());
    }
    // The definition is TOML, which holds only UTF-8: found now, before
    // anything is written.
    if real.to_str().is_none() {
        bail!("'{}' is not a UTF-8 path, which a catalog's definition cannot hold", path.display());
    }
    if real.starts_with(&catalog.dir) || catalog.dir.starts_with(&real) {
        bail!("'{}' holds or is inside the catalog's own directory", path.display());
    }
    // Its files are git's own, as a `.git`'s are (audit 253), below it too
    // but for a work tree of its own (review 255: `repo.git/hooks` was added).
    let as_root = super::root::root_named(&real)?;
    if let Some(bare) = super::root::bare_repository_holding(&as_root) {
        bail!(
            "'{}' is in the bare git repository '{}', whose files are git's own; add a clone with a work tree",
            path.display(),
            bare.display()
        );
    }
    // Another catalog's directory is its links and index, no project.
    let catalogs = catalog.dir.parent().unwrap_or(&catalog.dir);
    if real.starts_with(catalogs) {
        bail!(
            "'{}' is inside the catalogs' directory ({}): a catalog is no project",
            path.display(),
            catalogs.display()
        );
    }
    // Named as the user named it: a link called `flask` to a checkout called
    // `repo` makes project `flask`.
    let given = match path.is_absolute() {
        true => crate::project::normalize_lexically(path),
        false => crate::project::normalize_lexically(
            &std::env::current_dir().context("cannot read the current directory")?.join(path),
        ),
    };
    let name = given.file_name().or(real.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    check_project_name(&name)?;
    for p in &catalog.projects {
        if p.path == real {
            return Ok(p.clone());
        }
        if real.starts_with(&p.path) || p.path.starts_with(&real) {
            bail!(
                "'{}' and project '{}' ({}) overlap; a file belongs to one project",
                real.display(),
                p.name,
                p.path.display()
            );
        }
        if p.name.eq_ignore_ascii_case(&name) {
            bail!(
                "'{}' would be named '{name}', as '{}' is already; a catalog's projects need distinct directory names",
                real.display(),
                p.path.display()
            );
        }
    }
    Ok(CatalogProject { name, path: real })
}

/// That each project of the definition at `path` (of catalog `dir`) is a
/// work tree of its own, as `add` refuses otherwise: not git's own
/// directory or in one, as a bare repository's config may hold a remote's
/// credentials (audit 280: a definition edited by hand had them indexed),
/// nor the catalogs' directory, in it or holding it, as a catalog is its
/// links and index (audit 280: one linked the catalogs' directory into
/// itself and indexed their lock file). Each path is resolved once.
fn check_projects_are_work_trees(path: &Path, dir: &Path, projects: &[CatalogProject]) -> Result<()> {
    let catalogs = dir.parent().unwrap_or(dir);
    for p in projects {
        // As `add` looks: a work tree of its own below a bare repository's
        // directory is one (a project moved away is a skip at each use).
        let as_root = super::root::root_named(&p.path).ok();
        if let Some(as_root) = &as_root {
            let in_dot_git = as_root.path.components().any(|c| c.as_os_str() == ".git");
            if let Some(git) = super::root::bare_repository_holding(as_root).or(in_dot_git.then(|| p.path.clone())) {
                bail!(
                    "{} gives project '{}' a path in the git directory '{}', whose files are git's own; name a work tree",
                    path.display(),
                    p.name,
                    git.display()
                );
            }
        }
        let real = as_root.map_or_else(|| normalize_lexically(&p.path), |r| r.path);
        if real.starts_with(catalogs) || catalogs.starts_with(&real) {
            bail!(
                "{} gives project '{}' the path '{}', which holds or is inside the catalogs' directory ({}): a catalog is no project",
                path.display(),
                p.name,
                p.path.display(),
                catalogs.display()
            );
        }
    }
    Ok(())
}

/// A catalog's directory is one of its own in the catalogs' directory: a
/// link there leads elsewhere (into a project, say), where its definition
/// and links would be written and read.
fn refuse_link(dir: &Path) -> Result<()> {
    if dir.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        bail!("{} is a link; a catalog is a directory of its own, remove the link", dir.display());
    }
    Ok(())
}

/// What a directory of the catalogs' directory is.
enum Kept {
    /// A catalog: its definition is there (whatever it is: reading it says
    /// what is wrong with it).
    Defined,
    /// A directory with something in it but no definition, or a file: no catalog
    /// vecgrep can tell is one (the catalogs' directory may be shared,
    /// `VECGREP_CATALOG_DIR`), so never written into or removed.
    Undefined,
    /// Nothing there, or an empty directory.
    Nothing,
    /// What is there cannot be told: the user may not read or enter it
    /// (audit 186: such a catalog was "no catalog named", and `list` left
    /// it out in silence).
    Closed(std::io::Error),
}

fn kept_as(dir: &Path) -> Kept {
    let closed = |e: &std::io::Error| e.kind() == std::io::ErrorKind::PermissionDenied;
    match dir.join(CATALOG_FILE).symlink_metadata() {
        Ok(_) => return Kept::Defined,
        Err(e) if closed(&e) => return Kept::Closed(e),
        Err(_) => {}
    }
    // A link is refused where a catalog is written (`refuse_link`).
    if dir.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Kept::Nothing;
    }
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Kept::Undefined,
        // A file of that name is no catalog either, and is left alone: `add`
        // failed on it with "File exists" after a search advised it (audit 227).
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Kept::Undefined,
        Err(e) if closed(&e) => Kept::Closed(e),
        _ => Kept::Nothing,
    }
}

/// Whether `path` (not followed) belongs to the user running this.
fn owned_by_user(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    path.symlink_metadata().is_ok_and(|m| m.uid() == crate::project::effective_uid())
}

/// The catalog at `dir` cannot be read: `e` says why.
fn closed(dir: &Path, e: &std::io::Error) -> anyhow::Error {
    anyhow!("cannot read the catalog at {}: {e}", dir.display())
}

fn lost_definition(name: &str, dir: &Path) -> anyhow::Error {
    anyhow!(
        "{} holds no catalog definition ({CATALOG_FILE}): it is no catalog, or one that lost its definition, and is left alone; if it was catalog '{name}', delete it yourself",
        dir.display()
    )
}

/// Delete the catalog at `dir`: what vecgrep put there (its definition and
/// its temporary copies, its index, the project links), then the directory,
/// which anything else put there keeps: a link of the user's too, unless
/// the definition cannot be read to tell the projects' links apart.
fn remove_catalog_dir(dir: &Path) -> Result<()> {
    let projects: Option<std::collections::HashSet<String>> =
        Catalog::read(dir).ok().map(|c| c.projects.into_iter().map(|p| p.name).collect());
    let ours = |name: &str| projects.as_ref().is_none_or(|names| names.contains(name));
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let (path, name) = (entry.path(), entry.file_name());
        let name = name.to_string_lossy();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        // Its `.vecgrep` whole, the catalog's settings with its index: kept,
        // they left a directory without a definition, whose name no `add`
        // would take again (review 187).
        let removed = if name == crate::project::PROJECT_DIR && !is_link {
            std::fs::remove_dir_all(&path)
        } else if (is_link && ours(&name))
            || name == CATALOG_FILE
            || (name.starts_with(CATALOG_FILE) && name.ends_with(".tmp"))
        {
            std::fs::remove_file(&path)
        } else {
            continue;
        };
        removed.with_context(|| format!("removing {}", path.display()))?;
    }
    std::fs::remove_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::DirectoryNotEmpty => anyhow!(
            "removed the catalog from {}, which holds files vecgrep did not put there and is left with them",
            dir.display()
        ),
        _ => anyhow!("removing {}: {e}", dir.display()),
    })
}

/// Write the definition (through a temporary file, so a kill leaves the
/// old one or the new one) and a link per project; nothing when something
/// is in the way of a link.
fn write(catalog: &Catalog) -> Result<()> {
    refuse_link(&catalog.dir)?;
    for p in &catalog.projects {
        link_place_free(&catalog.dir.join(&p.name))?;
    }
    std::fs::create_dir_all(&catalog.dir).with_context(|| format!("creating {}", catalog.dir.display()))?;
    let file = CatalogFile { version: CATALOG_VERSION, name: catalog.name.clone(), projects: catalog.projects.clone() };
    let text = format!(
        "# A vecgrep catalog: projects searched as one (vg-catalog; spec/catalogs.md).\n{}",
        toml::to_string(&file).context("writing the catalog")?
    );
    let path = catalog.dir.join(CATALOG_FILE);
    let tmp = catalog.dir.join(format!("{CATALOG_FILE}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()));
    let renamed =
        written.and_then(|()| std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display())));
    if renamed.is_err() {
        // A full disk's half-written file is not left behind.
        let _ = std::fs::remove_file(&tmp);
    }
    renamed?;
    for p in &catalog.projects {
        link(&catalog.dir.join(&p.name), &p.path)?;
    }
    Ok(())
}

/// `at` made a link to `target`, replacing a link that points elsewhere.
fn link(at: &Path, target: &Path) -> Result<()> {
    link_place_free(at)?;
    match std::fs::read_link(at) {
        Ok(old) if old == target => return Ok(()),
        Ok(_) => std::fs::remove_file(at).with_context(|| format!("replacing {}", at.display()))?,
        Err(_) => {}
    }
    std::os::unix::fs::symlink(target, at).with_context(|| format!("linking {}", at.display()))
}

/// Refused when something other than a link (a file, a directory) is
/// where a project's link goes: it is not vecgrep's to replace.
fn link_place_free(at: &Path) -> Result<()> {
    if at.symlink_metadata().is_ok_and(|m| !m.file_type().is_symlink()) {
        bail!("{} is in the way of the project's link", at.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
