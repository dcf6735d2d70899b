//! `vg-ask` / `vecgrep --ask` and `--plan`, `--explain`, vg-serve's
//! `POST /v1/ask` (issue 44): a question in plain words becomes a plan,
//! the plan a filtered search whose hits say why they ranked (and the
//! reasons follow what the ranking used), a chat model answers when one is
//! called for and the privacy mode allows it, and bad input is refused.

use std::io::Write;
use std::net::TcpListener;
use std::time::Duration;

use serde_json::{json, Value};

use crate::answer::{canned_server, LlmServer};
use crate::common::*;
use crate::serve::{error_of, Server};

/// A project of Rust and Python code, with a test and a vendored copy.
fn mixed_project() -> Tree {
    let t = Tree::git();
    t.write(
        "src/net/upload.rs",
        "/// Send a blob, trying again with backoff while the server is busy.\npub fn upload_with_retry(client: &Client, blob: &[u8], attempts: u32) -> Result<()> {\n    for attempt in 0..attempts {\n        match client.put(blob) {\n            Ok(()) => return Ok(()),\n            Err(e) if e.is_busy() => sleep(backoff(attempt)),\n            Err(e) => return Err(e),\n        }\n    }\n    Err(Error::GaveUp)\n}\n",
    );
    t.write(
        "src/net/upload.py",
        "def upload_with_retry(client, blob, attempts=5):\n    for attempt in range(attempts):\n        try:\n            return client.put(blob)\n        except Busy:\n            time.sleep(2 ** attempt)\n    raise GaveUp()\n",
    );
    t.write(
        "src/geometry.rs",
        "pub fn circle_area(radius: f64) -> f64 {\n    std::f64::consts::PI * radius * radius\n}\n",
    );
    t.write("vendor/retry/lib.rs", "pub fn retry_upload(op: impl Fn() -> bool) {\n    while !op() {}\n}\n");
    t
}

fn ask_json(t: &Tree, args: &[&str]) -> (std::process::Output, Value) {
    let o = run(t.cmd("vecgrep", ".").arg("--ask").arg("--json").args(args));
    let recs = records(&o);
    assert_eq!(recs.len(), 1, "one ask record\n{}", stderr(&o));
    (o, recs[0].clone())
}

fn paths(response: &Value) -> Vec<String> {
    response["hits"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect()
}

/// vg-ask refuses what shapes no plan, as vecgrep does: `-k 3` or `-t py`
/// passed over in silence read as used.
#[test]
fn plan_refuses_a_flag_that_shapes_no_plan() {
    let t = mixed_project();
    for (args, flag) in [
        (&["-k", "3"][..], "--top-k"),
        (&["-t", "py"], "--type"),
        (&["--no-index"], "--no-index"),
        (&["--force-answer"], "--force-answer"),
        (&["--embedder-model", "zzz"], "--embedder-model"),
        // One line, not a note that the flag is not used before it.
        (&["--store-adopt"], "--store-adopt"),
    ] {
        let o = run(t.cmd("vg-ask", ".").arg("--plan").args(args).arg("python files that retry"));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).trim(), format!("vg-ask: {flag} does nothing with --plan; leave it out"), "{args:?}");
    }
    let o = run(t.cmd("vg-ask", ".").args(["--plan", "--json", "--threshold", "0.4", "--no-quiet", "retry"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["l1_threshold"], 0.4, "{}", stdout(&o));
}

#[test]
fn plan_prints_the_plan_and_touches_nothing() {
    let t = mixed_project();
    let o = run(t.cmd("vecgrep", ".").args(["--plan", "rust files changed this week that retry uploads"]));
    assert_code(&o, 0);
    let plan = &records(&o)[0];
    crate::contract::check(plan);
    assert_eq!((plan["type"].as_str(), plan["intent"].as_str()), (Some("plan"), Some("search")));
    assert_eq!(plan["l1_query_text"], "retry uploads");
    assert_eq!(plan["l0_filters"]["extensions"], json!([".rs"]));
    assert!(plan["l0_filters"]["modified_after"].as_str().unwrap().ends_with('Z'));
    assert_eq!((plan["privacy_mode"].as_str(), plan["requires_l2"].as_bool()), (Some("local_only"), Some(false)));
    assert_eq!(plan["planner_model_id"], "vecgrep-rules-2");
    assert_eq!(plan["raw_user_text"], "rust files changed this week that retry uploads");
    assert!(!t.path().join(".vecgrep").exists(), "a plan indexes nothing");
    // The same from the plumbing, and the mode given is the mode in force.
    let o =
        run(t.cmd("vg-ask", ".").args(["--plan", "--privacy-mode", "cloud_reasoning_ok", "explain the retry loop"]));
    let plan = &records(&o)[0];
    assert_eq!((plan["intent"].as_str(), plan["requires_l2"].as_bool()), (Some("explain"), Some(true)));
    assert_eq!(
        (plan["privacy_mode"].as_str(), plan["l2_skills"].clone()),
        (Some("cloud_reasoning_ok"), json!(["answer"]))
    );
    let bad = run(t.cmd("vecgrep", ".").args(["--plan", "--privacy-mode", "yolo", "x"]));
    assert_code(&bad, 2);
    assert!(stderr(&bad).contains("local_only"), "{}", stderr(&bad));
    let empty = run(t.cmd("vg-ask", ".").args(["--plan", "   "]));
    assert_code(&empty, 2);
    assert_eq!(stderr(&empty).trim(), "vg-ask: the query is empty");
    // Control characters alone are no words either, said of the query, not of a plan's field.
    let empty = run(t.cmd("vg-ask", ".").arg("\u{1b}\u{7}"));
    assert_code(&empty, 2);
    assert_eq!(stderr(&empty).trim(), "vg-ask: the query is empty");
    // A printed plan keeps to its schema: a path out of the project is left out, with why.
    let out = run(t.cmd("vg-ask", ".").args(["--plan", "--json", "python files in ../../etc that retry"]));
    assert_code(&out, 0);
    let plan = &records(&out)[0];
    crate::contract::check(plan);
    assert_eq!(plan["l0_filters"], json!({"extensions": [".py", ".pyi"]}), "the other filters stand: {plan}");
    assert!(stderr(&out).contains("reaches out of the project with '..'"), "{}", stderr(&out));
    // A second phrase of time narrows the first, never replaces it in silence:
    // "this week in 2025" is no span, and is said so.
    let out = run(t.cmd("vg-ask", ".").args(["--plan", "--json", "retry upload changed this week in 2025"]));
    assert!(stderr(&out).contains("contradict each other"), "{}", stderr(&out));
    assert!(records(&out)[0]["l0_filters"]["modified_after"].is_null(), "{}", stdout(&out));
    let out = run(t.cmd("vg-ask", ".").args(["--plan", "--json", "retry changed since 2025-03-01 in 2025"]));
    let filters = &records(&out)[0]["l0_filters"];
    assert_eq!(
        (filters["modified_after"].as_str(), filters["modified_before"].as_str()),
        (Some("2025-03-01T00:00:00Z"), Some("2026-01-01T00:00:00Z"))
    );
    // A question of filters, that one among them, no longer lists at no threshold
    // every file it did not name.
    for question in ["files under ../../etc/", "list files in ../secret except tests"] {
        let out = run(t.cmd("vg-ask", ".").args(["--plan", "--json", question]));
        let plan = &records(&out)[0];
        assert_eq!((plan["intent"].as_str(), plan["l1_threshold"].as_f64()), (Some("search"), Some(0.3)), "{plan}");
    }
}

#[test]
fn a_question_becomes_a_filtered_search_whose_hits_say_why() {
    let t = mixed_project();
    let (o, r) = ask_json(&t, &["rust files that retry uploads, not in vendor"]);
    assert_code(&o, 0);
    crate::contract::check(&r);
    assert_eq!(r["query_plan"]["l1_query_text"], "retry uploads");
    assert_eq!(r["query_plan"]["l0_filters"]["exclude_globs"], json!(["vendor/"]));
    let found = paths(&r);
    assert_eq!(found.first().map(String::as_str), Some("src/net/upload.rs"), "{r}");
    assert!(found.iter().all(|p| p.ends_with(".rs") && !p.starts_with("vendor/")), "L0 chose the files: {found:?}");
    let top = &r["hits"][0];
    assert_eq!((top["tier"].as_str(), top["layers"].clone()), (Some("L1"), json!(["L0", "L1"])));
    assert!(top["excerpt"].as_str().unwrap().contains("upload_with_retry"));
    assert_eq!(top["metadata"]["extension"], ".rs");
    assert!(top["metadata"]["size"].as_u64().unwrap() > 100 && top["metadata"]["modified"].is_string());
    let why = top["reasoning"].as_str().unwrap();
    assert!(why.contains("by meaning") && why.contains("by words") && why.contains("retry"), "{why}");
    assert!(why.contains("its name upload_with_retry answers the query"), "{why}");
    let s = &r["stats"];
    assert_eq!((s["mode"].as_str(), s["backend"].as_str()), (Some("hybrid"), Some("sqlite")));
    assert_eq!((s["chunks_indexed"].as_u64(), s["files_indexed"].as_u64()), (Some(4), Some(4)));
    assert_eq!(s["hits_returned"].as_u64(), Some(found.len() as u64));
    assert_eq!(s["hits_by_tier"], json!({"L1": found.len()}));
    assert!(s["candidates_merged"].as_u64().unwrap() >= found.len() as u64);
    assert!(s["latency_ms"].as_f64().unwrap() >= s["search_ms"].as_f64().unwrap());
    assert!(r["answer_summary"].is_null() && r["citations"] == json!([]));
    // Nothing passes the filters: exit 1, still a response.
    let (o, r) = ask_json(&t, &["haskell files that retry uploads"]);
    assert_code(&o, 1);
    assert_eq!((r["hits"].clone(), r["query_plan"]["l0_filters"]["extensions"].clone()), (json!([]), json!([".hs"])));
    // The filters took every file its words find: a warning says so, as the
    // question may have been about the language, a size or a date.
    let said =
        |r: &Value| r["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("left no results"));
    assert!(said(&r), "{r}");
    let warning =
        r["warnings"].as_array().unwrap().iter().find(|w| w.as_str().unwrap().contains("left no results")).unwrap();
    assert!(warning.as_str().unwrap().contains(r#"{"extensions":[".hs"]}"#), "{warning}");
    // A question that finds nothing by its words either: no such warning.
    let (_, r) = ask_json(&t, &["haskell files about zebra migrations"]);
    assert!(!said(&r), "{r}");
}

/// A path written whole (`in /home/me/proj/src/net`) is read against the
/// root, as a person means it, whichever planner wrote it; one not in the
/// project is no filter, a warning says so, and a question of filters
/// alone then searches its words rather than list every file the rest
/// admit (audit 232 and review 236: read as paths below the root, they
/// matched nothing; left out by the rules, `files in /var/log except
/// tests` listed every file but the tests).
#[test]
fn an_absolute_path_in_a_question_is_read_against_the_root() {
    let t = mixed_project();
    let root = t.path().canonicalize().unwrap();
    let (o, r) = ask_json(&t, &[&format!("retry uploads in {}/src/net", root.display())]);
    assert_code(&o, 0);
    assert_eq!(r["query_plan"]["l0_filters"]["path_globs"], json!(["src/net/"]));
    let found = paths(&r);
    assert!(!found.is_empty() && found.iter().all(|p| p.starts_with("src/net/")), "{found:?}");
    assert_eq!(r["warnings"], json!([]));
    let (o, r) = ask_json(&t, &["retry uploads in /etc/ssl"]);
    assert_code(&o, 0);
    assert!(r["query_plan"]["l0_filters"]["path_globs"].is_null(), "{r}");
    let warned = format!("a path filter was left out: /etc/ssl/ is not in the project ({})", root.display());
    assert_eq!(r["warnings"], json!([warned]));
    let (_, r) = ask_json(&t, &["files in /etc/ssl except tests"]);
    assert_eq!(r["query_plan"]["intent"], "search", "{r}");
    assert!(r["query_plan"]["l1_threshold"].as_f64().unwrap() > 0.0, "{r}");
    // `--plan` says so on stderr, as each of its warnings.
    let o = run(t.cmd("vg-ask", ".").args(["--plan", "--json", "--no-quiet", "retry uploads in /etc/ssl"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("is not in the project"), "{}", stderr(&o));
    // A chat model's plan is read so too.
    let glob = format!("{}/src/net/", root.display());
    let planner = planner_replying(
        json!({"intent": "search", "l1_query_text": "retry uploads", "l0_filters": {"path_globs": [glob, "/var/log/"]}}),
    );
    let o = run(t
        .cmd("vg-ask", ".")
        .args(["--plan", "--json", "--no-quiet", "--planner", "llm", "--llm-url", &planner, "--llm-model", "m"])
        .arg("retry uploads"));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["l0_filters"]["path_globs"], json!(["src/net/"]), "{}", stdout(&o));
    assert!(stderr(&o).contains("/var/log/ is not in the project"), "{}", stderr(&o));
}

/// `vg-query --explain`'s reasoning of the hit in `file` for `query`.
fn reasoning_of(t: &Tree, query: &str, file: &str) -> String {
    let o = run(t.cmd("vg-query", ".").args(["--explain", "--threshold", "-1", query]));
    assert_code(&o, 0);
    let recs = records(&o);
    recs.iter().for_each(|r| drop(crate::contract::check(r)));
    let hit = recs.iter().find(|h| h["file"] == file).unwrap_or_else(|| panic!("{file} not found: {recs:?}"));
    hit["reasoning"].as_str().unwrap().to_string()
}

#[test]
fn the_reasons_change_when_what_the_ranking_used_changes() {
    let t = mixed_project();
    let query = "upload with retry";
    let body = "    for attempt in 0..attempts {\n        if client.put(blob).is_ok() {\n            return true;\n        }\n        sleep(backoff(attempt));\n    }\n    false\n}\n";
    let before = reasoning_of(&t, query, "src/net/upload.rs");
    assert!(before.contains("its name upload_with_retry answers the query"), "{before}");
    assert!(before.contains("(upload, retry)"), "{before}");
    assert!(!before.contains("stepped back"), "{before}");
    // Only the function's name changed, its words kept in a comment: the
    // name signal no longer fires, the words still match.
    t.write("src/net/upload.rs", &format!("// Retries the upload while busy.\npub fn send_blob(client: &Client, blob: &[u8], attempts: u32) -> bool {{\n{body}"));
    let renamed = reasoning_of(&t, query, "src/net/upload.rs");
    assert!(!renamed.contains("its name"), "{renamed}");
    assert!(renamed.contains("(upload, retry)"), "{renamed}");
    // Only the word "retry" gone: it is no longer among the words matched
    // (its path still says "upload").
    t.write("src/net/upload.rs", &format!("// Sends it again while busy.\npub fn send_blob(client: &Client, blob: &[u8], attempts: u32) -> bool {{\n{body}"));
    let no_retry = reasoning_of(&t, query, "src/net/upload.rs");
    assert!(no_retry.contains("(upload)") && !no_retry.contains("retry"), "{no_retry}");
    // Only the file's place changed, under tests/: it steps back as a test.
    std::fs::create_dir_all(t.path().join("tests")).unwrap();
    std::fs::rename(t.path().join("src/net/upload.py"), t.path().join("tests/upload.py")).unwrap();
    let moved = reasoning_of(&t, query, "tests/upload.py");
    assert!(moved.contains("a test file, stepped back (x0.70)"), "{moved}");
    // By meaning alone, each hit's place by meaning is its place in the list.
    let o = run(t.cmd("vg-query", ".").args(["--explain", "--mode", "semantic", "--threshold", "-1", query]));
    let ranks: Vec<u64> = records(&o)
        .iter()
        .map(|h| {
            let why = h["reasoning"].as_str().unwrap();
            let rank = why.split(|c: char| !c.is_ascii_digit()).next().unwrap();
            assert!(why[rank.len()..].starts_with(|c: char| c.is_ascii_alphabetic()), "{why}");
            rank.parse().unwrap()
        })
        .collect();
    assert!(ranks.first() == Some(&1) && ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    // The porcelain shows the reasons under each result, piped too (grep's
    // lines passed the flag over in silence); --json carries them as each
    // hit's reasoning; -l, -c and --no-heading have no place for them.
    let piped = run(t.cmd("vecgrep", ".").args(["--explain", query]));
    assert_code(&piped, 0);
    assert!(stdout(&piped).contains("why:"), "{}", stdout(&piped));
    let json = run(t.cmd("vecgrep", ".").args(["--explain", "--json", query]));
    assert!(records(&json).iter().all(|r| r["reasoning"].is_string()), "{}", stdout(&json));
    for flag in ["-l", "-c", "--no-heading"] {
        let o = run(t.cmd("vecgrep", ".").args(["--explain", flag, query]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("'--explain' cannot be used with"), "{flag}: {}", stderr(&o));
    }
}

#[test]
fn local_only_refuses_what_is_not_on_this_machine_and_still_answers() {
    let t = mixed_project();
    let away = "http://chat.invalid/v1";
    let (o, r) = ask_json(&t, &["--force-answer", "--llm-url", away, "--llm-model", "m", "retry uploads"]);
    assert_code(&o, 0);
    assert_eq!(r["query_plan"]["privacy_mode"], "local_only");
    assert!(!paths(&r).is_empty() && r["answer_summary"].is_null());
    let warned = r["warnings"].to_string();
    assert!(
        warned.contains("chat.invalid is not on this machine") && warned.contains("cloud_reasoning_ok"),
        "{warned}"
    );
    // Allowed, the remote model is asked, and its failure is a warning.
    let (o, r) = ask_json(
        &t,
        &[
            "--privacy-mode",
            "cloud_reasoning_ok",
            "--force-answer",
            "--llm-url",
            away,
            "--llm-model",
            "m",
            "retry uploads",
        ],
    );
    assert_code(&o, 0);
    assert_eq!(r["query_plan"]["privacy_mode"], "cloud_reasoning_ok");
    assert!(r["warnings"].to_string().contains("the chat model gave no answer: cannot reach"), "{}", r["warnings"]);
    // A remote embedder under local_only: no index run sends the code, and
    // the question is searched by its words alone.
    t.global_config("embedder_source = \"remote\"\nembedder_url = \"http://gpu.invalid/v1/embeddings\"\n");
    let (o, r) = ask_json(&t, &["retry uploads"]);
    assert_code(&o, 0);
    assert_eq!((r["stats"]["mode"].as_str(), r["stats"]["embedder_model"].clone()), (Some("lexical"), Value::Null));
    assert!(r["warnings"].to_string().contains("gpu.invalid is not on this machine"), "{}", r["warnings"]);
    assert!(stderr(&o).contains("not indexing"), "{}", stderr(&o));
    assert!(paths(&r).contains(&"src/net/upload.rs".to_string()), "{:?}", paths(&r));
}

/// A server that accepts and never answers.
fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(30));
        drop(held);
    });
    url
}

/// Requests that hold a worker long (an ask waiting on its chat model)
/// take a share of the workers at most: past that they wait on their own
/// connection, holding no worker, and reports and searches are answered at
/// once. Asks to a chat model that never answered held every worker, and
/// `/health` waited for `llm_timeout`.
#[test]
fn slow_requests_leave_workers_for_reports_and_searches() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (asked, model_asked) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(1).collect();
        let _ = asked.send(());
        std::thread::sleep(Duration::from_secs(60));
        drop(held);
    });
    let t = mixed_project();
    t.global_config(&format!("llm_url = \"{url}\"\nllm_model = \"m\"\nllm_timeout = 50\n"));
    let s = Server::start(&t, &["--workers", "2"]);
    s.wait_ready();
    let addr = s.addr.clone();
    std::thread::spawn(move || {
        let body = br#"{"query": "explain how uploads are retried"}"#;
        let head = format!("POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n", body.len());
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(head.as_bytes()).and_then(|()| c.write_all(body)).unwrap();
        let _ = std::io::Read::read_to_end(&mut c, &mut Vec::new());
    });
    model_asked.recv_timeout(Duration::from_secs(60)).expect("the first ask reaches the chat model");
    // A second ask waits for the first's slot, holding no worker.
    let addr = s.addr.clone();
    let waiting = std::thread::spawn(move || {
        let body = br#"{"query": "explain how uploads are retried"}"#;
        let head = format!("POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n", body.len());
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(head.as_bytes()).and_then(|()| c.write_all(body)).unwrap();
        let _ = std::io::Read::read_to_end(&mut c, &mut Vec::new());
    });
    std::thread::sleep(Duration::from_millis(500));
    let started = std::time::Instant::now();
    assert!(!waiting.is_finished(), "the second ask was answered at once, not queued");
    assert_eq!(s.request("GET", "/health", &[]).0, 200);
    assert_eq!(s.request("GET", "/search?q=retry+uploads", &[]).0, 200);
    assert!(started.elapsed() < Duration::from_secs(20), "answered while the ask waits: {:?}", started.elapsed());
}

/// `--ask --learn` says what it learned, as `--answer --learn` does, and
/// the file records the question asked: it changed the project in
/// silence, naming vg-answer and the words searched.
#[test]
fn an_ask_that_learns_says_so_and_records_the_question() {
    let t = ledger_project();
    let url = canned_server(
        200,
        r#"{"model": "m", "choices": [{"message": {"content": "The ledger is AccountBook [1]."}, "finish_reason": "stop"}]}"#,
    );
    // On a terminal, as a person reads it.
    let line = format!(
        "{} --learn --force-answer --threshold=-1 --llm-model m --llm-url {url} 'where is the ledger'",
        bin("vg-ask").display()
    );
    let on_terminal = |cwd: &str| {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &line, "/dev/null"])
            .current_dir(t.path().join(cwd))
            .env("XDG_CONFIG_HOME", t.config_home.path());
        run(&mut c)
    };
    // From a subdirectory, paths lead from there, as every search prints
    // them (they were the root's).
    let o = on_terminal("src");
    assert!(stdout(&o).contains("learned: ledger (review ../.vecgrep/kg/learned.md)"), "{}", stdout(&o));
    assert!(stdout(&o).contains("\nbooks.py:1-"), "{}", stdout(&o));
    let o = on_terminal(".");
    assert!(stdout(&o).contains("\nsrc/books.py:1-"), "{}", stdout(&o));
    let file = read(&t.path().join(".vecgrep/kg/learned.md"));
    assert!(
        file.contains("learned from the question \"where is the ledger\"") && !file.contains("vg-answer"),
        "{file}"
    );
}

/// A chat model at a URL of its own that answers every request with `plan`
/// as its message, as an LLM planner's reply.
fn planner_replying(plan: Value) -> String {
    let reply = json!({"model": "m", "choices": [{"message": {"content": plan.to_string()}, "finish_reason": "stop"}]});
    // The server thread holds its reply for the test's life.
    canned_server(200, Box::leak(reply.to_string().into_boxed_str()))
}

/// A chat model that answers its requests in turn with `contents`, the
/// last again once they run out: a planner's reply, then an answer's.
fn chat_replying_in_turn(contents: &[&str]) -> String {
    let replies: Vec<String> = contents
        .iter()
        .map(|c| json!({"model": "m", "choices": [{"message": {"content": c}, "finish_reason": "stop"}]}).to_string())
        .collect();
    crate::answer::serve_in_turn(8, Duration::ZERO, move |i| {
        let body = &replies[i.min(replies.len() - 1)];
        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    })
}

/// A concept `--learn` writes is named by a word of the user's question,
/// never by the words a chat model planned to search: a hostile planner's
/// "pwnedconcept" was learned and credited to the question (audit 232).
#[test]
fn a_planners_words_name_no_concept_learned() {
    let t = ledger_project();
    let plan = json!({"intent": "search", "l1_query_text": "pwnedconcept ledger"}).to_string();
    let url = chat_replying_in_turn(&[&plan, "The `AccountBook` is the pwnedconcept and the ledger [1]."]);
    let o = run(t.cmd("vg-ask", ".").args(["--planner", "llm", "--llm-url", &url, "--llm-model", "m"]).args([
        "--force-answer",
        "--learn",
        "--threshold=-1",
        "--json",
        "where is the ledger",
    ]));
    assert_code(&o, 0);
    let learned = records(&o)[0]["stats"]["concepts_learned"].clone();
    assert_eq!(learned, json!(["ledger"]), "{}", stdout(&o));
    let file = read(&t.path().join(".vecgrep/kg/learned.md"));
    assert!(!file.contains("pwnedconcept"), "{file}");
}

/// A threshold the user set holds over the LLM planner's: the model's
/// 0.99 left none of the hits asked for at -1.
#[test]
fn the_llm_planner_keeps_the_threshold_the_user_set() {
    let t = mixed_project();
    let planner = planner_replying(json!({"intent": "search", "l1_query_text": "retry uploads", "l1_threshold": 0.99}));
    let plan_of = |args: &[&str]| {
        let o = run(t
            .cmd("vg-ask", ".")
            .args(["--plan", "--planner", "llm", "--llm-url", &planner, "--llm-model", "m"])
            .args(args)
            .arg("retry uploads"));
        assert_code(&o, 0);
        records(&o)[0]["l1_threshold"].as_f64().unwrap()
    };
    assert_eq!(plan_of(&["--threshold=-1"]), -1.0);
    assert_eq!(plan_of(&[]), 0.99, "a threshold left to the planner is its own");
}

/// A plan whose query no search can run where only words are matched
/// ("!!!" in lexical mode) failed the whole ask, where any other bad plan
/// falls back to the rules' (audit 195). On vg-serve, a question without
/// a word to match is the asker's to fix: 400, as /search answers it, not 500.
#[test]
fn a_question_or_plan_without_a_word_to_match_is_the_askers_to_fix() {
    let t = mixed_project();
    let planner = planner_replying(json!({"intent": "search", "l1_query_text": "!!!"}));
    let o = run(t
        .cmd("vg-ask", ".")
        .args(["--mode", "lexical", "--planner", "llm", "--llm-url", &planner, "--llm-model", "m"])
        .arg("where are uploads retried"));
    assert_code(&o, 0);
    let warnings = records(&o)[0]["warnings"].to_string();
    assert!(
        warnings.contains("the LLM planner's plan was refused (l1_query_text: the query has no words"),
        "{warnings}"
    );
    // A question the project's concepts give words to is searched, as
    // vg-query searches it (review 197: it was refused).
    // Concept words past the question's own bound are no reason to refuse
    // it (review 198).
    let many: Vec<String> = (0..600).map(|i| format!("word{i}")).collect();
    let concept = format!("# 42\nsynonyms:: ultimate, {}\n", many.join(", "));
    t.write("src/c.rs", "fn ultimate_answer() {}\n").write(".vecgrep/kg/n.md", &concept);
    let o = run(t.cmd("vg-ask", ".").args(["--mode", "lexical", "42"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["hits"][0]["path"], "src/c.rs", "{}", stderr(&o));
    // --plan prints the plan the ask runs: the rules', said so.
    let o = run(t
        .cmd("vg-ask", ".")
        .args(["--plan", "--mode", "lexical", "--planner", "llm", "--llm-url", &planner, "--llm-model", "m"])
        .arg("where are uploads retried"));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["planner_model_id"], "vecgrep-rules-2");
    assert!(
        stderr(&o).contains("the LLM planner's plan was refused (l1_query_text: the query has no words"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(t.path().join(".vecgrep/kg/n.md")).unwrap();
    let s = Server::start(&t, &["--mode", "lexical"]);
    wait_ready(&s, "X-None: 1");
    for query in ["42", "!!!"] {
        let (status, body) = post(&s, format!(r#"{{"query": "{query}"}}"#).as_bytes(), &[]);
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.contains("query: the query has no words"), "{body}");
    }
}

#[test]
fn a_hostile_slow_or_dead_planner_falls_back_to_the_rules() {
    let t = mixed_project();
    let hostile = canned_server(
        200,
        r#"{"model": "evil", "choices": [{"message": {"content": "{\"intent\": \"search\", \"l1_query_text\": \"x\", \"l0_filters\": {\"path_globs\": [\"../../etc/\"]}, \"privacy_mode\": \"cloud_embedding_ok\"}"}, "finish_reason": "stop"}]}"#,
    );
    let dead =
        format!("http://127.0.0.1:{}/v1", TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port());
    for (url, why) in [
        (hostile, "reaches out of the project with '..'"),
        (silent_server(), "did not answer in time"),
        (dead, "cannot reach"),
    ] {
        // A short wait for the silent one alone: the others' replies may
        // take over a second on a loaded machine.
        t.global_config(if why.contains("in time") { "llm_timeout = 1\n" } else { "" });
        let o = run(t.cmd("vg-ask", ".").args([
            "--plan",
            "--planner",
            "llm",
            "--llm-url",
            &url,
            "--llm-model",
            "m",
            "rust files that retry uploads",
        ]));
        assert_code(&o, 0);
        let plan = &records(&o)[0];
        assert_eq!(
            (plan["planner_model_id"].as_str(), plan["privacy_mode"].as_str()),
            (Some("vecgrep-rules-2"), Some("local_only"))
        );
        assert_eq!(plan["l0_filters"]["extensions"], json!([".rs"]), "the rules' plan");
        let e = stderr(&o);
        assert!(
            e.contains("the LLM planner's plan was refused") && e.contains(why) && e.contains("planned by rules"),
            "{e}"
        );
    }
    // An LLM planner the mode does not allow is not asked.
    let o = run(t.cmd("vg-ask", ".").args(["--plan", "--planner", "llm", "--llm-url", "http://plan.invalid/v1", "x"]));
    assert!(
        stderr(&o).contains("planner llm: privacy_mode local_only: the chat model at plan.invalid"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_real_model_plans_and_answers_what_asks_to_be_explained() {
    let llm = LlmServer::start();
    let t = mixed_project();
    let (o, r) = ask_json(&t, &["--llm-url", &llm.url, "explain how uploads are retried"]);
    assert_code(&o, 0);
    crate::contract::check(&r);
    assert_eq!(
        (r["query_plan"]["intent"].as_str(), r["query_plan"]["requires_l2"].as_bool()),
        (Some("explain"), Some(true))
    );
    assert_eq!(
        (r["stats"]["answer_model"].as_str(), r["stats"]["answer_reason"].as_str()),
        (Some("SmolLM2-135M-Instruct.Q4_1"), Some("requires_l2"))
    );
    assert!(!r["answer_summary"].as_str().unwrap().trim().is_empty(), "{r}");
    // Every citation is a line of a hit, and the hits cited are L2.
    let hits = r["hits"].as_array().unwrap();
    let mut cited = 0;
    for c in r["citations"].as_array().unwrap() {
        let hit = hits.iter().find(|h| {
            h["path"] == c["path"] && (h["start_line"].as_u64()..=h["end_line"].as_u64()).contains(&c["line"].as_u64())
        });
        let hit = hit.unwrap_or_else(|| panic!("{c} is no line of a hit: {r}"));
        assert_eq!((hit["tier"].as_str(), hit["layers"].as_array().unwrap().last()), (Some("L2"), Some(&json!("L2"))));
        cited += 1;
    }
    let l2 = hits.iter().filter(|h| h["tier"] == "L2").count();
    assert!(l2 <= cited && r["stats"]["hits_by_tier"]["L2"].as_u64().unwrap_or(0) == l2 as u64, "{r}");
    // The same model as planner: its plan is taken when it passes the
    // check, else the rules' with a warning; either way the caller's fields hold.
    let (o, r) = ask_json(&t, &["--planner", "llm", "--llm-url", &llm.url, "rust files that retry uploads"]);
    assert_code(&o, 0);
    let plan = &r["query_plan"];
    assert_eq!(
        (plan["privacy_mode"].as_str(), plan["raw_user_text"].as_str()),
        (Some("local_only"), Some("rust files that retry uploads"))
    );
    let refused = r["warnings"].to_string().contains("the LLM planner's plan was refused");
    let by = plan["planner_model_id"].as_str().unwrap();
    assert!(refused == (by == "vecgrep-rules-2") && (refused || by == "SmolLM2-135M-Instruct.Q4_1"), "{r}");
}

/// Wait for the server's first index run, asking with `auth`.
fn wait_ready(s: &Server, auth: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (status, _, body) = s.request("GET", "/status", &[auth]);
        assert_eq!(status, 200, "{body}");
        if serde_json::from_str::<Value>(&body).unwrap()["status"] == "ready" {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never ready: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// POST `body` to `/v1/ask` on `s`, with `headers`.
fn post(s: &Server, body: &[u8], headers: &[&str]) -> (u16, String) {
    let (status, _, text) = s.raw(&ask_request_with(body, headers));
    (status, text)
}

fn ask_request_with(body: &[u8], headers: &[&str]) -> Vec<u8> {
    let mut req =
        format!("POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.write_all(body).unwrap();
    bytes
}

#[test]
fn post_v1_ask_answers_with_the_response_and_refuses_bad_input() {
    let t = mixed_project();
    let s = Server::start(&t, &["--token", "s3cret"]);
    let auth = "Authorization: Bearer s3cret";
    wait_ready(&s, auth);
    let (status, body) = post(&s, br#"{"query": "rust files that retry uploads"}"#, &[auth]);
    assert_eq!(status, 200, "{body}");
    let r: Value = serde_json::from_str(&body).unwrap();
    crate::contract::check(&r);
    assert_eq!(r["query_plan"]["privacy_mode"], "local_only");
    // The plan's filter keeps the Rust files, and the answer is among them.
    let found = paths(&r);
    assert!(found.iter().all(|p| p.ends_with(".rs")) && found.contains(&"src/net/upload.rs".to_string()), "{found:?}");
    assert!(!r["hits"][0]["reasoning"].as_str().unwrap().is_empty());
    let (status, body) =
        post(&s, br#"{"query": "retry uploads", "privacy_mode": "cloud_reasoning_ok", "root": "vendor"}"#, &[auth]);
    assert_eq!(status, 200, "{body}");
    let r: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (paths(&r), r["query_plan"]["privacy_mode"].as_str()),
        (vec!["vendor/retry/lib.rs".to_string()], Some("local_only")),
        "a client may not loosen the user's privacy_mode"
    );
    let big = format!(r#"{{"query": "{}"}}"#, "a".repeat(70_000));
    std::os::unix::fs::symlink("/etc", t.path().join("escape")).unwrap();
    std::os::unix::fs::symlink("/nonexistent-dir-of-vecgrep-tests/secret", t.path().join("dangling")).unwrap();
    for (body, status, says) in [
        (&b"{not json"[..], 400, "not JSON"),
        (br#"[1, 2]"#, 400, "must be a JSON object"),
        (br#"{"query": 5}"#, 400, "query must be a string"),
        (br#"{"query": "x", "warehouse_root": "/"}"#, 400, "unknown field \"warehouse_root\""),
        (
            br#"{"query": "x", "privacy_mode": "everything_ok"}"#,
            400,
            "privacy_mode must be one of local_only, cloud_reasoning_ok, cloud_embedding_ok",
        ),
        (br#"{"query": "x", "root": "/etc"}"#, 403, "outside the project root"),
        (br#"{"query": "x", "root": "../.."}"#, 403, "outside the project root"),
        (br#"{"query": "x", "root": "escape"}"#, 403, "escape: it leads outside the project root"),
        // Beyond a link out, whether a path exists is not told: missing or not, it is forbidden.
        (br#"{"query": "x", "root": "escape/hostname"}"#, 403, "escape/hostname: it leads outside"),
        (br#"{"query": "x", "root": "escape/no-such-file"}"#, 403, "escape/no-such-file: it leads outside"),
        (br#"{"query": "x", "root": "escape/hostname/x"}"#, 403, "escape/hostname/x: it leads outside"),
        (br#"{"query": "x", "root": "dangling"}"#, 403, "dangling: it leads outside"),
        (br#"{"query": "x", "root": "dangling/x"}"#, 403, "dangling/x: it leads outside"),
        (br#"{"query": "x", "root": "no/such/dir"}"#, 404, "no/such/dir: "),
        (br#"{"query": "x", "root": "src/geometry.rs/x"}"#, 404, "src/geometry.rs/x: "),
        (br#"{"query": "x", "root": "a\u0000b"}"#, 400, "root holds control characters"),
        (big.as_bytes(), 413, "the limit is 65536"),
    ] {
        let (got, text) = post(&s, body, &[auth]);
        assert_eq!(got, status, "{text}");
        assert!(error_of(status, &text).contains(says), "{text}");
        assert!(!text.contains("--skip-outside-root"), "a client has no command line: {text}");
    }
    let (status, text) = post(&s, br#"{"query": "x"}"#, &[]);
    assert_eq!(status, 401, "{text}");
    let (status, _, text) = s.request("GET", "/v1/ask?query=x", &[auth]);
    assert!(status == 405 && error_of(405, &text).contains("use POST"), "{text}");
    // Its rate limit is /search's.
    let limited = Server::start(&t, &["--rate-limit", "1"]);
    let first = post(&limited, br#"{"query": "retry"}"#, &[]).0;
    assert_eq!((first, post(&limited, br#"{"query": "retry"}"#, &[]).0), (200, 429));
}

/// Audit 181: `POST /v1/ask` wrote a file's C1 controls and bidi overrides
/// raw, where `/search` and `vg-ask --json` escape them (ndjson.md), so
/// `curl` on a terminal handed them to it.
#[test]
fn post_v1_ask_escapes_what_a_terminal_would_obey() {
    let t = Tree::git();
    t.write("banner.py", "def show_banner():\n    s = \"\u{9b}2J\u{202e} evil\"\n    return s\n");
    let s = Server::start(&t, &["--token", "s3cret"]);
    let auth = "Authorization: Bearer s3cret";
    wait_ready(&s, auth);
    let (status, body) = post(&s, br#"{"query": "show banner"}"#, &[auth]);
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains('\u{9b}') && !body.contains('\u{202e}'), "{body}");
    assert!(body.contains("\\u009b2J\\u202e evil"), "{body}");
    let r: Value = serde_json::from_str(&body).unwrap();
    assert!(
        r["hits"][0]["excerpt"].as_str().unwrap().contains("\u{9b}2J\u{202e} evil"),
        "the values are unchanged: {r}"
    );
}

/// A question over no file says so, on stderr and in the response's
/// warnings, as a search does (audit 248: `-t` choosing no file, or a
/// catalog of no projects, answered with no word).
#[test]
fn a_question_over_no_file_says_nothing_was_searched() {
    let t = mixed_project();
    let (o, response) = ask_json(&t, &["-t", "ruby", "retry uploads"]);
    assert_code(&o, 1);
    let said = "no files were searched: the filters (-t, -T, -g, --max-depth) chose none of the files under the paths";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    assert!(response["warnings"].as_array().unwrap().iter().any(|w| w == said), "{response}");
}
