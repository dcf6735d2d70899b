//! The project's `.vecgrep` directory and the lock that makes index runs on
//! one project take turns: a file lock beside a local index, the database's
//! advisory lock for a shared one (`postgres::lock`).

use std::fs::File;
use std::path::PathBuf;

use super::StoreError;
use crate::project::small_file;
use crate::project::ProjectRoot;

/// Create `<root>/.vecgrep` readable by the user only, with a `.gitignore`
/// that keeps the cache out of version control but not the project config.
pub fn ensure_data_dir(root: &ProjectRoot) -> Result<PathBuf, StoreError> {
    let dir = own_data_dir(root)?;
    if !dir.is_dir() {
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        // Another process (or thread) may make it between the check and here.
        match b.create(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && !dir.is_dir() => {
                return Err(in_the_way(&dir));
            }
            Err(e) if !(e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir()) => {
                return Err(StoreError::File { action: "create", path: dir.clone(), source: e.into() });
            }
            _ => {}
        }
    }
    let gi = dir.join(".gitignore");
    // One that is not a regular file of a few lines (a repository may ship
    // a link) is left as it is, never read whole or written through.
    let written = small_file::read_small(&gi, 4096);
    let ours = match &written {
        // Nothing there, not even a dangling link.
        Ok(None) => std::fs::symlink_metadata(&gi).is_err(),
        // Empty: a write a full disk cut short.
        Ok(Some(text)) => text.is_empty() || EARLIER_GITIGNORES.iter().any(|e| text == e.as_bytes()),
        Err(_) => false,
    };
    if ours {
        small_file::write_own(&gi, GITIGNORE.as_bytes()).map_err(|e| StoreError::File {
            action: "write",
            path: gi.clone(),
            source: e.into(),
        })?;
    }
    Ok(dir)
}

/// The error for a file where the data directory `dir` goes.
pub(super) fn in_the_way(dir: &std::path::Path) -> StoreError {
    let why = std::io::Error::other("a file of that name is in the way; vecgrep keeps its index in a directory there");
    StoreError::File { action: "create", path: dir.to_path_buf(), source: why.into() }
}

/// `root`'s data directory, refused when it is a link: a repository may
/// ship `.vecgrep` as one, and what vecgrep writes and removes there
/// (`index.db` and its companions, rebuilt when damaged or another
/// program's) would then be whatever the link leads to: another program's
/// files outside the project, a `data/index.db` of the project's own
/// within it. A reader refuses it too: it read another project's index as
/// this one's.
pub fn own_data_dir(root: &ProjectRoot) -> Result<PathBuf, StoreError> {
    refuse_planted(root)?;
    refuse_linked(root)?;
    Ok(root.data_dir())
}

/// Refused when `root`'s data directory is a link (`own_data_dir`).
fn refuse_linked(root: &ProjectRoot) -> Result<(), StoreError> {
    let dir = root.data_dir();
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(());
    }
    let leads_to = std::fs::canonicalize(&dir).unwrap_or_else(|_| std::fs::read_link(&dir).unwrap_or_default());
    let project = std::fs::canonicalize(&root.path).unwrap_or_else(|_| root.path.clone());
    let place = if leads_to.starts_with(&project) { "within the project" } else { "outside the project" };
    let why = format!(
        "a link to {}, {place}; vecgrep keeps its index only in a directory of its own, never through a link (remove the link)",
        leads_to.display()
    );
    Err(StoreError::File { action: "use", path: dir, source: why.into() })
}

/// Refused when `root`'s data directory, or one it lies in (a revision's
/// index is kept in its project's, `.vecgrep/revs/SHA/.vecgrep`), is
/// another user's in a shared directory such as `/tmp`
/// (`project::planted_by`): its index is not this user's to read as their
/// files, nor to write theirs into.
pub(super) fn refuse_planted(root: &ProjectRoot) -> Result<(), StoreError> {
    let data = root.data_dir();
    let mut data_dirs =
        data.ancestors().filter(|d| d.file_name() == Some(std::ffi::OsStr::new(crate::project::PROJECT_DIR)));
    let Some((dir, owner)) =
        data_dirs.find_map(|d| crate::project::planted_by(d).map(|owner| (d.to_path_buf(), owner)))
    else {
        return Ok(());
    };
    let why = format!(
        "user {owner}'s, in a shared directory anyone may add to; vecgrep uses an index there only if it is yours (search from a directory of your own)"
    );
    Err(StoreError::File { action: "use", path: dir, source: why.into() })
}

/// `.vecgrep/.gitignore`: everything, itself too (so that `git status`
/// shows nothing of an index), but what a team may commit: the project
/// config and its concepts (`kg/`, README "Teach it your project's words").
const GITIGNORE: &str = "# Written by vecgrep: the index is a local cache; config.toml and kg/ (the project's concepts) may be committed.\n*\n!config.toml\n!kg/\n!kg/**\n";

/// What earlier versions wrote (the first kept the file itself visible to
/// git, the next kept `kg/` out); replaced when found, a file a person
/// changed is left alone.
const EARLIER_GITIGNORES: [&str; 2] = [
    "# Written by vecgrep: the index is a local cache; config.toml may be committed.\n*\n!.gitignore\n!config.toml\n",
    "# Written by vecgrep: the index is a local cache; config.toml may be committed.\n*\n!config.toml\n",
];

/// Exclusive right to write one root's index, held until dropped.
pub struct WriteLock {
    _held: Box<dyn Send>,
    /// Whether taking it made the data directory (`remove_unused_data_dir`).
    made_data_dir: bool,
}

/// Take the write lock, calling `waiting` once if another writer holds it.
pub fn lock_for_writing(root: &ProjectRoot, waiting: &mut dyn FnMut()) -> Result<WriteLock, StoreError> {
    let held = lock_for_writing_unless(root, waiting, &|| false)?;
    Ok(held.expect("never given up"))
}

/// A local index's write lock if no other run holds it now; None,
/// leaving no mark of a waiting writer (which a server's fill would make
/// way for), if one does, and for a shared index (whose lock is asked of
/// its server, which may take longer than a look).
pub fn try_lock_for_writing(root: &ProjectRoot) -> Result<Option<WriteLock>, StoreError> {
    if root.shared.is_some() {
        return Ok(None);
    }
    for tries in 1.. {
        let made = !has_data_dir(root);
        let (file, path) = lock_file(root)?;
        match file.try_lock() {
            Ok(()) if still_at(&file, &path) || tries >= MOST_TRIES => return Ok(Some(held(root, file, made))),
            // Removed by the run that held it (`remove_unused_data_dir`).
            Ok(()) => continue,
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(source)) => return Err(StoreError::Lock { path, source }),
        }
    }
    unreachable!("the tries end in a return")
}

/// How many times a writer takes the lock again when its lock file was
/// removed meanwhile: a file system that gives a file another number on
/// each look (some FUSE mounts) would otherwise have it try for ever.
const MOST_TRIES: u32 = 5;

/// Whether the lock file `file` is still the one at `path`: a run that
/// leaves no data directory behind removes the lock file it holds, and a
/// writer that waited on it then holds a lock no later writer takes.
fn still_at(file: &File, path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let identity = |m: std::io::Result<std::fs::Metadata>| m.ok().map(|m| (m.dev(), m.ino()));
    let held = identity(file.metadata());
    held.is_some() && held == identity(std::fs::metadata(path))
}

/// How often a waiting writer looks whether the lock is free, and whether
/// it should stop waiting.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// As `lock_for_writing`, but None once `give_up` says so while waiting (a
/// Ctrl-C, a server shutting down): a wait for another run can last
/// minutes, and a signal must end it, as it ends a run.
pub fn lock_for_writing_unless(
    root: &ProjectRoot,
    waiting: &mut dyn FnMut(),
    give_up: &dyn Fn() -> bool,
) -> Result<Option<WriteLock>, StoreError> {
    if let Some(shared) = &root.shared {
        let held = super::postgres::lock(shared, waiting, give_up)?;
        return Ok(held.map(|held| WriteLock { _held: held, made_data_dir: false }));
    }
    let mut said = false;
    for tries in 1.. {
        // Made again after a holder removed it, by this writer too.
        let made = !has_data_dir(root);
        let (file, path) = lock_file(root)?;
        let mut mark = None;
        let mut wait = || {
            if !std::mem::replace(&mut said, true) {
                waiting();
            }
            mark = Some(WaitMark::leave(&path));
        };
        let taken = super::poll::poll_for(LOCK_POLL, &mut wait, give_up, || match file.try_lock() {
            Ok(()) => Ok(Some(())),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(source)) => Err(StoreError::Lock { path: path.clone(), source }),
        })?;
        match taken {
            None => return Ok(None),
            Some(()) if still_at(&file, &path) || tries >= MOST_TRIES => return Ok(Some(held(root, file, made))),
            // The holder removed it on its way out: wait on the one there now.
            Some(()) => {}
        }
    }
    unreachable!("the tries end in a return")
}

impl WriteLock {
    /// Remove `root`'s data directory when taking this lock made it and it
    /// holds no more than that made there (its `.gitignore` and
    /// `index.lock`): a run that changed nothing (the user declined it at
    /// the large-run question) leaves no `.vecgrep`, which would mark a root
    /// from then on (audit 223). A writer waiting on the lock meanwhile takes
    /// the one made after (`still_at`).
    pub fn remove_unused_data_dir(&self, root: &ProjectRoot) {
        if self.made_data_dir {
            remove_unused_data_dir(root);
        }
    }
}

/// `WriteLock::remove_unused_data_dir`'s removal, for a lock that made the directory.
fn remove_unused_data_dir(root: &ProjectRoot) {
    let dir = root.data_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    let made = |n: &std::ffi::OsString| n == ".gitignore" || n == "index.lock";
    let ours =
        small_file::read_small(&dir.join(".gitignore"), 4096).ok().flatten().is_some_and(|t| t == GITIGNORE.as_bytes());
    if names.iter().all(made) && ours {
        let _ = std::fs::remove_file(dir.join(".gitignore"));
        let _ = std::fs::remove_file(dir.join("index.lock"));
        let _ = std::fs::remove_dir(&dir);
    }
}

/// The write lock, taken: the marks that waiters killed while they waited
/// left are swept away now (only a server's fill looked for them, and they
/// stayed in `.vecgrep` for good otherwise).
fn held(root: &ProjectRoot, file: File, made_data_dir: bool) -> WriteLock {
    writer_waiting(root);
    WriteLock { _held: Box::new(file), made_data_dir }
}

/// Whether anything is where `root`'s data directory goes.
fn has_data_dir(root: &ProjectRoot) -> bool {
    std::fs::symlink_metadata(root.data_dir()).is_ok()
}

/// Refused when a file is where `root`'s data directory goes: not "no
/// index, run vg-index first", which the run would only answer with this.
pub(super) fn refuse_file_in_the_way(root: &ProjectRoot) -> Result<(), StoreError> {
    match root.data_dir().symlink_metadata() {
        Ok(meta) if meta.is_file() => Err(in_the_way(&root.data_dir())),
        _ => Ok(()),
    }
}

/// What a writer waiting for the lock leaves beside it while it waits
/// (`index.lock.waiting-PID`), so that a run that may stop part-way for
/// it (a server's fill, which can take minutes) lets it go first. The
/// waiter holds a lock on its mark while it waits: a mark nobody holds
/// is a dead waiter's, whatever process has its pid now (one reused
/// stopped a server's fill for good).
struct WaitMark(Option<(PathBuf, File)>);

const WAIT_MARK: &str = "index.lock.waiting-";

/// A wait mark's name while it is made, before its lock is held.
const WAIT_MARK_MADE: &str = "index.lock.making-";

impl WaitMark {
    fn leave(lock: &std::path::Path) -> WaitMark {
        let mark = lock.with_file_name(format!("{WAIT_MARK}{}", std::process::id()));
        // Locked before it takes its name, so that no one sees it unheld.
        let made = lock.with_file_name(format!("{WAIT_MARK_MADE}{}", std::process::id()));
        let held = small_file::create_own(&made)
            .ok()
            .filter(|file| file.try_lock().is_ok())
            .filter(|_| std::fs::rename(&made, &mark).is_ok());
        if held.is_none() {
            let _ = std::fs::remove_file(&made);
        }
        // Without the mark the wait is only longer.
        WaitMark(held.map(|file| (mark, file)))
    }
}

impl Drop for WaitMark {
    fn drop(&mut self) {
        if let Some((mark, _)) = &self.0 {
            let _ = std::fs::remove_file(mark);
        }
    }
}

/// Whether another process waits for `root`'s write lock (a local index;
/// a shared one's waiters are not seen). The marks of processes that have
/// ended (killed while waiting) are removed, not counted.
pub fn writer_waiting(root: &ProjectRoot) -> bool {
    if root.shared.is_some() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(root.data_dir()) else { return false };
    let mut waiting = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        // One a waiter killed before it named it.
        if let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(WAIT_MARK_MADE)) {
            if pid != std::process::id().to_string() && !waiter_lives(pid, &entry) {
                let _ = std::fs::remove_file(entry.path());
            }
            continue;
        }
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(WAIT_MARK)) else { continue };
        // This process's own mark: a fill waiting for the lock is not
        // another writer it should stop for.
        if pid == std::process::id().to_string() {
            continue;
        }
        if waiter_lives(pid, &entry) {
            waiting = true;
        } else {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    waiting
}

/// Whether the waiter that left `mark` still waits: it holds a lock on
/// its mark while it does (`WaitMark`). A mark this process cannot open
/// (not a file, another user's) counts while its pid runs, as `/proc` says.
fn waiter_lives(pid: &str, mark: &std::fs::DirEntry) -> bool {
    match small_file::open_regular_as(&mark.path(), false) {
        Ok(Some(file)) => matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
        _ => pid.parse::<u32>().is_ok() && std::path::Path::new("/proc").join(pid).exists(),
    }
}

/// A server's mark that it serves `root` (`.vecgrep/serve.lock`, held
/// shared for its life). `alone`: no other server held it when this one
/// came, so the index jobs still marked running were left by a stopped
/// server, not by a live one whose jobs another must not fail.
pub struct ServerMark {
    _held: File,
    pub alone: bool,
}

pub fn mark_server(root: &ProjectRoot) -> Result<ServerMark, StoreError> {
    let (file, path) = open_lock_file(root, "serve.lock")?;
    let alone = file.try_lock().is_ok();
    file.lock_shared().map_err(|source| StoreError::Lock { path, source })?;
    Ok(ServerMark { _held: file, alone })
}

impl ServerMark {
    /// Hold the mark again when `.vecgrep/serve.lock` is no longer the file
    /// held (`rm -rf .vecgrep`, which the server makes again): a second
    /// server started then found no mark, and failed this one's running
    /// jobs as a stopped server's.
    pub fn renew(&mut self, root: &ProjectRoot) {
        use std::os::unix::fs::MetadataExt;
        let identity = |m: std::fs::Metadata| (m.dev(), m.ino());
        let path = root.data_dir().join("serve.lock");
        let now = std::fs::symlink_metadata(&path).ok().map(identity);
        if now.is_some() && now == self._held.metadata().ok().map(identity) {
            return;
        }
        // The directory is made again by the next index run, if not yet.
        if root.data_dir().is_dir() {
            if let Ok(mark) = mark_server(root) {
                self._held = mark._held;
            }
        }
    }
}

/// Whether another process holds `root`'s write lock now: an index run
/// under way, not one that was stopped. A local index's only; false where
/// the lock cannot be looked at. Looking takes the lock shared for an
/// instant, which a writer polling for it (`poll_for`) waits out.
pub fn run_under_way(root: &ProjectRoot) -> bool {
    if root.shared.is_some() {
        return false;
    }
    // Not waited on when it is a FIFO a repository shipped.
    let Ok(Some(file)) = small_file::open_regular(&root.data_dir().join("index.lock")) else { return false };
    matches!(file.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
}

/// The project's lock file, opened (created when missing), and its path.
fn lock_file(root: &ProjectRoot) -> Result<(File, PathBuf), StoreError> {
    open_lock_file(root, "index.lock")
}

/// The file `name` in `root`'s data directory, made when missing, to lock.
pub(super) fn open_lock_file(root: &ProjectRoot, name: &str) -> Result<(File, PathBuf), StoreError> {
    let path = ensure_data_dir(root)?.join(name);
    let file = small_file::open_own(&path).or_else(|e| match e.kind() {
        // Another user's lock in a directory this one may write: locked as
        // it is (flock needs no write access), never replaced, which would
        // let two runs write at once.
        std::io::ErrorKind::PermissionDenied => small_file::open_regular_as(&path, false)?.ok_or(e),
        _ => Err(e),
    });
    let file = file.map_err(|e| StoreError::File { action: "open", path: path.clone(), source: e.into() })?;
    Ok((file, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::RootMarker;

    /// A revision's index is kept in its project's `.vecgrep`: one another
    /// user put in a shared directory was refused for the project's search
    /// and used for `--rev`'s (a review made it show their text).
    #[test]
    fn a_planted_data_directory_is_refused_for_the_revisions_kept_in_it_too() {
        use std::os::unix::fs::{chown, PermissionsExt};
        if crate::project::effective_uid() != 0 {
            eprintln!("skipped: only root can give a directory to another user");
            return;
        }
        let shared = tempfile::tempdir().unwrap();
        std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let project = ProjectRoot { path: shared.path().to_path_buf(), marker: RootMarker::Git, shared: None };
        let revision = ProjectRoot {
            path: project.data_dir().join("revs/0123456789abcdef0123456789abcdef01234567"),
            marker: RootMarker::Revision,
            shared: None,
        };
        std::fs::create_dir_all(revision.data_dir()).unwrap();
        assert!(refuse_planted(&revision).is_ok(), "this user's own");
        chown(project.data_dir(), Some(65534), None).unwrap();
        for root in [&project, &revision] {
            let e = refuse_planted(root).unwrap_err().to_string();
            assert_eq!(e, format!("cannot use {}", project.data_dir().display()), "{root:?}");
        }
    }

    #[test]
    fn only_a_data_directory_holding_what_the_lock_made_is_removed_and_its_lock_file_is_told_gone() {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        let first = lock_for_writing(&root, &mut || {}).unwrap();
        // A writer that opened the lock file before it went, to wait on it.
        let (waited_on, path) = lock_file(&root).unwrap();
        assert!(still_at(&waited_on, &path));
        remove_unused_data_dir(&root);
        assert!(!root.data_dir().exists());
        drop(first);
        waited_on.try_lock().unwrap();
        assert!(!still_at(&waited_on, &path), "a lock on a file no longer there locks nothing");
        // The next writer makes the directory again and takes a lock that counts.
        let second = try_lock_for_writing(&root).unwrap().expect("free");
        assert!(try_lock_for_writing(&root).unwrap().is_none(), "held by the second writer");
        drop(second);
        // Anything more (a config, a waiter's mark) or a .gitignore a person
        // changed keeps it.
        for (name, text) in [("config.toml", "top_k = 3\n"), (".gitignore", "*\n")] {
            let lock = lock_for_writing(&root, &mut || {}).unwrap();
            std::fs::write(root.data_dir().join(name), text).unwrap();
            remove_unused_data_dir(&root);
            assert!(root.data_dir().join("index.lock").exists(), "{name}");
            drop(lock);
            std::fs::remove_dir_all(root.data_dir()).unwrap();
        }
    }

    #[test]
    fn a_waiting_writer_is_seen_while_it_lives_and_its_mark_goes_when_it_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        let lock = ensure_data_dir(&root).unwrap().join("index.lock");
        assert!(!writer_waiting(&root));
        // This process's own mark is not another writer's.
        let mark = WaitMark::leave(&lock);
        assert!(mark.0.as_ref().is_some_and(|m| m.0.exists()));
        assert!(!writer_waiting(&root), "its own wait is not another's");
        drop(mark);
        // Another waiter's, held while it waits (a lock on another open
        // file is another's, in this process too).
        let other = lock.with_file_name(format!("{WAIT_MARK}{}", std::process::id() + 1));
        let held = std::fs::File::create(&other).unwrap();
        held.lock().unwrap();
        assert!(writer_waiting(&root), "another waiter waits");
        drop(held);
        assert!(!writer_waiting(&root) && !other.exists(), "a mark no one holds is a dead waiter's, removed");
        // A waiter killed while it waited, whose pid runs again (pid 1 always does).
        let left = lock.with_file_name(format!("{WAIT_MARK}1"));
        std::fs::write(&left, b"").unwrap();
        assert!(!writer_waiting(&root) && !left.exists(), "a dead waiter's mark is removed, not counted");
    }

    #[test]
    fn the_marks_of_dead_waiters_go_when_the_lock_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        let data = ensure_data_dir(&root).unwrap();
        let (waiting, making) = (data.join(format!("{WAIT_MARK}1")), data.join(format!("{WAIT_MARK_MADE}1")));
        std::fs::write(&waiting, b"").unwrap();
        std::fs::write(&making, b"").unwrap();
        let lock = try_lock_for_writing(&root).unwrap().expect("no one holds it");
        assert!(!waiting.exists() && !making.exists());
        drop(lock);
        std::fs::write(&waiting, b"").unwrap();
        let _lock = lock_for_writing_unless(&root, &mut || {}, &|| false).unwrap().expect("taken");
        assert!(!waiting.exists());
    }
}
