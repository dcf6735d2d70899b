//! Metadata filters (`--changed-within`, `--changed-before`, `-S/--size`,
//! `-E/--exclude`) on vg-query, the porcelain and vg-serve's /search: they
//! narrow the candidates before the top-k cut.

use serde_json::Value;

use crate::common::*;

/// Files of known sizes and modification times, each about retrying uploads.
fn dated_project() -> Tree {
    let t = Tree::git();
    // 2020-01-01, 2024-06-01 and now.
    t.write("old.py", "def retry_upload_old(client):\n    return client.put()\n");
    t.write("mid.py", "def retry_upload_mid(client, blob):\n    return client.put(blob)\n");
    t.write("new.py", "def retry_upload_new(client, blob, attempts):\n    return client.put(blob, attempts)\n");
    touch(&t, "old.py", "2020-01-01 00:00:00");
    touch(&t, "mid.py", "2024-06-01 00:00:00");
    t
}

fn touch(t: &Tree, rel: &str, date: &str) {
    let o = run(std::process::Command::new("touch").args(["-d", date]).arg(t.path().join(rel)).env("TZ", "UTC"));
    assert_code(&o, 0);
}

fn files_found(t: &Tree, args: &[&str]) -> Vec<String> {
    let mut cmd = t.cmd("vg-query", ".");
    cmd.args(["--threshold", "-1"]).args(args).arg("retry an upload");
    let o = run(&mut cmd);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let mut files: Vec<String> = records(&o).iter().map(|r| r["file"].as_str().unwrap().to_string()).collect();
    files.sort();
    files.dedup();
    files
}

/// PATHs inside one another are each walked, as ripgrep walks them: a
/// file named beside its directory is searched whatever ignore, hidden or
/// type rule would leave it out, and --max-depth counts from each. The
/// inner PATH was dropped before the walk, and those files with it.
#[test]
fn a_path_inside_another_adds_what_its_own_walk_finds() {
    let t = Tree::git();
    for f in ["src/a.py", "src/sub/b.py", ".hidden.py", "ignored.py", "src/x.rs"] {
        t.write(f, "def settle():\n    \"\"\"Pay the pending request.\"\"\"\n");
    }
    t.write(".gitignore", "ignored.py\n");
    let found = |args: &[&str]| {
        let o = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "-k", "50"]).args(args));
        assert_code(&o, 0);
        let mut files: Vec<String> = records(&o).iter().map(|r| r["file"].as_str().unwrap().to_string()).collect();
        files.sort();
        files
    };
    let q = "pay the pending request";
    assert_eq!(found(&["--max-depth", "1", q, "src", "src/sub"]), ["src/a.py", "src/sub/b.py", "src/x.rs"]);
    assert_eq!(found(&[q, ".", "ignored.py", ".hidden.py"]).len(), 5);
    assert_eq!(found(&["-t", "rust", q, "src", "src/a.py"]), ["src/a.py", "src/x.rs"]);
    // The file named once more is searched once; a run over the directory
    // alone then leaves out what its rules refuse, as before.
    assert_eq!(found(&[q, "src", "src/a.py", "src/a.py"]), ["src/a.py", "src/sub/b.py", "src/x.rs"]);
    assert_eq!(found(&[q, "."]), ["src/a.py", "src/sub/b.py", "src/x.rs"]);
}

/// A search that had no file to search says so, as ripgrep does, rather
/// than nothing (or, on a terminal, that no result passed the threshold).
#[test]
fn a_search_with_no_file_to_search_says_so() {
    let t = Tree::git();
    t.write("steps.py", "def step_one(state):\n    return state\n");
    std::fs::create_dir(t.path().join("empty")).unwrap();
    t.write(".vecgrep/kg/notes.md", "the state of things\n");
    for (args, why) in [
        (&["-t", "rust", "state"][..], "no files were searched: the filters (-t, -T, -g, --max-depth) chose none"),
        (&["-g", "*.nothing", "state"], "the filters"),
        (&["state", "empty"], "no files were searched: there are none under the paths that the ignore"),
        // The flags that let more in are not suggested to one who gave them.
        (&["--hidden", "--no-ignore", "state", "empty"], "there are none under the paths (.git, .hg, .jj and .vecgrep"),
        // Nor for paths no flag lets in.
        (&["state", ".vecgrep/kg/notes.md"], "the paths lie in .git, .hg, .jj or .vecgrep, which are never searched"),
        (&["state", ".git"], "the paths lie in .git, .hg, .jj or .vecgrep"),
    ] {
        let o = run(t.cmd("vecgrep", ".").args(args));
        assert_code(&o, 1);
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
    let o = run(t.cmd("vecgrep", ".").args(["-t", "py", "state"]));
    assert!(!stderr(&o).contains("no files"), "{}", stderr(&o));
    // An index run given such paths said nothing and printed a summary of
    // nothing (audit 191).
    for (tool, args) in [("vg-index", &[".git"][..]), ("vecgrep", &["--index-only", ".vecgrep/kg/notes.md"])] {
        let o = run(t.cmd(tool, ".").args(args));
        assert_code(&o, 0);
        let says =
            "no files were indexed: the paths lie in .git, .hg, .jj or .vecgrep, which are never searched or indexed";
        assert!(stderr(&o).contains(says), "{tool} {args:?}: {}", stderr(&o));
    }
    let o = run(&mut t.cmd("vg-index", "."));
    assert!(!stderr(&o).contains("no files"), "{}", stderr(&o));
}

#[test]
fn files_are_filtered_by_when_they_changed() {
    let t = dated_project();
    assert_eq!(files_found(&t, &[]), ["mid.py", "new.py", "old.py"]);
    assert_eq!(files_found(&t, &["--changed-within", "1d"]), ["new.py"]);
    assert_eq!(files_found(&t, &["--changed-within", "2024-06-01"]), ["mid.py", "new.py"], "the day itself is in");
    assert_eq!(files_found(&t, &["--changed-before", "2024-06-01"]), ["old.py"], "before is strict");
    let both = ["--changed-within", "2021-01-01", "--changed-before", "2025-01-01"];
    assert_eq!(files_found(&t, &both), ["mid.py"]);
}

#[test]
fn files_are_filtered_by_size_at_their_bounds() {
    let t = dated_project();
    let size = |rel: &str| std::fs::metadata(t.path().join(rel)).unwrap().len();
    let (old, mid) = (size("old.py"), size("mid.py"));
    assert!(old < mid && mid < size("new.py"));
    assert_eq!(files_found(&t, &["-S", &format!("-{old}")]), ["old.py"], "at most: the bound is in");
    assert_eq!(files_found(&t, &["-S", &format!("+{mid}")]), ["mid.py", "new.py"], "at least: the bound is in");
    assert_eq!(files_found(&t, &["--size", &format!("+{mid}"), "--size", &format!("-{mid}")]), ["mid.py"]);
}

#[test]
fn excluded_paths_stay_indexed_but_out_of_the_results() {
    let t = dated_project();
    t.write("tests/test_upload.py", "def test_retry_upload():\n    assert retry_upload_new(client, blob, 3)\n");
    assert!(files_found(&t, &[]).contains(&"tests/test_upload.py".to_string()));
    assert_eq!(files_found(&t, &["-E", "tests/", "-E", "old.py"]), ["mid.py", "new.py"]);
    let o = run(t.cmd("vg-index", ".").arg("--stats").arg("--json"));
    assert_eq!(records(&o)[0]["files"], 4, "excluding is not unindexing");
}

#[test]
fn a_filtered_search_still_returns_k_results() {
    let t = Tree::git();
    // Thirty strong matches in an excluded directory, three weaker ones outside it.
    for i in 0..30 {
        t.write(
            &format!("vendor/copy{i}.py"),
            &format!("def retry_upload_{i}(client, blob):\n    return client.put(blob)\n"),
        );
    }
    t.write("a.py", "def send_again(client, blob):\n    return client.put(blob)\n");
    t.write("b.py", "def upload_once(client, blob):\n    client.put(blob)\n");
    t.write("c.py", "def retry(f):\n    return f()\n");
    let found = files_found(&t, &["-k", "3", "-E", "vendor/"]);
    assert_eq!(found, ["a.py", "b.py", "c.py"], "the filter comes before the cut");
}

#[test]
fn bad_filter_values_are_usage_errors() {
    let t = dated_project();
    for args in [["--changed-within", "someday"], ["--changed-before", "2026-02-30"], ["-S", "10k"], ["-S", "+ten"]] {
        let o = run(t.cmd("vg-query", ".").args(args).arg("retry"));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.starts_with("vg-query: ") && err.lines().count() == 1, "{err}");
    }
    let o = run(t.cmd("vg-query", ".").args(["-E", "src/{a,b"]).arg("retry"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("invalid exclusion glob"), "{}", stderr(&o));
}

#[test]
fn the_porcelain_passes_the_filters_on() {
    let t = dated_project();
    let o =
        run(t.cmd("vecgrep", ".").args(["--json", "--threshold", "-1", "--changed-within", "1d", "retry an upload"]));
    assert_code(&o, 0);
    let files: Vec<Value> = records(&o).iter().map(|r| r["file"].clone()).collect();
    assert!(!files.is_empty() && files.iter().all(|f| f == "new.py"), "{files:?}");
}

/// `-g`, `-t` or PATHs that chose only files the walk skips say so, and
/// why, rather than leaving a search that found nothing to read as if
/// there were no such file.
#[test]
fn a_filter_whose_files_were_all_skipped_says_so() {
    let t = dated_project();
    t.write("package-lock.json", "{\"lockfileVersion\": 3}\n");
    let o = run(t.cmd("vecgrep", ".").args(["-g", "package-lock.json", "dependency versions"]));
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("vecgrep: the 1 file the filters chose was skipped: 1 generated")
            && err.contains("--include-generated"),
        "{err}"
    );
    // Files it could search: no such note.
    let o = run(t.cmd("vecgrep", ".").args(["-g", "*.py", "retry"]));
    assert!(!stderr(&o).contains("the filters chose"), "{}", stderr(&o));
    // A file named as a PATH that the walk skips says so too.
    t.write("big.py", &"def retry_upload(): pass\n".repeat(60));
    let o = run(t.cmd("vecgrep", ".").args(["--max-filesize", "1000", "retry", "big.py"]));
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("vecgrep: the 1 file searched was skipped: 1 too large") && err.contains("--max-filesize"),
        "{err}"
    );
    let o = run(t.cmd("vecgrep", ".").args(["retry", "big.py"]));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("skipped"), "{}", stderr(&o));
    // A binary file is found only once read, after the walk: said too, on every run.
    std::fs::write(t.path().join("blob.py"), b"def retry():\0\x01\x02 upload").unwrap();
    for _ in 0..2 {
        let o = run(t.cmd("vecgrep", ".").args(["retry", "blob.py"]));
        assert_code(&o, 1);
        assert!(stderr(&o).contains("vecgrep: the 1 file searched was skipped: 1 binary"), "{}", stderr(&o));
    }
    let o = run(t.cmd("vecgrep", ".").args(["retry", "blob.py", "big.py"]));
    assert!(!stderr(&o).contains("skipped"), "{}", stderr(&o));
}

/// A workspace of two crates and a web package, each retrying something,
/// and a script that belongs to no package.
fn monorepo() -> Tree {
    let t = Tree::git();
    t.write("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n")
        .write("crates/core/Cargo.toml", "[package]\nname = \"acme-core\"\nversion = \"0.1.0\"\n")
        .write("crates/core/src/upload.rs", "/// Retry a failed upload with backoff.\npub fn retry_upload() {}\n")
        .write("crates/net/Cargo.toml", "[package]\nname = \"acme-net\"\nversion = \"0.1.0\"\n")
        .write("crates/net/src/request.rs", "/// Retry a failed request to the server.\npub fn retry_request() {}\n")
        .write("web/package.json", "{\"name\": \"@acme/web\", \"version\": \"1.0.0\"}\n")
        .write("web/src/fetch.js", "// Retry a failed fetch from the browser.\nexport function retryFetch() {}\n")
        .write("scripts/retry.sh", "# Retry a failed deploy.\nretry_deploy() { :; }\n");
    t
}

#[test]
fn package_keeps_the_files_of_one_package_by_their_nearest_manifest() {
    let t = monorepo();
    // A manifest belongs to the package it names.
    assert_eq!(files_found(&t, &["--package", "acme-net"]), ["crates/net/Cargo.toml", "crates/net/src/request.rs"]);
    assert_eq!(files_found(&t, &["--package", "@acme/web"]), ["web/package.json", "web/src/fetch.js"]);
    // A path below the manifest still belongs to its package.
    let o = run(t.cmd("vg-query", "crates/core/src").args([
        "--package",
        "acme-core",
        "--threshold",
        "-1",
        "retry a failed upload",
        ".",
    ]));
    assert_code(&o, 0);
    assert!(records(&o).iter().all(|h| h["file"].as_str().unwrap().starts_with("crates/core/")));
    let o = run(t.cmd("vecgrep", ".").args(["-l", "--package", "acme-net", "retry a failed request"]));
    assert_eq!(stdout(&o).lines().next(), Some("crates/net/src/request.rs"));
    let o = run(t.cmd("vg-query", ".").args(["--package", "acme", "retry"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("no package named 'acme' here; the manifests name @acme/web, acme-core, acme-net"),
        "{}",
        stderr(&o)
    );
    let o = run(t.cmd("vecgrep", ".").args(["--log", "--package", "acme-net", "retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--package needs a search of the files"), "{}", stderr(&o));
}

/// A worktree's or a submodule's `.git` is a file linking to its
/// repository: with `--hidden` it was indexed, as the `.git` directory
/// never is.
#[test]
fn a_git_link_file_is_never_indexed_as_the_git_directory_is_not() {
    let t = Tree::bare();
    t.write("steps.py", "def step_one(state):\n    return state\n");
    t.write(".git", "gitdir: /elsewhere/.git/worktrees/steps\n");
    let o = run(t.cmd("vg-index", ".").args(["--hidden", "--no-ignore"]));
    assert_code(&o, 0);
    let files: Vec<Value> = records(&o).into_iter().filter(|r| r["type"] == "file").collect();
    assert_eq!(files.iter().map(|r| r["file"].as_str().unwrap()).collect::<Vec<_>>(), ["steps.py"], "{files:?}");
}
