//! vecgrep: the one-shot CLI wired from the vg-* tools.

use std::process::Command;

use crate::common::*;

fn vecgrep(t: &Tree, cwd: &str, args: &[&str]) -> std::process::Output {
    run(t.cmd("vecgrep", cwd).args(args))
}

#[test]
fn one_shot_search_prints_cwd_relative_results() {
    let t = sample_project();
    let o = vecgrep(&t, "src", &["retry an upload when the connection fails"]);
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("upload.py:"), "{}", stdout(&o));
    let o = vecgrep(&t, "docs", &["-l", "--no-scope", "retry an upload when the connection fails"]);
    assert_eq!(stdout(&o).lines().next(), Some("../src/upload.py"));
}

/// `vecgrep QUERY >> notes.txt` inside the tree: the stage that walks the
/// tree writes to a pipe, so the porcelain tells it which file its output
/// goes to; a search never finds the results of the searches before it.
#[test]
fn a_search_appending_to_a_file_of_the_tree_never_finds_its_own_results() {
    let t = sample_project();
    let notes = t.path().join("notes.txt");
    for _ in 0..2 {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(&notes).unwrap();
        let status = t.cmd("vecgrep", ".").args(["--threshold=-1", "retry an upload"]).stdout(out).status().unwrap();
        assert!(status.success());
    }
    let said = read(&notes);
    assert!(said.contains("upload.py:"), "{said}");
    assert!(!said.contains("notes.txt"), "a search found what an earlier one wrote: {said}");
}

/// The porcelain passes a flag's value on as `--flag=VALUE`: a value that
/// starts with `-` stays a value, as the tool itself takes it.
#[test]
fn a_value_starting_with_a_dash_reaches_the_tool_as_a_value() {
    let t = sample_project();
    let o = run(t.cmd("vecgrep", ".").args(["-E=-x", "--threshold=-1", "-l", "retry a failed upload"]));
    assert_code(&o, 0);
    assert!(stdout(&o).lines().any(|l| l == "src/upload.py"), "{}{}", stdout(&o), stderr(&o));
}

/// A flag given twice takes its last value, as in rg, so that an alias
/// with a flag can be run with that flag again.
#[test]
fn a_flag_given_again_overrides_itself() {
    let t = sample_project();
    let twice =
        ["-k", "20", "-k", "1", "--threshold", "0.9", "--threshold=-1", "--color", "always", "--color", "never"];
    let o = vecgrep(&t, ".", &[&twice[..], &["--no-heading", "--no-heading", "retry a failed upload"]].concat());
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().filter(|l| l.contains(':')).count(), 1, "{}", stdout(&o));
    assert!(!stdout(&o).contains('\x1b'), "{}", stdout(&o));
    let hit = r#"{"file":"src/upload.py","start_line":1,"end_line":1}"#;
    let o = run_with_input(t.cmd("vg-format", ".").args(["-C1", "-C0", "--no-heading"]), hit.as_bytes());
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
}

/// A tool of the pipeline killed by a signal (the kernel's OOM killer, a
/// crash) fails the search with status 2 and says which and how: it used
/// to end with status 2 and nothing said.
#[test]
fn a_tool_killed_by_a_signal_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let t = sample_project();
    let tools = tempfile::tempdir().unwrap();
    // vecgrep runs the tools beside its own executable first.
    let own = tools.path().join("vecgrep");
    std::fs::hard_link(bin("vecgrep"), &own).or_else(|_| std::fs::copy(bin("vecgrep"), &own).map(drop)).unwrap();
    for tool in ["vg-query", "vg-index", "vg-root"] {
        std::os::unix::fs::symlink(bin(tool), tools.path().join(tool)).unwrap();
    }
    let killed = tools.path().join("vg-format");
    std::fs::write(&killed, "#!/bin/sh\ncat > /dev/null\nkill -9 $$\n").unwrap();
    std::fs::set_permissions(&killed, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The test's environment (its own HOME and model), on the copy.
    let mut copy = Command::new(tools.path().join("vecgrep"));
    for (key, value) in t.cmd("vecgrep", ".").get_envs() {
        match value {
            Some(value) => copy.env(key, value),
            None => copy.env_remove(key),
        };
    }
    let o = run(copy.args(["--mode", "lexical", "upload"]).current_dir(t.path()).stdin(std::process::Stdio::null()));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim_end(), "vecgrep: vg-format was killed by signal 9 (SIGKILL)");
}

/// Ctrl-C while a chat model is answering ends vecgrep with 130, as any
/// interrupt does: vg-answer, which hears no Ctrl-C of its own, died by
/// it, which read as an error (2), at times said as a kill.
#[test]
fn ctrl_c_while_the_chat_model_answers_is_an_interrupt() {
    use std::os::unix::process::CommandExt;
    let t = sample_project();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    t.global_config(&format!("llm_url = \"http://{}/v1\"\nllm_model = \"m\"\n", listener.local_addr().unwrap()));
    let (asked, asked_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming() {
            held.push(connection);
            let _ = asked.send(());
        }
    });
    for mode in [&["--answer", "--force-answer"][..], &["--plan", "--planner", "llm"]] {
        let child = t
            .cmd("vecgrep", ".")
            .args(mode)
            .args(["--mode", "lexical", "retry the upload"])
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        asked_rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the chat model was asked");
        // As a terminal sends it: to the whole process group.
        let group = format!("-{}", child.id());
        assert!(Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{mode:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("killed by signal"), "{mode:?}: {}", stderr(&o));
    }
}

#[test]
fn output_modes() {
    let t = sample_project();
    let o = vecgrep(&t, ".", &["--json", "read settings from a toml file"]);
    assert_code(&o, 0);
    let recs = records(&o);
    assert_eq!(recs[0]["file"], "src/config.py");
    assert_eq!(recs[0]["root"], t.path().to_str().unwrap());
    let o = vecgrep(&t, ".", &["-c", "--threshold", "-1", "code"]);
    assert!(stdout(&o).lines().all(|l| l.rsplit_once(':').unwrap().1.parse::<u32>().is_ok()), "{}", stdout(&o));
    let o = vecgrep(&t, ".", &["--show-root"]);
    assert_eq!(stdout(&o).trim(), t.path().to_str().unwrap());
    let o = vecgrep(&t, ".", &["--show-root", "--json"]);
    assert_eq!((records(&o)[0]["type"].as_str(), records(&o)[0]["marker"].as_str()), (Some("root"), Some("git")));
    let o = vecgrep(&t, ".", &["--stats"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("files:    4"), "{}", stdout(&o));
    // A project never indexed holds nothing: no share of nothing is shown.
    let empty = Tree::git();
    let o = vecgrep(&empty, ".", &["--stats"]);
    assert!(stdout(&o).contains("vectors:  none: the index holds no chunks"), "{}", stdout(&o));
}

#[test]
fn index_only_reindex_and_clear_cache() {
    let t = sample_project();
    let o = vecgrep(&t, ".", &["--index-only", "."]);
    assert_code(&o, 0);
    assert!(t.path().join(".vecgrep/index.db").exists());
    // It stops there: its records are the run's, no hit follows.
    let types: Vec<serde_json::Value> = records(&o).iter().map(|r| r["type"].clone()).collect();
    assert!(types.iter().all(|t| t != "hit") && types.contains(&"summary".into()), "{}", stdout(&o));
    let o = vecgrep(&t, ".", &["--clear-cache"]);
    assert_code(&o, 0);
    assert!(!t.path().join(".vecgrep/index.db").exists());
    let o = vecgrep(&t, ".", &["-l", "read settings from a toml file"]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().next(), Some("src/config.py"));
    // Without a query every argument is a path.
    std::fs::remove_file(t.path().join("src/config.py")).unwrap();
    let o = vecgrep(&t, ".", &["--index-only", "src"]);
    assert_code(&o, 0);
    let o = vecgrep(&t, ".", &["--stats"]);
    assert!(stdout(&o).contains("files:    3"), "{}", stdout(&o));
}

#[test]
fn exit_codes_propagate() {
    let t = sample_project();
    let o = vecgrep(&t, ".", &["--threshold", "0.99", "retry an upload"]);
    assert_code(&o, 1);
    let elsewhere = Tree::bare();
    let o = run(t.cmd("vecgrep", ".").arg("query").arg(elsewhere.path()));
    assert_code(&o, 2);
    assert!(stderr(&o).starts_with("vecgrep: "), "{}", stderr(&o));
    let o = vecgrep(&t, ".", &[]);
    assert_code(&o, 2);
}

/// An error is one line under the name of the tool the user ran, with its
/// cause once.
#[test]
fn errors_name_the_tool_run_and_say_the_cause_once() {
    let t = sample_project();
    let o = vecgrep(&t, ".", &["retry", "nope/"]);
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim(), "vecgrep: 'nope/': No such file or directory (os error 2)");
    let o = run(t.cmd("vg-query", ".").args(["retry", "nope/"]));
    assert_eq!(stderr(&o).trim(), "vg-query: 'nope/': No such file or directory (os error 2)");
    // A working directory removed under the shell: said once, not by each tool.
    std::fs::create_dir(t.path().join("gone")).unwrap();
    let cmd = t.cmd("vecgrep", ".");
    let mut shell = Command::new("sh");
    shell.current_dir(t.path()).args(["-c", "cd gone && rmdir ../gone && exec \"$0\" retry"]).arg(cmd.get_program());
    shell.envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let o = run(&mut shell);
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim(), "vecgrep: cannot read the current directory: No such file or directory (os error 2)");
}

#[test]
fn a_closed_pipe_is_success() {
    use std::io::Read;
    use std::process::Stdio;
    let t = sample_project();
    let mut child = t
        .cmd("vecgrep", ".")
        .args(["--threshold", "-1", "-k", "100", "--json", "code"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut byte = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut byte).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

/// A reader that leaves with more than a pipe holds still unread
/// (`vecgrep … | head -1`): the porcelain exits 0 rather than waiting for
/// ever on a search stage blocked writing to a pipe it kept open itself.
#[test]
fn a_reader_gone_before_a_pipes_worth_is_read_ends_the_run() {
    use std::io::Read;
    use std::process::Stdio;
    let t = Tree::git();
    for i in 0..120 {
        let body: String = (0..20)
            .map(|j| format!("fn retry_upload_{i}_{j}() {{ println!(\"retry upload attempt {j}\"); }}\n"))
            .collect();
        t.write(&format!("src/f{i}.rs"), &body);
    }
    let mut child = t
        .cmd("vecgrep", ".")
        .args(["--threshold", "-1", "-k", "1000", "retry upload"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut byte = [0u8; 1];
    let mut out = child.stdout.take().unwrap();
    out.read_exact(&mut byte).unwrap();
    drop(out);
    // Seconds when it works; without end when it does not.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("vecgrep still ran two minutes after its reader left");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// A full disk (`/dev/full`) is an error naming stdout, from the porcelain
/// and from each tool that writes records.
#[test]
fn a_failed_write_names_stdout() {
    let t = sample_project();
    for (tool, args) in [
        ("vecgrep", &["retry"][..]),
        ("vg-query", &["retry"]),
        ("vg-index", &["--stats"]),
        ("vg-root", &[]),
        ("vecgrep", &["--help"]),
        ("vg-format", &["-h"]),
        ("vg-query", &["--version"]),
    ] {
        let o = run(t.cmd(tool, ".").args(args).stdout(std::fs::File::create("/dev/full").unwrap()));
        assert_code(&o, 2);
        let says = format!("{tool}: cannot write to stdout: No space left on device (os error 28)\n");
        assert_eq!(stderr(&o), says, "{tool}");
    }
}

#[test]
fn clear_cache_uses_the_root_chosen_by_the_path() {
    let cwd = Tree::bare();
    let t = sample_project();
    let o = run(t.cmd("vecgrep", ".").args(["--index-only"]));
    assert_code(&o, 0);
    let o = run(cwd.cmd("vecgrep", ".").arg("--clear-cache").arg(t.path()));
    assert_code(&o, 0);
    assert!(!t.path().join(".vecgrep/index.db").exists());
}

#[test]
fn sigterm_sent_to_vecgrep_alone_reaches_its_tools() {
    // As `timeout` and service managers send it: to vecgrep, not its group.
    signal_sent_to_vecgrep_alone_reaches_its_tools("-TERM");
}

/// `kill -INT` of vecgrep's process id (a script's, an editor's): its
/// tools stop as on Ctrl-C; before, vecgrep waited while the run went on.
#[test]
fn sigint_sent_to_vecgrep_alone_reaches_its_tools() {
    signal_sent_to_vecgrep_alone_reaches_its_tools("-INT");
}

fn signal_sent_to_vecgrep_alone_reaches_its_tools(signal: &str) {
    let t = handlers_project(800);
    let mut child = t
        .cmd("vecgrep", ".")
        .args(["--full", "-q", "retry an upload", "."])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signal once the index run has written some files and has more to do.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let stats = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
        let files = records(&stats).first().and_then(|r| r["files"].as_u64()).unwrap_or(0);
        if files > 0 {
            assert!(files < 804, "the run ended before the signal");
            break;
        }
        assert!(std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(), "no run under way");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let signalled = std::time::Instant::now();
    assert!(Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success());
    // The tool stops within a few chunks and says what it kept; vecgrep waits for it.
    let out = child.wait_with_output().unwrap();
    let took = signalled.elapsed();
    assert_eq!(out.status.code(), Some(130), "{signal}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(took < std::time::Duration::from_secs(30), "vecgrep took {took:?} to end after {signal}");
    let stats = records(&run(t.cmd("vg-index", ".").args(["--verify", "--json"])));
    assert_eq!(stats[0]["ok"], true, "the index is sound");
    assert!(stats[0]["files"].as_u64().unwrap() < 804, "the run stopped early: {}", stats[0]);
}

/// `kill -9` of vecgrep (what an editor does to the last search at each
/// key): its tools stop too, rather than running on as orphans that hold
/// the lock the next search waits for.
#[test]
fn the_tools_end_when_vecgrep_is_killed() {
    let t = handlers_project(800);
    let mut child = t
        .cmd("vecgrep", ".")
        .args(["--full", "-q", "retry an upload", "."])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let children_of = |pid: u32| -> Vec<u32> {
        let listed = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        listed.split_whitespace().map(|p| p.parse().unwrap()).collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let tools = loop {
        let tools = children_of(child.id());
        if tools.len() == 2 {
            break tools;
        }
        assert!(std::time::Instant::now() < deadline, "vecgrep never ran its two tools: {tools:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // Killed once the index run is under way, not before it made the index
    // (on a loaded machine the tools can take seconds to get there).
    let stats =
        || records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"]))).first().cloned().unwrap_or_default();
    while stats()["complete"] != false {
        assert!(std::time::Instant::now() < deadline, "the index run never began: {}", stats());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // A tool that has ended is gone or a zombie its new parent has yet to reap.
    let running = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(") ").next().is_some_and(|rest| !rest.starts_with('Z')))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tools.iter().any(running) {
        assert!(std::time::Instant::now() < deadline, "a tool still runs 30 s after vecgrep was killed: {tools:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let stats = stats();
    assert_eq!(stats["complete"], false, "the run stopped with vecgrep: {stats}");
    let stats = records(&run(t.cmd("vg-index", ".").args(["--verify", "--json"])));
    assert_eq!(stats[0]["ok"], true, "the index is sound");
}

/// Ctrl-C reaches the whole process group: the tools it kills (vg-format,
/// which has no handler) were the user's to stop, and are not reported as
/// killed.
#[test]
fn ctrl_c_to_the_group_ends_vecgrep_with_130_and_names_no_killed_tool() {
    use std::os::unix::process::CommandExt;
    let t = handlers_project(800);
    let mut child = t
        .cmd("vecgrep", ".")
        .args(["--full", "retry an upload", "."])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while records(&run(t.cmd("vg-index", ".").args(["--stats", "--json"])))
        .first()
        .and_then(|r| r["files"].as_u64())
        .unwrap_or(0)
        == 0
    {
        assert!(std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(), "no run under way");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let group = format!("-{}", child.id());
    assert!(Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted after") && !err.contains("killed by signal"), "{err}");
}

#[test]
fn a_config_error_is_said_once_by_a_pipeline_of_tools() {
    let t = sample_project();
    t.global_config("llm_url = \"http://127.0.0.1:9/v1\"\ntop_k = 0\n");
    for mode in [&["--answer"][..], &[], &["--log"]] {
        let o = run(t.cmd("vecgrep", ".").args(mode).arg("retry"));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{mode:?}: {err}");
        assert!(err.starts_with("vecgrep: config ") && err.contains("line 2: top_k"), "{mode:?}: {err}");
    }
    // What the porcelain tells the tools after the first is no word of the user's environment.
    let o = run(t.cmd("vecgrep", ".").arg("retry").env("VECGREP_CONFIG_NOTED", "1"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("line 2: top_k"), "{}", stderr(&o));
}

#[test]
fn a_flag_no_tool_of_the_mode_takes_is_refused_not_passed_over() {
    let t = sample_project();
    for (args, flag, mode) in [
        (&["--log", "-t", "rust", "retry"][..], "--type", "with --log"),
        (&["--log", "--changed-within", "1d", "retry"], "--changed-within", "with --log"),
        (&["--log", "--no-scope", "retry"], "--no-scope", "with --log"),
        (&["--log", "-C", "2", "retry"], "--context", "with --log"),
        (&["--log", "-A", "1", "retry"], "--after-context", "with --log"),
        (&["--serve", "--json"], "--json", "with --serve"),
        (&["--mcp", "-l"], "--files-with-matches", "with --mcp"),
        (&["--stats", "-t", "py"], "--type", "with --stats"),
        // A plan searches nothing: no filter, count or index flag shapes it.
        (&["--plan", "-t", "rust", "retry"], "--type", "with --plan"),
        (&["--plan", "-k", "7", "retry"], "--top-k", "with --plan"),
        (&["--plan", "--no-index", "retry"], "--no-index", "with --plan"),
        (&["--plan", "--hidden", "retry"], "--hidden", "with --plan"),
        (&["--plan", "--max-filesize", "3", "retry"], "--max-filesize", "with --plan"),
    ] {
        let o = run(t.cmd("vecgrep", ".").args(args));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).trim(), format!("vecgrep: {flag} does nothing {mode}; leave it out"), "{args:?}");
    }
    // A flag of some modes names them, and --log among those it is not for.
    let o = run(t.cmd("vecgrep", ".").args(["--log", "--label", "main", "retry"]));
    assert_code(&o, 2);
    let says =
        "vecgrep: --label needs a search of the files, --index-only or --clear-cache (not --log, --ask, -i or a server)";
    assert_eq!(stderr(&o).trim(), says);
    // What every mode takes, a script may pass to each.
    assert_code(&run(t.cmd("vecgrep", ".").args(["--show-root", "-q", "--color", "never"])), 0);
    // And their twins: `alias vg='vecgrep -q'`, then `vg --no-quiet --show-root`.
    assert_code(&run(t.cmd("vecgrep", ".").args(["--show-root", "-q", "--no-quiet"])), 0);
    // What shapes a plan is still taken.
    let o = run(t.cmd("vecgrep", ".").args(["--plan", "--json", "--mode", "semantic", "--threshold", "0.4", "retry"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["l1_threshold"], 0.4, "{}", stdout(&o));
}

/// Where every argument is a PATH, the first may be any bytes, as the
/// others may; where it is the query, it must be text, and is said so.
#[test]
fn a_first_path_that_is_not_utf8_is_a_path_and_a_query_that_is_not_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let t = sample_project();
    let elsewhere = tempfile::tempdir().unwrap();
    let odd = elsewhere.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&odd).unwrap();
    for paths in [[odd.as_os_str(), "src".as_ref()], ["src".as_ref(), odd.as_os_str()]] {
        let o = run(t.cmd("vecgrep", ".").args(["--show-root", "--skip-outside-root"]).args(paths));
        assert_code(&o, 0);
        assert_eq!(stdout(&o).trim(), t.path().canonicalize().unwrap().to_str().unwrap(), "{}", stderr(&o));
        assert!(stderr(&o).contains("skipping"), "{}", stderr(&o));
        // -q silences the note that vg-root gives for the porcelain, as does the config's quiet.
        let o = run(t.cmd("vecgrep", ".").args(["--show-root", "--skip-outside-root", "-q"]).args(paths));
        assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(0), ""));
        t.global_config("quiet = true\n");
        let o = run(t.cmd("vg-root", ".").arg("--skip-outside-root").args(paths));
        assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(0), ""));
        let o = run(t.cmd("vg-root", ".").args(["--skip-outside-root", "--no-quiet"]).args(paths));
        assert!(stderr(&o).contains("skipping"), "{}", stderr(&o));
        t.global_config("");
    }
    let o = run(t.cmd("vecgrep", ".").arg(std::ffi::OsStr::from_bytes(b"caf\xe9 menu")));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).trim(), "vecgrep: the QUERY is not valid UTF-8");
}

/// Audit 180: a search took `--privacy-mode` only through vg-query; the
/// porcelain refused it ("needs --answer or --ask"), though its help says
/// a search given it refuses an embedding server off this machine.
#[test]
fn a_search_takes_the_privacy_mode_and_refuses_an_embedder_elsewhere() {
    let t = sample_project();
    // 192.0.2.1 answers no one: a request sent there would wait out its timeouts.
    let remote = ["--embedder-source", "remote", "--embedder-url", "http://192.0.2.1:9/v1/embeddings"];
    let o = vecgrep(&t, ".", &[&["--privacy-mode", "local_only"][..], &remote, &["retry an upload"]].concat());
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vecgrep: privacy_mode local_only: the embedding server at 192.0.2.1"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = vecgrep(&t, ".", &["--privacy-mode", "local_only", "-l", "retry an upload when the connection fails"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("upload.py"), "{}", stdout(&o));
    let o = vecgrep(&t, ".", &["--log", "--privacy-mode", "local_only", "retry"]);
    assert_code(&o, 2);
    let needs = "--privacy-mode needs a search of the files (not --log, -i or a server), --answer or --ask";
    assert!(stderr(&o).contains(needs), "{}", stderr(&o));
}

/// A value that starts with `-`, given as the next word, is the option's
/// value, as git and getopt take it (audit 269: `--author -bob` and
/// `--token -Xk…` were refused as unknown flags, with a tip that failed).
#[test]
fn a_value_starting_with_a_hyphen_is_the_options_value() {
    let t = git_repo();
    t.write("a.rs", "fn retry_upload() {}\n");
    git(&t, &["add", "-A"]);
    git(&t, &["-c", "user.name=-bob", "-c", "user.email=b@example.org", "commit", "-q", "-m", "Retry uploads"]);
    let o = vecgrep(&t, ".", &["--log", "--threshold", "-1", "--author", "-bob", "retry uploads"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("-bob: Retry uploads"), "{}", stdout(&o));
    let o = vecgrep(&t, ".", &["-g", "-nothing*", "--threshold", "-1", "retry upload"]);
    assert_code(&o, 1);
}
