//! `vg-answer` and `vecgrep --answer`: a real chat model (SmolLM2-135M,
//! served on loopback by scripts/llm-server.sh) answers from the top hits;
//! its answer is held to them, and `--learn` teaches the next search. Then
//! the ways an endpoint or a stream goes wrong.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// A chat model served for one test; stopped when dropped.
pub(crate) struct LlmServer {
    dir: tempfile::TempDir,
    pub(crate) url: String,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/llm-server.sh")
}

impl LlmServer {
    pub(crate) fn start() -> LlmServer {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new(script()).arg("start").arg(dir.path()).output().unwrap();
        assert!(o.status.success(), "scripts/llm-server.sh start failed: {}", String::from_utf8_lossy(&o.stderr));
        let url = String::from_utf8(o.stdout).unwrap().trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"), "{url}");
        LlmServer { dir, url }
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("stop").arg(self.dir.path()).output();
    }
}

/// Learning from an answer can fail (learned.md full, or not a file):
/// the answer the model gave is written all the same, and the failure is
/// the run's error, said after it.
#[test]
fn an_answer_is_kept_when_learning_from_it_fails() {
    let llm = LlmServer::start();
    let t = ledger_project();
    std::fs::create_dir_all(t.path().join(".vecgrep/kg/learned.md")).unwrap();
    let o = run(t
        .cmd("vecgrep", ".")
        .args(["--answer", "--learn", "--force-answer", "--json", "--threshold", "0"])
        .args(["--llm-url", &llm.url, "which class keeps the ledger"]));
    assert_code(&o, 2);
    let a = answer_of(&o);
    assert!(!a["text"].as_str().unwrap().trim().is_empty(), "{a}");
    assert!(a["learned"].as_array().is_none_or(|l| l.is_empty()), "{a}");
    let err = stderr(&o);
    assert!(err.contains("vecgrep: the answer is written, but nothing was learned from it: "), "{err}");
}

fn answer_of(o: &std::process::Output) -> Value {
    let recs = records(o);
    let last = recs.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "answer", "the answer ends the stream: {recs:?}\n{}", stderr(o));
    last
}

#[test]
fn a_real_model_answers_an_insufficient_search_from_its_hits_and_teaches_the_next_one() {
    let llm = LlmServer::start();
    let t = ledger_project();
    let ask = |query: &str, more: &[&str]| {
        run(t
            .cmd("vecgrep", ".")
            .args(["--answer", "--json", "--threshold", "0", "--llm-url", &llm.url])
            .args(more)
            .arg(query))
    };
    let o = ask("which class keeps the ledger", &["--learn"]);
    assert_code(&o, 0);
    let recs = records(&o);
    let hits: Vec<&Value> = of_type(&recs, "hit");
    let a = answer_of(&o);
    recs.iter().for_each(|r| drop(crate::contract::check(r)));
    // The search was insufficient (no word of it in the code), so the model was asked.
    assert_eq!((a["reason"].as_str(), a["v"].as_u64()), (Some("insufficient"), Some(1)), "{a}");
    assert_eq!(a["model"], "SmolLM2-135M-Instruct.Q4_1");
    assert!(!a["text"].as_str().unwrap().trim().is_empty(), "{a}");
    let given = a["given"].as_u64().unwrap() as usize;
    assert!(given >= 1 && given <= hits.len().min(5), "{a}");
    // Every citation is a line of a hit it was given.
    for c in a["citations"].as_array().unwrap() {
        let inside = hits[..given].iter().any(|h| {
            h["file"] == c["file"] && (h["start_line"].as_u64()..=h["end_line"].as_u64()).contains(&c["line"].as_u64())
        });
        assert!(inside, "{c} is not a line of a hit given: {a}");
    }
    // --learn wrote what the answer bridged; each synonym is in the answer and in the code given.
    let learned = a["learned"].as_array().cloned().unwrap_or_default();
    assert!(learned.contains(&"ledger".into()), "the model names AccountBook for the ledger: {a}");
    let file = read(&t.path().join(".vecgrep/kg/learned.md"));
    for line in file.lines().filter_map(|l| l.strip_prefix("synonyms:: ")) {
        for synonym in line.split(", ") {
            assert!(a["text"].as_str().unwrap().contains(synonym), "{synonym} is not in the answer: {a}");
            assert!(hits[..given].iter().any(|h| h["text"].as_str().unwrap().contains(synonym)), "{synonym}");
        }
    }
    // The same question gets the same answer (temperature 0).
    std::fs::remove_file(t.path().join(".vecgrep/kg/learned.md")).unwrap();
    let again = answer_of(&ask("which class keeps the ledger", &["--learn"]));
    assert_eq!((&again["text"], &again["citations"]), (&a["text"], &a["citations"]));
    // What it learned works: the concept fires, the search now looks sufficient, no model is asked.
    let o = ask("ledger", &[]);
    assert_code(&o, 0);
    let recs = records(&o);
    assert!(of_type(&recs, "answer").is_empty(), "{recs:?}");
    assert_eq!(of_type(&recs, "hit")[0]["file"], "src/books.py");
    assert_eq!(of_type(&recs, "hit")[0]["concepts"], serde_json::json!(["ledger"]));
    assert!(stderr(&o).contains("vecgrep: the results look like they answer the query; not asking"), "{}", stderr(&o));
    // People see the answer after the results, its sources as paths.
    let shown = run(t
        .cmd("vecgrep", "src")
        .args(["--answer", "--force-answer", "--heading", "--color", "never"])
        .args(["--threshold", "0", "--llm-url", &llm.url, "which class keeps the ledger"]));
    assert_code(&shown, 0);
    let text = stdout(&shown);
    assert!(text.contains("answer from SmolLM2-135M-Instruct.Q4_1 (given the top"), "{text}");
    assert!(text.contains("asked with --force-answer"), "{text}");
}

/// A hit stream as vg-query writes it, for vg-answer's stdin.
fn stream(t: &Tree) -> Vec<u8> {
    let o = run(t.cmd("vg-query", ".").args(["--judge", "--threshold", "0", "--mode", "lexical", "area of a circle"]));
    assert_code(&o, 0);
    o.stdout
}

/// A one-shot HTTP server that answers every request with `status` and `body`.
pub(crate) fn canned_server(status: u16, body: &'static str) -> String {
    canned_server_with(status, "", body)
}

/// `canned_server` with more header lines (each ending in `\r\n`).
fn canned_server_with(status: u16, headers: &'static str, body: &'static str) -> String {
    canned_server_after(Duration::ZERO, status, headers, body)
}

/// `canned_server_with`, each answer given `delay` after its request.
fn canned_server_after(delay: Duration, status: u16, headers: &'static str, body: &'static str) -> String {
    serve_in_turn(4, delay, move |_| {
        format!("HTTP/1.1 {status} X\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    })
}

/// A one-shot HTTP server on loopback that reads each of at most `most`
/// requests whole and answers the `i`th, after `delay`, with `answer(i)`
/// (a whole response, status line to body); its base URL, `…/v1`.
pub(crate) fn serve_in_turn(most: usize, delay: Duration, answer: impl Fn(usize) -> String + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (i, conn) in listener.incoming().flatten().take(most).enumerate() {
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body_in = vec![0; length];
            let _ = reader.read_exact(&mut body_in);
            std::thread::sleep(delay);
            let mut conn = conn;
            let _ = conn.write_all(answer(i).as_bytes());
        }
    });
    url
}

#[test]
fn an_endpoint_that_fails_is_one_line_and_the_results_still_flow() {
    let t = ledger_project();
    let input = stream(&t);
    let hits_in = String::from_utf8(input.clone()).unwrap();
    let answer = |url: &str| {
        run_with_input(t.cmd("vg-answer", ".").args(["--force-answer", "--llm-url", url, "--llm-model", "m"]), &input)
    };
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cases = [
        (format!("http://127.0.0.1:{port}/v1"), "cannot reach the chat model at http://127.0.0.1:"),
        (canned_server(200, "<html>not json</html>"), "is not a chat completion"),
        (canned_server(200, "{\"choices\": []}"), "answered with no text"),
        // Words are an answer; what is left once control characters and
        // citations of places not given are taken out may be none.
        (
            canned_server(200, r#"{"choices": [{"message": {"content": "\u001b\u0007 \u0001"}}]}"#),
            "answered with nothing but control characters",
        ),
        (
            canned_server(200, r#"{"choices": [{"message": {"content": "[7] [/etc/passwd:1]"}}]}"#),
            "answered with nothing but citations of places it was not given (7, /etc/passwd:1)",
        ),
        (
            canned_server(401, "{\"error\": \"bad key\"}"),
            "answered 401: {\"error\": \"bad key\"} (is VECGREP_LLM_API_KEY set",
        ),
        // A proxy's error page past 4 KiB still says what it begins with (audit 232).
        (
            canned_server(502, Box::leak(format!("upstream gone{}", " ".repeat(5000)).into_boxed_str())),
            "answered 502: upstream gone",
        ),
        // An endpoint on this machine does not pass the code on elsewhere.
        (
            canned_server_with(302, "Location: http://192.0.2.7:9/v1/chat/completions\r\n", ""),
            "answered 302 (a redirect to http://192.0.2.7:9/v1/chat/completions, not followed",
        ),
    ];
    for (url, says) in cases {
        let o = answer(&url);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().filter(|l| l.starts_with("vg-answer: ")).count(), err.lines().count(), "{err}");
        assert!(err.contains(says), "{url}: {err}");
        assert_eq!(stdout(&o), hits_in, "the stream is copied whole before the model is asked");
    }
    // Without llm_model the endpoint is asked for its models first: a
    // failure there says so, not only "set llm_model".
    let url = canned_server(500, "{\"error\": \"down\"}");
    let o = run_with_input(t.cmd("vg-answer", ".").args(["--force-answer", "--llm-url", &url]), &input);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("asked which models it has, since llm_model names none"), "{}", stderr(&o));
    assert!(stderr(&o).contains("answered 500"), "{}", stderr(&o));
    // One that lists only names it cannot send says so, not "lists no models" (audit 232).
    let url =
        canned_server(200, Box::leak(format!("{{\"data\": [{{\"id\": \"{}\"}}]}}", "m".repeat(300)).into_boxed_str()));
    let o = run_with_input(t.cmd("vg-answer", ".").args(["--force-answer", "--llm-url", &url]), &input);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("lists no model by a name vecgrep can send"), "{}", stderr(&o));
    // A key never shows, even in a URL.
    let o = answer("http://me:s3cret@127.0.0.1:9/v1");
    assert!(!stderr(&o).contains("s3cret"), "{}", stderr(&o));
    // One no header can carry is named, not taken for an unreachable server.
    let url = canned_server(200, "{}");
    let mut cmd = t.cmd("vg-answer", ".");
    cmd.args(["--force-answer", "--llm-url", &url, "--llm-model", "m"]).env("VECGREP_LLM_API_KEY", "sek\r\nX: 1");
    let o = run_with_input(&mut cmd, &input);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("VECGREP_LLM_API_KEY holds a control or non-ASCII character"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("sek"), "{}", stderr(&o));
    // Spaces within a key are carried: the request is made.
    let mut cmd = t.cmd("vg-answer", ".");
    let empty = canned_server(200, "{\"choices\": []}");
    cmd.args(["--force-answer", "--llm-url", &empty, "--llm-model", "m"]).env("VECGREP_LLM_API_KEY", "sk a b");
    let o = run_with_input(&mut cmd, &input);
    assert!(stderr(&o).contains("answered with no text"), "{}", stderr(&o));
    // A model on this machine is asked directly, whatever proxy the
    // environment names: the proxy would carry the code off it.
    let mut cmd = t.cmd("vg-answer", ".");
    let empty = canned_server(200, "{\"choices\": []}");
    cmd.args(["--force-answer", "--llm-url", &empty, "--llm-model", "m"]);
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        cmd.env(var, format!("http://127.0.0.1:{port}"));
    }
    let o = run_with_input(cmd.env_remove("NO_PROXY").env_remove("no_proxy"), &input);
    assert!(stderr(&o).contains("answered with no text"), "{}", stderr(&o));
}

/// An answer that says the excerpts do not answer teaches nothing, and a
/// learned.md the concept files skip whole is learned into no more (audit
/// 267: "payroll" was learned as `AccountBook` and `saml_login` from a
/// denial, and found them at the next search).
#[test]
fn nothing_is_learned_from_a_denial_nor_into_a_file_no_search_reads() {
    let t = ledger_project();
    let learn = |t: &Tree, reply: &str| {
        let body =
            serde_json::json!({"data": [{"id": "m"}], "model": "m", "choices": [{"message": {"content": reply}}]})
                .to_string();
        let url = canned_server(200, Box::leak(body.into_boxed_str()));
        run(t
            .cmd("vecgrep", ".")
            .args(["--answer", "--learn", "--force-answer", "--json", "--threshold", "-1"])
            .args(["--llm-url", &url, "where is payroll handled"]))
    };
    let denial = "The excerpts do not answer the question: nothing here handles payroll. \
                  `AccountBook` and `saml_login` are unrelated to payroll.";
    let o = learn(&t, denial);
    assert_code(&o, 0);
    assert!(answer_of(&o)["learned"].as_array().is_none_or(|l| l.is_empty()), "{}", stdout(&o));
    assert!(!t.path().join(".vecgrep/kg/learned.md").exists());
    let unreadable = b"# ledger\nsynonyms:: AccountBook\n<!-- caf\xe9 -->\n";
    t.write_bytes(".vecgrep/kg/learned.md", unreadable);
    let o = learn(&t, "Payroll is handled by `saml_login`.");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("learned.md is not UTF-8 text, so searches skip all of it"), "{}", stderr(&o));
    assert_eq!(std::fs::read(t.path().join(".vecgrep/kg/learned.md")).unwrap(), unreadable, "left as it was");
}

/// A stream names its root; `--learn` writes only into a project, so a
/// record naming any other directory cannot make it one (a `.vecgrep/`
/// there would be the root of every unmarked directory below it).
#[test]
fn learning_refuses_a_root_the_stream_names_that_is_not_a_project() {
    let t = ledger_project();
    let plain = tempfile::tempdir().unwrap();
    let root = plain.path().canonicalize().unwrap();
    let record = serde_json::json!({"type": "hit", "v": 1, "root": root, "file": "a.py", "start_line": 1,
        "end_line": 2, "text": "def upload(f):\n    pass", "query": "resend"});
    let input = format!("{record}\n").into_bytes();
    let url = canned_server(200, "{\"choices\": [{\"message\": {\"content\": \"upload\"}}]}");
    let o = run_with_input(t.cmd("vg-answer", ".").args(["--learn", "--force-answer", "--llm-url", &url]), &input);
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-answer: ") && err.contains("is not a project"), "{err}");
    assert_eq!(stdout(&o), "", "refused before anything is sent or copied");
    assert!(!root.join(".vecgrep").exists(), "no .vecgrep made in {}", root.display());
}

#[test]
fn without_an_endpoint_or_with_a_bad_stream_nothing_is_sent() {
    let t = ledger_project();
    let input = stream(&t);
    // No llm_url anywhere.
    let o = run_with_input(t.cmd("vg-answer", ".").arg("--force-answer"), &input);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("an answer needs llm_url"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "an error prints nothing on stdout, the results it was given included");
    // Whatever the judgement says: results judged sufficient need the
    // endpoint as much as thin ones, or --answer would work for one search
    // and fail for the next.
    for judged in ["which class keeps the ledger", "AccountBook entries money in and out"] {
        let o = run(t.cmd("vecgrep", ".").args(["--answer", "--threshold=-1", judged]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("an answer needs llm_url") && stdout(&o).is_empty(), "{judged}: {}", stderr(&o));
    }
    // A repository's own config may not choose where its code is sent.
    t.project_config("llm_url = \"http://evil.example/v1\"\n");
    let o = run_with_input(t.cmd("vg-answer", ".").arg("--force-answer"), &input);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("ignoring llm_url of"), "{}", stderr(&o));
    // Trusting one's own projects' configs is not trusting a directory a
    // stream names: its config may not send the user's key and code elsewhere.
    let elsewhere = sample_project();
    elsewhere.project_config("llm_url = \"http://evil.example/v1\"\n");
    t.project_config("");
    t.global_config("trust_project_config = true\n");
    let root = elsewhere.path().canonicalize().unwrap();
    let named = serde_json::json!({"type": "hit", "v": 1, "root": root, "file": "src/upload.py", "start_line": 1,
        "end_line": 2, "text": "import time", "query": "ledger"});
    let o = run_with_input(t.cmd("vg-answer", ".").arg("--force-answer"), format!("{named}\n").as_bytes());
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("ignoring llm_url of") && stderr(&o).contains("an answer needs llm_url"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("pass --trust-project-config") && !stderr(&o).contains("set trust_project_config"));
    // A project the user names to the porcelain is theirs: its config is trusted as its search's is.
    let url = canned_server(200, "{\"choices\": [{\"message\": {\"content\": \"See upload.py [1].\"}}]}");
    elsewhere.project_config(&format!("llm_url = \"{url}\"\nllm_model = \"m\"\n"));
    let outside = tempfile::tempdir().unwrap();
    let mut cmd = t.cmd("vecgrep", ".");
    cmd.current_dir(outside.path()).args(["--answer", "--force-answer", "--threshold=-1", "upload"]);
    let o = run(cmd.arg(elsewhere.path()));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("See upload.py"), "{}", stderr(&o));
    t.global_config("");
    t.project_config("llm_url = \"http://evil.example/v1\"\n");
    // The porcelain's pipeline says it once, not once per tool that read the config.
    let o = run(t.cmd("vecgrep", ".").args(["--answer", "--force-answer", "--threshold=-1", "ledger"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).matches("ignoring llm_url of").count(), 1, "{}", stderr(&o));
    // A line that is not a record stops it first.
    let o = run_with_input(
        t.cmd("vg-answer", ".").args(["--llm-url", "http://127.0.0.1:9/v1"]),
        b"{\"file\": \"a\"\nnot json\n",
    );
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vg-answer: line 1: "), "{}", stderr(&o));
    // The lines passed on carry the escapes every record is written with.
    let raw = "{\"file\":\"a.py\",\"start_line\":1,\"end_line\":1,\"query\":\"q\",\"text\":\"x\u{85}y\u{202e}z\"}\n";
    let o = run_with_input(t.cmd("vg-answer", ".").args(["--llm-url", "http://127.0.0.1:9/v1"]), raw.as_bytes());
    assert!(stdout(&o).contains("x\\u0085y\\u202ez") && !stdout(&o).contains('\u{85}'), "{}", stderr(&o));
    // A query of no words is not sent to the model (it was, twice).
    let blank = "{\"file\":\"a.py\",\"start_line\":1,\"end_line\":1,\"query\":\"   \",\"text\":\"x\"}\n";
    let o = run_with_input(
        t.cmd("vg-answer", ".").args(["--force-answer", "--llm-model", "m", "--llm-url", "http://127.0.0.1:9/v1"]),
        blank.as_bytes(),
    );
    assert_code(&o, 2);
    assert!(stderr(&o).contains("the query to answer: ") && stderr(&o).contains("empty"), "{}", stderr(&o));
    // No results: nothing to answer from, exit 1, no request made.
    let o = run_with_input(t.cmd("vg-answer", ".").args(["--llm-url", "http://127.0.0.1:9/v1"]), b"");
    assert_code(&o, 1);
    assert!(stderr(&o).contains("no results to answer from"), "{}", stderr(&o));
    // The porcelain's search that failed said why; the answer adds nothing.
    t.project_config("");
    let o = run(t.cmd("vecgrep", ".").args(["--answer", "--llm-url", "http://127.0.0.1:9/v1", "--rev", "v1", "q"]));
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vecgrep: cannot open the git repository of "), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    // An answer flag without --answer does nothing, so it is refused.
    let o = run(t.cmd("vecgrep", ".").args(["--learn", "ledger"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim(), "vecgrep: --learn needs --answer or --ask");
}

/// `privacy_mode` holds for answers as for `--ask`: by default nothing of
/// the project goes to a chat model off this machine, and saying so comes
/// before any result is copied on; `cloud_reasoning_ok` lets it go.
#[test]
fn a_chat_model_off_this_machine_is_asked_only_when_the_privacy_mode_allows_it() {
    let t = ledger_project();
    let input = stream(&t);
    let reply = r#"{"model": "m", "choices": [{"message": {"role": "assistant", "content": "AccountBook."}, "finish_reason": "stop"}]}"#;
    // 0.0.0.0 reaches this machine, but is not a loopback address: it
    // stands for a host elsewhere whose request can still be watched.
    let elsewhere = canned_server(200, reply).replace("127.0.0.1", "0.0.0.0");
    let answer = |more: &[&str]| {
        let args = ["--force-answer", "--llm-model", "m", "--llm-url", &elsewhere];
        run_with_input(t.cmd("vg-answer", ".").args(args).args(more), &input)
    };
    for more in [&[][..], &["--privacy-mode", "local_only"]] {
        let o = answer(more);
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o).trim(),
            "vg-answer: privacy_mode local_only: the chat model at 0.0.0.0 is not on this machine, so it was not \
             asked (privacy_mode cloud_reasoning_ok allows it); nothing was sent"
        );
        assert_eq!(stdout(&o), "", "an error prints nothing on stdout");
    }
    let o = answer(&["--privacy-mode", "cloud_reasoning_ok"]);
    assert_code(&o, 0);
    assert_eq!(answer_of(&o)["text"], "AccountBook.");
    // From the global config too, and through the porcelain.
    t.global_config("privacy_mode = \"cloud_reasoning_ok\"\n");
    assert_code(&answer(&[]), 0);
    t.global_config("");
    let o = run(t.cmd("vecgrep", ".").args([
        "--answer",
        "--force-answer",
        "--threshold",
        "0",
        "--llm-url",
        &elsewhere,
        "ledger",
    ]));
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vecgrep: privacy_mode local_only: "), "{}", stderr(&o));
    let o = run(t
        .cmd("vecgrep", ".")
        .args(["--answer", "--force-answer", "--json", "--privacy-mode", "cloud_reasoning_ok"])
        .args(["--llm-model", "m", "--llm-url", &elsewhere, "--threshold", "0", "ledger"]));
    assert_code(&o, 0);
    assert_eq!(answer_of(&o)["text"], "AccountBook.");
    // The search the answer is made from is held to it too: a remote
    // embedding server got every file and the question, and the run then
    // said "nothing was sent". 192.0.2.1 answers no one: a request sent
    // there would wait out its timeouts.
    let remote = ["--embedder-source", "remote", "--embedder-url", "http://192.0.2.1:9/v1/embeddings"];
    let o = run_or_fail_after(
        t.cmd("vecgrep", ".")
            .args(["--answer", "--force-answer", "--llm-url", "http://127.0.0.1:9/v1"])
            .args(remote)
            .arg("ledger"),
        Duration::from_secs(60),
    );
    assert_code(&o, 2);
    assert_eq!(
        stderr(&o).trim(),
        "vecgrep: privacy_mode local_only: the embedding server at 192.0.2.1 is not on this machine, so nothing was \
         sent to it (privacy_mode cloud_embedding_ok allows it)"
    );
}

/// `llm_timeout` bounds the answer, not each request: asking the endpoint
/// for its models first, then for the answer, took up to twice as long. A
/// repository's own config may not lengthen the user's wait (it held
/// vg-answer an hour with `llm_timeout = 3600`).
#[test]
fn llm_timeout_bounds_the_whole_answer() {
    let t = ledger_project();
    t.global_config("llm_timeout = 2\n");
    t.project_config("llm_timeout = 3600\n");
    let input = stream(&t);
    // Each request answered after 1.2 s, with a body that is a list of
    // models and a completion both.
    let body = r#"{"data": [{"id": "m"}], "model": "m", "choices": [{"message": {"content": "AccountBook."}}]}"#;
    let url = canned_server_after(Duration::from_millis(1200), 200, "", body);
    let o = run_with_input(t.cmd("vg-answer", ".").args(["--force-answer", "--llm-url", &url]), &input);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("did not answer in time (llm_timeout)"), "{}", stderr(&o));
    assert!(stderr(&o).contains("llm_timeout = 3600"), "the held value is told: {}", stderr(&o));
}

/// Issue 42: a hostile endpoint's megabyte of 250,000 short sentences, all
/// different, is tidied and cited well within `llm_timeout` (a scan of
/// every earlier sentence for each took minutes after the reply arrived).
#[test]
fn a_megabyte_of_short_sentences_is_answered_within_the_timeout() {
    let t = ledger_project();
    t.global_config("llm_timeout = 10\n");
    let input = stream(&t);
    let symbols: Vec<char> = ('a'..='z').chain('A'..='Z').chain('0'..='9').collect();
    let mut content = String::with_capacity(1_000_000);
    for i in 0..250_000usize {
        let (a, b, c) = (i % 62, (i / 62) % 62, (i / 3844) % 62);
        content.extend([symbols[a], symbols[b], symbols[c], ['.', '!', '?'][i / 238_328]]);
    }
    let body = serde_json::json!({
        "model": "m",
        "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    })
    .to_string();
    assert!(body.len() < 1024 * 1024, "within the reply's bound: {}", body.len());
    let url = canned_server(200, Box::leak(body.into_boxed_str()));
    let started = Instant::now();
    let o =
        run_with_input(t.cmd("vg-answer", ".").args(["--force-answer", "--llm-url", &url, "--llm-model", "m"]), &input);
    let took = started.elapsed();
    assert_code(&o, 0);
    assert!(answer_of(&o)["text"].as_str().unwrap().len() > 900_000, "every sentence differs: none is dropped");
    assert!(took < Duration::from_secs(10), "answered in {took:?}, past llm_timeout");
}
