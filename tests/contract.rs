//! The NDJSON contract: the golden sample streams in spec/samples parse, and
//! strict copies of every record type (unknown fields denied) match what the
//! library writes, so a field added or renamed without updating the spec
//! fails here.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::common::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictHit {
    r#type: String,
    v: u32,
    root: String,
    file: String,
    start_line: u64,
    end_line: u64,
    score: f64,
    relevance: f64,
    fit: f64,
    text: String,
    query: String,
    #[serde(default)]
    concepts: Vec<String>,
    #[serde(default)]
    rev: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    best_start_line: Option<u64>,
    #[serde(default)]
    best_end_line: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictLabel {
    name: String,
    commits: std::collections::BTreeMap<String, String>,
    complete: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictCatalog {
    r#type: String,
    v: u32,
    name: String,
    dir: String,
    projects: Vec<StrictCatalogProject>,
    default: bool,
    labels: Vec<StrictLabel>,
    unreadable_labels: Vec<StrictUnreadableLabel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictUnreadableLabel {
    names: Vec<String>,
    key: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictCatalogProject {
    name: String,
    path: String,
    present: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictJudgement {
    r#type: String,
    v: u32,
    query: String,
    verdict: String,
    coverage: f64,
    covered: Vec<String>,
    missing: Vec<String>,
    top_score: Option<f64>,
    margin: Option<f64>,
    files: u64,
    reasons: Vec<String>,
    #[serde(default)]
    concepts: Vec<String>,
    #[serde(default)]
    root: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictRoot {
    r#type: String,
    v: u32,
    root: String,
    marker: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictFile {
    r#type: String,
    v: u32,
    file: String,
    status: String,
    chunks: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictSkip {
    r#type: String,
    v: u32,
    file: String,
    reason: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictSummary {
    r#type: String,
    v: u32,
    root: String,
    files: u64,
    chunks: u64,
    embedded: u64,
    copied: u64,
    tokens: u64,
    reused: u64,
    removed: u64,
    skipped: u64,
    errors: u64,
    holes: u64,
    #[serde(default)]
    pending: u64,
    rebuilt: bool,
    aborted: bool,
    interrupted: bool,
    seconds: f64,
    #[serde(default)]
    rev: Option<String>,
    #[serde(default)]
    label: Option<StrictLabel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictStats {
    r#type: String,
    v: u32,
    root: String,
    files: u64,
    chunks: u64,
    holes: u64,
    pending: u64,
    db_size_bytes: u64,
    model: Option<String>,
    chunk_size: Option<u64>,
    chunk_overlap: Option<u64>,
    commits: u64,
    commit_pieces: u64,
    revisions: Vec<StrictRevision>,
    static_table: Option<String>,
    static_table_in_use: Option<bool>,
    complete: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictRevision {
    sha: String,
    names: Vec<String>,
    complete: bool,
    files: u64,
    chunks: u64,
    db_size_bytes: u64,
    #[serde(default)]
    damaged: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictListening {
    r#type: String,
    v: u32,
    listening: String,
    root: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictVerify {
    r#type: String,
    v: u32,
    root: String,
    ok: bool,
    files: u64,
    chunks: u64,
    holes: u64,
    problems: Vec<String>,
    complete: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictAnswer {
    r#type: String,
    v: u32,
    query: String,
    model: String,
    reason: String,
    given: u64,
    text: String,
    citations: Vec<StrictCitation>,
    dropped: Vec<String>,
    #[serde(default)]
    learned: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictCitation {
    file: String,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictCommit {
    r#type: String,
    v: u32,
    root: String,
    sha: String,
    date: String,
    time: i64,
    author: String,
    email: String,
    subject: String,
    score: f64,
    matched: String,
    paths: Vec<String>,
    paths_total: u64,
    lines: Vec<StrictCommitLine>,
    query: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictCommitLine {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    text: String,
}

/// `vg-ask --plan`'s record: a QueryPlan with its type and version.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictPlanRecord {
    r#type: String,
    v: u32,
    intent: String,
    l0_filters: StrictL0,
    l1_query_text: String,
    l1_threshold: f64,
    requires_l2: bool,
    l2_skills: Vec<String>,
    l2_top_k: u64,
    privacy_mode: String,
    raw_user_text: String,
    planner_model_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictPlan {
    intent: String,
    l0_filters: StrictL0,
    l1_query_text: String,
    l1_threshold: f64,
    requires_l2: bool,
    l2_skills: Vec<String>,
    l2_top_k: u64,
    privacy_mode: String,
    raw_user_text: String,
    planner_model_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictL0 {
    #[serde(default)]
    extensions: Vec<String>,
    #[serde(default)]
    path_globs: Vec<String>,
    #[serde(default)]
    exclude_globs: Vec<String>,
    #[serde(default)]
    modified_after: Option<String>,
    #[serde(default)]
    modified_before: Option<String>,
    #[serde(default)]
    min_size: Option<u64>,
    #[serde(default)]
    max_size: Option<u64>,
}

/// `vg-ask`'s record and vg-serve's `POST /v1/ask` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictAsk {
    r#type: String,
    v: u32,
    query_plan: StrictPlan,
    hits: Vec<StrictSearchHit>,
    answer_summary: Option<String>,
    citations: Vec<StrictAskCitation>,
    warnings: Vec<String>,
    stats: StrictAskStats,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictSearchHit {
    path: String,
    start_line: u64,
    end_line: u64,
    score: f64,
    relevance: f64,
    tier: String,
    layers: Vec<String>,
    excerpt: String,
    metadata: StrictHitMetadata,
    reasoning: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictHitMetadata {
    size: Option<u64>,
    modified: Option<String>,
    extension: Option<String>,
    #[serde(default)]
    concepts: Vec<String>,
    why: StrictWhy,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictWhy {
    meaning_rank: Option<u64>,
    meaning_by: Option<String>,
    words_rank: Option<u64>,
    matched_words: Vec<String>,
    names: Option<StrictNameMatch>,
    concepts: Vec<String>,
    fused_rank: Option<u64>,
    lifts: Vec<StrictLift>,
    candidates: u64,
    joined: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictNameMatch {
    names: Vec<String>,
    score: f64,
    added: f64,
}

/// One of `why::Lift`'s kinds, with the fields of that kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum StrictLift {
    FileCoherence { share: f64, added: f64 },
    SymbolFile { added: f64 },
    StepBack { file_is: String, factor: f64 },
    FileMeaning { cosine: f64, added: f64 },
    PathWords { share: f64, added: f64 },
    Repeat { nth: u64, factor: f64 },
    KeptInPlace { nth: u64 },
    SideFirst { by: String, within: u64 },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictAskCitation {
    path: String,
    line: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StrictAskStats {
    mode: String,
    root: String,
    backend: String,
    latency_ms: f64,
    plan_ms: f64,
    search_ms: f64,
    answer_ms: f64,
    embedder_model: Option<String>,
    chunks_indexed: u64,
    files_indexed: u64,
    candidates_merged: u64,
    unique_paths: u64,
    hits_returned: u64,
    hits_by_tier: std::collections::BTreeMap<String, u64>,
    verdict: String,
    verdict_reasons: Vec<String>,
    answer_model: Option<String>,
    answer_reason: Option<String>,
    #[serde(default)]
    concepts_learned: Vec<String>,
}

/// Check one record against its strict definition; returns its type.
pub(crate) fn check(record: &Value) -> String {
    assert_eq!(record["v"], 1, "{record}");
    let kind = record["type"].as_str().unwrap_or_else(|| panic!("no type: {record}")).to_string();
    let r = record.clone();
    let result = match kind.as_str() {
        "hit" => serde_json::from_value::<StrictHit>(r).map(|_| ()),
        "root" => serde_json::from_value::<StrictRoot>(r).map(|_| ()),
        "catalog" => serde_json::from_value::<StrictCatalog>(r).map(|_| ()),
        "file" => serde_json::from_value::<StrictFile>(r).map(|_| ()),
        "skip" => serde_json::from_value::<StrictSkip>(r).map(|_| ()),
        "summary" => serde_json::from_value::<StrictSummary>(r).map(|_| ()),
        "stats" => serde_json::from_value::<StrictStats>(r).map(|_| ()),
        "listening" => serde_json::from_value::<StrictListening>(r).map(|_| ()),
        "verify" => serde_json::from_value::<StrictVerify>(r).map(|_| ()),
        "judgement" => serde_json::from_value::<StrictJudgement>(r).map(|_| ()),
        "answer" => serde_json::from_value::<StrictAnswer>(r).map(|_| ()),
        "commit" => serde_json::from_value::<StrictCommit>(r).map(|_| ()),
        "plan" => serde_json::from_value::<StrictPlanRecord>(r).map(|_| ()),
        "ask" => serde_json::from_value::<StrictAsk>(r).map(|_| ()),
        other => panic!("record type {other} is not in the contract"),
    };
    result.unwrap_or_else(|e| panic!("{kind} record does not match the contract: {e}\n{record}"));
    kind
}

#[test]
fn golden_samples_follow_the_contract() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/samples");
    let mut kinds = std::collections::BTreeSet::new();
    for name in [
        "hits.ndjson",
        "judged.ndjson",
        "answered.ndjson",
        "commits.ndjson",
        "index.ndjson",
        "root.ndjson",
        "stats.ndjson",
        "listening.ndjson",
        "verify.ndjson",
        "plan.ndjson",
        "ask.ndjson",
        "catalog.ndjson",
    ] {
        let text = read(&dir.join(name));
        assert!(!text.trim().is_empty(), "{name} is empty");
        for (i, line) in text.lines().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1));
            kinds.insert(check(&v));
            // Every sample reads back as the record its type names.
            let record = vecgrep::records::Record::parse(line, i + 1).unwrap().expect("a record");
            // vg-ask's records are its own (`ask::AskResponse`, `ask::PlanRecord`).
            let asks = ["plan", "ask"].contains(&v["type"].as_str().unwrap_or_default());
            assert_eq!(matches!(record, vecgrep::records::Record::Other), asks, "{name}:{}: {record:?}", i + 1);
        }
    }
    let expected: std::collections::BTreeSet<String> = [
        "hit",
        "root",
        "file",
        "skip",
        "summary",
        "stats",
        "listening",
        "verify",
        "judgement",
        "answer",
        "commit",
        "plan",
        "ask",
        "catalog",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(kinds, expected, "every record type has a sample");
}

#[test]
fn the_tools_write_what_the_contract_says() {
    let t = sample_project();
    t.write_bytes("logo.png", b"\x89PNG\0\0");
    let mut seen = std::collections::BTreeSet::new();
    for o in [
        run(&mut t.cmd("vg-index", ".")),
        run(t.cmd("vg-query", ".").args(["--threshold", "-1", "retry"])),
        run(t.cmd("vg-query", ".").args(["--judge", "retry"])),
        run(t.cmd("vg-root", ".").arg("--json")),
        run(t.cmd("vg-index", ".").args(["--stats", "--json"])),
        run(t.cmd("vg-index", ".").args(["--verify", "--json"])),
        run(t.cmd("vg-query", ".").args(["--explain", "--threshold", "-1", "retry"])),
        run(t.cmd("vg-ask", ".").args(["--plan", "python files changed this week that retry uploads"])),
        run(t.cmd("vg-ask", ".").args(["python files that retry uploads, not in tests"])),
    ] {
        assert_code(&o, 0);
        for r in records(&o) {
            seen.insert(check(&r));
        }
    }
    // vg-serve's first line.
    let mut server = t.cmd("vg-serve", ".").stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(server.stdout.take().unwrap()), &mut first).unwrap();
    let _ = server.kill();
    let _ = server.wait();
    seen.insert(check(&serde_json::from_str(&first).unwrap()));
    assert_eq!(seen.len(), 11, "{seen:?}");
}
