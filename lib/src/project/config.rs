//! Configuration: the spec's ResolveConfig rule. Each key comes from the
//! command line, else `<root>/.vecgrep/config.toml`, else the user's global
//! `config.toml`, else the spec's default.
//!
//! Three keys break the precedence: `open_cmd` names a command to run and
//! `embedder_source`/`embedder_url` where the code is sent, so a project's
//! file may set them only where the user trusts it (TrustRule).
//!
//! Config files are strict: an unknown key or a value of the wrong type is an
//! error naming the file, the key and the line, because a silently ignored
//! typo (`topk = 50`) is worse than a refusal.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

pub const DEFAULT_TOP_K: usize = 10;
pub const DEFAULT_THRESHOLD: f32 = 0.3;
pub const DEFAULT_CHUNK_SIZE: usize = 500;
pub const DEFAULT_CHUNK_OVERLAP: usize = 100;
pub const DEFAULT_INDEX_WARN_THRESHOLD: u64 = 1000;
pub const DEFAULT_EMBEDDER_MODEL: &str = "all-MiniLM-L6-v2";
/// Files larger than this are skipped (and logged): generated data, bundles
/// and dumps are rarely what a question about code is after.
pub const DEFAULT_MAX_FILESIZE: u64 = 1024 * 1024;
/// A remote embedding request's time limit, in seconds: a batch of 32 chunks
/// on a busy CPU server can take several.
pub const DEFAULT_EMBEDDER_TIMEOUT: f64 = 30.0;
pub const DEFAULT_EMBEDDER_BATCH_SIZE: usize = 32;

/// Smallest chunk_size accepted: below this a chunk holds too little code to
/// mean anything to the model.
pub const MIN_CHUNK_SIZE: usize = 50;
pub const MAX_TOP_K: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderSource {
    Local,
    Remote,
}

impl fmt::Display for EmbedderSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EmbedderSource::Local => "local",
            EmbedderSource::Remote => "remote",
        })
    }
}

/// How results are ranked: by meaning, by words, or both fused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Semantic,
    Lexical,
    #[default]
    Hybrid,
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SearchMode::Semantic => "semantic",
            SearchMode::Lexical => "lexical",
            SearchMode::Hybrid => "hybrid",
        })
    }
}

/// One layer of configuration; `None` means "not set here".
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigValues {
    #[serde(default, deserialize_with = "top_k_value")]
    pub top_k: Option<usize>,
    #[serde(default, deserialize_with = "threshold_value")]
    pub threshold: Option<f32>,
    #[serde(default, deserialize_with = "chunk_size_value")]
    pub chunk_size: Option<usize>,
    #[serde(default)]
    pub chunk_overlap: Option<usize>,
    #[serde(default)]
    pub full_index: Option<bool>,
    #[serde(default)]
    pub quiet: Option<bool>,
    #[serde(default)]
    pub index_warn_threshold: Option<u64>,
    #[serde(default)]
    pub embedder_source: Option<EmbedderSource>,
    #[serde(default)]
    pub embedder_model: Option<String>,
    #[serde(default)]
    pub max_filesize: Option<u64>,
    /// Index lock files, minified bundles and generated code (`generated`).
    #[serde(default)]
    pub include_generated: Option<bool>,
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// The picker's command for opening a result (`{file}`, `{line}`, `{end_line}`).
    #[serde(default)]
    pub open_cmd: Option<String>,
    /// The embedding server's endpoint (OpenAI-compatible `/v1/embeddings`)
    /// when `embedder_source = "remote"`.
    #[serde(default)]
    pub embedder_url: Option<String>,
    /// Seconds a request to the embedding server may take.
    #[serde(default, deserialize_with = "timeout_value")]
    pub embedder_timeout: Option<f64>,
    /// Texts sent to the embedding server per request.
    #[serde(default, deserialize_with = "batch_size_value")]
    pub embedder_batch_size: Option<usize>,
    /// Let the project's own config choose commands to run and where code is
    /// sent (TrustRule); honoured only from the command line or the global
    /// config, never from the project's file.
    #[serde(default)]
    pub trust_project_config: Option<bool>,
}

fn top_k_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let v = Option::<usize>::deserialize(d)?;
    match v {
        Some(k) => check_top_k(k).map(Some).map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

fn threshold_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    let v = Option::<f64>::deserialize(d)?;
    match v {
        Some(t) => check_threshold(t).map(Some).map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

fn timeout_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = f64::deserialize(d)?;
    check_timeout(v).map(Some).map_err(serde::de::Error::custom)
}

fn batch_size_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let v = usize::deserialize(d)?;
    check_batch_size(v).map(Some).map_err(serde::de::Error::custom)
}

pub fn check_timeout(secs: f64) -> Result<f64, String> {
    if secs.is_finite() && (0.1..=3600.0).contains(&secs) {
        Ok(secs)
    } else {
        Err(format!("embedder_timeout must be from 0.1 to 3600 seconds, got {secs}"))
    }
}

pub fn check_batch_size(n: usize) -> Result<usize, String> {
    if (1..=2048).contains(&n) {
        Ok(n)
    } else {
        Err(format!("embedder_batch_size must be from 1 to 2048, got {n}"))
    }
}

fn chunk_size_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let v = Option::<usize>::deserialize(d)?;
    match v {
        Some(n) => check_chunk_size(n).map(Some).map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

/// Validate a result count; shared by config files, flags and HTTP parameters.
pub fn check_top_k(k: usize) -> Result<usize, String> {
    if (1..=MAX_TOP_K).contains(&k) {
        Ok(k)
    } else {
        Err(format!("top_k must be between 1 and {MAX_TOP_K}, got {k}"))
    }
}

/// Validate a score threshold; scores are cosine similarities in [-1, 1].
pub fn check_threshold(t: f64) -> Result<f32, String> {
    if t.is_finite() && (-1.0..=1.0).contains(&t) {
        Ok(t as f32)
    } else {
        Err(format!("threshold must be a number between -1 and 1, got {t}"))
    }
}

pub fn check_chunk_size(n: usize) -> Result<usize, String> {
    if n >= MIN_CHUNK_SIZE {
        Ok(n)
    } else {
        Err(format!("chunk_size must be at least {MIN_CHUNK_SIZE} characters, got {n}"))
    }
}

/// Where a layer came from, for error messages.
#[derive(Clone, Debug)]
pub enum ConfigSource {
    CommandLine,
    File(PathBuf),
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::CommandLine => f.write_str("the command line"),
            ConfigSource::File(p) => write!(f, "{}", p.display()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("config {path}, line {line}: {message}")]
    Parse { path: PathBuf, line: usize, message: String },
    #[error(
        "chunk_overlap ({overlap}, from {overlap_from}) must be smaller than chunk_size ({size}, from {size_from})"
    )]
    OverlapTooLarge { overlap: usize, overlap_from: String, size: usize, size_from: String },
}

/// Parse one config file's text. `path` is used only for messages.
pub fn parse_config(text: &str, path: &Path) -> Result<ConfigValues, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        ConfigError::Parse { path: path.to_path_buf(), line, message: e.message().trim().to_string() }
    })
}

/// Read a config file; a missing file is simply no layer.
pub fn load_config(path: &Path) -> Result<Option<ConfigValues>, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| ConfigError::Parse {
                path: path.to_path_buf(),
                line: 1,
                message: "file is not valid UTF-8".into(),
            })?;
            parse_config(&text, path).map(Some)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_path_buf(), source }),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The user's global config: `$XDG_CONFIG_HOME/vecgrep/config.toml`, else
/// `~/.config/vecgrep/config.toml`.
pub fn global_config_path() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x).join("vecgrep/config.toml"));
    }
    std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config/vecgrep/config.toml"))
}

/// The effective settings of one invocation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedConfig {
    pub top_k: usize,
    pub threshold: f32,
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    pub full_index: bool,
    pub quiet: bool,
    pub index_warn_threshold: u64,
    pub embedder_source: EmbedderSource,
    pub embedder_model: String,
    pub max_filesize: u64,
    pub include_generated: bool,
    pub mode: SearchMode,
    /// What `vg-serve` uses when a request leaves out `k`.
    pub server_default_top_k: usize,
    /// What `vg-serve` uses when a request leaves out `threshold`.
    pub server_default_threshold: f32,
    /// The command that opens a picked result (TrustRule applies).
    pub open_cmd: Option<String>,
    /// The embedding server, for `embedder_source = "remote"` (TrustRule applies).
    pub embedder_url: Option<String>,
    pub embedder_timeout: f64,
    pub embedder_batch_size: usize,
    /// The project config and the keys of it that were passed over because
    /// the user did not trust it (TrustRule), for telling the user.
    pub untrusted: Option<(PathBuf, Vec<&'static str>)>,
}

/// The three layers, most specific first.
#[derive(Clone, Debug, Default)]
pub struct ConfigLayers {
    pub cli: ConfigValues,
    pub project: Option<(PathBuf, ConfigValues)>,
    pub global: Option<(PathBuf, ConfigValues)>,
}

impl ConfigLayers {
    /// Load the project and global files for `root_config` around `cli`.
    pub fn load(cli: ConfigValues, root_config: &Path) -> Result<Self, ConfigError> {
        let project = load_config(root_config)?.map(|v| (root_config.to_path_buf(), v));
        let global = match global_config_path() {
            // The global file may be the project file when the root is $HOME's parent chain; read it once.
            Some(g) if g != root_config => load_config(&g)?.map(|v| (g, v)),
            _ => None,
        };
        Ok(ConfigLayers { cli, project, global })
    }

    /// Apply ResolveConfig: the first layer that sets a key wins.
    pub fn resolve(&self) -> Result<ResolvedConfig, ConfigError> {
        macro_rules! pick {
            ($field:ident, $default:expr) => {
                self.pick(|v| v.$field.clone()).map(|(v, _)| v).unwrap_or($default)
            };
        }
        let top_k = pick!(top_k, DEFAULT_TOP_K);
        let threshold = pick!(threshold, DEFAULT_THRESHOLD);
        let (chunk_size, size_from) =
            self.pick(|v| v.chunk_size).unwrap_or((DEFAULT_CHUNK_SIZE, "the default".to_string()));
        let (chunk_overlap, overlap_from) =
            self.pick(|v| v.chunk_overlap).unwrap_or((DEFAULT_CHUNK_OVERLAP, "the default".to_string()));
        let mut untrusted = Vec::new();
        fn trusted<T>(
            untrusted: &mut Vec<&'static str>,
            key: &'static str,
            (value, passed_over): (Option<T>, bool),
        ) -> Option<T> {
            if passed_over {
                untrusted.push(key);
            }
            value
        }
        let open_cmd = trusted(&mut untrusted, "open_cmd", self.pick_trusted(|v| v.open_cmd.clone()));
        let embedder_url = trusted(&mut untrusted, "embedder_url", self.pick_trusted(|v| v.embedder_url.clone()));
        let embedder_source = trusted(&mut untrusted, "embedder_source", self.pick_trusted(|v| v.embedder_source))
            .unwrap_or(EmbedderSource::Local);
        let untrusted = (!untrusted.is_empty())
            .then(|| (self.project.as_ref().map(|(p, _)| p.clone()).unwrap_or_default(), untrusted));
        if chunk_overlap >= chunk_size {
            return Err(ConfigError::OverlapTooLarge {
                overlap: chunk_overlap,
                overlap_from,
                size: chunk_size,
                size_from,
            });
        }
        Ok(ResolvedConfig {
            top_k,
            threshold,
            chunk_size,
            chunk_overlap,
            full_index: pick!(full_index, false),
            quiet: pick!(quiet, false),
            index_warn_threshold: pick!(index_warn_threshold, DEFAULT_INDEX_WARN_THRESHOLD),
            embedder_source,
            embedder_model: pick!(embedder_model, DEFAULT_EMBEDDER_MODEL.to_string()),
            max_filesize: pick!(max_filesize, DEFAULT_MAX_FILESIZE),
            include_generated: pick!(include_generated, false),
            mode: pick!(mode, SearchMode::default()),
            server_default_top_k: top_k,
            server_default_threshold: threshold,
            open_cmd,
            embedder_url,
            embedder_timeout: pick!(embedder_timeout, DEFAULT_EMBEDDER_TIMEOUT),
            embedder_batch_size: pick!(embedder_batch_size, DEFAULT_EMBEDDER_BATCH_SIZE),
            untrusted,
        })
    }

    /// Whether the user trusts the project's own config (TrustRule): asked
    /// of the command line and the global config only.
    fn project_trusted(&self) -> bool {
        std::iter::once(&self.cli)
            .chain(self.global.iter().map(|(_, v)| v))
            .find_map(|v| v.trust_project_config)
            .unwrap_or(false)
    }

    /// TrustRule: a repository's own config is written by whoever wrote the
    /// repository, so the keys that choose a command to run (`open_cmd`) or
    /// where the code is sent (`embedder_source`, `embedder_url`) are taken
    /// from it only when the user trusts it. Otherwise the command line,
    /// then the global config. The flag says a project value was passed over.
    fn pick_trusted<T>(&self, get: impl Fn(&ConfigValues) -> Option<T>) -> (Option<T>, bool) {
        if let Some(v) = get(&self.cli) {
            return (Some(v), false);
        }
        let global = || self.global.as_ref().and_then(|(_, v)| get(v));
        match self.project.as_ref().and_then(|(_, v)| get(v)) {
            Some(v) if self.project_trusted() => (Some(v), false),
            Some(_) => (global(), true),
            None => (global(), false),
        }
    }

    /// The first layer that sets a value, with a description of that layer.
    fn pick<T>(&self, get: impl Fn(&ConfigValues) -> Option<T>) -> Option<(T, String)> {
        if let Some(v) = get(&self.cli) {
            return Some((v, ConfigSource::CommandLine.to_string()));
        }
        for (path, values) in self.project.iter().chain(self.global.iter()) {
            if let Some(v) = get(values) {
                return Some((v, path.display().to_string()));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(text: &str) -> ConfigValues {
        parse_config(text, Path::new("c.toml")).unwrap()
    }

    #[test]
    fn defaults_match_the_spec() {
        let r = ConfigLayers::default().resolve().unwrap();
        assert_eq!(r.top_k, 10);
        assert_eq!(r.threshold, 0.3);
        assert_eq!(r.chunk_size, 500);
        assert_eq!(r.chunk_overlap, 100);
        assert!(!r.full_index && !r.quiet);
        assert_eq!(r.index_warn_threshold, 1000);
        assert_eq!(r.embedder_source, EmbedderSource::Local);
        assert_eq!(r.embedder_model, "all-MiniLM-L6-v2");
        assert_eq!((r.server_default_top_k, r.server_default_threshold), (10, 0.3));
    }

    #[test]
    fn cli_beats_project_beats_global() {
        let layers = ConfigLayers {
            cli: ConfigValues { top_k: Some(3), ..Default::default() },
            project: Some(("p".into(), layer("top_k = 4\nthreshold = 0.5\n"))),
            global: Some(("g".into(), layer("top_k = 5\nthreshold = 0.6\nquiet = true\n"))),
        };
        let r = layers.resolve().unwrap();
        assert_eq!((r.top_k, r.threshold, r.quiet), (3, 0.5, true));
        assert_eq!(r.server_default_top_k, 3);
    }

    #[test]
    fn unknown_key_names_file_key_and_line() {
        let err = parse_config("top_k = 3\n\ntopk = 5\n", Path::new("/x/config.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("/x/config.toml"), "{msg}");
        assert!(msg.contains("line 3"), "{msg}");
        assert!(msg.contains("topk"), "{msg}");
    }

    #[test]
    fn wrong_type_and_range_are_rejected_with_line() {
        let msg = parse_config("quiet = \"yes\"\n", Path::new("c")).unwrap_err().to_string();
        assert!(msg.contains("line 1"), "{msg}");
        let msg = parse_config("\nthreshold = 7\n", Path::new("c")).unwrap_err().to_string();
        assert!(msg.contains("line 2") && msg.contains("threshold"), "{msg}");
        let msg = parse_config("top_k = 0\n", Path::new("c")).unwrap_err().to_string();
        assert!(msg.contains("top_k"), "{msg}");
    }

    #[test]
    fn a_project_chooses_commands_and_servers_only_when_trusted() {
        let project = Some((
            "p.toml".into(),
            layer("open_cmd = \"evil {file}\"\nembedder_source = \"remote\"\nembedder_url = \"http://evil/\"\ntrust_project_config = true\ntop_k = 7\n"),
        ));
        let global = |text: &str| Some(("g.toml".into(), layer(text)));
        let ignored = Some(("p.toml".into(), vec!["open_cmd", "embedder_url", "embedder_source"]));
        // The project cannot trust itself; its other settings still apply.
        let r = ConfigLayers { project: project.clone(), ..Default::default() }.resolve().unwrap();
        assert_eq!(
            (r.open_cmd.as_deref(), r.embedder_url.as_deref(), r.embedder_source),
            (None, None, EmbedderSource::Local)
        );
        assert_eq!((r.untrusted.clone(), r.top_k), (ignored.clone(), 7));
        // The user's own settings are used instead, and the project's are still reported.
        let r = ConfigLayers {
            project: project.clone(),
            global: global("open_cmd = \"vi {file}\"\n"),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        assert_eq!((r.open_cmd.as_deref(), r.untrusted), (Some("vi {file}"), ignored));
        // Trusted in the global config, or on the command line.
        let r = ConfigLayers {
            project: project.clone(),
            global: global("trust_project_config = true\n"),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(
            (r.open_cmd.as_deref(), r.embedder_url.as_deref(), r.untrusted),
            (Some("evil {file}"), Some("http://evil/"), None)
        );
        assert_eq!(r.embedder_source, EmbedderSource::Remote);
        let cli = ConfigValues { trust_project_config: Some(true), ..Default::default() };
        let r = ConfigLayers { cli, project: project.clone(), ..Default::default() }.resolve().unwrap();
        assert_eq!(r.open_cmd.as_deref(), Some("evil {file}"));
        // The command line always wins.
        let cli = ConfigValues { open_cmd: Some("code -g {file}:{line}".into()), ..Default::default() };
        let r = ConfigLayers { cli, project, ..Default::default() }.resolve().unwrap();
        assert_eq!(r.open_cmd.as_deref(), Some("code -g {file}:{line}"));
    }

    #[test]
    fn remote_settings_are_checked() {
        assert!(parse_config("embedder_timeout = 0\n", Path::new("c")).is_err());
        assert!(parse_config("embedder_batch_size = 0\n", Path::new("c")).is_err());
        let r = ConfigLayers::default().resolve().unwrap();
        assert_eq!(
            (r.embedder_timeout, r.embedder_batch_size),
            (DEFAULT_EMBEDDER_TIMEOUT, DEFAULT_EMBEDDER_BATCH_SIZE)
        );
    }

    #[test]
    fn overlap_must_be_smaller_than_size() {
        let layers =
            ConfigLayers { cli: ConfigValues { chunk_size: Some(100), ..Default::default() }, ..Default::default() };
        let msg = layers.resolve().unwrap_err().to_string();
        assert!(msg.contains("chunk_overlap") && msg.contains("command line"), "{msg}");
    }

    mod fuzz {
        //! Property tests for the config parser: any text is settings or an
        //! error naming the file and a line that exists.
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_text_is_settings_or_an_error_with_a_real_line(text in "(\\PC{0,40}\n){0,12}") {
                if let Err(e) = parse_config(&text, Path::new("/p/config.toml")) {
                    let msg = e.to_string();
                    prop_assert!(msg.contains("/p/config.toml"), "{msg}");
                    if let ConfigError::Parse { line, .. } = e {
                        prop_assert!(line >= 1 && line <= text.lines().count().max(1) + 1, "line {line} of {text:?}");
                    }
                }
            }

            #[test]
            fn settings_in_range_are_taken_and_out_of_range_refused(k in 0usize..20_000, t in -3.0f64..3.0) {
                let parsed = parse_config(&format!("top_k = {k}\nthreshold = {t}\n"), Path::new("c"));
                let valid = (1..=MAX_TOP_K).contains(&k) && (-1.0..=1.0).contains(&t);
                prop_assert_eq!(parsed.is_ok(), valid, "k={} t={}", k, t);
            }
        }
    }
}
