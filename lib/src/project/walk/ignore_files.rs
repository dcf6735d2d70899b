//! The ignore files a walk reads, checked before it begins: one that
//! cannot be read, is no regular file or is not UTF-8 is an error naming
//! it, as a rule silently dropped would index what it leaves out.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use super::{display_rel, git_work_tree_top, IGNORE_FILE_NAME};
use crate::project::root::{AdmittedPath, ProjectRoot};
use crate::project::small_file;

/// The ignore files of the walked paths' directories and every one above
/// them, which the walker reads before it yields anything, up to `/`. One
/// whose rules apply that it could read only in part (not a regular file,
/// not UTF-8) is an error. Above the top of the root's git work tree git's
/// own files do not apply, but `.ignore` and `.vecgrepignore` do, to `/`:
/// git's there are judged only by what would have the walker read without
/// end or wait (a link to `/dev/zero` a repository commits above a
/// subproject's `.vecgrep`, a FIFO), their lines unjudged.
pub(super) fn check_ignore_files_above(root: &ProjectRoot, paths: &[AdmittedPath]) -> Result<()> {
    let applies_from = git_work_tree_top(root).unwrap_or(Path::new("/"));
    for path in paths {
        for dir in path.abs.ancestors().filter(|d| d.is_dir()) {
            // A PATH closed to the user hides its ignore files: the
            // directory is what to name (review 215: a PATH of mode r--
            // named a .gitignore not there). Not a directory above it, which
            // need only be passed through (review 216: --x refused a PATH in it).
            if dir == path.abs {
                if let Err(e) = super::may_enter(dir) {
                    return Err(anyhow!("{}: {e}", crate::project::shown::rel_or_dot(&display_rel(&root.path, dir))));
                }
            }
            let gits_apply = dir.starts_with(applies_from);
            let unreadable = ignore_files_of(dir).find_map(|file| {
                let judged_whole = gits_apply || !is_gits_own(dir, &file);
                if judged_whole { unreadable(&file) } else { irregular(&file) }.map(|e| (file, e))
            });
            if let Some((file, e)) = unreadable {
                return Err(anyhow!("ignore file {}: {e}", display_rel(&root.path, &file)));
            }
        }
    }
    Ok(())
}

/// The ignore files the walker reads for `dir`: its own, and its
/// repository's exclude file, which a linked worktree's `.git` file leads
/// to (the main repository's, through `commondir`, as the walker finds it).
fn ignore_files_of(dir: &Path) -> impl Iterator<Item = PathBuf> {
    let own = [".gitignore", ".ignore", IGNORE_FILE_NAME].map(|name| dir.join(name));
    own.into_iter().chain(git_exclude_file(dir))
}

/// Whether `file`, one of `dir`'s ignore files, is git's (its
/// `.gitignore` or its repository's exclude file).
fn is_gits_own(dir: &Path, file: &Path) -> bool {
    file != dir.join(".ignore") && file != dir.join(IGNORE_FILE_NAME)
}

/// `dir`'s repository's `info/exclude`: in `.git`, or for a linked worktree
/// (whose `.git` is a file naming its git directory) in the directory its
/// `commondir` names. A submodule's git directory has no `commondir`, and
/// the walker reads no exclude file for it.
/// A `.git` file or a `commondir` that is no regular file (a FIFO the
/// walker would wait on for ever) is itself what is returned, for
/// `unreadable` to refuse. A relative `gitdir:` is read from the `.git`
/// file's directory, as git reads it.
fn git_exclude_file(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    let meta = std::fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.join("info/exclude"));
    }
    let first_line = |file: &Path| match small_file::read_small(file, 64 << 10) {
        Ok(Some(text)) => Ok(String::from_utf8_lossy(&text).lines().next().map(str::to_string)),
        Ok(None) => Ok(None),
        Err(_) => Err(file.to_path_buf()),
    };
    let line = match first_line(&dot_git) {
        Ok(line) => line?,
        Err(irregular) => return Some(irregular),
    };
    let git_dir = dir.join(line.strip_prefix("gitdir: ")?);
    let common = match first_line(&git_dir.join("commondir")) {
        Ok(common) => common?,
        Err(irregular) => return Some(irregular),
    };
    let common = if common.starts_with('.') { git_dir.join(common) } else { PathBuf::from(common) };
    Some(common.join("info/exclude"))
}

/// Why an ignore file the walker would read without end or wait on (a
/// device, a FIFO), or one too large, is an error, judged by its metadata
/// alone.
fn irregular(file: &Path) -> Option<std::io::Error> {
    let meta = std::fs::metadata(file).ok()?;
    // A directory is passed over unread, by the walker too.
    let why = if meta.is_dir() {
        return None;
    } else if !meta.is_file() {
        "not a regular file"
    } else if meta.len() > MAX_IGNORE_FILE_BYTES {
        "larger than any ignore file a person writes"
    } else {
        return None;
    };
    Some(std::io::Error::new(std::io::ErrorKind::InvalidInput, why))
}

/// git's global ignore file (`core.excludesFile`, else
/// `$XDG_CONFIG_HOME/git/ignore`), which the walker applies everywhere:
/// one it would read only in part (a line that is not UTF-8, a file closed
/// to the user) is an error, as an ignore file of the walked paths is. The
/// walker reads none that is not a regular file, nor does this.
pub(super) fn check_global_git_ignore() -> Result<()> {
    let Some(file) = ignore::gitignore::gitconfig_excludes_path() else { return Ok(()) };
    let why = match small_file::read_small(&file, MAX_IGNORE_FILE_BYTES) {
        Ok(Some(text)) => match small_file::first_line_not_utf8(&text) {
            Some(line) => not_utf8_at(line),
            None => return Ok(()),
        },
        Ok(None) => return Ok(()),
        // A directory or a FIFO there, which the walker passes over too.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return Ok(()),
        Err(e) => e,
    };
    Err(anyhow!(
        "git's global ignore file {}: {why} (fix it, or walk without ignore files: --no-ignore)",
        file.display()
    ))
}

/// An ignore file in `dir` that is there but cannot be read, and why: not
/// a regular file (the walker would read `/dev/zero` without end, or block
/// on a FIFO), or closed to this user, whom the walker would let into every
/// file it ignores without a word (a secret a remote embedder then sees).
/// A line that is not UTF-8 counts too: the walker stops reading the file
/// there and passes over every rule after it without a word.
pub(super) fn unreadable_ignore_file(dir: &Path) -> Option<(PathBuf, std::io::Error)> {
    ignore_files_of(dir).find_map(|file| unreadable(&file).map(|e| (file, e)))
}

/// Why the walker would read `file`, an ignore file, only in part, if it would.
pub(super) fn unreadable(file: &Path) -> Option<std::io::Error> {
    match small_file::read_small(file, MAX_IGNORE_FILE_BYTES) {
        Ok(Some(text)) => small_file::first_line_not_utf8(&text).map(not_utf8_at),
        Ok(None) => None,
        Err(e) => Some(e),
    }
}

/// Larger than any ignore file a person writes; one past it is not read whole.
const MAX_IGNORE_FILE_BYTES: u64 = 64 << 20;

fn not_utf8_at(line: usize) -> std::io::Error {
    let why = format!("line {line} is not UTF-8, and the rules from there on would go unread");
    std::io::Error::new(std::io::ErrorKind::InvalidData, why)
}
