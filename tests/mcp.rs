//! vg-mcp driven by a real MCP client: the official Python SDK (`mcp` from
//! PyPI, installed by scripts/mcp-client-venv.sh, which scripts/test.sh
//! runs) through tests/mcp/client.py, on temporary trees.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;

/// The Python with the MCP SDK: $VECGREP_MCP_PYTHON, or the venv
/// scripts/mcp-client-venv.sh makes.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("VECGREP_MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    let venv = cache.join("vecgrep/mcp-client-venv/bin/python");
    assert!(
        venv.is_file(),
        "the MCP client tests need the Python SDK: run scripts/mcp-client-venv.sh (scripts/test.sh does)"
    );
    venv
}

/// Run `steps` against `command` (a tool and its arguments) in the tree,
/// as the SDK client in `mode` ("handshake" or "auto"); one record per
/// step, after the connect record.
pub(crate) fn session(t: &Tree, mode: &str, command: &[&str], steps: Value) -> Vec<Value> {
    session_with(t, mode, command, steps, json!({}))
}

/// `session` with more of the server's environment.
fn session_with(t: &Tree, mode: &str, command: &[&str], steps: Value, env: Value) -> Vec<Value> {
    let mut env_all = json!({"XDG_CONFIG_HOME": t.config_home.path()});
    env_all.as_object_mut().unwrap().extend(env.as_object().unwrap().clone());
    let mut argv = vec![bin(command[0]).to_string_lossy().into_owned()];
    argv.extend(command[1..].iter().map(|a| a.to_string()));
    let plan = json!({
        "command": argv,
        "cwd": t.path(),
        "mode": mode,
        "env": env_all,
        "steps": steps,
    });
    let plan_file = t.config_home.path().join("plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client.py");
    let out = Command::new(python()).arg(script).arg(&plan_file).stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the client failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), steps_len(&plan), "{text}");
    records
}

fn steps_len(plan: &Value) -> usize {
    plan["steps"].as_array().unwrap().len() + 1
}

fn search(args: Value) -> Value {
    json!({"op": "call", "tool": "search", "args": args})
}

/// A tool call's structured content, asserting it succeeded.
pub(crate) fn structured(record: &Value) -> &Value {
    let result = &record["result"];
    assert_eq!(result["isError"], false, "{record}");
    let content = &result["structuredContent"];
    // The text content is the same JSON, for clients that read only text.
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, content);
    content
}

/// A tool call's error text, asserting it failed as a tool error (which a
/// model reads and can act on), not a protocol error.
fn tool_error(record: &Value) -> String {
    assert_eq!(record["result"]["isError"], true, "{record}");
    record["result"]["content"][0]["text"].as_str().unwrap().to_string()
}

fn files_of(content: &Value) -> Vec<String> {
    content["results"].as_array().unwrap().iter().map(|h| h["file"].as_str().unwrap().to_string()).collect()
}

#[test]
fn an_agent_lists_the_tools_and_finds_code_by_meaning() {
    let t = sample_project();
    let r = session(
        &t,
        "handshake",
        &["vg-mcp"],
        json!([
            {"op": "list_tools"},
            // The server's first run is waited for: a search waits 1.5 s for
            // it, and a loaded machine's niced indexing can take longer.
            {"op": "call", "tool": "index", "args": {}},
            search(json!({"query": "retry failed uploads", "k": 1})),
            {"op": "call", "tool": "status"},
            {"op": "write", "path": t.path().join("src/airship.py"), "text": "def launch_zeppelin(crew):\n    return crew.board()\n"},
            {"op": "call", "tool": "index", "args": {}},
            search(json!({"query": "launch the zeppelin", "k": 1, "mode": "lexical"})),
            search(json!({"query": "x", "k": 0})),
            search(json!({"query": "x", "top_k": 3})),
            search(json!({"query": "   "})),
            {"op": "call", "tool": "no_such_tool"},
            // JSON Schema 2020-12 calls 1.0 an integer, as models may write it.
            search(json!({"query": "retry failed uploads", "k": 1.0})),
            search(json!({"query": "x", "k": 2.5})),
            search(json!({"query": "x", "k": 1e300})),
        ]),
    );
    let connect = &r[0];
    assert_eq!(connect["server_info"]["name"], "vecgrep");
    assert!(connect["instructions"].as_str().unwrap().contains(&*t.path().to_string_lossy()));
    let tools = r[1]["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 4);
    for name in ["search", "ask", "status", "index"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let search_tool = tools.iter().find(|t| t["name"] == "search").unwrap();
    let props = &search_tool["inputSchema"]["properties"];
    for arg in ["query", "k", "paths", "mode", "threshold", "changed_within", "changed_before", "size", "exclude"] {
        assert!(props.get(arg).is_some(), "search has no argument {arg}: {props}");
    }
    assert_eq!(search_tool["inputSchema"]["required"], json!(["query"]));
    // JSON Schema's maxLength counts characters: 1024 of any script fit
    // the server's 4096 bytes, where 4096 promised more than it takes.
    assert_eq!(props["query"]["maxLength"], 1024, "{props}");
    assert!(search_tool["outputSchema"]["properties"]["results"].is_object(), "{search_tool}");
    assert_eq!(search_tool["annotations"]["readOnlyHint"], true);

    assert_eq!(structured(&r[2])["status"], "completed", "{}", r[2]);
    let found = structured(&r[3]);
    let hit = &found["results"][0];
    assert_eq!(hit["file"], "src/upload.py", "{found}");
    assert!(hit["start_line"].as_u64().unwrap() >= 1 && hit["end_line"].as_u64() >= hit["start_line"].as_u64());
    assert!(hit["score"].as_f64().unwrap() > 0.3 && hit["text"].as_str().unwrap().contains("upload_with_retry"));
    assert_eq!(found["root"], t.path().to_string_lossy().as_ref());

    let status = structured(&r[4]);
    assert_eq!((status["files"].as_u64(), status["embedder_model"].as_str()), (Some(4), Some("all-MiniLM-L6-v2")));

    let run = structured(&r[6]);
    assert_eq!((run["status"].as_str(), run["files"].as_u64()), (Some("completed"), Some(5)), "{run}");
    assert_eq!(files_of(structured(&r[7])), ["src/airship.py"], "the run indexed the new file");

    assert!(tool_error(&r[8]).contains("k must be from 1 to 1000"));
    assert!(tool_error(&r[9]).contains("unknown field `top_k`"), "a misspelt argument is not ignored");
    assert!(tool_error(&r[10]).contains("the query is empty"));
    assert!(r[11]["error"]["message"].as_str().unwrap().contains("tool not found"), "{}", r[11]);
    assert_eq!(files_of(structured(&r[12])), ["src/upload.py"], "{}", r[12]);
    assert!(tool_error(&r[13]).contains("2.5 is not a whole number"), "{}", r[13]);
    assert!(tool_error(&r[14]).contains("1e+300 is larger than any this argument takes"), "{}", r[14]);
    assert!(props["k"]["type"].to_string().contains("integer"), "{props}");
    // No `"default": null` where the description gives the default (review 231).
    assert!(props["k"].get("default").is_none(), "{props}");
    let index_tool = tools.iter().find(|t| t["name"] == "index").unwrap();
    assert!(index_tool["inputSchema"]["properties"]["wait_seconds"].get("default").is_none(), "{index_tool}");
}

#[test]
fn an_agent_asks_a_question_and_reads_why_each_hit_ranked() {
    let t = sample_project();
    let r = session(
        &t,
        "handshake",
        &["vg-mcp", "--full-index"],
        json!([
            {"op": "list_tools"},
            {"op": "call", "tool": "ask", "args": {"query": "python files that retry uploads"}},
            {"op": "call", "tool": "ask", "args": {"query": "retry uploads", "privacy_mode": "cloud_reasoning_ok", "paths": ["src"]}},
            {"op": "call", "tool": "ask", "args": {"query": "retry", "privacy_mode": "yolo"}},
            {"op": "call", "tool": "ask", "args": {"query": "retry", "paths": ["/etc"]}},
            {"op": "call", "tool": "ask", "args": {"query": "retry", "root": "/"}},
            search(json!({"query": "retry failed uploads", "k": 1})),
        ]),
    );
    let tools = r[1]["result"]["tools"].as_array().unwrap();
    let ask = tools.iter().find(|t| t["name"] == "ask").unwrap();
    assert_eq!(ask["inputSchema"]["required"], json!(["query"]));
    assert!(ask["outputSchema"]["properties"]["query_plan"].is_object(), "{ask}");
    let answered = structured(&r[2]);
    crate::contract::check(answered);
    assert_eq!(answered["query_plan"]["l0_filters"]["extensions"], json!([".py", ".pyi"]));
    assert_eq!(answered["query_plan"]["l1_query_text"], "retry uploads");
    let top = &answered["hits"][0];
    assert_eq!((top["path"].as_str(), top["layers"].clone()), (Some("src/upload.py"), json!(["L0", "L1"])));
    assert!(top["reasoning"].as_str().unwrap().contains("its name upload_with_retry answers the query"), "{top}");
    let scoped = structured(&r[3]);
    // A client may not loosen the user's mode (an agent steered by a
    // repository's text could send the code away); the mode in force is
    // in the response.
    assert_eq!(scoped["query_plan"]["privacy_mode"], "local_only", "the mode in force is in the response");
    assert!(scoped["hits"].as_array().unwrap().iter().all(|h| h["path"].as_str().unwrap().starts_with("src/")));
    assert!(tool_error(&r[4]).contains("unknown variant `yolo`"), "{}", r[4]);
    // Where the user allows more, a client may ask for less, never more.
    t.global_config("privacy_mode = \"cloud_reasoning_ok\"\n");
    let ask =
        |mode: &str| json!({"op": "call", "tool": "ask", "args": {"query": "retry uploads", "privacy_mode": mode}});
    let looser = session(&t, "handshake", &["vg-mcp"], json!([ask("local_only"), ask("cloud_embedding_ok")]));
    let modes: Vec<_> = looser[1..].iter().map(|r| structured(r)["query_plan"]["privacy_mode"].clone()).collect();
    assert_eq!(modes, [json!("local_only"), json!("cloud_reasoning_ok")]);
    assert!(tool_error(&r[5]).contains("outside the project root"), "{}", r[5]);
    assert!(tool_error(&r[6]).contains("unknown field `root`"), "{}", r[6]);
    let hit = &structured(&r[7])["results"][0];
    let why = hit["reasoning"].as_str().unwrap();
    assert!(why.contains("by meaning") && why.contains("by words"), "search says why too: {hit}");
}

#[test]
fn nothing_outside_the_served_paths_is_reached() {
    let t = sample_project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "def upload_the_passwords():\n    retry_failed_uploads()\n")
        .unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("src/escape")).unwrap();
    let outside_path = outside.path().canonicalize().unwrap();
    // The project named through a link to it, as an editor's workspace may.
    let alias = outside_path.join("alias");
    std::os::unix::fs::symlink(t.path(), &alias).unwrap();
    let r = session(
        &t,
        "handshake",
        &["vg-mcp", "--full-index", "src"],
        json!([
            search(json!({"query": "retry failed uploads", "paths": ["/etc"]})),
            search(json!({"query": "retry failed uploads", "paths": ["../"]})),
            search(json!({"query": "retry failed uploads", "paths": ["src/../../x"]})),
            search(json!({"query": "retry failed uploads", "paths": [outside_path]})),
            search(json!({"query": "retry failed uploads", "paths": ["src/escape"]})),
            search(json!({"query": "retry failed uploads", "paths": ["docs"]})),
            search(json!({"query": "retry failed uploads", "paths": ["src/missing.py"]})),
            search(json!({"query": "retry failed uploads", "paths": ["src/config.py"], "threshold": -1})),
            search(json!({"query": "retry failed uploads", "k": 20, "threshold": -1})),
            {"op": "call", "tool": "status"},
            // Long, within a message's bound (1 MiB).
            search(json!({"query": "retry failed uploads", "paths": [format!("src/{}", "x".repeat(900 << 10))]})),
            search(json!({"query": "retry failed uploads", "paths": ["../".repeat(300 << 10)]})),
            search(json!({"query": "retry failed uploads", "paths": [alias.join("src/config.py")], "threshold": -1})),
            search(json!({"query": "retry failed uploads", "paths": [""], "threshold": -1})),
            search(json!({"query": "retry failed uploads", "paths": [alias.join("docs")]})),
            search(json!({"query": "retry failed uploads", "paths": [format!("src/{}", "word ".repeat(45))]})),
        ]),
    );
    // A path of words is shown once too (it was twice, in 600 characters).
    let e = tool_error(&r[16]);
    assert!(e.chars().count() <= 420 && e.matches("word").count() <= 41, "{} characters: {e}", e.chars().count());
    assert!(e.contains("No such file or directory"), "{e}");
    assert_eq!(files_of(structured(&r[13])), ["src/config.py"], "a path through a link to the root");
    assert_eq!(files_of(structured(&r[14])), files_of(structured(&r[9])), "an empty path is left out");
    assert!(tool_error(&r[15]).contains("not among the paths this server searches"), "{}", tool_error(&r[15]));
    // An error repeats a path a client sent only in part: one short line.
    for i in [11, 12] {
        let e = tool_error(&r[i]);
        assert!(e.len() < 1000 && e.contains('…'), "step {i}: {}", &e[..e.len().min(300)]);
    }
    // Shown once, and the reason still said.
    let e = tool_error(&r[11]);
    assert!(e.matches('x').count() <= 270 && e.contains("File name too long"), "{e}");
    for (i, why) in [
        (1, "outside the project root"),
        (2, "outside the project root"),
        (3, "outside the project root"),
        (4, "outside the project root"),
        (5, "outside the project root"),
        (6, "not among the paths this server searches (src)"),
        (7, "missing.py"),
    ] {
        let e = tool_error(&r[i]);
        assert!(e.contains(why), "step {i}: {e}");
    }
    assert_eq!(files_of(structured(&r[8])), ["src/config.py"], "a path narrows the search");
    let everything = files_of(structured(&r[9]));
    assert!(everything.iter().all(|f| f.starts_with("src/") && !f.contains("secret")), "{everything:?}");
    assert!(!everything.contains(&"docs/guide.md".to_string()));
    let status = structured(&r[10]);
    assert_eq!((status["files"].as_u64(), &status["scope"]), (Some(3), &json!(["src"])), "nothing outside was indexed");
}

#[test]
fn the_first_search_answers_while_indexing_and_says_how_far_it_is() {
    let t = sample_project();
    for i in 0..1500 {
        t.write(
            &format!("gen/mod{i:04}.py"),
            &format!("def handler_{i}(request):\n    \"\"\"Handle request number {i} and log it.\"\"\"\n    return request.reply({i})\n"),
        );
    }
    let r = session(
        &t,
        "handshake",
        // Embedding fully, so that indexing lasts (a static run is over at once).
        &["vg-mcp", "--full"],
        json!([
            search(json!({"query": "retry failed uploads", "k": 3})),
            {"op": "call", "tool": "ask", "args": {"query": "where do we retry failed uploads"}},
            {"op": "call", "tool": "index", "args": {"wait_seconds": 300}, "progress": true},
            search(json!({"query": "retry failed uploads", "k": 3})),
        ]),
    );
    let early = structured(&r[1]);
    assert_eq!(early["index"]["status"], "indexing", "{early}");
    let note = early["note"].as_str().unwrap();
    assert!(note.contains("the index is being built") && note.contains("files processed"), "{note}");
    assert!(early["index"]["files"].as_u64().unwrap() < 1504);
    // An ask says so too: it answered from the part indexed, in silence.
    let warnings = structured(&r[2])["warnings"].to_string();
    assert!(warnings.contains("the index is being built"), "{warnings}");
    let run = structured(&r[3]);
    assert_eq!(run["status"], "completed", "{run}");
    let progress = r[3]["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "a waiting index call hears how far the run is: {r:?}");
    assert!(progress.last().unwrap()["message"].as_str().unwrap().contains("files"), "{progress:?}");
    // Each says more than the last, as MCP asks.
    let values: Vec<f64> = progress.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let later = structured(&r[4]);
    assert_eq!((later["index"]["status"].as_str(), later["note"].is_null()), (Some("ready"), true), "{later}");
    assert_eq!(later["results"][0]["file"], "src/upload.py");
}

/// The progress an `index` call hears is of the run it waits for: the
/// numbers of one that ended before the call were its first news ("40 of
/// 40 files", before the run began), and counted again beside the run's.
#[test]
fn an_index_calls_progress_is_of_the_run_it_waits_for() {
    let t = Tree::git();
    let body = |i: usize, n: usize| -> String {
        (0..n)
            .map(|j| {
                format!("def step_{i}_{j}(value):\n    \"\"\"Step {j} of stage {i}.\"\"\"\n    return value + {j}\n\n")
            })
            .collect()
    };
    for i in 0..40 {
        t.write(&format!("stage{i:02}.py"), &body(i, 1));
    }
    let grown: Vec<Value> = (0..40)
        .map(|i| json!({"op": "write", "path": t.path().join(format!("stage{i:02}.py")), "text": body(i, 12)}))
        .collect();
    let mut steps = vec![json!({"op": "call", "tool": "index", "args": {}})];
    steps.extend(grown);
    steps.push(json!({"op": "call", "tool": "index", "args": {"wait_seconds": 300}, "progress": true}));
    let r = session(&t, "handshake", &["vg-mcp", "--full", "--refresh", "3600"], Value::Array(steps));
    let last = r.last().unwrap();
    assert_eq!(structured(last)["status"], "completed", "{last}");
    let progress = last["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "{last}");
    for news in progress {
        assert_eq!(news["total"].as_f64(), Some(40.0), "only the run waited for counts: {progress:?}");
    }
    assert!(progress[0]["progress"].as_f64().unwrap() < 40.0, "the last run's end was news: {progress:?}");
}

/// A search after the server's index run failed says the run failed: it
/// said "nothing under the served paths was admitted", and an agent
/// looked for its mistake in the paths.
#[test]
fn a_search_after_a_failed_run_says_the_run_failed() {
    let t = sample_project();
    let no_model = tempfile::tempdir().unwrap();
    let r = session_with(
        &t,
        "handshake",
        &["vg-mcp", "--full"],
        // The run is waited for, as an agent may: a search waits 1.5 s for
        // the first, and a loaded machine's niced indexing can take longer.
        json!([{"op": "call", "tool": "index", "args": {}}, search(json!({"query": "retry failed uploads", "mode": "lexical"}))]),
        json!({"VECGREP_MODEL_DIR": no_model.path()}),
    );
    assert_eq!(structured(&r[1])["status"], "failed", "{}", r[1]);
    let note = structured(&r[2])["note"].as_str().unwrap_or_default().to_string();
    assert!(note.contains("the last index run failed") && !note.contains("admitted"), "{:?}", r[1]);
    assert_eq!(note.matches("the last index run failed").count(), 1, "said once: {note}");
}

/// Served paths that admit no file are said so though the index holds
/// other paths' files (an earlier run's): the note went by the whole
/// index's count, and an agent read the empty result as "no such code".
#[test]
fn paths_that_admit_nothing_are_said_so_beside_other_paths_files() {
    let t = Tree::git();
    t.write("src/upload.py", "def retry_upload():\n    return 1\n");
    std::fs::create_dir_all(t.path().join("assets")).unwrap();
    std::fs::write(t.path().join("assets/logo.bin"), b"\0\x01\x02").unwrap();
    assert_code(&run(t.cmd("vg-index", ".").stdout(Stdio::null())), 0);
    let r = session(
        &t,
        "handshake",
        &["vg-mcp", "assets"],
        json!([
            {"op": "call", "tool": "index", "args": {}},
            search(json!({"query": "retry upload"})),
            {"op": "call", "tool": "ask", "args": {"query": "retry upload"}},
        ]),
    );
    let said = "nothing under them was admitted";
    let found = structured(&r[2]);
    assert!(found["results"].as_array().unwrap().is_empty(), "{found}");
    assert!(found["note"].as_str().unwrap_or_default().contains(said), "{found}");
    let warnings = structured(&r[3])["warnings"].to_string();
    assert!(warnings.contains(said), "{warnings}");
}

#[test]
fn the_current_protocol_revision_and_the_porcelain() {
    let t = sample_project();
    // The SDK's "auto" mode asks for the newest revision (no handshake).
    let r = session(
        &t,
        "auto",
        &["vecgrep", "--mcp", "src"],
        json!([
            {"op": "call", "tool": "index", "args": {}},
            search(json!({"query": "read the settings file", "k": 1, "exclude": ["*.py"]})),
            // Empty strings, as models fill optional fields, are filters left
            // out: beside a real glob, and for every filter alike.
            search(json!({"query": "read the settings file", "k": 3, "threshold": -1, "exclude": ["", "*.rs"],
                "size": [" "], "changed_within": "", "changed_before": " "})),
        ]),
    );
    assert_eq!(r[0]["protocol_version"], "2026-07-28");
    assert!(r[0]["instructions"].as_str().unwrap().contains("(paths: src)"), "{}", r[0]);
    let found = structured(&r[2]);
    assert!(files_of(found).iter().all(|f| !f.ends_with(".py")), "{found}");
    let found = files_of(structured(&r[3]));
    assert!(!found.is_empty() && found.iter().all(|f| f.ends_with(".py")), "{found:?}");
}

/// A client that closes stdin while an `ask` waits on a chat model that
/// never answers: the server gives up on the answer it owes and exits
/// within the 30 s mcp.md promises (it took 36: the SDK's own drain and the
/// runtime's stop came after a 30 s wait).
#[test]
fn it_exits_within_30_s_when_the_client_leaves_during_an_ask_that_hangs() {
    let t = sample_project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    t.global_config(&format!(
        "llm_url = \"http://{}/v1\"\nllm_model = \"m\"\nplanner = \"llm\"\n",
        listener.local_addr().unwrap()
    ));
    let (asked, asked_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming().take(4) {
            held.push(connection);
            let _ = asked.send(());
        }
        std::thread::sleep(Duration::from_secs(120));
    });
    let mut child =
        t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "ask", "arguments": {"query": "where do we retry failed uploads"}}}),
    ];
    for line in lines {
        std::io::Write::write_all(&mut stdin, format!("{line}\n").as_bytes()).unwrap();
    }
    asked_rx.recv_timeout(Duration::from_secs(60)).expect("the chat model was never asked");
    drop(stdin);
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    assert_code(&out, 0);
    assert!(took < Duration::from_secs(30), "exited {took:?} after stdin closed");
    assert!(took > Duration::from_secs(18), "gave up on the ask it owed at once ({took:?})");
}

/// Asks waiting on a chat model that never answers, cancelled or not,
/// keep no search waiting: eight of them took every turn, and a search
/// answered only once they had waited out `llm_timeout`.
#[test]
fn a_search_is_answered_while_asks_wait_on_the_chat_model() {
    let t = sample_project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    t.global_config(&format!(
        "llm_url = \"http://{}/v1\"\nllm_model = \"m\"\nllm_timeout = 300\n",
        listener.local_addr().unwrap()
    ));
    let (asked, asked_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming() {
            held.push(connection);
            let _ = asked.send(());
        }
    });
    let mut child =
        t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |line: Value| std::io::Write::write_all(&mut stdin, format!("{line}\n").as_bytes()).unwrap();
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // 200 asks: more than vg-mcp's first bound on answers owed (128) held
    // a search behind them (review 176).
    for id in 10..210 {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "ask", "arguments": {"query": "explain how the upload retry works"}}}));
    }
    // Asks at work, waiting on the chat model (as many as may be at once:
    // all eight took a turn).
    for _ in 0..2 {
        if asked_rx.recv_timeout(Duration::from_secs(60)).is_err() {
            child.kill().unwrap();
            panic!("no ask asked the chat model");
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let (answers, answered) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let _ = answers.send(line);
        }
    });
    let search_answered = |id: u64, send: &mut dyn FnMut(Value)| {
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "retry a failed upload", "k": 1}}}));
        let start = Instant::now();
        let search = loop {
            let Ok(line) = answered.recv_timeout(Duration::from_secs(90)) else { break Value::Null };
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                break message;
            }
        };
        (search, start.elapsed())
    };
    // A search while every ask still waits, then one after all are cancelled.
    let (waiting, waiting_took) = search_answered(1000, &mut send);
    for id in 10..210 {
        send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}));
    }
    let (cancelled, cancelled_took) = search_answered(1001, &mut send);
    child.kill().unwrap();
    child.wait().unwrap();
    for (search, took) in [(waiting, waiting_took), (cancelled, cancelled_took)] {
        let hits = search["result"]["structuredContent"]["results"].as_array();
        assert!(hits.is_some_and(|h| !h.is_empty()), "{search}");
        assert!(took < Duration::from_secs(60), "the search waited {took:?} behind the asks");
    }
}

#[test]
fn it_exits_when_the_client_leaves_and_survives_garbage() {
    let t = sample_project();
    // No client at all: stdin closed at once.
    let start = Instant::now();
    let out = run(t.cmd("vg-mcp", ".").stdin(Stdio::null()));
    assert_code(&out, 0);
    assert!(start.elapsed() < Duration::from_secs(60));
    // Lines that are not JSON-RPC, then a proper handshake: the server answers it.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let input = format!("this is not json\n{{\"jsonrpc\": \"2.0\"}}\n[1,2]\n{init}\n");
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answered: Vec<Value> = stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(answered.iter().any(|m| m["id"] == 1 && m["result"]["serverInfo"]["name"] == "vecgrep"), "{answered:?}");
    // A client that closed our stdout before the handshake's answer: a
    // closed pipe is success, not a failed handshake naming the SDK's types.
    let mut child =
        t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, format!("{init}\n").as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    assert!(!stderr(&out).contains("handshake"), "{}", stderr(&out));
    // After the handshake, malformed requests get the JSON-RPC error they
    // call for, with their id; lines that are not JSON get no answer. A
    // request longer than the most vg-mcp reads (1 MiB) is told so, by the
    // id its first bytes give, where it was dropped and never answered.
    let too_long = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "x".repeat(2 << 20)}}});
    let input = format!(
        "{init}\n{}\nnot json\n{}\n{}\n{too_long}\n{}\n",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"nme": "search"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "search"}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    );
    // Arguments serde refuses, quoting a client's 3,000 characters: the error repeats 200 at most.
    let long_mode = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "x", "mode": "m".repeat(3000)}}});
    // A method's name is all of its error's message: 200 of it at most, too.
    let long_method = json!({"jsonrpc": "2.0", "id": 7, "method": "ab ".repeat(200)});
    let input = format!("{input}{long_mode}\n{long_method}\n");
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let code_of = |id: u64| answered.iter().find(|m| m["id"] == id).map(|m| m["error"]["code"].clone());
    assert_eq!((code_of(2), code_of(3), code_of(5)), (Some(json!(-32602)), Some(json!(-32600)), Some(json!(-32600))));
    assert!(answered.iter().any(|m| m["id"] == 4 && m["result"]["tools"].is_array()), "{answered:?}");
    assert_eq!(answered.len(), 7, "{answered:?}");
    let unknown = answered.iter().find(|m| m["id"] == 7).unwrap();
    let said = unknown["error"]["message"].as_str().unwrap_or_else(|| panic!("{unknown}"));
    assert!(said.contains("ab ab") && said.chars().count() <= 201, "{} characters: {said}", said.chars().count());
    let refused = answered.iter().find(|m| m["id"] == 6).unwrap();
    let said = refused["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{refused}"));
    assert!(refused["result"]["isError"] == true && said.contains("mmm"), "{refused}");
    assert!(said.chars().count() <= 201 && said.matches('m').count() < 120, "{} characters: {said}", said.len());
    assert!(said.contains("expected one of"), "what the client may send is still said: {said}");
}

/// A request that gives a key twice is refused, not read by its last: a
/// proxy in front that reads the first would let `status` through and
/// vg-mcp would run `search`, or wait for the answer to id 94 that came
/// as 93 (audit 274). The same request given once is answered.
#[test]
fn a_request_giving_a_key_twice_is_refused() {
    let t = sample_project();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let input = format!(
        "{init}\n{}\n{}\n{}\n{}\n{}\n",
        r#"{"jsonrpc":"2.0","id":94,"id":93,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":92,"method":"ping","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","name":"search","arguments":{"query":"retry upload"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"retry upload","query":"password"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"retry upload"}}}"#,
    );
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let error_of = |id: Option<u64>| {
        let m = answered.iter().find(|m| id.map_or(m.get("id").is_none(), |id| m["id"] == id));
        m.map(|m| (m["error"]["code"].clone(), m["error"]["message"].as_str().unwrap_or_default().to_string()))
    };
    assert_eq!(error_of(None), Some((json!(-32600), "id is given twice: give each key once".into())), "{answered:?}");
    assert!(!answered.iter().any(|m| m["id"] == 93 || m["id"] == 94), "{answered:?}");
    assert_eq!(error_of(Some(92)).map(|e| e.0), Some(json!(-32600)), "{answered:?}");
    assert_eq!(error_of(Some(2)), Some((json!(-32602), "params.name is given twice: give each key once".into())));
    assert_eq!(error_of(Some(3)).unwrap().1, "params.arguments.query is given twice: give each key once");
    let search = answered.iter().find(|m| m["id"] == 4).unwrap();
    assert!(search["result"]["isError"] != true && search["error"].is_null(), "{search}");
}

/// Before any session, a notification or a response is dropped, not the
/// end of the server: a stray notifications/initialized ended it with 2.
#[test]
fn messages_before_a_session_are_dropped_not_the_end_of_it() {
    let t = sample_project();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let input = format!(
        "{}
{}
{}
{}
{init}
{}
",
        json!({"jsonrpc": "2.0", "id": 10, "method": "ping"}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
        json!({"jsonrpc": "2.0", "id": 11, "method": "ping"}),
    );
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids: Vec<Value> = answered.iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, [json!(10), json!(1), json!(11)], "{answered:?}");
    // A request of a revision the SDK does not support is refused and
    // begins no session: a notification after it is dropped as before one.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let input = format!(
        "{}\n{}\n{}\n",
        json!({"jsonrpc": "2.0", "id": 20, "method": "tools/list", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20}}),
        json!({"jsonrpc": "2.0", "id": 21, "method": "ping"}),
    );
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert_eq!((&answered[0]["id"], &answered[0]["error"]["code"]), (&json!(20), &json!(-32022)), "{answered:?}");
    assert!(answered[1]["id"] == 21 && answered[1]["result"].is_object(), "{answered:?}");
}

/// An `initialize` after the session began is refused, whichever began
/// it: after a 2026-07-28 request the SDK agreed on 2025-06-18 and then
/// refused every request for want of 2026-07-28's metadata (audit 251).
#[test]
fn a_second_initialize_is_refused_and_the_session_goes_on() {
    let t = sample_project();
    let init = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    };
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta}});
    let input = format!("{}\n{}\n{}\n", list(1), init(2), list(3));
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_id = |id: u64| answered.iter().find(|m| m["id"] == id).cloned().unwrap_or_default();
    assert!(by_id(1)["result"]["tools"].is_array() && by_id(3)["result"]["tools"].is_array(), "{answered:?}");
    assert_eq!(by_id(2)["error"]["code"], -32600, "{answered:?}");
    assert!(
        by_id(2)["error"]["message"].as_str().unwrap_or_default().contains("initialize comes once"),
        "{answered:?}"
    );
    // After a handshake, too: the revision agreed first stays.
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ping = json!({"jsonrpc": "2.0", "id": 12, "method": "ping"});
    let input = format!("{}\n{initialized}\n{}\n{ping}\n", init(10), init(11));
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_id = |id: u64| answered.iter().find(|m| m["id"] == id).cloned().unwrap_or_default();
    assert_eq!(by_id(10)["result"]["protocolVersion"], "2025-06-18", "{answered:?}");
    assert_eq!(by_id(11)["error"]["code"], -32600, "{answered:?}");
    assert!(by_id(12)["result"].is_object(), "{answered:?}");
}

/// A burst of `status` calls takes turns as searches do: each held a
/// connection to the index of its own, and 3,000 pipelined ones held a
/// thousand files open for good (at the usual limit of 1,024, the next
/// run could read no file). A thousand calls written before the client
/// reads are more than a pipe holds: a server that stopped reading while
/// it owed answers deadlocked with such a client (review 175).
#[test]
fn a_burst_of_status_calls_leaves_few_files_open() {
    use std::io::{BufRead, BufReader, Write};
    let t = sample_project();
    let mut child =
        t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let mut input = format!("{init}\n{}\n", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 1..=1000 {
        let call =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "status", "arguments": {}}});
        input.push_str(&format!("{call}\n"));
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answered = 0;
    while answered < 1001 {
        let line = lines.next().expect("an answer").unwrap();
        answered += usize::from(line.contains("\"id\""));
    }
    let open = std::fs::read_dir(format!("/proc/{}/fd", child.id())).unwrap().count();
    drop(stdin);
    child.wait().unwrap();
    assert!(open < 100, "{open} files open after the burst");
}

/// A client that closes stdin while an `index` call waits gets its answer
/// (the run still `running`) before the server exits: it was dropped.
#[test]
fn an_index_call_in_flight_when_the_client_leaves_is_answered() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    // Another run holds the lock: the call's run cannot end.
    let lock = hold_index_lock(&t);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let input = format!(
        "{init}\n{}\n{}\n{}\n",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": "ix", "method": "tools/call",
               "params": {"name": "index", "arguments": {"wait_seconds": 30}}}),
        json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
               "params": {"name": "search", "arguments": {"query": "retry an upload", "mode": "lexical"}}}),
    );
    let start = Instant::now();
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    assert!(start.elapsed() < Duration::from_secs(25), "it waited out the call: {:?}", start.elapsed());
    let answered: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let index = answered.iter().find(|m| m["id"] == "ix").unwrap_or_else(|| panic!("{answered:?}"));
    assert_eq!(index["result"]["structuredContent"]["status"], "running", "{index}");
    assert!(answered.iter().any(|m| m["id"] == "s"), "{answered:?}");
    drop(lock);
}

/// Issue 42: with -L, a link inside the served paths to elsewhere in the
/// root (or outside it) is not followed, so the served paths still bound
/// what is reached; and `status` refuses an argument it does not know.
#[test]
fn followed_links_stay_within_the_served_paths_and_status_refuses_unknown_arguments() {
    let t = sample_project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "def bake_the_passwords():\n    sourdough()\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("src/escape")).unwrap();
    std::os::unix::fs::symlink(t.path().join("docs"), t.path().join("src/docs")).unwrap();
    let r = session(
        &t,
        "handshake",
        &["vg-mcp", "--full-index", "-L", "src"],
        json!([
            search(json!({"query": "bake sourdough bread", "k": 20, "threshold": -1})),
            {"op": "call", "tool": "status"},
            {"op": "call", "tool": "status", "args": {"verbose": true}},
        ]),
    );
    let files = files_of(structured(&r[1]));
    assert!(
        !files.is_empty() && files.iter().all(|f| f.starts_with("src/") && !f.starts_with("src/docs/")),
        "{files:?}"
    );
    assert!(!files.iter().any(|f| f.contains("escape")), "{files:?}");
    assert_eq!(structured(&r[2])["files"], 3, "nothing beyond the served paths was indexed");
    assert!(tool_error(&r[3]).contains("unknown field `verbose`"), "{}", r[3]);
}

#[test]
fn an_agent_searches_a_catalog_and_its_paths_stay_within_its_projects() {
    let (t, catalogs) = api_and_billing_catalog();
    t.write("src/billing/tax.py", "def vat_for(amount):\n    \"\"\"The value added tax owed on an amount.\"\"\"\n")
        .write("elsewhere/secret.py", "def email_the_passwords():\n    pass\n");
    std::os::unix::fs::symlink(t.path().join("elsewhere"), t.path().join("src/billing/escape")).unwrap();
    std::os::unix::fs::symlink(t.path().join("elsewhere/gone/x"), t.path().join("src/billing/dangling")).unwrap();
    let r = session_with(
        &t,
        "handshake",
        &["vg-mcp", "--full-index", "--catalog", "team"],
        json!([
            search(json!({"query": "email the monthly invoice", "k": 20, "threshold": -1})),
            search(json!({"query": "email the monthly invoice", "paths": ["billing/tax.py"], "threshold": -1})),
            search(json!({"query": "email the monthly invoice", "paths": ["billing/../../elsewhere"]})),
            search(json!({"query": "email the monthly invoice", "paths": ["/etc"]})),
            // Beyond a link out of its projects, whether a path exists is not told.
            search(json!({"query": "email the monthly invoice", "paths": ["billing/escape/secret.py"]})),
            search(json!({"query": "email the monthly invoice", "paths": ["billing/escape/nope.py"]})),
            search(json!({"query": "email the monthly invoice", "paths": ["billing/dangling"]})),
        ]),
        json!({"VECGREP_CATALOG_DIR": catalogs}),
    );
    let all = structured(&r[1]);
    assert_eq!(files_of(all)[0], "billing/invoice.py", "a catalog's files are named <project>/<path>");
    assert!(files_of(all).iter().all(|f| f.starts_with("api/") || f.starts_with("billing/")), "{all}");
    let root = std::path::PathBuf::from(all["root"].as_str().unwrap());
    assert!(root.join(files_of(all)[0].as_str()).is_file(), "root/file opens the file through the catalog's link");
    assert_eq!(files_of(structured(&r[2])), ["billing/tax.py"], "a path narrows the search");
    for i in [3, 4, 5, 6, 7] {
        let e = tool_error(&r[i]);
        assert!(e.contains("outside the project root"), "step {i}: {e}");
    }
}

/// Audit 181: a search's answer carries a file's C1 controls and bidi
/// overrides as `\u` escapes, as records do, not raw: the same values.
#[test]
fn answers_escape_what_a_terminal_would_obey() {
    let t = Tree::git();
    t.write("banner.py", "def show_banner():\n    s = \"\u{9b}2J\u{202e} evil\"\n    return s\n");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "show banner", "mode": "lexical"}}});
    let mut child =
        t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let input = format!("{init}\n{initialized}\n{call}\n");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}'), "{text}");
    assert!(text.contains("\\u009b2J\\u202e evil"), "{text}");
    let answer: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\\u009b2J\\u202e evil"), "the text block's JSON is escaped too: {text}");
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), answer["result"]["structuredContent"]);
    let hits = &answer["result"]["structuredContent"]["results"];
    assert!(hits[0]["text"].as_str().unwrap().contains("\u{9b}2J\u{202e} evil"), "the values are unchanged: {hits}");
}
