//! One concept file, read: its name and its synonyms, or the line that is
//! wrong with it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Largest concept file read; a concept is a name and a few words.
pub(super) const MAX_CONCEPT_BYTES: u64 = 64 * 1024;
/// Longest synonym kept, in bytes.
pub const MAX_TERM_BYTES: usize = 200;

/// A concept: what the team calls it, and the words the code may use instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concept {
    /// The title, or the file's name without `.md`.
    pub name: String,
    /// The name and every synonym, as written, without repeats (ignoring case).
    pub terms: Vec<String>,
    /// The file it came from.
    pub source: PathBuf,
}

/// A concept file that was skipped, and why: `path:line: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConceptProblem {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ConceptProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Line 0: the file as a whole (too large, unreadable, too many).
        match self.line {
            // A whole directory's problem says itself what is skipped.
            0 if self.path.extension().is_none_or(|e| e != "md") => {
                write!(f, "{}: {}", self.path.display(), self.message)
            }
            // The file as a whole: every concept in it (audit 267: "the
            // concept" was said of a file whose concepts all went).
            0 => write!(f, "{}: {} (the file is skipped)", self.path.display(), self.message),
            line => write!(f, "{}:{line}: {} (the concept is skipped)", self.path.display(), self.message),
        }
    }
}

/// The concepts in `text`, the content of `path`: a markdown file in which
/// each `# ` heading names a concept and the `synonyms::` lines under it
/// list its other words, comma-separated. A file without a heading is one
/// concept named by the file's stem. A section that is wrong is skipped,
/// and said, alone: the file's other concepts still count.
pub(super) fn parse_concepts(text: &str, path: &Path) -> Vec<Result<Concept, ConceptProblem>> {
    sections(text).into_iter().map(|s| parse_section(&s, path)).collect()
}

/// One heading's part of a concept file.
struct Section<'t> {
    /// The heading's text, and its line (1-based); None before any heading.
    title: Option<(&'t str, usize)>,
    /// The section's lines, each with its line number.
    lines: Vec<(usize, &'t str)>,
}

/// `text` cut at its `# ` headings. What comes before the first heading
/// belongs to it (a file may open with its synonyms), so a file yields
/// one section per heading, or one if it has none.
fn sections(text: &str) -> Vec<Section<'_>> {
    let mut out: Vec<Section<'_>> = vec![Section { title: None, lines: Vec::new() }];
    // A byte-order mark is no part of the first heading (audit 199: the
    // file's first concept lost its title).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A fenced block is an example: its `# ` lines are comments, not
    // headings, and its lines say nothing of the concept (audit 256: a
    // Python comment in one became a concept, and the real one was lost).
    // A fence closes only by its own character, as long or longer (review
    // 257: a ```` block around a ``` one ended at the inner close); a line
    // indented four columns is Markdown's code too.
    let mut fence: Option<(char, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        // Four columns in is indented text: no fence, and no heading (review
        // 258: it may be a list item's or a paragraph's, so its synonyms count).
        let indented = line.starts_with("    ") || line.starts_with('\t');
        let marker = fence_marker(line).filter(|_| !indented);
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some((c, open)), Some((m, len)))
                if m == c && len >= open && trimmed.trim_start_matches(c).trim().is_empty() =>
            {
                fence = None
            }
            _ => {}
        }
        if fence.is_some() || marker.is_some() {
            continue;
        }
        if let Some(heading) = trimmed.strip_prefix("# ").filter(|_| !indented) {
            let title = (heading_text(heading), n);
            let last = out.last_mut().expect("one section at least");
            if last.title.is_none() {
                last.title = Some(title);
            } else {
                out.push(Section { title: Some(title), lines: Vec::new() });
            }
        } else {
            out.last_mut().expect("one section at least").lines.push((n, trimmed));
        }
    }
    out
}

/// The fence `line` (trimmed) opens or closes: its character and length,
/// three or more backticks or tildes.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let line = line.trim_end().trim_start_matches(' ');
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = line.chars().take_while(|x| *x == c).count();
    // A backtick fence's words after it hold no backtick: "```rust``` is
    // used below" is a line of prose (review 258: it swallowed the file).
    let after = &line[len..];
    (len >= 3 && !(c == '`' && after.contains('`'))).then_some((c, len))
}

/// A heading's words, as Markdown shows them: without its closing `#`s
/// (`# Ledger #`) or the emphasis or code marks around it (`**Ledger**`),
/// which made a concept no question's words name (audit 256).
fn heading_text(heading: &str) -> &str {
    let mut text = heading.trim();
    if let Some(open) = text.strip_suffix('#') {
        let stem = open.trim_end_matches('#');
        if stem.is_empty() || stem.ends_with(char::is_whitespace) {
            text = stem.trim_end();
        }
    }
    for mark in ["**", "__", "`", "*", "_"] {
        if let Some(inner) = text.strip_prefix(mark).and_then(|t| t.strip_suffix(mark)) {
            if !inner.trim().is_empty() {
                return inner.trim();
            }
        }
    }
    text
}

fn parse_section(section: &Section<'_>, path: &Path) -> Result<Concept, ConceptProblem> {
    let problem = |line: usize, message: String| ConceptProblem { path: path.to_path_buf(), line, message };
    let mut synonyms: Vec<String> = Vec::new();
    let mut saw_synonyms = false;
    for &(n, line) in &section.lines {
        if let Some(list) = synonyms_line(line) {
            saw_synonyms = true;
            for term in list.split(',').map(str::trim) {
                if term.is_empty() {
                    return Err(problem(n, "an empty synonym (two commas in a row, or one at the end?)".into()));
                }
                if term.len() > MAX_TERM_BYTES {
                    return Err(problem(n, format!("a synonym longer than {MAX_TERM_BYTES} bytes")));
                }
                synonyms.push(term.to_string());
            }
        } else if line.to_ascii_lowercase().starts_with("synonyms:") {
            return Err(problem(n, "write `synonyms::` with two colons, then the words, comma-separated".into()));
        }
    }
    let heading_line = section.title.map_or(1, |(_, n)| n);
    if !saw_synonyms {
        return Err(problem(heading_line, "no `synonyms::` line (write `synonyms:: word, other word`)".into()));
    }
    let name = match section.title.map(|(t, _)| t).filter(|t| !t.is_empty()) {
        Some(t) => t.to_string(),
        None => path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
    };
    let mut terms: Vec<String> = Vec::with_capacity(synonyms.len() + 1);
    // Seen by a set: a search of the list for each term took a section of
    // thousands seconds, on every search (audit 199).
    let mut seen = std::collections::HashSet::new();
    for term in std::iter::once(name.clone()).chain(synonyms) {
        if seen.insert(term.to_ascii_lowercase()) {
            terms.push(term);
        }
    }
    Ok(Concept { name, terms, source: path.to_path_buf() })
}

/// The list after `synonyms::`, however the key is capitalised.
fn synonyms_line(line: &str) -> Option<&str> {
    let key = "synonyms::";
    let head = line.get(..key.len())?;
    head.eq_ignore_ascii_case(key).then(|| &line[key.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_of_the_whole_file_names_no_line() {
        let problem = |line| ConceptProblem { path: "kg/a.md".into(), line, message: "too large".into() };
        assert_eq!(problem(0).to_string(), "kg/a.md: too large (the file is skipped)");
        assert_eq!(problem(3).to_string(), "kg/a.md:3: too large (the concept is skipped)");
    }

    fn parse(text: &str) -> Result<Concept, ConceptProblem> {
        let mut all = parse_concepts(text, Path::new("/p/.vecgrep/kg/ledger.md"));
        assert_eq!(all.len(), 1, "one concept in {text:?}");
        all.remove(0)
    }

    #[test]
    fn a_title_and_synonyms_make_a_concept() {
        let c = parse(
            "# Ledger\n\nThe book of accounts.\n\nsynonyms:: AccountBook, account book\nSynonyms:: journal, ledger\n",
        )
        .unwrap();
        assert_eq!(c.name, "Ledger");
        assert_eq!(c.terms, ["Ledger", "AccountBook", "account book", "journal"]);
    }

    #[test]
    fn a_fenced_block_is_an_example_not_headings_or_synonyms() {
        let text = "# Ledger\n\n```python\n# the ledger is an AccountBook\nsynonyms:: not, these\n```\n\nsynonyms:: AccountBook, journal\n";
        let c = parse(text).unwrap();
        assert_eq!(c.name, "Ledger");
        assert_eq!(c.terms, ["Ledger", "AccountBook", "journal"]);
        // A fence of tildes, and one never closed, keep their lines too.
        let c = parse("# Ledger\nsynonyms:: journal\n~~~\n# not a heading\n").unwrap();
        assert_eq!(c.terms, ["Ledger", "journal"]);
        // A longer fence around a shorter one, and a block indented four columns (review 257).
        let nested = "# Ledger\n\n````markdown\n```python\n# how to use it\n```\n````\n\nsynonyms:: AccountBook\n";
        assert_eq!(parse(nested).unwrap().terms, ["Ledger", "AccountBook"]);
        let indented =
            "# Ledger\n\nExample:\n\n    # how to use it\n\tbook = AccountBook()\n\nsynonyms:: AccountBook\n";
        assert_eq!(parse(indented).unwrap().terms, ["Ledger", "AccountBook"]);
        // Indented synonyms (a list item's) count; an indented fence or one with
        // backticks after it opens nothing (review 258).
        let listed = "# Ledger\n\n1. Aliases:\n\n    synonyms:: AccountBook\n";
        assert_eq!(parse(listed).unwrap().terms, ["Ledger", "AccountBook"]);
        let not_fences = "# Ledger\n\n    ```\n    # comment\n\n```rust``` is used below\n\nsynonyms:: AccountBook\n";
        assert_eq!(parse(not_fences).unwrap().terms, ["Ledger", "AccountBook"]);
    }

    #[test]
    fn a_headings_markdown_is_no_part_of_the_name() {
        for heading in ["# Ledger #", "# Ledger ##", "# **Ledger**", "# __Ledger__", "# `Ledger`", "# *Ledger*"] {
            let c = parse(&format!("{heading}\nsynonyms:: journal\n")).unwrap();
            assert_eq!(c.name, "Ledger", "{heading}");
        }
        // A `#` that ends a word is the name's (C#).
        assert_eq!(parse("# C#\nsynonyms:: csharp\n").unwrap().name, "C#");
    }

    #[test]
    fn without_a_title_the_file_names_the_concept() {
        assert_eq!(parse("synonyms:: AccountBook").unwrap().terms, ["ledger", "AccountBook"]);
    }

    #[test]
    fn a_malformed_file_names_its_line() {
        let e = parse("# Ledger\nsynonyms:: a,, b\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("empty synonym")), (2, true), "{e}");
        let e = parse("# Ledger\n\nsynonyms: a, b\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("two colons")), (3, true), "{e}");
        let e = parse("# Ledger\njust prose\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().starts_with("/p/.vecgrep/kg/ledger.md:1: no `synonyms::` line"), "{e}");
        let long = format!("synonyms:: {}", "x".repeat(300));
        assert!(parse(&long).unwrap_err().message.contains("longer than"));
    }

    #[test]
    fn each_heading_of_a_file_is_a_concept_and_a_bad_one_is_skipped_alone() {
        let text = "# Ledger\nsynonyms:: AccountBook\n\n# SSO\nsynonyms: saml\n\n# Tenant\nsynonyms:: org, workspace\n";
        let all = parse_concepts(text, Path::new("/p/.vecgrep/kg/learned.md"));
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].as_ref().unwrap().terms, ["Ledger", "AccountBook"]);
        assert_eq!(all[1].as_ref().unwrap_err().line, 5);
        assert_eq!(all[2].as_ref().unwrap().terms, ["Tenant", "org", "workspace"]);
        let e = parse_concepts("# A\nsynonyms:: x\n# B\nprose\n", Path::new("k.md")).remove(1).unwrap_err();
        assert_eq!((e.line, e.message.contains("no `synonyms::`")), (3, true), "{e}");
    }
}
