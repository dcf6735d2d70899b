//! Embeddings from a server (`embedder_source = "remote"`): any endpoint that
//! speaks OpenAI's `POST /v1/embeddings` (Ollama, LM Studio,
//! text-embeddings-inference, vLLM, another machine's `vg-serve`).
//!
//! A server fails in ways a local model does not, so the client retries
//! what may pass on a second try (429, 5xx, timeouts, dropped connections)
//! with exponential backoff, and refuses at once what will not (401, 403,
//! 404: a wrong key or URL, said in one line). A text the server keeps
//! refusing becomes a hole (`embed_each` returns None for it): the index
//! stores the chunk without a vector, counts it, and embeds it again on the
//! next run, instead of aborting the run or storing a made-up vector.

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use serde::Deserialize;
use serde_json::json;

use super::{Embedder, TokenCounter};
use crate::project::urls::shown_url;

/// The environment variable the API key is read from; a key is never read
/// from a config file, which could be committed or come with a repository.
pub const API_KEY_VAR: &str = "VECGREP_EMBEDDER_API_KEY";

/// How the client talks to the server.
#[derive(Clone, Debug)]
pub struct RemoteSettings {
    pub url: String,
    /// The `model` every request names.
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
    pub batch_size: usize,
    /// Attempts per request before giving up on it (the first included).
    pub attempts: u32,
    /// The first pause between attempts; it doubles each time.
    pub backoff: Duration,
}

impl RemoteSettings {
    pub fn new(url: &str, model: &str, timeout: Duration, batch_size: usize) -> Self {
        RemoteSettings {
            url: url.to_string(),
            model: model.to_string(),
            api_key: std::env::var(API_KEY_VAR).ok().filter(|k| !k.is_empty()),
            timeout,
            batch_size: batch_size.max(1),
            attempts: 4,
            backoff: Duration::from_millis(250),
        }
    }

    /// For a query's embedder: each request is tried once. Someone waits on
    /// a question, and a search that cannot have the model answers by words
    /// (`live::Searcher::search_noted`) or says why, where retrying a server
    /// that does not answer would hold it for `attempts` × `timeout`.
    pub fn for_queries(mut self) -> Self {
        self.attempts = 1;
        self
    }
}

pub struct RemoteEmbedder {
    client: Client,
    count: TokenCounter,
    /// Batches in a row that failed entirely: the server is down, not
    /// refusing a text, and the run should stop rather than make holes of
    /// everything.
    failed_batches: u32,
}

/// What one request needs, owned, so that it can be made on a thread of
/// its own that a stopped run leaves behind (`request_unless_stopped`).
#[derive(Clone)]
struct Client {
    settings: RemoteSettings,
    agent: ureq::Agent,
    dims: usize,
}

/// How a failed request should be handled.
enum Failure {
    /// Worth another try (429, 5xx, timeout, connection trouble).
    Transient(String),
    /// The request as sent will never pass (400, 413, 422: a text the
    /// server cannot take); the texts are tried one by one.
    Refused(String),
    /// Nothing will pass (401, 403, 404, ...): stop with this message.
    Fatal(String),
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

/// Batches in a row that may fail entirely before the run stops.
const MAX_FAILED_BATCHES: u32 = 3;
/// Why a request was not made or not waited for.
const STOPPED_WAITING: &str = "stopped waiting for the server: the run was interrupted";
/// Largest response body read, in bytes.
const MAX_RESPONSE_BYTES: u64 = 256 * 1024 * 1024;

/// The HTTP client of an embedding or chat endpoint: statuses are read, not
/// errors, and a redirect is not followed but answered as its status. An
/// endpoint allowed because it is on this machine (`privacy_mode`) must not
/// send the code, or the key, on to another host.
pub(crate) fn http_agent(url: &str, timeout: std::time::Duration) -> ureq::Agent {
    let config =
        ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).max_redirects(0);
    // A server on this machine is asked directly: a proxy the environment
    // names (HTTP_PROXY) would carry the code off it, where privacy_mode
    // local_only allowed it to go only as far as loopback.
    let config = if crate::project::urls::on_loopback(url) { config.proxy(None) } else { config };
    config.build().into()
}

/// Why the key in `var` cannot be sent, if it cannot: an Authorization
/// header carries visible ASCII, with spaces and tabs only between them.
/// Said before any request, which would fail as if the server were unreachable.
pub(crate) fn check_api_key(var: &str, key: Option<&str>) -> Result<()> {
    let Some(key) = key else { return Ok(()) };
    let carried = |b: u8| b.is_ascii_graphic() || b == b' ' || b == b'\t';
    if key.bytes().all(carried) && key.trim() == key {
        return Ok(());
    }
    Err(anyhow!(
        "{var} holds a control or non-ASCII character, or a space at an end, which no Authorization header carries"
    ))
}

/// What a status says beyond its number: a redirect names where it leads.
pub(crate) fn status_hint(response: &ureq::http::Response<ureq::Body>) -> String {
    let status = response.status();
    let location = response.headers().get("location").and_then(|l| l.to_str().ok());
    match location {
        Some(to) if status.is_redirection() => {
            let to: String = to.chars().filter(|c| !c.is_control()).take(200).collect();
            format!(" (a redirect to {to}, not followed: set the URL to where it leads)")
        }
        _ => String::new(),
    }
}

impl RemoteEmbedder {
    /// Connect: one small request learns the vectors' size and proves that
    /// the URL, the key and the model work before anything is indexed.
    pub fn connect(settings: RemoteSettings, count: TokenCounter) -> Result<Self> {
        check_api_key(API_KEY_VAR, settings.api_key.as_deref())?;
        let mut embedder = RemoteEmbedder {
            client: Client { agent: http_agent(&settings.url, settings.timeout), settings, dims: 0 },
            count,
            failed_batches: 0,
        };
        let probe = embedder.request_with_retries(&["vecgrep: checking the embedding server"]).map_err(|e| {
            anyhow!("the embedding server at {} does not work: {e}", shown_url(&embedder.client.settings.url))
        })?;
        embedder.client.dims = probe[0].len();
        Ok(embedder)
    }

    /// One request for `texts`, with retries; vectors in order.
    fn request_with_retries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.attempts(texts).map_err(|failure| match failure {
            Failure::Transient(e) | Failure::Refused(e) | Failure::Fatal(e) => e,
        })
    }

    /// As `request_with_retries`, saying whether the server did not answer
    /// (`Failure::Transient`, after every attempt) or refused the texts.
    fn attempts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Failure> {
        let settings = &self.client.settings;
        let mut pause = settings.backoff;
        let mut last = String::new();
        for attempt in 1..=settings.attempts.max(1) {
            match request_unless_stopped(&self.client, texts) {
                Ok(v) => return Ok(v),
                Err(Failure::Transient(e)) => last = e,
                Err(refused) => return Err(refused),
            }
            if attempt < settings.attempts && !paused_unless_stopped(pause) {
                return Err(Failure::Fatal(format!("{last} (stopped retrying: the run was interrupted)")));
            }
            pause = pause.saturating_mul(2);
        }
        match settings.attempts {
            0 | 1 => Err(Failure::Transient(last)),
            n => Err(Failure::Transient(format!("{last} (after {n} attempts)"))),
        }
    }
}

impl Client {
    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Failure> {
        let mut request = self.agent.post(&self.settings.url).header("Content-Type", "application/json");
        if let Some(key) = &self.settings.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let body = json!({ "model": self.settings.model, "input": texts });
        let mut response = match request.send_json(&body) {
            Ok(r) => r,
            Err(ureq::Error::BadUri(u)) => {
                return Err(Failure::Fatal(format!("embedder_url is not a usable URL: {}", shown_url(&u.to_string()))))
            }
            Err(e) => return Err(Failure::Transient(self.why_unanswered(&e))),
        };
        let status = response.status().as_u16();
        if status != 200 {
            let detail = response.body_mut().with_config().limit(4096).read_to_string().unwrap_or_default();
            let detail: String = detail.chars().filter(|c| !c.is_control()).take(200).collect();
            let message = format!(
                "the server answered {status}{}{}",
                if detail.is_empty() { String::new() } else { format!(": {detail}") },
                status_hint(&response)
            );
            return Err(match status {
                429 | 500..=599 => Failure::Transient(message),
                400 | 413 | 422 => Failure::Refused(message),
                401 | 403 => Failure::Fatal(format!("{message} (is {API_KEY_VAR} set to the right key?)")),
                // A server that checks the method before the path (vg-serve
                // does) answers a mistyped path 405; a 404 may be the
                // model's (OpenAI's model_not_found), which says so.
                404 | 405 if !detail.to_ascii_lowercase().contains("model") => {
                    Failure::Fatal(format!("{message} (check embedder_url: it ends in /v1/embeddings)"))
                }
                _ => Failure::Fatal(message),
            });
        }
        let parsed: EmbeddingsResponse = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_json()
            .map_err(|e| Failure::Transient(format!("the server's answer is not an embeddings response: {e}")))?;
        self.vectors_in_order(parsed, texts.len()).map_err(Failure::Refused)
    }

    /// Why a request got no answer, in the settings' words.
    fn why_unanswered(&self, e: &ureq::Error) -> String {
        match e {
            ureq::Error::Timeout(_) => {
                format!("no answer within {}s (embedder_timeout)", self.settings.timeout.as_secs_f64())
            }
            ureq::Error::HostNotFound => "its host name is not known".to_string(),
            other => other.to_string(),
        }
    }

    /// The vectors of a response in input order, checked and unit length.
    fn vectors_in_order(&self, parsed: EmbeddingsResponse, n: usize) -> Result<Vec<Vec<f32>>, String> {
        if parsed.data.len() != n {
            return Err(format!("the server returned {} vectors for {n} texts", parsed.data.len()));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
        for (position, item) in parsed.data.into_iter().enumerate() {
            let i = item.index.unwrap_or(position);
            let slot = out.get_mut(i).ok_or_else(|| format!("the server returned a vector for text {i} of {n}"))?;
            let mut v = item.embedding;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if v.is_empty() || !norm.is_finite() || norm == 0.0 || (self.dims != 0 && v.len() != self.dims) {
                return Err(format!("the server returned a malformed vector ({} numbers)", v.len()));
            }
            v.iter_mut().for_each(|x| *x /= norm);
            *slot = Some(v);
        }
        out.into_iter().map(|v| v.ok_or_else(|| "the server left a text without a vector".to_string())).collect()
    }
}

/// `client.request(texts)`, unless the user asks the run to stop before it
/// is answered: a server that does not answer held Ctrl-C for its whole
/// `embedder_timeout`. The request's thread is then left to its fate; the
/// stopping process does not wait for it.
fn request_unless_stopped(client: &Client, texts: &[&str]) -> Result<Vec<Vec<f32>>, Failure> {
    let owned: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    if super::STOP_CHECK.get().is_none() {
        return client.request(&owned);
    }
    if super::stop_asked() {
        return Err(Failure::Fatal(STOPPED_WAITING.to_string()));
    }
    let (answer, answered) = std::sync::mpsc::channel();
    let caller = client.clone();
    std::thread::spawn(move || {
        let _ = answer.send(caller.request(&owned));
    });
    loop {
        match answered.recv_timeout(Duration::from_millis(100)) {
            Ok(result) => return result,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Failure::Fatal("the request's thread ended without an answer".to_string()))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if super::stop_asked() => {
                return Err(Failure::Fatal(STOPPED_WAITING.to_string()))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Wait `pause` before the next attempt, unless the user asks the run to
/// stop meanwhile (`super::stop_asked`): false then. A server that does not
/// answer was retried for minutes after Ctrl-C.
fn paused_unless_stopped(pause: Duration) -> bool {
    let until = std::time::Instant::now() + pause;
    while !super::stop_asked() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
    false
}

impl Embedder for RemoteEmbedder {
    fn texts_per_call(&self) -> usize {
        self.client.settings.batch_size
    }

    fn model_name(&self) -> &str {
        &self.client.settings.model
    }

    fn dims(&self) -> usize {
        self.client.dims
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for group in texts.chunks(self.client.settings.batch_size) {
            // A server that did not answer is said as such (`ServerAway`): a
            // searcher stops asking it a while; a text refused is the text's.
            let vectors = self.attempts(group).map_err(|failure| match failure {
                Failure::Transient(e) => anyhow::Error::new(super::ServerAway(format!("embedding failed: {e}"))),
                Failure::Refused(e) | Failure::Fatal(e) => anyhow!("embedding failed: {e}"),
            })?;
            out.extend(vectors);
        }
        Ok(out)
    }

    fn embed_each(&mut self, texts: &[&str]) -> Result<Vec<Option<Vec<f32>>>> {
        let mut out = Vec::with_capacity(texts.len());
        for group in texts.chunks(self.client.settings.batch_size) {
            match self.request_with_retries(group) {
                Ok(vectors) => {
                    self.failed_batches = 0;
                    out.extend(vectors.into_iter().map(Some));
                }
                Err(batch_error) => {
                    // Told to stop: no text is tried alone (each waited
                    // out its timeout: minutes after Ctrl-C).
                    if super::stop_asked() {
                        bail!("embedding stopped: the run was interrupted");
                    }
                    // Which texts fail? Each alone; those that still fail are holes.
                    let mut any = false;
                    for text in group {
                        if super::stop_asked() {
                            bail!("embedding stopped: the run was interrupted");
                        }
                        match self.request_with_retries(&[text]) {
                            Ok(mut v) => {
                                any = true;
                                out.push(v.pop());
                            }
                            // Given up because told to stop: no hole to store (review 248).
                            Err(_) if super::stop_asked() => bail!("embedding stopped: the run was interrupted"),
                            Err(_) => out.push(None),
                        }
                    }
                    if any {
                        self.failed_batches = 0;
                    } else {
                        self.failed_batches += 1;
                        if self.failed_batches >= MAX_FAILED_BATCHES {
                            bail!(
                                "the embedding server at {} keeps failing: {batch_error}",
                                shown_url(&self.client.settings.url)
                            );
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    fn count_tokens(&self, text: &str) -> usize {
        (self.count)(text)
    }
}

/// The conservative estimate used when no tokenizer of the remote model is
/// at hand: one token per three bytes, plus the two special tokens.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(3) + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedder(dims: usize) -> Client {
        let settings = RemoteSettings::new("http://127.0.0.1:1/", "m", Duration::from_secs(1), 4);
        Client { agent: ureq::Agent::config_builder().build().into(), settings, dims }
    }

    #[test]
    fn responses_are_put_in_input_order_and_normalized() {
        let e = embedder(2);
        let parsed = EmbeddingsResponse {
            data: vec![
                EmbeddingItem { index: Some(1), embedding: vec![0.0, 2.0] },
                EmbeddingItem { index: Some(0), embedding: vec![3.0, 4.0] },
            ],
        };
        assert_eq!(e.vectors_in_order(parsed, 2).unwrap(), vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
    }

    #[test]
    fn malformed_responses_are_refused() {
        let e = embedder(2);
        let bad = |data: Vec<EmbeddingItem>, n| e.vectors_in_order(EmbeddingsResponse { data }, n).unwrap_err();
        assert!(bad(vec![], 1).contains("0 vectors for 1"));
        assert!(bad(vec![EmbeddingItem { index: Some(5), embedding: vec![1.0, 0.0] }], 1).contains("text 5"));
        assert!(bad(vec![EmbeddingItem { index: None, embedding: vec![1.0, 0.0, 0.0] }], 1).contains("malformed"));
        assert!(bad(vec![EmbeddingItem { index: None, embedding: vec![0.0, 0.0] }], 1).contains("malformed"));
        assert!(bad(vec![EmbeddingItem { index: None, embedding: vec![f32::NAN, 1.0] }], 1).contains("malformed"));
    }

    #[test]
    fn an_unreachable_server_is_an_error_naming_it() {
        let mut settings = RemoteSettings::new("http://127.0.0.1:1/v1/embeddings", "m", Duration::from_secs(2), 4);
        settings.attempts = 2;
        settings.backoff = Duration::from_millis(1);
        let err = RemoteEmbedder::connect(settings, Box::new(estimate_tokens)).err().unwrap().to_string();
        assert!(err.contains("http://127.0.0.1:1/v1/embeddings") && err.contains("after 2 attempts"), "{err}");
    }
}
