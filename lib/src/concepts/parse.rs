//! One concept file, read: its name and its synonyms, or the line that is
//! wrong with it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Largest concept file read; a concept is a name and a few words.
pub(super) const MAX_CONCEPT_BYTES: u64 = 64 * 1024;
/// Longest synonym kept, in bytes.
const MAX_TERM_BYTES: usize = 200;

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
        write!(f, "{}:{}: {} (the concept is skipped)", self.path.display(), self.line, self.message)
    }
}

/// The concept in `text`, the content of `path`: a markdown file whose
/// first `# ` heading is the name (else the file's stem) and whose
/// `synonyms::` lines list the other words, comma-separated.
pub(super) fn parse_concept(text: &str, path: &Path) -> Result<Concept, ConceptProblem> {
    let problem = |line: usize, message: String| ConceptProblem { path: path.to_path_buf(), line, message };
    let mut title: Option<String> = None;
    let mut synonyms: Vec<String> = Vec::new();
    let mut saw_synonyms = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        if let Some(heading) = trimmed.strip_prefix("# ") {
            title.get_or_insert_with(|| heading.trim().to_string());
        } else if let Some(list) = synonyms_line(trimmed) {
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
        } else if trimmed.to_ascii_lowercase().starts_with("synonyms:") {
            return Err(problem(n, "write `synonyms::` with two colons, then the words, comma-separated".into()));
        }
    }
    if !saw_synonyms {
        return Err(problem(1, "no `synonyms::` line (write `synonyms:: word, other word`)".into()));
    }
    let name = match title.filter(|t| !t.is_empty()) {
        Some(t) => t,
        None => path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
    };
    let mut terms: Vec<String> = Vec::with_capacity(synonyms.len() + 1);
    for term in std::iter::once(name.clone()).chain(synonyms) {
        if !terms.iter().any(|t| t.eq_ignore_ascii_case(&term)) {
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

    fn parse(text: &str) -> Result<Concept, ConceptProblem> {
        parse_concept(text, Path::new("/p/.vecgrep/kg/ledger.md"))
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
}
