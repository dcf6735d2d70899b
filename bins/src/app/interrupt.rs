//! Ctrl-C and SIGTERM: a run stops where it can keep what it wrote, and a
//! second interrupt ends the process.

use std::io::{self, BufRead};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use anyhow::Result;
use vecgrep::project::ProjectRoot;

use super::exit::{end_now, EXIT_INTERRUPTED};
use super::output::note;

/// A server's shutdown flag (`embedders_stop_with`).
static SERVER_STOPPING: std::sync::OnceLock<std::sync::Arc<AtomicBool>> = std::sync::OnceLock::new();

/// Have a remote embedder stop its retries and its request in hand once a
/// server's `shutdown` is set (a signal): a server that does not answer
/// held the signal for every retry, minutes at the defaults.
pub fn embedders_stop_with(shutdown: &std::sync::Arc<AtomicBool>) {
    let _ = SERVER_STOPPING.set(std::sync::Arc::clone(shutdown));
    vecgrep::embed::stop_when(|| SERVER_STOPPING.get().is_some_and(|s| s.load(Ordering::SeqCst)));
}

/// Set by the first Ctrl-C (or SIGTERM) during an index run.
pub(super) static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Whether an index run (`index_blocking`) is under way.
static INDEXING: AtomicBool = AtomicBool::new(false);
/// Whether a screen is open (`on_screen`): the picker's.
static ON_SCREEN: AtomicBool = AtomicBool::new(false);

/// When the first Ctrl-C (or SIGTERM) of an index run came.
static FIRST_INTERRUPT: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// A second signal this soon after the first is the same one delivered
/// twice, not the user's second Ctrl-C: `vecgrep` passes on what it
/// receives, and cannot tell whether its tools had it too (Ctrl-C reaches
/// the whole process group, `kill` the one process).
const SAME_INTERRUPT: Duration = Duration::from_millis(300);

/// Ctrl-C during an index run stops it within a few chunks, with what was
/// written kept and said (an index is never left half-written either way);
/// a second one, or one at any other time (a search, a chat model's
/// answer), ends the process at once, as it would without a handler.
fn stop_on_interrupt() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        vecgrep::embed::stop_when(interrupted);
        // A tool with a handler of its own (the servers) keeps it.
        let _ = ctrlc::set_handler(|| {
            if !INDEXING.load(Ordering::SeqCst) && !ON_SCREEN.load(Ordering::SeqCst) {
                // Not `exit`: a search thread may be inside the model (end_process).
                end_now(EXIT_INTERRUPTED);
            }
            if !INTERRUPTED.swap(true, Ordering::SeqCst) {
                let _ = FIRST_INTERRUPT.set(Instant::now());
            } else if FIRST_INTERRUPT.get().is_none_or(|first| first.elapsed() >= SAME_INTERRUPT) {
                end_now(EXIT_INTERRUPTED);
            }
        });
    });
}

/// Run `work` as an index run is run: the first Ctrl-C or SIGTERM only
/// sets `interrupted()`, for `work` to stop at a safe point (a wait for
/// another run's lock, say); a second ends the process.
pub fn stoppable<T>(work: impl FnOnce() -> T) -> T {
    hearing_interrupts(&INDEXING, work)
}

/// Run `work` with a screen open (the picker's alternate screen, raw
/// mode, mouse reporting): the first Ctrl-C, SIGTERM or SIGHUP only sets
/// `interrupted()`, for `work` to close its screen and return; ended at
/// once, the process left the terminal in the screen's modes (no echo, the
/// mouse sending escape codes to the shell). A second ends the process.
pub fn on_screen<T>(work: impl FnOnce() -> T) -> T {
    hearing_interrupts(&ON_SCREEN, work)
}

/// Run `work` with `during` set, so that the first Ctrl-C, SIGTERM or
/// SIGHUP only sets `interrupted()` (`stop_on_interrupt`).
fn hearing_interrupts<T>(during: &AtomicBool, work: impl FnOnce() -> T) -> T {
    stop_on_interrupt();
    during.store(true, Ordering::SeqCst);
    let done = work();
    during.store(false, Ordering::SeqCst);
    done
}

/// The project's write lock, waited for while another run holds it (said
/// once), or None when Ctrl-C or SIGTERM ended the wait (said too): what
/// writes outside an index run (vg-log, `--forget`, `--verify`'s word
/// check) takes turns as a run does.
pub fn wait_for_write_lock(
    tool: &str,
    root: &ProjectRoot,
    quiet: bool,
) -> Result<Option<vecgrep::store::WriteLock>, vecgrep::store::StoreError> {
    let mut waited = false;
    let waiting = &mut || {
        waited = true;
        note(tool, quiet, vecgrep::index::LOCK_WAIT);
    };
    let lock = stoppable(|| vecgrep::store::lock_for_writing_unless(root, waiting, &interrupted))?;
    if lock.is_none() {
        note(tool, false, vecgrep::index::stopped_before_the_lock(waited));
    }
    Ok(lock)
}

/// A line typed at `tty`, or None when Ctrl-C or SIGTERM came first or the
/// terminal failed. The read waits in `poll`, since a blocking read is
/// restarted after the signal and would wait on for Enter.
pub(super) fn answer_unless_interrupted(tty: &std::fs::File) -> Option<String> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    const LOOK_AGAIN_MS: u16 = 100;
    loop {
        if interrupted() {
            return None;
        }
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(LOOK_AGAIN_MS)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => {
                let mut answer = String::new();
                return io::BufReader::new(tty).read_line(&mut answer).ok().map(|_| answer);
            }
            Err(_) => return None,
        }
    }
}

/// Whether Ctrl-C or SIGTERM came during `stoppable` work or an index run.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
