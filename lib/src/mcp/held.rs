//! Lines vg-mcp has read and not yet passed to the SDK: held while the
//! answers it owes leave no room for more work, so that input is still
//! read (a cancellation, the end of input) while a client reads none of
//! its answers.

use std::collections::VecDeque;

use rmcp::model::RequestId;

/// A line as read: whole, or only its first `transport::CUT_HEAD_BYTES` when it is
/// longer than `transport::MAX_LINE_BYTES`.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    Whole(Vec<u8>),
    Cut(Vec<u8>),
}

impl Line {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Line::Whole(bytes) | Line::Cut(bytes) => bytes,
        }
    }
}

/// Lines read and not yet screened, with what they cost.
#[derive(Default)]
pub(super) struct Held {
    lines: VecDeque<HeldLine>,
    bytes: usize,
}

struct HeldLine {
    line: Line,
    /// The request's id, read from its top-level keys: a cancellation
    /// drops a request still held, unanswered, as MCP has it.
    id: Option<RequestId>,
}

/// The most bytes of lines held before input is no longer read: a client
/// that writes this much while it reads none of its answers is left to
/// wait, as a pipe's writer waits for its reader. Each line is counted 64
/// bytes more for what holding it costs.
const HELD_BYTES_MAX: usize = 16 * 1024 * 1024;

/// The top-level keys of a line read, enough to know a cancellation and a
/// request's id without reading the rest.
#[derive(serde::Deserialize)]
pub(super) struct Keys {
    /// None when there is no `id`; Some(None) for `"id": null`, which
    /// makes a request (to be answered as malformed), not a notification.
    #[serde(default, deserialize_with = "present")]
    pub(super) id: Option<Option<RequestId>>,
    pub(super) method: Option<String>,
}

/// A key that is there, whatever its value.
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<Option<RequestId>>, D::Error> {
    serde::Deserialize::deserialize(value).map(Some)
}

impl Held {
    pub(super) fn push(&mut self, line: Line, id: Option<RequestId>) {
        self.bytes += line.bytes().len() + 64;
        self.lines.push_back(HeldLine { line, id });
    }

    pub(super) fn pop(&mut self) -> Option<Line> {
        let held = self.lines.pop_front()?;
        self.bytes -= held.line.bytes().len() + 64;
        Some(held.line)
    }

    /// Drop the held request `id`; whether one was held.
    pub(super) fn cancel(&mut self, id: &RequestId) -> bool {
        let Some(at) = self.lines.iter().position(|held| held.id.as_ref() == Some(id)) else { return false };
        let held = self.lines.remove(at).expect("a position found");
        self.bytes -= held.line.bytes().len() + 64;
        true
    }

    pub(super) fn is_full(&self) -> bool {
        self.bytes >= HELD_BYTES_MAX
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The top-level keys of `line`, if it is a JSON object whose `id` and
/// `method` are of their types (anything else is screened whole in its turn).
pub(super) fn keys_of(line: &Line) -> Option<Keys> {
    match line {
        Line::Whole(bytes) => serde_json::from_slice(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)).ok(),
        Line::Cut(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_id_is_an_id_there_and_no_id_is_none() {
        let keys = |line: &str| keys_of(&Line::Whole(line.as_bytes().to_vec())).map(|k| (k.id, k.method));
        let cancelled = Some("notifications/cancelled".to_string());
        assert_eq!(keys(r#"{"method":"notifications/cancelled","params":{}}"#), Some((None, cancelled.clone())));
        assert_eq!(keys(r#"{"id":null,"method":"notifications/cancelled"}"#), Some((Some(None), cancelled)));
        assert_eq!(keys(r#"{"id":7,"method":"ping"}"#), Some((Some(Some(RequestId::Number(7))), Some("ping".into()))));
        assert_eq!(keys(r#"{"id":1.5,"method":"ping"}"#), None, "screened whole in its turn");
    }
}
