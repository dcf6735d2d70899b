//! The outline of a file: each line's depth and role (blank, leading
//! comment, closer, continuation, start), read from indentation and a few
//! line shapes as its syntax (`Syntax`) says.

use super::{char_len, extension, indent_of};

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

/// Where a line stands in its file's structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
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
pub(super) struct Outline<'a> {
    pub lines: Vec<&'a str>,
    /// Nesting depth of each line; deeper lines belong to the shallower line above.
    pub depth: Vec<usize>,
    pub role: Vec<Role>,
    /// `offset[i]`: characters in lines `0..i`, each counted with its newline.
    offset: Vec<usize>,
}

impl<'a> Outline<'a> {
    pub(super) fn new(lines: Vec<&'a str>, syntax: Syntax) -> Self {
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
    pub(super) fn chars(&self, a: usize, b: usize) -> usize {
        (self.offset[b] - self.offset[a]).saturating_sub(1)
    }

    /// `[a, b)` without its blank first and last lines.
    pub(super) fn trim(&self, mut a: usize, mut b: usize) -> (usize, usize) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_is_chosen_by_extension() {
        assert_eq!(Syntax::of_path("docs/README.md"), Syntax::Markdown);
        assert_eq!(Syntax::of_path("notes.TXT"), Syntax::Plain);
        assert_eq!(Syntax::of_path("src/lib.rs"), Syntax::Code);
        assert_eq!(Syntax::of_path("Makefile"), Syntax::Code);
    }
}
