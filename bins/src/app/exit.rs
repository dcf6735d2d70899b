//! How a tool ends: its exit status, one line on stderr for an error,
//! and a closed pipe taken for success.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{anyhow, Result};

use super::output::{is_broken_pipe, say_line};

/// Exit statuses, as in ripgrep.
pub const EXIT_FOUND: u8 = 0;
pub const EXIT_NOT_FOUND: u8 = 1;
pub const EXIT_ERROR: u8 = 2;
/// Stopped by Ctrl-C (or SIGTERM), as a shell reports a process SIGINT ended.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Run a binary's body: print any error as one line `tool: cause: cause`,
/// treat a closed stdout as success, and end the process with the outcome's
/// exit code.
pub fn run_main(tool: &str, body: impl FnOnce() -> Result<u8>) -> ! {
    ignore_file_size_signal();
    let code = match body() {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => EXIT_FOUND,
        Err(e) if e.is::<SaidBefore>() => EXIT_ERROR,
        Err(e) => {
            say_line(tool, &error_line(&e));
            EXIT_ERROR
        }
    };
    end_process(code)
}

/// The working directory, or the one-line error every tool gives when it
/// was removed under the shell.
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| anyhow!("cannot read the current directory: {e}"))
}

/// An error and its causes as one line, each cause said once (the
/// library's, which servers' notes and answers use too).
pub use vecgrep::project::shown::error_line;

/// End the process with `code`, its output flushed, without running the
/// exit handlers of the native libraries it loaded. ONNX Runtime's tear
/// down its globals even while another thread is inside it, and the process
/// then dies of SIGSEGV (exit 139) after its work is done: the picker closed
/// while its search thread was still loading the model did (CI, and 2 in
/// ~65 runs of `pick::the_picker_runs_on_a_shared_index…` under load; the
/// core showed `exit` in ORT's handlers beside `commit_from_memory`). What the
/// tool owns was dropped when its body returned; threads still running are
/// abandoned as a normal exit abandons them, and no index write depends on
/// an exit handler (a kill -9 leaves each index whole too).
pub(super) fn end_process(code: u8) -> ! {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    end_now(code)
}

/// End the process with `code` at once, as a signal would: no exit
/// handler runs and nothing buffered is written.
#[allow(unsafe_code)]
pub(super) fn end_now(code: u8) -> ! {
    // SAFETY: `_exit` ends the process and touches no memory of ours.
    unsafe { libc::_exit(i32::from(code)) }
}

/// A write past the file size limit (`ulimit -f`) then fails with EFBIG,
/// which the tool reports in one line as it does a full disk, instead of
/// SIGXFSZ ending it without a word (exit 153) in the middle of a write.
#[allow(unsafe_code)]
fn ignore_file_size_signal() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: ignoring a signal installs no handler, so nothing runs in
    // signal context; the previous disposition is not needed.
    let _ = unsafe { signal(Signal::SIGXFSZ, SigHandler::SigIgn) };
}

/// An error the tool before this one in the porcelain's pipeline said
/// already (a config file it read too): the status is 2, the line is not
/// written twice.
#[derive(Debug)]
pub struct SaidBefore(pub(super) anyhow::Error);

impl std::fmt::Display for SaidBefore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for SaidBefore {}
