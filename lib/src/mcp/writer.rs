//! vg-mcp's stdout: whole lines written by a thread of their own, so that a
//! client that stops reading holds up neither the protocol's tasks nor the
//! end of the process. The thread writes to its own handle on fd 1, never
//! through std's stdout, whose lock a blocked write would hold and the
//! process's last flush would then wait on for ever.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::RequestId;

use super::owed::Unanswered;

/// Lines handed to the writer thread, and how far it is with them.
pub(super) struct LineWriter {
    lines: Mutex<mpsc::Sender<Outgoing>>,
    state: Arc<WriterState>,
    unanswered: Arc<Unanswered>,
}

struct Outgoing {
    line: Vec<u8>,
    /// The request this line answers, owed until the line is written.
    answers: Option<RequestId>,
}

struct WriterState {
    pending_lines: AtomicUsize,
    /// When the client last took a piece of a line (`WRITE_PIECE`), or a
    /// line came to an idle writer: a client that reads slowly is never
    /// taken for one that stopped.
    last_progress: Mutex<Instant>,
    /// A write failed (the client closed its end): lines are dropped.
    failed: AtomicBool,
    /// Why a write failed, when not because the client closed its end (a
    /// full disk): the server says it and ends with status 2, where every
    /// answer was lost and it ended 0 (audit 200).
    error: Mutex<Option<String>>,
    /// The process is ending on a signal: the line in hand is finished,
    /// the rest are dropped.
    stopping: AtomicBool,
}

/// The most bytes one write hands the kernel: a pipe's page. A blocking
/// write to a pipe returns once all of it is taken, so a 600 KB line
/// written at once showed a slow reader's progress only at its end, and
/// 16 KiB pieces only every 16 KiB read: a reader of 600 bytes a second
/// was taken for one that had stopped (reviews 176 and 178). A pipe frees
/// room a page at a time, so a smaller piece would show no more.
const WRITE_PIECE: usize = 4096;

impl WriterState {
    fn progressed(&self) {
        *self.last_progress.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}

impl LineWriter {
    /// A writer of lines to `out`, telling `unanswered` of each line
    /// handed over and written (or dropped, once the client has closed its end).
    pub(super) fn spawn<W: Write + Send + 'static>(out: W, unanswered: Arc<Unanswered>) -> std::io::Result<LineWriter> {
        let (lines, queue) = mpsc::channel::<Outgoing>();
        let state = Arc::new(WriterState {
            pending_lines: AtomicUsize::new(0),
            last_progress: Mutex::new(Instant::now()),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            stopping: AtomicBool::new(false),
        });
        let (writing, told) = (Arc::clone(&state), Arc::clone(&unanswered));
        std::thread::Builder::new()
            .name("vg-mcp stdout".into())
            .spawn(move || write_lines(out, &queue, &writing, &told))?;
        Ok(LineWriter { lines: Mutex::new(lines), state, unanswered })
    }

    /// Hand `line` (without its newline) to the writer; it answers the
    /// request `answers`, if any. Err once the client has closed its end.
    pub(super) fn send(&self, mut line: Vec<u8>, answers: Option<RequestId>) -> std::io::Result<()> {
        if self.state.failed.load(Ordering::SeqCst) {
            return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        }
        line.push(b'\n');
        let bytes = line.len();
        self.unanswered.handed(answers.as_ref(), bytes);
        if self.state.pending_lines.fetch_add(1, Ordering::SeqCst) == 0 {
            // The writer was idle: a stall is counted from now.
            self.state.progressed();
        }
        let sent = self.lines.lock().unwrap_or_else(|e| e.into_inner()).send(Outgoing { line, answers });
        sent.map_err(|_| {
            // The thread is gone: nothing handed to it is written.
            self.state.pending_lines.fetch_sub(1, Ordering::SeqCst);
            self.unanswered.written(None, bytes);
            std::io::Error::from(std::io::ErrorKind::BrokenPipe)
        })
    }

    /// Lines handed over and not yet written.
    pub(super) fn pending_lines(&self) -> usize {
        self.state.pending_lines.load(Ordering::SeqCst)
    }

    /// When the client last took a piece of a line, or a line came to a
    /// writer that had nothing to write.
    pub(super) fn last_progress(&self) -> Instant {
        *self.state.last_progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a write failed: nothing more reaches the client.
    pub(super) fn failed(&self) -> bool {
        self.state.failed.load(Ordering::SeqCst)
    }

    /// Why writing failed, when not because the client closed its end.
    pub(super) fn write_error(&self) -> Option<String> {
        self.state.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Finish the line in hand; drop the rest, unwritten.
    pub(super) fn stop_after_line(&self) {
        self.state.stopping.store(true, Ordering::SeqCst);
    }

    /// Wait until every line handed over is written, or the client has
    /// taken nothing for `stall`: one already waited out is not waited for again.
    pub(super) fn wait_written(&self, stall: Duration) {
        while self.pending_lines() > 0 && self.last_progress().elapsed() < stall {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The writer thread: each line whole, in the order handed over.
fn write_lines<W: Write>(mut out: W, queue: &mpsc::Receiver<Outgoing>, state: &WriterState, unanswered: &Unanswered) {
    for Outgoing { line, answers } in queue {
        let dropped = state.failed.load(Ordering::SeqCst) || state.stopping.load(Ordering::SeqCst);
        if !dropped {
            if let Err(e) = write_line(&mut out, &line, state) {
                // A closed pipe or socket (a socket closed with data unread
                // resets: review 202) is the client gone, not a failure.
                let gone = [
                    std::io::ErrorKind::BrokenPipe,
                    std::io::ErrorKind::ConnectionReset,
                    std::io::ErrorKind::ConnectionAborted,
                ];
                if !gone.contains(&e.kind()) {
                    *state.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                }
                state.failed.store(true, Ordering::SeqCst);
            }
        }
        state.pending_lines.fetch_sub(1, Ordering::SeqCst);
        unanswered.written(answers.as_ref(), line.len());
    }
}

fn write_line<W: Write>(out: &mut W, line: &[u8], state: &WriterState) -> std::io::Result<()> {
    let mut rest = line;
    while !rest.is_empty() {
        match out.write(&rest[..rest.len().min(WRITE_PIECE)]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                rest = &rest[n..];
                state.progressed();
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.flush()
}

/// This process's fd 1, as a handle of its own (std's stdout is never locked).
pub(super) fn stdout_handle() -> std::io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe's end that takes nothing until `open` is set, then at most
    /// `piece` bytes a write, and keeps the writes it was given.
    struct Gate {
        open: Arc<AtomicBool>,
        writes: Writes,
    }

    impl Write for Gate {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            while !self.open.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            self.writes.lock().unwrap().push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The writes a `Gate` was given.
    type Writes = Arc<Mutex<Vec<Vec<u8>>>>;

    fn gate() -> (Gate, Arc<AtomicBool>, Writes) {
        let (open, writes) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        (Gate { open: Arc::clone(&open), writes: Arc::clone(&writes) }, open, writes)
    }

    #[test]
    fn lines_are_owed_until_written_and_a_stalled_client_ends_the_wait() {
        let (gate, open, writes) = gate();
        let unanswered = Arc::new(Unanswered::default());
        unanswered.owe(RequestId::Number(1), 30);
        let writer = LineWriter::spawn(gate, Arc::clone(&unanswered)).unwrap();
        let long = format!("{{\"id\":1,\"x\":\"{}\"}}", "y".repeat(3 * WRITE_PIECE));
        writer.send(long.clone().into_bytes(), Some(RequestId::Number(1))).unwrap();
        writer.send(b"{\"note\":2}".to_vec(), None).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(unanswered.owed(), 1, "owed while the client takes nothing");
        assert_eq!(unanswered.unwritten_bytes(), long.len() + 1 + 11);
        let start = Instant::now();
        writer.wait_written(Duration::from_millis(200));
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(100) && waited < Duration::from_secs(30), "{waited:?}");
        assert_eq!(unanswered.owed(), 1, "a stalled client is not waited for");
        open.store(true, Ordering::SeqCst);
        writer.wait_written(Duration::from_secs(60));
        let writes = writes.lock().unwrap();
        assert_eq!(writes.concat(), format!("{long}\n{{\"note\":2}}\n").into_bytes());
        assert!(writes.iter().all(|w| w.len() <= WRITE_PIECE), "a long line is written a piece at a time");
        assert_eq!((unanswered.owed(), unanswered.unwritten_bytes()), (0, 0));
    }

    #[test]
    fn after_a_failed_write_lines_are_dropped_and_owed_no_more() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let unanswered = Arc::new(Unanswered::default());
        unanswered.owe(RequestId::Number(1), 2);
        let writer = LineWriter::spawn(Closed, Arc::clone(&unanswered)).unwrap();
        writer.send(b"{}".to_vec(), Some(RequestId::Number(1))).unwrap();
        writer.wait_written(Duration::from_secs(60));
        assert_eq!((unanswered.owed(), unanswered.unwritten_bytes()), (0, 0));
        assert_eq!(writer.send(b"{}".to_vec(), None).unwrap_err().kind(), std::io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn stopping_finishes_the_line_in_hand_and_drops_the_rest() {
        let (gate, open, writes) = gate();
        let unanswered = Arc::new(Unanswered::default());
        let writer = LineWriter::spawn(gate, Arc::clone(&unanswered)).unwrap();
        let long = "z".repeat(2 * WRITE_PIECE);
        writer.send(long.clone().into_bytes(), None).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        writer.send(b"second".to_vec(), None).unwrap();
        writer.stop_after_line();
        open.store(true, Ordering::SeqCst);
        writer.wait_written(Duration::from_secs(60));
        assert_eq!(writes.lock().unwrap().concat(), format!("{long}\n").into_bytes());
        assert_eq!(unanswered.unwritten_bytes(), 0);
    }
}
