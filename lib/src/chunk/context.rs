//! What each chunk is embedded and word-indexed with besides its own text:
//! where it is (its path and the definitions enclosing it) and what it
//! defines, with the names of both.

use super::definitions::Declarations;
use super::{indent_of, is_blank, Chunk};

/// What each chunk is embedded and word-indexed with besides its own text:
/// the file's path and the definitions that enclose the chunk's first line
/// (`class Handler(...): > def emit(self, record):`), and for the word index
/// the definitions the chunk makes itself.
/// A chunk from the middle of a function otherwise has no idea which
/// function, class or file it belongs to; the shown text is unchanged.
///
/// Enclosure is read from indentation, which works across languages for
/// code laid out the usual way: a definition line (`Declarations`) encloses the lines below it that
/// are indented deeper than it.
pub fn contexts(path: &str, text: &str, chunks: &[Chunk]) -> Vec<Context> {
    let declarations = Declarations::of_path(path);
    let lines: Vec<&str> = text.split('\n').collect();
    // Definitions enclosing the line being looked at: (indent, signature).
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut next_line = 0; // 0-based: lines before it are in the stack
    let mut out = Vec::with_capacity(chunks.len());
    // The pieces of one long line share its range, and so their context:
    // worked out once, not once a piece (each reading the whole line, its
    // definitions and its indentation, made a 1 MB line take minutes).
    let mut last_range = None;
    for chunk in chunks {
        let first = chunk.start_line.saturating_sub(1).min(lines.len());
        let last = chunk.end_line.min(lines.len()).max(first);
        if let Some(same) = out.last().filter(|_| last_range == Some((first, last))).cloned() {
            out.push(same);
            continue;
        }
        last_range = Some((first, last));
        // Chunks start in order, except that a long line's pieces share one.
        while next_line < first {
            push_line(&mut stack, lines[next_line], declarations);
            next_line += 1;
        }
        let indent = lines.get(first).map_or(0, |l| indent_of(l));
        let enclosing: Vec<&str> = stack.iter().filter(|(d, _)| *d < indent).map(|(_, sig)| sig.as_str()).collect();
        let context = around_line(path, &enclosing);
        let defined = defined_in(&lines[first..last], declarations);
        let mut names: Vec<String> = Vec::new();
        for sig in enclosing.last().into_iter().copied().chain(defined.iter().map(String::as_str)) {
            if let Some(name) = declarations.name(sig) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        out.push(Context { around: context, defined, names });
    }
    out
}

/// The longest path `around` keeps whole; a longer one keeps its last
/// components. Real trees' paths are shorter (SB's longest: 88 characters).
const MAX_AROUND_PATH_CHARS: usize = 240;

/// The most characters of `around` that the enclosing definitions may
/// fill, path included; the innermost are kept. SB's 71k chunks have none
/// longer than 348. Without a bound, a file nesting hundreds of definitions
/// gave each chunk all of them: work and storage grew with the square of
/// the depth, and the model's window held the context and none of the chunk.
const MAX_AROUND_CHARS: usize = 480;

/// `path: outermost > … > innermost`, within `MAX_AROUND_CHARS`: outer
/// definitions that do not fit give way to `…`, and a path past
/// `MAX_AROUND_PATH_CHARS` keeps its tail after `…/`.
fn around_line(path: &str, enclosing: &[&str]) -> String {
    let mut line = tail_of_path(path);
    if enclosing.is_empty() {
        return line;
    }
    let mut room = MAX_AROUND_CHARS.saturating_sub(line.chars().count() + ": … > ".chars().count());
    let mut kept = 0;
    for sig in enclosing.iter().rev() {
        let cost = sig.chars().count() + " > ".len();
        if kept > 0 && cost > room {
            break;
        }
        room = room.saturating_sub(cost);
        kept += 1;
    }
    line.push_str(": ");
    if kept < enclosing.len() {
        line.push_str("… > ");
    }
    line.push_str(&enclosing[enclosing.len() - kept..].join(" > "));
    line
}

/// `path`, or when it is longer than `MAX_AROUND_PATH_CHARS`, `…/` and the
/// last components that fit (the file name alone cut to its end if even
/// that is longer).
fn tail_of_path(path: &str) -> String {
    if path.chars().count() <= MAX_AROUND_PATH_CHARS {
        return path.to_string();
    }
    let mut start = path.len();
    for (i, _) in path.match_indices('/').rev() {
        if path[i + 1..].chars().count() + "…/".chars().count() > MAX_AROUND_PATH_CHARS {
            break;
        }
        start = i + 1;
    }
    if start == path.len() {
        let name = path.rsplit('/').next().unwrap_or(path);
        let skip = name.chars().count().saturating_sub(MAX_AROUND_PATH_CHARS - 2);
        return format!("…/{}", name.chars().skip(skip).collect::<String>());
    }
    format!("…/{}", &path[start..])
}

/// The names that the definition lines among `text` (lines of the file at
/// `path`, at any depth) give (`class Engine < Railtie` → `Engine`): what
/// a chunk defines, as against the definitions it is in, which its stored
/// names do not tell apart.
/// A line inside a block comment or a string of several lines defines
/// nothing (`comments::code_lines`).
pub fn defined_names<'a>(path: &str, text: &'a str) -> Vec<&'a str> {
    let declarations = Declarations::of_path(path);
    super::comments::code_lines(path, text)
        .into_iter()
        .map(str::trim)
        .filter(|line| declarations.starts_definition(line))
        .filter_map(|line| declarations.name(line))
        .collect()
}

/// Where a chunk is (`around`: its path and the definitions enclosing it)
/// and what it defines at its own top level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    pub around: String,
    pub defined: Vec<String>,
    /// The chunk's own names (`search::names` scores them): the innermost definition around it
    /// and those it makes, each once.
    pub names: Vec<String>,
}

impl Context {
    /// The line the word index counts `terms::CONTEXT_WEIGHT` times: the
    /// names of what the chunk defines say what it is about, like those
    /// around it. The model is given `around` only, since the definitions'
    /// first lines are in the chunk's text already.
    pub fn words(&self) -> String {
        if self.defined.is_empty() {
            return self.around.clone();
        }
        let sep = if self.around.contains(": ") { " > " } else { ": " };
        format!("{}{sep}{}", self.around, self.defined.join(", "))
    }
}

/// The signatures of the definitions a chunk's lines make at their
/// shallowest indentation: what the chunk itself defines.
fn defined_in(lines: &[&str], declarations: Declarations) -> Vec<String> {
    let Some(top) = lines.iter().filter(|l| !is_blank(l)).map(|l| indent_of(l)).min() else {
        return Vec::new();
    };
    lines
        .iter()
        .filter(|l| !is_blank(l) && indent_of(l) == top && declarations.starts_definition(l.trim()))
        .map(|l| declarations.signature(l.trim()))
        .collect()
}

fn push_line(stack: &mut Vec<(usize, String)>, line: &str, declarations: Declarations) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if is_blank(line) {
        return;
    }
    let indent = indent_of(line);
    let trimmed = line.trim();
    // Closing brackets and comments say nothing about nesting.
    let definition = declarations.starts_definition(trimmed);
    let remark = trimmed.starts_with("--") || trimmed.starts_with("{-");
    if (remark || trimmed.starts_with(['}', ')', ']', '#', '/', '*', '@'])) && !definition {
        return;
    }
    if !definition && stack.last().is_some_and(|(d, sig)| *d == indent && declarations.continues(sig, trimmed)) {
        return;
    }
    while stack.last().is_some_and(|(d, _)| *d >= indent) {
        stack.pop();
    }
    if definition {
        stack.push((indent, declarations.signature(trimmed)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn around_keeps_the_innermost_definitions_and_the_paths_tail_within_its_bound() {
        // Hundreds of nested definitions: each chunk's context stays bounded.
        let deep: String = (0..300).map(|i| format!("{}function level{i}(a, b) {{\n", "  ".repeat(i))).collect();
        let last = Chunk { start_line: 300, end_line: 300, text: String::new() };
        let around = &contexts("deep.js", &deep, &[last])[0].around;
        assert!(around.chars().count() <= MAX_AROUND_CHARS, "{} chars", around.chars().count());
        assert!(around.starts_with("deep.js: … > function level"), "{around}");
        assert!(around.ends_with("function level298(a, b)"), "{around}");
        // A path too long to keep keeps its last components, whole.
        let path = format!("{}src/retry.rs", "nested/".repeat(200));
        let around = around_line(&path, &["fn upload()"]);
        assert!(around.starts_with("…/nested/") && around.ends_with("/src/retry.rs: fn upload()"), "{around}");
        assert!(around.chars().count() <= MAX_AROUND_PATH_CHARS + ": fn upload()".len(), "{around}");
        // A file name longer than the bound keeps its end.
        let around = around_line(&format!("d/{}.rs", "x".repeat(300)), &[]);
        assert_eq!(around.chars().count(), MAX_AROUND_PATH_CHARS);
        assert!(around.starts_with("…/xxx") && around.ends_with("x.rs"), "{around}");
        // What fits is left as it was.
        assert_eq!(around_line("a/b.py", &["class A", "def f(self)"]), "a/b.py: class A > def f(self)");
    }

    #[test]
    fn a_long_lines_pieces_share_what_the_line_defines_read_once() {
        let pieces = |path: &str, line: &str| {
            let chunks = super::super::chunk_text(line, super::super::Syntax::Plain, 500, 0, &|_: &str| true);
            assert!(chunks.len() >= 2000, "{} pieces", chunks.len());
            let contexts = contexts(path, line, &chunks);
            assert_eq!(contexts.len(), chunks.len());
            assert!(contexts.iter().all(|c| c.defined == contexts[0].defined && c.names == contexts[0].names));
            contexts[0].names.clone()
        };
        // One word of 1M letters: read once a piece, each of its 2,000
        // pieces scanned the whole word for a keyword (minutes in a debug build).
        assert!(pieces("blob.txt", &"a".repeat(1_000_000)).is_empty());
        // Its indentation too, once for all its pieces.
        assert!(pieces("blob.txt", &format!("{}{}", " ".repeat(1_000_000), "a".repeat(1_000_000))).is_empty());
        assert_eq!(pieces("big.py", &format!("def load_all(n): return {}n", "n + ".repeat(250_000))), ["load_all"]);
    }

    #[test]
    fn defined_names_are_those_of_definition_lines_at_any_depth() {
        let rb = "  # class Engine < Rails::Engine (a comment)\n  class Engine < Railtie\n    autoload :Configuration\n    def self.find(path)\n";
        assert_eq!(defined_names("rails/engine.rb", rb), ["Engine", "find"]);
        let ts = "export class ZodError<T = any> extends Error {\n  issues: ZodIssue[] = [];\n";
        assert_eq!(defined_names("src/ZodError.ts", ts), ["ZodError"]);
        assert_eq!(defined_names("mux.go", "type Router interface {\n\tUse()\n}\n"), ["Router"]);
        assert!(defined_names("app.py", "router = APIRouter()\nrouter.include(x)\n").is_empty());
    }

    #[test]
    fn contexts_name_c_family_methods() {
        let java = "public class Uploader {\n    private int tries;\n\n    public void retryUpload(File f) throws IOException {\n        for (int i = 0; i < tries; i++) {\n            send(f);\n        }\n    }\n}\n";
        let chunk = |a: usize, b: usize| Chunk { start_line: a, end_line: b, text: String::new() };
        let got = contexts("src/Uploader.java", java, &[chunk(6, 6), chunk(4, 8)]);
        assert_eq!(
            got[0].around,
            "src/Uploader.java: public class Uploader > public void retryUpload(File f) throws IOException"
        );
        assert_eq!(got[1].defined, ["public void retryUpload(File f) throws IOException"]);
        let c = "static int\nparse(const char *s)\n{\n    return atoi(s);\n}\n\nint main(void) {\n    return parse(\"1\");\n}\n";
        let got = contexts("src/main.c", c, &[chunk(8, 8)]);
        assert_eq!(got[0].around, "src/main.c: int main(void)");
    }

    #[test]
    fn contexts_follow_haskell_equations_elixir_modules_and_shell_functions() {
        let chunk = |a: usize, b: usize| Chunk { start_line: a, end_line: b, text: String::new() };
        // The equations below a type signature go on with its definition,
        // and a comment between them ends nothing.
        let hs = "module Tree where\n\n-- | Look a key up.\nlookup :: Ord k => k -> Tree k v -> Maybe v\nlookup _ Leaf = Nothing\nlookup k (Node l x r)\n  | k < x = lookup k l\n  | otherwise = Just x\n";
        let got = contexts("src/Tree.hs", hs, &[chunk(7, 8)]);
        assert_eq!(got[0].around, "src/Tree.hs: lookup ::");
        assert_eq!(got[0].names, ["lookup"]);
        let ex = "defmodule Ecto.Repo do\n  @doc \"Inserts.\"\n  def insert(repo, struct) do\n    repo.insert(struct)\n  end\nend\n";
        let got = contexts("lib/ecto/repo.ex", ex, &[chunk(4, 4)]);
        assert_eq!(got[0].around, "lib/ecto/repo.ex: defmodule Ecto.Repo do > def insert(repo, struct) do");
        assert_eq!(got[0].names, ["insert"]);
        let sh = "retry() {\n  local n=3\n  run \"$@\"\n}\n";
        assert_eq!(contexts("lib/retry.bash", sh, &[chunk(3, 3)])[0].names, ["retry"]);
    }

    #[test]
    fn contexts_name_the_path_and_enclosing_definitions() {
        let py = "import os\n\nclass Handler(Filterer):\n    level = 0\n\n    def emit(self, record):\n        if record:\n            # note\n            write(record)\n\n    def flush(self):\n        pass\n\ndef top():\n    return 1\n";
        let chunk = |a: usize, b: usize| Chunk { start_line: a, end_line: b, text: String::new() };
        let got: Vec<String> =
            contexts("pkg/log.py", py, &[chunk(1, 2), chunk(4, 4), chunk(7, 9), chunk(12, 12), chunk(15, 15)])
                .into_iter()
                .map(|c| c.around)
                .collect();
        assert_eq!(got[0], "pkg/log.py");
        assert_eq!(got[1], "pkg/log.py: class Handler(Filterer)");
        assert_eq!(got[2], "pkg/log.py: class Handler(Filterer) > def emit(self, record)");
        assert_eq!(got[3], "pkg/log.py: class Handler(Filterer) > def flush(self)");
        assert_eq!(got[4], "pkg/log.py: def top()");
        let rs = "impl Store {\n    pub fn open() -> Self {\n        let x = 1;\n    }\n\n    fn close(&self) {\n        drop(self);\n    }\n}\n\nfn free() {}\n";
        let got = contexts("src/store.rs", rs, &[chunk(3, 3), chunk(7, 7), chunk(11, 11)]);
        assert_eq!(got[0].words(), "src/store.rs: impl Store > pub fn open() -> Self");
        assert_eq!(got[1].words(), "src/store.rs: impl Store > fn close(&self)");
        assert_eq!(got[2].around, "src/store.rs");
        assert_eq!(got[2].words(), "src/store.rs: fn free() {}");
        // A chunk names what it defines, at its own top level only.
        let got = contexts("src/store.rs", rs, &[chunk(1, 9), chunk(2, 8)]);
        assert_eq!(got[0].words(), "src/store.rs: impl Store");
        assert_eq!(got[1].around, "src/store.rs: impl Store");
        assert_eq!(got[1].defined, ["pub fn open() -> Self", "fn close(&self)"]);
        assert_eq!(got[1].words(), "src/store.rs: impl Store > pub fn open() -> Self, fn close(&self)");
    }

    #[test]
    fn contexts_give_each_chunk_its_own_names() {
        let rs = "impl Store {\n    pub fn open() -> Self {\n        let x = 1;\n    }\n\n    fn close(&self) {\n        drop(self);\n    }\n}\n\nfn free() {}\n";
        let chunk = |a: usize, b: usize| Chunk { start_line: a, end_line: b, text: String::new() };
        let got = contexts("src/store.rs", rs, &[chunk(3, 3), chunk(2, 8), chunk(1, 9), chunk(11, 11), chunk(10, 10)]);
        // The innermost definition around the chunk, then what it defines.
        assert_eq!(got[0].names, ["open"]);
        assert_eq!(got[1].names, ["Store", "open", "close"]);
        assert_eq!(got[2].names, ["Store"]);
        assert_eq!(got[3].names, ["free"]);
        assert!(got[4].names.is_empty());
        let py = "class Handler(Filterer):\n    def emit(self, record):\n        pass\n";
        assert_eq!(contexts("log.py", py, &[chunk(3, 3)])[0].names, ["emit"]);
        assert_eq!(contexts("log.py", py, &[chunk(2, 3)])[0].names, ["Handler", "emit"]);
    }
}
