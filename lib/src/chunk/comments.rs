//! Which lines of a text are code and which sit inside a block comment
//! (`/* … */`, `#if 0`, `=begin`) or are prose: a definition written there
//! (commented out, an example in a README) is none, though its line reads
//! as one. When in doubt a line is code: a definition missed costs more
//! than one commented out that passes.

use super::extension;

/// How a language opens and closes a block that is not code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocks {
    /// `/* … */`; with `#if 0 … #endif` too for C and C++.
    Slashes { preprocessor: bool },
    /// Ruby's `=begin … =end`.
    BeginEnd,
    /// Lua's `--[[ … ]]`.
    LongBrackets,
    /// Haskell's `{- … -}`.
    Braces,
    /// Prose (Markdown, plain text): no line is code, the examples in its
    /// fences included.
    Prose,
    /// None that can be told apart safely. Python's strings of several
    /// lines are not: a chunk may begin inside one, whose closing quotes
    /// then read as an opening.
    None,
}

impl Blocks {
    fn of_path(path: &str) -> Blocks {
        match extension(path).as_str() {
            "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ino" | "m" | "mm" => {
                Blocks::Slashes { preprocessor: true }
            }
            "java" | "cs" | "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "kt" | "kts" | "dart"
            | "groovy" | "go" | "rs" | "swift" | "scala" | "sc" | "php" | "css" | "scss" | "sol" => {
                Blocks::Slashes { preprocessor: false }
            }
            "rb" => Blocks::BeginEnd,
            "lua" => Blocks::LongBrackets,
            "hs" | "lhs" | "elm" | "purs" => Blocks::Braces,
            "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" | "org" => Blocks::Prose,
            _ => Blocks::None,
        }
    }

    /// The delimiters of a block opened at the start of a line: one opened
    /// later in a line may be inside a string or a pattern (`'**/*.js'`),
    /// and is not taken for one.
    fn opened_by(self, trimmed: &str) -> Option<(&'static str, &'static str)> {
        let (open, close) = match self {
            Blocks::Slashes { .. } => ("/*", "*/"),
            Blocks::BeginEnd => ("=begin", "=end"),
            Blocks::LongBrackets => ("--[[", "]]"),
            Blocks::Braces => ("{-", "-}"),
            Blocks::Prose | Blocks::None => return None,
        };
        trimmed.starts_with(open).then_some((open, close))
    }
}

/// The code of `text` (a chunk of the file at `path`), line by line in
/// order: each line outside a block that opens at the start of a line and
/// closes within the text, and what follows a block's close on its line
/// (`/* note */ int f(void)`). A block that does not close within the text
/// hides nothing: only what the chunk shows can be told.
pub(super) fn code_lines<'a>(path: &str, text: &'a str) -> Vec<&'a str> {
    let blocks = Blocks::of_path(path);
    if blocks == Blocks::Prose {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    let mut disabled_depth = 0usize;
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if blocks == (Blocks::Slashes { preprocessor: true }) && disabled(trimmed, &mut disabled_depth) {
            i += 1;
            continue;
        }
        if let Some((open, close)) = blocks.opened_by(trimmed) {
            let first = &trimmed[open.len()..];
            let closing = std::iter::once((i, first)).chain((i + 1..lines.len()).map(|j| (j, lines[j])));
            if let Some((end, after)) =
                closing.filter_map(|(j, l)| l.find(close).map(|at| (j, &l[at + close.len()..]))).next()
            {
                if !after.trim().is_empty() {
                    code.push(after.trim_start());
                }
                i = end + 1;
                continue;
            }
        }
        code.push(lines[i]);
        i += 1;
    }
    code
}

/// C's `#if 0 … #endif` (nesting counted in `depth`; `#if (0)`, `#if false`
/// and a comment after the condition too): whether `trimmed` is inside
/// such a block, its own lines included.
fn disabled(trimmed: &str, depth: &mut usize) -> bool {
    let directive = trimmed.strip_prefix('#').map(str::trim_start);
    if *depth == 0 {
        let condition = directive.and_then(|d| d.strip_prefix("if ").or_else(|| d.strip_prefix("if(")));
        let condition = condition.map(|c| c.split("//").next().unwrap_or("").split("/*").next().unwrap_or(""));
        let never = condition.map(|c| c.trim().trim_start_matches('(').trim_end_matches(')').trim());
        if never.is_some_and(|c| c == "0" || c == "false") {
            *depth = 1;
            return true;
        }
        return false;
    }
    match directive {
        Some(d) if d.starts_with("if") => *depth += 1,
        Some(d) if d.starts_with("endif") => *depth -= 1,
        // `#else` of the outermost `#if 0` is code again.
        Some(d) if (d.starts_with("else") || d.starts_with("elif")) && *depth == 1 => *depth = 0,
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_block_comments_are_not_code() {
        let js = "/*\nfunction old(a) {\n}\n*/\nfunction kept(b) { /* note */\n  return b;\n}\n";
        assert_eq!(code_lines("a.js", js), ["function kept(b) { /* note */", "  return b;", "}"]);
        assert_eq!(code_lines("a.c", "/* inline */ int foo(void) {\n"), ["int foo(void) {"]);
        let c = "#if 0 // old\nint old(void) {\n#if X\n#endif\n}\n#else\nint kept(void) {\n#endif\n";
        assert_eq!(code_lines("a.c", c), ["int kept(void) {", "#endif"]);
        assert_eq!(code_lines("a.c", "#if (0)\nint old(void);\n#endif\nint kept(void);\n"), ["int kept(void);"]);
        assert_eq!(code_lines("a.rb", "=begin\ndef old\n=end\ndef kept\n"), ["def kept"]);
        assert!(code_lines("README.md", "```\ndef x():\n```\n").is_empty(), "prose is no code");
    }

    #[test]
    fn an_opening_mid_line_or_never_closed_hides_nothing() {
        // In a string or a pattern, a `/*` opens no comment.
        let js = "module.exports = { testMatch: ['**/*.test.js'] };\nfunction computeTax(a) {\n";
        assert_eq!(code_lines("jest.config.js", js).len(), 2);
        let ts = "const trailing = /\\/*$/;\nexport function normalize(p) {\n";
        assert_eq!(code_lines("strip.ts", ts).len(), 2);
        // A chunk that ends inside a comment, or begins inside a docstring.
        assert_eq!(code_lines("a.go", "/* unfinished\nfunc kept() {\n").len(), 2);
        let py = "    tail of a docstring.\n    \"\"\"\ndef frobnicate():\n    \"\"\"Frob.\"\"\"\n";
        assert_eq!(code_lines("a.py", py).len(), 4);
    }
}
