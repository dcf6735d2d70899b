//! The table of phrasings the rules are held to (several forms per
//! filter), and a second set, written apart from the rules and never
//! tuned against, whose accuracy is measured rather than required.

use std::time::{Duration, UNIX_EPOCH};

use super::super::lexicon::BENCH_GLOBS;
use super::super::plan::utc;
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
        ("retry everything but tests and benchmarks", format!("search | retry | excl=tests,{}", BENCH_GLOBS.join(","))),
        ("retry everything but benchmarks and tests", format!("search | retry | excl={},tests", BENCH_GLOBS.join(","))),
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
        // Review 265: one language before a kind that goes on, a slashed directory after "all but".
        ("retry in non-rust test-only", "search | retry test-only | excl=*.rs".into()),
        ("retry in non-python test-heavy files", "search | retry test-heavy | excl=*.py,*.pyi".into()),
        ("retry in non-rust test-only files", "search | retry | path=tests | excl=*.rs".into()),
        ("retry in all but the bench/ dir", "search | retry | excl=bench/".into()),
        ("retry everything but ./examples", "search | retry | excl=examples/".into()),
        ("retry everything but I/O errors", "search | retry everything but I/O errors".into()),
        ("retry in all but vendor/.", "search | retry | excl=vendor/".into()),
        ("retry in all but vendor/'s tests", "search | retry in all but vendor/'s tests".into()),
        ("retry without benchmarks", "search | retry without benchmarks".into()),
        ("retry without tests or benchmarks", format!("search | retry | excl=tests,{}", BENCH_GLOBS.join(","))),
        ("retry in non-rust and python test-only files", "search | retry | path=tests | excl=*.rs,*.py,*.pyi".into()),
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
        ("rust files changed this week that retry uploads", format!("search | retry uploads | ext=.rs | after={week}")),
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
            "search | upload retries | path=src/net/ | after=2026-05-19T00:00:00Z | before=2026-05-20T00:00:00Z".into(),
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
