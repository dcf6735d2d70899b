//! vg-serve: every status code of the HTTP rules, token auth, NDJSON from
//! /search, /status during and after indexing, freshness after an edit,
//! parallel clients, and a clean shutdown on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

pub(crate) struct Server {
    child: Child,
    pub(crate) addr: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    pub(crate) fn start(t: &Tree, args: &[&str]) -> Server {
        Self::start_with(t, args, &[])
    }

    pub(crate) fn start_with(t: &Tree, args: &[&str], env: &[(&str, &str)]) -> Server {
        Self::start_tool(t, "vg-serve", args, env)
    }

    fn start_tool(t: &Tree, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
        Self::start_logging(t, tool, args, env, Stdio::piped())
    }

    /// As `start_tool`, its stderr going to `log` (read by the test only
    /// when piped).
    fn start_logging(t: &Tree, tool: &str, args: &[&str], env: &[(&str, &str)], log: Stdio) -> Server {
        let mut cmd = t.cmd(tool, ".");
        cmd.args(args).stdout(Stdio::piped()).stderr(log);
        cmd.env_remove("VECGREP_TOKEN");
        for (k, v) in env {
            cmd.env(k, v);
        }
        Self::spawn(cmd)
    }

    /// The server `cmd` runs (its stdout piped), once it listens; its
    /// stderr kept if piped.
    fn spawn(mut cmd: std::process::Command) -> Server {
        let mut child = cmd.spawn().unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&stderr);
        if let Some(mut err) = child.stderr.take() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let record: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("first line {first:?}: {e}"));
        assert_eq!(record["type"], "listening");
        let url = record["listening"].as_str().unwrap();
        Server { child, addr: url.strip_prefix("http://").unwrap().to_string(), stderr }
    }

    /// What the server said on stderr so far (when it was piped).
    fn said(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub(crate) fn raw(&self, request: &[u8]) -> (u16, String, String) {
        send(&self.addr, request)
    }

    pub(crate) fn request(&self, method: &str, target: &str, headers: &[&str]) -> (u16, String, String) {
        let mut req = format!("{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        self.raw(req.as_bytes())
    }

    pub(crate) fn get(&self, target: &str) -> (u16, String, String) {
        self.request("GET", target, &[])
    }

    pub(crate) fn json(&self, target: &str) -> Value {
        let (status, _, body) = self.get(target);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    pub(crate) fn wait_ready(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let s = self.json("/status");
            if s["status"] == "ready" {
                return s;
            }
            assert!(Instant::now() < deadline, "never ready: {s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait for `needle` on the server's stderr.
    fn wait_stderr(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.stderr.lock().unwrap().clone();
            if text.contains(needle) {
                return;
            }
            assert!(Instant::now() < deadline, "{needle:?} not on stderr: {text}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(mut self) -> std::process::ExitStatus {
        // SIGTERM, as a service manager would send it.
        let pid = self.child.id().to_string();
        assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Send raw request bytes to `addr`; returns (status, head, body).
fn send(addr: &str, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(request).unwrap();
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no response head in {text:?}"));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

pub(crate) fn error_of(status: u16, body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("error body {body:?} is not JSON: {e}"));
    assert_eq!(v["error"]["status"], status, "{body}");
    v["error"]["message"].as_str().unwrap().to_string()
}

/// A listening record that cannot be written stops the server, saying why:
/// a script waiting for the record in a file on a full disk waited for
/// ever while the server served on.
#[test]
fn a_listening_record_that_cannot_be_written_stops_the_server() {
    let t = sample_project();
    let o = run(t.cmd("vg-serve", ".").stdout(std::fs::File::create("/dev/full").unwrap()));
    assert_code(&o, 2);
    let last = stderr(&o).lines().last().unwrap_or_default().to_string();
    assert_eq!(last, "vg-serve: cannot write to stdout: No space left on device (os error 28)", "{}", stderr(&o));
}

#[test]
fn search_answers_ndjson_hit_records() {
    let t = sample_project();
    let s = Server::start(&t, &[]);
    s.wait_ready();
    let (status, head, body) = s.get("/search?q=retry+an+upload+when+the+connection+fails&k=2&threshold=-1");
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("Content-Type: application/x-ndjson"), "{head}");
    let hits: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["type"], "hit");
    assert_eq!(hits[0]["file"], "src/upload.py");
    assert_eq!(hits[0]["root"], t.path().to_str().unwrap());
    // A request's threshold applies; nothing passes 0.99.
    let (status, _, body) = s.get("/search?q=retry%20upload&threshold=0.99");
    assert_eq!((status, body.as_str()), (200, ""));
    // Lexical mode by parameter.
    let (_, _, body) = s.get("/search?q=circleArea&mode=lexical");
    assert!(body.lines().next().unwrap().contains("src/geometry.rs"), "{body}");
    // Keep-alive: two requests on one connection.
    let (status, _, body) = s.raw(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\nGET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 200);
    assert_eq!(body.matches("HTTP/1.1 200").count(), 1, "second response follows the first: {body}");
}

/// Hits of a `--no-index` vg-query search and of the server's, by place.
fn places(lines: &str) -> Vec<(String, u64)> {
    lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["file"].as_str().unwrap().to_string(), r["start_line"].as_u64().unwrap()))
        .collect()
}

#[test]
fn a_vector_without_an_angle_is_no_hit_from_the_server_as_from_vg_query() {
    let t = sample_project();
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    let query = |t: &Tree, k: &str| {
        let q = "retry an upload when the connection fails";
        stdout(&run(t.cmd("vg-query", ".").args(["--no-index", "-k", k, "--threshold", "-1", "--mode", "semantic", q])))
    };
    // The two nearest chunks' vectors become NaN and zeros, right-sized:
    // the one sorted above everything, the other at cosine 0 in memory.
    let damaged = places(&query(&t, "2"));
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let size: i64 = db
        .query_row("SELECT length(embedding) FROM chunks WHERE embedding IS NOT NULL LIMIT 1", [], |r| r.get(0))
        .unwrap();
    for ((file, line), value) in damaged.iter().zip([f32::NAN, 0.0]) {
        let blob = value.to_le_bytes().repeat(size as usize / 4);
        let sql = "UPDATE chunks SET embedding = ?1 \
                   WHERE file_id = (SELECT id FROM files WHERE path = ?2) AND start_line = ?3";
        assert_eq!(db.execute(sql, rusqlite::params![blob, file, *line as i64]).unwrap(), 1);
    }
    drop(db);
    let expected = places(&query(&t, "8"));
    assert!(!expected.is_empty() && expected.iter().all(|p| !damaged.contains(p)), "{expected:?}");
    let s = Server::start(&t, &[]);
    s.wait_ready();
    let (status, _, body) = s.get("/search?q=retry+an+upload+when+the+connection+fails&k=8&threshold=-1&mode=semantic");
    assert_eq!(status, 200, "{body}");
    assert_eq!(places(&body), expected);
}

#[test]
fn the_server_ranks_exactly_as_vg_query_does() {
    let t = sample_project();
    many_files(&t, 30);
    let s = Server::start(&t, &["--full-index"]);
    for (q, mode) in [("retry an upload", "hybrid"), ("handle request number 7", "semantic"), ("log request", "hybrid")]
    {
        let o = run(t.cmd("vg-query", ".").args(["--no-index", "-k", "8", "--threshold", "-1", "--mode", mode, q]));
        let expected: Vec<(String, u64)> = records(&o)
            .iter()
            .map(|r| (r["file"].as_str().unwrap().to_string(), r["start_line"].as_u64().unwrap()))
            .collect();
        let (_, _, body) = s.get(&format!("/search?q={}&k=8&threshold=-1&mode={mode}", q.replace(' ', "+")));
        let got: Vec<(String, u64)> = body
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| (r["file"].as_str().unwrap().to_string(), r["start_line"].as_u64().unwrap()))
            .collect();
        assert_eq!(got, expected, "{q} ({mode})");
    }
}

/// The server's hits for `q` in `mode`: file, line, score and relevance.
fn served_hits(s: &Server, q: &str, mode: &str) -> Vec<(String, u64, String, String)> {
    let (_, _, body) = s.get(&format!("/search?q={}&k=8&threshold=-1&mode={mode}", q.replace(' ', "+")));
    body.lines().map(|l| place_and_scores(&serde_json::from_str(l).unwrap())).collect()
}

fn place_and_scores(r: &Value) -> (String, u64, String, String) {
    let file = r["file"].as_str().unwrap().to_string();
    (file, r["start_line"].as_u64().unwrap(), r["score"].to_string(), r["relevance"].to_string())
}

/// Wait until /status says the words are in memory (or are not), searching
/// lexically meanwhile, since a search is what starts their reading.
fn wait_words_in_memory(s: &Server, wanted: bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.json("/status")["words_in_memory"] != wanted {
        assert!(Instant::now() < deadline, "words_in_memory never became {wanted}");
        s.get("/search?q=handle&mode=lexical");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn words_ranked_from_memory_rank_exactly_as_the_index_does() {
    let t = sample_project();
    many_files(&t, 30);
    let s = Server::start(&t, &["--full-index", "--refresh", "0.5"]);
    wait_words_in_memory(&s, true);
    let queries = ["retry an upload", "handle request number 7", "log request", "circleArea", "sourdough oven"];
    for q in queries {
        for mode in ["lexical", "hybrid"] {
            let o = run(t.cmd("vg-query", ".").args(["--no-index", "-k", "8", "--threshold", "-1", "--mode", mode, q]));
            let expected: Vec<_> = records(&o).iter().map(place_and_scores).collect();
            assert!(!expected.is_empty(), "{q} ({mode})");
            assert_eq!(served_hits(&s, q, mode), expected, "{q} ({mode})");
        }
    }
    // An edit changes the index: the words held are of its former state and
    // answer no more; the store answers until they are read again.
    t.write("src/airship.py", "def launch_zeppelin(crew):\n    return crew.board()\n");
    let deadline = Instant::now() + Duration::from_secs(20);
    while served_hits(&s, "zeppelin", "lexical").is_empty() {
        assert!(Instant::now() < deadline, "the new file never showed up");
        std::thread::sleep(Duration::from_millis(200));
    }
    wait_words_in_memory(&s, true);
    assert_eq!(served_hits(&s, "zeppelin", "lexical")[0].0, "src/airship.py");
}

#[test]
fn every_http_rule_answers_with_its_status_and_a_json_error() {
    let t = sample_project();
    let s = Server::start(&t, &[]);
    s.wait_ready();
    for method in ["POST", "PUT", "DELETE", "HEAD", "OPTIONS"] {
        let (status, head, body) = s.request(method, "/search?q=x", &["Content-Length: 0"]);
        assert_eq!(status, 405, "{method}");
        assert!(head.contains("Allow: GET"), "{head}");
        if method == "HEAD" {
            assert!(body.is_empty(), "no body in an answer to HEAD: {body}");
        } else {
            error_of(405, &body);
        }
    }
    for (target, why) in [
        ("/search", "missing"),
        ("/search?q=", "missing"),
        ("/search?q=+++", "missing"),
        ("/search?q=x&k=abc", "k must"),
        ("/search?q=x&k=0", "k must"),
        ("/search?q=x&k=1001", "k must"),
        ("/search?q=x&k=-3", "k must"),
        ("/search?q=x&threshold=2", "threshold"),
        ("/search?q=x&threshold=nan", "threshold"),
        ("/search?q=x&threshold=abc", "threshold"),
        ("/search?q=x&mode=fuzzy", "mode"),
        ("/search?q=%3F%3F+x&mode=lexical", "no words to match"),
        ("/search?q=%zz", "percent"),
        ("/search?q=%ff", "UTF-8"),
        ("/search?q=a%00b", "control"),
    ] {
        let (status, _, body) = s.get(target);
        assert_eq!(status, 400, "{target}: {body}");
        assert!(error_of(400, &body).contains(why), "{target}: {body}");
    }
    let (status, _, body) = s.get(&format!("/search?q={}", "x".repeat(5000)));
    assert_eq!(status, 400, "an over-long query: {body}");
    for target in ["/", "/searches", "/search/x", "/../etc/passwd", "/status/", "/%73earch?q=x", "/v1/%65mbeddings"] {
        let (status, _, body) = s.get(target);
        assert_eq!(status, 404, "{target}");
        let path = target.split('?').next().unwrap();
        assert!(error_of(404, &body).contains(&format!("no such path {path:?}")), "{target}: {body}");
    }
    // A long value a message repeats is clipped to 100 characters.
    let long = "a".repeat(3000);
    for (target, status) in [
        (format!("/{long}"), 404),
        (format!("/search?q=%zz{long}"), 400),
        (format!("/search?q=x&exclude=%ff{long}"), 400),
        (format!("/search?q=x&rev={long}"), 400),
    ] {
        let (got, _, body) = s.get(&target);
        assert_eq!(got, status, "{body}");
        assert!(error_of(status, &body).len() < 500, "{} bytes: {body}", body.len());
    }
    // A route that takes a body has its URL checked as every other.
    for target in ["/v1/index/start?x=%zz", "/v1/index/start?x=%ff", "/v1/index/start#frag", "/v1/ask?x=%00"] {
        let (status, _, body) = s.request("POST", target, &["Content-Length: 0"]);
        assert_eq!(status, 400, "{target}: {body}");
    }
    let (status, _, body) = s.get(&format!("/search?q={}", "a".repeat(9000)));
    assert_eq!(status, 414);
    error_of(414, &body);
    let (status, _, body) = s.request("GET", "/health", &[&format!("X-Big: {}", "a".repeat(20_000))]);
    assert_eq!(status, 431);
    error_of(431, &body);
    let many: Vec<String> = (0..150).map(|i| format!("X-{i}: y")).collect();
    let (status, _, _) = s.request("GET", "/health", &many.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(status, 431);
    let (status, _, body) = s.raw(b"BLAH\r\n\r\n");
    assert_eq!(status, 400);
    error_of(400, &body);
    // The server survived all of it.
    assert_eq!(s.json("/health")["status"], "ok");
}

#[test]
fn a_token_guards_every_route() {
    let t = sample_project();
    let s = Server::start_with(&t, &[], &[("VECGREP_TOKEN", "s3cret")]);
    for target in ["/health", "/status", "/search?q=retry"] {
        let (status, head, body) = s.get(target);
        assert_eq!(status, 401, "{target}");
        assert!(head.contains("WWW-Authenticate: Bearer"), "{head}");
        error_of(401, &body);
        let (status, _, _) = s.request("GET", target, &["Authorization: Bearer wrong"]);
        assert_eq!(status, 401);
        let (status, _, _) = s.request("GET", target, &["Authorization: Basic s3cret"]);
        assert_eq!(status, 401);
        let (status, _, _) = s.request("GET", target, &["Authorization: Bearer s3cret"]);
        assert_eq!(status, 200, "{target}");
    }
    drop(s);
    // --token beats the environment.
    let s = Server::start_with(&t, &["--token", "flag"], &[("VECGREP_TOKEN", "env")]);
    assert_eq!(s.request("GET", "/health", &["Authorization: Bearer flag"]).0, 200);
    assert_eq!(s.request("GET", "/health", &["Authorization: Bearer env"]).0, 401);
}

/// `n` files of four functions each, with a docstring near the model's
/// window: seconds of its time per file, where `many_files` takes moments.
fn wordy_files(t: &Tree, n: usize) {
    for i in 0..n {
        let functions: String = (0..4)
            .map(|j| {
                let story: String = (0..24).map(|w| format!("ledger{} entry{} ", (i + w) % 37, (j * w) % 29)).collect();
                format!("def settle_{i}_{j}(ledger, amount):\n    \"\"\"Settle {story}.\"\"\"\n    return ledger.post(amount + {j})\n\n\n")
            })
            .collect();
        t.write(&format!("src/ledger{i:03}.py"), &functions);
    }
}

/// A server of part of a project, a chunk outside its paths still waiting
/// for the model's vectors: its fill rounds have nothing to do, and the
/// status keeps the count of the last run that had work (audit 260: each
/// round set it to 0 of 0).
#[test]
fn status_keeps_the_last_runs_count_when_a_fill_has_nothing_to_do() {
    let t = Tree::git();
    t.write("README.md", "# Retries of uploads\n");
    for i in 1..=3 {
        t.write(
            &format!("src/m{i}.py"),
            &format!("def func_{i}(x):\n    \"\"\"Retry number {i}.\"\"\"\n    return x\n"),
        );
    }
    assert_code(&run(t.cmd("vg-index", ".").arg("-q")), 0);
    let s = Server::start(&t, &["--refresh", "1", "src/"]);
    s.wait_ready();
    let counted = |s: &Server| {
        let status = s.json("/status");
        (status["indexed"].as_u64(), status["total"].as_u64(), status["filling"].as_bool())
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while counted(&s) != (Some(3), Some(3), Some(false)) {
        assert!(Instant::now() < deadline, "the fill of src/ never ended: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(s.json("/status")["pending"], 1, "README.md, outside src/, waits");
    // Rounds with nothing to do pass (one a second).
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(counted(&s), (Some(3), Some(3), Some(false)), "{}", s.json("/status"));
}

#[test]
fn status_reports_indexing_then_ready_and_search_works_meanwhile() {
    let t = sample_project();
    many_files(&t, 150);
    let s = Server::start(&t, &[]);
    let first = s.json("/status");
    assert_eq!(first["status"], "indexing", "{first}");
    assert_eq!(first["root"], t.path().to_str().unwrap());
    assert_eq!(first["scope"], serde_json::json!([""]));
    assert!(first["version"].is_string());
    // Searching while indexing is answered, not refused or locked out.
    let (status, _, body) = s.get("/search?q=retry+upload&threshold=-1");
    assert_eq!(status, 200, "{body}");
    let ready = s.wait_ready();
    assert_eq!(ready["files"], 154, "{ready}");
    assert_eq!(ready["total"], 154);
    assert_eq!(ready["indexed"], 154);
    assert!(ready["chunks"].as_u64().unwrap() >= 154);
    assert!(ready["total"].is_u64());
    assert!(ready["index_error"].is_null(), "{ready}");
    assert_eq!(s.json("/health")["index_ready"], true);
}

#[test]
fn edits_are_searchable_within_seconds() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "0.5"]);
    s.wait_ready();
    let find = |q: &str| s.get(&format!("/search?q={q}&mode=lexical")).2;
    assert!(!find("zeppelin").contains("src/airship.py"));
    t.write("src/airship.py", "def launch_zeppelin(crew):\n    return crew.board()\n");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !find("zeppelin").contains("src/airship.py") {
        assert!(Instant::now() < deadline, "the new file never showed up");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::fs::remove_file(t.path().join("src/airship.py")).unwrap();
    while find("zeppelin").contains("src/airship.py") {
        assert!(Instant::now() < deadline, "the deleted file never went away");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A served path renamed away leaves the index empty of it: the server
/// says so once, not at every refresh, and says when it is back.
#[test]
fn a_served_path_renamed_away_is_said_and_so_is_its_return() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "0.2", "src"]);
    s.wait_ready();
    let find = || s.get("/search?q=upload+retry&mode=lexical").2;
    assert!(find().contains("src/upload.py"));
    std::fs::rename(t.path().join("src"), t.path().join("src.moved")).unwrap();
    s.wait_stderr("src: the served path is gone (or now a link); its files have left the index until it is back");
    assert!(!find().contains("src/upload.py"), "{}", find());
    // Said once while it lasts, not at each of the refreshes meanwhile.
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(s.stderr.lock().unwrap().matches("the served path is gone").count(), 1);
    std::fs::rename(t.path().join("src.moved"), t.path().join("src")).unwrap();
    s.wait_stderr("src: the served path is back");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !find().contains("src/upload.py") {
        assert!(Instant::now() < deadline, "the path came back but not its files");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Replaced by a link out of the root, which the walk never follows:
    // said as gone too, not an empty index in silence.
    let outside = tempfile::tempdir().unwrap();
    std::fs::rename(t.path().join("src"), t.path().join("src.moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("src")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while s.stderr.lock().unwrap().matches("the served path is gone").count() < 2 {
        assert!(Instant::now() < deadline, "{}", s.stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A server whose log is a file in the tree it serves never indexes it:
/// each index run writes to the log, which a refresh would index again,
/// and so on for as long as it runs.
#[test]
fn a_server_logging_into_its_own_tree_leaves_its_log_out() {
    let t = sample_project();
    let log_path = t.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let s = Server::start_logging(&t, "vg-serve", &["--refresh", "0.2"], &[], log.into());
    s.wait_ready();
    // The status reads ready a moment before the run's line is written.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut said = read(&log_path);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = read(&log_path);
        // Its index run's line, then the fill's.
        if now == said && now.matches("vg-serve: index: ").count() == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the log never settled: {now}");
        said = now;
    }
    assert!(said.contains("skipping serve.log: the file this process writes its output or errors to"), "{said}");
    // Ten refreshes: the log stays as it was, and its words are not found.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(read(&log_path), said, "the server wrote to its log after it was ready");
    assert_eq!(s.json("/status")["status"], "ready");
    let (_, _, hits) = s.get("/search?q=skipping+listening&mode=lexical");
    assert!(!hits.contains("serve.log"), "{hits}");
    t.write("src/airship.py", "def launch_zeppelin(crew):\n    return crew.board()\n");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !s.get("/search?q=zeppelin&mode=lexical").2.contains("src/airship.py") {
        assert!(Instant::now() < deadline, "an edit beside the log never showed up");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// ServerDefaultThreshold: a request without `threshold` is held to the
/// config's (the project's over the global's), one with it to its own.
#[test]
fn a_request_without_a_threshold_takes_the_configs() {
    let t = sample_project();
    t.global_config("threshold = -1.0\n");
    t.project_config("threshold = 0.99\n");
    let s = Server::start(&t, &[]);
    s.wait_ready();
    let (status, _, body) = s.get("/search?q=retry%20upload");
    assert_eq!((status, body.as_str()), (200, ""), "the project's 0.99");
    let (status, _, body) = s.get("/search?q=retry%20upload&threshold=-1");
    assert_eq!(status, 200);
    assert!(body.lines().count() >= 3, "{body}");
}

/// What `broken` makes the server say (`words`) is said once while it
/// lasts, and again once it comes back after `fixed`.
fn said_once_while_it_lasts(t: &Tree, args: &[&str], words: &str, broken: &dyn Fn(), fixed: &dyn Fn()) {
    broken();
    let s = Server::start(t, args);
    s.wait_ready();
    std::thread::sleep(Duration::from_secs(2));
    let said = || s.stderr.lock().unwrap().matches(words).count();
    assert_eq!(said(), 1, "{}", s.stderr.lock().unwrap());
    fixed();
    // A walk after the fix, seen by a file written after it: a fixed wait
    // could pass with no refresh on a loaded machine.
    t.write("src/tick.py", "def tick_marker():\n    return 1\n");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !s.get("/search?q=tick_marker&mode=lexical").2.contains("src/tick.py") {
        assert!(Instant::now() < deadline, "the refresh never walked: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(100));
    }
    broken();
    let deadline = Instant::now() + Duration::from_secs(20);
    while said() < 2 {
        assert!(Instant::now() < deadline, "{}", s.stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(said(), 2, "{}", s.stderr.lock().unwrap());
}

/// A file the server cannot read is said once while it stays so, and
/// again once it comes back after it was fixed: a link loop (as a file
/// closed to the server) was said at every refresh, five times a second.
#[test]
fn a_skip_is_said_once_while_it_lasts() {
    let t = sample_project();
    let link = t.path().join("loop");
    let broken = || std::os::unix::fs::symlink("loop", &link).unwrap();
    let fixed = || std::fs::remove_file(&link).unwrap();
    said_once_while_it_lasts(&t, &["-L", "--refresh", "0.2"], "skipping loop:", &broken, &fixed);
}

/// An ignore file's rule that does not parse is said once while it stays
/// so, and again once it comes back after it was fixed: it was said at
/// every refresh, five times a second here.
#[test]
fn an_ignore_files_bad_rule_is_said_once_while_it_lasts() {
    let t = sample_project();
    let broken = || {
        t.write(".gitignore", "foo/{a,b\n");
    };
    let fixed = || {
        t.write(".gitignore", "foo/\n");
    };
    let words = "ignore file .gitignore, a rule left out";
    said_once_while_it_lasts(&t, &["--refresh", "0.2"], words, &broken, &fixed);
}

/// A file left out for its size is said, once, as vg-index says it: the
/// server left it out of every answer in silence.
#[test]
fn a_file_over_max_filesize_is_said_once() {
    let t = sample_project();
    t.write("src/big.py", &"def handler():\n    return 1\n".repeat(100));
    let s = Server::start(&t, &["--max-filesize", "1K", "--refresh", "0.2"]);
    s.wait_ready();
    std::thread::sleep(Duration::from_secs(2));
    let said = s.stderr.lock().unwrap().matches("skipping src/big.py: 2800 bytes is over max_filesize").count();
    assert_eq!(said, 1, "{}", s.stderr.lock().unwrap());
    // Growing, it is still the one skip: not said again at each size.
    for more in 1..=3 {
        t.write("src/big.py", &"def handler():\n    return 1\n".repeat(100 + more));
        std::thread::sleep(Duration::from_millis(700));
    }
    assert_eq!(s.stderr.lock().unwrap().matches("skipping src/big.py").count(), 1, "{}", s.stderr.lock().unwrap());
}

/// A config edited while serving is not applied, and not passed over in
/// silence: the server says it keeps its settings, and when the edit would
/// fail its next start.
#[test]
fn a_config_edited_while_serving_is_said_and_a_broken_one_warned_of() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "0.2"]);
    s.wait_ready();
    let config = t.path().join(".vecgrep/config.toml");
    std::fs::write(&config, "top_k = 3\n").unwrap();
    s.wait_stderr("config.toml changed: the settings in use are those read at the start; start again to apply it");
    std::fs::write(&config, "top_k = 'three'\n").unwrap();
    s.wait_stderr("config.toml changed and a start with the same command line would fail (config ");
    assert_eq!(s.stderr.lock().unwrap().matches("config.toml changed").count(), 2, "each change said once");
    // The server goes on with the settings it started with.
    let (status, _, body) = s.get("/search?q=upload+retry&threshold=-1");
    assert_eq!(status, 200, "{body}");
    assert!(body.lines().count() > 3, "{body}");
}

#[test]
fn parallel_clients_all_get_answers() {
    let t = sample_project();
    let s = Server::start(&t, &["--rate-limit", "0"]);
    s.wait_ready();
    let addr = s.addr.clone();
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut ok = 0;
                for i in 0..15 {
                    let request = format!("GET /search?q=client+{c}+request+{i}+upload&threshold=-1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
                    let (status, _, body) = send(&addr, request.as_bytes());
                    assert_eq!(status, 200, "{body}");
                    assert!(body.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()));
                    ok += 1;
                }
                ok
            })
        })
        .collect();
    let total: usize = clients.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(total, 120);
}

#[test]
fn sigterm_stops_cleanly_and_the_index_is_consistent() {
    let t = sample_project();
    many_files(&t, 400);
    let s = Server::start(&t, &[]);
    // SIGTERM while the work is under way: the fill has embedded some files and not all.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = s.json("/status");
        let indexed = status["indexed"].as_u64().unwrap_or(0);
        if status["filling"] == true && indexed > 0 {
            break;
        }
        assert!(status["status"] != "ready" && Instant::now() < deadline, "the fill ended before the signal: {status}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let stderr = std::sync::Arc::clone(&s.stderr);
    let status = s.stop();
    let text = stderr.lock().unwrap().clone();
    assert!(status.success(), "{status:?}: {text}");
    assert!(text.contains("shutting down"), "{text}");
    // The next run accepts the index and completes it.
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["files"], 404);
    let stats = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    let rec = &records(&stats)[0];
    assert_eq!(rec["files"], 404);
    assert_eq!(rec["chunks"], summary(&o)["chunks"]);
}

/// Wait until the server fills in the model's vectors and its `/status`
/// counts some (`indexed` files, or `vectors`).
fn wait_for_the_fill(s: &Server, counted: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(s.json("/status")["filling"] == true && s.json("/status")[counted].as_u64() > Some(0)) {
        assert!(Instant::now() < deadline, "no fill began: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A server's fill can take minutes; a one-shot search (whose index run
/// takes turns with it) must not wait for all of it: the fill stops at the
/// file in hand for the waiting run and resumes after.
#[test]
fn a_one_shot_search_does_not_wait_for_a_servers_whole_fill() {
    let t = sample_project();
    many_files(&t, 800);
    let s = Server::start(&t, &["--refresh", "1"]);
    wait_for_the_fill(&s, "indexed");
    let o = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "-k", "1", "retry failed uploads"]));
    assert_code(&o, 0);
    let status = s.json("/status");
    assert!(status["vectors"].as_u64() < status["chunks"].as_u64(), "the search waited for the fill: {status}");
    let data = std::fs::read_dir(t.path().join(".vecgrep")).unwrap();
    let marks = data.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("index.lock.waiting-"));
    assert_eq!(marks.count(), 0, "the waiting mark is gone");
    // The fill resumes and ends.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let status = s.json("/status");
        if status["vectors"] == status["chunks"] && status["filling"] == false {
            break;
        }
        assert!(Instant::now() < deadline, "the fill never resumed: {status}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The fill can take minutes; an edit made meanwhile must be searchable
/// within seconds, not once the fill ends: the fill yields to the refresh,
/// the index run takes the edit, and the fill resumes where it was, its
/// count of files going on rather than starting again, and is said once.
#[test]
fn an_edit_during_a_fill_is_searchable_before_the_fill_ends() {
    let t = sample_project();
    wordy_files(&t, 1500);
    let s = Server::start(&t, &["--refresh", "0.5"]);
    // The fill has walked and stored its first files.
    wait_for_the_fill(&s, "vectors");
    let find = |q: &str| s.get(&format!("/search?q={q}&mode=lexical")).2;
    let filling = |what: &str| {
        let status = s.json("/status");
        assert_eq!(status["filling"], true, "the fill ended before {what}: {status}");
        status
    };
    t.write("src/airship.py", "def launch_zeppelin(crew):\n    return crew.board()\n");
    let edited = Instant::now();
    while !find("zeppelin").contains("src/airship.py") {
        // Seconds on a quiet machine; the bound leaves room for a loaded one
        // (the server indexes at a lower priority), and `filling` after it
        // is what says the edit did not wait for the fill.
        assert!(edited.elapsed() < Duration::from_secs(60), "the new file waited for the fill: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("found after {:?}: {}", edited.elapsed(), s.json("/status"));
    filling("the new file was found");
    std::fs::remove_file(t.path().join("src/airship.py")).unwrap();
    let removed = Instant::now();
    while find("zeppelin").contains("src/airship.py") {
        assert!(removed.elapsed() < Duration::from_secs(60), "the deleted file waited for the fill");
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("gone after {:?}: {}", removed.elapsed(), s.json("/status"));
    let before = filling("the deleted file went");
    // The fill resumed: its count goes on from where it was, and it ends.
    let (indexed, total) = (before["indexed"].as_u64().unwrap(), before["total"].as_u64().unwrap());
    assert!(indexed > 0 && total > indexed, "{before}");
    let deadline = Instant::now() + Duration::from_secs(900);
    let mut last = indexed;
    loop {
        let status = s.json("/status");
        if status["filling"] == false {
            assert_eq!(status["vectors"], status["chunks"], "{status}");
            break;
        }
        let now = status["indexed"].as_u64().unwrap();
        assert!(now >= last, "the fill's count went back from {last}: {status}");
        last = now;
        assert!(Instant::now() < deadline, "the fill never ended: {status}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Its stops were not said, only its end (read once the reader of its
    // stderr has it).
    let embedded = |l: &str| l.split_once(" chunks (").and_then(|(_, r)| r.split_once(' ')).map(|(n, _)| n != "0");
    let fills = |said: &str| said.lines().filter(|l| l.contains("index: ") && embedded(l) == Some(true)).count();
    let deadline = Instant::now() + Duration::from_secs(10);
    let said = loop {
        let said = s.stderr.lock().unwrap().clone();
        if fills(&said) > 0 || Instant::now() > deadline {
            break said;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!said.contains("stopped before the end"), "the fill said at each stop:\n{said}");
    assert_eq!(fills(&said), 1, "the fill's end, said once:\n{said}");
}

/// The index removed under a fill (`rm -rf .vecgrep`) is made again at the
/// next refresh, not once the fill ends: the fill wrote on into the removed
/// file, and every search failed for as long as it ran.
#[test]
fn an_index_removed_during_a_fill_is_made_again_at_once() {
    let t = sample_project();
    wordy_files(&t, 1500);
    let s = Server::start(&t, &["--refresh", "0.5", "--rate-limit", "0"]);
    wait_for_the_fill(&s, "vectors");
    std::fs::remove_dir_all(t.path().join(".vecgrep")).unwrap();
    let removed = Instant::now();
    loop {
        let (status, _, body) = s.get("/search?q=settle+ledger&mode=lexical");
        if status == 200 && body.contains("src/ledger") {
            break;
        }
        // `unfilled` below is what says it came before the fill's end.
        assert!(removed.elapsed() < Duration::from_secs(60), "{status} after {:?}: {body}", removed.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = s.json("/status");
    let unfilled = status["vectors"].as_u64() < status["chunks"].as_u64();
    assert!(unfilled, "the new index was searchable before the fill could have ended: {status}");
}

/// An index another run rebuilt with another model, under the server:
/// until the server's refresh rebuilds it again, its searches do not rank
/// the other model's vectors by its own query vector (cosines of nothing);
/// a hybrid search answers by words, saying why.
#[test]
fn an_index_rebuilt_with_another_model_is_not_ranked_by_the_servers() {
    let t = sample_project();
    let s = Server::start(&t, &["--full-index", "--refresh", "3600"]);
    s.wait_ready();
    let o = run(t.cmd("vg-index", ".").args(["--full", "--embedder-model", "vecgrep-code-minilm-l6"]));
    assert_code(&o, 0);
    let (status, _, body) = s.get("/search?q=retry+upload&mode=semantic");
    assert_eq!(status, 500, "{body}");
    assert!(error_of(500, &body).contains("rebuilt with vecgrep-code-minilm-l6"), "{body}");
    let (status, head, body) = s.get("/search?q=retry+upload");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("src/") && head.contains("ranked by their words alone"), "{head}\n{body}");
}

/// Two servers on one project (a vg-serve and an editor's vg-mcp) fill
/// its vectors between them: each refresh that found the other at work
/// waited for it, leaving the mark a fill makes way for, so each stopped
/// the other's fill at every round, for good, saying it waited each time.
#[test]
fn two_servers_on_one_project_do_not_stop_each_others_fill() {
    let t = sample_project();
    wordy_files(&t, 150);
    let a = Server::start(&t, &["--refresh", "0.3"]);
    let b = Server::start(&t, &["--refresh", "0.3"]);
    let began = Instant::now();
    let deadline = began + Duration::from_secs(240);
    loop {
        let status = a.json("/status");
        if status["vectors"] == status["chunks"] && status["filling"] == false && status["status"] == "ready" {
            break;
        }
        assert!(Instant::now() < deadline, "the fill never ended: {status}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let waited = |s: &Server| s.stderr.lock().unwrap().matches("waiting for another index run").count();
    // A server that keeps finding the other at work says so once each 30 s
    // of it (a slow machine's fill lasts longer); the fault said it at every
    // refresh, 0.3 s apart.
    let allowed = 2 + began.elapsed().as_secs() as usize / 30;
    let said = waited(&a) + waited(&b);
    assert!(said <= allowed, "{said} > {allowed}:\n{}\n{}", a.stderr.lock().unwrap(), b.stderr.lock().unwrap());
}

/// Embedding requests past their share of the workers wait for a slot,
/// as they waited for a worker before lanes: refused with 503, a remote
/// embedder's batches failed (vecgrep's client retries under two seconds).
#[test]
fn embedding_requests_past_their_share_wait_rather_than_fail() {
    let t = sample_project();
    let s = Server::start(&t, &["--workers", "2"]);
    s.wait_ready();
    let body = serde_json::json!({"input": vec!["retry the upload with backoff"; 16]}).to_string();
    let request = format!(
        "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let sent: Vec<_> = (0..4).map(|_| scope.spawn(|| send(&s.addr, request.as_bytes()).0)).collect();
        sent.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(statuses, [200; 4]);
}

/// A client that asks to be told before it sends its body (`Expect:
/// 100-continue`) is told, once nothing refuses the request; one refused
/// gets its final status at once (it waited a second, or for ever).
#[test]
fn a_client_expecting_100_continue_is_told_to_send_its_body() {
    let t = sample_project();
    let s = Server::start(&t, &[]);
    let body = serde_json::json!({"input": ["retry the upload with backoff"]}).to_string();
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).unwrap();
    let mut interim = [0u8; 25];
    c.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    c.write_all(body.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = c.read_to_string(&mut response);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let too_big =
        "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 99999999\r\n\r\n";
    let (status, head, _) = s.raw(too_big.as_bytes());
    assert_eq!(status, 413, "{head}");
}

/// A fill of a few big files has them all with the embedders at once,
/// each seconds of the model's time: SIGTERM must not wait for them.
#[test]
fn sigterm_during_a_fill_of_big_files_does_not_wait_for_them() {
    let t = sample_project();
    for f in 0..3 {
        let body: String = (0..3000)
            .map(|i| format!("def step_{f}_{i}(ledger, amount):\n    \"\"\"Post entry {i} of batch {f} to the ledger.\"\"\"\n    return ledger.post({i} * amount + {f})\n\n"))
            .collect();
        t.write(&format!("src/big{f}.py"), &body);
    }
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let s = Server::start(&t, &[]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while s.json("/status")["filling"] != true {
        assert!(Instant::now() < deadline, "no fill began: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(10));
    }
    // The model loaded and the three files with it, each seconds of its time.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(s.stop().success());
    let stats = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    let rec = &records(&stats)[0];
    assert!(rec["pending"].as_u64().unwrap() > 0, "the fill ran to its end after SIGTERM: {rec}");
}

/// SIGTERM during `--full-index`'s run: the server stops there, never
/// listening; it printed the listening record scripts wait for, then shut down.
#[test]
fn sigterm_during_the_full_index_run_never_listens() {
    let t = handlers_project(800);
    let mut child = t
        .cmd("vg-serve", ".")
        .arg("--full-index")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the run has written some files and has more to do.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let stats = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
        if records(&stats).first().and_then(|r| r["files"].as_u64()).unwrap_or(0) > 0 {
            break;
        }
        assert!(Instant::now() < deadline && child.try_wait().unwrap().is_none(), "no run under way");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let (said, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!said.contains("listening") && !err.contains("listening on"), "{said}{err}");
    assert!(err.contains("stopped before listening"), "{err}");
}

#[test]
fn full_index_finishes_before_listening_and_bind_warns_off_loopback() {
    let t = sample_project();
    let s = Server::start(&t, &["--full-index", "--bind", "0.0.0.0"]);
    let status = s.json("/status");
    assert_eq!(status["status"], "ready");
    assert_eq!(status["files"], 4);
    s.wait_stderr("warning: listening on 0.0.0.0");
}

#[test]
fn the_server_embeds_fully_what_a_static_run_left_to_searches() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let stats = |t: &Tree| records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))[0].clone();
    assert!(stats(&t)["pending"].as_u64().unwrap() > 0);
    assert_eq!(stats(&t)["holes"], 0, "chunks awaiting the model's vector are not holes");
    let s = Server::start(&t, &["--full-index"]);
    let status = s.json("/status");
    assert_eq!((status["holes"].as_u64(), status["pending"].as_u64()), (Some(0), Some(0)), "{status}");
    let (_, _, body) = s.get("/search?q=bake+bread");
    assert!(body.lines().next().is_some_and(|l| l.contains("\"file\":\"docs/guide.md\"")), "{body}");
    assert!(s.stop().success());
    assert_eq!((stats(&t)["holes"].as_u64(), stats(&t)["pending"].as_u64()), (Some(0), Some(0)));
}

#[test]
fn a_cold_server_answers_by_meaning_at_once_and_fills_in_the_background() {
    let t = sample_project();
    many_files(&t, 150);
    let s = Server::start(&t, &[]);
    // The index run gives static vectors only; the fill follows it, the
    // spec's state `indexing` with `filling` (issue 42: not a state of its own).
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        let status = s.json("/status");
        if status["filling"] == true || status["status"] == "ready" {
            break status;
        }
        assert!(["empty", "indexing"].contains(&status["status"].as_str().unwrap()), "{status}");
        assert!(Instant::now() < deadline, "never searchable: {status}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status["files"], 154, "every file is searchable before the fill: {status}");
    if status["filling"] == true {
        assert_eq!(status["status"], "indexing", "{status}");
        assert_eq!(status["holes"], 0, "chunks awaiting the fill are not holes: {status}");
    }
    // Whatever the fill has reached, a question that shares no word with
    // its answer finds it by meaning: the static vectors of the chunks the
    // fill has not reached, the model's of those it has. (In hybrid mode the
    // prose prior puts the guide behind handlers, on a full index too.)
    let (code, _, body) = s.get("/search?q=making+a+loaf+in+the+kitchen&k=1&mode=semantic&threshold=0");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"file\":\"docs/guide.md\""), "{body} at {status}");
    let ready = s.wait_ready();
    assert_eq!(
        (ready["holes"].as_u64(), ready["vectors"].clone(), ready["files"].as_u64()),
        (Some(0), ready["chunks"].clone(), Some(154))
    );
}

#[test]
fn a_fill_killed_midway_keeps_what_it_embedded_and_the_next_run_embeds_only_the_rest() {
    let t = sample_project();
    for i in 0..120 {
        let functions: String = (0..6)
            .map(|j| format!("def step_{i}_{j}(queue, limit={j}):\n    \"\"\"Move item {j} of batch {i} along the pipeline, then log how far it got.\"\"\"\n    while len(queue) > limit:\n        queue.pop({j} % 3)\n        log.info('moved %d of %d', {j}, {i})\n    return queue\n\n\n"))
            .collect();
        t.write(&format!("src/batch{i:03}.py"), &functions);
    }
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let stats = |t: &Tree| records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))[0].clone();
    let chunks = stats(&t)["chunks"].as_u64().unwrap();
    assert_eq!(stats(&t)["pending"].as_u64(), Some(chunks));
    let s = Server::start(&t, &["--refresh", "3600"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = s.json("/status");
        let (vectors, pending) = (status["vectors"].as_u64().unwrap(), status["pending"].as_u64().unwrap());
        assert!(pending > 0 || vectors == 0, "the fill ended before it could be killed; give it more to do: {status}");
        if vectors > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the fill never began: {status}");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(s); // SIGKILL, in the middle of the fill
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    let pending = stats(&t)["pending"].as_u64().unwrap();
    assert!(pending > 0 && pending < chunks, "{pending} of {chunks} chunks still lack the model's vector");
    let s = summary(&run(t.cmd("vg-index", ".").arg("--full")));
    assert_eq!(s["embedded"].as_u64(), Some(pending), "only the rest is embedded: {s}");
    assert_eq!(stats(&t)["pending"], 0);
}

#[test]
fn vecgrep_serve_runs_the_server_on_its_paths() {
    let t = sample_project();
    let s = Server::start_tool(&t, "vecgrep", &["--serve", "--full-index", "-k", "1", "--threshold", "-1", "src"], &[]);
    let status = s.json("/status");
    assert_eq!(status["scope"], serde_json::json!(["src"]));
    assert_eq!(status["files"], 3, "{status}");
    // -k and --threshold become the server's defaults.
    let (_, _, body) = s.get("/search?q=bake+bread");
    assert_eq!(body.lines().count(), 1);
    assert!(body.contains("\"file\":\"src/"), "scoped to src: {body}");
    // Everything it says, it says as the tool the user ran.
    s.wait_stderr("vecgrep: listening on http://");
    let said = s.stderr.lock().unwrap().clone();
    assert!(said.lines().all(|l| l.starts_with("vecgrep: ")), "{said}");
    assert!(s.stop().success());
}

#[test]
fn a_failed_search_answers_500_and_the_server_lives_on() {
    let t = sample_project();
    // No refresh during the test: nothing repairs the index behind our back.
    let s = Server::start(&t, &["--full-index", "--refresh", "3600"]);
    let (status, _, body) = s.get("/search?q=retry+upload&threshold=-1");
    assert_eq!(status, 200, "{body}");
    wait_words_in_memory(&s, true);
    // Break the index under the running server: the word index and the
    // names' counts are gone (the words are held in memory, the counts
    // never are).
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    db.execute_batch("DROP TABLE chunks_fts; DROP TABLE name_terms").unwrap();
    drop(db);
    let (status, _, body) = s.get("/search?q=retry+upload&threshold=-1");
    assert_eq!(status, 500, "{body}");
    assert!(error_of(500, &body).contains("search failed"), "{body}");
    // A search that would not touch the broken part is refused too, as the
    // index it opens lacks part of its tables (store/sqlite/parts.rs), and
    // the server lives on.
    let (status, _, body) = s.get("/search?q=retry+upload&threshold=-1&mode=semantic");
    assert!(status == 200 || error_of(500, &body).contains("is damaged"), "{status} {body}");
    // `/status` and `/health` say the index cannot be read, rather than
    // calling it empty and ready.
    let status = s.json("/status");
    let why = status["index_error"].as_str().unwrap_or_else(|| panic!("no index_error: {status}"));
    assert!(why.contains("is damaged") && why.contains("no such table"), "{why}");
    let health = s.json("/health");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["index_ready"], false, "{health}");
    // The index's file removed: the same, not an index "empty" and ready.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(t.path().join(format!(".vecgrep/index.db{suffix}")));
    }
    let status = s.json("/status");
    assert!(status["index_error"].as_str().is_some_and(|e| e.contains("no index at")), "{status}");
    assert_eq!(s.json("/health")["index_ready"], false);
}

/// A damaged index is rebuilt by the server's next refresh: removed and made
/// again. Every worker then answers from the new file, never from a
/// connection left on the removed one (which went on answering, and
/// `/status` reported, as the old index was).
#[test]
fn every_worker_answers_from_an_index_made_again_under_it() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "3600", "--workers", "4"]);
    // Its first run ended, so that no run of its own writes during the swap.
    s.wait_ready();
    for _ in 0..16 {
        assert_eq!(s.get("/search?q=retry+upload&threshold=-1&mode=lexical").0, 200);
    }
    // As a rebuild does: the index's files removed, a new index put there
    // (one made of the same tree with one more file).
    let copy = sample_project();
    copy.write("src/zanzibar.py", "def zanzibar_route():\n    return 'spice island'\n");
    assert_code(&run(&mut copy.cmd("vg-index", ".")), 0);
    let data = t.path().join(".vecgrep");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(data.join(format!("index.db{suffix}")));
    }
    std::fs::rename(copy.path().join(".vecgrep/index.db"), data.join("index.db")).unwrap();
    for _ in 0..16 {
        let (status, _, body) = s.get("/search?q=zanzibar&threshold=-1&mode=lexical");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("src/zanzibar.py"), "a worker answered from the removed index: {body:?}");
        assert_eq!(s.json("/status")["files"], 5);
    }
}

/// `--index-warn-threshold` asks before a large run "when on a terminal";
/// a server's runs ask no one, and the flag was taken and passed over.
#[test]
fn a_server_refuses_the_large_run_question_it_would_never_ask() {
    let t = sample_project();
    for tool in ["vg-serve", "vg-mcp"] {
        let o = run_or_fail_after(
            t.cmd(tool, ".").args(["--index-warn-threshold", "5"]).stdin(Stdio::null()),
            Duration::from_secs(60),
        );
        assert_code(&o, 2);
        assert_eq!(
            stderr(&o),
            format!("{tool}: --index-warn-threshold does nothing here: a server indexes without asking anyone\n")
        );
    }
}

/// The model reads a text's first 256 tokens: a text of 8 MB is read no
/// further (tokenizing all of it took a gigabyte and ten seconds, on a
/// route no rate limit holds).
#[test]
fn a_huge_text_to_embed_is_read_only_as_far_as_the_model_reads() {
    let t = sample_project();
    let s = Server::start(&t, &[]);
    let vector_of = |text: &str| {
        let body = serde_json::json!({ "input": text }).to_string();
        let head = format!(
            "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let (status, _, answer) = s.raw(format!("{head}{body}").as_bytes());
        assert_eq!(status, 200, "{}", &answer[..answer.len().min(200)]);
        serde_json::from_str::<Value>(&answer).unwrap()["data"][0]["embedding"].clone()
    };
    let huge = "word ".repeat(1_600_000);
    assert_eq!(vector_of(&huge), vector_of(&huge[..4000]));
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.child.id())).unwrap();
    let peak = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap();
    let peak_kb: u64 = peak.trim().trim_end_matches(" kB").parse().unwrap();
    assert!(peak_kb < 700_000, "the server's memory peaked at {peak_kb} kB");
}

#[test]
fn post_v1_embeddings_answers_in_openai_format() {
    let t = sample_project();
    let s = Server::start_with(&t, &["--full-index"], &[("VECGREP_TOKEN", "s3cret")]);
    let auth = "Authorization: Bearer s3cret";
    let post = |body: &str, headers: &[&str]| {
        let mut req = format!(
            "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str("\r\n");
        req.push_str(body);
        s.raw(req.as_bytes())
    };
    let (status, head, body) =
        post(r#"{"input":["retry an upload","bake bread"],"model":"all-MiniLM-L6-v2"}"#, &[auth]);
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("application/json"), "{head}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "list");
    assert_eq!(v["model"], "all-MiniLM-L6-v2");
    let data = v["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!((data[1]["index"].as_u64(), data[1]["object"].as_str()), (Some(1), Some("embedding")));
    let e = data[0]["embedding"].as_array().unwrap();
    assert_eq!(e.len(), 384);
    let norm: f64 = e.iter().map(|x| x.as_f64().unwrap().powi(2)).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-3, "{norm}");
    assert!(v["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    // A single string is one input; the model's own dimensions may be asked for.
    let (status, _, body) = post(r#"{"input":"one text","dimensions":384}"#, &[auth]);
    assert_eq!((status, serde_json::from_str::<Value>(&body).unwrap()["data"].as_array().unwrap().len()), (200, 1));
    let many = format!(r#"{{"input":[{}"x"]}}"#, "\"x\",".repeat(300_000));
    let long_dimensions = format!(r#"{{"input":["x"],"dimensions":"{}"}}"#, "d".repeat(100_000));
    for (body, why) in [
        ("not json", "not an embeddings request"),
        (r#"{"input":[]}"#, "1 to 2048"),
        // Past the bound the texts are counted, not kept (a body of millions costs its size).
        (many.as_str(), "1 to 2048 texts, got 300001"),
        (r#"{"input":[1]}"#, "not an embeddings request"),
        // A request's fields as an array, in their order, which serde would take.
        (r#"[["hello"],"all-MiniLM-L6-v2","float",384]"#, "which is a JSON object, {\"input\": [...]}"),
        // JSON of another shape is told what is wanted, not the name of a type of ours.
        (r#"[1]"#, "which is a JSON object, {\"input\": [...]}"),
        (r#""x""#, "which is a JSON object, {\"input\": [...]}"),
        // Said whole, not cut at "a JSON object is" (audit 229).
        ("  ", "the body is empty; an embeddings request is a JSON object"),
        (r#"{"input":{"a":1}}"#, "a text or a list of texts"),
        (r#"{"input":["x", ""]}"#, "input 1 is empty"),
        (r#"{"input":"   "}"#, "input 0 is empty"),
        (r#"{"input":["x"],"model":"nomic-embed-text"}"#, "nomic-embed-text"),
        (r#"{"input":["x"],"encoding_format":"base64"}"#, "float"),
        (r#"{"input":["x"],"dimensions":256}"#, "384 dimensions, not 256"),
        (r#"{"input":["x"],"dimensions":"384"}"#, "a positive integer, not \"384\""),
        // A value sent is repeated in part, however large.
        (long_dimensions.as_str(), "a positive integer, not \"ddd"),
    ] {
        let (status, _, answer) = post(body, &[auth]);
        assert_eq!(status, 400, "{}", &body[..body.len().min(80)]);
        assert!(error_of(400, &answer).contains(why), "{answer}");
        assert!(!answer.contains("struct") && answer.len() < 1000, "{}", &answer[..answer.len().min(200)]);
    }
    // A value sent is repeated in part: a model name of 60,000 characters.
    let long_model = format!(r#"{{"input":["x"],"model":"{}"}}"#, "m".repeat(60_000));
    let (status, _, answer) = post(&long_model, &[auth]);
    assert!(status == 400 && answer.len() < 400 && answer.contains("mmm…"), "{status} {}", answer.len());
    let (status, _, _) = post(r#"{"input":["x"]}"#, &[]);
    assert_eq!(status, 401, "the token guards this route too");
    let (status, head, _) = s.request("GET", "/v1/embeddings", &[auth]);
    assert_eq!(status, 405);
    assert!(head.contains("Allow: POST"), "{head}");
    let (status, _, _) = s.raw(
        format!("POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\n{auth}\r\nTransfer-Encoding: chunked\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(status, 411);
    let (status, _, _) = s.raw(
        format!("POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\n{auth}\r\nContent-Length: 99999999\r\n\r\n")
            .as_bytes(),
    );
    assert_eq!(status, 413);
    assert_eq!(s.request("GET", "/health", &[auth]).0, 200, "the server lives on");
}

/// A client that sends its whole body before it reads (Python's urllib and
/// requests do) gets the error it was sent: the server answered 413 or 401
/// and closed with the body unread, the socket was reset, and the client
/// saw "connection reset" in place of the answer (audit 193).
#[test]
fn an_error_before_the_body_is_read_reaches_a_client_still_sending_it() {
    let t = sample_project();
    let s = Server::start_with(&t, &[], &[("VECGREP_TOKEN", "s3cret")]);
    let send_whole = |auth: &str, len: usize| {
        let mut c = TcpStream::connect(&s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let head = format!("POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Length: {len}\r\n\r\n");
        let mut request = head.into_bytes();
        request.resize(request.len() + len, b' ');
        let sent = c.write_all(&request);
        let mut response = String::new();
        let read = c.read_to_string(&mut response);
        (sent.map_err(|e| e.to_string()), read.map_err(|e| e.to_string()), response)
    };
    // Over the route's 8 MiB bound, and without the token.
    for (auth, len, status) in [("Authorization: Bearer s3cret\r\n", 9 << 20, "413"), ("", 2 << 20, "401")] {
        let (sent, read, response) = send_whole(auth, len);
        assert_eq!((sent, read), (Ok(()), Ok(response.len())), "{status}: {response}");
        assert!(response.starts_with(&format!("HTTP/1.1 {status} ")), "{response}");
    }
    assert_eq!(s.request("GET", "/health", &["Authorization: Bearer s3cret"]).0, 200, "the server lives on");
    // Clients without the token that keep their connections open after the
    // 401 hold no slot for long: the drain held each for 5 s, busy, and the
    // holder of the token was answered 503 meanwhile (review 196).
    let held: Vec<TcpStream> = (0..32)
        .map(|_| {
            let mut c = TcpStream::connect(&s.addr).unwrap();
            c.write_all(b"GET /search?q=x HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(s.request("GET", "/health", &["Authorization: Bearer s3cret"]).0, 200, "slots held");
    drop(held);
}

#[test]
fn search_takes_the_metadata_filters_before_the_cut() {
    let t = Tree::git();
    for i in 0..12 {
        t.write(
            &format!("vendor/copy{i}.py"),
            &format!("def retry_upload_{i}(client, blob):\n    return client.put(blob)\n"),
        );
    }
    t.write("a.py", "def send_again(client, blob):\n    return client.put(blob)\n");
    t.write("b.py", "def upload_once(client, blob):\n    client.put(blob)\n");
    let s = Server::start(&t, &[]);
    s.wait_ready();
    let files = |target: &str| -> Vec<String> {
        let (status, _, body) = s.get(target);
        assert_eq!(status, 200, "{body}");
        body.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["file"].as_str().unwrap().to_string()).collect()
    };
    let mut found = files("/search?q=retry+an+upload&k=2&threshold=-1&exclude=vendor/");
    found.sort();
    assert_eq!(found, ["a.py", "b.py"]);
    let small = files("/search?q=retry+an+upload&k=20&threshold=-1&size=-60&size=%2B1");
    assert!(
        !small.is_empty() && small.iter().all(|f| std::fs::metadata(t.path().join(f)).unwrap().len() <= 60),
        "{small:?}"
    );
    assert!(files("/search?q=retry&threshold=-1&changed_before=2000-01-01").is_empty());
    for bad in ["changed_within=someday", "size=10k", "exclude=src/%7Ba,b"] {
        let (status, _, body) = s.get(&format!("/search?q=retry&{bad}"));
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(!error_of(400, &body).is_empty());
    }
}

/// A request from `local` (a loopback address of the client's choosing).
fn send_from(local: &str, addr: &str, target: &str) -> (u16, String, String) {
    use std::net::{SocketAddr, TcpStream};
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&format!("{local}:0").parse::<SocketAddr>().unwrap().into()).unwrap();
    socket.connect(&addr.parse::<SocketAddr>().unwrap().into()).unwrap();
    let mut s: TcpStream = socket.into();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.split(' ').nth(1).unwrap().parse().unwrap(), head.to_string(), body.to_string())
}

#[test]
fn a_noisy_client_is_limited_and_a_quiet_one_is_not() {
    let t = sample_project();
    let s = Server::start(&t, &["--rate-limit", "5"]);
    s.wait_ready();
    let search = "/search?q=upload&mode=lexical";
    for i in 0..5 {
        assert_eq!(send_from("127.0.0.1", &s.addr, search).0, 200, "request {i}");
    }
    let (status, head, body) = send_from("127.0.0.1", &s.addr, search);
    assert_eq!(status, 429, "{body}");
    assert!(error_of(429, &body).contains("too many requests"), "{body}");
    let retry: u64 = head.lines().find_map(|l| l.strip_prefix("Retry-After: ")).unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{head}");
    // Another address has its own share; what only reports is always answered.
    assert_eq!(send_from("127.0.0.2", &s.addr, search).0, 200);
    for target in ["/health", "/status", "/v1/index/status?job_id=none"] {
        assert_ne!(send_from("127.0.0.1", &s.addr, target).0, 429, "{target}");
    }
    assert_eq!(send_from("127.0.0.1", &s.addr, search).0, 429, "still limited");
}

#[test]
fn health_says_whether_the_index_is_ready_and_with_what() {
    let t = sample_project();
    let s = Server::start_with(&t, &[], &[("VECGREP_TOKEN", "s3cret")]);
    let auth = ["Authorization: Bearer s3cret"];
    let deadline = Instant::now() + Duration::from_secs(120);
    let health = loop {
        let (status, _, body) = s.request("GET", "/health", &auth);
        assert_eq!(status, 200, "{body}");
        let h: Value = serde_json::from_str(&body).unwrap();
        if h["index_ready"] == true {
            break h;
        }
        assert!(Instant::now() < deadline, "never ready: {h}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(health["status"], "ok");
    assert!(health["chunks"].as_u64().unwrap() >= 4, "{health}");
    assert_eq!(health["embedder_model"], "all-MiniLM-L6-v2");
    assert_eq!(health["auth_enabled"], true);
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
}

/// Poll an index job until it leaves `running`.
fn job_after_running(s: &Server, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let job = s.json(&format!("/v1/index/status?job_id={id}"));
        if job["status"] != "running" {
            return job;
        }
        assert!(Instant::now() < deadline, "the job never finished: {job}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn start_job(s: &Server) -> String {
    // As `curl -X POST` sends it: no body, no Content-Length.
    let (status, _, body) = s.request("POST", "/v1/index/start", &[]);
    assert_eq!(status, 202, "{body}");
    let accepted: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(accepted["status"], "accepted");
    accepted["job_id"].as_str().unwrap().to_string()
}

#[test]
fn index_jobs_run_now_and_are_answered_for_after_a_restart() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "3600"]);
    s.wait_ready();
    t.write("src/airship.py", "def launch_zeppelin(crew):\n    return crew.board()\n");
    let id = start_job(&s);
    let job = job_after_running(&s, &id);
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(
        (job["job_id"].as_str(), job["files"].as_u64(), job["error"].is_null()),
        (Some(id.as_str()), Some(5), true)
    );
    assert!(job["started_at"].as_str().unwrap().ends_with('Z') && job["finished_at"].is_string(), "{job}");
    assert!(s.get("/search?q=zeppelin&mode=lexical").2.contains("src/airship.py"), "the run indexed the new file");
    let (status, _, body) = s.get("/v1/index/status?job_id=0123456789abcdef");
    assert_eq!(status, 404);
    error_of(404, &body);
    assert_eq!(s.get("/v1/index/status").0, 400);
    for (body, want) in [("{}", 202), (" ", 202), ("[1]", 400), ("{\"root\": \"/etc\"}", 400), ("not json", 400)] {
        let req = format!(
            "POST /v1/index/start HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(s.raw(req.as_bytes()).0, want, "{body}");
    }
    let big = "x".repeat(100_000);
    let req = format!(
        "POST /v1/index/start HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{big}",
        big.len()
    );
    assert_eq!(s.raw(req.as_bytes()).0, 413);
    assert_eq!(s.request("GET", "/v1/index/start", &[]).0, 405);
    drop(s);
    // A later server still answers for the job.
    let s = Server::start(&t, &["--refresh", "3600"]);
    assert_eq!(s.json(&format!("/v1/index/status?job_id={id}"))["status"], "completed");
}

/// A server on a catalog says a project that has gone missing, as every
/// run of the catalog says it (it said nothing: an agent got a smaller
/// catalog unsaid), and never calls its projects' links gone paths.
#[test]
fn a_server_on_a_catalog_says_a_missing_project_and_no_link_is_gone() {
    let (t, catalogs) = api_and_billing_catalog();
    let env = [("VECGREP_CATALOG_DIR", catalogs.to_str().unwrap())];
    assert_code(&run(t.cmd("vg-index", ".").args(["--catalog", "team"]).env(env[0].0, env[0].1)), 0);
    std::fs::rename(t.path().join("src/billing"), t.path().join("src/billing2")).unwrap();
    let s = Server::start_with(&t, &["--catalog", "team", "--refresh", "3600"], &env);
    s.wait_ready();
    s.wait_stderr("skipping billing: the catalog's project is not at");
    let said = s.stderr.lock().unwrap().clone();
    assert!(!said.contains("served path is gone"), "{said}");
    let (status, _, body) = s.get("/search?q=retry+a+failed+upload&threshold=-1");
    assert!(status == 200 && body.contains("\"project\":\"api\""), "{status} {body}");
    drop(s);
    // One project served by its own directory: the catalog's link to it.
    let api = t.path().join("src/api");
    let s = Server::start_with(&t, &["--catalog", "team", "--refresh", "3600", api.to_str().unwrap()], &env);
    s.wait_ready();
    let said = s.stderr.lock().unwrap().clone();
    assert!(!said.contains("served path is gone"), "{said}");
}

/// A job's `files` and `chunks` are the index's after the run
/// (spec/http.md), not those of the paths served alone: a server on `src`
/// of a project indexed whole said 3 of its 4 files.
#[test]
fn an_index_jobs_counts_are_the_indexs_after_it() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let s = Server::start(&t, &["--refresh", "3600", "src"]);
    s.wait_ready();
    let job = job_after_running(&s, &start_job(&s));
    let status = s.json("/status");
    assert_eq!(job["files"], 4, "{job}");
    assert_eq!((&job["files"], &job["chunks"]), (&status["files"], &status["chunks"]), "{job} {status}");
}

/// ServedPathsCleanUpAsTheirWalk: a job over the one path served drops a
/// file ignored since, as `vg-index src` would; over two paths it keeps a
/// file still on disk and drops only one deleted, and a search, as rg
/// would, finds nothing of the one kept (it did).
#[test]
fn an_index_job_cleans_up_as_a_walk_of_the_served_paths() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "3600", "src"]);
    s.wait_ready();
    t.write(".vecgrepignore", "config.py\n");
    let job = job_after_running(&s, &start_job(&s));
    assert_eq!((job["status"].as_str(), job["removed"].as_u64()), (Some("completed"), Some(1)), "{job}");
    assert!(!s.get("/search?q=load_settings&mode=lexical").2.contains("src/config.py"));
    drop(s);
    t.write(".vecgrepignore", "upload.py\n");
    let s = Server::start(&t, &["--refresh", "3600", "src", "docs"]);
    s.wait_ready();
    std::fs::remove_file(t.path().join("src/geometry.rs")).unwrap();
    let job = job_after_running(&s, &start_job(&s));
    assert_eq!(job["removed"], 1, "the deleted file alone: {job}");
    assert!(!s.get("/search?q=upload_with_retry&mode=lexical").2.contains("src/upload.py"), "kept, but ignored");
    assert!(!s.get("/search?q=circle_area&mode=lexical").2.contains("src/geometry.rs"));
}

#[test]
fn a_job_running_when_its_server_died_reads_as_failed() {
    let t = sample_project();
    many_files(&t, 400);
    let s = Server::start(&t, &["--refresh", "3600"]);
    let id = start_job(&s);
    assert_eq!(s.json(&format!("/v1/index/status?job_id={id}"))["status"], "running");
    drop(s); // kill -9 while it runs
    let s = Server::start(&t, &["--refresh", "3600"]);
    let job = s.json(&format!("/v1/index/status?job_id={id}"));
    assert_eq!(job["status"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("server stopped"), "{job}");
    assert!(job["finished_at"].is_string());
    // SIGTERM stops the job's run after the file in hand; it failed too.
    s.wait_ready();
    for i in 0..300 {
        t.write(&format!("late/late{i:03}.py"), &format!("def late_{i}():\n    return {i} * 7\n"));
    }
    let id = start_job(&s);
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.json("/status")["status"] != "indexing" {
        assert!(Instant::now() < deadline, "the job's run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(s.stop().success());
    let s = Server::start(&t, &["--refresh", "3600"]);
    let job = s.json(&format!("/v1/index/status?job_id={id}"));
    assert_eq!(job["status"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("server stopped"), "{job}");
}

/// SIGTERM lets the requests in flight be answered before the server
/// exits: their connections were closed unanswered. A job it could no
/// longer run is refused, not accepted to read `running` for good.
#[test]
fn a_stopping_server_answers_the_requests_it_has_begun() {
    use std::io::{Read, Write};
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "3600"]);
    s.wait_ready();
    let mut begun = std::net::TcpStream::connect(&s.addr).unwrap();
    // The head now, the body after SIGTERM: the request is in flight.
    begun
        .write_all(
            b"POST /v1/index/start HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    s.wait_stderr("shutting down");
    begun.write_all(b"{}").unwrap();
    let mut answer = String::new();
    begun.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 503") && answer.contains("the server is stopping"), "{answer:?}");
    assert!(s.stop().success());
    let store = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let jobs: i64 = store.query_row("SELECT count(*) FROM jobs", [], |r| r.get(0)).unwrap();
    assert_eq!(jobs, 0, "no job was kept, to read running for good");
}

/// A server on a loopback address answers only requests for this machine
/// and not from web pages elsewhere: without a token, any page the user
/// visited could read the code through DNS rebinding (its own name pointed
/// at 127.0.0.1), or start index runs with a cross-site POST.
///
/// An IPv4 loopback address written as IPv6 is loopback too: the checks
/// were off there, with a warning that other machines could connect.
#[test]
fn a_loopback_server_refuses_rebound_names_and_pages_from_elsewhere() {
    for bind in [&[][..], &["--bind", "::ffff:127.0.0.1"]] {
        let t = sample_project();
        let s = Server::start(&t, &[&["--refresh", "3600"][..], bind].concat());
        loopback_server_refuses_rebound_names_and_pages_from_elsewhere(&s);
        s.wait_stderr("listening on");
        assert!(!s.stderr.lock().unwrap().contains("warning"), "{bind:?}: {}", s.stderr.lock().unwrap());
    }
}

fn loopback_server_refuses_rebound_names_and_pages_from_elsewhere(s: &Server) {
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    let get = |headers: &str| s.raw(format!("GET /health HTTP/1.1\r\n{headers}Connection: close\r\n\r\n").as_bytes());
    for refused in [
        "Host: evil.example\r\n".to_string(),
        format!("Host: evil.example:{port}\r\n"),
        "Host: localhost\r\nOrigin: http://evil.example\r\n".to_string(),
        "Host: localhost\r\nOrigin: null\r\n".to_string(),
        "Host: 10.1\r\n".to_string(),
    ] {
        let (status, _, body) = get(&refused);
        assert_eq!(status, 403, "{refused}: {body}");
        error_of(403, &body);
    }
    let (status, _, body) = s.raw(b"POST /v1/index/start HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 403, "{body}");
    for allowed in [
        format!("Host: localhost:{port}\r\n"),
        format!("Host: 127.0.0.1:{port}\r\n"),
        format!("Host: [::1]:{port}\r\n"),
        // As curl sends `http://127.1:PORT/` (inet_aton's short forms).
        format!("Host: 127.1:{port}\r\n"),
        "Host: localhost\r\nOrigin: http://localhost:3000\r\n".to_string(),
        "Host: localhost\r\nOrigin: vscode-webview://4f2a\r\n".to_string(),
    ] {
        assert_eq!(get(&allowed).0, 200, "{allowed}");
    }
    // Without a Host: HTTP/1.0 need not send one; HTTP/1.1 must (RFC 9112 3.2).
    assert_eq!(s.raw(b"GET /health HTTP/1.0\r\n\r\n").0, 200);
    let (status, _, body) = get("");
    assert_eq!(status, 400, "{body}");
    assert!(error_of(400, &body).contains("without a Host header"), "{body}");
}

/// Listening where other machines can connect is warned of once listening;
/// an address that cannot be bound is one line, the error, with no warning
/// of a server that never listened.
#[test]
fn a_server_other_machines_reach_is_warned_of_once_listening() {
    let t = sample_project();
    let s = Server::start(&t, &["--bind", "0.0.0.0", "--refresh", "3600"]);
    s.wait_stderr("warning: listening on 0.0.0.0, which other machines can reach; anyone who can connect");
    assert!(s.stop().success());
    let o = run(t.cmd("vg-serve", ".").args(["--bind", "192.0.2.1", "--port", "0"]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).starts_with("vg-serve: cannot listen on 192.0.2.1:"), "{}", stderr(&o));
}

/// A port in use is said before the model loads and a `--full-index` run,
/// not after them (minutes of indexing on a large tree); a first run that
/// fails is said once, where it was said as a note and again as the error.
#[test]
fn a_port_in_use_or_a_failed_first_run_is_one_line_before_any_run() {
    let t = sample_project();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let o = run(t.cmd("vg-serve", ".").args(["--full-index", "--port", &port]));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).starts_with(&format!("vg-serve: cannot listen on 127.0.0.1:{port}")), "{}", stderr(&o));
    assert!(!t.path().join(".vecgrep/index.db").exists(), "it indexed before finding the port taken");
    drop(taken);
    let blocked = Tree::git();
    blocked.write("a.py", "def f():\n    return 1\n");
    blocked.write(".vecgrep", "not a directory\n");
    for tool in [&["vg-serve", "--port", "0"][..], &["vg-mcp"]] {
        let o = run(blocked.cmd(tool[0], ".").args(&tool[1..]).arg("--full-index").stdin(std::process::Stdio::null()));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).lines().count(), 1, "{tool:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("in the way"), "{tool:?}: {}", stderr(&o));
    }
}

/// A second server on the same root leaves the first one's running job
/// alone: it failed it as a stopped server's, and the job then read
/// "completed" with that failure's error beside it.
#[test]
fn a_second_server_leaves_the_first_ones_running_job_alone() {
    let t = sample_project();
    let first = Server::start(&t, &["--refresh", "3600"]);
    first.wait_ready();
    a_job_outlives_a_second_servers_start(&t, &first);
}

/// A server told to leave files out (`-g '!secret/**'`) leaves them out of
/// its searches before its first run has walked: the index an earlier run
/// made, holding them, was searched unfiltered until then, and a client got
/// the secrets.
#[test]
fn a_servers_filters_hold_before_its_first_run_has_walked() {
    let t = sample_project();
    t.write("secret/key.txt", "zebra password hunter2\n");
    t.write("src/zoo.txt", "zebra in the code\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    // The first run waits for this lock, so it never walks meanwhile.
    let lock = hold_index_lock(&t);
    let s = Server::start(&t, &["-g", "!secret/**", "--refresh", "3600"]);
    let (status, _, body) = s.get("/search?q=zebra&mode=lexical");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("src/zoo.txt") && !body.contains("secret/"), "{body}");
    drop(lock);
    s.wait_ready();
    let (_, _, body) = s.get("/search?q=zebra&mode=lexical");
    assert!(body.contains("src/zoo.txt") && !body.contains("secret/"), "{body}");
}

/// A job of `first`'s, kept running by the index lock, is still running
/// once a second server has started on its root, and then completes.
fn a_job_outlives_a_second_servers_start(t: &Tree, first: &Server) {
    // The job's run waits for this lock, so the job stays running.
    let lock = hold_index_lock(t);
    let id = start_job(first);
    let second = Server::start(t, &["--refresh", "3600"]);
    let job = first.json(&format!("/v1/index/status?job_id={id}"));
    assert_eq!(job["status"], "running", "{job}");
    drop(lock);
    let job = job_after_running(first, &id);
    assert_eq!((job["status"].as_str(), job["error"].is_null()), (Some("completed"), true), "{job}");
    drop(second);
}

/// The same when `.vecgrep` was removed under the first server, which makes
/// it again: its mark went with it, and a second server failed its job.
#[test]
fn a_server_marks_the_root_again_when_its_data_directory_is_made_again() {
    let t = sample_project();
    let first = Server::start(&t, &["--refresh", "0.3"]);
    first.wait_ready();
    std::fs::remove_dir_all(t.path().join(".vecgrep")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !t.path().join(".vecgrep/serve.lock").exists() {
        assert!(Instant::now() < deadline, "the mark was never made again");
        std::thread::sleep(Duration::from_millis(100));
    }
    a_job_outlives_a_second_servers_start(&t, &first);
}

#[test]
fn search_takes_an_indexed_revision_and_refuses_others() {
    let t = crate::revisions::two_releases();
    assert_code(&run(t.cmd("vg-index", ".").args(["--rev", "v1"])), 0);
    let v1 = git(&t, &["rev-parse", "v1"]);
    let s = Server::start(&t, &[]);
    s.wait_ready();
    let (status, _, body) = s.get("/search?q=send+a+file+to+the+storage+server&k=1&threshold=-1&rev=v1");
    assert_eq!(status, 200, "{body}");
    let hit: Value = serde_json::from_str(body.lines().next().unwrap()).unwrap();
    assert_eq!((hit["file"].as_str(), hit["rev"].as_str()), (Some("src/client.py"), Some(v1.as_str())));
    assert!(hit["text"].as_str().unwrap().contains("Send one file to the storage server"), "{hit}");
    let (status, _, body) = s.get("/search?q=anything&rev=main");
    assert_eq!(status, 400);
    assert!(body.contains("is not indexed; run vg-index --rev main"), "{body}");
    // A long name is repeated 100 characters at most, each time.
    let long = format!("main{}", "^0".repeat(2000));
    let (status, _, body) = s.get(&format!("/search?q=anything&rev={long}"));
    assert_eq!(status, 400);
    assert!(body.len() < 600 && body.contains("is not indexed"), "{} bytes: {body}", body.len());
    let (status, _, body) = s.get("/search?q=anything&rev=no-such-ref");
    assert_eq!(status, 400);
    assert!(body.contains("unknown revision"), "{body}");
    // A revision's files have no times of their own (they were the commit's).
    let (status, _, body) = s.get("/search?q=anything&rev=v1&changed_before=2021-01-01");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("bound the working tree's file times"), "{body}");
    // Given empty, a filter is refused rather than left out: rev= is not the working tree.
    for empty in ["rev=", "changed_within=", "exclude=", "size="] {
        let (status, _, body) = s.get(&format!("/search?q=anything&{empty}"));
        assert_eq!(status, 400, "{empty}: {body}");
        assert!(body.contains("is empty; leave it out"), "{body}");
    }
    // A revision's index that cannot be read is the server's failure, and
    // forgetting and indexing that revision again rebuilds it (not
    // --clear-cache, which would throw away every index).
    let index = t.path().join(format!(".vecgrep/revs/{v1}/.vecgrep/index.db"));
    let whole = std::fs::read(&index).unwrap();
    std::fs::write(&index, &whole[..whole.len().min(20_000)]).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    let (status, _, body) = s.get("/search?q=anything&rev=v1");
    assert_eq!(status, 500, "{body}");
    let short = &v1[..12];
    assert!(
        body.contains(&format!("run vg-index --forget {short}, then vg-index --rev {short}, to rebuild it")),
        "{body}"
    );
    assert_code(&run(t.cmd("vg-index", ".").args(["--forget", short])), 0);
    assert_code(&run(t.cmd("vg-index", ".").args(["--rev", "v1"])), 0);
    let (status, _, body) = s.get("/search?q=send+a+file+to+the+storage+server&k=1&threshold=-1&rev=v1");
    assert_eq!(status, 200, "{body}");
}

/// A socket to `addr` from the loopback address `local`.
fn connect_from(local: &str, addr: &str) -> TcpStream {
    use std::net::SocketAddr;
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&format!("{local}:0").parse::<SocketAddr>().unwrap().into()).unwrap();
    socket.connect(&addr.parse::<SocketAddr>().unwrap().into()).unwrap();
    socket.into()
}

/// Whether the server has closed `s` (an EOF or a reset), without waiting.
fn closed_by_server(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// Issue 42: clients that connect and send nothing, or drip a request head
/// a byte at a time, from one address and from several, neither slow the
/// server's answers nor hold more than their share of connections.
#[test]
fn slow_clients_neither_starve_the_server_nor_hold_more_than_their_share() {
    let t = sample_project();
    let s = Server::start(&t, &["--rate-limit", "0"]);
    s.wait_ready();
    let search =
        "GET /search?q=retry+a+failed+upload&threshold=-1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let timed = |local: &str| {
        let started = Instant::now();
        let ask = || {
            let mut c = connect_from(local, &s.addr);
            c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            c.write_all(search.as_bytes()).unwrap();
            let mut response = String::new();
            let _ = c.read_to_string(&mut response);
            response
        };
        let mut response = ask();
        // Every slot of the address busy at that moment (the gate closes a
        // dripping head for another client only after a moment) is a 503
        // with Retry-After: 1, which a client heeds; its wait counts in the
        // time taken (CI once met it with nothing else running).
        if response.starts_with("HTTP/1.1 503") && response.contains("Retry-After: 1") {
            std::thread::sleep(Duration::from_secs(1));
            response = ask();
        }
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        started.elapsed()
    };
    let before = (0..5).map(|_| timed("127.0.0.1")).max().unwrap();
    // 100 silent and 100 dripping connections from the searcher's own address, 20 from each of 10 others.
    let mut held: Vec<TcpStream> = (0..200).map(|_| connect_from("127.0.0.1", &s.addr)).collect();
    held.extend((2..12).flat_map(|i| (0..20).map(move |_| format!("127.0.0.{i}"))).map(|a| connect_from(&a, &s.addr)));
    let drippers: Vec<TcpStream> = held.iter().step_by(2).map(|c| c.try_clone().unwrap()).collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dripping = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut drippers = drippers;
            for byte in b"GET /search?q=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                .iter()
                .cycle()
            {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                for d in &mut drippers {
                    let _ = d.write_all(&[*byte]);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    // Under the 5 s a starved worker's request head waits, with room for
    // a machine other tests load: two searches of 20 may be slow for that
    // (a search held behind the slow clients is slow every time).
    let bound = (before * 5).max(Duration::from_secs(4));
    let took: Vec<(&str, Duration)> = ["127.0.0.1", "127.0.0.20", "127.0.0.1", "127.0.0.3"]
        .iter()
        .cycle()
        .take(20)
        .map(|local| (*local, timed(local)))
        .collect();
    let slow: Vec<_> = took.iter().filter(|(_, took)| *took >= bound).collect();
    assert!(slow.len() <= 2, "searches took {slow:?} (alone: {before:?}) while slow clients connected");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    dripping.join().unwrap();
    // The first address holds at most its share of connections; the server closed the rest.
    let still_open = held[..200].iter_mut().map(closed_by_server).filter(|closed| !closed).count();
    assert!(still_open <= 32, "{still_open} of one address's 200 connections are still open");
    assert_eq!(s.json("/health")["status"], "ok");
}

/// Issue 42: anonymous requests are counted apart, after the token, so
/// they cannot spend the share of a client with the token at their address.
#[test]
fn requests_without_the_token_cannot_spend_an_authenticated_clients_share() {
    let t = sample_project();
    let s = Server::start_with(&t, &["--rate-limit", "5"], &[("VECGREP_TOKEN", "s3cret")]);
    let request = |auth: bool| {
        let mut c = connect_from("127.0.0.1", &s.addr);
        let auth = if auth { "Authorization: Bearer s3cret\r\n" } else { "" };
        write!(c, "GET /search?q=upload&mode=lexical HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        let _ = c.read_to_string(&mut response);
        response.split(' ').nth(1).unwrap().parse::<u16>().unwrap()
    };
    let anonymous: Vec<u16> = (0..8).map(|_| request(false)).collect();
    assert_eq!(anonymous, [401, 401, 401, 401, 401, 429, 429, 429], "anonymous requests have a share of their own");
    let authenticated: Vec<u16> = (0..6).map(|_| request(true)).collect();
    assert_eq!(authenticated, [200, 200, 200, 200, 200, 429], "the token's share is whole");
}

/// Issue 42: heads a proxy in front could read as another request
/// (request smuggling) are refused with 400.
#[test]
fn heads_that_could_smuggle_a_request_are_refused() {
    let t = sample_project();
    let s = Server::start(&t, &[]);
    for head in [
        "GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
        "GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: +2\r\n\r\n{}",
        "GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
        "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Note: a\0b\r\n\r\n",
    ] {
        let (status, _, body) = s.raw(head.as_bytes());
        assert_eq!(status, 400, "{head:?}: {body}");
        error_of(400, &body);
    }
}

/// Issue 42: an empty --token would turn authentication off unseen, even
/// with VECGREP_TOKEN set: it is refused.
#[test]
fn an_empty_token_is_refused() {
    let t = sample_project();
    let mut c = t.cmd("vg-serve", ".");
    let o = run(c.args(["--token", ""]).env("VECGREP_TOKEN", "s3cret"));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-serve: ") && err.contains("--token is empty"), "{err}");
    // So is an empty VECGREP_TOKEN (`$(cat a-missing-file)`), through the
    // porcelain too, and a token no header could carry.
    // One that is not UTF-8 was taken for none, and the code served to all.
    use std::os::unix::ffi::OsStrExt;
    let not_utf8 = std::ffi::OsStr::from_bytes(b"\xff");
    for (tool, env) in [
        ("vg-serve", "".as_ref()),
        ("vecgrep", "".as_ref()),
        ("vg-serve", "a\nb".as_ref()),
        ("vg-serve", not_utf8),
        ("vecgrep", not_utf8),
    ] {
        let mut c = t.cmd(tool, ".");
        if tool == "vecgrep" {
            c.arg("--serve");
        }
        // A server that started would serve until killed.
        let o = run_or_fail_after(c.env("VECGREP_TOKEN", env), Duration::from_secs(60));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("VECGREP_TOKEN"), "{tool} {env:?}: {}", stderr(&o));
    }
}

/// Issue 42: `/status` says the spec's states (empty, indexing, ready,
/// aborted), never one of its own.
#[test]
fn status_reports_the_specs_states() {
    let empty = Tree::git();
    let s = Server::start(&empty, &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.json("/status")["status"] != "empty" {
        assert!(Instant::now() < deadline, "never empty: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(s);
    let t = sample_project();
    let gone = "postgres:///vecgrep?host=/nonexistent/socket/dir";
    let s = Server::start(&t, &["--store", gone]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let status = s.json("/status");
        if status["status"] == "aborted" {
            break status;
        }
        assert!(["empty", "indexing"].contains(&status["status"].as_str().unwrap()), "{status}");
        assert!(Instant::now() < deadline, "never aborted: {status}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status["error"].as_str().unwrap().contains("connect to"), "{status}");
    // A readiness probe is told the truth: no index, no readiness.
    assert_eq!(s.json("/health")["index_ready"], false);
}

/// A walk flag no walk can take: the servers started, and answered every
/// search with nothing, their runs failing behind them.
#[test]
fn servers_refuse_to_start_on_walk_flags_no_walk_can_take() {
    let t = sample_project();
    for tool in ["vg-serve", "vg-mcp"] {
        for bad in [&["-t", "nosuch"][..], &["-g", "["], &["--ignore-file", "/nonexistent/x"]] {
            let o = run_or_fail_after(
                t.cmd(tool, ".").args(bad).stdin(std::process::Stdio::null()),
                Duration::from_secs(60),
            );
            assert_code(&o, 2);
            assert_eq!(stderr(&o).lines().count(), 1, "{tool} {bad:?}: {}", stderr(&o));
        }
    }
}

/// A config's top_k over the 1000 a server returns: searches without k
/// were cut to 1000 in silence.
#[test]
fn a_top_k_over_the_servers_cap_is_said_as_it_starts() {
    let t = sample_project();
    t.project_config("top_k = 5000\n");
    let s = Server::start(&t, &[]);
    s.wait_stderr("top_k = 5000 is more than a server returns: a search without k returns at most 1000");
}

/// A search after a failed run said nothing of it: 200 and the old
/// index's hits, the failure only in /status (vg-mcp's searches said it).
#[test]
fn a_search_after_a_failed_run_says_the_run_failed() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    std::fs::write(t.path().join(".vecgrepignore"), b"target/\n\xff\xfe\n").unwrap();
    let s = Server::start(&t, &["--refresh", "3600"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.json("/status")["status"] != "aborted" {
        assert!(Instant::now() < deadline, "never aborted: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, head, body) = s.get("/search?q=upload+retry&mode=lexical");
    assert_eq!(code, 200);
    assert!(body.contains("src/upload.py"), "the index as it stands is searched: {body}");
    assert!(head.contains("Vecgrep-Note: the last index run failed (") && head.contains(".vecgrepignore"), "{head}");
}

/// An index run of another process over the served index: /status said
/// `ready` and searches answered from the part it had written, without a
/// word (an audit's `vg-index --reindex` beside a server: 48 of 400
/// files, "ready"). While it holds the index's lock the status is
/// `indexing` and each search says so; once it is done, `ready` again.
#[test]
fn another_processs_run_over_the_index_is_said_by_status_and_searches() {
    let t = sample_project();
    many_files(&t, 200);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let s = Server::start(&t, &["--refresh", "3600"]);
    s.wait_ready();
    let (_, head, _) = s.get("/search?q=handler&mode=lexical");
    assert!(!head.contains("Vecgrep-Note"), "{head}");
    // A run killed part-way, and another holding the lock: one under way.
    kill_after_file_records(t.cmd("vg-index", ".").arg("--reindex"), 5);
    let held = hold_index_lock(&t);
    let status = s.json("/status");
    assert_eq!(status["status"], "indexing", "{status}");
    let (code, head, _) = s.get("/search?q=handler&mode=lexical");
    assert_eq!(code, 200);
    assert!(head.contains("Vecgrep-Note: another process's index run is under way"), "{head}");
    assert_eq!(s.json("/health")["index_ready"], false, "a search does not see every served file");
    drop(held);
    // A run that completes the index makes it whole again.
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let status = s.json("/status");
    assert_eq!((status["status"].as_str(), status["error"].as_str()), (Some("ready"), None), "{status}");
    let (_, head, _) = s.get("/search?q=handler&mode=lexical");
    assert!(!head.contains("Vecgrep-Note"), "{head}");
    assert_eq!(s.json("/health")["index_ready"], true);
    // One killed part-way with no run holding the lock is completed at
    // once: it read as whole, `ready`, until the next refresh (audit 204).
    kill_after_file_records(t.cmd("vg-index", ".").arg("--reindex"), 5);
    let complete = || {
        let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
        records(&o)[0]["complete"] == true
    };
    assert!(!complete(), "the killed run left the index unfinished");
    // Each answer says so until the server's own run has completed it: only
    // the first did, and one during the run called it another's (review 206).
    let stopped = "Vecgrep-Note: another process's index run stopped part-way";
    for _ in 0..3 {
        let (_, head, _) = s.get("/search?q=handler&mode=lexical");
        assert!(head.contains(stopped) || complete(), "{head}");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.json("/status")["status"] != "ready" {
        assert!(Instant::now() < deadline, "never completed: {}", s.json("/status"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(complete(), "ready over an index a killed run left unfinished: {}", s.json("/status"));
    drop(s);
    // A server of part of the project leaves the mark itself: whoever holds
    // the lock (its own refresh, vg-log, --verify) is no run of another's.
    assert_code(&run(t.cmd("vg-index", ".").arg("--clear-cache")), 0);
    let s = Server::start(&t, &["--refresh", "3600", "src"]);
    s.wait_ready();
    let held = hold_index_lock(&t);
    assert_eq!(s.json("/status")["status"], "ready");
    assert_eq!(s.json("/health")["index_ready"], true);
    drop(held);
}

/// An index this user may not write (another's checkout, a read-only
/// mount) is served as it is and said so in words: the server said it
/// could not mark a stopped server's jobs for want of `serve.lock` ("No
/// such file or directory") and that SQLite could not write (audit 252).
#[test]
fn an_index_this_user_may_not_write_is_served_as_it_is() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    assert_code(&run(&mut user.cmd(&t, "vg-index")), 0);
    let data = t.path().join(".vecgrep");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = user.cmd(&t, "vg-serve");
    cmd.args(["--refresh", "1"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let s = Server::spawn(cmd);
    let (status, _, body) = s.get("/search?q=retry&mode=lexical");
    std::thread::sleep(Duration::from_millis(2500));
    let err = s.said();
    drop(s);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"type\":\"hit\""), "{body}");
    let says = format!("{} is not writable by this user: searching the index as it is", data.display());
    assert_eq!(err.matches(&says).count(), 1, "said once, not at every refresh: {err}");
    assert!(!err.contains("cannot mark the index jobs") && !err.contains("readonly database"), "{err}");
}

/// An index removed under a server (`vg-index --clear-cache`) is made again
/// at once, and searches meanwhile answer 503 with Retry-After, saying so:
/// they answered 500 "run vg-index first" until the next refresh (audit 252).
#[test]
fn an_index_removed_under_the_server_is_made_again_at_once() {
    let t = sample_project();
    let s = Server::start(&t, &["--refresh", "3600"]);
    s.wait_ready();
    assert_code(&run(t.cmd("vg-index", ".").arg("--clear-cache")), 0);
    let (status, head, body) = s.get("/search?q=retry&mode=lexical");
    assert_eq!(status, 503, "{head}{body}");
    assert!(head.contains("Retry-After: 1"), "{head}");
    assert!(body.contains("the index was removed since the last run: this server is making it again"), "{body}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _, body) = s.get("/search?q=retry&mode=lexical");
        if status == 200 && body.contains("\"type\":\"hit\"") {
            break;
        }
        assert!(Instant::now() < deadline, "not made again within a refresh of an hour: {status} {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A server whose runs cannot make the index (a directory it may not
/// write) answers searches with that failure, never the 503 of an index
/// being made again, which a client would retry for ever (review 255).
#[test]
fn a_server_that_cannot_make_its_index_says_so_and_asks_no_retry() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let user = OtherUser::new(&t);
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = user.cmd(&t, "vg-serve");
    cmd.args(["--refresh", "1"]).stdout(Stdio::piped()).stderr(Stdio::null());
    let s = Server::spawn(cmd);
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        let (status, head, body) = s.get("/search?q=retry&mode=lexical");
        if status != 200 || Instant::now() > deadline {
            break (status, head, body);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(s);
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (status, head, body) = answer;
    assert_eq!(status, 500, "{head}{body}");
    assert!(!head.contains("Retry-After"), "{head}");
    assert!(body.contains("there is no index: the server's last run failed: cannot create"), "{body}");
    assert!(body.contains("Permission denied"), "{body}");
}
