//! Docs that must not drift from the tools: man pages and shell completions
//! are generated from the clap definitions
//! and committed, and the README quotes a message the tools print; these
//! tests fail when they drift. Refresh the generated files with
//! `scripts/gen-docs.sh` (VECGREP_BLESS=1 cargo test --test cli docs::).

use std::path::{Path, PathBuf};

use clap_complete::Shell;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Hand-written sections that clap has no place for.
fn extra_sections(name: &str) -> String {
    let mut s = String::new();
    s.push_str(".SH \"EXIT STATUS\"\n0 if results were found (or the command succeeded), 1 if there were none");
    if name == "vg-index" {
        s.push_str(" (for vg-index: the user declined a large index run)");
    }
    s.push_str(", 2 on error");
    if name == "vg-pick" {
        s.push_str(", 130 when quit with Esc or Ctrl\\-C");
    }
    s.push_str(". A closed output pipe (as with \\fBhead\\fR) counts as success.\n");
    s.push_str(".SH FILES\n.TP\n\\fI<root>/.vecgrep/index.db\\fR\nThe index of a project: SQLite with sqlite\\-vec vectors. Safe to delete; \\fBvg-index \\-\\-clear\\-cache\\fR does so.\n");
    s.push_str(".TP\n\\fI<root>/.vecgrep/config.toml\\fR\nProject settings; beaten by flags, beats the global file.\n");
    s.push_str(".TP\n\\fI${XDG_CONFIG_HOME:\\-~/.config}/vecgrep/config.toml\\fR\nGlobal settings.\n");
    s.push_str(".TP\n\\fI${XDG_DATA_HOME:\\-~/.local/share}/vecgrep/\\fR\nThe embedding model and ONNX Runtime, installed by \\fBscripts/fetch\\-assets.sh\\fR (also looked for in \\fI<bindir>/../share/vecgrep/\\fR).\n");
    s.push_str(".SH ENVIRONMENT\n.TP\n\\fBVECGREP_MODEL_DIR\\fR\nDirectory holding model.onnx and the tokenizer files, instead of the data directory.\n");
    s.push_str(".TP\n\\fBORT_DYLIB_PATH\\fR\nPath of libonnxruntime.so, instead of the data directory's copy.\n");
    s.push_str(".TP\n\\fBNO_COLOR\\fR\nDisables color when \\-\\-color is auto.\n");
    s.push_str(".SH \"SEE ALSO\"\n");
    let all = [
        "vecgrep",
        "vg-root",
        "vg-index",
        "vg-query",
        "vg-format",
        "vg-answer",
        "vg-ask",
        "vg-log",
        "vg-serve",
        "vg-mcp",
        "vg-pick",
    ];
    let mut others: Vec<String> = all.iter().filter(|n| **n != name).map(|n| format!("\\fB{n}\\fR(1)")).collect();
    others.push("\\fBvecgrep-toolkit\\fR(7)".to_string());
    s.push_str(&others.join(", "));
    s.push('\n');
    s
}

fn man_page(cmd: clap::Command) -> String {
    let name = cmd.get_name().to_string();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf).unwrap();
    String::from_utf8(buf).unwrap() + &extra_sections(&name)
}

fn completion(mut cmd: clap::Command, shell: Shell) -> String {
    let name = cmd.get_name().to_string();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut buf);
    String::from_utf8(buf).unwrap()
}

fn generated() -> Vec<(PathBuf, String)> {
    let root = repo();
    let mut files = Vec::new();
    for cmd in vecgrep_bins::cli::commands() {
        let name = cmd.get_name().to_string();
        files.push((root.join(format!("man/{name}.1")), man_page(cmd.clone())));
        files.push((root.join(format!("completions/{name}.bash")), completion(cmd.clone(), Shell::Bash)));
        files.push((root.join(format!("completions/_{name}")), completion(cmd.clone(), Shell::Zsh)));
        files.push((root.join(format!("completions/{name}.fish")), completion(cmd, Shell::Fish)));
    }
    files
}

#[test]
fn man_pages_and_completions_match_the_definitions() {
    let bless = std::env::var_os("VECGREP_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, text) in generated() {
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(stale.is_empty(), "out of date (run scripts/gen-docs.sh): {stale:?}");
}

#[test]
fn every_flag_is_in_the_man_page_and_every_completion() {
    for cmd in vecgrep_bins::cli::commands() {
        let name = cmd.get_name().to_string();
        let man = man_page(cmd.clone());
        let shells: Vec<(Shell, String)> =
            [Shell::Bash, Shell::Zsh, Shell::Fish].into_iter().map(|s| (s, completion(cmd.clone(), s))).collect();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            assert!(
                man.contains(&format!("\\-\\-{}", long.replace('-', "\\-"))),
                "{name}: --{long} missing from man page"
            );
            for (shell, text) in &shells {
                assert!(text.contains(long), "{name}: --{long} missing from {shell} completion");
            }
        }
    }
}

#[test]
fn every_help_shows_examples() {
    for cmd in vecgrep_bins::cli::commands() {
        let help = cmd.clone().render_long_help().to_string();
        assert!(help.contains("Examples"), "{} --help has no examples", cmd.get_name());
    }
}

#[test]
fn every_rule_of_the_spec_is_mapped_to_tests_that_exist() {
    let root = repo();
    let spec = std::fs::read_to_string(root.join("spec/vecgrep.allium")).unwrap();
    let table = std::fs::read_to_string(root.join("spec/rules.md")).unwrap();
    for line in spec.lines() {
        let mut words = line.split_whitespace();
        if let (Some("rule" | "surface"), Some(name)) = (words.next(), words.next()) {
            let row = table.lines().find(|l| l.starts_with(&format!("| {name} |")));
            let row = row.unwrap_or_else(|| panic!("spec/rules.md has no row for {name}"));
            assert!(row.contains("::"), "{name} names no test: {row}");
        }
    }
    for cell in table.split('`').skip(1).step_by(2) {
        let Some((module, test)) = cell.split_once("::") else { continue };
        let source = std::fs::read_to_string(root.join(format!("tests/{module}.rs")))
            .unwrap_or_else(|_| panic!("spec/rules.md names {cell}, but there is no tests/{module}.rs"));
        assert!(source.contains(&format!("fn {test}(")), "spec/rules.md names {cell}, which does not exist");
    }
}

#[test]
fn man_pages_render_without_warnings() {
    let dir = repo().join("man");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    pages.sort();
    assert!(pages.iter().any(|p| p.ends_with("vecgrep-toolkit.7")), "the overview page is missing");
    for page in pages {
        let o = std::process::Command::new("groff")
            .args(["-ww", "-man", "-z"])
            .arg(&page)
            .output()
            .expect("groff renders man pages (Debian's groff-base)");
        assert!(
            o.status.success() && o.stderr.is_empty(),
            "{}: {}",
            page.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn the_readme_shows_the_config_error_the_tools_print() {
    let t = crate::common::Tree::git();
    t.write(".vecgrep/config.toml", "topk = 5\n");
    let o = crate::common::run(t.cmd("vg-query", ".").arg("x"));
    crate::common::assert_code(&o, 2);
    let printed = crate::common::stderr(&o).trim().replace(t.path().to_str().unwrap(), "/home/user/project");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.lines().any(|l| l == printed),
        "README.md's config error sample is not what vg-query prints:\n{printed}"
    );
}

#[test]
fn the_readme_lists_every_setting_with_its_default() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let plain = |cell: &str| cell.trim().replace(['`', '"'], "");
    for setting in vecgrep::project::SETTINGS {
        let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with(&format!("| `{}` |", setting.key))).collect();
        assert_eq!(rows.len(), 1, "README.md's config table needs one row for {}", setting.key);
        let default = rows[0].split('|').nth(2).map(plain).unwrap_or_default();
        assert_eq!(default, setting.default.unwrap_or("—"), "README.md's default for {}", setting.key);
    }
}
