//! Every setting, declared once: its key, its type, its default, how a value
//! is checked, and whether a project's own file may set it. The table at the
//! bottom yields the layer a config file or the command line gives
//! (`ConfigValues`), the settings an invocation runs with
//! (`ResolvedConfig`), how they are resolved (`config::ConfigLayers`), and
//! the list the binaries forward flags and write help from ([`SETTINGS`]).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::urls;

/// Largest number of results a search may ask for.
pub const MAX_TOP_K: usize = 10_000;
/// Smallest chunk_size accepted: below this a chunk holds too little code to
/// mean anything to the model.
pub const MIN_CHUNK_SIZE: usize = 50;
/// The one model this version embeds with locally.
pub const DEFAULT_EMBEDDER_MODEL: &str = "all-MiniLM-L6-v2";

/// Where embeddings are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderSource {
    Local,
    Remote,
}

impl EmbedderSource {
    /// The values a config file or a flag may give.
    pub const NAMES: [&str; 2] = ["local", "remote"];
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

impl SearchMode {
    /// The values a config file, a flag or a request may give.
    pub const NAMES: [&str; 3] = ["semantic", "lexical", "hybrid"];

    /// The mode one of `NAMES` names.
    pub fn named(name: &str) -> Option<SearchMode> {
        match name {
            "semantic" => Some(SearchMode::Semantic),
            "lexical" => Some(SearchMode::Lexical),
            "hybrid" => Some(SearchMode::Hybrid),
            _ => None,
        }
    }
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

/// What may leave the machine for an answer (`vecgrep --ask`, `/v1/ask`),
/// in the order of what each allows: nothing (an `llm_url` or an embedding
/// server not on loopback is refused, with a warning, and the search still
/// answers), the question and the top results for a chat model's answer or
/// plan, or besides those the code itself for an embedding server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrivacyMode {
    #[default]
    LocalOnly,
    CloudReasoningOk,
    CloudEmbeddingOk,
}

impl PrivacyMode {
    /// The values a config file, a flag or a request may give.
    pub const NAMES: [&str; 3] = ["local_only", "cloud_reasoning_ok", "cloud_embedding_ok"];

    /// This mode, or `limit` where this one lets more leave the machine.
    pub fn no_looser_than(self, limit: PrivacyMode) -> PrivacyMode {
        let looseness = |m: PrivacyMode| match m {
            PrivacyMode::LocalOnly => 0,
            PrivacyMode::CloudReasoningOk => 1,
            PrivacyMode::CloudEmbeddingOk => 2,
        };
        if looseness(self) > looseness(limit) {
            limit
        } else {
            self
        }
    }

    /// The mode one of `NAMES` names.
    pub fn named(name: &str) -> Option<PrivacyMode> {
        match name {
            "local_only" => Some(PrivacyMode::LocalOnly),
            "cloud_reasoning_ok" => Some(PrivacyMode::CloudReasoningOk),
            "cloud_embedding_ok" => Some(PrivacyMode::CloudEmbeddingOk),
            _ => None,
        }
    }

    /// Whether a chat model off this machine may be sent the question and the top results.
    pub fn allows_remote_reasoning(self) -> bool {
        self >= PrivacyMode::CloudReasoningOk
    }

    /// Whether an embedding server off this machine may be sent the question (and, indexing, the code).
    pub fn allows_remote_embedding(self) -> bool {
        self == PrivacyMode::CloudEmbeddingOk
    }
}

impl fmt::Display for PrivacyMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PrivacyMode::LocalOnly => "local_only",
            PrivacyMode::CloudReasoningOk => "cloud_reasoning_ok",
            PrivacyMode::CloudEmbeddingOk => "cloud_embedding_ok",
        })
    }
}

/// Who turns a question into a plan (`vecgrep --ask`, `--plan`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Planner {
    /// Rules over the question's words: no model, no network, the same plan every time.
    #[default]
    Rules,
    /// The chat model at `llm_url`, its plan checked against the schema;
    /// one that fails the check, or no answer, falls back to the rules.
    Llm,
}

impl Planner {
    /// The values a config file or a flag may give.
    pub const NAMES: [&str; 2] = ["rules", "llm"];
}

impl fmt::Display for Planner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Planner::Rules => "rules",
            Planner::Llm => "llm",
        })
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

/// Validate a setting given in seconds: from `min` to an hour.
fn check_seconds(key: &str, min: f64, secs: f64) -> Result<f64, String> {
    if secs.is_finite() && (min..=3600.0).contains(&secs) {
        Ok(secs)
    } else {
        Err(format!("{key} must be from {min} to 3600 seconds, got {secs}"))
    }
}

pub(super) fn check_batch_size(n: usize) -> Result<usize, String> {
    if (1..=2048).contains(&n) {
        Ok(n)
    } else {
        Err(format!("embedder_batch_size must be from 1 to 2048, got {n}"))
    }
}

/// A number of bytes as a flag or a config file gives it: digits, or digits
/// and `K`, `M` or `G` (KiB, MiB, GiB), as ripgrep reads `--max-filesize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// `1048576`, `1024K`, `1M`; a size past what a u64 holds is no limit.
    pub fn parse(text: &str) -> Result<ByteSize, String> {
        let text = text.trim();
        let (digits, unit) = match text.char_indices().last() {
            Some((at, last)) if last.is_ascii_alphabetic() => (&text[..at], last.to_ascii_uppercase()),
            _ => (text, 'B'),
        };
        let shift = match unit {
            'B' => 0,
            'K' => 10,
            'M' => 20,
            'G' => 30,
            _ => return Err(format!("{text:?} is not a size: a number of bytes, or one with K, M or G")),
        };
        let n = digits
            .parse::<u64>()
            .map_err(|_| format!("{text:?} is not a size: a number of bytes, or one with K, M or G"))?;
        // Past u64 is no size (audit 261: `17179869184G` read as the largest).
        n.checked_mul(1 << shift)
            .map(ByteSize)
            .ok_or_else(|| format!("{text:?} is not a size: it is more bytes than can be counted"))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ByteSize, D::Error> {
        struct SizeVisitor;
        impl Visitor<'_> for SizeVisitor {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number of bytes, or a string of one with K, M or G (\"10M\")")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<ByteSize, E> {
                u64::try_from(n).map(ByteSize).map_err(|_| E::custom(format!("a size cannot be negative, got {n}")))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<ByteSize, E> {
                ByteSize::parse(text).map_err(E::custom)
            }
        }
        d.deserialize_any(SizeVisitor)
    }
}

/// What the help and the docs say of one setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: &'static str,
    /// The default as a user would write it; None when unset means "none".
    pub default: Option<&'static str>,
    /// Only a switch: set by a flag without a value.
    pub switch: bool,
    /// Where it may be set from, when not from everywhere.
    pub only: Option<&'static str>,
    /// A project's own file sets it only when the user trusts that file (UntrustedConfigChoosesNoDestination).
    pub trusted: bool,
}

impl Setting {
    /// The note a flag's help ends with: `[config: top_k; default: 10]`.
    pub fn help_note(&self) -> String {
        let mut note = format!("[config: {}", self.key);
        if let Some(only) = self.only {
            note.push_str(&format!(", {only}"));
        }
        if let Some(default) = self.default.filter(|_| !self.switch) {
            note.push_str(&format!("; default: {default}"));
        }
        note.push(']');
        note
    }
}

/// The setting named `key`, if there is one.
pub fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// A value a flag gives as text, in the form a config file would give it.
pub(super) trait FlagValue {
    fn toml(flag: &str) -> Option<toml::Value>;
}

impl FlagValue for u64 {
    /// TOML's integers stop at `i64::MAX`; a larger limit given as a flag
    /// (`--max-filesize 18446744073709551615`) means the same: no limit.
    fn toml(flag: &str) -> Option<toml::Value> {
        flag.parse::<u64>().ok().map(|n| toml::Value::Integer(n.min(i64::MAX as u64) as i64))
    }
}

impl FlagValue for ByteSize {
    fn toml(flag: &str) -> Option<toml::Value> {
        let ByteSize(n) = ByteSize::parse(flag).ok()?;
        Some(toml::Value::Integer(n.min(i64::MAX as u64) as i64))
    }
}

impl FlagValue for u32 {
    fn toml(flag: &str) -> Option<toml::Value> {
        flag.parse::<u32>().ok().map(|n| toml::Value::Integer(i64::from(n)))
    }
}

impl FlagValue for usize {
    /// A count past TOML's integers is refused, not cut to `i64::MAX`:
    /// two cut alike read as equal (audit 213: `--chunk-size` and a
    /// smaller `--chunk-overlap`, both huge, were "not smaller").
    fn toml(flag: &str) -> Option<toml::Value> {
        flag.parse::<i64>().ok().filter(|n| *n >= 0).map(toml::Value::Integer)
    }
}

impl FlagValue for f64 {
    fn toml(flag: &str) -> Option<toml::Value> {
        flag.parse::<f64>().ok().map(toml::Value::Float)
    }
}

impl FlagValue for bool {
    fn toml(flag: &str) -> Option<toml::Value> {
        flag.parse::<bool>().ok().map(toml::Value::Boolean)
    }
}

impl FlagValue for String {
    fn toml(flag: &str) -> Option<toml::Value> {
        Some(toml::Value::String(flag.to_string()))
    }
}

/// What a setting's value must be, in plain words, for a config file that
/// gives another type: serde says "expected usize" and names no key.
pub(super) trait Wanted {
    const WANTED: &'static str;
    /// As a flag gives it, which has no type to be wrong: what it may hold.
    const FLAG_WANTED: &'static str = Self::WANTED;
}

impl Wanted for usize {
    // Its range, where it has one, is the check's to say (review 215: "0
    // to 9223372036854775807" here, then "between 1 and 10000" for a 0).
    const WANTED: &'static str = "a whole number";
    const FLAG_WANTED: &'static str = "a whole number no larger than 9223372036854775807";
}

impl Wanted for u64 {
    const WANTED: &'static str = "a whole number, 0 or more";
}

impl Wanted for u32 {
    const WANTED: &'static str = "a whole number from 0 to 4294967295";
}

impl Wanted for bool {
    const WANTED: &'static str = "true or false";
}

impl Wanted for f64 {
    const WANTED: &'static str = "a number";
}

impl Wanted for String {
    const WANTED: &'static str = "a string in quotes";
}

impl Wanted for ByteSize {
    const WANTED: &'static str = "a number of bytes, or a string of one with K, M or G (\"10M\")";
}

/// Deserializes a value as `Raw`, then checks it, so that a value out of
/// range is reported at its own line, like a value of the wrong type; both
/// name the key.
struct Checked<Raw, T> {
    key: &'static str,
    check: fn(Raw) -> Result<T, String>,
}

impl<'de, Raw: Deserialize<'de> + Wanted, T> DeserializeSeed<'de> for Checked<Raw, T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        let raw = Raw::deserialize(d).map_err(|e| de::Error::custom(wrong_type(self.key, Raw::WANTED, &e)))?;
        (self.check)(raw).map_err(de::Error::custom)
    }
}

/// `key must be WANTED, got …` from serde's "invalid type: integer `1`,
/// expected a boolean" (audit 213: the key was not named, and the type
/// was Rust's, `usize`).
/// A type's own words for a value it refused (`ByteSize`'s "a size cannot
/// be negative") are kept, after the key (review 215: wrapped as a type's).
fn wrong_type(key: &str, wanted: &str, error: &impl fmt::Display) -> String {
    let message = error.to_string();
    let message = message.lines().next().unwrap_or_default();
    let got = ["invalid type: ", "invalid value: "]
        .iter()
        .find_map(|start| message.strip_prefix(start))
        .and_then(|rest| rest.split_once(", expected"))
        .map(|(got, _)| got);
    match got {
        Some(got) => format!("{key} must be {wanted}, got {got}"),
        None => format!("{key}: {}", super::shown::clipped(message, 200)),
    }
}

/// A setting that names one of `names`, given as a string alone: toml reads
/// an enum from a one-key table too, so `mode = { lexical = {} }` was
/// lexical, and `mode = 1` "wanted string or table" (audit 213).
fn one_of<T: de::DeserializeOwned>(key: &str, names: &[&str], value: String) -> Result<T, String> {
    if !names.contains(&value.as_str()) {
        let names: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        return Err(format!("{key} must be one of {}, got {:?}", names.join(", "), super::shown::clipped(&value, 80)));
    }
    T::deserialize(de::value::StrDeserializer::<de::value::Error>::new(&value)).map_err(|e| e.to_string())
}

/// A store URL names a Postgres server. The message never repeats the
/// value, which may hold a password.
fn check_store_url(url: String) -> Result<String, String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(url)
    } else {
        Err("store_url must be a postgres:// or postgresql:// URL".into())
    }
}

/// Whether `sha` is a commit id as git writes it in full: 40 (SHA-1) or 64
/// (SHA-256) lowercase hex digits; what names a revision's index directory,
/// and what a record's `sha` or `rev` must be (a stream's is printed as it
/// is, so nothing else, a terminal's escape sequence, may pass for one).
pub fn is_commit_id(sha: &str) -> bool {
    matches!(sha.len(), 40 | 64) && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The project a shared index's name `name` is a git revision of, kept as
/// `<project>@<sha>` (`store::revision_root`); None for a project's own.
pub(super) fn revision_of_project(name: &str) -> Option<&str> {
    name.rsplit_once('@').filter(|(_, sha)| is_commit_id(sha)).map(|(project, _)| project)
}

pub(super) fn check_store_project(name: String) -> Result<String, String> {
    if name.trim().is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
        return Err(format!("store_project must be 1 to 200 characters without control characters, got {name:?}"));
    }
    // `<project>@<sha>` is where a project's git revision is indexed, and
    // the project's writers are its writers: a name of that shape would
    // let a checkout make one before them.
    if revision_of_project(&name).is_some() {
        return Err(format!(
            "store_project may not end in @ and a full commit id, which names a project's git revision, got {name:?}"
        ));
    }
    Ok(name)
}

/// A model's name as an endpoint or the local embedder takes it: an empty
/// one was sent as `"model": ""`, one with a space after it named no model,
/// and neither said which file had set it.
pub(super) fn check_model_name(key: &str, name: String) -> Result<String, String> {
    if name.trim().is_empty() || name.trim() != name || name.len() > 200 || name.chars().any(char::is_control) {
        return Err(format!(
            "{key} must be a model's name, 1 to 200 characters without spaces around it or control characters, got {name:?}"
        ));
    }
    Ok(name)
}

fn unchecked<T>(value: T) -> Result<T, String> {
    Ok(value)
}

/// The table's rows become: `ConfigValues` (each key optional, strict
/// deserialization), `ResolvedConfig` (each key resolved), `SETTINGS`, and
/// `ConfigValues::pick_all`, the resolution of the plain keys.
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])*
        $key:ident: $layer:ty => $resolved:ty = $default:expr, raw $raw:ty, check $check:expr,
            shown $shown:expr, switch $switch:expr, only $only:expr, $kind:ident;
    )*) => {
        /// One layer of configuration (a file, or the command line); `None`
        /// means "not set here".
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct ConfigValues {
            $($(#[doc = $doc])* pub $key: Option<$layer>,)*
        }

        /// The effective settings of one invocation.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct ResolvedConfig {
            $($(#[doc = $doc])* pub $key: $resolved,)*
            /// What `vg-serve` uses when a request leaves out `k`.
            pub server_default_top_k: usize,
            /// What `vg-serve` uses when a request leaves out `threshold`.
            pub server_default_threshold: f32,
            /// Whether a flag or a config file set `threshold`: its default
            /// is a cosine's, which words alone are not held to
            /// (`threshold_in`).
            #[serde(skip)]
            pub threshold_set: bool,
            /// The project config and the keys of it that were passed over
            /// because the user did not trust it
            /// (UntrustedConfigChoosesNoDestination), for telling the user.
            pub untrusted: Option<(std::path::PathBuf, Vec<&'static str>)>,
            /// The project config and, for each setting of it held to its
            /// default because the user did not trust it (UntrustedConfigChoosesNoIndex's
            /// bounds), what it asked for, for telling the user.
            pub bounded: Option<(std::path::PathBuf, Vec<String>)>,
            /// The command line's own layer, so that a server can tell
            /// whether a config file edited since its start would resolve.
            #[serde(skip)]
            pub command_line: ConfigValues,
            /// `quiet` as the user's own layers (command line, global
            /// config) ask: what of an untrusted project's file was passed
            /// over is said unless the user, not that file, asks for quiet.
            #[serde(skip)]
            pub quiet_by_user: bool,
            /// `max_filesize` as the config files (or the default) set it,
            /// the command line's left out: a `--max-filesize` below it is
            /// a filter of one run's (`WalkOptions::max_filesize_given`).
            #[serde(skip)]
            pub configured_max_filesize: u64,
        }

        /// Every setting, in the order config errors list them.
        pub const SETTINGS: &[Setting] = &[
            $(Setting {
                key: stringify!($key),
                default: $shown,
                switch: $switch,
                only: $only,
                trusted: settings!(@trusted $kind),
            },)*
        ];

        const FIELDS: &[&str] = &[$(stringify!($key)),*];

        /// A key of a config file.
        #[allow(non_camel_case_types)]
        enum Key {
            $($key,)*
        }

        impl<'de> Deserialize<'de> for Key {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
                struct KeyVisitor;
                impl Visitor<'_> for KeyVisitor {
                    type Value = Key;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a setting's name")
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                        match v {
                            $(stringify!($key) => Ok(Key::$key),)*
                            other => Err(E::unknown_field(other, FIELDS)),
                        }
                    }
                }
                d.deserialize_identifier(KeyVisitor)
            }
        }

        impl<'de> Deserialize<'de> for ConfigValues {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ConfigValues, D::Error> {
                struct ValuesVisitor;
                impl<'de> Visitor<'de> for ValuesVisitor {
                    type Value = ConfigValues;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a table of settings")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ConfigValues, A::Error> {
                        let mut values = ConfigValues::default();
                        while let Some(key) = map.next_key::<Key>()? {
                            match key {
                                $(Key::$key => {
                                    let check: fn($raw) -> Result<$layer, String> = $check;
                                    values.$key = Some(map.next_value_seed(Checked { key: stringify!($key), check })?);
                                })*
                            }
                        }
                        Ok(values)
                    }
                }
                d.deserialize_struct("ConfigValues", FIELDS, ValuesVisitor)
            }
        }

        impl ConfigValues {
            /// The layer given by flags, as (key, value as typed) pairs; a key
            /// that is not a setting, or a value of the wrong form, is an error.
            pub fn from_flags<'a>(flags: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<ConfigValues, String> {
                let mut table = toml::Table::new();
                for (key, flag) in flags {
                    let value = match key {
                        $(stringify!($key) => <$raw as FlagValue>::toml(flag).ok_or_else(|| {
                            format!("{key} must be {}, got {:?}", <$raw as Wanted>::FLAG_WANTED, super::shown::clipped(flag, 80))
                        }),)*
                        other => return Err(format!("{other} is not a setting")),
                    };
                    table.insert(key.to_string(), value?);
                }
                // The checks name the key; toml would add " in `key`" after them.
                ConfigValues::deserialize(toml::Value::Table(table)).map_err(|e| e.message().to_string())
            }

            /// Whether this layer sets `key`.
            pub fn sets(&self, key: &str) -> bool {
                match key {
                    $(stringify!($key) => self.$key.is_some(),)*
                    _ => false,
                }
            }
        }

        /// Each plain key from the first layer that sets it, else its
        /// default; the `trusted` and `meta` keys are left to `config`.
        pub(super) fn resolve_plain(layers: &[&ConfigValues]) -> ResolvedConfig {
            ResolvedConfig {
                $($key: settings!(@pick $kind, layers, $key, $default),)*
                server_default_top_k: 0,
                server_default_threshold: 0.0,
                threshold_set: layers.iter().any(|l| l.threshold.is_some()),
                untrusted: None,
                bounded: None,
                command_line: ConfigValues::default(),
                quiet_by_user: false,
                configured_max_filesize: 0,
            }
        }
    };
    (@pick plain, $layers:ident, $key:ident, $default:expr) => {
        $layers.iter().find_map(|l| l.$key.clone()).map(Into::into).unwrap_or($default)
    };
    (@pick $other:ident, $layers:ident, $key:ident, $default:expr) => {
        $default
    };
    (@trusted trusted) => {
        true
    };
    (@trusted $other:ident) => {
        false
    };
}

settings! {
    /// Results per search, 1 to 10000.
    top_k: usize => usize = 10, raw usize, check check_top_k,
        shown Some("10"), switch false, only None, plain;
    /// Lowest score shown, -1 to 1. Unset, a lexical search keeps every
    /// match: the default is a cosine's.
    threshold: f32 => f32 = 0.3, raw f64, check check_threshold,
        shown Some("0.3"), switch false, only None, plain;
    /// Characters per chunk, at least 50.
    chunk_size: usize => usize = 500, raw usize, check check_chunk_size,
        shown Some("500"), switch false, only None, plain;
    /// Characters of whole lines after a chunk that it carries too.
    chunk_overlap: usize => usize = 100, raw usize, check unchecked,
        shown Some("100"), switch false, only None, plain;
    /// For the server and the picker: finish indexing before answering.
    full_index: bool => bool = false, raw bool, check unchecked,
        shown Some("false"), switch true, only None, plain;
    /// Index runs embed every chunk with the model up front, instead of
    /// giving chunks static vectors (distilled from the model) and leaving
    /// the model's vectors to the searches that need them.
    embed_all: bool => bool = false, raw bool, check unchecked,
        shown Some("false"), switch true, only None, plain;
    /// No progress or notes on stderr.
    quiet: bool => bool = false, raw bool, check unchecked,
        shown Some("false"), switch true, only None, plain;
    /// Ask before indexing more than this many new or changed files; 0 never asks.
    index_warn_threshold: u64 => u64 = 1000, raw u64, check unchecked,
        shown Some("1000"), switch false, only None, plain;
    /// Where embeddings are computed (UntrustedConfigChoosesNoDestination applies).
    embedder_source: EmbedderSource => EmbedderSource = EmbedderSource::Local, raw String, check |s| one_of("embedder_source", &EmbedderSource::NAMES, s),
        shown Some("local"), switch false, only None, trusted;
    /// The embedding model: locally all-MiniLM-L6-v2 or vecgrep-code-minilm-l6
    /// (MiniLM fine-tuned on code, `train/transformer/`); a remote server's own name.
    embedder_model: String => String = DEFAULT_EMBEDDER_MODEL.to_string(), raw String, check |s| check_model_name("embedder_model", s),
        shown Some(DEFAULT_EMBEDDER_MODEL), switch false, only None, plain;
    /// Files larger than this many bytes (or K, M, G: KiB, MiB, GiB) are
    /// skipped (and logged): generated data, bundles and dumps are rarely
    /// what a question about code is after.
    max_filesize: u64 => u64 = 1024 * 1024, raw ByteSize, check |size: ByteSize| Ok(size.0),
        shown Some("1048576"), switch false, only None, plain;
    /// Index lock files, minified bundles and generated code (`project::generated`).
    include_generated: bool => bool = false, raw bool, check unchecked,
        shown Some("false"), switch true, only None, plain;
    /// How results are ranked.
    mode: SearchMode => SearchMode = SearchMode::default(), raw String, check |s| one_of("mode", &SearchMode::NAMES, s),
        shown Some("hybrid"), switch false, only None, plain;
    /// The picker's command for opening a result (`{file}`, `{line}`,
    /// `{end_line}`; the file reaches `sh -c` as an argument, never as
    /// script text); UntrustedConfigChoosesNoDestination applies.
    open_cmd: String => Option<String> = None, raw String, check unchecked,
        shown Some("$VISUAL or $EDITOR at the line"), switch false, only None, trusted;
    /// The embedding server's endpoint (OpenAI-compatible `/v1/embeddings`)
    /// when `embedder_source = "remote"`; UntrustedConfigChoosesNoDestination applies.
    embedder_url: String => Option<String> = None, raw String, check |u| urls::check_http_url("embedder_url", u),
        shown None, switch false, only None, trusted;
    /// Seconds a request to the embedding server may take: a batch of 32
    /// chunks on a busy CPU server can take several.
    embedder_timeout: f64 => f64 = 30.0, raw f64, check |s| check_seconds("embedder_timeout", 0.1, s),
        shown Some("30"), switch false, only None, plain;
    /// Texts sent to the embedding server per request.
    embedder_batch_size: usize => usize = 32, raw usize, check check_batch_size,
        shown Some("32"), switch false, only None, plain;
    /// Let the project's own config choose commands to run and where code is
    /// sent (UntrustedConfigChoosesNoDestination); honoured only from the command line or the global
    /// config, never from the project's file.
    trust_project_config: bool => bool = false, raw bool, check unchecked,
        shown Some("false"), switch true, only Some("global config only"), meta;
    /// For the server: requests a minute from one client address before it
    /// is answered 429; 0 is no limit.
    rate_limit: u32 => u32 = 120, raw u32, check unchecked,
        shown Some("120"), switch false, only None, plain;
    /// For `--answer`: the chat model's OpenAI-compatible endpoint (its base
    /// URL, `.../v1`, or `.../v1/chat/completions`); the top results are
    /// sent there, so UntrustedConfigChoosesNoDestination applies.
    llm_url: String => Option<String> = None, raw String, check |u| urls::check_http_url("llm_url", u),
        shown None, switch false, only None, trusted;
    /// A Postgres database (with pgvector) that holds the index instead of
    /// `.vecgrep/index.db`, shared by every machine given the same URL; its
    /// address and credentials may also come from the `PG*` environment.
    /// The code's text is stored there, so UntrustedConfigChoosesNoDestination applies.
    store_url: String => Option<String> = None, raw String, check check_store_url,
        shown None, switch false, only None, trusted;
    /// The name the project's index is kept under in the shared database;
    /// give every checkout of one project the same name to share it. It
    /// chooses which index is read and written, so UntrustedConfigChoosesNoDestination applies: a
    /// cloned repository's file could otherwise name another project's.
    store_project: String => Option<String> = None, raw String, check check_store_project,
        shown Some("the root directory's name and a hash of its path"), switch false, only None, trusted;
    /// Let this checkout write to (or clear) a shared project's index that
    /// another checkout created; it is recorded as one of the project's
    /// writers from then on. UntrustedConfigChoosesNoDestination applies.
    store_adopt: bool => bool = false, raw bool, check unchecked,
        shown Some("false"), switch true, only None, trusted;
    /// For `--answer`: the chat model to ask; unset, the first one the
    /// endpoint lists.
    llm_model: String => Option<String> = None, raw String, check |s| check_model_name("llm_model", s),
        shown Some("the first model the endpoint lists"), switch false, only None, plain;
    /// For `--answer`, `--ask` and the LLM planner: seconds an answer may take in all, asking the endpoint for its models first included; the LLM planner's plan has as many of its own.
    llm_timeout: f64 => f64 = 120.0, raw f64, check |s| check_seconds("llm_timeout", 1.0, s),
        shown Some("120"), switch false, only None, plain;
    /// For `--ask`, `--answer` and `/v1/ask`: what may leave the machine.
    /// A project's own file could loosen it, so UntrustedConfigChoosesNoDestination applies.
    privacy_mode: PrivacyMode => PrivacyMode = PrivacyMode::LocalOnly, raw String, check |s| one_of("privacy_mode", &PrivacyMode::NAMES, s),
        shown Some("local_only"), switch false, only None, trusted;
    /// For `--ask` and `--plan`: who turns the question into a plan.
    planner: Planner => Planner = Planner::Rules, raw String, check |s| one_of("planner", &Planner::NAMES, s),
        shown Some("rules"), switch false, only None, plain;
}

impl ResolvedConfig {
    /// The threshold a search in `mode` is held to: the one set, else the
    /// default, but for words alone. The default (0.3) is a cosine's; BM25
    /// on 0..1 for a word found in most chunks of a small project or
    /// history is near 0 (FTS5's IDF floor), so the default would drop
    /// every match that grep finds.
    pub fn threshold_in(&self, mode: SearchMode) -> Threshold {
        if mode == SearchMode::Lexical && !self.threshold_set {
            Threshold::default_at(0.0)
        } else {
            Threshold { at: self.threshold, chosen: self.threshold_set }
        }
    }
}

/// The lowest score a search keeps, and whether someone chose it (a flag,
/// a config file, a request) or it is the default. The default, a
/// cosine's, passes a definition of the symbol a query names whatever its
/// score, as grep would find it: a method's vector can sit far from its
/// bare name (`calculateTotal` scored 0.12 by the static table inside its
/// class); and the definition of a name that a concept the query named
/// lists, which the project taught ties to the query. A chosen threshold cuts every hit
/// alike.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold {
    pub at: f32,
    pub chosen: bool,
}

impl Threshold {
    /// A threshold someone chose.
    pub fn chosen(at: f32) -> Threshold {
        Threshold { at, chosen: true }
    }

    /// The threshold a search has when no one chose one.
    pub fn default_at(at: f32) -> Threshold {
        Threshold { at, chosen: false }
    }

    /// Whether a hit scoring `score` is kept; `passes_unchosen`: it defines
    /// the symbol the query names, or a name a concept it named lists.
    pub fn keeps(self, score: f32, passes_unchosen: bool) -> bool {
        score >= self.at || (passes_unchosen && !self.chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_threshold_no_one_chose_passes_the_symbols_definition() {
        let (default, chosen) = (Threshold::default_at(0.3), Threshold::chosen(0.3));
        assert!(default.keeps(0.12, true) && !chosen.keeps(0.12, true));
        assert!(!default.keeps(0.12, false) && default.keeps(0.3, false) && chosen.keeps(0.31, true));
    }

    #[test]
    fn flags_become_the_layer_a_file_would_give() {
        let flags =
            ConfigValues::from_flags([("top_k", "5"), ("threshold", "0.5"), ("mode", "lexical"), ("quiet", "true")]);
        let v = flags.unwrap();
        assert_eq!(
            (v.top_k, v.threshold, v.mode, v.quiet),
            (Some(5), Some(0.5), Some(SearchMode::Lexical), Some(true))
        );
        assert!(v.sets("top_k") && !v.sets("chunk_size"));
        assert!(ConfigValues::from_flags([("top_k", "0")]).unwrap_err().contains("top_k must be between 1 and 10000"));
        assert!(ConfigValues::from_flags([("topk", "5")]).is_err());
        assert!(ConfigValues::from_flags([("top_k", "five")]).is_err());
    }

    #[test]
    fn every_setting_says_where_it_comes_from_in_help() {
        assert_eq!(setting("top_k").unwrap().help_note(), "[config: top_k; default: 10]");
        assert_eq!(setting("quiet").unwrap().help_note(), "[config: quiet]");
        assert_eq!(setting("embedder_url").unwrap().help_note(), "[config: embedder_url]");
        assert_eq!(
            setting("trust_project_config").unwrap().help_note(),
            "[config: trust_project_config, global config only]"
        );
    }

    #[test]
    fn the_defaults_shown_are_the_defaults() {
        let defaults = serde_json::to_value(resolve_plain(&[])).unwrap();
        for s in SETTINGS {
            let ok = match (&defaults[s.key], s.default) {
                // None resolved: the help describes what happens instead, or nothing.
                (serde_json::Value::Null, _) => true,
                (serde_json::Value::Number(n), Some(shown)) => {
                    (n.as_f64().unwrap() - shown.parse::<f64>().unwrap()).abs() < 1e-6
                }
                (serde_json::Value::Bool(b), Some(shown)) => b.to_string() == shown,
                (serde_json::Value::String(v), Some(shown)) => v == shown,
                _ => false,
            };
            assert!(ok, "{}: the default is {} but the help says {:?}", s.key, defaults[s.key], s.default);
        }
    }

    #[test]
    fn a_size_may_carry_k_m_or_g_as_ripgreps_does() {
        for (text, bytes) in
            [("1048576", 1 << 20), ("512K", 512 << 10), ("10m", 10 << 20), ("1G", 1 << 30), (" 3M ", 3 << 20)]
        {
            assert_eq!(ByteSize::parse(text), Ok(ByteSize(bytes)), "{text}");
            let flag = ConfigValues::from_flags([("max_filesize", text)]).unwrap();
            assert_eq!(flag.max_filesize, Some(bytes), "{text}");
        }
        for bad in ["", "M", "10X", "1.5M", "-1", "10MB", "1 M"] {
            assert!(ByteSize::parse(bad).is_err(), "{bad:?} taken");
        }
        // Past a u64 with a unit as without one (audit 261: the largest).
        for past in ["99999999999G", "17179869184G", "18446744073709551616"] {
            assert!(ByteSize::parse(past).unwrap_err().contains("is not a size"), "{past}");
        }
        assert_eq!(ByteSize::parse("17179869183G"), Ok(ByteSize(17179869183 << 30)));
        let file: ConfigValues = toml::from_str("max_filesize = \"10M\"").unwrap();
        assert_eq!(file.max_filesize, Some(10 << 20));
        let file: ConfigValues = toml::from_str("max_filesize = 4096").unwrap();
        assert_eq!(file.max_filesize, Some(4096));
        let negative = toml::from_str::<ConfigValues>("max_filesize = -1").unwrap_err();
        assert!(negative.message().contains("cannot be negative"), "{negative}");
        let float = toml::from_str::<ConfigValues>("max_filesize = 1.5").unwrap_err();
        assert!(float.message().contains("a number of bytes"), "{float}");
    }

    #[test]
    fn a_flag_past_what_toml_holds_means_no_limit() {
        let v = ConfigValues::from_flags([("max_filesize", "18446744073709551615")]).unwrap();
        assert_eq!(v.max_filesize, Some(i64::MAX as u64));
    }

    #[test]
    fn a_store_project_may_not_take_the_name_of_a_projects_revision() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        for taken in [format!("payments@{sha}"), format!("a@b@{sha}"), format!("@{sha}")] {
            let err = ConfigValues::from_flags([("store_project", taken.as_str())]).expect_err("refused");
            assert!(err.to_string().contains("may not end in @ and a full commit id"), "{taken}: {err}");
        }
        for fine in ["payments@v1.2", "team@host", "payments@0123456789ab", &format!("payments@{}", sha.to_uppercase())]
        {
            assert!(ConfigValues::from_flags([("store_project", fine)]).is_ok(), "{fine}");
        }
    }

    #[test]
    fn enum_names_are_what_config_files_accept() {
        for name in SearchMode::NAMES {
            let v = ConfigValues::from_flags([("mode", name)]).unwrap();
            assert_eq!(v.mode.map(|m| m.to_string()).as_deref(), Some(name));
            assert_eq!(SearchMode::named(name), v.mode);
        }
        for name in EmbedderSource::NAMES {
            let v = ConfigValues::from_flags([("embedder_source", name)]).unwrap();
            assert_eq!(v.embedder_source.map(|m| m.to_string()).as_deref(), Some(name));
        }
    }
}
