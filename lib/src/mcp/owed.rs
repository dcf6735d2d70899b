//! What vg-mcp owes its client: the requests passed to the SDK whose
//! answers are not yet on stdout, the bound past which no more pass (a
//! client that reads none of its answers would otherwise grow the server
//! by every answer), and whether the client has closed its side.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, RequestId, ServerJsonRpcMessage};

use super::writer::LineWriter;

/// Requests passed and not yet answered on stdout, and whether the client
/// has closed its side, which tells a waiting tool (`index`) to answer now.
#[derive(Default)]
pub(super) struct Unanswered {
    ids: Mutex<Vec<RequestId>>,
    pub(super) client_gone: AtomicBool,
    /// Told of each line written: a request held for room may pass.
    room: tokio::sync::Notify,
}

/// The most requests passed and not yet answered on stdout. Searches'
/// answers run to 400 KB (k = 1000), so 128 of them hold about 50 MB; a
/// client with more in flight has its next requests held, read but not
/// begun, until it reads answers. An `index` call waiting on its run is
/// one of them.
const OWED_MAX: usize = 128;

/// The most bytes handed to stdout and not yet taken by the client before
/// no more requests pass (errors answered at once and progress count here,
/// having no request passed to the SDK).
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

impl Unanswered {
    fn ids(&self) -> std::sync::MutexGuard<'_, Vec<RequestId>> {
        self.ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note what passes to the SDK: a request is owed an answer, a
    /// cancellation lifts the debt (MCP: a cancelled request is not answered).
    pub(super) fn passed(&self, message: &ClientJsonRpcMessage) {
        match message {
            ClientJsonRpcMessage::Request(request) => self.owe(request.id.clone()),
            ClientJsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    self.ids().retain(|id| Some(id) != c.params.request_id.as_ref());
                }
            }
            _ => {}
        }
    }

    pub(super) fn owe(&self, id: RequestId) {
        self.ids().push(id);
    }

    pub(super) fn owed(&self) -> usize {
        self.ids().len()
    }

    /// A line is written: the request it answers, if any, is owed no more.
    pub(super) fn written(&self, answers: Option<&RequestId>) {
        if let Some(id) = answers {
            let mut ids = self.ids();
            if let Some(at) = ids.iter().position(|owed| owed == id) {
                ids.swap_remove(at);
            }
        }
        self.room.notify_one();
    }

    /// Whether another request may pass to the SDK.
    pub(super) fn has_room(&self, writer: &LineWriter) -> bool {
        self.owed() < OWED_MAX && writer.pending_bytes() < UNWRITTEN_BYTES_MAX
    }

    /// Resolves when a line is written (cancel-safe: a notification taken
    /// by a future dropped unpolled goes to the next).
    pub(super) async fn room_freed(&self) {
        self.room.notified().await;
    }

    /// `room_freed`, or a while, to look again at a deadline.
    pub(super) async fn room_or_tick(&self) {
        let _ = tokio::time::timeout(Duration::from_millis(100), self.room_freed()).await;
    }

    /// Whether the client, whose input ended at `ended`, has been waited
    /// for long enough: `ANSWERS_OWED_WAIT` after that or after the last
    /// byte it took, whichever is later.
    pub(super) fn waited_out(&self, writer: &LineWriter, ended: Instant) -> bool {
        writer.last_progress().max(ended).elapsed() >= ANSWERS_OWED_WAIT
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
