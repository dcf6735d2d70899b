//! The user's base directories for config, data and cache, as the XDG Base
//! Directory spec defines them, in one place for every tool.

use std::path::PathBuf;

/// Which of the user's base directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseDir {
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    Config,
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    Data,
    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    Cache,
}

impl BaseDir {
    /// The directory; None without it or a home to put it under. A
    /// variable that is empty or a relative path is ignored, as the spec
    /// asks: a relative one would mean another place in each directory a
    /// tool runs from.
    pub fn path(self) -> Option<PathBuf> {
        let (var, under_home) = match self {
            BaseDir::Config => ("XDG_CONFIG_HOME", ".config"),
            BaseDir::Data => ("XDG_DATA_HOME", ".local/share"),
            BaseDir::Cache => ("XDG_CACHE_HOME", ".cache"),
        };
        if let Some(dir) = std::env::var_os(var).map(PathBuf::from).filter(|d| d.is_absolute()) {
            return Some(dir);
        }
        std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(under_home))
    }
}

/// The variable naming the directory of the user's catalogs.
pub const CATALOG_DIR_ENV: &str = "VECGREP_CATALOG_DIR";

/// Where the user's catalogs live, as given: `$VECGREP_CATALOG_DIR`, else
/// `$XDG_DATA_HOME/vecgrep/catalogs`, else `~/.local/share/vecgrep/catalogs`;
/// None without any of them.
pub(super) fn catalogs_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CATALOG_DIR_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    BaseDir::Data.path().map(|data| data.join("vecgrep/catalogs"))
}
