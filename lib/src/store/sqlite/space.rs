//! Giving back the space a run freed: SQLite keeps a deleted row's pages in
//! the file for later writes, so an index whose project lost a vendored
//! tree, or that `--reindex` rebuilt smaller, stayed its largest size
//! forever (audit 237).

use super::SqliteIndex;

/// Compacted when at least this share (1/N) of the file is free pages. An
/// index that runs keep changing is about a tenth free between runs (the
/// word index merged, the sign codes rewritten; the 29 repositories of SB,
/// each indexed twice: 4–11%), which must not set off a rewrite each time.
const FREE_SHARE: u64 = 4;

/// ... and the free pages come to at least this much: a smaller file is not
/// worth a rewrite.
const FREE_BYTES_AT_LEAST: u64 = 1 << 20;

/// Whether a file of `pages` pages of `page_size` bytes, `free` of them
/// unused, is worth rewriting to give the free ones back.
fn worth_compacting(pages: u64, free: u64, page_size: u64) -> bool {
    free > 0 && free.saturating_mul(FREE_SHARE) >= pages && free.saturating_mul(page_size) >= FREE_BYTES_AT_LEAST
}

/// The meta key holding the free pages when a rewrite failed: a run tries
/// again only once deletions since have freed `FREE_BYTES_AT_LEAST` more,
/// and not at every run, each reading the whole file to fail (review 246).
/// A refusal for want of room on the disks is not kept: that check is
/// cheap, and is made again at every run (review 247: one full disk kept
/// an index at its largest for good).
const FAILED_AT_FREE: &str = "compact_failed_at_free";

impl SqliteIndex {
    /// Rewrite the file without its free pages when enough of it is free
    /// (`worth_compacting`) and the disks hold the copies VACUUM makes; true
    /// when it was. VACUUM rewrites the file in place, in one transaction:
    /// the file keeps its inode (the mark of an index made here,
    /// `CHECKED_AS`), readers keep their snapshot, and one that fails leaves
    /// the file as it was. Every rowid table but `meta` has an INTEGER
    /// PRIMARY KEY, so no row id that the word and sign tables key on
    /// changes (`tests::every_row_id_that_rows_refer_to_is_kept`).
    pub(super) fn give_back_space(&self) -> bool {
        let pragma = |name: &str| self.conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
        let (Ok(pages), Ok(free), Ok(page_size)) =
            (pragma("page_count"), pragma("freelist_count"), pragma("page_size"))
        else {
            return false;
        };
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        let (pages, free, page_size) = (count(pages), count(free), count(page_size));
        // Read from the file, which may be another's making: any number.
        let failed_at = self.meta_value(FAILED_AT_FREE).ok().flatten().and_then(|v| v.parse::<u64>().ok());
        // Pages reused since the failure lower the mark: what counts is
        // what is freed after the lowest point (review 248).
        if failed_at.is_some_and(|at| free < at) {
            self.mark_failed_at(free);
        }
        let freed_since = |at: u64| free.saturating_sub(at).saturating_mul(page_size) >= FREE_BYTES_AT_LEAST;
        if !worth_compacting(pages, free, page_size) || failed_at.is_some_and(|at| !freed_since(at.min(free))) {
            return false;
        }
        if !room_for_copies(&self.path, pages.saturating_sub(free).saturating_mul(page_size)) {
            return false;
        }
        if self.conn.execute_batch("VACUUM").is_err() {
            self.mark_failed_at(free);
            return false;
        }
        let _ = self.conn.execute("DELETE FROM meta WHERE key = ?1", [FAILED_AT_FREE]);
        // VACUUM wrote the whole file through the write-ahead log, which a
        // connection still open elsewhere (a server) keeps at that size:
        // the index took twice its room, not less (review 246). Moved back
        // now unless a reader holds it, briefly waited for.
        let _ = self.conn.busy_timeout(std::time::Duration::from_millis(500));
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
        let _ = self.conn.busy_timeout(super::BUSY_TIMEOUT);
        true
    }

    /// Keep `free` as the free pages when a rewrite failed (`FAILED_AT_FREE`).
    fn mark_failed_at(&self, free: u64) {
        let _ = self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", [FAILED_AT_FREE, &free.to_string()]);
    }

    fn meta_value(&self, key: &str) -> rusqlite::Result<Option<String>> {
        use rusqlite::OptionalExtension;
        self.conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()
    }
}

/// Whether the disk of the index at `index` and the temporary directory
/// hold what VACUUM writes for `live` bytes: a copy in a temporary file,
/// and the whole file again in the write-ahead log. Unknown counts as room.
fn room_for_copies(index: &std::path::Path, live: u64) -> bool {
    let index_dir = index.parent().unwrap_or(index);
    let Some(temp_dir) = sqlite_temp_dir() else { return available(index_dir).is_none_or(|a| a >= live) };
    let (at_index, at_temp) = (available(index_dir), available(&temp_dir));
    match (at_index, at_temp) {
        (Some(a), Some(_)) if same_disk(index_dir, &temp_dir) => a >= live.saturating_mul(2),
        _ => at_index.is_none_or(|a| a >= live) && at_temp.is_none_or(|b| b >= live),
    }
}

/// Where SQLite puts its temporary files (`unixTempFileDir`): the first
/// of SQLITE_TMPDIR, TMPDIR, /var/tmp, /usr/tmp and /tmp that is a
/// directory it may write in.
fn sqlite_temp_dir() -> Option<std::path::PathBuf> {
    temp_dir_of(|name| std::env::var_os(name))
}

/// `sqlite_temp_dir` with the environment's variables read by `var`.
fn temp_dir_of(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
    let named = ["SQLITE_TMPDIR", "TMPDIR"].into_iter().filter_map(var).map(std::path::PathBuf::from);
    let fixed = ["/var/tmp", "/usr/tmp", "/tmp"].into_iter().map(std::path::PathBuf::from);
    named.chain(fixed).find(|dir| may_write_in(dir))
}

/// Whether `dir` is a directory this process may make files in.
#[allow(unsafe_code)]
fn may_write_in(dir: &std::path::Path) -> bool {
    let Some(path) = c_path(dir) else { return false };
    // SAFETY: `path` is a NUL-ended path; access reads it and nothing else.
    dir.is_dir() && unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) } == 0
}

/// The bytes an unprivileged writer may still write on the disk of `dir`.
#[allow(unsafe_code)]
fn available(dir: &std::path::Path) -> Option<u64> {
    let dir = c_path(dir)?;
    // SAFETY: statvfs is plain data, for which all zeroes is a value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is a NUL-ended path, and `stat` is ours, of the size statvfs fills.
    let done = unsafe { libc::statvfs(dir.as_ptr(), &mut stat) } == 0;
    #[allow(clippy::unnecessary_cast)] // the fields' widths differ between platforms
    done.then(|| (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
}

/// `path` as the C functions take it; None when it holds a NUL byte.
fn c_path(path: &std::path::Path) -> Option<std::ffi::CString> {
    std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())).ok()
}

/// Whether `a` and `b` are on one filesystem.
fn same_disk(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::tests::{empty_store, file_of_words};
    use crate::store::IndexWriter;

    #[test]
    fn only_a_file_largely_free_is_compacted() {
        let page = 4096;
        assert!(!worth_compacting(1000, 0, page));
        // A tenth free, as between the runs of an index in use.
        assert!(!worth_compacting(10_000, 1_000, page));
        assert!(worth_compacting(10_000, 2_500, page));
        // A quarter of a small file is too little to rewrite for.
        assert!(!worth_compacting(400, 100, page));
        assert!(worth_compacting(1024, 256, page));
    }

    /// VACUUM renumbers the rows of a rowid table without an INTEGER
    /// PRIMARY KEY; chunks, word rows, codes and commits are found by theirs.
    #[test]
    fn every_row_id_that_rows_refer_to_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = empty_store(dir.path());
        store.conn.execute_batch(super::super::SCHEMA_COMMITS).unwrap();
        let tables: Vec<(String, String)> = {
            let mut q = store
                .conn
                .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
                .unwrap();
            q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
        };
        assert!(tables.iter().any(|(name, _)| name == "chunks_fts_data"), "{tables:?}");
        for (name, sql) in tables.iter().filter(|(name, _)| name != "meta") {
            let keyed: i64 = store
                .conn
                .query_row(
                    &format!("SELECT count(*) FROM pragma_table_info('{name}') WHERE pk = 1 AND type = 'INTEGER'"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(keyed == 1 || sql.contains("WITHOUT ROWID"), "{name}: {sql}");
        }
    }

    /// An index in `dir` of files f0.py to f199.py, 13 KB of words each.
    fn store_of_200_files(dir: &std::path::Path) -> SqliteIndex {
        let mut store = empty_store(dir);
        let words = "retry the upload after a failure ".repeat(400);
        let writes: Vec<_> = (0..200).map(|i| file_of_words(&format!("f{i}.py"), &format!("{words} n{i}"))).collect();
        store.write_batch(&writes, &[], &[]).unwrap();
        store
    }

    #[test]
    fn the_copy_is_made_where_sqlite_makes_it() {
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().to_path_buf();
        let var = |set: &'static str| {
            let named = named.clone();
            move |name: &str| (name == set).then(|| named.clone().into_os_string())
        };
        assert_eq!(temp_dir_of(var("SQLITE_TMPDIR")), Some(named.clone()));
        assert_eq!(temp_dir_of(var("TMPDIR")), Some(named.clone()));
        // No variable, or one naming no directory: /var/tmp first, as SQLite.
        let fixed = temp_dir_of(|_| None);
        assert!(fixed
            .as_deref()
            .is_some_and(|d| ["/var/tmp", "/usr/tmp", "/tmp"].iter().any(|f| d == std::path::Path::new(f))));
        let gone = named.join("gone");
        assert_eq!(temp_dir_of(|name| (name == "TMPDIR").then(|| gone.clone().into_os_string())), fixed);
    }

    #[test]
    fn a_rewrite_needs_room_for_its_copies() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.db");
        assert!(room_for_copies(&index, 4096));
        assert!(!room_for_copies(&index, u64::MAX / 4), "no disk holds 4 EiB");
    }

    /// `bytes` of pages made free: a table of them made and dropped.
    fn free_pages_of(store: &SqliteIndex, bytes: usize) {
        let blob = vec![7u8; 64 * 1024];
        store.conn.execute_batch("CREATE TABLE scratch (b BLOB)").unwrap();
        for _ in 0..bytes / blob.len() {
            store.conn.execute("INSERT INTO scratch VALUES (?1)", [&blob]).unwrap();
        }
        store.conn.execute_batch("DROP TABLE scratch").unwrap();
    }

    fn free_pages(store: &SqliteIndex) -> u64 {
        store.conn.query_row("PRAGMA freelist_count", [], |r| r.get::<_, i64>(0)).unwrap() as u64
    }

    #[test]
    fn a_rewrite_that_failed_is_tried_again_only_when_a_megabyte_more_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_of_200_files(dir.path());
        free_pages_of(&store, 4 << 20);
        let free = free_pages(&store);
        // As a rewrite that failed would have left it.
        store.mark_failed_at(free);
        assert!(!store.give_back_space(), "nothing more is free");
        // A number of another's making (the file may come from elsewhere)
        // is no panic, and is lowered to what is free now.
        store
            .conn
            .execute("INSERT OR REPLACE INTO meta VALUES (?1, ?2)", [FAILED_AT_FREE, &u64::MAX.to_string()])
            .unwrap();
        assert!(!store.give_back_space());
        assert_eq!(store.meta_value(FAILED_AT_FREE).unwrap(), Some(free.to_string()));
        // A megabyte more (a table made of the free pages and 1.25 MiB
        // more, then dropped): far from twice as many pages, which the
        // first form waited for.
        free_pages_of(&store, (4 << 20) + (5 << 18));
        let now = free_pages(&store);
        assert!(now < 2 * free, "{free} then {now} pages free");
        assert!(store.give_back_space(), "a megabyte more is free");
        assert_eq!(store.meta_value(FAILED_AT_FREE).unwrap(), None);
    }

    #[test]
    fn removing_most_of_an_index_gives_its_space_back_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = store_of_200_files(dir.path());
        let size = || std::fs::metadata(dir.path().join(".vecgrep/index.db")).unwrap().len();
        store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        let full = size();
        let removed: Vec<String> = (1..200).map(|i| format!("f{i}.py")).collect();
        store.write_batch(&[], &[], &removed).unwrap();
        // A reader elsewhere (a server), idle: the rewrite still leaves no
        // write-ahead log the size of the file behind it.
        let reader = rusqlite::Connection::open(dir.path().join(".vecgrep/index.db")).unwrap();
        let _: i64 = reader.query_row("SELECT count(*) FROM files", [], |r| r.get(0)).unwrap();
        assert!(store.give_back_space(), "most of the file was free");
        let wal = std::fs::metadata(dir.path().join(".vecgrep/index.db-wal")).map_or(0, |m| m.len());
        assert!(size() * 4 < full && wal * 4 < full, "{} and {wal} of {full} bytes left", size());
        drop(reader);
        assert!(!store.give_back_space(), "nothing left to give back");
        let kept: i64 =
            store.conn.query_row("SELECT count(*) FROM files WHERE path = 'f0.py'", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 1);
    }
}
