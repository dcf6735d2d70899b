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
}

struct Outgoing {
    line: Vec<u8>,
    /// The request this line answers, owed until the line is written.
    answers: Option<RequestId>,
}

struct WriterState {
    pending_lines: AtomicUsize,
    pending_bytes: AtomicUsize,
    /// When the client last took a byte, or a line came to an idle writer:
    /// a client that reads slowly is never taken for one that stopped.
    last_progress: Mutex<Instant>,
    /// A write failed (the client closed its end): lines are dropped.
    failed: AtomicBool,
}

impl WriterState {
    fn progressed(&self) {
        *self.last_progress.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}

impl LineWriter {
    /// A writer of lines to `out`, telling `unanswered` of each line
    /// written (or dropped, once the client has closed its end).
    pub(super) fn spawn<W: Write + Send + 'static>(out: W, unanswered: Arc<Unanswered>) -> std::io::Result<LineWriter> {
        let (lines, queue) = mpsc::channel::<Outgoing>();
        let state = Arc::new(WriterState {
            pending_lines: AtomicUsize::new(0),
            pending_bytes: AtomicUsize::new(0),
            last_progress: Mutex::new(Instant::now()),
            failed: AtomicBool::new(false),
        });
        let writing = Arc::clone(&state);
        std::thread::Builder::new()
            .name("vg-mcp stdout".into())
            .spawn(move || write_lines(out, &queue, &writing, &unanswered))?;
        Ok(LineWriter { lines: Mutex::new(lines), state })
    }

    /// Hand `line` (without its newline) to the writer; it answers the
    /// request `answers`, if any. Err once the client has closed its end.
    pub(super) fn send(&self, mut line: Vec<u8>, answers: Option<RequestId>) -> std::io::Result<()> {
        if self.state.failed.load(Ordering::SeqCst) {
            return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        }
        line.push(b'\n');
        self.state.pending_bytes.fetch_add(line.len(), Ordering::SeqCst);
        if self.state.pending_lines.fetch_add(1, Ordering::SeqCst) == 0 {
            // The writer was idle: a stall is counted from now.
            self.state.progressed();
        }
        let sent = self.lines.lock().unwrap_or_else(|e| e.into_inner()).send(Outgoing { line, answers });
        sent.map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }

    /// Bytes handed to the writer and not yet written.
    pub(super) fn pending_bytes(&self) -> usize {
        self.state.pending_bytes.load(Ordering::SeqCst)
    }

    /// When the client last took a byte, or a line came to a writer that
    /// had nothing to write.
    pub(super) fn last_progress(&self) -> Instant {
        *self.state.last_progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until every line handed over is written, or the client has
    /// taken no byte for `stall`: one already waited out is not waited for again.
    pub(super) fn wait_written(&self, stall: Duration) {
        while self.state.pending_lines.load(Ordering::SeqCst) > 0 && self.last_progress().elapsed() < stall {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The writer thread: each line whole, in the order handed over.
fn write_lines<W: Write>(mut out: W, queue: &mpsc::Receiver<Outgoing>, state: &WriterState, unanswered: &Unanswered) {
    for Outgoing { line, answers } in queue {
        if !state.failed.load(Ordering::SeqCst) && write_line(&mut out, &line, state).is_err() {
            state.failed.store(true, Ordering::SeqCst);
        }
        state.pending_bytes.fetch_sub(line.len(), Ordering::SeqCst);
        state.pending_lines.fetch_sub(1, Ordering::SeqCst);
        drop(line);
        unanswered.written(answers.as_ref());
    }
}

fn write_line<W: Write>(out: &mut W, line: &[u8], state: &WriterState) -> std::io::Result<()> {
    let mut rest = line;
    while !rest.is_empty() {
        match out.write(rest) {
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

    /// A pipe's end that takes nothing until `open` is set, then everything.
    struct Gate {
        open: Arc<AtomicBool>,
        taken: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gate {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            while !self.open.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            self.taken.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_are_owed_until_written_and_a_stalled_client_ends_the_wait() {
        let (open, taken) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
        let unanswered = Arc::new(Unanswered::default());
        unanswered.owe(RequestId::Number(1));
        let gate = Gate { open: Arc::clone(&open), taken: Arc::clone(&taken) };
        let writer = LineWriter::spawn(gate, Arc::clone(&unanswered)).unwrap();
        writer.send(b"{\"id\":1}".to_vec(), Some(RequestId::Number(1))).unwrap();
        writer.send(b"{\"note\":2}".to_vec(), None).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(unanswered.owed(), 1, "owed while the client takes nothing");
        assert_eq!(writer.pending_bytes(), 9 + 11);
        let start = Instant::now();
        writer.wait_written(Duration::from_millis(200));
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(100) && waited < Duration::from_secs(30), "{waited:?}");
        assert_eq!(unanswered.owed(), 1, "a stalled client is not waited for");
        open.store(true, Ordering::SeqCst);
        writer.wait_written(Duration::from_secs(60));
        assert_eq!(&*taken.lock().unwrap(), b"{\"id\":1}\n{\"note\":2}\n");
        assert_eq!((unanswered.owed(), writer.pending_bytes()), (0, 0));
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
        unanswered.owe(RequestId::Number(1));
        let writer = LineWriter::spawn(Closed, Arc::clone(&unanswered)).unwrap();
        writer.send(b"{}".to_vec(), Some(RequestId::Number(1))).unwrap();
        writer.wait_written(Duration::from_secs(60));
        assert_eq!(unanswered.owed(), 0);
        assert_eq!(writer.send(b"{}".to_vec(), None).unwrap_err().kind(), std::io::ErrorKind::BrokenPipe);
    }
}
