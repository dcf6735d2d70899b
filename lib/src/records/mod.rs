//! The NDJSON records the tools exchange: defined once here, documented in
//! `spec/ndjson.md`, and versioned. Within contract version 1, records only
//! gain fields and new record types; readers ignore what they do not know.

mod answer;
mod commit;
mod hit;
mod index_run;
mod keys;
mod read;
mod roots;

pub use answer::*;
pub use commit::*;
pub use hit::*;
pub use index_run::*;
pub use keys::key_given_twice;
pub use read::*;
pub use roots::*;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::project::ProjectRoot;

/// Contract version carried in every record as `v`.
pub const CONTRACT_VERSION: u32 = 1;

fn default_version() -> u32 {
    CONTRACT_VERSION
}

/// An optional field written `null`, read as left out: every other
/// optional field of a hit takes null (`"text": null` was refused).
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// `vg-serve`'s first line on stdout: where it listens, so scripts can find it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename = "listening")]
pub struct ListeningRecord {
    pub v: u32,
    /// The base URL, e.g. `http://127.0.0.1:41234`.
    pub listening: String,
    pub root: String,
}

impl ListeningRecord {
    pub fn new(root: &ProjectRoot, url: &str) -> Self {
        ListeningRecord {
            v: CONTRACT_VERSION,
            listening: url.to_string(),
            root: root.path.to_string_lossy().into_owned(),
        }
    }
}

/// Write one record as a line of JSON.
pub fn write_record<W: Write + ?Sized, T: Serialize>(out: &mut W, record: &T) -> io::Result<()> {
    out.write_all(escaped_json(record).map_err(io::Error::from)?.as_bytes())?;
    out.write_all(b"\n")
}

/// `value` as JSON text, escaped as every JSON vecgrep writes is
/// (`escape_what_terminals_obey`): records, vg-serve's bodies, vg-mcp's lines.
pub fn escaped_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string(value).map(escape_what_terminals_obey)
}

/// A record's JSON text with what JSON leaves as it is but a terminal
/// obeys (C1 controls, DEL) or reorders text by (bidirectional overrides)
/// written as `\u` escapes: the same values, and a stream shown on a
/// terminal (`vg-query` without a pipe) shows a file's text rather than
/// obeying it. In valid JSON only strings hold such characters, and JSON
/// strings take `\u` escapes; the controls below U+0020 are left, as JSON
/// escapes them in strings and a line read may hold them as whitespace.
pub fn escape_what_terminals_obey(json: String) -> String {
    // C1 controls are 0xC2 0x80-0x9F in UTF-8, the bidirectional ones 0xE2 0x80/0x81 ….
    if memchr::memchr3(0xC2, 0xE2, 0x7F, json.as_bytes()).is_none() {
        return json;
    }
    let mut shown = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) || crate::project::shown::is_bidi_control(c) {
            true => shown.push_str(&format!("\\u{:04x}", c as u32)),
            false => shown.push(c),
        }
    }
    shown
}
