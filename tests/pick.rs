//! vg-pick and `vecgrep -i`, driven in a real terminal: tmux runs the picker
//! in a detached session, send-keys types, capture-pane reads the screen.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;

/// A picker running in its own tmux server (a private socket, so tests in
/// parallel and the user's own tmux never meet).
struct Picker {
    socket: String,
    /// Where the wrapper shell writes the picker's exit status.
    status_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Picker {
    /// Run `tool args` in `t` (cwd: the tree root) on a 150x30 terminal.
    fn start(t: &Tree, tool: &str, args: &[&str]) -> Picker {
        Self::start_with(t, tool, args, &[])
    }

    /// `start` with more of the environment.
    fn start_with(t: &Tree, tool: &str, args: &[&str], env: &[(&str, &Path)]) -> Picker {
        Self::start_reading(t, tool, args, env, None)
    }

    /// `start_with`, its stdin read from `input` rather than the terminal.
    fn start_reading(t: &Tree, tool: &str, args: &[&str], env: &[(&str, &Path)], input: Option<&Path>) -> Picker {
        let dir = tempfile::tempdir().unwrap();
        let status_file = dir.path().join("status");
        let socket =
            format!("vg-pick-test-{}-{}", std::process::id(), dir.path().file_name().unwrap().to_string_lossy());
        let extra: String = env.iter().map(|(k, v)| format!("{k}={} ", quote(v))).collect();
        let mut command = format!(
            "cd {} && env -u VISUAL -u EDITOR -u NO_COLOR XDG_CONFIG_HOME={} {extra}{}",
            quote(&t.path()),
            quote(t.config_home.path()),
            quote(&bin(tool))
        );
        for a in args {
            command.push(' ');
            command.push_str(&quote(Path::new(a)));
        }
        if let Some(input) = input {
            command.push_str(&format!(" < {}", quote(input)));
        }
        command.push_str(&format!("; echo $? > {}; sleep 600", quote(&status_file)));
        let ok = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d", "-x", "150", "-y", "30", &command])
            .env_remove("TMUX")
            .status()
            .expect("tmux is needed for the picker tests (scripts/test.sh installs it)");
        assert!(ok.success());
        Picker { socket, status_file, _dir: dir }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux").arg("-L").arg(&self.socket).args(args).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        self.tmux(&args);
    }

    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-l", text]);
    }

    /// Wait until `ready` holds for the screen; returns that screen.
    fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; the screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The picker's exit status, once it has exited.
    fn exit_status(&self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.status_file) {
                if !s.trim().is_empty() {
                    return s.trim().parse().unwrap();
                }
            }
            assert!(Instant::now() < deadline, "the picker did not exit; the screen:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Picker {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
    }
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"))
}

/// The result rows: in the reversed layout they follow the prompt, info and status lines.
fn rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| l.split('│').next().unwrap_or("").trim().to_string())
        .filter(|l| l.contains(".py:") || l.contains(".md:") || l.contains(".rs:"))
        .collect()
}

#[test]
fn typing_a_query_puts_the_right_file_on_top_and_enter_opens_it() {
    let t = sample_project();
    let opened = t.path().join("opened.txt");
    let cmd = format!("echo {{file}}:{{line}} > {}", quote(&opened));
    let p = Picker::start(&t, "vg-pick", &["--open-cmd", &cmd]);
    p.wait_for("the ready status line", |s| s.contains("ready · ") && s.contains("scope everything"));
    p.type_text("retry a failed upload");
    let screen = p.wait_for("results and the preview", |s| !rows(s).is_empty() && s.contains('▌'));
    assert!(rows(&screen)[0].starts_with("> src/upload.py:"), "the upload code first:\n{screen}");
    assert!(screen.contains("time.sleep(2 ** attempt)"), "the preview shows the file:\n{screen}");
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    // The line its row shows, the best match, not the chunk's first.
    assert_eq!(read(&opened).trim(), "src/upload.py:10");
}

/// `vecgrep -i --color never` draws no colours: the picker takes no
/// `--color`, and the flag was taken and passed over.
#[test]
fn vecgrep_i_color_never_draws_no_colours() {
    let t = sample_project();
    let coloured = |args: &[&str]| {
        let p = Picker::start(&t, "vecgrep", &[&["-i", "--query", "bake bread"][..], args].concat());
        p.wait_for("results", |s| !rows(s).is_empty() && s.contains("ready"));
        let screen = p.tmux(&["capture-pane", "-p", "-e"]);
        p.keys(&["Escape"]);
        assert_eq!(p.exit_status(), 130);
        screen.contains("\u{1b}[38;5")
    };
    assert!(coloured(&[]), "the picker colours by default");
    assert!(!coloured(&["--color", "never"]));
}

/// What the index runs say while the picker holds the terminal is counted
/// on its status line and said once it closes: a skip (a link loop), a
/// damaged index rebuilt, went unsaid.
#[test]
fn what_the_index_runs_say_is_said_when_the_picker_closes() {
    let t = sample_project();
    std::os::unix::fs::symlink("loop", t.path().join("loop")).unwrap();
    let p = Picker::start(&t, "vg-pick", &["-L"]);
    p.wait_for("the note counted", |s| s.contains("ready · ") && s.contains("1 note from the index"));
    p.keys(&["Escape"]);
    assert_eq!(p.exit_status(), 130);
    let screen = p.wait_for("the note said", |s| s.contains("vg-pick: skipping loop"));
    assert!(!screen.contains("vg-pick: index: "), "a run's report is no news: {screen}");
}

/// The editor reads the terminal though the picker's stdin is a pipe
/// (`rg -l x | xargs vg-pick`, as the man page shows): it got the pipe,
/// and nano refused to start.
#[test]
fn the_open_command_reads_the_terminal_when_the_pickers_stdin_is_a_pipe() {
    let t = sample_project();
    let opened = t.path().join("opened.txt");
    let cmd = format!("if [ -t 0 ]; then echo terminal {{file}}; else echo pipe {{file}}; fi > {}", quote(&opened));
    let p = Picker::start_reading(&t, "vg-pick", &["--open-cmd", &cmd], &[], Some(Path::new("/dev/null")));
    p.wait_for("the ready status line", |s| s.contains("ready · "));
    p.type_text("retry a failed upload");
    p.wait_for("results", |s| !rows(s).is_empty());
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert_eq!(read(&opened).trim(), "terminal src/upload.py");
}

#[test]
fn vecgrep_i_starts_with_a_query_and_paths_and_esc_quits_with_130() {
    let t = sample_project();
    let p = Picker::start(&t, "vecgrep", &["-i", "--query", "bake bread", "docs", "src"]);
    // The scope shows once the fill is done: until then the count of chunks
    // with the model's vectors takes the status line's room.
    let screen = p.wait_for("results for the initial query and the scope", |s| {
        !rows(s).is_empty() && s.contains("ready") && s.contains("scope docs src")
    });
    assert!(rows(&screen)[0].contains("docs/guide.md:"), "{screen}");
    p.keys(&["Escape"]);
    assert_eq!(p.exit_status(), 130);
}

/// SIGTERM, SIGINT or SIGHUP to an open picker closes its screen as Esc
/// does: ended at once, it left the terminal in the alternate screen with
/// mouse reporting on, and after --full-index (whose handler ended the
/// process) in raw mode with no echo.
#[test]
fn a_signal_closes_the_picker_and_gives_the_terminal_back() {
    for (args, signal) in [(&[][..], "TERM"), (&["--full-index"][..], "TERM"), (&["--full-index"][..], "HUP")] {
        let t = sample_project();
        let p = Picker::start(&t, "vg-pick", args);
        p.wait_for("the ready status line", |s| s.contains("ready · "));
        let shell = p.tmux(&["display", "-p", "#{pane_pid}"]);
        let killed = Command::new("pkill").args([&format!("-{signal}"), "-x", "-P", shell.trim(), "vg-pick"]).status();
        assert!(killed.unwrap().success(), "{args:?}: no picker to signal");
        assert_eq!(p.exit_status(), 130, "{args:?} {signal}");
        let modes = p.tmux(&["display", "-p", "#{alternate_on} #{mouse_any_flag}"]);
        assert_eq!(modes.trim(), "0 0", "{args:?} {signal}: the screen's modes are left on");
    }
}

/// The preview follows the row under the cursor when the list is replaced
/// under it: with the cursor down the list and a new query of fewer rows,
/// the old file stayed beside the new row; an empty list kept it too.
#[test]
fn the_preview_follows_the_list_when_a_new_query_replaces_it() {
    let t = Tree::git();
    for i in 0..10 {
        t.write(&format!("tax{i}.py"), &format!("def compute_tax_{i}(amount):\n    \"\"\"Compute the tax owed on an amount in region {i}.\"\"\"\n    return amount * 0.{i}\n"));
    }
    t.write(
        "kitchen/bread.py",
        "def bake(loaf):\n    \"\"\"Bake sourdough bread with a starter in a hot oven.\"\"\"\n    return loaf.bake()\n",
    );
    let p = Picker::start(&t, "vg-pick", &[]);
    p.wait_for("the ready status line", |s| s.contains("ready · "));
    p.type_text("compute the tax owed");
    p.wait_for("results", |s| rows(s).len() >= 8 && s.contains("▌"));
    p.keys(&["Down", "Down", "Down", "Down", "Down", "Down"]);
    std::thread::sleep(Duration::from_millis(500));
    p.keys(&["C-u"]);
    p.type_text("bake sourdough bread");
    // The preview is what follows the pane's border: the prompt on the same
    // row says "sourdough" while the old file is still previewed beside it.
    let preview_says = |s: &str, text: &str| {
        s.lines().filter_map(|l| l.split_once('│')).any(|(_, shown)| shown.contains('▌') && shown.contains(text))
    };
    p.wait_for("one row", |s| rows(s).len() == 1 && rows(s)[0].contains("kitchen/bread.py"));
    let screen = p.wait_for("the bread previewed", |s| preview_says(s, "sourdough"));
    assert!(!preview_says(&screen, "compute_tax"), "{screen}");
    p.keys(&["Escape"]);
    assert_eq!(p.exit_status(), 130);
}

/// A new query's results start at its best: the cursor kept the row it
/// had moved to, and Enter opened a lower hit of the new list.
#[test]
fn a_new_querys_results_start_at_the_best() {
    let t = Tree::git();
    for (name, body) in [
        ("invoice_total", "Sum the lines of an invoice into its total."),
        ("send_email", "Send an email through the mail relay."),
        ("hash_user_password", "Hash a user's password with a salt before storing it."),
        ("resize_image", "Scale an image down to fit a thumbnail."),
        ("parse_json", "Parse a JSON document into a tree of values."),
    ] {
        t.write(&format!("{name}.py"), &format!("def {name}(x):\n    \"\"\"{body}\"\"\"\n    return x\n"));
    }
    let opened = t.path().join("opened.txt");
    let cmd = format!("echo {{file}} > {}", quote(&opened));
    let p = Picker::start(&t, "vg-pick", &["--open-cmd", &cmd, "--threshold", "-1"]);
    p.wait_for("the ready status line", |s| s.contains("ready · "));
    p.type_text("invoice total");
    p.wait_for("results", |s| rows(s).len() >= 4);
    p.keys(&["Down", "Down", "Down"]);
    std::thread::sleep(Duration::from_millis(500));
    p.keys(&["C-u"]);
    p.type_text("hash a user password");
    p.wait_for("the new list", |s| rows(s).first().is_some_and(|r| r.contains("hash_user_password.py")));
    std::thread::sleep(Duration::from_millis(500));
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert_eq!(read(&opened).trim(), "hash_user_password.py");
}

/// While another run holds the project's lock, the status line says the
/// picker waits for it: it said "indexing: walking" all the wait.
#[test]
fn the_status_line_says_the_picker_waits_for_another_run() {
    let t = sample_project();
    assert_code(&run(t.cmd("vg-index", ".").stdout(std::process::Stdio::null())), 0);
    let lock = hold_index_lock(&t);
    t.write("src/new.py", "def new_thing():\n    return 1\n");
    let p = Picker::start(&t, "vg-pick", &["new thing"]);
    p.wait_for("the waiting status line", |s| s.contains("waiting for another index run · "));
    drop(lock);
    p.wait_for("the ready status line", |s| s.contains("ready · "));
    p.keys(&["Escape"]);
    assert_eq!(p.exit_status(), 130);
}

/// Ctrl-C during --full-index's run stops it, and the picker is not opened.
#[test]
fn ctrl_c_while_full_index_runs_stops_without_opening_the_picker() {
    let t = sample_project();
    many_files(&t, 300);
    let p = Picker::start(&t, "vg-pick", &["--full-index"]);
    p.wait_for("the index run's progress", |s| s.contains("vg-pick: indexing"));
    p.keys(&["C-c"]);
    assert_eq!(p.exit_status(), 130);
    assert!(!p.screen().contains("vecgrep>"), "the picker opened:\n{}", p.screen());
}

#[test]
fn results_come_while_indexing_and_quitting_leaves_the_index_consistent() {
    let t = sample_project();
    // Larger than the sample files, which a live run therefore embeds first.
    for i in 0..600 {
        let handlers: String = (0..4)
            .map(|j| {
                format!("def handler_{i}_{j}(request):\n    return request.reply({i}, 'handled request {i}.{j}')\n\n")
            })
            .collect();
        t.write(&format!("zz/mod{i:03}.py"), &handlers);
    }
    // Embedding fully, so that indexing lasts (a static run is over at once).
    let p = Picker::start(&t, "vg-pick", &["--full"]);
    p.wait_for("the indexing status", |s| s.contains("indexing "));
    p.type_text("retry a failed upload");
    // The sample files, the smallest, are found while the rest is indexed.
    let screen = p.wait_for("results", |s| !rows(s).is_empty());
    assert!(rows(&screen)[0].contains("src/upload.py:"), "{screen}");
    assert!(screen.contains("indexing "), "the results came after indexing ended, not during it:\n{screen}");
    let during = p.screen();
    p.keys(&["C-c"]);
    assert_eq!(p.exit_status(), 130);
    // The next run accepts what was written and completes it.
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["files"], 604, "{during}");
    let stats = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    assert_eq!(records(&stats)[0]["files"], 604);
}

#[test]
fn a_file_name_is_never_run_by_the_open_command() {
    // A repository chooses its own file names; the user's template quotes
    // `{file}` as people do. The name is opened as it is, and runs nothing.
    let t = Tree::git();
    let name = "src/up $(touch pwned) `touch pwned2`.py";
    t.write(name, &read(&sample_project().path().join("src/upload.py")));
    let opened = t.path().join("opened.txt");
    let cmd = format!("printf '%s:%s' \"{{file}}\" {{line}} > {}", quote(&opened));
    let p = Picker::start(&t, "vg-pick", &["--open-cmd", &cmd, "--query", "retry upload"]);
    p.wait_for("results", |s| !rows(s).is_empty());
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert_eq!(read(&opened), format!("{name}:4"));
    assert!(!t.path().join("pwned").exists() && !t.path().join("pwned2").exists(), "the name ran a command");
}

/// Audit 182: an editor variable is the user's own shell text, `$(…)` and
/// all (git runs it so): it was refused after the pick, the error blaming
/// open_cmd; one whose quoting is broken is now refused before the picker,
/// by its name.
#[test]
fn an_editor_variable_runs_as_shell_text_and_a_broken_one_is_named() {
    let t = Tree::git();
    let name = "src/up $(touch pwned).py";
    t.write(name, &read(&sample_project().path().join("src/upload.py")));
    let opened = t.path().join("opened.txt");
    let visual = format!("$(echo printf) '%s:%s' > {}", quote(&opened));
    let p = Picker::start_with(&t, "vg-pick", &["--query", "retry upload"], &[("VISUAL", Path::new(&visual))]);
    p.wait_for("results", |s| !rows(s).is_empty());
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert_eq!(read(&opened), format!("+4:{name}"));
    assert!(!t.path().join("pwned").exists(), "the name ran a command");
    let p = Picker::start_with(&t, "vg-pick", &["--query", "retry upload"], &[("EDITOR", Path::new("vi \"+"))]);
    assert_eq!(p.exit_status(), 2);
    let screen = p.screen();
    assert!(screen.contains("vg-pick: EDITOR: the command ends inside quotes"), "{screen}");
    // One that fails is named as the user wrote it (audit 260: by the
    // template made of it, `{line}` unfilled).
    let p = Picker::start_with(&t, "vg-pick", &["--query", "retry upload"], &[("EDITOR", Path::new("false"))]);
    p.wait_for("results", |s| !rows(s).is_empty());
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 2);
    let said = p.wait_for("the failure said", |s| s.contains("failed (exit status: 1)"));
    assert!(said.contains(&format!("vg-pick: EDITOR \"false\" on {name:?} at line 4 failed")), "{said}");
}

#[test]
fn an_open_command_whose_quoting_cannot_be_followed_is_refused_before_the_picker() {
    let t = sample_project();
    let p = Picker::start(&t, "vg-pick", &["--open-cmd", "vi \"$(dirname {file})\"", "--query", "retry upload"]);
    assert_eq!(p.exit_status(), 2);
    let screen = p.screen();
    assert!(screen.contains("vg-pick: open_cmd: a {file} after $(…)"), "{screen}");
}

#[test]
fn a_query_too_long_is_said_to_be_too_long() {
    let t = sample_project();
    let long = "a".repeat(5000);
    let p = Picker::start(&t, "vg-pick", &[&long]);
    let screen = p.wait_for("the refusal", |s| s.contains("the query is 5000 bytes"));
    assert!(!screen.contains("unavailable"), "not the model's absence:\n{screen}");
}

#[test]
fn a_projects_own_open_cmd_is_not_run_unless_allowed() {
    let t = sample_project();
    let marker = t.path().join("pwned");
    t.project_config(&format!("open_cmd = \"touch {}\"\n", marker.display()));
    // Not allowed: the picked result is printed instead, and the user is told why.
    let p = Picker::start(&t, "vg-pick", &["--query", "retry upload"]);
    p.wait_for("results", |s| !rows(s).is_empty());
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    // Back on the normal screen: the note from before the picker, then what Enter printed.
    let screen = p.screen();
    assert!(screen.contains("vg-pick: ignoring open_cmd of"), "{screen}");
    assert!(screen.contains("src/upload.py:4"), "{screen}");
    assert!(!marker.exists(), "the project's command ran");
    drop(p);
    // Trusted on the command line: it runs.
    let p = Picker::start(&t, "vg-pick", &["--trust-project-config", "--query", "retry upload"]);
    p.wait_for("results", |s| !rows(s).is_empty());
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert!(marker.exists(), "the allowed command did not run");
}

#[test]
fn without_a_terminal_the_picker_refuses_with_one_line() {
    let t = sample_project();
    let o = run(&mut t.cmd("vg-pick", "."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-pick: the picker needs a terminal"), "{err}");
    assert_eq!(err.lines().count(), 1);
    // A terminal on stderr but no controlling one (a new session): said so,
    // not that stderr is no terminal.
    let line = format!("setsid -w {} .", bin("vg-pick").display());
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"]).current_dir(t.path()).env("XDG_CONFIG_HOME", t.path().join(".none"));
    let o = run(&mut cmd);
    let out = stdout(&o);
    assert!(out.contains("vg-pick: the picker needs a controlling terminal (cannot open /dev/tty"), "{out:?}");
}

#[test]
fn several_marked_results_are_printed_and_the_preview_toggles() {
    let t = sample_project();
    // --full-index: the index is complete before the picker opens.
    let p = Picker::start(&t, "vg-pick", &["--full-index", "--threshold", "-1", "--query", "retry upload"]);
    // The preview (which marks the hit's lines) is drawn a moment after the rows.
    let screen = p.wait_for("results and the preview", |s| rows(s).len() >= 2 && s.contains('▌'));
    assert!(screen.contains("ready · "), "{screen}");
    p.keys(&["F2"]);
    p.wait_for("the preview to close", |s| !s.contains('▌'));
    p.keys(&["F2"]);
    p.wait_for("the preview to open again", |s| s.contains('▌'));
    let first = rows(&screen)[0].trim_start_matches("> ").split_whitespace().next().unwrap().to_string();
    let second = rows(&screen)[1].trim_start_matches("> ").split_whitespace().next().unwrap().to_string();
    p.keys(&["Tab"]);
    p.keys(&["Tab"]);
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    let after = p.screen();
    let printed: Vec<&str> = after.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    assert_eq!(printed, vec![first.as_str(), second.as_str()], "both picks printed as path:line, in order:\n{after}");
}

/// A repository's file name is shown on the terminal, never obeyed: its
/// escape sequences (a color, a window title) are printed as `^[`, as
/// vg-format shows them.
#[test]
fn marked_results_print_escape_sequences_as_text() {
    let t = sample_project();
    t.write("src/e\x1b[31mred\x1b]0;TITLE\x07.py", "def retry_upload_escape():\n    pass\n");
    let p = Picker::start(&t, "vg-pick", &["--full-index", "--threshold", "-1", "--query", "retry upload escape"]);
    p.wait_for("results", |s| rows(s).len() >= 2);
    p.keys(&["Tab"]);
    p.keys(&["Tab"]);
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    let after = p.screen();
    assert!(after.contains("src/e^[[31mred^[]0;TITLE^G.py:1"), "{after}");
    assert_ne!(p.tmux(&["display", "-p", "#{pane_title}"]).trim(), "TITLE");
}

/// Issue 42: the picker on a shared index in Postgres, and with that
/// server gone: it once panicked (a database client's runtime started
/// inside the picker's) whenever `store_url` was set.
#[test]
fn the_picker_runs_on_a_shared_index_and_with_its_server_gone() {
    let pg = crate::pg::PgServer::start();
    let t = sample_project();
    t.global_config(&format!("store_url = \"{}\"\n", pg.url));
    let p = Picker::start(&t, "vg-pick", &[]);
    p.wait_for("the chunks counted on the status line", |s| s.contains("ready · ") && !s.contains(" 0 chunks"));
    p.type_text("retry a failed upload");
    let screen = p.wait_for("results", |s| !rows(s).is_empty());
    assert!(rows(&screen)[0].starts_with("> src/upload.py:"), "{screen}");
    p.keys(&["Escape"]);
    assert_eq!(p.exit_status(), 130);
    let gone = "postgres:///vecgrep?host=/nonexistent/socket/dir";
    let p = Picker::start(&t, "vg-pick", &["--store", gone]);
    p.wait_for("the failure on the status line", |s| s.contains("indexing failed: ") && s.contains("connect to"));
    p.keys(&["Escape"]);
    assert_eq!(p.exit_status(), 130);
}

#[test]
fn the_picker_searches_a_catalog_and_opens_a_projects_file() {
    let (t, catalogs) = api_and_billing_catalog();
    let opened = t.path().join("opened.txt");
    let cmd = format!("echo {{file}}:{{line}} > {}", quote(&opened));
    let env = [("VECGREP_CATALOG_DIR", catalogs.as_path())];
    let p = Picker::start_with(&t, "vg-pick", &["--catalog", "team", "--open-cmd", &cmd], &env);
    p.wait_for("the ready status line", |s| s.contains("ready · "));
    p.type_text("email the monthly invoice");
    let screen = p.wait_for("results", |s| !rows(s).is_empty());
    assert!(rows(&screen)[0].starts_with("> src/billing/invoice.py:"), "the project's file, from here:\n{screen}");
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert_eq!(read(&opened).trim(), "src/billing/invoice.py:2");
}

/// A file rewritten with as many chunks as before leaves the list its old
/// text held: the refresh followed the chunk count alone, so the old hit
/// stayed, previewed beside the new text.
#[test]
fn a_file_rewritten_with_as_many_chunks_is_searched_again() {
    let t = sample_project();
    let p = Picker::start(&t, "vg-pick", &[]);
    p.wait_for("the ready status line", |s| s.contains("ready · "));
    p.type_text("area of a circle");
    p.wait_for("the geometry file", |s| s.contains("circle_area"));
    t.write("src/geometry.rs", "pub fn banana() -> &'static str {\n    \"a yellow fruit\"\n}\n");
    p.wait_for("the list searched again", |s| !s.contains("circle_area"));
}

/// The `path:line` of each row, the cursor's (`>`) marked with a `*`.
fn row_keys(screen: &str) -> Vec<String> {
    rows(screen)
        .iter()
        .map(|r| {
            let cursor = r.starts_with('>');
            let key = r.trim_start_matches(['>', ' ']).split_whitespace().next().unwrap_or("").to_string();
            if cursor {
                format!("*{key}")
            } else {
                key
            }
        })
        .collect()
}

/// Audit 182: a refresh of the same query (a file added or edited while the
/// list is open) kept the cursor's row, not its result, so Enter opened
/// whatever had moved into that row; and a mark kept the old result, at a
/// line an edit had since moved, and printed that.
#[test]
fn a_refresh_keeps_the_cursor_and_the_marks_on_what_was_chosen() {
    let db = "import sqlite3\n\ndef connect_database(url):\n    \"\"\"Open a connection to the sqlite database.\"\"\"\n    return 1\n";
    let parse = "def parse_config(path):\n    \"\"\"Read a JSON configuration file.\"\"\"\n";
    let start = || {
        let t = Tree::git();
        t.write("db.py", db);
        t.write("parse.py", parse);
        let p = Picker::start(&t, "vg-pick", &["--threshold", "-1", "--query", "sqlite database connection"]);
        let screen = p.wait_for("both results", |s| row_keys(s).len() == 2);
        assert!(row_keys(&screen)[0].starts_with("*db.py:"), "{screen}");
        (t, p)
    };
    // The cursor on the second row; a better answer arrives above it.
    let (t, p) = start();
    p.keys(&["Down"]);
    let screen = p.wait_for("the cursor on parse.py", |s| row_keys(s).get(1).is_some_and(|k| k.starts_with('*')));
    let chosen = row_keys(&screen)[1].trim_start_matches('*').to_string();
    t.write(
        "aaa.py",
        "def open_sqlite_database_connection(url):\n    \"\"\"Open a connection to the sqlite database.\"\"\"\n",
    );
    let screen = p.wait_for("the new file's row", |s| row_keys(s).len() == 3);
    assert_eq!(row_keys(&screen).iter().find(|k| k.starts_with('*')), Some(&format!("*{chosen}")), "{screen}");
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    assert!(p.screen().lines().any(|l| l.trim() == chosen), "{}", p.screen());
    drop(p);
    // A marked result whose lines an edit moves: the mark follows it.
    let (t, p) = start();
    p.keys(&["Tab"]);
    p.wait_for("the mark", |s| s.contains("[1]") || s.contains("(1)") || rows(s).iter().any(|r| r.contains('+')));
    t.write("db.py", &format!("#\n#\n#\n#\n#\n{db}"));
    let screen = p.wait_for("the moved line", |s| row_keys(s).iter().any(|k| k.contains("db.py:9")));
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 0);
    let after = p.screen();
    let printed: Vec<&str> = after.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    assert_eq!(printed, ["db.py:9"], "before:\n{screen}\nafter:\n{after}");
}

/// Nothing picked after the index could not be made is an error, said,
/// not "nothing found" (audit 254: a `.vecgrep` file in the way of the
/// index exited 1, which a script reads as no match).
#[test]
fn closing_the_picker_after_its_index_failed_is_an_error() {
    let t = sample_project();
    t.write(".vecgrep", "not a directory\n");
    let p = Picker::start(&t, "vg-pick", &[]);
    p.wait_for("the failure shown", |s| s.contains("failed"));
    p.type_text("retry upload");
    std::thread::sleep(std::time::Duration::from_millis(500));
    p.keys(&["Enter"]);
    assert_eq!(p.exit_status(), 2);
    p.wait_for("the failure said", |s| s.contains("vg-pick: indexing failed: cannot create"));
}
