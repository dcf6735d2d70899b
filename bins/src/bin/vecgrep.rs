//! vecgrep: the porcelain. It maps its flags onto the vg-* tools and runs
//! them as child processes wired by pipes; it decides nothing itself.

use std::process::{Child, Command, ExitCode, Stdio};

use anyhow::{anyhow, Context, Result};
use vecgrep::tools::find_tool;
use vecgrep_bins::app::{run_main, EXIT_ERROR};
use vecgrep_bins::cli::VecgrepCli;
use vecgrep_bins::porcelain::{self, Mode};

fn main() -> ExitCode {
    let (cli, matches) = vecgrep_bins::app::parse_args::<VecgrepCli>("vecgrep");
    run_main("vecgrep", || dispatch(&cli, &matches))
}

fn tool(name: &str) -> Result<Command> {
    let path = find_tool(name)
        .ok_or_else(|| anyhow!("cannot find {name} next to vecgrep or on PATH; install the whole toolkit"))?;
    Ok(Command::new(path))
}

fn dispatch(cli: &VecgrepCli, matches: &clap::ArgMatches) -> Result<u8> {
    let mode = Mode::of(cli);
    if mode == Mode::Search && cli.query.is_none() {
        return Err(anyhow!("a QUERY is required"));
    }
    let mut runs = Vec::new();
    for (name, argv) in porcelain::plan(mode, cli, matches, &vecgrep_bins::app::command::<VecgrepCli>()) {
        let mut cmd = tool(name)?;
        cmd.args(argv);
        runs.push((name, cmd));
    }
    match (mode, runs.as_mut_slice()) {
        // Become the server or the picker: Ctrl-C and SIGTERM reach it, it
        // owns the terminal (or the MCP client's pipes), and its exit status is ours.
        (Mode::Serve | Mode::Mcp | Mode::Pick, [(name, cmd)]) => {
            use std::os::unix::process::CommandExt;
            let e = cmd.exec();
            Err(e).with_context(|| format!("cannot run {name}"))
        }
        (Mode::Search, [(_, query), (_, format)]) => pipeline(query, format),
        (_, [(_, one)]) => wait_one(one),
        _ => unreachable!("each mode runs one tool, or two for a search"),
    }
}

fn wait_one(cmd: &mut Command) -> Result<u8> {
    let status = cmd.status().with_context(|| format!("cannot run {}", cmd.get_program().to_string_lossy()))?;
    Ok(exit_code(status))
}

fn exit_code(status: std::process::ExitStatus) -> u8 {
    // Killed by a signal counts as an error.
    status.code().map(|c| c.clamp(0, 255) as u8).unwrap_or(EXIT_ERROR)
}

/// Run `producer | consumer`. An error (status 2 or more) of the producer
/// wins, then one of the consumer; otherwise the consumer's status decides
/// (0 results, 1 none), so no failure is hidden as `set -o pipefail` would not.
fn pipeline(producer: &mut Command, consumer: &mut Command) -> Result<u8> {
    let mut p: Child = producer
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", producer.get_program().to_string_lossy()))?;
    let pipe = p.stdout.take().expect("piped stdout");
    let c = consumer.stdin(Stdio::from(pipe)).spawn();
    let mut c = match c {
        Ok(c) => c,
        Err(e) => {
            let _ = p.kill();
            let _ = p.wait();
            return Err(e).with_context(|| format!("cannot run {}", consumer.get_program().to_string_lossy()));
        }
    };
    let p_code = exit_code(p.wait()?);
    let c_code = exit_code(c.wait()?);
    Ok(if p_code >= EXIT_ERROR { p_code } else { c_code })
}
