//! Root selection and path admission (spec: PreferCurrentProjectRoot,
//! OtherwiseUseSingleDirectoryCandidate, OtherwiseUseCurrentDirectory,
//! RejectOutsideRootPaths, SkipOutsideRootPaths, FailIfNoPathsRemain).

use std::process::Command;

use crate::common::*;

#[test]
fn prefer_current_project_root_from_a_subdirectory() {
    let t = Tree::git();
    t.write("a/b/x.rs", "fn x() {}\n");
    let o = run(t.cmd("vg-root", "a/b").arg("--json"));
    assert_code(&o, 0);
    let r = &records(&o)[0];
    assert_eq!(r["root"], t.path().to_str().unwrap());
    assert_eq!(r["marker"], "git");
    assert_eq!(r["type"], "root");
    let o = run(&mut t.cmd("vg-root", "a"));
    assert_eq!(stdout(&o).trim(), t.path().to_str().unwrap());
}

#[test]
fn every_marker_is_recognised() {
    for (marker, name) in [(".hg", "hg"), (".jj", "jj"), (".vecgrep", "vecgrep")] {
        let t = Tree::bare();
        std::fs::create_dir(t.path().join(marker)).unwrap();
        std::fs::create_dir(t.path().join("sub")).unwrap();
        let o = run(t.cmd("vg-root", "sub").arg("--json"));
        assert_code(&o, 0);
        assert_eq!(records(&o)[0]["marker"], name);
        assert_eq!(records(&o)[0]["root"], t.path().to_str().unwrap());
    }
}

#[test]
fn cwd_root_wins_over_the_path_root() {
    let outer = Tree::git();
    let other = Tree::bare();
    std::fs::create_dir(other.path().join(".hg")).unwrap();
    // The path lies outside the cwd's root: rejected, because the cwd's root wins.
    let o = run(outer.cmd("vg-root", ".").arg(other.path()));
    assert_code(&o, 2);
    let said = format!("is outside the project root '{}'", outer.path().display());
    assert!(stderr(&o).contains(&said), "the cwd's root, not the path's .hg: {}", stderr(&o));
    // Skipped, the cwd's root is the one printed.
    let o = run(outer.cmd("vg-root", ".").arg(other.path()).arg(".").arg("--skip-outside-root"));
    assert_eq!(stdout(&o).trim(), outer.path().to_str().unwrap(), "{}", stderr(&o));
}

#[test]
fn single_directory_candidate_when_cwd_is_unmarked() {
    let cwd = Tree::bare();
    let project = Tree::bare();
    std::fs::create_dir(project.path().join(".hg")).unwrap();
    project.write("lib/a.py", "x = 1\n");
    let o = run(cwd.cmd("vg-root", ".").arg("--json").arg(project.path().join("lib")));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["root"], project.path().to_str().unwrap());
    assert_eq!(records(&o)[0]["marker"], "hg");
}

#[test]
fn current_directory_when_nothing_is_marked() {
    let t = Tree::bare();
    let o = run(t.cmd("vg-root", ".").arg("--json"));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["root"], t.path().to_str().unwrap());
    assert_eq!(records(&o)[0]["marker"], "none");
}

#[test]
fn outside_paths_are_rejected_naming_path_and_root() {
    let t = Tree::git();
    let elsewhere = Tree::bare();
    let o = run(t.cmd("vg-index", ".").arg(elsewhere.path()));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-index: "), "{err}");
    assert!(err.contains(elsewhere.path().to_str().unwrap()) && err.contains(t.path().to_str().unwrap()), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // `..` that leaves the root is outside too.
    let o = run(t.cmd("vg-root", ".").arg(".."));
    assert_code(&o, 2);
}

#[test]
fn outside_paths_are_skipped_on_request() {
    let t = Tree::git();
    t.write("src/a.rs", "fn a() {}\n");
    let elsewhere = Tree::bare();
    let o = run(t.cmd("vg-root", ".").args(["--skip-outside-root", "src"]).arg(elsewhere.path()));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("skipping"), "{}", stderr(&o));
}

#[test]
fn fail_if_no_paths_remain() {
    let t = Tree::git();
    let elsewhere = Tree::bare();
    let o = run(t.cmd("vg-root", ".").arg("--skip-outside-root").arg(elsewhere.path()));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("every path given is outside"), "{}", stderr(&o));
}

#[test]
fn missing_path_is_an_error() {
    let t = Tree::git();
    let o = run(t.cmd("vg-index", ".").arg("no/such/dir"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no/such/dir"), "{}", stderr(&o));
    // A typo outside the root is said to be missing, not outside: moving
    // the root would not help.
    let typo = Tree::bare().path().join("typo");
    let o = run(t.cmd("vg-root", ".").arg(&typo));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("typo") && err.contains("No such file") && !err.contains("outside"), "{err}");
    // One reached through a link into the root is inside it, and missing,
    // under --skip-outside-root too (it was skipped as outside).
    let elsewhere = Tree::bare();
    std::os::unix::fs::symlink(t.path(), elsewhere.path().join("link")).unwrap();
    let o = run(t.cmd("vg-root", ".").arg("--skip-outside-root").arg(elsewhere.path().join("link/missing")).arg("."));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("link/missing") && err.contains("No such file") && !err.contains("outside"), "{err}");
    // A `..` after a link climbs from where the link leads, as the system
    // reads it: by its text, the first was skipped as outside and the
    // second, outside, was an error (audit 203).
    std::fs::create_dir(t.path().join("docs")).unwrap();
    std::os::unix::fs::symlink(t.path().join("docs"), elsewhere.path().join("todocs")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), t.path().join("out")).unwrap();
    let o =
        run(t.cmd("vg-root", ".").arg("--skip-outside-root").arg(elsewhere.path().join("todocs/../missing")).arg("."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("No such file") && !stderr(&o).contains("outside"), "{}", stderr(&o));
    let o = run(t.cmd("vg-root", ".").args(["--skip-outside-root", "out/../missing", "."]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("skipping 'out/../missing': outside the project root"), "{}", stderr(&o));
}

#[test]
fn vg_root_needs_no_config() {
    let t = Tree::git();
    t.project_config("topk = 5\n");
    let o = run(&mut t.cmd("vg-root", "."));
    assert_code(&o, 0);
    assert_eq!(stdout(&o).trim(), t.path().to_str().unwrap());
}

/// Every record names the root, and every path shown is made from it: a
/// root whose name is not UTF-8 printed `../r\u{fffd}p/a.rs` for `a.rs`
/// and a `vg-root` that `cd` could not enter. It is refused, said once.
#[test]
fn a_root_whose_name_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tree::bare();
    let root = t.path().join(std::ffi::OsStr::from_bytes(b"r\xe9p"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("a.rs"), "fn socket() {}\n").unwrap();
    for tool in ["vg-root", "vecgrep", "vg-index"] {
        let mut cmd = t.cmd(tool, ".");
        if tool == "vecgrep" {
            cmd.args(["--mode", "lexical", "socket"]);
        }
        let o = run(cmd.current_dir(&root));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).lines().count(), 1, "{tool}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is not valid UTF-8") && stderr(&o).contains("rename the directory"),
            "{tool}: {}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "", "{tool}");
    }
    // Inside a UTF-8 root, such a directory is named, not ".".
    let t = Tree::git();
    let sub = t.path().join(std::ffi::OsStr::from_bytes(b"s\xe9b"));
    std::fs::create_dir(&sub).unwrap();
    let o = run(t.cmd("vg-query", ".").args(["--mode", "lexical", "socket"]).current_dir(&sub));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains(&format!("path '{}/s\u{fffd}b' is not valid UTF-8", t.path().display())),
        "{}",
        stderr(&o)
    );
}

/// A marker another user planted is said as passed over on the way up
/// from a PATH only where that PATH chose the root: it was said where the
/// current directory chose it, and not where what is left of a revision's
/// gone PATH did (review 205).
#[test]
fn a_marker_passed_over_from_a_path_is_said_only_where_that_path_chose_the_root() {
    if !running_as_root() {
        eprintln!("skipped: only root can give a marker to another user");
        return;
    }
    let up = git_repo();
    up.write("shared/gone.py", "def retry_gone():\n    pass\n");
    commit_all(&up, "a file in a shared directory");
    let shared = up.path().join("shared");
    assert!(Command::new("chmod").arg("1777").arg(&shared).status().unwrap().success());
    std::fs::create_dir(shared.join(".vecgrep")).unwrap();
    assert!(Command::new("chown").arg("65534").arg(shared.join(".vecgrep")).status().unwrap().success());
    let said = format!("passing over '{}'", shared.join(".vecgrep").display());
    let o = run(up.cmd("vg-root", ".").arg("shared/gone.py"));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("passing over"), "the repository chose the root: {}", stderr(&o));
    std::fs::remove_file(shared.join("gone.py")).unwrap();
    let elsewhere = Tree::bare();
    let o = run(elsewhere
        .cmd("vg-query", ".")
        .args(["--rev", "HEAD", "--mode", "lexical", "retry_gone"])
        .arg(shared.join("gone.py")));
    assert_code(&o, 0);
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
}

/// In a shared directory such as /tmp (sticky, anyone may add to it),
/// another user's `.vecgrep` chooses no root and no index: an audit planted
/// one in the parent of a victim's project, and the victim's search showed
/// its stored text as their own file's lines. A teammate's checkout (not
/// shared so) is still taken as it is.
#[test]
fn another_users_marker_in_a_shared_directory_is_passed_over() {
    if !running_as_root() {
        eprintln!("skipped: only root can give a marker to another user");
        return;
    }
    let t = Tree::bare();
    t.write("shared/mine/conf.py", "def parse_config():\n    return fetch_remote_payload()\n");
    let shared = t.path().join("shared");
    assert_code(&run(tool_cmd("vg-index").current_dir(&shared).arg(".")), 0);
    t.write("shared/mine/conf.py", "def parse_config():\n    return load_settings_file()\n");
    t.write("shared/theirs/notes.md", "a directory with no marker of its own\n");
    let user = OtherUser::new(&t);
    let chmod = |mode: &str| assert!(Command::new("chmod").arg(mode).arg(&shared).status().unwrap().success());
    chmod("1777");
    let mine = shared.join("mine");
    let o = run(user.cmd(&t, "vg-root").current_dir(&mine).arg("--json"));
    assert_code(&o, 0);
    assert_eq!((records(&o)[0]["root"].as_str(), records(&o)[0]["marker"].as_str()), (mine.to_str(), Some("none")));
    let said = format!("passing over '{}': user 0's, in a shared directory", shared.join(".vecgrep").display());
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    // Passed over on the way up from a PATH, it is said as well: only a
    // search run from within said it (audit 203).
    let o = run(user.cmd(&t, "vg-root").arg(&mine));
    assert_code(&o, 0);
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    let o = run(user.cmd(&t, "vg-query").current_dir(&mine).args(["--mode", "lexical", "parse_config"]));
    assert_code(&o, 0);
    let hits = records(&o);
    let texts: Vec<&str> = hits.iter().filter_map(|h| h["text"].as_str()).collect();
    assert!(texts.iter().any(|t| t.contains("load_settings_file")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("fetch_remote_payload")), "the planted index's text: {texts:?}");
    // Searched from the shared directory itself, its index is refused, not read.
    let o = run(user.cmd(&t, "vg-index").current_dir(&shared).arg("--stats"));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("user 0's, in a shared directory anyone may add to"), "{}", stderr(&o));
    // Nor are its settings this user's: its `quiet` hid the note that it is
    // passed over, and its threshold was the plan's (audit 203).
    std::fs::write(shared.join(".vecgrep/config.toml"), "quiet = true\nthreshold = 0.77\n").unwrap();
    let o = run(user.cmd(&t, "vg-root").current_dir(&shared));
    assert_code(&o, 0);
    assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    let o = run(user.cmd(&t, "vg-ask").current_dir(&shared).args(["--plan", "where is retry logic"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains(&said) && !stdout(&o).contains("0.77"), "{}{}", stdout(&o), stderr(&o));
    chmod("0755");
    let o = run(user.cmd(&t, "vg-root").current_dir(shared.join("theirs")).arg("--json"));
    assert_eq!(records(&o)[0]["root"].as_str(), shared.to_str(), "a teammate's checkout: {}", stderr(&o));
}

/// An empty PATH is a path that names no file, said as such by every tool
/// that takes PATHs (audit 244: clap called it missing, "a value is
/// required ... but none was supplied"), and never the current directory.
#[test]
fn an_empty_path_is_an_error_that_names_it() {
    let t = sample_project();
    for (tool, args) in [
        ("vecgrep", &["retry", ""][..]),
        ("vg-root", &[""]),
        ("vg-index", &[""]),
        ("vg-query", &["retry", ""]),
        ("vg-query", &["retry", "src", ""]),
        ("vg-index", &["--ignore-file", "", "."]),
        ("vg-catalog", &["add", "work", ""]),
    ] {
        let o = run(t.cmd(tool, ".").args(args));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.starts_with(&format!("{tool}: invalid value '' for '")), "{err}");
        assert!(err.contains("': an empty path names no file"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(stdout(&o).is_empty(), "{tool} {args:?}");
    }
}

/// A bare git repository is no project: its files are git's own, as a
/// `.git`'s are (audit 253: `vg-index` in `repo.git` indexed its config,
/// hooks and objects and wrote `.vecgrep` among them, and `vecgrep -l`
/// listed the config with a remote's credentials). A work tree kept
/// inside it is a project as any other.
#[test]
fn a_bare_repository_is_refused_and_a_work_tree_inside_it_is_not() {
    let origin = git_repo();
    origin.write("src/a.py", "def retry_upload():\n    pass\n");
    commit_all(&origin, "one");
    // Outside any project: one inside a project is among its files, as rg has it.
    let t = Tree::bare();
    let bare = t.path().join("bare.git");
    git(&origin, &["clone", "-q", "--bare", ".", bare.to_str().unwrap()]);
    let says = format!(
        "'{}' is a bare git repository, whose files are git's own (its config may hold credentials); search a clone with a work tree",
        bare.canonicalize().unwrap().display()
    );
    for (tool, cwd) in [("vg-index", "bare.git"), ("vecgrep", "bare.git/hooks"), ("vg-query", "bare.git/refs")] {
        let mut cmd = t.cmd(tool, cwd);
        if tool != "vg-index" {
            cmd.arg("remote origin url");
        }
        let o = run(&mut cmd);
        assert_code(&o, 2);
        assert_eq!(stderr(&o).trim(), format!("{tool}: {says}"));
    }
    assert!(!bare.join(".vecgrep").exists());
    for project in [bare.clone(), bare.join("hooks")] {
        let cats = t.path().join("cats");
        let o = run(t.cmd("vg-catalog", ".").env("VECGREP_CATALOG_DIR", cats).args(["add", "c"]).arg(&project));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("whose files are git's own; add a clone with a work tree"), "{}", stderr(&o));
    }
    // One kept inside a project is never walked, as a `.git` is not (review 255).
    git(&origin, &["clone", "-q", "--bare", ".", "mirror.git"]);
    let o = run(origin.cmd("vecgrep", ".").args(["-l", "--threshold", "0", "remote origin url"]));
    assert!(!stdout(&o).contains("mirror.git"), "{}", stdout(&o));
    // Nor when given as a PATH, or a directory in it.
    for path in ["mirror.git", "mirror.git/hooks"] {
        let o = run(origin.cmd("vecgrep", ".").args(["-l", "--threshold", "0", "remote origin url", path]));
        assert_code(&o, 1);
        assert!(stdout(&o).is_empty(), "{path}: {}", stdout(&o));
        assert!(stderr(&o).contains("the paths lie in a bare git repository"), "{path}: {}", stderr(&o));
    }
    git(&origin, &["-C", bare.to_str().unwrap(), "worktree", "add", "-q", "main"]);
    let o = run(t.cmd("vecgrep", "bare.git/main").args(["-l", "retry upload"]));
    assert_code(&o, 0);
    assert_eq!(stdout(&o).trim(), "src/a.py");
}
