//! The rules that leave files out: "not in vendor/", "excluding tests",
//! "non-rust files", "everything but tests and docs", "except main.rs".

use std::sync::LazyLock;

use regex::Regex;

use super::super::lexicon::{extensions_of, language_names, BENCH_GLOBS, COMMON_DIRS, TEST_GLOBS};
use super::{
    dir_glob, extensions_written, re, tests_named, TestsNamed, Work, ALL_BUT, A_LANGUAGE, BENCHES, EXCLUDING, JOINED,
    KINDS, MARK, TESTS_NAMED,
};

impl Work {
    pub(super) fn exclusions(&mut self) {
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
                r"(?:{EXCLUDING}|(?P<joined>{JOINED}))(?:(?:in|the|any)\s+)*(?P<lang>{langs})(?P<kind>\s+(?:{KINDS}))?\b(?P<on>(?P<only_kind>-only\s+(?:(?:{langs})\s+)?(?:{KINDS})\b)|[.-]\w)?",
                langs = language_names()
            ))
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
            // A name that goes on (`python.org`, `rust-lang`) is no
            // language; a kind that goes on ("non-rust test-only",
            // "non-rust test-heavy code") leaves the language out all the
            // same, its words left to the rules after (review 265: the
            // rules that include kept only Rust).
            let kind_goes_on = c.name("kind").is_some() && c.name("on").is_some();
            // "non-rust test-only files": `test_only`'s, which reads a list.
            let tests_kind =
                c.name("kind").is_some_and(|k| k.as_str().trim_start().to_ascii_lowercase().starts_with("test"));
            if c.name("only_kind").is_some() && tests_kind {
                return None;
            }
            if (c.name("on").is_some() && !kind_goes_on) || (c.name("joined").is_some() && c.name("kind").is_none()) {
                return None;
            }
            f.exclude_globs.extend(extensions_of(&c["lang"]).iter().map(|e| format!("*{e}")));
            Some(match kind_goes_on {
                true => format!("{MARK}{}{}", c["kind"].trim_start(), &c["on"]),
                false => MARK.into(),
            })
        });
        self.path_exclusions();
    }

    /// Extensions and directories left out, one or a list ("except in
    /// vendor/ and docs/", "not *.md or *.txt"), each of its items.
    fn path_exclusions(&mut self) {
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
        self.take(&EXTENSIONS, |c, f, _| {
            let listed: Option<Vec<Vec<String>>> =
                ITEM.find_iter(&c[1]).map(|e| extensions_written(e.as_str())).collect();
            f.exclude_globs.extend(listed?.into_iter().flatten().map(|e| format!("*{e}")));
            Some(MARK.into())
        });
        self.take(&DIRS, |c, f, _| {
            // "modules with no benchmarks", "build without benches": what
            // is missing, or how to do without, is asked about (reviews
            // 262, 265); a list leaves them out ("without tests or benchmarks").
            if NO_OR_WITHOUT.is_match(&c[0]) && ITEM.find_iter(&c[1]).any(|d| is_benches(d.as_str())) {
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
        // A directory written as one after "all but": a slash after it or
        // `./` before it ("everything but vendor/", "all but ./examples").
        // One alone without it is words ("strip all but build metadata";
        // review 262), as is a word with a slash inside ("all but I/O
        // errors"; review 266).
        static ALL_BUT_DIR: LazyLock<Regex> = LazyLock::new(|| {
            re(&format!(
                r#"{ALL_BUT}(?:(?:in|under|the)\s+)*(`?(?:\.?/(?:[\w.-]+/)*[\w.-]+/?|(?:[\w.-]+/)+)`?)(?:\s+(?:dirs?|directory|folders?)\b)?(?:\s|$|[,;)?!:"]|\.(?:\s|$))"#
            ))
        });
        self.take(&ALL_BUT_DIR, |c, f, _| {
            f.exclude_globs.push(dir_glob(&c[1]));
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
            // "docs-only files": its words stay, as they did before the
            // rule read "-only" (review 265: dropped in silence).
            Some(format!("{MARK}{}", c.name("only").map_or("", |o| o.as_str())))
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
}

/// A leaving out that may say what is missing ("no benchmarks").
static NO_OR_WITHOUT: LazyLock<Regex> = LazyLock::new(|| re(r"^\W*(?:no|without)\s"));

/// Whether a list's item names benchmarks (`BENCHES`); with a slash it is
/// that directory, as `tests/` is.
fn is_benches(item: &str) -> bool {
    static WHOLE: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"^(?:{BENCHES})$")));
    WHOLE.is_match(item.trim_matches('`'))
}
