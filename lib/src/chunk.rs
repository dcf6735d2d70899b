//! Splitting a file into the pieces that are embedded and returned as hits.
//!
//! `chunk_size` counts characters: a chunk is as many whole lines as fit in
//! `chunk_size` characters, and the next chunk starts with up to
//! `chunk_overlap` characters of whole trailing lines from the previous one.
//! A line longer than `chunk_size` is cut into pieces of its own. Whatever
//! the sizes, no chunk is allowed past the model's input window: a chunk
//! whose tokens do not fit is split again, by lines, then by characters.

/// Version of what a chunk is embedded and word-indexed as; a change
/// rebuilds every index.
/// 1: the chunk's text. 2: its `contexts` line, a newline, then its text.
/// 3: the same, embedded with the model's products in int8 (`int8`), whose
/// vectors differ slightly from format 2's. 4: the same vectors; the context
/// line's words count `lexical::CONTEXT_WEIGHT` times in the word index.
pub const FORMAT: u32 = 4;

/// What the model is given for a chunk: its context line, a newline, its text.
pub fn embedded_text(context: &str, text: &str) -> String {
    format!("{context}\n{text}")
}

/// Names an embedded text in the index, so that a chunk whose text is
/// already there (the untouched part of an edited file, a vendored copy, a
/// license header) takes the stored vector instead of being embedded again.
/// 16 bytes of BLAKE3: collisions are out of reach at any index size.
pub fn embed_key(embedded: &str) -> [u8; 16] {
    let hash = blake3::hash(embedded.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&hash.as_bytes()[..16]);
    key
}

/// One piece of a file, with 1-based inclusive line numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
}

/// Chunk `text`; `fits` says whether a candidate chunk fits the model window.
pub fn chunk_text(text: &str, size: usize, overlap: usize, fits: &dyn Fn(&str) -> bool) -> Vec<Chunk> {
    let size = size.max(1);
    let mut lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    let n = lines.len();
    let mut out = Vec::new();
    let mut start = 0;
    while start < n {
        // A chunk never starts on a blank line, so consecutive chunks start on different lines.
        if is_blank(lines[start]) {
            start += 1;
            continue;
        }
        if char_len(lines[start]) > size {
            split_long_line(lines[start], start + 1, size, fits, &mut out);
            start += 1;
            continue;
        }
        let mut end = start;
        let mut len = 0;
        while end < n && char_len(lines[end]) <= size && (end == start || len + char_len(lines[end]) + 1 <= size) {
            len += char_len(lines[end]) + 1;
            end += 1;
        }
        emit_lines(&lines, start, end, fits, &mut out);
        if end >= n {
            break;
        }
        // Step back over whole lines that fit the overlap, but always move forward.
        let mut next = end;
        let mut carried = 0;
        while next > start + 1 && carried + char_len(lines[next - 1]) + 1 <= overlap {
            carried += char_len(lines[next - 1]) + 1;
            next -= 1;
        }
        start = next;
    }
    out
}

/// What each chunk is embedded and word-indexed with besides its own text:
/// the file's path and the definitions that enclose the chunk's first line
/// (`class Handler(...): > def emit(self, record):`), one line per chunk.
/// A chunk from the middle of a function otherwise has no idea which
/// function, class or file it belongs to; the shown text is unchanged.
///
/// Enclosure is read from indentation, which works across languages for
/// code laid out the usual way: a definition line (see `is_definition`)
/// encloses the lines below it that are indented deeper than it.
pub fn contexts(path: &str, text: &str, chunks: &[Chunk]) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    // Definitions enclosing the line being looked at: (indent, signature).
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut next_line = 0; // 0-based: lines before it are in the stack
    let mut out = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let first = chunk.start_line.saturating_sub(1).min(lines.len());
        // Chunks start in order, except that a long line's pieces share one.
        while next_line < first {
            push_line(&mut stack, lines[next_line]);
            next_line += 1;
        }
        let indent = lines.get(first).map_or(0, |l| indent_of(l));
        let enclosing: Vec<&str> = stack.iter().filter(|(d, _)| *d < indent).map(|(_, sig)| sig.as_str()).collect();
        let mut context = path.to_string();
        if !enclosing.is_empty() {
            context.push_str(": ");
            context.push_str(&enclosing.join(" > "));
        }
        out.push(context);
    }
    out
}

/// Longest signature kept in a context, in characters.
const MAX_SIGNATURE_CHARS: usize = 120;

fn push_line(stack: &mut Vec<(usize, String)>, line: &str) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if is_blank(line) {
        return;
    }
    let indent = indent_of(line);
    let trimmed = line.trim();
    // Closing brackets and comments say nothing about nesting.
    if trimmed.starts_with(['}', ')', ']', '#', '/', '*', '@']) && !is_definition(trimmed) {
        return;
    }
    while stack.last().is_some_and(|(d, _)| *d >= indent) {
        stack.pop();
    }
    if is_definition(trimmed) {
        let signature: String =
            trimmed.trim_end_matches(['{', ':']).trim_end().chars().take(MAX_SIGNATURE_CHARS).collect();
        stack.push((indent, signature));
    }
}

fn indent_of(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

/// Whether a trimmed line starts a definition in one of the common
/// languages: `def`, `class`, `fn`, `impl`, `func`, `function`, `struct`, …,
/// after any modifiers (`pub(crate)`, `async`, `export`, `static`, …).
pub fn is_definition(trimmed: &str) -> bool {
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
            return after.is_some_and(|c| c == ' ' || c == '<' || c == '(' && (word == "fn" || word == "func"))
                || (word == "func" && after == Some('('));
        }
        if !MODIFIERS.contains(&word) || word.is_empty() {
            return false;
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

fn char_len(s: &str) -> usize {
    s.chars().count()
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// Emit lines `[a, b)` (0-based) as one chunk, trimmed of blank edge lines,
/// splitting further while the model window is exceeded.
fn emit_lines(lines: &[&str], mut a: usize, mut b: usize, fits: &dyn Fn(&str) -> bool, out: &mut Vec<Chunk>) {
    while a < b && is_blank(lines[a]) {
        a += 1;
    }
    while b > a && is_blank(lines[b - 1]) {
        b -= 1;
    }
    if a >= b {
        return;
    }
    let text = lines[a..b].join("\n");
    if fits(&text) {
        out.push(Chunk { start_line: a + 1, end_line: b, text });
    } else if b - a == 1 {
        split_long_line(lines[a], a + 1, char_len(lines[a]).div_ceil(2).max(1), fits, out);
    } else {
        let mid = a + (b - a) / 2;
        emit_lines(lines, a, mid, fits, out);
        emit_lines(lines, mid, b, fits, out);
    }
}

/// Cut one line into pieces of at most `size` characters that fit the window.
fn split_long_line(line: &str, line_no: usize, size: usize, fits: &dyn Fn(&str) -> bool, out: &mut Vec<Chunk>) {
    let chars: Vec<char> = line.chars().collect();
    for piece in chars.chunks(size.max(1)) {
        let text: String = piece.iter().collect();
        if is_blank(&text) {
            continue;
        }
        if fits(&text) || piece.len() <= 1 {
            out.push(Chunk { start_line: line_no, end_line: line_no, text });
        } else {
            split_long_line(&text, line_no, piece.len().div_ceil(2), fits, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn always(_: &str) -> bool {
        true
    }

    #[test]
    fn lines_are_grouped_up_to_size_with_overlap() {
        let text: String = (1..=10).map(|i| format!("line {i:02}\n")).collect(); // 8 chars + newline each
        let chunks = chunk_text(&text, 30, 10, &always);
        assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 3));
        // one 9-character line of overlap carried into the next chunk
        assert_eq!((chunks[1].start_line, chunks[1].end_line), (3, 5));
        assert_eq!(chunks.last().unwrap().end_line, 10);
        assert_eq!(chunks[0].text, "line 01\nline 02\nline 03");
    }

    #[test]
    fn every_line_is_covered_and_progress_is_made() {
        let text: String = (1..=200).map(|i| "x".repeat(i % 37) + "\n").collect();
        let chunks = chunk_text(&text, 100, 99, &always);
        let mut covered = vec![false; 201];
        for c in &chunks {
            assert!(c.start_line <= c.end_line);
            for l in c.start_line..=c.end_line {
                covered[l] = true;
            }
        }
        for (l, line) in text.lines().enumerate() {
            assert!(line.is_empty() || covered[l + 1], "line {} not covered", l + 1);
        }
        assert!(chunks.windows(2).all(|w| w[1].start_line > w[0].start_line));
    }

    #[test]
    fn long_lines_are_cut_on_char_boundaries() {
        let text = "é".repeat(250);
        let chunks = chunk_text(&text, 100, 0, &always);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.start_line == 1 && c.end_line == 1));
        assert_eq!(chunks.iter().map(|c| c.text.chars().count()).sum::<usize>(), 250);
    }

    #[test]
    fn chunks_that_exceed_the_window_are_split_again() {
        let text: String = (1..=8).map(|i| format!("word{i} word word word\n")).collect();
        let fits = |t: &str| t.split_whitespace().count() <= 4;
        let chunks = chunk_text(&text, 10_000, 0, &fits);
        assert_eq!(chunks.len(), 8);
        assert!(chunks.iter().all(|c| fits(&c.text)));
    }

    #[test]
    fn blank_edges_are_trimmed_and_empty_input_gives_nothing() {
        assert!(chunk_text("", 100, 10, &always).is_empty());
        assert!(chunk_text("\n\n  \n", 100, 10, &always).is_empty());
        let chunks = chunk_text("\n\nfn a() {}\n\n", 100, 10, &always);
        assert_eq!(chunks, vec![Chunk { start_line: 3, end_line: 3, text: "fn a() {}".into() }]);
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
    fn contexts_name_the_path_and_enclosing_definitions() {
        let py = "import os\n\nclass Handler(Filterer):\n    level = 0\n\n    def emit(self, record):\n        if record:\n            # note\n            write(record)\n\n    def flush(self):\n        pass\n\ndef top():\n    return 1\n";
        let chunk = |a: usize, b: usize| Chunk { start_line: a, end_line: b, text: String::new() };
        let got = contexts("pkg/log.py", py, &[chunk(1, 2), chunk(4, 4), chunk(7, 9), chunk(12, 12), chunk(15, 15)]);
        assert_eq!(got[0], "pkg/log.py");
        assert_eq!(got[1], "pkg/log.py: class Handler(Filterer)");
        assert_eq!(got[2], "pkg/log.py: class Handler(Filterer) > def emit(self, record)");
        assert_eq!(got[3], "pkg/log.py: class Handler(Filterer) > def flush(self)");
        assert_eq!(got[4], "pkg/log.py: def top()");
        let rs = "impl Store {\n    pub fn open() -> Self {\n        let x = 1;\n    }\n\n    fn close(&self) {\n        drop(self);\n    }\n}\n\nfn free() {}\n";
        let got = contexts("src/store.rs", rs, &[chunk(3, 3), chunk(7, 7), chunk(11, 11)]);
        assert_eq!(got[0], "src/store.rs: impl Store > pub fn open() -> Self");
        assert_eq!(got[1], "src/store.rs: impl Store > fn close(&self)");
        assert_eq!(got[2], "src/store.rs");
    }

    #[test]
    fn crlf_line_endings_do_not_leak_into_text() {
        let chunks = chunk_text("a\r\nb\r\n", 100, 0, &always);
        assert_eq!(chunks[0].text, "a\nb");
    }

    mod fuzz {
        //! Property tests for the chunker: whatever the text and sizes, every
        //! non-blank line is in a chunk, chunks keep to the size and the
        //! window, and line numbers are in order and in range.
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn chunks_cover_every_line_and_keep_their_limits(
                lines in proptest::collection::vec("[ \\t]{0,6}(\\PC{0,90})?\r?", 0..80),
                size in 50usize..400,
                overlap_share in 0usize..100,
            ) {
                let text = lines.join("\n");
                let overlap = size * overlap_share / 100;
                let fits = |t: &str| t.split_whitespace().count() <= 40;
                let chunks = chunk_text(&text, size, overlap, &fits);
                let n = text.split('\n').count();
                let mut covered = vec![false; n + 1];
                for c in &chunks {
                    prop_assert!(c.start_line >= 1 && c.start_line <= c.end_line && c.end_line <= n, "{c:?}");
                    prop_assert!(c.text.chars().count() <= size, "{} chars > {size}", c.text.chars().count());
                    prop_assert!(fits(&c.text) || c.text.chars().count() <= 1);
                    for l in c.start_line..=c.end_line {
                        covered[l] = true;
                    }
                }
                for (i, line) in text.split('\n').enumerate() {
                    prop_assert!(line.trim().is_empty() || covered[i + 1], "line {} not covered", i + 1);
                }
                prop_assert!(chunks.windows(2).all(|w| w[1].start_line >= w[0].start_line));
                let _ = contexts("p.rs", &text, &chunks);
            }
        }
    }
}
