//! C-family declarations known by their shape rather than a keyword: a
//! return type, a name and parameters (`static char *dup(const char *s)`),
//! or a function bound to a name (`export const load = async (url) =>`).

use super::identifiers;

/// The name of a definition known by its shape (`shaped_definition`): a
/// name bound to a function, or the last word before the parameters.
pub(super) fn shaped_name(signature: &str) -> Option<&str> {
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
pub(super) fn shaped_definition(trimmed: &str) -> bool {
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
pub(super) fn group_end(text: &str, open: char, close: char) -> Option<usize> {
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
