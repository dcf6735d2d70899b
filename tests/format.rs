//! vg-format: output modes, cwd-relative paths, context, malformed input,
//! exit codes and closed pipes.

use crate::common::*;

fn hit(root: &str, file: &str, start: u64, end: u64, score: f64, text: &str) -> String {
    serde_json::json!({"type": "hit", "v": 1, "root": root, "file": file, "start_line": start,
        "end_line": end, "score": score, "text": text, "query": "upload retry"})
    .to_string()
}

fn stream(t: &Tree) -> String {
    let root = t.path();
    let root = root.to_str().unwrap();
    [
        hit(root, "src/upload.py", 4, 10, 0.71, "def upload_with_retry(client, blob, attempts=5):\n    for attempt in range(attempts):\n        try:\n            return client.put(blob)\n        except ConnectionError:\n            time.sleep(2 ** attempt)\n    raise RuntimeError('upload failed after retries')"),
        hit(root, "src/config.py", 4, 7, 0.40, "def load_settings(path):\n    with open(path, 'rb') as f:\n        data = tomllib.load(f)\n    return data.get('settings', {})"),
        hit(root, "src/upload.py", 1, 1, 0.30, "import time"),
    ]
    .join("\n")
        + "\n"
}

fn format(t: &Tree, cwd: &str, args: &[&str], input: &str) -> std::process::Output {
    run_with_input(t.cmd("vg-format", cwd).args(args), input.as_bytes())
}

/// vg-format at the tree's root, its stdin, stdout and stderr pipes.
fn spawn_format(t: &Tree, args: &[&str]) -> std::process::Child {
    use std::process::Stdio;
    t.cmd("vg-format", ".")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn files_and_counts_in_rank_order_relative_to_cwd() {
    let t = sample_project();
    let o = format(&t, ".", &["--files"], &stream(&t));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "src/upload.py\nsrc/config.py\n");
    let o = format(&t, "docs", &["-l"], &stream(&t));
    assert_eq!(stdout(&o), "../src/upload.py\n../src/config.py\n");
    let o = format(&t, "src", &["--count"], &stream(&t));
    assert_eq!(stdout(&o), "upload.py:2\nconfig.py:1\n");
}

/// `-c` counts each result once, as every other mode shows it, and as it
/// reads: two saved streams joined, or an endless one, are counted without
/// keeping every hit (audit 277: `cat a b | vg-format -c` counted 2 of a
/// hit shown once, and `yes HIT | vg-format -c` grew without bound).
/// Headings, which must wait for the end, refuse more than any search gives.
/// A hand-made hit with an `error` field of its own is a hit, not the
/// server's error body (`{"error": {...}}`).
#[test]
fn counts_are_of_results_shown_and_kept_as_read() {
    let t = sample_project();
    let twice = format!("{}{}", stream(&t), stream(&t));
    let o = format(&t, ".", &["--count"], &twice);
    assert_eq!(stdout(&o), "src/upload.py:2\nsrc/config.py:1\n");
    let one = format!("{}\n", hit(t.path().to_str().unwrap(), "src/upload.py", 4, 10, 0.71, "x"));
    let o = format(&t, ".", &["--count"], &one.repeat(30_000));
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "src/upload.py:1\n".to_string()));
    let o = format(&t, ".", &["--heading"], &one.repeat(30_000));
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vg-format: more than 20064 results to show under headings"), "{}", stderr(&o));
    let linted = r#"{"file":"src/upload.py","start_line":1,"end_line":1,"error":"unused import"}"#;
    let o = format(&t, ".", &["--no-heading"], &format!("{linted}\n"));
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("src/upload.py:1:"), "{}", stdout(&o));
    let o = format(&t, ".", &[], "{\"error\":{\"status\":400,\"message\":\"q is missing\"}}\n");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("an error from the server"), "{}", stderr(&o));
    // Commits wait for the end in every mode: as many as any search gives, and no more.
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/samples/commits.ndjson");
    let commit =
        std::fs::read_to_string(samples).unwrap().lines().find(|l| l.contains("\"commit\"")).unwrap().to_string();
    let o = format(&t, ".", &["--count"], &format!("{commit}\n").repeat(20_065));
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vg-format: more than 20064 commits"), "{}", stderr(&o));
}

/// `--json` writes a commit and an answer back as read (ndjson.md): the
/// fields a later 1.x adds were dropped, and `vg-log --json | vg-format
/// --json` lost them.
#[test]
fn json_writes_commits_and_answers_back_with_fields_of_a_later_release() {
    let t = sample_project();
    let commit = r#"{"type":"commit","v":1,"root":"/tmp","sha":"0123456789012345678901234567890123456789","date":"2024-05-01T14:03:00+02:00","time":1,"author":"a","email":"e","subject":"s","score":0.5,"matched":"diff","paths":["a.rs"],"paths_total":1,"lines":[{"path":"a.rs","line":3,"text":"+x","hunk":2}],"query":"q","signed":true}"#;
    let answer = r#"{"type":"answer","v":1,"query":"q","model":"m","reason":"forced","given":1,"text":"t","citations":[{"file":"a.rs","line":1,"column":4}],"dropped":[],"tokens":12}"#;
    for record in [commit, answer] {
        let o = format(&t, ".", &["--json"], &format!("{record}\n"));
        let (read, written): (serde_json::Value, serde_json::Value) =
            (serde_json::from_str(record).unwrap(), serde_json::from_str(stdout(&o).trim()).unwrap());
        assert_eq!(written, read, "{}", stderr(&o));
    }
}

/// What shapes text changes nothing with `--json`, `--files` or
/// `--count`, and is taken, as ripgrep takes it with `-l` and `-c` (its
/// help says so): an alias's `-C 2` or an editor's `--no-heading` passed
/// to every run must not fail one that lists files.
#[test]
fn what_shapes_text_is_taken_and_changes_nothing_in_the_record_modes() {
    let t = sample_project();
    for (mode, extra) in [
        ("--json", &["-C", "3", "--lines", "2", "-0", "--no-heading", "-N", "-I"][..]),
        ("--files", &["-C", "2", "--lines", "3", "--heading", "-N", "-I"]),
        ("--count", &["-A", "2", "--no-heading", "-N"]),
    ] {
        let plain = format(&t, ".", &[mode], &stream(&t));
        let o = format(&t, ".", &[&[mode][..], extra].concat(), &stream(&t));
        assert_code(&o, 0);
        assert_eq!(stdout(&o), stdout(&plain), "{mode} {extra:?}");
    }
    assert_code(&run(t.cmd("vecgrep", ".").args(["-l", "--no-heading", "-C", "2", "upload"])), 0);
}

/// A working directory removed since: vg-format refused every mode, where
/// rg prints paths; it now shows them whole.
#[test]
fn a_removed_working_directory_shows_paths_whole() {
    let t = sample_project();
    t.write("gone/x", "");
    let in_removed = |args: &[&str]| {
        let mut c = std::process::Command::new("bash");
        c.args(["-c", "cd gone && rm -r ../gone && exec \"$0\" \"$@\""]).arg(bin("vg-format")).args(args);
        c.current_dir(t.path());
        let o = run_with_input(&mut c, stream(&t).as_bytes());
        t.write("gone/x", "");
        o
    };
    let o = in_removed(&["--files"]);
    assert_code(&o, 0);
    let root = t.path().display().to_string();
    assert_eq!(stdout(&o), format!("{root}/src/upload.py\n{root}/src/config.py\n"));
    let o = in_removed(&["--json"]);
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
}

#[test]
fn json_keeps_root_relative_paths() {
    let t = sample_project();
    let o = format(&t, "docs", &["--json"], &stream(&t));
    assert_code(&o, 0);
    let recs = records(&o);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["file"], "src/upload.py");
    assert_eq!(recs[0]["root"], t.path().to_str().unwrap());
    // Written in the normal form: the type and this version filled in.
    let o = format(&t, ".", &["--json"], "{\"v\":0,\"file\":\"a.py\",\"start_line\":1,\"end_line\":1}\n");
    assert_eq!((records(&o)[0]["type"].as_str(), records(&o)[0]["v"].as_u64()), (Some("hit"), Some(1)));
}

/// Piped output comes best first, in the stream's order, as `--json` has
/// it (issue 46: it was sorted by file and line); under headings files come
/// in the order of their best hit and each file's hits best first.
#[test]
fn piped_output_is_grep_style_best_first_and_headings_group_by_file() {
    let t = sample_project();
    let o = format(&t, ".", &[], &stream(&t));
    assert_eq!(
        stdout(&o),
        "src/upload.py:4:def upload_with_retry(client, blob, attempts=5):\nsrc/config.py:4:def load_settings(path):\nsrc/upload.py:1:import time\n"
    );
    let o = format(&t, "src", &["--heading", "--color", "never"], &stream(&t));
    let out = stdout(&o);
    assert!(out.starts_with("upload.py\n0.710  lines 4-10\n"), "{out}");
    let best = out.find("lines 4-10").unwrap();
    assert!(out.find("lines 1-1").is_some_and(|later| later > best), "{out}");
    assert!(out.find("config.py").is_some_and(|later| later > out.find("lines 1-1").unwrap()), "{out}");
    assert!(!out.contains('\x1b'));
    let o = format(&t, "src", &["--heading", "--color", "always"], &stream(&t));
    assert!(stdout(&o).contains('\x1b'));
}

/// The number shown is the fit, and its color its band: a hit strong by
/// its fit is shown green however low its cosine (issue 46).
#[test]
fn headings_show_and_color_the_fit() {
    let t = sample_project();
    let root = t.path().to_str().unwrap().to_string();
    let record = |fit: f64| {
        serde_json::json!({"root": root, "file": "src/upload.py", "start_line": 4, "end_line": 4, "score": 0.2,
            "relevance": fit.atanh(), "fit": fit, "text": "def upload_with_retry(client, blob, attempts=5):"})
        .to_string()
            + "\n"
    };
    let o = format(&t, ".", &["--heading", "--color", "always"], &record(0.81));
    assert!(stdout(&o).contains("\x1b[1;32m0.810\x1b[0m"), "strong: {}", stdout(&o));
    let o = format(&t, ".", &["--heading", "--color", "always"], &record(0.3));
    assert!(stdout(&o).contains("\x1b[2m0.300\x1b[0m"), "weak: {}", stdout(&o));
}

/// ripgrep's habits (issue 46): -n and -H are what vg-format does anyway,
/// -N leaves out line numbers and -I paths.
#[test]
fn line_numbers_and_file_names_as_ripgrep_takes_them() {
    let t = sample_project();
    let grep_style = stdout(&format(&t, ".", &[], &stream(&t)));
    assert_eq!(stdout(&format(&t, ".", &["-n", "-H"], &stream(&t))), grep_style);
    assert_eq!(stdout(&format(&t, ".", &["--line-number", "--with-filename"], &stream(&t))), grep_style);
    assert_eq!(
        stdout(&format(&t, ".", &["-I"], &stream(&t))),
        "4:def upload_with_retry(client, blob, attempts=5):\n4:def load_settings(path):\n1:import time\n"
    );
    assert_eq!(
        stdout(&format(&t, ".", &["-N", "--no-filename"], &stream(&t))),
        "def upload_with_retry(client, blob, attempts=5):\ndef load_settings(path):\nimport time\n"
    );
    assert_eq!(
        stdout(&format(&t, ".", &["-N"], &stream(&t))).lines().next(),
        Some("src/upload.py:def upload_with_retry(client, blob, attempts=5):")
    );
    let o = format(&t, ".", &["--heading", "--color", "never", "-I", "-N"], &stream(&t));
    let out = stdout(&o);
    assert!(!out.contains("upload.py") && out.contains("\ndef upload_with_retry"), "{out}");
}

/// Piped context comes in blocks with `--` between them, as grep prints
/// them, and no context line twice though two results' context reach it;
/// a result's own line that was another's context is shown again, as a
/// match (the third hit was shown only as `-5-`: lost to `vim -q`).
#[test]
fn piped_context_blocks_are_separated_and_each_result_shows_its_line() {
    let t = sample_project();
    let root = t.path();
    let root = root.to_str().unwrap();
    let input = [
        hit(root, "src/upload.py", 4, 4, 0.7, "def upload_with_retry(client, blob, attempts=5):"),
        hit(root, "src/config.py", 4, 4, 0.6, "def load_settings(path):"),
        hit(root, "src/upload.py", 5, 5, 0.5, "    for attempt in range(attempts):"),
        hit(root, "src/upload.py", 1, 1, 0.4, "import time"),
    ]
    .join("\n")
        + "\n";
    let o = format(&t, ".", &["-C", "1"], &input);
    assert_code(&o, 0);
    let out = stdout(&o);
    let upload = "src/upload.py";
    assert_eq!(
        out,
        format!(
            "{upload}-3-\n{upload}:4:def upload_with_retry(client, blob, attempts=5):\n{upload}-5-    for attempt in range(attempts):\n--\nsrc/config.py-3-\nsrc/config.py:4:def load_settings(path):\nsrc/config.py-5-    with open(path, 'rb') as f:\n--\n{upload}:5:    for attempt in range(attempts):\n{upload}-6-        try:\n--\n{upload}:1:import time\n{upload}-2-\n"
        )
    );
    // Without context there are no blocks to separate.
    assert!(!stdout(&format(&t, ".", &[], &input)).contains("--"));
}

#[test]
fn context_lines_come_from_the_file() {
    let t = sample_project();
    let input =
        hit(t.path().to_str().unwrap(), "src/upload.py", 4, 4, 0.7, "def upload_with_retry(client, blob, attempts=5):");
    let o = format(&t, ".", &["-C", "1"], &(input + "\n"));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "src/upload.py-3-\nsrc/upload.py:4:def upload_with_retry(client, blob, attempts=5):\nsrc/upload.py-5-    for attempt in range(attempts):\n");
    let input =
        hit(t.path().to_str().unwrap(), "src/upload.py", 4, 4, 0.7, "def upload_with_retry(client, blob, attempts=5):");
    let o = format(&t, ".", &["-A", "2"], &(input + "\n"));
    assert_eq!(stdout(&o).lines().count(), 3);
}

/// A hand-made record with a query but no text shows the line of its
/// range that answers the query, read from the file, not its first line.
#[test]
fn a_record_without_text_shows_its_best_line_from_the_file() {
    let t = sample_project();
    let input = r#"{"file":"src/upload.py","start_line":1,"end_line":10,"query":"sleep between attempts"}"#;
    let o = format(&t, ".", &[], &format!("{input}\n"));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "src/upload.py:9:            time.sleep(2 ** attempt)\n");
    // Past the file's end: the record's place, as for a file gone, not nothing.
    let input = r#"{"file":"src/upload.py","start_line":40,"end_line":41,"query":"sleep"}"#;
    let o = format(&t, ".", &[], &format!("{input}\n"));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "src/upload.py:40:\n");
}

/// A hand-made hit whose file goes through a link in the root to a file
/// outside it shows its own text and place, never the outside file's lines:
/// the walk never follows links, so no search names such a file.
#[test]
fn a_hit_through_a_link_out_of_its_root_shows_nothing_of_what_it_leads_to() {
    let t = sample_project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("passwd"), "root:x:0:0:secret\nline two\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("etclink")).unwrap();
    let root = t.path().to_str().unwrap().to_string();
    let with_text = hit(&root, "etclink/passwd", 2, 2, 0.7, "the hit's text") + "\n";
    let without = format!(
        "{{\"root\":{root:?},\"file\":\"etclink/passwd\",\"start_line\":1,\"end_line\":2,\"query\":\"secret\"}}\n"
    );
    for (input, args) in [(&with_text, &["-C", "3"][..]), (&without, &[][..])] {
        let o = format(&t, ".", args, input);
        assert_code(&o, 0);
        assert!(!stdout(&o).contains("secret") && !stdout(&o).contains("line two"), "{}", stdout(&o));
        assert!(stdout(&o).starts_with("etclink/passwd:"), "{}", stdout(&o));
    }
    // A link inside the root that stays inside it is read.
    std::os::unix::fs::symlink("upload.py", t.path().join("src/up.py")).unwrap();
    let inside = format!("{{\"root\":{root:?},\"file\":\"src/up.py\",\"start_line\":1,\"end_line\":10,\"query\":\"sleep between attempts\"}}\n");
    let o = format(&t, ".", &[], &inside);
    assert_eq!(stdout(&o), "src/up.py:9:            time.sleep(2 ** attempt)\n");
}

/// Context costs what the file holds, however much is asked for, and a
/// hand-made record with line numbers at the end of the range is shown,
/// not a panic or an allocation that aborts.
#[test]
fn context_is_bounded_by_the_file_and_line_numbers_never_overflow() {
    let t = sample_project();
    let root = t.path().to_str().unwrap().to_string();
    let input = hit(&root, "src/upload.py", 4, 4, 0.7, "def upload_with_retry(client, blob, attempts=5):") + "\n";
    let o = format(&t, ".", &["-C", "100000000000"], &input);
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().count(), 10, "every line of the file, once: {}", stdout(&o));
    let last = u64::MAX.to_string();
    let huge = format!("{{\"file\":\"src/upload.py\",\"start_line\":{last},\"end_line\":{last},\"text\":\"x\"}}\n");
    for args in [&[][..], &["--heading"], &["-C", "3"], &["-B", "4294967296"]] {
        let o = format(&t, ".", args, &huge);
        assert_code(&o, 0);
        assert!(stdout(&o).lines().any(|l| l.contains(&format!("{last}:x"))), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
    // The next hit of the file, after the last line there is, begins a
    // block of its own (debug builds panicked, adding one to that line).
    let after = huge.clone() + &hit(&root, "src/upload.py", 1, 1, 0.5, "import time") + "\n";
    for args in [&[][..], &["-A", "1"], &["-N", "-I"]] {
        let o = format(&t, ".", args, &after);
        assert_code(&o, 0);
        let out = stdout(&o);
        assert!(out.lines().any(|l| l.ends_with('x')) && out.contains("import time"), "{args:?}: {out}");
    }
}

/// A stream that begins with a byte order mark, as an editor on Windows
/// saves one, is read as JSON readers read it (jq): its first record was
/// "not a JSON object".
#[test]
fn a_byte_order_mark_before_the_first_record_is_passed_over() {
    let t = sample_project();
    let root = t.path().to_str().unwrap().to_string();
    let input = format!("\u{feff}{}\n", hit(&root, "src/upload.py", 4, 4, 0.7, "def upload_with_retry"));
    let o = format(&t, ".", &[], &input);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("src/upload.py:4:def upload_with_retry"), "{}", stdout(&o));
}

/// A stream may name any file: a FIFO (it would block the read) or
/// `/dev/zero` (it never ends) shows the hit's own text, and vg-format ends.
#[test]
fn a_hit_naming_a_fifo_or_an_endless_device_shows_its_text_and_ends() {
    use std::io::Write;
    let t = sample_project();
    let fifo = t.path().join("src/pipe.py");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let root = t.path().to_str().unwrap().to_string();
    // A device is named by a hit without a root: one with a root names files below it.
    let zero = r#"{"file":"/dev/zero","start_line":1,"end_line":1,"score":0.6,"text":"zero's text"}"#;
    let input = [hit(&root, "src/pipe.py", 1, 1, 0.7, "the pipe's text"), zero.to_string()].join("\n") + "\n";
    for args in [&["-C", "1"][..], &["--heading", "--color", "never"]] {
        let mut child = spawn_format(&t, args);
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{args:?}: vg-format did not end; it read a FIFO or a device");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let o = child.wait_with_output().unwrap();
        assert_code(&o, 0);
        assert!(
            stdout(&o).contains("the pipe's text") && stdout(&o).contains("zero's text"),
            "{args:?}: {}",
            stdout(&o)
        );
    }
}

/// A line without end (`< /dev/zero`) is an error once it is longer than
/// any record, not a read until memory runs out.
#[test]
fn a_line_without_end_is_an_error_not_a_read_of_all_memory() {
    let t = sample_project();
    for tool in ["vg-format", "vg-answer"] {
        let mut cmd = t.cmd(tool, ".");
        cmd.stdin(std::fs::File::open("/dev/zero").unwrap());
        let o = cmd.output().unwrap();
        assert_code(&o, 2);
        assert_eq!(stderr(&o).trim(), format!("{tool}: line 1: longer than 67108864 bytes; no record is"));
    }
}

#[test]
fn malformed_input_is_an_error_naming_the_line() {
    let t = sample_project();
    let input = stream(&t) + "{\"file\": \"a.rs\", \"start_line\": \"ten\"}\n";
    let o = format(&t, ".", &["--files"], &input);
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vg-format: line 4:"), "{}", stderr(&o));
    let o = format(&t, ".", &[], "not json\n");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("line 1"), "{}", stderr(&o));
    let o = format(&t, ".", &[], "{\"file\":\"a\",\"start_line\":1,\"end_line\":1}\n\u{0}\u{1}\n");
    assert_code(&o, 2);
    let o = run_with_input(t.cmd("vg-format", ".").arg("--files"), b"\xff\xfe\n");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("line 1"), "{}", stderr(&o));
    // A root to read files from must say where it is; a type must be a name.
    for (line, error) in [
        (r#"{"file":"src/lib.rs","start_line":1,"end_line":1,"root":"."}"#, "root \".\" is not an absolute path"),
        (r#"{"type":5,"file":"a","start_line":1,"end_line":1}"#, "its type is 5, not a string"),
    ] {
        let o = format(&t, ".", &["-C", "1"], &format!("{}{line}\n", stream(&t)));
        assert_code(&o, 2);
        assert!(stderr(&o).starts_with("vg-format: line 4: ") && stderr(&o).contains(error), "{}", stderr(&o));
    }
}

#[test]
fn unknown_fields_and_other_records_are_ignored() {
    let t = sample_project();
    let input = "{\"type\":\"summary\",\"v\":1,\"files\":3}\n{\"file\":\"x.rs\",\"start_line\":2,\"end_line\":3,\"extra\":{\"a\":1}}\n";
    let o = format(&t, ".", &["--files"], input);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "x.rs\n");
}

#[test]
fn no_hits_means_status_1() {
    let t = sample_project();
    let o = format(&t, ".", &[], "");
    assert_code(&o, 1);
    assert!(stdout(&o).is_empty() && stderr(&o).is_empty());
}

#[test]
fn a_closed_pipe_is_success() {
    use std::io::{BufRead, BufReader, Write};
    let t = sample_project();
    let line = hit(t.path().to_str().unwrap(), "src/upload.py", 1, 1, 0.5, "import time") + "\n";
    let input = line.repeat(50_000);
    let mut child = spawn_format(&t, &["--json"]);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.contains("\"hit\""));
    // stdout is dropped here: the reader has gone, like `| head -1`.
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A pipe gets each hit's lines while the producer still writes, in the
/// modes that show a hit alone: one waiting for more input writes out what
/// it has (a slow producer's hits show as they come), and an endless
/// producer piped into `vg-format | head -1` ends, as `yes | grep y |
/// head -1` does, though its hits are all alike and add nothing to show.
#[test]
fn each_hit_is_shown_while_the_producer_writes_and_a_reader_gone_ends_it() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::mpsc;
    use std::time::Duration;
    let t = sample_project();
    let root = t.path().to_str().unwrap().to_string();
    let first_line_of = |child: &mut std::process::Child| {
        let (line, got) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut first = String::new();
            BufReader::new(stdout).read_line(&mut first).unwrap();
            line.send(first).unwrap();
            // The reader goes here, as `head -1` does.
        });
        got.recv_timeout(Duration::from_secs(60)).expect("no line while the stream went on")
    };
    let one = hit(&root, "src/upload.py", 1, 1, 0.5, "import time") + "\n";
    for args in [&[][..], &["--json"], &["--files"], &["--no-filename"]] {
        // One hit, then a producer that waits.
        let mut child = spawn_format(&t, args);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(one.as_bytes()).unwrap();
        let first = first_line_of(&mut child);
        assert!(first.contains("upload.py") || first.contains("import time"), "{args:?}: {first}");
        drop(stdin);
        assert_code(&child.wait_with_output().unwrap(), 0);
    }
    for args in [&[][..], &["--json"], &["--files"], &["--count"]] {
        // The same hit without end, until vg-format has gone.
        let mut child = spawn_format(&t, args);
        let mut stdin = child.stdin.take().unwrap();
        let line = one.clone();
        let producer = std::thread::spawn(move || (0..).find(|_| stdin.write_all(line.as_bytes()).is_err()));
        if args != ["--count"] {
            first_line_of(&mut child);
        } else {
            drop(child.stdout.take());
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{args:?}: vg-format read on after its reader had gone");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let written = producer.join().unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty() && written > Some(0), "{args:?}");
    }
}

/// Issue 42: a repository file's escape sequences (a clipboard write, a
/// screen clear) are shown, not obeyed, under headings; a pipe gets them
/// as they are, as grep's.
#[test]
fn a_files_escape_sequences_are_shown_under_a_heading_and_kept_in_a_pipe() {
    let t = sample_project();
    let root = t.path();
    let hostile = "evil = 1  \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u{9b}0m upload";
    let input = hit(root.to_str().unwrap(), "src/evil.py", 1, 1, 0.7, hostile) + "\n";
    let o = format(&t, ".", &["--heading", "--color", "never"], &input);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert!(out.contains("evil = 1  ^[]52;c;cm0gLXJmIH4=^G^[[2J<U+009B>0m upload"), "{out:?}");
    let o = format(&t, ".", &[], &input);
    assert_eq!(stdout(&o), format!("src/evil.py:1:{hostile}\n"));
}

/// `-l`, `-c` and `--no-heading` on a terminal are for people too: a
/// file's text or name cannot move the cursor, retitle the window or
/// write the clipboard there.
#[test]
fn on_a_terminal_no_mode_sends_a_files_escape_sequences() {
    let t = sample_project();
    let root = t.path();
    let hostile = "evil = 1  \x1b]52;c;ZXZpbA==\x07 upload";
    let input = hit(root.to_str().unwrap(), "src/\x1b]0;PWNED\x07.py", 1, 1, 0.7, hostile) + "\n";
    std::fs::write(root.join("stream.ndjson"), input).unwrap();
    for mode in ["--no-heading", "-l", "-c", "--heading"] {
        let line = format!("{} --color never {mode} < stream.ndjson", bin("vg-format").display());
        // `script` gives the command a terminal, as a person's shell would.
        let o = run(std::process::Command::new("script").args(["-qec", &line, "/dev/null"]).current_dir(&root));
        let out = stdout(&o);
        assert!(out.contains("src/^[]0;PWNED^G.py"), "{mode}: {out:?}");
        assert!(!out.contains('\x1b'), "{mode}: {out:?}");
    }
}

/// The notes and errors on stderr name a repository's files too: a name
/// holding ESC and BEL retitled the terminal from vg-index's skip note.
#[test]
fn notes_and_errors_on_stderr_show_escape_sequences_as_text() {
    let t = sample_project();
    t.write("src/big\x1b]0;PWNED\x07.txt", &"a".repeat(3000));
    let o = run(t.cmd("vg-index", ".").args(["--max-filesize", "1000"]));
    let o2 = run(t.cmd("vg-query", ".").args(["upload", "src/gone\x1b]0;PWNED\x07"]));
    assert_code(&o2, 2);
    for (err, shown) in [(stderr(&o), "skipping src/big^[]0;PWNED^G.txt"), (stderr(&o2), "src/gone^[]0;PWNED^G")] {
        assert!(err.contains(shown), "{err:?}");
        assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    }
}

#[test]
fn words_of_letters_beyond_ascii_pick_lines_without_a_panic() {
    let t = sample_project();
    let root = t.path().to_str().unwrap().to_string();
    let input = [
        hit(&root, "a.txt", 1, 2, 0.5, "café au lait\n# 日本語のコメント"),
        hit(&root, "b.txt", 1, 2, 0.4, "x = 1\nthe uploads retried"),
    ]
    .join("\n");
    let o = format(&t, ".", &[], &(input + "\n"));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "a.txt:1:café au lait\nb.txt:2:the uploads retried\n");
}

/// Paths may hold spaces and newlines: `-0` ends each with NUL, as
/// ripgrep's does, so that `xargs -0` takes them whole.
#[test]
fn null_ends_each_path_with_nul_for_xargs() {
    let t = sample_project();
    let root = t.path().to_str().unwrap().to_string();
    let odd = "odd/with space\nand newline.py";
    let input = [hit(&root, odd, 1, 1, 0.6, "def upload(): pass"), hit(&root, "src/upload.py", 4, 4, 0.5, "x")];
    let input = input.join("\n") + "\n";
    let o = format(&t, ".", &["-l", "-0"], &input);
    assert_eq!(stdout(&o), format!("{odd}\0src/upload.py\0"));
    let o = format(&t, ".", &["-c", "--null"], &input);
    assert_eq!(stdout(&o), format!("{odd}\x001\nsrc/upload.py\x001\n"));
    let o = format(&t, ".", &["--null", "--no-heading"], &input);
    assert_eq!(stdout(&o), format!("{odd}\x001:def upload(): pass\nsrc/upload.py\x004:x\n"));
    // Under a heading too (it came out as `with space^Jand newline.py`).
    let o = format(&t, ".", &["--null", "--heading"], &input);
    assert!(stdout(&o).starts_with(&format!("{odd}\0")), "{}", stdout(&o));
    let o = format(&t, ".", &["--heading"], &input);
    assert!(stdout(&o).starts_with("odd/with space^Jand newline.py\n"), "{}", stdout(&o));
    // What xargs -0 is given is each path whole.
    std::fs::create_dir_all(t.path().join("odd")).unwrap();
    std::fs::write(t.path().join(odd), "").unwrap();
    std::fs::write(t.path().join("input"), &input).unwrap();
    let line = format!("{} -l -0 < input | xargs -0 ls -d", bin("vg-format").display());
    let o = run(std::process::Command::new("sh").args(["-c", &line]).current_dir(t.path()));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), format!("{odd}\nsrc/upload.py\n"));
}

/// A hand-made hit's `end_line` says nothing of the lines it holds: context
/// around it is bounded by its text (once, `end_line` near the end of usize
/// with `-C` as large panicked on a vector that size), and an error quoting
/// what a line holds is one bounded line.
#[test]
fn a_hand_made_hits_line_range_and_values_cannot_make_the_output_unbounded() {
    let t = Tree::bare();
    let huge = u64::MAX;
    let input = format!("{{\"file\":\"nofile.rs\",\"start_line\":1,\"end_line\":{huge},\"text\":\"a\\nb\"}}\n");
    for (args, shown) in [
        (&["-C", "18446744073709551615"][..], "1:a\n2-b\n"),
        (&["-A", "100000000000"][..], "1:a\n2-b\n"),
        (&["-B", "5"][..], "1:a\n"),
    ] {
        let o = run_with_input(t.cmd("vg-format", ".").args(args).arg("--no-filename"), input.as_bytes());
        assert_code(&o, 0);
        assert_eq!(stdout(&o), shown, "{args:?}");
    }
    let long = "x".repeat(1_000_000);
    for bad in [
        format!("{{\"file\":\"a\",\"start_line\":\"{long}\",\"end_line\":1}}"),
        format!("{{\"type\":\"commit\",\"sha\":\"{long}\"}}"),
        format!("{{\"file\":\"a\",\"start_line\":1,\"end_line\":1,\"text\":\"{long}"),
    ] {
        let o = run_with_input(&mut t.cmd("vg-format", "."), format!("{bad}\n").as_bytes());
        assert_code(&o, 2);
        assert_eq!(stderr(&o).lines().count(), 1, "{}", &stderr(&o)[..300.min(stderr(&o).len())]);
        assert!(stderr(&o).len() < 1000 && stderr(&o).starts_with("vg-format: line 1"), "{}", stderr(&o).len());
    }
}

/// Every record's strings carry what a terminal would obey (a C1 CSI, a
/// right-to-left override) as `\u` escapes: `vg-query` left on a terminal
/// shows them, and a parser reads the same text.
#[test]
fn records_escape_what_a_terminal_would_obey_and_keep_the_text() {
    let t = sample_project();
    let text =
        "def grant_admin(user):\n    return user.role == \"user\u{202e} \u{2066}// admin\u{2069} \u{2066}\" \u{9b}2J\n";
    t.write("src/admin.py", text);
    let o = run(t.cmd("vg-query", ".").args(["--threshold", "-1", "-k", "20", "grant admin"]));
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("\\u202e") && out.contains("\\u2066") && out.contains("\\u009b"), "{out}");
    assert!(!out.chars().any(|c| c == '\u{202e}' || c == '\u{9b}'), "{out}");
    let hit = records(&o).into_iter().find(|r| r["file"] == "src/admin.py").expect("the file is found");
    assert!(hit["text"].as_str().unwrap().contains("user\u{202e} \u{2066}// admin"), "{hit}");
}

/// The peak memory of process `pid` so far, in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// In the modes that show each hit as it is read, memory stays flat under
/// a long stream: every hit was kept whole to the end (300,000 hits of a
/// 100-character line took 120 MB); and context read from big files keeps
/// a few files, as text, not a string per line (three 60 MB files of short
/// lines took 5 GB).
#[test]
fn memory_stays_flat_under_a_long_stream_and_big_files_read_for_context() {
    use std::io::Write;
    let t = sample_project();
    let root = t.path();
    let root = root.to_str().unwrap();
    for args in [&["--json"][..], &["--files"], &[]] {
        let mut child = spawn_format(&t, args);
        let mut stdin = child.stdin.take().unwrap();
        let mut out = child.stdout.take().unwrap();
        let drain = std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()).unwrap());
        let line = hit(root, "src/upload.py", 4, 4, 0.5, &"q".repeat(100)) + "\n";
        for _ in 0..200_000 {
            stdin.write_all(line.as_bytes()).unwrap();
        }
        stdin.flush().unwrap();
        // Read before the end: the tool keeps what it kept until then.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let peak = peak_kib(child.id());
        drop(stdin);
        assert!(child.wait().unwrap().success());
        drain.join().unwrap();
        assert!(peak < 40 * 1024, "{args:?}: {peak} KiB at the peak");
    }

    let big = "a\n".repeat(8 * 1024 * 1024);
    for name in ["big1.txt", "big2.txt", "big3.txt"] {
        t.write(name, &big);
    }
    let hits: String =
        ["big1.txt", "big2.txt", "big3.txt"].iter().map(|f| hit(root, f, 5, 5, 0.5, "a") + "\n").collect();
    let mut child = spawn_format(&t, &["-C", "1"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(hits.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The last hit's context is written out before more input is waited for.
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut shown = String::new();
    while !shown.contains("big3.txt-6-a") {
        assert!(std::io::BufRead::read_line(&mut out, &mut shown).unwrap() > 0, "{shown}");
    }
    let peak = peak_kib(child.id());
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // 16 MiB a file as text; a string per line made each one 8 million strings.
    assert!(peak < 100 * 1024, "{peak} KiB at the peak");
}

/// `--color auto` colors a terminal, but not one that says it is dumb
/// (Emacs' shell shows escapes as text), as ripgrep decides.
#[test]
fn a_dumb_terminal_gets_no_color() {
    let t = sample_project();
    let root = t.path();
    let input = hit(root.to_str().unwrap(), "src/upload.py", 1, 1, 0.7, "def upload(): pass") + "\n";
    std::fs::write(root.join("stream.ndjson"), input).unwrap();
    // `None`: TERM unset, as ripgrep takes it: a terminal that says nothing
    // of what it shows gets no color.
    let colored = |term: Option<&str>| {
        let term = term.map_or("-u TERM".to_string(), |t| format!("TERM={t}"));
        let line = format!("env -u NO_COLOR {term} {} -l < stream.ndjson", bin("vg-format").display());
        let o = run(std::process::Command::new("script").args(["-qec", &line, "/dev/null"]).current_dir(t.path()));
        assert!(stdout(&o).contains("upload.py"), "{}", stdout(&o));
        stdout(&o).contains('\x1b')
    };
    assert!(colored(Some("xterm")));
    assert!(!colored(Some("dumb")));
    assert!(!colored(None));
}

/// The note that a commit touched more files than its record lists is a
/// note as any other: -q silenced every note but it.
#[test]
fn the_note_of_a_commits_files_left_out_is_silenced_by_quiet() {
    let t = sample_project();
    let commit = serde_json::json!({"type": "commit", "v": 1, "root": t.path(), "sha": "a".repeat(40),
        "date": "2024-05-01T00:00:00+00:00", "time": 1714521600, "author": "A", "email": "a@b", "subject": "bulk",
        "score": 0.5, "matched": "message", "paths": ["f1.txt"], "paths_total": 55, "lines": [], "query": "q"});
    let input = format!("{commit}\n");
    let o = format(&t, ".", &["--files"], &input);
    assert!(stderr(&o).contains("1 of the commits touched more files than their records list"), "{}", stderr(&o));
    let o = format(&t, ".", &["--files", "-q"], &input);
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
}

/// `-M NUM` leaves out a shown line longer than NUM bytes, saying how long
/// it was, and `--max-columns-preview` shows its first NUM bytes instead,
/// as ripgrep's: one hit on a line of data printed all of it (audit 237).
/// The porcelain passes both on, in every mode that shows lines.
#[test]
fn long_lines_are_left_out_or_cut_under_max_columns() {
    let t = Tree::bare();
    let long =
        format!("RETRY_TABLE = [{}]", (0..300).map(|i| format!("retry_upload_{i}")).collect::<Vec<_>>().join(", "));
    let text = format!("def upload_with_retry(client):\n{long}\n");
    t.write("src/upload.py", &text);
    let root = t.path().to_str().unwrap().to_string();
    let input = hit(&root, "src/upload.py", 1, 2, 0.7, text.trim_end()) + "\n";
    let flat = |args: &[&str]| {
        let o = format(&t, ".", &[&["--lines", "2"][..], args].concat(), &input);
        assert_code(&o, 0);
        stdout(&o)
    };
    assert!(flat(&[]).contains(&long), "no limit by default");
    assert_eq!(flat(&["-M", "0"]), flat(&[]), "0 is no limit");
    let omitted = format!("src/upload.py:2:[Omitted long line of {} bytes]\n", long.len());
    assert_eq!(flat(&["-M", "40"]), format!("src/upload.py:1:def upload_with_retry(client):\n{omitted}"));
    let preview = format!("src/upload.py:2:{} [... {} more bytes]\n", &long[..40], long.len() - 40);
    assert!(flat(&["-M", "40", "--max-columns-preview"]).ends_with(&preview));
    // Under a heading, and as context.
    let o = format(&t, ".", &["--heading", "-M", "40", "-C", "1", "--lines", "1"], &input);
    assert!(stdout(&o).contains("[Omitted long line of"), "{}", stdout(&o));
    assert_eq!(flat(&["--max-columns-preview"]), flat(&[]), "nothing without -M");
    // A commit's subject is a line too.
    let subject = format!("Retry uploads {}", "and more ".repeat(40));
    let commit = serde_json::json!({"type": "commit", "v": 1, "root": &root, "sha": "b".repeat(40),
        "date": "2024-05-01T14:03:00+02:00", "time": 1, "author": "a", "email": "e", "subject": &subject,
        "score": 0.5, "matched": "message", "paths": [], "paths_total": 0, "lines": [], "query": "retry"});
    for mode in ["--no-heading", "--heading"] {
        let o = format(&t, ".", &[mode, "-M", "40"], &format!("{commit}\n"));
        let omitted = format!("[Omitted long line of {} bytes]", subject.len());
        assert!(stdout(&o).contains(&omitted) && !stdout(&o).contains("and more and"), "{}", stdout(&o));
    }
    // The porcelain's search, in a file of code enough not to be taken
    // for a minified one.
    let helpers: String = (0..40).map(|i| format!("def helper_{i}(x):\n    return x + {i}\n\n")).collect();
    t.write("src/upload.py", &format!("{helpers}{text}"));
    let o = run(t.cmd("vecgrep", ".").args(["-M", "40", "-k", "2", "RETRY_TABLE"]));
    assert_code(&o, 0);
    assert!(stdout(&o).contains("[Omitted long line of") && !stdout(&o).contains(&long), "{}", stdout(&o));
}

/// `--json` writes a path below its root as records write it, whatever a
/// hand-made record spelt (audit 254); one without a root is the reader's
/// to name, and is left as it is.
#[test]
fn json_writes_a_path_below_its_root_in_its_normal_form() {
    let t = Tree::bare();
    let hit = |root: &str, file: &str| {
        format!(r#"{{"type":"hit","v":1,{root}"file":"{file}","start_line":1,"end_line":1,"score":0.5,"text":"x"}}"#)
    };
    let input = format!("{}\n{}\n", hit(r#""root":"/tmp","#, "./src//a.rs/"), hit("", "../b.rs"));
    let o = run_with_input(t.cmd("vg-format", ".").arg("--json"), input.as_bytes());
    assert_code(&o, 0);
    let files: Vec<serde_json::Value> = records(&o).iter().map(|r| r["file"].clone()).collect();
    assert_eq!(files, ["src/a.rs", "../b.rs"]);
}
