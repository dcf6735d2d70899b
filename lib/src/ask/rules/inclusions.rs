//! The rules that keep files: sizes ("files over 1 MB"), test-only code,
//! tests, languages and extensions, paths and named files.

use std::sync::LazyLock;

use regex::Regex;

use super::super::lexicon::{bytes, extensions_of, language_names, LANGUAGES, LARGE_FILE, SIZE, SMALL_FILE};
use super::{
    add_extensions, dir_glob, extensions_written, include_tests, re, tests_named, TestsNamed, Work, A_LANGUAGE, JOINED,
    KINDS, MARK, TESTS_NAMED,
};

impl Work {
    pub(super) fn sizes(&mut self) {
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

    /// "test-only code", "test-only rust files": only the tests (of that
    /// language), read before the language's rules take its files.
    pub(super) fn test_only(&mut self) {
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

    pub(super) fn tests(&mut self) {
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

    pub(super) fn languages(&mut self) {
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

    pub(super) fn paths(&mut self) {
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
