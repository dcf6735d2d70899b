//! A revision's tree under the root, written out to be walked as a
//! working tree is, with the ignore rules from above the root that the
//! working tree would apply; and single entries read at a revision.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use gix::bstr::ByteSlice;

use super::super::above_root::{self, TreeRules};
use super::super::tree_files::{self, EntryContents, WrittenTree};
use super::tree_paths::checked_entries;
use super::{GitRepo, NOT_FETCHED};
use crate::project::{Skip, SkipReason};

/// An ignore file outside a revision's tree is read to its first MiB, as
/// far as any rule file reaches.
const MAX_IGNORE_FILE_BYTES: usize = 1 << 20;

/// Whether `rel` is a path git would check out below the root: no empty,
/// `.` or `..` part, and no `.git` (in any case: a case-blind disk takes
/// `.GIT` for it), which only a tree made by hand holds.
pub(super) fn is_checkout_path(rel: &str) -> bool {
    rel.split('/').all(|part| !(part.is_empty() || part == "." || part == ".." || part.eq_ignore_ascii_case(".git")))
}

impl GitRepo {
    /// Write the files of commit `sha`'s tree that lie under the project
    /// root into `dest` (paths relative to the root), dated by the commit,
    /// for a walk to meet as it would meet a checkout: a symbolic link as
    /// a link (never followed, nor written through), a blob over `max_bytes`
    /// as a sparse file of its size (passed over as too large, never read),
    /// a name that is not UTF-8 as it is. Submodules and anything under
    /// `.vecgrep/` or `.git/` are left out; the submodules' root-relative
    /// paths are returned, to be said, with the entries that could not be
    /// written (`tree_files::place`). A root that did not exist at that
    /// commit is an error.
    pub(in crate::history) fn write_tree(&self, sha: &str, dest: &Path, max_bytes: u64) -> Result<WrittenTree> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let tree = commit.tree().map_err(|e| self.tree_lacking(e.into(), format!("cannot read the tree of {sha}")))?;
        let checked = checked_entries(&tree).with_context(|| format!("cannot walk the tree of {sha}"))?;
        let entries = checked.entries;
        let dated = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(commit.time().map_or(0, |t| t.seconds.max(0) as u64));
        std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
        let unreadable = self.dirs_of_unreadable_rules(&entries);
        let rules = self.tree_rules(&entries, !unreadable.is_empty());
        // Only a directory the walk enters reads its ignore file (review
        // 197: one in a directory left out was an error of the revision).
        let unwalked: Vec<(String, String)> =
            unreadable.into_iter().filter(|(dir, _)| !rules.walk_passes_over(dir)).collect();
        let mut under_root = false;
        let mut written = WrittenTree::default();
        // The root's own path is empty, as a walk's skip of it is: every
        // entry under it is then kept (`Skip::unseen_under`); messages say `.`.
        written.unwritten.extend(
            unwalked.iter().map(|(dir, why)| Skip { path: dir.clone(), reason: SkipReason::Error(why.clone()) }),
        );
        written.unwritten.extend(self.refused_names(&checked.refused));
        for entry in entries {
            if !entry.mode.is_blob() && !entry.mode.is_link() {
                if entry.mode.is_commit() {
                    written.submodules.extend(
                        self.root_relative_bytes(entry.filepath.as_ref()).map(|r| r.to_str_lossy().into_owned()),
                    );
                }
                continue;
            }
            let Some(rel) = self.root_relative_bytes(entry.filepath.as_ref()) else { continue };
            let shown = rel.to_str_lossy();
            // Case-blind: on a case-insensitive disk `.VECGREP/` is the revision's own index.
            if !is_checkout_path(&shown) || shown.split('/').any(|part| part.eq_ignore_ascii_case(".vecgrep")) {
                continue;
            }
            under_root = true;
            let in_unwalked = |(dir, _): &(String, String)| dir.is_empty() || shown.starts_with(&format!("{dir}/"));
            if unwalked.iter().any(in_unwalked) || rules.any_above() && rules.leaves_out(&shown) {
                continue;
            }
            let rel_path = Path::new(std::ffi::OsStr::from_bytes(rel));
            let unwritten = self
                .write_entry(entry.oid, entry.mode.is_link(), dest, rel_path, (max_bytes, dated))
                .with_context(|| format!("cannot write {shown} of {sha} to {}", dest.join(rel_path).display()))?;
            if let Some(reason) = unwritten {
                written.unwritten.push(Skip { path: shown.into_owned(), reason });
            }
        }
        if !under_root && !self.root_exists_in(&tree)? {
            return Err(anyhow!("the project root {} did not exist at {}", self.prefix, &sha[..12.min(sha.len())]));
        }
        Ok(written)
    }

    /// The entries under the root whose names no checkout holds, as skips:
    /// said, where they were passed over in silence (`.git`) or moved the
    /// entries after them (`src/x.py`, audit 214).
    fn refused_names(&self, refused: &[(gix::bstr::BString, gix::bstr::BString)]) -> Vec<Skip> {
        let mut skips = Vec::new();
        for (dir, name) in refused {
            let at_root = dir.as_slice() == self.prefix.as_bytes();
            let Some(rel_dir) = (if at_root { Some(&b""[..]) } else { self.root_relative_bytes(dir) }) else {
                continue;
            };
            // The record's path is the name as found; the sentence quotes it
            // (`..`, a name holding a slash), which the path must not (audit 234).
            let name = name.to_str_lossy();
            let path = match rel_dir.is_empty() {
                true => name.to_string(),
                false => format!("{}/{name}", rel_dir.to_str_lossy()),
            };
            let why = format!("an entry named {name:?}, which no checkout holds, is left out");
            skips.push(Skip { path, reason: SkipReason::Error(why) });
        }
        skips
    }

    /// The directories of the tree under the root (root-relative) whose
    /// ignore file has a line that is not UTF-8, with why. The walk reads no
    /// rule after such a line, and so walks none of the directory: an error
    /// no later run of the same tree gets past, which kept the revision
    /// incomplete for ever (audit 194). Written as entries no run can write,
    /// the revision completes without them and its searches say so.
    fn dirs_of_unreadable_rules(&self, entries: &[gix::traverse::tree::recorder::Entry]) -> Vec<(String, String)> {
        let unreadable = |entry: &gix::traverse::tree::recorder::Entry| {
            let rel = self.root_relative_bytes(entry.filepath.as_ref())?.to_str().ok()?;
            let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
            if !entry.mode.is_blob() || !above_root::KINDS.contains(&name) {
                return None;
            }
            let blob = self.repo.find_object(entry.oid).ok()?;
            let line = crate::project::small_file::first_line_not_utf8(&blob.data)?;
            let why = format!(
                "ignore file {name}: line {line} is not UTF-8, and the rules from there on would go unread; \
                 its directory is not walked"
            );
            Some((dir.to_string(), why))
        };
        entries.iter().filter_map(unreadable).collect()
    }

    /// The rules a revision keeps from outside its tree (`above_root`):
    /// the ignore files above a subproject's root and the repository's
    /// `info/exclude`, with the tree's own that outrank them; all of the
    /// tree's own when `wanted_whole`, to tell which directories the walk
    /// enters.
    fn tree_rules(&self, entries: &[gix::traverse::tree::recorder::Entry], wanted_whole: bool) -> TreeRules {
        let exclude = self.info_exclude();
        if self.prefix.is_empty() && exclude.is_none() && !wanted_whole {
            return TreeRules::default();
        }
        let wanted = |path: &str| {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            let above = dir.is_empty() || self.prefix.starts_with(&format!("{dir}/")) || dir == self.prefix;
            let inside = self.prefix.is_empty() || dir.starts_with(&format!("{}/", self.prefix));
            above_root::KINDS.contains(&name) && (above || inside)
        };
        let files = entries
            .iter()
            .filter(|e| e.mode.is_blob())
            .filter_map(|e| Some((e.filepath.to_str().ok()?, e.oid)))
            .filter(|(path, _)| wanted(path))
            .filter_map(|(path, oid)| {
                let blob = self.repo.find_object(oid).ok()?;
                Some((path.to_string(), blob.data[..blob.data.len().min(MAX_IGNORE_FILE_BYTES)].to_vec()))
            })
            .collect();
        TreeRules::new(&self.prefix, files, exclude.as_deref())
    }

    /// What the rules from outside a revision's tree that this repository
    /// holds (`info/exclude`) are, in short: a revision indexed under other
    /// rules is indexed again, as the working tree is walked again.
    pub(in crate::history) fn outside_rules_key(&self) -> String {
        self.info_exclude().map_or_else(|| "none".into(), |text| blake3::hash(&text).to_hex()[..16].to_string())
    }

    /// The repository's `info/exclude` (a linked worktree's is its main
    /// repository's), which the working tree's walk applies; None when it
    /// holds no rule or cannot be read. One that is no regular file is
    /// never opened: a FIFO held the run for ever (audit 214), as the
    /// working tree's walk refuses it.
    fn info_exclude(&self) -> Option<Vec<u8>> {
        let path = self.repo.common_dir().join("info/exclude");
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let mut text = Vec::new();
        let file = std::fs::File::open(path).ok()?;
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_IGNORE_FILE_BYTES as u64), &mut text).ok()?;
        let rules = |line: &&[u8]| !line.trim().is_empty() && !line.starts_with(b"#");
        text.split(|b| *b == b'\n').any(|line| rules(&line)).then_some(text)
    }

    /// Whether the project root is a directory of commit `sha`'s tree (the
    /// whole repository always is): a catalog's label leaves a project out
    /// at a commit of its repository from before the project's directory.
    pub(in crate::history) fn root_exists_at(&self, sha: &str) -> Result<bool> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let tree = commit.tree().with_context(|| format!("cannot read the tree of {sha}"))?;
        self.root_exists_in(&tree)
    }

    /// Whether root-relative `rel` is a symbolic link in commit `sha`'s
    /// tree: a revision's search does not follow it, as its walk does not.
    pub fn is_link_at(&self, sha: &str, rel: &str) -> bool {
        let path = if self.prefix.is_empty() { rel.to_string() } else { format!("{}/{rel}", self.prefix) };
        let tree = gix::ObjectId::from_hex(sha.as_bytes())
            .ok()
            .and_then(|id| self.repo.find_commit(id).ok())
            .and_then(|commit| commit.tree().ok());
        let entry = tree.and_then(|tree| tree.lookup_entry_by_path(path.trim_end_matches('/')).ok().flatten());
        entry.is_some_and(|e| e.mode().is_link())
    }

    fn root_exists_in(&self, tree: &gix::Tree<'_>) -> Result<bool> {
        if self.prefix.is_empty() {
            return Ok(true);
        }
        let entry =
            tree.lookup_entry_by_path(&self.prefix).with_context(|| format!("cannot look up {}", self.prefix))?;
        Ok(entry.is_some_and(|e| e.mode().is_tree()))
    }

    /// The bytes of the file at root-relative `rel` in commit `sha`, when it
    /// is a file there of at most `max_bytes` that the repository holds:
    /// the lines around a hit from that revision, which the work tree's
    /// file may no longer have.
    pub fn file_at(&self, sha: &str, rel: &str, max_bytes: u64) -> Result<Option<Vec<u8>>> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let tree = commit.tree().with_context(|| format!("cannot read the tree of {sha}"))?;
        let path = if self.prefix.is_empty() { rel.to_string() } else { format!("{}/{rel}", self.prefix) };
        let entry = tree.lookup_entry_by_path(&path).with_context(|| format!("cannot read {path} at {sha}"))?;
        let Some(oid) = entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id()) else { return Ok(None) };
        if !self.repo.has_object(oid) || self.repo.find_header(oid).map_or(true, |h| h.size() > max_bytes) {
            return Ok(None);
        }
        Ok(Some(self.repo.find_object(oid)?.data.clone()))
    }

    /// One entry of a tree at `rel` below `dest`: a link to what its blob
    /// names, a sparse file of its size when over `max_bytes`, else its
    /// contents dated `dated`; why not, when it cannot be placed there.
    fn write_entry(
        &self,
        oid: gix::ObjectId,
        is_link: bool,
        dest: &Path,
        rel: &Path,
        (max_bytes, dated): (u64, std::time::SystemTime),
    ) -> Result<Option<SkipReason>> {
        if !self.repo.has_object(oid) {
            self.lacks_by_design(oid)?;
            return Err(anyhow!("its contents are {NOT_FETCHED}"));
        }
        let size = self.repo.find_header(oid).map(|h| h.size()).unwrap_or(0);
        if !is_link && size > max_bytes {
            return Ok(tree_files::place(dest, rel, EntryContents::Sparse { size, limit: max_bytes, dated })?);
        }
        let blob = self.repo.find_object(oid)?;
        let contents = if is_link { EntryContents::Link(&blob.data) } else { EntryContents::File(&blob.data, dated) };
        Ok(tree_files::place(dest, rel, contents)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_a_checkout_could_hold_are_paths() {
        for plain in ["a.rs", "src/a.rs", ".github/ci.yml", "a..b/c", ".gitignore"] {
            assert!(is_checkout_path(plain), "{plain}");
        }
        for crafted in ["..", ".", "", "a/../b", "a//b", ".git/config", "src/.GIT/hooks", "a/"] {
            assert!(!is_checkout_path(crafted), "{crafted}");
        }
    }
}
