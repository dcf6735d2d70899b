//! Definition lines: which lines start a function, method, class or type,
//! and the name each gives. Most languages say so with a keyword (`def`,
//! `fn`, `defmodule`, …); the rest by a shape their language gives
//! (`Declarations`): a C-family signature, a Haskell type signature, a shell
//! function, a function or type bound to a name in Lua or Zig.

use super::shaped::{group_end, shaped_definition, shaped_name};
use super::{extension, identifiers};

/// Longest signature kept in a context, in characters.
const MAX_SIGNATURE_CHARS: usize = 120;

/// Words that start a definition in every language read here.
const KEYWORDS: &[&str] = &[
    "def",
    "class",
    "fn",
    "func",
    "function",
    "impl",
    "struct",
    "enum",
    "trait",
    "interface",
    "mod",
    "module",
    "namespace",
    "macro_rules!",
    "object",
    "record",
    "union",
];

/// Words that may come before a definition's keyword.
const MODIFIERS: &[&str] = &[
    "pub",
    "export",
    "default",
    "async",
    "static",
    "public",
    "private",
    "protected",
    "internal",
    "final",
    "abstract",
    "unsafe",
    "const",
    "extern",
    "override",
    "virtual",
    "inline",
    "sealed",
    "open",
    "data",
    "suspend",
    // Scala
    "case",
    "implicit",
    "lazy",
    // Lua
    "local",
    // Swift
    "fileprivate",
    "mutating",
    "nonmutating",
    "convenience",
    "required",
    "indirect",
    "nonisolated",
];

/// Keywords of one language only: as common words (`type`, `data`,
/// `extension`) they would start definitions in every other.
const GO: &[&str] = &["type"];
const TYPESCRIPT: &[&str] = &["type"];
const SCALA: &[&str] = &["type", "given"];
const SWIFT: &[&str] = &["protocol", "extension", "init", "deinit", "typealias", "actor"];
const ELIXIR: &[&str] = &[
    "defmodule",
    "defp",
    "defmacro",
    "defmacrop",
    "defprotocol",
    "defimpl",
    "defguard",
    "defguardp",
    "defdelegate",
    "defstruct",
    "defexception",
];
const HASKELL: &[&str] = &["data", "newtype", "type", "instance"];

/// How a file's language declares its functions, chosen from its path:
/// the common keywords, its own, and the shape of a declaration without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Declarations {
    keywords: &'static [&'static str],
    shape: Shape,
}

/// How a language declares a definition without a keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// It does not: every definition starts with a keyword.
    None,
    /// C, C++, Java, C#, JavaScript/TypeScript, Kotlin, Dart: a return type,
    /// a name and parameters (`shaped_definition`).
    CFamily,
    /// Haskell, Elm, PureScript: a type signature, `name :: T`.
    Signature,
    /// Shells: `name() {`.
    Shell,
    /// Lua and Zig: a function or a type bound to a name (`M.load =
    /// function(…)`, `const Point = struct {`).
    Bound,
}

impl Declarations {
    /// Definitions by the common keywords alone.
    #[cfg(test)]
    pub(super) const COMMON_KEYWORDS_ONLY: Declarations = Declarations { keywords: &[], shape: Shape::None };

    pub(super) fn of_path(path: &str) -> Declarations {
        let (keywords, shape): (&'static [&'static str], Shape) = match extension(path).as_str() {
            "ts" | "tsx" | "mts" | "cts" => (TYPESCRIPT, Shape::CFamily),
            "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ino" | "java" | "cs" | "js"
            | "jsx" | "mjs" | "cjs" | "kt" | "kts" | "dart" | "groovy" => (&[], Shape::CFamily),
            "go" => (GO, Shape::None),
            "scala" | "sc" => (SCALA, Shape::None),
            "swift" => (SWIFT, Shape::None),
            "ex" | "exs" => (ELIXIR, Shape::None),
            "hs" | "lhs" | "elm" | "purs" => (HASKELL, Shape::Signature),
            "sh" | "bash" | "zsh" | "ksh" | "bats" => (&[], Shape::Shell),
            "lua" | "zig" => (&[], Shape::Bound),
            _ => (&[], Shape::None),
        };
        Declarations { keywords, shape }
    }

    /// Whether a trimmed line starts a definition.
    pub(super) fn starts_definition(self, trimmed: &str) -> bool {
        self.keyword(trimmed).is_some()
            || match self.shape {
                Shape::None => false,
                Shape::CFamily => shaped_definition(trimmed),
                Shape::Signature => signature_name(trimmed).is_some(),
                Shape::Shell => shell_function_name(trimmed).is_some(),
                Shape::Bound => bound_name(trimmed).is_some(),
            }
    }

    /// The name a definition's signature gives: `pub fn open<T>(…)` →
    /// `open`, `class Handler(Base)` → `Handler`, `impl<T> Display for
    /// Store<T>` → `Store`, `func (s *Server) Serve(…)` → `Serve`, `def
    /// self.call(env)` → `call`, `defmodule Ecto.Repo do` → `Repo`, `public
    /// static int count(…)` → `count`, `export const load = async (url) =>`
    /// → `load`, `lookup :: Key -> Maybe a` → `lookup`. None when it names
    /// nothing (`function (x) {`).
    pub(super) fn name(self, signature: &str) -> Option<&str> {
        let Some((keyword, rest)) = self.keyword(signature) else {
            return match self.shape {
                Shape::None => None,
                Shape::CFamily => shaped_name(signature),
                Shape::Signature => signature_name(signature),
                Shape::Shell => shell_function_name(signature),
                Shape::Bound => bound_name(signature),
            };
        };
        keyword_name(keyword, rest)
    }

    /// What a context keeps of a definition line (`trimmed`): the line, up
    /// to `MAX_SIGNATURE_CHARS`, without the `{` or `:` that opens its
    /// body; of a Haskell type signature only the name it declares
    /// (`lookup ::`), as its types say less than they weigh.
    pub(super) fn signature(self, trimmed: &str) -> String {
        if self.shape == Shape::Signature && self.keyword(trimmed).is_none() {
            if let Some(name) = signature_name(trimmed) {
                return format!("{name} ::").chars().take(MAX_SIGNATURE_CHARS).collect();
            }
        }
        trimmed.trim_end_matches(['{', ':']).trim_end().chars().take(MAX_SIGNATURE_CHARS).collect()
    }

    /// Whether `trimmed`, at the indentation of the definition `signature`,
    /// goes on with it rather than ending it: a Haskell function's equations
    /// (`lookup k (Node …) =`) below its type signature.
    pub(super) fn continues(self, signature: &str, trimmed: &str) -> bool {
        self.shape == Shape::Signature
            && signature_name(signature).is_some_and(|name| {
                trimmed.strip_prefix(name).is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t']))
            })
    }

    /// The keyword a definition line starts with, after its modifiers and
    /// attributes, and the text after the keyword (`pub(crate) fn open(…)`
    /// → `fn`, ` open(…)`).
    fn keyword(self, trimmed: &str) -> Option<(&'static str, &str)> {
        let mut rest = skip_attributes(trimmed);
        loop {
            let word_end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!')).unwrap_or(rest.len());
            let word = &rest[..word_end];
            if let Some(keyword) = KEYWORDS.iter().chain(self.keywords).find(|k| **k == word) {
                let after = &rest[word_end..];
                return starts_definition_after(keyword, after).then_some((*keyword, after));
            }
            if !MODIFIERS.contains(&word) || word.is_empty() {
                return None;
            }
            rest = rest[word_end..].trim_start();
            // `pub(crate)`, `private[cats]`, `extern "C"`
            if let Some(inner) = rest.strip_prefix('(') {
                rest = inner.split_once(')').map_or("", |(_, r)| r).trim_start();
            } else if let Some(inner) = rest.strip_prefix('[') {
                rest = inner.split_once(']').map_or("", |(_, r)| r).trim_start();
            } else if let Some(inner) = rest.strip_prefix('"') {
                rest = inner.split_once('"').map_or("", |(_, r)| r).trim_start();
            }
        }
    }
}

/// Whether what follows a definition keyword makes it one: a name or the
/// definition's own syntax, not a call, a field or an assignment
/// (`type = 3`, `class.name`, `fn_ptr(x)`).
fn starts_definition_after(keyword: &str, after: &str) -> bool {
    match after.chars().next() {
        Some('<') => true,
        Some('(') => matches!(keyword, "fn" | "func" | "init"),
        Some('?' | '!') => keyword == "init" && after[1..].starts_with(['(', '<']),
        Some(' ' | '\t') => {
            let next = after.trim_start().chars().next();
            next.is_some_and(|c| !matches!(c, '=' | ':' | '.' | ',' | ';' | ')' | ']' | '}' | '+' | '|'))
        }
        _ => false,
    }
}

/// `trimmed` after the attributes it starts with (`@objc`, `@MainActor`,
/// `@available(iOS 13, *)`), when something follows them.
fn skip_attributes(trimmed: &str) -> &str {
    let mut rest = trimmed;
    while let Some(attribute) = rest.strip_prefix('@') {
        let word_end = attribute.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(attribute.len());
        if word_end == 0 {
            return trimmed;
        }
        rest = skip_group(&attribute[word_end..], '(', ')');
        if !rest.starts_with([' ', '\t']) {
            return trimmed;
        }
        rest = rest.trim_start();
    }
    rest
}

/// The name after a definition keyword (`rest` is what follows it).
fn keyword_name<'a>(keyword: &'static str, rest: &'a str) -> Option<&'a str> {
    let mut rest = skip_group(rest.trim_start(), '<', '>').trim_start();
    match keyword {
        // A Go method's receiver.
        "func" if rest.starts_with('(') => rest = skip_group(rest, '(', ')').trim_start(),
        // `impl Trait for Type`: the type is what the block is about.
        "impl" => return impl_type(rest),
        // `instance Show a => Show (Tree a)`: the type, after the class.
        "instance" => {
            rest = after_context(rest);
            rest = rest.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '.').trim_start();
            rest = rest.trim_start_matches('(');
        }
        // `class (Eq a) => Ord a where`
        "class" => rest = after_context(rest),
        "init" | "deinit" => return Some(keyword),
        _ => {}
    }
    let path_end =
        rest.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':'))).unwrap_or(rest.len());
    // A qualified name (`self.call`, `M:load`, `Ecto.Repo`, `Foo::Bar`): its last part.
    let last = rest[..path_end].trim_end_matches([':', '.']).rsplit(['.', ':']).next().unwrap_or("");
    identifiers(last).next().filter(|w| *w == last)
}

/// The type an `impl` block is about.
fn impl_type(rest: &str) -> Option<&str> {
    let rest = rest.find(" for ").map_or(rest, |at| &rest[at + 5..]);
    let ty = rest
        .split_whitespace()
        .map(|w| w.trim_start_matches('&'))
        .find(|w| !w.is_empty() && !w.starts_with('\'') && !matches!(*w, "dyn" | "mut"))?;
    let path = ty.split(['<', '{', '(', '[']).next().unwrap_or("");
    path.rsplit("::").next().filter(|w| identifiers(w).next() == Some(*w))
}

/// A Haskell declaration after its context (`(Eq a, Show a) => rest`).
fn after_context(rest: &str) -> &str {
    rest.split_once("=>").map_or(rest, |(_, after)| after).trim_start()
}

/// The name a Haskell type signature declares (`lookup :: Key -> Maybe a`
/// → `lookup`), the first of several (`get, put :: …`).
fn signature_name(trimmed: &str) -> Option<&str> {
    let (names, _) = trimmed.split_once("::")?;
    let first = names.split(',').next()?.trim();
    let lowercase = first.starts_with(|c: char| c.is_lowercase() || c == '_');
    (lowercase && identifiers(first).next() == Some(first.trim_end_matches('\''))).then(|| first.trim_end_matches('\''))
}

/// The name of a shell function (`retry() {`, `function retry {`, `retry ()`).
fn shell_function_name(trimmed: &str) -> Option<&str> {
    let trimmed = trimmed.strip_prefix("function ").map_or(trimmed, str::trim_start);
    let name_end =
        trimmed.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'))).unwrap_or(trimmed.len());
    let name = &trimmed[..name_end];
    let after = trimmed[name_end..].trim_start();
    let shaped = after.starts_with("()") || after.starts_with('{');
    (name_end > 0 && !name.starts_with(|c: char| c.is_ascii_digit()) && shaped).then_some(name)
}

/// The name a function or a type is bound to in Lua and Zig (`local load =
/// function(url)`, `M.load = function(…)`, `pub const Point = struct {`).
fn bound_name(trimmed: &str) -> Option<&str> {
    let mut rest = trimmed;
    for modifier in ["pub ", "local ", "const ", "var "] {
        rest = rest.strip_prefix(modifier).map_or(rest, str::trim_start);
    }
    let (target, value) = rest.split_once('=')?;
    let value = value.trim_start();
    let target = target.trim_end();
    let bound = ["function", "struct", "enum", "union", "opaque", "packed struct", "extern struct"]
        .iter()
        .any(|kind| value.strip_prefix(kind).is_some_and(|after| after.starts_with([' ', '(', '{'])));
    if !bound || target.is_empty() || value.starts_with('=') {
        return None;
    }
    let name = target.rsplit(['.', ':']).next()?;
    identifiers(name).next().filter(|w| *w == name)
}

/// `text` after the bracketed group it starts with (`<T: Ord> rest` →
/// ` rest`); all of it when it starts with none; empty when it never closes.
fn skip_group(text: &str, open: char, close: char) -> &str {
    if !text.starts_with(open) {
        return text;
    }
    group_end(text, open, close).map_or("", |n| &text[n..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keywords() -> Declarations {
        Declarations::COMMON_KEYWORDS_ONLY
    }

    fn shaped() -> Declarations {
        Declarations::of_path("x.java")
    }

    #[test]
    fn definitions_are_recognised_across_languages() {
        for yes in [
            "def emit(self, record):",
            "async def run():",
            "class Handler(Filterer):",
            "pub(crate) fn walk<'a>(root: &Path) -> Result<()> {",
            "pub async unsafe fn go() {}",
            "impl<T> Store for Vec<T> {",
            "impl Store {",
            "extern \"C\" fn cb() {}",
            "func (s *Server) Serve() error {",
            "func main() {",
            "export default function App() {",
            "public static class Builder {",
            "interface Shape {",
            "macro_rules! try_opt {",
        ] {
            assert!(keywords().starts_definition(yes), "{yes}");
        }
        for no in [
            "return fn_ptr(x)",
            "self.class = 3",
            "let def = 1;",
            "print(\"def x\")",
            "classify(x)",
            "structure = {}",
            "class = 3",
            "struct.pack(x)",
            "",
        ] {
            assert!(!keywords().starts_definition(no), "{no}");
        }
    }

    #[test]
    fn c_family_functions_are_recognised_by_their_shape() {
        for yes in [
            "int main(int argc, char **argv) {",
            "static char *dup(const char *s)",
            "static void *worker(void *arg) {",
            "std::vector<int> Index::find(const std::string& key) const {",
            "Index::~Index() {",
            "public static void main(String[] args) {",
            "private List<String> names() throws IOException {",
            "public <T> T read(Class<T> type) {",
            "Map<String, List<Integer>> group(",
            "public Builder(int size) {",
            "@Override public String toString() {",
            "public async Task<IActionResult> Get(int id)",
            "async fetchData(url: string): Promise<void> {",
            "constructor(private http: HttpClient) {}",
            "retryUpload(file) {",
            "TEST_F(StoreTest, ReopensAfterCrash) {",
            "export const load = async (url: string): Promise<Data> => {",
            "const handler = (req, res) => {",
            "let parse = function (text) {",
            "var square = x => {",
            "override fun onCreate(savedInstanceState: Bundle?) {",
            "fun <T> List<T>.second(): T {",
            "Future<void> load() async {",
            "funnel(items) {",
            "const std::string& name() const {",
            "public Uploader(",
        ] {
            assert!(shaped().starts_definition(yes) != yes.starts_with('@'), "{yes}");
        }
        for no in [
            "if (x) {",
            "} else if (y) {",
            "while (running(x)) {",
            "switch (kind) {",
            "for (int i = 0; i < n; i++) {",
            "catch (Exception e) {",
            "synchronized (lock) {",
            "return compute(x);",
            "foo(bar)",
            "doSomething(x);",
            "setTimeout(() => {",
            "items.forEach(item => {",
            "app.get('/x', (req, res) => {",
            "List<String> names = new ArrayList<>(",
            "new Thread(runnable) {",
            "const total = compute(x);",
            "const cb = useCallback((x) => {",
            "let ok = a == b;",
            "int x = f(y)",
            "EXPORT_SYMBOL(load_module);",
            "throw new IllegalStateException(msg);",
            "sizeof(struct foo)",
            "let total = sum(values)",
            "fundamentals(x)",
        ] {
            assert!(!shaped().starts_definition(no), "{no}");
        }
        // Only in the languages that declare so: a Python call or a Rust
        // closure line is never taken for one.
        assert!(Declarations::of_path("lib/index.ts").starts_definition("retryUpload(file) {"));
        assert!(!Declarations::of_path("src/main.rs").starts_definition("retryUpload(file) {"));
        assert!(!Declarations::of_path("pkg/log.py").starts_definition("retryUpload(file) {"));
    }

    #[test]
    fn definitions_are_known_by_their_names() {
        for (signature, name) in [
            ("pub fn open<T: Into<String>>(path: T) -> Store", Some("open")),
            ("pub(crate) async fn fetch(url: &str)", Some("fetch")),
            ("class Handler(Filterer)", Some("Handler")),
            ("class Handler:", Some("Handler")),
            ("async def wait_for(fut, timeout)", Some("wait_for")),
            ("def __init__(self, level=NOTSET)", Some("__init__")),
            ("impl<T> fmt::Display for Store<T>", Some("Store")),
            ("impl<'a> Iterator for &'a mut Walk", Some("Walk")),
            ("impl Store", Some("Store")),
            ("impl<S: StateID> dense::DFA<S>", Some("DFA")),
            ("impl<F: Fn() -> bool> Filter for Matcher<F>", Some("Matcher")),
            ("func (s *Server) Serve(l net.Listener) error", Some("Serve")),
            ("func main()", Some("main")),
            ("pub struct Cache<K, V>", Some("Cache")),
            ("macro_rules! try_opt", Some("try_opt")),
            ("export default function render(node)", Some("render")),
            ("function (x)", None),
        ] {
            assert_eq!(keywords().name(signature), name, "{signature}");
        }
        for (signature, name) in [
            ("public static List<String> names(int n)", Some("names")),
            ("static char *dup(const char *s)", Some("dup")),
            ("Foo::~Foo()", Some("Foo")),
            ("export const load = async (url) => {", Some("load")),
            ("template <typename T> std::vector<T> take(int n)", Some("take")),
        ] {
            assert_eq!(shaped().name(signature), name, "{signature}");
        }
    }

    /// The languages of the field's benchmark beyond the common keywords:
    /// each line starts a definition and gives the name.
    #[test]
    fn each_language_declares_its_own_way() {
        for (path, line, name) in [
            ("app/models/user.rb", "def self.find_by_token(token)", "find_by_token"),
            ("lib/rails/engine.rb", "class Engine < Railtie", "Engine"),
            ("lib/rails/engine.rb", "module Rails::Generators", "Generators"),
            ("lib/ecto/repo.ex", "defmodule Ecto.Repo.Queryable do", "Queryable"),
            ("lib/ecto/repo.ex", "defp assert_schema!(query) do", "assert_schema"),
            ("lib/ecto/repo.ex", "defmacro __using__(opts) do", "__using__"),
            ("lib/ecto/repo.ex", "defimpl Inspect, for: Ecto.Query do", "Inspect"),
            (
                "src/Text/Pandoc.hs",
                "readMarkdown :: PandocMonad m => ReaderOptions -> Text -> m Pandoc",
                "readMarkdown",
            ),
            ("src/Text/Pandoc.hs", "data Block = Para [Inline]", "Block"),
            ("src/Text/Pandoc.hs", "newtype Parser a = Parser (ParsecT a)", "Parser"),
            ("src/Text/Pandoc.hs", "class (Monad m) => PandocMonad m where", "PandocMonad"),
            ("src/Text/Pandoc.hs", "instance ToJSON a => ToJSON (Many a) where", "Many"),
            ("src/Text/Pandoc.hs", "module Text.Pandoc.Readers.Markdown (", "Markdown"),
            ("lib/test_functions.bash", "run() {", "run"),
            ("lib/test_functions.bash", "function bats_load_library {", "bats_load_library"),
            ("lib/test_functions.bash", "bats::on_failure() {", "bats::on_failure"),
            ("lua/lazy/core.lua", "local function load(plugin)", "load"),
            ("lua/lazy/core.lua", "function M.setup(spec, opts)", "setup"),
            ("lua/lazy/core.lua", "function M:reload()", "reload"),
            ("lua/lazy/core.lua", "M.install = function(opts)", "install"),
            ("clap/parsers.zig", "pub const Diagnostic = struct {", "Diagnostic"),
            ("clap/parsers.zig", "pub fn parse(comptime T: type) !T {", "parse"),
            ("core/Free.scala", "sealed abstract class Free[S[_], A] extends Product", "Free"),
            ("core/Free.scala", "final case class Pure[S[_], A](a: A)", "Pure"),
            ("core/Free.scala", "private[free] def step: Free[S, A] =", "step"),
            ("core/Free.scala", "implicit def catsFreeMonad[S[_]]: Monad[Free[S, *]] =", "catsFreeMonad"),
            ("core/Free.scala", "type Id[A] = A", "Id"),
            ("Source/Session.swift", "open class Session: @unchecked Sendable {", "Session"),
            ("Source/Session.swift", "public convenience init(configuration: URLSessionConfiguration) {", "init"),
            ("Source/Session.swift", "extension Session: RequestDelegate {", "Session"),
            ("Source/Session.swift", "@discardableResult public func validate() -> Self {", "validate"),
            ("Source/Session.swift", "public protocol RequestInterceptor {", "RequestInterceptor"),
            ("tree.go", "type node struct {", "node"),
            ("src/types.ts", "export type ZodTypeAny = ZodType<any>;", "ZodTypeAny"),
        ] {
            let declarations = Declarations::of_path(path);
            assert!(declarations.starts_definition(line), "{path}: {line}");
            assert_eq!(declarations.name(line), Some(name), "{path}: {line}");
        }
        for (path, line) in [
            ("src/Text/Pandoc.hs", "readMarkdown opts s = do"),
            ("src/Text/Pandoc.hs", "  where go = map f"),
            ("lib/test_functions.bash", "echo \"$output\""),
            ("lib/test_functions.bash", "local retries=3"),
            ("lib/test_functions.bash", "case \"$1\" in"),
            ("lua/lazy/core.lua", "local M = {}"),
            ("lua/lazy/core.lua", "if x == function_name then"),
            ("clap/parsers.zig", "const std = @import(\"std\");"),
            ("tree.go", "type = 3"),
            ("core/Free.scala", "case Pure(a) => a"),
            // A common word is a keyword only where its language says so.
            ("pkg/log.py", "type Alias = int"),
            ("src/lib.rs", "type Item = u8;"),
        ] {
            assert!(!Declarations::of_path(path).starts_definition(line), "{path}: {line}");
        }
    }

    mod fuzz {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// Signature-shaped text with its brackets, colons and quotes
            /// anywhere: an answer, never a panic.
            #[test]
            fn shaped_definitions_read_any_line(line in "(public |static |const |let |async |fun )?[a-zA-Z_$~*&:<>,\\[\\] ]{0,20}[(){}=>:;,'\"a-z ]{0,30}\\PC{0,10}") {
                let _ = Declarations::of_path("x.java").starts_definition(line.trim());
            }
        }
    }
}
