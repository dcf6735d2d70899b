//! The commit records: a commit vg-log found, and a line of its diff.

use serde::{Deserialize, Serialize};

use super::{round4, CONTRACT_VERSION};
use crate::history::{iso_date, CommitHit};
use crate::project::ProjectRoot;

/// A commit `vg-log` found (and `vecgrep --log --json` emits). Added within version 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "commit")]
pub struct CommitRecord {
    pub v: u32,
    /// Absolute path of the project root; `paths` are relative to it.
    pub root: String,
    /// The full commit id (hex).
    pub sha: String,
    /// Author date, ISO 8601 with the author's offset.
    pub date: String,
    /// Author date, seconds since the epoch.
    pub time: i64,
    pub author: String,
    pub email: String,
    pub subject: String,
    pub score: f64,
    /// What placed it: `message` or `diff`.
    pub matched: String,
    /// Files it touched (the first `MAX_COMMIT_PATHS`).
    pub paths: Vec<String>,
    /// How many files it touched in all.
    pub paths_total: usize,
    /// The lines of its message or diff that matched.
    pub lines: Vec<CommitLineRecord>,
    pub query: String,
    /// Fields of a later 1.x release, kept so that `vg-format --json` writes
    /// the record back as read (spec/ndjson.md).
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub later: serde_json::Map<String, serde_json::Value>,
}

/// One matching line of a commit: a line of its message body, or a changed
/// line (`-` or `+` first) with its file and its line in the new file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitLineRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub text: String,
    /// Fields of a later 1.x release, kept so that `vg-format --json` writes
    /// the record back as read (spec/ndjson.md).
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub later: serde_json::Map<String, serde_json::Value>,
}

/// Most touched files a commit record lists.
pub const MAX_COMMIT_PATHS: usize = 50;

impl CommitRecord {
    pub fn new(root: &ProjectRoot, hit: CommitHit, query: &str) -> Self {
        let c = hit.commit;
        let paths_total = c.paths.len();
        CommitRecord {
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            date: iso_date(c.time, c.offset),
            time: c.time,
            sha: c.sha,
            author: c.author,
            email: c.email,
            subject: c.subject,
            score: round4(f64::from(hit.score)),
            matched: hit.matched.as_str().into(),
            paths: c.paths.into_iter().take(MAX_COMMIT_PATHS).collect(),
            paths_total,
            lines: hit
                .lines
                .into_iter()
                .map(|l| CommitLineRecord { path: l.path, line: l.line, text: l.text, later: Default::default() })
                .collect(),
            query: query.to_string(),
            later: Default::default(),
        }
    }
}
