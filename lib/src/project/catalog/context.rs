//! The default context (`vg-catalog use`): the catalog searched when an
//! invocation names none, so that `--catalog` is not repeated. Kept in the
//! user's config directory beside the global config, `context.toml`.

use std::path::PathBuf;

use anyhow::{anyhow, Context as _, Result};
use serde::{Deserialize, Serialize};

use super::check_catalog_name;

/// What `vg-catalog use` set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultContext {
    pub catalog: Option<String>,
    /// The catalog's label searched by default (`--label`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `$XDG_CONFIG_HOME/vecgrep/context.toml`, else `~/.config/vecgrep/context.toml`.
pub fn context_path() -> Result<PathBuf> {
    let config = crate::project::global_config_path().ok_or_else(|| {
        anyhow!("neither XDG_CONFIG_HOME nor HOME is set as an absolute path, so there is no default context")
    })?;
    Ok(config.with_file_name("context.toml"))
}

/// A context names a catalog and a label, in a few lines.
const MAX_CONTEXT_BYTES: u64 = 64 << 10;

/// The default context; empty when none was set. A malformed file is an
/// error, never a silent empty context.
pub fn load_context() -> Result<DefaultContext> {
    let Ok(path) = context_path() else { return Ok(DefaultContext::default()) };
    // Read as a config is: a FIFO or a link to `/dev/zero` there is an
    // error, never a read that waits or fills memory.
    let text = match crate::project::small_file::read_small_text(&path, MAX_CONTEXT_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(DefaultContext::default()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let context: DefaultContext = toml::from_str(&text).map_err(|e| {
        let (line, message) = crate::project::config::toml_problem(&text, &e);
        anyhow::anyhow!("{} is malformed: line {line}: {message} (vg-catalog use --clear removes it)", path.display())
    })?;
    if let Some(name) = &context.catalog {
        check_catalog_name(name).with_context(|| format!("in {}", path.display()))?;
    }
    if let Some(label) = &context.label {
        super::check_label_name(label).with_context(|| format!("in {}", path.display()))?;
    }
    Ok(context)
}

/// Write the default context, or remove its file when it is empty.
pub fn save_context(context: &DefaultContext) -> Result<PathBuf> {
    let path = context_path()?;
    if context.catalog.is_none() {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()))
            }
            _ => return Ok(path),
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = format!(
        "# vecgrep's default context, set by `vg-catalog use` (cleared by `vg-catalog use --clear`).\n{}",
        toml::to_string(context).context("writing the context")?
    );
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
