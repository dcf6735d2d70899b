//! The records of an index run and of its index: each file, each skip,
//! the run's summary, the index's stats and a check of it.

use serde::{Deserialize, Serialize};

use super::CONTRACT_VERSION;
use crate::index::{FileOutcome, IndexSummary};
use crate::project::ProjectRoot;
use crate::project::Skip;
use crate::store::IndexStats;

/// `vg-index`: one per file looked at.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "file")]
pub struct FileRecord {
    pub v: u32,
    pub file: String,
    /// `indexed`, `unchanged` or `removed`.
    pub status: String,
    pub chunks: u64,
}

impl FileRecord {
    pub fn new(rel: &str, outcome: FileOutcome, chunks: u64) -> Self {
        FileRecord { v: CONTRACT_VERSION, file: rel.into(), status: outcome.as_str().into(), chunks }
    }
}

/// `vg-index`: a file passed over, and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "skip")]
pub struct SkipRecord {
    pub v: u32,
    pub file: String,
    /// Machine-readable: binary, too_large, non_utf8_path, outside_root, symlink, vanished, error.
    pub reason: String,
    pub message: String,
}

impl SkipRecord {
    pub fn new(skip: &Skip) -> Self {
        SkipRecord {
            v: CONTRACT_VERSION,
            file: skip.path.clone(),
            reason: skip.reason.code().into(),
            message: skip.reason.describe(),
        }
    }
}

/// `vg-index`: the last record of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "summary")]
pub struct SummaryRecord {
    pub v: u32,
    pub root: String,
    /// The run's totals, as fields of the record.
    #[serde(flatten)]
    pub run: IndexSummary,
    /// The git revision (full sha) indexed, for `vg-index --rev`. Added within version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// The catalog label indexed, for `vg-index --label`: the commit of
    /// each project it names one in, by project name. Added within version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<LabelRecord>,
}

/// A catalog label as a `summary` record names it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabelRecord {
    pub name: String,
    /// Project name → full sha.
    pub commits: std::collections::BTreeMap<String, String>,
    /// Whether its index run completed, so that it is searched as whole.
    pub complete: bool,
}

impl LabelRecord {
    pub fn new(state: &crate::history::LabelState) -> Self {
        let commits = state.projects.iter().map(|c| (c.name.clone(), c.sha.clone())).collect();
        LabelRecord { name: state.label.clone(), commits, complete: state.updated.is_some() }
    }
}

impl SummaryRecord {
    pub fn new(root: &ProjectRoot, s: &IndexSummary) -> Self {
        SummaryRecord {
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            run: IndexSummary { seconds: (s.seconds * 1000.0).round() / 1000.0, ..s.clone() },
            rev: None,
            label: None,
        }
    }
}

/// `vg-index --stats`: the spec's IndexStats plus what the index was built with.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "stats")]
pub struct StatsRecord {
    pub v: u32,
    pub root: String,
    pub files: u64,
    pub chunks: u64,
    pub holes: u64,
    /// Chunks awaiting the model's vector (the static tier); not holes.
    /// Added within version 1.
    #[serde(default)]
    pub pending: u64,
    pub db_size_bytes: u64,
    pub model: Option<String>,
    pub chunk_size: Option<usize>,
    pub chunk_overlap: Option<usize>,
    /// Commits in the commit log (vg-log), and the pieces they are searched
    /// by. Added within version 1.
    #[serde(default)]
    pub commits: u64,
    #[serde(default)]
    pub commit_pieces: u64,
    /// Git revisions indexed with `vg-index --rev`. Added within version 1.
    #[serde(default)]
    pub revisions: Vec<RevisionRecord>,
    /// A catalog's labels indexed with `vg-index --catalog C --label L`,
    /// which are no git revisions (a catalog's `revisions` is empty).
    /// Left out when none. Added within version 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<LabelIndexRecord>,
    /// What names the static table the index's static vectors come from
    /// (`embed::table_id`); None when it records none. Added within version 1.
    #[serde(default)]
    pub static_table: Option<String>,
    /// Whether that is the table a search embeds its question with now
    /// (`IndexMeta::static_table_in_use`); None as for `static_table`.
    /// Added within version 1.
    #[serde(default)]
    pub static_table_in_use: Option<bool>,
    /// False when an index run over the whole project began changing the
    /// index and none has finished since (`IndexReader::run_unfinished`):
    /// files may be missing. Added within version 1; absent from older
    /// streams, read as true.
    #[serde(default = "whole")]
    pub complete: bool,
}

fn whole() -> bool {
    true
}

/// A revision's index, in a `stats` record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionRecord {
    pub sha: String,
    /// The names it was indexed as.
    pub names: Vec<String>,
    /// Whether its index run completed.
    pub complete: bool,
    pub files: u64,
    pub chunks: u64,
    pub db_size_bytes: u64,
    /// Its index cannot be read (damaged): `vg-index --rev SHA` rebuilds
    /// it. Left out when false. Added within version 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub damaged: bool,
}

/// A catalog label's index, in a `stats` record: a `RevisionRecord` less
/// its key, which names the label's commits together, no commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelIndexRecord {
    /// The labels it was indexed as.
    pub names: Vec<String>,
    pub complete: bool,
    pub files: u64,
    pub chunks: u64,
    pub db_size_bytes: u64,
    /// Its index cannot be read: `--label NAME --clear-cache` drops it.
    /// Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub damaged: bool,
}

impl From<RevisionRecord> for LabelIndexRecord {
    fn from(r: RevisionRecord) -> Self {
        let RevisionRecord { names, complete, files, chunks, db_size_bytes, damaged, .. } = r;
        LabelIndexRecord { names, complete, files, chunks, db_size_bytes, damaged }
    }
}

impl StatsRecord {
    pub fn new(root: &ProjectRoot, stats: &IndexStats, meta: Option<&crate::store::IndexMeta>) -> Self {
        StatsRecord {
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            files: stats.files,
            chunks: stats.chunks,
            holes: stats.holes,
            pending: stats.pending,
            db_size_bytes: stats.db_size_bytes,
            model: meta.map(|m| m.model.clone()),
            chunk_size: meta.map(|m| m.chunk_size),
            chunk_overlap: meta.map(|m| m.chunk_overlap),
            commits: 0,
            commit_pieces: 0,
            revisions: Vec::new(),
            labels: Vec::new(),
            static_table: meta.map(|m| m.static_table.clone()).filter(|t| !t.is_empty()),
            static_table_in_use: meta.and_then(|m| m.static_table_in_use()),
            complete: true,
        }
    }
}

/// `vg-index --verify --json`: whether the index is sound, and what is wrong if not.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "verify")]
pub struct VerifyRecord {
    pub v: u32,
    pub root: String,
    pub ok: bool,
    pub files: u64,
    pub chunks: u64,
    pub holes: u64,
    /// One sentence per problem found; empty when `ok`.
    pub problems: Vec<String>,
    /// As in `stats`: false when the last run over the whole project did
    /// not finish, so files may be missing from a sound index. Added
    /// within version 1; absent from older streams, read as true.
    #[serde(default = "whole")]
    pub complete: bool,
}

impl VerifyRecord {
    pub fn new(root: &ProjectRoot, stats: &IndexStats, problems: Vec<String>, complete: bool) -> Self {
        VerifyRecord {
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            ok: problems.is_empty(),
            files: stats.files,
            chunks: stats.chunks,
            holes: stats.holes,
            problems,
            complete,
        }
    }
}
