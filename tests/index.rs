//! vg-index: incremental indexing, stale cleanup, rebuilds, clear-cache,
//! config precedence and rejection, skips and missing assets.

use crate::common::*;

fn index(t: &Tree, cwd: &str, args: &[&str]) -> std::process::Output {
    let o = run(t.cmd("vg-index", cwd).args(args));
    assert_code(&o, 0);
    o
}

fn stats(t: &Tree) -> serde_json::Value {
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    assert_code(&o, 0);
    records(&o)[0].clone()
}

#[test]
fn first_run_embeds_everything_and_a_second_run_nothing() {
    let t = sample_project();
    // What the model embeds, and what it is spared: runs embed fully.
    t.global_config("embed_all = true\n");
    let s = summary(&index(&t, ".", &[]));
    assert_eq!(s["files"], 4);
    assert!(s["chunks"].as_u64().unwrap() >= 4);
    assert_eq!(s["embedded"], s["chunks"]);
    assert_eq!(s["reused"], 0);
    // Each chunk is at least a few tokens and at most the model's window.
    let (tokens, chunks) = (s["tokens"].as_u64().unwrap(), s["chunks"].as_u64().unwrap());
    assert!(tokens >= 5 * chunks && tokens <= 256 * chunks, "{s}");
    let s2 = summary(&index(&t, ".", &[]));
    assert_eq!(s2["embedded"], 0);
    assert_eq!(s2["tokens"], 0);
    assert_eq!(s2["reused"], s["chunks"]);
    let st = stats(&t);
    assert_eq!(st["files"], 4);
    assert_eq!(st["chunks"], s["chunks"]);
    assert_eq!(st["holes"], 0);
    // What the index takes on disk, not the `-shm` the look itself makes
    // while it reads (audit 250: 32 KiB more than was left).
    let on_disk: u64 = std::fs::read_dir(t.path().join(".vecgrep"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("index.db"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert_eq!(st["db_size_bytes"].as_u64(), Some(on_disk));
    assert_eq!(st["model"], "all-MiniLM-L6-v2");
    // Chunk rows are a little over 2 KB: 4 KB pages would be half empty.
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    assert_eq!(db.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0)).unwrap(), 16384);
}

/// A run that finds nothing to do writes nothing: it set three values of
/// the index's meta as they were, and a server's refresh every two seconds
/// wrote 120 KB/s into an idle project's write-ahead log (audit 252). A
/// connection held open, as a server's is, keeps the log from being folded
/// back, so its length shows every page written.
#[test]
fn a_run_with_nothing_to_do_writes_nothing() {
    let t = sample_project();
    assert_code(&index(&t, ".", &[]), 0);
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    db.query_row("SELECT count(*) FROM meta", [], |r| r.get::<_, i64>(0)).unwrap();
    let log = t.path().join(".vecgrep/index.db-wal");
    let before = std::fs::metadata(&log).unwrap().len();
    for _ in 0..2 {
        assert_eq!(summary(&index(&t, ".", &[]))["embedded"], 0);
    }
    assert_eq!(std::fs::metadata(&log).unwrap().len(), before);
    // A change is still written.
    t.write("src/more.py", "def more():\n    return 1\n");
    assert_eq!(summary(&index(&t, ".", &[]))["files"], 5);
    assert!(std::fs::metadata(&log).unwrap().len() > before);
}

/// `vg-index > out.ndjson` inside the tree leaves out the file it writes,
/// as ripgrep does, and says so.
#[test]
fn the_file_a_run_writes_its_records_to_is_left_out() {
    let t = sample_project();
    let out_path = t.path().join("out.ndjson");
    let out = std::fs::File::create(&out_path).unwrap();
    let status = t.cmd("vg-index", ".").stdout(out).status().unwrap();
    assert!(status.success());
    let text = read(&out_path);
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let skip = records.iter().find(|r| r["type"] == "skip").unwrap_or_else(|| panic!("no skip: {text}"));
    assert_eq!((skip["file"].as_str(), skip["reason"].as_str()), (Some("out.ndjson"), Some("own_output")));
    assert!(records.iter().all(|r| r["type"] != "file" || r["file"] != "out.ndjson"), "{text}");
    // Another run, writing elsewhere, indexes it as any other file.
    let again = index(&t, ".", &[]);
    assert!(indexed_files(&again).contains(&"\"out.ndjson\"".to_string()), "{}", stdout(&again));
    // A run writing to it leaves what another run stored of it: removing
    // it would have the two runs take turns.
    let out = std::fs::File::create(&out_path).unwrap();
    assert!(t.cmd("vg-index", ".").stdout(out).status().unwrap().success());
    let text = read(&out_path);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!((last["type"].as_str(), last["removed"].as_u64()), (Some("summary"), Some(0)), "{text}");
}

/// A first run that fails before it ends (here at an ignore file it cannot
/// read) leaves an index marked incomplete, not a whole index of nothing
/// that every later search would take at its word.
#[test]
fn a_first_run_that_fails_leaves_an_index_marked_incomplete() {
    let t = Tree::git();
    t.write("a.py", "def alpha():\n    pass\n").write_bytes(".gitignore", b"# caf\xe9\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 2);
    let verify = records(&run(t.cmd("vg-index", ".").args(["--verify", "--json"])))[0].clone();
    assert_eq!((verify["files"].as_u64(), verify["complete"].as_bool()), (Some(0), Some(false)), "{verify}");
    // It wrote no file's chunks: a search is told to index first.
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "alpha"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("run vg-index first"), "{}", stderr(&o));
    std::fs::remove_file(t.path().join(".gitignore")).unwrap();
    index(&t, ".", &[]);
    assert_eq!(stats(&t)["complete"], true);
}

#[test]
fn changing_one_file_embeds_only_its_chunks() {
    let t = sample_project();
    t.global_config("embed_all = true\n");
    let before = summary(&index(&t, ".", &[]));
    t.write("src/geometry.rs", "pub fn square_area(side: f64) -> f64 {\n    side * side\n}\n");
    let o = index(&t, ".", &[]);
    let s = summary(&o);
    let recs = records(&o);
    let indexed: Vec<_> = of_type(&recs, "file").into_iter().filter(|r| r["status"] == "indexed").collect();
    assert_eq!(indexed.len(), 1);
    assert_eq!(indexed[0]["file"], "src/geometry.rs");
    assert_eq!(s["embedded"], indexed[0]["chunks"]);
    assert_eq!(s["reused"].as_u64().unwrap() + s["embedded"].as_u64().unwrap(), s["chunks"].as_u64().unwrap());
    assert_eq!(s["files"], before["files"]);
    // The replaced chunks' words leave the word index, which is one
    // segment again: no search skips their tombstones (`compact_words`).
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let segments: i64 = db.query_row("SELECT count(DISTINCT segid) FROM chunks_fts_idx", [], |r| r.get(0)).unwrap();
    assert_eq!(segments, 1);
    let circle = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "circle"]));
    assert_code(&circle, 1);
    let square = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "square"]));
    assert_eq!(records(&square)[0]["file"], "src/geometry.rs");
}

/// A Python module of many small functions: several chunks, each different.
/// `reworded` changes one function's docstring; `appended` adds a function.
fn many_functions(reworded: Option<usize>, appended: bool) -> String {
    let mut text = String::new();
    for i in 0..(40 + appended as usize) {
        let verb = if reworded == Some(i) { "Shift" } else { "Move" };
        text.push_str(&format!(
            "def step_{i}(queue, limit={i}):\n    \"\"\"{verb} item {i} along the pipeline.\"\"\"\n    while len(queue) > limit:\n        queue.pop({i} % 3)\n    return queue\n\n\n"
        ));
    }
    text
}

fn semantic_scores(t: &Tree, q: &str) -> Vec<(String, u64, f64)> {
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "semantic", "--threshold", "-1", "-k", "200", q]));
    assert_code(&o, 0);
    let mut hits: Vec<_> = records(&o)
        .iter()
        .map(|r| {
            (r["file"].as_str().unwrap().to_string(), r["start_line"].as_u64().unwrap(), r["score"].as_f64().unwrap())
        })
        .collect();
    hits.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    hits
}

#[test]
fn an_edit_embeds_only_the_chunks_whose_text_changed() {
    let t = sample_project();
    t.global_config("embed_all = true\n");
    t.write("src/pipeline.py", &many_functions(None, false));
    let first = summary(&index(&t, ".", &[]));
    for (edit, text) in [("reword", many_functions(Some(20), false)), ("append", many_functions(Some(20), true))] {
        t.write("src/pipeline.py", &text);
        let o = index(&t, ".", &[]);
        let s = summary(&o);
        let recs = records(&o);
        let file = of_type(&recs, "file").into_iter().find(|r| r["file"] == "src/pipeline.py").cloned().unwrap();
        let chunks = file["chunks"].as_u64().unwrap();
        let (embedded, copied) = (s["embedded"].as_u64().unwrap(), s["copied"].as_u64().unwrap());
        assert!(chunks >= 10 && first["embedded"].as_u64().unwrap() >= chunks, "{file} {first}");
        // The changed line is in one chunk, or two where chunks overlap.
        assert!((1..=2).contains(&embedded), "{edit}: only the chunks with the change: {s}");
        assert_eq!(embedded + copied, chunks, "{edit}: {s}");
    }

    // Copied vectors are the ones embedding would give: same hits, same scores.
    let after_edit = semantic_scores(&t, "move an item along the pipeline");
    let rebuilt = summary(&index(&t, ".", &["--reindex"]));
    assert_eq!(rebuilt["copied"], 0, "a rebuild starts from nothing");
    let clean = semantic_scores(&t, "move an item along the pipeline");
    assert_eq!(after_edit.len(), clean.len());
    for (a, b) in after_edit.iter().zip(&clean) {
        assert_eq!((&a.0, a.1), (&b.0, b.1));
        assert!((a.2 - b.2).abs() < 1e-5, "{a:?} vs {b:?}");
    }
    let v = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&v, 0);
}

#[test]
fn repeated_text_within_a_file_is_embedded_once() {
    let t = sample_project();
    t.global_config("embed_all = true\n");
    // 120 equal lines: every full chunk of them has the same text.
    t.write("src/handlers.py", &"total = add_tax(total, rate)  # see the policy\n".repeat(120));
    let o = index(&t, ".", &[]);
    let s = summary(&o);
    let recs = records(&o);
    let file = of_type(&recs, "file").into_iter().find(|r| r["file"] == "src/handlers.py").cloned().unwrap();
    let chunks = file["chunks"].as_u64().unwrap();
    assert!(chunks >= 6, "{file}");
    assert!(s["copied"].as_u64().unwrap() >= chunks - 2, "{s}");
    assert_eq!(s["embedded"].as_u64().unwrap() + s["copied"].as_u64().unwrap(), s["chunks"].as_u64().unwrap());
}

#[test]
fn a_touched_but_unchanged_file_is_not_embedded() {
    let t = sample_project();
    index(&t, ".", &[]);
    let p = t.path().join("src/config.py");
    let f = std::fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
    let s = summary(&index(&t, ".", &[]));
    assert_eq!(s["embedded"], 0);
}

/// The files a run reports as indexed.
fn indexed_files(o: &std::process::Output) -> Vec<String> {
    let recs = records(o);
    of_type(&recs, "file").into_iter().filter(|r| r["status"] == "indexed").map(|r| r["file"].to_string()).collect()
}

/// An edit that keeps a file's size and mtime (`touch -r`, `cp -p`,
/// `rsync -t`) still moves its ctime, which the index keeps with the file.
#[test]
fn an_edit_that_keeps_the_size_and_mtime_is_indexed() {
    let t = sample_project();
    // A file changed within two seconds before a run is read again by the
    // next whatever its stamps say; these must be older, so that only the
    // ctime can tell.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    index(&t, ".", &[]);
    let path = t.path().join("src/geometry.rs");
    let before = std::fs::read_to_string(&path).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let edited = before.replace("circle_area", "circle_zone");
    assert_eq!(edited.len(), before.len());
    std::fs::write(&path, &edited).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    assert_eq!(indexed_files(&index(&t, ".", &[])), ["\"src/geometry.rs\""]);
    let found = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "circle_zone"]));
    assert_code(&found, 0);
    assert!(stdout(&found).contains("src/geometry.rs"), "{}", stdout(&found));
    // Read again by the next run (changed just before this one), not indexed.
    assert_eq!(indexed_files(&index(&t, ".", &[])), Vec::<String>::new());
}

/// A run that reads many files only because their ctime moved (here a
/// chmod of each; an index made before ctimes, a copied tree) says why,
/// and embeds nothing.
#[test]
fn many_files_read_only_for_their_ctime_are_explained_and_not_indexed_again() {
    let t = Tree::git();
    for i in 0..1000 {
        t.write(&format!("notes/n{i}.txt"), &format!("note number {i}\n"));
    }
    index(&t, ".", &[]);
    for i in 0..1000 {
        let path = t.path().join(format!("notes/n{i}.txt"));
        std::fs::set_permissions(&path, std::fs::metadata(&path).unwrap().permissions()).unwrap();
    }
    let o = index(&t, ".", &[]);
    assert!(stderr(&o).contains("checking 1000 files whose size and mtime are as indexed"), "{}", stderr(&o));
    assert_eq!(summary(&o)["files"].as_u64(), Some(1000));
    assert!(indexed_files(&o).is_empty(), "read and found unchanged, not indexed again");
    let quiet = run(t.cmd("vg-index", ".").arg("-q"));
    assert!(!stderr(&quiet).contains("ctime"), "{}", stderr(&quiet));
}

/// An index made before vecgrep kept ctimes is searched as it is, and the
/// next run adds the column, reads each file once to fill it in, and
/// embeds nothing: no rebuild.
#[test]
fn an_index_made_before_ctimes_is_kept_and_gains_them() {
    let t = sample_project();
    let first = summary(&index(&t, ".", &[]));
    let db_path = t.path().join(".vecgrep/index.db");
    let has_ctimes = || {
        let db = rusqlite::Connection::open(&db_path).unwrap();
        db.query_row("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'ctime_ns'", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap()
            == 1
    };
    assert!(has_ctimes());
    rusqlite::Connection::open(&db_path).unwrap().execute_batch("ALTER TABLE files DROP COLUMN ctime_ns").unwrap();
    // A filter by date reads each file's stat data: without the column.
    let found =
        run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "--changed-within", "1d", "circle"]));
    assert_code(&found, 0);
    assert!(stdout(&found).contains("src/geometry.rs"), "{}", stdout(&found));
    let o = index(&t, ".", &[]);
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!(
        (s["files"].clone(), s["embedded"].clone(), s["reused"].clone()),
        (first["files"].clone(), 0.into(), first["chunks"].clone())
    );
    assert!(indexed_files(&o).is_empty());
    assert!(has_ctimes());
}

#[test]
fn single_directory_walk_removes_stale_entries() {
    let t = sample_project();
    index(&t, ".", &[]);
    std::fs::remove_file(t.path().join("src/config.py")).unwrap();
    let s = summary(&index(&t, ".", &[]));
    assert_eq!(s["removed"], 1);
    assert_eq!(stats(&t)["files"], 3);
    // Scoped to a subdirectory: only entries under it are candidates.
    std::fs::remove_file(t.path().join("docs/guide.md")).unwrap();
    let s = summary(&index(&t, ".", &["src"]));
    assert_eq!(s["removed"], 0);
    assert_eq!(stats(&t)["files"], 3);
    let s = summary(&index(&t, "docs", &[]));
    assert_eq!(s["removed"], 1);
    assert_eq!(stats(&t)["files"], 2);
}

#[test]
fn multi_path_and_file_walks_preserve_other_entries() {
    let t = sample_project();
    t.write("lib/extra.rs", "fn extra() {}\n");
    index(&t, ".", &[]);
    t.write("src/ignored.py", "def ignored():\n    pass\n");
    index(&t, ".", &[]);
    std::fs::remove_file(t.path().join("docs/guide.md")).unwrap();
    std::fs::remove_file(t.path().join("lib/extra.rs")).unwrap();
    // Walked, but no longer admitted: several paths remove only what is gone.
    t.write(".vecgrepignore", "src/ignored.py\n");
    let s = summary(&index(&t, ".", &["src", "lib"]));
    assert_eq!(s["removed"], 1, "lib/extra.rs, gone from a walked directory");
    assert_eq!(stats(&t)["files"], 5, "docs/guide.md is outside the walk, src/ignored.py still on disk");
    let s = summary(&index(&t, ".", &["src/upload.py"]));
    assert_eq!(s["removed"], 0);
    assert_eq!(stats(&t)["files"], 5);
    // What a search of the same paths finds is what is on disk, and what
    // the ignore files let in: the entry kept for src/ignored.py is no
    // result (it was, on every search of several PATHs, and rg shows none).
    std::fs::remove_file(t.path().join("src/config.py")).unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "-k", "20", "settings file", "src", "lib"]));
    assert!(of_type(&records(&o), "hit").iter().all(|h| h["file"] != "src/config.py"), "{}", stdout(&o));
    for no_index in [&[][..], &["--no-index"]] {
        let o =
            run(t.cmd("vg-query", ".").args(no_index).args(["--mode", "lexical", "-k", "20", "ignored", "src", "lib"]));
        assert_code(&o, 1);
        assert!(of_type(&records(&o), "hit").is_empty(), "{no_index:?}: {}", stdout(&o));
    }
}

/// A rule of an ignore file that does not parse is named with its file and
/// line, as ripgrep names it; the file's other rules still apply, and the
/// run is no failure (before, a bad rule above a walked subdirectory made
/// a skip of no file and status 2, and one elsewhere went unsaid).
#[test]
fn an_ignore_rule_that_does_not_parse_is_named_and_the_others_apply() {
    let t = sample_project();
    t.write(".vecgrepignore", "src/{upload\nsrc/config.py\n");
    t.write("docs/.gitignore", "**/{guide\n");
    for (cwd, paths, said) in [(".", &[][..], 2), (".", &["src"][..], 1), ("src", &[][..], 1)] {
        let o = index(&t, cwd, paths);
        let err = stderr(&o);
        let rules: Vec<&str> = err.lines().filter(|l| l.contains("a rule left out")).collect();
        assert_eq!(rules.len(), said, "{cwd} {paths:?}: {err}");
        assert!(
            rules[0].starts_with(
                "vg-index: ignore file .vecgrepignore, a rule left out: line 1: error parsing glob 'src/{upload'"
            ),
            "{err}"
        );
        let s = summary(&o);
        assert_eq!((s["skipped"].as_u64(), s["errors"].as_u64()), (Some(0), Some(0)), "{}", stdout(&o));
        assert!(of_type(&records(&o), "file").iter().all(|f| f["file"] != "src/config.py"), "{}", stdout(&o));
    }
    assert!(stderr(&index(&t, ".", &[])).contains("ignore file docs/.gitignore, a rule left out: line 1:"));
    assert!(stderr(&index(&t, ".", &["--quiet"])).is_empty(), "a note, so --quiet keeps it");

    // A line that is not UTF-8 is no rule left out: the walker reads no
    // rule after it, so what they ignore would be indexed (a secret a
    // remote embedder then sees). Its directory is an error, not walked.
    std::fs::write(t.path().join("docs/.gitignore"), b"# caf\xe9 notes\nguide.md\n").unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--quiet"));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("docs/.gitignore: line 1 is not UTF-8, and the rules from there on would go unread"), "{err}");
    let recs = records(&o);
    let kept = of_type(&recs, "file").into_iter().filter(|f| f["file"] == "docs/guide.md" && f["status"] != "removed");
    assert_eq!(kept.count(), 0, "{}", stdout(&o));
    std::fs::write(t.path().join(".vecgrepignore"), b"src/config.py\n\xff\n").unwrap();
    let o = run(&mut t.cmd("vg-index", "src"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(".vecgrepignore: line 2 is not UTF-8"), "{}", stderr(&o));
}

/// git's global ignore file applies to every walk; one with a line that is
/// not UTF-8 would be read up to that line only, and what the rest ignores
/// indexed (a secret a remote embedder then sees): an error, as for the
/// walked paths' own ignore files.
#[test]
fn a_global_git_ignore_file_read_only_in_part_is_an_error() {
    let t = sample_project();
    t.write("secrets.py", "API_KEY = 'hunter2'\n");
    let global = tempfile::tempdir().unwrap();
    let (config, excludes) = (global.path().join("gitconfig"), global.path().join("ignore"));
    std::fs::write(&config, format!("[core]\n\texcludesFile = {}\n", excludes.display())).unwrap();
    std::fs::write(&excludes, b"# caf\xe9\nsecrets.py\n").unwrap();
    let o = run(t.cmd("vg-index", ".").env("GIT_CONFIG_GLOBAL", &config));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("git's global ignore file") && err.contains(": line 1 is not UTF-8"), "{err}");
    assert!(of_type(&records(&o), "file").is_empty(), "{}", stdout(&o));
    std::fs::write(&excludes, b"secrets.py\n").unwrap();
    let o = run(t.cmd("vg-index", ".").env("GIT_CONFIG_GLOBAL", &config));
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("secrets.py"), "the global rules apply: {}", stdout(&o));
    assert_eq!(summary(&o)["files"], 4);
}

/// An ignore file below the paths walked that cannot be read leaves its
/// directory unwalked, an error: what the index holds there is kept as it
/// is, as under a directory that cannot be read, not removed as gone.
#[test]
fn a_directory_whose_ignore_file_cannot_be_read_keeps_what_is_indexed_there() {
    let t = sample_project();
    t.write("docs/notes.md", "# Retries\n\nUploads are retried three times with a backoff.\n");
    t.write("docs/.gitignore", "drafts/\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let files_before = stats(&t)["files"].clone();
    std::fs::write(t.path().join("docs/.gitignore"), b"# caf\xe9\ndrafts/\n").unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let recs = records(&o);
    let removed: Vec<_> = of_type(&recs, "file").into_iter().filter(|f| f["status"] == "removed").collect();
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(stats(&t)["files"], files_before);
    let q = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "uploads retried backoff"]));
    assert_eq!(records(&q)[0]["file"], "docs/notes.md", "{}", stdout(&q));
}

/// `.git` as a PATH, or the current directory inside it, indexes none of
/// git's files (the walker leaves the directory out where it meets it, not
/// where it starts: its config and hooks were indexed and found).
#[test]
fn git_s_directory_is_never_indexed_when_the_walk_starts_in_it() {
    let t = sample_project();
    t.write(".git/config", "[core]\n\trepositoryformatversion = 0\n")
        .write(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    for (cwd, paths) in [(".", &[".git"][..]), (".git", &[]), (".git/hooks", &[]), (".", &[".git/config"])] {
        let s = summary(&index(&t, cwd, paths));
        assert_eq!(s["files"], 0, "{cwd} {paths:?}: {s}");
    }
    assert_eq!(stats(&t)["files"], 0);
    let o = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "--mode", "lexical", "repositoryformatversion"]));
    assert_code(&o, 1);
}

#[test]
fn filtered_walks_do_not_drop_files_they_did_not_look_at() {
    let t = sample_project();
    index(&t, ".", &[]);
    let s = summary(&index(&t, ".", &["-t", "py"]));
    assert_eq!(s["removed"], 0);
    assert_eq!(s["files"], 2);
    assert_eq!(stats(&t)["files"], 4);
    // A directory made where a file was: the file is gone all the same.
    std::fs::remove_file(t.path().join("src/config.py")).unwrap();
    std::fs::create_dir(t.path().join("src/config.py")).unwrap();
    let s = summary(&index(&t, ".", &["-t", "py"]));
    assert_eq!((s["removed"].as_u64(), stats(&t)["files"].as_u64()), (Some(1), Some(3)));
}

#[test]
fn config_change_rebuilds_and_reindex_rebuilds() {
    let t = sample_project();
    t.global_config("embed_all = true\n");
    let first = summary(&index(&t, ".", &[]));
    let o = index(&t, ".", &["--chunk-size", "120", "--chunk-overlap", "20"]);
    let s = summary(&o);
    assert_eq!(s["rebuilt"], true);
    assert_eq!(s["reused"], 0);
    assert!(stderr(&o).contains("chunk_size 500 -> 120"), "{}", stderr(&o));
    assert!(s["chunks"].as_u64().unwrap() > first["chunks"].as_u64().unwrap());
    assert_eq!(stats(&t)["chunk_size"], 120);
    // The project config now says the same: no rebuild. (A chunk_size
    // below the default is taken from a project's file only when trusted.)
    t.global_config("embed_all = true\ntrust_project_config = true\n");
    t.project_config("chunk_size = 120\nchunk_overlap = 20\n");
    let s = summary(&index(&t, ".", &[]));
    assert_eq!(s["rebuilt"], false);
    assert_eq!(s["embedded"], 0);
    let s = summary(&index(&t, ".", &["--reindex"]));
    assert_eq!(s["rebuilt"], true);
    assert_eq!(s["embedded"], s["chunks"]);
}

#[test]
fn clear_cache_resets_the_index_and_keeps_the_config() {
    let t = sample_project();
    t.project_config("top_k = 4\n");
    index(&t, ".", &[]);
    assert!(t.path().join(".vecgrep/index.db").exists());
    // The options of an index run are refused beside a flag that runs
    // none: `--clear-cache -t md` removed every file's index, not the
    // Markdown's, and the others were passed over.
    for (flag, option) in [
        ("--clear-cache", "-t"),
        ("--stats", "-g"),
        ("--verify", "--full"),
        ("--forget", "--chunk-size"),
        ("--stats", "--embedder-model"),
        ("--verify", "--embedder-source"),
        ("--stats", "--embedder-url"),
    ] {
        let mut cmd = t.cmd("vg-index", ".");
        match flag {
            "--forget" => cmd.args([flag, "HEAD"]),
            _ => cmd.arg(flag),
        };
        let value = match option {
            "-t" => Some("md"),
            "-g" => Some("*.md"),
            "--chunk-size" => Some("800"),
            "--embedder-model" => Some("nonexistent"),
            "--embedder-source" => Some("remote"),
            "--embedder-url" => Some("http://127.0.0.1:9/"),
            _ => None,
        };
        let o = run(cmd.arg(option).args(value));
        assert_code(&o, 2);
        let said = stderr(&o);
        assert!(said.contains(&format!("does nothing with {flag}; leave it out")), "{flag} {option}: {said}");
        // One line: not the note that the flag is not used, then the refusal.
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(t.path().join(".vecgrep/index.db").exists());
    }
    assert_eq!(stats(&t)["files"], 4);
    let o = run(t.cmd("vg-index", ".").arg("--clear-cache"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("removed the index of"), "{}", stderr(&o));
    assert!(!t.path().join(".vecgrep/index.db").exists());
    assert_eq!(read(&t.path().join(".vecgrep/config.toml")), "top_k = 4\n");
    let st = stats(&t);
    assert_eq!((st["files"].as_u64(), st["chunks"].as_u64(), st["holes"].as_u64()), (Some(0), Some(0), Some(0)));
    assert!(st["model"].is_null());
    // Again: nothing is left to remove, and it says so.
    let o = run(t.cmd("vg-index", ".").arg("--clear-cache"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("holds no index to remove"), "{}", stderr(&o));
}

#[test]
fn the_index_directory_is_private_and_ignored_by_git() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    index(&t, ".", &[]);
    let mode = std::fs::metadata(t.path().join(".vecgrep")).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
    let gi = read(&t.path().join(".vecgrep/.gitignore"));
    assert!(gi.contains("*\n") && gi.contains("!config.toml"), "{gi}");
    // In a repository, git status says nothing of the index, and the
    // project config shows up to be committed.
    let t = Tree::bare();
    git(&t, &["init", "-q"]);
    t.write("src/a.py", "def upload():\n    pass\n");
    git(&t, &["add", "src"]);
    git(&t, &["commit", "-qm", "one"]);
    index(&t, ".", &[]);
    assert_eq!(git(&t, &["status", "--porcelain", "--untracked-files=all"]), "");
    t.write(".vecgrep/config.toml", "top_k = 4\n");
    assert_eq!(git(&t, &["status", "--porcelain", "--untracked-files=all"]).trim(), "?? .vecgrep/config.toml");
    // So do the project's concepts, which README has a team write there
    // (git ignored them: `git add` refused).
    t.write(".vecgrep/kg/ledger.md", "# Ledger\n\nsynonyms:: AccountBook\n");
    let shown = "?? .vecgrep/config.toml\n?? .vecgrep/kg/ledger.md";
    assert_eq!(git(&t, &["status", "--porcelain", "--untracked-files=all"]).trim(), shown);
    // The files earlier versions wrote are replaced; one a person wrote is kept.
    let first = "# Written by vecgrep: the index is a local cache; config.toml may be committed.\n*\n!.gitignore\n!config.toml\n";
    let second = "# Written by vecgrep: the index is a local cache; config.toml may be committed.\n*\n!config.toml\n";
    for earlier in [first, second] {
        t.write(".vecgrep/.gitignore", earlier);
        index(&t, ".", &[]);
        assert_eq!(git(&t, &["status", "--porcelain", "--untracked-files=all"]).trim(), shown);
    }
    t.write(".vecgrep/.gitignore", "*\n");
    index(&t, ".", &[]);
    assert_eq!(read(&t.path().join(".vecgrep/.gitignore")), "*\n");
    // An empty one (a write a full disk cut short) is written again.
    t.write(".vecgrep/.gitignore", "");
    index(&t, ".", &[]);
    assert_eq!(git(&t, &["status", "--porcelain", "--untracked-files=all"]).trim(), shown);
}

/// A lock file the repository ships as a link (or a FIFO) is replaced,
/// never opened: the link's target outside the project is not created or
/// opened for writing, and a FIFO does not hang the run.
#[test]
fn a_shipped_lock_link_or_fifo_is_replaced_not_opened() {
    let t = sample_project();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("created");
    std::fs::create_dir(t.path().join(".vecgrep")).unwrap();
    std::os::unix::fs::symlink(&target, t.path().join(".vecgrep/index.lock")).unwrap();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert!(!target.exists(), "the lock's link was followed");
    std::fs::remove_file(t.path().join(".vecgrep/index.lock")).unwrap();
    let fifo = t.path().join(".vecgrep/index.lock");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (tool, args) in [("vecgrep", &["--no-index", "retry"][..]), ("vg-index", &[])] {
        let mut child = t.cmd(tool, ".").args(args).stdout(std::process::Stdio::null()).spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{tool} waited on the FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(child.wait().unwrap().code(), Some(0), "{tool}");
    }
    assert!(std::fs::symlink_metadata(&fifo).unwrap().is_file());
}

#[test]
fn gitignored_binary_and_large_files_are_not_indexed() {
    let t = sample_project();
    t.write(".gitignore", "build/\n");
    t.write("build/generated.py", "def generated():\n    pass\n");
    t.write_bytes("assets/logo.bin", b"PNG\0\0\x01binary");
    t.write("data/huge.txt", &"word ".repeat(5000));
    let o = index(&t, ".", &["--max-filesize", "10000"]);
    let recs = records(&o);
    let files: Vec<_> = of_type(&recs, "file").iter().map(|r| r["file"].as_str().unwrap().to_string()).collect();
    assert!(!files.iter().any(|f| f.starts_with("build/")), "{files:?}");
    let skips = of_type(&recs, "skip");
    let reason = |f: &str| skips.iter().find(|s| s["file"] == f).map(|s| s["reason"].as_str().unwrap().to_string());
    assert_eq!(reason("assets/logo.bin").as_deref(), Some("binary"));
    assert_eq!(reason("data/huge.txt").as_deref(), Some("too_large"));
    assert!(stderr(&o).contains("data/huge.txt"), "{}", stderr(&o));
    assert_eq!(summary(&o)["files"], 4);
}

/// A repository that commits a subproject's `.vecgrep` puts its own top
/// directory above that root, where the walker reads ignore files too: a
/// FIFO there hung every run in the subproject, a link to `/dev/zero`
/// took all memory, and a line that is not UTF-8 went unread where a run
/// from the top refused it.
#[test]
fn an_ignore_file_above_a_subprojects_root_is_checked_as_one_within() {
    let t = Tree::git();
    t.write("pkg/a.rs", "fn upload_retry() {}\n").write("pkg/.vecgrep/config.toml", "top_k = 5\n");
    let top_ignore = t.path().join(".gitignore");
    nix::unistd::mkfifo(&top_ignore, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let o = run_or_fail_after(&mut t.cmd("vg-index", "pkg"), std::time::Duration::from_secs(60));
    assert_code(&o, 2);
    let said = format!("vg-index: ignore file {}: not a regular file\n", top_ignore.display());
    assert_eq!(stderr(&o), said);
    std::fs::remove_file(&top_ignore).unwrap();
    t.write_bytes(".gitignore", b"# caf\xe9\npkg/a.rs\n");
    let o = run(&mut t.cmd("vg-index", "pkg"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("line 1 is not UTF-8"), "{}", stderr(&o));
    t.write(".gitignore", "pkg/a.rs\n");
    let o = run(&mut t.cmd("vg-index", "pkg"));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["files"], 0, "git's rules of the work tree's top apply below it");
}

/// git applies no `.gitignore` above a work tree's top; a directory's of
/// `*` above a repository (a home directory's dotfiles) emptied its index.
#[test]
fn no_gitignore_above_the_repository_hides_its_files() {
    let t = Tree::bare();
    t.write(".gitignore", "*\n").write("inner/cli.py", "def parse_arguments():\n    pass\n");
    t.write("inner/.gitignore", "build/\n").write("inner/build/out.py", "x = 1\n");
    std::fs::create_dir(t.path().join("inner/.git")).unwrap();
    let o = run(&mut t.cmd("vg-index", "inner"));
    assert_code(&o, 0);
    let files: Vec<_> = of_type(&records(&o), "file").iter().map(|r| r["file"].as_str().unwrap().to_string()).collect();
    assert_eq!(files, ["cli.py"], "its own .gitignore still applies");
}

/// `.ignore` and `.vecgrepignore` apply above a work tree's top, to `/`,
/// so one read only in part there is an error as below it: a line that is
/// not UTF-8 had the rules after it go unread, and what they ignore
/// indexed, in silence. git's own `.gitignore` there applies to nothing,
/// and its lines are not judged. A linked worktree's exclude file is its
/// main repository's, and is judged too.
#[test]
fn ignore_files_that_apply_above_the_repository_or_from_its_worktrees_are_read_whole() {
    let t = Tree::bare();
    t.write("inner/main.py", "def main():\n    pass\n").write("inner/prod.env", "API_KEY=zebra\n");
    std::fs::create_dir(t.path().join("inner/.git")).unwrap();
    t.write_bytes(".gitignore", b"# caf\xe9\n");
    let o = run(&mut t.cmd("vg-index", "inner"));
    assert_code(&o, 0);
    t.write_bytes(".vecgrepignore", b"secret*\n# caf\xe9\n*.env\n");
    let o = run(&mut t.cmd("vg-index", "inner"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(".vecgrepignore: line 2 is not UTF-8"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("prod.env"), "{}", stdout(&o));

    let repo = git_repo();
    repo.write("a.md", "zebra\n").write("b.txt", "zebra\n");
    commit_all(&repo, "first");
    let worktree = tempfile::tempdir().unwrap();
    let wt = worktree.path().join("wt");
    git(&repo, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    repo.write_bytes(".git/info/exclude", b"*.md\n\xff\n*.txt\n");
    let o = run(tool_cmd("vg-index").current_dir(&wt).env("XDG_CONFIG_HOME", repo.config_home.path()));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("info/exclude: line 2 is not UTF-8"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("b.txt"), "{}", stdout(&o));
    // A `.git` file whose git directory's `commondir` is a FIFO: the
    // walker waited on it for ever, deaf to SIGTERM.
    let t = Tree::git();
    t.write("a.py", "x = 1\n");
    let fake = tempfile::tempdir().unwrap();
    nix::unistd::mkfifo(&fake.path().join("commondir"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    t.write("nested/.git", &format!("gitdir: {}\n", fake.path().display()));
    let o = run_or_fail_after(&mut t.cmd("vg-index", "."), std::time::Duration::from_secs(60));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("commondir: not a regular file"), "{}", stderr(&o));
}

/// Run `cmd` (an index run), do `act` once it has written a line holding
/// `seen`, and return its status and stderr (its stdout is read as it
/// comes): a run interrupted by a change to its tree at a moment it tells.
fn during_run(cmd: &mut std::process::Command, seen: &str, act: impl FnOnce()) -> std::process::Output {
    use std::io::{BufRead, BufReader, Read};
    let mut child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // Read beside stdout: a run's skips fill a pipe no one reads, and it waits.
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = Vec::new();
        err.read_to_end(&mut text).unwrap();
        text
    });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(Ok(line)) = lines.next() {
        if line.contains(seen) {
            break;
        }
    }
    act();
    lines.for_each(drop);
    let status = child.wait().unwrap();
    std::process::Output { status, stdout: Vec::new(), stderr: stderr.join().unwrap() }
}

/// A run that could not open most files (`ulimit -n 9`): 49 of 50 files
/// were missing from a new index that read complete, and searches said
/// nothing. It reads incomplete until a run reads them all.
#[test]
fn a_run_short_of_open_files_leaves_a_new_index_marked_incomplete() {
    let t = Tree::git();
    for i in 0..50 {
        t.write(&format!("f{i}.py"), &format!("def parse_config_{i}():\n    return {i}\n"));
    }
    let mut starved = std::process::Command::new("bash");
    starved.args(["-c", "ulimit -n 9; exec \"$0\" \"$@\""]).arg(bin("vg-index")).arg("-q").current_dir(t.path());
    for (k, v) in t.cmd("vg-index", ".").get_envs() {
        match v {
            Some(v) => starved.env(k, v),
            None => starved.env_remove(k),
        };
    }
    let o = run(&mut starved);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("Too many open files"), "{}", stderr(&o));
    let after = stats(&t);
    assert!(after["files"].as_u64().unwrap() < 50, "the limit bit: {after}");
    assert_eq!(after["complete"], false, "{after}");
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "parse config"]));
    assert!(stderr(&o).contains("the index is incomplete"), "{}", stderr(&o));
    assert_code(&run(t.cmd("vg-index", ".").arg("-q")), 0);
    assert_eq!((stats(&t)["complete"].as_bool(), stats(&t)["files"].as_u64()), (Some(true), Some(50)));
    // An error no later run gets past by itself (a link loop) is said by
    // each run, and marks nothing: the mark said so forever.
    std::fs::create_dir_all(t.path().join("d")).unwrap();
    std::os::unix::fs::symlink("..", t.path().join("d/loop")).unwrap();
    let o = run(t.cmd("vg-index", ".").args(["-q", "--follow"]));
    assert_code(&o, 2);
    assert_eq!(stats(&t)["complete"], true, "{}", stderr(&o));
}

/// A project moved (or removed) while a run reads it: every file left
/// "vanished", and the run ended 0 with an index of part of the files that
/// read complete. It now fails saying so, the entries of the files left
/// to read are kept (they were removed, model vectors and all), and the
/// index reads incomplete where the project went, until a run there
/// completes it.
#[test]
fn a_project_moved_during_a_run_leaves_an_index_marked_incomplete() {
    let t = Tree::git();
    many_files(&t, 1000);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    // Every file changed: each is the run's to read again.
    for i in 0..1000 {
        let f = t.path().join(format!("src/mod{i:03}.py"));
        std::fs::write(&f, read(&f) + "# changed\n").unwrap();
    }
    let moved = t.path().with_extension("moved");
    let o = during_run(t.cmd("vg-index", ".").arg("--full"), "\"type\":\"file\"", || {
        std::fs::rename(t.path(), &moved).unwrap();
    });
    let back = || std::fs::rename(&moved, t.dir.path()).unwrap();
    let err = stderr(&o);
    if o.status.code() == Some(0) {
        back();
        panic!("the run ended 0 after the move: {err}");
    }
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("was moved or removed during the run"), "{err}");
    let moved_stats = run(tool_cmd("vg-index")
        .current_dir(&moved)
        .args(["--stats", "--json"])
        .env("XDG_CONFIG_HOME", t.config_home.path()));
    back();
    let moved_stats = records(&moved_stats)[0].clone();
    // Marked incomplete, and no entry of a file left to read was removed.
    assert_eq!(
        (moved_stats["complete"].as_bool(), moved_stats["files"].as_u64()),
        (Some(false), Some(1000)),
        "{moved_stats}"
    );
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(stats(&t)["complete"], true);
}

/// The index removed while a run writes it (`git clean -fdX` removes
/// `.vecgrep/`): the run wrote on into a file no longer there and ended 0,
/// its summary saying every file was stored (audit 191). It now fails
/// saying so, and the next run makes the index again.
#[test]
fn an_index_removed_during_a_run_fails_the_run() {
    let t = Tree::git();
    many_files(&t, 1000);
    let index = t.path().join(".vecgrep/index.db");
    let o = during_run(t.cmd("vg-index", ".").arg("--full"), "\"type\":\"file\"", || {
        std::fs::remove_file(&index).unwrap();
    });
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("was removed or replaced during the run"), "{}", stderr(&o));
    assert!(!index.exists());
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_eq!((stats(&t)["complete"].as_bool(), stats(&t)["files"].as_u64()), (Some(true), Some(1000)));
}

/// The same for a catalog's project, reached through the catalog's link:
/// the run ended 0 and its index read sound with a tenth of the files.
#[test]
fn a_catalogs_project_moved_during_a_run_fails_the_run() {
    let t = Tree::bare();
    t.write("small/a.py", "def hello():\n    pass\n");
    std::fs::create_dir(t.path().join("small/.git")).unwrap();
    for i in 0..1000 {
        t.write(&format!("big/src/m{i:03}.py"), &format!("def handler_{i}(request):\n    return request.reply({i})\n"));
    }
    std::fs::create_dir(t.path().join("big/.git")).unwrap();
    let catalogs = add_catalog(&t, "both", &["small", "big"]);
    let mut run = t.cmd("vg-index", ".");
    run.args(["--catalog", "both", "--full"]).env("VECGREP_CATALOG_DIR", &catalogs);
    let o = during_run(&mut run, "big/src/", || {
        std::fs::rename(t.path().join("big"), t.path().join("big-moved")).unwrap();
    });
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("was moved or removed during the run"), "{}", stderr(&o));
}

#[test]
fn a_max_filesize_takes_k_m_and_g_as_ripgreps_does() {
    let t = sample_project();
    t.write("data/huge.txt", &"word ".repeat(5000));
    let too_large = |o: &std::process::Output| {
        of_type(&records(o), "skip").iter().any(|s| s["file"] == "data/huge.txt" && s["reason"] == "too_large")
    };
    t.write(".vecgrep/config.toml", "max_filesize = \"24K\"\n");
    let o = index(&t, ".", &[]);
    assert!(too_large(&o), "24K is 24,576 bytes, under the file's 25,000: {}", stderr(&o));
    let o = index(&t, ".", &["--max-filesize", "25k"]);
    assert!(!too_large(&o), "the flag's 25k beats the config's 24K: {}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").args(["--max-filesize", "10X"]));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("vg-index: invalid value '10X' for '--max-filesize <SIZE>'"), "{}", stderr(&o));
}

/// Lock files, a minified bundle and marked generated code beside sample_project.
fn with_generated_files(t: &Tree) {
    t.write(
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"retry\"\n",
    );
    t.write("web/package-lock.json", "{\"name\": \"upload-retry\", \"lockfileVersion\": 3}\n");
    t.write("web/app.min.js", "function upload(b){return retry(b)}\n");
    t.write("web/bundle.js", &format!("{}\n", "var upload=function(b){return retry(b,5)};".repeat(200)));
    t.write(
        "api/retry_string.go",
        "// Code generated by \"stringer -type=Retry\"; DO NOT EDIT.\n\npackage api\n\nfunc (r Retry) String() string { return \"retry upload\" }\n",
    );
}

const GENERATED: [&str; 5] =
    ["Cargo.lock", "web/package-lock.json", "web/app.min.js", "web/bundle.js", "api/retry_string.go"];

/// A switch a config file turns on is turned off for one run by its
/// `--no-` twin, as in ripgrep; the last of the two given wins.
#[test]
fn a_switch_a_config_turns_on_is_turned_off_by_its_no_flag() {
    let t = sample_project();
    with_generated_files(&t);
    t.global_config("include_generated = true\n");
    let indexed = |o: &std::process::Output| {
        of_type(&records(o), "file").iter().any(|r| r["file"] == "Cargo.lock" && r["status"] != "removed")
    };
    let o = index(&t, ".", &[]);
    assert!(indexed(&o), "the config's include_generated: {}", stdout(&o));
    let o = index(&t, ".", &["--no-include-generated"]);
    assert!(!indexed(&o), "{}", stdout(&o));
    let o = index(&t, ".", &["--no-include-generated", "--include-generated"]);
    assert!(indexed(&o), "the last given wins: {}", stdout(&o));
    // Through the porcelain too, to the tool it runs.
    let o = run(t.cmd("vecgrep", ".").args(["--no-include-generated", "-l", "--threshold", "-1", "retry upload"]));
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("Cargo.lock"), "{}", stdout(&o));
}

#[test]
fn lock_minified_and_generated_files_are_skipped_unless_asked_for() {
    let t = sample_project();
    with_generated_files(&t);
    let o = index(&t, ".", &[]);
    let recs = records(&o);
    let skips = of_type(&recs, "skip");
    for f in GENERATED {
        let skip = skips.iter().find(|s| s["file"] == f).unwrap_or_else(|| panic!("{f} not skipped: {}", stdout(&o)));
        assert_eq!(skip["reason"], "generated", "{skip}");
        assert!(skip["message"].as_str().unwrap().contains("--include-generated"), "{skip}");
    }
    // Routine, like binary files: not announced on stderr.
    assert!(!stderr(&o).contains("Cargo.lock"), "{}", stderr(&o));
    assert_eq!(summary(&o)["files"], 4);

    // Asked for: indexed, and searchable. Settled first: a file changed in
    // the last 2 s is read again by every run (index/file.rs), which would
    // hide what the partial runs below leave.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let o = index(&t, ".", &["--include-generated"]);
    let recs = records(&o);
    let indexed: Vec<_> = of_type(&recs, "file").iter().map(|r| r["file"].as_str().unwrap().to_string()).collect();
    for f in GENERATED {
        assert!(indexed.iter().any(|i| i == f), "{f} not indexed: {indexed:?}");
    }
    let q = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "lockfileVersion"]));
    assert_code(&q, 0);
    assert_eq!(records(&q)[0]["file"], "web/package-lock.json");

    // A run without the flag again takes them out of the index, after runs
    // over part of the project too (one marked every file checked, and the
    // minified ones stayed for good).
    index(&t, ".", &["-g", "*.md"]);
    index(&t, "src", &[]);
    let o = index(&t, ".", &[]);
    let removed: Vec<_> = of_type(&records(&o), "file")
        .iter()
        .filter(|r| r["status"] == "removed")
        .map(|r| r["file"].as_str().unwrap().to_string())
        .collect();
    let mut removed = removed;
    removed.sort();
    let mut expected = GENERATED.to_vec();
    expected.sort();
    assert_eq!(removed, expected, "known by name or by content, all leave at once");
    assert_eq!(summary(&o)["files"], 4);
    assert_eq!(summary(&o)["embedded"], 0, "the other files were read again, not embedded");
}

/// Audit 181: a hand-written file with classic Mac line ends (a lone CR)
/// over 4 KiB was skipped as a minified bundle, and what it holds was never
/// found.
#[test]
fn a_file_whose_lines_end_in_a_lone_cr_is_indexed_and_found() {
    let t = Tree::git();
    let body: String = (0..150).map(|i| format!("def f{i}(v):\r    return v * {i}\r\r")).collect();
    t.write("old.py", &format!("{body}def legacy_checksum(data):\r    return sum(data)\r"));
    let o = index(&t, ".", &[]);
    assert!(of_type(&records(&o), "skip").is_empty(), "{}", stdout(&o));
    let q = run(t.cmd("vecgrep", ".").args(["-l", "--mode", "lexical", "legacy checksum"]));
    assert_code(&q, 0);
    assert_eq!(stdout(&q).trim(), "old.py");
}

#[test]
fn include_generated_can_be_set_in_the_config() {
    let t = sample_project();
    with_generated_files(&t);
    t.global_config("include_generated = true\n");
    let s = summary(&index(&t, ".", &[]));
    assert_eq!(s["files"], 9, "{s}");
    // A project's own file may not read more than the user asks, unless trusted.
    t.global_config("");
    t.project_config("include_generated = true\n");
    assert_eq!(summary(&run(t.cmd("vg-index", ".").arg("--reindex")))["files"], 4);
    let s = summary(&run(t.cmd("vg-index", ".").args(["--reindex", "--trust-project-config"])));
    assert_eq!(s["files"], 9, "{s}");
}

#[test]
fn invalid_utf8_and_empty_files_are_indexed_without_fuss() {
    let t = Tree::git();
    t.write_bytes("latin1.c", b"/* caf\xe9 */\nint main(void) { return 0; }\n");
    t.write("empty.txt", "");
    let s = summary(&index(&t, ".", &[]));
    assert_eq!(s["files"], 2);
    assert_eq!(s["errors"], 0);
}

/// UTF-16 with a byte order mark (what Windows tools write) is text, as
/// ripgrep takes it: indexed, found by its words, and shown with its lines
/// as the file has them; a UTF-8 byte order mark is not part of line 1.
#[test]
fn utf16_and_byte_order_marked_files_are_indexed_as_text() {
    let t = Tree::git();
    let source = "// Résumé helpers\nfunction parseInvoiceTotals(lines) {\n  return lines.length;\n}\n";
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(source.encode_utf16().flat_map(u16::to_le_bytes));
    t.write_bytes("win/invoice.js", &utf16);
    t.write_bytes("win/marked.py", b"\xEF\xBB\xBFdef shipping_label_printer():\n    pass\n");
    // A generator's mark is read in UTF-16 too.
    let designer = "// <auto-generated>\n// This code was generated by a tool.\n// </auto-generated>\nclass Form1 {}\n";
    let mut generated = vec![0xFF, 0xFE];
    generated.extend(designer.encode_utf16().flat_map(u16::to_le_bytes));
    t.write_bytes("win/Form1.Designer.cs", &generated);
    let o = index(&t, ".", &[]);
    let s = summary(&o);
    assert_eq!((s["files"].clone(), s["skipped"].clone()), (2.into(), 1.into()), "{s}");
    let skips = records(&o).into_iter().filter(|r| r["type"] == "skip").collect::<Vec<_>>();
    assert_eq!(
        (skips[0]["file"].as_str(), skips[0]["reason"].as_str()),
        (Some("win/Form1.Designer.cs"), Some("generated")),
        "{skips:?}"
    );
    let query = |q: &str| run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", q]));
    let found = query("parseInvoiceTotals");
    assert_code(&found, 0);
    let hit = records(&found).into_iter().find(|r| r["file"] == "win/invoice.js").expect("the UTF-16 file is found");
    assert!(hit["text"].as_str().unwrap().contains("function parseInvoiceTotals(lines)"), "{hit}");
    assert!(hit["text"].as_str().unwrap().starts_with("// Résumé"), "{hit}");
    // Context around line 2 alone comes from the file itself.
    let mut line2 = hit.clone();
    (line2["start_line"], line2["end_line"], line2["text"]) =
        (2.into(), 2.into(), "function parseInvoiceTotals(lines) {".into());
    let shown = run_with_input(t.cmd("vg-format", ".").args(["-C", "1"]), format!("{line2}\n").as_bytes());
    assert_eq!(
        stdout(&shown),
        "win/invoice.js-1-// Résumé helpers\nwin/invoice.js:2:function parseInvoiceTotals(lines) {\nwin/invoice.js-3-  return lines.length;\n"
    );
    let marked = query("shipping_label_printer");
    let hit = records(&marked).into_iter().find(|r| r["file"] == "win/marked.py").expect("the marked file is found");
    assert!(hit["text"].as_str().unwrap().starts_with("def shipping_label_printer"), "{hit}");
}

/// A reader that leaves early (`vg-index | head -c1`) does not turn a
/// run's failure into success: the run goes on to its end, and a file it
/// could not read is status 2 still, as vg-query's is.
#[test]
fn a_closed_pipe_keeps_the_status_of_a_file_that_could_not_be_read() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let p = t.path().join("src/secret.py");
    std::fs::write(&p, "def vault_password():\n    return 'x'\n").unwrap();
    let user = OtherUser::new(&t);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    let piped = std::process::Stdio::piped;
    let mut child = user.cmd(&t, "vg-index").stdout(piped()).stderr(piped()).spawn().unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 2);
    let stats = run(user.cmd(&t, "vg-index").args(["--stats", "--json"]));
    assert_eq!(records(&stats)[0]["files"], 4, "the run went on to its end");
}

#[test]
fn unreadable_files_are_reported_and_the_run_ends_with_status_2() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let p = t.path().join("src/secret.py");
    std::fs::write(&p, "def vault_password():\n    return 'x'\n").unwrap();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    // Changed, then closed to the indexing user: its old chunks go with
    // it, as rg would not show it either, and the run says so.
    std::fs::write(&p, "def vault_password():\n    return 'y'\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    let o = run(&mut user.cmd(&t, "vg-index"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("src/secret.py"), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!((s["files"].as_u64(), s["errors"].as_u64(), s["removed"].as_u64()), (Some(4), Some(1), Some(1)));
    let stats = run(user.cmd(&t, "vg-index").args(["--stats", "--json"]));
    assert_eq!(records(&stats)[0]["files"], 4, "the summary and --stats agree");
    let o = run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "vault password"]));
    assert_code(&o, 1);
    // Closed by chmod alone, its size and mtime kept: it goes all the same.
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    assert_code(&run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "vault password"])), 0);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run(&mut user.cmd(&t, "vg-index"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("src/secret.py: Permission denied"), "{}", stderr(&o));
    assert_eq!(summary(&o)["removed"], 1);
    assert_code(&run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "vault password"])), 1);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    // A directory closed to the user is named itself, not an ignore file in
    // it, and the files indexed in it go, as a closed file's do.
    let closed = t.path().join("src/closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::write(closed.join("hidden.py"), "def buried_treasure():\n    return 'gold'\n").unwrap();
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 2);
    let o = run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "buried treasure"]));
    assert_code(&o, 0);
    // Listed but not entered (r--, audit 212) as well as closed whole.
    for mode in [0o444, 0o000] {
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(mode)).unwrap();
        let o = run(&mut user.cmd(&t, "vg-index"));
        let skips: Vec<serde_json::Value> = of_type(&records(&o), "skip").into_iter().cloned().collect();
        assert!(skips.iter().any(|s| s["file"] == "src/closed" && s["reason"] == "error"), "{mode:o}: {skips:?}");
        assert!(
            !stdout(&o).contains("closed/.gitignore") && !stderr(&o).contains("closed/.gitignore"),
            "{}",
            stderr(&o)
        );
        let removed = if mode == 0o444 { 1 } else { 0 };
        assert_eq!((summary(&o)["files"].as_u64(), summary(&o)["removed"].as_u64()), (Some(4), Some(removed)));
        // Given as a PATH too (review 215).
        let given = run(user.cmd(&t, "vg-index").arg("src/closed"));
        assert_code(&given, 2);
        let said = stderr(&given);
        assert!(said.contains("src/closed: Permission denied") && !said.contains(".gitignore"), "{said}");
    }
    let stats = run(user.cmd(&t, "vg-index").args(["--stats", "--json"]));
    assert_eq!(records(&stats)[0]["files"], 4, "the summary and --stats agree");
    let o = run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "buried treasure"]));
    assert_code(&o, 1); // A directory that may be passed through but not listed (--x) holds a
                        // PATH that is searched as any other (review 216: refused as closed).
    let passage = t.path().join("src/passage");
    std::fs::create_dir_all(passage.join("inner")).unwrap();
    std::fs::write(passage.join("inner/way.py"), "def way_through():\n    return 1\n").unwrap();
    std::fs::set_permissions(&passage, std::fs::Permissions::from_mode(0o311)).unwrap();
    let o = run(user.cmd(&t, "vg-index").arg("src/passage/inner"));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["files"], 1, "{}", stderr(&o));
    std::fs::set_permissions(&passage, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// An ignore file the indexing user cannot read hides what it ignores:
/// its directory is a named error, not walked, where the walker let every
/// file it ignored into the index without a word (a secret, to a remote
/// embedder too).
/// A `.vecgrep` closed to the user (another user's, mode 0700) is named
/// as what is closed, not the config file in it, which may not exist.
#[test]
fn a_closed_index_directory_is_named_not_its_config() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    std::fs::set_permissions(t.path().join(".vecgrep"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let o = run(&mut user.cmd(&t, "vg-index"));
    std::fs::set_permissions(t.path().join(".vecgrep"), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_code(&o, 2);
    let says = format!("its directory {} is closed to you", t.path().join(".vecgrep").display());
    assert!(stderr(&o).contains(&says), "{}", stderr(&o));
}

/// Another user's index, readable but not writable (a shared checkout, a
/// read-only mount): a search reads it as it is and says so, as rg reads a
/// tree it may not write; vg-index, asked to write it, fails.
#[test]
fn an_index_this_user_may_not_write_is_searched_as_it_is() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    // As a run killed half-way leaves it: the search says the index may lack files.
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    db.execute("INSERT OR REPLACE INTO meta VALUES ('run_unfinished', '1')", []).unwrap();
    drop(db);
    std::fs::set_permissions(t.path().join(".vecgrep"), std::fs::Permissions::from_mode(0o555)).unwrap();
    let o = run(user.cmd(&t, "vg-query").args(["--mode", "lexical", "retry"]));
    let err = stderr(&o);
    let o2 = run(user.cmd(&t, "vecgrep").args(["--ask", "--mode", "lexical", "retry"]));
    let ask_err = stderr(&o2);
    let rebuild = run(user.cmd(&t, "vg-query").args(["--reindex", "--mode", "lexical", "retry"]));
    let indexed = run(&mut user.cmd(&t, "vg-index"));
    std::fs::set_permissions(t.path().join(".vecgrep"), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_code(&o, 0);
    assert_code(&o2, 0);
    assert_code(&rebuild, 2);
    assert!(stderr(&rebuild).contains("cannot rebuild the index (--reindex)"), "{}", stderr(&rebuild));
    let says = format!(
        "{} is not writable by this user: searching the index as it is; results may miss recent changes",
        t.path().join(".vecgrep").display()
    );
    assert!(err.contains(&says), "{err}");
    assert!(ask_err.contains(&says), "{ask_err}");
    for said in [&err, &ask_err] {
        assert!(said.contains("the index is incomplete"), "{said}");
    }
    assert_code(&indexed, 2);
    let says = format!("vg-index: cannot bring the index up to date: {}", says.split(": searching").next().unwrap());
    assert_eq!(stderr(&indexed).trim(), says);
}

/// A look at an index made read-only for a while (`--stats`) leaves SQLite's
/// `-wal` and `-shm` read-only too; once the index is writable again, they
/// are made so (every later run and search failed until removed by hand).
#[test]
fn side_files_a_read_only_index_left_read_only_are_made_writable_with_it() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    let db = t.path().join(".vecgrep/index.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    assert_code(&run(user.cmd(&t, "vg-index").arg("--stats")), 0);
    let shm = t.path().join(".vecgrep/index.db-shm");
    let left = std::fs::metadata(&shm).map(|m| m.permissions().mode() & 0o777).ok();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    t.write("src/extra.py", "def upload_twice(blob):\n    return blob\n");
    let o = run(&mut user.cmd(&t, "vg-index"));
    assert_code(&o, 0);
    let o = run(user.cmd(&t, "vecgrep").args(["--mode", "lexical", "upload_twice"]));
    assert_code(&o, 0);
    assert!(left.is_some_and(|mode| mode & 0o200 == 0), "the look left -shm read-only: {left:?}");
}

/// A lock file this user may not write (another user's, mode 0444) in an
/// index directory they may: locked as it is, so runs still take turns,
/// where every search and index run failed on it.
#[test]
fn a_lock_file_this_user_may_not_write_still_makes_runs_take_turns() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    let lock = t.path().join(".vecgrep/index.lock");
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o444)).unwrap();
    let o = run(user.cmd(&t, "vecgrep").args(["--mode", "lexical", "retry"]));
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    let mut c = user.cmd(&t, "vg-index");
    let indexing = c.arg("--reindex").stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    let mut indexing = indexing.spawn().unwrap();
    // It says it waits once it does: a fixed sleep could end before it
    // had reached the lock.
    let mut said = String::new();
    let mut waiting = std::io::BufReader::new(indexing.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut waiting, &mut said).unwrap();
    assert!(said.contains("waiting for another index run"), "{said}");
    assert!(indexing.try_wait().unwrap().is_none(), "it waits while the lock is held");
    drop(held);
    assert_code(&indexing.wait_with_output().unwrap(), 0);
}

/// An index this user may not read is one error saying so, not a promise
/// to search it as it is followed by SQLite's words twice over.
#[test]
fn an_index_this_user_may_not_read_is_one_line_saying_so() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    let db = t.path().join(".vecgrep/index.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o000)).unwrap();
    let searched = run(user.cmd(&t, "vecgrep").args(["--mode", "lexical", "retry"]));
    let unindexed = run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "retry"]));
    let stats = run(user.cmd(&t, "vg-index").arg("--stats"));
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    for (o, tool) in [(searched, "vecgrep"), (unindexed, "vg-query"), (stats, "vg-index")] {
        assert_code(&o, 2);
        let says = format!("{tool}: cannot read {}: Permission denied (os error 13)\n", db.display());
        assert_eq!(stderr(&o), says);
    }
}

#[test]
fn a_directory_whose_ignore_file_is_closed_is_an_error_not_walked() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    t.write("vault/secret.py", "API_KEY = 'hunter2'\n").write("vault/.gitignore", "secret.py\n");
    t.write("vault/notes.md", "Rotate the vault keys every quarter.\n");
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    std::fs::set_permissions(t.path().join("vault/.gitignore"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let o = run(&mut user.cmd(&t, "vg-index"));
    assert_code(&o, 2);
    // What the index held in its directory stays: the directory is open.
    let removed: Vec<_> =
        of_type(&records(&o), "file").into_iter().filter(|f| f["status"] == "removed").cloned().collect();
    assert!(removed.is_empty(), "{removed:?}");
    let skips: Vec<serde_json::Value> = of_type(&records(&o), "skip").into_iter().cloned().collect();
    assert!(skips.iter().any(|s| s["file"] == "vault/.gitignore" && s["reason"] == "error"), "{skips:?}");
    assert!(stderr(&o).contains("vault/.gitignore"), "{}", stderr(&o));
    let o = run(user.cmd(&t, "vg-query").args(["--no-index", "--mode", "lexical", "hunter2"]));
    assert_code(&o, 1);
    if running_as_root() {
        // A directory the user may list but not enter is closed: its files leave.
        std::fs::set_permissions(t.path().join("vault"), std::fs::Permissions::from_mode(0o744)).unwrap();
        let o = run(&mut user.cmd(&t, "vg-index"));
        let recs = records(&o);
        let removed: Vec<_> = of_type(&recs, "file").into_iter().filter(|f| f["status"] == "removed").collect();
        assert_eq!(removed.iter().map(|f| f["file"].as_str().unwrap()).collect::<Vec<_>>(), ["vault/notes.md"]);
        std::fs::set_permissions(t.path().join("vault"), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
}

/// A run waiting for another's lock can wait minutes: Ctrl-C or SIGTERM
/// (`timeout`) ends the wait, as it ends a run, with status 130 and the
/// index as it was.
#[test]
fn a_signal_ends_the_wait_for_another_run() {
    use std::io::BufRead;
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let lock = hold_index_lock(&t);
    // A real repository, for vg-log's history.
    std::fs::remove_dir(t.path().join(".git")).unwrap();
    git(&t, &["init", "-q"]);
    git(&t, &["add", "src"]);
    git(&t, &["commit", "-qm", "retry uploads"]);
    for (tool, signal, args) in [
        ("vg-index", "-INT", &[][..]),
        ("vg-query", "-TERM", &["--mode", "lexical", "retry"]),
        ("vg-ask", "-INT", &["--mode", "lexical", "retry"]),
        ("vg-index", "-TERM", &["--clear-cache"]),
        ("vg-log", "-TERM", &["--mode", "lexical", "retry"]),
        ("vg-index", "-INT", &["--rev", "HEAD"]),
        ("vg-query", "-TERM", &["--rev", "HEAD", "--mode", "lexical", "retry"]),
        ("vg-index", "-TERM", &["--forget", "HEAD"]),
    ] {
        let mut cmd = t.cmd(tool, ".");
        cmd.args(args);
        cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        stderr.read_line(&mut said).unwrap();
        assert!(said.contains("waiting for another index run"), "{said}");
        let sent = std::process::Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let waited = std::time::Instant::now();
        let status = child.wait().unwrap();
        assert!(waited.elapsed() < std::time::Duration::from_secs(5), "{tool} {args:?} kept waiting");
        assert_eq!(status.code(), Some(130), "{tool} {args:?}");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
        assert!(rest.contains("the index was left as it was"), "{tool} {args:?}: {rest}");
        // The wait walked nothing, which is no word on what the paths hold.
        assert!(!rest.contains("no files were searched"), "{tool} {args:?}: {rest}");
    }
    drop(lock);
    assert_eq!(stats(&t)["files"], 4);
}

#[test]
fn no_terminal_means_a_large_run_proceeds() {
    let t = sample_project();
    let s = summary(&index(&t, ".", &["--index-warn-threshold", "1"]));
    assert_eq!((s["aborted"].as_bool(), s["interrupted"].as_bool()), (Some(false), Some(false)));
    assert_eq!(s["files"], 4);
}

#[test]
fn config_precedence_cli_over_project_over_global() {
    let t = Tree::git();
    for i in 0..12 {
        t.write(&format!("src/f{i}.py"), &format!("def function_{i}():\n    return {i}\n"));
    }
    let hits = |args: &[&str]| {
        let o = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "function"]).args(args));
        assert_code(&o, 0);
        records(&o).len()
    };
    assert_eq!(hits(&[]), 10, "default top_k");
    t.global_config("top_k = 2\n");
    assert_eq!(hits(&[]), 2);
    t.project_config("top_k = 3\n");
    assert_eq!(hits(&[]), 3);
    assert_eq!(hits(&["-k", "1"]), 1);
    // A key the search reads as its threshold, layered alike: nothing
    // passes 0.99, everything -1.
    let found = |args: &[&str]| records(&run(t.cmd("vg-query", ".").args(["-k", "20", "function"]).args(args))).len();
    t.global_config("threshold = 0.99\n");
    t.project_config("");
    assert_eq!(found(&[]), 0, "the global threshold");
    t.project_config("threshold = -1.0\n");
    assert_eq!(found(&[]), 12, "the project's over the global");
    assert_eq!(found(&["--threshold", "0.99"]), 0, "the flag over both");
}

#[test]
fn malformed_config_is_rejected_with_file_key_and_line() {
    let t = sample_project();
    t.project_config("top_k = 3\ntopk = 5\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains(".vecgrep/config.toml") && err.contains("line 2") && err.contains("topk"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    t.project_config("quiet = \"loud\"\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("line 1"), "{}", stderr(&o));
    t.project_config("");
    t.global_config("threshold = 3\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("threshold") && stderr(&o).contains("vecgrep/config.toml"), "{}", stderr(&o));
    // A config that links to nothing (a dotfiles manager's, its target not
    // there) is an error, not a config left out in silence.
    let global = t.config_home.path().join("vecgrep/config.toml");
    std::fs::remove_file(&global).unwrap();
    std::os::unix::fs::symlink("/nonexistent/dotfiles/vecgrep.toml", &global).unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("cannot read config")
            && err.contains("links to /nonexistent/dotfiles/vecgrep.toml, which does not exist"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn missing_assets_name_what_is_missing_and_the_fix() {
    let t = sample_project();
    let empty = tempfile::tempdir().unwrap();
    let o = run(t.cmd("vg-index", ".").env("HOME", empty.path()).env("XDG_DATA_HOME", empty.path()));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("model") && err.contains("scripts/fetch-assets.sh"), "{err}");
    let o = run(t.cmd("vg-query", ".").arg("x").env("HOME", empty.path()).env("XDG_DATA_HOME", empty.path()));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("scripts/fetch-assets.sh"), "{}", stderr(&o));
    // Without HOME (cron, a service) the data directory is not looked in,
    // and that is the cause said, not only "not installed".
    let o = run(t.cmd("vg-index", ".").env_remove("HOME").env_remove("XDG_DATA_HOME"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("neither an absolute HOME nor an absolute XDG_DATA_HOME is set"), "{}", stderr(&o));
}

/// Audit 183: a damaged file in an installed prefix (`<bin>/../share/vecgrep`,
/// looked in first) was met with "run scripts/fetch-assets.sh", which
/// installs into ~/.local/share and changes nothing; the fix now names the
/// directory, and a variable that names the file is said to be at fault.
#[test]
fn a_damaged_asset_names_the_directory_to_fetch_into() {
    let t = sample_project();
    let prefix = tempfile::tempdir().unwrap();
    let p = std::fs::canonicalize(prefix.path()).unwrap();
    std::fs::create_dir_all(p.join("bin")).unwrap();
    std::fs::copy(bin("vg-index"), p.join("bin/vg-index")).unwrap();
    let installed = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL).unwrap();
    let models = p.join("share/vecgrep/models/all-MiniLM-L6-v2");
    std::fs::create_dir_all(&models).unwrap();
    for e in std::fs::read_dir(&installed.model_dir).unwrap().map(|e| e.unwrap().path()) {
        let name = e.file_name().unwrap();
        match name == "static-code.bin" {
            true => std::fs::write(models.join(name), &std::fs::read(&e).unwrap()[..1000]).unwrap(),
            false => std::os::unix::fs::symlink(&e, models.join(name)).unwrap(),
        }
    }
    std::fs::create_dir_all(p.join("share/vecgrep/onnxruntime")).unwrap();
    let ort = p.join("share/vecgrep/onnxruntime").join(installed.ort_library.file_name().unwrap());
    std::os::unix::fs::symlink(&installed.ort_library, &ort).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(p.join("bin/vg-index"));
    cmd.current_dir(t.path()).env("XDG_DATA_HOME", empty.path()).env("XDG_CONFIG_HOME", t.config_home.path());
    let o = run(cmd.env_remove("VECGREP_MODEL_DIR").env_remove("ORT_DYLIB_PATH").env_remove("VECGREP_STATIC_TABLE"));
    assert_code(&o, 2);
    let fix = format!("run scripts/fetch-assets.sh --data-dir {}", p.join("share/vecgrep").display());
    assert!(stderr(&o).contains(&fix), "{}", stderr(&o));
    // Named by a variable: the variable is at fault.
    let o = run(t.cmd("vg-index", ".").env("VECGREP_MODEL_DIR", &models));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("VECGREP_MODEL_DIR names its directory"), "{}", stderr(&o));
    // So for the model itself, cut short (review 185: no fix was named).
    std::fs::remove_file(models.join("static-code.bin")).unwrap();
    std::os::unix::fs::symlink(installed.model_dir.join("static-code.bin"), models.join("static-code.bin")).unwrap();
    std::fs::remove_file(models.join("model.onnx")).unwrap();
    std::fs::write(models.join("model.onnx"), &std::fs::read(installed.model_dir.join("model.onnx")).unwrap()[..1000])
        .unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--full").env("VECGREP_MODEL_DIR", &models));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("cannot read the embedding model") && err.contains("VECGREP_MODEL_DIR names its"), "{err}");
    // A tokenizer that still reads but is not the one installed (review 187).
    let tokenizer = std::fs::read(installed.model_dir.join("tokenizer.json")).unwrap();
    std::fs::remove_file(models.join("tokenizer.json")).unwrap();
    std::fs::write(models.join("tokenizer.json"), [&tokenizer[..], b"\n"].concat()).unwrap();
    let o = run(t.cmd("vg-index", ".").env("VECGREP_MODEL_DIR", &models));
    let err = stderr(&o);
    assert!(err.contains("for another tokenizer") && err.contains("VECGREP_MODEL_DIR names its"), "{err}");
}

#[test]
fn a_broken_runtime_is_an_error_not_a_panic() {
    let t = sample_project();
    let fake = t.path().join("fake-ort.so");
    std::fs::write(&fake, "not a library").unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--full").env("ORT_DYLIB_PATH", &fake));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("ONNX Runtime") && !err.contains("panicked"), "{err}");
    let o = run(t.cmd("vg-index", ".").arg("--full").env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("ORT_DYLIB_PATH"), "{}", stderr(&o));
    // A static run and a search of its index need no runtime (the static
    // table runs no model); a search that embeds fully does.
    assert_code(&run(t.cmd("vg-index", ".").env("ORT_DYLIB_PATH", &fake)), 0);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]).env("ORT_DYLIB_PATH", &fake));
    assert_code(&o, 0);
    let o = run(t.cmd("vg-query", ".").args(["--full", "retry"]).env("ORT_DYLIB_PATH", &fake));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("ONNX Runtime") && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    // The library cut short (a copy interrupted): said, where the first call
    // into it killed the tool with SIGBUS.
    let installed = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL).unwrap().ort_library;
    let bytes = std::fs::read(installed).unwrap();
    std::fs::write(&fake, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--full", "retry"]).env("ORT_DYLIB_PATH", &fake));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("it was cut short; ORT_DYLIB_PATH names it"), "{}", stderr(&o));
    // A library whose own dependency is missing: the loader's words, where
    // a bare "dlopen failed" was said (audit 183).
    let dir = tempfile::tempdir().unwrap();
    let cc = |args: &[&str]| {
        let ok = std::process::Command::new("cc").args(args).current_dir(dir.path()).status().unwrap();
        assert!(ok.success(), "cc {args:?}");
    };
    std::fs::write(dir.path().join("dep.c"), "int vg_dep(void) { return 1; }\n").unwrap();
    std::fs::write(dir.path().join("ort.c"), "int vg_dep(void);\nint OrtGetApiBase(void) { return vg_dep(); }\n")
        .unwrap();
    cc(&["-shared", "-fPIC", "-o", "libvgdep.so", "dep.c"]);
    cc(&["-shared", "-fPIC", "-o", "libort.so", "ort.c", "-L.", "-lvgdep"]);
    std::fs::remove_file(dir.path().join("libvgdep.so")).unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--full", "retry"]).env("ORT_DYLIB_PATH", dir.path().join("libort.so")));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("libvgdep.so: cannot open shared object file"), "{}", stderr(&o));
}

#[test]
fn a_corrupt_index_is_rebuilt() {
    let t = sample_project();
    index(&t, ".", &[]);
    std::fs::write(t.path().join(".vecgrep/index.db"), b"garbage garbage garbage garbage").unwrap();
    let _ = std::fs::remove_file(t.path().join(".vecgrep/index.db-wal"));
    let _ = std::fs::remove_file(t.path().join(".vecgrep/index.db-shm"));
    let o = index(&t, ".", &[]);
    assert!(stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    assert_eq!(summary(&o)["files"], 4);
    assert_eq!(summary(&o)["rebuilt"], true, "the summary says the index was rebuilt");
    assert_eq!(stats(&t)["files"], 4);
    assert_eq!(summary(&index(&t, ".", &[]))["rebuilt"], false, "and the next run does not");
    // A truncated file (a disk that filled up, a copy cut short) likewise.
    let db = t.path().join(".vecgrep/index.db");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&db).unwrap().set_len(len / 2).unwrap();
    let o = index(&t, ".", &[]);
    assert!(stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    assert_eq!(stats(&t)["files"], 4);
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
}

#[test]
fn an_unknown_model_is_an_error_that_keeps_the_index() {
    let t = sample_project();
    index(&t, ".", &[]);
    let o = run(t.cmd("vg-index", ".").args(["--embedder-model", "no-such-model"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no-such-model"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "no word of a rebuild that does not happen: {}", stderr(&o));
    let st = stats(&t);
    assert_eq!(st["files"], 4);
    assert_eq!(st["model"], "all-MiniLM-L6-v2");
}

#[test]
fn the_code_model_is_chosen_by_name_and_its_index_rebuilt() {
    let t = sample_project();
    index(&t, ".", &["--full"]);
    let o = index(&t, ".", &["--full", "--embedder-model", "vecgrep-code-minilm-l6"]);
    let err = stderr(&o);
    assert!(err.contains("rebuilding the index") && err.contains("vecgrep-code-minilm-l6"), "{err}");
    let st = stats(&t);
    assert_eq!((st["model"].as_str(), st["files"].as_u64()), (Some("vecgrep-code-minilm-l6"), Some(4)));
    assert_eq!(st["pending"], 0, "every chunk has the code model's vector");
    // Its vectors answer a question in plain words with the code that does it.
    let o = run(t
        .cmd("vg-query", ".")
        .args(["--embedder-model", "vecgrep-code-minilm-l6", "--mode", "semantic"])
        .args(["-k", "1", "--no-index", "where do we retry failed uploads"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
    // Nor does a search of the index as it is: a query embedded by MiniLM
    // against the code model's vectors is refused, saying what rebuilds it.
    let o = run(t.cmd("vg-query", ".").args(["--mode", "semantic", "--no-index", "retry failed uploads"]));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("made by vecgrep-code-minilm-l6, not all-MiniLM-L6-v2") && err.contains("vg-index"), "{err}");
    // A search with the other model does not mix vectors: it rebuilds first.
    let o = run(t.cmd("vg-query", ".").args(["-k", "1", "retry failed uploads"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index"), "{}", stderr(&o));
    assert_eq!(stats(&t)["model"], "all-MiniLM-L6-v2");
}

#[test]
fn usage_errors_are_one_line() {
    let t = sample_project();
    for (tool, args) in
        [("vg-index", vec!["--no-such-flag"]), ("vg-query", vec![]), ("vecgrep", vec!["-k", "zero", "q"])]
    {
        let o = run(t.cmd(tool, ".").args(&args));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{tool}: {err}");
        assert!(err.starts_with(&format!("{tool}: ")), "{err}");
    }
    // An output flag given to a tool that writes records names vg-format, not a flag spelt alike.
    for (tool, flag) in
        [("vg-query", "--files"), ("vg-query", "-l"), ("vg-log", "--color=never"), ("vg-query", "--json")]
    {
        let o = run(t.cmd(tool, ".").args([flag, "retry"]));
        assert_code(&o, 2);
        let name = flag.split('=').next().unwrap();
        let says =
            format!("{tool}: '{name}' is an output option of vg-format's, not {tool}'s: {tool} … | vg-format {name}");
        assert!(stderr(&o).starts_with(&says), "{}", stderr(&o));
    }
    let o = run(t.cmd("vg-index", ".").arg("--files"));
    assert!(!stderr(&o).contains("vg-format"), "vg-index's records are not vg-format's to show: {}", stderr(&o));
    // Looking after the index is vg-index's: `--verify` was offered "--version".
    for (tool, flag) in [("vecgrep", "--verify"), ("vg-query", "--forget=main"), ("vg-serve", "--stats")] {
        let o = run(t.cmd(tool, ".").arg(flag));
        assert_code(&o, 2);
        let name = flag.split('=').next().unwrap();
        let says = format!("{tool}: '{name}' is an option of vg-index's, not {tool}'s: vg-index {name}");
        assert!(stderr(&o).starts_with(&says), "{}", stderr(&o));
    }
}

/// Run vg-index on a pseudo-terminal (util-linux `script`), answering `answer`.
fn index_on_terminal(t: &Tree, threshold: u32, answer: &str) -> Option<std::process::Output> {
    index_on_terminal_with(t, &["--index-warn-threshold", &threshold.to_string()], answer)
}

/// Run vg-index with `args` on a pseudo-terminal, answering `answer`;
/// its stdout holds what the terminal showed.
fn index_on_terminal_with(t: &Tree, args: &[&str], answer: &str) -> Option<std::process::Output> {
    on_terminal(t, "vg-index", args, answer)
}

/// Run `tool` with `args` and `.` on a pseudo-terminal, answering `answer`.
fn on_terminal(t: &Tree, tool: &str, args: &[&str], answer: &str) -> Option<std::process::Output> {
    on_a_terminal(t, &format!("{} {} .", bin(tool).display(), args.join(" ")), answer)
}

/// Run vg-index with `args` on a pseudo-terminal and type Ctrl-C two
/// seconds in: at its question, or before it (then the run stops at once).
fn interrupted_on_terminal(t: &Tree, args: &[&str]) -> Option<std::process::Output> {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        return None;
    }
    let cmd = format!("{} {} .", bin("vg-index").display(), args.join(" "));
    let typed = format!("(sleep 2; printf '\\003') | script -qec '{cmd}' /dev/null");
    let mut c = std::process::Command::new("sh");
    c.args(["-c", &typed]).current_dir(t.path()).env("XDG_CONFIG_HOME", t.config_home.path());
    Some(run(&mut c))
}

#[test]
fn the_bar_says_the_model_is_loading_counts_bytes_and_stays_off_quick_runs() {
    let t = handlers_project(30);
    let Some(o) = index_on_terminal_with(&t, &["--full", "--index-warn-threshold", "0"], "") else { return };
    assert_code(&o, 0);
    let shown = stdout(&o);
    assert!(shown.contains("vg-index: indexing") && shown.contains("loading the model"), "{shown}");
    // Bytes are what the time goes by; files and chunks are what a user knows.
    assert!(shown.contains("KiB/") && shown.contains("/34 files") && shown.contains(" chunks"), "{shown}");
    // A file touched but unchanged is re-read in moments: no bar flashes.
    t.write("src/config.py", &std::fs::read_to_string(t.path().join("src/config.py")).unwrap());
    let Some(o) = index_on_terminal_with(&t, &["--index-warn-threshold", "0"], "") else { return };
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("vg-index: indexing"), "{}", stdout(&o));
}

/// One large file moves the bar as its chunks embed, and the time left is
/// `?` until something is done (audit 237: the bar stood at 0 B through the
/// whole file, its estimate `0s`, or hours after a small file first).
#[test]
fn the_bar_moves_through_one_large_file() {
    let t = Tree::bare();
    let body: String = (0..1000)
        .map(|i| format!("def handler_{i}(request):\n    return request.part({i}) + compute({i})\n\n"))
        .collect();
    t.write("big.py", &body);
    let Some(o) = index_on_terminal_with(&t, &["--full", "--index-warn-threshold", "0"], "") else { return };
    assert_code(&o, 0);
    let shown = stdout(&o).replace('\r', "\n");
    let bars: Vec<&str> = shown.lines().filter(|l| l.contains("vg-index: indexing")).collect();
    assert!(!bars.iter().any(|l| l.contains("eta 0s") && l.contains("] 0 B/")), "{shown}");
    // Within the file: neither nothing nor all of it, with its file not yet written.
    let within = |l: &&str| {
        let position = l.split("] ").nth(1).and_then(|rest| rest.split(", ").next()).unwrap_or("");
        let (done, of) = position.split_once('/').unwrap_or(("", ""));
        l.contains("0/1 files") && done != "0 B" && !done.is_empty() && done != of
    };
    assert!(bars.iter().any(within), "{shown}");
}

#[test]
fn a_large_run_asks_on_a_terminal_and_declining_changes_nothing() {
    let t = sample_project();
    let Some(o) = index_on_terminal(&t, 1, "n\n") else { return };
    assert_code(&o, 1);
    let out = stdout(&o);
    assert!(out.contains("Continue? [y/N]"), "{out}");
    assert!(out.contains("\"aborted\":true"), "{out}");
    // "The index was left as it was": none, not an empty one that reads incomplete.
    assert_eq!((stats(&t)["files"].as_u64(), stats(&t)["db_size_bytes"].as_u64()), (Some(0), Some(0)));
    assert!(!t.path().join(".vecgrep/index.db").exists());
    // Nor the `.vecgrep` it made for one, which marks a root from then on
    // (audit 223).
    assert!(!t.path().join(".vecgrep").exists());
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "upload"]));
    assert!(stderr(&o).contains("no index at"), "{}", stderr(&o));
    // The porcelain asks under its own name, as it speaks.
    let Some(o) = on_terminal(&t, "vecgrep", &["--index-only", "--index-warn-threshold", "1"], "n\n") else { return };
    assert_code(&o, 1);
    assert!(stdout(&o).contains("vecgrep: 4 files need indexing"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("vg-index"), "{}", stdout(&o));
    let Some(o) = index_on_terminal(&t, 1, "y\n") else { return };
    assert_code(&o, 0);
    assert_eq!(stats(&t)["files"], 4);
    // A rebuild declined emptied nothing, and its record says so: "rebuilt"
    // beside "aborted" means the index was emptied (ndjson.md).
    let Some(o) = index_on_terminal_with(&t, &["--reindex", "--index-warn-threshold", "1"], "n\n") else { return };
    assert_code(&o, 1);
    assert!(stdout(&o).contains("\"rebuilt\":false,\"aborted\":true"), "{}", stdout(&o));
    assert_eq!(stats(&t)["files"], 4);
    // Files read again only because their ctime moved (a chmod) are not
    // work to ask about: they are most likely unchanged.
    for rel in ["src/upload.py", "src/config.py", "src/geometry.rs", "docs/guide.md"] {
        let path = t.path().join(rel);
        std::fs::set_permissions(&path, std::fs::metadata(&path).unwrap().permissions()).unwrap();
    }
    let Some(o) = index_on_terminal(&t, 1, "") else { return };
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("Continue?"), "{}", stdout(&o));
    // Ctrl-C at the question ends it at once, with 130, the index as it was.
    assert_code(&run(t.cmd("vg-index", ".").arg("--clear-cache")), 0);
    let Some(o) = interrupted_on_terminal(&t, &["--index-warn-threshold", "1"]) else { return };
    assert_code(&o, 130);
    assert_eq!(stats(&t)["files"], 0, "{}", stdout(&o));
    // Where there was no index there is still none: an empty one made for
    // the question read as incomplete to every later search.
    assert!(!t.path().join(".vecgrep/index.db").exists(), "{}", stdout(&o));
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "upload"]));
    assert!(stderr(&o).contains("no index at"), "{}", stderr(&o));
    // BlockingIndexCompletesWithoutWarning: a threshold of 0 never asks.
    assert_code(&run(t.cmd("vg-index", ".").arg("--clear-cache")), 0);
    let Some(o) = index_on_terminal(&t, 0, "") else { return };
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("Continue?"), "{}", stdout(&o));
    assert_eq!(stats(&t)["files"], 4);
}

/// A FIFO in the tree is one skip record, never opened: reading it would
/// block the run until something wrote to it.
#[test]
fn a_fifo_is_a_skip_not_a_read() {
    let t = sample_project();
    let fifo = t.path().join("src/pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = index(&t, ".", &[]);
    let skips =
        of_type(&records(&o), "skip").iter().map(|s| (s["file"].clone(), s["reason"].clone())).collect::<Vec<_>>();
    assert_eq!(skips, [(serde_json::Value::from("src/pipe"), serde_json::Value::from("special"))], "{}", stdout(&o));
    assert_eq!(summary(&o)["files"], 4);
    // Followed, a link to a device out of the project is said as what leads
    // out of it (it was `special`, and the help says a link out is skipped).
    std::fs::remove_file(&fifo).unwrap();
    std::os::unix::fs::symlink("/dev/zero", t.path().join("src/zero.rs")).unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--follow"));
    let zero = of_type(&records(&o), "skip").iter().find(|s| s["file"] == "src/zero.rs").map(|s| s["reason"].clone());
    assert_eq!(zero, Some(serde_json::Value::from("outside_root")), "{}", stdout(&o));
}

/// A PATH thousands of characters deep: the error quoted it whole, and the
/// line was cut before its cause.
#[test]
fn an_error_about_a_very_long_path_still_says_its_cause() {
    let t = sample_project();
    let deep = vec!["d".repeat(200); 22].join("/") + "/nonexistent.rs";
    let o = run(t.cmd("vg-index", ".").arg(&deep));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.ends_with("No such file or directory (os error 2)\n") && err.len() < 1000, "{err}");
}

#[test]
fn symlinks_never_lead_outside_the_root() {
    let t = sample_project();
    let outside = Tree::bare();
    outside.write("secret.txt", "the password is hunter2\n");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), t.path().join("src/link.txt")).unwrap();
    std::os::unix::fs::symlink(t.path().join("src"), t.path().join("src/loop")).unwrap();
    let reason = |o: &std::process::Output, f: &str| {
        of_type(&records(o), "skip").iter().find(|s| s["file"] == f).map(|s| s["reason"].as_str().unwrap().to_string())
    };
    let o = index(&t, ".", &[]);
    assert_eq!(reason(&o, "src/link.txt").as_deref(), Some("symlink"));
    assert_eq!(summary(&o)["files"], 4);
    let o = run(t.cmd("vg-index", ".").arg("--follow"));
    assert_eq!(reason(&o, "src/link.txt").as_deref(), Some("outside_root"));
    // The loop is reported as an error (status 2) and the run still completes.
    assert_code(&o, 2);
    assert!(stderr(&o).contains("loop"), "{}", stderr(&o));
    assert_eq!(summary(&o)["files"], 4);
    // A dangling link is an error, not a file that vanished (a file
    // deleted during the walk is one of those, status 0).
    std::os::unix::fs::symlink(t.path().join("src/nowhere.py"), t.path().join("src/dangling.py")).unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--follow"));
    assert_eq!(reason(&o, "src/dangling.py").as_deref(), Some("error"));
    let q = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "-k", "100", "password"]));
    assert!(records(&q).iter().all(|r| !r["text"].as_str().unwrap().contains("hunter2")));
}

/// Issue 42: with --follow, a link to a directory outside the root is one
/// skip and is never walked (its files are not even named), and a link out
/// of the paths given (a server's served paths) is not followed either.
#[test]
fn followed_links_never_walk_out_of_the_root_or_the_paths_given() {
    let t = sample_project();
    let outside = Tree::bare();
    for i in 0..50 {
        outside.write(&format!("big/file{i:02}.py"), &format!("def outside_{i}():\n    return 'hunter2'\n"));
    }
    std::os::unix::fs::symlink(outside.path().join("big"), t.path().join("src/ext")).unwrap();
    std::os::unix::fs::symlink(t.path().join("docs"), t.path().join("src/docs")).unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--follow"));
    assert_code(&o, 0);
    let skips =
        of_type(&records(&o), "skip").iter().map(|s| (s["file"].clone(), s["reason"].clone())).collect::<Vec<_>>();
    assert_eq!(
        skips,
        [(serde_json::Value::from("src/ext"), serde_json::Value::from("outside_root"))],
        "{}",
        stdout(&o)
    );
    assert!(!format!("{}{}", stdout(&o), stderr(&o)).contains("file0"), "nothing beyond the link was read");
    assert_eq!(summary(&o)["files"], 5, "src/docs/guide.md, through a link inside the root, is indexed");
    // Given src alone, the link to docs leads out of the paths walked.
    assert_code(&run(t.cmd("vg-index", ".").arg("--clear-cache")), 0);
    let o = run(t.cmd("vg-index", ".").args(["--follow", "src"]));
    assert_code(&o, 0);
    let reason = |f: &str| of_type(&records(&o), "skip").iter().find(|s| s["file"] == f).map(|s| s["reason"].clone());
    assert_eq!(reason("src/docs"), Some(serde_json::Value::from("outside_paths")), "{}", stdout(&o));
    assert_eq!(summary(&o)["files"], 3);
    // Given no PATH, the paths walked are the current directory's, as the
    // help says (it said the root's).
    let o = run(t.cmd("vg-index", "src").arg("--follow"));
    assert_code(&o, 0);
    let reason = |f: &str| of_type(&records(&o), "skip").iter().find(|s| s["file"] == f).map(|s| s["reason"].clone());
    assert_eq!(reason("src/docs"), Some(serde_json::Value::from("outside_paths")), "{}", stdout(&o));
}

/// A first run refused for a bad argument (a mistyped `-t`, a glob that
/// does not parse) leaves no index and no `.vecgrep`, which would mark a
/// root from then on (audit 235: `vecgrep -t pyton q` in `~` made `~` the
/// root of every unmarked directory below it).
#[test]
fn a_first_run_refused_for_a_bad_argument_leaves_no_index() {
    let t = Tree::bare();
    t.write("sub/a.py", "def load_settings(path):\n    return open(path).read()\n");
    for (tool, args) in [
        ("vecgrep", &["-t", "pyton", "settings"][..]),
        ("vecgrep", &["-g", "[", "settings"]),
        ("vg-index", &["-t", "pyton"]),
        ("vg-query", &["-t", "pyton", "settings"]),
    ] {
        let o = run(t.cmd(tool, ".").args(args));
        assert_code(&o, 2);
        assert!(!t.path().join(".vecgrep").exists(), "{tool} {args:?}: {}", stderr(&o));
    }
    let o = run(t.cmd("vg-root", "sub").arg("--json"));
    assert_eq!(records(&o)[0]["marker"], "none", "{}", stdout(&o));
    // A run that stored files keeps them, whatever fails after.
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_code(&run(t.cmd("vg-index", ".").args(["-t", "pyton"])), 2);
    assert!(t.path().join(".vecgrep/index.db").exists());
}

/// A link into `.git` (or `.vecgrep`) leads where no walk goes: with
/// `--follow` its target is a skip, never indexed (audit 235: a repository
/// shipping `notes -> .git` had `.git/config`, credentials and all, indexed
/// and served to agents).
#[test]
fn followed_links_never_lead_into_the_directories_no_walk_enters() {
    use std::os::unix::ffi::OsStrExt;
    let t = sample_project();
    t.write(".git/config", "[remote \"origin\"]\n\turl = https://alice:ghp_SECRETTOKEN@example.org/p.git\n");
    std::os::unix::fs::symlink(".git", t.path().join("notes")).unwrap();
    std::os::unix::fs::symlink(".git/config", t.path().join("cfg.txt")).unwrap();
    std::os::unix::fs::symlink(".vecgrep", t.path().join("data")).unwrap();
    // A name that is not UTF-8 is in `.git` all the same (review 238).
    let odd = std::ffi::OsStr::from_bytes(b".git/odd\xff");
    std::fs::write(t.path().join(odd), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(odd, t.path().join("oddlink")).unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--follow"));
    assert_code(&o, 0);
    let skipped =
        |f: &str| of_type(&records(&o), "skip").iter().any(|s| s["file"] == f && s["reason"] == "outside_paths");
    assert!(skipped("notes") && skipped("cfg.txt") && skipped("data") && skipped("oddlink"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("config\""), "{}", stdout(&o));
    let o = run(t.cmd("vecgrep", ".").args([
        "--follow",
        "--json",
        "--threshold",
        "-1",
        "-k",
        "100",
        "ghp_SECRETTOKEN alice",
    ]));
    let files: Vec<String> = records(&o).iter().map(|h| h["file"].as_str().unwrap_or_default().to_string()).collect();
    assert!(!files.is_empty() && files.iter().all(|f| !f.starts_with("notes") && f != "cfg.txt"), "{files:?}");
}

/// Issue 42: a repository's own config may make a run smaller than the
/// defaults, not larger (a 3 MB file once became 60,001 chunks), unless
/// the user trusts it.
#[test]
fn a_projects_own_config_cannot_make_a_run_larger_unless_trusted() {
    let t = sample_project();
    t.write("data/big.py", &"x = 1\n".repeat(200_000));
    t.project_config(
        "max_filesize = 100000000\nchunk_size = 50\nchunk_overlap = 10\nindex_warn_threshold = 0\nembed_all = true\n",
    );
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    let err = stderr(&o);
    let held = "holding max_filesize = 100000000, chunk_size = 50, index_warn_threshold = 0, embed_all = true of";
    assert!(err.contains(held), "{err}");
    assert_eq!(summary(&o)["embedded"], 0, "no chunk embedded by the model: {}", stdout(&o));
    let skip = of_type(&records(&o), "skip").iter().find(|s| s["file"] == "data/big.py").map(|s| s["reason"].clone());
    assert_eq!(skip, Some(serde_json::Value::from("too_large")), "{}", stdout(&o));
    assert!(summary(&o)["chunks"].as_u64().unwrap() < 10, "{}", stdout(&o));
    // Its own quiet does not hide what of it was held: only the user's does.
    t.project_config("quiet = true\nmax_filesize = 100000000\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert!(stderr(&o).contains("holding max_filesize = 100000000"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").arg("--quiet"));
    assert_eq!(stderr(&o), "");
    // Nor twice the chunks by its overlap, nor its generated files read.
    t.project_config("chunk_overlap = 499\ninclude_generated = true\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert!(stderr(&o).contains("holding chunk_overlap = 499, include_generated = true of"), "{}", stderr(&o));
    // Where the user's own setting is looser than the defaults, a value
    // between them is stricter than the user asked, and taken: it was held
    // to the user's larger one.
    t.global_config("max_filesize = 2000000\n");
    t.project_config("max_filesize = 1500000\n");
    t.write("data/big.py", &"x = 1\n".repeat(300_000));
    let o = run(&mut t.cmd("vg-index", "."));
    assert!(!stderr(&o).contains("holding"), "{}", stderr(&o));
    let skip = of_type(&records(&o), "skip").iter().find(|s| s["file"] == "data/big.py").map(|s| s["reason"].clone());
    assert_eq!(skip, Some(serde_json::Value::from("too_large")), "1.8 MB is over the project's 1.5 MB");
}

/// Ctrl-C during a run stops it within moments, not after the queue: what
/// was written is kept and said, the index is sound, the exit status is a
/// shell's for SIGINT, and the next run indexes the rest.
#[test]
fn ctrl_c_keeps_what_was_indexed_says_so_and_the_next_run_goes_on() {
    use std::io::BufRead;
    let t = Tree::git();
    for i in 0..80 {
        let body: String = (0..12)
            .map(|j| format!("def step_{i}_{j}(value):\n    \"\"\"Scale value {j} of batch {i}.\"\"\"\n    return value * {j}\n\n"))
            .collect();
        t.write(&format!("src/mod_{i:02}.py"), &body);
    }
    let mut child = t
        .cmd("vg-index", ".")
        .arg("--full")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the phase the signal interrupts: files being written.
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("\"type\":\"file\""), "{first}");
    let signalled = std::time::Instant::now();
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    let waited = signalled.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("vg-index: interrupted after") && err.contains("the next run with --full indexes the rest"),
        "{err}"
    );
    // Bounded by a slice of one file's chunks, not by the files queued.
    assert!(waited < std::time::Duration::from_secs(20), "{waited:?}");
    let summary: serde_json::Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    let kept = summary["files"].as_u64().unwrap();
    assert!(summary["type"] == "summary" && kept < 80, "{summary}");
    assert_eq!(summary["interrupted"], true, "the record says so to a reader of stdout alone: {summary}");
    let verify = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&verify, 0);
    let o = run(t.cmd("vg-index", ".").arg("--full"));
    assert_code(&o, 0);
    let summary = records(&o).into_iter().last().unwrap();
    assert_eq!(
        (summary["files"].as_u64(), summary["reused"].as_u64().map(|r| r > 0)),
        (Some(80), Some(true)),
        "{summary}"
    );
    // Stopped while it only gave files the index holds the model's vectors,
    // a run leaves none out: the index is not called incomplete.
    assert_code(&run(t.cmd("vg-index", ".").arg("--clear-cache")), 0);
    assert_code(&run(t.cmd("vg-index", ".").stdout(std::process::Stdio::null())), 0);
    let mut child = t.cmd("vg-index", ".").arg("--full").stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    lines.next().unwrap().unwrap();
    assert!(std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    lines.for_each(drop);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "scale value"]));
    assert!(!stderr(&o).contains("incomplete"), "{}", stderr(&o));
    assert_eq!(stats(&t)["complete"], true, "{}", stats(&t));
}

/// A rename caught by a run that Ctrl-C stops leaves the file's text under
/// its old name: a stopped run removes nothing, since the new name may be
/// among the files it left (audit 245: the old name was removed, the new
/// one never read, and the text was under neither).
#[test]
fn a_rename_in_a_stopped_run_keeps_the_text_under_one_name() {
    use std::io::BufRead;
    let t = Tree::git();
    let module = |i: usize, word: &str| -> String {
        (0..12).map(|j| format!("def step_{i}_{j}(value):\n    \"\"\"{word} value {j} of batch {i}.\"\"\"\n    return value * {j}\n\n")).collect()
    };
    for i in 0..60 {
        t.write(&format!("src/mod_{i:02}.py"), &module(i, "Scale"));
    }
    t.write("src/kept.py", "def uniquely_named_ledger_total():\n    return 42\n");
    index(&t, ".", &[]);
    for i in 0..60 {
        t.write(&format!("src/mod_{i:02}.py"), &module(i, "Shift"));
    }
    std::fs::rename(t.path().join("src/kept.py"), t.path().join("src/zz_renamed.py")).unwrap();
    let mut child = t.cmd("vg-index", ".").arg("--full").stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("\"type\":\"file\""), "{first}");
    assert!(std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!rest.iter().any(|l| l.contains("zz_renamed")), "stopped before the new name: {rest:?}");
    assert!(!rest.iter().any(|l| l.contains("\"removed\"") && l.contains("kept.py")), "{rest:?}");
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "uniquely_named_ledger_total"]));
    assert!(stdout(&o).contains("kept.py"), "{}", stderr(&o));
    // The next run puts it under its new name alone.
    index(&t, ".", &[]);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "uniquely_named_ledger_total"]));
    assert!(stdout(&o).contains("zz_renamed.py") && !stdout(&o).contains("kept.py"), "{}", stdout(&o));
}

/// A path deeper than the system lets a file be opened by: its error line
/// was cut at 4,000 characters from the end, the cause with it; the path
/// is cut in its middle, and the cause said.
#[test]
fn a_path_too_long_to_open_is_said_with_its_cause() {
    let t = Tree::bare();
    std::fs::create_dir(t.path().join(".vecgrep")).unwrap();
    // Made a directory at a time from the one before (a path that long is
    // no argument to mkdir, and sh's cd keeps it whole), in a process of its
    // own: a test's threads share one working directory.
    let deep = "import os\nfor _ in range(20):\n    os.mkdir('d' * 250)\n    os.chdir('d' * 250)\nopen('x.rs', 'w').write('// retry\\n')\n";
    assert!(std::process::Command::new("python3").args(["-c", deep]).current_dir(t.path()).status().unwrap().success());
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("vg-index: skipping dddd") && err.trim_end().ends_with("(os error 36)"), "{err}");
    assert!(err.contains("…"), "{err}");
}

/// Text for a reader (vg-root's, `--stats`', `--verify`'s) shows the
/// control characters of a root's path, never sends them to the terminal:
/// a directory named with a title-setting sequence set the title. A pipe
/// gets the path's bytes, so `cd "$(vg-root)"` still works.
#[test]
fn text_on_a_terminal_shows_a_roots_escape_sequences_and_a_pipe_gets_its_bytes() {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        return;
    }
    let t = Tree::bare();
    // A newline in it is shown too: it forged a line of --stats' own.
    t.write("r\x1b]0;PWNED\x07x\nindex:    /etc/passwd/a.rs", "fn retry_upload() {}\n");
    let odd = t.path().join("r\x1b]0;PWNED\x07x\nindex:    /etc/passwd");
    std::fs::create_dir(odd.join(".vecgrep")).unwrap();
    assert_code(&run(t.cmd("vg-index", ".").current_dir(&odd).arg("-q")), 0);
    for args in ["", "--stats", "--verify", "--json"] {
        let tool = if args.starts_with("--s") || args.starts_with("--v") { "vg-index" } else { "vg-root" };
        let cmd = format!("{} {args}", bin(tool).display());
        let mut script = std::process::Command::new("script");
        script.args(["-qec", &cmd, "/dev/null"]).current_dir(&odd).env("XDG_CONFIG_HOME", t.config_home.path());
        let o = run(&mut script);
        let shown = stdout(&o);
        assert!(!shown.contains('\x1b'), "{tool} {args}: {shown:?}");
        let expected = if args == "--json" { "r\\u001b]0;PWNED\\u0007x\\n" } else { "r^[]0;PWNED^Gx^Jindex:" };
        assert!(shown.contains(expected), "{tool} {args}: {shown:?}");
        assert!(!shown.lines().any(|l| l.starts_with("index:    /etc")), "{tool} {args}: {shown:?}");
    }
    let o = run(t.cmd("vg-root", ".").current_dir(&odd));
    assert_eq!(stdout(&o).trim_end(), odd.canonicalize().unwrap().to_str().unwrap());
    // A name that ends in a newline is shown whole on its line: its newline
    // was taken for the line's end, and the rest went on the next line.
    t.write("tail\n/a.rs", "fn retry_upload() {}\n");
    let tail = t.path().join("tail\n");
    std::fs::create_dir(tail.join(".vecgrep")).unwrap();
    assert_code(&run(t.cmd("vg-index", ".").current_dir(&tail).arg("-q")), 0);
    for (tool, args) in [("vg-root", ""), ("vg-index", "--stats"), ("vg-index", "--verify")] {
        let cmd = format!("{} {args}", bin(tool).display());
        let mut script = std::process::Command::new("script");
        script.args(["-qec", &cmd, "/dev/null"]).current_dir(&tail).env("XDG_CONFIG_HOME", t.config_home.path());
        let shown = stdout(&run(&mut script));
        assert!(shown.contains("tail^J"), "{tool} {args}: {shown:?}");
        assert!(!shown.lines().any(|l| l.trim().is_empty()), "{tool} {args}: a line broke: {shown:?}");
    }
}

/// A run after most of the project went gives the index file back its
/// space (audit 237: `index.db` kept its largest size forever, `--reindex`
/// too), and the index stays whole and marked as made here.
#[test]
fn an_index_shrinks_when_most_of_its_files_go() {
    let t = Tree::bare();
    t.write("src/keep.py", "def retry_failed_upload(session):\n    return session.retry()\n");
    for i in 0..60 {
        let body: String = (0..600).map(|j| format!("vendored_{i}_{j} = table_{j}.lookup({i}, 'row {j}')\n")).collect();
        t.write(&format!("vendor/lib{i:02}.py"), &body);
    }
    index(&t, ".", &[]);
    let size = || stats(&t)["db_size_bytes"].as_u64().unwrap();
    let full = size();
    std::fs::remove_dir_all(t.path().join("vendor")).unwrap();
    index(&t, ".", &[]);
    let left = size();
    assert!(left * 3 < full, "{left} of {full} bytes left");
    assert_eq!(stats(&t)["files"], 1);
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    // Still the file this project's runs made: a search of it as it is works.
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry a failed upload"]));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("src/keep.py"), "{}", stderr(&o));
}
