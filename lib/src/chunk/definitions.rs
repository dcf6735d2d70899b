//! Definition lines: which lines start a function, method, class or type in
//! the common languages (by keyword, or in the C family by shape), and the
//! name each gives.

use super::extension;

/// Whether a trimmed line starts a definition in one of the common
/// languages: `def`, `class`, `fn`, `impl`, `func`, `function`, `struct`, …,
/// after any modifiers (`pub(crate)`, `async`, `export`, `static`, …).
pub fn is_definition(trimmed: &str) -> bool {
    definition_keyword(trimmed).is_some()
}

/// The keyword a definition line starts with, after its modifiers, and
/// the text after the keyword (`pub(crate) fn open(…)` → `fn`, ` open(…)`).
fn definition_keyword(trimmed: &str) -> Option<(&str, &str)> {
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
    ];
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
    let mut rest = trimmed;
    loop {
        let word_end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!')).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if KEYWORDS.contains(&word) {
            // A keyword must be followed by a name or the definition's syntax, not be a call or a field.
            let after = rest[word_end..].chars().next();
            let definition = after
                .is_some_and(|c| c == ' ' || c == '<' || c == '(' && (word == "fn" || word == "func"))
                || (word == "func" && after == Some('('));
            return definition.then(|| (word, &rest[word_end..]));
        }
        if !MODIFIERS.contains(&word) || word.is_empty() {
            return None;
        }
        rest = rest[word_end..].trim_start();
        // `pub(crate)`, `extern "C"`
        if let Some(inner) = rest.strip_prefix('(') {
            rest = inner.split_once(')').map_or("", |(_, r)| r).trim_start();
        } else if let Some(inner) = rest.strip_prefix('"') {
            rest = inner.split_once('"').map_or("", |(_, r)| r).trim_start();
        }
    }
}

/// The name a definition's signature gives: `pub fn open<T>(…)` → `open`,
/// `class Handler(Base)` → `Handler`, `impl<T> Display for Store<T>` →
/// `Store`, `func (s *Server) Serve(…)` → `Serve`, `public static int
/// count(…)` → `count`, `export const load = async (url) =>` → `load`.
/// None when it names nothing (`function (x) {`).
pub fn definition_name(signature: &str) -> Option<&str> {
    let Some((keyword, mut rest)) = definition_keyword(signature) else {
        return shaped_name(signature);
    };
    rest = skip_group(rest.trim_start(), '<', '>').trim_start();
    if keyword == "func" && rest.starts_with('(') {
        // A Go method's receiver.
        rest = skip_group(rest, '(', ')').trim_start();
    }
    if keyword == "impl" {
        // `impl Trait for Type`: the type is what the block is about.
        if let Some(at) = rest.find(" for ") {
            rest = &rest[at + 5..];
        }
        let ty = rest
            .split_whitespace()
            .map(|w| w.trim_start_matches('&'))
            .find(|w| !w.is_empty() && !w.starts_with('\'') && !matches!(*w, "dyn" | "mut"))?;
        let path = ty.split(['<', '{', '(', '[']).next().unwrap_or("");
        return path.rsplit("::").next().filter(|w| identifiers(w).next() == Some(*w));
    }
    identifiers(rest).next().filter(|w| rest.starts_with(w))
}

/// The name of a definition known by its shape (`shaped_definition`): a
/// name bound to a function, or the last word before the parameters.
fn shaped_name(signature: &str) -> Option<&str> {
    for binder in ["const ", "let ", "var "] {
        if let Some(at) = signature.find(binder).filter(|&at| at == 0 || signature[..at].ends_with(' ')) {
            let after = &signature[at + binder.len()..];
            if bound_function(after) {
                return identifiers(after).next();
            }
        }
    }
    let head = signature.split('(').next().unwrap_or("").trim_end();
    let head = strip_trailing_group(head, '<', '>');
    identifiers(head).last().filter(|w| head.ends_with(w))
}

/// Runs of letters, digits, `_` and `$` in `text`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).filter(|w| !w.is_empty())
}

/// `text` after the bracketed group it starts with (`<T: Ord> rest` →
/// ` rest`); all of it when it starts with none; empty when it never closes.
fn skip_group(text: &str, open: char, close: char) -> &str {
    if !text.starts_with(open) {
        return text;
    }
    group_end(text, open, close).map_or("", |n| &text[n..])
}

/// `text` without the bracketed group it ends with (`names<T>` → `names`).
fn strip_trailing_group(text: &str, open: char, close: char) -> &str {
    if !text.ends_with(close) {
        return text;
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices().rev() {
        if c == close {
            depth += 1;
        } else if c == open {
            depth -= 1;
            if depth == 0 {
                return text[..i].trim_end();
            }
        }
    }
    text
}

/// How a file's language declares its functions, chosen from its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Declarations {
    /// Every definition starts with a keyword (`def`, `fn`, `func`, …):
    /// `is_definition` alone.
    Keyword,
    /// C, C++, Java, C#, JavaScript/TypeScript, Kotlin, Dart: functions and
    /// methods are also declared by their shape (`shaped_definition`).
    Shaped,
}

impl Declarations {
    pub(super) fn of_path(path: &str) -> Declarations {
        match extension(path).as_str() {
            "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ino" | "java" | "cs" | "js"
            | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "kt" | "kts" | "dart" | "groovy" => {
                Declarations::Shaped
            }
            _ => Declarations::Keyword,
        }
    }

    pub(super) fn starts_definition(self, trimmed: &str) -> bool {
        is_definition(trimmed) || self == Declarations::Shaped && shaped_definition(trimmed)
    }
}

/// Words that may come before a C-family declaration's return type.
const SHAPED_MODIFIERS: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "final",
    "abstract",
    "virtual",
    "override",
    "inline",
    "extern",
    "async",
    "export",
    "default",
    "synchronized",
    "native",
    "readonly",
    "declare",
    "sealed",
    "partial",
    "unsafe",
    "suspend",
    "open",
    "operator",
    "infix",
    "tailrec",
    "constexpr",
    "explicit",
    "friend",
    "get",
    "set",
    "external",
];

/// Words that are never the name in `name(…)`: keywords that take
/// parentheses, and calls that look like declarations.
const NOT_NAMES: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "catch",
    "try",
    "return",
    "throw",
    "throws",
    "sizeof",
    "typeof",
    "await",
    "yield",
    "delete",
    "goto",
    "when",
    "using",
    "lock",
    "foreach",
    "assert",
    "super",
    "this",
    "function",
    "defined",
    "alignof",
    "decltype",
    "instanceof",
    "in",
    "of",
    "import",
    "typedef",
    "with",
    "match",
    "new",
    "volatile",
    "__volatile__",
    "asm",
    "__asm__",
];

/// Words of prose, which a comment has before its parenthesis and no
/// signature does.
const PROSE: &[&str] = &[
    "the", "a", "an", "that", "is", "are", "of", "to", "and", "or", "see", "which", "when", "it", "be", "not", "in",
    "for", "with", "on", "by", "from", "as",
];

/// Whether a trimmed line of a C-family language declares a function or
/// method by its shape: modifiers and a return type, then a name and its
/// parameters (`public static List<String> names(int n) {`, `static char
/// *dup(const char *s)`, `async load(url) {`, `Foo::~Foo() {`); a Kotlin
/// `fun`; or a function bound to a name (`export const load = async (url)
/// => {`, `let f = function (x) {`). Calls, control statements and
/// declarations ending in `;` are not definitions.
fn shaped_definition(trimmed: &str) -> bool {
    if trimmed.ends_with(';') || !trimmed.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$' || c == '~') {
        return false;
    }
    let (modifiers, rest) = after_modifiers(trimmed);
    // Kotlin: `fun name(…)`, `fun <T> T.name(…)`.
    if rest.strip_prefix("fun").is_some_and(|after| after.starts_with([' ', '<'])) {
        return true;
    }
    // `const name = (…) => {`, `let name = async function (…) {`; a C++
    // `const T& name() const {` is read by its shape below.
    if ["const ", "let ", "var "].iter().any(|b| rest.strip_prefix(b).is_some_and(bound_function)) {
        return true;
    }
    let Some(open) = rest.find('(') else { return false };
    let Some(head_words) = declaration_head(&rest[..open]) else { return false };
    let typed = head_words.len() > 1;
    // Where the parameters close, if on this line.
    let Some(close) = group_end(&rest[open..], '(', ')').map(|n| open + n) else {
        // Parameters go on below: only a return type or a modifier tells
        // this from a call.
        return typed || modifiers > 0;
    };
    body_follows(rest[close..].trim(), typed || modifiers > 0)
}

/// How many modifiers `trimmed` starts with, and the rest of it.
fn after_modifiers(trimmed: &str) -> (usize, &str) {
    let mut words = trimmed.split_whitespace().peekable();
    let mut modifiers = 0;
    while words.peek().is_some_and(|w| SHAPED_MODIFIERS.contains(w)) {
        words.next();
        modifiers += 1;
    }
    let rest_at = |w: Option<&&str>| w.map_or(trimmed.len(), |w| w.as_ptr() as usize - trimmed.as_ptr() as usize);
    (modifiers, &trimmed[rest_at(words.peek())..])
}

/// The words before a declaration's parameters (a return type, then the
/// name), or None when `head` cannot be one: a label or an object's key,
/// prose, arguments of a call, or a keyword where the name would be.
fn declaration_head(head: &str) -> Option<Vec<&str>> {
    // A lone `:` is a label, a case or an object's key, not a path (`::`).
    if head.contains(|c: char| !(c.is_alphanumeric() || c.is_whitespace() || "_$<>,*&:~[]?".contains(c)))
        || head.replace("::", "").contains(':')
    {
        return None;
    }
    // The name is the head's last word; what comes before it is a return type.
    let head_words: Vec<&str> = head.split_whitespace().collect();
    // Prose in a comment: more words before its parenthesis than a
    // signature has, or words no type is named.
    if head_words.len() > MAX_HEAD_WORDS || head_words.iter().any(|w| PROSE.contains(w)) {
        return None;
    }
    // A comma outside `<…>` separates arguments: this is inside a call.
    let mut angle = 0i32;
    for c in head.chars() {
        match c {
            '<' => angle += 1,
            '>' => angle -= 1,
            ',' if angle <= 0 => return None,
            _ => {}
        }
    }
    let ident = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$' || c == '~')
            && w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '~' | ':'))
    };
    let name = head_words.last().map(|w| w.trim_start_matches(['*', '&']))?;
    if !ident(name) || NOT_NAMES.contains(&name) || head_words.first().is_some_and(|w| NOT_NAMES.contains(w)) {
        return None;
    }
    Some(head_words)
}

/// Whether what follows a declaration's parameters, `after`, is how a
/// definition's goes on; `typed` when a return type or a modifier came
/// before its name.
fn body_follows(after: &str, typed: bool) -> bool {
    if after.starts_with('{') {
        return true;
    }
    // More brackets: the line goes on past a call (`f(x)) {` ends an `if`);
    // `=`: a value is being built (`T table(x) = {`).
    if after.contains(['(', ')', '=']) {
        return false;
    }
    // Otherwise only a return type or a modifier tells a definition from a
    // call: its body follows (`) throws E {`, `) const`, or `{` below), where
    // a call would have ended in `;` (or, in JavaScript, bare).
    let suffix_ok = after.is_empty()
        || after.ends_with('{')
        || ["const", "noexcept", "override", "final", "throws", "->", "where", "async"]
            .iter()
            .any(|s| after.starts_with(s));
    suffix_ok && typed
}

/// For `text` starting with `open`: the length up to and including the
/// `close` that closes it, if the line has one. The `>` of `->` (`<F: Fn()
/// -> T>`) closes nothing.
fn group_end(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    let mut prev = ' ';
    for (i, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close && !(c == '>' && prev == '-') {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i + c.len_utf8());
            }
        }
        prev = c;
    }
    None
}

/// Most words before a shaped definition's parameters, modifiers aside
/// (`unsigned long long int *name(` has five).
const MAX_HEAD_WORDS: usize = 5;

/// After `const `/`let `/`var `: whether a function is bound to the name.
fn bound_function(after: &str) -> bool {
    let name_end = after.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(after.len());
    if name_end == 0 {
        return false;
    }
    let rest = &after[name_end..];
    // An optional type annotation, then a plain `=`.
    let Some(eq) = rest.find('=') else { return false };
    if !(rest[..eq].trim().is_empty() || rest[..eq].trim_start().starts_with(':'))
        || rest[eq + 1..].starts_with(['=', '>'])
    {
        return false;
    }
    let value = rest[eq + 1..].trim_start();
    let value = value.strip_prefix("async").filter(|v| v.starts_with([' ', '('])).map_or(value, str::trim_start);
    if value.starts_with("function") {
        return true;
    }
    if value.starts_with('(') {
        return group_end(value, '(', ')').is_some_and(|n| value[n..].contains("=>"));
    }
    // `x => …`
    let word_end = value.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(value.len());
    word_end > 0 && value[word_end..].trim_start().starts_with("=>")
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(is_definition(yes), "{yes}");
        }
        for no in [
            "return fn_ptr(x)",
            "self.class = 3",
            "let def = 1;",
            "print(\"def x\")",
            "classify(x)",
            "structure = {}",
            "",
        ] {
            assert!(!is_definition(no), "{no}");
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
            assert!(Declarations::Shaped.starts_definition(yes) != yes.starts_with('@'), "{yes}");
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
            assert!(!Declarations::Shaped.starts_definition(no), "{no}");
        }
        // Only in the languages that declare so: a Python call or a Rust
        // closure line is never taken for one.
        assert_eq!(Declarations::of_path("src/Store.java"), Declarations::Shaped);
        assert_eq!(Declarations::of_path("lib/index.ts"), Declarations::Shaped);
        assert_eq!(Declarations::of_path("src/main.rs"), Declarations::Keyword);
        assert_eq!(Declarations::of_path("pkg/log.py"), Declarations::Keyword);
        assert!(!Declarations::Keyword.starts_definition("retryUpload(file) {"));
    }

    #[test]
    fn definitions_are_known_by_their_names() {
        for (signature, name) in [
            ("pub fn open<T: Into<String>>(path: T) -> Store", Some("open")),
            ("pub(crate) async fn fetch(url: &str)", Some("fetch")),
            ("class Handler(Filterer)", Some("Handler")),
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
            ("public static List<String> names(int n)", Some("names")),
            ("static char *dup(const char *s)", Some("dup")),
            ("Foo::~Foo()", Some("Foo")),
            ("export const load = async (url) => {", Some("load")),
            ("template <typename T> std::vector<T> take(int n)", Some("take")),
            ("function (x)", None),
        ] {
            assert_eq!(definition_name(signature), name, "{signature}");
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
                let _ = Declarations::Shaped.starts_definition(line.trim());
            }
        }
    }
}
