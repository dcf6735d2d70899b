//! vg-mcp and clients that read their answers slowly or not at all: the
//! server's memory stays bounded, it still reads cancellations and the end
//! of input, a slow reader gets every answer, and one that stopped reading
//! cannot keep the server alive (audit 172, review 175).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::*;

/// A tree whose every search below matches 300 files: an answer with
/// k = 1000 is about 600 KB, far past what a pipe holds.
fn wide_project() -> Tree {
    let t = handlers_project(300);
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    t
}

/// The handshake and `n` calls of `tool` with `arguments`, ids 1..=n, one
/// per line; with `pad` above 0, each carries that many bytes in its `_meta`.
fn calls(n: u64, tool: &str, arguments: &Value, pad: usize) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let mut input = format!("{init}\n{}\n", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut params = json!({"name": tool, "arguments": arguments});
    if pad > 0 {
        params["_meta"] = json!({"pad": "x".repeat(pad)});
    }
    for id in 1..=n {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        input.push_str(&format!("{call}\n"));
    }
    input
}

/// The arguments of the lexical search every test here sends, with `k`.
fn search_args(k: u64) -> Value {
    json!({"query": "request part of a handler step", "mode": "lexical", "k": k})
}

/// The handshake and `n` lexical searches with `k`, ids 1..=n, one per line.
fn searches(n: u64, k: u64) -> String {
    calls(n, "search", &search_args(k), 0)
}

/// Send SIGTERM to the server.
fn terminate(child: &Child) {
    let sent = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
}

fn spawn_server(t: &Tree) -> Child {
    t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap()
}

/// The server's resident memory, in MB.
fn rss_mb(child: &Child) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let kb = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).map(|v| v.trim().trim_end_matches(" kB").trim());
    kb.and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0) / 1024
}

/// Wait up to `limit` for the child to end; how long it took, or None.
fn exit_within(child: &mut Child, limit: Duration, mut each: impl FnMut(&Child)) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(start.elapsed());
        }
        each(child);
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Before, a client that sent searches and read nothing grew the server by
/// every answer (1.8 GB in 90 s), and with stdout full it exited neither at
/// the end of input nor on SIGTERM, until the client read.
#[test]
fn a_client_that_reads_nothing_holds_a_bounded_share_and_cannot_keep_the_server() {
    let t = wide_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    // The server still reads every request, though it answers few of them.
    stdin.write_all(searches(400, 1000).as_bytes()).unwrap();
    let written = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    let before = rss_mb(&child);
    // 400 answers unread would hold 240 MB and more.
    let mut most = before;
    while written.elapsed() < Duration::from_secs(12) {
        most = most.max(rss_mb(&child));
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(stdin);
    let took = exit_within(&mut child, Duration::from_secs(60), |c| most = most.max(rss_mb(c)));
    let took = took.expect("a server whose client reads nothing was still running 60 s after its input ended");
    assert!(took < Duration::from_secs(30), "exited {took:?} after the end of input");
    assert!(most < before + 200, "grew from {before} MB to {most} MB");

    // A signal ends it too, the client still reading nothing.
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(searches(200, 1000).as_bytes()).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    terminate(&child);
    let took = exit_within(&mut child, Duration::from_secs(60), |_| {});
    let took = took.expect("SIGTERM did not end a server whose client reads nothing within 60 s");
    assert!(took < Duration::from_secs(15), "exited {took:?} after SIGTERM");
    drop(stdin);
}

/// A client that writes a burst of calls before it reads, then cancels one
/// still held, gets every other answer and none for the cancelled one.
#[test]
fn a_burst_before_reading_is_answered_whole_and_a_held_request_can_be_cancelled() {
    let t = wide_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 190}});
    let ping = json!({"jsonrpc": "2.0", "id": "last", "method": "ping"});
    // 200 answers of 120 KB: all but the first few wait on this client.
    stdin.write_all(format!("{}{cancel}\n{ping}\n", searches(200, 200)).as_bytes()).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    drop(stdin);
    let mut ids = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).expect("each answer a whole line");
        assert!(message.get("error").is_none(), "{message}");
        ids.push(message["id"].clone());
    }
    assert_code(&child.wait_with_output().unwrap(), 0);
    assert_eq!(ids.len(), 201, "every request but the cancelled one is answered");
    assert!(!ids.contains(&json!(190)), "the cancelled request was answered");
    assert!(ids.contains(&json!("last")) && ids.contains(&json!(200)));
}

/// Review 175: a client that reads one answer at a time, slowly, after the
/// end of input gets them all, though it takes longer than the server
/// waits for one that reads nothing.
#[test]
fn a_slow_reader_gets_every_answer_however_long_it_takes() {
    let t = wide_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(searches(50, 1000).as_bytes()).unwrap();
    drop(stdin);
    let start = Instant::now();
    let mut ids = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).expect("each answer a whole line");
        ids.push(message["id"].clone());
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_code(&child.wait_with_output().unwrap(), 0);
    assert!(start.elapsed() > Duration::from_secs(24), "read faster than meant: {:?}", start.elapsed());
    assert_eq!(ids.len(), 51, "{ids:?}");
}

/// Review 176: errors vg-mcp answers itself (a request whose params do not
/// fit, before the SDK sees it) are owed as answers are: a client that
/// closed its input and read 6 s later lost most of 2,000 of them.
#[test]
fn errors_are_owed_like_answers_to_a_client_that_reads_late() {
    let t = sample_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    let mut input = searches(0, 1);
    for id in 1..=2000 {
        input.push_str(&format!("{}\n", json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": []})));
    }
    // A null id makes a request, malformed, not a cancellation (review 178).
    let null_id =
        json!({"jsonrpc": "2.0", "id": null, "method": "notifications/cancelled", "params": {"requestId": 1}});
    input.push_str(&format!("{null_id}\n"));
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    std::thread::sleep(Duration::from_secs(6));
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    let answers: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2002);
    assert!(answers[1..2001].iter().all(|a| a["error"]["code"] == -32602), "{:?}", &answers[..3]);
    assert_eq!(answers[2001]["error"]["code"], -32600, "{}", answers[2001]);
}

/// Review 176: on SIGTERM, a client reading slowly gets the line it is
/// reading whole; a 600 KB answer was written at once, its reader taken
/// for one that had stopped 3 s on, and the line cut.
#[test]
fn a_signal_finishes_the_line_a_slow_reader_is_reading() {
    use std::io::Read;
    let t = wide_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(searches(5, 1000).as_bytes()).unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut taken = Vec::new();
    let mut piece = [0u8; 4096];
    let mut signalled = None;
    loop {
        let n = stdout.read(&mut piece).unwrap();
        if n == 0 {
            break;
        }
        taken.extend_from_slice(&piece[..n]);
        // Once a search's answer has begun: the initialize answer is its own line.
        if signalled.is_none() && taken.iter().filter(|&&b| b == b'\n').count() >= 1 && taken.len() > 64 * 1024 {
            terminate(&child);
            signalled = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = signalled.expect("no answer came").elapsed();
    drop(stdin);
    assert_code(&child.wait_with_output().unwrap(), 0);
    assert!(taken.ends_with(b"\n"), "the last line was cut: {} bytes", taken.len());
    let whole: Vec<Value> =
        taken.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    assert!(whole.len() >= 2 && whole.len() < 7, "{} answers", whole.len());
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// Review 178: a client that reads nothing and sends more than the
/// server holds (16 MiB of requests) is left waiting, as a pipe's writer;
/// the end of its input then sat unread behind what it sent, and the
/// server ran for ever. It now ends once the client has taken nothing for
/// as long as the end of input waits.
#[test]
fn a_client_that_sends_more_than_is_held_and_reads_nothing_cannot_keep_the_server() {
    let t = wide_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    // Each request near 1 MiB, each answer far past what a pipe holds.
    let input = calls(60, "search", &search_args(1000), 900_000);
    // Blocks once the server stops reading; fails once it has gone.
    let writing = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let took = exit_within(&mut child, Duration::from_secs(90), |_| {});
    let took = took.expect("a server whose client neither reads nor lets its input be read still ran after 90 s");
    assert!(took > Duration::from_secs(20), "it gave up on a client that may yet read: {took:?}");
    writing.join().unwrap();
}

/// Review 179: with as many requests held as may be and nothing yet to
/// write (index calls waiting on another process's run), a client that
/// reads everything was taken for one that stopped, and its session ended
/// after 22 s.
#[test]
fn a_client_that_reads_everything_is_served_while_nothing_is_written_for_long() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let lock = hold_index_lock(&t);
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let reading = std::thread::spawn(move || BufReader::new(stdout).lines().map_while(Result::ok).count());
    // 40 calls of 900 KB each: 16 MiB owed and 16 MiB held, none answered while the lock is held.
    let input = calls(40, "index", &json!({"wait_seconds": 40}), 900_000);
    let writing = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).unwrap();
        stdin
    });
    std::thread::sleep(Duration::from_secs(30));
    assert!(child.try_wait().unwrap().is_none(), "the session of a client that reads everything was ended");
    drop(lock);
    drop(writing.join().unwrap());
    let answered = reading.join().unwrap();
    assert_code(&child.wait_with_output().unwrap(), 0);
    assert_eq!(answered, 41, "every call answered");
}

/// A client that reuses the id of a request still in flight gets an error
/// for the second, and both ids are answered. Before, the SDK put the
/// second in the first's place and dropped one answer, which stayed owed:
/// the end of input then waited its 22 s, and 1,023 of them cut the client
/// to one request at a time.
#[test]
fn a_request_reusing_the_id_of_one_in_flight_is_refused_and_nothing_stays_owed() {
    let t = wide_project();
    let mut child = spawn_server(&t);
    let mut stdin = child.stdin.take().unwrap();
    let mut input = searches(1, 1000);
    // The same line again: the first search is still at work when it is read.
    let again = input.lines().last().unwrap().to_string();
    input.push_str(&format!("{again}\n"));
    input.push_str(&format!("{}\n", json!({"jsonrpc": "2.0", "id": "after", "method": "ping"})));
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    assert!(start.elapsed() < Duration::from_secs(15), "exited {:?} after the end of input", start.elapsed());
    let answers: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let of_1: Vec<&Value> = answers.iter().filter(|a| a["id"] == 1).collect();
    assert_eq!(of_1.len(), 2, "{answers:?}");
    assert!(of_1.iter().any(|a| a["result"]["content"].is_array()), "the first search is answered: {of_1:?}");
    let refused = of_1.iter().find(|a| a.get("error").is_some()).expect("the second is refused");
    assert_eq!(refused["error"]["code"], -32600);
    assert!(refused["error"]["message"].as_str().unwrap().contains("not yet answered"), "{refused}");
    assert!(answers.iter().any(|a| a["id"] == "after"), "{answers:?}");
}

/// A number no float holds (`1e400`) is JSON by its grammar: answered as an
/// invalid request with its id, not "not JSON" (audit 200). A stdout that
/// fails otherwise than by a closed pipe (a full disk) is said, status 2,
/// where every answer was lost and the server ended 0.
#[test]
fn an_out_of_range_number_is_an_invalid_request_and_a_failing_stdout_is_said() {
    let t = wide_project();
    let mut input = searches(0, 1);
    input.push_str(r#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","k":1e400}}}"#);
    input.push('\n');
    let out = run_with_input(&mut t.cmd("vg-mcp", "."), input.as_bytes());
    assert_code(&out, 0);
    let answers: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let answer = answers.iter().find(|a| a["id"] == 16).expect("answered");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut child = t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(full).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(searches(1, 1).as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 2);
    assert!(stderr(&out).contains("vg-mcp: cannot write to stdout: No space left on device"), "{}", stderr(&out));
}

/// A server whose answers can no longer be written ends then, saying why,
/// where it read on until its input ended (review 202): a client that
/// keeps its end of stdin open had it waiting for ever, answering nothing.
#[test]
fn a_failing_stdout_ends_the_server_with_its_input_still_open() {
    let t = wide_project();
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut child = t.cmd("vg-mcp", ".").stdin(Stdio::piped()).stdout(full).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(searches(1, 1).as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("vg-mcp still runs a minute after its stdout failed");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("vg-mcp: cannot write to stdout: No space left on device"), "{}", stderr(&out));
}

/// A client on a socket (Node spawns its children's stdio so) that closes
/// with answers unread resets the socket: that is the client gone, status 0
/// and nothing said, as a closed pipe is (review 202: status 2, "Connection
/// reset by peer").
#[test]
fn a_socket_client_that_leaves_with_answers_unread_is_no_failure() {
    let t = wide_project();
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut child = t
        .cmd("vg-mcp", ".")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(searches(30, 200).as_bytes()).unwrap();
    let mut first = [0u8; 100];
    std::io::Read::read_exact(&mut &ours, &mut first).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    drop(ours);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    assert!(!stderr(&out).contains("cannot write"), "{}", stderr(&out));
}
