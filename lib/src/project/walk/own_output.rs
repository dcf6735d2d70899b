//! The files a walk never indexes as the project's: vecgrep's own output
//! (a pipeline's stdout redirected into the tree) and its data directory
//! reached through a link.

use std::os::fd::AsFd;

use crate::project::root::ProjectRoot;

/// A file by device and inode: the same file whatever name reaches it.
pub(super) type FileId = (u64, u64);

/// What `.vecgrep` leads to, when it is a link to a directory.
pub(super) fn linked_data_dir(root: &ProjectRoot) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let data = root.path.join(crate::project::PROJECT_DIR);
    std::fs::symlink_metadata(&data).ok().filter(|m| m.file_type().is_symlink())?;
    std::fs::metadata(&data).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino()))
}

/// How `vecgrep` tells the stages of its pipeline (`vg-query | vg-format`)
/// the file its own output goes to: a stage writing to a pipe cannot see
/// that `vecgrep foo >> notes.txt` appends to a file of the tree.
pub const OWN_OUTPUT_VAR: &str = "VECGREP_OWN_OUTPUT";

/// The regular files this process's standard output and error go to, and
/// the one `OWN_OUTPUT_VAR` names, looked at once per walk: a server's
/// redirection can be the same file for its whole life, but a library
/// cannot know it was not changed.
pub(super) fn own_outputs() -> Vec<FileId> {
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    let handed_down = std::env::var(OWN_OUTPUT_VAR).ok().and_then(|v| parse_file_id(&v));
    [stdout.as_fd(), stderr.as_fd()].into_iter().filter_map(regular_file_id).chain(handed_down).collect()
}

/// This process's standard output as `OWN_OUTPUT_VAR` carries it to the
/// stages of a pipeline, when it is a regular file.
pub fn own_output_for_stages() -> Option<String> {
    let (dev, ino) = regular_file_id(std::io::stdout().as_fd())?;
    Some(format!("{dev}:{ino}"))
}

/// The file `fd` is open on, when it is a regular one.
fn regular_file_id(fd: std::os::fd::BorrowedFd<'_>) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::File::from(fd.try_clone_to_owned().ok()?).metadata().ok()?;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

fn parse_file_id(text: &str) -> Option<FileId> {
    let (dev, ino) = text.split_once(':')?;
    Some((dev.parse().ok()?, ino.parse().ok()?))
}

/// Whether directory `e` is the data directory `.vecgrep` links to.
pub(super) fn is_the_data_dir(e: &ignore::DirEntry, data_dir: Option<FileId>) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(e.path()).is_ok_and(|m| Some((m.dev(), m.ino())) == data_dir)
}

pub(super) fn is_own_output(own_outputs: &[FileId], meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    own_outputs.contains(&(meta.dev(), meta.ino()))
}
