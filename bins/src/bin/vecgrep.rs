//! vecgrep: the porcelain. It maps its flags onto the vg-* tools and runs
//! them as child processes wired by pipes; it decides nothing itself.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use anyhow::{anyhow, Context, Result};
use vecgrep::tools::find_tool;
use vecgrep_bins::app::{
    note, run_main, ANSWERING_ENV, CATALOG_SEARCHED_ENV, CONFIG_NOTED_ENV, EXIT_ERROR, EXIT_INTERRUPTED, RUN_BY_ENV,
};
use vecgrep_bins::cli::VecgrepCli;
use vecgrep_bins::porcelain::{self, Mode};

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(argv) = porcelain::catalog_command(&args) {
        run_main("vecgrep", || become_tool("vg-catalog", argv));
    }
    let (cli, matches) = vecgrep_bins::app::parse_args::<VecgrepCli>("vecgrep");
    run_main("vecgrep", || dispatch(&cli, &matches))
}

fn tool(name: &str) -> Result<Command> {
    let path = find_tool(name)
        .ok_or_else(|| anyhow!("cannot find {name} next to vecgrep or on PATH; install the whole toolkit"))?;
    let mut cmd = Command::new(path);
    // What the porcelain tells its tools is its own, never the user's environment's.
    cmd.env(RUN_BY_ENV, "vecgrep").env_remove(CONFIG_NOTED_ENV).env_remove(ANSWERING_ENV);
    cmd.env_remove(CATALOG_SEARCHED_ENV);
    cmd.env_remove(vecgrep::project::OWN_OUTPUT_VAR);
    Ok(cmd)
}

/// Run `name` with `argv` in vecgrep's place.
fn become_tool(name: &str, argv: Vec<std::ffi::OsString>) -> Result<u8> {
    use std::os::unix::process::CommandExt;
    let e = tool(name)?.args(argv).exec();
    Err(e).with_context(|| format!("cannot run {name}"))
}

fn dispatch(cli: &VecgrepCli, matches: &clap::ArgMatches) -> Result<u8> {
    let mode = Mode::of(cli);
    if matches!(mode, Mode::Search | Mode::Answer) && cli.query.is_none() {
        return Err(anyhow!("a QUERY is required"));
    }
    // Where the first word is a query, it is text; where every word is a PATH, any bytes.
    let takes_paths_only =
        matches!(mode, Mode::Serve | Mode::Mcp | Mode::ShowRoot | Mode::Stats | Mode::ClearCache | Mode::IndexOnly)
            || (mode == Mode::Pick && cli.pick.pick_query.is_some());
    if !takes_paths_only && cli.query.as_ref().is_some_and(|q| q.to_str().is_none()) {
        return Err(anyhow!("the QUERY is not valid UTF-8"));
    }
    let porcelain = vecgrep_bins::app::command::<VecgrepCli>();
    if let Some(stray) = porcelain::stray_flag(mode, matches, &porcelain) {
        return Err(anyhow!("{stray}"));
    }
    // Every tool of a pipeline would fail on it, each saying so.
    vecgrep_bins::app::current_dir()?;
    let mut runs = Vec::new();
    // Looked up once, for the first tool told it (vg-answer, then vg-format).
    let searched_catalog = std::cell::OnceCell::new();
    for (name, argv) in porcelain::plan(mode, cli, matches, &porcelain) {
        let mut cmd = tool(name)?;
        cmd.args(argv);
        if !runs.is_empty() {
            // The first tool has said what of the config it passed over.
            cmd.env(CONFIG_NOTED_ENV, "1");
        }
        if mode == Mode::Answer && name == "vg-query" {
            cmd.env(ANSWERING_ENV, "1");
        }
        if matches!(name, "vg-answer" | "vg-format") {
            let searched = searched_catalog.get_or_init(|| {
                cli.catalog.catalog.clone().or_else(|| vecgrep_bins::app::default_context_catalog(&cli.paths))
            });
            if let Some(catalog) = searched {
                cmd.env(CATALOG_SEARCHED_ENV, catalog);
            }
        }
        // The picker takes no --color: `never` is said to it as NO_COLOR,
        // which it heeds (it was taken and passed over).
        if mode == Mode::Pick && matches!(cli.output.color, vecgrep_bins::cli::ColorChoice::Never) {
            cmd.env("NO_COLOR", "1");
        }
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
        (_, [(_, one)]) => {
            wait_for_children_on_interrupt();
            pipeline(vec![one])
        }
        (Mode::Search | Mode::Answer | Mode::Log, stages) => {
            wait_for_children_on_interrupt();
            pipeline(stages.iter_mut().map(|(_, cmd)| cmd).collect())
        }
        _ => unreachable!("only a search runs several tools"),
    }
}

/// The running tools' process ids, for a signal to pass on to them.
static CHILDREN: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The SIGINT, SIGTERM or SIGHUP vecgrep received, if any (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// The tools stop as they see fit on a signal (an index run keeps what it
/// wrote and says so), and vecgrep waits for them, so that their last words
/// come before the shell's prompt and their status is vecgrep's. Ctrl-C
/// reaches the whole process group, but a signal is often sent to vecgrep
/// alone (`kill`, `timeout`, a service manager, a closed terminal's shell):
/// each is passed on to the tools, which take the same signal twice within
/// a moment for one (`app::SAME_INTERRUPT`). (Handlers, unlike ignored
/// signals, are not inherited by the tools.)
fn wait_for_children_on_interrupt() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            SIGNALLED.store(signal, Ordering::SeqCst);
            for &pid in CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                pass_on(pid, signal);
            }
        }
    });
}

/// Send `signal` to the tool `pid`; one already gone is no error.
fn pass_on(pid: i32, signal: i32) {
    if let Ok(signal) = nix::sys::signal::Signal::try_from(signal) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// Note a tool started, so that a signal reaches it; one that started after
/// vecgrep was told to end is told at once.
fn started(child: &Child) {
    let pid = child.id() as i32;
    CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => {}
        signal => pass_on(pid, signal),
    }
}

/// Forget a tool that has been waited for: its process id may be given to
/// another process, which a later signal must not reach.
fn ended(child: &Child) {
    let pid = child.id() as i32;
    CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).retain(|&p| p != pid);
}

/// A tool's status as vecgrep's. One killed by the user's signal was
/// interrupted (130), as vecgrep is; by another, it is an error, and said
/// (an OOM kill or a crash would otherwise end the search without a word).
fn exit_code(tool: &str, status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return code.clamp(0, 255) as u8;
    }
    // A SIGTERM or SIGHUP stops the tools by any means; a Ctrl-C by its own,
    // which reaches a tool without a handler (vg-answer waiting on a chat
    // model) as soon as vecgrep, whose own hearing of it may come later.
    let users = |signal: &i32| match SIGNALLED.load(Ordering::SeqCst) {
        _ if *signal == libc::SIGINT => true,
        0 | libc::SIGINT => false,
        _ => true,
    };
    match status.signal() {
        Some(signal) if users(&signal) => EXIT_INTERRUPTED,
        signal => {
            let signal = signal.unwrap_or(0);
            let name = nix::sys::signal::Signal::try_from(signal).map_or("an unknown signal", |s| s.as_str());
            note("vecgrep", false, &format!("{tool} was killed by signal {signal} ({name})"));
            EXIT_ERROR
        }
    }
}

/// Have the tool `cmd` starts sent SIGTERM when vecgrep ends without
/// passing a signal on (`kill -9`, an editor ending the last search at each
/// key): it stops as on Ctrl-C, the index marked incomplete, rather than
/// run on unseen, writing to a reader long gone and holding the lock the
/// next search waits for.
#[allow(unsafe_code)]
fn ends_with_vecgrep(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let vecgrep = std::process::id() as libc::pid_t;
        // SAFETY: prctl(2) and getppid(2) are async-signal-safe and
        // allocate nothing, as a closure run between fork and exec must.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                // vecgrep ended before the request was made: none will come.
                if libc::getppid() != vecgrep {
                    return Err(std::io::Error::other("vecgrep has ended"));
                }
                Ok(())
            });
        }
    }
}

/// Run `stages[0] | stages[1] | ...`. An error (status 2 or more) of the
/// earliest stage that had one wins; otherwise the last stage's status
/// decides (0 results, 1 none), so no failure is hidden as a shell without
/// `set -o pipefail` would hide it.
fn pipeline(stages: Vec<&mut Command>) -> Result<u8> {
    let tools: Vec<String> = stages
        .iter()
        .map(|c| std::path::Path::new(c.get_program()).file_name().unwrap_or_default().to_string_lossy().into_owned())
        .collect();
    let mut children: Vec<Child> = Vec::new();
    let last = stages.len() - 1;
    let own_output = vecgrep::project::own_output_for_stages();
    for (i, cmd) in stages.into_iter().enumerate() {
        match &own_output {
            Some(id) => cmd.env(vecgrep::project::OWN_OUTPUT_VAR, id),
            None => cmd.env_remove(vecgrep::project::OWN_OUTPUT_VAR),
        };
        if let Some(prev) = children.last_mut() {
            cmd.stdin(Stdio::from(prev.stdout.take().expect("piped stdout")));
        }
        if i < last {
            cmd.stdout(Stdio::piped());
        }
        ends_with_vecgrep(cmd);
        match cmd.spawn() {
            Ok(child) => {
                started(&child);
                // The pipe's read end, held by `cmd` until it is dropped, would
                // keep a stage writing when its reader has gone (`vecgrep … | head -1`).
                cmd.stdin(Stdio::null());
                children.push(child);
            }
            Err(e) => {
                for mut c in children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(e).with_context(|| format!("cannot run {}", cmd.get_program().to_string_lossy()));
            }
        }
    }
    let mut codes = Vec::new();
    for (mut child, tool) in children.into_iter().zip(&tools) {
        let status = child.wait();
        ended(&child);
        codes.push(exit_code(tool, status?));
    }
    let last_code = *codes.last().expect("one stage at least");
    Ok(codes.into_iter().find(|&c| c >= EXIT_ERROR).unwrap_or(last_code))
}
