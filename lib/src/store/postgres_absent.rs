//! The shared store in a build without it (the `shared-store` feature
//! off): a root whose config names a `store_url` is refused with the
//! reason, as ripgrep without PCRE2 refuses `--pcre2`.

use super::{IndexReader, IndexWriter, StoreError};
use crate::project::{ProjectRoot, SharedIndex};

/// What this build lacks, as `StoreError::NotBuilt` says it.
const MISSING: &str = "the shared store (the shared-store feature); a store_url cannot be used";

/// No connection of this build can be lost: it makes none.
pub(super) fn connection_lost(_error: &(dyn std::error::Error + 'static)) -> bool {
    false
}

pub(super) fn describe(shared: &SharedIndex) -> String {
    format!("project {} in a postgres database this build cannot reach", shared.project)
}

pub(super) fn open_for_reading(_root: &ProjectRoot) -> Result<Box<dyn IndexReader>, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn open_for_writing(
    _root: &ProjectRoot,
    _rebuilt: &mut dyn FnMut(&str),
) -> Result<Box<dyn IndexWriter>, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn open_in_place(_root: &ProjectRoot) -> Result<Box<dyn IndexWriter>, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn lock(
    _shared: &SharedIndex,
    _waiting: &mut dyn FnMut(),
    _give_up: &dyn Fn() -> bool,
) -> Result<Option<Box<dyn Send>>, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn remove(_shared: &SharedIndex) -> Result<bool, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn remove_made(_shared: &SharedIndex, _since_ms: i64) -> Result<bool, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn revision_shas(_shared: &SharedIndex) -> Result<Vec<String>, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

pub(super) fn exists(_shared: &SharedIndex) -> Result<bool, StoreError> {
    Err(StoreError::NotBuilt(MISSING))
}

#[cfg(test)]
mod tests {
    use crate::project::{ProjectRoot, RootMarker, SharedIndex};
    use crate::store::{lock_for_writing, open_for_reading, open_for_writing};

    #[test]
    fn a_store_url_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let shared =
            SharedIndex { url: "postgres:///db".into(), project: "p".into(), writer: "w".into(), adopt: false };
        let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: Some(shared) };
        let said = |e: crate::store::StoreError| e.to_string();
        let reading = open_for_reading(&root).err().map(said).unwrap();
        assert_eq!(
            reading,
            "this vecgrep was built without the shared store (the shared-store feature); a store_url cannot be used"
        );
        assert!(open_for_writing(&root, &mut |_| {})
            .err()
            .map(said)
            .unwrap()
            .contains("built without the shared store"));
        assert!(lock_for_writing(&root, &mut || {})
            .err()
            .map(said)
            .unwrap()
            .contains("built without the shared store"));
        // Without a store_url, the local index works as ever.
        let local = ProjectRoot { shared: None, ..root };
        assert!(open_for_writing(&local, &mut |_| {}).is_ok());
    }
}
