//! Which lines of a text are code and which sit inside a block comment or
//! a string of several lines (`/* … */`, a docstring, `#if 0`): a
//! definition written there (commented out, an example in a docstring) is
//! none, though its line reads as one.

use super::extension;

/// How a language opens and closes a block that is not code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocks {
    /// `/* … */`; with `#if 0 … #endif` too for C and C++.
    Slashes { preprocessor: bool },
    /// Python's strings of several lines, `"""` and `'''`.
    TripleQuotes,
    /// Ruby's `=begin … =end`.
    BeginEnd,
    /// Lua's `--[[ … ]]`.
    LongBrackets,
    /// Haskell's `{- … -}`.
    Braces,
    /// Prose (Markdown, plain text): no line is code, the examples in
    /// its fences included.
    Prose,
    /// None that can hide a definition's line.
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
            "py" | "pyi" => Blocks::TripleQuotes,
            "rb" => Blocks::BeginEnd,
            "lua" => Blocks::LongBrackets,
            "hs" | "lhs" | "elm" | "purs" => Blocks::Braces,
            "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" | "org" => Blocks::Prose,
            _ => Blocks::None,
        }
    }
}

/// The lines of `text` (a chunk of the file at `path`) that start outside
/// any block comment or string of several lines, in order. A chunk that
/// begins inside a block its opening line is not part of is read as code:
/// only what it shows can be told.
pub(super) fn code_lines<'a>(path: &str, text: &'a str) -> Vec<&'a str> {
    let blocks = Blocks::of_path(path);
    if blocks == Blocks::Prose {
        return Vec::new();
    }
    let mut inside: Option<&'static str> = None;
    let mut disabled_depth = 0usize;
    let mut code = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Blocks::Slashes { preprocessor: true } = blocks {
            if disabled(trimmed, &mut disabled_depth) {
                continue;
            }
        }
        if inside.is_none() && opens_at_start(blocks, trimmed) {
            // A line that opens a block at its start is the block's.
            inside = after(blocks, trimmed, None);
            continue;
        }
        if inside.is_none() {
            code.push(line);
        }
        inside = after(blocks, line, inside);
    }
    code
}

/// Whether `trimmed` opens a block at its very start (`/*`, `"""`, `=begin`).
fn opens_at_start(blocks: Blocks, trimmed: &str) -> bool {
    match blocks {
        Blocks::Slashes { .. } => trimmed.starts_with("/*"),
        Blocks::TripleQuotes => trimmed.starts_with("\"\"\"") || trimmed.starts_with("'''"),
        Blocks::BeginEnd => trimmed.starts_with("=begin"),
        Blocks::LongBrackets => trimmed.starts_with("--[["),
        Blocks::Braces => trimmed.starts_with("{-"),
        Blocks::None | Blocks::Prose => false,
    }
}

/// Whether the block (its closing delimiter) is still open after `line`,
/// given whether it was open before it: delimiters read left to right.
fn after(blocks: Blocks, line: &str, mut inside: Option<&'static str>) -> Option<&'static str> {
    let pairs: &[(&str, &'static str)] = match blocks {
        Blocks::Slashes { .. } => &[("/*", "*/")],
        Blocks::TripleQuotes => &[("\"\"\"", "\"\"\""), ("'''", "'''")],
        Blocks::BeginEnd => {
            let t = line.trim_start();
            return match inside {
                None if t.starts_with("=begin") => Some("=end"),
                Some(_) if t.starts_with("=end") => None,
                other => other,
            };
        }
        Blocks::LongBrackets => &[("--[[", "]]")],
        Blocks::Braces => &[("{-", "-}")],
        Blocks::None | Blocks::Prose => return None,
    };
    let mut rest = line;
    loop {
        match inside {
            Some(close) => match rest.find(close) {
                Some(at) => {
                    rest = &rest[at + close.len()..];
                    inside = None;
                }
                None => return inside,
            },
            None => {
                let next = pairs.iter().filter_map(|(open, close)| rest.find(open).map(|at| (at, *open, *close))).min();
                let (at, open, close) = next?;
                // A line comment before it hides it (`// see /* here`).
                if matches!(blocks, Blocks::Slashes { .. }) && rest[..at].contains("//") {
                    return None;
                }
                rest = &rest[at + open.len()..];
                inside = Some(close);
            }
        }
    }
}

/// C's `#if 0 … #endif` (nesting counted in `depth`): whether `trimmed`
/// is inside such a block, its own lines included.
fn disabled(trimmed: &str, depth: &mut usize) -> bool {
    let directive = trimmed.strip_prefix('#').map(str::trim_start);
    if *depth == 0 {
        if directive.is_some_and(|d| d.strip_prefix("if").is_some_and(|rest| rest.trim() == "0")) {
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
    fn lines_in_block_comments_and_docstrings_are_not_code() {
        let js = "/*\nfunction old(a) {\n}\n*/\nfunction kept(b) { /* note */\n  return b; /* start\n function hidden() {\n end */ }\n";
        assert_eq!(code_lines("a.js", js), ["function kept(b) { /* note */", "  return b; /* start"]);
        let py = "def f():\n    \"\"\"Example:\n\n    def example():\n        pass\n    \"\"\"\n    return 1\n";
        assert_eq!(code_lines("a.py", py), ["def f():", "    return 1"]);
        let one_line = "def g():\n    \"\"\"One line.\"\"\"\ndef h():\n";
        assert_eq!(code_lines("a.py", one_line), ["def g():", "def h():"]);
        let c = "#if 0\nint old(void) {\n#if X\n#endif\n}\n#else\nint kept(void) {\n#endif\n";
        assert_eq!(code_lines("a.c", c), ["int kept(void) {", "#endif"]);
        assert_eq!(code_lines("a.rb", "=begin\ndef old\n=end\ndef kept\n"), ["def kept"]);
        assert_eq!(code_lines("a.go", "// see /* here\nfunc kept() {\n"), ["// see /* here", "func kept() {"]);
        assert_eq!(code_lines("a.toml", "/*\ndef x\n*/\n"), ["/*", "def x", "*/"], "no blocks known: all lines");
        assert!(code_lines("README.md", "```\ndef x():\n```\n").is_empty(), "prose is no code");
    }
}
