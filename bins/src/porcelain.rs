//! What `vecgrep` runs for a command line: its mode, decided once, and for
//! each tool of that mode the argument list it passes on. Flags are
//! forwarded as the user gave them, read from the parsed command line and
//! spelled as the target tool spells them, so a flag is defined once (in
//! `cli`) and a test checks that each one reaches the tool it is for.

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command};

use crate::cli::{expand_groups, VecgrepCli};

/// What one `vecgrep` command line does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `--serve`: become vg-serve.
    Serve,
    /// `--mcp`: become vg-mcp.
    Mcp,
    /// `-i`: become vg-pick.
    Pick,
    /// `--show-root`: vg-root.
    ShowRoot,
    /// `--stats`: vg-index --stats.
    Stats,
    /// `--clear-cache`: vg-index --clear-cache.
    ClearCache,
    /// `--index-only`: vg-index.
    IndexOnly,
    /// A search: vg-query | vg-format.
    Search,
    /// `--answer`: a search a chat model answers, vg-query | vg-answer | vg-format.
    Answer,
    /// `--log`: a search of the git history, vg-log | vg-format.
    Log,
    /// `--plan`: the plan a question is made into, vg-ask --plan.
    Plan,
    /// `--ask`: a question asked, vg-ask.
    Ask,
}

/// What every tool that searches or indexes files is given.
const SHARED_FLAGS: &[&str] = &[
    "catalog",
    "skip_outside_root",
    "quiet",
    "SearchConfigArgs",
    "IndexConfigArgs",
    "EmbedderArgs",
    "TrustArgs",
    "StoreArgs",
    "WalkArgs",
];

/// What vg-query is given besides the shared flags.
const QUERY_FLAGS: &[&str] =
    &["FileFilterArgs", "PackageArgs", "MaxCountArgs", "reindex", "no_index", "no_scope", "rev", "label", "explain"];

/// vg-format's flags under `--log`. Not context: a commit has no lines of
/// a file around its own. Line numbers and file names are its diff lines'
/// (`path:N:`, with --with-diff) and its counts' (`-c -I`).
const LOG_FORMAT_FLAGS: &[&str] = &[
    "files",
    "count",
    "json",
    "heading",
    "no_heading",
    "lines",
    "line_number",
    "no_line_number",
    "with_filename",
    "no_filename",
    "null",
    "max_columns",
    "max_columns_preview",
    "color",
    "quiet",
];

/// vg-format's flags under `--answer`. Not --files or --count: they would
/// show nothing of the answer.
const ANSWER_FORMAT_FLAGS: &[&str] = &[
    "quiet",
    "json",
    "after_context",
    "before_context",
    "context",
    "heading",
    "no_heading",
    "lines",
    "line_number",
    "no_line_number",
    "with_filename",
    "no_filename",
    "null",
    "max_columns",
    "max_columns_preview",
    "color",
];

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 12] = [
        Mode::Serve,
        Mode::Mcp,
        Mode::Pick,
        Mode::ShowRoot,
        Mode::Stats,
        Mode::ClearCache,
        Mode::IndexOnly,
        Mode::Search,
        Mode::Answer,
        Mode::Log,
        Mode::Plan,
        Mode::Ask,
    ];

    pub fn of(cli: &VecgrepCli) -> Mode {
        if cli.server.serve {
            Mode::Serve
        } else if cli.server.mcp {
            Mode::Mcp
        } else if cli.interactive {
            Mode::Pick
        } else if cli.show_root {
            Mode::ShowRoot
        } else if cli.stats {
            Mode::Stats
        } else if cli.clear_cache {
            Mode::ClearCache
        } else if cli.index_only {
            Mode::IndexOnly
        } else if cli.plan {
            Mode::Plan
        } else if cli.ask {
            Mode::Ask
        } else if cli.answer {
            Mode::Answer
        } else if cli.log {
            Mode::Log
        } else {
            Mode::Search
        }
    }

    /// The tools the mode runs, each with the porcelain flags (argument ids,
    /// or the ids of a flattened group of them) it is given.
    pub fn tools(self) -> Vec<(&'static str, Vec<&'static str>)> {
        let with = |more: &[&'static str]| SHARED_FLAGS.iter().chain(more).copied().collect::<Vec<_>>();
        // `--privacy-mode` too: vg-query given it refuses an embedding
        // server off this machine, and a search is held to it as a search
        // that feeds an answer is (audit 180: the porcelain refused it).
        let query = || ("vg-query", with(&[QUERY_FLAGS, &["PrivacyArgs"]].concat()));
        let ask = || ("vg-ask", with(&["AskArgs", "AnswerArgs", "PrivacyArgs", "json", "no_index"]));
        match self {
            Mode::Serve => vec![("vg-serve", with(&["bind", "port", "token", "full_index", "rate_limit"]))],
            Mode::Mcp => vec![("vg-mcp", with(&["full_index"]))],
            Mode::Pick => vec![("vg-pick", with(&["FileFilterArgs", "pick_query", "open_cmd", "full_index"]))],
            Mode::ShowRoot => vec![("vg-root", vec!["catalog", "skip_outside_root", "quiet", "json"])],
            Mode::Stats => {
                vec![("vg-index", vec!["catalog", "skip_outside_root", "quiet", "json", "TrustArgs", "StoreArgs"])]
            }
            Mode::ClearCache => {
                vec![("vg-index", vec!["catalog", "skip_outside_root", "quiet", "TrustArgs", "StoreArgs", "label"])]
            }
            Mode::IndexOnly => {
                vec![(
                    "vg-index",
                    vec![
                        "catalog",
                        "skip_outside_root",
                        "quiet",
                        "IndexConfigArgs",
                        "EmbedderArgs",
                        "EmbedderArgs",
                        "TrustArgs",
                        "StoreArgs",
                        "WalkArgs",
                        "reindex",
                        "rev",
                        "label",
                    ],
                )]
            }
            Mode::Search => vec![query(), ("vg-format", vec!["OutputArgs", "quiet"])],
            Mode::Ask => vec![ask()],
            Mode::Plan => vec![("vg-ask", crate::cli::PLAN_FLAGS.to_vec())],
            Mode::Log => vec![
                (
                    "vg-log",
                    vec![
                        "skip_outside_root",
                        "quiet",
                        "no_index",
                        "LogArgs",
                        "SearchConfigArgs",
                        "EmbedderArgs",
                        "TrustArgs",
                        "StoreArgs",
                    ],
                ),
                ("vg-format", LOG_FORMAT_FLAGS.to_vec()),
            ],
            Mode::Answer => vec![
                query(),
                ("vg-answer", vec!["quiet", "AnswerArgs", "PrivacyArgs", "TrustArgs"]),
                ("vg-format", ANSWER_FORMAT_FLAGS.to_vec()),
            ],
        }
    }

    /// The mode as an error names it.
    fn described(self) -> &'static str {
        match self {
            Mode::Serve => "with --serve",
            Mode::Mcp => "with --mcp",
            Mode::Pick => "with -i",
            Mode::ShowRoot => "with --show-root",
            Mode::Stats => "with --stats",
            Mode::ClearCache => "with --clear-cache",
            Mode::IndexOnly => "with --index-only",
            Mode::Search => "in a search",
            Mode::Answer => "with --answer",
            Mode::Log => "with --log",
            Mode::Plan => "with --plan",
            Mode::Ask => "with --ask",
        }
    }

    /// Flags of the mode's first tool that the porcelain adds itself (the mode's own).
    fn own_flags(self) -> &'static [&'static str] {
        match self {
            Mode::Stats => &["--stats"],
            Mode::ClearCache => &["--clear-cache"],
            Mode::Plan => &["--plan"],
            // vg-format shows the judgement's hint on a terminal only;
            // vg-answer asks the model when the judgement says so.
            Mode::Search | Mode::Answer => &["--judge"],
            _ => &[],
        }
    }
}

/// The arguments of vg-catalog for `vecgrep catalog ARGS` (ARGS) and
/// `vecgrep use ARGS` (`use` ARGS): a command word first, as git's, so
/// that a query of that one word is written after `--`.
pub fn catalog_command(args: &[OsString]) -> Option<Vec<OsString>> {
    let (first, rest) = args.split_first()?;
    match first.to_str()? {
        "catalog" => Some(rest.to_vec()),
        "use" => Some(args.to_vec()),
        _ => None,
    }
}

/// The porcelain flags no tool is given: they choose the mode, or are the
/// positional arguments the plan passes on its own way.
pub const MODE_SELECTORS: &[&str] = &[
    "serve",
    "mcp",
    "interactive",
    "show_root",
    "stats",
    "clear_cache",
    "index_only",
    "answer",
    "log",
    "plan",
    "ask",
    "query",
    "paths",
    "help",
    "version",
];

/// The first flag given that only other modes use (`--learn` without
/// `--answer` or `--ask`, `--since` without `--log`, ...): it would do nothing.
pub fn stray_flag(mode: Mode, matches: &ArgMatches, porcelain: &Command) -> Option<String> {
    let not_log: Vec<Mode> = Mode::ALL.into_iter().filter(|m| *m != Mode::Log).collect();
    let owners: [(&[Mode], &str, &str); 8] = [
        (&not_log, "catalog", "a project's files, not its history (--log)"),
        (
            &[Mode::Search, Mode::Answer, Mode::IndexOnly, Mode::ClearCache],
            "label",
            "a search of the files, --index-only or --clear-cache (not --log, --ask, -i or a server)",
        ),
        (&[Mode::Search, Mode::Answer], "PackageArgs", "a search of the files (not --log, --ask, -i or a server)"),
        (&[Mode::Search, Mode::Answer], "MaxCountArgs", "a search of the files (not --log, --ask, -i or a server)"),
        (&[Mode::Answer, Mode::Ask, Mode::Plan], "AnswerArgs", "--answer or --ask"),
        (
            &[Mode::Search, Mode::Answer, Mode::Ask, Mode::Plan],
            "PrivacyArgs",
            "a search of the files (not --log, -i or a server), --answer or --ask",
        ),
        (&[Mode::Ask, Mode::Plan], "AskArgs", "--ask or --plan"),
        (&[Mode::Log], "LogArgs", "--log"),
    ];
    let stray = owners.into_iter().filter(|(owners, ..)| !owners.contains(&mode)).find_map(|(_, group, needs)| {
        let id = expand_groups(porcelain, &[group])
            .into_iter()
            .find(|id| matches.value_source(id) == Some(ValueSource::CommandLine))?;
        let arg = porcelain.get_arguments().find(|a| a.get_id().as_str() == id).expect("a member of the group");
        Some(format!("--{} needs {needs}", arg.get_long().unwrap_or(&id)))
    });
    stray.or_else(|| given_to_no_tool(mode, matches, porcelain))
}

/// The first flag given that no tool of `mode` is given (`-t` with
/// `--log`, `--json` with `--serve`): it would be passed over in silence.
fn given_to_no_tool(mode: Mode, matches: &ArgMatches, porcelain: &Command) -> Option<String> {
    let tools = mode.tools();
    let given: Vec<String> = tools.iter().flat_map(|(_, ids)| expand_groups(porcelain, ids)).collect();
    let anywhere = expand_groups(porcelain, ANYWHERE);
    let arg = porcelain.get_arguments().find(|a| {
        let id = a.get_id().as_str();
        matches.value_source(id) == Some(ValueSource::CommandLine)
            && !MODE_SELECTORS.contains(&id)
            && !anywhere.iter().any(|a| a == id)
            && !given.iter().any(|g| g == id)
    })?;
    Some(format!("{} does nothing {}; leave it out", crate::cli::flag_name(arg), mode.described()))
}

/// Flags any mode takes, whether or not its tools have a use for them: a
/// script may pass them to every command.
const ANYWHERE: &[&str] = &["quiet", "color"];

/// The argument list of each tool `mode` runs, for the command line
/// `matches` (parsed by `porcelain`, vecgrep's own definition).
pub fn plan(
    mode: Mode,
    cli: &VecgrepCli,
    matches: &ArgMatches,
    porcelain: &Command,
) -> Vec<(&'static str, Vec<OsString>)> {
    mode.tools()
        .iter()
        .enumerate()
        .map(|(i, (tool, ids))| {
            // The mode's own flags are the first tool's.
            let own = if i == 0 { mode.own_flags() } else { &[] };
            let mut argv: Vec<OsString> = own.iter().map(OsString::from).collect();
            for id in expand_groups(porcelain, ids) {
                argv.extend(forwarded(porcelain, matches, &id));
            }
            // The first tool takes the positional arguments.
            if i == 0 {
                argv.extend(positionals(cli));
            }
            // Why each result ranked is said under its heading: piped, the
            // lines alone passed it over in silence.
            let out = &cli.output;
            if *tool == "vg-format" && cli.explain && !(out.json || out.heading || out.no_heading) {
                argv.push("--heading".into());
            }
            (*tool, argv)
        })
        .collect()
}

/// The flag `id` as the user gave it (`--long`, or `--long=VALUE` per
/// value, so that a value starting with `-` stays a value), or nothing when
/// it was not given on the command line.
fn forwarded(cmd: &Command, matches: &ArgMatches, id: &str) -> Vec<OsString> {
    let arg = cmd.get_arguments().find(|a| a.get_id().as_str() == id).unwrap_or_else(|| panic!("no flag {id}"));
    if matches.value_source(id) != Some(ValueSource::CommandLine) {
        return Vec::new();
    }
    let long = OsString::from(format!("--{}", arg.get_long().unwrap_or_else(|| panic!("{id} has no long name"))));
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return vec![long];
    }
    let mut out = Vec::new();
    for value in matches.get_raw(id).into_iter().flatten() {
        let mut given = long.clone();
        given.push("=");
        given.push(value);
        out.push(given);
    }
    out
}

/// The positional arguments, after `--`: the query (when there is one)
/// and the paths. A tool run without a query reads them all as paths, and
/// so does vg-pick when `--query` gave the query.
fn positionals(cli: &VecgrepCli) -> Vec<OsString> {
    let mut v = vec![OsString::from("--")];
    v.extend(cli.query.iter().map(OsString::from));
    v.extend(cli.paths.iter().map(|p| p.as_os_str().to_os_string()));
    v
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::FromArgMatches;

    use super::*;
    use crate::cli::{AnswerCli, AskCli, IndexCli, LogCli, McpCli, PickCli, QueryCli, RootCli, ServeCli};
    use crate::{app, cli::FormatCli};

    fn tool_command(name: &str) -> Command {
        match name {
            "vg-serve" => app::command::<ServeCli>(),
            "vg-mcp" => app::command::<McpCli>(),
            "vg-pick" => app::command::<PickCli>(),
            "vg-root" => app::command::<RootCli>(),
            "vg-index" => app::command::<IndexCli>(),
            "vg-query" => app::command::<QueryCli>(),
            "vg-format" => app::command::<FormatCli>(),
            "vg-answer" => app::command::<AnswerCli>(),
            "vg-ask" => app::command::<AskCli>(),
            "vg-log" => app::command::<LogCli>(),
            other => panic!("no tool {other}"),
        }
    }

    /// The porcelain's own flags that put it in `mode`.
    fn selector(mode: Mode) -> Vec<&'static str> {
        match mode {
            Mode::Serve => vec!["--serve"],
            Mode::Mcp => vec!["--mcp"],
            Mode::Pick => vec!["-i"],
            Mode::ShowRoot => vec!["--show-root"],
            Mode::Stats => vec!["--stats"],
            Mode::ClearCache => vec!["--clear-cache"],
            Mode::IndexOnly => vec!["--index-only"],
            Mode::Search => vec![],
            Mode::Answer => vec!["--answer"],
            Mode::Log => vec!["--log"],
            Mode::Plan => vec!["--plan"],
            Mode::Ask => vec!["--ask"],
        }
    }

    #[test]
    fn every_porcelain_flag_reaches_the_tool_it_runs() {
        let porcelain = app::command::<VecgrepCli>();
        let mut reached = BTreeSet::new();
        for mode in Mode::ALL {
            for (tool, ids) in mode.tools() {
                for id in expand_groups(&porcelain, &ids) {
                    let arg = porcelain.get_arguments().find(|a| a.get_id().as_str() == id).unwrap();
                    let long = arg.get_long().unwrap();
                    let value = crate::cli::sample(arg);
                    let mut argv: Vec<String> = vec!["vecgrep".into()];
                    argv.extend(selector(mode).into_iter().map(String::from));
                    argv.push(format!("--{long}"));
                    argv.extend(value.clone());
                    argv.extend(["the query".to_string(), "src".to_string()]);
                    let matches =
                        porcelain.clone().try_get_matches_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                    let cli = VecgrepCli::from_arg_matches(&matches).unwrap();
                    assert_eq!(Mode::of(&cli), mode, "{argv:?}");
                    let runs = plan(mode, &cli, &matches, &porcelain);
                    let (_, passed) = runs.iter().find(|(t, _)| *t == tool).unwrap();
                    let target = tool_command(tool);
                    let parsed = target
                        .clone()
                        .try_get_matches_from(std::iter::once(OsString::from(tool)).chain(passed.iter().cloned()))
                        .unwrap_or_else(|e| panic!("{tool} {passed:?}: {e}"));
                    let there = target.get_arguments().find(|a| a.get_long() == Some(long)).expect("the tool has it");
                    let there_id = there.get_id().as_str();
                    assert_eq!(parsed.value_source(there_id), Some(ValueSource::CommandLine), "{argv:?} -> {passed:?}");
                    if let Some(value) = value {
                        let got: Vec<_> = parsed.get_raw(there_id).unwrap().collect();
                        assert_eq!(got, [value.as_str()], "{argv:?} -> {passed:?}");
                    }
                    // The first tool gets the positional arguments too, after the flags.
                    if tool == runs[0].0 {
                        assert_eq!(
                            passed[passed.len() - 3..],
                            ["--", "the query", "src"].map(OsString::from),
                            "{tool}"
                        );
                    }
                    reached.insert(id);
                }
            }
        }
        let forgotten: Vec<&str> = porcelain
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .filter(|id| !reached.contains(*id) && !MODE_SELECTORS.contains(id))
            .collect();
        assert!(forgotten.is_empty(), "porcelain flags no tool is given: {forgotten:?}");
    }

    #[test]
    fn catalog_and_use_first_are_vg_catalog_commands_and_a_query_after_dashes_is_not() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(catalog_command(&args(&["catalog", "add", "t", "d"])), Some(args(&["add", "t", "d"])));
        assert_eq!(catalog_command(&args(&["use", "--clear"])), Some(args(&["use", "--clear"])));
        assert_eq!(catalog_command(&args(&["--", "use"])), None);
        assert_eq!(catalog_command(&args(&["use the cache", "src"])), None);
        assert_eq!(catalog_command(&args(&["-q", "catalog"])), None);
    }

    #[test]
    fn flags_not_given_are_not_passed_on() {
        let porcelain = app::command::<VecgrepCli>();
        let matches = porcelain.clone().try_get_matches_from(["vecgrep", "-k", "5", "retry", "src"]).unwrap();
        let cli = VecgrepCli::from_arg_matches(&matches).unwrap();
        let runs = plan(Mode::of(&cli), &cli, &matches, &porcelain);
        let argv = |i: usize| runs[i].1.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>();
        assert_eq!(
            (runs[0].0, argv(0)),
            ("vg-query", vec!["--judge".into(), "--top-k=5".into(), "--".into(), "retry".into(), "src".into()])
        );
        assert_eq!((runs[1].0, argv(1)), ("vg-format", Vec::<String>::new()));
    }

    #[test]
    fn a_flag_of_another_mode_is_refused() {
        let porcelain = app::command::<VecgrepCli>();
        let stray = |argv: &[&str]| {
            let matches = porcelain.clone().try_get_matches_from(argv).unwrap();
            let cli = VecgrepCli::from_arg_matches(&matches).unwrap();
            stray_flag(Mode::of(&cli), &matches, &porcelain)
        };
        assert_eq!(stray(&["vecgrep", "--learn", "q"]), Some("--learn needs --answer or --ask".into()));
        assert_eq!(
            stray(&["vecgrep", "--llm-url", "http://h/v1", "q"]),
            Some("--llm-url needs --answer or --ask".into())
        );
        assert_eq!(stray(&["vecgrep", "--answer", "--learn", "q"]), None);
        assert_eq!(stray(&["vecgrep", "--ask", "--llm-url", "http://h/v1", "--privacy-mode", "local_only", "q"]), None);
        assert_eq!(stray(&["vecgrep", "--plan", "--planner", "llm", "q"]), None);
        assert_eq!(stray(&["vecgrep", "--planner", "llm", "q"]), Some("--planner needs --ask or --plan".into()));
        assert_eq!(stray(&["vecgrep", "q"]), None);
        assert_eq!(stray(&["vecgrep", "--since", "2024-01-01", "q"]), Some("--since needs --log".into()));
        assert_eq!(stray(&["vecgrep", "--log", "--with-diff", "q"]), None);
        assert_eq!(stray(&["vecgrep", "--log", "--learn", "q"]), Some("--learn needs --answer or --ask".into()));
        assert_eq!(stray(&["vecgrep", "-m", "1", "q"]), None);
        assert_eq!(stray(&["vecgrep", "--answer", "-m", "2", "q"]), None);
        let needs = "--max-count needs a search of the files (not --log, --ask, -i or a server)";
        assert_eq!(stray(&["vecgrep", "--log", "-m", "1", "q"]), Some(needs.into()));
        assert_eq!(stray(&["vecgrep", "-i", "--max-count", "1"]), Some(needs.into()));
    }
}
