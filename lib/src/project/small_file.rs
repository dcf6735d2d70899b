//! Reading and writing the small files a project holds (its config, ignore
//! files, the index's `.gitignore`, learned concepts) as a cloned
//! repository may have made them: a link to `/dev/zero`, a FIFO or a device
//! is an error, not a read that never ends, and a link is never written
//! through to a file outside the project.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

/// The contents of the file at `path`, or None when there is none. An
/// error when it is not a regular file (links are followed) or holds more
/// than `limit` bytes, so that nothing but a file of the expected size is
/// ever read whole.
pub(crate) fn read_small(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    if !is_regular(path)? {
        return Ok(None);
    }
    // It may have been replaced since it was looked at (by a FIFO, say).
    let Some(file) = open_regular(path)? else { return Err(not_regular()) };
    let mut bytes = Vec::new();
    // The file may have grown since it was looked at.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(Some(bytes))
}

/// As `read_small`, as text: a line that is not UTF-8 is an error naming it.
pub(crate) fn read_small_text(path: &Path, limit: u64) -> io::Result<Option<String>> {
    let Some(bytes) = read_small(path, limit)? else { return Ok(None) };
    String::from_utf8(bytes).map(Some).map_err(|e| {
        let line = first_line_not_utf8(e.as_bytes()).unwrap_or(1);
        io::Error::new(io::ErrorKind::InvalidData, format!("line {line} is not UTF-8"))
    })
}

/// The number of the first line of `text` that is not UTF-8, if any.
pub(crate) fn first_line_not_utf8(text: &[u8]) -> Option<usize> {
    let valid = std::str::from_utf8(text).err()?.valid_up_to();
    Some(1 + text[..valid].iter().filter(|&&b| b == b'\n').count())
}

/// The text of a small file vecgrep wrote beside an index, or None when
/// it is missing, not a regular file, over 1 MiB or not UTF-8: a
/// repository that commits its `.vecgrep/` could put a link to
/// `/dev/zero` or a huge file there, which is never read whole.
pub(crate) fn read_own_text(path: &Path) -> Option<String> {
    const MAX_OWN_TEXT: u64 = 1 << 20;
    read_small(path, MAX_OWN_TEXT).ok().flatten().and_then(|bytes| String::from_utf8(bytes).ok())
}

/// The regular file at `path` (links followed), opened for reading, or
/// None when it is something else: checked on the open file, so that a
/// file replaced after it was walked (by a FIFO, whose open would wait for
/// a writer) is never waited on.
pub(crate) fn open_regular(path: &Path) -> io::Result<Option<File>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

/// As `open_regular`, links followed only when `follow` says so: else a
/// link at `path` is an error (ELOOP), never opened through.
pub(crate) fn open_regular_as(path: &Path, follow: bool) -> io::Result<Option<File>> {
    if follow {
        return open_regular(path);
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOFOLLOW);
    let file = options.open(path)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

/// Whether the open `file` lies under `root` (a real path), by the path
/// the kernel holds for it: a directory above it swapped for a link since
/// it was walked leads elsewhere, whatever the name opened says. Where the
/// kernel does not say (no `/proc`), true.
#[cfg(unix)]
pub(crate) fn opened_within(file: &File, root: &Path) -> bool {
    use std::os::fd::AsRawFd;
    match std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
        Ok(real) => real.starts_with(root),
        Err(_) => true,
    }
}

#[cfg(not(unix))]
pub(crate) fn opened_within(_file: &File, _root: &Path) -> bool {
    true
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// Whether there is a regular file at `path` (links followed): false when
/// there is nothing there, an error when it is anything else (a directory,
/// a FIFO, a device such as `/dev/zero`) or larger than it could be read.
pub(crate) fn is_regular(path: &Path) -> io::Result<bool> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(_) => Err(not_regular()),
        Err(e) if leads_to_nothing(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

/// A path through a file (`.git/info/exclude` where `.git` is a worktree's
/// file) leads to nothing, as a missing one does.
fn leads_to_nothing(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

/// Append `text` to the file at `path`, creating it when missing; refused
/// when `path` is a link (even a dangling one) or not a regular file, so
/// that a repository cannot point a file vecgrep writes at one of the
/// user's.
pub(crate) fn append_own(path: &Path, text: &[u8]) -> io::Result<()> {
    refuse_links(path)?;
    let mut file = open_no_follow(OpenOptions::new().create(true).append(true), path)?;
    file.write_all(text)
}

/// Replace the contents of the file at `path` with `text`, creating it
/// when missing; refused as [`append_own`] is.
pub(crate) fn write_own(path: &Path, text: &[u8]) -> io::Result<()> {
    create_own(path)?.write_all(text)
}

/// Create (or empty) the file at `path`, vecgrep's own, never through a
/// link, and keep it open.
pub(crate) fn create_own(path: &Path) -> io::Result<File> {
    refuse_links(path)?;
    open_no_follow(OpenOptions::new().create(true).write(true).truncate(true), path)
}

/// Replace the file at `path` with `text` whole: written to `<path>.tmp`
/// and renamed, so a kill leaves the old file or the new one. The
/// temporary name is vecgrep's: a link or FIFO a repository shipped there
/// is removed, never written through.
pub(crate) fn replace_own(path: &Path, text: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    if std::fs::symlink_metadata(&tmp).is_ok_and(|m| !m.is_dir()) {
        let _ = std::fs::remove_file(&tmp);
    }
    let replaced = write_own(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if replaced.is_err() {
        // A full disk's half-written file is not left behind.
        let _ = std::fs::remove_file(&tmp);
    }
    replaced
}

/// The file at `path` in vecgrep's own data directory (a lock), opened for
/// writing, created when missing. Anything else of that name (a link a
/// repository shipped, a FIFO whose open would wait for a reader) is
/// removed first, never opened: the name is vecgrep's, and what a link
/// leads to is another program's.
pub(crate) fn open_own(path: &Path) -> io::Result<File> {
    if refuse_links(path).is_err() {
        std::fs::remove_file(path)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = options.open(path)?;
    file.metadata()?.is_file().then_some(file).ok_or_else(not_regular)
}

fn refuse_links(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(io::Error::new(io::ErrorKind::InvalidInput, "a link; vecgrep writes only a file of the project's own"))
        }
        Ok(meta) if !meta.is_file() => Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")),
        _ => Ok(()),
    }
}

/// Open without following a link at the last component, so that one made
/// between the check and the open is refused too.
fn open_no_follow(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, libc::O_NOFOLLOW);
    options.open(path)
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("larger than the {limit} bytes such a file may hold"))
}

/// Whether this process may read (`libc::R_OK`) or write (`W_OK`) `path`
/// (access(2): its owner, its mode, a read-only mount).
#[allow(unsafe_code)]
pub(crate) fn may(path: &std::path::Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return true };
    // SAFETY: a NUL-terminated path we own, for the duration of the call.
    unsafe { libc::access(c_path.as_ptr(), mode) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_text_is_never_read_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let (small, big, zero, bad) =
            (dir.path().join("s"), dir.path().join("b"), dir.path().join("z"), dir.path().join("u"));
        std::fs::write(&small, "done\n").unwrap();
        std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        std::fs::write(&bad, [0xff, 0xfe]).unwrap();
        assert_eq!(read_own_text(&small).as_deref(), Some("done\n"));
        assert_eq!(read_own_text(&big), None, "over 1 MiB");
        assert_eq!(read_own_text(&zero), None, "a link to a device is never read");
        assert_eq!(read_own_text(&bad), None, "not UTF-8");
        assert_eq!(read_own_text(&dir.path().join("missing")), None);
    }

    #[test]
    fn an_own_file_replaces_a_link_or_a_fifo_and_never_opens_what_they_lead_to() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        let lock = dir.path().join("index.lock");
        std::os::unix::fs::symlink(&outside, &lock).unwrap();
        open_own(&lock).unwrap();
        assert!(!outside.exists(), "the link's target was created");
        assert!(std::fs::symlink_metadata(&lock).unwrap().is_file());
        std::fs::remove_file(&lock).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(&lock).status().unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        let at = lock.clone();
        std::thread::spawn(move || tx.send(open_own(&at).is_ok()));
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(5)), Ok(true), "the open waited for a reader");
        assert!(std::fs::symlink_metadata(&lock).unwrap().is_file());
        // A file there already is opened as it is, its contents kept.
        std::fs::write(&lock, "x").unwrap();
        open_own(&lock).unwrap();
        assert_eq!(std::fs::read(&lock).unwrap(), b"x");
    }

    #[test]
    fn a_fifo_is_not_opened_for_a_writer_to_come() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(open_regular(&fifo).map(|f| f.is_some()).ok()));
        let opened = rx.recv_timeout(std::time::Duration::from_secs(5)).expect("the open waited for a writer");
        assert_eq!(opened, Some(false));
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(open_regular(&file).unwrap().is_some());
    }

    #[test]
    fn only_a_regular_file_of_the_expected_size_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.toml");
        std::fs::write(&small, "top_k = 3\n").unwrap();
        assert_eq!(read_small(&small, 100).unwrap().as_deref(), Some(&b"top_k = 3\n"[..]));
        assert_eq!(read_small(&dir.path().join("missing"), 100).unwrap(), None);
        let err = read_small(&small, 4).unwrap_err();
        assert!(err.to_string().contains("larger than the 4 bytes"), "{err}");
        assert!(read_small(dir.path(), 100).unwrap_err().to_string().contains("not a regular file"));
        assert!(!is_regular(&small.join("info/exclude")).unwrap(), "a path through a file leads nowhere");
        #[cfg(unix)]
        {
            let zero = dir.path().join("zero.toml");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            let err = read_small(&zero, 1 << 20).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
            let linked = dir.path().join("linked.toml");
            std::os::unix::fs::symlink(&small, &linked).unwrap();
            assert!(read_small(&linked, 100).unwrap().is_some(), "a link to a regular file is read");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let users = dir.path().join("users-file");
        std::fs::write(&users, "the user's own\n").unwrap();
        let link = dir.path().join("learned.md");
        std::os::unix::fs::symlink(&users, &link).unwrap();
        assert!(append_own(&link, b"more\n").unwrap_err().to_string().contains("a link"));
        assert!(write_own(&link, b"more\n").unwrap_err().to_string().contains("a link"));
        let dangling = dir.path().join(".gitignore");
        std::os::unix::fs::symlink(dir.path().join("not-yet"), &dangling).unwrap();
        assert!(write_own(&dangling, b"*\n").is_err());
        assert!(!dir.path().join("not-yet").exists(), "nothing made where a dangling link points");
        assert_eq!(std::fs::read_to_string(&users).unwrap(), "the user's own\n");

        let own = dir.path().join("own.md");
        append_own(&own, b"a\n").unwrap();
        append_own(&own, b"b\n").unwrap();
        write_own(&dir.path().join("gi"), b"*\n").unwrap();
        assert_eq!(std::fs::read_to_string(&own).unwrap(), "a\nb\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_whole_replacement_removes_a_link_at_its_temporary_name_and_writes_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let users = dir.path().join("users-file");
        std::fs::write(&users, "the user's own\n").unwrap();
        let state = dir.path().join("label.toml");
        std::os::unix::fs::symlink(&users, dir.path().join("label.toml.tmp")).unwrap();
        replace_own(&state, b"label = \"v1\"\n").unwrap();
        assert_eq!(std::fs::read_to_string(&users).unwrap(), "the user's own\n", "written through the link");
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "label = \"v1\"\n");
        assert!(!dir.path().join("label.toml.tmp").exists(), "the temporary name is left behind");
        replace_own(&state, b"label = \"v2\"\n").unwrap();
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "label = \"v2\"\n");
    }
}
