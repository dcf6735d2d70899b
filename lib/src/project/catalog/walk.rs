//! A catalog's files: each project walked as a project is, its files and
//! skips named by catalog paths (`<project>/<path>`), and the user's paths
//! admitted as the catalog paths they are.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::Catalog;
use crate::project::root::{
    normalize_lexically, rel_to_string, resolved_as_far_as_it_exists, root_named, Admission, AdmittedPath, ProjectRoot,
};
use crate::project::walk::{walk_tree, IgnoreFileWarning, Skip, SkipReason, WalkOptions, WalkResult};

/// Walk the parts of catalog root `root` that `paths` (catalog paths) name:
/// every project, for the catalog itself. A project that has moved or
/// vanished is one skip, one that cannot be walked one error; the others
/// are walked.
pub fn walk_catalog(root: &ProjectRoot, paths: &[AdmittedPath], opts: &WalkOptions) -> Result<WalkResult> {
    let catalog = Catalog::read(&root.path)?;
    let mut out = WalkResult::default();
    for project in &catalog.projects {
        if paths_within(&project.name, &project.path, paths).is_none() {
            continue;
        }
        let project_root = match project_root(&catalog, project) {
            Ok(root) => root,
            Err(at) => {
                out.skips.push(Skip { path: project.name.clone(), reason: SkipReason::MissingProject(at) });
                continue;
            }
        };
        if let Err(why) = restore_link(&root.path.join(&project.name), &project.path) {
            out.skips.push(Skip { path: project.name.clone(), reason: SkipReason::Error(why) });
            continue;
        }
        // The paths as the walk meets them: under the project's canonical
        // directory (a definition edited by hand may name it through a link).
        let within = paths_within(&project.name, &project_root.path, paths).unwrap_or_default();
        // A project that cannot be walked (an ignore file it may not read)
        // is one error of the catalog's, not the end of the others' search.
        let walked = match walk_tree(&project_root, &within, opts) {
            Ok(walked) => walked,
            Err(e) => {
                out.skips.push(Skip {
                    path: project.name.clone(),
                    reason: SkipReason::Error(crate::project::shown::error_line(&e)),
                });
                continue;
            }
        };
        let named = |rel: &str| if rel.is_empty() { project.name.clone() } else { format!("{}/{rel}", project.name) };
        out.files.extend(walked.files.into_iter().map(|mut f| {
            f.rel = named(&f.rel);
            f
        }));
        out.skips.extend(walked.skips.into_iter().map(|s| Skip { path: named(&s.path), reason: s.reason }));
        // An `--ignore-file`'s are every project's: named as given, once
        // (review 197: `ca//tmp/bad.ignore`, then the same for each project).
        for w in walked.ignore_file_warnings {
            let w = if w.given { w } else { IgnoreFileWarning { file: named(&w.file), ..w } };
            if !out.ignore_file_warnings.iter().any(|o| o.file == w.file && o.error == w.error) {
                out.ignore_file_warnings.push(w);
            }
        }
    }
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// The project's root, walked as its own with the marker it carries; or,
/// when its directory has moved or vanished, where it was (and where a
/// link now in its place leads: a directory replaced by a link to another
/// has moved, as one gone has).
fn project_root(catalog: &Catalog, project: &super::CatalogProject) -> Result<ProjectRoot, String> {
    let replaced = project.path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
    match root_named(&project.path) {
        Ok(root) if !replaced && root.path.is_dir() => Ok(root),
        _ => {
            let mut at = format!("{} any more", project.path.display());
            if let Some(target) = std::fs::read_link(&project.path).ok().filter(|_| replaced) {
                // A relative target is relative to the link's directory.
                let leads_to = normalize_lexically(&project.path.parent().unwrap_or(Path::new("/")).join(target));
                // Where it leads may be one of the catalog's projects already.
                // As `add` resolves a path: through links, however spelled.
                let resolved = leads_to.canonicalize().unwrap_or_else(|_| leads_to.clone());
                let advice = match catalog.projects.iter().find(|p| p.path == leads_to || p.path == resolved) {
                    Some(there) => format!("it is the catalog's project {}", there.name),
                    None => "add that directory instead".to_string(),
                };
                at = format!("{at}; a link to {} is there now: {advice}", leads_to.display());
            }
            Err(at)
        }
    }
}

/// The catalog's projects at `root` whose directories have moved or
/// vanished, each by name with where it was: a search of the index as it
/// is (`--no-index`) walks nothing, and says them as a run does.
pub fn missing_projects(root: &ProjectRoot) -> Result<Vec<(String, String)>> {
    let catalog = Catalog::read(&root.path)?;
    Ok(catalog.projects.iter().filter_map(|p| Some((p.name.clone(), project_root(&catalog, p).err()?))).collect())
}

/// The catalog's link to a project at `link`, made again where it was
/// removed or changed by hand (the definition says where it points), or
/// why not: a file or directory in its way.
fn restore_link(link: &Path, project: &Path) -> Result<(), String> {
    super::link_place_free(link).map_err(|e| e.to_string())?;
    // Results name files through the definition, so a link that cannot be
    // made costs only a person following it by hand.
    let _ = super::link(link, project);
    Ok(())
}

/// The paths of `paths` inside project `name` (at `dir`), as paths of the
/// project; None when none is.
fn paths_within(name: &str, dir: &Path, paths: &[AdmittedPath]) -> Option<Vec<AdmittedPath>> {
    let whole = || AdmittedPath { abs: dir.to_path_buf(), rel: String::new(), is_dir: true };
    let mut within = Vec::new();
    for p in paths {
        if p.rel.is_empty() || p.rel == name {
            return Some(vec![whole()]);
        }
        if let Some(sub) = p.rel.strip_prefix(name).and_then(|r| r.strip_prefix('/')) {
            within.push(AdmittedPath { abs: dir.join(sub), rel: sub.to_string(), is_dir: p.is_dir });
        }
    }
    (!within.is_empty()).then_some(within)
}

/// Admit `paths` (relative to `cwd`) for a search of `catalog`: each must
/// lie in one of its projects and becomes the catalog path it is there;
/// with `skip_outside_root` one that lies in none is skipped (the catalog
/// is the root). No paths means the whole catalog.
pub fn admit_catalog_paths(
    catalog: &Catalog,
    cwd: &Path,
    paths: &[PathBuf],
    skip_outside_root: bool,
    in_label: bool,
) -> Result<Admission> {
    let whole = || AdmittedPath { abs: catalog.dir.clone(), rel: String::new(), is_dir: true };
    if paths.is_empty() {
        return Ok(Admission { admitted: vec![whole()], skipped: Vec::new() });
    }
    let mut out = Admission::default();
    for path in paths {
        // As written, as the system reads it: a `..` after a link climbs
        // from where the link leads. By its text, `link/..` was the
        // directory the link is in, `billing/../payments` a project where
        // the system finds nothing, and `billing/typo.py` in none of the
        // projects (audit 203, review 205).
        let written = cwd.join(path);
        let outside = |p: &Path| p != catalog.dir && catalog.project_holding(p).is_none();
        let real = match written.canonicalize() {
            Ok(real) => real,
            // A label's tree may hold what the working tree lost since.
            Err(_) if in_label => resolved_as_far_as_it_exists(&written),
            // As for a project: a missing path is skipped when it lies
            // outside by what of it exists, else its absence is the error.
            Err(_) if skip_outside_root && outside(&resolved_as_far_as_it_exists(&written)) => {
                out.skipped.push(path.clone());
                continue;
            }
            Err(e) => bail!("'{}': {e}", path.display()),
        };
        if real == catalog.dir {
            out.admitted.push(whole());
            continue;
        }
        let Some((project, sub)) = catalog.project_holding(&real) else {
            if skip_outside_root {
                out.skipped.push(path.clone());
                continue;
            }
            bail!(
                "'{}' is in none of the projects of catalog '{}' (vg-catalog show {} lists them)",
                path.display(),
                catalog.name,
                catalog.name
            );
        };
        let Some(sub) = rel_to_string(&sub) else { bail!("path '{}' is not valid UTF-8", path.display()) };
        let rel = if sub.is_empty() { project.name.clone() } else { format!("{}/{sub}", project.name) };
        out.admitted.push(AdmittedPath { abs: catalog.dir.join(&rel), rel, is_dir: real.is_dir() });
    }
    if out.admitted.is_empty() {
        bail!(
            "every path given is in none of the projects of catalog '{}' (vg-catalog show {} lists them)",
            catalog.name,
            catalog.name
        );
    }
    Ok(out)
}
