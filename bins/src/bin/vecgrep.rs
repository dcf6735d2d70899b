//! vecgrep: the porcelain. It maps its flags onto the vg-* tools and runs
//! them as child processes wired by pipes; it decides nothing itself.

use std::process::{Child, Command, ExitCode, Stdio};

use anyhow::{anyhow, Context, Result};
use vecgrep::tools::find_tool;
use vecgrep_bins::app::{run_main, EXIT_ERROR};
use vecgrep_bins::cli::VecgrepCli;

fn main() -> ExitCode {
    let cli = vecgrep_bins::app::parse_args::<VecgrepCli>("vecgrep");
    run_main("vecgrep", || dispatch(&cli))
}

fn tool(name: &str) -> Result<Command> {
    let path = find_tool(name)
        .ok_or_else(|| anyhow!("cannot find {name} next to vecgrep or on PATH; install the whole toolkit"))?;
    Ok(Command::new(path))
}

/// The PATHS for modes that take no query (--stats, --show-root,
/// --index-only, --clear-cache): there every positional argument is a path.
fn paths_argv(cli: &VecgrepCli) -> Vec<String> {
    let mut v = vec!["--".to_string()];
    v.extend(cli.query.iter().cloned());
    v.extend(cli.paths.iter().map(|p| p.to_string_lossy().into_owned()));
    v
}

fn common_flags(cli: &VecgrepCli) -> Vec<String> {
    let mut v = Vec::new();
    if cli.skip_outside_root {
        v.push("--skip-outside-root".into());
    }
    if cli.quiet {
        v.push("--quiet".into());
    }
    v
}

fn dispatch(cli: &VecgrepCli) -> Result<u8> {
    if cli.server.serve {
        let mut cmd = tool("vg-serve")?;
        cmd.args(common_flags(cli))
            .args(cli.server.to_argv())
            .args(cli.search.to_argv())
            .args(cli.index.to_argv())
            .args(cli.walk.to_argv())
            .args(paths_argv(cli));
        // Become vg-serve, so that Ctrl-C and SIGTERM reach the server
        // itself and the shell waits for its clean shutdown.
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        return Err(e).context("cannot run vg-serve");
    }
    if cli.interactive {
        let mut cmd = tool("vg-pick")?;
        cmd.args(common_flags(cli))
            .args(cli.pick.to_argv(cli.server.full_index))
            .args(cli.search.to_argv())
            .args(cli.index.to_argv())
            .args(cli.walk.to_argv());
        // With --query every positional argument is a path; without it the
        // first is the query, as vg-pick reads them.
        cmd.args(paths_argv(cli));
        // Become the picker: it owns the terminal, and its exit status is ours.
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        return Err(e).context("cannot run vg-pick");
    }
    if cli.show_root {
        let mut cmd = tool("vg-root")?;
        if cli.skip_outside_root {
            cmd.arg("--skip-outside-root");
        }
        return wait_one(cmd.args(paths_argv(cli)));
    }
    if cli.stats {
        let mut cmd = tool("vg-index")?;
        cmd.arg("--stats").args(common_flags(cli));
        if cli.output.json {
            cmd.arg("--json");
        }
        return wait_one(cmd.args(paths_argv(cli)));
    }
    if cli.clear_cache {
        let mut cmd = tool("vg-index")?;
        cmd.arg("--clear-cache").args(common_flags(cli)).args(paths_argv(cli));
        return wait_one(&mut cmd);
    }
    if cli.index_only {
        let mut cmd = tool("vg-index")?;
        cmd.args(common_flags(cli)).args(cli.index.to_argv()).args(cli.walk.to_argv());
        if cli.reindex {
            cmd.arg("--reindex");
        }
        // vg-index prints its summary record; per-file records only when piped.
        return wait_one(cmd.args(paths_argv(cli)));
    }
    let query = cli.query.as_deref().ok_or_else(|| anyhow!("a QUERY is required"))?;
    let mut q = tool("vg-query")?;
    q.args(common_flags(cli)).args(cli.search.to_argv()).args(cli.index.to_argv()).args(cli.walk.to_argv());
    for (on, flag) in [(cli.reindex, "--reindex"), (cli.no_index, "--no-index"), (cli.no_scope, "--no-scope")] {
        if on {
            q.arg(flag);
        }
    }
    q.arg("--").arg(query).args(cli.paths.iter());
    let mut f = tool("vg-format")?;
    f.args(cli.output.to_argv());
    pipeline(q, f)
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
fn pipeline(mut producer: Command, mut consumer: Command) -> Result<u8> {
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
