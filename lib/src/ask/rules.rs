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
//! `tests` below holds the table of phrasings the rules are held to.

use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use regex::{Captures, Regex};

use super::lexicon::{
    bytes, extensions_of, language_names, normalized, number, seconds_in, BENCH_GLOBS, COMMON_DIRS, LANGUAGES,
    LARGE_FILE, NUMBER, SIZE, SMALL_FILE, TEST_GLOBS, TIME_UNIT,
};
use super::plan::{utc, Intent, L0Filters, QueryPlan, ANSWER_SKILL, RULES_PLANNER_ID};
use crate::project::PrivacyMode;
use crate::search::parse_when;

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

/// A month's name as it begins.
const MONTH: &str = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)";

/// A date as a plan may be asked for it: a day, a month or a year, in
/// digits or with the month's name (`March 2026`, `March 1st, 2026`).
const DATE: &str = r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?Z?)?|\d{4}-\d{2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?,?)?\s+(?:19|20)\d{2}|(?:19|20)\d{2}";

/// What may bound a span besides a date: a day, the week past, a moment ago.
const RELATIVE_DAY: &str = r"today|yesterday|last\s+(?:week|month|year)";

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

/// `f`'s span made to begin no earlier than `at`: a second phrase of time
/// narrows the first ("this week in 2025" is no span, and is said so),
/// it does not replace it.
fn after(f: &mut L0Filters, at: String) {
    f.modified_after = Some(f.modified_after.take().filter(|had| *had > at).unwrap_or(at));
}

/// `f`'s span made to end no later than `at` (`after`'s twin).
fn before(f: &mut L0Filters, at: String) {
    f.modified_before = Some(f.modified_before.take().filter(|had| *had < at).unwrap_or(at));
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

    fn times(&mut self) {
        static BETWEEN: LazyLock<Regex> = LazyLock::new(|| {
            let bound = format!(r"{DATE}|{RELATIVE_DAY}|(?:{NUMBER})\s+{TIME_UNIT}\s+ago");
            // The first may be a month whose year the second gives ("January and March 2024").
            let first = format!(r"{bound}|{MONTH}[a-z]*\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?");
            re(&format!(
                r"\b(?:{CHANGED}\s+)?(?:between|from)\s+({first})\s+(?:and|to|until|till|through)\s+({bound})\b"
            ))
        });
        // "between A and B" before "from A" and "last week", which would leave "and B".
        // Each bound is a period, and the span runs from the earlier's start
        // to the later's end: "between January 2024 and March 2024" holds March,
        // and a span written backwards is the same span.
        self.take(&BETWEEN, |c, f, now| {
            let b = period(&c[2], now)?;
            let a = period(&c[1], now).or_else(|| first_without_year(&c[1], &c[2], b, now))?;
            after(f, utc(a.0.min(b.0)));
            before(f, utc(a.1.max(b.1)));
            Some(MARK.into())
        });
        // "before last month", "until 2 weeks ago", "older than yesterday":
        // the span ends there, on the side its word says ("until" holds the
        // day). Before LAST, AGO and TODAY, which read the bound as a start
        // and left "before" in the words.
        static UNTIL: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:{CHANGED}\s+)?(before|until|till|prior\s+to|older\s+than)\s+({RELATIVE_DAY}|(?:{NUMBER})\s+{TIME_UNIT}\s+ago)\b"
            ))
        });
        self.take(&UNTIL, |c, f, now| {
            let (start, end) = period(&c[2], now)?;
            let holds_the_day = matches!(c[1].to_ascii_lowercase().as_str(), "until" | "till");
            before(f, utc(if holds_the_day { end } else { start }));
            Some(MARK.into())
        });
        // "after yesterday", "after last week": the span starts where the
        // bound ends (as "after 2025" starts in 2026).
        static AFTER: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?after\s+({RELATIVE_DAY}|(?:{NUMBER})\s+{TIME_UNIT}\s+ago)\b"))
        });
        self.take(&AFTER, |c, f, now| {
            after(f, utc(period(&c[1], now)?.1));
            Some(MARK.into())
        });
        static LAST: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:{CHANGED}\s+)?(?:(?:in|within|during|over|from|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+(?:({NUMBER})\s+)?({TIME_UNIT})\b"
            ))
        });
        static THIS: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?(?:(?:in|during|since)\s+)?(?:this|the\s+current)\s+(week|month|year)\b"))
        });
        static SINCE_LAST: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:{CHANGED}\s+)?since\s+last\s+(week|month|year)\b")));
        static OLDER: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:(?:not\s+(?:been\s+)?{CHANGED}|unchanged|untouched|stale)\s+(?:in|for|since)\s+(?:the\s+)?(?:(?:last|past)\s+)?|older\s+than\s+|{CHANGED}\s+(?:more\s+than|over)\s+)(?:({NUMBER})\s+)?({TIME_UNIT})(?:\s+ago)?\b"
            ))
        });
        static AGO: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?(?:(?:since|within)\s+)?({NUMBER})\s+({TIME_UNIT})\s+ago\b"))
        });
        let back = |n: Option<&str>, unit: &str, now: SystemTime| {
            let n = n.map_or(Some(1), number)?;
            now.checked_sub(Duration::from_secs(n.checked_mul(seconds_in(unit))?))
        };
        self.take(&OLDER, |c, f, now| {
            before(f, utc(back(c.get(1).map(|m| m.as_str()), &c[2], now)?));
            Some(MARK.into())
        });
        // "since last month" before "last month", which would leave "since".
        for rule in [&*SINCE_LAST, &*THIS] {
            self.take(rule, |c, f, now| {
                after(f, utc(period(&format!("last {}", &c[1]), now)?.0));
                Some(MARK.into())
            });
        }
        for rule in [&*LAST, &*AGO] {
            self.take(rule, |c, f, now| {
                after(f, utc(back(c.get(1).map(|m| m.as_str()), &c[2], now)?));
                Some(MARK.into())
            });
        }
        self.days_and_dates();
    }

    /// `today`, `yesterday`, `recently`, and dates: since, before, in a year.
    fn days_and_dates(&mut self) {
        static TODAY: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:{CHANGED}\s+)?(since\s+)?(today|yesterday)\b")));
        static RECENTLY: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:recently\s+{CHANGED}|{CHANGED}\s+(?:recently|lately))\b")));
        static SINCE: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:{CHANGED}\s+)?(since|after|from|before|until|till|prior\s+to)\s+({DATE})\b"))
        });
        static DURING: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\b(?:{CHANGED}\s+)?(?:in|during)\s+({DATE})\b")));
        self.take(&TODAY, |c, f, now| {
            let (start, end) = period(&c[2], now)?;
            after(f, utc(start));
            // "since yesterday" runs to now; "yesterday" is the day; "today" runs to now.
            if c[2].eq_ignore_ascii_case("yesterday") && c.get(1).is_none() {
                before(f, utc(end));
            }
            Some(MARK.into())
        });
        // "until March" holds March; "before March" does not. "since March"
        // holds it too; "after March" starts in April.
        self.take(&SINCE, |c, f, now| {
            let (start, end) = period(&c[2], now)?;
            match c[1].to_ascii_lowercase().as_str() {
                "since" | "from" => after(f, utc(start)),
                "after" => after(f, utc(end)),
                "until" | "till" => before(f, utc(end)),
                _ => before(f, utc(start)),
            }
            Some(MARK.into())
        });
        self.take(&RECENTLY, |_, f, now| {
            after(f, utc(now - Duration::from_secs(14 * 86_400)));
            Some(MARK.into())
        });
        self.take(&DURING, |c, f, now| {
            let (start, end) = period(&c[1], now)?;
            after(f, utc(start));
            before(f, utc(end));
            Some(MARK.into())
        });
        if self.filters.modified_after.is_some() || self.filters.modified_before.is_some() {
            // "changed rust files this week": the verb said only what the span says.
            static VERB: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b{CHANGED}\b")));
            self.take(&VERB, |_, _, _| Some(MARK.into()));
        }
    }

    fn sizes(&mut self) {
        static AT_LEAST: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:(?:larger|bigger|greater|more|heavier)\s+than|over|above|at\s+least|exceeding)\s+{SIZE}"
            ))
        });
        static AT_MOST: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(r"\b(?:(?:smaller|less|lighter)\s+than|under|below|at\s+most|up\s+to|within)\s+{SIZE}"))
        });
        static BETWEEN: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"\bbetween\s+(\d+(?:\.\d+)?)\s*([a-z]+)?\s+and\s+{SIZE}")));
        static BIG: LazyLock<Regex> = LazyLock::new(|| re(r"\b(big|large|huge|giant|small|tiny)\s+files?\b"));
        self.take(&BETWEEN, |c, f, _| {
            let unit = c.get(2).map_or(&c[4], |u| u.as_str());
            f.min_size = Some(bytes(&c[1], unit)?);
            f.max_size = Some(bytes(&c[3], &c[4])?);
            Some(MARK.into())
        });
        self.take(&AT_LEAST, |c, f, _| {
            f.min_size = Some(bytes(&c[1], &c[2])?);
            Some(MARK.into())
        });
        self.take(&AT_MOST, |c, f, _| {
            f.max_size = Some(bytes(&c[1], &c[2])?);
            Some(MARK.into())
        });
        self.take(&BIG, |c, f, _| {
            match c[1].to_ascii_lowercase().as_str() {
                "small" | "tiny" => f.max_size = Some(SMALL_FILE),
                _ => f.min_size = Some(LARGE_FILE),
            }
            Some(MARK.into())
        });
    }

    fn exclusions(&mut self) {
        self.mixed_exclusions();
        self.joined_and_file_exclusions();
        static TESTS: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"(?:{EXCLUDING}|(?P<joined>{JOINED}))(?:(?:in|the|any|our)\s+)*(?:unit\s+|integration\s+)?{TESTS_NAMED}(?:\s+(?:dirs?|directory|folder)\b)?(?P<kind>\s+(?:(?P<lang>{})\s+)?(?:{KINDS})\b)?",
                language_names()
            ))
        });
        static LANGS: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"(?:{EXCLUDING}|(?P<joined>{JOINED}))(?:(?:in|the|any)\s+)*(?P<lang>{})(?P<kind>\s+(?:{KINDS}))?\b(?P<on>[.-]\w)?",
                language_names()
            ))
        });
        // A list ("except in vendor/ and docs/", "not *.md or *.txt")
        // leaves each of its items out.
        static EXTENSIONS: LazyLock<Regex> = LazyLock::new(|| {
            // Several joined by slashes (`.js/.ts`) are a list; a slash
            // after one ends a directory's name (`.github/`): DIRS's.
            let ext = r"\*?\.[a-z0-9+]{1,10}(?:/\*?\.[a-z0-9+]{1,10})*\b/?";
            re(&format!(r"{EXCLUDING}(?:(?:in|the|any)\s+)*((?:{ext}(?:\s*,?\s*(?:and|or|,)\s+)?)+)(?:\s+files?\b)?"))
        });
        static DIRS: LazyLock<Regex> = LazyLock::new(|| {
            let dir = format!(r"`?(?:(?:\.?/)?(?:[\w.-]+/)+[\w.-]*|\b(?:{BENCHES}|{COMMON_DIRS})\b/?)`?");
            let joined = r"\s*,?\s*(?:and|or|,)\s+(?:(?:in|under|the)\s+)*";
            re(&format!(
                r"{EXCLUDING}(?:(?:in|under|inside|from|the)\s+)*({dir}(?:{joined}{dir})*)(?:\s+(?:dirs?|directory|directories|folders?|trees?)\b)?"
            ))
        });
        static ITEM: LazyLock<Regex> = LazyLock::new(|| {
            // A path before an extension: `.github/workflows` is a directory.
            re(&format!(r"(?:\.?/)?(?:[\w.-]+/)+[\w.-]*|\*?\.[a-z0-9+]{{1,10}}\b|\b(?:{BENCHES}|{COMMON_DIRS})\b"))
        });
        // `tests/` with its slash is that directory (audit 248: "except
        // tests/fixtures/" left out every test and searched "fixtures/").
        // "non-test" counts before a kind of file ("non-test rust files",
        // whose language the rules that include then read); "all but
        // tests" alone (review 249: "everything but tests about auth" kept
        // only the tests, read by "tests about").
        self.take(&TESTS, |c, f, _| {
            // "All but tests" needs no kind after it, "all but test data" does
            // (review 255: read as the tests, where it is data).
            let joined = c.name("joined").map(|j| j.as_str());
            let but_plural = joined.is_some_and(|j| j.ends_with("but ")) && matches!(&c["name"], "tests" | "specs");
            let needs_kind = joined.is_some() && !but_plural && c.name("kind").is_none();
            let name = tests_named(c, needs_kind)?;
            match name {
                TestsNamed::Directory(dir) => f.exclude_globs.push(dir),
                TestsNamed::Every => f.exclude_globs.extend(TEST_GLOBS.iter().map(|g| g.to_string())),
            }
            Some(match c.name("lang") {
                Some(lang) => format!("{MARK}{} files ", lang.as_str()),
                None => MARK.into(),
            })
        });
        self.take(&LANGS, |c, f, _| {
            if c.name("on").is_some() || (c.name("joined").is_some() && c.name("kind").is_none()) {
                return None;
            }
            f.exclude_globs.extend(extensions_of(&c["lang"]).iter().map(|e| format!("*{e}")));
            Some(MARK.into())
        });
        self.take(&EXTENSIONS, |c, f, _| {
            let listed: Option<Vec<Vec<String>>> =
                ITEM.find_iter(&c[1]).map(|e| extensions_written(e.as_str())).collect();
            f.exclude_globs.extend(listed?.into_iter().flatten().map(|e| format!("*{e}")));
            Some(MARK.into())
        });
        self.take(&DIRS, |c, f, _| {
            // "modules with no benchmarks", "functions without benchmark
            // coverage": what is missing is asked about (review 262).
            let absent = NO_OR_WITHOUT.is_match(&c[0]);
            if absent && ITEM.find_iter(&c[1]).any(|d| is_benches(d.as_str())) {
                return None;
            }
            for item in ITEM.find_iter(&c[1]).map(|d| d.as_str()) {
                match extensions_written(item) {
                    Some(extensions) => f.exclude_globs.extend(extensions.iter().map(|e| format!("*{e}"))),
                    None if is_benches(item) => f.exclude_globs.extend(BENCH_GLOBS.iter().map(|g| g.to_string())),
                    None => f.exclude_globs.push(dir_glob(item)),
                }
            }
            Some(MARK.into())
        });
    }

    /// A list of languages joined to "non-" or "all but", and a file named
    /// whole: each left out before the rules of one name read a part.
    fn joined_and_file_exclusions(&mut self) {
        // "all but rust and python files", "non-rust, non-python files":
        // each of the list left out (review 249: the rules that include
        // took them).
        static JOINED_LIST: LazyLock<Regex> = LazyLock::new(|| {
            let one = language_names();
            re(&format!(
                r"{JOINED}(?P<langs>(?:{one})(?:\s*(?:,|/|&|\band\b|\bor\b)\s*(?:(?:and|or)\s+)?(?:non(?:-|\s+))?(?:{one}))+)\s+(?:{KINDS})\b(?P<only>-only\s+(?:(?:{one})\s+)?(?:{KINDS})\b)?"
            ))
        });
        self.take(&JOINED_LIST, |c, f, _| {
            // "non-rust and python test-only files": the tests alone are
            // `test_only`'s (review 259: "-only" was searched for). Only
            // there: "non-rust and python test-heavy files" leaves them out
            // here, or the rules that include kept them (review 262).
            let whole = c.get(0).map_or(0, |m| m.start());
            let kind = c.name("only").map(|only| c[0][..only.start() - whole].to_ascii_lowercase());
            if kind.is_some_and(|k| k.ends_with("test") || k.ends_with("tests")) {
                return None;
            }
            for name in A_LANGUAGE.find_iter(&c["langs"]) {
                f.exclude_globs.extend(extensions_of(name.as_str()).iter().map(|e| format!("*{e}")));
            }
            Some(MARK.into())
        });
        // A file named whole ("not in go.mod", "excluding main.rs"): that
        // file left out (review 249: the rules that include took "in go" or
        // "in c.h" and kept only those).
        static FILE: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"{EXCLUDING}(?:(?:in|the|file)\s+)*`?(?P<file>[A-Za-z_][\w-]*\.[A-Za-z][A-Za-z0-9]{{0,7}})`?\b(?P<on>[.-]\w)?(?:\s+file\b)?"
            ))
        });
        self.take(&FILE, |c, f, _| {
            if c.name("on").is_some() {
                return None;
            }
            f.exclude_globs.push(c["file"].to_string());
            Some(MARK.into())
        });
    }

    /// A list whose items are of several kinds ("vendor/ and *.md", "tests
    /// or docs", "rust or python"): each left out by its kind. The rules of
    /// one kind took their own items and left the rest to the rules that
    /// include ("retry excluding vendor/ and *.md" kept *.md alone).
    fn mixed_exclusions(&mut self) {
        static MIXED: LazyLock<Regex> = LazyLock::new(|| {
            let item = format!(
                r"(?:`?(?:\.?/)?(?:[\w.-]+/)+[\w.-]*`?|\*?\.[a-z0-9+]{{1,10}}\b|\b(?:tests?\b/?|(?:{BENCHES}|{COMMON_DIRS})\b/?|(?:{})\b))",
                language_names()
            );
            let joined = r"\s*,?\s*(?:and|or|,)\s+(?:(?:in|under|the)\s+)*";
            // "everything but tests and docs" too (review 255: it left out the tests alone).
            re(&format!(
                r"(?:{EXCLUDING}|{ALL_BUT})(?:(?:in|under|inside|from|the|any)\s+)*({item}(?:{joined}{item})+)(?:\s+(?:files?|dirs?|directories|folders?)\b)?"
            ))
        });
        static MIXED_ITEM: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"`?(?:\.?/)?(?:[\w.-]+/)+[\w.-]*`?|\*?\.[a-z0-9+]{{1,10}}\b|\b(?:tests?\b/?|(?:{BENCHES}|{COMMON_DIRS})\b/?|(?:{})\b)",
                language_names()
            ))
        });
        self.take(&MIXED, |c, f, _| {
            for item in MIXED_ITEM.find_iter(&c[1]).map(|m| m.as_str()) {
                let word = item.trim_end_matches('/').to_ascii_lowercase();
                if item.eq_ignore_ascii_case("test") || item.eq_ignore_ascii_case("tests") {
                    f.exclude_globs.extend(TEST_GLOBS.iter().map(|g| g.to_string()));
                } else if is_benches(item) {
                    f.exclude_globs.extend(BENCH_GLOBS.iter().map(|g| g.to_string()));
                } else if let Some(extensions) = extensions_written(item) {
                    f.exclude_globs.extend(extensions.iter().map(|e| format!("*{e}")));
                } else if !item.contains('/') && !extensions_of(&word).is_empty() {
                    f.exclude_globs.extend(extensions_of(&word).iter().map(|e| format!("*{e}")));
                } else {
                    f.exclude_globs.push(dir_glob(item));
                }
            }
            Some(MARK.into())
        });
    }

    /// "test-only code", "test-only rust files": only the tests (of that
    /// language), read before the language's rules take its files.
    fn test_only(&mut self) {
        // Before a kind of file only: "a test-only flag" may be set anywhere.
        // The languages before it too ("rust test-only files", "rust and
        // python test-only files"; review 257), each left out after "non-"
        // or "all but" (review 258: kept; review 259: "rust and non-python").
        // "non-test-only" is words, never the tests alone (review 259).
        static TEST_ONLY: LazyLock<Regex> = LazyLock::new(|| {
            let langs = language_names();
            let list = format!(r"(?:{langs})(?:\s*(?:,|/|&|\band\b|\bor\b)\s*(?:non[-\s]+)?(?:{langs}))*");
            re(&format!(
                r"(?:(?P<neg>{JOINED})?\b(?P<before>{list})\s+|(?P<not_tests>\bnon[-\s]+))?\btests?-only\s+(?:(?P<lang>{langs})\s+)?(?:{KINDS})\b"
            ))
        });
        static EACH_LANG: LazyLock<Regex> =
            LazyLock::new(|| re(&format!(r"(?P<non>\bnon[-\s]+)?\b(?P<lang>{})\b", language_names())));
        self.take(&TEST_ONLY, |c, f, _| {
            if c.name("not_tests").is_some() {
                return None;
            }
            include_tests(f);
            let before = c.name("before").map_or("", |m| m.as_str());
            for each in EACH_LANG.captures_iter(before) {
                let extensions = extensions_of(&each["lang"]).iter().map(|e| e.to_string());
                match c.name("neg").is_some() || each.name("non").is_some() {
                    true => f.exclude_globs.extend(extensions.map(|e| format!("*{e}"))),
                    false => add_extensions(f, extensions),
                }
            }
            if let Some(lang) = c.name("lang") {
                add_extensions(f, extensions_of(lang.as_str()).iter().map(|e| e.to_string()));
            }
            // The character before "non-" that the match took stays.
            let kept = c.name("neg").and_then(|n| n.as_str().chars().next());
            Some(format!("{}{MARK}", kept.map_or(String::new(), String::from)))
        });
    }

    fn tests(&mut self) {
        static IN_TESTS: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:in|under|inside|within|from|among)\s+(?:(?:the|our)\s+)?(?:unit\s+|integration\s+)?{TESTS_NAMED}(?:\s+(?:directory|dir|folder)\b)?"
            ))
        });
        static TEST_FILES: LazyLock<Regex> = LazyLock::new(|| {
            re(
                r"\b(?:unit\s+|integration\s+)?(?:tests?|test\s+files|test\s+cases|specs?)\s+(?:that|which|where|for|of|about|covering|checking|verifying)\b",
            )
        });
        // `spec/` or `tests/unit/`, with a slash, is that directory (audit
        // 248: "markdown files in spec/" took every test file).
        self.take(&IN_TESTS, |c, f, _| {
            match tests_named(c, false)? {
                TestsNamed::Directory(dir) => f.path_globs.push(dir),
                TestsNamed::Every => include_tests(f),
            }
            Some(MARK.into())
        });
        self.take(&TEST_FILES, |_, f, _| {
            include_tests(f);
            Some(MARK.into())
        });
    }

    fn languages(&mut self) {
        static FILES: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b({})\s+({KINDS})\b", language_names())));
        // "typescript and python files", "go, rust or c files": each of them.
        static LISTED: LazyLock<Regex> = LazyLock::new(|| {
            let one = language_names();
            re(&format!(r"\b((?:{one})(?:\s*(?:,|/|&|\band\b|\bor\b)\s*(?:(?:and|or)\s+)?(?:{one}))+)\s+({KINDS})\b"))
        });
        self.take(&LISTED, |c, f, _| {
            for name in A_LANGUAGE.find_iter(&c[1]) {
                add_extensions(f, extensions_of(name.as_str()).iter().map(|e| e.to_string()));
            }
            if c[2].to_ascii_lowercase().starts_with("test") {
                include_tests(f);
            }
            Some(MARK.into())
        });
        static IN: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r"\b(?:written\s+in|implemented\s+in|in|using)\s+({})\b(\s*(?:$|[,?;!]|\.(?:\s|$)|(?:that|which|with|where|and|or|under|inside|within|from|larger|smaller|over|since|before|not|excluding|except)\b))",
                language_names()
            ))
        });
        // Read whole to the next space: `.yml/.yaml` is a list, and
        // `.github/workflows` a directory, left to paths (`extensions_written`).
        static DOTTED: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|\s)(\*?\.[a-z][a-z0-9+./*_-]*)(?:\s+files?\b)?"));
        static ENDING: LazyLock<Regex> = LazyLock::new(|| {
            re(r"\b(?:files?\s+)?(?:ending|ended|that\s+end)\s+(?:in|with)\s+\*?\.([a-z0-9+]{1,10})\b")
        });
        // A written extension first: "*.js files" is .js, and FILES would
        // take its "js files" and leave the "*" in the words.
        self.take(&ENDING, |c, f, _| {
            add_extensions(f, [format!(".{}", c[1].to_ascii_lowercase())]);
            Some(MARK.into())
        });
        self.take(&DOTTED, |c, f, _| {
            add_extensions(f, extensions_written(c[1].trim_end_matches('.'))?);
            Some(MARK.into())
        });
        self.take(&FILES, |c, f, _| {
            add_extensions(f, extensions_of(&c[1]).iter().map(|e| e.to_string()));
            if c[2].to_ascii_lowercase().starts_with("test") {
                include_tests(f);
            }
            Some(MARK.into())
        });
        self.take(&IN, |c, f, _| {
            add_extensions(f, extensions_of(&c[1]).iter().map(|e| e.to_string()));
            Some(format!("{MARK}{}", &c[2]))
        });
    }

    fn paths(&mut self) {
        static SLASHED: LazyLock<Regex> = LazyLock::new(|| {
            re(
                r"\b(?:in|under|inside|within|from|below|beneath|at)\s+(?:the\s+)?`?(\.?/?[\w.-]+(?:/[\w.*-]*)+|/[\w.-]+)`?(?:\s+(?:dir|directory|folder|package|module|crate|tree|subtree)\b)?",
            )
        });
        static NAMED_DIR: LazyLock<Regex> = LazyLock::new(|| {
            re(
                r"\b(?:in|under|inside|within|from)\s+(?:the\s+)?`?([\w.-]+)`?\s+(?:dir|directory|folder|package|module|crate|subdirectory|subtree)\b",
            )
        });
        static FILE: LazyLock<Regex> = LazyLock::new(|| {
            re(
                r"\b(?:in|inside|from)\s+(?:the\s+)?(?:file\s+)?`?([A-Za-z_][\w-]*\.([A-Za-z][A-Za-z0-9]{0,7}))`?(?:\s+file)?\b",
            )
        });
        static NAMED_FILES: LazyLock<Regex> =
            LazyLock::new(|| re(r"\bfiles?\s+(?:named|called|matching)\s+`?([\w.*?-]+)`?"));
        self.take(&SLASHED, |c, f, _| {
            f.path_globs.push(dir_glob(&c[1]));
            Some(MARK.into())
        });
        self.take(&NAMED_DIR, |c, f, _| {
            f.path_globs.push(format!("{}/", &c[1]));
            Some(MARK.into())
        });
        self.take(&FILE, |c, f, _| {
            let known = LANGUAGES.iter().flat_map(|(_, e)| e.iter()).any(|e| e[1..].eq_ignore_ascii_case(&c[2]));
            known.then(|| {
                f.path_globs.push(c[1].to_string());
                MARK.to_string()
            })
        });
        self.take(&NAMED_FILES, |c, f, _| {
            f.path_globs.push(c[1].to_string());
            Some(MARK.into())
        });
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

/// A leaving out that may say what is missing ("no benchmarks").
static NO_OR_WITHOUT: LazyLock<Regex> = LazyLock::new(|| re(r"^\W*(?:no|without)\s"));

/// Whether a list's item names benchmarks (`BENCHES`); with a slash it is
/// that directory, as `tests/` is.
fn is_benches(item: &str) -> bool {
    static WHOLE: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"^(?:{BENCHES})$")));
    WHOLE.is_match(item.trim_matches('`'))
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

/// The period a `DATE` or `RELATIVE_DAY` names, as [start, end): a day
/// (`2026-01-31`, `March 1st 2026`), a month (`2026-01`, `January 2026`),
/// a year; `today` up to now, `yesterday`; a moment (`2026-01-31 14:30`,
/// `3 days ago`, and `last week` as a bound: a week ago) starts and ends it.
fn period(text: &str, now: SystemTime) -> Option<(SystemTime, SystemTime)> {
    const DAY: Duration = Duration::from_secs(86_400);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
    let midnight = UNIX_EPOCH + DAY * u32::try_from(now.duration_since(UNIX_EPOCH).ok()?.as_secs() / 86_400).ok()?;
    let days_back = |days: u32| now.checked_sub(DAY * days).map(|at| (at, at));
    match text.as_str() {
        "today" => return Some((midnight, now)),
        "yesterday" => return Some((midnight.checked_sub(DAY)?, midnight)),
        "last week" => return days_back(7),
        "last month" => return days_back(30),
        "last year" => return days_back(365),
        _ => {}
    }
    if let Some(ago) = text.strip_suffix(" ago") {
        let (n, unit) = ago.rsplit_once(' ')?;
        let at = now.checked_sub(Duration::from_secs(number(n)?.checked_mul(seconds_in(unit))?))?;
        return Some((at, at));
    }
    let digits = named_month_as_digits(&text).unwrap_or(text);
    let (y, m, d) = (digits.get(..4)?.parse::<u32>().ok()?, digits.get(5..7), digits.get(8..10));
    let (start, end) = match (digits.len(), m.and_then(|m| m.parse::<u32>().ok())) {
        (4, _) => (format!("{y}-01-01"), format!("{}-01-01", y + 1)),
        (7, Some(12)) => (format!("{digits}-01"), format!("{}-01-01", y + 1)),
        (7, Some(m)) => (format!("{digits}-01"), format!("{y}-{:02}-01", m + 1)),
        (10, _) if d.is_some() => {
            let start = moment(&digits, now)?;
            return Some((start, start + DAY));
        }
        _ => {
            let at = moment(&digits, now)?;
            return Some((at, at));
        }
    };
    Some((moment(&start, now)?, moment(&end, now)?))
}

/// The year a date written with one ends with (`March 2024`, `2024-03-31`).
fn year_of(date: &str) -> Option<&str> {
    let year = date.get(..4).filter(|y| y.bytes().all(|b| b.is_ascii_digit()));
    year.or_else(|| date.get(date.len().checked_sub(4)?..).filter(|y| y.bytes().all(|b| b.is_ascii_digit())))
}

/// The period of `first` (a month or a day without its year) in the year
/// of `second` (the period `b`), or the year before where that makes the
/// shorter span: "between Dec and Jan 2026" runs from December 2025, while
/// "between Feb 10 and Feb 3, 2025" and "between March and January 2024"
/// are written backwards within their year.
fn first_without_year(
    first: &str,
    second: &str,
    b: (SystemTime, SystemTime),
    now: SystemTime,
) -> Option<(SystemTime, SystemTime)> {
    let year: u32 = year_of(second)?.parse().ok()?;
    let span = |a: (SystemTime, SystemTime)| a.1.max(b.1).duration_since(a.0.min(b.0)).unwrap_or_default();
    let same_year = period(&format!("{first} {year}"), now)?;
    match period(&format!("{first} {}", year.checked_sub(1)?), now) {
        Some(year_before) if span(year_before) < span(same_year) => Some(year_before),
        _ => Some(same_year),
    }
}

/// `March 2026` as `2026-03`, `March 1st, 2026` as `2026-03-01`.
fn named_month_as_digits(text: &str) -> Option<String> {
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month = MONTHS.iter().position(|m| text.starts_with(m))? + 1;
    let words: Vec<&str> = text.split([' ', ',']).filter(|w| !w.is_empty()).skip(1).collect();
    let day = |w: &str| w.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().ok();
    match words.as_slice() {
        [year] => Some(format!("{year}-{month:02}")),
        [d, year] => Some(format!("{year}-{month:02}-{:02}", day(d).filter(|d| (1..=31).contains(d))?)),
        _ => None,
    }
}

/// A moment in UTC as `parse_when` reads it.
fn moment(text: &str, now: SystemTime) -> Option<SystemTime> {
    let ns = parse_when(text, now).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(ns / 1_000_000_000).ok()?))
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
mod tests {
    //! The table of phrasings the rules are held to (several forms per
    //! filter), and a second set, written apart from the rules and never
    //! tuned against, whose accuracy is measured rather than required.

    use super::*;

    /// 2026-05-20 12:00:00 UTC, a Wednesday.
    const NOW: u64 = 1_779_278_400;

    fn ctx() -> PlanContext {
        PlanContext {
            now: UNIX_EPOCH + Duration::from_secs(NOW),
            threshold: 0.3,
            threshold_set: false,
            context_hits: 5,
            privacy_mode: PrivacyMode::LocalOnly,
        }
    }

    /// `days` (and `hours`) before NOW, as a plan writes it.
    fn ago(days: u64, hours: u64) -> String {
        utc(UNIX_EPOCH + Duration::from_secs(NOW - days * 86_400 - hours * 3600))
    }

    /// A plan's intent, query and filters in one line, to compare.
    fn shape(p: &QueryPlan) -> String {
        let globs = |g: &[String]| {
            let tests: Vec<String> = TEST_GLOBS.iter().map(|t| t.to_string()).collect();
            match g.iter().position(|x| x == "tests/") {
                Some(at) if g[at..].starts_with(&tests) => {
                    let mut rest: Vec<String> = g[..at].to_vec();
                    rest.push("tests".into());
                    rest.extend(g[at + tests.len()..].iter().cloned());
                    rest.join(",")
                }
                _ => g.join(","),
            }
        };
        let f = &p.l0_filters;
        let mut out = format!("{} | {}", p.intent.as_str(), p.l1_query_text);
        for (key, value) in [
            ("ext", f.extensions.join(",")),
            ("path", globs(&f.path_globs)),
            ("excl", globs(&f.exclude_globs)),
            ("after", f.modified_after.clone().unwrap_or_default()),
            ("before", f.modified_before.clone().unwrap_or_default()),
            ("min", f.min_size.map(|n| n.to_string()).unwrap_or_default()),
            ("max", f.max_size.map(|n| n.to_string()).unwrap_or_default()),
        ] {
            if !value.is_empty() {
                out.push_str(&format!(" | {key}={value}"));
            }
        }
        out
    }

    /// The phrasings and the plans they must give (`shape`).
    fn table() -> Vec<(&'static str, String)> {
        let week = ago(7, 0);
        time_phrasings()
            .into_iter()
            .chain(vec![
                // Sizes.
                ("python files larger than 10kb that read csv", "search | read csv | ext=.py,.pyi | min=10000".into()),
                ("config loaders under 2 KB", "search | config loaders | max=2000".into()),
                (
                    "files between 1 and 5 mb with embedded images",
                    "search | embedded images | min=1000000 | max=5000000".into(),
                ),
                ("large files that define lookup tables", "search | define lookup tables | min=100000".into()),
                ("small files exporting constants", "search | exporting constants | max=10000".into()),
                ("modules at least 1.5 MiB", "search | modules | min=1572864".into()),
                // Languages and extensions.
                ("go code that handles retries", "search | handles retries | ext=.go".into()),
                ("where do we parse dates in typescript", "search | parse dates | ext=.ts,.tsx,.mts,.cts".into()),
                ("javascript functions that debounce input", "search | debounce input | ext=.js,.mjs,.cjs,.jsx".into()),
                ("*.js files that debounce input", "search | debounce input | ext=.js".into()),
                ("c++ classes that own a mutex", "search | own a mutex | ext=.cc,.cpp,.cxx,.hpp,.hh,.hxx,.h".into()),
                ("*.toml settings for the server", "search | settings for the server | ext=.toml".into()),
                (".rs files that spawn threads", "search | spawn threads | ext=.rs".into()),
                ("files ending in .yaml that configure ci", "search | configure ci | ext=.yaml".into()),
                ("retry helpers written in ruby", "search | retry helpers | ext=.rb".into()),
                ("kotlin sources using coroutines", "search | coroutines | ext=.kt,.kts".into()),
                // Objective-C is not C, and a `#` within a word is no C#.
                ("objective-c classes that retry", "search | retry | ext=.m,.mm,.h".into()),
                ("how Topic#send retries", "search | Topic#send retries".into()),
                ("typescript and python files about auth", "search | auth | ext=.ts,.tsx,.mts,.cts,.py,.pyi".into()),
                ("go, rust or ruby code that retries", "search | retries | ext=.go,.rs,.rb".into()),
                // Paths.
                ("token refresh under src/auth", "search | token refresh | path=src/auth/".into()),
                ("http clients in the net directory", "search | http clients | path=net/".into()),
                ("where is the retry loop in upload.rs", "search | retry loop | path=upload.rs".into()),
                ("files named *_handler.go that log errors", "search | log errors | path=*_handler.go".into()),
                ("pagination helpers inside ./lib/utils/", "search | pagination helpers | path=lib/utils/".into()),
                // A directory whose name starts with a dot is no extension;
                // extensions joined by a slash are a list (a review found them
                // read as a directory that matched nothing).
                ("deploy steps in .github/workflows", "search | deploy steps | path=.github/workflows/".into()),
                ("database host in .yml/.yaml files", "search | database host | ext=.yml,.yaml".into()),
                ("retry in .ts/.tsx files", "search | retry | ext=.ts,.tsx".into()),
                // Exclusions.
                ("retry logic excluding tests", "search | retry logic | excl=tests".into()),
                // The directory's slash goes with the word ("retry uploads /" was left).
                ("retry uploads except tests/", "search | retry uploads | excl=tests/".into()),
                ("json parsing but not in vendor", "search | json parsing | excl=vendor/".into()),
                ("sql queries without markdown files", "search | sql queries | excl=*.md,*.markdown,*.mdx".into()),
                ("authentication except node_modules", "search | authentication | excl=node_modules/".into()),
                // A path's closing slash is the path's, not left in the words searched.
                ("retry logic except in vendor/", "search | retry logic | excl=vendor/".into()),
                ("retry logic except in /vendor/", "search | retry logic | excl=/vendor/".into()),
                // One name from `/` is a path too (review 238), read against the root later.
                ("files in /src", "list | files in /src | path=/src/".into()),
                ("retry logic except in vendor/ and docs/", "search | retry logic | excl=vendor/,docs/".into()),
                ("setup steps except in *.md", "search | setup steps | excl=*.md".into()),
                ("setup steps, not *.md or *.txt files", "search | setup steps | excl=*.md,*.txt".into()),
                ("how do we ignore build/ output", "search | output | excl=build/".into()),
                // A verb of leaving out, and nothing else asked: the leaving out is the question.
                ("where do we skip tests", "search | where do we skip tests".into()),
                ("where do we ignore the vendor dir", "search | where do we ignore the vendor dir".into()),
                // Not the verb's object as a filter of its own, nor another's exclusion lost.
                ("Exclude python files and show config parsing", "search | config parsing | excl=*.py,*.pyi".into()),
                ("find upload code, I want to exclude tests", "search | upload code, I want | excl=tests".into()),
                ("files except tests", "list | files except tests | excl=tests".into()),
                ("list files excluding tests", "list | list files excluding tests | excl=tests".into()),
                ("files, ignoring tests", "list | files, ignoring tests | excl=tests".into()),
                ("::new", "search | ::new".into()),
                ("find where we skip tests", "search | find where we skip tests".into()),
                ("which files skip tests", "list | which files skip tests".into()),
                ("which files excluding tests", "list | which files excluding tests | excl=tests".into()),
                ("excluding tests, where is retry logic", "search | retry logic | excl=tests".into()),
                // A word joined to another by `-` or `.` is one word, kept whole.
                ("do-while loops", "search | do-while loops".into()),
                ("the opt-in", "search | opt-in".into()),
                ("where is a.out built", "search | a.out built".into()),
                ("auth in src/net directory", "search | auth | path=src/net/".into()),
                ("retry in src/net treehouse", "search | retry treehouse | path=src/net/".into()),
                ("code not in src about uploads", "search | uploads | excl=src/".into()),
                ("template rendering, not .html files", "search | template rendering | excl=*.html".into()),
                // A list of several kinds leaves each item out by its kind (*.md
                // was kept alone, an inclusion, beside a directory).
                ("retry excluding vendor/ and *.md", "search | retry | excl=vendor/,*.md".into()),
                ("retry not in rust or python", "search | retry | excl=*.rs,*.py,*.pyi".into()),
                ("retry excluding .github/ and *.md", "search | retry | excl=.github/,*.md".into()),
                ("retry excluding .github/workflows", "search | retry | excl=.github/workflows/".into()),
                ("retry excluding .js/.ts files", "search | retry | excl=*.js,*.ts".into()),
                ("auth excluding *.md/", "search | auth | excl=*.md".into()),
                ("retry excluding vendor/ and .js/.ts", "search | retry | excl=vendor/,*.js,*.ts".into()),
            ])
            .chain(slashes_and_joined_exclusions())
            .chain(spans(&week))
            .chain(intents_and_tests(&week))
            .collect()
    }

    /// A name with its slash is a directory, never the tests of everywhere;
    /// "non-" and "all but" leave out, never keep only (audit 248).
    fn slashes_and_joined_exclusions() -> Vec<(&'static str, String)> {
        vec![
            ("docs except tests/fixtures/", "search | docs | excl=tests/fixtures/".into()),
            ("markdown files in spec/", "list | markdown files in spec/ | ext=.md,.markdown,.mdx | path=spec/".into()),
            ("parsers in tests/unit/", "search | parsers | path=tests/unit/".into()),
            ("retry excluding tests/ and *.md", "search | retry | excl=tests/,*.md".into()),
            ("non-rust files about the parser", "search | parser | excl=*.rs".into()),
            ("non python files about the parser", "search | parser | excl=*.py,*.pyi".into()),
            ("all but rust files about the parser", "search | parser | excl=*.rs".into()),
            ("non-test files about the parser", "search | parser | excl=tests".into()),
            ("auth in non-rust code", "search | auth | excl=*.rs".into()),
            // Not in a path, nor in prose, nor without a kind of file after it (review 248).
            ("how is src/nonblocking/mod.rs structured", "search | src/nonblocking/mod.rs structured".into()),
            ("callers of src/non_blocking/io.rs", "search | callers of src/non_blocking/io.rs".into()),
            ("non-blocking IO", "search | non-blocking IO".into()),
            ("non json payloads", "search | non json payloads".into()),
            ("code that handles all but json input", "search | handles all but json input".into()),
            ("non-spec-compliant parsers", "search | non-spec-compliant parsers".into()),
            // The words before a slashed name are read as before the bare one.
            ("retry excluding our tests/", "search | retry | excl=tests/".into()),
            ("retry in the unit tests/", "search | retry | path=tests/".into()),
            // A full stop is no part of a path; a name going on is another name.
            ("retry upload in tests/.", "search | retry upload | path=tests/".into()),
            ("retry except vendor/.", "search | retry | excl=vendor/".into()),
            ("retry in tests.py", "search | retry | path=tests.py".into()),
            ("retry in tests-e2e/", "search | retry | path=tests-e2e/".into()),
            // Review 249: paths with a star, more kinds, lists, files named whole.
            ("retry excluding tests/*.rs", "search | retry | excl=tests/*.rs".into()),
            ("parse errors in tests/*.rs", "search | parse errors | path=tests/*.rs".into()),
            ("non-python scripts about auth", "search | auth | excl=*.py,*.pyi".into()),
            ("all but rust and python files about auth", "search | auth | excl=*.rs,*.py,*.pyi".into()),
            ("non-rust or python files about auth", "search | auth | excl=*.rs,*.py,*.pyi".into()),
            ("auth,non-rust files", "search | auth | excl=*.rs".into()),
            ("retry not in go.mod", "search | retry | excl=go.mod".into()),
            ("retry not in c.h", "search | retry | excl=c.h".into()),
            ("retry excluding main.rs", "search | retry | excl=main.rs".into()),
            ("auth excluding tests/ directory", "search | auth | excl=tests/".into()),
            // Review 249: "all but tests" alone, "non-test" before a language's files, "test-only".
            ("retry all but tests", "search | retry | excl=tests".into()),
            ("everything but tests about auth", "search | auth | excl=tests".into()),
            ("non-test rust files that parse", "search | parse | ext=.rs | excl=tests".into()),
            ("auth in non-test code", "search | auth | excl=tests".into()),
            ("test-only code for parsing", "search | parsing | path=tests".into()),
            ("test-only functions for fixtures", "search | fixtures | path=tests".into()),
            ("a test-only flag", "search | test-only flag".into()),
            // Review 255: singular after "all but", lists after it, a language after "test-only".
            ("anything but test data", "search | but test data".into()),
            ("all but spec parsing", "search | but spec parsing".into()),
            // Review 257: benchmarks by name, a directory after "all but"; review 259: "-only" kept whole.
            (
                "retry everything but tests and benchmarks",
                format!("search | retry | excl=tests,{}", BENCH_GLOBS.join(",")),
            ),
            (
                "retry everything but benchmarks and tests",
                format!("search | retry | excl={},tests", BENCH_GLOBS.join(",")),
            ),
            ("retry excluding benches/", "search | retry | excl=benches/".into()),
            ("retry all but docs", "search | retry all but docs".into()),
            // Review 262: a directory after "all but" in a sentence, benchmarks missing, "-heavy".
            (
                "where do we strip all but build metadata from the version",
                "search | strip all but build metadata from the version".into(),
            ),
            ("which modules have no benchmarks", "search | modules have no benchmarks".into()),
            ("functions with no benchmark coverage", "search | no benchmark coverage".into()),
            ("retry in non-rust and python test-heavy files", "search | retry -heavy | excl=*.rs,*.py,*.pyi".into()),
            ("non-rust and python test-only", "search | -only | excl=*.rs,*.py,*.pyi".into()),
            (
                "retry in non-rust and python test-only files",
                "search | retry | path=tests | excl=*.rs,*.py,*.pyi".into(),
            ),
            ("how do we run the benchmarks", "search | run the benchmarks".into()),
            ("auth everything but tests and docs", "search | auth | excl=tests,docs/".into()),
            ("retry in anything but tests and examples", "search | retry | excl=tests,examples/".into()),
            ("test-only rust files for parsing", "search | parsing | ext=.rs | path=tests".into()),
            ("rust test-only files for parsing", "search | parsing | ext=.rs | path=tests".into()),
            ("rust and python test-only files for parsing", "search | parsing | ext=.rs,.py,.pyi | path=tests".into()),
            ("parsing in non-rust test-only files", "search | parsing | path=tests | excl=*.rs".into()),
            ("parsing in all but rust test-only files", "search | parsing | path=tests | excl=*.rs".into()),
            (
                "parsing in rust and non-python test-only files",
                "search | parsing | ext=.rs | path=tests | excl=*.py,*.pyi".into(),
            ),
            ("parsing in non-test-only code", "search | parsing in non-test-only".into()),
            ("logging in non-test environments", "search | logging in non-test environments".into()),
        ]
    }

    /// A span holds the day, month or year that ends it, and may be
    /// written backwards.
    fn spans(week: &str) -> Vec<(&'static str, String)> {
        vec![
            (
                "parsers modified between 2026-01-01 and 2026-02-01",
                "search | parsers | after=2026-01-01T00:00:00Z | before=2026-02-02T00:00:00Z".into(),
            ),
            (
                "parsers modified between 2026-02-01 and 2026-01-01",
                "search | parsers | after=2026-01-01T00:00:00Z | before=2026-02-02T00:00:00Z".into(),
            ),
            (
                "retry backoff changed between January 2024 and March 2024",
                "search | retry backoff | after=2024-01-01T00:00:00Z | before=2024-04-01T00:00:00Z".into(),
            ),
            (
                "auth handlers edited between last week and yesterday",
                format!("search | auth handlers | after={week} | before=2026-05-20T00:00:00Z"),
            ),
            ("migrations edited until 2026-03-15", "search | migrations | before=2026-03-16T00:00:00Z".into()),
            (
                "logging changed between January and March 2024",
                "search | logging | after=2024-01-01T00:00:00Z | before=2024-04-01T00:00:00Z".into(),
            ),
            // A first month without its year is the one before the second's
            // ("between Dec and Jan 2026" was all of 2026).
            (
                "logging changed between Dec and Jan 2026",
                "search | logging | after=2025-12-01T00:00:00Z | before=2026-02-01T00:00:00Z".into(),
            ),
            // Written backwards within a year (a review found them moved a year back).
            (
                "logging changed between Feb 10 and Feb 3, 2025",
                "search | logging | after=2025-02-03T00:00:00Z | before=2025-02-11T00:00:00Z".into(),
            ),
            (
                "logging changed between March and January 2024",
                "search | logging | after=2024-01-01T00:00:00Z | before=2024-04-01T00:00:00Z".into(),
            ),
            (
                "logging changed between Feb 3 and Feb 10, 2025",
                "search | logging | after=2025-02-03T00:00:00Z | before=2025-02-11T00:00:00Z".into(),
            ),
            (
                "cache eviction changed in December 2025",
                "search | cache eviction | after=2025-12-01T00:00:00Z | before=2026-01-01T00:00:00Z".into(),
            ),
            ("the lexer, edited since Feb 3rd, 2026", "search | lexer | after=2026-02-03T00:00:00Z".into()),
        ]
    }

    /// Time, in its several forms: the phrasings and their plans.
    fn time_phrasings() -> Vec<(&'static str, String)> {
        let week = ago(7, 0);
        vec![
            (
                "rust files changed this week that retry uploads",
                format!("search | retry uploads | ext=.rs | after={week}"),
            ),
            (
                "code modified in the last 3 days that parses the config",
                format!("search | parses the config | after={}", ago(3, 0)),
            ),
            ("retry logic touched within the past two weeks", format!("search | retry logic | after={}", ago(14, 0))),
            ("what changed today in the upload handler", "search | upload handler | after=2026-05-20T00:00:00Z".into()),
            (
                "files edited yesterday about authentication",
                "search | authentication | after=2026-05-19T00:00:00Z | before=2026-05-20T00:00:00Z".into(),
            ),
            (
                "go files changed since yesterday that retry uploads",
                "search | retry uploads | ext=.go | after=2026-05-19T00:00:00Z".into(),
            ),
            // A day bounds a span on the side its word says: "before today" was
            // read as today, and "until yesterday" as yesterday alone.
            ("config loading changed before today", "search | config loading | before=2026-05-20T00:00:00Z".into()),
            ("config loading until yesterday", "search | config loading | before=2026-05-20T00:00:00Z".into()),
            ("retry logic before yesterday", "search | retry logic | before=2026-05-19T00:00:00Z".into()),
            // So do a week or a span back: LAST and AGO read them as a start.
            ("auth changed before last month", format!("search | auth | before={}", ago(30, 0))),
            ("auth changed until 2 weeks ago", format!("search | auth | before={}", ago(14, 0))),
            ("auth older than last week", format!("search | auth | before={}", ago(7, 0))),
            // "after" starts where its bound ends ("after yesterday" kept "after"
            // in the words, "after 2025" held 2025); "since" holds the bound.
            ("auth changed after yesterday", "search | auth | after=2026-05-20T00:00:00Z".into()),
            ("auth changed after last week", format!("search | auth | after={}", ago(7, 0))),
            ("auth changed after 2025", "search | auth | after=2026-01-01T00:00:00Z".into()),
            ("error handling changed since 2026-01-15", "search | error handling | after=2026-01-15T00:00:00Z".into()),
            (
                "database migrations modified before 2025",
                "search | database migrations | before=2025-01-01T00:00:00Z".into(),
            ),
            ("logging code not changed in the last 6 months", format!("search | logging | before={}", ago(180, 0))),
            ("recently modified parsers", format!("search | parsers | after={}", ago(14, 0))),
            (
                "cache eviction changed in 2025",
                "search | cache eviction | after=2025-01-01T00:00:00Z | before=2026-01-01T00:00:00Z".into(),
            ),
            ("auth checks updated since last month", format!("search | auth checks | after={}", ago(30, 0))),
            ("files older than a year that open sockets", format!("search | open sockets | before={}", ago(365, 0))),
            ("session handling changed 2 days ago", format!("search | session handling | after={}", ago(2, 0))),
        ]
    }

    /// The table's phrasings of tests asked for, intents, and everything at once.
    fn intents_and_tests(week: &str) -> Vec<(&'static str, String)> {
        vec![
            // Tests asked for.
            ("tests that cover token expiry", "search | cover token expiry | path=tests".into()),
            ("mocking of the clock in the tests", "search | mocking of the clock | path=tests".into()),
            // The words after "tests" that name it go with it ("ectory", "/" were left).
            ("mocking of the clock in the tests directory", "search | mocking of the clock | path=tests".into()),
            ("mocking of the clock in tests/", "search | mocking of the clock | path=tests/".into()),
            ("python tests for the csv reader", "search | csv reader | ext=.py,.pyi | path=tests".into()),
            // Intents.
            ("where is parse_config defined", "locate | parse_config".into()),
            ("find the definition of RetryPolicy", "locate | RetryPolicy".into()),
            ("where is `Engine` declared?", "locate | Engine".into()),
            ("explain how the index lock works", "explain | index lock".into()),
            ("how does the word table work?", "explain | word table".into()),
            ("why do we keep two connections", "explain | keep two connections".into()),
            ("what does fuse_rankings do", "explain | fuse_rankings".into()),
            (
                "list rust files changed this week",
                format!("list | list rust files changed this week | ext=.rs | after={week}"),
            ),
            ("which files mention the rate limit", "list | mention the rate limit".into()),
            ("where do we retry failed uploads", "search | retry failed uploads".into()),
            // Everything at once.
            (
                "rust files under src/search changed in the last 2 days excluding tests that fuse rankings",
                format!("search | fuse rankings | ext=.rs | path=src/search/ | excl=tests | after={}", ago(2, 0)),
            ),
        ]
    }

    /// A question of nothing but filters lists every file they admit: held
    /// to a cosine threshold, its words found none. A threshold the user
    /// set still holds.
    #[test]
    fn a_question_of_filters_alone_cuts_no_file() {
        for q in ["python files changed this week", "list python files", "which python files are smaller than 1 kb"] {
            let plan = plan_by_rules(q, &ctx());
            assert_eq!((plan.intent, plan.l1_threshold), (Intent::List, -1.0), "{q}");
            let set = plan_by_rules(q, &PlanContext { threshold_set: true, ..ctx() });
            assert_eq!(set.l1_threshold, 0.3, "{q}");
        }
        assert_eq!(plan_by_rules("python files that retry uploads", &ctx()).l1_threshold, 0.3);
    }

    #[test]
    fn the_table_of_phrasings_gives_its_plans() {
        let table = table();
        assert!(table.len() >= 40, "{} phrasings", table.len());
        let wrong: Vec<String> = table
            .iter()
            .filter_map(|(q, want)| {
                let got = shape(&plan_by_rules(q, &ctx()));
                (got != *want).then(|| format!("{q:?}\n   want {want}\n   got  {got}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{} of {} wrong:\n{}", wrong.len(), table.len(), wrong.join("\n"));
    }

    /// Phrasings written apart from the rules, with the plan a person
    /// would make of each.
    fn held_out() -> Vec<(&'static str, String)> {
        vec![
            ("show me go files that open database connections", "list | open database connections | ext=.go".into()),
            (
                "functions changed in the past 24 hours that touch the cache",
                format!("search | touch the cache | after={}", ago(1, 0)),
            ),
            ("where is the `Searcher` struct defined", "locate | Searcher".into()),
            (
                "typescript code modified since 2026-03",
                "list | typescript code modified since 2026-03 | ext=.ts,.tsx,.mts,.cts | after=2026-03-01T00:00:00Z"
                    .into(),
            ),
            ("error messages in python excluding tests", "search | error messages | ext=.py,.pyi | excl=tests".into()),
            ("how are jobs persisted across restarts", "search | jobs persisted across restarts".into()),
            ("list the yaml files", "list | list the yaml files | ext=.yml,.yaml".into()),
            (
                "big files in the vendor directory",
                "list | big files in the vendor directory | path=vendor/ | min=100000".into(),
            ),
            ("code under lib/src/serve that checks tokens", "search | checks tokens | path=lib/src/serve/".into()),
            ("anything about rate limiting not in tests", "search | rate limiting | excl=tests".into()),
            ("summarize the retry policy", "explain | retry policy".into()),
            (
                "java classes modified this month",
                format!("list | java classes modified this month | ext=.java | after={}", ago(30, 0)),
            ),
            ("where's get_logger", "locate | get_logger".into()),
            ("shell scripts that install the toolkit", "search | install the toolkit | ext=.sh,.bash,.zsh".into()),
            ("files smaller than 500 bytes", "list | files smaller than 500 bytes | max=500".into()),
            (
                "upload retries in src/net/ edited yesterday",
                "search | upload retries | path=src/net/ | after=2026-05-19T00:00:00Z | before=2026-05-20T00:00:00Z"
                    .into(),
            ),
            ("what files handle signals", "list | handle signals".into()),
            ("sorting helpers, excluding the docs folder", "search | sorting helpers | excl=docs/".into()),
            ("markdown docs about installation", "search | installation | ext=.md,.markdown,.mdx".into()),
            ("the function that computes bm25", "search | computes bm25".into()),
            // Written after the rules passed the twenty above, to measure
            // phrasings the rules were not shaped by.
            (
                "Which Python modules were touched during the last fortnight?",
                format!(
                    "list | Which Python modules were touched during the last fortnight? | ext=.py,.pyi | after={}",
                    ago(14, 0)
                ),
            ),
            ("grep for TODO comments in js", "search | TODO comments | ext=.js,.mjs,.cjs,.jsx".into()),
            (
                "stuff in the api package that validates emails, skip generated code",
                "search | validates emails | path=api/ | excl=generated/".into(),
            ),
            ("How is authentication done?", "search | authentication".into()),
            ("ruby code from last week", format!("list | ruby code from last week | ext=.rb | after={}", ago(7, 0))),
            ("lua scripts > 1mb", "list | lua scripts > 1mb | ext=.lua | min=1000000".into()),
            ("functions in utils.py that format dates", "search | format dates | path=utils.py".into()),
            ("docs changed after March 1st 2026", "search | docs | after=2026-03-02T00:00:00Z".into()),
            ("anything in C that frees memory", "search | frees memory | ext=.c,.h".into()),
            (
                "tests modified in the last hour",
                format!("list | tests modified in the last hour | path=tests | after={}", ago(0, 1)),
            ),
        ]
    }

    #[test]
    fn phrasings_held_out_are_mostly_planned_as_a_person_would() {
        let cases = held_out();
        let mut wrong = Vec::new();
        for (q, want) in &cases {
            let got = shape(&plan_by_rules(q, &ctx()));
            if got != *want {
                wrong.push(format!("{q:?}\n   want {want}\n   got  {got}"));
            }
        }
        let right = cases.len() - wrong.len();
        eprintln!("held-out phrasings planned exactly: {right} of {}\n{}", cases.len(), wrong.join("\n"));
        // Measured, not tuned: the figure is reported (README, the issue's
        // note); the bound only catches a rule gone badly wrong.
        assert!(right * 10 >= cases.len() * 7, "{right} of {}:\n{}", cases.len(), wrong.join("\n"));
    }

    #[test]
    fn every_plan_of_the_table_passes_its_own_check() {
        for (q, _) in table().into_iter().chain(held_out()) {
            let p = plan_by_rules(q, &ctx());
            p.check().unwrap_or_else(|e| panic!("{q:?}: {e}"));
            assert_eq!((p.raw_user_text.as_str(), p.planner_model_id.as_str()), (q, RULES_PLANNER_ID));
        }
    }

    #[test]
    fn control_characters_never_reach_what_is_searched_for() {
        let p = plan_by_rules("retry\nuploads\u{1b}[2J  in rust", &ctx());
        assert_eq!(
            (p.l1_query_text.as_str(), p.l0_filters.extensions.as_slice()),
            ("retry uploads [2J", &[".rs".to_string()][..])
        );
        assert_eq!(p.raw_user_text, "retry\nuploads\u{1b}[2J  in rust", "the question as asked, for the record");
        p.check().unwrap();
    }

    #[test]
    fn explaining_asks_for_an_answer_and_the_mode_is_carried() {
        let p = plan_by_rules(
            "explain how the index lock works",
            &PlanContext { privacy_mode: PrivacyMode::CloudReasoningOk, ..ctx() },
        );
        assert!(p.requires_l2);
        assert_eq!(p.l2_skills, [ANSWER_SKILL]);
        assert_eq!(p.privacy_mode, PrivacyMode::CloudReasoningOk);
        let p = plan_by_rules("retry uploads", &ctx());
        assert!(!p.requires_l2 && p.l2_skills.is_empty());
        assert_eq!((p.l1_threshold, p.l2_top_k), (0.3, 5));
    }
}
