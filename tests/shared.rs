//! A shared index in Postgres (`--store`, `store_url`): the same answers as
//! the local index, projects kept apart under readers and writers, a writer
//! killed at any moment, and a URL that is never printed. Against a real
//! server from scripts/pg-server.sh.

use std::collections::HashSet;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::pg::PgServer;
use crate::serve::Server;

/// `tool` on `t` with the index in `pg` under the project name `project`.
fn shared(t: &Tree, pg: &PgServer, project: &str, tool: &str) -> Command {
    let mut c = t.cmd(tool, ".");
    c.args(["--store", &pg.url, "--store-project", project]);
    c
}

/// Each hit's file, line, score and relevance, rounded past float noise.
/// One hit as two backends are compared on it: its place, and its score
/// and relevance to within one unit of the fourth decimal they are printed
/// to, which the last bits of two stores' float arithmetic can tip (a
/// relevance holds the mean cosine of a file's chunks).
#[derive(Debug)]
struct SeenHit {
    file: String,
    line: u64,
    score: f64,
    relevance: f64,
}

impl PartialEq for SeenHit {
    fn eq(&self, other: &SeenHit) -> bool {
        self.file == other.file
            && self.line == other.line
            && (self.score - other.score).abs() < 1.5e-4
            && (self.relevance - other.relevance).abs() < 1.5e-4
    }
}

fn hits(o: &Output) -> Vec<SeenHit> {
    of_type(&records(o), "hit")
        .iter()
        .map(|h| SeenHit {
            file: h["file"].as_str().unwrap().to_string(),
            line: h["start_line"].as_u64().unwrap(),
            score: h["score"].as_f64().unwrap(),
            relevance: h["relevance"].as_f64().unwrap(),
        })
        .collect()
}

fn verify(c: &mut Command) -> Value {
    let o = run(c.args(["--verify", "--json"]));
    let r = records(&o).remove(0);
    assert_code(&o, if r["ok"] == true { 0 } else { 2 });
    r
}

#[test]
fn a_shared_index_answers_as_the_local_one_does() {
    let pg = PgServer::start();
    let t = handlers_project(8);
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    let o = run(shared(&t, &pg, "demo", "vg-index").arg("--full"));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["chunks"], summary(&run(&mut t.cmd("vg-index", ".")))["chunks"]);
    for mode in ["hybrid", "semantic", "lexical"] {
        for q in ["retry a failed upload", "read the settings file", "handler_3 request part", "sourdough"] {
            for scope in [".", "pkg", "src"] {
                let args = ["--no-index", "--mode", mode, "-k", "10", "--threshold", "0", q, scope];
                let local = run(t.cmd("vg-query", ".").args(args));
                let remote = run(shared(&t, &pg, "demo", "vg-query").args(args));
                assert_code(&remote, local.status.code().unwrap());
                assert_eq!(hits(&remote), hits(&local), "{mode}: {q} in {scope}");
            }
        }
    }
    let v = verify(&mut shared(&t, &pg, "demo", "vg-index"));
    assert_eq!((v["ok"].clone(), v["files"].clone()), (Value::Bool(true), Value::from(12)), "{v}");
    // A big project searches through pgvector's HNSW index: made by hand on
    // this small one, and the planner kept off scans and sorts (which it
    // rightly prefers at this size), it finds the same. A small scope is
    // scanned exactly whatever the index, and finds the same too.
    let whole = ["--no-index", "--mode", "semantic", "-k", "5", "--threshold", "0", "handle a request"];
    let scoped = ["--no-index", "--mode", "semantic", "-k", "5", "--threshold", "0", "handle a request", "pkg"];
    let before = hits(&run(shared(&t, &pg, "demo", "vg-query").args(whole)));
    let before_scoped = hits(&run(shared(&t, &pg, "demo", "vg-query").args(scoped)));
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    pg.sql(&format!(
        "SET search_path TO {schema}, public;
         CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw ((embedding::vector(384)) vector_cosine_ops);
         INSERT INTO meta VALUES ('hnsw_dims', '384');
         ALTER DATABASE vecgrep SET enable_seqscan = off;
         ALTER DATABASE vecgrep SET enable_sort = off;"
    ))
    .unwrap();
    assert_eq!(hits(&run(shared(&t, &pg, "demo", "vg-query").args(whole))), before);
    assert_eq!(hits(&run(shared(&t, &pg, "demo", "vg-query").args(scoped))), before_scoped);
    let used = || pg.sql("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'chunks_embedding_hnsw'");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while used().unwrap() == "0" && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_ne!(used().unwrap(), "0", "the search went through the HNSW index");
    pg.sql("ALTER DATABASE vecgrep RESET enable_seqscan; ALTER DATABASE vecgrep RESET enable_sort").unwrap();
    let stats = stdout(&run(shared(&t, &pg, "demo", "vg-index").arg("--stats")));
    assert!(
        stats.contains("files:    12") && stats.contains("index:    project demo in the postgres database vecgrep"),
        "{stats}"
    );
    // The porcelain passes the store on, and a file change reaches the shared index.
    t.write("src/config.py", "def parse_yaml_settings(path):\n    return yaml.safe_load(open(path))\n");
    let o = run(shared(&t, &pg, "demo", "vecgrep").args(["--json", "parse yaml settings"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/config.py");
    assert_eq!(pg.sql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap(), "1");
    // An index of another version is refused by a search and rebuilt by an index run.
    pg.sql(&format!("UPDATE {schema}.meta SET value = '0' WHERE key = 'schema'")).unwrap();
    let o = run(shared(&t, &pg, "demo", "vg-query").args(["--no-index", "upload"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("has schema 0, this vecgrep uses 1"), "{}", stderr(&o));
    let o = run(&mut shared(&t, &pg, "demo", "vg-index"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index of project demo"), "{}", stderr(&o));
    assert_eq!(summary(&o)["files"], 12);
    // Clearing drops the project's schema, from a checkout that has no
    // .vecgrep of its own too; searching it then says to index first.
    let _ = std::fs::remove_dir_all(t.path().join(".vecgrep"));
    let o = run(shared(&t, &pg, "demo", "vg-index").arg("--clear-cache"));
    assert_code(&o, 0);
    // Named as the store names it: it is gone for every checkout (audit 228).
    let said = stderr(&o);
    assert!(said.contains("removed the index of project demo in the postgres database vecgrep"), "{said}");
    assert!(said.contains("for every checkout that shares it"), "{said}");
    assert_eq!(pg.sql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap(), "0");
    let o = run(shared(&t, &pg, "demo", "vg-query").args(["--no-index", "upload"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no index at project demo in the postgres database vecgrep"), "{}", stderr(&o));
}

/// 300 files, each a chunk with `alpha` (in most), `beta` (in some) and
/// `gamma` (in a few), as often as its number says, among filler words.
fn three_words_project() -> Tree {
    let t = Tree::git();
    for i in 0..300usize {
        let mut words = vec!["alpha"; 1 + i % 4];
        words.extend(vec!["beta"; if i % 3 == 0 { 1 + i % 5 } else { 0 }]);
        words.extend(vec!["gamma"; if i % 17 == 0 { 1 + i % 3 } else { 0 }]);
        words.extend(vec!["filler"; i % 11]);
        if i % 6 == 5 {
            words.retain(|w| *w != "alpha");
        }
        t.write(&format!("src/part{i:03}.py"), &format!("def part_{i}():\n    return \"{}\"\n", words.join(" ")));
    }
    t
}

#[test]
fn word_term_stats_stay_current_through_runs_and_are_rebuilt_when_left_behind() {
    let pg = PgServer::start();
    let t = three_words_project();
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    assert_code(&run(shared(&t, &pg, "w", "vg-index").arg("--full")), 0);
    let queries = ["alpha beta gamma", "gamma alpha", "beta filler", "alpha alpha beta"];
    let same_as_local = |t: &Tree, why: &str| {
        for mode in ["lexical", "hybrid"] {
            for q in queries {
                let args = ["--no-index", "--mode", mode, "-k", "100", "--threshold", "0", q];
                let local = hits(&run(t.cmd("vg-query", ".").args(args)));
                assert!(local.len() > 50, "{mode}: {q}: {}", local.len());
                assert_eq!(hits(&run(shared(t, &pg, "w", "vg-query").args(args))), local, "{why}, {mode}: {q}");
            }
        }
    };
    same_as_local(&t, "indexed");
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    // A search trusts each term's bounds (store::postgres::words has the
    // tests of how it skips chunks by them); --verify sees bounds too low.
    let lowered =
        format!("UPDATE {schema}.term_stats SET max_tf = 1, min_dl = 1000000 WHERE term = 'alpha' RETURNING 1");
    assert_eq!(pg.sql(&lowered).unwrap(), "1");
    let v = verify(&mut shared(&t, &pg, "w", "vg-index"));
    assert!(v["problems"].to_string().contains("word terms' counts"), "{v}");
    // An index made before the stats (or left behind by an older vecgrep)
    // is searched without them; the next run makes them.
    pg.sql(&format!("DROP TABLE {schema}.term_stats; DELETE FROM {schema}.meta WHERE key = 'term_stats_at'")).unwrap();
    same_as_local(&t, "no stats");
    assert_code(&run(&mut shared(&t, &pg, "w", "vg-index")), 0);
    assert_eq!(verify(&mut shared(&t, &pg, "w", "vg-index"))["ok"], true);
    same_as_local(&t, "rebuilt");
    // Each run keeps them current through edits and removals.
    for i in (0..300).step_by(7) {
        t.write(&format!("src/part{i:03}.py"), &format!("def part_{i}():\n    return \"gamma gamma beta {i}\"\n"));
    }
    for i in (1..300).step_by(13) {
        std::fs::remove_file(t.path().join(format!("src/part{i:03}.py"))).unwrap();
    }
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_code(&run(&mut shared(&t, &pg, "w", "vg-index")), 0);
    let current = pg.sql(&format!(
        "SELECT (SELECT value FROM {schema}.meta WHERE key = 'term_stats_at')
              = ((SELECT value::bigint FROM {schema}.meta WHERE key = 'generation')
                 - coalesce((SELECT value::bigint FROM {schema}.meta WHERE key = 'wordless_changes'), 0))::text"
    ));
    assert_eq!(current.unwrap(), "t", "the run kept the stats current");
    assert_eq!(verify(&mut shared(&t, &pg, "w", "vg-index"))["ok"], true);
    same_as_local(&t, "edited");
}

/// Equal matches at the cut to a word search's candidates are all kept,
/// and ranked by place, as in SQLite (query.rs): the cut broke ties by
/// chunk id, so which of two equal files came first hung on which was
/// indexed first, and the two stores answered apart.
#[test]
fn equal_scores_go_by_file_whatever_order_they_were_indexed_in() {
    let pg = PgServer::start();
    let t = Tree::git();
    for i in 0..110 {
        t.write(&format!("z/f{i:03}.rs"), "fn handler() { let walrus = 1; }\n");
    }
    for i in 0..120 {
        t.write(&format!("z/other{i:03}.rs"), &format!("fn other_{i}() {{ let pelican = {i}; }}\n"));
    }
    assert_code(&run(shared(&t, &pg, "ties", "vg-index").arg("z")), 0);
    t.write("a/f999.rs", "fn handler() { let walrus = 1; }\n");
    assert_code(&run(&mut shared(&t, &pg, "ties", "vg-index")), 0);
    for k in ["1", "3"] {
        let o = run(shared(&t, &pg, "ties", "vg-query").args(["--no-index", "--mode", "lexical", "-k", k, "walrus"]));
        assert_code(&o, 0);
        assert_eq!(records(&o)[0]["file"], "a/f999.rs", "-k {k}: {}", stdout(&o));
    }
}

/// Equal matches in a scoped search, after rewrites that left their
/// chunks' ids out of file order: the shared index ranks them as the local
/// one does (review 215: Postgres summed each chunk's terms in the order
/// its rows came, so equal texts scored a last bit apart and split).
#[test]
fn equal_scores_in_a_scoped_search_go_by_file_as_in_the_local_index() {
    let pg = PgServer::start();
    let t = Tree::git();
    let text = "def alpha_beta():\n    return gamma_delta\n";
    for i in 1..=6 {
        t.write(&format!("src/t{i}.py"), text).write(&format!("lib/t{i}.py"), text);
    }
    for i in 1..=30 {
        t.write(&format!("fill/f{i}.py"), &format!("def helper_{i}(x):\n    return x*{i}\n"));
    }
    let both = |t: &Tree| {
        assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
        assert_code(&run(&mut shared(t, &pg, "ties", "vg-index")), 0);
    };
    both(&t);
    for _ in 0..2 {
        for body in ["x = 1\n", text] {
            for i in 1..=3 {
                t.write(&format!("src/t{i}.py"), body).write(&format!("lib/t{i}.py"), body);
            }
            both(&t);
        }
    }
    let scoped: &[&[&str]] = &[
        &["--mode", "lexical", "-k", "1", "alpha_beta", "lib/t2.py", "lib/t3.py", "lib/t4.py", "lib/t5.py"],
        &["--mode", "lexical", "-k", "3", "alpha_beta", "lib/"],
        &["--mode", "hybrid", "-k", "3", "alpha_beta", "lib/"],
        &["--mode", "lexical", "-k", "2", "alpha_beta gamma_delta"],
    ];
    for args in scoped {
        let local = hits(&run(t.cmd("vg-query", ".").arg("--no-index").args(*args)));
        assert!(!local.is_empty(), "{args:?}");
        assert_eq!(hits(&run(shared(&t, &pg, "ties", "vg-query").arg("--no-index").args(*args))), local, "{args:?}");
    }
    let first = run(shared(&t, &pg, "ties", "vg-query").arg("--no-index").args(scoped[0]));
    assert_eq!(records(&first)[0]["file"], "lib/t2.py", "{}", stdout(&first));
}

/// A first run that failed before any file leaves no index to search, as
/// a local one (review 215: "incomplete" and no results, exit 1).
#[test]
fn a_first_run_that_failed_before_any_file_leaves_no_index_to_search() {
    let pg = PgServer::start();
    let t = Tree::git();
    t.write("a.py", "def alpha():\n    pass\n").write_bytes(".gitignore", b"# caf\xe9\n");
    assert_code(&run(&mut shared(&t, &pg, "failed", "vg-index")), 2);
    let o = run(shared(&t, &pg, "failed", "vg-query").args(["--no-index", "--mode", "lexical", "alpha"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no index at project failed in the postgres database"), "{}", stderr(&o));
}

#[test]
fn projects_in_one_database_never_mix_under_readers_and_a_writer() {
    let pg = PgServer::start();
    let a = sample_project();
    let b = handlers_project(150);
    assert_code(&run(&mut shared(&a, &pg, "a", "vg-index")), 0);
    let a_files: HashSet<String> =
        ["src/upload.py", "src/config.py", "src/geometry.rs", "docs/guide.md"].map(String::from).into();
    // A writer indexes project b while 8 clients search project a.
    let mut writer =
        shared(&b, &pg, "b", "vg-index").arg("--full").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let searches: usize = std::thread::scope(|s| {
        let clients: Vec<_> = (0..8)
            .map(|i| {
                let (a, pg, a_files) = (&a, &pg, &a_files);
                s.spawn(move || {
                    let query = ["retry a failed upload", "handle a request", "settings", "circle area"][i % 4];
                    let mut n = 0;
                    for _ in 0..6 {
                        let o = run(shared(a, pg, "a", "vg-query").args(["--no-index", "--threshold", "-1", query]));
                        assert_code(&o, 0);
                        for h in hits(&o) {
                            assert!(a_files.contains(&h.file), "project a's search returned {} of project b", h.file);
                        }
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).sum()
    });
    assert_eq!(searches, 48);
    let status = writer.wait().unwrap();
    assert!(status.success());
    let vb = verify(&mut shared(&b, &pg, "b", "vg-index"));
    assert_eq!((vb["ok"].clone(), vb["files"].clone()), (Value::Bool(true), Value::from(154)), "{vb}");
    let va = verify(&mut shared(&a, &pg, "a", "vg-index"));
    assert_eq!(va["files"], 4, "{va}");
    // Unnamed, two checkouts are kept apart too (by the path of each root).
    let unnamed = |t: &Tree| {
        let mut c = t.cmd("vg-index", ".");
        c.args(["--store", &pg.url]);
        summary(&run(&mut c))["files"].clone()
    };
    assert_eq!((unnamed(&a), unnamed(&b)), (Value::from(4), Value::from(154)));
}

#[test]
fn a_model_vector_of_zeros_is_damage_to_verify_on_a_shared_index() {
    let pg = PgServer::start();
    let t = handlers_project(120);
    assert_code(&run(shared(&t, &pg, "z", "vg-index").arg("--full")), 0);
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    assert_eq!(verify(&mut shared(&t, &pg, "z", "vg-index"))["ok"], true);
    // The same chunk's vector all zeros in both stores.
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    let zeros = format!("'[{}]'", vec!["0"; 384].join(","));
    let damaged = format!(
        "UPDATE {schema}.chunks SET embedding = {zeros} WHERE start_line = 1
           AND file_id = (SELECT id FROM {schema}.files WHERE path = 'pkg/mod000.py') RETURNING 1"
    );
    assert_eq!(pg.sql(&damaged).unwrap(), "1");
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let sql = "UPDATE chunks SET embedding = ?1
               WHERE start_line = 1 AND file_id = (SELECT id FROM files WHERE path = 'pkg/mod000.py')";
    assert_eq!(db.execute(sql, [0f32.to_le_bytes().repeat(384)]).unwrap(), 1);
    drop(db);
    let v = verify(&mut shared(&t, &pg, "z", "vg-index"));
    assert!(v["problems"].to_string().contains("1 vectors are zero or not finite"), "{v}");
    // A search passes it over as the local index does, and it takes no
    // other chunk's place among the nearest (Postgres sorts NaN first).
    // More chunks than the nearest's 100 places, so that one given to the
    // damaged chunk shows as a hit fewer.
    let stats = records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])));
    assert!(stats[0]["chunks"].as_u64().unwrap() > 100, "{stats:?}");
    let args = ["--no-index", "--mode", "semantic", "-k", "100", "--threshold", "-1", "handle the request"];
    let local = hits(&run(t.cmd("vg-query", ".").args(args)));
    assert!(local.len() > 50, "{}", local.len());
    assert_eq!(hits(&run(shared(&t, &pg, "z", "vg-query").args(args))), local);
    // A static vector of another size fails every search: damage, as the local check says.
    let resized = format!(
        "UPDATE {schema}.chunks SET static_embedding = '[1,2,3]' WHERE start_line = 1
           AND file_id = (SELECT id FROM {schema}.files WHERE path = 'pkg/mod001.py') RETURNING 1"
    );
    assert_eq!(pg.sql(&resized).unwrap(), "1");
    let v = verify(&mut shared(&t, &pg, "z", "vg-index"));
    assert!(v["problems"].to_string().contains("1 static vectors have the wrong size"), "{v}");
    // `--verify` said "vg-index rebuilds it": the next run, whose files are
    // unchanged, does (it kept the damage, and searches kept its wrong
    // results, until --reindex: audit 228).
    let o = run(&mut shared(&t, &pg, "z", "vg-index"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index of") && stderr(&o).contains("it is damaged"), "{}", stderr(&o));
    assert_eq!(verify(&mut shared(&t, &pg, "z", "vg-index"))["ok"], true);
    // A mark whose damage is gone is dropped, and the run changes nothing.
    let marked = format!("INSERT INTO {schema}.meta VALUES ('damage_found', 'x') RETURNING 1");
    assert_eq!(pg.sql(&marked).unwrap(), "1");
    let o = run(&mut shared(&t, &pg, "z", "vg-index"));
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    assert_eq!(summary(&o)["rebuilt"], false);
    assert_eq!(pg.sql(&format!("SELECT count(*) FROM {schema}.meta WHERE key = 'damage_found'")).unwrap(), "0");
}

#[test]
fn a_writer_killed_at_ten_moments_leaves_the_shared_index_sound_and_resumable() {
    let pg = PgServer::start();
    let t = handlers_project(120);
    let clean = handlers_project(120);
    // Ten phases of the runs, told by their own file records (a clock would
    // interrupt other phases on a faster or slower machine), in an order no
    // schedule of ours chose; a run with fewer files left ends on its own.
    let mut phases: Vec<usize> = vec![1, 2, 4, 8, 12, 20, 30, 45, 60, 90];
    phases.sort_by_key(|p| (p * 7919) % 1009);
    let mut told_incomplete = 0;
    for (n, files) in phases.into_iter().enumerate() {
        let seen = kill_after_file_records(&mut shared(&t, &pg, "t", "vg-index"), files);
        let v = verify(&mut shared(&t, &pg, "t", "vg-index"));
        assert_eq!(v["ok"], true, "after a kill once {seen} files were written: {v}");
        told_incomplete += usize::from(v["complete"] == false);
        t.write("pkg/mod000.py", &format!("def handler_0(request):\n    return {n}\n"));
        clean.write("pkg/mod000.py", &format!("def handler_0(request):\n    return {n}\n"));
    }
    let o = run(&mut shared(&t, &pg, "t", "vg-index"));
    assert_code(&o, 0);
    let expected = summary(&run(&mut shared(&clean, &pg, "clean", "vg-index")));
    let v = verify(&mut shared(&t, &pg, "t", "vg-index"));
    assert_eq!((v["ok"].as_bool(), v["complete"].as_bool()), (Some(true), Some(true)), "{v}");
    assert!(told_incomplete > 0, "a sound index a kill left partial is said to be incomplete");
    assert_eq!((v["files"].clone(), v["chunks"].clone()), (expected["files"].clone(), expected["chunks"].clone()));
    let q = run(shared(&t, &pg, "t", "vg-query").args(["--no-index", "retry a failed upload"]));
    assert_code(&q, 0);
    assert_eq!(records(&q)[0]["file"], "src/upload.py");
}

/// The server may end the session that holds a writer's lock while the
/// writer lives (an admin, an idle timeout, a network cut); another run
/// could then take the lock. The writer sees it at its next change, keeps
/// nothing more and says so, and the index it leaves is sound. Once, it
/// wrote on beside the next writer, both exiting 0.
#[test]
fn a_writer_whose_lock_the_server_let_go_stops_and_leaves_the_index_sound() {
    let pg = PgServer::start();
    let t = handlers_project(1200);
    use std::io::{BufRead, Read};
    let mut child = shared(&t, &pg, "t", "vg-index").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("\"type\":\"file\"") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the run ended before it wrote a file");
    }
    // Its other file records, unread, fill the pipe: it waits mid-run,
    // holding the lock in a session of its own, idle between questions.
    let ended = "SELECT count(pg_terminate_backend(l.pid, 10000)) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                 WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle'";
    assert_eq!(pg.sql(ended).unwrap(), "1");
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("the writer lock was lost"), "{}", stderr(&o));
    let files_written = rest.matches("\"type\":\"file\"").count() + 1;
    assert!(files_written < 1200, "it stopped before the end: {files_written}");
    assert_eq!(verify(&mut shared(&t, &pg, "t", "vg-index"))["ok"], true);
    let o = run(&mut shared(&t, &pg, "t", "vg-index"));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["files"], 1204);
}

/// A table or column dropped from a project's schema is damage, as in the
/// local index: a search and --verify say so, and the next run rebuilds
/// it. A dropped word table was an SQL error that --reindex repeated; a
/// dropped meta table made every run fail on "relation files already
/// exists".
#[test]
fn a_missing_table_or_column_in_the_shared_index_is_damage_the_next_run_rebuilds() {
    let pg = PgServer::start();
    let t = sample_project();
    // A project never indexed there has nothing to remove, as locally.
    let o = run(shared(&t, &pg, "never", "vg-index").arg("--clear-cache"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("project never in the postgres database vecgrep"), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds no index to remove"), "{}", stderr(&o));
    assert_code(&run(&mut shared(&t, &pg, "t", "vg-index")), 0);
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    for (drop, missing) in [
        ("DROP TABLE {s}.chunk_terms", "no such table: chunk_terms"),
        ("DROP TABLE {s}.term_stats", "no such table: term_stats"),
        ("ALTER TABLE {s}.chunks DROP COLUMN static_embedding", "no such column: chunks.static_embedding"),
        // Altered by hand to another type: every search failed with the
        // server's words, and no run rebuilt it (audit 190).
        (
            "ALTER TABLE {s}.chunks ALTER COLUMN embedding TYPE text",
            "column chunks.embedding is of type text, not vector",
        ),
        ("DROP TABLE {s}.meta", "no such table: meta"),
    ] {
        pg.sql(&drop.replace("{s}", &format!("\"{schema}\""))).unwrap();
        if !drop.contains("meta") {
            let o = run(shared(&t, &pg, "t", "vg-query").args(["--no-index", "--mode", "lexical", "retry"]));
            assert_code(&o, 2);
            assert!(stderr(&o).contains(&format!("is damaged ({missing})")), "{drop}: {}", stderr(&o));
            assert_eq!(verify(&mut shared(&t, &pg, "t", "vg-index"))["ok"], false, "{drop}");
        }
        let o = run(&mut shared(&t, &pg, "t", "vg-index"));
        assert_code(&o, 0);
        assert!(
            stderr(&o).contains("rebuilding the index of") && stderr(&o).contains(missing),
            "{drop}: {}",
            stderr(&o)
        );
        assert_eq!(summary(&o)["files"], 4, "{drop}");
        let v = verify(&mut shared(&t, &pg, "t", "vg-index"));
        assert_eq!((v["ok"].as_bool(), v["files"].as_u64()), (Some(true), Some(4)), "{drop}: {v}");
    }
}

/// A role that may not create schemas in the database is told what it
/// lacks: making `vecgrep_writers` for it (as the README once said) is not
/// enough, each project being a schema of its own.
#[test]
fn a_role_that_may_not_create_a_projects_schema_is_told_the_right_it_lacks() {
    let pg = PgServer::start();
    let t = sample_project();
    assert_code(&run(&mut shared(&t, &pg, "first", "vg-index")), 0);
    pg.sql(
        "CREATE ROLE limited LOGIN; GRANT USAGE ON SCHEMA vecgrep_writers TO limited;
         GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA vecgrep_writers TO limited",
    )
    .unwrap();
    let url = pg.url.replace("user=vecgrep", "user=limited");
    assert_ne!(url, pg.url);
    let o = run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "second"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("permission denied for database"), "{}", stderr(&o));
    assert!(stderr(&o).contains("GRANT CREATE ON DATABASE"), "{}", stderr(&o));
    pg.sql("GRANT CREATE ON DATABASE vecgrep TO limited").unwrap();
    let o = run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "second"]));
    assert_code(&o, 0);
}

/// The SQL that makes `role` another writer of the project whose schema is
/// `schema`, with the grants README gives (`co_writer_schema_grants` for
/// those of the schema alone, which a rebuild makes anew).
fn co_writer(role: &str, schema: &str) -> String {
    format!(
        "CREATE ROLE {role} LOGIN; GRANT USAGE ON SCHEMA vecgrep_writers TO {role};
         GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA vecgrep_writers TO {role}; {}",
        co_writer_schema_grants(role, schema)
    )
}

/// README's grants of a project's schema to another writer `role`.
fn co_writer_schema_grants(role: &str, schema: &str) -> String {
    format!(
        "GRANT USAGE ON SCHEMA {schema} TO {role}; GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO {role};
         GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO {role};"
    )
}

/// An index made before vecgrep kept ctimes gains the column from its
/// owner's next run; another role that may write it but not alter it is
/// told so, once, until then, and writes to it afterwards.
#[test]
fn a_writer_that_may_not_add_the_ctime_column_is_told_who_may() {
    let pg = PgServer::start();
    let t = sample_project();
    assert_code(&run(&mut shared(&t, &pg, "t", "vg-index")), 0);
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    pg.sql(&format!("{} ALTER TABLE {schema}.files DROP COLUMN ctime_ns", co_writer("other", &schema))).unwrap();
    let url = pg.url.replace("user=vecgrep", "user=other");
    let as_other = || run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "t"]));
    let o = as_other();
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("only its owner, role vecgrep, may add the column"), "{}", stderr(&o));
    let o = run(&mut shared(&t, &pg, "t", "vg-index"));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    assert_code(&as_other(), 0);
    // So with the word bounds' table (review 236: "permission denied for schema").
    pg.sql(&format!("DROP TABLE {schema}.term_stats; DELETE FROM {schema}.meta WHERE key = 'term_stats_at'")).unwrap();
    let o = as_other();
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("only its owner, role vecgrep, may add their table"), "{}", stderr(&o));
    assert_code(&run(&mut shared(&t, &pg, "t", "vg-index")), 0);
    pg.sql(&co_writer_schema_grants("other", &schema)).unwrap();
    assert_code(&as_other(), 0);
}

/// Damage `--verify` marked is rebuilt by the owner's next run; a role the
/// README lets write beside the owner, which may not drop the owner's
/// schema, goes on with the index as it is (its every run and search failed
/// on "must be owner"), and a role that may only read is told that the
/// damage could not be marked (review 230).
#[test]
fn marked_damage_is_the_owners_to_rebuild_and_a_reader_that_cannot_mark_it_says_so() {
    let pg = PgServer::start();
    let t = sample_project();
    // Files settled before they are read, so that no later run reads them
    // again: one that did would find the damage (`index::kept`) and mend it.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_code(&run(&mut shared(&t, &pg, "t", "vg-index")), 0);
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    pg.sql(&format!(
        "{} CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA vecgrep_writers, {schema} TO reader;
         GRANT SELECT ON ALL TABLES IN SCHEMA vecgrep_writers, {schema} TO reader;
         UPDATE {schema}.chunks SET start_line = 0 WHERE id = (SELECT min(id) FROM {schema}.chunks)",
        co_writer("other", &schema)
    ))
    .unwrap();
    let as_role = |role: &str, args: &[&str]| {
        let url = pg.url.replace("user=vecgrep", &format!("user={role}"));
        run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "t"]).args(args))
    };
    let o = as_role("reader", &["--verify"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is damaged; vg-index --reindex, run by the index's owner, rebuilds it"),
        "{}",
        stderr(&o)
    );
    // The co-writer may leave the mark, which its own runs leave to the owner's.
    let o = as_role("other", &["--verify"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is damaged; vg-index --reindex, run by the index's owner, rebuilds it"),
        "{}",
        stderr(&o)
    );
    let o = as_role("other", &[]);
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    let o = run(&mut shared(&t, &pg, "t", "vg-index"));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index of"), "{}", stderr(&o));
    assert_eq!(verify(&mut shared(&t, &pg, "t", "vg-index"))["ok"], true);
    // Damage an open finds, which only a rebuild mends, is told to be the
    // owner's to rebuild: it failed on "must be owner of schema" (review 231).
    let dropped = format!("ALTER TABLE {schema}.chunks DROP COLUMN end_line");
    pg.sql(&format!("{} {dropped}", co_writer_schema_grants("other", &schema))).unwrap();
    let o = as_role("other", &["--verify"]);
    assert!(stderr(&o).contains("run by the index's owner, rebuilds it"), "{}", stderr(&o));
    let o = as_role("other", &[]);
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("only its owner, role vecgrep, may rebuild it"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("must be owner"), "{}", stderr(&o));
    assert_code(&run(&mut shared(&t, &pg, "t", "vg-index")), 0);
}

/// A member of the owning role rebuilds the index as the owner: made as
/// itself, the schema and its tables became the member's, and an owner
/// that is no superuser was then refused its own index (review 233).
#[test]
fn a_member_of_the_owning_role_rebuilds_the_index_as_the_owner() {
    let pg = PgServer::start();
    let t = sample_project();
    assert_code(&run(&mut shared(&t, &pg, "t", "vg-index")), 0);
    let schema = pg.sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    pg.sql(&format!("CREATE ROLE member LOGIN IN ROLE vecgrep; ALTER TABLE {schema}.chunks DROP COLUMN end_line"))
        .unwrap();
    let url = pg.url.replace("user=vecgrep", "user=member");
    let o = run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "t"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index of"), "{}", stderr(&o));
    let owners = |what: &str| pg.sql(what).unwrap();
    assert_eq!(
        owners(&format!("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = '{schema}'")),
        "vecgrep"
    );
    let tables = format!("SELECT string_agg(DISTINCT tableowner, ',') FROM pg_tables WHERE schemaname = '{schema}'");
    assert_eq!(owners(&tables), "vecgrep");
    // The session is the member's again once the index is made.
    let o = run(t.cmd("vg-query", ".").args(["--store", &url, "--store-project", "t", "--no-index", "area"]));
    assert_code(&o, 0);
    let o = run(&mut shared(&t, &pg, "t", "vg-index"));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    // A table an older index lacks is made as the owner too (review 236:
    // the member's term_stats locked a non-superuser owner out).
    pg.sql(&format!("DROP TABLE {schema}.term_stats; DELETE FROM {schema}.meta WHERE key = 'term_stats_at'")).unwrap();
    assert_code(&run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "t"])), 0);
    let owner = format!("SELECT tableowner FROM pg_tables WHERE schemaname = '{schema}' AND tablename = 'term_stats'");
    assert_eq!(owners(&owner), "vecgrep");
    // A member that may not act as the owner (no SET) rebuilds nothing:
    // it made the schema anew as its own.
    pg.sql(&format!("CREATE ROLE noset LOGIN; GRANT vecgrep TO noset WITH SET FALSE; ALTER TABLE {schema}.chunks DROP COLUMN end_line"))
        .unwrap();
    let url = pg.url.replace("user=vecgrep", "user=noset");
    let o = run(t.cmd("vg-index", ".").args(["--store", &url, "--store-project", "t"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("only its owner, role vecgrep, may rebuild it"), "{}", stderr(&o));
    assert_eq!(
        owners(&format!("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = '{schema}'")),
        "vecgrep"
    );
}

/// A run waiting for another's lock whose connection the server ends (a
/// restart, a stop) says so with status 2: the broken pipe of the
/// database's socket was taken for a closed stdout (`| head`), and the run
/// ended with status 0, nothing done and nothing said.
#[test]
fn a_run_waiting_for_the_lock_when_the_server_goes_away_says_so() {
    use std::io::{BufRead, Read};
    let pg = PgServer::start();
    let t = handlers_project(40);
    let mut holder = shared(&t, &pg, "t", "vg-index").stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    // Its first file record comes once it holds the lock; stopped there, it
    // holds it as long as the test needs.
    let mut told = std::io::BufReader::new(holder.stdout.take().unwrap());
    told.read_line(&mut String::new()).unwrap();
    let pid = holder.id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    let mut waiter = shared(&t, &pg, "t", "vg-index").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut err = std::io::BufReader::new(waiter.stderr.take().unwrap());
    let mut said = String::new();
    err.read_line(&mut said).unwrap();
    assert!(said.contains("waiting for another index run"), "{said}");
    let stopped = crate::common::pg_server::pg_script_on(&["stop"], pg.dir.path());
    assert!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    let status = waiter.wait().unwrap();
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(2), "{rest}");
    assert_eq!(rest.lines().count(), 1, "{rest}");
    assert!(rest.starts_with("vg-index: index project t in the postgres database"), "{rest}");
    let _ = Command::new("kill").args(["-KILL", &pid]).status();
    let _ = holder.wait();
}

#[test]
fn the_store_url_is_never_printed_and_a_project_may_not_choose_it() {
    let pg = PgServer::start();
    let t = sample_project();
    let host = pg.dir.path().canonicalize().unwrap();
    let secret = format!("postgres://vecgrep:hunter2@/vecgrep?host={}", host.display());
    let mut outputs = vec![run(t.cmd("vg-index", ".").args(["--store", &secret]))];
    assert_code(&outputs[0], 0);
    outputs.push(run(t.cmd("vg-index", ".").args(["--store", &secret, "--stats", "--json"])));
    // A server that is not there: one line naming the database, not the URL.
    let gone = "postgres://vecgrep:hunter2@/vecgrep?host=/nonexistent/socket/dir";
    let o = run(t.cmd("vg-query", ".").args(["--store", gone, "--no-index", "upload"]));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-query: ") && err.trim().lines().count() == 1, "{err}");
    assert!(err.contains("connect to project") && err.contains("database vecgrep on /nonexistent/socket/dir"), "{err}");
    outputs.push(o);
    // Not a Postgres URL: the setting's own error, without the value.
    let o = run(t.cmd("vg-query", ".").args(["--store", "mysql://root:hunter2@db/x", "upload"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("store_url must be a postgres:// or postgresql:// URL"), "{}", stderr(&o));
    outputs.push(o);
    for o in &outputs {
        let all = format!("{}{}", stdout(o), stderr(o));
        assert!(!all.contains("hunter2"), "the password was printed: {all}");
    }
    // A repository's own config may not send its code to a database.
    let other = sample_project();
    other.project_config(&format!("store_url = \"{secret}\"\n"));
    let o = run(&mut other.cmd("vg-index", "."));
    assert_code(&o, 0);
    let said = "ignoring store_url of";
    let why = "may not choose where its code is sent;";
    assert!(stderr(&o).contains(said) && stderr(&o).contains(why), "{}", stderr(&o));
    assert!(other.path().join(".vecgrep/index.db").is_file(), "the index stayed local");
    assert!(!stderr(&o).contains("hunter2"));
}

/// Issue 42: a cloned repository whose own config names another project
/// (`store_project`) neither writes into that project's shared index nor
/// clears it; a checkout named onto another's project on purpose must be
/// told to adopt it, and is a writer from then on.
#[test]
fn a_repository_cannot_poison_or_clear_another_projects_shared_index() {
    let pg = PgServer::start();
    let victim = sample_project();
    let global = format!("store_url = \"{}\"\nstore_project = \"payments-api\"\n", pg.url);
    victim.global_config(&global);
    assert_code(&run(&mut victim.cmd("vg-index", ".")), 0);
    let attacker = Tree::git();
    attacker.write("src/upload.py", "def upload_with_retry(client, blob):\n    send_to_attacker(blob)\n");
    attacker.global_config(&format!("store_url = \"{}\"\n", pg.url));
    attacker.project_config("store_project = \"payments-api\"\n");
    // The project's own file may not choose the shared index: its own is used.
    let o = run(attacker.cmd("vecgrep", ".").args(["--json", "retry a failed upload"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("ignoring store_project of"), "{}", stderr(&o));
    assert_code(&run(attacker.cmd("vg-index", ".").arg("--clear-cache")), 0);
    let victims_index = |why: &str| {
        let v = verify(&mut victim.cmd("vg-index", "."));
        assert_eq!((v["ok"].clone(), v["files"].clone()), (Value::Bool(true), Value::from(4)), "{why}: {v}");
        let q = run(victim.cmd("vg-query", ".").args(["--no-index", "retry a failed upload"]));
        assert!(records(&q)[0]["text"].as_str().unwrap().contains("ConnectionError"), "{why}: {}", stdout(&q));
    };
    victims_index("after the attacker's config named it");
    // Named on the command line (or by a trusted config), it is still
    // another checkout's: refused, with how to adopt it.
    for args in [&[][..], &["--clear-cache"][..], &["--reindex"][..]] {
        let mut c = attacker.cmd("vg-index", ".");
        let o = run(c.args(["--store-project", "payments-api"]).args(args));
        assert_code(&o, 2);
        // One line says why (a note that it waited for the victim's search to let go of the lock may come first).
        let err = stderr(&o);
        let last = err.trim().lines().last().unwrap_or_default();
        assert!(err.lines().all(|l| l.starts_with("vg-index: ")), "{err}");
        assert!(last.contains("project payments-api") && last.contains("--store-adopt"), "{err}");
        assert!(last.contains(&format!(":{}", victim.path().display())), "names the creator: {err}");
    }
    let o = run(attacker.cmd("vg-index", ".").args(["--trust-project-config"]));
    assert_code(&o, 2);
    victims_index("after the attacker's runs were refused");
    // Another checkout of the project joins when told to, once.
    let colleague = sample_project();
    colleague.write("src/extra.py", "def refund_payment(card):\n    return card.refund()\n");
    colleague.global_config(&global);
    assert_code(&run(colleague.cmd("vg-index", ".").arg("--store-adopt")), 0);
    let o = run(&mut colleague.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["files"], 5);
    // An index left by a vecgrep that kept no writers is adopted only when told to.
    pg.sql("DELETE FROM vecgrep_writers.writers").unwrap();
    let o = run(&mut victim.cmd("vg-index", "."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("an older vecgrep"), "{}", stderr(&o));
    assert_code(&run(victim.cmd("vg-index", ".").arg("--store-adopt")), 0);
    assert_code(&run(&mut victim.cmd("vg-index", ".")), 0);
}

/// A project's git revisions are written by the project's writers: a
/// checkout that may not write a project may not make or change the index
/// of one of its revisions (kept as `<project>@<sha>`, which once had
/// writers of its own, first come), nor name that index itself.
/// Two releases indexed into `pg` as project `releases` by their checkout,
/// and a clone of them that is no writer of it.
fn releases_and_a_clone(pg: &PgServer) -> (Tree, Tree) {
    let owner = crate::revisions::two_releases();
    assert_code(&run(&mut shared(&owner, pg, "releases", "vg-index")), 0);
    let clone = Tree::bare();
    let cloned = Command::new("git").args(["clone", "-q"]).arg(owner.path()).arg(clone.path()).output().unwrap();
    assert!(cloned.status.success(), "{}", String::from_utf8_lossy(&cloned.stderr));
    (owner, clone)
}

#[test]
fn a_checkout_that_may_not_write_a_project_may_not_write_its_revisions() {
    let pg = PgServer::start();
    let (owner, stranger) = releases_and_a_clone(&pg);
    let sha = git(&owner, &["rev-parse", "v1"]);
    let finds_the_config_at_v1 = |checkout: &Tree| {
        let args = ["--rev", "v1", "--threshold", "-1", "read key value lines"];
        let q = run(shared(checkout, &pg, "releases", "vg-query").args(args));
        assert_code(&q, 0);
        assert_eq!(records(&q)[0]["file"], "src/config.py");
    };
    // First to its revision: refused, as at the project itself.
    let o = run(shared(&stranger, &pg, "releases", "vg-index").args(["--rev", "v1"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(&format!("project releases@{sha}")), "{}", stderr(&o));
    assert!(stderr(&o).contains("--store-adopt"), "{}", stderr(&o));
    // The project's writer indexes it, and stays its only writer.
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").args(["--rev", "v1"])), 0);
    // Made whole by its writer, it is read by the stranger as it is: indexed
    // already, searched, nothing written (it was refused as at first).
    let o = run(shared(&stranger, &pg, "releases", "vg-index").args(["--rev", "v1"]));
    assert!(o.status.success() && stderr(&o).contains("is indexed already"), "{}", stderr(&o));
    finds_the_config_at_v1(&stranger);
    let writers = pg.sql("SELECT project || ' ' || creator::text FROM vecgrep_writers.writers ORDER BY 1").unwrap();
    assert_eq!(writers, "releases true", "{writers}");
    // Its index may not be named as a project of its own.
    let o = run(&mut shared(&stranger, &pg, &format!("releases@{sha}"), "vg-index"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("store_project may not end in @ and a full commit id"), "{}", stderr(&o));
    finds_the_config_at_v1(&owner);
}

/// A checkout's own index of a revision and a shared index's of the same
/// revision are kept apart: a shared run refused (or killed) marked the
/// local one unfinished, and `--store ... --forget` of a revision the
/// store never held removed the local index.
#[test]
fn a_revisions_local_index_and_a_shared_ones_never_mix() {
    let pg = PgServer::start();
    let (owner, t) = releases_and_a_clone(&pg);
    assert_code(&run(t.cmd("vg-index", ".").args(["--rev", "v1"])), 0);
    let search = |t: &Tree| run(t.cmd("vg-query", ".").args(["--no-index", "--rev", "v1", "read key value lines"]));
    assert_code(&search(&t), 0);
    // Another's shared project: refused, and the local index is as it was.
    assert_code(&run(shared(&t, &pg, "releases", "vg-index").args(["--rev", "v1"])), 2);
    assert_code(&search(&t), 0);
    // Once the project's writer indexed the revision there, this checkout
    // reads it as it reads the project's own shared index; the refusal
    // left no mark calling it unfinished.
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").args(["--rev", "v1"])), 0);
    let o = run(shared(&t, &pg, "releases", "vg-query").args(["--no-index", "--rev", "v1", "read key value lines"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/config.py");
    // A store that never held the revision has none to forget.
    let o = run(shared(&t, &pg, "other", "vg-index").args(["--forget", "v1"]));
    assert_code(&o, 2);
    assert_code(&search(&t), 0);
    let stats = stdout(&run(t.cmd("vg-index", ".").arg("--stats")));
    assert!(stats.contains("revision") && !stats.contains("incomplete"), "{stats}");
    // And the other way: the store's revision is forgotten there alone.
    assert_code(&run(owner.cmd("vg-index", ".").args(["--rev", "v1"])), 0);
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").args(["--forget", "v1"])), 0);
    assert_code(&search(&owner), 0);
    // Clearing clears both: the checkout's revisions are its cache too.
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").arg("--clear-cache")), 0);
    assert_code(&search(&owner), 2);
}

/// A revision another checkout of the shared project indexed is cleared
/// and forgotten with the project's, for every checkout, as said (audit
/// 263: a clear said so and left it searchable; a forget removed it and
/// said it had no index, exit 2).
#[test]
fn a_clear_or_a_forget_reaches_the_revisions_other_checkouts_indexed() {
    let pg = PgServer::start();
    let (owner, clone) = releases_and_a_clone(&pg);
    let index_v1 = || run(shared(&clone, &pg, "releases", "vg-index").args(["--store-adopt", "--rev", "v1"]));
    let search_v1 =
        || run(shared(&clone, &pg, "releases", "vg-query").args(["--no-index", "--rev", "v1", "read key value lines"]));
    // A schema named as vecgrep names them, which any role may make, whose
    // `meta` runs code when read: a clear must never read it (review 266).
    pg.sql(
        "CREATE TABLE public.ran (x int);
         CREATE FUNCTION public.planted() RETURNS text LANGUAGE sql AS $$ INSERT INTO public.ran VALUES (1) RETURNING 'x' $$;
         CREATE SCHEMA vg_0123456789abcdef01234567;
         CREATE VIEW vg_0123456789abcdef01234567.meta AS SELECT 'project'::text AS key, public.planted() AS value;",
    )
    .unwrap();
    let schemas = || {
        pg.sql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'vg\\_%' AND nspname <> 'vg_0123456789abcdef01234567'").unwrap()
    };
    assert_code(&index_v1(), 0);
    assert_code(&search_v1(), 0);
    assert_eq!(schemas(), "2", "the project's and its revision's");
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").args(["--forget", "v1"])), 0);
    assert_code(&search_v1(), 2);
    assert_eq!(schemas(), "1");
    assert_code(&index_v1(), 0);
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").arg("--clear-cache")), 0);
    assert_eq!(schemas(), "0", "every checkout's revisions went with the project's index");
    assert_code(&search_v1(), 2);
    assert_eq!(pg.sql("SELECT count(*) FROM public.ran").unwrap(), "0", "the planted view was read");
}

/// `--verify` checks a shared store's revision indexes too: it skipped
/// every one, having no file of theirs to look for.
#[test]
fn verify_checks_the_stores_revision_indexes() {
    let pg = PgServer::start();
    let (owner, _) = releases_and_a_clone(&pg);
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").args(["--rev", "v1"])), 0);
    assert_code(&run(shared(&owner, &pg, "releases", "vg-index").arg("--verify")), 0);
    let schemas = pg.sql("SELECT string_agg(nspname, ' ') FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    for schema in schemas.split_whitespace() {
        pg.sql(&format!("DROP TABLE \"{schema}\".chunk_terms")).unwrap();
    }
    let o = run(shared(&owner, &pg, "releases", "vg-index").arg("--verify"));
    assert_code(&o, 2);
    assert!(stdout(&o).contains("problem: revision "), "{}", stdout(&o));
}

#[test]
fn another_static_table_is_applied_to_a_shared_index_in_place() {
    let pg = PgServer::start();
    let t = handlers_project(8);
    let dir = tempfile::tempdir().unwrap();
    let other = crate::tiers::another_table(dir.path());
    let table = vecgrep::embed::TABLE_OVERRIDE_VAR;
    assert_code(&run(&mut shared(&t, &pg, "demo", "vg-index")), 0);
    let o = run(shared(&t, &pg, "demo", "vg-index").env(table, &other));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("recomputing the chunks' static vectors, keeping the model's"), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!((s["rebuilt"].as_bool(), s["embedded"].as_u64()), (Some(false), Some(0)), "{s}");
    assert_eq!(verify(shared(&t, &pg, "demo", "vg-index").env(table, &other))["ok"], true);
    // Its static vectors rank as a local index built with that table does.
    assert_code(&run(t.cmd("vg-index", ".").env(table, &other)), 0);
    for q in ["register a route handler", "parse the request body"] {
        let args = ["--no-index", "--mode", "semantic", "-k", "20", "--threshold", "0", q];
        let local = hits(&run(t.cmd("vg-query", ".").args(args).env(table, &other)));
        assert!(!local.is_empty(), "{q}");
        assert_eq!(hits(&run(shared(&t, &pg, "demo", "vg-query").args(args).env(table, &other))), local, "{q}");
    }
}

#[test]
fn a_revision_is_indexed_into_the_shared_store_from_a_checkout_without_a_local_index() {
    let pg = PgServer::start();
    let t = crate::revisions::two_releases();
    assert!(!t.path().join(".vecgrep").exists());
    let o = run(shared(&t, &pg, "releases", "vecgrep").args([
        "--rev",
        "v1",
        "--json",
        "--threshold",
        "-1",
        "read key value lines",
    ]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/config.py", "{}", stderr(&o));
    // The run completed: the next search asks nothing to be indexed again.
    let o = run(shared(&t, &pg, "releases", "vg-index").arg("--stats"));
    assert!(stdout(&o).contains("revision") && !stdout(&o).contains("incomplete"), "{}", stdout(&o));
}

/// Declined at the large-run question, a first run into the shared store
/// leaves nothing there, as it leaves no local index: the project's and a
/// revision's indexes stayed, empty, and --stats called them incomplete.
#[test]
fn a_first_run_declined_at_the_question_leaves_no_shared_index() {
    let pg = PgServer::start();
    let t = crate::revisions::two_releases();
    if !script_is_here() {
        return;
    }
    let declined = |rev: &[&str], project: &str| {
        let store = format!("--store '{}' --store-project {project}", pg.url);
        let cmd = format!("{} {store} {} --index-warn-threshold 1", bin("vg-index").display(), rev.join(" "));
        let o = on_a_terminal(&t, &cmd, "n\n").expect("script is here");
        assert!(stdout(&o).contains("Continue? [y/N]"), "{rev:?}: {}", stdout(&o));
    };
    for (rev, project) in [(&[][..], "declined"), (&["--rev", "v1"], "declined-at-v1")] {
        declined(rev, project);
        let o = run(shared(&t, &pg, project, "vg-index").arg("--stats"));
        assert!(!stdout(&o).contains("incomplete"), "{rev:?}: {}", stdout(&o));
        assert!(!stdout(&o).contains("revision"), "{rev:?}: {}", stdout(&o));
    }
    // Nor does it leave the project claimed by the run: another checkout
    // was refused a project with no index, as one another had created.
    let other = crate::revisions::two_releases();
    for project in ["declined", "declined-at-v1"] {
        assert_code(&run(shared(&other, &pg, project, "vg-index").stdout(Stdio::null())), 0);
    }
    // A claim made before the run stays: the project is the checkout's
    // still after its index was cleared and a run declined.
    assert_code(&run(shared(&t, &pg, "kept", "vg-index").stdout(Stdio::null())), 0);
    assert_code(&run(shared(&t, &pg, "kept", "vg-index").arg("--clear-cache")), 0);
    declined(&[], "kept");
    let o = run(shared(&other, &pg, "kept", "vg-index").stdout(Stdio::null()));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("may not change or clear it"), "{}", stderr(&o));
    // So does one its revisions hold: the checkout may still forget them.
    assert_code(&run(shared(&t, &pg, "by-revision", "vg-index").args(["--rev", "v1"]).stdout(Stdio::null())), 0);
    declined(&[], "by-revision");
    assert_code(&run(shared(&t, &pg, "by-revision", "vg-index").args(["--forget", "v1"])), 0);
}

/// A server that accepts connections and never answers (a wrong port, a
/// stuck proxy): each tool says so after the URL's `connect_timeout` and
/// exits 2, and a signal while it waits ends the wait at once, as a wait
/// for another run's lock ends. Once, such a server hung every tool.
#[test]
fn a_server_that_never_answers_is_an_error_and_a_signal_ends_the_wait_for_it() {
    use std::io::BufRead;
    // Never accepted: the system completes the connections and queues them.
    let silent = || {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        (listener, move |seconds: u32| format!("postgres://u@127.0.0.1:{port}/db?connect_timeout={seconds}"))
    };
    let (_listener, url) = silent();
    let t = sample_project();
    for (tool, args) in [
        ("vg-index", &[][..]),
        ("vg-query", &["--no-index", "retry"][..]),
        ("vecgrep", &["retry"][..]),
        ("vg-index", &["--stats"][..]),
    ] {
        let o = run(t.cmd(tool, ".").args(["--store", &url(2), "--store-project", "p"]).args(args));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{tool} {args:?}: {err}");
        assert!(err.contains("cannot connect to project p") && err.contains("did not answer within 2 s"), "{err}");
    }
    for (tool, signal) in [("vg-index", "-INT"), ("vg-serve", "-TERM")] {
        let (listener, url) = silent();
        let mut cmd = t.cmd(tool, ".");
        cmd.args(["--store", &url(600), "--store-project", "p"]);
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // It is connecting once the server has its connection.
        let _connection = listener.accept().unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        if tool == "vg-serve" {
            let mut said = String::new();
            stderr.read_line(&mut said).unwrap();
            assert!(said.contains("listening on"), "{said}");
        }
        let sent = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let waited = std::time::Instant::now();
        let status = child.wait().unwrap();
        assert!(waited.elapsed() < Duration::from_secs(10), "{tool} kept waiting for the server");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
        assert!(rest.contains("stopped before the run began: the index was left as it was"), "{tool}: {rest}");
        assert_eq!(status.code(), Some(if tool == "vg-serve" { 0 } else { 130 }), "{tool}: {rest}");
    }
}

/// A PG* variable that is not UTF-8 was read as unset: a PGHOST so lost
/// sent PGPASSWORD to the default server; a PGPORT that is no number
/// went to the default port. Each is an error naming the variable, before
/// anything is sent.
#[test]
fn a_pg_variable_that_cannot_be_read_is_an_error_not_the_default() {
    use std::os::unix::ffi::OsStrExt;
    let t = sample_project();
    let not_utf8 = std::ffi::OsStr::from_bytes(b"db\xff.example");
    for (key, value, says) in
        [("PGHOST", not_utf8, "is not valid UTF-8"), ("PGPORT", "five".as_ref(), "is not a port number")]
    {
        let o = run(t.cmd("vg-index", ".").args(["--store", "postgres:///vecgrep"]).env(key, value));
        assert_code(&o, 2);
        assert_eq!(stderr(&o), format!("vg-index: cannot use {key} from the environment: {says}\n"));
    }
    // Only what is read counts: a USER beside a PGUSER is not; a port for
    // each host is libpq's form (the connect is refused, not the setting).
    let o = run(t
        .cmd("vg-index", ".")
        .args(["--store", "postgres:///vecgrep"])
        .env("PGUSER", "alice")
        .env("USER", not_utf8));
    assert!(!stderr(&o).contains("from the environment"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").args(["--store", "postgres:///vecgrep"]).envs([
        ("PGHOST", "127.0.0.1,127.0.0.1"),
        ("PGPORT", "1,2"),
        ("PGCONNECT_TIMEOUT", "2"),
    ]));
    assert_code(&o, 2);
    assert!(!stderr(&o).contains("from the environment"), "{}", stderr(&o));
}

/// What a URL with a host but no port leaves out comes from PGPORT, or the
/// URL's `port` parameter, as libpq takes them: the client's parser gave
/// such a host 5432, so the run sent PGPASSWORD to whatever listened there,
/// and refused `?port=` (audit 190). A PGCONNECT_TIMEOUT that is no number
/// was passed over for the default wait.
#[test]
fn a_url_naming_a_host_without_a_port_takes_pgport_or_its_port_parameter() {
    let t = sample_project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    listener.set_nonblocking(true).unwrap();
    let reached = || std::iter::from_fn(|| listener.accept().ok()).count();
    for (url, pgport) in [
        ("postgres://alice@127.0.0.1/vecgrep", port.as_str()),
        (&*format!("postgres://alice@127.0.0.1/vecgrep?port={port}"), "1"),
    ] {
        let o =
            run(t.cmd("vg-index", ".").args(["--store", url]).envs([("PGPORT", pgport), ("PGCONNECT_TIMEOUT", "2")]));
        assert_code(&o, 2);
        assert!(reached() > 0, "{url} PGPORT={pgport} never reached the server: {}", stderr(&o));
    }
    let o = run(t
        .cmd("vg-index", ".")
        .args(["--store", &format!("postgres://alice@127.0.0.1:{port}/vecgrep")])
        .env("PGCONNECT_TIMEOUT", "soon"));
    assert_code(&o, 2);
    let says = "vg-index: cannot use PGCONNECT_TIMEOUT from the environment: is not a whole number of seconds\n";
    assert_eq!(stderr(&o), says);
    assert_eq!(reached(), 0, "nothing is sent before the settings are read");
}

/// vg-mcp on a shared index ends as it does on a local one: status 0 and
/// nothing on stderr when the client leaves. The store's connections,
/// dropped inside the server's async runtime, panicked (status 101).
#[test]
fn an_mcp_server_on_a_shared_index_ends_cleanly_when_the_client_leaves() {
    let pg = PgServer::start();
    let t = handlers_project(3);
    assert_code(&run(&mut shared(&t, &pg, "demo", "vg-index")), 0);
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let search = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "retry a failed upload"}}});
    let input =
        format!("{init}\n{}\n{search}\n", serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let o = run_with_input(shared(&t, &pg, "demo", "vg-mcp").arg("-q"), input.as_bytes());
    assert_code(&o, 0);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"id\":2"), "{}", stdout(&o));
}

/// A server over a shared index whose database restarted: each connection
/// it kept is found closed at its next search, which is tried again on a
/// fresh one (audit 263: each failed one search with a 500, while the
/// status said ready).
#[test]
fn a_server_goes_on_answering_after_its_database_restarts() {
    let pg = PgServer::start();
    let t = sample_project();
    assert_code(&run(&mut shared(&t, &pg, "restarted", "vg-index")), 0);
    let s = Server::start(&t, &["--store", &pg.url, "--store-project", "restarted", "--workers", "4"]);
    s.wait_ready();
    let search = || s.get("/search?q=retry+upload&mode=lexical").0;
    let at_once: Vec<u16> = std::thread::scope(|scope| {
        let asked: Vec<_> = (0..8).map(|_| scope.spawn(search)).collect();
        asked.into_iter().map(|a| a.join().unwrap()).collect()
    });
    assert!(at_once.iter().all(|&c| c == 200), "{at_once:?}");
    for step in ["stop", "start"] {
        let o = crate::common::pg_server::pg_script_on(&[step], pg.dir.path());
        assert!(o.status.success(), "{step}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let after: Vec<u16> = (0..12).map(|_| search()).collect();
    assert!(after.iter().all(|&c| c == 200), "every search answered after the restart: {after:?}");
}
