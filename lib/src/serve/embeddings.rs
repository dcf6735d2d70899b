//! `POST /v1/embeddings`, OpenAI's embeddings API with the server's own
//! model (local, or the embedding server its config names), so that one
//! machine can embed for others (`embedder_source = "remote"` pointed at
//! this server).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use anyhow::Result;
use serde_json::json;

use super::http::Response;
use super::{shown, Shared};
use crate::embed::Embedder;
use crate::index::ThreadedLoader;

/// The OpenAI-compatible embeddings route, so that one machine can embed for
/// others (`embedder_source = "remote"` pointed at this server).
pub(super) const EMBEDDINGS_PATH: &str = "/v1/embeddings";
/// Largest request body, in bytes.
pub(super) const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Most texts one request may ask to embed.
const MAX_INPUTS: usize = 2048;

/// An embeddings request's `input`: one text or a list of them. Texts past
/// `MAX_INPUTS` are counted, not kept, so that a body of millions of short
/// strings costs its own size and not that many allocations.
struct Input {
    texts: Vec<String>,
    count: usize,
}

impl<'de> serde::Deserialize<'de> for Input {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Input;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a text or a list of texts")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Input, E> {
                Ok(Input { texts: vec![text.to_string()], count: 1 })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Input, A::Error> {
                let mut texts = Vec::new();
                while texts.len() < MAX_INPUTS {
                    match seq.next_element::<String>()? {
                        Some(text) => texts.push(text),
                        None => return Ok(Input { count: texts.len(), texts }),
                    }
                }
                let mut count = texts.len();
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    count += 1;
                }
                Ok(Input { texts, count })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `POST /v1/embeddings` with `{"input": TEXT or [TEXT...], "model": NAME}`:
/// each text is embedded alone, exactly as an index run here would embed it,
/// so an index built through this server matches one built locally.
pub(super) fn embeddings_response(shared: &Shared, body: &[u8]) -> Response {
    #[derive(serde::Deserialize)]
    struct EmbeddingsRequest {
        input: Input,
        model: Option<String>,
        encoding_format: Option<String>,
        /// OpenAI's shortened embeddings; this model's are all it gives.
        dimensions: Option<serde_json::Value>,
    }
    // serde takes an array for a struct, field by field in order; OpenAI's API takes an object alone.
    // Checked before parsing, so a client is never told the name of a type of ours.
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        None => {
            return Response::error(
                400,
                "the body is empty; an embeddings request is a JSON object, {\"input\": [...]}",
            )
        }
        Some(_) => {
            return Response::error(
                400,
                "the body is not an embeddings request, which is a JSON object, {\"input\": [...]}",
            )
        }
    }
    let request: EmbeddingsRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            return Response::error(
                400,
                &format!("the body is not an embeddings request ({{\"input\": [...], \"model\": ...}}): {e}"),
            )
        }
    };
    let texts = request.input.texts;
    if texts.is_empty() || request.input.count > MAX_INPUTS {
        return Response::error(400, &format!("input must hold 1 to {MAX_INPUTS} texts, got {}", request.input.count));
    }
    // As OpenAI's API: a blank text has no meaning to embed.
    if let Some(blank) = texts.iter().position(|t| t.trim().is_empty()) {
        return Response::error(400, &format!("input {blank} is empty"));
    }
    if request.encoding_format.as_deref().is_some_and(|f| f != "float") {
        return Response::error(400, "only encoding_format \"float\" is supported");
    }
    // What no model's size can be is refused before a model is taken.
    if let Some(asked) = request.dimensions.as_ref().filter(|d| !is_a_size(d)) {
        return Response::error(
            400,
            &format!("dimensions must be a positive integer, not {}: leave it out", shown(&asked.to_string())),
        );
    }
    let model = &shared.target().config.embedder_model;
    if request.model.as_deref().is_some_and(|m| m != model) {
        return Response::error(
            400,
            &format!("this server embeds with {model}, not {:?}", shown(&request.model.unwrap_or_default())),
        );
    }
    let embedded = shared.models.with(|m| {
        // A client that asked for shorter vectors must not store longer ones.
        if let Some(refused) = request.dimensions.as_ref().and_then(|asked| other_dimensions(asked, m.dims())) {
            return Ok(Err(refused));
        }
        let refs: Vec<&str> = texts.iter().map(|t| within_window(t)).collect();
        let tokens: usize = refs.iter().map(|t| m.count_tokens(t).min(crate::embed::MAX_TOKENS)).sum();
        m.embed_each(&refs).map(|v| Ok((v, tokens)))
    });
    let (vectors, tokens) = match embedded {
        Ok(Ok(Ok(v))) => v,
        Ok(Ok(Err(refused))) => return Response::error(400, &refused),
        Ok(Err(e)) | Err(e) => {
            return Response::error(500, &format!("embedding failed: {}", crate::project::shown::error_line(&e)))
        }
    };
    let data: Vec<serde_json::Value> = vectors
        .into_iter()
        .enumerate()
        .map(|(i, v)| json!({ "object": "embedding", "index": i, "embedding": v.unwrap_or_default() }))
        .collect();
    Response::json(
        200,
        &json!({ "object": "list", "data": data, "model": model, "usage": { "prompt_tokens": tokens, "total_tokens": tokens } }),
    )
}

/// Bytes of a text that surely hold more than the model's window: at most
/// 100 characters of 4 bytes make one token (a longer word is one unknown
/// token). The model reads no further, and the tokenizer's work on the
/// rest of an 8 MB text cost a gigabyte and ten seconds.
const WINDOW_BYTES: usize = 128 << 10;

/// The start of `text` the model reads.
fn within_window(text: &str) -> &str {
    let mut end = WINDOW_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether `asked` could be the number of a model's dimensions.
fn is_a_size(asked: &serde_json::Value) -> bool {
    // No embedding model has a million dimensions.
    asked.as_f64().is_some_and(|n| (1.0..=1e6).contains(&n) && n.fract() == 0.0)
}

/// Why `asked` (a request's `dimensions`) is refused by a model of `dims`
/// dimensions, or None: the model's own number, as an integer or a float,
/// is the one that may be asked (vectors are never shortened).
fn other_dimensions(asked: &serde_json::Value, dims: usize) -> Option<String> {
    (asked.as_f64() != Some(dims as f64))
        .then(|| format!("this model's vectors have {dims} dimensions, not {asked}: leave dimensions out"))
}

/// Models for the embeddings route: loaded when first needed, one per
/// request at a time, up to one per core.
pub(super) struct ModelPool {
    loader: ThreadedLoader,
    idle: Mutex<Vec<Box<dyn Embedder>>>,
    loaded: AtomicUsize,
    max: usize,
    returned: Condvar,
}

impl ModelPool {
    pub(super) fn new(loader: ThreadedLoader) -> Self {
        let max = std::thread::available_parallelism().map_or(1, |n| n.get());
        ModelPool { loader, idle: Mutex::new(Vec::new()), loaded: AtomicUsize::new(0), max, returned: Condvar::new() }
    }

    /// Run `f` with a model of the pool (loading one if none is free and
    /// fewer than `max` exist, else waiting for one).
    fn with<T>(&self, f: impl FnOnce(&mut dyn Embedder) -> T) -> Result<T> {
        let mut model = {
            let mut idle = crate::live::lock(&self.idle);
            loop {
                if let Some(m) = idle.pop() {
                    break m;
                }
                if self.loaded.load(Ordering::SeqCst) < self.max {
                    self.loaded.fetch_add(1, Ordering::SeqCst);
                    drop(idle);
                    match (self.loader)(1) {
                        Ok(m) => break m,
                        Err(e) => {
                            self.loaded.fetch_sub(1, Ordering::SeqCst);
                            return Err(e);
                        }
                    }
                }
                idle = self.returned.wait(idle).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let out = f(&mut *model);
        crate::live::lock(&self.idle).push(model);
        self.returned.notify_one();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_models_own_dimensions_may_be_asked_for() {
        assert_eq!(other_dimensions(&json!(384), 384), None);
        assert_eq!(other_dimensions(&json!(384.0), 384), None, "a float of the same number");
        assert_eq!(other_dimensions(&json!(8), 8), None, "a remote model's own");
        for bad in [json!("8"), json!(0), json!(-8), json!(8.5), json!(1e30), json!(true), json!([])] {
            assert!(!is_a_size(&bad), "{bad}");
        }
        assert!(is_a_size(&json!(8)) && is_a_size(&json!(384.0)));
        for (asked, shown) in [(json!(256), "not 256"), (json!(384), "not 384"), (json!("8"), "not \"8\"")] {
            let why = other_dimensions(&asked, 8).unwrap();
            assert!(why.contains("have 8 dimensions") && why.contains(shown), "{why}");
        }
    }
}
