//! vg-mcp's stdio transport: one JSON-RPC message per line, as the SDK's
//! own, but each line is looked at before the SDK sees it, so that a
//! malformed message gets the JSON-RPC error it calls for. The SDK answers
//! a `tools/call` or `initialize` whose params do not fit with "method not
//! found" (its requests are an untagged union, and what fits no variant is
//! a custom method), and a request whose shape is wrong with an error that
//! drops the request's id. Lines that are not JSON are left unanswered, as
//! every official MCP SDK leaves them (an answer could start an error storm
//! with a peer that echoes it), but for those whose top-level keys read as
//! a request's: their client would wait for ever.

use std::sync::Arc;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, ErrorData, GetMeta, ProtocolVersion, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::held::{self, Held, Line};
use super::owed::{self, Unanswered};
use super::writer::LineWriter;
use crate::project::shown::clipped;

/// Longest message read; a longer line is not read whole (a request is
/// answered with an error, `screen_cut`). The SDK's default is 16 MiB,
/// but a line is read twice into JSON values (here, then by the SDK's
/// untagged message types), which cost about 100 times its bytes: 1.6 GB
/// for a 16 MiB array of zeros. What vg-mcp is asked fits far within it
/// (a query is at most 4096 bytes, 64 paths, 1024 globs of a path's length).
const MAX_LINE_BYTES: usize = 1024 * 1024;

/// The requests vg-mcp serves: one of them that the SDK cannot read is a
/// request with params that do not fit, not an unknown method.
const SERVED_METHODS: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// What to do with one line.
#[derive(Debug)]
pub(super) enum Screened {
    /// A message for the SDK.
    Message(Box<ClientJsonRpcMessage>),
    /// An error to answer at once, the SDK never seeing the line.
    Answer(Box<ServerJsonRpcMessage>),
    /// Nothing: a blank line, one that is not JSON and reads as no request,
    /// a malformed notification.
    Nothing,
}

/// Look at one line as received (without its newline).
pub(super) fn screen(line: &[u8]) -> Screened {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Nothing;
    }
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        // JSON nested past what serde reads is JSON still: a request is
        // answered by the id among its first keys, as a cut one is.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return match super::cut::id_of_cut_request(line) {
                Some(id) => answer(ErrorCode::INVALID_REQUEST, "the message is nested too deep".to_string(), id),
                None => Screened::Nothing,
            };
        }
        // So is a string escaping half a UTF-16 pair (`"\ud800"`), which
        // serde refuses: a request unanswered would leave its client waiting.
        Err(e) if ["surrogate", "end of hex escape"].iter().any(|w| e.to_string().contains(w)) => {
            return match super::cut::id_of_cut_request(line) {
                Some(id) => {
                    let why = "a string escapes half a UTF-16 surrogate pair, which is no text";
                    answer(ErrorCode::INVALID_REQUEST, why.to_string(), id)
                }
                None => Screened::Nothing,
            };
        }
        // And a number no float holds (`1e400`), which the grammar allows
        // (audit 200: answered as "not JSON").
        Err(e) if e.to_string().starts_with("number out of range") => {
            return match super::cut::id_of_cut_request(line) {
                Some(id) => answer(ErrorCode::INVALID_REQUEST, "a number is out of range".to_string(), id),
                None => Screened::Nothing,
            };
        }
        // Not JSON, yet a request by its first keys (a raw tab, or a byte
        // that is no UTF-8, in a string): answered, or its client waits for
        // ever. What reads as no request is ignored (a peer that echoes).
        Err(e) => {
            return match super::cut::id_of_cut_request(line) {
                Some(id) => answer(ErrorCode::PARSE_ERROR, format!("not JSON: {}", clipped(&e.to_string(), 200)), id),
                None => Screened::Nothing,
            }
        }
    };
    let Some(object) = value.as_object() else {
        let why = match value.is_array() {
            true => "a batch (an array) is not taken: send one message per line",
            false => "a message is a JSON object",
        };
        return answer(ErrorCode::INVALID_REQUEST, why.to_string(), None);
    };
    let id = object.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    if let Some(place) = crate::records::key_given_twice(line) {
        return given_twice(object, &place, id);
    }
    // A request with an id is no notification, so one whose id cannot be
    // read is answered, with a null id. A response (no method) never is.
    if object.contains_key("id") && object.contains_key("method") && id.is_none() {
        let why = "an id is a string or an integer (from -2^63 to 2^63-1)";
        return answer(ErrorCode::INVALID_REQUEST, why.to_string(), None);
    }
    let is_notification = !object.contains_key("id") && object.contains_key("method");
    // No method, and a result or an error: a response, however malformed
    // (`{"id":8,"error":{"code":1}}`). Without either it is a request
    // missing its method, answered as one.
    let is_response = !object.contains_key("method") && (object.contains_key("result") || object.contains_key("error"));
    let method = object.get("method").and_then(Value::as_str).map(str::to_string);
    let params_unstructured = object.get("params").is_some_and(|p| !p.is_object() && !p.is_array());
    // A JSON-RPC 2.0 request whose params alone can be what is wrong.
    let params_at_fault = object.get("jsonrpc").and_then(Value::as_str) == Some("2.0") && object.contains_key("params");
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(ClientJsonRpcMessage::Request(request)) => match (&request.request, method) {
            (ClientRequest::CustomRequest(_), Some(method)) if SERVED_METHODS.contains(&method.as_str()) => {
                let why = format!("the params of {method} do not fit its schema");
                answer(ErrorCode::INVALID_PARAMS, why, Some(request.id))
            }
            _ => Screened::Message(Box::new(ClientJsonRpcMessage::Request(request))),
        },
        Ok(message) => Screened::Message(Box::new(message)),
        // A notification is never answered, even a malformed one (its method no string).
        Err(_) if is_notification || is_response => Screened::Nothing,
        Err(_) if params_unstructured => {
            answer(ErrorCode::INVALID_REQUEST, "params must be an object or an array".to_string(), id)
        }
        // A method served, with params of the wrong shape (an array, a `_meta` that is no object).
        Err(_) if params_at_fault && id.is_some() && method.as_deref().is_some_and(|m| SERVED_METHODS.contains(&m)) => {
            let why = format!("the params of {} do not fit its schema", method.unwrap_or_default());
            answer(ErrorCode::INVALID_PARAMS, why, id)
        }
        Err(e) => {
            answer(ErrorCode::INVALID_REQUEST, format!("not a JSON-RPC message: {}", clipped(&e.to_string(), 200)), id)
        }
    }
}

/// A message that gives a key twice (`place`), which a reader in front may
/// have read by its first and vg-mcp would by its last: a request is
/// refused, under no id when its id is what is given twice; a notification
/// or a response is dropped, as any malformed one is.
fn given_twice(object: &serde_json::Map<String, Value>, place: &str, id: Option<RequestId>) -> Screened {
    if !object.contains_key("id") || !object.contains_key("method") {
        return Screened::Nothing;
    }
    let (code, id) = match place {
        "id" => (ErrorCode::INVALID_REQUEST, None),
        _ if place.starts_with("params") => (ErrorCode::INVALID_PARAMS, id),
        _ => (ErrorCode::INVALID_REQUEST, id),
    };
    answer(code, format!("{} is given twice: give each key once", clipped(place, 200)), id)
}

fn answer(code: ErrorCode, message: String, id: Option<RequestId>) -> Screened {
    Screened::Answer(Box::new(ServerJsonRpcMessage::error(ErrorData::new(code, message, None), id)))
}

/// The transport: lines read from `reader` are screened and passed to the
/// SDK while the answers owed leave room (`Unanswered::may_pass_request`); past
/// that they wait here, as read, so that input is always read (a
/// cancellation, the end of input) while a client that reads none of its
/// answers holds no more of them than the bound. Answers go to `writer`.
pub(super) struct ScreenedLines<R> {
    reader: BufReader<R>,
    writer: Arc<LineWriter>,
    /// The line read so far. The SDK drops a `receive` whenever another of
    /// its futures is ready first, so a partly read line waits here.
    partial: Vec<u8>,
    /// The line in hand is longer than `MAX_LINE_BYTES`: read on to its end.
    oversized: bool,
    /// Lines read and not yet passed on, oldest first.
    held: Held,
    /// The first of them, screened, waiting for room, and its line's length.
    next: Option<(Screened, usize)>,
    /// When the input ended, if it has.
    input_ended: Option<Instant>,
    /// Since when as many lines are held as may be, if they are.
    full_since: Option<Instant>,
    /// The SDK has begun a session (`begins_session`). Before that it ends
    /// the server on any message but a request, so those are dropped here.
    in_session: bool,
    /// Requests passed to the SDK and not yet answered: at the end of
    /// input, the end waits for their answers.
    unanswered: Arc<Unanswered>,
}

/// Whether the SDK begins a session with `message`: an `initialize`
/// request, or (revision 2026-07-28, no handshake) a request carrying the
/// whole of its protocol metadata. Until one, the SDK answers pings and
/// probes and takes a notification or a response for a broken handshake,
/// ending the server: one stray `notifications/initialized` did.
fn begins_session(message: &ClientJsonRpcMessage) -> bool {
    let ClientJsonRpcMessage::Request(request) = message else { return false };
    match &request.request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        other => {
            // The SDK refuses a version it does not support and stays before
            // the session, as a ping leaves it (vecgrep serves every version
            // the SDK knows: `supported_protocol_versions` is not narrowed).
            let meta = other.get_meta();
            meta.protocol_version().is_some_and(|v| ProtocolVersion::KNOWN_VERSIONS.contains(&v))
                && meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
        }
    }
}

impl<R> ScreenedLines<R>
where
    R: tokio::io::AsyncRead + Unpin + Send,
{
    pub(super) fn new(reader: R, writer: Arc<LineWriter>, unanswered: Arc<Unanswered>) -> Self {
        ScreenedLines {
            reader: BufReader::new(reader),
            writer,
            partial: Vec::new(),
            oversized: false,
            held: Held::default(),
            next: None,
            input_ended: None,
            full_since: None,
            in_session: false,
            unanswered,
        }
    }

    /// Take a line read: held in its turn, but for a cancellation, which
    /// passes at once (it drops the request it names if that is still
    /// held, and would come too late behind what is held).
    fn take(&mut self, line: Line) -> Option<ClientJsonRpcMessage> {
        let keys = held::keys_of(&line);
        let cancels = keys.as_ref().is_some_and(|k| k.id.is_none() && k.method.as_deref() == Some(CANCELLED));
        if cancels {
            if let Screened::Message(message) = screen(line.bytes()) {
                if let ClientJsonRpcMessage::Notification(n) = &*message {
                    if let ClientNotification::CancelledNotification(c) = &n.notification {
                        if let Some(id) = &c.params.request_id {
                            self.drop_held(id);
                        }
                        return self.pass(message, 0);
                    }
                }
            }
        }
        // Anything else, a malformed cancellation too, in its turn.
        self.held.push(line, keys.and_then(|k| k.id.flatten()));
        None
    }

    /// Drop the request `id` if it is still held, never to be answered.
    fn drop_held(&mut self, id: &RequestId) {
        if let Some((Screened::Message(next), _)) = &self.next {
            if matches!(&**next, ClientJsonRpcMessage::Request(r) if &r.id == id) {
                self.next = None;
                return;
            }
        }
        self.held.cancel(id);
    }

    /// The next message held that may pass now, writing the errors met on
    /// the way; None when nothing is held or what is next waits for room:
    /// a request while as many are owed as `Unanswered` allows, an error
    /// while the answers unwritten are at their bound.
    fn pass_held(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let (screened, bytes) = match self.next.take() {
                Some(next) => next,
                None => {
                    let line = self.held.pop()?;
                    let bytes = line.bytes().len();
                    let screened = match line {
                        Line::Whole(line) => screen(&line),
                        Line::Cut(head) => screen_cut(&head),
                    };
                    (screened, bytes)
                }
            };
            let screened = self.refuse_a_second_initialize(self.refuse_an_id_in_flight(screened));
            let may_pass = match &screened {
                Screened::Message(message) if matches!(**message, ClientJsonRpcMessage::Request(_)) => {
                    self.unanswered.may_pass_request()
                }
                Screened::Answer(_) => self.unanswered.may_write_more(),
                Screened::Message(_) | Screened::Nothing => true,
            };
            if !may_pass {
                self.next = Some((screened, bytes));
                return None;
            }
            match screened {
                Screened::Message(message) => {
                    if let Some(message) = self.pass(message, bytes) {
                        return Some(message);
                    }
                }
                Screened::Answer(error) => {
                    // A client that closed its end reads no answer.
                    if let Ok(line) = line_of(&*error) {
                        let _ = self.writer.send(line, None);
                    }
                }
                Screened::Nothing => {}
            }
        }
    }

    /// A request whose id is that of one still in flight, answered with an
    /// error here: the SDK would put it in the first's place, answer one
    /// of the two, and leave the other owed for ever (ids of requests in
    /// flight are unique, by JSON-RPC).
    fn refuse_an_id_in_flight(&self, screened: Screened) -> Screened {
        match &screened {
            Screened::Message(message) => match &**message {
                ClientJsonRpcMessage::Request(r) if self.unanswered.in_flight(&r.id) => {
                    let why = "a request with this id is not yet answered: ids of requests in flight must differ";
                    answer(ErrorCode::INVALID_REQUEST, why.to_string(), Some(r.id.clone()))
                }
                _ => screened,
            },
            _ => screened,
        }
    }

    /// An `initialize` once a session has begun, answered with an error
    /// here: the SDK answered it with the revision it asked for and kept the
    /// session's, so that a client that began with a 2026-07-28 request and
    /// then agreed on 2025-06-18 had every later request refused for want
    /// of 2026-07-28's metadata (audit 251).
    fn refuse_a_second_initialize(&self, screened: Screened) -> Screened {
        match &screened {
            Screened::Message(message) if self.in_session => match &**message {
                ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)) => {
                    let why = "the session has begun: initialize comes once, before any other request \
                               (a 2026-07-28 request with its protocol metadata begins one too)";
                    answer(ErrorCode::INVALID_REQUEST, why.to_string(), Some(r.id.clone()))
                }
                _ => screened,
            },
            _ => screened,
        }
    }

    /// `message` for the SDK, or None when it is dropped: before a session
    /// the SDK takes anything but a request (a ping) for a broken
    /// handshake, ending the server. `bytes`: its line's length.
    fn pass(&mut self, message: Box<ClientJsonRpcMessage>, bytes: usize) -> Option<ClientJsonRpcMessage> {
        let is_request = matches!(*message, ClientJsonRpcMessage::Request(_));
        if self.in_session || begins_session(&message) {
            self.in_session = true;
        } else if !is_request {
            return None;
        }
        self.unanswered.passed(&message, bytes);
        Some(*message)
    }

    /// Whether the client, with as many lines held as may be (`reading`
    /// false), has taken no byte of the answers waiting for it for as long
    /// as the end of input waits: the end of its input may sit unread
    /// behind what it sent, and a server that waited for it would run for
    /// ever (review 178). With nothing to write, a client that reads is
    /// waiting on the server, not stalled (review 179: 40 asks waiting on
    /// a chat model ended the session of a client reading everything).
    fn neither_reads_nor_lets_be_read(&mut self, reading: bool) -> bool {
        if reading {
            self.full_since = None;
            return false;
        }
        let full_since = *self.full_since.get_or_insert_with(Instant::now);
        self.writer.pending_lines() > 0 && owed::waited_out(self.writer.last_progress(), full_since)
    }

    /// Whether anything read waits to pass.
    fn holds_lines(&self) -> bool {
        self.next.is_some() || !self.held.is_empty()
    }

    /// The next line, without its newline, whole or its head when it is
    /// longer than `MAX_LINE_BYTES`; None at the end of input.
    /// Cancel-safe: nothing is consumed that is not kept in `partial`, but
    /// the tail of a line past its kept head.
    async fn next_line(&mut self) -> Option<Line> {
        loop {
            let buffer = match self.reader.fill_buf().await {
                Ok(buffer) => buffer,
                Err(_) => return None,
            };
            if buffer.is_empty() {
                // A last message without its newline is still a message.
                let line = std::mem::take(&mut self.partial);
                return match std::mem::replace(&mut self.oversized, false) {
                    true => Some(Line::Cut(line)),
                    false => (!line.is_empty()).then_some(Line::Whole(line)),
                };
            }
            let newline = buffer.iter().position(|&b| b == b'\n');
            let piece = &buffer[..newline.unwrap_or(buffer.len())];
            if !self.oversized && self.partial.len() + piece.len() > MAX_LINE_BYTES {
                self.oversized = true;
                self.partial.truncate(CUT_HEAD_BYTES);
                self.partial.shrink_to_fit();
            }
            let room = if self.oversized { CUT_HEAD_BYTES.saturating_sub(self.partial.len()) } else { piece.len() };
            self.partial.extend_from_slice(&piece[..room.min(piece.len())]);
            let used = newline.map_or(piece.len(), |at| at + 1);
            self.reader.consume(used);
            if newline.is_some() {
                let line = std::mem::take(&mut self.partial);
                return Some(match std::mem::replace(&mut self.oversized, false) {
                    true => Line::Cut(line),
                    false => Line::Whole(line),
                });
            }
        }
    }
}

/// What is kept of a line too long to read: enough for the keys a client
/// writes before its params (`cut::id_of_cut_request`).
const CUT_HEAD_BYTES: usize = 64 * 1024;

/// The error a request too long to read is answered with, if the head of
/// its line says it is a request.
fn screen_cut(head: &[u8]) -> Screened {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    match super::cut::id_of_cut_request(head) {
        Some(id) => answer(
            ErrorCode::INVALID_REQUEST,
            format!("the message is longer than {MAX_LINE_BYTES} bytes, the most vg-mcp reads"),
            id,
        ),
        None => Screened::Nothing,
    }
}

/// The SDK's own errors quote what the client sent in full (serde's
/// "unknown variant `…`"), as a JSON-RPC error or, for a tool's arguments,
/// as a tool result marked as an error; mcp.md bounds what an error repeats
/// to 200 characters of a value. The tools' own errors clip it where they
/// are made.
fn clip_sdk_errors(item: &mut TxJsonRpcMessage<RoleServer>) {
    use rmcp::model::{ContentBlock, JsonRpcMessage, ServerResult};
    // A long word (a value quoted whole) to 100 characters, so that what
    // follows it (serde's "expected one of …") still fits; the whole to
    // 200, as the client's text may be all of it (an unknown method's name
    // is the whole message).
    let clip = |text: &str| crate::project::shown::words_clipped(text, 100, 200);
    match item {
        JsonRpcMessage::Error(e) => e.error.message = clip(&e.error.message).into(),
        JsonRpcMessage::Response(r) => {
            let ServerResult::CallToolResult(result) = &mut r.result else { return };
            if result.is_error != Some(true) {
                return;
            }
            for block in &mut result.content {
                if let ContentBlock::Text(t) = block {
                    if t.text.starts_with("failed to deserialize") {
                        t.text = clip(&t.text);
                    }
                }
            }
        }
        _ => {}
    }
}

/// The method of a cancellation.
const CANCELLED: &str = "notifications/cancelled";

impl<R> Transport<RoleServer> for ScreenedLines<R>
where
    R: tokio::io::AsyncRead + Unpin + Send,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut item = item;
        clip_sdk_errors(&mut item);
        escape_results_json_text(&mut item);
        let answers = owed::answered_id(&item);
        let line = line_of(&item).map_err(std::io::Error::other);
        let sent = line.and_then(|line| self.writer.send(line, answers.clone()));
        if sent.is_err() {
            // Never to be written: owed no more.
            self.unanswered.written(answers.as_ref(), 0);
        }
        std::future::ready(sent)
    }

    /// Cancel-safe: what is read and held stays in `self`; dropped and
    /// called again, it goes on where it was.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Enabled before what it waits for is looked at: a line written
            // meanwhile is not missed.
            let unanswered = Arc::clone(&self.unanswered);
            let room_changed = unanswered.room_changed();
            tokio::pin!(room_changed);
            room_changed.as_mut().enable();
            if let Some(message) = self.pass_held() {
                return Some(message);
            }
            if let Some(ended) = self.input_ended {
                // Errors answered here are owed too, though the SDK never saw their requests.
                let all_written = self.unanswered.owed() == 0 && self.writer.pending_lines() == 0;
                if (!self.holds_lines() && all_written) || owed::waited_out(self.writer.last_progress(), ended) {
                    self.unanswered.give_up();
                    return None;
                }
                let _ = tokio::time::timeout(std::time::Duration::from_millis(100), room_changed).await;
                continue;
            }
            let (waiting_for_room, reading) = (self.holds_lines(), !self.held.is_full());
            if self.neither_reads_nor_lets_be_read(reading) {
                self.unanswered.client_gone.store(true, std::sync::atomic::Ordering::SeqCst);
                self.unanswered.give_up();
                return None;
            }
            tokio::select! {
                line = self.next_line(), if reading => match line {
                    Some(line) => {
                        if let Some(message) = self.take(line) {
                            return Some(message);
                        }
                    }
                    None => {
                        self.input_ended = Some(Instant::now());
                        // A tool that waits (`index`) answers at once.
                        self.unanswered.client_gone.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                },
                () = &mut room_changed, if waiting_for_room => {}
                // Held full: looked at again, for `neither_reads_nor_lets_be_read`.
                () = tokio::time::sleep(std::time::Duration::from_millis(100)), if !reading => {}
            }
        }
    }

    /// Lines handed over are written by the writer's thread; `serve_stdio`
    /// waits for them before the process ends.
    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A tool's result as JSON text (the `text` block beside its structured
/// content) escaped as the line is (`line_of`): the text an agent's client
/// shows a person holds a file's bidi overrides as `\u` escapes, and reads
/// as the same JSON.
fn escape_results_json_text(item: &mut TxJsonRpcMessage<RoleServer>) {
    use rmcp::model::{ContentBlock, JsonRpcMessage, ServerResult};
    let JsonRpcMessage::Response(r) = item else { return };
    let ServerResult::CallToolResult(result) = &mut r.result else { return };
    if result.structured_content.is_none() {
        return;
    }
    for block in &mut result.content {
        if let ContentBlock::Text(t) = block {
            t.text = crate::records::escape_what_terminals_obey(std::mem::take(&mut t.text));
        }
    }
}

/// A message as the line written for it, escaped as records are
/// (`records::escaped_json`): the same values, and a session shown on a
/// terminal shows a file's controls and bidi overrides as text.
fn line_of<T: serde::Serialize>(message: &T) -> serde_json::Result<Vec<u8>> {
    crate::records::escaped_json(message).map(String::into_bytes)
}

/// The transport on this process's stdin, writing to `writer`.
pub(super) fn stdio(unanswered: Arc<Unanswered>, writer: Arc<LineWriter>) -> ScreenedLines<tokio::io::Stdin> {
    ScreenedLines::new(tokio::io::stdin(), writer, unanswered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(screened: Screened) -> (i32, Option<RequestId>, String) {
        match screened {
            Screened::Answer(message) => match *message {
                ServerJsonRpcMessage::Error(e) => (e.error.code.0, e.id, e.error.message.to_string()),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_fits_goes_to_the_sdk() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"},"_meta":{"progressToken":3}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":null}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"prompts/list"}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"no/such/method","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\r",
        ] {
            assert!(matches!(screen(line.as_bytes()), Screened::Message(_)), "{line}");
        }
    }

    #[test]
    fn a_served_method_whose_params_do_not_fit_is_invalid_params() {
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"nme":"search"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"bogus":1}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"},"_meta":5}}"#,
        ] {
            let (code, id, message) = error_of(screen(line.as_bytes()));
            assert_eq!((code, id), (-32602, Some(RequestId::Number(3))), "{line}");
            assert!(message.contains("do not fit its schema"), "{message}");
        }
    }

    #[test]
    fn a_message_of_the_wrong_shape_is_an_invalid_request_with_its_id() {
        let (code, id, message) = error_of(screen(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"str"}"#));
        assert_eq!(
            (code, id, message.as_str()),
            (-32600, Some(RequestId::Number(4)), "params must be an object or an array")
        );
        let (code, id, _) = error_of(screen(br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#));
        assert_eq!((code, id), (-32600, Some(RequestId::String("x".into()))));
        let (code, id, message) = error_of(screen(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#));
        assert_eq!((code, id), (-32600, None));
        assert!(message.contains("batch"), "{message}");
        let (code, id, _) = error_of(screen(b"42"));
        assert_eq!((code, id), (-32600, None));
        for id in ["null", "true", "1.5", "{\"a\":1}", "[1]", "9223372036854775808"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let (code, got, message) = error_of(screen(line.as_bytes()));
            let said = "an id is a string or an integer (from -2^63 to 2^63-1)";
            assert_eq!((code, got, message.as_str()), (-32600, None, said), "{line}");
        }
        // A notification whose method is no string is malformed, and never answered.
        for method in ["5", "null", "[\"x\"]"] {
            let line = format!(r#"{{"jsonrpc":"2.0","method":{method}}}"#);
            assert!(matches!(screen(line.as_bytes()), Screened::Nothing), "{line}");
        }
        // A response is never answered, whatever its id, malformed or not.
        for response in [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":1}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":5}"#,
        ] {
            assert!(!matches!(screen(response.as_bytes()), Screened::Answer(_)), "{response}");
        }
        // A request that lacks its method is answered, by its id.
        for line in [r#"{"jsonrpc":"2.0","id":5,"params":{}}"#, r#"{"jsonrpc":"2.0","id":5,"methd":"tools/list"}"#] {
            let (code, id, _) = error_of(screen(line.as_bytes()));
            assert_eq!((code, id), (-32600, Some(RequestId::Number(5))), "{line}");
        }
        // A value the error names is shown in part.
        let long = format!(r#"{{"jsonrpc":"{}","id":1,"method":"ping"}}"#, "z".repeat(1 << 20));
        let (code, id, message) = error_of(screen(long.as_bytes()));
        assert_eq!((code, id), (-32600, Some(RequestId::Number(1))));
        assert!(message.len() < 400, "{}", message.len());
    }

    #[test]
    fn a_key_given_twice_is_refused_as_a_reader_in_front_may_read_it_otherwise() {
        // The id given twice: answered under no id, neither being the one.
        let (code, id, message) = error_of(screen(br#"{"jsonrpc":"2.0","id":94,"id":93,"method":"ping"}"#));
        assert_eq!((code, id, message.as_str()), (-32600, None, "id is given twice: give each key once"));
        let (code, id, _) = error_of(screen(br#"{"jsonrpc":"2.0","id":92,"method":"ping","method":"tools/list"}"#));
        assert_eq!((code, id), (-32600, Some(RequestId::Number(92))));
        // In the params: the tool, or one of its arguments.
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status","name":"search","arguments":{"query":"retry upload"}}}"#;
        let (code, id, message) = error_of(screen(call));
        assert_eq!(
            (code, id, message.as_str()),
            (-32602, Some(RequestId::Number(1)), "params.name is given twice: give each key once")
        );
        let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"retry upload","query":"password check"}}}"#;
        let (code, _, message) = error_of(screen(call));
        assert_eq!((code, message.as_str()), (-32602, "params.arguments.query is given twice: give each key once"));
        // A notification or a response is never answered.
        let notification =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}"#;
        assert!(matches!(screen(notification), Screened::Nothing));
        assert!(matches!(screen(br#"{"jsonrpc":"2.0","id":3,"result":{},"result":{}}"#), Screened::Nothing));
        // The same key in two objects is no key given twice.
        let call = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"name"}}}"#;
        assert!(matches!(screen(call), Screened::Message(_)));
    }

    #[test]
    fn a_request_nested_past_what_is_read_is_answered_by_its_id() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{{"name":"search","arguments":{{"k":{deep}}}}}}}"#
        );
        let (code, id, message) = error_of(screen(line.as_bytes()));
        assert_eq!(
            (code, id, message.as_str()),
            (-32600, Some(RequestId::Number(90)), "the message is nested too deep")
        );
        let notification = format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"a":{deep}}}}}"#);
        assert!(matches!(screen(notification.as_bytes()), Screened::Nothing), "a notification is never answered");
    }

    #[test]
    fn a_request_holding_half_a_surrogate_pair_is_answered_by_its_id() {
        for half in ["\\ud800", "\\udc00", "\\ud800x"] {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{half}"}}}}}}"#
            );
            let (code, id, message) = error_of(screen(line.as_bytes()));
            assert_eq!((code, id), (-32600, Some(RequestId::Number(91))), "{line}");
            assert!(message.contains("surrogate"), "{message}");
        }
        let notification = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"a":"\ud800"}}"#;
        assert!(matches!(screen(notification.as_bytes()), Screened::Nothing), "a notification is never answered");
    }

    #[test]
    fn a_request_that_is_no_json_by_a_byte_in_a_string_is_answered_by_its_id() {
        let request = |query: &[u8]| {
            let mut line =
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":""#
                    .to_vec();
            line.extend_from_slice(query);
            line.extend_from_slice(br#""}}}"#);
            line
        };
        for (query, cause) in [(&b"caf\xe9"[..], "invalid unicode"), (b"a\tb", "control character")] {
            let (code, id, message) = error_of(screen(&request(query)));
            assert_eq!((code, id), (-32700, Some(RequestId::Number(7))), "{message}");
            assert!(message.starts_with("not JSON: ") && message.contains(cause), "{message}");
        }
        let mut notification = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"a":"caf"#.to_vec();
        notification.extend_from_slice(b"\xe9\"}}");
        assert!(matches!(screen(&notification), Screened::Nothing), "a notification is never answered");
    }

    #[test]
    fn what_is_not_json_and_malformed_notifications_are_not_answered() {
        for line in [
            "",
            "   ",
            "garbage",
            "{\"jsonrpc\":",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        ] {
            assert!(matches!(screen(line.as_bytes()), Screened::Nothing), "{line}");
        }
    }

    #[tokio::test]
    async fn lines_come_whole_and_of_an_oversized_one_its_head() {
        let ping = |id: u8| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}").into_bytes();
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"q\":\"{}",
            "x".repeat(MAX_LINE_BYTES)
        );
        let mut input = ping(1);
        input.push(b'\n');
        input.extend_from_slice(big.as_bytes());
        input.push(b'\n');
        input.extend(ping(2));
        input.push(b'\n');
        input.extend(ping(3));
        let unanswered = Arc::new(Unanswered::default());
        let writer = Arc::new(LineWriter::spawn(Vec::<u8>::new(), Arc::clone(&unanswered)).unwrap());
        let mut lines = ScreenedLines::new(&input[..], writer, unanswered);
        assert_eq!(lines.next_line().await, Some(Line::Whole(ping(1))));
        let Some(Line::Cut(head)) = lines.next_line().await else { panic!("the long line is cut") };
        assert_eq!(head, big.as_bytes()[..CUT_HEAD_BYTES]);
        let (code, id, message) = error_of(screen_cut(&head));
        assert_eq!((code, id), (ErrorCode::INVALID_REQUEST.0, Some(RequestId::Number(9))));
        assert!(message.contains("longer than 1048576 bytes"), "{message}");
        assert_eq!(lines.next_line().await, Some(Line::Whole(ping(2))));
        // The last line, without its newline.
        assert_eq!(lines.next_line().await, Some(Line::Whole(ping(3))));
        assert_eq!(lines.next_line().await, None);
        // A long line that is no request is not answered.
        assert!(matches!(screen_cut(&vec![b'x'; CUT_HEAD_BYTES]), Screened::Nothing));
    }
}
