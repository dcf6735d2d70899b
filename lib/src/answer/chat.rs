//! A client of an OpenAI-compatible chat endpoint (`POST .../chat/completions`:
//! llama.cpp's server, Ollama, vLLM, LM Studio, OpenAI itself). One request
//! per answer at temperature 0, so that the same results get the same
//! answer from the same model; every failure is one line that says what to
//! fix, and never shows the key.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use serde_json::json;

use super::prompt::Message;
use crate::project::urls::shown_url;

/// The environment variable the endpoint's key is read from; a key is never
/// read from a config file, which could be committed or come with a repository.
pub const API_KEY_VAR: &str = "VECGREP_LLM_API_KEY";

/// Most tokens an answer may take.
const MAX_ANSWER_TOKENS: u32 = 256;
/// Largest reply read, in bytes.
const MAX_REPLY_BYTES: u64 = 1024 * 1024;

/// The longest model name taken from an endpoint's list of models.
const MAX_MODEL_NAME: usize = 200;

/// Where and how to ask.
#[derive(Clone, Debug)]
pub struct ChatSettings {
    /// The endpoint's base URL (`http://host:port/v1`) or its chat completions URL.
    pub url: String,
    /// The model to ask; None asks the endpoint which it has.
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl ChatSettings {
    /// Settings for `url`, with the key from the environment.
    pub fn new(url: &str, model: Option<&str>, timeout: Duration) -> Self {
        ChatSettings {
            url: url.to_string(),
            model: model.map(str::to_string),
            api_key: std::env::var(API_KEY_VAR).ok().filter(|k| !k.is_empty()),
            timeout,
        }
    }
}

/// A connection to one endpoint and model.
pub struct ChatClient {
    agent: ureq::Agent,
    base: String,
    /// The URL's query (`?api-version=…`), empty or with its `?`: it goes
    /// after each path asked for, not before it.
    query: String,
    model: String,
    api_key: Option<String>,
    /// The URL as it may be shown: without any user or password in it.
    shown: String,
    /// When `llm_timeout` from the connection is up: it bounds the answer,
    /// the endpoint's list of models asked first included, not each request.
    deadline: Instant,
}

/// A chat model's reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Reply {
    pub(super) text: String,
    /// The model stopped at the token limit, mid-answer.
    pub(super) cut: bool,
    /// The model that answered, as the endpoint names it.
    pub(super) model: String,
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    model: Option<String>,
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
}

impl ChatClient {
    /// A client for `settings`; without a model named, the endpoint's first
    /// listed model (one request) is the one asked.
    pub fn connect(settings: &ChatSettings) -> Result<ChatClient> {
        let (base, query) = base_url(&settings.url)?;
        crate::embed::check_api_key(API_KEY_VAR, settings.api_key.as_deref())?;
        let mut client = ChatClient {
            agent: crate::embed::http_agent(&base, settings.timeout),
            shown: shown_url(&base),
            base,
            query,
            model: String::new(),
            api_key: settings.api_key.clone(),
            deadline: Instant::now() + settings.timeout,
        };
        client.model = match &settings.model {
            Some(m) => m.clone(),
            None => client.first_model()?,
        };
        Ok(client)
    }

    /// The model asked.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The endpoint, as it may be shown.
    pub fn endpoint(&self) -> &str {
        &self.shown
    }

    /// The model's reply to one instruction and one request, as text, for
    /// callers that write their own prompt (`ask`'s planner): no control
    /// characters, at most what one answer may take.
    pub fn reply(&self, instruction: &str, request: &str) -> Result<String> {
        let messages = [
            Message { role: "system", content: instruction.to_string() },
            Message { role: "user", content: request.to_string() },
        ];
        let reply = self.complete(&messages)?;
        Ok(reply.text.chars().filter(|&c| !c.is_control() || c == '\n' || c == '\t').collect())
    }

    /// The model's reply to `messages`.
    pub(super) fn complete(&self, messages: &[Message]) -> Result<Reply> {
        let body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": MAX_ANSWER_TOKENS,
            "stream": false,
        });
        let request = self.authorized(self.agent.post(format!("{}/chat/completions{}", self.base, self.query)))?;
        let response = request.send_json(&body).map_err(|e| self.unreachable(e))?;
        let completion: Completion = self.read(response, "a chat completion")?;
        let choice = completion.choices.into_iter().next();
        let cut = choice.as_ref().and_then(|c| c.finish_reason.as_deref()) == Some("length");
        let text = choice.and_then(|c| c.message.content).unwrap_or_default();
        if text.trim().is_empty() {
            bail!("the chat model at {} answered with no text", self.shown);
        }
        let model = completion.model.filter(|m| !m.is_empty()).unwrap_or_else(|| self.model.clone());
        // The name is shown on a terminal: nothing an endpoint sends may steer it.
        let model: String = model.chars().filter(|c| !c.is_control()).take(200).collect();
        Ok(Reply { text: text.trim().to_string(), cut, model })
    }

    /// The first model the endpoint lists that could be a model's name: a
    /// name is asked for by, and shown; one of a megabyte is neither.
    fn first_model(&self) -> Result<String> {
        let request = self.authorized(self.agent.get(format!("{}/models{}", self.base, self.query)))?;
        let response = request.call().map_err(|e| self.unreachable(e))?;
        let list: ModelList = self
            .read(response, "a list of models")
            .context("asked which models it has, since llm_model names none (set llm_model to skip the question)")?;
        list.data
            .into_iter()
            .map(|m| m.id)
            .find(|id| !id.trim().is_empty() && id.len() <= MAX_MODEL_NAME && !id.chars().any(char::is_control))
            .ok_or_else(|| {
                anyhow!(
                    "the chat endpoint at {} lists no model by a name vecgrep can send (empty, over {MAX_MODEL_NAME} bytes, or holding control characters); set llm_model",
                    self.shown
                )
            })
    }

    /// `request` with the key, and the time left before the deadline.
    fn authorized<B>(&self, request: ureq::RequestBuilder<B>) -> Result<ureq::RequestBuilder<B>> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.too_late());
        }
        let request = request.config().timeout_global(Some(left)).build();
        Ok(match &self.api_key {
            Some(key) => request.header("Authorization", format!("Bearer {key}")),
            None => request,
        })
    }

    fn too_late(&self) -> anyhow::Error {
        anyhow!("the chat model at {} did not answer in time (llm_timeout)", self.shown)
    }

    fn unreachable(&self, e: ureq::Error) -> anyhow::Error {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        match e {
            ureq::Error::Timeout(_) => self.too_late(),
            // Reached, then the connection broke (the server stopped mid-answer).
            ureq::Error::Io(ref io)
                if matches!(io.kind(), UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe) =>
            {
                anyhow!("the chat model at {} broke off: {e}", self.shown)
            }
            e => anyhow!("cannot reach the chat model at {}: {e}", self.shown),
        }
    }

    /// The body of a 200 response as `T`, or the error its status says.
    fn read<T: serde::de::DeserializeOwned>(
        &self,
        mut response: ureq::http::Response<ureq::Body>,
        what: &str,
    ) -> Result<T> {
        let status = response.status().as_u16();
        if status != 200 {
            // Its first 4 KiB, however long it is: a proxy's error page of
            // more was refused whole, and the error said nothing (audit 232).
            let mut head = Vec::new();
            let _ =
                std::io::Read::read_to_end(&mut std::io::Read::take(response.body_mut().as_reader(), 4096), &mut head);
            let detail = String::from_utf8_lossy(&head);
            let detail: String = detail.chars().filter(|c| !c.is_control()).take(200).collect();
            let hint = if matches!(status, 401 | 403) {
                format!(" (is {API_KEY_VAR} set to the right key?)")
            } else {
                crate::embed::status_hint(&response)
            };
            let detail = if detail.is_empty() { String::new() } else { format!(": {detail}") };
            bail!("the chat endpoint at {} answered {status}{detail}{hint}", self.shown);
        }
        // Read whole first: a reply that trickles in past llm_timeout is
        // late, not malformed, and says so.
        let text = response.body_mut().with_config().limit(MAX_REPLY_BYTES).read_to_string().map_err(|e| match e {
            ureq::Error::Timeout(_) => self.unreachable(e),
            e => anyhow!("cannot read the reply of the chat endpoint at {}: {e}", self.shown),
        })?;
        // serde's words quote the reply: a string of a megabyte, whole.
        serde_json::from_str(&text).map_err(|e| {
            let cause = crate::project::shown::words_clipped(&e.to_string(), 200, 400);
            anyhow!("the reply of the chat endpoint at {} is not {what}: {cause}", self.shown)
        })
    }
}

/// The endpoint's base URL (`.../v1`) from the URL a user gives: the base
/// itself, or its chat completions URL; with the URL's query apart.
fn base_url(url: &str) -> Result<(String, String)> {
    let url = url.trim();
    let (url, query) = url.split_once('?').map_or((url, String::new()), |(u, q)| (u, format!("?{q}")));
    let url = url.trim_end_matches('/');
    // A scheme's case does not matter (RFC 3986), as config's check takes it.
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        bail!("llm_url must be an http:// or https:// URL, got {:?}", shown_url(url));
    }
    Ok((url.strip_suffix("/chat/completions").unwrap_or(url).to_string(), query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_is_found_from_either_form_and_credentials_are_never_shown() {
        let base = |url: &str| base_url(url).unwrap();
        assert_eq!(base("http://h:1/v1/"), ("http://h:1/v1".into(), String::new()));
        assert_eq!(base("http://h:1/v1/chat/completions"), ("http://h:1/v1".into(), String::new()));
        // A query goes after each path asked for ("…/v1?api-version=1/models" was asked).
        let query = "?api-version=2024-01-01".to_string();
        assert_eq!(base("http://h:1/v1?api-version=2024-01-01"), ("http://h:1/v1".into(), query.clone()));
        assert_eq!(base("http://h:1/v1/chat/completions/?api-version=2024-01-01"), ("http://h:1/v1".into(), query));
        assert!(base_url("h:1/v1").unwrap_err().to_string().contains("http://"));
        assert!(!base_url("ftp://me:s3cret@h").unwrap_err().to_string().contains("s3cret"));
    }

    /// An endpoint on a port of this machine that answers its requests, one
    /// connection each, with `bodies` in turn (status 200, JSON).
    fn answering(bodies: Vec<String>) -> String {
        use std::io::{BufRead, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for body in bodies {
                let (conn, _) = listener.accept().unwrap();
                let mut reader = std::io::BufReader::new(conn);
                let mut length = 0;
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 2 {
                    if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = n.trim().parse().unwrap();
                    }
                    line.clear();
                }
                std::io::Read::read_exact(&mut reader, &mut vec![0; length]).unwrap();
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                let mut conn = reader.into_inner();
                conn.write_all(head.as_bytes()).and_then(|()| conn.write_all(body.as_bytes())).unwrap();
            }
        });
        url
    }

    #[test]
    fn what_an_endpoint_sends_is_taken_and_said_bounded() {
        let models = format!(r#"{{"data":[{{"id":"{}"}},{{"id":"coder-7b"}}]}}"#, "M".repeat(900_000));
        let reply = format!(r#"{{"choices":"{}"}}"#, "A".repeat(1_000_000));
        let url = answering(vec![models, reply]);
        let client =
            ChatClient::connect(&ChatSettings::new(&url.replace("http", "HTTP"), None, Duration::from_secs(5)))
                .unwrap();
        assert_eq!(client.model(), "coder-7b", "a name of a megabyte is no model's");
        let e = client.complete(&[]).unwrap_err().to_string();
        assert!(e.len() < 600 && e.contains("is not a chat completion") && e.contains("AAA"), "{}", e.len());
    }

    #[test]
    fn a_model_that_hangs_up_mid_answer_was_reached() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            // The request read, the server stops before a word of answer.
            let _ = std::io::Read::read(&mut conn, &mut [0; 4096]);
        });
        let client = ChatClient::connect(&ChatSettings::new(&url, Some("m"), Duration::from_secs(5))).unwrap();
        let e = client.complete(&[]).unwrap_err().to_string();
        assert!(!e.contains("cannot reach"), "{e}");
    }

    #[test]
    fn an_endpoint_nobody_listens_on_is_one_clear_error() {
        // A port that was free a moment ago: nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/v1");
        let client = ChatClient::connect(&ChatSettings::new(&url, Some("m"), Duration::from_secs(5))).unwrap();
        let e = client.complete(&[]).unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot reach the chat model at {url}")), "{e}");
        let e = ChatClient::connect(&ChatSettings::new(&url, None, Duration::from_secs(5))).err().unwrap();
        assert!(e.to_string().starts_with("cannot reach the chat model"), "{e}");
    }

    #[test]
    fn a_reply_that_trickles_in_past_the_timeout_is_late_not_malformed() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let Ok((mut conn, _)) = listener.accept() else { return };
            let _ = conn.read(&mut [0; 4096]);
            let _ = conn
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
            for _ in 0..40 {
                std::thread::sleep(Duration::from_millis(100));
                if conn.write_all(b"1\r\n \r\n").and_then(|()| conn.flush()).is_err() {
                    return;
                }
            }
        });
        let client = ChatClient::connect(&ChatSettings::new(&url, Some("m"), Duration::from_secs(1))).unwrap();
        let e = client.complete(&[]).unwrap_err().to_string();
        assert_eq!(e, format!("the chat model at {url} did not answer in time (llm_timeout)"));
    }
}
