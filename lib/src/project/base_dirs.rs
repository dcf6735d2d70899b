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
    /// tool runs from. A relative `HOME` too (audit 261: `HOME=.` made a
    /// cloned repository's `.config/vecgrep/config.toml` the user's own
    /// trusted file, which sent its code to the server it named).
    pub fn path(self) -> Option<PathBuf> {
        let (var, under_home) = match self {
            BaseDir::Config => ("XDG_CONFIG_HOME", ".config"),
            BaseDir::Data => ("XDG_DATA_HOME", ".local/share"),
            BaseDir::Cache => ("XDG_CACHE_HOME", ".cache"),
        };
        if let Some(dir) = std::env::var_os(var).map(PathBuf::from).filter(|d| d.is_absolute()) {
            return Some(dir);
        }
        std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute()).map(|h| h.join(under_home))
    }
}

/// The variable naming the directory of the user's catalogs.
pub const CATALOG_DIR_ENV: &str = "VECGREP_CATALOG_DIR";

/// Where the user's catalogs live: `$VECGREP_CATALOG_DIR`, else
/// `$XDG_DATA_HOME/vecgrep/catalogs`, else `~/.local/share/vecgrep/catalogs`.
/// A relative `VECGREP_CATALOG_DIR` is an error, where the XDG variables'
/// are passed over as their spec asks: it names no base of the user's, and
/// read against each directory a tool ran from, a catalog added in one was
/// missing from every other (audit 251).
pub(super) fn catalogs_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(CATALOG_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from) {
        anyhow::ensure!(
            dir.is_absolute(),
            "{CATALOG_DIR_ENV} is the relative path '{}': give the catalogs' directory as an absolute path",
            dir.display()
        );
        return Ok(dir);
    }
    BaseDir::Data.path().map(|data| data.join("vecgrep/catalogs")).ok_or_else(|| {
        anyhow::anyhow!("neither XDG_DATA_HOME nor HOME is set as an absolute path, so catalogs have no home")
    })
}
