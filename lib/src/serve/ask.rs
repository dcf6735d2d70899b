//! `POST /v1/ask` (lc0_vic's bridge route): a question in plain words, with
//! the privacy mode and the part of the served tree it asks about, answered
//! with the plan made of it, the hits with their reasons, an answer when
//! one is called for, warnings and what the run did (`ask::AskResponse`).
//! The body is read strictly: an unknown field, a field given twice, a
//! field of the wrong type, control characters in a text (as `/search`
//! refuses them in its query string) or an unknown privacy mode is a 400
//! naming it, and a root outside the
//! served paths is refused (403) as vg-mcp confines its clients, one that
//! names nothing is a 404.

use serde_json::{Map, Value};

use super::http::{holds_controls, Response};
use super::{shown, Shared, StoreSlot};
use crate::ask::{self, AskOptions, LiveAsk};
use crate::live::{Refusal, RefusalKind};
use crate::project::PrivacyMode;

pub(super) const ASK_PATH: &str = "/v1/ask";
/// Largest body `POST /v1/ask` reads: a question is at most 4 KiB.
pub(super) const MAX_ASK_BODY: usize = 64 * 1024;

/// The fields a body may have.
const FIELDS: [&str; 3] = ["query", "privacy_mode", "root"];

/// An ask request's fields, checked.
#[derive(Debug, PartialEq)]
struct AskBody {
    query: String,
    privacy_mode: Option<PrivacyMode>,
    root: Option<String>,
}

pub(super) fn ask_response(shared: &Shared, body: &[u8], store: &mut StoreSlot) -> Response {
    let request = match read_body(body) {
        Ok(r) => r,
        Err(message) => return Response::error(400, &message),
    };
    let live = shared.searcher.live();
    let scope = match crate::live::confine(live, request.root.as_slice()) {
        Ok(scope) => scope,
        Err(Refusal { kind, message }) => {
            let status = match kind {
                RefusalKind::Forbidden => 403,
                RefusalKind::NotFound => 404,
                RefusalKind::Malformed => 400,
            };
            return Response::error(status, &format!("root: {message}"));
        }
    };
    let target = &live.target;
    let options = AskOptions::for_request(request.privacy_mode, &target.config);
    let mut searcher = LiveAsk { searcher: &shared.searcher, store, scope };
    match ask::ask(&request.query, &target.root, &target.config, &options, &mut searcher) {
        Ok(answer) => Response::json(200, &serde_json::to_value(answer).unwrap_or_default()),
        Err(e) if e.is::<ask::Unsearchable>() => Response::error(400, &format!("query: {e}")),
        // An index being made again as a search answers it (review 255: a
        // 500 that said to retry).
        Err(e) => super::search::index_being_made_again(&e)
            .unwrap_or_else(|| Response::error(500, &format!("ask failed: {}", crate::project::shown::error_line(&e)))),
    }
}

/// The body as an ask request, or why not, naming the field.
fn read_body(body: &[u8]) -> Result<AskBody, String> {
    let shape =
        "the body must be a JSON object: {\"query\": \"...\", \"privacy_mode\": \"local_only\", \"root\": \"src\"}";
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("{shape}; it is not JSON: {e}"))?;
    let Value::Object(fields) = value else { return Err(shape.into()) };
    if let Some(unknown) = fields.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        let unknown = crate::project::shown::clipped(unknown, 100);
        return Err(format!("unknown field {unknown:?}; the fields are {}", FIELDS.join(", ")));
    }
    given_once(body)?;
    if let Some((name, _)) = fields.iter().find(|(_, v)| v.as_str().is_some_and(holds_controls)) {
        return Err(format!("{name} holds control characters"));
    }
    let query = match fields.get("query") {
        Some(Value::String(q)) => q.clone(),
        Some(_) => return Err("query must be a string".into()),
        None => return Err("the field query is missing".into()),
    };
    crate::search::check_query(&query).map_err(|e| format!("query: {e}"))?;
    let privacy_mode = match text(&fields, "privacy_mode")? {
        None => None,
        Some(name) => Some(PrivacyMode::named(&name).ok_or_else(|| {
            format!("privacy_mode must be one of {}, got {:?}", PrivacyMode::NAMES.join(", "), shown(&name))
        })?),
    };
    Ok(AskBody { query, privacy_mode, root: text(&fields, "root")? })
}

/// Whether each field is given once: a JSON object read as a map takes the
/// last of a field given twice, where a filter in front may have read the
/// first, so that the two read one request as two.
fn given_once(body: &[u8]) -> Result<(), String> {
    // A field's value holding a key twice is a value of the wrong type,
    // said as such after this (review 278: "root.a is given twice").
    match crate::records::key_given_twice(body).filter(|place| !place.contains(['.', '['])) {
        Some(field) => Err(format!("the field {} is given twice", crate::project::shown::clipped(&field, 100))),
        None => Ok(()),
    }
}

/// An optional string field; null is absent.
fn text(fields: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{name} must be a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_read_strictly_and_errors_name_the_field() {
        let ok = read_body(br#"{"query": "retry uploads", "privacy_mode": "cloud_reasoning_ok", "root": "src"}"#);
        assert_eq!(
            ok.unwrap(),
            AskBody {
                query: "retry uploads".into(),
                privacy_mode: Some(PrivacyMode::CloudReasoningOk),
                root: Some("src".into())
            }
        );
        let plain = read_body(br#"{"query": "retry", "root": null}"#).unwrap();
        assert_eq!((plain.privacy_mode, plain.root), (None, None));
        let refused = |body: &str| read_body(body.as_bytes()).unwrap_err();
        assert!(refused("{not json").contains("not JSON"));
        assert!(refused("[1]").starts_with("the body must be a JSON object"));
        assert!(refused("").contains("not JSON"));
        assert!(refused(r#"{"query": "x", "warehouse_root": "/"}"#).contains("unknown field \"warehouse_root\""));
        assert_eq!(refused(r#"{"query": 5}"#), "query must be a string");
        assert_eq!(refused(r#"{"privacy_mode": "local_only"}"#), "the field query is missing");
        assert!(refused(r#"{"query": "   "}"#).starts_with("query: the query is empty"));
        assert_eq!(refused(r#"{"query": "x", "root": ["a"]}"#), "root must be a string");
        assert!(refused(r#"{"query": "x", "privacy_mode": "yolo"}"#).contains("privacy_mode must be one of local_only"));
        assert_eq!(refused(r#"{"query": "x", "privacy_mode": 1}"#), "privacy_mode must be a string");
        // The last of a field given twice was read, where a filter in front may read the first.
        assert_eq!(refused(r#"{"query": "upload", "query": "x"}"#), "the field query is given twice");
        assert_eq!(refused(r#"{"query": "x", "root": "a", "root": null}"#), "the field root is given twice");
        // A value holding a key twice is a value of the wrong type.
        assert_eq!(refused(r#"{"query": "x", "root": {"a": 1, "a": 2}}"#), "root must be a string");
        assert_eq!(refused("{\"query\": \"up\\u001b[2Jload\"}"), "query holds control characters");
        assert_eq!(refused(r#"{"query": "x", "root": "src\u0000"}"#), "root holds control characters");
        assert!(read_body("{\"query\": \"retry\\tuploads\\r\\n\"}".as_bytes()).is_ok(), "tab and line ends are text");
    }
}
