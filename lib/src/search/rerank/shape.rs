//! What a query says about the files it wants: the symbol it names, whether
//! it asks for tests, and the words a file's path may share with it.

use super::paths;

/// Words that ask for tests, which then keep their place.
const TEST_WORDS: &[&str] = &["test", "tests", "testing", "spec", "specs", "mock", "mocks", "fixture", "fixtures"];

/// Words of a question that say nothing about where its answer lives.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "has", "have", "how", "if", "in",
    "is", "it", "not", "of", "on", "or", "the", "to", "was", "what", "when", "where", "which", "who", "why", "with",
];

/// The shortest shared beginning that makes a query word and a path word
/// one (`path` and `paths`, `generator` and `generators`, `config` and
/// `configuration`).
const MIN_SHARED_PREFIX: usize = 3;

/// What the query says about the files it wants.
pub(in crate::search) struct QueryShape {
    /// The symbol a query that is one identifier names (its last part for
    /// `a::b`, `a.b`, `a\b`, `a->b`), lowercased without underscores.
    symbol: Option<String>,
    /// That symbol's last part as the query spells it (`Engine`), which
    /// only a definition of that name matches: a method `helpers` does
    /// not define `Sinatra::Helpers`, nor `_ZodType` `ZodType`.
    spelled: Option<String>,
    asks_for_tests: bool,
    /// The words of a question (not of a symbol) a path can share,
    /// lowercased: longer than two letters and not stopwords.
    path_words: Vec<String>,
}

impl QueryShape {
    pub(in crate::search) fn of(query: &str) -> QueryShape {
        let asks_for_tests = query
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| TEST_WORDS.iter().any(|t| w.eq_ignore_ascii_case(t)));
        let spelled = symbol_named(query.trim()).map(str::to_string);
        let symbol = spelled.as_deref().map(folded);
        let path_words = if symbol.is_some() { Vec::new() } else { path_words(query) };
        QueryShape { symbol, spelled, asks_for_tests, path_words }
    }

    /// The factor of a file's chunks by what its path says it is, and each
    /// factor that made it, with what the file is (`a test`, `an example`,
    /// `a prose`).
    pub(super) fn prior(&self, path: &str, test: f32, example: f32, prose: f32) -> (f32, Vec<(&'static str, f32)>) {
        let mut prior = 1.0;
        let mut kinds = Vec::new();
        if !self.asks_for_tests && paths::is_test(path) {
            prior *= test;
            kinds.push(("a test", test));
        }
        if paths::is_example(path) {
            prior *= example;
            kinds.push(("an example", example));
        }
        if paths::is_prose(path) {
            prior *= prose;
            kinds.push(("a prose", prose));
        }
        (prior, kinds)
    }

    /// Whether the query is one identifier that names a symbol.
    pub(in crate::search) fn names_a_symbol(&self) -> bool {
        self.symbol.is_some()
    }

    /// Whether `name` is the symbol the query names, spelled as it does.
    pub(in crate::search) fn is_symbol(&self, name: &str) -> bool {
        self.spelled.as_deref() == Some(name)
    }

    /// Whether the file is named after the query's symbol.
    pub(super) fn names_file(&self, path: &str) -> bool {
        self.symbol.as_ref().is_some_and(|s| *s == folded(paths::stem(path)))
    }

    /// The share (0..=1) of the question's path words that the file's name
    /// or its directory's name says (`paths.rb` for "path management";
    /// `rack/logger.rb` for "rack logging").
    pub(super) fn path_share(&self, path: &str) -> f32 {
        if self.path_words.is_empty() {
            return 0.0;
        }
        let said = path_parts(path);
        let shared = self.path_words.iter().filter(|w| said.iter().any(|p| same_word(w, p))).count();
        shared as f32 / self.path_words.len() as f32
    }
}

/// The words of `query` a path can share (`QueryShape::path_words`).
fn path_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let word = word.to_ascii_lowercase();
        let starts_as_a_word = word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if starts_as_a_word && word.len() > 2 && !STOPWORDS.contains(&word.as_str()) && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// The words of a file's name (without extension) and of its directory's
/// name: each whole, lowercased, and the parts of an identifier
/// (`routes_reloader` → `routes`, `reloader`).
fn path_parts(path: &str) -> Vec<String> {
    let dir = path.rsplit_once('/').map(|(dirs, _)| dirs.rsplit('/').next().unwrap_or(dirs));
    let mut parts = Vec::new();
    for name in [Some(paths::stem(path)), dir].into_iter().flatten().filter(|n| !n.is_empty()) {
        parts.push(name.to_lowercase());
        parts.extend(crate::terms::split_identifier(name));
    }
    parts
}

/// A query word and a path word are one when equal or when the shorter,
/// of at least `MIN_SHARED_PREFIX` letters, begins the longer.
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= MIN_SHARED_PREFIX && long.starts_with(short))
}

/// A name compared without case or underscores (`type_adapter` = `TypeAdapter`).
fn folded(name: &str) -> String {
    name.chars().filter(|&c| c != '_').flat_map(char::to_lowercase).collect()
}

/// The symbol `query` names when it is one identifier that looks like code
/// rather than a word: qualified (`Rails::Engine`), with an underscore or
/// a capital (`getLogger`, `_private`, `Router`); its last part. A plain
/// lowercase word (`quantize`) is a question, not a symbol.
fn symbol_named(query: &str) -> Option<&str> {
    let mut parts = Vec::new();
    let mut rest = query;
    while let Some(at) = ["::", "->", "\\", "."].iter().filter_map(|sep| rest.find(sep).map(|i| (i, sep.len()))).min() {
        parts.push(&rest[..at.0]);
        rest = &rest[at.0 + at.1..];
    }
    parts.push(rest);
    let identifier = |p: &str| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !parts.iter().all(|p| identifier(p)) {
        return None;
    }
    let last = parts[parts.len() - 1];
    let code_like = parts.len() > 1 || last.contains('_') || last.chars().any(|c| c.is_ascii_uppercase());
    code_like.then_some(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_identifiers_that_look_like_code() {
        assert_eq!(symbol_named("TypeAdapter"), Some("TypeAdapter"));
        assert_eq!(symbol_named("Rails::Engine"), Some("Engine"));
        assert_eq!(symbol_named("fmt.Println"), Some("Println"));
        assert_eq!(symbol_named("parse_config"), Some("parse_config"));
        assert_eq!(symbol_named("quantize"), None, "a plain word is a question");
        assert_eq!(symbol_named("how routes work"), None);
        assert_eq!(symbol_named("a::"), None);
        let q = QueryShape::of("Rails::Engine");
        assert!(q.names_a_symbol() && q.is_symbol("Engine") && !q.is_symbol("Rails"));
        assert!(q.names_file("rails/engine.rb"), "a file's name is compared folded");
        assert!(!q.is_symbol("engine"), "a definition is compared as spelled");
        assert!(!QueryShape::of("ZodType").is_symbol("_ZodType"));
        assert!(!QueryShape::of("engine configuration").names_a_symbol());
    }

    #[test]
    fn a_path_shares_the_words_of_a_question() {
        let q = QueryShape::of("path management for rails apps");
        assert_eq!(q.path_words, ["path", "management", "rails", "apps"]);
        assert_eq!(q.path_share("paths.rb"), 0.25, "a plural is the same word");
        assert_eq!(q.path_share("rails/app_paths.rb"), 0.75, "the directory and each part of the name count");
        assert_eq!(q.path_share("engine.rb"), 0.0);
        let q = QueryShape::of("how the application routes reloader works");
        assert_eq!(q.path_share("application/routes_reloader.rb"), 0.75);
        // A symbol is matched by name (`names_file`), not by path words.
        assert_eq!(QueryShape::of("Rails::Paths").path_share("paths.rb"), 0.0);
        assert_eq!(QueryShape::of("how it is").path_share("how.rb"), 0.0, "stopwords and short words say nothing");
        assert!(!same_word("ab", "abc"), "a two-letter beginning is chance");
    }
}
