//! Finding the toolkit's other binaries, as git finds `git-<name>`: next to
//! the running executable first, then on PATH.

use std::path::PathBuf;

/// Path of the tool `name` (e.g. `vg-query`), or None when it is nowhere.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.to_path_buf())) {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}
