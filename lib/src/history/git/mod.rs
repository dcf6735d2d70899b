//! The project's git repository, read through gix from the object database:
//! HEAD's history, each commit's message, author, date, touched paths and
//! the lines its diff adds and removes (`commits`), a revision a user names
//! (`resolve`), and a revision's tree written out (`checkout`). Never spawns
//! git.

mod checkout;
mod commits;
mod resolve;
mod tree_diff;
mod tree_paths;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use super::diff::DiffPiece;
use crate::store::CommitRow;

pub(super) use resolve::AmbiguousRevision;

/// Why blobs the history names cannot be read: a partial clone
/// (`--filter=blob:none`) lacks the contents of what was never checked out.
pub const NOT_FETCHED: &str = "not in this repository (a partial clone fetches them only when checked out)";

/// At most this many diff pieces of one commit are indexed: a commit that
/// vendors a library or reformats the tree says little per line.
pub const MAX_PIECES_PER_COMMIT: usize = 64;

/// The repository a project root is in.
pub struct GitRepo {
    repo: gix::Repository,
    /// The root's path inside the repository's work tree, `/`-separated;
    /// empty when the root is the work tree.
    prefix: String,
}

/// One commit as read from the repository: what the log stores of it, and
/// the pieces of its diff when they were asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitData {
    pub commit: CommitRow,
    pub pieces: Vec<DiffPiece>,
    /// Changed files whose diff was left out because a side's blob could
    /// not be read: a partial clone (`--filter=blob:none`) lacks them.
    pub unread_diffs: usize,
}

impl GitRepo {
    /// The repository whose work tree holds `root`.
    pub fn open(root: &Path) -> Result<GitRepo> {
        let repo = gix::discover(root).map_err(|e| {
            match root.ancestors().map(|dir| dir.join(".git")).find(|git| git.symlink_metadata().is_ok()) {
                Some(git) => match (std::fs::read_dir(&git), missing_gitdir(&git)) {
                    // gix says it found none where it could not look.
                    (Err(why), _) if git.is_dir() => {
                        anyhow!("cannot read the git repository {}: {why}", git.display())
                    }
                    // A worktree's or submodule's `.git` file naming a gitdir
                    // that is gone: gix said it found no repository (audit 188).
                    (_, Some(gone)) => anyhow!(
                        "cannot open the git repository of {}: {} points at {}, which does not exist (a worktree or submodule moved or deleted?)",
                        root.display(),
                        git.display(),
                        gone.display()
                    ),
                    _ if innermost_words(&e).contains("objectFormat") => anyhow!(
                        "cannot open the git repository of {}: its object format (extensions.objectFormat) is one vecgrep cannot read yet; it reads SHA-1 repositories",
                        root.display()
                    ),
                    _ => anyhow!("cannot open the git repository of {}: {}", root.display(), with_cause(&e)),
                },
                None => anyhow!("{} is not in a git repository", root.display()),
            }
        })?;
        // gix reads only the files backend; with another, every ref fails
        // later in words about decoding.
        let refs = repo.config_snapshot().string("extensions.refStorage").map(|v| v.to_string());
        if let Some(storage) = refs.filter(|v| !v.eq_ignore_ascii_case("files")) {
            return Err(anyhow!(
                "cannot open the git repository of {}: its references are kept as {storage} (extensions.refStorage), which vecgrep cannot read yet; `git refs migrate --ref-format=files` converts them",
                root.display()
            ));
        }
        let workdir: PathBuf = repo
            .workdir()
            .ok_or_else(|| {
                anyhow!("{} is in a bare git repository; run it in a clone with a work tree", root.display())
            })?
            .to_path_buf();
        let workdir = workdir.canonicalize().unwrap_or(workdir);
        let inside = root.strip_prefix(&workdir).map_err(|_| {
            anyhow!("{} is not inside the work tree of its repository, {}", root.display(), workdir.display())
        })?;
        let prefix =
            inside.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/");
        Ok(GitRepo { repo, prefix })
    }

    /// The branch HEAD names when it has no commits yet (a new repository,
    /// `git checkout --orphan`), which has no history to search.
    pub fn unborn_head(&self) -> Option<String> {
        let head = self.repo.head().ok().filter(|h| h.is_unborn())?;
        Some(head.referent_name().map_or_else(|| "HEAD".to_string(), |n| n.shorten().to_string()))
    }

    /// A repository path's bytes relative to the project root; None outside it.
    fn root_relative_bytes<'p>(&self, repo_path: &'p [u8]) -> Option<&'p [u8]> {
        if self.prefix.is_empty() {
            return Some(repo_path);
        }
        repo_path.strip_prefix(self.prefix.as_bytes()).and_then(|rest| rest.strip_prefix(b"/"))
    }

    /// Whether the project root is a subdirectory of the work tree, so that
    /// some commits touch nothing of the project.
    pub fn root_is_subdirectory(&self) -> bool {
        !self.prefix.is_empty()
    }

    /// A repository path relative to the project root; None outside it.
    pub fn root_relative(&self, repo_path: &str) -> Option<String> {
        if self.prefix.is_empty() {
            return Some(repo_path.to_string());
        }
        repo_path.strip_prefix(self.prefix.as_str()).and_then(|rest| rest.strip_prefix('/')).map(str::to_string)
    }
}

/// `e`'s own words (which may name the file at fault) and, when they
/// differ, its innermost cause that says something.
fn with_cause(e: &dyn std::error::Error) -> String {
    let (outer, inner) = (e.to_string(), innermost_words(e));
    if outer.contains(&inner) {
        outer
    } else {
        format!("{outer}: {inner}")
    }
}

/// The innermost cause of `e` that says something: gix's outer words name
/// its own steps, and its innermost can be a bare class ("Validation"),
/// whose reason is the cause around it.
fn innermost_words(e: &dyn std::error::Error) -> String {
    let mut said = e.to_string();
    let mut cause = e.source();
    while let Some(inner) = cause {
        let words = inner.to_string();
        if words.trim().contains(' ') {
            said = words;
        }
        cause = inner.source();
    }
    said
}

/// The directory a `.git` file names (`gitdir: PATH`, relative to the
/// file's directory), when it names one that does not exist.
fn missing_gitdir(git: &Path) -> Option<PathBuf> {
    let text = crate::project::small_file::read_small_text(git, 4096).ok()??;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let dir = git.parent()?.join(named);
    (!named.is_empty() && !dir.exists()).then_some(dir)
}
