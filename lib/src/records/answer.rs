//! The records of an answer: the judgement of a search's hits, and a chat
//! model's answer with its citations.

use serde::{Deserialize, Serialize};

use super::{null_as_default, round4, CONTRACT_VERSION};
use crate::judge::{Judgement, Verdict};
use crate::project::ProjectRoot;

/// `vg-query --judge`: whether the hits before it answer the query, last
/// in the stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "judgement")]
pub struct JudgementRecord {
    pub v: u32,
    pub query: String,
    /// `sufficient` or `insufficient`.
    pub verdict: String,
    /// Share of the query's words found in the top 3 hits, 0..1.
    pub coverage: f64,
    pub covered: Vec<String>,
    pub missing: Vec<String>,
    pub top_score: Option<f64>,
    /// The best score minus the mean of the next ones among the top 5.
    pub margin: Option<f64>,
    /// Distinct files among the top 5 hits.
    pub files: usize,
    /// Why the search looks insufficient; empty when sufficient.
    pub reasons: Vec<String>,
    /// Concepts the query named, from `.vecgrep/kg/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub concepts: Vec<String>,
    /// The project searched (absolute): with no hit to name it, where a
    /// reader finds the config that search read (its `quiet`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

impl JudgementRecord {
    pub fn new(root: &ProjectRoot, query: &str, judgement: Judgement, concepts: Vec<String>) -> Self {
        let verdict = match judgement.verdict {
            Verdict::Sufficient => "sufficient",
            Verdict::Insufficient => "insufficient",
        };
        JudgementRecord {
            v: CONTRACT_VERSION,
            query: query.to_string(),
            verdict: verdict.into(),
            coverage: round4(f64::from(judgement.coverage)),
            covered: judgement.covered,
            missing: judgement.missing,
            top_score: judgement.top_score.map(|s| round4(f64::from(s))),
            margin: judgement.margin.map(|m| round4(f64::from(m))),
            files: judgement.files,
            reasons: judgement.reasons,
            concepts,
            root: Some(root.path.to_string_lossy().into_owned()),
        }
    }

    pub fn is_insufficient(&self) -> bool {
        self.verdict == "insufficient"
    }
}

/// `vg-answer`: a chat model's answer from the hits before it, held to
/// them; after the judgement, last in the stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "answer")]
pub struct AnswerRecord {
    pub v: u32,
    pub query: String,
    /// The model that answered, as its endpoint names it.
    pub model: String,
    /// Why it was asked: `insufficient` (the judgement said so), `forced`
    /// (`--force-answer`) or `unjudged` (the stream had no judgement).
    pub reason: String,
    /// How many of the hits, best first, it was given.
    pub given: usize,
    /// The answer; excerpt numbers replaced by places, dropped citations taken out.
    pub text: String,
    /// The places it cited among the hits it was given, each once.
    pub citations: Vec<CitationRecord>,
    /// Citations of anything it was not given, as written, taken out of `text`.
    pub dropped: Vec<String>,
    /// Concepts `--learn` wrote to `.vecgrep/kg/learned.md`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<String>,
    /// Fields of a later 1.x release, kept so that `vg-format --json` writes
    /// the record back as read (spec/ndjson.md).
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub later: serde_json::Map<String, serde_json::Value>,
}

/// A place an answer cites: a line of a hit it was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitationRecord {
    pub file: String,
    pub line: usize,
    /// Fields of a later 1.x release, kept so that `vg-format --json` writes
    /// the record back as read (spec/ndjson.md).
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub later: serde_json::Map<String, serde_json::Value>,
}
