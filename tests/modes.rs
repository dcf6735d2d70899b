//! Ranking modes: hybrid (the default), semantic and lexical; the full-text
//! table kept in step with the chunks; the name signal; old indexes
//! rebuilt; the model cache.

use crate::common::*;

fn query(t: &Tree, args: &[&str]) -> std::process::Output {
    run(t.cmd("vg-query", ".").args(args))
}

fn files(o: &std::process::Output) -> Vec<String> {
    records(o).iter().map(|r| r["file"].as_str().unwrap().to_string()).collect()
}

#[test]
fn lexical_mode_matches_identifier_parts_without_the_model() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    // `upload_with_retry` is indexed as upload, with, retry and uploadwithretry;
    // the stemmer folds "uploads" and "retries" onto them.
    let o = query(&t, &["--mode", "lexical", "--no-index", "retries of uploads"]);
    assert_code(&o, 0);
    assert_eq!(files(&o), ["src/upload.py"]);
    let score = records(&o)[0]["score"].as_f64().unwrap();
    assert!(score > 0.0 && score < 1.0, "{score}");
    // camelCase in the query finds snake_case in the code.
    let o = query(&t, &["--mode", "lexical", "--no-index", "circleArea"]);
    assert_eq!(files(&o), ["src/geometry.rs"]);
    // No model is loaded in lexical mode: a missing one is no obstacle.
    let o = run(t.cmd("vg-query", ".").env("VECGREP_MODEL_DIR", t.path().join("nowhere")).args([
        "--mode",
        "lexical",
        "--no-index",
        "load settings",
    ]));
    assert_code(&o, 0);
    assert_eq!(files(&o), ["src/config.py"]);
    // Words in no chunk: no results, exit 1.
    assert_code(&query(&t, &["--mode", "lexical", "--no-index", "zeppelin"]), 1);
    // Nothing to match at all is an error, not an empty answer.
    let o = query(&t, &["--mode", "lexical", "--no-index", "?! 42 x"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no words"), "{}", stderr(&o));
}

#[test]
fn words_alone_keep_every_match_unless_a_threshold_is_set() {
    // A word in every chunk of a small project has FTS5's floor IDF, so its
    // BM25 on 0..1 is near 0: the default threshold, a cosine's, would drop
    // every line grep finds.
    let t = Tree::git();
    t.write("a.py", "def upload(data):\n    retry(data)\n");
    t.write("b.py", "def download(name):\n    retry(name)\n");
    let o = query(&t, &["--mode", "lexical", "retry"]);
    assert_code(&o, 0);
    let mut found = files(&o);
    found.sort();
    assert_eq!(found, ["a.py", "b.py"]);
    // A threshold that is set, on the command line or in a file, holds.
    assert_code(&query(&t, &["--mode", "lexical", "--threshold", "0.3", "retry"]), 1);
    t.project_config("mode = \"lexical\"\nthreshold = 0.3\n");
    assert_code(&query(&t, &["retry"]), 1);
    t.project_config("mode = \"lexical\"\n");
    assert_eq!(files(&query(&t, &["retry"])).len(), 2);
    // Common words are all a query of them has: they are matched, not refused.
    let o = query(&t, &["--mode", "lexical", "for"]);
    assert_code(&o, 1);
    t.write("c.py", "for name in names:\n    print(name)\n");
    assert_eq!(files(&query(&t, &["--mode", "lexical", "for"])), ["c.py"]);
    // What no index holds (single letters, numbers, punctuation) is an error that says so.
    let o = query(&t, &["--mode", "lexical", "x 42 ?!"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("single letters, which are not indexed"), "{}", stderr(&o));
}

#[test]
fn chunks_inside_a_java_method_are_found_by_its_name() {
    // A method longer than one chunk, and than one hit: its later chunks
    // do not hold the signature, so only the context (the enclosing class
    // and method) names them.
    let mut body = String::new();
    for i in 0..60 {
        body.push_str(&format!("        sendPart(file, offset + {i}, connection);\n"));
    }
    let java = format!(
        "public class Uploader {{\n    private int tries;\n\n    public void retryTransfer(File file) throws IOException {{\n{body}    }}\n}}\n"
    );
    let t = Tree::git();
    t.write("src/Uploader.java", &java);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let o = query(&t, &["--mode", "lexical", "--no-index", "--threshold", "0", "-k", "20", "retryTransfer"]);
    assert_code(&o, 0);
    let starts: Vec<u64> = records(&o).iter().map(|r| r["start_line"].as_u64().unwrap()).collect();
    assert!(starts.len() >= 2, "{starts:?}");
    assert!(starts.iter().any(|&s| s > 5), "only the chunk with the signature matched: {starts:?}");
}

#[test]
fn hybrid_scores_are_cosine_so_thresholds_mean_the_same() {
    let t = sample_project();
    let args = ["--threshold", "-1", "-k", "100", "upload_with_retry attempts"];
    let hybrid = records(&query(&t, &args));
    let semantic = records(&query(&t, &[&["--mode", "semantic"][..], &args].concat()));
    assert_eq!(hybrid.len(), semantic.len());
    assert_eq!(hybrid[0]["file"], "src/upload.py");
    for h in &hybrid {
        let same = semantic.iter().find(|s| s["file"] == h["file"] && s["start_line"] == h["start_line"]).unwrap();
        assert!((h["score"].as_f64().unwrap() - same["score"].as_f64().unwrap()).abs() < 1e-4, "{h} vs {same}");
    }
    // A threshold keeps exactly the hits whose cosine reaches it, in any order.
    let score = |i: usize| semantic[i]["score"].as_f64().unwrap();
    let cut = (score(1) + score(2)) / 2.0;
    let kept = records(&query(&t, &["--threshold", &cut.to_string(), "-k", "100", "upload_with_retry attempts"]));
    assert_eq!(kept.len(), 2);
}

#[test]
fn mode_comes_from_config_and_bad_values_are_errors() {
    let t = sample_project();
    t.project_config("mode = \"lexical\"\n");
    let o = run(t.cmd("vg-query", ".").env("VECGREP_MODEL_DIR", t.path().join("nowhere")).args(["--no-index", "x"]));
    // Lexical from the config, so the missing model is not the error.
    assert!(!stderr(&o).contains("model"), "{}", stderr(&o));
    t.project_config("mode = \"fuzzy\"\n");
    let o = query(&t, &["anything"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("config.toml, line 1") && stderr(&o).contains("fuzzy"), "{}", stderr(&o));
    let o = query(&t, &["--mode", "fuzzy", "anything"]);
    assert_code(&o, 2);
}

#[test]
fn the_word_index_follows_edits_and_deletions() {
    let t = sample_project();
    t.write("src/cache.py", "def evict_stale_entries(cache):\n    cache.clear()\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let lexical = |q: &str| query(&t, &["--mode", "lexical", q]);
    assert_eq!(files(&lexical("evict stale")), ["src/cache.py"]);
    t.write("src/cache.py", "def drop_old_items(cache):\n    cache.clear()\n");
    assert_code(&lexical("evict stale"), 1);
    assert_eq!(files(&lexical("drop old items")), ["src/cache.py"]);
    std::fs::remove_file(t.path().join("src/cache.py")).unwrap();
    assert_code(&lexical("drop old items"), 1);
}

#[test]
fn indexes_from_before_are_rebuilt_with_a_note() {
    let t = sample_project();
    t.global_config("embed_all = true\n");
    let db_path = t.path().join(".vecgrep/index.db");
    for (downgrade, because) in [
        ("DROP TABLE chunks_fts; UPDATE meta SET value = '1' WHERE key = 'schema';", "schema 1"),
        ("UPDATE meta SET value = '2' WHERE key = 'schema';", "schema 2"),
        ("DROP TABLE name_terms; ALTER TABLE chunks DROP COLUMN names; UPDATE meta SET value = '3' WHERE key = 'schema';", "schema 3"),
        ("DELETE FROM meta WHERE key = 'chunk_format';", "chunk format 1 -> 10"),
        ("UPDATE meta SET value = '9' WHERE key = 'chunk_format';", "chunk format 9 -> 10"),
    ] {
        assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
        rusqlite::Connection::open(&db_path).unwrap().execute_batch(downgrade).unwrap();
        let o = run(&mut t.cmd("vg-index", "."));
        assert_code(&o, 0);
        assert!(stderr(&o).contains("rebuilding") && stderr(&o).contains(because), "{}", stderr(&o));
        assert_eq!(summary(&o)["embedded"], summary(&o)["chunks"]);
        assert_eq!(files(&query(&t, &["--no-index", "--mode", "lexical", "retry"])), ["src/upload.py"]);
    }
}

#[test]
fn an_index_of_an_older_schema_is_refused_by_readers_with_the_fix() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    rusqlite::Connection::open(t.path().join(".vecgrep/index.db"))
        .unwrap()
        .execute_batch("UPDATE meta SET value = '3' WHERE key = 'schema';")
        .unwrap();
    let o = query(&t, &["--no-index", "--mode", "lexical", "retry"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("schema 3") && stderr(&o).contains("vg-index"), "{}", stderr(&o));
    // Indexing rebuilds it, and readers take it again.
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    assert_eq!(files(&query(&t, &["--no-index", "--mode", "lexical", "retry"])), ["src/upload.py"]);
}

#[test]
fn hybrid_ranks_the_definition_a_query_names_above_code_that_mentions_it() {
    // The question paraphrases a function's name ("return" is `get`); a
    // neighbour says the same words more often, in its name, docstring and body.
    // With the model's meaning (`--full`): the static table ranks the
    // definition third by meaning, and the neighbour stays first by a hair.
    let t = Tree::git();
    t.write(
        "pkg/report.py",
        "def describe_effective_levels(logger):\n    \"\"\"Print the effective level of a logger, and return the effective level\n    of each of its handlers.\"\"\"\n    for handler in logger.handlers:\n        print(\"effective level\", handler.level, logger.level)\n    return [h.level for h in logger.handlers]\n",
    );
    t.write(
        "pkg/tree.py",
        "def get_effective_level(logger):\n    node = logger\n    while node:\n        if node.level:\n            return node.level\n        node = node.parent\n    return 0\n",
    );
    t.write(
        "pkg/other.py",
        "def set_level(logger, level):\n    logger.level = level\n    logger.manager.clear_cache()\n",
    );
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    let ranked = |mode: &str| {
        let o =
            query(&t, &["--no-index", "--mode", mode, "--threshold", "0", "return the effective level of a logger"]);
        assert_code(&o, 0);
        files(&o)
    };
    // Both rankings alone prefer the neighbour; the name signal lifts the definition.
    assert_eq!(ranked("semantic")[0], "pkg/report.py");
    assert_eq!(ranked("lexical")[0], "pkg/report.py");
    assert_eq!(ranked("hybrid"), ["pkg/tree.py", "pkg/report.py", "pkg/other.py"]);
}

#[test]
fn the_model_cache_is_built_once_and_gives_the_same_vectors() {
    let t = sample_project();
    // Fully embedded: the searches below need no static table in the new cache.
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    let cache = tempfile::tempdir().unwrap();
    let scores = |cache_home: &std::path::Path| {
        // As a user's shell has it: the variable cargo sets for the tests unset.
        let mut cmd = t.cmd("vg-query", ".");
        cmd.env("XDG_CACHE_HOME", cache_home).env_remove("ORT_DISABLE_TELEMETRY");
        let o = run(cmd.args(["--no-index", "--mode", "semantic", "--threshold", "-1", "retry an upload"]));
        assert_code(&o, 0);
        records(&o).iter().map(|r| r["score"].as_f64().unwrap()).collect::<Vec<_>>()
    };
    // Graphs cached by other versions: one not written for 40 days is
    // removed when a new one is written, a recent one and other files stay.
    let dir = cache.path().join("vecgrep");
    std::fs::create_dir_all(&dir).unwrap();
    let forty_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 24 * 3600);
    for name in
        ["model-0000000000000000.ort", "query-model-2222222222222222.ort", "model-1111111111111111.ort", "notes.txt"]
    {
        let file = std::fs::File::create(dir.join(name)).unwrap();
        if name != "model-1111111111111111.ort" {
            file.set_modified(forty_days_ago).unwrap();
        }
    }
    let first = scores(cache.path());
    // ONNX Runtime kept a telemetry store and a device id there.
    assert!(!cache.path().join("Microsoft").exists(), "ONNX Runtime's telemetry store was made");
    let left: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(left.len(), 3, "{left:?}");
    assert!(!left.iter().any(|n| n.ends_with("-0000000000000000.ort") || n.starts_with("query-model-")), "{left:?}");
    for kept in ["model-1111111111111111.ort", "notes.txt"] {
        assert!(left.iter().any(|n| n == kept), "{left:?}");
        std::fs::remove_file(dir.join(kept)).unwrap();
    }
    let built: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(built.len(), 1, "{built:?}");
    assert!(built[0].to_str().unwrap().ends_with(".ort"));
    let cached = scores(cache.path());
    // An unusable cache directory falls back to loading the model directly.
    let no_cache = scores(&t.path().join("src/upload.py"));
    for other in [&cached, &no_cache] {
        assert_eq!(first.len(), other.len());
        assert!(first.iter().zip(other).all(|(a, b)| (a - b).abs() < 1e-4), "{first:?} vs {other:?}");
    }
}

/// A cache ONNX Runtime cannot write its graph to (a directory another
/// user made, a full disk) failed every search that needed the model; it
/// costs speed, not the search. A FIFO where the graph goes is not waited on.
#[test]
fn a_model_cache_that_cannot_be_written_or_read_costs_speed_not_the_search() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    let cache = user.home.path().join("closed-cache");
    std::fs::create_dir_all(cache.join("vecgrep")).unwrap();
    std::fs::set_permissions(cache.join("vecgrep"), std::fs::Permissions::from_mode(0o555)).unwrap();
    let o = run(user.cmd(&t, "vg-index").env("XDG_CACHE_HOME", &cache).arg("--full"));
    assert_code(&o, 0);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let args = ["--no-index", "--mode", "semantic", "--threshold", "-1", "retry an upload"];
    let o = run(user.cmd(&t, "vg-query").env("XDG_CACHE_HOME", &cache).args(args));
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
    assert_eq!(std::fs::read_dir(cache.join("vecgrep")).unwrap().count(), 0, "nothing left behind");
    // A FIFO where the graph is cached.
    let open = tempfile::tempdir().unwrap();
    assert_code(&run(t.cmd("vg-query", ".").env("XDG_CACHE_HOME", open.path()).args(args)), 0);
    let graph = std::fs::read_dir(open.path().join("vecgrep")).unwrap().next().unwrap().unwrap().path();
    std::fs::remove_file(&graph).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&graph).status().unwrap().success());
    let o = run_or_fail_after(
        t.cmd("vg-query", ".").env("XDG_CACHE_HOME", open.path()).args(args),
        std::time::Duration::from_secs(60),
    );
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
}

/// VECGREP_MODEL_DIR named as one local model while the other is asked
/// for: refused, where an index silently stored one model's vectors as the
/// other's (the two share tokenizer, dimensions and static table).
#[test]
fn a_model_dir_named_as_the_other_model_is_refused() {
    let t = sample_project();
    let other = t.path().join("models/all-MiniLM-L6-v2");
    std::fs::create_dir_all(&other).unwrap();
    for args in [&["--full", "--embedder-model", "vecgrep-code-minilm-l6"][..], &["--full"]] {
        let dir = if args.len() == 1 { t.path().join("models/vecgrep-code-minilm-l6") } else { other.clone() };
        std::fs::create_dir_all(&dir).unwrap();
        let o = run(t.cmd("vg-index", ".").env("VECGREP_MODEL_DIR", &dir).args(args));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("is named as the model"), "{args:?}: {}", stderr(&o));
    }
}
