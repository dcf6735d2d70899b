//! The AskResponse: the seed's contract (QueryPlan, SearchHit, AskResponse,
//! ResponseStats) fitted to code search, defined once for `vecgrep --ask`
//! (an `ask` record), `/v1/ask` and the MCP `ask` tool. Where vecgrep
//! differs from the seed, `spec/http.md` says how and why.
//!
//! Tiers as code search has them: L0 is what the index knows of a file
//! (the plan's filters), L1 the search by meaning and words, L2 the chat
//! model's reading of the top hits. Every hit comes from L1; `layers` adds
//! L0 when filters chose its file and L2 when the answer cites it, and
//! `tier` is the last of them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::plan::QueryPlan;
use crate::records::CONTRACT_VERSION;
use crate::search::{Hit, Why};

/// Longest excerpt of a hit, in characters; cut after a whole line.
const MAX_EXCERPT_CHARS: usize = 1500;

/// A question's plan, hits, answer and what the run did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct AskResponse {
    /// `ask`: the record's type in a stream (`vecgrep --ask --json`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The contract version (`records::CONTRACT_VERSION`).
    pub v: u32,
    /// The plan the question was run by.
    pub query_plan: QueryPlan,
    /// The hits, best first.
    pub hits: Vec<SearchHit>,
    /// The chat model's answer from the top hits, held to them; null when
    /// none was asked (the hits looked sufficient, or no model was allowed).
    pub answer_summary: Option<String>,
    /// The places the answer cites, each a line of a hit it was given.
    pub citations: Vec<Citation>,
    /// What the run could not do or left out, one sentence each.
    pub warnings: Vec<String>,
    pub stats: ResponseStats,
}

/// A place an answer cites.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct Citation {
    pub path: String,
    pub line: usize,
}

/// One hit: a place in a file, why it ranked, and what is known of its file.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct SearchHit {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    /// The cosine similarity to the query (BM25 on 0..1 when searched by
    /// words alone): what `l1_threshold` cuts.
    pub score: f64,
    /// What the hits are ordered by (`vg-query`'s `relevance`).
    pub relevance: f64,
    /// `L1`, or `L2` when the answer cites it.
    pub tier: String,
    /// The tiers that chose it, in order: `L0` (its file passed the
    /// plan's filters), `L1`, `L2`.
    pub layers: Vec<String>,
    /// Its text, cut after a whole line at 1,500 characters.
    pub excerpt: String,
    pub metadata: HitMetadata,
    /// Why it ranked where it did, in a line a person reads.
    pub reasoning: String,
}

/// What is known of a hit's file, and the evidence behind its place.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct HitMetadata {
    /// The file's size in bytes, as last indexed.
    pub size: Option<u64>,
    /// When the file was last modified, as last indexed, in UTC.
    pub modified: Option<String>,
    /// The file's extension, with its dot.
    pub extension: Option<String>,
    /// The project's concepts the question named that the hit mentions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<String>,
    /// The evidence `reasoning` is written from.
    #[cfg_attr(feature = "mcp", schemars(with = "serde_json::Value"))]
    pub why: Why,
}

/// What the run did, and with what.
#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct ResponseStats {
    /// How hits were ranked: `hybrid`, `semantic` or `lexical`.
    pub mode: String,
    /// The project root.
    pub root: String,
    /// Where the index is kept: `sqlite` or `postgres`.
    pub backend: String,
    /// The whole request, in milliseconds.
    pub latency_ms: f64,
    pub plan_ms: f64,
    pub search_ms: f64,
    pub answer_ms: f64,
    /// The model the query was embedded with; null when searched by words alone.
    pub embedder_model: Option<String>,
    /// What the index holds.
    pub chunks_indexed: u64,
    pub files_indexed: u64,
    /// Candidates the rankings merged before the cut to k.
    pub candidates_merged: usize,
    /// Distinct files among the hits.
    pub unique_paths: usize,
    pub hits_returned: usize,
    /// Hits by `tier`.
    pub hits_by_tier: BTreeMap<String, usize>,
    /// Whether the hits look like they answer the question (`judge`):
    /// `sufficient` or `insufficient`, and why not.
    pub verdict: String,
    pub verdict_reasons: Vec<String>,
    /// The chat model that answered, and why it was asked
    /// (`insufficient`, `requires_l2`, `forced`); null when none was.
    pub answer_model: Option<String>,
    pub answer_reason: Option<String>,
    /// The concepts `--learn` wrote to `.vecgrep/kg/learned.md`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub concepts_learned: Vec<String>,
}

impl SearchHit {
    /// The response's hit for `hit`, its file's `size` and `mtime_ns` if
    /// the index knows them; `filtered` when L0 chose among files.
    pub(super) fn new(hit: Hit, file: Option<(u64, i64)>, filtered: bool) -> SearchHit {
        let mut layers = Vec::new();
        if filtered {
            layers.push("L0".to_string());
        }
        layers.push("L1".to_string());
        let extension = hit.file.rsplit('/').next().and_then(|n| n.rsplit_once('.')).map(|(_, e)| format!(".{e}"));
        SearchHit {
            reasoning: hit.why.reasoning(),
            path: hit.file,
            start_line: hit.start_line,
            end_line: hit.end_line,
            score: round4(hit.score),
            relevance: round4(hit.relevance),
            tier: "L1".into(),
            layers,
            excerpt: excerpt(&hit.text),
            metadata: HitMetadata {
                size: file.map(|f| f.0),
                modified: file.map(|f| {
                    super::plan::utc(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(f.1.max(0) as u64))
                }),
                extension,
                concepts: hit.concepts,
                why: hit.why,
            },
        }
    }

    /// Mark the hit as read by the chat model, which cites it.
    pub(super) fn cited(&mut self) {
        self.tier = "L2".into();
        self.layers.push("L2".into());
    }
}

impl AskResponse {
    pub(super) fn new(
        query_plan: QueryPlan,
        hits: Vec<SearchHit>,
        warnings: Vec<String>,
        stats: ResponseStats,
    ) -> Self {
        AskResponse {
            kind: "ask".into(),
            v: CONTRACT_VERSION,
            query_plan,
            hits,
            answer_summary: None,
            citations: Vec::new(),
            warnings,
            stats,
        }
    }

    /// Count the hits by tier and file, once the answer has marked its citations.
    pub(super) fn count(&mut self) {
        let mut by_tier = BTreeMap::new();
        for h in &self.hits {
            *by_tier.entry(h.tier.clone()).or_insert(0) += 1;
        }
        let files: std::collections::HashSet<&str> = self.hits.iter().map(|h| h.path.as_str()).collect();
        self.stats.unique_paths = files.len();
        self.stats.hits_returned = self.hits.len();
        self.stats.hits_by_tier = by_tier;
        self.stats.candidates_merged = self.hits.iter().map(|h| h.metadata.why.candidates).max().unwrap_or(0);
    }
}

fn round4(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}

/// `text` up to `MAX_EXCERPT_CHARS`, cut after a whole line.
fn excerpt(text: &str) -> String {
    if text.chars().count() <= MAX_EXCERPT_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_EXCERPT_CHARS).collect();
    match cut.rfind('\n') {
        Some(at) if at > 0 => format!("{}\n…", &cut[..at]),
        _ => format!("{cut}…"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(file: &str, text: &str) -> Hit {
        Hit {
            file: file.into(),
            start_line: 3,
            end_line: 4,
            best_start_line: 3,
            best_end_line: 4,
            score: 0.61234,
            relevance: 0.9,
            fit: 0.7,
            text: text.into(),
            concepts: Vec::new(),
            why: Why { words_rank: Some(1), candidates: 12, ..Why::default() },
        }
    }

    #[test]
    fn a_hit_carries_its_file_its_tiers_and_its_reasons() {
        let mut h = SearchHit::new(hit("src/up.rs", "fn up()"), Some((120, 1_767_225_600_000_000_000)), true);
        assert_eq!((h.path.as_str(), h.score, h.tier.as_str()), ("src/up.rs", 0.6123, "L1"));
        assert_eq!(h.layers, ["L0", "L1"]);
        assert_eq!((h.metadata.size, h.metadata.modified.as_deref()), (Some(120), Some("2026-01-01T00:00:00Z")));
        assert_eq!(h.metadata.extension.as_deref(), Some(".rs"));
        assert_eq!(h.reasoning, "1st by words of 12");
        h.cited();
        assert_eq!((h.tier.as_str(), h.layers.len()), ("L2", 3));
        let plain = SearchHit::new(hit("Makefile", "all:"), None, false);
        assert_eq!((plain.layers.len(), plain.metadata.extension, plain.metadata.size), (1, None, None));
    }

    #[test]
    fn long_excerpts_are_cut_after_a_line() {
        let long: String = (0..400).map(|i| format!("line {i}\n")).collect();
        let cut = excerpt(&long);
        assert!(cut.chars().count() <= MAX_EXCERPT_CHARS + 2 && cut.ends_with("\n…"), "{cut}");
        assert_eq!(excerpt("short"), "short");
    }
}
