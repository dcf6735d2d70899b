//! The NDJSON records the tools exchange: defined once here, documented in
//! `spec/ndjson.md`, and versioned. Within contract version 1, records only
//! gain fields and new record types; readers ignore what they do not know.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::history::{iso_date, CommitHit};
use crate::index::{FileOutcome, IndexSummary};
use crate::judge::{Judgement, Verdict};
use crate::project::ProjectRoot;
use crate::project::Skip;
use crate::search::Hit;
use crate::store::IndexStats;

/// Contract version carried in every record as `v`.
pub const CONTRACT_VERSION: u32 = 1;

fn default_version() -> u32 {
    CONTRACT_VERSION
}

/// A search result: what `vg-query`, `vecgrep --json` and `vg-serve` emit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HitRecord {
    #[serde(rename = "type", default = "hit_type")]
    pub kind: String,
    #[serde(default = "default_version")]
    pub v: u32,
    /// Absolute path of the project root; `file` is relative to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub file: String,
    pub start_line: usize,
    pub end_line: usize,
    #[serde(default)]
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
    #[serde(default)]
    pub text: String,
    /// The query that produced the hit, so formatters can mark matching lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The project's concepts the query named that this hit mentions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<String>,
    /// The git revision (full sha) the hit is from, when a revision was
    /// searched (`vg-query --rev`) rather than the working tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// Why it ranked where it did (`search::Why::reasoning`), when asked
    /// for (`vg-query --explain`). Added within version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

fn hit_type() -> String {
    "hit".into()
}

impl HitRecord {
    pub fn new(root: &ProjectRoot, hit: Hit, query: &str) -> Self {
        HitRecord {
            kind: hit_type(),
            v: CONTRACT_VERSION,
            root: Some(root.path.to_string_lossy().into_owned()),
            file: hit.file,
            start_line: hit.start_line,
            end_line: hit.end_line,
            score: round4(hit.score as f64),
            relevance: Some(round4(hit.relevance as f64)),
            fit: Some(round4(hit.fit as f64)),
            text: hit.text,
            query: Some(query.to_string()),
            concepts: hit.concepts,
            rev: None,
            reasoning: None,
        }
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

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A commit `vg-log` found (and `vecgrep --log --json` emits). Added within version 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommitRecord {
    #[serde(rename = "type")]
    pub kind: String,
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
}

/// Most touched files a commit record lists.
pub const MAX_COMMIT_PATHS: usize = 50;

impl CommitRecord {
    pub fn new(root: &ProjectRoot, hit: CommitHit, query: &str) -> Self {
        let c = hit.commit;
        let paths_total = c.paths.len();
        CommitRecord {
            kind: "commit".into(),
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
                .map(|l| CommitLineRecord { path: l.path, line: l.line, text: l.text })
                .collect(),
            query: query.to_string(),
        }
    }
}

/// `vg-root --json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RootRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    pub root: String,
    pub marker: String,
}

impl RootRecord {
    pub fn new(root: &ProjectRoot) -> Self {
        RootRecord {
            kind: "root".into(),
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            marker: root.marker.as_str().into(),
        }
    }
}

/// `vg-index`: one per file looked at.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    pub file: String,
    /// `indexed`, `unchanged` or `removed`.
    pub status: String,
    pub chunks: u64,
}

impl FileRecord {
    pub fn new(rel: &str, outcome: FileOutcome, chunks: u64) -> Self {
        FileRecord {
            kind: "file".into(),
            v: CONTRACT_VERSION,
            file: rel.into(),
            status: outcome.as_str().into(),
            chunks,
        }
    }
}

/// `vg-index`: a file passed over, and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SkipRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    pub file: String,
    /// Machine-readable: binary, too_large, non_utf8_path, outside_root, symlink, vanished, error.
    pub reason: String,
    pub message: String,
}

impl SkipRecord {
    pub fn new(skip: &Skip) -> Self {
        SkipRecord {
            kind: "skip".into(),
            v: CONTRACT_VERSION,
            file: skip.path.clone(),
            reason: skip.reason.code().into(),
            message: skip.reason.describe(),
        }
    }
}

/// `vg-index`: the last record of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SummaryRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    pub root: String,
    pub files: u64,
    pub chunks: u64,
    pub embedded: u64,
    /// Chunks of new or changed files given the vector of an identical
    /// chunk already indexed. Added within version 1.
    #[serde(default)]
    pub copied: u64,
    /// Tokens of the chunks embedded, each counted up to the model's window.
    /// Added within version 1.
    #[serde(default)]
    pub tokens: u64,
    pub reused: u64,
    pub removed: u64,
    pub skipped: u64,
    pub errors: u64,
    /// Chunks stored without a vector in this run (their embedding failed).
    pub holes: u64,
    /// Chunks of this run given static vectors only (the default; not with `embed_all`), for a
    /// search to embed with the model when it needs them. Added within version 1.
    #[serde(default)]
    pub pending: u64,
    pub rebuilt: bool,
    pub aborted: bool,
    pub seconds: f64,
    /// The git revision (full sha) indexed, for `vg-index --rev`. Added within version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
}

impl SummaryRecord {
    pub fn new(root: &ProjectRoot, s: &IndexSummary) -> Self {
        SummaryRecord {
            kind: "summary".into(),
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            files: s.files,
            chunks: s.chunks,
            embedded: s.embedded,
            copied: s.copied,
            tokens: s.tokens,
            reused: s.reused,
            removed: s.removed,
            skipped: s.skipped,
            errors: s.errors,
            holes: s.holes,
            pending: s.pending,
            rebuilt: s.rebuilt,
            aborted: s.aborted,
            seconds: (s.seconds * 1000.0).round() / 1000.0,
            rev: None,
        }
    }
}

/// `vg-index --stats`: the spec's IndexStats plus what the index was built with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatsRecord {
    #[serde(rename = "type")]
    pub kind: String,
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
}

impl StatsRecord {
    pub fn new(root: &ProjectRoot, stats: &IndexStats, meta: Option<&crate::store::IndexMeta>) -> Self {
        StatsRecord {
            kind: "stats".into(),
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
        }
    }
}

/// `vg-index --verify --json`: whether the index is sound, and what is wrong if not.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VerifyRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    pub root: String,
    pub ok: bool,
    pub files: u64,
    pub chunks: u64,
    pub holes: u64,
    /// One sentence per problem found; empty when `ok`.
    pub problems: Vec<String>,
}

impl VerifyRecord {
    pub fn new(root: &ProjectRoot, stats: &IndexStats, problems: Vec<String>) -> Self {
        VerifyRecord {
            kind: "verify".into(),
            v: CONTRACT_VERSION,
            root: root.path.to_string_lossy().into_owned(),
            ok: problems.is_empty(),
            files: stats.files,
            chunks: stats.chunks,
            holes: stats.holes,
            problems,
        }
    }
}

/// `vg-serve`'s first line on stdout: where it listens, so scripts can find it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ListeningRecord {
    #[serde(rename = "type")]
    pub kind: String,
    pub v: u32,
    /// The base URL, e.g. `http://127.0.0.1:41234`.
    pub listening: String,
    pub root: String,
}

impl ListeningRecord {
    pub fn new(root: &ProjectRoot, url: &str) -> Self {
        ListeningRecord {
            kind: "listening".into(),
            v: CONTRACT_VERSION,
            listening: url.to_string(),
            root: root.path.to_string_lossy().into_owned(),
        }
    }
}

/// `vg-query --judge`: whether the hits before it answer the query, last
/// in the stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JudgementRecord {
    #[serde(rename = "type")]
    pub kind: String,
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<String>,
}

impl JudgementRecord {
    pub fn new(query: &str, judgement: Judgement, concepts: Vec<String>) -> Self {
        let verdict = match judgement.verdict {
            Verdict::Sufficient => "sufficient",
            Verdict::Insufficient => "insufficient",
        };
        JudgementRecord {
            kind: "judgement".into(),
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
        }
    }

    pub fn is_insufficient(&self) -> bool {
        self.verdict == "insufficient"
    }
}

/// `vg-answer`: a chat model's answer from the hits before it, held to
/// them; after the judgement, last in the stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerRecord {
    #[serde(rename = "type")]
    pub kind: String,
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
}

/// A place an answer cites: a line of a hit it was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitationRecord {
    pub file: String,
    pub line: usize,
}

/// Write one record as a line of JSON.
pub fn write_record<W: Write + ?Sized, T: Serialize>(out: &mut W, record: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Why a line of input is not a usable record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("line {line}: not a JSON object: {cause}")]
    NotJson { line: usize, cause: String },
    #[error("line {line}: not a hit record: {cause}")]
    BadHit { line: usize, cause: String },
    #[error("line {line}: not a commit record: {cause}")]
    BadCommit { line: usize, cause: String },
    #[error("line {line}: record version {found} is newer than this tool understands ({CONTRACT_VERSION})")]
    TooNew { line: usize, found: u64 },
}

/// A record of a search stream that a reader acts on.
#[derive(Clone, Debug)]
pub enum StreamRecord {
    Hit(HitRecord),
    Commit(CommitRecord),
    Judgement(JudgementRecord),
    Answer(AnswerRecord),
}

/// Parse one line of a search stream: hits, and the judgement and answer
/// that may end it. Blank lines and other records give None, as does a
/// judgement or answer a reader cannot use (they are advice, never worth
/// failing a pipeline for).
pub fn parse_stream_line(text: &str, line: usize) -> Result<Option<StreamRecord>, RecordError> {
    if let Some(j) = advice::<JudgementRecord>(text, "judgement", |j| (&j.kind, j.v)) {
        return Ok(Some(StreamRecord::Judgement(j)));
    }
    if let Some(a) = advice::<AnswerRecord>(text, "answer", |a| (&a.kind, a.v)) {
        return Ok(Some(StreamRecord::Answer(a)));
    }
    if let Some(c) = parse_commit_line(text, line)? {
        return Ok(Some(StreamRecord::Commit(c)));
    }
    Ok(parse_hit_line(text, line)?.map(StreamRecord::Hit))
}

/// A `commit` record; None for a line of another type. A record that says
/// it is a commit but is not one is an error, as a broken hit is.
fn parse_commit_line(text: &str, line: usize) -> Result<Option<CommitRecord>, RecordError> {
    if !text.contains("\"commit\"") {
        return Ok(None);
    }
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { return Ok(None) };
    if value.get("type").and_then(|t| t.as_str()) != Some("commit") {
        return Ok(None);
    }
    if let Some(v) = value.get("v").and_then(|v| v.as_u64()).filter(|v| *v > u64::from(CONTRACT_VERSION)) {
        return Err(RecordError::TooNew { line, found: v });
    }
    serde_json::from_value(value).map(Some).map_err(|e| RecordError::BadCommit { line, cause: e.to_string() })
}

/// `text` as an advice record of type `kind` this tool understands, if it
/// is one; `header` gives a record's type and version.
fn advice<T: serde::de::DeserializeOwned>(text: &str, kind: &str, header: impl Fn(&T) -> (&str, u32)) -> Option<T> {
    if !text.trim_start().starts_with('{') || !text.contains(&format!("\"{kind}\"")) {
        return None;
    }
    let record = serde_json::from_str::<T>(text).ok()?;
    let (found, v) = header(&record);
    (found == kind && v <= CONTRACT_VERSION).then_some(record)
}

/// A search stream as read: its records, and its lines to copy on.
#[derive(Clone, Debug, Default)]
pub struct SearchStream {
    /// Every line that is not blank, as read.
    pub lines: Vec<String>,
    pub hits: Vec<HitRecord>,
    /// Commits (vg-log), in the order read.
    pub commits: Vec<CommitRecord>,
    /// The last judgement and answer read, if any.
    pub judgement: Option<JudgementRecord>,
    pub answer: Option<AnswerRecord>,
}

/// Why a search stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("cannot read standard input")]
    Read(#[from] io::Error),
    #[error("line {0}: not valid UTF-8")]
    NotUtf8(usize),
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Read a search stream (`vg-query`'s output, on standard input) to its end;
/// a line that is not a record is an error naming it.
pub fn read_search_stream(input: impl io::BufRead) -> Result<SearchStream, StreamError> {
    let mut stream = SearchStream::default();
    for (i, line) in input.split(b'\n').enumerate() {
        let text = String::from_utf8(line?).map_err(|_| StreamError::NotUtf8(i + 1))?;
        match parse_stream_line(&text, i + 1)? {
            Some(StreamRecord::Hit(hit)) => stream.hits.push(hit),
            Some(StreamRecord::Judgement(j)) => stream.judgement = Some(j),
            Some(StreamRecord::Answer(a)) => stream.answer = Some(a),
            Some(StreamRecord::Commit(c)) => stream.commits.push(c),
            None => {}
        }
        if !text.trim().is_empty() {
            stream.lines.push(text);
        }
    }
    Ok(stream)
}

/// Parse one line of a hit stream. Blank lines and records of other types
/// give None; a line that is not JSON, or a hit missing `file`,
/// `start_line` or `end_line`, is an error naming its line number.
pub fn parse_hit_line(text: &str, line: usize) -> Result<Option<HitRecord>, RecordError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| RecordError::NotJson { line, cause: e.to_string() })?;
    let obj = value.as_object().ok_or_else(|| RecordError::NotJson { line, cause: "expected an object".into() })?;
    if let Some(v) = obj.get("v").and_then(|v| v.as_u64()) {
        if v > CONTRACT_VERSION as u64 {
            return Err(RecordError::TooNew { line, found: v });
        }
    }
    match obj.get("type").and_then(|t| t.as_str()) {
        None | Some("hit") => {}
        Some(_) => return Ok(None),
    }
    let hit: HitRecord =
        serde_json::from_value(value).map_err(|e| RecordError::BadHit { line, cause: e.to_string() })?;
    if hit.start_line == 0 || hit.end_line < hit.start_line {
        return Err(RecordError::BadHit {
            line,
            cause: format!("line range {}-{} is not a 1-based range", hit.start_line, hit.end_line),
        });
    }
    Ok(Some(hit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_hits_are_accepted_and_unknown_fields_ignored() {
        let h = parse_hit_line(r#"{"file":"a.rs","start_line":3,"end_line":4,"future":[1]}"#, 1).unwrap().unwrap();
        assert_eq!((h.file.as_str(), h.start_line, h.end_line, h.v), ("a.rs", 3, 4, 1));
    }

    #[test]
    fn other_record_types_and_blank_lines_are_skipped() {
        assert!(parse_hit_line(r#"{"type":"summary","files":3}"#, 1).unwrap().is_none());
        assert!(parse_hit_line("   ", 1).unwrap().is_none());
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let e = parse_hit_line("{not json", 7).unwrap_err().to_string();
        assert!(e.starts_with("line 7:"), "{e}");
        let e = parse_hit_line(r#"{"file":"a","start_line":"x","end_line":1}"#, 2).unwrap_err().to_string();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = parse_hit_line(r#"{"file":"a","start_line":5,"end_line":1}"#, 3).unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = parse_hit_line(r#"[1,2]"#, 4).unwrap_err().to_string();
        assert!(e.contains("line 4"), "{e}");
        let e = parse_hit_line(r#"{"v":9,"file":"a","start_line":1,"end_line":1}"#, 5).unwrap_err().to_string();
        assert!(e.contains("newer"), "{e}");
    }

    #[test]
    fn hits_round_trip() {
        let h = HitRecord {
            kind: "hit".into(),
            v: 1,
            root: Some("/r".into()),
            file: "a.rs".into(),
            start_line: 1,
            end_line: 2,
            score: 0.5,
            relevance: Some(0.8125),
            fit: Some(0.6712),
            text: "x\ny".into(),
            query: Some("q".into()),
            concepts: Vec::new(),
            rev: None,
            reasoning: Some("1st by words of 3".into()),
        };
        let mut buf = Vec::new();
        write_record(&mut buf, &h).unwrap();
        let line = String::from_utf8(buf).unwrap();
        assert_eq!(parse_hit_line(line.trim_end(), 1).unwrap().unwrap(), h);
        // A stream from before `relevance` was added is ordered by `score`.
        let old = parse_hit_line(r#"{"file":"a","start_line":1,"end_line":1,"score":0.4}"#, 1).unwrap().unwrap();
        assert_eq!((old.relevance, old.order(), old.shown()), (None, 0.4, 0.4));
        assert_eq!((h.order(), h.shown()), (0.8125, 0.6712));
        // One from before `fit` was added shows what it is ordered by.
        assert_eq!(HitRecord { fit: None, ..h }.shown(), 0.8125);
    }

    mod fuzz {
        //! Property tests for the NDJSON reader: any line is a hit, ignored,
        //! or an error naming its line number; written hits read back equal.
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_line_is_read_or_refused_with_its_number(line in "\\PC{0,300}", n in 1usize..100_000) {
                if let Err(e) = parse_hit_line(&line, n) {
                    prop_assert!(e.to_string().contains(&format!("line {n}")), "{e}");
                }
            }

            #[test]
            fn json_objects_with_odd_fields_never_panic(fields in proptest::collection::vec(("[a-z_]{1,12}", prop_oneof![
                Just(serde_json::Value::Null),
                any::<i64>().prop_map(serde_json::Value::from),
                any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)),
                "\\PC{0,20}".prop_map(serde_json::Value::from),
            ]), 0..8)) {
                let object: serde_json::Map<String, serde_json::Value> = fields.into_iter().collect();
                let _ = parse_hit_line(&serde_json::Value::Object(object).to_string(), 1);
            }

            #[test]
            fn written_hits_read_back_equal(file in "[a-z/]{1,30}", start in 1usize..10_000, len in 0usize..100, text in "\\PC{0,200}", score in -1.0f64..1.0) {
                // Scores are written rounded, as HitRecord::new rounds them.
                let hit = HitRecord { kind: "hit".into(), v: 1, root: Some("/r".into()), file, start_line: start, end_line: start + len, score: round4(score), relevance: Some(round4(score + 0.5)), fit: Some(round4(score * 0.9)), text, query: Some("q".into()), concepts: Vec::new(), rev: None, reasoning: None };
                let mut line = Vec::new();
                write_record(&mut line, &hit).unwrap();
                let back = parse_hit_line(std::str::from_utf8(&line).unwrap().trim_end(), 1).unwrap().unwrap();
                prop_assert_eq!(back, hit);
            }
        }
    }
}
