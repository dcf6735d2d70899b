//! Finding the toolkit's other binaries, as git finds `git-<name>`: next to
//! the running executable first, then on PATH.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Path of the tool `name` (e.g. `vg-query`), or None when it is nowhere.
/// On PATH, as a shell looks: the first executable file, in directories
/// named absolutely (a relative entry would depend on where one stands).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.to_path_buf())) {
        let candidate = dir.join(name);
        if is_executable(&candidate) {
            return Some(candidate);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).filter(|d| d.is_absolute()).map(|d| d.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_executable_file_is_a_tool() {
        let dir = tempfile::tempdir().unwrap();
        let (plain, runnable) = (dir.path().join("plain"), dir.path().join("runnable"));
        std::fs::write(&plain, "x").unwrap();
        std::fs::write(&runnable, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&runnable, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!is_executable(&plain) && is_executable(&runnable) && !is_executable(dir.path()));
    }
}
