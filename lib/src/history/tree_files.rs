//! Where a revision's tree is written as files (`GitRepo::write_tree`): an
//! entry is placed only below directories this run made, never through a
//! link or file an earlier entry of the same tree left in the way, and one
//! that cannot be placed is a skip of the run, not the end of it.

use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::time::SystemTime;

use crate::project::{Skip, SkipReason};

/// What writing a tree left out, to be said.
#[derive(Debug, Default)]
pub(super) struct WrittenTree {
    /// The submodules' root-relative paths: another repository's files,
    /// which a tree names only by commit.
    pub(super) submodules: Vec<String>,
    /// The entries that could not be written, each a skip of the run.
    pub(super) unwritten: Vec<Skip>,
}

/// What an entry of a tree holds, for `place`.
pub(super) enum EntryContents<'a> {
    /// A symbolic link to this target (never followed).
    Link(&'a [u8]),
    /// A file of these bytes, dated by its commit.
    File(&'a [u8], SystemTime),
    /// A file of this size with nothing in it (over `max_filesize`, the
    /// limit given: the walk passes it over by its size and never reads it).
    Sparse { size: u64, limit: u64, dated: SystemTime },
}

/// Why an entry at `rel` (relative to `dest`) cannot be written, if it
/// cannot: a link or file where a directory of its path should be (a tree
/// git refuses to check out, as a link `a` beside a directory `a`), or the
/// disk refusing its name (a NUL in a link's target, a name too long).
/// Errors the whole tree would meet (a full disk) are returned as errors.
pub(super) fn place(dest: &Path, rel: &Path, contents: EntryContents) -> std::io::Result<Option<SkipReason>> {
    let is_link = matches!(contents, EntryContents::Link(_));
    let refused = |why: String| Ok(Some(if is_link { SkipReason::Symlink } else { SkipReason::Error(why) }));
    if let Some(why) = make_parents(dest, rel)? {
        return refused(why);
    }
    let path = dest.join(rel);
    // What a killed run left there is replaced, never written through.
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        if meta.is_dir() {
            return refused("a directory of the same name is in the tree too".into());
        }
        std::fs::remove_file(&path)?;
    }
    let written = match contents {
        EntryContents::Link(target) => std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), &path),
        EntryContents::File(bytes, dated) => {
            write_new(&path, |f| f.write_all(bytes).and_then(|()| f.set_modified(dated)))
        }
        EntryContents::Sparse { size, limit, dated } => {
            match write_new(&path, |f| f.set_len(size).and_then(|()| f.set_modified(dated))) {
                // Past the process's file size limit (`ulimit -f`): a file the
                // walk would pass over by its size is passed over all the same.
                Err(e) if e.raw_os_error() == Some(libc::EFBIG) => {
                    return Ok(Some(SkipReason::TooLarge { size, limit }))
                }
                written => written,
            }
        }
    };
    match written {
        Ok(()) => Ok(None),
        Err(e) if affects_every_entry(&e) => Err(e),
        Err(e) => refused(format!("cannot be written here: {e}")),
    }
}

/// Make a new file at `path` and `fill` it; on failure nothing is left
/// there, where an empty or cut file would be indexed as the entry.
fn write_new(path: &Path, fill: impl FnOnce(&mut File) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut file = File::create_new(path)?;
    fill(&mut file).inspect_err(|_| {
        let _ = std::fs::remove_file(path);
    })
}

/// Make the directories of `rel`'s parent below `dest`, one at a time;
/// why not, when something other than a directory is in the way.
fn make_parents(dest: &Path, rel: &Path) -> std::io::Result<Option<String>> {
    let mut dir = dest.to_path_buf();
    let parents = rel.parent().map(Path::components).into_iter().flatten();
    for part in parents.filter(|c| matches!(c, Component::Normal(_))) {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => {
                let what = if meta.file_type().is_symlink() { "symbolic link" } else { "file" };
                let at = dir.strip_prefix(dest).unwrap_or(&dir).display();
                return Ok(Some(format!("beyond the {what} {at} of the same tree (git would not check it out)")));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if affects_every_entry(&e) => return Err(e),
                Err(e) => return Ok(Some(format!("cannot make its directory: {e}"))),
            },
            // A directory's name too long, or a path past PATH_MAX under
            // `.vecgrep/revs/<sha>/` that a checkout would hold.
            Err(e) if affects_every_entry(&e) => return Err(e),
            Err(e) => return Ok(Some(format!("cannot make its directory: {e}"))),
        }
    }
    Ok(None)
}

/// Whether a failure to write one entry is the run's, not the entry's: the
/// disk full or read-only, a quota spent, the process's file size limit
/// (`ulimit -f`) met. A revision so written is no revision: the run fails,
/// and the next completes it, as a full disk fails an index run.
fn affects_every_entry(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT | libc::EROFS | libc::EIO | libc::EFBIG))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dated() -> SystemTime {
        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn an_entry_beyond_a_link_of_the_same_tree_is_not_written_through_it() {
        let dest = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("config"), "theirs").unwrap();
        let link =
            place(dest.path(), Path::new("a"), EntryContents::Link(outside.path().as_os_str().as_encoded_bytes()));
        assert!(matches!(link, Ok(None)), "{link:?}");
        let beyond = place(dest.path(), Path::new("a/config"), EntryContents::File(b"ours", dated())).unwrap();
        assert!(
            matches!(&beyond, Some(SkipReason::Error(why)) if why.contains("beyond the symbolic link a")),
            "{beyond:?}"
        );
        let deeper = place(dest.path(), Path::new("a/b/c"), EntryContents::File(b"ours", dated())).unwrap();
        assert!(matches!(deeper, Some(SkipReason::Error(_))), "{deeper:?}");
        assert_eq!(std::fs::read_to_string(outside.path().join("config")).unwrap(), "theirs");
        assert!(!outside.path().join("b").exists());
    }

    #[test]
    fn an_entry_beyond_a_file_or_with_a_name_the_disk_refuses_is_a_skip() {
        let dest = tempfile::tempdir().unwrap();
        assert!(matches!(place(dest.path(), Path::new("a"), EntryContents::File(b"x", dated())), Ok(None)));
        let beyond = place(dest.path(), Path::new("a/b"), EntryContents::File(b"y", dated())).unwrap();
        assert!(matches!(&beyond, Some(SkipReason::Error(why)) if why.contains("beyond the file a")), "{beyond:?}");
        let long = "n".repeat(300);
        let refused = place(dest.path(), Path::new(&long), EntryContents::File(b"y", dated())).unwrap();
        assert!(matches!(&refused, Some(SkipReason::Error(why)) if why.contains("cannot be written")), "{refused:?}");
        // A directory's name too long, and a path past PATH_MAX.
        let in_long = place(dest.path(), &Path::new(&long).join("x.py"), EntryContents::File(b"y", dated())).unwrap();
        assert!(
            matches!(&in_long, Some(SkipReason::Error(why)) if why.contains("cannot make its directory")),
            "{in_long:?}"
        );
        let deep: std::path::PathBuf = std::iter::repeat_n("d".repeat(200), 25).collect();
        let too_deep = place(dest.path(), &deep.join("x.py"), EntryContents::File(b"y", dated())).unwrap();
        assert!(matches!(too_deep, Some(SkipReason::Error(_))), "{too_deep:?}");
        // A link the disk refuses is the skip any link is: links are never indexed.
        let nul = place(dest.path(), Path::new("weird"), EntryContents::Link(b"x\0y")).unwrap();
        assert!(matches!(nul, Some(SkipReason::Symlink)), "{nul:?}");
    }

    #[test]
    fn a_file_is_written_dated_and_what_a_killed_run_left_is_replaced() {
        let dest = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("victim");
        std::fs::write(&target, "theirs").unwrap();
        std::fs::create_dir(dest.path().join("d")).unwrap();
        std::os::unix::fs::symlink(&target, dest.path().join("d/f")).unwrap();
        assert!(matches!(place(dest.path(), Path::new("d/f"), EntryContents::File(b"ours", dated())), Ok(None)));
        assert_eq!(std::fs::read_to_string(dest.path().join("d/f")).unwrap(), "ours");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        assert_eq!(std::fs::metadata(dest.path().join("d/f")).unwrap().modified().unwrap(), dated());
        assert!(matches!(
            place(dest.path(), Path::new("big"), EntryContents::Sparse { size: 1 << 30, limit: 1, dated: dated() }),
            Ok(None)
        ));
        assert_eq!(std::fs::metadata(dest.path().join("big")).unwrap().len(), 1 << 30);
    }
}
