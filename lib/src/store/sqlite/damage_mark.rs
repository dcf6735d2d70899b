//! The damage a reader met in an index, left beside it for the next writer:
//! opening a file finds damage only in its header and schema, and a run
//! whose files are unchanged reads nothing else, so a corrupt page a search
//! read would otherwise pass every later run as an index up to date.

use std::path::{Path, PathBuf};

use super::SqliteIndex;
use crate::project::small_file;
use crate::store::StoreError;

/// The mark's name beside `index.db` (`index.db-damaged`, which
/// `sqlite::remove` removes with the index's files).
const SUFFIX: &str = "-damaged";

fn mark_of(index: &Path) -> PathBuf {
    let mut mark = index.as_os_str().to_owned();
    mark.push(SUFFIX);
    PathBuf::from(mark)
}

/// Leave `cause` beside the index at `index`, for whoever looks (the
/// writer reads only that it is there). Best effort: a reader that may not
/// write there (another user's index) still reports the damage.
pub(in crate::store) fn leave(index: &Path, cause: &str) {
    if !mark_of(index).exists() {
        let _ = small_file::replace_own(&mark_of(index), cause.as_bytes());
    }
}

/// Whether a mark of damage is left beside the index at `index`.
pub(in crate::store) fn is_left(index: &Path) -> bool {
    std::fs::symlink_metadata(mark_of(index)).is_ok()
}

impl SqliteIndex {
    /// This index, once checked whole when a reader left a mark of damage:
    /// the damage found is an error (`Damaged`, which a writer rebuilds),
    /// and a check that finds none drops the mark (what was read then has
    /// been rewritten since).
    pub(super) fn checked_if_marked(self) -> Result<SqliteIndex, StoreError> {
        let mark = mark_of(&self.path);
        if std::fs::symlink_metadata(&mark).is_err() {
            return Ok(self);
        }
        let (_, problems) = self.check()?;
        if let Some(problem) = problems.first() {
            return Err(StoreError::Damaged { path: self.path.clone(), cause: problem.clone() });
        }
        let _ = std::fs::remove_file(&mark);
        Ok(self)
    }
}
