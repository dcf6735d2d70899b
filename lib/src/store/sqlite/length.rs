//! Whether an index file holds every page its header counts: one cut short
//! (a copy taken while it grew, a truncation) read its missing pages as
//! nothing, and searches left out what they held in silence.

use std::io::Read;
use std::path::Path;

use super::sidecar;
use crate::store::StoreError;

/// The bytes of SQLite's header this check reads.
const HEADER: usize = 100;

/// An error when the file at `index` is shorter than its header says while
/// no write-ahead log or journal could hold the rest. A log with anything in
/// it may (a checkpoint cut short writes the header before the pages it
/// counts), and a header SQLite would not trust is left for SQLite to judge.
pub(super) fn check_whole(index: &Path) -> Result<(), StoreError> {
    let pending = |suffix| std::fs::metadata(sidecar(index, suffix)).is_ok_and(|m| m.len() > 0);
    if pending("-wal") || pending("-journal") {
        return Ok(());
    }
    let Some((len, header)) = read_header(index) else { return Ok(()) };
    match counted_bytes(&header) {
        Some(counted) if len < counted => Err(StoreError::Damaged {
            path: index.to_path_buf(),
            cause: format!("it is cut short: {len} bytes of the {counted} its header counts"),
        }),
        _ => Ok(()),
    }
}

/// The file's length and its first `HEADER` bytes; None for a file too
/// short to have them (a new one; SQLite says what is wrong with others).
fn read_header(index: &Path) -> Option<(u64, [u8; HEADER])> {
    let mut file = std::fs::File::open(index).ok()?;
    let len = file.metadata().ok()?.len();
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    Some((len, header))
}

/// The database's size by its header: pages times the page size, where the
/// count is valid (kept by a version of SQLite that writes it, as the
/// version-valid-for number equal to the change counter says).
fn counted_bytes(header: &[u8; HEADER]) -> Option<u64> {
    if &header[..16] != b"SQLite format 3\0" {
        return None;
    }
    let word = |at: usize| u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(word(28));
    (word(24) == word(92) && pages > 0).then_some(pages * page_size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{ProjectRoot, RootMarker};
    use crate::store::sqlite::SqliteIndex;
    use crate::store::{IndexMeta, IndexWriter};

    fn root_in(dir: &Path) -> ProjectRoot {
        ProjectRoot { path: dir.to_path_buf(), marker: RootMarker::None, shared: None }
    }

    #[test]
    fn an_index_cut_short_is_damaged_and_rebuilt_by_the_next_writer() {
        let dir = tempfile::tempdir().unwrap();
        let root = root_in(dir.path());
        let mut store = SqliteIndex::open_for_writing(&root, &mut |_| {}).unwrap();
        store.reset(&IndexMeta::for_tests()).unwrap();
        drop(store);
        let index = root.index_path();
        assert!(check_whole(&index).is_ok());
        let len = std::fs::metadata(&index).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&index).unwrap().set_len(len - 16_384).unwrap();
        let said = match SqliteIndex::open_for_reading(&root) {
            Err(StoreError::Damaged { cause, .. }) => cause,
            other => panic!("{:?}", other.map(|_| ())),
        };
        assert_eq!(said, format!("it is cut short: {} bytes of the {len} its header counts", len - 16_384));
        let mut notes = Vec::new();
        let store = SqliteIndex::open_for_writing(&root, &mut |m| notes.push(m.to_string())).unwrap();
        assert!(notes.iter().any(|n| n.contains("it is cut short")), "{notes:?}");
        drop(store);
        assert!(SqliteIndex::open_for_reading(&root).is_ok());
    }

    #[test]
    fn a_log_with_pages_in_it_or_a_header_sqlite_would_not_trust_is_left_to_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.db");
        let mut header = [0u8; HEADER];
        header[..16].copy_from_slice(b"SQLite format 3\0");
        header[16..18].copy_from_slice(&4096u16.to_be_bytes());
        header[28..32].copy_from_slice(&3u32.to_be_bytes());
        std::fs::write(&index, header).unwrap();
        assert!(check_whole(&index).is_err());
        std::fs::write(sidecar(&index, "-wal"), b"frames").unwrap();
        assert!(check_whole(&index).is_ok());
        std::fs::remove_file(sidecar(&index, "-wal")).unwrap();
        header[92..96].copy_from_slice(&1u32.to_be_bytes());
        std::fs::write(&index, header).unwrap();
        assert!(check_whole(&index).is_ok(), "a count from a version that did not keep it");
        std::fs::write(&index, b"short").unwrap();
        assert!(check_whole(&index).is_ok());
    }
}
