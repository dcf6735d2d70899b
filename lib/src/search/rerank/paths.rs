//! What a file's path says about it, for reranking: a test, an example
//! or benchmark, prose. Only shapes common to many languages' conventions,
//! never one project's layout.

/// Directories whose files test the code rather than implement it.
const TEST_DIRS: &[&str] = &["test", "tests", "__tests__", "spec", "specs", "testing", "testdata"];

/// Directories of examples, benchmarks and documentation code.
const EXAMPLE_DIRS: &[&str] = &[
    "example",
    "examples",
    "_example",
    "_examples",
    "docs_src",
    "doc",
    "docs",
    "benches",
    "benchmark",
    "benchmarks",
    "sample",
    "samples",
];

/// Extensions of prose: documentation, not code.
const PROSE_EXTENSIONS: &[&str] = &["md", "markdown", "mdx", "rst", "txt", "adoc", "org"];

/// Test file names by their stem: `test_x`, `x_test`, `x_spec`, `x.test`,
/// `x.spec` (JavaScript), and `XTest`, `XTests`, `XSpec`, `XSuite`.
const TEST_PREFIXES: &[&str] = &["test_"];
const TEST_SUFFIXES: &[&str] = &["_test", "_tests", "_spec", ".test", ".spec"];
const TEST_CAMEL_SUFFIXES: &[&str] = &["Test", "Tests", "Spec", "Suite"];

/// The directories and the file name of a root-relative path.
fn split(path: &str) -> (impl Iterator<Item = &str>, &str) {
    let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
    (dirs.split('/').filter(|d| !d.is_empty()), name)
}

/// A file name without its last extension.
pub(super) fn stem(path: &str) -> &str {
    let name = split(path).1;
    name.rsplit_once('.').map_or(name, |(stem, _)| if stem.is_empty() { name } else { stem })
}

/// Whether the file is a test: under a test directory or named as one.
pub(super) fn is_test(path: &str) -> bool {
    let (mut dirs, _) = split(path);
    if dirs.any(|d| TEST_DIRS.contains(&d)) {
        return true;
    }
    let stem = stem(path);
    let lower = stem.to_ascii_lowercase();
    TEST_PREFIXES.iter().any(|p| lower.starts_with(p))
        || TEST_SUFFIXES.iter().any(|s| lower.ends_with(s))
        || TEST_CAMEL_SUFFIXES.iter().any(|s| stem.len() > s.len() && stem.ends_with(s))
}

/// Whether the file is an example, a benchmark or documentation code.
pub(super) fn is_example(path: &str) -> bool {
    split(path).0.any(|d| EXAMPLE_DIRS.contains(&d))
}

/// Whether the file is prose (Markdown, plain text and the like).
pub(super) fn is_prose(path: &str) -> bool {
    let name = split(path).1;
    name.rsplit_once('.').is_some_and(|(_, ext)| PROSE_EXTENSIONS.iter().any(|p| ext.eq_ignore_ascii_case(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_are_known_by_directory_or_name_in_many_languages() {
        for path in [
            "tests/app.py",
            "src/__tests__/store.ts",
            "test_app.py",
            "pkg/mux_test.go",
            "lib/router_spec.rb",
            "src/store.test.ts",
            "src/GsonTest.java",
            "src/RouterTests.swift",
            "core/MonadSuite.scala",
            "sync/tests/loom_semaphore.rs",
        ] {
            assert!(is_test(path), "{path}");
        }
        for path in
            ["testing.py", "src/attest.rs", "contest/main.go", "Test.java", "latest.rs", "src/protest_spec_helper"]
        {
            assert!(!is_test(path), "{path}");
        }
    }

    #[test]
    fn examples_prose_and_stems() {
        assert!(is_example("_examples/rest/main.go") && is_example("docs_src/app.py"));
        assert!(!is_example("src/exampleparser.rs"));
        assert!(is_prose("docs/extract.md") && is_prose("README.MD") && is_prose("notes.txt"));
        assert!(!is_prose("src/lib.rs") && !is_prose("Makefile"));
        assert_eq!(stem("src/TypeAdapter.java"), "TypeAdapter");
        assert_eq!(stem("src/store.test.ts"), "store.test");
        assert_eq!(stem(".bashrc"), ".bashrc");
        assert_eq!(stem("Makefile"), "Makefile");
    }
}
