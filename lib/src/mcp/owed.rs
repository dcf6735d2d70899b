//! What vg-mcp owes its client: the requests passed to the SDK whose
//! answers are not yet on stdout, the bound past which no more pass (a
//! client that reads none of its answers would otherwise grow the server
//! by every answer), and whether the client has closed its side.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, RequestId, ServerJsonRpcMessage};

/// Requests passed and not yet answered on stdout, what waits to be
/// written, and whether the client has closed its side, which tells a
/// waiting tool (`index`) to answer now.
#[derive(Default)]
pub(super) struct Unanswered {
    /// Each request passed, with the length of its line and whether its
    /// answer is handed to stdout's writer.
    ids: Mutex<Vec<Owed>>,
    pub(super) client_gone: AtomicBool,
    /// Bytes handed to stdout's writer and not yet taken by the client.
    unwritten: AtomicUsize,
    /// Told of each line written: work waiting for room may go on.
    room: tokio::sync::Notify,
    /// The input has ended and the client has been waited for: work still
    /// waiting for room is given up.
    given_up: AtomicBool,
}

/// A request passed: its id, its line's length, and whether its answer
/// is handed to stdout's writer.
struct Owed {
    id: RequestId,
    bytes: usize,
    handed: bool,
}

/// The most requests passed and not yet answered on stdout: at work,
/// waiting their turn (a hung `ask`, an `index` call waiting on its run),
/// or answered and unread. A client with more has the next ones held, read
/// but not begun, until it reads answers.
const OWED_MAX: usize = 1024;

/// The most bytes of request lines passed and not yet answered: a small
/// answer repeats its request's id, which may be most of a 1 MiB line.
const OWED_BYTES_MAX: usize = 16 * 1024 * 1024;

/// The most bytes of answers handed to stdout and not yet taken by the
/// client before no tool begins work (a search's answer runs to 600 KB at
/// k = 1000) and no error is answered: past it, what is at work (8
/// searches and 2 asks at most) adds its answer and the rest wait.
const UNWRITTEN_BYTES_MAX: usize = 32 * 1024 * 1024;

/// The longest the end of input waits for answers still owed, counted from
/// the end of input or the last byte the client took, whichever is later: a
/// client that reads slowly gets every answer, one that reads none lets
/// the server go. mcp.md promises an exit within 30 s of that; after this
/// wait the SDK gives a handler still at work 5 s more to answer
/// (`QuitReason::Closed`'s drain) and the runtime 1 s to stop
/// (`serve_stdio`). A 30 s wait here exited after 36 s; the two seconds to
/// spare are the process's own end, on a busy machine.
const ANSWERS_OWED_WAIT: Duration = Duration::from_secs(22);

/// Whether a client whose input ended at `ended`, and that last took a
/// byte at `last_progress`, has been waited for long enough.
pub(super) fn waited_out(last_progress: Instant, ended: Instant) -> bool {
    last_progress.max(ended).elapsed() >= ANSWERS_OWED_WAIT
}

impl Unanswered {
    fn ids(&self) -> std::sync::MutexGuard<'_, Vec<Owed>> {
        self.ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note what passes to the SDK, whose line was `bytes` long: a request
    /// is owed an answer, a cancellation lifts the debt (MCP: a cancelled
    /// request is not answered).
    pub(super) fn passed(&self, message: &ClientJsonRpcMessage, bytes: usize) {
        match message {
            ClientJsonRpcMessage::Request(request) => self.owe(request.id.clone(), bytes),
            ClientJsonRpcMessage::Notification(n) => {
                // An answer already handed over is owed until written: a
                // client cancelling what was answered would otherwise pass
                // request after request past the bound (review 178).
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    let cancelled = |o: &Owed| !o.handed && Some(&o.id) == c.params.request_id.as_ref();
                    self.ids().retain(|o| !cancelled(o));
                    self.room.notify_waiters();
                }
            }
            _ => {}
        }
    }

    pub(super) fn owe(&self, id: RequestId, bytes: usize) {
        self.ids().push(Owed { id, bytes, handed: false });
    }

    pub(super) fn owed(&self) -> usize {
        self.ids().len()
    }

    /// Whether a request `id` is at work or waiting its turn in the SDK: its
    /// answer not yet handed over. The SDK keeps one request per id, so a
    /// second would take the first's place, and one of their answers would
    /// be dropped and stay owed for ever.
    pub(super) fn in_flight(&self, id: &RequestId) -> bool {
        self.ids().iter().any(|o| &o.id == id && !o.handed)
    }

    /// A line of `bytes` is handed to stdout's writer, answering `answers`.
    pub(super) fn handed(&self, answers: Option<&RequestId>, bytes: usize) {
        self.unwritten.fetch_add(bytes, Ordering::SeqCst);
        if let Some(id) = answers {
            if let Some(owed) = self.ids().iter_mut().find(|o| &o.id == id && !o.handed) {
                owed.handed = true;
            }
        }
    }

    /// A line of `bytes` is written (or dropped, the client gone): the
    /// request it answers, if any, is owed no more.
    pub(super) fn written(&self, answers: Option<&RequestId>, bytes: usize) {
        self.unwritten.fetch_sub(bytes, Ordering::SeqCst);
        if let Some(id) = answers {
            let mut ids = self.ids();
            let at = ids.iter().position(|o| &o.id == id && o.handed).or_else(|| ids.iter().position(|o| &o.id == id));
            if let Some(at) = at {
                ids.swap_remove(at);
            }
        }
        self.room.notify_waiters();
    }

    pub(super) fn unwritten_bytes(&self) -> usize {
        self.unwritten.load(Ordering::SeqCst)
    }

    /// Whether another request may pass to the SDK.
    pub(super) fn may_pass_request(&self) -> bool {
        let ids = self.ids();
        ids.len() < OWED_MAX && ids.iter().map(|o| o.bytes).sum::<usize>() < OWED_BYTES_MAX
    }

    /// Whether more answers may be made: those unwritten leave room.
    pub(super) fn may_write_more(&self) -> bool {
        self.unwritten_bytes() < UNWRITTEN_BYTES_MAX
    }

    /// A future that resolves at the next line written or request
    /// cancelled; enable it before looking at what it waits for, so that
    /// none is missed.
    pub(super) fn room_changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.room.notified()
    }

    /// Resolves once answers may be made (`may_write_more`): a tool waits
    /// for it before it begins work. Err once the client is given up on.
    pub(super) async fn output_room(&self) -> Result<(), String> {
        loop {
            let changed = self.room_changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.may_write_more() {
                return Ok(());
            }
            if self.given_up.load(Ordering::SeqCst) {
                return Err("the client stopped reading answers".into());
            }
            changed.await;
        }
    }

    /// The input has ended and the client is waited for no more: work
    /// waiting for room ends without beginning (its answer would go unread),
    /// rather than holding up the end by the SDK's drain.
    pub(super) fn give_up(&self) {
        self.given_up.store(true, Ordering::SeqCst);
        self.room.notify_waiters();
    }
}

/// The request `message` answers, if any.
pub(super) fn answered_id(message: &ServerJsonRpcMessage) -> Option<RequestId> {
    match message {
        ServerJsonRpcMessage::Response(r) => Some(r.id.clone()),
        ServerJsonRpcMessage::Error(e) => e.id.clone(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cancel(id: i64) -> ClientJsonRpcMessage {
        let line =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        serde_json::from_value(line).unwrap()
    }

    #[test]
    fn a_cancelled_request_is_owed_no_more_unless_its_answer_is_handed_over() {
        let owed = Unanswered::default();
        owed.owe(RequestId::Number(1), 10);
        owed.owe(RequestId::Number(2), 10);
        owed.handed(Some(&RequestId::Number(1)), 500);
        owed.passed(&cancel(1), 0);
        owed.passed(&cancel(2), 0);
        assert_eq!(owed.owed(), 1, "an answer in the writer's hands is owed until written (review 178)");
        assert_eq!(owed.unwritten_bytes(), 500);
        owed.written(Some(&RequestId::Number(1)), 500);
        assert_eq!((owed.owed(), owed.unwritten_bytes()), (0, 0));
    }

    #[test]
    fn an_id_is_in_flight_until_its_answer_is_handed_over() {
        let owed = Unanswered::default();
        let id = RequestId::Number(7);
        assert!(!owed.in_flight(&id));
        owed.owe(id.clone(), 10);
        assert!(owed.in_flight(&id) && !owed.in_flight(&RequestId::String("7".into())));
        owed.handed(Some(&id), 100);
        assert!(!owed.in_flight(&id), "the SDK is done with it: the id may be used again");
    }
}
