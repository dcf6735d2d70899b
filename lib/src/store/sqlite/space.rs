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
    free > 0 && free * FREE_SHARE >= pages && free * page_size >= FREE_BYTES_AT_LEAST
}

impl SqliteIndex {
    /// Rewrite the file without its free pages when enough of it is free
    /// (`worth_compacting`); true when it was. VACUUM rewrites the file in
    /// place, in one transaction: the file keeps its inode (the mark of an
    /// index made here, `CHECKED_AS`), readers keep their snapshot, and one
    /// that fails (a full disk: it needs room for a copy) leaves the file as
    /// it was. Every table has an INTEGER PRIMARY KEY or none, so no row
    /// id changes, which the word and sign tables key on.
    pub(super) fn give_back_space(&self) -> bool {
        let pragma = |name: &str| self.conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
        let (Ok(pages), Ok(free), Ok(page_size)) =
            (pragma("page_count"), pragma("freelist_count"), pragma("page_size"))
        else {
            return false;
        };
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        worth_compacting(count(pages), count(free), count(page_size)) && self.conn.execute_batch("VACUUM").is_ok()
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

    #[test]
    fn removing_most_of_an_index_gives_its_space_back_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = empty_store(dir.path());
        let words = "retry the upload after a failure ".repeat(400);
        let writes: Vec<_> = (0..200).map(|i| file_of_words(&format!("f{i}.py"), &format!("{words} n{i}"))).collect();
        store.write_batch(&writes, &[], &[]).unwrap();
        let size = || std::fs::metadata(dir.path().join(".vecgrep/index.db")).unwrap().len();
        store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        let full = size();
        let removed: Vec<String> = (1..200).map(|i| format!("f{i}.py")).collect();
        store.write_batch(&[], &[], &removed).unwrap();
        assert!(store.give_back_space(), "most of the file was free");
        store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        assert!(size() * 4 < full, "{} of {full} bytes left", size());
        assert!(!store.give_back_space(), "nothing left to give back");
        let kept: i64 =
            store.conn.query_row("SELECT count(*) FROM files WHERE path = 'f0.py'", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 1);
    }
}
