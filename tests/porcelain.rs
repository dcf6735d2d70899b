//! vecgrep: the one-shot CLI wired from the vg-* tools.

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
    let o = vecgrep(&t, ".", &["--stats"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("files:    4"), "{}", stdout(&o));
}

#[test]
fn index_only_reindex_and_clear_cache() {
    let t = sample_project();
    let o = vecgrep(&t, ".", &["--index-only", "."]);
    assert_code(&o, 0);
    assert!(t.path().join(".vecgrep/index.db").exists());
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
