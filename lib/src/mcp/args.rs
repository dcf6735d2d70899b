//! The `search` tool's arguments as a client sends them, checked into a
//! search over the live index, and its answer. The JSON Schemas clients see
//! are derived from these types, doc comments included.

use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::concepts::Expansion;
use crate::live::{confine, IndexingState, LiveIndex, LiveStatus};
use crate::project::{PrivacyMode, ResolvedConfig, SearchMode, Threshold};
use crate::search::{self, FileFilter, Hit, SearchRequest, MAX_K};
use crate::store::Scope;

/// Arguments of `status`: none. One given is refused, as every tool
/// refuses an argument it does not know (a misspelling is not ignored).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {}

/// A query's `maxLength` in the schema: JSON Schema counts characters, the
/// server `MAX_QUERY_BYTES` bytes, and a client that kept to 4096
/// characters of another script was refused. These many fit in any script.
const QUERY_CHARS: usize = search::MAX_QUERY_BYTES / 4;

/// Arguments of `search`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What the code does, in plain words: "where do we retry failed
    /// uploads?". Identifiers work too; at most 4096 bytes of UTF-8.
    #[schemars(length(min = 1, max = QUERY_CHARS))]
    pub query: String,
    /// How many results to return, 1 to 1000. Default: `top_k` from the
    /// project's config (10).
    #[schemars(range(min = 1, max = MAX_K))]
    // `skip_serializing_if` keeps `"default": null` out of the published schema.
    #[serde(default, deserialize_with = "whole_number", skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// Only results from these files or directories, relative to the project
    /// root (or absolute, inside it). Each must be inside the paths this
    /// server was started on. Default: all of them.
    #[serde(default)]
    pub paths: Vec<String>,
    /// How results are ranked: `hybrid` (meaning and words fused, the
    /// default), `semantic` (meaning only) or `lexical` (words only).
    pub mode: Option<ModeArg>,
    /// Lowest score returned, -1 to 1. Default: `threshold` from the
    /// config (0.3); a `lexical` search keeps every match unless the
    /// config sets one, and unless set, a `hybrid` search passes the
    /// definition of the one identifier a query is whatever its score.
    pub threshold: Option<f32>,
    /// Only files modified at or after this: a span back from now (`2w`,
    /// `3d`, `12h`, `30m`) or a UTC date (`2026-01-31`).
    pub changed_within: Option<String>,
    /// Only files modified before this: a span back from now or a UTC date.
    pub changed_before: Option<String>,
    /// Size bounds: `+10k` (at least 10,000 bytes), `-1Mi` (at most 1 MiB);
    /// suffixes b, k, m, g, t (powers of 1000) and ki, mi, gi, ti (of 1024),
    /// as `vg-query -S` reads them. Several bounds all apply.
    #[serde(default)]
    pub size: Vec<String>,
    /// Leave out paths matching these globs (gitignore syntax, from the
    /// root): `tests/`, `*.md`, `**/generated/**`.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// A whole number as JSON Schema's `integer` counts one: `3` or `3.0`
/// (draft 2020-12, the published schema's, calls a number with no fraction
/// an integer), which models write either way; serde's integers refused
/// `3.0`, in Rust's words (audit 229).
pub(super) fn whole_number<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    use serde::de::Error;
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else { return Ok(None) };
    // Past 2^53 a float names no one whole number, and past u64 none fits:
    // told as too large, not held at a largest value the agent never sent
    // (review 233).
    const EXACT: f64 = 9_007_199_254_740_992.0;
    let float = n.as_f64().filter(|_| n.as_u64().is_none());
    if float.is_some_and(|f| f.fract() == 0.0 && f > EXACT) {
        return Err(D::Error::custom(format!("{n} is larger than any this argument takes")));
    }
    let whole = n.as_u64().or_else(|| float.filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64));
    whole
        .and_then(|w| T::try_from(w).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("{n} is not a whole number of 0 or more")))
}

/// Arguments of `ask`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, in plain words, filters and all: "rust files changed
    /// this week that retry uploads", "where is parse_config defined",
    /// "explain how the index lock works". At most 4096 bytes of UTF-8.
    #[schemars(length(min = 1, max = QUERY_CHARS))]
    pub query: String,
    /// What may leave the machine: `local_only` (nothing: a chat model or
    /// embedder elsewhere is not used), `cloud_reasoning_ok` (the question
    /// and top results may go to the chat model), `cloud_embedding_ok`
    /// (the embedder too). Default: `privacy_mode` from the config, which
    /// a call may make stricter, never looser.
    pub privacy_mode: Option<PrivacyArg>,
    /// Only files under these, relative to the project root (or absolute,
    /// inside it), each inside the paths this server was started on.
    #[serde(default)]
    pub paths: Vec<String>,
}

/// A privacy mode, as the config names them.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrivacyArg {
    LocalOnly,
    CloudReasoningOk,
    CloudEmbeddingOk,
}

impl From<PrivacyArg> for PrivacyMode {
    fn from(mode: PrivacyArg) -> PrivacyMode {
        match mode {
            PrivacyArg::LocalOnly => PrivacyMode::LocalOnly,
            PrivacyArg::CloudReasoningOk => PrivacyMode::CloudReasoningOk,
            PrivacyArg::CloudEmbeddingOk => PrivacyMode::CloudEmbeddingOk,
        }
    }
}

/// A ranking, as `vg-query --mode` names them.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    Hybrid,
    Semantic,
    Lexical,
}

impl From<ModeArg> for SearchMode {
    fn from(mode: ModeArg) -> SearchMode {
        match mode {
            ModeArg::Hybrid => SearchMode::Hybrid,
            ModeArg::Semantic => SearchMode::Semantic,
            ModeArg::Lexical => SearchMode::Lexical,
        }
    }
}

/// A search's arguments, checked: everything but the query's text.
pub(super) struct SearchPlan {
    pub k: usize,
    pub threshold: Threshold,
    pub mode: SearchMode,
    pub scope: Scope,
    pub filter: FileFilter,
}

impl SearchArgs {
    /// The search these arguments ask for over `live`, or why not (one
    /// line a model can act on).
    pub(super) fn plan(&self, live: &LiveIndex, config: &ResolvedConfig) -> Result<SearchPlan, String> {
        search::check_query(&self.query).map_err(|e| e.to_string())?;
        let k = match self.k {
            None => config.top_k.clamp(1, MAX_K),
            Some(k) if (1..=MAX_K).contains(&k) => k,
            Some(k) => return Err(format!("k must be from 1 to {MAX_K}, got {k}")),
        };
        let mode = self.mode.map_or(config.mode, SearchMode::from);
        search::check_query_in(&self.query, mode).map_err(|e| e.to_string())?;
        let threshold = match self.threshold {
            None => config.threshold_in(mode),
            Some(t) if t.is_finite() && (-1.0..=1.0).contains(&t) => Threshold::chosen(t),
            Some(t) => return Err(format!("threshold must be from -1 to 1, got {t}")),
        };
        // Models fill optional fields with "": a filter given empty is left
        // out, the same for every filter.
        let given = |values: &[String]| values.iter().filter(|v| !v.trim().is_empty()).cloned().collect::<Vec<_>>();
        let filter = FileFilter::from_flags(
            self.changed_within.as_deref().filter(|w| !w.trim().is_empty()),
            self.changed_before.as_deref().filter(|w| !w.trim().is_empty()),
            &given(&self.size),
            &given(&self.exclude),
            SystemTime::now(),
        )?;
        let scope = confine(live, &self.paths)?;
        Ok(SearchPlan { k, threshold, mode, scope, filter })
    }
}

impl SearchPlan {
    pub(super) fn request<'q>(&self, query: &'q str, expansion: Expansion) -> SearchRequest<'q> {
        SearchRequest {
            query,
            mode: self.mode,
            scope: self.scope.clone(),
            k: self.k,
            threshold: self.threshold,
            filter: self.filter.clone(),
            expansion,
            per_file: None,
        }
    }
}

/// The answer of `search`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    /// The best matches, best first.
    pub results: Vec<McpHit>,
    /// The project root, absolute; each result's `file` is relative to it.
    pub root: String,
    /// How far indexing is. While `status` is `indexing`, results come only
    /// from the files indexed so far.
    pub index: IndexProgress,
    /// What to know about these results (indexing under way, nothing
    /// indexed yet), or null.
    pub note: Option<String>,
}

/// One result: a chunk of a file.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct McpHit {
    /// Path relative to the project root, `/`-separated.
    pub file: String,
    /// First line of the chunk, 1-based.
    pub start_line: usize,
    /// Last line of the chunk, inclusive.
    pub end_line: usize,
    /// How close it is in meaning: the cosine similarity to the query (in
    /// `lexical` mode, BM25 mapped onto 0..1); what a threshold cuts.
    pub score: f64,
    /// What the results are ordered by, descending: in `hybrid` mode the
    /// fused score (1 for a chunk first in meaning and in words alike), in
    /// the other modes `score`.
    pub relevance: f64,
    /// The relevance on 0..1, the same order (in `hybrid` mode `tanh` of
    /// it, in the others `score`): the one number to show a person.
    pub fit: f64,
    /// The chunk's text.
    pub text: String,
    /// The project's concepts (`.vecgrep/kg/`) that the query named and
    /// this result mentions by one of their words; omitted when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<String>,
    /// Why it ranked where it did: its place by meaning and by words, the
    /// words and names it matched, and what its file did to its place.
    pub reasoning: String,
}

impl From<Hit> for McpHit {
    fn from(hit: Hit) -> McpHit {
        McpHit {
            file: hit.file,
            start_line: hit.start_line,
            end_line: hit.end_line,
            score: (f64::from(hit.score) * 10_000.0).round() / 10_000.0,
            relevance: (f64::from(hit.relevance) * 10_000.0).round() / 10_000.0,
            fit: (f64::from(hit.fit) * 10_000.0).round() / 10_000.0,
            reasoning: hit.why.reasoning(),
            text: hit.text,
            concepts: hit.concepts,
        }
    }
}

/// Indexing progress as a search reports it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct IndexProgress {
    pub status: IndexingState,
    /// Whether the background fill is giving chunks the model's vectors;
    /// every file is searchable meanwhile.
    pub filling: bool,
    /// Files processed so far in the current run.
    pub indexed: u64,
    /// Files the run has to process; null while it is still walking.
    pub total: Option<u64>,
    /// Files the index holds now.
    pub files: u64,
}

impl IndexProgress {
    pub(super) fn of(status: &LiveStatus) -> IndexProgress {
        IndexProgress {
            status: status.status,
            filling: status.filling,
            indexed: status.indexed,
            total: status.total,
            files: status.files,
        }
    }

    /// A note for results that may be partial: the index is being built.
    pub(super) fn note(&self, ran: bool) -> Option<String> {
        // A fill leaves every file searchable: nothing to warn of.
        if self.status != IndexingState::Indexing || self.filling {
            return None;
        }
        let so_far = match self.total {
            Some(total) => format!("{} of {total} files processed", self.indexed),
            None => "walking the files".to_string(),
        };
        let base = if ran { "re-indexing changed files" } else { "the index is being built" };
        Some(format!(
            "{base} ({so_far}; {} files searchable): these results cover only what is indexed so far. \
             Search again shortly for complete results, or call `index` to wait for it.",
            self.files
        ))
    }
}
