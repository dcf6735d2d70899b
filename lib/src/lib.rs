//! vecgrep's library: every decision the toolkit makes lives here, so that the
//! binaries stay thin (parse arguments, call this crate, write records).
//!
//! The library never parses argv and never exits the process; it returns
//! errors with enough context for a binary to print one line and pick an exit
//! code.
//!
//! The modules in pipeline order (ARCHITECTURE.md walks them one by one);
//! each uses only those above it, which a test below checks:
//!
//! | module | holds | in → out |
//! |---|---|---|
//! | [`project`] | root selection, config, walking, generated files | paths, flags → root, settings, files |
//! | [`chunk`] | splitting a file along its structure, contexts, names | text → chunks |
//! | [`terms`] | how text becomes terms, at index and query time alike | text → words, name terms |
//! | `scoring` | how scores are computed: BM25, MaxScore bounds, reciprocal-rank fusion | counts, ranks → scores |
//! | [`embed`] | the `Embedder` seam: local ONNX model, remote server | text → vectors |
//! | [`store`] | the index on disk behind `IndexReader` / `IndexWriter` | writes → answers |
//! | [`index`] | one index run: plan, then read, embed, write | files → store |
//! | [`concepts`] | a project's own vocabulary: concepts and their synonyms | query → expansion |
//! | [`search`] | ranking: candidates, fusion, names, threshold, joining | query → hits |
//! | [`history`] | the git history: commits read, indexed, ranked (vg-log) | repository → commit hits |
//! | [`judge`] | whether the hits answer the query, and why not | hits → judgement |
//! | [`live`] | an index kept fresh while searched (server, picker) | target → searcher |
//! | [`records`] | the NDJSON contract between the tools | values → records |
//! | [`answer`] | a chat model's answer from the top hits, held to them | hits → answer, concepts |
//! | [`ask`] | a question into a plan, filtered hits with their reasons, and an answer | question → plan → response |
//! | [`format`], [`pick`], [`serve`], [`mcp`], [`tools`] | the surfaces: rendering, the picker, HTTP, MCP, finding tools | hits → people, programs, agents |

pub mod project;

pub mod chunk;
mod terms;

mod scoring;

pub mod embed;

pub mod store;

pub mod index;

pub mod concepts;
pub mod search;

pub mod history;

pub mod judge;

pub mod live;

pub mod records;

pub mod answer;

pub mod ask;

pub mod format;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod pick;
pub mod serve;
pub mod tools;

#[cfg(test)]
mod layers {
    //! The module map above is the architecture: a module that reached for
    //! one below it (or a cycle among a directory's files) fails here.

    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    /// The modules in pipeline order; each may use only those before it.
    const ORDER: &[&str] = &[
        "project", "chunk", "terms", "scoring", "embed", "store", "index", "concepts", "search", "history", "judge",
        "live", "records", "answer", "ask", "format", "pick", "serve", "mcp", "tools",
    ];

    fn src() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The first path segment of every `prefix`-path in `text`
    /// (`crate::store::Scope` → `store`; `crate::{a::b, c}` → `a`, `c`),
    /// comments left out.
    fn referenced(text: &str, prefix: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut rest = line;
            while let Some(at) = rest.find(prefix) {
                rest = &rest[at + prefix.len()..];
                let group = rest.strip_prefix('{').map(|g| &g[..g.find('}').unwrap_or(g.len())]);
                let paths: Vec<&str> = match group {
                    Some(g) => g.split(',').collect(),
                    None => vec![rest],
                };
                for p in paths {
                    let p = p.trim();
                    let end = p.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(p.len());
                    if end > 0 {
                        out.insert(p[..end].to_string());
                    }
                }
            }
        }
        out
    }

    /// Each file's path under `src/` as components, and its code up to its
    /// tests (which may reach anywhere for their fixtures); none for a file
    /// of tests.
    fn files() -> Vec<(Vec<String>, String)> {
        let mut paths = Vec::new();
        rust_files(&src(), &mut paths);
        paths
            .into_iter()
            .map(|p| {
                let rel = p.strip_prefix(src()).unwrap().with_extension("");
                let parts = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                let text = std::fs::read_to_string(&p).unwrap();
                // A file of test code alone (`#![cfg(test)]`) is all fixtures.
                let tests_only = text.lines().any(|l| l == "#![cfg(test)]");
                let code = if tests_only { "" } else { text.split("\n#[cfg(test)]").next().unwrap_or_default() };
                let code = code.to_string();
                (parts, code)
            })
            .collect()
    }

    #[test]
    fn modules_use_only_those_before_them() {
        let mut wrong = Vec::new();
        for (parts, text) in files() {
            let module = &parts[0];
            if module == "lib" {
                continue;
            }
            let place = ORDER.iter().position(|m| m == module).unwrap_or_else(|| panic!("{module} is not in ORDER"));
            for used in referenced(&text, "crate::") {
                match ORDER.iter().position(|m| *m == used) {
                    Some(p) if p > place => wrong.push(format!("{} uses {used}", parts.join("/"))),
                    _ => {}
                }
            }
        }
        assert!(wrong.is_empty(), "modules reaching down the pipeline: {wrong:?}");
    }

    /// The names a directory's `mod.rs` brings in from its children
    /// (`pub use lock::{ensure_data_dir, WriteLock};`), with the child each
    /// comes from.
    fn reexports(mod_rs: &str, children: &BTreeSet<String>) -> BTreeMap<String, String> {
        let mut names = BTreeMap::new();
        for statement in mod_rs.split(';') {
            let Some(at) = statement.find("use ") else { continue };
            let path = statement[at + 4..].trim();
            let Some((child, rest)) = path.split_once("::") else { continue };
            if !children.contains(child) {
                continue;
            }
            for name in rest.trim_matches(['{', '}', ' ', '\n']).split(',') {
                let name = name.trim().rsplit("::").next().unwrap_or_default();
                if !name.is_empty() {
                    names.insert(name.to_string(), child.to_string());
                }
            }
        }
        names
    }

    #[test]
    fn the_files_of_a_directory_form_no_cycle() {
        let files = files();
        // Every directory, at any depth, with the modules directly in it.
        let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
        for (parts, _) in &files {
            for d in 1..parts.len() {
                if parts.len() > d + 1 || parts[d] != "mod" {
                    children.entry(parts[..d].to_vec()).or_default().insert(parts[d].clone());
                }
            }
        }
        let mod_rs: BTreeMap<Vec<String>, &str> = files
            .iter()
            .filter(|(parts, _)| parts.last().is_some_and(|p| p == "mod"))
            .map(|(parts, text)| (parts[..parts.len() - 1].to_vec(), text.as_str()))
            .collect();
        for (dir, kids) in &children {
            let exported = reexports(mod_rs.get(dir).copied().unwrap_or_default(), kids);
            let sibling = |name: &String| kids.get(name).or_else(|| exported.get(name)).cloned();
            // child -> the siblings it uses, by path or through the directory's re-exports
            let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (parts, text) in &files {
                if !parts.starts_with(dir) || parts.len() == dir.len() + 1 && parts[dir.len()] == "mod" {
                    continue;
                }
                let child = &parts[dir.len()];
                let mut used = referenced(text, &format!("crate::{}::", dir.join("::")));
                if parts.len() == dir.len() + 1 {
                    used.extend(referenced(text, "super::"));
                }
                let uses = used.iter().filter_map(sibling).filter(|s| s != child);
                graph.entry(child.clone()).or_default().extend(uses);
            }
            for start in graph.keys() {
                // Depth-first from `start`: reaching it again is a cycle.
                let mut stack: Vec<&String> = graph[start].iter().collect();
                let mut seen = BTreeSet::new();
                while let Some(next) = stack.pop() {
                    assert!(next != start, "a cycle through {}/{start}", dir.join("/"));
                    if seen.insert(next) {
                        stack.extend(graph.get(next).into_iter().flatten());
                    }
                }
            }
        }
    }

    #[test]
    fn reexports_are_traced_to_their_child() {
        let kids: BTreeSet<String> = ["lock", "sqlite"].map(String::from).into();
        let found = reexports("mod lock;\npub use lock::{ensure_data_dir, WriteLock};\nuse sqlite::open;\n", &kids);
        assert_eq!(found.get("WriteLock").map(String::as_str), Some("lock"));
        assert_eq!(found.get("open").map(String::as_str), Some("sqlite"));
        assert_eq!(found.get("lock"), None);
    }

    #[test]
    fn references_are_read_in_both_forms() {
        let text = "use crate::store::{Scope, X};\nuse crate::{chunk::Chunk, terms};\n// crate::live in a comment\n";
        let found: Vec<String> = referenced(text, "crate::").into_iter().collect();
        assert_eq!(found, ["chunk", "store", "terms"]);
    }
}
