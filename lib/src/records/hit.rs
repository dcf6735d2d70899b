//! The hit record: one search result, as vg-query, `vecgrep --json`,
//! vg-serve and vg-mcp give it, and where its file lies on disk.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{default_version, file_below, null_as_default, round4, CONTRACT_VERSION};
use crate::project::catalog::Catalog;
use crate::project::{ProjectRoot, RootMarker};
use crate::search::Hit;

/// A search result: what `vg-query`, `vecgrep --json` and `vg-serve` emit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "hit")]
pub struct HitRecord {
    #[serde(default = "default_version")]
    pub v: u32,
    /// Absolute path of the project root; `file` is relative to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub file: String,
    pub start_line: usize,
    pub end_line: usize,
    #[serde(default, deserialize_with = "null_as_default")]
    pub score: f64,
    /// What the hits are ordered by (`search::Hit::relevance`); streams from
    /// before it was added have none, and are ordered by `score`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f64>,
    /// The relevance on a bounded scale, the same order
    /// (`search::Hit::fit`): the number people are shown. Streams from
    /// before it was added have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<f64>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub text: String,
    /// The query that produced the hit, so formatters can mark matching lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The project's concepts the query named that this hit mentions.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub concepts: Vec<String>,
    /// The git revision (full sha) the hit is from, when a revision was
    /// searched (`vg-query --rev`) rather than the working tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// The catalog's project the hit is from, when a catalog was searched
    /// (`--catalog`); `root` is then that project's directory. Added
    /// within version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The lines of the chunk that ranked the hit (`search::Hit`), where a
    /// reader picks the lines it shows; streams from before they were
    /// added have none, and the whole hit stands in. Added within version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_start_line: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_end_line: Option<usize>,
    /// Why it ranked where it did (`search::Why::reasoning`), when asked
    /// for (`vg-query --explain`). Added within version 1. Last on the
    /// wire, as ndjson.md orders the fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

impl HitRecord {
    pub fn new(root: &ProjectRoot, hit: Hit, query: &str) -> Self {
        let (root, file, project) = place_in(root, hit.file);
        HitRecord {
            v: CONTRACT_VERSION,
            root: Some(root.to_string_lossy().into_owned()),
            file,
            start_line: hit.start_line,
            end_line: hit.end_line,
            best_start_line: Some(hit.best_start_line),
            best_end_line: Some(hit.best_end_line),
            score: round4(hit.score as f64),
            relevance: Some(round4(hit.relevance as f64)),
            fit: Some(round4(hit.fit as f64)),
            text: hit.text,
            query: Some(query.to_string()),
            concepts: hit.concepts,
            rev: None,
            reasoning: None,
            project,
        }
    }

    /// The lines of its best chunk, within the hit: all of it for a
    /// stream without them, or one whose lines are not the hit's.
    pub fn best_lines(&self) -> std::ops::RangeInclusive<usize> {
        match (self.best_start_line, self.best_end_line) {
            (Some(first), Some(last)) if self.start_line <= first && first <= last && last <= self.end_line => {
                first..=last
            }
            _ => self.start_line..=self.end_line,
        }
    }

    /// Where a reader finds the hit's lines (see [`file_below`]); a hit
    /// without a root names its file as a command line does, from `cwd`.
    pub fn source_path(&self, cwd: &Path) -> Option<PathBuf> {
        match self.root.as_deref() {
            Some(root) => file_below(Path::new(root), &self.file),
            None => Some(cwd.join(&self.file)),
        }
    }

    /// How a citation names the hit's file: `<project>/<file>` for a
    /// catalog's hit, so that two projects' files of one path stay apart.
    pub fn cited_name(&self) -> String {
        match &self.project {
            Some(project) => format!("{project}/{}", self.file),
            None => self.file.clone(),
        }
    }

    /// A hit of a catalog label's index (`--label`) as the record names it:
    /// its project, that project's directory as the root, its path there,
    /// and the project's commit for the label.
    pub fn placed_in_label(mut self, catalog: &Catalog, label: &crate::history::Label) -> Self {
        let Some((project, rest)) = catalog.locate(&self.file) else { return self };
        self.file = rest.to_string();
        self.rev = label.state.projects.iter().find(|c| c.name == project.name).map(|c| c.sha.clone());
        self.root = Some(project.path.to_string_lossy().into_owned());
        self.project = Some(project.name.clone());
        self
    }

    /// What the hit is ordered by: its relevance, or its score in a stream
    /// from before relevance was added.
    pub fn order(&self) -> f64 {
        self.relevance.unwrap_or(self.score)
    }

    /// The number a person is shown for the hit, and colored by: its fit,
    /// or in a stream from before fit was added what it is ordered by.
    pub fn shown(&self) -> f64 {
        self.fit.unwrap_or_else(|| self.order())
    }
}

/// Where a root-relative `file` is on disk: under the root, or for a
/// catalog's file (`<project>/<path>`), under its project's directory.
pub fn on_disk(root: &ProjectRoot, file: &str) -> PathBuf {
    let (dir, rest, _) = place_in(root, file.to_string());
    dir.join(rest)
}

/// Where a hit's file is: under `root`, or for a catalog's file
/// (`<project>/<path>`), under its project's directory, as the catalog's
/// definition names it (its link, only where the definition cannot be
/// read: a link changed by hand would send readers to another file than
/// the one indexed), with the project's name.
fn place_in(root: &ProjectRoot, file: String) -> (PathBuf, String, Option<String>) {
    if root.marker != RootMarker::Catalog {
        return (root.path.clone(), file, None);
    }
    let Some((project, rest)) = file.split_once('/') else { return (root.path.clone(), file, None) };
    let dir = match catalog_at(&root.path) {
        Some(catalog) => catalog.projects.into_iter().find(|p| p.name == project).map(|p| p.path),
        None => std::fs::read_link(root.path.join(project)).ok(),
    };
    match dir {
        Some(dir) => (dir, rest.to_string(), Some(project.to_string())),
        None => (root.path.clone(), file, None),
    }
}

/// The catalog kept at `dir`, read again only when its definition is
/// another file or has changed since (its device, inode, size and time):
/// every hit of a search is placed by it, and a server places hits for
/// hours. None where it cannot be read.
fn catalog_at(dir: &Path) -> Option<Catalog> {
    use std::os::unix::fs::MetadataExt;
    type Stamp = (u64, u64, u64, i64, i64);
    static LAST: std::sync::Mutex<Option<(PathBuf, Stamp, Catalog)>> = std::sync::Mutex::new(None);
    let meta = std::fs::metadata(dir.join(crate::project::CATALOG_FILE)).ok()?;
    let stamp = (meta.dev(), meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec());
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((at, seen, catalog)) = last.as_ref() {
        if at == dir && *seen == stamp {
            return Some(catalog.clone());
        }
    }
    let catalog = Catalog::read(dir).ok()?;
    *last = Some((dir.to_path_buf(), stamp, catalog.clone()));
    Some(catalog)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalogs_hits_are_placed_by_its_definition_as_it_is_now() {
        let tmp = tempfile::tempdir().unwrap();
        let (first, second) = (tmp.path().join("a/api"), tmp.path().join("b/api"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        let cats = crate::project::catalog::Catalogs { dir: tmp.path().join("catalogs") };
        let (catalog, _) = cats.add("team", std::slice::from_ref(&first)).unwrap();
        let root = catalog.root();
        let placed = |file: &str| place_in(&root, file.to_string());
        let first = first.canonicalize().unwrap();
        assert_eq!(placed("api/x.rs"), (first.clone(), "x.rs".to_string(), Some("api".to_string())));
        assert_eq!(placed("api/y.rs").0, first, "read once, asked again");
        // The project moved: the next hit is placed where the definition says now.
        cats.remove_projects("team", &["api".to_string()]).unwrap();
        cats.add("team", std::slice::from_ref(&second)).unwrap();
        assert_eq!(placed("api/x.rs").0, second.canonicalize().unwrap());
    }
}
