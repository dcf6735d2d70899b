//! Rendering hit records for people and for line-oriented tools: the work of
//! `vg-format`. Terminal modes print paths relative to the current directory
//! (TerminalOutputUsesCwdRelativePaths); `--json` keeps root-relative paths.

mod best_lines;
mod columns;
mod commits;
mod counts;
mod file_lines;
mod stream;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use self::file_lines::{lines_at, read_lines, FileCache, FileLines};
use crate::project::relative_to;
use crate::records::{write_record, AnswerRecord, HitRecord, JudgementRecord};

#[cfg(test)]
use self::best_lines::stem;
use self::best_lines::{best_lines_of, QueryTerms};
pub use best_lines::{best_lines, words};
pub use commits::{files_left_out, render_commits};
pub use stream::render_stream;

/// How a stream of hits is rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Grouped by file with a heading per file (default on a terminal).
    Pretty,
    /// One `path:line:text` line per shown line (default when piped), as grep prints.
    Flat,
    /// Unique paths in rank order.
    Files,
    /// `path:count` per file in rank order.
    Count,
    /// Normalized hit records.
    Json,
}

#[derive(Clone, Debug)]
pub struct FormatOptions {
    pub mode: OutputMode,
    pub color: bool,
    /// Context lines before and after each shown line, read from the file.
    pub before: usize,
    pub after: usize,
    /// Where paths are shown from; empty shows them whole.
    pub cwd: PathBuf,
    /// Lines shown per hit (its best-matching lines).
    pub lines_per_hit: usize,
    /// Each shown line with its number (ripgrep's `-n`, `-N`).
    pub line_number: bool,
    /// Each line with its path in a pipe, each file's heading on a terminal
    /// (ripgrep's `-H`, `-I`).
    pub with_filename: bool,
    /// The output is a terminal: what a repository or a model wrote is
    /// shown with its control characters made visible (`FormatOptions::shown`).
    pub terminal: bool,
    /// Each path is followed by a NUL byte instead of what would follow it
    /// (a newline, `:`), for `xargs -0`: a path may hold either.
    pub null: bool,
    /// Lines longer than this many bytes are left out, said in their place
    /// (ripgrep's `-M`); None or 0: no limit.
    pub max_columns: Option<usize>,
    /// ... or shown cut to that many bytes (`--max-columns-preview`).
    pub max_columns_preview: bool,
}

impl FormatOptions {
    /// Text a repository or a model wrote (a line, a path, a subject, an
    /// answer) as it may be printed: for people (under a heading, or on a
    /// terminal in any mode) with its escape sequences shown, not obeyed,
    /// since a file could clear the screen or write the clipboard; for a
    /// pipe the bytes as they are, as grep's.
    pub fn shown<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.mode == OutputMode::Pretty || self.terminal {
            true => escape_controls(text),
            false => Cow::Borrowed(text),
        }
    }

    /// A path as it may be printed: as `shown`, but under `--null` in a pipe
    /// its bytes as they are, under a heading too, since `xargs -0` opens
    /// it (a name with a newline came out as `new^Jline.py`).
    pub fn shown_path<'t>(&self, path: &'t str) -> Cow<'t, str> {
        match self.null && !self.terminal {
            true => Cow::Borrowed(path),
            false => self.shown(path),
        }
    }

    /// What follows a path: `then`, or NUL under `--null`.
    pub fn after_path(&self, then: &'static str) -> &'static str {
        if self.null {
            "\0"
        } else {
            then
        }
    }
}

const RESET: &str = "\x1b[0m";
const PATH: &str = "\x1b[35m";
const LINE_NO: &str = "\x1b[32m";
const MATCH: &str = "\x1b[1;31m";
const DIM: &str = "\x1b[2m";

/// The path a person at `cwd` would type for this hit.
pub fn display_path(hit: &HitRecord, cwd: &Path) -> String {
    display_file(hit.root.as_deref(), &hit.file, cwd)
}

/// The path a person at `cwd` would type for `file` of `root` (taken as
/// relative to `cwd` when there is no root).
fn display_file(root: Option<&str>, file: &str, cwd: &Path) -> String {
    match root {
        Some(root) => relative_to(&Path::new(root).join(file), cwd).to_string_lossy().into_owned(),
        None => file.to_string(),
    }
}

/// Source of line text: the file on disk when it still matches, else the chunk.
struct Lines<'a> {
    file: Option<&'a FileLines>,
    hit: &'a HitRecord,
    /// The hit's own text by line, split once: a hit of many lines shown
    /// with context asks for each.
    own: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    fn new(file: Option<&'a FileLines>, hit: &'a HitRecord) -> Lines<'a> {
        let own = if file.is_some() { Vec::new() } else { hit.text.split('\n').collect() };
        Lines { file, hit, own }
    }

    /// The line numbers `get` may answer for: the file's, or the lines the
    /// hit's text holds, whatever its `end_line` says (a hand-made record's
    /// may be near the end of usize, and context is asked of each line).
    fn shown(&self) -> RangeInclusive<usize> {
        match &self.file {
            Some(f) => 1..=f.len(),
            None => {
                let held = self.hit.start_line.saturating_add(self.own.len().saturating_sub(1));
                self.hit.start_line..=self.hit.end_line.min(held)
            }
        }
    }

    /// The chunk's text: the hit's own, or, for a hand-made record without
    /// it, its lines as the file reads now.
    fn chunk_text(&self) -> std::borrow::Cow<'a, str> {
        match self.file {
            Some(f) if self.hit.text.is_empty() => {
                let end = self.hit.end_line.min(f.len());
                let start = self.hit.start_line.min(end.saturating_add(1));
                let lines: Vec<&str> = (start.saturating_sub(1)..end).filter_map(|i| f.get(i)).collect();
                lines.join("\n").into()
            }
            _ => self.hit.text.as_str().into(),
        }
    }

    fn get(&self, n: usize) -> Option<&str> {
        if let Some(f) = &self.file {
            return f.get(n.wrapping_sub(1));
        }
        if self.shown().contains(&n) {
            self.own.get(n - self.hit.start_line).copied()
        } else {
            None
        }
    }
}

/// Render all `hits` to `out` in `opts.mode`.
pub fn render(out: &mut dyn Write, hits: &[HitRecord], opts: &FormatOptions) -> io::Result<()> {
    match opts.mode {
        OutputMode::Count => {
            let mut counts = counts::Counts::default();
            hits.iter().for_each(|h| counts.add(h, &opts.cwd));
            counts.write(out, opts)
        }
        OutputMode::Pretty => render_under_headings(out, hits, opts),
        OutputMode::Json | OutputMode::Files | OutputMode::Flat => {
            let mut each = HitByHit::default();
            hits.iter().try_for_each(|h| each.write(out, h, opts))
        }
    }
}

impl OutputMode {
    /// Whether a hit is shown as soon as it is read: each needs only the
    /// hits before it. Headings and counts wait for the stream's end.
    fn shows_each_hit_as_read(self) -> bool {
        matches!(self, OutputMode::Json | OutputMode::Files | OutputMode::Flat)
    }
}

/// Rendering one hit at a time (`OutputMode::shows_each_hit_as_read`):
/// what the hits shown so far leave for the next. Lines already printed
/// are not printed again; a path listed is not listed again.
#[derive(Default)]
struct HitByHit {
    files: FileCache,
    printed: Printed,
    paths_listed: HashSet<String>,
}

impl HitByHit {
    /// Write `h` in `opts.mode`: its record, its path the first time, or
    /// its lines as grep prints them (in any other mode).
    fn write(&mut self, out: &mut dyn Write, h: &HitRecord, opts: &FormatOptions) -> io::Result<()> {
        match opts.mode {
            // In the normal form, of this version (a record read may say `v` 0),
            // a path below its root written as records write it (audit 254:
            // `./src/a.rs` and `src//a.rs` came back as they were read).
            OutputMode::Json => {
                let file = match h.root {
                    Some(_) => crate::project::normalize_lexically(Path::new(&h.file)).to_string_lossy().into_owned(),
                    None => h.file.clone(),
                };
                write_record(out, &HitRecord { v: crate::records::CONTRACT_VERSION, file, ..h.clone() })
            }
            OutputMode::Files => {
                let path = display_path(h, &opts.cwd);
                if !self.paths_listed.contains(&path) {
                    write!(out, "{}{}", paint(opts.color, PATH, &opts.shown_path(&path)), opts.after_path("\n"))?;
                    self.paths_listed.insert(path);
                }
                Ok(())
            }
            _ => {
                let path = display_path(h, &opts.cwd);
                write_hit_lines(out, h, &path, self.files.lines(&path, h, opts), &mut self.printed, opts)
            }
        }
    }
}

/// The advice a person gets, on stderr, after results that look
/// insufficient (heading mode only: a pipe gets results, not advice).
pub fn judgement_note(judgement: &JudgementRecord, mode: OutputMode) -> Option<String> {
    if mode != OutputMode::Pretty || !judgement.is_insufficient() {
        return None;
    }
    let why = if judgement.reasons.is_empty() { "no reason given".to_string() } else { judgement.reasons.join("; ") };
    // A query that named a concept was searched with its words already:
    // teaching it again is no advice (audit 256).
    let advice = match judgement.concepts.as_slice() {
        // The words may be right and the meaning missed: on an index not
        // yet fully embedded a rare word's chunk can score under the
        // threshold, where a search by words finds it (audit 271).
        [] => "Try other words, --mode lexical to find these as written, or teach vecgrep the project's own in \
               .vecgrep/kg/ (see the README)."
            .to_string(),
        named => format!(
            "It was searched with the words of {} {}; try other words, or --threshold 0 to see what scored lower.",
            if named.len() == 1 { "concept" } else { "concepts" },
            named.iter().map(|c| escape_controls(c).into_owned()).collect::<Vec<_>>().join(", ")
        ),
    };
    Some(format!("these results may not answer the query: {why}. {advice}"))
}

/// A chat model's answer (`vg-answer`), after the results: for people on a
/// terminal and in a pipe alike (it was asked for), as its record with
/// `--json`, and not at all in the modes that list files.
pub fn render_answer(
    out: &mut dyn Write,
    answer: &AnswerRecord,
    hits: &[HitRecord],
    opts: &FormatOptions,
) -> io::Result<()> {
    match opts.mode {
        OutputMode::Json => return write_record(out, answer),
        OutputMode::Files | OutputMode::Count => return Ok(()),
        OutputMode::Pretty | OutputMode::Flat => {}
    }
    let c = opts.color;
    let why = match answer.reason.as_str() {
        "insufficient" => "; the results looked insufficient",
        "forced" => "; asked with --force-answer",
        _ => "",
    };
    let plural = if answer.given == 1 { "" } else { "s" };
    writeln!(out)?;
    let model = opts.shown(&answer.model);
    let heading = format!("answer from {model} (given the top {} result{plural}{why}):", answer.given);
    writeln!(out, "{}", paint(c, DIM, &heading))?;
    // A catalog's hits have roots of their own: a citation (named as
    // `HitRecord::cited_name`) is shown from the root of the hit it cites.
    let first_root = hits.iter().find_map(|h| h.root.as_deref());
    let path_from_here = |cited: &str| {
        let hit = hits.iter().find(|h| h.cited_name() == cited);
        match hit {
            Some(h) => display_file(h.root.as_deref().or(first_root), &h.file, &opts.cwd),
            None => display_file(first_root, cited, &opts.cwd),
        }
    };
    // The model read the repository's files: it may echo what they hide.
    // The places it cites are named from here, as the sources below are
    // (audit 267: `[src/books.py:1]` from `src/`, where no such file is).
    let text = cited_from_here(&answer.text, &answer.citations, &path_from_here);
    for line in text.lines() {
        writeln!(out, "  {}", opts.shown(line))?;
    }
    let place = |cited: &str, line: usize| {
        let path = path_from_here(cited);
        format!("{}:{}", paint(c, PATH, &opts.shown(&path)), paint(c, LINE_NO, &line.to_string()))
    };
    if !answer.citations.is_empty() {
        let sources: Vec<String> = answer.citations.iter().map(|s| place(&s.file, s.line)).collect();
        writeln!(out, "  sources: {}", sources.join(", "))?;
    }
    if !answer.dropped.is_empty() {
        let n = answer.dropped.len();
        let what = if n == 1 { "citation" } else { "citations" };
        let note = format!("  dropped {n} {what} of places it was not given: {}", answer.dropped.join(", "));
        writeln!(out, "{}", paint(c, DIM, &opts.shown(&note)))?;
    }
    if !answer.learned.is_empty() {
        // Named from here, as the sources are (from a subdirectory the
        // root's `.vecgrep/…` named no file).
        let file = display_file(first_root, ".vecgrep/kg/learned.md", &opts.cwd);
        let note = format!("  learned: {} (in {file}; review it)", answer.learned.join(", "));
        writeln!(out, "{}", paint(c, DIM, &opts.shown(&note)))?;
    }
    Ok(())
}

/// `text` with each place of `citations` it names (`path:line`, after
/// anything but a word's letter, `/`, `.` or `-`, which a file's name goes
/// on with: review 272: `my-books.py` was renamed as `books.py`) named by
/// `from_here`, in
/// one pass: one file's new name may be another cited file's (review 270:
/// `lib/x.py` became `../x.py`, then `../../x.py`).
fn cited_from_here(
    text: &str,
    citations: &[crate::records::CitationRecord],
    from_here: &dyn Fn(&str) -> String,
) -> String {
    let mut renamed: Vec<(&str, String)> = Vec::new();
    for c in citations {
        let shown = from_here(&c.file);
        if shown != c.file && !renamed.iter().any(|(f, _)| *f == c.file) {
            renamed.push((&c.file, shown));
        }
    }
    if renamed.is_empty() {
        return text.to_string();
    }
    renamed.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    let files: Vec<String> = renamed.iter().map(|(f, _)| regex::escape(f)).collect();
    let Ok(place) = regex::Regex::new(&format!(r"(^|[^\w/.\-])({}):(\d)", files.join("|"))) else {
        return text.to_string();
    };
    let replaced = place.replace_all(text, |c: &regex::Captures<'_>| {
        let shown = renamed.iter().find(|(f, _)| *f == &c[2]).map_or(&c[2], |(_, s)| s.as_str());
        format!("{}{shown}:{}", &c[1], &c[3])
    });
    replaced.into_owned()
}

/// Hits grouped by display path, files in order of their best hit; a
/// file at a revision apart from the same path on disk when `by_revision`
/// (under headings, which name the revision).
fn per_file<'h>(hits: &'h [HitRecord], cwd: &Path, by_revision: bool) -> Vec<(String, Vec<&'h HitRecord>)> {
    let mut order: Vec<(String, Vec<&HitRecord>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for h in hits {
        let path = display_path(h, cwd);
        let key = if by_revision { version_key(h, &path) } else { path.clone() };
        match index.get(&key) {
            Some(&i) => order[i].1.push(h),
            None => {
                index.insert(key, order.len());
                order.push((path, vec![h]));
            }
        }
    }
    order
}

fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("{code}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// `score` as shown to `decimals` places, painted by the band of what is
/// shown: a fit of 0.5997 showed "0.600" in the colour of fair, not strong.
fn painted_score(color: bool, score: f64, decimals: usize) -> String {
    let (shown, band) = shown_score(score, decimals);
    let code = match band {
        ScoreBand::Strong => "\x1b[1;32m",
        ScoreBand::Fair => "\x1b[33m",
        ScoreBand::Weak => DIM,
    };
    paint(color, code, &shown)
}

/// `score` to `decimals` places, and the band of that shown value
/// (`score_band`), so that a colour never disagrees with its number (audit 207).
pub fn shown_score(score: f64, decimals: usize) -> (String, ScoreBand) {
    let shown = format!("{score:.decimals$}");
    let band = score_band(shown.parse().unwrap_or(score));
    (shown, band)
}

/// How good a hit's fit is (`HitRecord::shown`), for coloring it: the same
/// bands in `vg-format` and the picker. A fit is a cosine in semantic mode
/// and bounded relevance in hybrid mode, where the bands were set to mean
/// the same (`search::Hit::fit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreBand {
    Strong,
    Fair,
    Weak,
}

pub fn score_band(score: f64) -> ScoreBand {
    if score >= 0.6 {
        ScoreBand::Strong
    } else if score >= 0.45 {
        ScoreBand::Fair
    } else {
        ScoreBand::Weak
    }
}

/// Mark the query's words in a line.
fn highlight(line: &str, query: &QueryTerms, color: bool) -> String {
    if !color || query.is_empty() {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            if query.overlap(word) > 0 {
                out.push_str(MATCH);
                out.push_str(word);
                out.push_str(RESET);
            } else {
                out.push_str(word);
            }
            word.clear();
        }
    };
    for c in line.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The file a hit's lines are of: its path, and at a revision that
/// revision's (audit 254: line 3 of `retry.rs` at HEAD hid the edited line
/// 3 of the working tree's, and the two shared one heading).
fn version_key(h: &HitRecord, path: &str) -> String {
    match &h.rev {
        Some(sha) => format!("{sha}:{path}"),
        None => path.to_string(),
    }
}

/// What has been printed so far: each file's lines (a line is printed
/// once, though two results' context reach it) and the last line, for
/// grep's `--` between blocks that do not follow on.
#[derive(Default)]
struct Printed {
    /// Each file's lines printed, and whether as a match.
    lines: HashMap<String, HashMap<usize, bool>>,
    last: Option<(String, usize)>,
}

impl Printed {
    /// Whether line `n` of `path` starts a block that does not follow on
    /// from the last line printed (None: nothing printed yet, or a new result
    /// under a heading).
    fn starts_block(&self, path: &str, n: usize) -> bool {
        self.last.as_ref().is_some_and(|(p, l)| p != path || l.checked_add(1) != Some(n))
    }
}

/// The hits' lines under a heading per file: files in the order of their
/// best hit, each file's hits best first.
fn render_under_headings(out: &mut dyn Write, hits: &[HitRecord], opts: &FormatOptions) -> io::Result<()> {
    let mut files = FileCache::default();
    let mut printed = Printed::default();
    let c = opts.color;
    for (i, (path, group)) in per_file(hits, &opts.cwd, true).into_iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        if opts.with_filename {
            // A hit from a git revision (`vg-query --rev`) says which: the file on disk may differ.
            let at = group.first().and_then(|h| h.rev.as_deref()).map_or(String::new(), |sha| {
                format!(" {}", paint(c, DIM, &format!("(at {})", sha.get(..12).unwrap_or(sha))))
            });
            // Under `--null` the heading ends with NUL, as ripgrep's does.
            let shown = if opts.null { opts.shown_path(&path) } else { escape_controls(&path) };
            write!(out, "{}{at}{}", paint(c, PATH, &shown), opts.after_path("\n"))?;
        }
        for h in group {
            printed.last = None;
            let mut block = Vec::new();
            write_hit_lines(&mut block, h, &path, files.lines(&path, h, opts), &mut printed, opts)?;
            // One whose lines another result showed already adds nothing
            // under its score (it stood there alone), as a flat listing
            // leaves it out.
            if block.is_empty() {
                continue;
            }
            // The number is the hit's fit: what the order follows, colored by its band.
            let fit = h.shown();
            let mut span = format!("lines {}-{}", h.start_line, h.end_line);
            if !h.concepts.is_empty() {
                span.push_str(&format!("  concept: {}", h.concepts.join(", ")));
            }
            writeln!(out, "{}  {}", painted_score(c, fit, 3), paint(c, DIM, &opts.shown(&span)))?;
            // `--explain`: why it ranked there; a pipe keeps grep's lines.
            if let Some(why) = h.reasoning.as_deref().filter(|w| !w.is_empty()) {
                writeln!(out, "{}", paint(c, DIM, &format!("why: {}", escape_controls(why))))?;
            }
            out.write_all(&block)?;
        }
    }
    Ok(())
}

impl FileCache {
    /// Where hit `h` of `path` reads its lines from: the file while it still
    /// reads the same at the hit's lines, else the hit's own text. A hit
    /// from a revision reads the file as it is there, never the work
    /// tree's, whose other lines may have changed since.
    fn lines<'a>(&'a mut self, path: &str, h: &'a HitRecord, opts: &FormatOptions) -> Lines<'a> {
        // A hit of one line may be a piece of a line too long for a chunk:
        // shown as `path:N:text`, it must be all of line N, as grep's are.
        let wanted = opts.before > 0 || opts.after > 0 || h.text.is_empty() || h.start_line == h.end_line;
        let file = match (&h.rev, h.root.as_deref()) {
            _ if !wanted => None,
            (None, _) => self.get(path, || h.source_path(&opts.cwd).and_then(|p| read_lines(&p))),
            (Some(sha), Some(root)) => self.get(&format!("{sha}:{path}"), || lines_at(Path::new(root), sha, &h.file)),
            (Some(_), None) => None,
        };
        // A hand-made record without text reads the file where the file has its lines.
        let fits = |f: &&FileLines| if h.text.is_empty() { h.start_line <= f.len() } else { matches_chunk(f, h) };
        Lines::new(file.filter(fits), h)
    }
}

/// The lines to show of `h`: its best lines (true) and their context
/// (false), ascending, each once.
fn wanted_lines(h: &HitRecord, opts: &FormatOptions, lines: &Lines<'_>) -> Vec<(usize, bool)> {
    let shown = lines.shown();
    let mut wanted: Vec<(usize, bool)> = Vec::new();
    // Context only where there are lines to show: `-C` a billion costs
    // what the file holds, and a hand-made record's line numbers near the
    // end of usize do not wrap.
    for n in best_lines_of(h, &lines.chunk_text(), opts.lines_per_hit) {
        let before = n.saturating_sub(opts.before).max(*shown.start());
        wanted.extend((before..n).map(|m| (m, false)));
        wanted.push((n, true));
        let after = n.saturating_add(opts.after).min(*shown.end());
        wanted.extend((n.saturating_add(1)..=after).map(|m| (m, false)));
    }
    wanted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    wanted.dedup_by_key(|w| w.0);
    wanted
}

/// One hit's lines, those of its file printed already left out (and all of
/// them when its best lines were), with `--` before a block that does not
/// follow on when context is shown. A best line printed before as another
/// hit's context is printed again, as a match: hits come in rank order, not
/// line order, and a hit shown only as context (`-`) was lost to whatever
/// reads `path:line:` (`vim -q`), and to its heading.
fn write_hit_lines(
    out: &mut dyn Write,
    h: &HitRecord,
    path: &str,
    lines: Lines<'_>,
    printed: &mut Printed,
    opts: &FormatOptions,
) -> io::Result<()> {
    let (c, heading) = (opts.color, opts.mode == OutputMode::Pretty);
    let query = QueryTerms::of(h.query.as_deref().unwrap_or_default());
    let file = version_key(h, path);
    let done = printed.lines.entry(file.clone()).or_default();
    let mut wanted = wanted_lines(h, opts, &lines);
    wanted.retain(|&(n, is_match)| done.get(&n).is_none_or(|&as_match| is_match && !as_match));
    // A hit whose own lines were all shown (as another's matches) adds
    // no block of context alone.
    if !wanted.iter().any(|w| w.1) {
        return Ok(());
    }
    for &(n, is_match) in &wanted {
        *done.entry(n).or_default() |= is_match;
    }
    for (n, is_match) in wanted {
        let Some(text) = lines.get(n) else { continue };
        if printed.starts_block(&file, n) && (opts.before > 0 || opts.after > 0) {
            writeln!(out, "{}", paint(c, DIM, "--"))?;
        }
        printed.last = Some((file.clone(), n));
        let sep = if is_match { ":" } else { "-" };
        let body = columns::shown_within_columns(text, opts, |text| match is_match {
            true => Cow::Owned(highlight(&text, &query, c)),
            false => text,
        });
        let number =
            |n: String| if opts.line_number { format!("{}{sep}", paint(c, LINE_NO, &n)) } else { String::new() };
        if heading {
            writeln!(out, "{}{body}", number(format!("{n:>5}")))?;
        } else if opts.with_filename {
            let path = paint(c, PATH, &opts.shown_path(path));
            writeln!(out, "{path}{}{}{body}", opts.after_path(sep), number(n.to_string()))?;
        } else {
            writeln!(out, "{}{body}", number(n.to_string()))?;
        }
    }
    Ok(())
}

pub use crate::project::shown::escape_controls;

/// Whether the file on disk still has the hit's text at the hit's lines:
/// each line as it is, but for the empty lines between joined chunks, and
/// a piece of a line too long for any chunk (cut into pieces, or a chunk
/// cut by characters), which may sit anywhere in a joined hit. One line
/// alone was too weak a test: a short or empty first line is in any line.
fn matches_chunk(file: &FileLines, hit: &HitRecord) -> bool {
    let start = hit.start_line.wrapping_sub(1);
    let cut = |line: &str| line.chars().count() > crate::project::MIN_CHUNK_SIZE;
    hit.text.split('\n').enumerate().all(|(i, line)| {
        file.get(start.wrapping_add(i))
            .is_some_and(|on_disk| line.is_empty() || on_disk == line || (cut(on_disk) && on_disk.contains(line)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_on_thin_results_never_asks_to_teach_a_concept_the_query_named() {
        let judged = |concepts: &str| -> JudgementRecord {
            serde_json::from_str(&format!(
                r#"{{"type":"judgement","v":1,"query":"where is the journal kept","verdict":"insufficient","coverage":1.0,"covered":["journal"],"missing":[],"files":0,"reasons":["no results above the threshold"],"concepts":{concepts}}}"#
            ))
            .unwrap()
        };
        let plain = judgement_note(&judged("[]"), OutputMode::Pretty).unwrap();
        assert!(plain.ends_with("teach vecgrep the project's own in .vecgrep/kg/ (see the README)."), "{plain}");
        let named = judgement_note(&judged(r#"["Ledger"]"#), OutputMode::Pretty).unwrap();
        assert_eq!(
            named,
            "these results may not answer the query: no results above the threshold. It was searched with the words of concept Ledger; try other words, or --threshold 0 to see what scored lower."
        );
    }

    #[test]
    fn a_score_is_coloured_by_the_band_of_the_number_shown() {
        assert_eq!(shown_score(0.5997, 3), ("0.600".to_string(), ScoreBand::Strong));
        assert_eq!(shown_score(0.5994, 3), ("0.599".to_string(), ScoreBand::Fair));
        assert_eq!(shown_score(0.4497, 3), ("0.450".to_string(), ScoreBand::Fair));
        assert_eq!(shown_score(0.596, 2), ("0.60".to_string(), ScoreBand::Strong));
        assert_eq!(shown_score(0.447, 2), ("0.45".to_string(), ScoreBand::Fair));
        assert_eq!(shown_score(0.444, 2), ("0.44".to_string(), ScoreBand::Weak));
    }

    #[test]
    fn a_file_matches_a_hit_by_every_line_not_the_first_alone() {
        let file = FileLines::new(["fn a() {", "    let b = 1;", "", "    b", "}"].join("\n"));
        let at = |start: usize, text: &str| matches_chunk(&file, &hit("a.rs", start, text, "q"));
        assert!(at(1, "fn a() {\n    let b = 1;\n\n    b\n}"));
        assert!(!at(2, "let b\n\n    b"), "a short line is never cut: no piece of it stands for it");
        assert!(at(1, "fn a() {\n\n\n    b"), "joined chunks leave empty lines between them");
        assert!(!at(1, "fn\nb\nc"), "a short first line is in many lines; the others must match too");
        assert!(!at(3, "\nchanged\n}"), "an empty first line matches nothing by itself");
        assert!(!at(4, "    b\n}\nmore"), "past the file's end");
        // A line too long for a chunk is cut into pieces; a joined hit may hold one in its middle.
        let long = "x".repeat(300);
        let file = FileLines::new(["fn a() {}", long.as_str(), "fn b() {}"].join("\n"));
        let piece = format!("fn a() {{}}\n{}\nfn b() {{}}", &long[..120]);
        assert!(matches_chunk(&file, &hit("a.rs", 1, &piece, "q")));
    }

    fn hit(file: &str, start: usize, text: &str, query: &str) -> HitRecord {
        HitRecord {
            v: 1,
            root: Some("/r".into()),
            file: file.into(),
            start_line: start,
            end_line: start + text.split('\n').count() - 1,
            score: 0.5,
            relevance: None,
            fit: None,
            text: text.into(),
            query: Some(query.into()),
            concepts: Vec::new(),
            rev: None,
            reasoning: None,
            project: None,
            best_start_line: None,
            best_end_line: None,
        }
    }

    pub(super) fn opts(mode: OutputMode, cwd: &str) -> FormatOptions {
        FormatOptions {
            mode,
            color: false,
            before: 0,
            after: 0,
            cwd: cwd.into(),
            lines_per_hit: 1,
            line_number: true,
            with_filename: true,
            terminal: false,
            null: false,
            max_columns: None,
            max_columns_preview: false,
        }
    }

    #[test]
    fn words_split_identifiers() {
        assert_eq!(
            words("retryUpload max_retries HTTPServer"),
            vec!["retry", "upload", "max", "retries", "httpserver"]
        );
    }

    #[test]
    fn best_line_is_the_one_sharing_query_words() {
        let h = hit("a.rs", 10, "let x = 1;\nfn retry_upload() {\n}", "retry failed uploads");
        assert_eq!(best_lines(&h, 1), vec![11]);
        let h = hit("a.rs", 10, "\n  let x = 1;\n", "nothing in common");
        assert_eq!(best_lines(&h, 1), vec![11]);
        // A query of stop words alone is matched by them (audit 260: line 1).
        let h = hit("a.py", 1, "import time\n\ndef upload(paths):\n    for p in paths:\n", "for");
        assert_eq!(best_lines(&h, 1), vec![4]);
        let h = hit("a.py", 1, "def keys(k):\n    return dict.fromkeys(k)\nfrom os import path", "from");
        assert_eq!(best_lines(&h, 1), vec![3], "the word itself, not its stem's `fromkeys`");
        let h = hit("a.py", 1, "import time\nfor p in paths:\n    upload(p)", "the upload");
        assert_eq!(best_lines(&h, 1), vec![3], "with another word, stop words count for nothing");
    }

    #[test]
    fn words_share_a_stem_by_their_first_four_letters_not_bytes() {
        let h = hit("a.py", 1, "# café\n# 日本語のコメント\ndef load(): pass\n# cafeteria", "hello cafes");
        assert_eq!(best_lines(&h, 1), vec![4], "cafés share a stem with cafeteria, not café (3 letters and é)");
        let h = hit("a.py", 1, "x = 1\n# 日本語のコメント", "日本語の辞書");
        assert_eq!(best_lines(&h, 1), vec![2]);
        assert_eq!((stem("café"), stem("caf"), stem("日本語のコ")), (Some("café"), None, Some("日本語の")));
    }

    #[test]
    fn files_and_counts_are_cwd_relative_in_rank_order() {
        let hits = vec![hit("src/b.rs", 1, "x", "q"), hit("src/a.rs", 1, "x", "q"), hit("src/b.rs", 5, "x", "q")];
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Files, "/r/src")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "b.rs\na.rs\n");
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Count, "/r/docs")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "../src/b.rs:2\n../src/a.rs:1\n");
        let mut out = Vec::new();
        render(&mut out, &hits, &FormatOptions { with_filename: false, ..opts(OutputMode::Count, "/r") }).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "2\n1\n", "-c -I: counts alone, as rg's");
    }

    /// A result whose lines an earlier one showed stood under a heading as
    /// a score line with nothing below it; a flat listing leaves it out.
    #[test]
    fn a_result_whose_lines_were_shown_adds_no_empty_score_line_under_a_heading() {
        let hits =
            vec![hit("a.py", 1, "def f():\n    retry()\n    x", "retry"), hit("a.py", 2, "    retry()", "retry")];
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Pretty, "/r")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a.py\n0.500  lines 1-3\n    2:    retry()\n");
    }

    #[test]
    fn a_hit_from_a_revision_says_which_under_a_heading_and_not_in_a_pipe() {
        let sha = "278a66376cddaf8ec87070020ca35e9e809d95c0";
        let hits = vec![HitRecord { rev: Some(sha.into()), ..hit("a.rs", 3, "fn upload() {}", "upload") }];
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Pretty, "/r")).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("a.rs (at 278a66376cdd)\n"));
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Flat, "/r")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a.rs:3:fn upload() {}\n");
    }

    #[test]
    fn a_best_line_shown_as_anothers_context_is_still_shown_as_a_match() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (1..=80).map(|i| format!("line {i}")).collect();
        std::fs::write(dir.path().join("a.py"), lines.join("\n") + "\n").unwrap();
        let root = dir.path().to_str().unwrap();
        let at = |n: usize| HitRecord { root: Some(root.into()), ..hit("a.py", n, &format!("line {n}"), "line") };
        let hits = vec![at(17), at(62), at(20)];
        let context = |mode| FormatOptions { before: 50, after: 50, ..opts(mode, root) };
        let mut out = Vec::new();
        render(&mut out, &hits, &context(OutputMode::Flat)).unwrap();
        let out = String::from_utf8(out).unwrap();
        let shown: Vec<&str> = out.lines().filter(|l| l.contains(":62:") || l.contains(":20:")).collect();
        assert_eq!(shown, ["a.py:62:line 62", "a.py:20:line 20"], "{out}");
        assert_eq!(out.matches("-62-").count(), 1, "context once: {out}");
        assert_eq!(out.lines().filter(|l| l.contains("line 17")).count(), 1, "a match never twice: {out}");
        // Under headings each hit's own line is under its own heading.
        let mut out = Vec::new();
        render(&mut out, &hits, &context(OutputMode::Pretty)).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("   62:line 62") && out.contains("   20:line 20"), "{out}");
    }

    #[test]
    fn a_heading_ends_with_nul_under_null_as_ripgreps() {
        let hits = vec![hit("a.rs", 3, "fn upload() {}", "upload")];
        let mut out = Vec::new();
        render(&mut out, &hits, &FormatOptions { null: true, ..opts(OutputMode::Pretty, "/r") }).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("a.rs\0") && !out.starts_with("a.rs\0\n"), "{out:?}");
    }

    #[test]
    fn a_files_escape_sequences_are_shown_under_a_heading_and_kept_in_a_pipe() {
        let hostile = "x = 1\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u{9b}31m\x7f\tdone \u{202e}nimda\u{2066}";
        let hits = vec![hit("a\x1b[31m.rs", 3, hostile, "done")];
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Pretty, "/r")).unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{shown:?}");
        assert!(
            shown.contains("x = 1^[]52;c;cm0gLXJmIH4=^G^[[2J<U+009B>31m^?\tdone <U+202E>nimda<U+2066>"),
            "{shown:?}"
        );
        assert_eq!(
            escape_controls("fn é() {} // \u{200f}"),
            "fn é() {} // \u{200f}",
            "marks that reorder nothing stay"
        );
        assert!(shown.starts_with("a^[[31m.rs\n"), "{shown:?}");
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Flat, "/r")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("a\x1b[31m.rs:3:{hostile}\n"), "raw when piped");
    }

    #[test]
    fn on_a_terminal_every_mode_shows_escape_sequences_without_obeying_them() {
        let hostile = "x = 1\x1b]52;c;cm0gLXJmIH4=\x07 done";
        let hits = vec![hit("a\x1b]0;PWNED\x07.rs", 3, hostile, "done")];
        for mode in [OutputMode::Flat, OutputMode::Files, OutputMode::Count, OutputMode::Pretty] {
            let mut out = Vec::new();
            render(&mut out, &hits, &FormatOptions { terminal: true, ..opts(mode, "/r") }).unwrap();
            let shown = String::from_utf8(out).unwrap();
            assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "{mode:?}: {shown:?}");
            assert!(shown.contains("a^[]0;PWNED^G.rs"), "{mode:?}: {shown:?}");
        }
        let answer: AnswerRecord = serde_json::from_value(serde_json::json!({
            "type": "answer", "v": 1, "query": "q", "model": "m\x1b[2J", "reason": "forced", "given": 1,
            "text": "It is in a.rs.\x1b]52;c;ZXZpbA==\x07", "citations": [], "dropped": [], "learned": []
        }))
        .unwrap();
        let mut out = Vec::new();
        render_answer(&mut out, &answer, &hits, &FormatOptions { terminal: true, ..opts(OutputMode::Flat, "/r") })
            .unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("m^[[2J") && shown.contains("It is in a.rs.^[]52;c;ZXZpbA==^G"), "{shown:?}");
    }

    #[test]
    fn flat_lines_are_grep_compatible() {
        let hits = vec![hit("a.rs", 3, "fn upload() {}\nok", "upload")];
        let mut out = Vec::new();
        render(&mut out, &hits, &opts(OutputMode::Flat, "/r")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a.rs:3:fn upload() {}\n");
    }

    #[test]
    fn an_answer_follows_the_results_with_its_sources_as_paths_from_here() {
        let hits = vec![hit("src/book.rs", 3, "struct AccountBook;", "ledger")];
        let answer: AnswerRecord = serde_json::from_value(serde_json::json!({
            "type": "answer", "v": 1, "query": "ledger", "model": "m", "reason": "insufficient", "given": 1,
            "text": "It is AccountBook [src/book.rs:3].", "citations": [{"file": "src/book.rs", "line": 3}],
            "dropped": ["9"], "learned": ["ledger"]
        }))
        .unwrap();
        let shown = |mode: OutputMode| {
            let mut out = Vec::new();
            render_answer(&mut out, &answer, &hits, &opts(mode, "/r/src")).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            shown(OutputMode::Flat),
            "\nanswer from m (given the top 1 result; the results looked insufficient):\n  It is AccountBook [book.rs:3].\n  sources: book.rs:3\n  dropped 1 citation of places it was not given: 9\n  learned: ledger (in ../.vecgrep/kg/learned.md; review it)\n"
        );
        assert_eq!(shown(OutputMode::Files), "");
        let json: AnswerRecord = serde_json::from_str(&shown(OutputMode::Json)).unwrap();
        assert_eq!(json, answer, "the record keeps the root's names");
        // Only the places cited, at a boundary: another file that ends the same way is left as it is.
        let from_here = |f: &str| f.trim_start_matches("src/").to_string();
        let cited = [serde_json::from_value(serde_json::json!({"file": "src/book.rs", "line": 3})).unwrap()];
        assert_eq!(
            cited_from_here("See src/book.rs:3, (src/book.rs:30) and lib/src/book.rs:3.", &cited, &from_here),
            "See book.rs:3, (book.rs:30) and lib/src/book.rs:3."
        );
        assert_eq!(
            cited_from_here("\"src/book.rs:3\" or *src/book.rs:3*", &cited, &from_here),
            "\"book.rs:3\" or *book.rs:3*"
        );
        // One pass: a new name that is another cited file's is not renamed again (review 270).
        let up = |f: &str| if f == "lib/x.py" { "x.py".to_string() } else { format!("../{f}") };
        let cited: Vec<crate::records::CitationRecord> = ["lib/x.py", "x.py"]
            .iter()
            .map(|f| serde_json::from_value(serde_json::json!({"file": f, "line": 1})).unwrap())
            .collect();
        assert_eq!(cited_from_here("See [lib/x.py:1] and [x.py:2].", &cited, &up), "See [x.py:1] and [../x.py:2].");
        let cited_bare = [serde_json::from_value(serde_json::json!({"file": "book.rs", "line": 1})).unwrap()];
        let up = |f: &str| format!("../{f}");
        assert_eq!(cited_from_here("my-book.rs:2 and book.rs:1", &cited_bare, &up), "my-book.rs:2 and ../book.rs:1");
    }

    #[test]
    fn a_catalogs_citation_is_shown_from_the_root_of_the_hit_it_cites() {
        let in_project = |project: &str, file: &str| HitRecord {
            root: Some(format!("/src/{project}")),
            project: Some(project.into()),
            ..hit(file, 1, "fn f() {}\nx", "f")
        };
        let hits = vec![in_project("api", "lib.rs"), in_project("billing", "lib.rs"), in_project("billing", "tax.rs")];
        let answer: AnswerRecord = serde_json::from_value(serde_json::json!({
            "type": "answer", "v": 1, "query": "f", "model": "m", "reason": "forced", "given": 3, "text": "t",
            "citations": [{"file": "billing/tax.rs", "line": 2}, {"file": "billing/lib.rs", "line": 1}],
            "dropped": [], "learned": []
        }))
        .unwrap();
        let mut out = Vec::new();
        render_answer(&mut out, &answer, &hits, &opts(OutputMode::Flat, "/src")).unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("sources: billing/tax.rs:2, billing/lib.rs:1"), "{shown}");
    }
}
