//! A project's own vocabulary: concepts ("ledger") and the words the code
//! uses for them (`AccountBook`, `journal`), kept as markdown files in
//! `<root>/.vecgrep/kg/` and, for concepts shared by every project, in
//! the global config directory's `kg/`. A query that names a concept is
//! searched with its synonyms too (`Expansion`), so that words the code
//! lacks still find it; hits say which concepts they mention.
//!
//! `parse.rs` reads one file; matching is Aho-Corasick over every term,
//! case-insensitive, at word and identifier boundaries (`bounds.rs`).

mod bounds;
mod parse;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use aho_corasick::AhoCorasick;

pub use parse::{Concept, ConceptProblem, MAX_TERM_BYTES};

use crate::project::{global_config_path, ProjectRoot};
use bounds::at_boundaries;
use parse::{parse_concepts, MAX_CONCEPT_BYTES};

/// Most concept files read from one directory.
const MAX_CONCEPT_FILES: usize = 10_000;

/// Most bytes of concept files read from one directory, all files
/// together: a cloned repository's 63 MB of them cost each search a minute
/// and 1.2 GB (audit 199). Far above what people write by hand or
/// `--learn` gathers.
const MAX_CONCEPT_DIR_BYTES: u64 = 4 << 20;

/// Most problems said of one concept file: one file of 16,000 headings
/// without synonyms said 16,000 lines on every search (audit 199).
const MAX_PROBLEMS_PER_FILE: usize = 3;

/// Every concept a project knows, ready to match queries.
#[derive(Clone, Debug, Default)]
pub struct ConceptSet {
    concepts: Vec<Concept>,
    matcher: Option<AhoCorasick>,
    /// For each pattern of `matcher`, the concept it belongs to.
    owner: Vec<usize>,
}

/// The concepts a query names, and what they add to its search: a set of
/// its own, so that the hits are matched against their terms as the query was.
#[derive(Clone, Debug, Default)]
pub struct Expansion {
    fired: ConceptSet,
}

/// The project's concept directory: `<root>/.vecgrep/kg`.
pub fn project_kg_dir(root: &ProjectRoot) -> PathBuf {
    root.data_dir().join("kg")
}

/// The concepts shared by every project: `kg/` beside the global config.
pub fn global_kg_dir() -> Option<PathBuf> {
    global_config_path().and_then(|p| p.parent().map(|d| d.join("kg")))
}

/// Where `root`'s concepts are read, in tiers, first first: its own `kg/`;
/// for a catalog, its projects' together (audit 256: a catalog search read
/// none of them, what `--learn` wrote there too; review 257: one project's
/// concept of a title hid another's); then the global one.
fn kg_tiers(root: &ProjectRoot) -> Vec<Vec<PathBuf>> {
    let mut tiers = vec![vec![project_kg_dir(root)]];
    if root.marker == crate::project::RootMarker::Catalog {
        if let Ok(catalog) = crate::project::catalog::Catalog::read(&root.path) {
            let project = |path| ProjectRoot { path, marker: crate::project::RootMarker::None, shared: None };
            tiers.push(catalog.projects.into_iter().map(|p| project_kg_dir(&project(p.path))).collect());
        }
    }
    tiers.extend(global_kg_dir().map(|dir| vec![dir]));
    tiers
}

/// The concepts of `root`: the project's (a catalog's, then its projects',
/// those of one title merged), then the global ones whose names none of
/// those use. Files that cannot be read or parsed are skipped and returned
/// as problems, one line each.
pub fn load(root: &ProjectRoot) -> (ConceptSet, Vec<ConceptProblem>) {
    let mut concepts = Vec::new();
    let mut problems = Vec::new();
    for tier in kg_tiers(root) {
        let hidden: HashSet<String> = concepts.iter().map(|c: &Concept| c.name.to_lowercase()).collect();
        let read: Vec<Concept> = tier.iter().flat_map(|dir| read_dir(dir, &mut problems)).collect();
        concepts.extend(merged(read).into_iter().filter(|c| !hidden.contains(&c.name.to_lowercase())));
    }
    (ConceptSet::new(concepts), problems)
}

/// One concept per title, whatever its case: the terms of a title written
/// twice in one directory (two files, two headings, `--learn` run twice)
/// are all its own, in the order read.
fn merged(concepts: Vec<Concept>) -> Vec<Concept> {
    let mut out: Vec<Concept> = Vec::new();
    // Each concept's index in `out`, with the terms it has, lowercased: a
    // search of its list for each term took seconds a search (audit 199).
    let mut at: HashMap<String, (usize, HashSet<String>)> = HashMap::new();
    for concept in concepts {
        match at.get_mut(&concept.name.to_lowercase()) {
            Some((i, seen)) => {
                let first = &mut out[*i];
                for term in concept.terms {
                    if seen.insert(term.to_ascii_lowercase()) {
                        first.terms.push(term);
                    }
                }
            }
            None => {
                let seen = concept.terms.iter().map(|t| t.to_ascii_lowercase()).collect();
                at.insert(concept.name.to_lowercase(), (out.len(), seen));
                out.push(concept);
            }
        }
    }
    out
}

/// The concepts of the `*.md` files in `dir`, by file name; none if it does not exist.
fn read_dir(dir: &Path, problems: &mut Vec<ConceptProblem>) -> Vec<Concept> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
    paths.sort();
    if paths.len() > MAX_CONCEPT_FILES {
        // Which are left out, by name: a concept the user counts on may be one.
        let first_left = paths[MAX_CONCEPT_FILES].file_name().unwrap_or_default().to_string_lossy();
        let message = format!(
            "{} concept files; only the first {MAX_CONCEPT_FILES} by name are read, from {first_left} on they are not",
            paths.len()
        );
        problems.push(ConceptProblem { path: dir.to_path_buf(), line: 0, message });
        paths.truncate(MAX_CONCEPT_FILES);
    }
    let mut concepts = Vec::new();
    let mut read_bytes = 0;
    for path in &paths {
        // Only what is read counts: a file over its own bound is skipped
        // alone (review 202: one hid every file after it).
        read_bytes +=
            std::fs::metadata(path)
                .map_or(0, |m| if m.is_file() && m.len() <= MAX_CONCEPT_BYTES { m.len() } else { 0 });
        if read_bytes > MAX_CONCEPT_DIR_BYTES {
            let first_left = path.file_name().unwrap_or_default().to_string_lossy();
            let message = format!(
                "concept files of more than {} MiB; from {first_left} on they are not read",
                MAX_CONCEPT_DIR_BYTES >> 20
            );
            problems.push(ConceptProblem { path: dir.to_path_buf(), line: 0, message });
            break;
        }
        match read_concepts(path) {
            Ok(found) => {
                let mut wrong = Vec::new();
                for concept in found {
                    concept.map_or_else(|e| wrong.push(e), |c| concepts.push(c));
                }
                problems.extend(first_problems(wrong));
            }
            Err(e) => problems.push(e),
        }
    }
    concepts
}

/// The first `MAX_PROBLEMS_PER_FILE` of one file's problems, the last
/// saying how many more there are.
fn first_problems(mut wrong: Vec<ConceptProblem>) -> Vec<ConceptProblem> {
    if wrong.len() > MAX_PROBLEMS_PER_FILE {
        let more = wrong.len() - MAX_PROBLEMS_PER_FILE;
        wrong.truncate(MAX_PROBLEMS_PER_FILE);
        if let Some(last) = wrong.last_mut() {
            last.message = format!("{} (and {more} more in this file)", last.message);
        }
    }
    wrong
}

/// The concepts of one file, each read or said wrong; Err when the file
/// as a whole cannot be read.
fn read_concepts(path: &Path) -> Result<Vec<Result<Concept, ConceptProblem>>, ConceptProblem> {
    let problem = |line: usize, message: String| ConceptProblem { path: path.to_path_buf(), line, message };
    let meta = std::fs::metadata(path).map_err(|e| problem(0, format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(problem(0, "not a file".into()));
    }
    if meta.len() > MAX_CONCEPT_BYTES {
        return Err(problem(0, format!("{} bytes; a concept file holds at most {MAX_CONCEPT_BYTES}", meta.len())));
    }
    // A file grown since it was looked at is never read whole.
    let bytes = match crate::project::small_file::read_small(path, MAX_CONCEPT_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(problem(0, "not a file".into())),
        Err(e) => return Err(problem(0, format!("cannot read it: {e}"))),
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        problem(0, format!("line {line} is not UTF-8 text"))
    })?;
    Ok(parse_concepts(&text, path))
}

/// The concepts of a root as their files stand, for a process that runs
/// long (a server, the picker): read again when a concept file is added,
/// removed or changed.
#[derive(Default)]
pub struct LiveConcepts {
    /// Each concept file's path, modification time and size when last read.
    stamp: Vec<(PathBuf, Option<SystemTime>, u64)>,
    set: Arc<ConceptSet>,
}

impl LiveConcepts {
    /// The concepts now; `problems` hears each file skipped, once per change.
    pub fn current(&mut self, root: &ProjectRoot, problems: &dyn Fn(&ConceptProblem)) -> Arc<ConceptSet> {
        let stamp = stamp_of(root);
        if stamp != self.stamp {
            let (set, found) = load(root);
            found.iter().for_each(problems);
            self.set = Arc::new(set);
            self.stamp = stamp;
        }
        Arc::clone(&self.set)
    }
}

fn stamp_of(root: &ProjectRoot) -> Vec<(PathBuf, Option<SystemTime>, u64)> {
    let mut stamp = Vec::new();
    for dir in kg_tiers(root).into_iter().flatten() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten().take(MAX_CONCEPT_FILES + 1) {
            // What it leads to, as it is read: a link's own time and size
            // stayed the same while the file it names changed.
            let meta = std::fs::metadata(entry.path()).or_else(|_| entry.metadata()).ok();
            let modified = meta.as_ref().and_then(|m| m.modified().ok());
            stamp.push((entry.path(), modified, meta.map_or(0, |m| m.len())));
        }
    }
    stamp.sort();
    stamp
}

impl ConceptSet {
    pub fn new(concepts: Vec<Concept>) -> ConceptSet {
        let mut patterns = Vec::new();
        let mut owner = Vec::new();
        for (i, c) in concepts.iter().enumerate() {
            for term in &c.terms {
                patterns.push(folded(term).into_owned());
                owner.push(i);
            }
        }
        let matcher = (!patterns.is_empty())
            .then(|| AhoCorasick::builder().ascii_case_insensitive(true).build(&patterns).ok())
            .flatten();
        ConceptSet { concepts, matcher, owner }
    }

    pub fn len(&self) -> usize {
        self.concepts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.concepts.is_empty()
    }

    /// The concepts `query` names by any of their terms, in the order the
    /// files were read.
    pub fn expand(&self, query: &str) -> Expansion {
        let Some(matcher) = &self.matcher else { return Expansion::default() };
        let mut fired: Vec<usize> = matcher
            .find_overlapping_iter(folded(query).as_ref())
            .filter(|m| at_boundaries(query, m.start(), m.end()))
            .map(|m| self.owner[m.pattern().as_usize()])
            .collect();
        fired.sort_unstable();
        fired.dedup();
        Expansion { fired: ConceptSet::new(fired.into_iter().map(|i| self.concepts[i].clone()).collect()) }
    }

    /// The concepts, in the order their files were read.
    pub fn concepts(&self) -> &[Concept] {
        &self.concepts
    }
}

/// `text` with each letter in its lower case where that takes as many
/// bytes (`Ü` and `ü`, `Ж` and `ж`, a final `ς` as `σ`), so that the
/// matcher, whose own folding is ASCII's, matches either case ("übertrag"
/// missed `# Übertrag`), and a match's offsets are the text's own. A letter
/// whose lower case is longer or shorter (`İ`, `ẞ`) matches as written.
fn folded(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let lower = |c: char| {
        let mut lowered = c.to_lowercase();
        match (lowered.next(), lowered.next()) {
            (Some('ς'), None) => 'σ',
            (Some(l), None) if l.len_utf8() == c.len_utf8() => l,
            _ => c,
        }
    };
    std::borrow::Cow::Owned(text.chars().map(lower).collect())
}

/// Most bytes the fired concepts' terms add to a query: as many as a
/// query may have (`search::MAX_QUERY_BYTES`, which comes after this
/// module in the pipeline; a test there holds the two equal).
pub(crate) const MAX_EXPANSION_BYTES: usize = 4096;

impl Expansion {
    pub fn is_empty(&self) -> bool {
        self.fired.is_empty()
    }

    /// The concepts the query named.
    pub fn fired(&self) -> &[Concept] {
        self.fired.concepts()
    }

    /// The terms of the fired concepts, space-separated, each once in any
    /// case: what the search looks for besides the query's own words. At
    /// most `MAX_EXPANSION_BYTES` of them, as a query is bounded: the sides
    /// compare each word with those before it, and a concept file of
    /// thousands of synonyms (a cloned repository may ship one) made every
    /// search that named it take seconds, or minutes.
    pub fn words(&self) -> String {
        let mut seen = std::collections::HashSet::new();
        let mut words = String::new();
        for term in self.fired().iter().flat_map(|c| c.terms.iter()) {
            if words.len() + 1 + term.len() > MAX_EXPANSION_BYTES {
                break;
            }
            if seen.insert(folded(term).to_ascii_lowercase()) {
                if !words.is_empty() {
                    words.push(' ');
                }
                words.push_str(term);
            }
        }
        words
    }

    /// The names of the fired concepts that `text` mentions by any term.
    pub fn mentioned_in(&self, text: &str) -> Vec<String> {
        self.fired.expand(text).fired().iter().map(|c| c.name.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn concept(name: &str, synonyms: &[&str]) -> Concept {
        let terms = std::iter::once(name).chain(synonyms.iter().copied()).map(String::from).collect();
        Concept { name: name.into(), terms, source: PathBuf::from(format!("{name}.md")) }
    }

    fn names(e: &Expansion) -> Vec<&str> {
        e.fired().iter().map(|c| c.name.as_str()).collect()
    }

    /// A cloned repository's concept files are bounded in what they cost a
    /// search: their bytes and the lines said of them (audit 199). A title
    /// after a byte-order mark is read.
    #[test]
    fn a_repositorys_concept_files_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let kg = dir.path().join("kg");
        std::fs::create_dir(&kg).unwrap();
        let many: Vec<String> = (0..7_000).map(|i| format!("k{i}")).collect();
        std::fs::write(kg.join("a.md"), format!("\u{feff}# Same\nsynonyms:: {}\n", many.join(", "))).unwrap();
        std::fs::write(kg.join("b.md"), format!("# same\nsynonyms:: {}\n", many.join(", "))).unwrap();
        std::fs::write(kg.join("c.md"), "# a\n".repeat(100)).unwrap();
        // A file over its own bound is skipped alone, and counts for nothing.
        std::fs::write(kg.join("0-huge.md"), "a".repeat(5 << 20)).unwrap();
        let mut problems = Vec::new();
        let found = merged(read_dir(&kg, &mut problems));
        assert_eq!(found.len(), 1, "one concept, its title read past the byte-order mark");
        assert_eq!((found[0].name.as_str(), found[0].terms.len()), ("Same", 7_001));
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].message.contains("a concept file holds at most"), "{}", problems[0].message);
        assert!(problems[3].message.ends_with("(and 97 more in this file)"), "{}", problems[3].message);
        let big = format!("# big\nsynonyms:: x{}\n", ", y".repeat(20_000));
        for i in 0..80 {
            std::fs::write(kg.join(format!("z{i:02}.md")), &big).unwrap();
        }
        let mut problems = Vec::new();
        read_dir(&kg, &mut problems);
        assert!(problems.iter().any(|p| p.message.contains("concept files of more than 4 MiB")), "{problems:?}");
    }

    #[test]
    fn a_query_fires_the_concepts_it_names_as_whole_words() {
        let set =
            ConceptSet::new(vec![concept("ledger", &["AccountBook"]), concept("SSO", &["saml", "single sign-on"])]);
        assert_eq!(names(&set.expand("where is the Ledger balanced?")), ["ledger"]);
        assert_eq!(names(&set.expand("how does single sign-on work with the ledger")), ["ledger", "SSO"]);
        assert_eq!(names(&set.expand("ssOn and ledgers")), Vec::<&str>::new(), "inside other words");
        assert_eq!(set.expand("sso").words(), "SSO saml single sign-on");
        assert!(ConceptSet::default().expand("ledger").is_empty());
    }

    /// Each term once, and no more of them than a query may hold.
    #[test]
    fn an_expansion_holds_each_term_once_and_is_bounded() {
        let set = ConceptSet::new(vec![concept("ledger", &["Journal", "journal", "LEDGER", "book"])]);
        assert_eq!(set.expand("ledger").words(), "ledger Journal book");
        let many: Vec<String> = (0..6000).map(|i| format!("word{i}")).collect();
        let set = ConceptSet::new(vec![concept("ledger", &many.iter().map(String::as_str).collect::<Vec<_>>())]);
        let words = set.expand("ledger").words();
        assert!(words.len() <= MAX_EXPANSION_BYTES && words.starts_with("ledger word0 word1"), "{}", words.len());
    }

    /// "Any case" is any letter's: `ascii_case_insensitive` alone missed
    /// "übertrag" for `# Übertrag`, and `überweisung_senden` for `Überweisung`.
    #[test]
    fn a_concept_fires_in_any_case_of_any_letter() {
        let set = ConceptSet::new(vec![concept("Übertrag", &["AccountBook"]), concept("Zahlung", &["Überweisung"])]);
        for query in ["Übertrag", "übertrag", "ÜBERTRAG"] {
            assert_eq!(names(&set.expand(query)), ["Übertrag"], "{query}");
        }
        let e = set.expand("wo ist die Zahlung");
        assert_eq!(e.mentioned_in("def überweisung_senden(betrag):"), ["Zahlung"]);
        // A letter whose lower case is longer keeps its offsets (İ, then a match after it).
        assert_eq!(names(&set.expand("İ übertrag")), ["Übertrag"]);
        // A final sigma is a sigma in any case.
        let greek = ConceptSet::new(vec![concept("Οδός", &[])]);
        assert_eq!(names(&greek.expand("ΟΔΌΣ")), ["Οδός"]);
        // A combining mark belongs to its word: "cafe" is no part of "café".
        let cafe = ConceptSet::new(vec![concept("cafe", &[])]);
        assert!(cafe.expand("cafe\u{301} menu").is_empty());
    }

    #[test]
    fn hits_say_which_concepts_they_mention_inside_identifiers_too() {
        let set = ConceptSet::new(vec![concept("ledger", &["AccountBook"]), concept("SSO", &["saml"])]);
        let e = set.expand("ledger and sso");
        assert_eq!(e.mentioned_in("class AccountBookEntry:\n    pass"), ["ledger"]);
        assert_eq!(e.mentioned_in("def saml_login(): ..."), ["SSO"]);
        assert_eq!(e.mentioned_in("def samlogin(): ..."), Vec::<String>::new());
    }

    /// A project in a temporary directory, with its kg directory made.
    fn project_with_kg() -> (tempfile::TempDir, ProjectRoot, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root =
            ProjectRoot { path: dir.path().to_path_buf(), marker: crate::project::RootMarker::None, shared: None };
        let kg = project_kg_dir(&root);
        std::fs::create_dir_all(&kg).unwrap();
        (dir, root, kg)
    }

    /// Past the most files read, the note names where the files left out
    /// begin: it said "(the concept is skipped)" of the directory, and the
    /// concept left out (`ledger.md`, sorting last) was named nowhere.
    #[test]
    fn past_the_most_files_the_note_names_the_first_left_out() {
        let (_dir, _, kg) = project_with_kg();
        for i in 0..MAX_CONCEPT_FILES {
            std::fs::write(kg.join(format!("c{i:05}.md")), "").unwrap();
        }
        std::fs::write(kg.join("ledger.md"), "# Ledger\nsynonyms:: AccountBook\n").unwrap();
        let mut problems = Vec::new();
        read_dir(&kg, &mut problems);
        let said = problems[0].to_string();
        assert!(said.contains("from ledger.md on they are not") && !said.contains("skipped"), "{said}");
    }

    /// A concept file that is a link is read again when what it leads to
    /// changes: the link's own time and size never did.
    #[test]
    fn a_linked_concept_file_is_read_again_when_its_target_changes() {
        let (_dir, root, kg) = project_with_kg();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("ledger.md");
        std::fs::write(&target, "# Ledger\nsynonyms:: AccountBook\n").unwrap();
        std::os::unix::fs::symlink(&target, kg.join("ledger.md")).unwrap();
        let mut live = LiveConcepts::default();
        assert!(live.current(&root, &|_| {}).expand("which journal").is_empty());
        std::fs::write(&target, "# Ledger\nsynonyms:: AccountBook, journal\n").unwrap();
        assert_eq!(names(&live.current(&root, &|_| {}).expand("which journal")), ["Ledger"]);
    }

    #[test]
    fn project_concepts_hide_global_ones_of_the_same_name_and_bad_files_are_reported() {
        let (_dir, _, kg) = project_with_kg();
        std::fs::write(kg.join("ledger.md"), "# Ledger\nsynonyms:: AccountBook\n").unwrap();
        std::fs::write(kg.join("broken.md"), "# Broken\nsynonyms: a\n").unwrap();
        std::fs::write(kg.join("binary.md"), b"synonyms:: a\n\xff\xfe").unwrap();
        std::fs::write(kg.join("notes.txt"), "not a concept").unwrap();
        let mut problems = Vec::new();
        let read = read_dir(&kg, &mut problems);
        assert_eq!(read.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Ledger"]);
        let lines: Vec<(String, usize)> =
            problems.iter().map(|p| (p.path.file_name().unwrap().to_string_lossy().into_owned(), p.line)).collect();
        assert_eq!(lines, [("binary.md".to_string(), 0), ("broken.md".to_string(), 2)]);
        assert!(problems[0].to_string().ends_with("binary.md: line 2 is not UTF-8 text (the file is skipped)"));
    }

    #[test]
    fn a_title_written_twice_in_one_directory_is_one_concept_with_every_term() {
        let (_dir, root, kg) = project_with_kg();
        std::fs::write(kg.join("a.md"), "# Auth\nsynonyms:: AccountBook\n").unwrap();
        std::fs::write(kg.join("b.md"), "# auth\nsynonyms:: saml_login, accountbook\n").unwrap();
        let (set, problems) = load(&root);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(set.len(), 1);
        assert_eq!(set.concepts()[0].terms, ["Auth", "AccountBook", "saml_login"]);
        assert_eq!(names(&set.expand("where is saml_login")), ["Auth"]);
    }
}
