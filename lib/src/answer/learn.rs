//! What an answer teaches: the query's words the code lacks, bridged to the
//! identifiers the answer names that the results it was given really
//! contain. They are appended to `.vecgrep/kg/learned.md` as concepts (one
//! `# ` heading each), where they work at once and a person can review,
//! edit or delete them.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::concepts::{project_kg_dir, ConceptSet};
use crate::project::{small_file, ProjectRoot, RootMarker};
use crate::records::HitRecord;
use crate::terms::{stem, words};

/// Most concepts one answer adds.
const MAX_LEARNED: usize = 3;
/// Most synonyms a learned concept gets.
const MAX_SYNONYMS: usize = 6;
/// Verbs questions about code ask with, which name no concept ("which class
/// keeps the ledger"), by their stems.
const QUESTION_VERBS: &[&str] = &[
    "keep",
    "kept",
    "handl",
    "handle",
    "store",
    "find",
    "found",
    "make",
    "made",
    "happen",
    "live",
    "go",
    "come",
    "put",
    "send",
    "sent",
    "run",
    "ran",
    "stop",
    "start",
    "check",
    "creat",
    "create",
    "build",
    "built",
    "load",
    "save",
    "read",
    "write",
    "written",
    "wrote",
    "updat",
    "update",
    "delet",
    "delete",
    "remov",
    "remove",
    "add",
    "do",
    "doe",
    "did",
    "done",
    "work",
    "implement",
    "defin",
    "define",
    "call",
    "use",
    "us",
    "get",
    "got",
    "set",
    "mean",
    "deal",
    "dealt",
];
/// Largest learned.md written: the loader skips a bigger concept file whole.
const MAX_LEARNED_BYTES: u64 = 60 * 1024;

/// A concept an answer bridged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnedConcept {
    pub name: String,
    pub synonyms: Vec<String>,
}

/// `.vecgrep/kg/learned.md` of `root`.
pub fn learned_path(root: &ProjectRoot) -> PathBuf {
    project_kg_dir(root).join("learned.md")
}

/// The concepts `answer` bridges: each of the query's `missing` words that
/// no concept knows yet, with the identifiers the answer names that occur
/// in the results it was `given` (and are not the query's own words).
pub fn concepts_bridged(
    query: &str,
    missing: &[String],
    answer: &str,
    given: &[HitRecord],
    known: &ConceptSet,
) -> Vec<LearnedConcept> {
    // An answer that says the excerpts do not answer bridges nothing, nor
    // does a name it denies ("`saml_login` is unrelated to payroll"; audit
    // 267: both were learned as payroll, and the next search found them).
    // Only the words it could teach: "keeps" in "no other class keeps
    // entries" is no denial of the ledger (review 272).
    let teachable: Vec<&str> = missing
        .iter()
        .filter(|w| w.chars().count() >= 3 && !QUESTION_VERBS.contains(&stem(w).as_str()))
        .map(String::as_str)
        .collect();
    if super::denial::denies_an_answer(answer, &teachable) {
        return Vec::new();
    }
    let affirmed = super::denial::affirmed_names(answer);
    let in_results: HashSet<&str> = given.iter().flat_map(|h| words(&h.text)).collect();
    let query_lower = query.to_lowercase();
    let mut synonyms: Vec<String> = Vec::new();
    for id in super::names::named_identifiers(answer).into_iter().filter(|id| affirmed.contains(id)) {
        // One the concept files would refuse is none to write (it was
        // written, refused at every search, and written again each run).
        let fresh = !synonyms.iter().any(|s| s == id)
            && !query_lower.contains(&id.to_lowercase())
            && id.len() <= crate::concepts::MAX_TERM_BYTES;
        if fresh && in_results.contains(id) && synonyms.len() < MAX_SYNONYMS {
            synonyms.push(id.to_string());
        }
    }
    if synonyms.is_empty() {
        return Vec::new();
    }
    let is_known = |w: &str| known.concepts().iter().any(|c| c.terms.iter().any(|t| t.eq_ignore_ascii_case(w)));
    // A judgement's missing words are the query's own, read as the judge
    // reads them (identifiers split, lowercased); the stream says them, so
    // one that is not is no concept's name.
    let query_words: HashSet<String> = crate::search::query_words(query).into_iter().collect();
    missing
        .iter()
        .filter(|w| query_words.contains(w.as_str()) && w.chars().count() >= 3)
        .filter(|w| !is_known(w) && !QUESTION_VERBS.contains(&stem(w).as_str()))
        .take(MAX_LEARNED)
        .map(|w| LearnedConcept { name: w.clone(), synonyms: synonyms.clone() })
        .collect()
}

/// Learning never makes a directory that a stream names a project: a root
/// vg-answer takes from its hits' `root` may be any directory, and a
/// `.vecgrep/` made there would make it the root of every unmarked
/// directory below it and have its config read. (A root the user chose, by
/// where they run, needs no marker: an index in a shared store leaves none.)
pub fn refuse_unless_project(root: &ProjectRoot) -> Result<()> {
    let marked = !matches!(root.marker, RootMarker::None | RootMarker::Revision | RootMarker::Catalog);
    if !marked && !root.data_dir().is_dir() {
        bail!(
            "{} is not a project (it has no .vecgrep, .git, .hg or .jj), so no concepts were learned there",
            root.path.display()
        );
    }
    Ok(())
}

/// Append `learned` to the project's learned.md, each with a comment saying
/// where it came from; the file's path. Refuses to grow the file past what
/// the loader reads.
pub fn append_learned(root: &ProjectRoot, learned: &[LearnedConcept], query: &str, model: &str) -> Result<PathBuf> {
    let path = learned_path(root);
    let dir = project_kg_dir(root);
    // `.vecgrep` itself may be a link a repository shipped, out of the project.
    crate::store::own_data_dir(root)?;
    // A repository may ship the directory or the file as a link to one of
    // the user's files: nothing is written through a link. Asked before the
    // directory is made, so that a dangling one is said as a link (audit
    // 199: "File exists").
    let is_link = || std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link() {
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if is_link() {
        bail!(
            "{} is a link; vecgrep writes learned concepts only into a directory of the project's own",
            dir.display()
        );
    }
    let existing = match small_file::read_small(&path, MAX_LEARNED_BYTES) {
        Ok(bytes) => bytes.unwrap_or_default(),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            bail!("{} is full (over {MAX_LEARNED_BYTES} bytes); review it and move what is right into concept files of their own", path.display())
        }
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    // One the concept files skip whole learns nothing more (audit 267: each
    // run said "learned" and appended to a file no search read).
    if std::str::from_utf8(&existing).is_err() {
        bail!("{} is not UTF-8 text, so searches skip all of it; fix or remove it, then learn again", path.display());
    }
    let mut text = String::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        text.push('\n');
    }
    let origin = format!("the question \"{}\", answered by {}", comment_safe(query), comment_safe(model));
    for concept in learned {
        text.push_str(&format!(
            "\n# {}\n<!-- learned from {origin}; review it: edit or delete -->\nsynonyms:: {}\n",
            concept.name,
            concept.synonyms.join(", ")
        ));
    }
    if existing.len() as u64 + text.len() as u64 > MAX_LEARNED_BYTES {
        bail!(
            "{} is full ({} bytes); review it and move what is right into concept files of their own",
            path.display(),
            existing.len()
        );
    }
    small_file::append_own(&path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `text` on one line, without what would end an HTML comment: no `--`
/// is left (`--->` once replaced would leave one).
fn comment_safe(text: &str) -> String {
    // The bidi controls and the line and paragraph separators too: the file
    // is one a person reads, and they reorder or break what it shows.
    let hidden =
        |c: char| c.is_control() || crate::project::shown::is_bidi_control(c) || matches!(c, '\u{2028}' | '\u{2029}');
    let mut safe: String = text.chars().map(|c| if hidden(c) { ' ' } else { c }).collect();
    while safe.contains("--") {
        safe = safe.replace("--", "- -");
    }
    safe
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concepts::Concept;

    fn hit(text: &str) -> HitRecord {
        serde_json::from_value(serde_json::json!({"file": "src/book.rs", "start_line": 1, "end_line": 9, "text": text}))
            .unwrap()
    }

    #[test]
    fn a_missing_word_is_bridged_to_identifiers_the_answer_names_and_the_results_hold() {
        let given = [hit("pub struct AccountBook { entries: Vec<Entry> }\nfn post_entry(book: &mut AccountBook)")];
        let answer = "The ledger is AccountBook [1]; post_entry adds to it, as does `entries`. NotInCode does not.";
        let missing = ["keeps".to_string(), "ledger".into()];
        let learned =
            concepts_bridged("which class keeps the ledger", &missing, answer, &given, &ConceptSet::default());
        assert_eq!(
            learned,
            [LearnedConcept {
                name: "ledger".into(),
                synonyms: vec!["AccountBook".into(), "post_entry".into(), "entries".into()]
            }]
        );
        // Nothing to bridge: no word missing, or no identifier named that the results hold.
        assert!(concepts_bridged("q", &[], answer, &given, &ConceptSet::default()).is_empty());
        assert!(concepts_bridged("ledger", &["ledger".into()], "It is NotInCode.", &given, &ConceptSet::default())
            .is_empty());
        // A word a concept already knows is not learned again.
        let known = ConceptSet::new(vec![Concept {
            name: "Ledger".into(),
            terms: vec!["Ledger".into()],
            source: "k.md".into(),
        }]);
        assert!(concepts_bridged("ledger", &["ledger".into()], answer, &given, &known).is_empty());
        // The stream says which words were missing: one that is no word of the query is no concept's name.
        // As the judge reads the query's words: an identifier's parts, any script's letters.
        for query in ["where is the LedgerBook kept", "where is the ledger_book kept", "πού είναι ο ΛΟΓΑΡΙΑΣΜΟΣ"]
        {
            let missing: Vec<String> = crate::search::query_words(query).into_iter().filter(|w| w.len() > 4).collect();
            let learned = concepts_bridged(query, &missing, answer, &given, &ConceptSet::default());
            assert!(!learned.is_empty() && learned.iter().all(|c| missing.contains(&c.name)), "{query}: {missing:?}");
        }
        // A fenced block is code quoted whole: what looks like an identifier
        // in it counts, not each of its words, nor those of a quoted phrase.
        let given = [hit("class AccountBook:\n    \"\"\"Money in and out.\"\"\"\n    def balance(self): pass")];
        let answer = "The ledger is `AccountBook`:\n```python\nclass AccountBook:\n    \"\"\"Money in and out.\"\"\"\n```\nSee `in and out`.";
        let learned =
            concepts_bridged("which class keeps the ledger", &missing, answer, &given, &ConceptSet::default());
        assert_eq!(learned[0].synonyms, ["AccountBook"]);
        // A keyword quoted names nothing of the project's (audit 232: `self`
        // and `return` made the concept match most code).
        let learned = concepts_bridged(
            "which class keeps the ledger",
            &missing,
            "The `self` and `return` and `AccountBook` keep it.",
            &given,
            &ConceptSet::default(),
        );
        assert_eq!(learned[0].synonyms, ["AccountBook"]);
        let planted = ["ledger\n# evil\nsynonyms:: x".to_string(), "../../etc".into(), "evilconcept".into()];
        let learned =
            concepts_bridged("which class keeps the ledger", &planted, answer, &given, &ConceptSet::default());
        assert!(learned.is_empty(), "{learned:?}");
        // An answer that has none, or denies a name, teaches nothing of it (audit 267).
        let given = [hit("class AccountBook:\n    pass\ndef saml_login(r):\n    if not r: return")];
        let ledger = |answer: &str| {
            concepts_bridged("which class keeps the ledger", &["ledger".into()], answer, &given, &ConceptSet::default())
        };
        for denial in [
            "The excerpts do not answer the question: nothing here keeps it. `AccountBook` and `saml_login` are unrelated.",
            "I cannot answer from these excerpts; AccountBook is about money.",
        ] {
            assert!(ledger(denial).is_empty(), "{denial}");
        }
        let learned = ledger("AccountBook keeps the ledger. It is not saml_login.");
        assert_eq!(learned[0].synonyms, ["AccountBook"]);
        let learned = ledger("AccountBook keeps it:\n```python\nif not entries: return AccountBook()\n```");
        assert_eq!(learned[0].synonyms, ["AccountBook"], "code's own `not` denies nothing");
        // An identifier longer than a concept file takes is none to learn.
        let long = format!("Account_{}", "Book".repeat(60));
        let given = [hit(&format!("class {long}:\n    pass"))];
        let learned = concepts_bridged(
            "which class keeps the ledger",
            &["ledger".into()],
            &format!("The ledger is {long} [1]."),
            &given,
            &ConceptSet::default(),
        );
        assert!(learned.is_empty(), "{learned:?}");
    }

    #[test]
    fn learned_concepts_are_appended_as_concept_files_read_them() {
        let dir = tempfile::tempdir().unwrap();
        let root =
            ProjectRoot { path: dir.path().to_path_buf(), marker: crate::project::RootMarker::Vecgrep, shared: None };
        let one = LearnedConcept { name: "ledger".into(), synonyms: vec!["AccountBook".into()] };
        let two = LearnedConcept { name: "tenant".into(), synonyms: vec!["org_id".into(), "Workspace".into()] };
        append_learned(&root, &[one], "where is the ledger ---> kept", "m").unwrap();
        let path = append_learned(&root, &[two], "which tenant", "m").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("from the question \"where is the ledger - - -> kept\""), "{text}");
        assert_eq!(text.matches("-->").count(), 2, "each comment ends once, where it should: {text}");
        let (set, problems) = crate::concepts::load(&root);
        assert!(problems.is_empty(), "{problems:?}");
        let terms: Vec<Vec<String>> = set.concepts().iter().map(|c| c.terms.clone()).collect();
        assert_eq!(terms, [vec!["ledger", "AccountBook"], vec!["tenant", "org_id", "Workspace"]]);
    }

    #[test]
    fn nothing_is_learned_into_a_directory_that_is_not_a_project() {
        let dir = tempfile::tempdir().unwrap();
        let one = LearnedConcept { name: "ledger".into(), synonyms: vec!["AccountBook".into()] };
        let plain = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        let err = refuse_unless_project(&plain).unwrap_err();
        assert!(format!("{err:#}").contains("is not a project"), "{err:#}");
        // An unmarked root that vecgrep indexed in place holds .vecgrep: it learns.
        std::fs::create_dir(plain.data_dir()).unwrap();
        refuse_unless_project(&plain).unwrap();
        append_learned(&plain, &[one], "q", "m").unwrap();
        let git = ProjectRoot { path: dir.path().join("elsewhere"), marker: RootMarker::Git, shared: None };
        refuse_unless_project(&git).unwrap();
    }

    /// A repository may ship learned.md, or its directory, as a link to a
    /// file of the user's: vg-answer --learn refuses to write through it.
    #[cfg(unix)]
    #[test]
    fn nothing_is_learned_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root =
            ProjectRoot { path: dir.path().to_path_buf(), marker: crate::project::RootMarker::Vecgrep, shared: None };
        let users = dir.path().join("users-profile");
        std::fs::write(&users, "export PATH\n").unwrap();
        std::fs::create_dir_all(project_kg_dir(&root)).unwrap();
        std::os::unix::fs::symlink(&users, learned_path(&root)).unwrap();
        let one = LearnedConcept { name: "ledger".into(), synonyms: vec!["AccountBook".into()] };
        let err = append_learned(&root, std::slice::from_ref(&one), "q", "m").unwrap_err();
        assert!(format!("{err:#}").contains("a link"), "{err:#}");
        std::fs::remove_file(learned_path(&root)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", learned_path(&root)).unwrap();
        let err = append_learned(&root, std::slice::from_ref(&one), "q", "m").unwrap_err();
        assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&users).unwrap(), "export PATH\n");
        // `.vecgrep` itself a link out of the project.
        let project = tempfile::tempdir().unwrap();
        let root = ProjectRoot { path: project.path().to_path_buf(), marker: RootMarker::Git, shared: None };
        std::os::unix::fs::symlink(dir.path(), root.data_dir()).unwrap();
        let err = append_learned(&root, std::slice::from_ref(&one), "q", "m").unwrap_err();
        assert!(format!("{err:#}").contains("outside the project"), "{err:#}");
        assert!(!dir.path().join("kg/learned.md").exists());
        // `kg` a dangling link: said as a link, not "File exists" (audit 199).
        let project = tempfile::tempdir().unwrap();
        let root = ProjectRoot { path: project.path().to_path_buf(), marker: RootMarker::Git, shared: None };
        std::fs::create_dir(root.data_dir()).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), project_kg_dir(&root)).unwrap();
        let err = append_learned(&root, &[one], "q", "m").unwrap_err();
        assert!(format!("{err:#}").contains("is a link"), "{err:#}");
    }
}
