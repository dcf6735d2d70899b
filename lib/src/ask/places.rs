//! A plan's paths written from `/` read against the project root: a person
//! writes `files in /home/me/proj/src` meaning the project's `src/`, and a
//! planner (the rules, or a chat model) copies what was written. Audit 232
//! found them read as paths below the root, which matched nothing.

use std::path::{Component, Path, PathBuf};

use super::plan::L0Filters;
use crate::project::catalog::Catalog;
use crate::project::{ProjectRoot, RootMarker};

/// Read each glob of `filters` written from `/` against `root`: one below
/// it becomes the glob from the root (below a catalog's project, from the
/// catalog, `<project>/...`); the root itself is every file, no glob; one
/// whose first part the root has (`/src/net`) is the root's, as gitignore
/// reads it. Any other is not in the project: it is left out, and the
/// warning for each is returned.
pub(super) fn read_against_root(filters: &mut L0Filters, root: &ProjectRoot) -> Vec<String> {
    let bases = bases_of(root);
    let mut outside = Vec::new();
    for globs in [&mut filters.path_globs, &mut filters.exclude_globs] {
        let written = std::mem::take(globs);
        for glob in written {
            match glob_from_root(&glob, &root.path, &bases) {
                Ok(read) => globs.extend(read),
                Err(why) => outside.push(why),
            }
        }
    }
    outside
}

/// Where the globs of a search of `root` begin: the root, or each project
/// of a catalog under its name.
fn bases_of(root: &ProjectRoot) -> Vec<(String, PathBuf)> {
    let catalog = (root.marker == RootMarker::Catalog).then(|| Catalog::read(&root.path).ok()).flatten();
    match catalog {
        Some(catalog) => catalog.projects.into_iter().map(|p| (format!("{}/", p.name), p.path)).collect(),
        None => vec![(String::new(), root.path.clone())],
    }
}

/// `glob` read from `root` (see `read_against_root`); Ok(None) for the
/// whole of the project.
fn glob_from_root(glob: &str, root: &Path, bases: &[(String, PathBuf)]) -> Result<Option<String>, String> {
    if !glob.starts_with('/') {
        return Ok(Some(glob.to_string()));
    }
    let dir = glob.ends_with('/');
    let path = Path::new(glob.trim_end_matches('/'));
    let real = real_path(path);
    let below = bases.iter().find_map(|(name, base)| {
        let rest = real.strip_prefix(base).or_else(|_| path.strip_prefix(base)).ok()?;
        Some((name, rest.to_string_lossy().into_owned()))
    });
    match below {
        Some((name, rest)) if rest.is_empty() => Ok((!name.is_empty()).then(|| name.clone())),
        Some((name, rest)) => Ok(Some(format!("{name}{rest}{}", if dir { "/" } else { "" }))),
        None if first_part_is_the_roots(path, root) => Ok(Some(glob.to_string())),
        None => Err(format!("a path filter was left out: {glob} is not in the project ({})", root.display())),
    }
}

/// `path` with the links and `..` of the part of it that exists resolved,
/// the rest (a name not made yet, a wildcard) as written: the root's own
/// path may be spelled through a link.
fn real_path(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |p: PathBuf, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether the first part of `path` (`src` of `/src/net`) is an entry of
/// the root's.
fn first_part_is_the_roots(path: &Path, root: &Path) -> bool {
    let first = path.components().find_map(|c| match c {
        Component::Normal(name) => Some(name),
        _ => None,
    });
    first.is_some_and(|name| root.join(name).symlink_metadata().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(root: &Path) -> ProjectRoot {
        ProjectRoot { path: root.to_path_buf(), marker: RootMarker::Git, shared: None }
    }

    fn read(globs: &[&str], excluded: &[&str], root: &ProjectRoot) -> (L0Filters, Vec<String>) {
        let mut filters = L0Filters {
            path_globs: globs.iter().map(|g| g.to_string()).collect(),
            exclude_globs: excluded.iter().map(|g| g.to_string()).collect(),
            ..L0Filters::default()
        };
        let outside = read_against_root(&mut filters, root);
        (filters, outside)
    }

    #[test]
    fn a_path_from_slash_is_read_against_the_root_and_one_outside_it_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/net")).unwrap();
        let r = root.display();
        let at = project(&root);
        let (f, outside) = read(&[&format!("{r}/src/net/"), &format!("{r}/src/*.py"), "src/"], &[], &at);
        assert_eq!((f.path_globs, outside), (vec!["src/net/".into(), "src/*.py".into(), "src/".into()], vec![]));
        // The root itself is every file; `/src/net` is the root's `src`.
        let (f, outside) = read(&[&format!("{r}/"), "/src/net/"], &[], &at);
        assert_eq!((f.path_globs, outside), (vec!["/src/net/".into()], vec![]));
        // `..` and a link in the part that exists.
        let linked = format!("{}-link", root.display());
        std::os::unix::fs::symlink(&root, &linked).unwrap();
        let (f, _) = read(&[&format!("{r}/src/net/../lib/"), &format!("{linked}/src/*.rs")], &[], &at);
        assert_eq!(f.path_globs, ["src/lib/", "src/*.rs"]);
        std::fs::remove_file(&linked).unwrap();
        let (f, outside) = read(&["/etc/ssl/"], &[&format!("{r}/src/net/"), "/var/log/"], &at);
        assert!(f.path_globs.is_empty());
        assert_eq!(f.exclude_globs, ["src/net/"]);
        assert_eq!(
            outside,
            [
                format!("a path filter was left out: /etc/ssl/ is not in the project ({r})"),
                format!("a path filter was left out: /var/log/ is not in the project ({r})"),
            ]
        );
    }

    #[test]
    fn a_catalogs_projects_are_read_under_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        // A catalog in a catalogs' directory of its own, which holds no project.
        let (catalog, p1) = (base.join("catalogs/catalog"), base.join("p1"));
        std::fs::create_dir_all(p1.join("src/net")).unwrap();
        std::fs::create_dir_all(&catalog).unwrap();
        let definition =
            format!("version = 1\nname = \"catalog\"\n\n[[project]]\nname = \"p1\"\npath = \"{}\"\n", p1.display());
        std::fs::write(catalog.join(crate::project::CATALOG_FILE), definition).unwrap();
        let root = ProjectRoot { path: catalog, marker: RootMarker::Catalog, shared: None };
        let (f, outside) = read(&[&format!("{}/src/net/", p1.display()), &format!("{}/", p1.display())], &[], &root);
        assert_eq!((f.path_globs, outside), (vec!["p1/src/net/".into(), "p1/".into()], vec![]));
    }
}
