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

/// Version of what a chunk is embedded and word-indexed as; a change
/// rebuilds every index.
/// 1: the chunk's text. 2: its `contexts` line, a newline, then its text.
/// 3: the same, embedded with the model's products in int8 (`int8`), whose
/// vectors differ slightly from format 2's. 4: the same vectors; the context
/// line's words count `lexical::CONTEXT_WEIGHT` times in the word index.
/// 5: chunks start and end at unit boundaries (`Syntax`), not line windows.
/// 6: the word index also counts what a chunk defines (`Context::words`).
/// 7: embedded with the feed-forward output projections in int8 too, but for
/// their widest input channels (`int8::Precision::Int8ButWidest`), whose
/// vectors differ slightly from format 6's.
/// 8: contexts also name C, C++, Java, C#, JavaScript/TypeScript, Kotlin and
/// Dart functions and methods declared without a keyword (`Declarations`).
/// 9: each chunk's own names (`Context::names`) are stored and counted,
/// stemmed by `names::stem`, for hybrid search's name signal.
pub const FORMAT: u32 = 9;

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
    let mut lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
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

/// How a file's lines group into units (definitions, blocks, sections,
/// paragraphs), chosen from its path. Chunks start and end at unit
/// boundaries wherever the units fit in `chunk_size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Source code and structured text: units nest by indentation, and a
    /// definition's leading comments and attributes belong to it.
    Code,
    /// Markdown: sections nest by heading level; paragraphs and fenced code
    /// blocks stay whole.
    Markdown,
    /// Prose and data with no nesting: blank-line separated paragraphs.
    Plain,
}

impl Syntax {
    pub fn of_path(path: &str) -> Syntax {
        match extension(path).as_str() {
            "md" | "markdown" | "mdx" | "mkd" => Syntax::Markdown,
            "txt" | "text" | "rst" | "adoc" | "csv" | "tsv" | "log" => Syntax::Plain,
            _ => Syntax::Code,
        }
    }
}

/// A path's file extension, lower-cased; empty when it has none.
fn extension(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default()
}

/// Where a line stands in its file's structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Blank,
    /// A comment, attribute or decorator: it belongs to the unit below it.
    Lead,
    /// Ends or continues the unit above it: `}`, `) -> T {`, `else:`, `where`.
    Closer,
    /// Continues the paragraph or fenced block above it (Markdown, Plain).
    Continues,
    /// Anything else: it may start a unit.
    Start,
}

/// A file's lines with what the splitter needs to know about each.
struct Outline<'a> {
    lines: Vec<&'a str>,
    /// Nesting depth of each line; deeper lines belong to the shallower line above.
    depth: Vec<usize>,
    role: Vec<Role>,
    /// `offset[i]`: characters in lines `0..i`, each counted with its newline.
    offset: Vec<usize>,
}

impl<'a> Outline<'a> {
    fn new(lines: Vec<&'a str>, syntax: Syntax) -> Self {
        let (depth, role) = match syntax {
            Syntax::Code => code_outline(&lines),
            Syntax::Markdown => markdown_outline(&lines),
            Syntax::Plain => plain_outline(&lines),
        };
        let mut offset = Vec::with_capacity(lines.len() + 1);
        offset.push(0);
        for l in &lines {
            offset.push(offset.last().unwrap() + char_len(l) + 1);
        }
        Outline { lines, depth, role, offset }
    }

    /// Characters in lines `[a, b)` joined by newlines.
    fn chars(&self, a: usize, b: usize) -> usize {
        (self.offset[b] - self.offset[a]).saturating_sub(1)
    }

    /// `[a, b)` without its blank first and last lines.
    fn trim(&self, mut a: usize, mut b: usize) -> (usize, usize) {
        while a < b && self.role[a] == Role::Blank {
            a += 1;
        }
        while b > a && self.role[b - 1] == Role::Blank {
            b -= 1;
        }
        (a, b)
    }
}

fn code_outline(lines: &[&str]) -> (Vec<usize>, Vec<Role>) {
    let mut depth = Vec::with_capacity(lines.len());
    let mut role = Vec::with_capacity(lines.len());
    let mut in_block_comment = false;
    for line in lines {
        let trimmed = line.trim();
        depth.push(indent_of(line));
        if trimmed.is_empty() {
            role.push(Role::Blank);
            continue;
        }
        let comment = in_block_comment || is_comment(trimmed);
        if trimmed.starts_with("/*") && !trimmed.contains("*/") {
            in_block_comment = true;
        } else if in_block_comment && trimmed.contains("*/") {
            in_block_comment = false;
        }
        // `is_comment` takes `#` lines, Rust's `#[attributes]` among them.
        role.push(if comment || trimmed.starts_with('@') {
            Role::Lead
        } else if is_closer(trimmed) {
            Role::Closer
        } else {
            Role::Start
        });
    }
    // A blank line takes the depth of the next line that is not blank, so
    // that the blank lines inside a body count as part of it.
    let mut next = 0;
    for i in (0..lines.len()).rev() {
        if role[i] == Role::Blank {
            depth[i] = next;
        } else {
            next = depth[i];
        }
    }
    (depth, role)
}

fn is_comment(trimmed: &str) -> bool {
    trimmed.starts_with("//")
        || trimmed.starts_with("/*")
        || trimmed.starts_with("*/")
        || trimmed == "*"
        || trimmed.starts_with("* ")
        || trimmed.starts_with("--")
        || (trimmed.starts_with('#') && !trimmed.starts_with("#!") && !trimmed.starts_with("#{"))
}

/// A line that closes or continues the construct above it rather than
/// starting one of its own.
fn is_closer(trimmed: &str) -> bool {
    if trimmed.starts_with(['}', ')', ']', '{']) {
        return true;
    }
    const CONTINUATIONS: &[&str] =
        &["else", "elif", "except", "finally", "catch", "where", "end", "done", "fi", "esac", "until"];
    let word_end = trimmed.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(trimmed.len());
    CONTINUATIONS.contains(&&trimmed[..word_end])
}

fn markdown_outline(lines: &[&str]) -> (Vec<usize>, Vec<Role>) {
    let mut depth = Vec::with_capacity(lines.len());
    let mut role = Vec::with_capacity(lines.len());
    let mut section = 0; // level of the heading above
    let mut fence: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let fence_mark = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        let level = heading_level(line);
        if let Some(open) = fence {
            depth.push(2 * section + 1);
            role.push(Role::Continues);
            if fence_mark == Some(open) {
                fence = None;
            }
        } else if let Some(level) = level {
            section = level;
            depth.push(2 * (level - 1));
            role.push(Role::Start);
        } else if trimmed.is_empty() {
            depth.push(2 * section + 1);
            role.push(Role::Blank);
        } else {
            depth.push(2 * section + 1);
            let after_text = i > 0 && !lines[i - 1].trim().is_empty() && heading_level(lines[i - 1]).is_none();
            role.push(if after_text { Role::Continues } else { Role::Start });
            fence = fence_mark;
        }
    }
    (depth, role)
}

/// The level of an ATX heading (`## Title`), if the line is one.
fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    let rest = &line[hashes..];
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some(hashes)
}

fn plain_outline(lines: &[&str]) -> (Vec<usize>, Vec<Role>) {
    let role = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match (l.trim().is_empty(), i > 0 && !lines[i - 1].trim().is_empty()) {
            (true, _) => Role::Blank,
            (false, true) => Role::Continues,
            (false, false) => Role::Start,
        })
        .collect();
    (vec![0; lines.len()], role)
}

/// A run of lines `[a, b)` (0-based) on its way to becoming a chunk.
/// `whole` when it is one or more complete units, not a piece of a split one.
#[derive(Clone, Copy, Debug)]
struct Piece {
    a: usize,
    b: usize,
    whole: bool,
}

/// Deeper than this, a unit is cut into line windows without looking at its
/// structure: it bounds the work on pathological nesting.
const MAX_NESTING: usize = 64;

/// Cuts a file's outline into pieces of about `size` characters.
struct Splitter<'o, 'a> {
    outline: &'o Outline<'a>,
    size: usize,
}

impl Splitter<'_, '_> {
    /// Cut `[a, b)` into pieces of at most `size` characters (twice that
    /// where a unit's opening or closing lines stay with its body), at the
    /// boundaries of the largest units that fit, packing neighbouring whole
    /// units together.
    fn split(&self, a: usize, b: usize, nesting: usize, out: &mut Vec<Piece>) {
        let o = self.outline;
        let (a, b) = o.trim(a, b);
        if a >= b {
            return;
        }
        if o.chars(a, b) <= self.size {
            out.push(Piece { a, b, whole: true });
            return;
        }
        if nesting > MAX_NESTING {
            return self.windows(a, b, out);
        }
        let base = (a..b).filter(|&i| o.role[i] != Role::Blank).map(|i| o.depth[i]).min().unwrap_or(0);
        let starts = self.unit_starts(a, b, base);
        if starts.len() >= 2 {
            let mut pieces = Vec::new();
            for (k, &s) in starts.iter().enumerate() {
                let e = starts.get(k + 1).copied().unwrap_or(b);
                self.split(s, e, nesting + 1, &mut pieces);
            }
            return self.pack(pieces, true, out);
        }
        // One unit: a header at `base`, a deeper body, then closing lines.
        let Some(body) = (a + 1..b).find(|&i| o.role[i] != Role::Blank && o.depth[i] > base) else {
            return self.windows(a, b, out);
        };
        let body_end = (body..b).rev().find(|&i| o.role[i] != Role::Blank && o.depth[i] > base).map_or(b, |i| i + 1);
        let (mut head, mut inner, mut tail) = (Vec::new(), Vec::new(), Vec::new());
        self.split(a, body, nesting + 1, &mut head);
        self.split(body, body_end, nesting + 1, &mut inner);
        self.split(body_end, b, nesting + 1, &mut tail);
        // A lone opening line (`def f(x):`, `impl T {`) and lone closing
        // brackets are no use as chunks of their own: they stay with the
        // body, up to twice the size.
        if let ([h], Some(first)) = (head.as_slice(), inner.first_mut()) {
            if o.chars(h.a, first.b) <= 2 * self.size {
                first.a = h.a;
                head.clear();
            }
        }
        if let (Some(last), [t]) = (inner.last_mut(), tail.as_slice()) {
            if (t.a..t.b).all(|i| matches!(o.role[i], Role::Closer | Role::Blank))
                && o.chars(last.a, t.b) <= 2 * self.size
            {
                last.b = t.b;
                tail.clear();
            }
        }
        let mut pieces = head;
        pieces.extend(inner);
        pieces.extend(tail);
        for piece in &mut pieces {
            piece.whole = false;
        }
        let first_new = out.len();
        self.pack(pieces, false, out);
        for piece in &mut out[first_new..] {
            piece.whole = false;
        }
    }

    /// The first lines of the units that make up `[a, b)` at depth `base`: a
    /// line at that depth starts a unit unless it closes or continues the one
    /// above, or follows that unit's leading comments and attributes.
    fn unit_starts(&self, a: usize, b: usize, base: usize) -> Vec<usize> {
        let o = self.outline;
        // A run that starts inside a block (`if` body, then `} else {`) is
        // cut at its shallow closing lines too.
        let closers_start = o.depth[a] > base;
        let mut starts = vec![a];
        let mut prev = a;
        for i in a + 1..b {
            let role = o.role[i];
            if role == Role::Blank {
                continue;
            }
            let after_lead = o.role[prev] == Role::Lead && o.depth[prev] == base && prev + 1 == i;
            let starts_here = match role {
                Role::Start | Role::Lead => !after_lead,
                Role::Closer => closers_start && !after_lead,
                Role::Continues | Role::Blank => false,
            };
            if starts_here && o.depth[i] == base {
                starts.push(i);
            }
            prev = i;
        }
        starts
    }

    /// Merge neighbouring pieces while they fit in `size` together; with
    /// `only_whole`, pieces of a split unit are left as they are.
    fn pack(&self, pieces: Vec<Piece>, only_whole: bool, out: &mut Vec<Piece>) {
        let mut current: Option<Piece> = None;
        for piece in pieces {
            current = match current {
                Some(c)
                    if (!only_whole || (c.whole && piece.whole)) && self.outline.chars(c.a, piece.b) <= self.size =>
                {
                    Some(Piece { a: c.a, b: piece.b, whole: c.whole && piece.whole })
                }
                Some(c) => {
                    out.push(c);
                    Some(piece)
                }
                None => Some(piece),
            };
        }
        out.extend(current);
    }

    /// Line windows over `[a, b)`, for runs with no smaller units: as many
    /// whole lines as fit in `size`.
    fn windows(&self, a: usize, b: usize, out: &mut Vec<Piece>) {
        let o = self.outline;
        let len = |i: usize| o.chars(i, i + 1);
        let mut start = a;
        while start < b {
            if o.role[start] == Role::Blank {
                start += 1;
                continue;
            }
            if len(start) > self.size {
                out.push(Piece { a: start, b: start + 1, whole: false });
                start += 1;
                continue;
            }
            let mut end = start;
            let mut taken = 0;
            while end < b && len(end) <= self.size && (end == start || taken + len(end) < self.size) {
                taken += len(end) + 1;
                end += 1;
            }
            out.push(Piece { a: start, b: end, whole: false });
            start = end;
        }
    }
}

/// What each chunk is embedded and word-indexed with besides its own text:
/// the file's path and the definitions that enclose the chunk's first line
/// (`class Handler(...): > def emit(self, record):`), and for the word index
/// the definitions the chunk makes itself.
/// A chunk from the middle of a function otherwise has no idea which
/// function, class or file it belongs to; the shown text is unchanged.
///
/// Enclosure is read from indentation, which works across languages for
/// code laid out the usual way: a definition line (see `is_definition`, and
/// `shaped_definition` in the C family) encloses the lines below it that
/// are indented deeper than it.
pub fn contexts(path: &str, text: &str, chunks: &[Chunk]) -> Vec<Context> {
    let declarations = Declarations::of_path(path);
    let lines: Vec<&str> = text.split('\n').collect();
    // Definitions enclosing the line being looked at: (indent, signature).
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut next_line = 0; // 0-based: lines before it are in the stack
    let mut out = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let first = chunk.start_line.saturating_sub(1).min(lines.len());
        // Chunks start in order, except that a long line's pieces share one.
        while next_line < first {
            push_line(&mut stack, lines[next_line], declarations);
            next_line += 1;
        }
        let indent = lines.get(first).map_or(0, |l| indent_of(l));
        let enclosing: Vec<&str> = stack.iter().filter(|(d, _)| *d < indent).map(|(_, sig)| sig.as_str()).collect();
        let mut context = path.to_string();
        if !enclosing.is_empty() {
            context.push_str(": ");
            context.push_str(&enclosing.join(" > "));
        }
        let last = chunk.end_line.min(lines.len());
        let defined = defined_in(&lines[first..last.max(first)], declarations);
        let mut names: Vec<String> = Vec::new();
        for sig in enclosing.last().into_iter().copied().chain(defined.iter().map(String::as_str)) {
            if let Some(name) = definition_name(sig) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        out.push(Context { around: context, defined, names });
    }
    out
}

/// Where a chunk is (`around`: its path and the definitions enclosing it)
/// and what it defines at its own top level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    pub around: String,
    pub defined: Vec<String>,
    /// The chunk's own names (`names`): the innermost definition around it
    /// and those it makes, each once.
    pub names: Vec<String>,
}

impl Context {
    /// The line the word index counts `lexical::CONTEXT_WEIGHT` times: the
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
        .map(|l| signature(l.trim()))
        .collect()
}

fn signature(trimmed: &str) -> String {
    trimmed.trim_end_matches(['{', ':']).trim_end().chars().take(MAX_SIGNATURE_CHARS).collect()
}

/// Longest signature kept in a context, in characters.
const MAX_SIGNATURE_CHARS: usize = 120;

fn push_line(stack: &mut Vec<(usize, String)>, line: &str, declarations: Declarations) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if is_blank(line) {
        return;
    }
    let indent = indent_of(line);
    let trimmed = line.trim();
    // Closing brackets and comments say nothing about nesting.
    let definition = declarations.starts_definition(trimmed);
    if trimmed.starts_with(['}', ')', ']', '#', '/', '*', '@']) && !definition {
        return;
    }
    while stack.last().is_some_and(|(d, _)| *d >= indent) {
        stack.pop();
    }
    if definition {
        stack.push((indent, signature(trimmed)));
    }
}

fn indent_of(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

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
enum Declarations {
    /// Every definition starts with a keyword (`def`, `fn`, `func`, …):
    /// `is_definition` alone.
    Keyword,
    /// C, C++, Java, C#, JavaScript/TypeScript, Kotlin, Dart: functions and
    /// methods are also declared by their shape (`shaped_definition`).
    Shaped,
}

impl Declarations {
    fn of_path(path: &str) -> Declarations {
        match extension(path).as_str() {
            "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ino" | "java" | "cs" | "js"
            | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "kt" | "kts" | "dart" | "groovy" => {
                Declarations::Shaped
            }
            _ => Declarations::Keyword,
        }
    }

    fn starts_definition(self, trimmed: &str) -> bool {
        is_definition(trimmed) || self == Declarations::Shaped && shaped_definition(trimmed)
    }
}

/// Whether a trimmed line of a C-family language declares a function or
/// method by its shape: modifiers and a return type, then a name and its
/// parameters (`public static List<String> names(int n) {`, `static char
/// *dup(const char *s)`, `async load(url) {`, `Foo::~Foo() {`); a Kotlin
/// `fun`; or a function bound to a name (`export const load = async (url)
/// => {`, `let f = function (x) {`). Calls, control statements and
/// declarations ending in `;` are not definitions.
fn shaped_definition(trimmed: &str) -> bool {
    const MODIFIERS: &[&str] = &[
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
    let ident = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$' || c == '~')
            && w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '~' | ':'))
    };
    if trimmed.ends_with(';') || !trimmed.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$' || c == '~') {
        return false;
    }
    let mut words = trimmed.split_whitespace().peekable();
    let mut modifiers = 0;
    while words.peek().is_some_and(|w| MODIFIERS.contains(w)) {
        words.next();
        modifiers += 1;
    }
    let rest_at = |w: Option<&&str>| w.map_or(trimmed.len(), |w| w.as_ptr() as usize - trimmed.as_ptr() as usize);
    let rest = &trimmed[rest_at(words.peek())..];
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
    let head = &rest[..open];
    // A lone `:` is a label, a case or an object's key, not a path (`::`).
    if head.contains(|c: char| !(c.is_alphanumeric() || c.is_whitespace() || "_$<>,*&:~[]?".contains(c)))
        || head.replace("::", "").contains(':')
    {
        return false;
    }
    // The name is the head's last word; what comes before it is a return type.
    let head_words: Vec<&str> = head.split_whitespace().collect();
    // Prose in a comment: more words before its parenthesis than a
    // signature has, or words no type is named.
    const PROSE: &[&str] = &[
        "the", "a", "an", "that", "is", "are", "of", "to", "and", "or", "see", "which", "when", "it", "be", "not",
        "in", "for", "with", "on", "by", "from", "as",
    ];
    if head_words.len() > MAX_HEAD_WORDS || head_words.iter().any(|w| PROSE.contains(w)) {
        return false;
    }
    // A comma outside `<…>` separates arguments: this is inside a call.
    let mut angle = 0i32;
    for c in head.chars() {
        match c {
            '<' => angle += 1,
            '>' => angle -= 1,
            ',' if angle <= 0 => return false,
            _ => {}
        }
    }
    let Some(name) = head_words.last().map(|w| w.trim_start_matches(['*', '&'])) else { return false };
    if !ident(name) || NOT_NAMES.contains(&name) || head_words.first().is_some_and(|w| NOT_NAMES.contains(w)) {
        return false;
    }
    let typed = head_words.len() > 1;
    // Where the parameters close, if on this line.
    let Some(close) = group_end(&rest[open..], '(', ')').map(|n| open + n) else {
        // Parameters go on below: only a return type or a modifier tells
        // this from a call.
        return typed || modifiers > 0;
    };
    let after = rest[close..].trim();
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
    suffix_ok && (typed || modifiers > 0)
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
    fn syntax_is_chosen_by_extension() {
        assert_eq!(Syntax::of_path("docs/README.md"), Syntax::Markdown);
        assert_eq!(Syntax::of_path("notes.TXT"), Syntax::Plain);
        assert_eq!(Syntax::of_path("src/lib.rs"), Syntax::Code);
        assert_eq!(Syntax::of_path("Makefile"), Syntax::Code);
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
            /// Signature-shaped text with its brackets, colons and quotes
            /// anywhere: an answer, never a panic.
            #[test]
            fn shaped_definitions_read_any_line(line in "(public |static |const |let |async |fun )?[a-zA-Z_$~*&:<>,\\[\\] ]{0,20}[(){}=>:;,'\"a-z ]{0,30}\\PC{0,10}") {
                let _ = Declarations::Shaped.starts_definition(line.trim());
            }

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
