//! One call from a question to an answer (`vecgrep --ask`, vg-serve's
//! `POST /v1/ask`, vg-mcp's `ask`): the question made into a plan
//! (`rules`, or a chat model's checked against the schema, `llm`), the
//! plan run as a filtered search, the hits judged (`judge`), and a chat
//! model asked when the hits look thin or the plan wants an explanation
//! (`answer`'s rules), all under the privacy mode in force (`privacy`).
//!
//! The surfaces differ only in how they search (a one-shot index, or a
//! live one), which they bring as an `AskSearcher`; everything they return
//! is an `AskResponse` (`response`), rendered for a person by `human`.

mod human;
mod lexicon;
mod live;
mod llm;
mod places;
mod plan;
mod privacy;
mod response;
mod rules;

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

pub use human::{render_plan, render_response};
pub use live::LiveAsk;
pub use llm::plan_by_llm;
pub use plan::{utc, Intent, L0Filters, PlanRecord, QueryPlan, ANSWER_SKILL, RULES_PLANNER_ID};
pub use privacy::{allowed, chat_refused, embedding_refused, on_loopback, Allowed};
pub use response::{AskResponse, Citation, HitMetadata, ResponseStats, SearchHit};
pub use rules::{plan_by_rules, PlanContext};

use crate::answer::{self, ChatClient, ChatSettings};
use crate::concepts::Expansion;
use crate::judge::{judge, Judgement, Verdict};
use crate::project::{Planner, PrivacyMode, ProjectRoot, ResolvedConfig, SearchMode, Threshold};
use crate::records::HitRecord;
use crate::search::{self, Hit, SearchRequest};
use crate::store::Scope;

/// How a surface searches, for `ask`.
pub trait AskSearcher {
    /// The hits for `request` (its filter not yet applied to its scope).
    fn search(&mut self, request: &SearchRequest<'_>) -> Result<Vec<Hit>>;
    /// The project's concepts `query` names.
    fn expand(&self, query: &str) -> Expansion;
    /// The files a search may reach.
    fn scope(&self) -> Scope;
    /// What the index holds: chunks and files.
    fn counts(&mut self) -> (u64, u64);
    /// Each indexed file's size and modification time (ns since the epoch).
    fn file_states(&mut self) -> HashMap<String, (u64, i64)>;
}

/// What a question is asked with besides the config.
#[derive(Clone, Copy, Debug)]
pub struct AskOptions {
    /// The mode the request asks for; none, the config's.
    pub privacy_mode: Option<PrivacyMode>,
    /// Ask the chat model whatever the judgement (`--force-answer`).
    pub force_answer: bool,
    /// Hits the chat model is given.
    pub context_hits: usize,
    /// Write the concepts the answer bridges to `.vecgrep/kg/learned.md`
    /// (`--learn`; never for a server's request).
    pub learn: bool,
    /// The moment relative times count from.
    pub now: SystemTime,
}

impl AskOptions {
    /// The options of a request a client made (vg-serve's `/v1/ask`,
    /// vg-mcp's `ask`): the mode it asks for may make the run stricter
    /// than `config`'s, never looser. A client is not the user: an agent
    /// steered by text in a repository could ask for `cloud_reasoning_ok`
    /// and send the code away.
    pub fn for_request(asked: Option<PrivacyMode>, config: &ResolvedConfig) -> AskOptions {
        AskOptions::new(asked.map(|mode| mode.no_looser_than(config.privacy_mode)))
    }

    /// The options of a request that names at most its privacy mode.
    pub fn new(privacy_mode: Option<PrivacyMode>) -> AskOptions {
        AskOptions {
            privacy_mode,
            force_answer: false,
            context_hits: answer::DEFAULT_CONTEXT_HITS,
            learn: false,
            now: SystemTime::now(),
        }
    }
}

/// A question no search can run: empty, too long, or without a word to
/// match where only words are matched. The asker's to fix, which a server
/// answers 400, not as its own failure (audit 195).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unsearchable(String);

impl From<anyhow::Error> for Unsearchable {
    fn from(e: anyhow::Error) -> Unsearchable {
        Unsearchable(e.to_string())
    }
}

/// `plan`'s plan, when a search can run it: one with a word to match, its
/// concepts' words counted as the search counts them. An LLM planner's
/// plan that has none ("!!!" where only words are matched) failed the
/// whole ask; it falls back to the rules' plan as any bad plan does
/// (audit 195). A question that leaves the rules nothing is the asker's.
pub fn searchable_plan(
    question: &str,
    root: &ProjectRoot,
    config: &ResolvedConfig,
    options: &AskOptions,
    expand: &dyn Fn(&str) -> Expansion,
) -> Result<(QueryPlan, Vec<String>)> {
    let unsearchable = |plan: &QueryPlan| {
        let allowed = privacy::allowed(plan.privacy_mode, config);
        let mode = if allowed.embedding { config.mode } else { SearchMode::Lexical };
        // A question of control characters alone leaves nothing to search:
        // said as of the question, not of the plan's field.
        search::check_query_with(&plan.l1_query_text, &expand(&plan.l1_query_text), mode).err()
    };
    let (plan, mut warnings) = plan(question, root, config, options);
    let Some(why) = unsearchable(&plan) else { return Ok((plan, warnings)) };
    if config.planner != Planner::Llm || plan.planner_model_id == RULES_PLANNER_ID {
        return Err(Unsearchable::from(why).into());
    }
    warnings.push(format!("the LLM planner's plan was refused (l1_query_text: {why}); planned by rules"));
    let by_rules = ResolvedConfig { planner: Planner::Rules, ..config.clone() };
    let (plan, more) = self::plan(question, root, &by_rules, options);
    warnings.extend(more);
    match unsearchable(&plan) {
        Some(why) => Err(Unsearchable::from(why).into()),
        None => Ok((plan, warnings)),
    }
}

/// The plan for `question`: the rules', or with `planner = "llm"` the chat
/// model's when the mode allows asking it and its plan passes the check;
/// with a warning for each thing that fell back. A path written from `/`
/// is read against `root` (`places`), whichever planner wrote it.
pub fn plan(
    question: &str,
    root: &ProjectRoot,
    config: &ResolvedConfig,
    options: &AskOptions,
) -> (QueryPlan, Vec<String>) {
    let (mut plan, mut warnings) = drafted_plan(question, config, options);
    let outside = places::read_against_root(&mut plan.l0_filters, root);
    let left_out = !outside.is_empty();
    warnings.extend(outside);
    let drafted = plan.l0_filters.clone();
    // The rules take paths from the question's words (`in ../../etc`);
    // a plan printed or run holds only filters the schema allows.
    for why in plan.l0_filters.drop_bad_globs() {
        warnings.push(format!("a path filter was left out: {why}"));
    }
    for why in plan.l0_filters.drop_contradictions() {
        warnings.push(format!("two filters that contradict each other were left out: {why}"));
    }
    if let Err(why) = plan.check() {
        warnings.push(format!("the plan's filters were left out: {why}"));
        plan.l0_filters = L0Filters::default();
    }
    // A plan of nothing but filters lists what they admit at no threshold:
    // with one of them left out (`files in ../secret except tests`) it
    // listed what the question never asked for. It searches instead.
    if (left_out || plan.l0_filters != drafted) && plan.intent == Intent::List && !config.threshold_set {
        plan.intent = Intent::Search;
        plan.l1_threshold = plan.l1_threshold.max(config.threshold_in(config.mode).at);
    }
    (plan, warnings)
}

/// The plan of the planner `config` chooses, unchecked, with warnings.
fn drafted_plan(question: &str, config: &ResolvedConfig, options: &AskOptions) -> (QueryPlan, Vec<String>) {
    let mode = options.privacy_mode.unwrap_or(config.privacy_mode);
    let context = PlanContext {
        now: options.now,
        threshold: config.threshold_in(config.mode).at,
        threshold_set: config.threshold_set,
        context_hits: options.context_hits,
        privacy_mode: mode,
    };
    let draft = plan_by_rules(question, &context);
    let mut warnings = Vec::new();
    if config.planner != Planner::Llm {
        return (draft, warnings);
    }
    let allowed = privacy::allowed(mode, config);
    let Some(url) = allowed.chat else {
        let why = allowed.warnings.into_iter().next().unwrap_or_else(|| "no llm_url is set".into());
        warnings.push(format!("planner llm: {why}; planned by rules"));
        return (draft, warnings);
    };
    let settings = ChatSettings::new(&url, config.llm_model.as_deref(), Duration::from_secs_f64(config.llm_timeout));
    let planned = ChatClient::connect(&settings)
        .map_err(|e| crate::project::shown::error_line(&e))
        .and_then(|client| plan_by_llm(&client, question, &draft));
    match planned {
        // A threshold the user set is theirs: the model's 0.99 left none
        // of the hits the user asked for (`l2_top_k` is bounded alike).
        Ok(plan) if config.threshold_set => (QueryPlan { l1_threshold: draft.l1_threshold, ..plan }, warnings),
        Ok(plan) => (plan, warnings),
        Err(why) => {
            warnings.push(format!("the LLM planner's plan was refused ({}); planned by rules", one_line(&why)));
            (draft, warnings)
        }
    }
}

/// Ask `question` of the project at `root` through `searcher`: plan,
/// filtered search, judgement, and an answer when it is called for.
/// Err only for what the caller must fix (an empty or overlong question)
/// or a search that failed; a chat model that fails is a warning.
pub fn ask(
    question: &str,
    root: &ProjectRoot,
    config: &ResolvedConfig,
    options: &AskOptions,
    searcher: &mut dyn AskSearcher,
) -> Result<AskResponse> {
    let started = Instant::now();
    search::check_query(question).map_err(Unsearchable::from)?;
    let (plan, mut warnings) = searchable_plan(question, root, config, options, &|q| searcher.expand(q))?;
    plan.check().map_err(anyhow::Error::msg)?;
    let plan_ms = ms(started);
    let allowed = privacy::allowed(plan.privacy_mode, config);
    warnings.extend(allowed.warnings.iter().cloned());
    let mode = if allowed.embedding { config.mode } else { SearchMode::Lexical };
    let searched = Instant::now();
    let (hits, judgement) = run_search(&plan, config, mode, searcher)?;
    if hits.is_empty() {
        warnings.extend(filters_took_all(&plan, config, mode, searcher)?);
    }
    // What the chat model is given: each hit whole (the prompt cuts it).
    let records: Vec<HitRecord> = hits.iter().map(|h| HitRecord::new(root, h.clone(), &plan.l1_query_text)).collect();
    let filtered = !plan.l0_filters.is_empty();
    let states = if hits.is_empty() { HashMap::new() } else { searcher.file_states() };
    let hits: Vec<SearchHit> = hits
        .into_iter()
        .map(|h| {
            let state = states.get(&h.file).copied();
            SearchHit::new(h, state, filtered)
        })
        .collect();
    let (chunks, files) = searcher.counts();
    let stats = ResponseStats {
        mode: mode.to_string(),
        root: root.path.to_string_lossy().into_owned(),
        backend: if root.shared.is_some() { "postgres" } else { "sqlite" }.into(),
        plan_ms,
        search_ms: ms(searched),
        embedder_model: search::needs_embedder(mode).then(|| config.embedder_model.clone()),
        chunks_indexed: chunks,
        files_indexed: files,
        verdict: match judgement.verdict {
            Verdict::Sufficient => "sufficient",
            Verdict::Insufficient => "insufficient",
        }
        .into(),
        verdict_reasons: judgement.reasons.clone(),
        ..ResponseStats::default()
    };
    let mut response = AskResponse::new(plan, hits, warnings, stats);
    let answered = Instant::now();
    let called_for = Called { root, options, allowed: &allowed, judgement: &judgement, records: &records };
    answer_if_called_for(&mut response, config, &called_for);
    response.stats.answer_ms = ms(answered);
    response.count();
    response.stats.latency_ms = ms(started);
    Ok(response)
}

/// The plan's search: its hits (one per file for a list), with the words
/// each matched, and their judgement.
fn run_search(
    plan: &QueryPlan,
    config: &ResolvedConfig,
    mode: SearchMode,
    searcher: &mut dyn AskSearcher,
) -> Result<(Vec<Hit>, Judgement)> {
    let query = plan.l1_query_text.as_str();
    let filter = plan.to_filter().map_err(anyhow::Error::msg)?;
    let request = SearchRequest {
        query,
        mode,
        scope: searcher.scope(),
        k: config.top_k.min(search::MAX_K),
        // A cosine's threshold means nothing to words alone: a search the
        // privacy mode confined to words keeps every match.
        threshold: if mode == SearchMode::Lexical && config.mode != SearchMode::Lexical {
            Threshold::default_at(0.0)
        } else {
            Threshold { at: plan.l1_threshold, chosen: config.threshold_set || plan.l1_threshold != config.threshold }
        },
        filter,
        expansion: searcher.expand(query),
        // A list of files names each once, and still k of them.
        per_file: (plan.intent == Intent::List).then_some(1),
    };
    let mut hits = searcher.search(&request)?;
    search::explain(query, &mut hits);
    let judgement = judge(query, mode, &hits, request.expansion.fired());
    Ok((hits, judgement))
}

/// When the filters a question was read as (`10 MB` as a size, `today` as
/// a date) left nothing though its words find code, a warning that says
/// so: the question may have been about sizes or dates, not a filter.
fn filters_took_all(
    plan: &QueryPlan,
    config: &ResolvedConfig,
    mode: SearchMode,
    searcher: &mut dyn AskSearcher,
) -> Result<Option<String>> {
    if plan.l0_filters.is_empty() {
        return Ok(None);
    }
    let unfiltered = QueryPlan { l0_filters: Default::default(), ..plan.clone() };
    let (hits, _) = run_search(&unfiltered, config, mode, searcher)?;
    let filters = serde_json::to_string(&plan.l0_filters).unwrap_or_default();
    Ok((!hits.is_empty()).then(|| {
        format!(
            "the filters read from the question ({filters}) left no results, though {} match without them; \
             ask without the words read as filters (--plan shows how the question was read)",
            hits.len()
        )
    }))
}

/// What decides whether the chat model is asked, and what it is given.
struct Called<'a> {
    root: &'a ProjectRoot,
    options: &'a AskOptions,
    allowed: &'a Allowed,
    judgement: &'a Judgement,
    /// The hits as records, whole.
    records: &'a [HitRecord],
}

/// Why the chat model is asked (vg-answer's rules: never without hits),
/// or None.
fn answer_reason(response: &AskResponse, called: &Called<'_>) -> Option<&'static str> {
    if response.hits.is_empty() {
        None
    } else if called.options.force_answer {
        Some("forced")
    } else if response.query_plan.requires_l2 {
        Some("requires_l2")
    } else if called.judgement.verdict == Verdict::Insufficient && response.query_plan.intent != Intent::List {
        // A list of files is the answer asked for; words that judge it
        // thin (the question's "list python files" in no file) call for none.
        Some("insufficient")
    } else {
        None
    }
}

/// Ask the chat model when the plan requires it or the hits look thin, if
/// the mode allows one; its answer and citations go into `response`, a
/// failure into its warnings.
fn answer_if_called_for(response: &mut AskResponse, config: &ResolvedConfig, called: &Called<'_>) {
    let Some(reason) = answer_reason(response, called) else { return };
    let Some(url) = called.allowed.chat.as_deref() else {
        if config.llm_url.is_none() {
            response.warnings.push(format!(
                "an answer was called for ({reason}) but no chat model is set (llm_url); the hits are all there is"
            ));
        }
        return;
    };
    let plan = &response.query_plan;
    let settings = ChatSettings::new(url, config.llm_model.as_deref(), Duration::from_secs_f64(config.llm_timeout));
    let asked = ChatClient::connect(&settings)
        .and_then(|client| answer::answer(&client, &plan.raw_user_text, called.records, plan.l2_top_k));
    let answer = match asked {
        Ok(a) => a,
        Err(e) => {
            response
                .warnings
                .push(format!("the chat model gave no answer: {}", one_line(&crate::project::shown::error_line(&e))));
            return;
        }
    };
    cite(response, &answer);
    response.stats.answer_model = Some(answer.model.clone());
    response.stats.answer_reason = Some(reason.into());
    if called.options.learn {
        learn(response, &answer, called);
    }
}

/// `--learn`: the concepts the answer bridges (a word of the question the
/// hits lack, and the identifiers the answer names for it that the hits
/// hold), appended to the project's learned concepts, as vg-answer does.
fn learn(response: &mut AskResponse, answer: &answer::Answer, called: &Called<'_>) {
    // The user's own words name the concepts: the words searched may be a
    // chat model's plan, which named one ("pwnedconcept") the question never
    // said, and the file credited it to the question (audit 232).
    let query = &response.query_plan.raw_user_text;
    let (known, _) = crate::concepts::load(called.root);
    let given = &called.records[..answer.given.min(called.records.len())];
    let learned = answer::concepts_bridged(query, &called.judgement.missing, &answer.cited.text, given, &known);
    if learned.is_empty() {
        return;
    }
    // The question asked is what the file records, not the words searched.
    match answer::append_learned(called.root, &learned, &response.query_plan.raw_user_text, &answer.model) {
        Ok(_) => response.stats.concepts_learned = learned.into_iter().map(|c| c.name).collect(),
        Err(e) => response
            .warnings
            .push(format!("cannot keep the concepts learned: {}", crate::project::shown::error_line(&e))),
    }
}

/// The answer's text and citations into `response`, the hits it cites marked L2.
fn cite(response: &mut AskResponse, answer: &answer::Answer) {
    for c in &answer.cited.citations {
        if let Some(hit) =
            response.hits.iter_mut().find(|h| h.path == c.file && (h.start_line..=h.end_line).contains(&c.line))
        {
            if hit.tier != "L2" {
                hit.cited();
            }
        }
        response.citations.push(Citation { path: c.file.clone(), line: c.line });
    }
    if !answer.cited.dropped.is_empty() {
        response.warnings.push(format!(
            "the answer cited places it was not given, taken out: {}",
            one_line(&answer.cited.dropped.join(", "))
        ));
    }
    response.answer_summary = Some(answer.cited.text.clone());
}

/// Text from elsewhere (a model, an endpoint) as one line without control characters.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(500).collect()
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}
