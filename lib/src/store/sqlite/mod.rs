//! The SQLite backend: one database per project root at
//! `<root>/.vecgrep/index.db`, with vectors scored by sqlite-vec and words
//! by FTS5.
//!
//! A file's row and its chunks change together in one transaction, so a kill
//! at any moment leaves each file either fully old or fully new. WAL mode lets
//! searches read while an index run writes; `index.lock` makes writers take
//! turns.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use super::{ensure_data_dir, ChunkId, IndexReader, Scope, StoreError};
use crate::project::ProjectRoot;

mod codes;
mod commits;
mod damage_mark;
mod jobs;
mod length;
mod parts;
mod read;
mod schema;
mod space;
mod verify;
mod write;

use codes::SCHEMA_CODES;
pub use codes::{first_pass_size, CODES_FROM};
pub(super) use damage_mark::leave as leave_damage_mark;
use schema::{SCHEMA, SCHEMA_COMMITS, SCHEMA_FTS, SCHEMA_JOBS, SCHEMA_KEYS, SCHEMA_VERSION};

/// An SQLite index, open through one connection.
pub(super) struct SqliteIndex {
    conn: Connection,
    path: PathBuf,
    /// The file `path` was when it was opened (`file_identity`, taken just
    /// before): a file put in its place since is another index.
    opened: Option<FileIdentity>,
    /// Whether the structure was checked already (`check_structure`): once
    /// per connection, as a damaged page stays damaged and a server's
    /// rankings of an older snapshot miss chunks replaced since, often.
    structure_checked: std::cell::Cell<bool>,
    /// Whether the `-shm` file was made by this connection: any reader of
    /// an index in WAL mode makes one while it reads, and a look at the
    /// index's size (`--stats`) counted the 32 KiB of its own (audit 250).
    shm_made_here: bool,
}

/// A file's device and inode number.
pub type FileIdentity = (u64, u64);

/// What file is at `path` now, if any.
/// The meta key that says which file the index was checked as
/// (`IndexReader::checked_here`): its device and inode, which a copy, a
/// clone's checkout or a restore does not keep, and no one can choose.
const CHECKED_AS: &str = "checked_as";

/// `CHECKED_AS`'s value for a file of identity `id`.
fn checked_as(id: FileIdentity) -> String {
    format!("{}:{}", id.0, id.1)
}

impl SqliteIndex {
    /// The value a mark of this file (`CHECKED_AS`, `LOG_MADE_AS`) holds
    /// when it was set here; None where the file has no identity.
    fn mark_here(&self) -> Option<String> {
        self.opened.map(checked_as)
    }

    /// Whether meta `key` holds this file's mark (`mark_here`).
    fn marked_here(&self, key: &str) -> Result<bool, StoreError> {
        let here = self.mark_here();
        Ok(here.is_some() && crate::store::IndexReader::meta_value(self, key)? == here)
    }
}

pub fn file_identity(path: &Path) -> Option<FileIdentity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

static REGISTER_VEC: Once = Once::new();

/// Up to this many files, a scope's chunks are asked for file by file;
/// past it, reading every chunk's file once is quicker.
const FILES_ASKED_ONE_BY_ONE: usize = 2_000;

/// Make sqlite-vec's functions available on every connection opened after this.
#[allow(unsafe_code)]
fn register_sqlite_vec() {
    REGISTER_VEC.call_once(|| {
        // SAFETY: sqlite3_vec_init has the signature of an SQLite extension
        // entry point; sqlite3_auto_extension expects exactly that function.
        unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            let entry: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(entry));
        }
    });
}

/// SQLite's failure where the system refused it, with the system's reason:
/// "disk I/O error: File too large (os error 27)".
#[derive(Debug, thiserror::Error)]
#[error("{sqlite}: {system}")]
struct RefusedBySystem {
    sqlite: String,
    system: std::io::Error,
}

/// Remove the database files of `root`'s index; whether there was one.
pub(super) fn remove(root: &ProjectRoot) -> Result<bool, StoreError> {
    let dir = super::lock::own_data_dir(root)?;
    let mut removed = false;
    for name in ["index.db", "index.db-wal", "index.db-shm", "index.db-journal", "index.db-damaged"] {
        let p = dir.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => removed |= name == "index.db",
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::File { action: "remove", path: p, source: e.into() }),
        }
    }
    Ok(removed)
}

/// The index file at `path`, if there is one, is a plain file of its own:
/// a link (vecgrep never makes one; a repository may ship one to another
/// project's index or another program's database) is damage, which a
/// writer rebuilds by removing the link, never what it leads to; anything
/// else but a file (a directory) is in the way.
fn check_own_file(path: &Path) -> Result<(), StoreError> {
    // SQLite's companions too: a `-shm` link made every open fail in words
    // that named the index, and nothing rebuilt it.
    for suffix in ["-wal", "-shm", "-journal"] {
        let companion = sidecar(path, suffix);
        let Ok(meta) = std::fs::symlink_metadata(&companion) else { continue };
        let name = companion.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if meta.is_dir() {
            // Never removed for the index: a directory may hold anything.
            let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file; remove it");
            return Err(StoreError::File { action: "use", path: companion, source: source.into() });
        }
        if !meta.is_file() {
            let what = if meta.file_type().is_symlink() { "a link" } else { "not a regular file" };
            let cause = format!("its {name} is {what}, which vecgrep never makes nor follows");
            return Err(StoreError::Damaged { path: path.to_path_buf(), cause });
        }
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(StoreError::Damaged {
            path: path.to_path_buf(),
            cause: "it is a link, which vecgrep never makes nor follows".into(),
        }),
        Ok(meta) if meta.is_dir() => {
            // Never removed for the index, as a companion's: it may hold anything.
            let why = "a directory, not an index file; vecgrep removes no directory for one (remove it yourself)";
            let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
            Err(StoreError::File { action: "open", path: path.to_path_buf(), source: source.into() })
        }
        // A FIFO, a socket or a device holds nothing to lose: damage that
        // a writer rebuilds, as a link is (every tool said only "not a
        // regular file", and nothing rebuilt it: audit 225).
        Ok(meta) if !meta.is_file() => Err(StoreError::Damaged {
            path: path.to_path_buf(),
            cause: "it is not a regular file, which vecgrep never makes".into(),
        }),
        // SQLite says only "unable to open database file", twice over. Asked
        // of access(2), never by opening it: closing any descriptor of the
        // file drops the POSIX locks this process's connections hold on it.
        Ok(_) if !crate::project::small_file::may(path, libc::R_OK) => {
            let source = std::io::Error::from_raw_os_error(libc::EACCES);
            Err(StoreError::File { action: "read", path: path.to_path_buf(), source: source.into() })
        }
        _ => Ok(()),
    }
}

/// The file beside the index whose name ends with `suffix` (`-wal`, `-shm`).
pub(super) fn sidecar(index: &Path, suffix: &str) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The index's `-wal` and `-shm` files, where they are this user's but
/// not writable while the index is: given the index's mode. SQLite makes
/// them with the mode of the index file, so a look at an index made
/// read-only for a while (`--stats`) left them read-only for good, and
/// every later run and search failed ("attempt to write a readonly
/// database") until someone removed them. Another user's are left alone.
fn writable_sidecars(index: &Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = std::fs::metadata(index) else { return };
    let me = crate::project::effective_uid();
    if meta.uid() != me || meta.permissions().mode() & 0o200 == 0 {
        return;
    }
    for suffix in ["-wal", "-shm"] {
        let sidecar = sidecar(index, suffix);
        let Ok(side) = std::fs::symlink_metadata(&sidecar) else { continue };
        if side.is_file() && side.uid() == me && side.permissions().mode() & 0o200 == 0 {
            let _ =
                std::fs::set_permissions(sidecar, std::fs::Permissions::from_mode(meta.permissions().mode() & 0o777));
        }
    }
}

/// A connection to read the index at `path`: read-write, so that WAL
/// recovery can run if a writer was killed; read-only and without locks
/// where this user may not write beside it (another user's checkout, a
/// read-only mount), where WAL mode could not make its shared-memory file.
pub(super) fn connect_for_reading(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    match conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)) {
        Err(e) if matches!(e.sqlite_error_code(), Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen)) => {
            drop(conn);
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(format!("file:{}?immutable=1", uri_path(path)), flags)
        }
        _ => Ok(conn),
    }
}

/// `path` as the path of a `file:` URI: bytes other than unreserved ones
/// and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// How long a connection waits for another's lock before it gives up.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    // An index.db may be another's making (committed beside the code): its
    // schema runs nothing here (review 240: a trigger rewrote each chunk a
    // run stored, past every check of what it kept).
    use rusqlite::config::DbConfig;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// An error SQLite raised on its own, not about a particular index.
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(Box::new(e))
    }
}

impl SqliteIndex {
    pub(super) fn open_for_writing(
        root: &ProjectRoot,
        rebuilt: &mut dyn FnMut(&str),
    ) -> Result<SqliteIndex, StoreError> {
        register_sqlite_vec();
        ensure_data_dir(root)?;
        let path = root.index_path();
        writable_sidecars(&path);
        match Self::try_open_rw(&path).and_then(SqliteIndex::checked_if_marked) {
            Ok(store) => Ok(store),
            Err(e) => {
                let cause = match &e {
                    StoreError::OtherSchema { found, .. } => format!("it was built with schema {found}"),
                    StoreError::Damaged { cause, .. } => format!("it is damaged: {cause}"),
                    _ => return Err(e),
                };
                rebuilt(&format!("rebuilding the index at {}: {cause}", path.display()));
                remove(root)?;
                Self::try_open_rw(&path)
            }
        }
    }

    fn try_open_rw(path: &Path) -> Result<SqliteIndex, StoreError> {
        check_own_file(path)?;
        length::check_whole(path)?;
        let opened = file_identity(path);
        let shm_made_here = !sidecar(path, "-shm").exists();
        let conn = Connection::open(path).map_err(|e| StoreError::File {
            action: "open",
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        // A new file has no identity until it is made.
        let opened = opened.or_else(|| file_identity(path));
        let store = SqliteIndex {
            conn,
            path: path.to_path_buf(),
            opened,
            structure_checked: Default::default(),
            shm_made_here,
        };
        let damaged = |e| store.damaged(e);
        configure(&store.conn).map_err(damaged)?;
        // A chunk row (vector, text, key) is a little over 2 KB: a 4 KB page
        // holds one and wastes the rest, a 16 KB page seven. Only a new
        // database takes the setting; it must precede WAL mode.
        store.conn.pragma_update(None, "page_size", 16384).map_err(damaged)?;
        enter_wal(&store.conn).map_err(damaged)?;
        store.conn.pragma_update(None, "synchronous", "NORMAL").map_err(damaged)?;
        // One writer at a time creates the tables, so that another opening
        // the same new file never sees them half made.
        let tx = Transaction::new_unchecked(&store.conn, TransactionBehavior::Immediate).map_err(damaged)?;
        store.create_or_check_schema()?;
        tx.commit().map_err(damaged)?;
        Ok(store)
    }

    fn create_or_check_schema(&self) -> Result<(), StoreError> {
        let damaged = |e| self.damaged(e);
        if self.has_table("meta")? {
            self.check_schema()?;
            self.conn.execute_batch(SCHEMA_JOBS).map_err(damaged)?;
            self.conn.execute_batch(SCHEMA_COMMITS).map_err(damaged)?;
            self.conn.execute_batch(SCHEMA_CODES).map_err(damaged)?;
            schema::add_ctime(&self.conn).map_err(damaged)?;
            self.check_parts(parts::Expected::Written)?;
            return self.check_no_orphans_unless_made_here();
        }
        // Tables but no `meta`: another program's database, not an index
        // begun (a first run makes its tables in one transaction).
        if self.has_any_table()? {
            return Err(StoreError::Damaged {
                path: self.path.clone(),
                cause: "it is no index of vecgrep's: a database with other tables".into(),
            });
        }
        for schema in [SCHEMA, SCHEMA_FTS, SCHEMA_KEYS, SCHEMA_JOBS, SCHEMA_COMMITS, SCHEMA_CODES] {
            self.conn.execute_batch(schema).map_err(damaged)?;
        }
        schema::add_ctime(&self.conn).map_err(damaged)?;
        self.conn
            .execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?1)", [SCHEMA_VERSION.to_string()])
            .map_err(damaged)?;
        self.conn
            .execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?1)", [super::first_generation().to_string()])
            .map_err(damaged)?;
        // Made here: it holds nothing that was not.
        if let Some(here) = self.mark_here() {
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", [CHECKED_AS, &here]).map_err(damaged)?;
        }
        Ok(())
    }

    pub(super) fn open_in_place(root: &ProjectRoot) -> Result<SqliteIndex, StoreError> {
        register_sqlite_vec();
        ensure_data_dir(root)?;
        Self::try_open_rw(&root.index_path())
    }

    pub(super) fn open_for_reading(root: &ProjectRoot) -> Result<SqliteIndex, StoreError> {
        register_sqlite_vec();
        let path = root.index_path();
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(StoreError::Missing(path));
        }
        check_own_file(&path)?;
        length::check_whole(&path)?;
        writable_sidecars(&path);
        let opened = file_identity(&path);
        let shm_made_here = !sidecar(&path, "-shm").exists();
        let conn = connect_for_reading(&path).map_err(|e| match std::fs::symlink_metadata(&path) {
            // Removed since it was looked for (a --clear-cache meanwhile):
            // missing, as it would have been a moment before.
            Err(_) => StoreError::Missing(path.clone()),
            Ok(_) => StoreError::File { action: "open", path: path.clone(), source: e.into() },
        })?;
        configure(&conn)?;
        let store = SqliteIndex { conn, path, opened, structure_checked: Default::default(), shm_made_here };
        // A first run killed after making the file and before writing its
        // schema leaves no index yet, not a damaged one.
        if !store.has_table("meta")? {
            return Err(StoreError::Missing(store.path));
        }
        store.check_schema()?;
        store.check_parts(parts::Expected::Made)?;
        Ok(store)
    }

    /// Damage when a table or column the index's schema has is missing.
    /// An index not made here whose chunks belong to no file is damage: a
    /// run gave them to the next file it added, whose id they held, and
    /// showed their text as its lines (review 241). An index made here has
    /// none (its foreign keys delete them); one from elsewhere is asked once.
    fn check_no_orphans_unless_made_here(&self) -> Result<(), StoreError> {
        if crate::store::IndexReader::checked_here(self)? {
            return Ok(());
        }
        // Word rows too: a new chunk took the words of its id's (review 242).
        let orphans = [
            (
                "SELECT EXISTS (SELECT 1 FROM chunks WHERE file_id NOT IN (SELECT id FROM files))",
                "chunks belong to no file",
            ),
            (
                "SELECT EXISTS (SELECT 1 FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks))",
                "word entries belong to no chunk",
            ),
        ];
        for (sql, cause) in orphans {
            let found: bool = self.conn.query_row(sql, [], |r| r.get(0)).map_err(|e| self.damaged(e))?;
            if found {
                return Err(StoreError::Damaged { path: self.path.clone(), cause: cause.into() });
            }
        }
        Ok(())
    }

    pub(super) fn check_parts(&self, expected: parts::Expected) -> Result<(), StoreError> {
        if let Some(cause) = parts::foreign_object(&self.conn).map_err(|e| self.damaged(e))? {
            return Err(StoreError::Damaged { path: self.path.clone(), cause });
        }
        match parts::first_missing(&self.conn, expected).map_err(|e| self.damaged(e))? {
            Some(cause) => Err(StoreError::Damaged { path: self.path.clone(), cause }),
            None => Ok(()),
        }
    }

    fn check_schema(&self) -> Result<(), StoreError> {
        match self.meta_value("schema")? {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
            other => Err(StoreError::OtherSchema {
                path: self.path.clone(),
                found: other.unwrap_or_else(|| "none".into()),
                wanted: SCHEMA_VERSION,
            }),
        }
    }

    /// A failure while reading or writing this index: damage when SQLite
    /// says the file is corrupt, else the error with the index's path and,
    /// where the system refused a read or write, the system's reason.
    fn damaged(&self, e: rusqlite::Error) -> StoreError {
        // Pages SQLite finds corrupt are marked for the next writer; a table
        // missing (found on every open) or a query vector of another size
        // (another model's question) are not damage a run could miss.
        let pages = matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseCorrupt) | Some(ErrorCode::NotADatabase))
            || is_text_not_utf8(&e);
        if pages {
            self.damage(e.to_string())
        } else if is_corruption(&e) {
            StoreError::Damaged { path: self.path.clone(), cause: e.to_string() }
        } else if let Some(system) = self.system_error(&e) {
            let source = Box::new(RefusedBySystem { sqlite: e.to_string(), system });
            StoreError::Backend { path: self.path.clone(), source }
        } else {
            StoreError::Backend { path: self.path.clone(), source: Box::new(e) }
        }
    }

    /// Damage found in this index, marked for the next writer to check,
    /// unless the file was replaced since this connection opened it (what
    /// was read is gone, and the file there now is another index).
    fn damage(&self, cause: String) -> StoreError {
        if !self.replaced() {
            damage_mark::leave(&self.path, &cause);
        }
        StoreError::Damaged { path: self.path.clone(), cause }
    }

    /// The system's error behind SQLite's failed read, write or open (a full
    /// disk, a file size limit), where SQLite kept one: SQLite's own words
    /// for it are only "disk I/O error" or "database or disk is full".
    #[allow(unsafe_code)]
    fn system_error(&self, e: &rusqlite::Error) -> Option<std::io::Error> {
        use rusqlite::ErrorCode::{CannotOpen, DiskFull, SystemIoFailure};
        if !matches!(e.sqlite_error_code(), Some(CannotOpen | DiskFull | SystemIoFailure)) {
            return None;
        }
        // SAFETY: the handle is this connection's own and open while `self`
        // is; sqlite3_system_errno only reads the last error kept in it.
        let errno = unsafe { rusqlite::ffi::sqlite3_system_errno(self.conn.handle()) };
        (errno != 0).then(|| std::io::Error::from_raw_os_error(errno))
    }

    /// Whether the table `name` exists: an index written by an older
    /// version, and not opened for writing since, lacks the newer ones.
    fn has_table(&self, name: &str) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1")
            .and_then(|mut s| s.query_row([name], |r| r.get::<_, i64>(0)))
            .map(|n| n > 0)
            .map_err(|e| self.damaged(e))
    }

    /// Whether the database holds any table of its own (SQLite's aside).
    fn has_any_table(&self) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) != 'sqlite_'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.damaged(e))
    }

    /// One value of the `meta` table.
    /// The ids of the files in `scope`; None when it is the whole index.
    pub(super) fn admitted_files(&self, scope: &Scope) -> Result<Option<HashSet<i64>>, StoreError> {
        if scope.admits_all() {
            return Ok(None);
        }
        let damaged = |e| self.damaged(e);
        let mut stmt = self.conn.prepare_cached("SELECT id, path FROM files").map_err(damaged)?;
        let mut rows = stmt.query([]).map_err(damaged)?;
        let mut admitted = HashSet::new();
        while let Some(row) = rows.next().map_err(damaged)? {
            if scope.admits(row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?) {
                admitted.insert(row.get(0)?);
            }
        }
        Ok(Some(admitted))
    }

    /// The chunks of the files in `scope`; None when it is the whole index.
    /// A narrow scope asks for its files' chunks; a wide one reads every
    /// chunk's file once.
    pub(super) fn chunks_in(&self, scope: &Scope) -> Result<Option<HashSet<ChunkId>>, StoreError> {
        let Some(files) = self.admitted_files(scope)? else { return Ok(None) };
        let damaged = |e| self.damaged(e);
        let mut chunks = HashSet::new();
        if files.len() <= FILES_ASKED_ONE_BY_ONE {
            let mut stmt = self.conn.prepare_cached("SELECT id FROM chunks WHERE file_id = ?1").map_err(damaged)?;
            for file in &files {
                let ids = stmt.query_map([file], |r| r.get(0)).map_err(damaged)?;
                for id in ids {
                    chunks.insert(id.map_err(damaged)?);
                }
            }
        } else {
            let mut stmt = self.conn.prepare_cached("SELECT id, file_id FROM chunks").map_err(damaged)?;
            let mut rows = stmt.query([]).map_err(damaged)?;
            while let Some(row) = rows.next().map_err(damaged)? {
                if files.contains(&row.get::<_, i64>(1).map_err(damaged)?) {
                    chunks.insert(row.get(0).map_err(damaged)?);
                }
            }
        }
        Ok(Some(chunks))
    }
}

/// Put the database in WAL mode. Two connections may race to convert a new
/// file (an index run and an index job's record); the conversion takes its
/// lock without SQLite's busy handler, so the loser waits here and finds
/// the work done.
fn enter_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if mode.eq_ignore_ascii_case("wal") {
            return Ok(());
        }
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

pub(super) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) | Some(rusqlite::ErrorCode::NotADatabase)
    ) || is_bad_vector(e)
        || is_missing_part(e)
        || is_text_not_utf8(e)
}

/// Stored text that is not UTF-8: vecgrep writes none, so a byte of it was
/// damaged where SQLite's own checks do not look (`texts_not_utf8`).
fn is_text_not_utf8(e: &rusqlite::Error) -> bool {
    match e {
        rusqlite::Error::Utf8Error(..) => true,
        rusqlite::Error::FromSqlConversionFailure(_, _, cause) => cause.is::<std::str::Utf8Error>(),
        _ => false,
    }
}

/// A table or column of the schema the index says it has is not there
/// (dropped by hand, or a file of another program): damage to rebuild
/// from, not a query to fix. Only an index whose schema version was read
/// (`check_schema`) is queried at all.
fn is_missing_part(e: &rusqlite::Error) -> bool {
    let text = e.to_string();
    ["no such table: ", "no such column: "].iter().any(|words| text.starts_with(words))
}

/// sqlite-vec's refusal of a stored vector that is not one of the index's
/// (a blob of another size): every vecgrep writes only whole vectors of one
/// size, so one it cannot read is damage, not a failed query. It reports
/// these as a plain SQL error, told apart by its words ("dimension
/// mistmatch", sic, and the blob checks; a blob it cannot take for float32
/// it tries to read as JSON, which vecgrep never writes).
fn is_bad_vector(e: &rusqlite::Error) -> bool {
    let text = e.to_string();
    ["Vector dimension mis", "invalid float32 vector", "JSON array parsing error"]
        .iter()
        .any(|words| text.contains(words))
}

/// Add `n` to the counter `key` in meta, which starts from 0 when absent.
pub(super) fn add_to_meta(tx: &Transaction<'_>, key: &str, n: i64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO meta VALUES (?1, CAST(?2 AS TEXT))
         ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + ?2 AS TEXT)",
        rusqlite::params![key, n],
    )?;
    Ok(())
}

/// Vectors as stored: little-endian f32, the layout sqlite-vec reads.
fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The inverse of `vector_to_blob`, without a copy; trailing bytes short of
/// an f32 are ignored.
fn blob_floats(blob: &[u8]) -> impl Iterator<Item = f32> + '_ {
    blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        ChunkId, ChunkWrite, FileState, FileWrite, IndexMeta, IndexReader, IndexWriter, Scope, VectorCounts,
    };

    /// A new index in `dir`, reset as vg-index would leave it.
    pub(super) fn empty_store(dir: &Path) -> SqliteIndex {
        let root = ProjectRoot { path: dir.to_path_buf(), marker: crate::project::RootMarker::None, shared: None };
        let mut store = SqliteIndex::open_for_writing(&root, &mut |_| {}).unwrap();
        store.reset(&IndexMeta::for_tests()).unwrap();
        store
    }

    #[test]
    fn writers_opening_a_new_index_at_once_all_find_it_whole() {
        for _ in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let root =
                ProjectRoot { path: dir.path().to_path_buf(), marker: crate::project::RootMarker::None, shared: None };
            let barrier = std::sync::Barrier::new(6);
            std::thread::scope(|s| {
                let opened: Vec<_> = (0..6)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            SqliteIndex::open_in_place(&root).map(|_| ())
                        })
                    })
                    .collect();
                for o in opened {
                    o.join().unwrap().expect("every opener gets the index");
                }
            });
        }
    }

    /// A file of one chunk whose words are `words`.
    pub(super) fn file_of_words(rel: &str, words: &str) -> FileWrite {
        file_with_names(rel, &[""], words)
    }

    /// A file with a chunk per name (and `words` in each).
    pub(super) fn file_with_names(rel: &str, names: &[&str], words: &str) -> FileWrite {
        let chunks = names
            .iter()
            .enumerate()
            .map(|(i, n)| ChunkWrite {
                chunk: crate::chunk::Chunk { start_line: i + 1, end_line: i + 1, text: words.to_string() },
                vector: Some(vec![1.0; crate::embed::DIMS]),
                static_vector: Some(vec![1.0; crate::embed::DIMS]),
                around: String::new(),
                embed_key: [0; 16],
                names: n.to_string(),
                words: crate::terms::chunk_words(words, ""),
            })
            .collect::<Vec<_>>();
        FileWrite {
            rel: rel.to_string(),
            state: FileState {
                size: words.len() as u64,
                mtime_ns: 1,
                hash: crate::store::content_hash(rel, &chunks),
                ctime_ns: 1,
            },
            chunks,
            copied: 0,
            tokens: 0,
            pending: 0,
        }
    }

    #[test]
    fn chunks_without_the_models_vector_are_found_by_static_vectors_and_filled_by_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let axis = |i: usize| {
            let mut v = vec![0.0; crate::embed::DIMS];
            v[i] = 1.0;
            v
        };
        let mut write = file_with_names("a.py", &["one", "two"], "body");
        write.chunks[0].around = "class A:".into();
        for (i, c) in write.chunks.iter_mut().enumerate() {
            c.vector = None;
            c.static_vector = Some(axis(i));
        }
        write.pending = 2;
        store.write_batch(&[write], &[], &[]).unwrap();
        let stats = store.stats().unwrap();
        assert_eq!((store.unembedded_count().unwrap(), stats.holes, stats.pending), (2, 0, 2), "pending, not holes");
        let file = |holes: bool| store.files(holes).unwrap().remove("a.py").map(|f| (f.chunks, f.holes));
        assert_eq!((file(true), file(false)), (Some((2, Some(2))), Some((2, None))), "a full run's count, or none");
        let ids: Vec<ChunkId> =
            store.nearest_static(&axis(1), &Scope::default(), 10).unwrap().into_iter().map(|r| r.0).collect();
        assert_eq!(ids.len(), 2);
        assert!(store.nearest_chunks(&axis(1), &Scope::default(), 10).unwrap().is_empty(), "no model vectors yet");
        assert_eq!(
            (store.vector_counts().unwrap().vectors, store.static_cosine(ids[0], &axis(1)).unwrap()),
            (0, Some(1.0))
        );
        // A full run stores the model's vectors (and keeps the static ones).
        let generation = store.generation().unwrap();
        let mut filled = file_with_names("a.py", &["one", "two"], "body");
        filled.chunks[0].vector = Some(axis(3));
        filled.chunks[1].vector = None;
        filled.pending = 1;
        store.write_batch(&[filled], &[], &[]).unwrap();
        assert!(store.generation().unwrap() > generation, "readers holding vectors see the change");
        assert_eq!(store.nearest_chunks(&axis(3), &Scope::default(), 10).unwrap().len(), 1);
        assert_eq!(store.vector_counts().unwrap(), VectorCounts { vectors: 1, unembedded: 1 });
    }

    #[test]
    fn vectors_survive_the_blob_round_trip() {
        let v = vec![0.0, -1.5, f32::MIN_POSITIVE, 3.25e7];
        assert_eq!(blob_floats(&vector_to_blob(&v)).collect::<Vec<_>>(), v);
    }

    #[test]
    fn a_word_search_keeps_to_its_scope_narrow_or_wide() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let files = FILES_ASKED_ONE_BY_ONE + 100;
        let writes: Vec<FileWrite> =
            (0..files).map(|i| file_of_words(&format!("d{}/f{i}.rs", i % 3), &"retry ".repeat(1 + i % 7))).collect();
        store.write_batch(&writes, &[], &[]).unwrap();
        let every = store.best_word_matches(r#""retry""#, &Scope::default(), usize::MAX).unwrap();
        assert_eq!(every.len(), files);
        let places = store.places(&every.iter().map(|m| m.0).collect::<Vec<_>>()).unwrap();
        let few: HashSet<String> = ["d0/f0.rs", "d1/f4.rs", "d2/f8.rs"].map(String::from).into();
        for scope in [
            Scope { prefixes: vec!["d1".into()], files: None },
            Scope { prefixes: vec!["d0".into(), "d2".into()], files: None },
            Scope { prefixes: Vec::new(), files: Some(few) },
        ] {
            // The best 50, and those as good as the 50th (`keep_best_with_ties`).
            let inside: Vec<(ChunkId, f64)> = every.iter().filter(|m| scope.admits(&places[&m.0].0)).copied().collect();
            let last = inside.get(49).map_or(f64::INFINITY, |m| m.1);
            let expected: Vec<(ChunkId, f64)> = inside.iter().take_while(|m| m.1 <= last).copied().collect();
            assert_eq!(store.best_word_matches(r#""retry""#, &scope, 50).unwrap(), expected, "{scope:?}");
        }
    }
}
