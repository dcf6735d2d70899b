//! The privacy modes (`project::PrivacyMode`) applied to a run: what is on
//! this machine (loopback), and what the mode in force lets a run send
//! elsewhere. What it refuses becomes a warning in the response, and the
//! run goes on without it: the search answers by words where the embedder
//! was refused, and without a chat model where the chat model was.

use crate::project::urls::host_of;
pub use crate::project::urls::on_loopback;
use crate::project::{EmbedderSource, PrivacyMode, ResolvedConfig};

/// What a run may use under the mode in force, and a warning for each
/// thing it may not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowed {
    /// The chat endpoint (`llm_url`) a run may ask, if any is set and allowed.
    pub chat: Option<String>,
    /// Whether the query may be embedded (the embedder is on this machine,
    /// or the mode lets it be elsewhere).
    pub embedding: bool,
    pub warnings: Vec<String>,
}

/// What `mode` lets a run with `config` use.
pub fn allowed(mode: PrivacyMode, config: &ResolvedConfig) -> Allowed {
    let mut out = Allowed { embedding: true, ..Allowed::default() };
    if let Some(url) = &config.llm_url {
        match chat_refused(mode, url) {
            None => out.chat = Some(url.clone()),
            Some(why) => out.warnings.push(why),
        }
    }
    if config.embedder_source == EmbedderSource::Remote {
        let url = config.embedder_url.as_deref().unwrap_or_default();
        if !on_loopback(url) && !mode.allows_remote_embedding() {
            out.embedding = false;
            out.warnings.push(format!(
                "privacy_mode {mode}: the embedding server at {} is not on this machine, so the question was \
                 searched by its words alone (privacy_mode cloud_embedding_ok allows it)",
                host_of(url)
            ));
        }
    }
    out
}

/// Why `mode` keeps the code and the question from the embedding server
/// `config` names, if it does: the search an answer is made from
/// (`vecgrep --answer`) is refused before anything is sent, where `--ask`
/// searches by words instead.
pub fn embedding_refused(mode: PrivacyMode, config: &ResolvedConfig) -> Option<String> {
    let url = config.embedder_url.as_deref().unwrap_or_default();
    let remote = config.embedder_source == EmbedderSource::Remote;
    (remote && !on_loopback(url) && !mode.allows_remote_embedding()).then(|| {
        format!(
            "privacy_mode {mode}: the embedding server at {} is not on this machine, so nothing was sent to it \
             (privacy_mode cloud_embedding_ok allows it)",
            host_of(url)
        )
    })
}

/// Why `mode` keeps the question and the code from the chat model at
/// `url`, if it does: everything but a model on this machine needs
/// `cloud_reasoning_ok`.
pub fn chat_refused(mode: PrivacyMode, url: &str) -> Option<String> {
    (!on_loopback(url) && !mode.allows_remote_reasoning()).then(|| {
        format!(
            "privacy_mode {mode}: the chat model at {} is not on this machine, so it was not asked \
             (privacy_mode cloud_reasoning_ok allows it)",
            host_of(url)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_this_machine_and_nothing_else() {
        for here in [
            "http://127.0.0.1:8080/v1",
            "http://localhost/v1",
            "http://LocalHost:8080/v1",
            "https://u:p@127.9.9.9/x",
            "http://[::1]:99/v1",
            "http://127.1:8080/v1",
            "http://2130706433/v1",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.0.1/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(on_loopback(here), "{here}");
        }
        for away in [
            "http://10.0.0.1/v1",
            "https://api.openai.com/v1",
            "http://127.0.0.1.evil.com/v1",
            "http://localhost.evil.com",
            // The absolute name is no entry of /etc/hosts: it is asked of DNS.
            "http://localhost.:8080/v1",
            "http://[::2]/",
            "http://128.1/",
            "http://127.256.0.0.1/",
            "http://4294967296/",
            "http://08.0.0.1/",
            "http://127.1.evil.com/",
            "http://[::ffff:10.0.0.1]/",
            "",
            "nonsense",
        ] {
            assert!(!on_loopback(away), "{away}");
        }
        assert_eq!(host_of("https://me:s3cret@api.example.com:443/v1?k=1"), "api.example.com");
    }

    fn config(llm: Option<&str>, embedder: Option<&str>) -> ResolvedConfig {
        let mut c = crate::project::ConfigLayers::default().resolve().unwrap();
        c.llm_url = llm.map(String::from);
        if let Some(url) = embedder {
            c.embedder_source = EmbedderSource::Remote;
            c.embedder_url = Some(url.into());
        }
        c
    }

    #[test]
    fn each_mode_allows_what_it_says_and_warns_of_the_rest() {
        let remote = config(Some("https://api.example.com/v1"), Some("http://gpu.example.com/v1/embeddings"));
        let local = allowed(PrivacyMode::LocalOnly, &remote);
        assert_eq!((local.chat.as_deref(), local.embedding, local.warnings.len()), (None, false, 2));
        assert!(local.warnings[0].contains("api.example.com") && local.warnings[0].contains("cloud_reasoning_ok"));
        assert!(local.warnings[1].contains("words alone"));
        let reasoning = allowed(PrivacyMode::CloudReasoningOk, &remote);
        assert_eq!((reasoning.chat.is_some(), reasoning.embedding, reasoning.warnings.len()), (true, false, 1));
        let all = allowed(PrivacyMode::CloudEmbeddingOk, &remote);
        assert_eq!((all.chat.is_some(), all.embedding, all.warnings.len()), (true, true, 0));
        let here =
            allowed(PrivacyMode::LocalOnly, &config(Some("http://127.0.0.1:9/v1"), Some("http://localhost:8/v1")));
        assert_eq!(
            (here.chat.as_deref(), here.embedding, here.warnings.len()),
            (Some("http://127.0.0.1:9/v1"), true, 0)
        );
        let none = allowed(PrivacyMode::LocalOnly, &config(None, None));
        assert_eq!(none, Allowed { embedding: true, ..Allowed::default() });
    }
}
