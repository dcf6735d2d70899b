//! Docs that must not drift from the tools: man pages and shell completions
//! are generated from the clap definitions
//! and committed, and the README quotes a message the tools print; these
//! tests fail when they drift. Refresh the generated files with
//! `scripts/gen-docs.sh` (VECGREP_BLESS=1 cargo test --test cli docs::).

use std::path::{Path, PathBuf};

use clap::builder::PossibleValuesParser;
use clap_complete::Shell;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Hand-written sections that clap has no place for; the environment
/// variables only of a tool that reads them (one that loads the model, one
/// with `--color`, one that names catalogs).
fn extra_sections(name: &str, cmd: &clap::Command) -> String {
    let takes = |id: &str| cmd.get_arguments().any(|a| a.get_id() == id);
    let mut s = String::new();
    s.push_str(".SH \"EXIT STATUS\"\n");
    s.push_str(&exit_status(name).replace('-', "\\-"));
    s.push_str(" A closed output pipe (as with \\fBhead\\fR) counts as success.\n");
    s.push_str(".SH FILES\n.TP\n\\fI<root>/.vecgrep/index.db\\fR\nThe index of a project: SQLite with sqlite\\-vec vectors. Safe to delete; \\fBvg-index \\-\\-clear\\-cache\\fR does so.\n");
    s.push_str(".TP\n\\fI<root>/.vecgrep/config.toml\\fR\nProject settings; beaten by flags, beats the global file, except that it may not set what only the user may (\\fBopen_cmd\\fR, \\fBembedder_source\\fR, \\fBembedder_url\\fR, \\fBllm_url\\fR, \\fBstore_url\\fR, \\fBstore_project\\fR, \\fBstore_adopt\\fR, \\fBprivacy_mode\\fR) nor raise the size limits and waits (\\fBmax_filesize\\fR, \\fBchunk_size\\fR, \\fBchunk_overlap\\fR, \\fBinclude_generated\\fR, \\fBindex_warn_threshold\\fR, \\fBembed_all\\fR, \\fBrate_limit\\fR, \\fBembedder_timeout\\fR, \\fBllm_timeout\\fR) unless trusted (\\fB\\-\\-trust\\-project\\-config\\fR; see \\fBvecgrep\\-toolkit\\fR(7)).\n");
    s.push_str(".TP\n\\fI${XDG_CONFIG_HOME:\\-~/.config}/vecgrep/config.toml\\fR\nGlobal settings.\n");
    s.push_str(".TP\n\\fI${XDG_DATA_HOME:\\-~/.local/share}/vecgrep/\\fR\nThe embedding model and ONNX Runtime, installed by \\fBscripts/fetch\\-assets.sh\\fR (also looked for in \\fI<bindir>/../share/vecgrep/\\fR).\n");
    let mut env = String::new();
    let embeds = ["vecgrep", "vg-index", "vg-query", "vg-log", "vg-serve", "vg-mcp", "vg-pick", "vg-ask"];
    if embeds.contains(&name) {
        env.push_str(".TP\n\\fBVECGREP_MODEL_DIR\\fR\nDirectory holding model.onnx and the tokenizer files, instead of the data directory.\n");
        env.push_str(".TP\n\\fBORT_DYLIB_PATH\\fR\nPath of libonnxruntime.so, instead of the data directory's copy.\n");
        env.push_str(".TP\n\\fBVECGREP_STATIC_TABLE\\fR\nA static table file to give chunks their static vectors with, instead of the shipped one.\n");
        env.push_str(".TP\n\\fBVECGREP_EMBEDDER_API_KEY\\fR\nThe key sent to a remote embedding server (\\fBembedder_source = \"remote\"\\fR).\n");
    }
    if ["vecgrep", "vg-serve"].contains(&name) {
        env.push_str(
            ".TP\n\\fBVECGREP_TOKEN\\fR\nThe bearer token \\fBvg-serve\\fR requires, instead of \\fB\\-\\-token\\fR.\n",
        );
    }
    if ["vecgrep", "vg-answer", "vg-ask", "vg-serve", "vg-mcp"].contains(&name) {
        env.push_str(".TP\n\\fBVECGREP_LLM_API_KEY\\fR\nThe key sent to the chat model at \\fBllm_url\\fR.\n");
    }
    if takes("color") {
        env.push_str(
            ".TP\n\\fBNO_COLOR\\fR\nSet to anything but the empty string, disables color when \\-\\-color is auto.\n",
        );
    }
    if takes("catalog") || name.starts_with("vg-catalog") {
        env.push_str(".TP\n\\fBVECGREP_CATALOG_DIR\\fR\nDirectory holding the catalogs (vg\\-catalog), an absolute path, instead of the data directory's \\fIcatalogs/\\fR.\n");
    }
    if !env.is_empty() {
        s.push_str(".SH ENVIRONMENT\n");
        s.push_str(&env);
    }
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
        "vg-catalog",
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

/// What the tool's own description says of its exit status (a
/// subcommand's, its command's): one paragraph of `bins/doc/NAME.txt`.
fn exit_status(name: &str) -> String {
    let doc = ["", "-add", "-list", "-remove-project", "-remove", "-show", "-use"]
        .iter()
        .find_map(|sub| {
            name.strip_suffix(sub).and_then(|n| std::fs::read_to_string(repo().join(format!("bins/doc/{n}.txt"))).ok())
        })
        .unwrap_or_else(|| panic!("bins/doc has no page for {name}"));
    let paragraph = doc.split("\n\n").find(|p| p.starts_with("Exit status: "));
    let paragraph = paragraph.unwrap_or_else(|| panic!("bins/doc/{name}.txt does not say its exit status"));
    paragraph.trim_start_matches("Exit status: ").split_whitespace().collect::<Vec<_>>().join(" ")
}

fn man_page(cmd: clap::Command) -> String {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    let cmd = with_aliases_said(cmd);
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf).unwrap();
    let page = String::from_utf8(buf).unwrap();
    // clap_mangen's synopsis has no place for values; ours replaces it.
    let start = page.find(".SH SYNOPSIS\n").expect("a synopsis") + ".SH SYNOPSIS\n".len();
    let end = start + page[start..].find("\n.SH ").expect("a section after the synopsis") + 1;
    // Left-aligned, as synopses are, rather than justified into wide gaps.
    let extra = extra_sections(&name, &cmd);
    format!("{}.ad l\n{}\n.ad\n{}", &page[..start], synopsis(cmd), &page[end..]) + &extra
}

/// Each flag's visible aliases said after its help, as `--help` says them
/// (`[alias: --files]`): clap_mangen leaves them out.
fn with_aliases_said(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        let aliases: Vec<String> =
            arg.get_visible_aliases().unwrap_or_default().iter().map(|alias| format!("--{alias}")).collect();
        if aliases.is_empty() {
            return arg;
        }
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let noun = if aliases.len() == 1 { "alias" } else { "aliases" };
        arg.help(format!("{help} [{noun}: {}]", aliases.join(", ")))
    })
}

/// The synopsis line: clap_mangen's names no option's value (`[-k|--top-k]`)
/// and shows a list of paths as `[PATH]`; this one writes `[-k|--top-k NUM]`,
/// `[-t|--type TYPE]...` for a repeatable option and `[PATH...]`, in the
/// order of the OPTIONS section. `\%` keeps an item from being hyphenated
/// and `\ ` a value on the line of its flag, where the line wraps.
fn synopsis(mut cmd: clap::Command) -> String {
    cmd.build();
    let roff = |s: &str| s.replace('\\', "\\\\").replace('-', "\\-");
    let value = |arg: &clap::Arg| {
        let name = match arg.get_value_names() {
            Some(names) => names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(" "),
            None => arg.get_id().as_str().to_uppercase(),
        };
        format!("\\fI{}\\fR", roff(&name))
    };
    let repeats = |arg: &clap::Arg| {
        matches!(arg.get_action(), clap::ArgAction::Append | clap::ArgAction::Count)
            || arg.get_num_args().is_some_and(|n| n.max_values() > 1)
    };
    let mut options: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set() && !a.is_positional()).collect();
    // clap_mangen's sort: display order, then the short flag, lower case first.
    options.sort_by_key(|a| {
        let key = match (a.get_short(), a.get_long()) {
            (Some(s), _) => format!("{}{}", s.to_ascii_lowercase(), if s.is_ascii_lowercase() { '0' } else { '1' }),
            (None, Some(l)) => l.to_string(),
            (None, None) => String::new(),
        };
        (a.get_display_order(), key)
    });
    let mut line = vec![format!("\\fB{}\\fR", roff(cmd.get_bin_name().unwrap_or(cmd.get_name())))];
    for arg in options {
        let mut names = match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => format!("\\fB{}\\fR|\\fB{}\\fR", roff(&format!("-{s}")), roff(&format!("--{l}"))),
            (Some(s), None) => format!("\\fB{}\\fR", roff(&format!("-{s}"))),
            (None, Some(l)) => format!("\\fB{}\\fR", roff(&format!("--{l}"))),
            (None, None) => continue,
        };
        if arg.get_num_args().is_some_and(|n| n.takes_values()) {
            names = format!("{names}\\ {}", value(arg));
        }
        line.push(format!("\\%[{names}]{}", if repeats(arg) { "..." } else { "" }));
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let name = format!("{}{}", value(arg), if repeats(arg) { "..." } else { "" });
        line.push(if arg.is_required_set() { format!("\\%{name}") } else { format!("\\%[{name}]") });
    }
    line.join(" ")
}

fn completion(cmd: clap::Command, shell: Shell) -> String {
    let mut cmd = with_type_names(without_hidden(cmd));
    let name = cmd.get_name().to_string();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut buf);
    String::from_utf8(buf).unwrap()
}

/// `cmd` less its hidden flags, which clap_complete offers with the rest: a
/// flag hidden from the help (`cli::finished`: a server's
/// `--index-warn-threshold`, which it refuses) is not one to complete.
fn without_hidden(cmd: clap::Command) -> clap::Command {
    if cmd.get_arguments().all(|a| !a.is_hide_set()) {
        return cmd;
    }
    let mut shown = clap::Command::new(cmd.get_name().to_string());
    if let Some(about) = cmd.get_about() {
        shown = shown.about(about.clone());
    }
    // As given, so that the help and version flags clap adds read as the original's.
    if let Some(long) = cmd.get_long_about() {
        shown = shown.long_about(long.clone());
    }
    if let Some(version) = cmd.get_version() {
        shown = shown.version(version.to_string());
    }
    let hidden = |id: &clap::Id| cmd.get_arguments().any(|a| a.get_id() == id && a.is_hide_set());
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version") {
        shown = shown.arg(arg.clone());
    }
    for group in cmd.get_groups() {
        let members: Vec<clap::Id> = group.get_args().filter(|id| !hidden(id)).cloned().collect();
        let copy = clap::ArgGroup::new(group.get_id().clone()).args(members).multiple(group.clone().is_multiple());
        shown = shown.group(copy.required(group.is_required_set()));
    }
    shown.subcommands(cmd.get_subcommands().cloned())
}

/// `-t` and `-T` take the name of a file type, which clap cannot know, so
/// the completions offered file names. They offer the names the walk
/// accepts (`vecgrep::project::type_names`), hidden from the help, which
/// would list hundreds of them.
fn with_type_names(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| match arg.get_id().as_str() {
        "types" | "types_not" => arg
            .value_parser(PossibleValuesParser::new(vecgrep::project::type_names().iter().map(String::as_str)))
            .hide_possible_values(true),
        _ => arg,
    })
}

fn generated() -> Vec<(PathBuf, String)> {
    let root = repo();
    let mut files = Vec::new();
    for cmd in vecgrep_bins::cli::commands() {
        let name = cmd.get_name().to_string();
        files.push((root.join(format!("man/{name}.1")), man_page(cmd.clone())));
        files.push((root.join(format!("completions/{name}.bash")), completion(cmd.clone(), Shell::Bash)));
        files.push((root.join(format!("completions/_{name}")), completion(cmd.clone(), Shell::Zsh)));
        files.push((root.join(format!("completions/{name}.fish")), completion(cmd.clone(), Shell::Fish)));
        // A page per subcommand, as git's: the parent's page refers to them.
        for sub in cmd.get_subcommands() {
            let page = format!("{name}-{}", sub.get_name());
            let sub = sub.clone().display_name(&page).bin_name(format!("{name} {}", sub.get_name()));
            files.push((root.join(format!("man/{page}.1")), man_page(sub)));
        }
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
        // A hidden flag is one the tool refuses, saying why (a server's --index-warn-threshold).
        if ["vg-serve", "vg-mcp"].contains(&name.as_str()) {
            assert!(!man.contains("index\\-warn\\-threshold"), "{name} offers a flag it refuses");
            for (shell, text) in &shells {
                assert!(!text.contains("index-warn-threshold"), "{name}'s {shell} completion offers a flag it refuses");
            }
        }
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
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

/// Every page a man page refers to, `name(1)` in bold, is one of ours or
/// one everybody has; vg-catalog(1) named pages of its subcommands that
/// did not exist.
#[test]
fn every_page_a_man_page_names_exists() {
    let dir = repo().join("man");
    let ours: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let elsewhere = ["rg.1", "git.1", "xargs.1", "fzf.1", "sk.1", "head.1", "glob.7", "gitignore.5", "less.1"];
    for page in &ours {
        let text = std::fs::read_to_string(dir.join(page)).unwrap().replace("\\fB", "").replace("\\fR", "");
        let text = text.replace("\\-", "-");
        for (at, _) in text.match_indices("(1)").chain(text.match_indices("(5)")).chain(text.match_indices("(7)")) {
            let before = &text[..at];
            let start = before
                .char_indices()
                .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .map_or(0, |(i, c)| i + c.len_utf8());
            let named = format!("{}.{}", &before[start..], &text[at + 1..at + 2]);
            if start == at {
                continue;
            }
            assert!(
                ours.contains(&named) || elsewhere.contains(&named.as_str()),
                "{page} names {named}, which is not a page here"
            );
        }
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

/// Every page that lists the settings, or the ones a project's own config
/// may set only when trusted, lists them all (`privacy_mode` and the store
/// keys were missing from some).
#[test]
fn every_list_of_settings_and_of_trusted_keys_is_whole() {
    let overview = std::fs::read_to_string(repo().join("man/vecgrep-toolkit.7")).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let security = readme.split("**A repository you clone**").nth(1).and_then(|s| s.split("\n\n").next()).unwrap();
    let keys = overview.split("Keys: ").nth(1).and_then(|s| s.split(".TP").next()).unwrap();
    let trusted_sentence = keys.split("A project's own").nth(1).unwrap();
    let cmd = vecgrep_bins::cli::commands().into_iter().find(|c| c.get_name() == "vg-query").unwrap();
    let flag = cmd.get_arguments().find(|a| a.get_long() == Some("trust-project-config")).unwrap();
    let flag_help = flag.get_help().unwrap().to_string();
    for setting in vecgrep::project::SETTINGS {
        let bold = format!("\\fB{}\\fR", setting.key);
        assert!(keys.contains(&bold), "vecgrep-toolkit(7) does not list {}", setting.key);
        if setting.trusted {
            assert!(trusted_sentence.contains(&bold), "vecgrep-toolkit(7): {} needs trust", setting.key);
            assert!(security.contains(&format!("`{}`", setting.key)), "README's Security: {} needs trust", setting.key);
            assert!(flag_help.contains(setting.key), "--trust-project-config's help: {} needs trust", setting.key);
        }
    }
}

#[test]
fn man_synopses_name_values_and_lists_of_paths() {
    let cmd = vecgrep_bins::cli::commands().into_iter().find(|c| c.get_name() == "vecgrep").unwrap();
    let page = man_page(cmd);
    let synopsis = page.split(".SH SYNOPSIS\n.ad l\n").nth(1).and_then(|s| s.lines().next()).unwrap();
    for shown in [
        "\\%[\\fB\\-k\\fR|\\fB\\-\\-top\\-k\\fR\\ \\fINUM\\fR]",
        "\\%[\\fB\\-t\\fR|\\fB\\-\\-type\\fR\\ \\fITYPE\\fR]...",
        "\\%[\\fB\\-q\\fR|\\fB\\-\\-quiet\\fR]",
        "\\%[\\fIQUERY\\fR] \\%[\\fIPATH\\fR...]",
    ] {
        assert!(synopsis.contains(shown), "vecgrep's synopsis lacks {shown}:\n{synopsis}");
    }
}

#[test]
fn completing_a_type_offers_the_names_of_types() {
    for cmd in vecgrep_bins::cli::commands() {
        if !cmd.get_arguments().any(|a| a.get_id() == "types") {
            continue;
        }
        let name = cmd.get_name().to_string();
        let bash = completion(cmd.clone(), Shell::Bash);
        for flag in ["--type)", "-t)", "--type-not)", "-T)"] {
            let offered = bash.split(&format!(" {flag}\n")).nth(1).and_then(|s| s.lines().next()).unwrap_or("");
            assert!(
                offered.contains("compgen -W") && offered.contains(" rust ") && offered.contains(" py "),
                "{name}: bash completes {flag} with {offered:?}"
            );
        }
        for shell in [Shell::Zsh, Shell::Fish] {
            let text = completion(cmd.clone(), shell);
            // Names no help text has.
            assert!(text.contains("typescript") && text.contains("markdown"), "{name}: {shell} offers no type names");
        }
    }
}

/// Issue 46: the README spoke of "the seven tools" when there were ten.
/// Every count of the binaries, and every list of them, follows
/// `bins/src/bin`.
#[test]
fn the_docs_count_and_list_every_tool() {
    let root = repo();
    let mut tools: Vec<String> = std::fs::read_dir(root.join("bins/src/bin"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".rs").map(str::to_string))
        .collect();
    tools.sort();
    let mut defined: Vec<String> = vecgrep_bins::cli::commands().iter().map(|c| c.get_name().to_string()).collect();
    defined.sort();
    assert_eq!(defined, tools, "bins/src/cli.rs's commands() and bins/src/bin differ");
    let numbers: Vec<&str> = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen \
                              fifteen sixteen seventeen eighteen nineteen twenty"
        .split_whitespace()
        .collect();
    let mut counts = 0;
    for file in ["README.md", "ARCHITECTURE.md", "scripts/install.sh"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap().to_lowercase();
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in words.windows(3) {
            // "binaries" and "front ends" are always the tools; "tools" is
            // also what an MCP server offers, so the docs count binaries.
            let of_tools = w[1].starts_with("binaries") || (w[1] == "front" && w[2].starts_with("ends"));
            if let (true, Some(n)) = (of_tools, numbers.iter().position(|n| *n == w[0])) {
                assert_eq!(n, tools.len(), "{file} says \"{} {} {}\"; there are {}", w[0], w[1], w[2], tools.len());
                counts += 1;
            }
        }
    }
    assert!(counts >= 3, "the docs no longer count the binaries; keep this test honest");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let overview = std::fs::read_to_string(root.join("man/vecgrep-toolkit.7")).unwrap();
    let install = std::fs::read_to_string(root.join("scripts/install.sh")).unwrap();
    let installed = install.lines().find(|l| l.starts_with("tools=(")).expect("install.sh lists the tools");
    for tool in &tools {
        assert!(readme.contains(&format!("\n| `{tool}` |")), "README.md's toolkit table has no row for {tool}");
        assert!(overview.contains(&format!(".TP\n\\fB{tool}\\fR(1)\n")), "vecgrep-toolkit(7) does not describe {tool}");
        assert!(installed.split(['(', ' ', ')']).any(|t| t == tool), "scripts/install.sh does not install {tool}");
    }
}

/// Issue 46: the README's samples of `vg-index --stats` and of the summary
/// record lacked lines and fields the tool prints. Their values change from
/// run to run; what they show must not.
#[test]
fn the_readme_shows_every_field_vg_index_prints() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let t = crate::common::Tree::git();
    t.write("src/config.rs", "/// Load settings from a TOML file.\npub fn load_config() {}\n");
    let o = crate::common::run(&mut t.cmd("vg-index", "."));
    crate::common::assert_code(&o, 0);
    let keys = |record: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = record.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let sample = readme.lines().find(|l| l.starts_with("{\"type\":\"summary\"")).expect("a summary sample");
    assert_eq!(
        keys(&serde_json::from_str(sample).unwrap()),
        keys(&crate::common::summary(&o)),
        "README.md's summary sample"
    );
    let o = crate::common::run(t.cmd("vg-index", ".").arg("--stats"));
    crate::common::assert_code(&o, 0);
    let labels =
        |text: &str| -> Vec<String> { text.lines().map(|l| l.split(':').next().unwrap_or("").to_string()).collect() };
    let shown =
        readme.split("$ vg-index --stats\n").nth(1).and_then(|s| s.split("```").next()).expect("a stats sample");
    assert_eq!(labels(shown), labels(&crate::common::stdout(&o)), "README.md's vg-index --stats sample");
}
