//! The records that say where a search looks: a project root, and a
//! catalog with its projects.

use serde::{Deserialize, Serialize};

use super::{LabelRecord, CONTRACT_VERSION};
use crate::project::catalog::Catalog;
use crate::project::ProjectRoot;

/// `vg-root --json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "root")]
pub struct RootRecord {
    pub v: u32,
    pub root: String,
    pub marker: String,
}

impl RootRecord {
    pub fn new(root: &ProjectRoot) -> Self {
        RootRecord {
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            marker: root.marker.as_str().into(),
        }
    }
}

/// `vg-catalog list --json` and `show --json`: one catalog.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "catalog")]
pub struct CatalogRecord {
    pub v: u32,
    pub name: String,
    /// Where its definition, links and index are kept.
    pub dir: String,
    pub projects: Vec<CatalogProjectRecord>,
    /// Whether it is the default context (`vg-catalog use`).
    pub default: bool,
    /// Its labels indexed (`vg-index --label`), by name, as a summary
    /// record names its label. Added within version 1.
    #[serde(default)]
    pub labels: Vec<LabelRecord>,
    /// Its label indexes whose state cannot be read (`labels` cannot say
    /// their commits). Added within version 1.
    #[serde(default)]
    pub unreadable_labels: Vec<UnreadableLabelRecord>,
}

/// A label index of a `catalog` record whose state cannot be read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UnreadableLabelRecord {
    /// The names its index's mark gives (empty when it has none).
    pub names: Vec<String>,
    /// Its key among the catalog's kept indexes.
    pub key: String,
}

/// One project of a `catalog` record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CatalogProjectRecord {
    pub name: String,
    pub path: String,
    /// Whether its directory is still there (a missing one is skipped).
    pub present: bool,
}

impl CatalogRecord {
    pub fn new(catalog: &Catalog, default: bool) -> Self {
        let projects = catalog
            .projects
            .iter()
            .map(|p| CatalogProjectRecord {
                name: p.name.clone(),
                path: p.path.to_string_lossy().into_owned(),
                present: p.is_present(),
            })
            .collect();
        let dir = catalog.dir.to_string_lossy().into_owned();
        let labels = crate::history::labels(catalog)
            .iter()
            // Complete as `show` says it: its run completed (the label's own
            // record of it), and its revisions' index is whole.
            .map(|(state, complete)| LabelRecord {
                complete: *complete && state.updated.is_some(),
                ..LabelRecord::new(state)
            })
            .collect();
        let unreadable_labels = crate::history::unreadable_labels(catalog)
            .into_iter()
            .map(|l| UnreadableLabelRecord { names: l.names, key: l.key })
            .collect();
        CatalogRecord {
            v: CONTRACT_VERSION,
            name: catalog.name.clone(),
            dir,
            projects,
            default,
            labels,
            unreadable_labels,
        }
    }
}
