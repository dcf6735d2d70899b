//! Which files a client's `paths` may reach: only what is inside the
//! project root and among the paths the server was started on, whatever
//! the client sends (`..`, absolute paths, symlinks out of the tree).
//! vg-mcp's tools and vg-serve's `/v1/ask` confine what they are sent here.

use std::path::{Path, PathBuf};

use super::LiveIndex;
use crate::project::catalog::{admit_catalog_paths, Catalog};
use crate::project::shown::{clipped, words_clipped};
use crate::project::{admit_paths, is_under, normalize_lexically, AdmittedPath, ProjectRoot, RootMarker};
use crate::store::Scope;

/// Most paths one request may name.
const MAX_PATHS: usize = 64;
/// Most characters of a client's path an error repeats.
const SHOWN_CHARS: usize = 200;

/// Why a client's path was refused: the message names the path and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub message: String,
}

/// What kind of refusal it is, for a protocol that tells them apart (HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// A place the client may not search: outside the root or the served paths.
    Forbidden,
    /// A path inside that names nothing.
    NotFound,
    /// Not a path, or too many of them.
    Malformed,
}

impl Refusal {
    fn new(kind: RefusalKind, message: String) -> Refusal {
        Refusal { kind, message }
    }
}

impl From<Refusal> for String {
    fn from(refusal: Refusal) -> String {
        refusal.message
    }
}

/// The scope of a search under `paths` (root-relative or absolute inside
/// the root); no paths is every served path, and an empty one is left out
/// (models fill an optional field with ""). Err names the first path
/// refused and why.
pub fn confine(live: &LiveIndex, paths: &[String]) -> Result<Scope, Refusal> {
    let served = live.scope();
    let paths: Vec<&String> = paths.iter().filter(|p| !p.is_empty()).collect();
    if paths.is_empty() {
        return Ok(served);
    }
    if paths.len() > MAX_PATHS {
        return Err(Refusal::new(RefusalKind::Malformed, format!("at most {MAX_PATHS} paths, got {}", paths.len())));
    }
    let root = &live.target.root;
    let mut prefixes = Vec::with_capacity(paths.len());
    for path in paths {
        let through = through_catalog(root, path);
        let path = through.as_ref().unwrap_or(path);
        let rel = inside_root(&root.path, path)?;
        let shown = clipped(path, SHOWN_CHARS);
        if leads_outside(root, &rel) {
            let why = OutsideRoot(root.path.clone());
            return Err(Refusal::new(RefusalKind::Forbidden, clipped(&format!("{shown}: {why}"), 2 * SHOWN_CHARS)));
        }
        // The cause may quote the path again, joined to the root: the
        // path is shown once (a path of words quoted twice was 600
        // characters), with at most 200 of the reason.
        let admitted = admitted(root, rel).map_err(|e| {
            let cause = match e.downcast_ref::<crate::project::RootError>() {
                Some(crate::project::RootError::Path { cause, .. }) => cause.to_string(),
                _ => crate::project::shown::error_line(&e),
            };
            Refusal::new(refusal_kind(&e), format!("{shown}: {}", words_clipped(&cause, 60, SHOWN_CHARS)))
        })?;
        for p in admitted {
            if !served.prefixes.iter().any(|s| is_under(&p.rel, s)) {
                return Err(Refusal::new(
                    RefusalKind::Forbidden,
                    format!(
                        "{shown} is not among the paths this server searches ({}); start the server on it to search it",
                        served_list(&served.prefixes)
                    ),
                ));
            }
            prefixes.push(p.rel);
        }
    }
    Ok(Scope { prefixes, files: served.files })
}

/// An absolute path into a project of a served catalog, as the path
/// through the catalog's link to it (`<catalog>/<project>/<rest>`): the
/// command line takes a project's own directory
/// (`vecgrep --catalog team "q" ~/src/api/src`), and the hits name it as
/// their root, but a client naming it was refused as outside the root.
fn through_catalog(root: &ProjectRoot, path: &str) -> Option<String> {
    if root.marker != RootMarker::Catalog || !Path::new(path).is_absolute() {
        return None;
    }
    let catalog = Catalog::read(&root.path).ok()?;
    let real = real_path(&normalize_lexically(Path::new(path)), 0)?;
    let (project, rest) = catalog.project_holding(&real)?;
    root.path.join(&project.name).join(rest).to_str().map(String::from)
}

/// A path that names nothing is not found; one that leads out is forbidden.
fn refusal_kind(e: &anyhow::Error) -> RefusalKind {
    let missing = e.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(names_nothing)
            || matches!(
                cause.downcast_ref::<crate::project::RootError>(),
                Some(crate::project::RootError::Path { cause, .. }) if names_nothing(cause)
            )
    });
    match e.downcast_ref::<OutsideRoot>() {
        Some(_) => RefusalKind::Forbidden,
        None if missing => RefusalKind::NotFound,
        None => RefusalKind::Malformed,
    }
}

/// A path below a file (`src/a.rs/x`) names nothing, as a missing one does.
fn names_nothing(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory)
}

/// The paths `path` (under `root` by its text) admits: for a catalog, a
/// path inside one of its projects, named as the catalog names it.
fn admitted(root: &ProjectRoot, path: PathBuf) -> anyhow::Result<Vec<AdmittedPath>> {
    if root.marker == RootMarker::Catalog {
        let catalog = Catalog::read(&root.path)?;
        return Ok(admit_catalog_paths(&catalog, &root.path, &[path], false, false)?.admitted);
    }
    match admit_paths(root, &root.path, &[path], false) {
        Ok(admission) => Ok(admission.admitted),
        // The command line's way out (--skip-outside-root) is no answer to a client.
        Err(crate::project::RootError::OutsideRoot { root, .. }) => Err(OutsideRoot(root).into()),
        Err(e) => Err(e.into()),
    }
}

/// Whether `path` (under `root` by its text) really lies outside it, as
/// far as it exists: then what lies beyond is not the client's to learn,
/// not even whether it exists (a 404 there would say so, a 403 does not).
/// A catalog's paths lead into its projects, wherever they are: a path is
/// outside when it is in none of them.
fn leads_outside(root: &ProjectRoot, path: &Path) -> bool {
    let Some(real) = real_path(path, 0) else { return false };
    if root.marker == RootMarker::Catalog {
        let Ok(catalog) = Catalog::read(&root.path) else { return false };
        return !real.starts_with(&catalog.dir) && catalog.project_holding(&real).is_none();
    }
    root.path.canonicalize().is_ok_and(|real_root| !real.starts_with(real_root))
}

/// Where `path` really is: its deepest part that exists with its links
/// followed (a dangling link: where it points), and the rest after it.
/// None for a loop of links.
fn real_path(path: &Path, depth: usize) -> Option<PathBuf> {
    const MAX_LINKS: usize = 40;
    let existing = path.ancestors().find(|a| a.symlink_metadata().is_ok())?;
    let rest = path.strip_prefix(existing).ok()?;
    let real = match existing.canonicalize() {
        Ok(real) => real,
        Err(_) if depth < MAX_LINKS => {
            let target = std::fs::read_link(existing).ok()?;
            let parent = existing.parent()?.canonicalize().ok()?;
            real_path(&normalize_lexically(&parent.join(target)), depth + 1)?
        }
        Err(_) => return None,
    };
    Some(real.join(rest))
}

/// A path that leads out of the project root, through a link.
#[derive(Debug, thiserror::Error)]
#[error("it leads outside the project root '{}'", .0.display())]
struct OutsideRoot(PathBuf);

/// `path` as a path under `root`, decided by its text before the file
/// system is asked anything about it; only an absolute path outside the
/// root by its text is followed through its links, to the root's own.
fn inside_root(root: &Path, path: &str) -> Result<PathBuf, Refusal> {
    if path.contains('\0') {
        return Err(Refusal::new(RefusalKind::Malformed, format!("{:?} is not a path", clipped(path, SHOWN_CHARS))));
    }
    let joined = root.join(path);
    let lexical = normalize_lexically(&joined);
    if !lexical.starts_with(root) {
        // The root is held as its real path; a client may name it as the
        // server was started, through a link (a workspace path, macOS's /tmp).
        let real = Path::new(path).is_absolute().then(|| real_path(&lexical, 0)).flatten();
        let real = real.map(|real| real.components().collect::<PathBuf>());
        if let Some(real) = real.filter(|real| real.starts_with(root)) {
            return Ok(real);
        }
        let why = format!("refused: {} is outside the project root {}", clipped(path, SHOWN_CHARS), root.display());
        return Err(Refusal::new(RefusalKind::Forbidden, why));
    }
    Ok(lexical)
}

fn served_list(prefixes: &[String]) -> String {
    let names: Vec<&str> = prefixes.iter().map(|p| if p.is_empty() { "." } else { p.as_str() }).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_of_a_path_must_stay_under_the_root() {
        let root = Path::new("/work/project");
        assert_eq!(inside_root(root, "src/a.rs").unwrap(), Path::new("/work/project/src/a.rs"));
        assert_eq!(inside_root(root, "src/../lib").unwrap(), Path::new("/work/project/lib"));
        assert_eq!(inside_root(root, ".").unwrap(), Path::new("/work/project"));
        assert_eq!(inside_root(root, "/work/project/src").unwrap(), Path::new("/work/project/src"));
        for outside in ["..", "../other", "src/../../other", "/etc/passwd", "/work/projectile", "/"] {
            let e = inside_root(root, outside).unwrap_err();
            assert_eq!(e.kind, RefusalKind::Forbidden, "{outside}");
            assert!(e.message.contains("outside the project root"), "{outside}: {}", e.message);
        }
        assert_eq!(inside_root(root, "a\0b").unwrap_err().kind, RefusalKind::Malformed);
    }
}
