//! The HTTP/1.1 that vg-serve speaks: reading a request head within hard
//! limits, parsing its target, and writing a response.
//!
//! We read request heads ourselves rather than through tiny_http because
//! the server must bound what a client can make it hold: tiny_http 0.12
//! reads a request line or header of any length into memory. Here the
//! request line, the header block and the header count are capped (414 /
//! 431), and a request head must arrive within a deadline; httparse reads
//! the head once it is in.

use std::io::{self, BufRead, Write};
use std::time::{Duration, Instant};

/// How much of a request head the server accepts.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Bytes in the request line (method, target, version); more is 414.
    pub request_line: usize,
    /// Bytes in all header lines together; more is 431.
    pub header_bytes: usize,
    /// Number of header lines; more is 431.
    pub headers: usize,
    /// Time a client has to send a whole request head (or body), and to
    /// take a response. A slow client holds its own connection's thread
    /// meanwhile, not a worker (`serve::gate`).
    pub head_deadline: Duration,
    /// Connections open at once from one client address; past it, the one
    /// that has waited longest for a request head is closed to make room.
    pub connections_per_client: usize,
    /// Connections open at once in all, likewise.
    pub connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_line: 8 * 1024,
            header_bytes: 16 * 1024,
            headers: 100,
            head_deadline: Duration::from_secs(5),
            connections_per_client: 32,
            connections: 1024,
        }
    }
}

/// A request head. A body (POST's JSON) is read after it, only by a
/// route that takes one, within `read_body`'s bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Request {
    pub method: String,
    pub target: String,
    pub version: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Whether the connection may carry another request after this one. A
    /// request announcing a body that was not read (`body_read`) is answered
    /// and the connection closed, since the rest of the stream is its body.
    pub(super) fn keep_alive(&self, body_read: bool) -> bool {
        // Repeated, the header is one list (RFC 9110 5.3).
        let values: Vec<&str> =
            self.headers.iter().filter(|(n, _)| n == "connection").map(|(_, v)| v.as_str()).collect();
        let connection = (!values.is_empty()).then(|| values.join(",").to_ascii_lowercase());
        let has_body = self.header("content-length").is_some_and(|v| v.trim() != "0")
            || self.header("transfer-encoding").is_some();
        if has_body && !body_read {
            return false;
        }
        // A list of options (RFC 9110 7.6.1): `keep-alive, close` closes.
        let says = |option: &str| connection.as_deref().is_some_and(|c| c.split(',').any(|o| o.trim() == option));
        match self.version.as_str() {
            "HTTP/1.1" => !says("close"),
            _ => says("keep-alive") && !says("close"),
        }
    }
}

/// Why a request head could not be read.
#[derive(Debug)]
pub(super) enum HeadError {
    /// 414: the request line is longer than the limit.
    UriTooLong,
    /// 431: too many header bytes or lines.
    HeadersTooLarge,
    /// 400: not HTTP.
    Malformed(String),
    /// The connection failed or timed out; nothing can be answered.
    Io(io::Error),
}

impl HeadError {
    /// The status to answer with, if an answer is possible.
    pub(super) fn status(&self) -> Option<u16> {
        match self {
            HeadError::UriTooLong => Some(414),
            HeadError::HeadersTooLarge => Some(431),
            HeadError::Malformed(_) => Some(400),
            HeadError::Io(_) => None,
        }
    }

    pub(super) fn message(&self) -> String {
        match self {
            HeadError::UriTooLong => "the request line is too long".into(),
            HeadError::HeadersTooLarge => "the request headers are too large".into(),
            HeadError::Malformed(m) => m.clone(),
            HeadError::Io(e) => e.to_string(),
        }
    }
}

enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

/// One CRLF- (or LF-) terminated line of at most `limit` bytes, without
/// its terminator. Nothing beyond `limit` is buffered.
fn read_line(r: &mut impl BufRead, limit: usize, deadline: Instant) -> io::Result<Line> {
    let mut line = Vec::new();
    loop {
        if Instant::now() > deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "request head not received in time"));
        }
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            // Closed, perhaps mid-line: either way no request came.
            return Ok(Line::Eof);
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if line.len() + i > limit + 1 {
                    return Ok(Line::TooLong);
                }
                line.extend_from_slice(&available[..i]);
                r.consume(i + 1);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                // The allowance of one byte past the limit was for the CR.
                if line.len() > limit {
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Text(line));
            }
            None => {
                let n = available.len();
                if line.len() + n > limit + 1 {
                    return Ok(Line::TooLong);
                }
                line.extend_from_slice(available);
                r.consume(n);
            }
        }
    }
}

/// Read one request head. Ok(None): the client closed the connection
/// between requests. The lines are read here, within the limits and the
/// deadline; httparse then reads the head they make.
pub(super) fn read_request(r: &mut impl BufRead, limits: &Limits) -> Result<Option<Request>, HeadError> {
    let deadline = Instant::now() + limits.head_deadline;
    // Tolerate blank lines before a request line (RFC 9112, 2.2).
    let mut head = loop {
        match read_line(r, limits.request_line, deadline).map_err(HeadError::Io)? {
            Line::Eof => return Ok(None),
            Line::TooLong => return Err(HeadError::UriTooLong),
            Line::Text(l) if l.is_empty() => continue,
            Line::Text(l) => break l,
        }
    };
    head.extend_from_slice(b"\r\n");
    let (mut header_bytes, mut header_lines) = (0, 0);
    loop {
        let remaining = limits.header_bytes.saturating_sub(header_bytes);
        let line = match read_line(r, remaining, deadline).map_err(HeadError::Io)? {
            Line::Eof => {
                return Err(HeadError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-request",
                )))
            }
            Line::TooLong => return Err(HeadError::HeadersTooLarge),
            Line::Text(l) => l,
        };
        head.extend_from_slice(&line);
        head.extend_from_slice(b"\r\n");
        if line.is_empty() {
            break;
        }
        header_bytes += line.len() + 2;
        header_lines += 1;
        if header_bytes > limits.header_bytes || header_lines > limits.headers {
            return Err(HeadError::HeadersTooLarge);
        }
    }
    let request = parse_head(&head, header_lines)?;
    check_framing(&request.headers)?;
    // RFC 9112 3.2: an HTTP/1.1 request names its host, or is a 400.
    if request.version == "HTTP/1.1" && request.header("host").is_none() {
        return Err(HeadError::Malformed("an HTTP/1.1 request without a Host header".into()));
    }
    // An http URI always has a host (RFC 9112 3.2): an empty one names none.
    if request.header("host") == Some("") {
        return Err(HeadError::Malformed("an empty Host header".into()));
    }
    Ok(Some(request))
}

/// A whole head (CRLF line ends, a blank line last) of `lines` header
/// lines as a request: method, target and version per RFC 9112 (httparse),
/// header names lowercased and values trimmed, each UTF-8 without control
/// characters but tab.
fn parse_head(head: &[u8], lines: usize) -> Result<Request, HeadError> {
    let mut slots = vec![httparse::EMPTY_HEADER; lines];
    let mut parsed = httparse::Request::new(&mut slots);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(HeadError::Malformed("an incomplete request head".into())),
        Err(httparse::Error::Version) if target_has_a_space(head) => {
            return Err(HeadError::Malformed("a space in the request target: write it as %20".into()))
        }
        Err(e) => return Err(HeadError::Malformed(head_error(e).into())),
    }
    let (Some(method), Some(target), Some(minor)) = (parsed.method, parsed.path, parsed.version) else {
        return Err(HeadError::Malformed("malformed request line".into()));
    };
    let mut headers = Vec::with_capacity(parsed.headers.len());
    for header in parsed.headers.iter() {
        let value = std::str::from_utf8(header.value)
            .map_err(|_| HeadError::Malformed(format!("the value of header {} is not text", header.name)))?;
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(HeadError::Malformed(format!("control characters in the value of header {}", header.name)));
        }
        headers.push((header.name.to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Request { method: method.into(), target: target.into(), version: format!("HTTP/1.{minor}"), headers })
}

/// Whether the request line is a method, a target with a raw space in it,
/// and a version that would be spoken (`GET /search?q=a b HTTP/1.1`):
/// httparse reads `b` as the version, and the client was told its HTTP/1.1
/// was not spoken (audit 243).
fn target_has_a_space(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\r' || b == b'\n').next().unwrap_or_default();
    let parts: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    parts.len() > 3
        && parts.first().is_some_and(|method| !method.is_empty())
        && matches!(parts.last(), Some(&b"HTTP/1.1" | &b"HTTP/1.0"))
}

/// What is wrong with a head httparse refused, in a client's words.
fn head_error(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::Version => "unsupported protocol version: HTTP/1.1 and HTTP/1.0 are spoken",
        httparse::Error::HeaderName => "malformed header name (or a line without a colon)",
        httparse::Error::HeaderValue => "control characters in a header value",
        httparse::Error::TooManyHeaders => "too many headers",
        httparse::Error::Token | httparse::Error::Status | httparse::Error::NewLine => "malformed request line",
    }
}

/// Refuse a head whose body could be read two ways (request smuggling,
/// RFC 9112 6.3): a Content-Length that is not plain digits (`+2`), two
/// that differ, or one beside a Transfer-Encoding. A proxy in front and
/// this server must never disagree on where a request ends.
fn check_framing(headers: &[(String, String)]) -> Result<(), HeadError> {
    let lengths: Vec<&str> = headers.iter().filter(|(n, _)| n == "content-length").map(|(_, v)| v.as_str()).collect();
    if lengths.iter().any(|v| v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit())) {
        return Err(HeadError::Malformed("Content-Length is not a number".into()));
    }
    if lengths.windows(2).any(|w| w[0].trim_start_matches('0') != w[1].trim_start_matches('0')) {
        return Err(HeadError::Malformed("conflicting Content-Length headers".into()));
    }
    if !lengths.is_empty() && headers.iter().any(|(n, _)| n == "transfer-encoding") {
        return Err(HeadError::Malformed("both Content-Length and Transfer-Encoding".into()));
    }
    // RFC 9112 3.2: one Host, or a 400. Two could name this machine to one
    // reader (the loopback check) and another to the next.
    if headers.iter().filter(|(n, _)| n == "host").count() > 1 {
        return Err(HeadError::Malformed("more than one Host header".into()));
    }
    // Two Origins could pass the check by the first and mean the second.
    if headers.iter().filter(|(n, _)| n == "origin").count() > 1 {
        return Err(HeadError::Malformed("more than one Origin header".into()));
    }
    Ok(())
}

/// Why a request body could not be read: the status to answer with and why.
#[derive(Debug)]
pub(super) struct BodyError {
    pub status: Option<u16>,
    pub message: String,
}

/// Read the body a request announces with Content-Length, at most `limit`
/// bytes (413 beyond), within the head deadline; without one, the body is
/// empty (RFC 9112, 6.3), as `curl -X POST` sends it. Chunked bodies are
/// refused (411): the routes with a body are for programs that send a length.
/// `bound` is told before each read how long is left, to bound the read by
/// it (a socket's read timeout): checked between reads alone, a body
/// dripped a byte every 4.9 s held its connection for twice the deadline.
pub(super) fn read_body(
    r: &mut impl io::Read,
    request: &Request,
    limits: &Limits,
    limit: usize,
    bound: &mut dyn FnMut(std::time::Duration),
    go_ahead: &mut dyn FnMut(),
) -> Result<Vec<u8>, BodyError> {
    let refuse = |status: u16, message: &str| BodyError { status: Some(status), message: message.to_string() };
    if request.header("transfer-encoding").is_some() {
        return Err(refuse(411, "send the body with a Content-Length, not a Transfer-Encoding"));
    }
    let Some(length) = request.header("content-length") else {
        return Ok(Vec::new());
    };
    let length: usize = length.trim().parse().map_err(|_| refuse(400, "Content-Length is not a number"))?;
    if length > limit {
        return Err(refuse(413, &format!("the body is {length} bytes; the limit is {limit}")));
    }
    // A client that waits to be told to send its body (RFC 9110 10.1.1)
    // is, once nothing refuses it: it waited a second, or for ever.
    let waits = request.header("expect").is_some_and(|e| e.trim().eq_ignore_ascii_case("100-continue"));
    if waits && length > 0 && request.version == "HTTP/1.1" {
        go_ahead();
    }
    let mut body = vec![0u8; length];
    let deadline = Instant::now() + limits.head_deadline;
    let mut filled = 0;
    while filled < length {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(BodyError { status: None, message: "request body not received in time".into() });
        }
        bound(left);
        match r.read(&mut body[filled..]) {
            Ok(0) => return Err(BodyError { status: None, message: "connection closed mid-body".into() }),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(BodyError { status: None, message: e.to_string() }),
        }
    }
    Ok(body)
}

/// A request target split into its decoded path and query parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Target {
    pub path: String,
    pub params: Vec<(String, String)>,
}

impl Target {
    /// The first value of parameter `name`.
    pub(super) fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Every value of parameter `name`, in order (`size=+1k&size=-1M`).
    pub(super) fn all(&self, name: &str) -> Vec<String> {
        self.params.iter().filter(|(n, _)| n == name).map(|(_, v)| v.clone()).collect()
    }
}

/// Parse an origin-form target (`/path?a=b&c=d`): percent-escapes decoded,
/// `+` in the query read as a space. Err says what is wrong with it.
pub(super) fn parse_target(target: &str) -> Result<Target, String> {
    if !target.starts_with('/') {
        return Err("the request target must be a path starting with '/'".into());
    }
    if target.contains('#') {
        return Err("the request target must not contain a fragment".into());
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, q),
        None => (target, ""),
    };
    let path = percent_decode(path, false)?;
    let mut params = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        params.push((percent_decode(name, true)?, percent_decode(value, true)?));
    }
    Ok(Target { path, params })
}

/// Decode `%XX` escapes (and `+` as a space when `plus_is_space`); the
/// result must be UTF-8 without control characters other than tab and newline.
pub(super) fn percent_decode(s: &str, plus_is_space: bool) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).ok_or_else(|| format!("bad percent-encoding in {:?}", shown(s)))?;
                let value = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .filter(|_| hex.iter().all(u8::is_ascii_hexdigit))
                    .ok_or_else(|| format!("bad percent-encoding in {:?}", shown(s)))?;
                out.push(value);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    let text = String::from_utf8(out).map_err(|_| format!("percent-encoding in {:?} is not UTF-8", shown(s)))?;
    if holds_controls(&text) {
        return Err(format!("control characters in {:?}", shown(s)));
    }
    Ok(text)
}

/// Whether a request's text holds control characters other than tab and
/// line ends, which no question or path of a request needs (ESC, NUL). A
/// carriage return is a line's end as a Windows client pastes it.
pub(super) fn holds_controls(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
}

/// A value the request sent, as an error repeats it (`super::shown`).
fn shown(value: &str) -> String {
    super::shown(value)
}

/// A response to write.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON body, escaped as records are (`records::escaped_json`):
    /// an answer's excerpt or a path shown by `curl` on a terminal carries
    /// a file's C1 controls and bidi overrides as text (audit 181).
    pub(super) fn json(status: u16, value: &serde_json::Value) -> Response {
        let mut body = crate::records::escaped_json(value).unwrap_or_default().into_bytes();
        body.push(b'\n');
        Response { status, content_type: "application/json", headers: Vec::new(), body }
    }

    /// Every error body: `{"error": {"status": N, "message": "..."}}`.
    pub(super) fn error(status: u16, message: &str) -> Response {
        Response::json(status, &serde_json::json!({ "error": { "status": status, "message": message } }))
    }

    pub(super) fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }
}

/// The reason phrase for the statuses vg-serve uses.
pub(super) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// Write `response` as one HTTP/1.1 message; `with_body` is false for an
/// answer to HEAD, which has the headers of the body but not the body.
pub(super) fn write_response(
    w: &mut impl Write,
    response: &Response,
    keep_alive: bool,
    with_body: bool,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    if with_body {
        w.write_all(&response.body)?;
    }
    w.flush()
}

/// Compare two secrets in time that depends on neither's content: both are
/// hashed first, so not even their lengths leak through timing.
pub(super) fn secrets_equal(a: &str, b: &str) -> bool {
    let (x, y) = (blake3::hash(a.as_bytes()), blake3::hash(b.as_bytes()));
    x.as_bytes().iter().zip(y.as_bytes()).fold(0u8, |acc, (p, q)| acc | (p ^ q)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Option<Request>, HeadError> {
        read_request(&mut io::BufReader::new(text.as_bytes()), &Limits::default())
    }

    #[test]
    fn reads_a_request_head() {
        let r = read("GET /search?q=a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n").unwrap().unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.target, "/search?q=a");
        assert_eq!(r.header("authorization"), Some("Bearer t"));
        assert!(r.keep_alive(false));
        assert!(read("").unwrap().is_none());
        let r = read("GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(!r.keep_alive(false));
        let r = read("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").unwrap().unwrap();
        assert!(!r.keep_alive(false), "a body that is not read ends the connection");
        assert!(r.keep_alive(true), "one that was read does not");
    }

    #[test]
    fn a_raw_space_in_the_target_is_said_as_such() {
        let why = |text: &str| match read(text) {
            Err(HeadError::Malformed(why)) => why,
            other => panic!("{other:?}"),
        };
        for line in ["GET /search?q=a b HTTP/1.1", "GET /a  b HTTP/1.1"] {
            let said = why(&format!("{line}\r\nHost: x\r\n\r\n"));
            assert_eq!(said, "a space in the request target: write it as %20", "{line}");
        }
        assert!(why("GET / HTTP/2.0\r\nHost: x\r\n\r\n").starts_with("unsupported protocol version"));
        assert!(why("GET /a b HTTP/9.9\r\nHost: x\r\n\r\n").starts_with("unsupported protocol version"));
    }

    #[test]
    fn bodies_are_read_by_length_within_a_limit() {
        let limits = Limits::default();
        let mut stream =
            io::BufReader::new(&b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET"[..]);
        let r = read_request(&mut stream, &limits).unwrap().unwrap();
        assert_eq!(read_body(&mut stream, &r, &limits, 100, &mut |_| {}, &mut || {}).unwrap(), b"hello");
        let mut rest = String::new();
        io::Read::read_to_string(&mut stream, &mut rest).unwrap();
        assert_eq!(rest, "GET", "the next request is left alone");
        // Each read is bounded by what is left of the deadline, not the
        // socket's timeout in full: a body dripped a byte at a time.
        struct Drip<'a>(&'a [u8]);
        impl io::Read for Drip<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let Some((first, rest)) = self.0.split_first() else { return Ok(0) };
                buf[0] = *first;
                self.0 = rest;
                Ok(1)
            }
        }
        let r = read("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n").unwrap().unwrap();
        let mut bounds = Vec::new();
        let body = read_body(&mut Drip(b"hello"), &r, &limits, 100, &mut |left| bounds.push(left), &mut || {}).unwrap();
        assert_eq!(body, b"hello");
        assert_eq!(bounds.len(), 5, "{bounds:?}");
        assert!(bounds.windows(2).all(|w| w[1] <= w[0]) && bounds[0] <= limits.head_deadline, "{bounds:?}");
        let status = |head: &str, limit| {
            let r = read(head).unwrap().unwrap();
            read_body(&mut &b"abc"[..], &r, &limits, limit, &mut |_| {}, &mut || {})
                .map(|_| 0)
                .unwrap_or_else(|e| e.status.unwrap_or(0))
        };
        assert_eq!(status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n", 10), 413);
        assert_eq!(status("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 10), 411);
        assert_eq!(status("POST / HTTP/1.1\r\nHost: x\r\n\r\n", 10), 0, "no length, no body");
        assert_eq!(status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 10), 400);
        assert_eq!(
            status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n", 10),
            0,
            "a body cut short: nothing to answer"
        );
    }

    #[test]
    fn limits_give_414_and_431() {
        let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(9000));
        assert_eq!(read(&long).unwrap_err().status(), Some(414));
        let big = format!("GET / HTTP/1.1\r\nHost: x\r\nX: {}\r\n\r\n", "a".repeat(17_000));
        assert_eq!(read(&big).unwrap_err().status(), Some(431));
        let many: String = (0..101).map(|i| format!("X{i}: y\r\n")).collect();
        assert_eq!(read(&format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n")).unwrap_err().status(), Some(431));
        for bad in [
            "GET\r\n\r\n",
            "GET / HTTP/2\r\n\r\n",
            "G{T / HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n",
        ] {
            assert_eq!(read(bad).unwrap_err().status(), Some(400), "{bad:?}");
        }
    }

    #[test]
    fn heads_a_proxy_could_read_another_way_are_refused() {
        for bad in [
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x2\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x1bb\r\n\r\n",
            // A name a proxy might read without its space is no name.
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n",
            " GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n folded: value\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n",
        ] {
            assert_eq!(read(bad).unwrap_err().status(), Some(400), "{bad:?}");
        }
        let same =
            read("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 02\r\n\r\n").unwrap().unwrap();
        assert_eq!(same.header("content-length"), Some("2"), "the same length twice is one length");
        assert!(read("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\tb\r\n\r\n").unwrap().is_some(), "a tab is fine");
        let old = read("GET / HTTP/2.0\r\n\r\n").unwrap_err().message();
        assert!(old.contains("HTTP/1.1 and HTTP/1.0 are spoken"), "{old}");
        let e = read("GET / HTTP/1.1\r\nHost: x\r\nX-A: \u{85}\r\n\r\n").unwrap_err().message();
        assert!(e.contains("control characters in the value of header X-A"), "{e}");
    }

    #[test]
    fn an_http_1_1_request_names_its_host_once_and_its_origin_once() {
        let e = read("GET /health HTTP/1.1\r\n\r\n").unwrap_err();
        assert_eq!((e.status(), e.message()), (Some(400), "an HTTP/1.1 request without a Host header".to_string()));
        assert!(read("GET /health HTTP/1.0\r\n\r\n").unwrap().is_some(), "HTTP/1.0 need not");
        for empty in ["GET /health HTTP/1.1\r\nHost:\r\n\r\n", "GET /health HTTP/1.0\r\nHost:   \r\n\r\n"] {
            let e = read(empty).unwrap_err();
            assert_eq!((e.status(), e.message()), (Some(400), "an empty Host header".to_string()), "{empty:?}");
        }
        let two = "POST / HTTP/1.1\r\nHost: x\r\nOrigin: http://localhost:1\r\nOrigin: http://evil.example\r\n\r\n";
        assert_eq!(read(two).unwrap_err().message(), "more than one Origin header");
    }

    #[test]
    fn connection_is_a_list_of_options() {
        let r = read("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n").unwrap().unwrap();
        assert!(!r.keep_alive(false));
        let r = read("GET / HTTP/1.0\r\nConnection: Keep-Alive, Upgrade\r\n\r\n").unwrap().unwrap();
        assert!(r.keep_alive(false));
        let r = read("GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n\r\n").unwrap().unwrap();
        assert!(r.keep_alive(false));
        let r =
            read("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n").unwrap().unwrap();
        assert!(!r.keep_alive(false), "two lines are one list");
    }

    #[test]
    fn a_request_line_past_the_limit_is_414_whatever_ends_it() {
        let limit = Limits::default().request_line;
        let line = |n: usize| format!("GET /{} HTTP/1.1", "a".repeat(n - "GET / HTTP/1.1".len()));
        for end in ["\r\n", "\n"] {
            let over = format!("{}{end}Host: x{end}{end}", line(limit + 1));
            assert_eq!(read(&over).unwrap_err().status(), Some(414), "{end:?}");
            let at = format!("{}{end}Host: x{end}{end}", line(limit));
            assert!(read(&at).is_ok(), "{end:?}");
        }
    }

    #[test]
    fn parses_targets_and_rejects_bad_escapes() {
        let t = parse_target("/search?q=retry+upload%21&k=5&flag").unwrap();
        assert_eq!(t.path, "/search");
        assert_eq!(t.param("q"), Some("retry upload!"));
        assert_eq!(t.param("k"), Some("5"));
        assert_eq!(t.param("flag"), Some(""));
        assert_eq!(parse_target("/a%20b").unwrap().path, "/a b");
        for bad in ["/search?q=%zz", "/search?q=%4", "/search?q=%ff", "search", "/x#frag", "/search?q=%00"] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn secrets_compare_by_content() {
        assert!(secrets_equal("s3cret", "s3cret"));
        assert!(!secrets_equal("s3cret", "s3creT"));
        assert!(!secrets_equal("s3cret", ""));
    }

    #[test]
    fn responses_are_well_formed() {
        let mut out = Vec::new();
        write_response(&mut out, &Response::error(405, "only GET").with_header("Allow", "GET"), false, true).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"), "{text}");
        assert!(text.contains("Allow: GET\r\n") && text.contains("Connection: close\r\n"));
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["status"], 405);
    }

    /// The statuses written in the server's sources: after `Response::error(`
    /// or `Response::json(`, and the `Some(NNN)`, `status: NNN` and
    /// `refuse(NNN` of the request errors.
    fn statuses_sent() -> std::collections::BTreeSet<u16> {
        let sources = [
            include_str!("mod.rs"),
            include_str!("http.rs"),
            include_str!("ask.rs"),
            include_str!("embeddings.rs"),
            include_str!("jobs.rs"),
            include_str!("search.rs"),
            include_str!("status.rs"),
            include_str!("gate.rs"),
            include_str!("limit.rs"),
        ];
        let mut found = std::collections::BTreeSet::new();
        for source in sources {
            for marker in ["Response::error(", "Response::json(", "Some(", "status: ", "refuse("] {
                for (at, _) in source.match_indices(marker) {
                    let rest = source[at + marker.len()..].trim_start();
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    if let (3, Ok(code @ 200..=599)) = (digits.len(), digits.parse::<u16>()) {
                        found.insert(code);
                    }
                }
            }
        }
        found
    }

    #[test]
    fn every_status_the_server_sends_has_its_reason() {
        let sent = statuses_sent();
        for code in [200, 202, 401, 404, 405, 411, 413, 429, 431, 500, 503] {
            assert!(sent.contains(&code), "{code} is no longer found in the sources: is the scan still right?");
        }
        let unknown: Vec<u16> = sent.into_iter().filter(|&c| reason(c) == "Unknown").collect();
        assert!(unknown.is_empty(), "statuses sent as 'Unknown': {unknown:?}");
    }

    mod fuzz {
        //! Property tests: any request head or target is answered or
        //! refused, never a panic (PROPTEST_CASES sets how many are tried).
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_target_parses_or_is_refused(target in "\\PC{0,200}") {
                let _ = parse_target(&target);
                let _ = percent_decode(&target, true);
            }

            #[test]
            fn percent_encoding_round_trips(text in "(\\PC|\t|\n){0,80}") {
                let encoded: String = text.bytes().map(|b| format!("%{b:02X}")).collect();
                prop_assert_eq!(percent_decode(&encoded, false).unwrap(), text.clone());
                let target = parse_target(&format!("/search?q={encoded}&k=5")).unwrap();
                prop_assert_eq!(target.param("q"), Some(text.as_str()));
            }

            #[test]
            fn any_request_head_is_read_or_refused(head in proptest::collection::vec(any::<u8>(), 0..2000)) {
                let limits = Limits { request_line: 256, header_bytes: 512, headers: 8, ..Limits::default() };
                match read_request(&mut io::BufReader::new(&head[..]), &limits) {
                    Ok(_) => {}
                    Err(e) => { let _ = (e.status(), e.message()); }
                }
            }
        }
    }
}
