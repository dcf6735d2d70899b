//! embedder_source = "remote": indexing and searching through a real
//! embedding server (vg-serve's POST /v1/embeddings with the local model),
//! behind a small fault-injecting proxy written here that checks the API key,
//! fails requests on demand, and damages answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common::*;

/// vg-serve on a tree of its own, answering POST /v1/embeddings.
struct EmbeddingServer {
    child: Child,
    addr: String,
    _tree: Tree,
}

impl EmbeddingServer {
    fn start() -> EmbeddingServer {
        let tree = Tree::git();
        tree.write("README.md", "An embedding server.\n");
        let mut child = tree
            .cmd("vg-serve", ".")
            .args(["--full-index", "--refresh", "3600", "-q"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let record: Value = serde_json::from_str(&first).unwrap();
        let addr = record["listening"].as_str().unwrap().trim_start_matches("http://").to_string();
        EmbeddingServer { child, addr, _tree: tree }
    }
}

impl Drop for EmbeddingServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the proxy does to requests.
#[derive(Default)]
struct Faults {
    /// The key every request must carry.
    key: Option<String>,
    /// Answer 503 to this many requests first.
    fail_first: usize,
    /// Answer 500 to any request whose body contains this.
    poison: Option<String>,
    /// Cut every vector to this many numbers.
    truncate: Option<usize>,
    /// Read requests and never answer them, as a server that hangs.
    hang: bool,
    /// Hang from the request after this many (the check answered, a batch not).
    hang_after: Option<usize>,
    /// Requests seen, and of those with the right key.
    seen: usize,
    authorized: usize,
}

struct Proxy {
    url: String,
    faults: Arc<Mutex<Faults>>,
}

impl Proxy {
    fn start(upstream: &str, faults: Faults) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/embeddings", listener.local_addr().unwrap());
        let faults = Arc::new(Mutex::new(faults));
        let (shared, upstream) = (Arc::clone(&faults), upstream.to_string());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (shared, upstream) = (Arc::clone(&shared), upstream.clone());
                std::thread::spawn(move || proxy_one(stream, &upstream, &shared));
            }
        });
        Proxy { url, faults }
    }
}

/// Read one request, apply the faults, answer, close.
fn proxy_one(mut stream: TcpStream, upstream: &str, faults: &Mutex<Faults>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = Vec::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        head.push(line);
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let text = String::from_utf8_lossy(&body).into_owned();
    let verdict = {
        let mut f = faults.lock().unwrap();
        f.seen += 1;
        let auth = head.iter().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("authorization")
                .then(|| value.trim().strip_prefix("Bearer ").unwrap_or("").to_string())
        });
        if f.hang || f.hang_after.is_some_and(|n| f.seen > n) {
            drop(f);
            std::thread::sleep(std::time::Duration::from_secs(60));
            return;
        }
        if f.key.is_some() && auth.as_deref() != f.key.as_deref() {
            Some(answer(401, r#"{"error":"bad key"}"#))
        } else {
            f.authorized += 1;
            if f.fail_first > 0 {
                f.fail_first -= 1;
                Some(answer(503, r#"{"error":"busy"}"#))
            } else if f.poison.as_deref().is_some_and(|p| text.contains(p)) {
                Some(answer(500, r#"{"error":"cannot embed that"}"#))
            } else {
                None
            }
        }
    };
    let response = verdict.unwrap_or_else(|| forward(upstream, &body, faults));
    let _ = stream.write_all(response.as_bytes());
}

fn answer(status: u16, body: &str) -> String {
    format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

/// Pass the request to the real server, applying `truncate` to its answer.
fn forward(upstream: &str, body: &[u8], faults: &Mutex<Faults>) -> String {
    {
        let mut up = TcpStream::connect(upstream).unwrap();
        write!(up, "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).unwrap();
        up.write_all(body).unwrap();
        let mut raw = Vec::new();
        up.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8(raw).unwrap();
        let (head, json) = raw.split_once("\r\n\r\n").unwrap();
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        if status != 200 {
            return answer(status, json);
        }
        let mut value: Value = serde_json::from_str(json).unwrap();
        if let Some(n) = faults.lock().unwrap().truncate {
            for item in value["data"].as_array_mut().unwrap() {
                item["embedding"].as_array_mut().unwrap().truncate(n);
            }
        }
        answer(200, &value.to_string())
    }
}

/// A sample project whose global config sends embeddings to `url`.
fn remote_project(url: &str) -> Tree {
    let t = sample_project();
    t.global_config(&format!("embedder_source = \"remote\"\nembedder_url = \"{url}\"\nembedder_batch_size = 2\n"));
    t
}

fn hits(o: &std::process::Output) -> Vec<(String, u64, f64)> {
    records(o)
        .iter()
        .map(|r| {
            (r["file"].as_str().unwrap().to_string(), r["start_line"].as_u64().unwrap(), r["score"].as_f64().unwrap())
        })
        .collect()
}

#[test]
fn an_index_built_through_a_server_matches_a_local_one_and_sends_the_key() {
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults { key: Some("s3cret".into()), ..Default::default() });
    let remote = remote_project(&proxy.url);
    let o = run(remote.cmd("vg-index", ".").env("VECGREP_EMBEDDER_API_KEY", "s3cret"));
    assert_code(&o, 0);
    assert_eq!((summary(&o)["files"].as_u64(), summary(&o)["holes"].as_u64()), (Some(4), Some(0)));
    // The remote index has the model's vectors only (no static tier for a
    // remote model): the local one is embedded fully to match.
    let local = sample_project();
    assert_code(&run(local.cmd("vg-index", ".").arg("--full")), 0);
    for q in ["retry a failed upload", "read the settings file", "bake bread"] {
        let args = ["--no-index", "--threshold", "-1", q];
        let r = run(remote.cmd("vg-query", ".").env("VECGREP_EMBEDDER_API_KEY", "s3cret").args(args));
        let l = run(local.cmd("vg-query", ".").args(args));
        let (r, l) = (hits(&r), hits(&l));
        assert_eq!(r.len(), l.len(), "{q}");
        for (a, b) in r.iter().zip(&l) {
            assert_eq!((&a.0, a.1), (&b.0, b.1), "{q}: {r:?} vs {l:?}");
            assert!((a.2 - b.2).abs() < 1e-3, "{q}: {r:?} vs {l:?}");
        }
    }
    assert!(proxy.faults.lock().unwrap().authorized > 0);
    // An embedder on this machine is asked directly, whatever proxy the
    // environment names (a closed port here): the same hits, nothing said.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let args = ["--no-index", "--threshold", "-1", "retry a failed upload"];
    let direct = run(remote.cmd("vg-query", ".").env("VECGREP_EMBEDDER_API_KEY", "s3cret").args(args));
    let mut cmd = remote.cmd("vg-query", ".");
    cmd.env("VECGREP_EMBEDDER_API_KEY", "s3cret").env_remove("NO_PROXY").env_remove("no_proxy").args(args);
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        cmd.env(var, format!("http://127.0.0.1:{closed}"));
    }
    let proxied = run(&mut cmd);
    assert_code(&proxied, 0);
    assert_eq!(hits(&proxied), hits(&direct), "{}", stderr(&proxied));
    assert!(stderr(&proxied).is_empty(), "{}", stderr(&proxied));
    // A wrong key is a clear error, and the index is kept.
    let o = run(remote.cmd("vg-index", ".").env("VECGREP_EMBEDDER_API_KEY", "wrong").arg("--reindex"));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("401") && err.contains("VECGREP_EMBEDDER_API_KEY") && err.contains(&proxy.url), "{err}");
    // One no header carries is named before any request (it read as a server that does not work).
    let o = run(remote.cmd("vg-index", ".").env("VECGREP_EMBEDDER_API_KEY", "s3c\r\nX: 1").arg("--reindex"));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("VECGREP_EMBEDDER_API_KEY holds a control or non-ASCII character") && !err.contains("s3c"),
        "{err}"
    );
    assert_eq!(records(&run(remote.cmd("vg-index", ".").args(["--stats", "--json"])))[0]["files"], 4);
}

#[test]
fn failing_chunks_become_holes_that_the_next_run_fills() {
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults { poison: Some("zeppelin".into()), ..Default::default() });
    let t = remote_project(&proxy.url);
    t.write("src/airship.py", "def launch_zeppelin(crew):\n    return crew.board()\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["holes"], 1, "{}", stdout(&o));
    assert!(stderr(&o).contains("1 chunk could not be embedded"), "{}", stderr(&o));
    let stats = &records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))[0];
    assert_eq!((stats["files"].as_u64(), stats["holes"].as_u64()), (Some(5), Some(1)));
    // A hole has no vector, so it is never a result where scores are
    // cosines; its words are indexed, so a search by words finds it.
    for (mode, found) in [("hybrid", false), ("semantic", false), ("lexical", true)] {
        let o = run(t.cmd("vg-query", ".").args([
            "--no-index",
            "--mode",
            mode,
            "--threshold",
            "-1",
            "launch the zeppelin",
        ]));
        assert_eq!(stdout(&o).contains("src/airship.py"), found, "{mode}: {}", stdout(&o));
    }
    // The server recovers; the next run embeds the hole, though the file did not change.
    proxy.faults.lock().unwrap().poison = None;
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!((summary(&o)["holes"].as_u64(), summary(&o)["embedded"].as_u64()), (Some(0), Some(1)));
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--threshold", "-1", "launch the zeppelin"]));
    assert_eq!(records(&o)[0]["file"], "src/airship.py");
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
}

#[test]
fn busy_servers_are_retried_and_broken_answers_refused() {
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults { fail_first: 3, ..Default::default() });
    let t = remote_project(&proxy.url);
    // Three 503s in a row: the client backs off and tries again.
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["holes"], 0);
    assert!(proxy.faults.lock().unwrap().seen >= 4);
    // Vectors of another size than the index holds: refused with what to do.
    proxy.faults.lock().unwrap().truncate = Some(100);
    t.write("src/new.py", "def fresh():\n    return 1\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("100-dimensional") && stderr(&o).contains("--reindex"), "{}", stderr(&o));
    // And a query's vector of another size: the search is refused saying
    // why (the index was called damaged, and told to be thrown away).
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "semantic", "launch the zeppelin"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("100-dimensional") && !stderr(&o).contains("damaged"), "{}", stderr(&o));
    // A server's hybrid search came back empty, words and all, and 200.
    let s = crate::serve::Server::start(&t, &["--refresh", "3600"]);
    let (code, _, body) = s.get("/search?q=launch+the+zeppelin&threshold=-1");
    assert!(code == 500 && body.contains("100-dimensional"), "{code} {body}");
    drop(s);
    // The rebuild the message asks for takes no vector of the old size
    // from another index of the project (a revision's), which left the
    // index damaged: sizes mixed.
    git(&t, &["init", "-q"]);
    commit_all(&t, "everything");
    proxy.faults.lock().unwrap().truncate = None;
    assert_code(&run(t.cmd("vg-index", ".").args(["-q", "--rev", "HEAD"])), 0);
    proxy.faults.lock().unwrap().truncate = Some(100);
    let o = run(t.cmd("vg-index", ".").args(["-q", "--reindex"]));
    assert_code(&o, 0);
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    let o = run(t.cmd("vg-query", ".").args([
        "--no-index",
        "--mode",
        "semantic",
        "--threshold",
        "-1",
        "launch the zeppelin",
    ]));
    assert_code(&o, 0);
    // The revision's index kept its size: its rebuild is not --reindex's.
    let o =
        run(t.cmd("vg-query", ".").args(["--rev", "HEAD", "--no-index", "--mode", "semantic", "launch the zeppelin"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("384-dimensional") && stderr(&o).contains("--forget"), "{}", stderr(&o));
    proxy.faults.lock().unwrap().truncate = None;
    assert_code(&run(t.cmd("vg-index", ".").args(["-q", "--reindex"])), 0);
    // The commit log too: its ranking took the dot product over the shorter.
    assert_code(&run(t.cmd("vg-log", ".").args(["-q", "--threshold", "-1", "everything"])), 0);
    proxy.faults.lock().unwrap().truncate = Some(100);
    let o = run(t.cmd("vg-log", ".").args(["--no-index", "--threshold", "-1", "everything"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("100-dimensional") && stderr(&o).contains("commit log"), "{}", stderr(&o));
    proxy.faults.lock().unwrap().truncate = None;
    // A model the server does not have: a clear error that keeps the index.
    let o = run(t.cmd("vg-index", ".").args(["--embedder-model", "nomic-embed-text"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("400") && stderr(&o).contains("nomic-embed-text"), "{}", stderr(&o));
    assert_eq!(records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))[0]["files"], 5);
    // A mistyped path: vg-serve checks the method first and answers 405,
    // which said nothing of the URL.
    let mistyped = format!("http://{}/v1/embedding", server.addr);
    let o = run(t.cmd("vg-index", ".").args(["--reindex", "--embedder-url", &mistyped]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("405") && stderr(&o).contains("check embedder_url"), "{}", stderr(&o));
    // SearchCompletesOrFails: with the server gone, a query is an error.
    drop(server);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(&proxy.url) || stderr(&o).contains("embedding"), "{}", stderr(&o));
}

/// A model whose vectors are of another size than MiniLM's (8 numbers,
/// the proxy cutting them) is measured by its own size: a shared index of
/// them is sound to --verify, and a server embedding through it answers
/// for that size when asked for `dimensions`.
#[test]
fn a_remote_model_of_another_size_is_measured_by_its_own() {
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults { truncate: Some(8), ..Default::default() });
    let t = remote_project(&proxy.url);
    let pg = crate::pg::PgServer::start();
    let shared = |t: &Tree| {
        let mut c = t.cmd("vg-index", ".");
        c.args(["--store", &pg.url, "--store-project", "eight"]);
        c
    };
    assert_code(&run(&mut shared(&t)), 0);
    let o = run(shared(&t).args(["--verify", "--json"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["ok"], true, "{}", stdout(&o));
    let s = crate::serve::Server::start(&t, &["--refresh", "3600"]);
    let post = |body: &str| {
        let head = format!(
            "POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.raw(head.as_bytes())
    };
    let (status, _, body) = post(r#"{"input":"x","dimensions":384}"#);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("have 8 dimensions, not 384"), "{body}");
    let (status, _, body) = post(r#"{"input":"x","dimensions":8}"#);
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["data"][0]["embedding"].as_array().unwrap().len(), 8);
}

#[test]
fn a_project_cannot_send_the_code_elsewhere_unless_trusted() {
    let t = sample_project();
    // Nor can it trust itself: that is said too.
    t.project_config(
        "embedder_source = \"remote\"\nembedder_url = \"http://127.0.0.1:9/v1/embeddings\"\ntrust_project_config = true\n",
    );
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    let said = "ignoring embedder_url, embedder_source, trust_project_config of";
    let why = "may not trust itself, nor choose where its code is sent;";
    assert!(stderr(&o).contains(said) && stderr(&o).contains(why), "{}", stderr(&o));
    assert!(stderr(&o).contains("pass --trust-project-config or set trust_project_config = true"), "{}", stderr(&o));
    // Refused on the command line where the user's config trusts it: said
    // so, not advised to trust it (the advice named the file that does).
    t.global_config("trust_project_config = true\n");
    let o = run(t.cmd("vg-query", ".").args(["--no-trust-project-config", "--mode", "lexical", "retry"]));
    assert!(stderr(&o).contains("code is sent; --no-trust-project-config was given"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("pass --trust-project-config"), "{}", stderr(&o));
    t.global_config("");
    // Trusted, a rebuild goes to the project's server (which is not there).
    let o = run(t.cmd("vg-index", ".").args(["--trust-project-config", "--reindex"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("http://127.0.0.1:9/v1/embeddings"), "{}", stderr(&o));
    // Credentials in the URL, in its user part or its query, are never shown.
    let url = "http://me:s3cret@127.0.0.1:9/v1/embeddings?key=k3y";
    let o = run(t.cmd("vg-index", ".").args(["--reindex", "--embedder-source", "remote", "--embedder-url", url]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("http://…@127.0.0.1:9/v1/embeddings?…"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("s3cret") && !stderr(&o).contains("k3y"), "{}", stderr(&o));
}

#[test]
fn a_search_while_the_server_hangs_is_answered_by_words_and_says_so() {
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults::default());
    let t = sample_project();
    t.global_config(&format!("embedder_source = \"remote\"\nembedder_url = \"{}\"\nembedder_timeout = 1\n", proxy.url));
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    git(&t, &["init", "-q", "-b", "main"]);
    commit_all(&t, "the sample");
    assert_code(&run(t.cmd("vg-index", ".").args(["--rev", "HEAD"])), 0);
    let serving = crate::serve::Server::start(&t, &["--refresh", "3600", "-q"]);
    serving.wait_ready();
    let hang = |on: bool| {
        let mut f = proxy.faults.lock().unwrap();
        f.hang = on;
        f.seen = 0;
    };
    hang(true);
    // A question is tried once: nobody waits on retries of a server that
    // does not answer, and the one-shot tool says why it failed.
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "area of a circle"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains(&proxy.url) && !stderr(&o).contains("attempts"), "{}", stderr(&o));
    assert_eq!(proxy.faults.lock().unwrap().seen, 1);
    // A server answers a hybrid search by words, and says so.
    let (status, head, body) = serving.request("GET", "/search?q=circle+area&threshold=0.9", &[]);
    assert_eq!(status, 200, "{body}");
    let note = head.lines().find(|l| l.starts_with("Vecgrep-Note: ")).unwrap_or_else(|| panic!("{head}"));
    assert!(note.contains("ranked by their words alone"), "{note}");
    let first: Value = serde_json::from_str(body.lines().next().expect("a hit")).unwrap();
    assert_eq!(first["file"], "src/geometry.rs", "{body}");
    // The next searches do not ask the server again a while, each waiting
    // out its timeout in turn behind the query model: they learn why at once.
    let asked = proxy.faults.lock().unwrap().seen;
    let (status, head, _) = serving.request("GET", "/search?q=read+the+settings&threshold=0.9", &[]);
    assert_eq!(status, 200);
    assert!(head.contains("tried 0s ago") || head.contains("tried 1s ago"), "{head}");
    assert_eq!(proxy.faults.lock().unwrap().seen, asked, "the server was asked again");
    // So is a revision's: it was a 500.
    let (status, head, body) = serving.request("GET", "/search?q=circle+area&rev=HEAD", &[]);
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("ranked by their words alone"), "{head}");
    assert!(body.contains("src/geometry.rs"), "{body}");
    // A semantic search cannot be answered without the model: a failure
    // that names the cause.
    let (status, _, body) = serving.request("GET", "/search?q=circle+area&mode=semantic", &[]);
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("unavailable") && body.contains("no answer within 1s"), "{body}");
    // So does vg-mcp, whose query model never loads: hybrid searches
    // come by words with the note, and fast, the cause being known.
    let steps = serde_json::json!([
        {"op": "call", "tool": "search", "args": {"query": "circle area"}},
        {"op": "call", "tool": "search", "args": {"query": "read the settings file"}},
    ]);
    let answers = crate::mcp::session(&t, "auto", &["vg-mcp", "."], steps);
    for answer in &answers[1..] {
        let content = crate::mcp::structured(answer);
        assert!(content["note"].as_str().unwrap().contains("ranked by their words alone"), "{content}");
        assert!(!content["results"].as_array().unwrap().is_empty(), "{content}");
    }
    hang(false);
}

/// Ctrl-C while the embedding server does not answer stops the run at
/// once, as an interrupt (130): its attempts and their pauses went on for
/// every retry (4 with backoff), and the run then failed (2); later the
/// request in hand was still waited for, up to `embedder_timeout` (60 s
/// here).
#[test]
fn ctrl_c_stops_the_retries_of_a_server_that_does_not_answer() {
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults { hang: true, ..Faults::default() });
    let t = sample_project();
    t.global_config(&format!(
        "embedder_source = \"remote\"\nembedder_url = \"{}\"\nembedder_timeout = 60\n",
        proxy.url
    ));
    let child = t
        .cmd("vg-index", ".")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let asked = std::time::Instant::now();
    while proxy.faults.lock().unwrap().seen == 0 {
        assert!(asked.elapsed() < std::time::Duration::from_secs(60), "the server was never asked");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let stopped = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stopped.elapsed() < std::time::Duration::from_secs(5), "stopped after {:?}", stopped.elapsed());
    assert!(proxy.faults.lock().unwrap().seen <= 2, "retried after Ctrl-C");
    // A stall in the middle of a run (the check answered, a batch not):
    // no text of the batch is then tried alone, each waiting its timeout.
    let proxy = Proxy::start(&server.addr, Faults { hang_after: Some(3), ..Faults::default() });
    // Files of many chunks, whose batches the run waits for.
    for f in 0..6 {
        let many: String =
            (0..30).map(|i| format!("def step_{f}_{i}(value, other):\n    return value * {i} + other\n\n")).collect();
        t.write(&format!("src/many{f}.py"), &many);
    }
    t.global_config(&format!(
        "embedder_source = \"remote\"\nembedder_url = \"{}\"\nembedder_timeout = 60\nembedder_batch_size = 8\n",
        proxy.url
    ));
    let child = t
        .cmd("vg-index", ".")
        .arg("--full")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let asked = std::time::Instant::now();
    while proxy.faults.lock().unwrap().seen < 4 {
        assert!(asked.elapsed() < std::time::Duration::from_secs(60), "no batch was sent");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let stopped = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stopped.elapsed() < std::time::Duration::from_secs(5), "stopped after {:?}", stopped.elapsed());
    let seen = proxy.faults.lock().unwrap().seen;
    assert!(seen <= 5, "texts tried alone after Ctrl-C: {seen} requests\n{}", stderr(&o));
}

/// Ctrl-C while vg-log waits on an embedding server that stopped
/// answering: the request in hand is given up and the run is an interrupt
/// that says what it kept, not an error (review 247: "cannot embed commit
/// …: embedding stopped", status 2).
#[test]
fn ctrl_c_while_the_log_waits_on_a_server_is_an_interrupt() {
    let server = EmbeddingServer::start();
    // The model's check is answered; the first batch of the log is not.
    let proxy = Proxy::start(&server.addr, Faults { hang_after: Some(1), ..Faults::default() });
    let t = git_repo();
    t.write("src/upload.py", "def upload_with_retry(client, blob):\n    return client.put(blob)\n");
    commit_all(&t, "Retry uploads that failed");
    t.global_config(&format!(
        "embedder_source = \"remote\"\nembedder_url = \"{}\"\nembedder_timeout = 60\n",
        proxy.url
    ));
    let child = t
        .cmd("vg-log", ".")
        .args(["--with-diff", "retry"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let asked = std::time::Instant::now();
    while proxy.faults.lock().unwrap().seen < 2 {
        assert!(asked.elapsed() < std::time::Duration::from_secs(60), "no batch was sent");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    // Given up in the model's check or in the first batch: nothing stored either way.
    let said = stderr(&o);
    assert!(
        said == "vg-log: interrupted before any commit was stored; the next run stores them\n"
            || said == "vg-log: interrupted after 0 of 1 commits: what they added is kept, and the next run stores the rest\n",
        "{said}"
    );
}

/// A server told to stop (SIGTERM, as a service manager sends it) while
/// the embedding server does not answer stops at once: it waited out
/// every retry of the request in hand, each up to `embedder_timeout`.
#[test]
fn a_server_stops_at_once_while_the_embedding_server_does_not_answer() {
    use std::io::BufRead;
    let server = EmbeddingServer::start();
    let proxy = Proxy::start(&server.addr, Faults { hang_after: Some(1), ..Faults::default() });
    let t = sample_project();
    t.global_config(&format!(
        "embedder_source = \"remote\"\nembedder_url = \"{}\"\nembedder_timeout = 60\n",
        proxy.url
    ));
    for tool in ["vg-serve", "vg-mcp"] {
        let before = proxy.faults.lock().unwrap().seen;
        let mut child = t
            .cmd(tool, ".")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        if tool == "vg-serve" {
            let mut first = String::new();
            std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        }
        let asked = std::time::Instant::now();
        while proxy.faults.lock().unwrap().seen < before.max(1) + 1 {
            assert!(asked.elapsed() < std::time::Duration::from_secs(60), "{tool}: the server was never asked");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success());
        let stopped = std::time::Instant::now();
        child.wait().unwrap();
        assert!(stopped.elapsed() < std::time::Duration::from_secs(10), "{tool} stopped after {:?}", stopped.elapsed());
    }
}

#[test]
fn a_url_no_request_can_go_to_is_refused_where_it_is_written() {
    let t = sample_project();
    t.global_config("embedder_source = \"remote\"\nembedder_url = \"http://127.0.0.1:99999/v1/embeddings\"\n");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("line 2: embedder_url") && err.contains("port is not a number"), "{err}");
    t.global_config("");
    // On the command line too, without the credentials it carries.
    for (flags, url, why) in [
        (&["--embedder-url"][..], "localhost:8080/v1/embeddings", "does not start with http://"),
        (&["--answer", "--llm-url"][..], "http://me:s3cret@:8080/v1", "names no host"),
    ] {
        let o = run(t.cmd("vecgrep", ".").args(flags).args([url, "circle area"]));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(why) && !err.contains("s3cret") && err.lines().count() == 1, "{err}");
    }
}

/// Switching the embedder between a server and this machine, the model the
/// same, keeps the model's vectors one way (the chunks get the static
/// table's beside them) and says the source changed both ways: it said
/// "vecgrep's code model was updated" and dropped every model vector.
#[test]
fn a_switch_of_embedder_source_says_so_and_keeps_the_models_vectors_coming_home() {
    let server = EmbeddingServer::start();
    let t = remote_project(&format!("http://{}/v1/embeddings", server.addr));
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let o = run(t.cmd("vg-index", ".").args(["--embedder-source", "local"]));
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(err.contains("keeping the model's: it records no static table (embedder_source remote -> local)"), "{err}");
    assert!(!err.contains("updated"), "{err}");
    let stats = &records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))[0];
    assert_eq!((stats["files"].as_u64(), stats["pending"].as_u64()), (Some(4), Some(0)), "{stats}");
    let o = run(t.cmd("vg-query", ".").args(["--embedder-source", "local", "--no-index", "retry a failed upload"]));
    assert_eq!(records(&o)[0]["file"], "src/upload.py", "{}", stderr(&o));
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("rebuilding the index: embedder_source local -> remote"), "{}", stderr(&o));
}

/// A flag that only qualifies another setting, given without it, was taken
/// and passed over in silence: `--embedder-url` with the local model.
#[test]
fn qualifying_flags_given_without_what_they_qualify_are_said() {
    let t = sample_project();
    let o = run(t.cmd("vecgrep", ".").args(["--embedder-url", "http://127.0.0.1:9/v1/embeddings", "retry upload"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("--embedder-url is not used: embedder_source is local"), "{}", stderr(&o));
    let o = run(t.cmd("vg-query", ".").args(["--store-project", "x", "retry upload"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("--store-project and --store-adopt are not used"), "{}", stderr(&o));
    let o = run(t.cmd("vecgrep", ".").args(["-q", "--store-adopt", "retry upload"]));
    assert_eq!(stderr(&o), "");
    // A project's `quiet` silences notes of the user's own flags too.
    t.project_config("quiet = true\n");
    let o = run(t.cmd("vecgrep", ".").args(["--embedder-url", "http://127.0.0.1:9/v1/embeddings", "retry upload"]));
    assert_eq!(stderr(&o), "");
}
