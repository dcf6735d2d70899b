//! Parsing a binary's arguments: clap's errors as one line, help and
//! version on stdout, and the flags of another tool named.

use std::io::Write;

use clap::ArgMatches;

use super::exit::{end_process, EXIT_ERROR, EXIT_FOUND};
use super::output::{reader_gone, say_line, stdout, use_color};

/// A binary's clap definition as it parses: with its long help and each
/// setting's note in its help (`cli::finished`).
pub fn command<T: clap::CommandFactory>() -> clap::Command {
    crate::cli::finished(T::command())
}

/// ONNX Runtime 1.31 keeps a telemetry event store and a device id under
/// ~/.cache/Microsoft unless its environment variable says not to; turning
/// its events off through the API (`embed::session`) comes after the store
/// is made. Set first thing, while the process has one thread, for it and
/// the tools it runs: vecgrep works offline and keeps to itself.
fn keep_onnx_runtime_to_itself() {
    let (name, value) = vecgrep::embed::ORT_TELEMETRY_OFF;
    std::env::set_var(name, value);
}

/// Parse the command line into the binary's arguments, keeping what clap
/// saw (which flags were given, as typed); a usage error is one line on
/// stderr and status 2.
pub fn parse_args<T: clap::Parser>(tool: &str) -> (T, ArgMatches) {
    keep_onnx_runtime_to_itself();
    let parsed =
        command::<T>().try_get_matches().and_then(|matches| T::from_arg_matches(&matches).map(|args| (args, matches)));
    match parsed {
        Ok(parsed) => parsed,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // clap would print the whole help; one line names what is missing.
            let cmd = command::<T>();
            let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).filter(|n| *n != "help").collect();
            exit_with_usage_line(tool, &format!("say what to do: {}", names.join(", ")))
        }
        Err(e) => usage_error(tool, e),
    }
}

fn usage_error(tool: &str, e: clap::Error) -> ! {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        print_help_or_version(tool, &e);
    }
    if let (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) = (e.kind(), e.get(ContextKind::InvalidArg)) {
        if let Some(cause) = vg_formats_flag(tool, arg).or_else(|| vg_indexs_flag(tool, arg)) {
            exit_with_usage_line(tool, &cause);
        }
    }
    let rendered = e.render().to_string();
    let cause: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let cause = cause.join(" ");
    exit_with_usage_line(tool, cause.strip_prefix("error: ").unwrap_or(&cause))
}

/// Print `--help` or `--version` as clap would, but say a failed write:
/// clap's own printing ignores it and exits 0 (`vecgrep --help > /dev/full`).
fn print_help_or_version(tool: &str, e: &clap::Error) -> ! {
    let styled = e.render();
    let text = if use_color(crate::cli::ColorChoice::Auto) { styled.ansi().to_string() } else { styled.to_string() };
    let mut out = stdout();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => end_process(EXIT_FOUND),
        Err(e) if reader_gone(&e) => end_process(EXIT_FOUND),
        Err(e) => {
            say_line(tool, &e.to_string());
            end_process(EXIT_ERROR)
        }
    }
}

/// Why `arg` is refused by `tool`, when it is an output flag of vg-format's
/// and `tool` writes the records vg-format shows: clap's own tip points at
/// a flag of similar spelling (`--files`: "--max-filesize").
fn vg_formats_flag(tool: &str, arg: &str) -> Option<String> {
    if !["vg-query", "vg-log", "vg-answer"].contains(&tool) {
        return None;
    }
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    let format = command::<crate::cli::FormatCli>();
    let known = format.get_arguments().any(|a| match name.strip_prefix("--") {
        Some(long) => a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|all| all.contains(&long)),
        None => name.len() == 2 && a.get_short() == name.chars().nth(1),
    });
    known.then(|| {
        format!("'{name}' is an output option of vg-format's, not {tool}'s: {tool} … | vg-format {name} (vecgrep passes it there)")
    })
}

/// Why `arg` is refused by `tool`, when it is one of the flags that turn
/// vg-index from indexing to looking after the index: clap's tip for
/// `--verify` was "--version".
fn vg_indexs_flag(tool: &str, arg: &str) -> Option<String> {
    const UPKEEP: [&str; 5] = ["verify", "forget", "stats", "clear-cache", "reindex"];
    let long = arg.split_once('=').map_or(arg, |(name, _)| name).strip_prefix("--")?;
    (tool != "vg-index" && UPKEEP.contains(&long))
        .then(|| format!("'--{long}' is an option of vg-index's, not {tool}'s: vg-index --{long}"))
}

/// A usage error's one line, pointing at `--help`, and status 2.
fn exit_with_usage_line(tool: &str, cause: &str) -> ! {
    say_line(tool, &format!("{cause} (see '{tool} --help')"));
    std::process::exit(EXIT_ERROR as i32);
}
