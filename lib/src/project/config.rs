//! Configuration: the spec's ResolveConfig rule. Each key comes from the
//! command line, else `<root>/.vecgrep/config.toml`, else the user's global
//! `config.toml`, else the spec's default.
//!
//! Some keys break the precedence: `open_cmd` names a command to run,
//! `embedder_source`, `embedder_url`, `llm_url` and `store_url` where the
//! code is sent, and `store_project` and `store_adopt` which shared index
//! is read, written and cleared, so a project's file may set them only
//! where the user trusts it (UntrustedConfigChoosesNoDestination).
//!
//! Config files are strict: an unknown key or a value of the wrong type is an
//! error naming the file, the key and the line, because a silently ignored
//! typo (`topk = 50`) is worse than a refusal.

use std::path::{Path, PathBuf};

use super::settings::{resolve_plain, ConfigValues, ResolvedConfig};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // Not `source`: the cause is in the message, and a chain of causes
    // would say it twice.
    #[error("cannot read config {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("config {path}, line {line}: {message}")]
    Parse { path: PathBuf, line: usize, message: String },
    #[error(
        "chunk_overlap ({overlap}, from {overlap_from}) must be smaller than chunk_size ({size}, from {size_from})"
    )]
    OverlapTooLarge { overlap: usize, overlap_from: String, size: usize, size_from: String },
}

/// Parse one config file's text. `path` is used only for messages.
pub(super) fn parse_config(text: &str, path: &Path) -> Result<ConfigValues, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let (line, message) = toml_problem(text, &e);
        ConfigError::Parse { path: path.to_path_buf(), line, message }
    })
}

/// The line of `text` a TOML error is at, and its message in one line
/// (toml's own Display draws the line with a caret, over several).
pub(crate) fn toml_problem(text: &str, e: &toml::de::Error) -> (usize, String) {
    let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
    let message = match e.message().trim() {
        // toml says nothing of a setting cut off by the end of the file.
        "" => "the file ends within a setting".to_string(),
        // Said before any key is read: named from its line (audit 213).
        m @ ("number too large to fit in target type" | "number too small to fit in target type") => {
            beyond_toml(text.lines().nth(line.saturating_sub(1)), m.contains("small"))
        }
        message => message.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    (line, message)
}

/// What a number past TOML's integers on `line` (`key = 1e30` as digits)
/// is told: `below`, past their negative end.
fn beyond_toml(line: Option<&str>, below: bool) -> String {
    let key = line.and_then(|l| l.split_once('=')).map(|(key, _)| key.trim()).filter(|k| !k.is_empty());
    let what = if below { "too small" } else { "too large" };
    let limit = "TOML's whole numbers are from -9223372036854775808 to 9223372036854775807";
    match key {
        Some(key) => format!("{} is a number {what} ({limit})", super::shown::clipped(key, 80)),
        None => format!("a number {what} ({limit})"),
    }
}

/// Whether a start with `command_line` at the root whose config file is
/// `root_config` would resolve its settings, as they are on disk now:
/// a file that parses can still fail with the other layers
/// (`chunk_overlap` not under `chunk_size`).
pub fn check_next_start(command_line: &ConfigValues, root_config: &Path) -> Result<(), ConfigError> {
    ConfigLayers::load(command_line.clone(), root_config)?.resolve().map(drop)
}

/// Read a config file; a missing file is simply no layer. A link to a
/// device or FIFO, or a file past `MAX_CONFIG_BYTES`, is an error, never
/// read (a cloned repository chooses its `.vecgrep/config.toml`).
pub(super) fn load_config(path: &Path) -> Result<Option<ConfigValues>, ConfigError> {
    match super::small_file::read_small(path, MAX_CONFIG_BYTES) {
        // A link to nothing (a dotfiles manager's, its target not checked
        // out) is a config the user meant to have, not one left out.
        Ok(None) if path.is_symlink() => Err(ConfigError::Read {
            path: path.to_path_buf(),
            error: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("it links to {}, which does not exist", std::fs::read_link(path).unwrap_or_default().display()),
            ),
        }),
        Ok(None) => Ok(None),
        Ok(Some(bytes)) => {
            let text = String::from_utf8(bytes).map_err(|e| {
                let line = super::small_file::first_line_not_utf8(e.as_bytes()).unwrap_or(1);
                ConfigError::Parse { path: path.to_path_buf(), line, message: "this line is not valid UTF-8".into() }
            })?;
            parse_config(&text, path).map(Some)
        }
        Err(error) => Err(ConfigError::Read { path: path.to_path_buf(), error: closed_directory(path, error) }),
    }
}

/// A file its directory hides (`.vecgrep` another user made, mode 0700)
/// cannot even be looked at: the error names that directory, since the
/// file may not exist at all.
fn closed_directory(path: &Path, error: std::io::Error) -> std::io::Error {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    match dir {
        Some(dir) if error.kind() == std::io::ErrorKind::PermissionDenied && std::fs::read_dir(dir).is_err() => {
            let why = format!("its directory {} is closed to you ({error})", dir.display());
            std::io::Error::new(error.kind(), why)
        }
        _ => error,
    }
}

/// Larger files are not configs anyone wrote (every setting fits in a few
/// hundred bytes).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The user's global config: `$XDG_CONFIG_HOME/vecgrep/config.toml`, else
/// `~/.config/vecgrep/config.toml`.
pub fn global_config_path() -> Option<PathBuf> {
    super::BaseDir::Config.path().map(|dir| dir.join("vecgrep/config.toml"))
}

/// Whether the project config at `path`, or the `.vecgrep` it is in, is
/// another user's in a shared directory (`planted_by`): never read as the
/// project's, as its index is never used. Read, anyone who may write to
/// `/tmp` chose the settings of a search run there, `quiet` among them,
/// which hid the note that their `.vecgrep` was passed over (audit 203).
pub fn planted_config(path: &Path) -> bool {
    let planted = |p: &Path| super::planted_by(p).is_some();
    planted(path) || path.parent().is_some_and(planted)
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
        let project = match planted_config(root_config) {
            true => None,
            false => load_config(root_config)?.map(|v| (root_config.to_path_buf(), v)),
        };
        let global = match global_config_path() {
            // The global file may be the project file when the root is $HOME's parent chain; read it once.
            Some(g) if g != root_config => load_config(&g)?.map(|v| (g, v)),
            _ => None,
        };
        Ok(ConfigLayers { cli, project, global })
    }

    /// Apply ResolveConfig: the first layer that sets a key wins, but for
    /// the keys a project's file may set only when trusted (UntrustedConfigChoosesNoDestination).
    pub fn resolve(&self) -> Result<ResolvedConfig, ConfigError> {
        let layers: Vec<&ConfigValues> =
            std::iter::once(&self.cli).chain(self.project.iter().chain(self.global.iter()).map(|(_, v)| v)).collect();
        let mut config = resolve_plain(&layers);
        config.server_default_top_k = config.top_k;
        config.server_default_threshold = config.threshold;
        config.trust_project_config = self.project_trusted();
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
        config.open_cmd = trusted(&mut untrusted, "open_cmd", self.pick_trusted(|v| v.open_cmd.clone()));
        config.embedder_url = trusted(&mut untrusted, "embedder_url", self.pick_trusted(|v| v.embedder_url.clone()));
        config.llm_url = trusted(&mut untrusted, "llm_url", self.pick_trusted(|v| v.llm_url.clone()));
        config.store_url = trusted(&mut untrusted, "store_url", self.pick_trusted(|v| v.store_url.clone()));
        config.store_project = trusted(&mut untrusted, "store_project", self.pick_trusted(|v| v.store_project.clone()));
        config.store_adopt =
            trusted(&mut untrusted, "store_adopt", self.pick_trusted(|v| v.store_adopt)).unwrap_or(false);
        if let Some(source) = trusted(&mut untrusted, "embedder_source", self.pick_trusted(|v| v.embedder_source)) {
            config.embedder_source = source;
        }
        // A repository could loosen what leaves the machine: its own
        // privacy_mode counts only when trusted.
        if let Some(mode) = trusted(&mut untrusted, "privacy_mode", self.pick_trusted(|v| v.privacy_mode)) {
            config.privacy_mode = mode;
        }
        // A project cannot trust itself; one that asks to is told so.
        if !config.trust_project_config
            && self.project.as_ref().is_some_and(|(_, v)| v.trust_project_config == Some(true))
        {
            untrusted.push("trust_project_config");
        }
        config.untrusted = (!untrusted.is_empty())
            .then(|| (self.project.as_ref().map(|(p, _)| p.clone()).unwrap_or_default(), untrusted));
        self.bound_untrusted(&mut config);
        self.check_overlap(&config)?;
        config.command_line = self.cli.clone();
        config.quiet_by_user = self.cli.quiet.or(self.global.as_ref().and_then(|(_, v)| v.quiet)).unwrap_or(false);
        config.configured_max_filesize = match self.cli.max_filesize {
            None => config.max_filesize,
            Some(_) => {
                let files = ConfigValues { max_filesize: None, ..self.cli.clone() };
                ConfigLayers { cli: files, project: self.project.clone(), global: self.global.clone() }
                    .resolve()?
                    .max_filesize
            }
        };
        Ok(config)
    }

    /// UntrustedConfigChoosesNoIndex's bounds: the settings that decide how much a run reads,
    /// cuts, embeds and stores without asking, and how much a server it
    /// starts answers one client, may be made stricter by an untrusted
    /// project's file, never looser (issue 42: a repository's
    /// `max_filesize`, `chunk_size` and `index_warn_threshold` made a 3 MB
    /// file 60,001 chunks and a 103 MB index, unasked): not looser than what
    /// the user's own layers (command line, global config, else the
    /// defaults: the spec's rule) ask, which a value held takes. A value
    /// stricter than the user's own is taken, even where the user's own is
    /// looser than the defaults: holding it to the user's would make the run
    /// larger than the project asked.
    fn bound_untrusted(&self, config: &mut ResolvedConfig) {
        let Some((path, _)) = self.project.as_ref().filter(|_| !self.project_trusted()) else { return };
        let own_layers: Vec<&ConfigValues> =
            std::iter::once(&self.cli).chain(self.global.iter().map(|(_, v)| v)).collect();
        let own = super::settings::resolve_plain(&own_layers);
        let shown = path.display().to_string();
        let mut bounded = Vec::new();
        for key in BOUNDED {
            let (asked, looser) = looseness(config, &own, key);
            if looser && self.source_of(key).as_ref() == Some(&shown) {
                bounded.push(format!("{key} = {asked}"));
                hold_to(config, &own, key);
            }
        }
        config.bounded = (!bounded.is_empty()).then(|| (path.clone(), bounded));
    }

    /// chunk_overlap must be smaller than chunk_size, whichever layers set them.
    fn check_overlap(&self, config: &ResolvedConfig) -> Result<(), ConfigError> {
        if config.chunk_overlap < config.chunk_size {
            return Ok(());
        }
        let from = |key: &str| match held_from(config, key) {
            Some(asked) => format!(
                "{}, to which the untrusted project config's {key} = {asked} was held",
                self.own_source_of(key).unwrap_or_else(|| "the default".to_string())
            ),
            None => self.source_of(key).unwrap_or_else(|| "the default".to_string()),
        };
        Err(ConfigError::OverlapTooLarge {
            overlap: config.chunk_overlap,
            overlap_from: from("chunk_overlap"),
            size: config.chunk_size,
            size_from: from("chunk_size"),
        })
    }

    /// Whether the user trusts the project's own config (UntrustedConfigChoosesNoDestination): asked
    /// of the command line and the global config only.
    fn project_trusted(&self) -> bool {
        std::iter::once(&self.cli)
            .chain(self.global.iter().map(|(_, v)| v))
            .find_map(|v| v.trust_project_config)
            .unwrap_or(false)
    }

    /// UntrustedConfigChoosesNoDestination: a repository's own config is written by whoever wrote the
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

    /// A description of the first layer that sets `key`.
    fn source_of(&self, key: &str) -> Option<String> {
        if self.cli.sets(key) {
            return Some("the command line".to_string());
        }
        self.project.iter().chain(self.global.iter()).find(|(_, v)| v.sets(key)).map(|(p, _)| p.display().to_string())
    }

    /// As `source_of`, of the user's own layers (the command line, the
    /// global config), which an untrusted project's value is held to.
    fn own_source_of(&self, key: &str) -> Option<String> {
        if self.cli.sets(key) {
            return Some("the command line".to_string());
        }
        self.global.iter().find(|(_, v)| v.sets(key)).map(|(p, _)| p.display().to_string())
    }
}

/// What the untrusted project config asked `key` to be, when it was held
/// to the user's own value (`bound_untrusted`).
fn held_from<'c>(config: &'c ResolvedConfig, key: &str) -> Option<&'c str> {
    let (_, held) = config.bounded.as_ref()?;
    held.iter().find_map(|h| h.strip_prefix(key)?.strip_prefix(" = "))
}

/// Why a repository's own config may not set `keys` (those `untrusted`
/// lists), in words for the note that says they were ignored: only the
/// reasons that apply to them.
pub fn why_untrusted(keys: &[&str]) -> String {
    let trusts_itself = keys.contains(&"trust_project_config");
    let mut chooses: Vec<&str> = Vec::new();
    for (reason, of) in [
        ("commands to run", &["open_cmd"][..]),
        ("where its code is sent", &["embedder_url", "embedder_source", "llm_url", "store_url"][..]),
        ("what may leave the machine", &["privacy_mode"][..]),
        ("which shared index it uses or writes to", &["store_project", "store_adopt"][..]),
    ] {
        if keys.iter().any(|k| of.contains(k)) {
            chooses.push(reason);
        }
    }
    let choose = match chooses.split_last() {
        None => String::new(),
        Some((last, [])) => format!("choose {last}"),
        Some((last, rest)) => format!("choose {} or {last}", rest.join(", ")),
    };
    match (trusts_itself, choose.is_empty()) {
        (true, true) => "trust itself".to_string(),
        (true, false) => format!("trust itself, nor {choose}"),
        (false, _) => choose,
    }
}

/// The settings an untrusted project may make stricter, never looser: the
/// sizes of a run, and how long a tool waits on the user's own servers (a
/// repository's `llm_timeout = 3600` held `vg-answer` an hour on a model
/// that had stopped answering).
const BOUNDED: [&str; 9] = [
    "max_filesize",
    "chunk_size",
    "chunk_overlap",
    "include_generated",
    "index_warn_threshold",
    "embed_all",
    "rate_limit",
    "embedder_timeout",
    "llm_timeout",
];

/// `config`'s value of `key`, shown, and whether it is looser than
/// `own`'s. For a count where 0 means no bound at all
/// (`index_warn_threshold`, `rate_limit`), 0 is the loosest.
fn looseness(config: &ResolvedConfig, own: &ResolvedConfig, key: &str) -> (String, bool) {
    let unbounded = |v: u64, than: u64| than != 0 && (v == 0 || v > than);
    let (c, o) = (config, own);
    match key {
        "max_filesize" => (c.max_filesize.to_string(), c.max_filesize > o.max_filesize),
        "chunk_size" => (c.chunk_size.to_string(), c.chunk_size < o.chunk_size),
        // More overlap cuts more chunks from the same text (499 of 500: twice as many).
        "chunk_overlap" => (c.chunk_overlap.to_string(), c.chunk_overlap > o.chunk_overlap),
        "include_generated" => (c.include_generated.to_string(), c.include_generated && !o.include_generated),
        "index_warn_threshold" => {
            let v = c.index_warn_threshold;
            (v.to_string(), unbounded(v, o.index_warn_threshold))
        }
        "embed_all" => (c.embed_all.to_string(), c.embed_all && !o.embed_all),
        "rate_limit" => {
            let v = c.rate_limit as u64;
            (v.to_string(), unbounded(v, o.rate_limit as u64))
        }
        "embedder_timeout" => (c.embedder_timeout.to_string(), c.embedder_timeout > o.embedder_timeout),
        "llm_timeout" => (c.llm_timeout.to_string(), c.llm_timeout > o.llm_timeout),
        _ => unreachable!("{key} is not a bounded setting"),
    }
}

/// `config`'s `key` set to what `own` holds (`BOUNDED`'s keys).
fn hold_to(config: &mut ResolvedConfig, own: &ResolvedConfig, key: &str) {
    match key {
        "max_filesize" => config.max_filesize = own.max_filesize,
        "chunk_size" => config.chunk_size = own.chunk_size,
        "chunk_overlap" => config.chunk_overlap = own.chunk_overlap,
        "include_generated" => config.include_generated = own.include_generated,
        "index_warn_threshold" => config.index_warn_threshold = own.index_warn_threshold,
        "embed_all" => config.embed_all = own.embed_all,
        "rate_limit" => config.rate_limit = own.rate_limit,
        "embedder_timeout" => config.embedder_timeout = own.embedder_timeout,
        "llm_timeout" => config.llm_timeout = own.llm_timeout,
        _ => unreachable!("{key} is not a bounded setting"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::settings::{EmbedderSource, Planner, PrivacyMode, SearchMode, Threshold};

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
        // The default is a cosine's: words alone are not held to it.
        assert_eq!((r.threshold_in(SearchMode::Hybrid).at, r.threshold_in(SearchMode::Lexical).at), (0.3, 0.0));
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
        assert_eq!(r.threshold_in(SearchMode::Lexical), Threshold::chosen(0.5), "a threshold set holds for words too");
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

    /// Audit 213: a value of the wrong type named no key and said Rust's
    /// type ("expected usize"); an enum's value given as a table was read
    /// as the variant its one key names, and a number as "wanted string or
    /// table".
    #[test]
    fn a_value_of_the_wrong_type_is_told_by_its_key_in_plain_words() {
        let said = |text: &str| parse_config(text, Path::new("c")).unwrap_err().to_string();
        for (text, told) in [
            ("top_k = -1", "line 1: top_k must be a whole number, got integer `-1`"),
            ("\ntop_k = 99999999999999999999", "line 2: top_k is a number too large (TOML's whole numbers are from"),
            ("top_k = -99999999999999999999", "line 1: top_k is a number too small (TOML's whole numbers are from"),
            ("max_filesize = -1", "line 1: max_filesize: a size cannot be negative, got -1"),
            (
                "rate_limit = 5000000000",
                "rate_limit must be a whole number from 0 to 4294967295, got integer `5000000000`",
            ),
            ("index_warn_threshold = -1", "index_warn_threshold must be a whole number, 0 or more, got integer `-1`"),
            ("quiet = 1", "quiet must be true or false, got integer `1`"),
            ("top_k = [1]", "top_k must be a whole number, got sequence"),
            ("max_filesize = true", "max_filesize must be a number of bytes, or a string of one"),
            ("mode = 1", "mode must be a string in quotes, got integer `1`"),
            ("mode = { lexical = {} }", "mode must be a string in quotes, got map"),
            ("privacy_mode = { cloud_embedding_ok = {} }", "privacy_mode must be a string in quotes, got map"),
            ("mode = \"fast\"", "mode must be one of \"semantic\", \"lexical\", \"hybrid\", got \"fast\""),
            ("planner = \"ai\"", "planner must be one of \"rules\", \"llm\", got \"ai\""),
        ] {
            assert!(said(text).ends_with(told) || said(text).contains(told), "{text}: {}", said(text));
        }
        let values = parse_config("mode = \"lexical\"\nplanner = \"llm\"\nembedder_source = \"remote\"\nprivacy_mode = \"cloud_reasoning_ok\"\n", Path::new("c")).unwrap();
        assert_eq!(values.mode, Some(SearchMode::Lexical));
        assert_eq!(values.planner, Some(Planner::Llm));
        assert_eq!(values.embedder_source, Some(EmbedderSource::Remote));
        assert_eq!(values.privacy_mode, Some(PrivacyMode::CloudReasoningOk));
        // A flag's count past TOML's integers is refused, not cut to equal another.
        let flags = ConfigValues::from_flags([("chunk_size", "18446744073709551615")]).unwrap_err();
        assert_eq!(
            flags,
            "chunk_size must be a whole number no larger than 9223372036854775807, got \"18446744073709551615\""
        );
    }

    #[test]
    fn a_byte_that_is_not_utf8_is_named_by_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, b"top_k = 1\n# caf\xe9\n").unwrap();
        let msg = load_config(&path).unwrap_err().to_string();
        assert!(msg.contains("line 2: this line is not valid UTF-8"), "{msg}");
    }

    /// An overlap too large for a chunk_size held to the user's own names
    /// where the size came from and what the project asked (it named the
    /// project's file for the user's value).
    #[test]
    fn an_overlap_over_a_held_chunk_size_names_where_the_size_came_from() {
        // A project's overlap is held too (to 100 here): the user's own is too large.
        let layers = ConfigLayers {
            project: Some(("p.toml".into(), layer("chunk_size = 150\nchunk_overlap = 300\n"))),
            global: Some(("g.toml".into(), layer("chunk_size = 200\n"))),
            cli: ConfigValues { chunk_overlap: Some(300), ..Default::default() },
        };
        let msg = layers.resolve().unwrap_err().to_string();
        assert!(msg.contains("chunk_overlap (300, from the command line)"), "{msg}");
        assert!(
            msg.contains(
                "chunk_size (200, from g.toml, to which the untrusted project config's chunk_size = 150 was held)"
            ),
            "{msg}"
        );
    }

    #[test]
    fn a_project_chooses_commands_and_servers_only_when_trusted() {
        let project = Some((
            "p.toml".into(),
            layer("open_cmd = \"evil {file}\"\nembedder_source = \"remote\"\nembedder_url = \"http://evil/\"\ntrust_project_config = true\ntop_k = 7\n"),
        ));
        let global = |text: &str| Some(("g.toml".into(), layer(text)));
        let ignored =
            Some(("p.toml".into(), vec!["open_cmd", "embedder_url", "embedder_source", "trust_project_config"]));
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

    /// A value of each setting other than its default.
    fn sample(key: &str) -> &'static str {
        match key {
            "top_k"
            | "index_warn_threshold"
            | "max_filesize"
            | "embedder_timeout"
            | "embedder_batch_size"
            | "rate_limit"
            | "llm_timeout" => "7",
            "threshold" => "0.5",
            "chunk_size" => "600",
            "chunk_overlap" => "50",
            "full_index" | "embed_all" | "quiet" | "include_generated" | "trust_project_config" | "store_adopt" => {
                "true"
            }
            "embedder_source" => "remote",
            "embedder_model" => "another-model",
            "mode" => "lexical",
            "open_cmd" => "evil {file}",
            "embedder_url" => "http://elsewhere/v1/embeddings",
            "llm_url" => "http://elsewhere/v1",
            "llm_model" => "another-chat-model",
            "store_url" => "postgres://elsewhere/vecgrep",
            "store_project" => "another-project",
            "privacy_mode" => "cloud_embedding_ok",
            "planner" => "llm",
            other => panic!("no sample for the setting {other}; add one"),
        }
    }

    /// An empty model was sent as `"model": ""`; one with a space after it
    /// named no model, and the error said no file.
    #[test]
    fn a_models_name_is_checked_where_it_is_set() {
        for text in ["llm_model = \"\"\n", "embedder_model = \"all-MiniLM-L6-v2 \"\n", "llm_model = \"a\\u001bb\"\n"] {
            let e = parse_config(text, Path::new("c.toml")).unwrap_err().to_string();
            assert!(e.contains("c.toml, line 1") && e.contains("must be a model's name"), "{e}");
        }
        assert!(parse_config("llm_model = \"qwen2.5:7b\"\n", Path::new("c.toml")).is_ok());
    }

    #[test]
    fn a_project_sets_every_setting_but_those_the_table_marks_trusted() {
        for s in crate::project::settings::SETTINGS {
            let project = ConfigValues::from_flags([(s.key, sample(s.key))]).unwrap();
            let r = ConfigLayers { project: Some(("p.toml".into(), project)), ..Default::default() }.resolve().unwrap();
            let default = serde_json::to_value(ConfigLayers::default().resolve().unwrap()).unwrap();
            let taken = serde_json::to_value(&r).unwrap()[s.key] != default[s.key];
            let passed_over = r.untrusted.as_ref().is_some_and(|(_, keys)| keys.contains(&s.key));
            match s.key {
                // The project cannot trust itself (UntrustedConfigChoosesNoDestination), and is told so.
                "trust_project_config" => assert!(!taken && passed_over),
                // A run embedding everything is larger than the default: held (UntrustedConfigChoosesNoIndex's bounds).
                "embed_all" | "include_generated" => {
                    assert!(!taken && r.bounded.as_ref().is_some_and(|(_, asked)| asked.len() == 1))
                }
                _ if s.trusted => {
                    assert!(!taken && passed_over, "{} is trusted: an untrusted project may not set it", s.key)
                }
                _ => assert!(taken && !passed_over, "{}: a project's file sets it", s.key),
            }
        }
    }

    #[test]
    fn the_note_on_ignored_keys_gives_only_the_reasons_that_apply() {
        assert_eq!(why_untrusted(&["store_url"]), "choose where its code is sent");
        assert_eq!(
            why_untrusted(&["open_cmd", "store_project"]),
            "choose commands to run or which shared index it uses or writes to"
        );
        assert_eq!(why_untrusted(&["privacy_mode"]), "choose what may leave the machine");
        assert_eq!(why_untrusted(&["trust_project_config"]), "trust itself");
        assert_eq!(
            why_untrusted(&["open_cmd", "embedder_url", "store_adopt", "trust_project_config"]),
            "trust itself, nor choose commands to run, where its code is sent or which shared index it uses or writes to"
        );
        // Every key a project may set only when trusted has its reason.
        for s in crate::project::settings::SETTINGS.iter().filter(|s| s.trusted) {
            assert!(!why_untrusted(&[s.key]).is_empty(), "{} has no reason", s.key);
        }
    }

    #[test]
    fn an_untrusted_project_may_make_run_sizes_stricter_never_looser() {
        let project = |text: &str| Some(("p.toml".into(), layer(text)));
        let loose = "max_filesize = 100000000\nchunk_size = 50\nchunk_overlap = 10\nindex_warn_threshold = 0\n";
        let r = ConfigLayers { project: project(loose), ..Default::default() }.resolve().unwrap();
        assert_eq!((r.max_filesize, r.chunk_size, r.index_warn_threshold), (1024 * 1024, 500, 1000));
        let (path, asked) = r.bounded.unwrap();
        assert_eq!((path.to_str(), asked.len()), (Some("p.toml"), 3));
        assert!(asked[0].contains("100000000"), "{asked:?}");
        let strict = "max_filesize = 1000\nchunk_size = 800\nindex_warn_threshold = 10\n";
        let r = ConfigLayers { project: project(strict), ..Default::default() }.resolve().unwrap();
        assert_eq!((r.max_filesize, r.chunk_size, r.index_warn_threshold, r.bounded), (1000, 800, 10, None));
        // Trusted, or from the user's own layers, anything in range goes.
        let cli = ConfigValues { trust_project_config: Some(true), ..Default::default() };
        let r = ConfigLayers { cli, project: project(loose), ..Default::default() }.resolve().unwrap();
        assert_eq!((r.max_filesize, r.chunk_size, r.bounded), (100_000_000, 50, None));
        let r = ConfigLayers { global: project(loose), ..Default::default() }.resolve().unwrap();
        assert_eq!((r.chunk_size, r.index_warn_threshold), (50, 0));
        // Neither a run embedding everything nor a server without its limit.
        let r = ConfigLayers { project: project("embed_all = true\nrate_limit = 0\n"), ..Default::default() };
        let r = r.resolve().unwrap();
        assert_eq!((r.embed_all, r.rate_limit, r.bounded.unwrap().1.len()), (false, 120, 2));
        let r = ConfigLayers { project: project("rate_limit = 1000\n"), ..Default::default() }.resolve().unwrap();
        assert_eq!(r.rate_limit, 120);
        let r = ConfigLayers { project: project("rate_limit = 10\n"), ..Default::default() }.resolve().unwrap();
        assert_eq!((r.rate_limit, r.bounded), (10, None));
        // Nor twice the chunks from the same text, nor the generated files read.
        let r =
            ConfigLayers { project: project("chunk_overlap = 499\ninclude_generated = true\n"), ..Default::default() };
        let r = r.resolve().unwrap();
        assert_eq!((r.chunk_overlap, r.include_generated, r.bounded.unwrap().1.len()), (100, false, 2));
        let r = ConfigLayers { project: project("chunk_overlap = 20\n"), ..Default::default() }.resolve().unwrap();
        assert_eq!((r.chunk_overlap, r.bounded), (20, None));
        // Nor an hour's wait on the user's own model or embedder.
        let r = ConfigLayers { project: project("llm_timeout = 3600\nembedder_timeout = 600\n"), ..Default::default() };
        let r = r.resolve().unwrap();
        assert_eq!((r.llm_timeout, r.embedder_timeout, r.bounded.unwrap().1.len()), (120.0, 30.0, 2));
        let r = ConfigLayers { project: project("llm_timeout = 5\nembedder_timeout = 2\n"), ..Default::default() };
        let r = r.resolve().unwrap();
        assert_eq!((r.llm_timeout, r.embedder_timeout, r.bounded), (5.0, 2.0, None));
    }

    #[test]
    fn a_setting_held_takes_what_the_users_own_layers_ask() {
        let resolve = |global: &str, project: &str| {
            let global = Some(("g.toml".into(), layer(global)));
            let project = Some(("p.toml".into(), layer(project)));
            ConfigLayers { global, project, ..Default::default() }.resolve().unwrap()
        };
        // Looser than the user's own looser choice: held to it, not the default.
        let r = resolve(
            "chunk_size = 300\nmax_filesize = 10000000\nrate_limit = 500\n",
            "chunk_size = 200\nmax_filesize = 20000000\nrate_limit = 0\n",
        );
        assert_eq!((r.chunk_size, r.max_filesize, r.rate_limit), (300, 10_000_000, 500));
        assert_eq!(r.bounded.unwrap().1.len(), 3);
        // Looser than the defaults but stricter than the user's own: taken,
        // as holding it to the user's would make the run larger than asked.
        let r = resolve(
            "chunk_size = 300\nmax_filesize = 10000000\nrate_limit = 0\n",
            "chunk_size = 400\nmax_filesize = 5000000\nrate_limit = 500\n",
        );
        assert_eq!((r.chunk_size, r.max_filesize, r.rate_limit, r.bounded), (400, 5_000_000, 500, None));
        // Within the defaults but looser than the user's own stricter choice: held too.
        let r = resolve("rate_limit = 10\nmax_filesize = 1000\n", "rate_limit = 120\nmax_filesize = 5000\n");
        assert_eq!((r.rate_limit, r.max_filesize, r.bounded.unwrap().1.len()), (10, 1000, 2));
        // The user's own value again: nothing to hold, no note.
        let r = resolve("max_filesize = 10000000\n", "max_filesize = 10000000\n");
        assert_eq!((r.max_filesize, r.bounded), (10_000_000, None));
        // Stricter than both: taken, with no note.
        let r = resolve("rate_limit = 10\n", "rate_limit = 5\nmax_filesize = 1000\n");
        assert_eq!((r.rate_limit, r.max_filesize, r.bounded), (5, 1000, None));
    }

    #[test]
    fn remote_settings_are_checked() {
        assert!(parse_config("embedder_timeout = 0\n", Path::new("c")).is_err());
        assert!(parse_config("embedder_batch_size = 0\n", Path::new("c")).is_err());
        let r = ConfigLayers::default().resolve().unwrap();
        assert_eq!((r.embedder_timeout, r.embedder_batch_size), (30.0, 32));
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
        use crate::project::settings::MAX_TOP_K;
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
