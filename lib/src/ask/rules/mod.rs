//! The rules planner: a question in plain words into a `QueryPlan` with no
//! model and no network, the same plan for the same words and moment.
//!
//! Each rule is a pattern over the question that, when it matches, becomes
//! a filter (time, size, exclusions, test-only, languages, tests, paths, in that
//! order: an exclusion must claim `not in tests` before `in tests` is read
//! as an inclusion, and `python tests` is a language's before it is tests') and leaves a mark where its words were; what is left
//! between the marks, less the words every question has (`find`, `where
//! do we`, `files that`), is what is searched for. The intent is read from
//! the question's shape (`explain`, `where is X defined`, `which files`).
//!
//! `time.rs` reads spans of time, `exclusions.rs` what is left out,
//! `inclusions.rs` the sizes, tests, languages and paths kept; `tests.rs`
//! holds the table of phrasings the rules are held to.

mod exclusions;
mod inclusions;
mod time;

use std::sync::LazyLock;
use std::time::SystemTime;

use regex::{Captures, Regex};

use super::lexicon::{language_names, normalized, TEST_GLOBS};
use super::plan::{Intent, L0Filters, QueryPlan, ANSWER_SKILL, RULES_PLANNER_ID};
use crate::project::PrivacyMode;

/// What a plan is made with besides the question.
#[derive(Clone, Copy, Debug)]
pub struct PlanContext {
    /// The moment "this week" and "yesterday" count from.
    pub now: SystemTime,
    /// The config's threshold, the plan's `l1_threshold`.
    pub threshold: f32,
    /// Whether a flag or a config file set it: a question of nothing but
    /// filters is otherwise held to none (every file they admit).
    pub threshold_set: bool,
    /// Hits a chat model is given (`l2_top_k`).
    pub context_hits: usize,
    pub privacy_mode: PrivacyMode,
}

/// Where a rule took words out of the question.
const MARK: &str = " ; ";

/// Verbs that say a file was changed.
const CHANGED: &str = r"(?:changed|modified|edited|updated|touched|committed|written|added|created|saved)";

/// Words that leave something out.
const EXCLUDING: &str = r"\b(?:not|except(?:\s+for)?|excluding|exclude|without|ignoring|ignore|skipping|skip|but\s+not|outside(?:\s+of)?|other\s+than|apart\s+from|no)\s+";

/// Words that leave out what they are joined to, at the start of a word:
/// "non-rust files", "non python code", "all but rust files" (audit 248:
/// they kept only rust). Only where a kind of file follows (files, code,
/// sources; tests' files or code), so that prose ("non-blocking IO", "all
/// but json input") and paths (`src/nonblocking/`) stay words (review 248);
/// "all but tests" needs none.
const JOINED: &str = r#"[\s(\[{"'`,;:](?:non(?:-|\s+)|(?:all|anything|everything)\s+but\s+)"#;

/// "All but", "everything but": what leaves out a list of any kind ("all
/// but tests and docs"); a directory alone stays words, as in "strip all
/// but build metadata" (review 262).
const ALL_BUT: &str = r#"[\s(\[{"'`,;:](?:all|anything|everything)\s+but\s+"#;

/// Benchmarks by name: left out as `BENCH_GLOBS` ("everything but tests
/// and benchmarks"; review 257: searched "benchmarks").
const BENCHES: &str = r"bench(?:es|marks?)?";

/// The kinds of file a language's name may be followed by ("rust files",
/// "python scripts"): what makes a joined "non-" or "all but" a filter.
const KINDS: &str = r"files?|code|sources?|source\s+files|modules?|scripts?|programs?|crates?|packages?|tests?|test\s+files|classes|functions|docs|documents|documentation|notes";

/// A name of tests, with what may follow it: a path on from it
/// (`tests/unit/`: that directory, never every test file), or a `.` or `-`
/// and a word (`tests.py`, `spec-compliant`), which go on with the name
/// and are no name of tests at all (review 248).
const TESTS_NAMED: &str = r"(?P<name>test\s+suite|test\s+files|test\s+code|testing\s+code|tests?|specs?)\b(?:(?P<slashed>(?:/[\w.*-]*)+)|(?P<on>[.-]\w))?";

/// The verbs of `EXCLUDING`: a question of how or where that leaves
/// things out by one of them and asks about nothing else asks about the
/// leaving out ("where do we skip tests"), not for every other file.
const LEAVING_OUT_VERB: &str = r"\b(?:excluding|exclude|ignoring|ignore|skipping|skip)\b";

fn re(pattern: &str) -> Regex {
    Regex::new(&format!("(?i){pattern}")).expect("a valid rule")
}

/// The plan the rules make of `question`.
pub fn plan_by_rules(question: &str, ctx: &PlanContext) -> QueryPlan {
    // Control characters (a pasted newline, an escape) become spaces: what
    // is searched for is one line a person can read.
    let spaced: String = question.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let raw = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    let raw = raw.as_str();
    let mut work = Work { text: format!(" {} ", normalized(raw)), filters: L0Filters::default(), now: ctx.now };
    work.times();
    work.sizes();
    work.exclusions();
    work.test_only();
    work.languages();
    work.tests();
    work.paths();
    let rest = work.text.replace(';', " ");
    let (intent, symbol) = intent_of(&normalized(raw), &rest);
    let topic = match symbol {
        Some(symbol) => symbol,
        None => topic(&work.text),
    };
    // "where do we skip tests": the leaving out is what is asked about; a
    // list of files that leaves some out ("list files excluding tests",
    // "files, ignoring tests") asks for the others.
    let asks_how = (intent != Intent::List && ASKS_HOW.is_match(raw)) || WHICH_DO.is_match(raw);
    if topic.is_empty() && leaves_out_only(&work.filters) && asks_how {
        work.filters = L0Filters::default();
    }
    let filtered = !work.filters.is_empty();
    let no_topic = topic.is_empty();
    let (intent, l1_query_text) = match topic.is_empty() {
        // Nothing but filters: the files they admit are the answer, and
        // the question's own words are what there is to rank them by.
        true if filtered && intent == Intent::Search => (Intent::List, raw.to_string()),
        true => (intent, raw.to_string()),
        false => (intent, topic),
    };
    let requires_l2 = intent == Intent::Explain;
    // The files the filters admit are the answer: the question's words
    // order them, they cut none (a cosine of "python files changed this
    // week" with any code is below every threshold, and nothing came back).
    let only_filters = no_topic && filtered && intent == Intent::List;
    QueryPlan {
        intent,
        l0_filters: work.filters,
        l1_query_text,
        l1_threshold: if only_filters && !ctx.threshold_set { -1.0 } else { ctx.threshold },
        requires_l2,
        l2_skills: if requires_l2 { vec![ANSWER_SKILL.to_string()] } else { Vec::new() },
        l2_top_k: ctx.context_hits,
        privacy_mode: ctx.privacy_mode,
        raw_user_text: question.trim().to_string(),
        planner_model_id: RULES_PLANNER_ID.to_string(),
    }
}

/// A question of how or where something is done, by a verb of leaving out.
static ASKS_HOW: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(r"(?:^\s*(?:do|does|did|is|are|can)|\b(?:where|how|why|when))\b.*{LEAVING_OUT_VERB}"))
});

/// A language's name, as a word: one of a list the rules took whole.
static A_LANGUAGE: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b(?:{})\b", language_names())));

/// "which files skip tests": the files that do the leaving out (a list
/// leaves out by a participle, "which files excluding tests").
static WHICH_DO: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(?:which|what)\s+\w+\s+(?:skip|ignore|exclude)\b"));

/// Whether `filters` only leave files out.
fn leaves_out_only(filters: &L0Filters) -> bool {
    !filters.exclude_globs.is_empty()
        && *filters == L0Filters { exclude_globs: filters.exclude_globs.clone(), ..L0Filters::default() }
}
/// The question as the rules work through it, and the filters taken so far.
struct Work {
    text: String,
    filters: L0Filters,
    now: SystemTime,
}

impl Work {
    /// Every match of `rule` handed to `take`, which returns the text to
    /// leave in its place (`MARK`, and any words it matched only to see
    /// where they end), or None to leave the match as it was.
    fn take(
        &mut self,
        rule: &Regex,
        mut take: impl FnMut(&Captures<'_>, &mut L0Filters, SystemTime) -> Option<String>,
    ) {
        let (filters, now) = (&mut self.filters, self.now);
        let replaced = rule.replace_all(&self.text, |caps: &Captures<'_>| {
            take(caps, filters, now).unwrap_or_else(|| caps[0].to_string())
        });
        self.text = replaced.into_owned();
    }
}

/// The extensions (`.yml`) an item of a question names: one (`.yml`,
/// `*.md`), several joined by slashes (`.yml/.yaml`), or a star's with a
/// slash after it (`*.md/`); None for a directory (`.github/`,
/// `.github/workflows`), which a slash after a name makes.
fn extensions_written(item: &str) -> Option<Vec<String>> {
    static ONE: LazyLock<Regex> = LazyLock::new(|| re(r"^\*?\.([a-z0-9+]{1,10})$"));
    let item = item.trim_matches('`');
    let listed = match item.strip_suffix('/') {
        Some(star) if item.starts_with('*') => star,
        Some(_) => return None,
        None => item,
    };
    listed.split('/').map(|one| ONE.captures(one).map(|c| format!(".{}", c[1].to_ascii_lowercase()))).collect()
}

/// A directory as a glob from the root: `./src/net` → `src/net/`; a path
/// naming a file or holding a wildcard is taken as it is. One written from
/// `/` keeps its slash: `ask::places` reads it against the root.
fn dir_glob(path: &str) -> String {
    // A sentence's full stop is no part of the path (review 248: `tests/.`
    // matched nothing); a `..` is, for the check that refuses it (review 249).
    let path = path.trim_matches('`').trim_start_matches("./");
    let path = match path.strip_suffix('.') {
        Some(stem) if !stem.is_empty() && !stem.ends_with('.') => stem,
        _ => path,
    };
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    if path.contains('*') || (last.contains('.') && !path.ends_with('/')) {
        path.to_string()
    } else {
        format!("{}/", path.trim_end_matches('/'))
    }
}

/// What a match of `TESTS_NAMED` names.
enum TestsNamed {
    /// Every test file (`TEST_GLOBS`).
    Every,
    /// The directory written (`tests/unit/`), as a glob.
    Directory(String),
}

/// What the match `c` of `TESTS_NAMED` names; None when the name goes on
/// (`tests.py`), or when it is one word that `needs_kind` of file after it
/// ("non-test" alone, as in "non-test environments").
fn tests_named(c: &Captures<'_>, needs_kind: bool) -> Option<TestsNamed> {
    let name = &c["name"];
    let one_word = !name.contains(char::is_whitespace);
    if c.name("on").is_some() || (needs_kind && one_word) {
        return None;
    }
    Some(match c.name("slashed") {
        Some(rest) if one_word => TestsNamed::Directory(dir_glob(&format!("{name}{}", rest.as_str()))),
        _ => TestsNamed::Every,
    })
}

fn include_tests(f: &mut L0Filters) {
    for g in TEST_GLOBS {
        if !f.path_globs.iter().any(|p| p == g) {
            f.path_globs.push(g.to_string());
        }
    }
}

fn add_extensions(f: &mut L0Filters, extensions: impl IntoIterator<Item = String>) {
    for e in extensions {
        if !f.extensions.contains(&e) {
            f.extensions.push(e);
        }
    }
}

/// The intent, from the question as asked (`explain`, `which files`) and
/// as left once its filters are out (`where is parse_config defined`);
/// with the symbol a locating question names.
fn intent_of(question: &str, rest: &str) -> (Intent, Option<String>) {
    static EXPLAIN: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^\s*(?:please\s+)?(?:explain|describe|summari[sz]e|walk\s+me\s+through|tell\s+me\s+(?:about|how|why)|why)\b|\bhow\s+(?:does|do|is|are)\b.*\bwork(?:s|ing)?\b|^\s*what\s+(?:does|do)\b.*\bdo\s*\??\s*$|\bwhat\s+is\s+the\s+(?:purpose|point|role)\s+of\b",
        )
    });
    static LIST: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^\s*(?:please\s+)?(?:list|enumerate)\b|\b(?:which|what)\s+(?:[\w+#]+\s+)?files\b|^\s*(?:show|find|give|get)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?(?:[\w+#]+\s+)?files\b|^\s*all\s+(?:[\w+#]+\s+)?files\b",
        )
    });
    static LOCATE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^\s*(?:where\s+(?:is|are)|where's|find|show(?:\s+me)?|locate|go\s+to|jump\s+to)\s+(?:the\s+)?((?:definition|declaration|implementation)\s+of\s+)?(?:the\s+)?(?:(?:function|method|class|struct|type|trait|enum|interface|constant|const|variable)\s+)?(`?)([A-Za-z_]\w*(?:(?:::|\.|->)[A-Za-z_]\w*)*)`?((?:\s+(?:defined|declared|implemented|function|method|class|struct|type|trait|enum))*)\s*\??\s*$",
        )
    });
    if EXPLAIN.is_match(question) {
        return (Intent::Explain, None);
    }
    if let Some(c) = LOCATE.captures(rest) {
        let symbol = &c[3];
        let marked = c.get(1).is_some() || !c[2].is_empty() || !c[4].is_empty();
        if marked || code_like(symbol) {
            return (Intent::Locate, Some(symbol.to_string()));
        }
    }
    if LIST.is_match(question) {
        return (Intent::List, None);
    }
    (Intent::Search, None)
}

/// Whether a word reads as an identifier rather than English: qualified,
/// with an underscore, or with a capital after its first letter.
fn code_like(word: &str) -> bool {
    word.contains("::")
        || word.contains('.')
        || word.contains("->")
        || word.contains('_')
        || word.chars().skip(1).any(|c| c.is_ascii_uppercase())
}

/// What is left to search for: each stretch between the rules' marks
/// without the words every question has at its ends, joined.
fn topic(text: &str) -> String {
    static LEADING: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^\s*(?:please|pls|can\s+you|could\s+you|would\s+you|help\s+me|i\s+(?:need|want)\s+to|i'd\s+like\s+to|let's|show\s+me|tell\s+me|give\s+me|find\s+me|find|show|list|enumerate|search(?:\s+for)?|look(?:\s+for|\s+up)?|locate|grep(?:\s+for)?|explain|describe|summari[sz]e|walk\s+me\s+through|where|which|what|how|why|when|who|is|are|does|do|did|was|were|can|should|would|will|'s|we|i|you|it|they|our|my|all|the|any|some|every|those|these|a|an|me|us|anything|something|stuff|source|files?|code|functions?|methods?|classes|class|places?|spots?|parts?|pieces?|snippets?|lines?|that|whose|with|to|for|about|of|in|on|and|or|containing|contains?|using|dealing\s+with|responsible\s+for|related\s+to|relating\s+to|regarding)\b(?P<joined>[-.]\w)?[\s,]*",
        )
    });
    static TRAILING: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?P<joined>\w[-.])?[\s,]*\b(?:please|in\s+(?:the|this|our)\s+(?:code\s*base|code|project|repo|repository)|work|works|working|done|handled|implemented|defined|declared|happen|happens|located|live|lives|and|or|that|which|with|the|in|on|of|for|from|to|a|an|files?|code|is|are|do|does)\s*[?.!]*\s*$",
        )
    });
    let mut parts = Vec::new();
    for (i, stretch) in text.split(';').enumerate() {
        let mut part = stretch.trim().trim_end_matches(['?', '.', '!', ',', ':']).to_string();
        // A filter taken before leaves the comma after it ("excluding
        // tests, where is retry logic"); a first stretch keeps its own (`::new`).
        if i > 0 {
            part = part.strip_prefix(',').map_or(part.clone(), |rest| rest.trim_start().to_string());
        }
        loop {
            let before = part.len();
            part = unless_joined(&LEADING, &part);
            part = unless_joined(&TRAILING, &part);
            part = part.trim().trim_end_matches(['?', '.', '!', ',', ':']).to_string();
            if part.len() == before {
                break;
            }
        }
        let part = part.trim_matches(|c: char| c == '`' || c == '"' || c == '\'' || c.is_whitespace());
        if !part.is_empty() {
            parts.push(part.to_string());
        }
    }
    parts.join(" ")
}

/// `text` less `rule`'s match, unless the word matched is joined to
/// another by `-` or `.` (`do-while`, `opt-in`, `a.out`): one word, kept.
fn unless_joined(rule: &Regex, text: &str) -> String {
    match rule.captures(text) {
        Some(c) if c.name("joined").is_none() => {
            let m = c.get(0).expect("the whole match");
            format!("{}{}", &text[..m.start()], &text[m.end()..])
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
