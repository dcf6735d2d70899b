//! Splitting a file into the pieces that are embedded and returned as hits.
//!
//! Chunks follow the file's structure (`Syntax`): a chunk is one or more
//! whole units (functions, methods, classes, top-level statements, Markdown
//! sections, paragraphs) that fit together in `chunk_size` characters. A
//! unit too big for that is cut at its own inner units (a class at its
//! methods, a function at its statements), and a run with no inner units
//! into line windows. Each chunk but the last then carries up to
//! `chunk_overlap` characters of the whole lines after it. A line longer
//! than `chunk_size` is cut into pieces of its own. Whatever the sizes, no
//! chunk is allowed past the model's input window: a chunk whose tokens do
//! not fit is split again, by lines, then by characters.
//!
//! Structure is read from indentation and a few line shapes (comments,
//! closing brackets, headings), not from a grammar per language: it costs
//! no build time, never fails to parse, and works the same on code laid out
//! the usual way in any language.
//!
//! The steps: `outline` reads each line's depth and role, `split` cuts the
//! outline into pieces of about `chunk_size` and emits them as chunks within
//! the model's window, `context` says what encloses each chunk and what it
//! defines, with the names `definitions` reads from definition lines.

mod comments;
mod context;
mod definitions;
mod outline;
mod shaped;
mod split;

pub use context::{contexts, defined_names, Context};
pub use outline::Syntax;

use outline::Outline;
use split::{emit_lines, split_long_line, Splitter};

/// Version of what a chunk is embedded and word-indexed as; a change
/// rebuilds every index.
/// 1: the chunk's text. 2: its `contexts` line, a newline, then its text.
/// 3: the same, embedded with the model's products in int8 (`int8`), whose
/// vectors differ slightly from format 2's. 4: the same vectors; the context
/// line's words count `terms::CONTEXT_WEIGHT` times in the word index.
/// 5: chunks start and end at unit boundaries (`Syntax`), not line windows.
/// 6: the word index also counts what a chunk defines (`Context::words`).
/// 7: embedded with the feed-forward output projections in int8 too, but for
/// their widest input channels (`int8::Precision::Int8ButWidest`), whose
/// vectors differ slightly from format 6's.
/// 8: contexts also name C, C++, Java, C#, JavaScript/TypeScript, Kotlin and
/// Dart functions and methods declared without a keyword (`Declarations`).
/// 9: each chunk's own names (`Context::names`) are stored and counted,
/// stemmed by `terms::stem`, for hybrid search's name signal.
/// 10: contexts also name Elixir, Haskell, shell, Lua, Zig, Scala and Swift
/// definitions, Go and TypeScript types, and a qualified name's last part
/// (`def self.call` → `call`); a Haskell type signature is kept as the name
/// it declares (`lookup ::`).
pub const FORMAT: u32 = 10;

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

/// Chunk `text`, read as `syntax`; `fits` says whether a candidate chunk
/// fits the model window.
pub fn chunk_text(text: &str, syntax: Syntax, size: usize, overlap: usize, fits: &dyn Fn(&str) -> bool) -> Vec<Chunk> {
    let size = size.max(1);
    let mut lines = split_lines(text);
    if text.ends_with('\n') {
        lines.pop();
    }
    let outline = Outline::new(lines, syntax);
    let splitter = Splitter { outline: &outline, size };
    let mut pieces = Vec::new();
    splitter.split(0, outline.lines.len(), 0, &mut pieces);
    // Each chunk but the last carries up to `overlap` characters of the
    // lines after it, so that what sits at a boundary is seen with both sides.
    let n = outline.lines.len();
    for i in 0..pieces.len().saturating_sub(1) {
        let piece = pieces[i];
        if piece.b - piece.a == 1 && outline.chars(piece.a, piece.b) > size {
            continue; // a long line, cut into pieces of its own
        }
        let mut b = piece.b;
        while b < n && outline.chars(piece.b, b + 1) <= overlap {
            b += 1;
        }
        pieces[i].b = b;
    }
    let mut out = Vec::new();
    for piece in pieces {
        let lines = &outline.lines;
        if piece.b - piece.a == 1 && char_len(lines[piece.a]) > size {
            split_long_line(lines[piece.a], piece.a + 1, size, fits, &mut out);
        } else {
            emit_lines(lines, piece.a, piece.b, fits, &mut out);
        }
    }
    out
}

/// A path's file extension, lower-cased; empty when it has none.
/// The lines of `text` as split at each `\n`, each less the `\r` that
/// ends it (a CRLF's, or the last line's: an editor's `end\r` is the file's
/// end, as vg-format reads it); a lone CR within a line stays. Text that
/// ends with `\n` ends with an empty piece.
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

fn extension(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default()
}

/// Runs of letters, digits, `_` and `$` in `text`: the words of a
/// definition line that can be its name.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).filter(|w| !w.is_empty())
}

/// Columns of indentation, a tab counting four.
fn indent_of(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

/// Characters (not bytes) in `s`.
fn char_len(s: &str) -> usize {
    s.chars().count()
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn always(_: &str) -> bool {
        true
    }

    #[test]
    fn a_line_loses_the_cr_that_ends_it_and_keeps_one_within() {
        assert_eq!(split_lines("a\r\nmid\rdle\nend\r"), ["a", "mid\rdle", "end"]);
        assert_eq!(split_lines("a\r\n"), ["a", ""]);
        assert_eq!(split_lines(""), [""]);
        let chunks = chunk_text("fn f() {}\r\nmid\rdle\r", Syntax::Plain, 500, 0, &always);
        assert_eq!(chunks[0].text, "fn f() {}\nmid\rdle");
    }

    #[test]
    fn a_paragraph_is_cut_into_windows_that_carry_the_next_lines() {
        let text: String = (1..=10).map(|i| format!("line {i:02}\n")).collect(); // 8 chars + newline each
        let chunks = chunk_text(&text, Syntax::Plain, 30, 10, &always);
        let spans: Vec<(usize, usize)> = chunks.iter().map(|c| (c.start_line, c.end_line)).collect();
        // three lines fit in 30 characters; one 8-character line more fits the overlap
        assert_eq!(spans, [(1, 4), (4, 7), (7, 10), (10, 10)]);
        assert_eq!(chunks[0].text, "line 01\nline 02\nline 03\nline 04");
    }

    /// (start, end) of each chunk of `text` with no overlap.
    fn spans(text: &str, syntax: Syntax, size: usize) -> Vec<(usize, usize)> {
        chunk_text(text, syntax, size, 0, &always).iter().map(|c| (c.start_line, c.end_line)).collect()
    }

    #[test]
    fn rust_chunks_are_items_with_their_doc_comments_and_attributes() {
        let rs = "use std::io;\n\n/// Opens the store.\n#[inline]\npub fn open(path: &str) -> Store {\n    let file = File::open(path);\n    Store { file }\n}\n\nimpl Store {\n    /// Reads one record.\n    pub fn read(&self) -> Record {\n        self.file.read()\n    }\n\n    fn close(self) {\n        drop(self.file);\n    }\n}\n";
        // Each function fits alone; the impl does not, so it is cut at its
        // methods, its first line kept with the first and its `}` with the last.
        assert_eq!(spans(rs, Syntax::Code, 130), [(1, 1), (3, 8), (10, 14), (16, 19)]);
        // Small neighbours are packed together.
        assert_eq!(spans(rs, Syntax::Code, 400), [(1, 19)]);
        assert_eq!(spans(rs, Syntax::Code, 150), [(1, 8), (10, 19)]);
    }

    #[test]
    fn python_chunks_are_methods_with_their_decorators() {
        let py = "import os\n\n\nclass Handler(Filterer):\n    level = 0\n\n    @property\n    def name(self):\n        return self._name\n\n    def emit(self, record):\n        if record:\n            self.write(record)\n        else:\n            pass\n\n\ndef top():\n    return 1\n";
        // The class line joins its first members; each method is whole.
        assert_eq!(spans(py, Syntax::Code, 80), [(1, 1), (4, 9), (11, 15), (18, 19)]);
        // A method too big for the size is cut at its statements, `else` kept with its `if`.
        assert_eq!(spans(py, Syntax::Code, 60)[2..], [(7, 9), (11, 13), (14, 15), (18, 19)]);
    }

    #[test]
    fn go_chunks_are_functions_and_type_declarations() {
        let go = "package main\n\n// Server serves.\ntype Server struct {\n\taddr string\n}\n\n// Serve runs it.\nfunc (s *Server) Serve() error {\n\tfor {\n\t\ts.accept()\n\t}\n}\n\nfunc main() {\n\tnew(Server).Serve()\n}\n";
        assert_eq!(spans(go, Syntax::Code, 60), [(1, 1), (3, 6), (8, 13), (15, 17)]);
    }

    #[test]
    fn javascript_and_typescript_chunks_are_functions_and_class_members() {
        let ts = "import { x } from './x';\n\nexport class Cart {\n  items: Item[] = [];\n\n  add(item: Item): void {\n    this.items.push(item);\n  }\n\n  total(): number {\n    return this.items.reduce((a, b) => a + b.price, 0);\n  }\n}\n\nconst empty = () => {\n  return new Cart();\n};\n";
        // The class's opening lines stay with its first member.
        assert_eq!(spans(ts, Syntax::Code, 90), [(1, 1), (3, 8), (10, 13), (15, 17)]);
    }

    #[test]
    fn java_chunks_are_methods_with_their_annotations() {
        let java = "package shop;\n\npublic class Cart {\n    private int count;\n\n    /** Adds one. */\n    @Override\n    public void add(Item item) {\n        count++;\n    }\n\n    public int count() {\n        return count;\n    }\n}\n";
        assert_eq!(spans(java, Syntax::Code, 70), [(1, 1), (3, 4), (6, 10), (12, 15)]);
    }

    #[test]
    fn c_and_cpp_chunks_are_functions_with_their_comments() {
        let c = "#include <stdio.h>\n\n/* Adds two numbers. */\nstatic int add(int a, int b)\n{\n    return a + b;\n}\n\nint main(void) {\n    printf(\"%d\\n\", add(1, 2));\n    return 0;\n}\n";
        assert_eq!(spans(c, Syntax::Code, 70), [(1, 1), (3, 7), (9, 12)]);
    }

    #[test]
    fn markdown_chunks_are_sections_and_paragraphs() {
        let md = "# Title\n\nIntro line one\nintro line two.\n\n## Install\n\nRun this:\n\n```sh\n# not a heading\n\nmake install\n```\n\n## Use\n\nJust use it.\n";
        assert_eq!(spans(md, Syntax::Markdown, 60), [(1, 4), (6, 14), (16, 18)]);
        // A section too big is cut at its paragraphs; the fenced block is not
        // cut at its blank line, and its `#` line is no heading.
        assert_eq!(spans(md, Syntax::Markdown, 40), [(1, 4), (6, 8), (10, 14), (16, 18)]);
    }

    #[test]
    fn the_overlap_carries_the_start_of_the_next_unit() {
        let py = "def a():\n    return 1\n\ndef b():\n    return 2\n";
        let chunks = chunk_text(py, Syntax::Code, 20, 12, &always);
        let spans: Vec<(usize, usize)> = chunks.iter().map(|c| (c.start_line, c.end_line)).collect();
        assert_eq!(spans, [(1, 4), (4, 5)]);
        assert_eq!(chunks[0].text, "def a():\n    return 1\n\ndef b():");
    }

    #[test]
    fn every_line_is_covered_and_progress_is_made() {
        let text: String = (1..=200).map(|i| "x".repeat(i % 37) + "\n").collect();
        let chunks = chunk_text(&text, Syntax::Plain, 100, 99, &always);
        let mut covered = vec![false; 201];
        for c in &chunks {
            assert!(c.start_line <= c.end_line);
            covered[c.start_line..=c.end_line].fill(true);
        }
        for (l, line) in text.lines().enumerate() {
            assert!(line.is_empty() || covered[l + 1], "line {} not covered", l + 1);
        }
        assert!(chunks.windows(2).all(|w| w[1].start_line > w[0].start_line));
    }

    #[test]
    fn long_lines_are_cut_on_char_boundaries() {
        let text = "é".repeat(250);
        let chunks = chunk_text(&text, Syntax::Plain, 100, 0, &always);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.start_line == 1 && c.end_line == 1));
        assert_eq!(chunks.iter().map(|c| c.text.chars().count()).sum::<usize>(), 250);
    }

    #[test]
    fn a_line_of_lone_cr_ends_is_cut_where_they_end_its_parts() {
        // Audit 181: classic Mac line ends make one line (as grep reads
        // it), which was cut every `size` characters, mid-word.
        let text: String = (0..150).map(|i| format!("def f{i}(v):\r    return v * {i}\r\r")).collect();
        let chunks = chunk_text(&text, Syntax::Code, 500, 0, &always);
        assert!(chunks.len() > 5, "{chunks:?}");
        let mut at = 0;
        for c in &chunks {
            assert_eq!((c.start_line, c.end_line), (1, 1));
            assert!(at == 0 || text[..at].ends_with('\r'), "begins mid-part: {:?}", c.text);
            assert!(c.text.chars().count() <= 500, "{:?}", c.text);
            at += c.text.len();
        }
        let joined: String = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(joined.trim_end(), text.trim_end(), "nothing lost or doubled");
        // A part longer than the size is still cut, and so is a piece the window refuses.
        let long = format!("{}\rend", "x".repeat(450));
        let chunks = chunk_text(&long, Syntax::Plain, 200, 0, &always);
        assert_eq!(chunks.iter().map(|c| c.text.as_str()).collect::<String>(), long);
        assert!(chunks.iter().all(|c| c.text.chars().count() <= 200), "{chunks:?}");
        let short_window = |t: &str| t.len() <= 64;
        let chunks = chunk_text(&text, Syntax::Code, 500, 0, &short_window);
        assert!(chunks.iter().all(|c| c.text.len() <= 64), "{chunks:?}");
    }

    #[test]
    fn a_line_long_only_for_its_indentation_is_one_chunk_of_all_of_it() {
        let line = format!("{}apply_patch()", " ".repeat(300));
        let text = format!("def a():\n    return 1\n{line}\ndef b():\n    return 2\n");
        let chunks = chunk_text(&text, Syntax::Code, 100, 0, &always);
        let third: Vec<&Chunk> = chunks.iter().filter(|c| (c.start_line..=c.end_line).contains(&3)).collect();
        assert_eq!(third, [&Chunk { start_line: 3, end_line: 3, text: line }]);
        // Words past the size are still cut, into pieces each holding some.
        let wide = format!("{}{}", "word ".repeat(30), " ".repeat(300));
        let chunks = chunk_text(&wide, Syntax::Plain, 100, 0, &always);
        assert!(chunks.len() > 1 && chunks.iter().all(|c| !c.text.trim().is_empty()), "{chunks:?}");
    }

    #[test]
    fn chunks_that_exceed_the_window_are_split_again() {
        let text: String = (1..=8).map(|i| format!("word{i} word word word\n")).collect();
        let fits = |t: &str| t.split_whitespace().count() <= 4;
        let chunks = chunk_text(&text, Syntax::Plain, 10_000, 0, &fits);
        assert_eq!(chunks.len(), 8);
        assert!(chunks.iter().all(|c| fits(&c.text)));
    }

    #[test]
    fn blank_edges_are_trimmed_and_empty_input_gives_nothing() {
        assert!(chunk_text("", Syntax::Plain, 100, 10, &always).is_empty());
        assert!(chunk_text("\n\n  \n", Syntax::Plain, 100, 10, &always).is_empty());
        let chunks = chunk_text("\n\nfn a() {}\n\n", Syntax::Plain, 100, 10, &always);
        assert_eq!(chunks, vec![Chunk { start_line: 3, end_line: 3, text: "fn a() {}".into() }]);
    }

    #[test]
    fn crlf_line_endings_do_not_leak_into_text() {
        let chunks = chunk_text("a\r\nb\r\n", Syntax::Plain, 100, 0, &always);
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
                lines in proptest::collection::vec("[ \\t]{0,6}([#@}{]|```|//|/\\*)?(\\PC{0,90})?\r?", 0..80),
                size in 50usize..400,
                overlap_share in 0usize..100,
                syntax in prop_oneof![Just(Syntax::Code), Just(Syntax::Markdown), Just(Syntax::Plain)],
            ) {
                let text = lines.join("\n");
                let overlap = size * overlap_share / 100;
                let fits = |t: &str| t.split_whitespace().count() <= 40;
                let chunks = chunk_text(&text, syntax, size, overlap, &fits);
                let n = text.split('\n').count();
                let mut covered = vec![false; n + 1];
                for c in &chunks {
                    prop_assert!(c.start_line >= 1 && c.start_line <= c.end_line && c.end_line <= n, "{c:?}");
                    // Twice the size: a unit's opening and closing lines stay with its
                    // body; then the overlap's lines, after the newline that joins them.
                    prop_assert!(c.text.chars().count() <= 2 * size + 1 + overlap, "{} chars > 2 * {size} + 1 + {overlap}", c.text.chars().count());
                    prop_assert!(fits(&c.text) || c.text.chars().count() <= 1);
                    covered[c.start_line..=c.end_line].fill(true);
                }
                for (i, line) in text.split('\n').enumerate() {
                    prop_assert!(line.trim().is_empty() || covered[i + 1], "line {} not covered", i + 1);
                }
                prop_assert!(chunks.windows(2).all(|w| w[1].start_line >= w[0].start_line));
                let _ = contexts("p.rs", &text, &chunks);
                let _ = contexts("p.java", &text, &chunks);
            }
        }
    }
}
