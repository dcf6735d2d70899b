//! Choosing a root's backend and opening, clearing or rebuilding its index
//! and its commit log.

use crate::project::ProjectRoot;

use super::*;

/// Where `root`'s index is, in words safe to print (a shared one's URL may
/// hold a password, which is left out).
pub fn location(root: &ProjectRoot) -> String {
    match &root.shared {
        Some(shared) => postgres::describe(shared),
        None => root.index_path().display().to_string(),
    }
}

/// Why `root`'s local index cannot be brought up to date by this user,
/// when it exists and can be read: its directory or its file is not
/// writable to them (another user's checkout, a read-only mount). A search
/// then reads it as it is, as `--no-index` would, rather than failing in
/// SQLite's words ("attempt to write a readonly database").
pub fn unwritable_index(root: &ProjectRoot) -> Option<String> {
    let index = root.index_path();
    if root.shared.is_some() || !std::fs::symlink_metadata(&index).is_ok_and(|m| m.is_file()) {
        return None;
    }
    // One that cannot be read is not searched as it is: opening it says so.
    if !crate::project::small_file::may(&index, libc::R_OK) {
        return None;
    }
    let dir = root.data_dir();
    let closed = [dir, index].into_iter().find(|p| !crate::project::small_file::may(p, libc::W_OK))?;
    Some(format!("{} is not writable by this user", closed.display()))
}

/// The model the vectors of `index` were made by, when it is not `model`:
/// a query of one model scored against vectors of another finds nonsense.
pub fn other_model(index: &dyn IndexReader, model: &str) -> Result<Option<String>, StoreError> {
    Ok(index.meta()?.map(|m| m.model).filter(|m| m != model))
}

/// Open an existing index of `root` to read it (searching, stats).
pub fn open_for_reading(root: &ProjectRoot) -> Result<Box<dyn IndexReader>, StoreError> {
    if root.shared.is_some() {
        return postgres::open_for_reading(root);
    }
    lock::refuse_file_in_the_way(root)?;
    lock::own_data_dir(root)?;
    Ok(Box::new(sqlite::SqliteIndex::open_for_reading(root)?))
}

/// `open_for_reading`, for a search of the index as it is: an index a run
/// is making is said so (`BeingMade`), not "run vg-index first" to a user
/// whose run is under way.
/// An index file that no code run has written to (made by `vg-log` alone,
/// for the commit log it keeps too) is missing as well: it was searched as
/// an empty index, and said "no results" of code never indexed (audit 212).
pub fn open_for_searching(root: &ProjectRoot) -> Result<Box<dyn IndexReader>, StoreError> {
    // A shared one too, made by a first run that failed before any file
    // (review 215: "incomplete", where a local one is missing).
    let unwritten = match open_for_reading(root) {
        Ok(index) if index.meta()?.is_some() => return Ok(index),
        Ok(_) => true,
        Err(StoreError::Missing(_)) => false,
        Err(e) => return Err(e),
    };
    let place = std::path::PathBuf::from(location(root));
    match (run_under_way(root), unwritten) {
        (true, _) => Err(StoreError::BeingMade(place)),
        // Its file is there: "no index at" it alone read as a wrong path
        // (review 221).
        (false, true) => Err(StoreError::Missing(format!("{}, which no code run has written", place.display()).into())),
        (false, false) => Err(StoreError::Missing(place)),
    }
}

/// Open the index of `root` for writing, creating it if needed. A damaged
/// index or one of another schema is cache, not data: it is removed and
/// rebuilt, and `rebuilt` hears why. Take [`lock_for_writing`] first.
pub fn open_for_writing(root: &ProjectRoot, rebuilt: &mut dyn FnMut(&str)) -> Result<Box<dyn IndexWriter>, StoreError> {
    if root.shared.is_some() {
        return postgres::open_for_writing(root, rebuilt);
    }
    Ok(Box::new(sqlite::SqliteIndex::open_for_writing(root, rebuilt)?))
}

/// Open the index of `root` to write beside a running index run (an index
/// job's state): created when missing, but an index that is damaged or of
/// another schema is an error here, not rebuilt, since a run may hold it.
pub fn open_in_place(root: &ProjectRoot) -> Result<Box<dyn IndexWriter>, StoreError> {
    if root.shared.is_some() {
        return postgres::open_in_place(root);
    }
    Ok(Box::new(sqlite::SqliteIndex::open_in_place(root)?))
}

/// Why `root`'s index may not be searched as it is (`--no-index`, or an
/// index this process cannot write): it was made elsewhere and not checked
/// here since (`IndexReader::checked_here`), and may keep text no file
/// holds (review 238). None when it may, or when there is none to search.
pub fn unchecked_index(root: &ProjectRoot) -> Option<String> {
    let index = open_for_reading(root).ok()?;
    match index.checked_here() {
        Ok(false) => Some(format!(
            "the index {} was not made here, nor checked here since it came (copied, or committed beside the code), \
             and may show text its files do not hold; vg-index checks it against them",
            root.index_path().display()
        )),
        _ => None,
    }
}

/// The checkout's own index, `.vecgrep/index.db`, even when its code index
/// is a shared store's: it holds the project's commit log (whose writer
/// takes this index's lock, not the store's: one that could not reach
/// Postgres refused to update a log kept on disk) and the checkout's own
/// revisions.
pub fn checkout_root(root: &ProjectRoot) -> ProjectRoot {
    ProjectRoot { shared: None, ..root.clone() }
}

/// Open the commit log of `root`'s index to bring it up to date (vg-log),
/// as [`open_for_writing`] opens the index. Take [`lock_for_writing`] first.
pub fn open_log_for_writing(
    root: &ProjectRoot,
    rebuilt: &mut dyn FnMut(&str),
) -> Result<Box<dyn CommitStore>, StoreError> {
    let mut index = sqlite::SqliteIndex::open_for_writing(root, rebuilt)?;
    index.forget_a_log_not_made_here()?;
    Ok(Box::new(index))
}

/// Open the commit log of an existing index to search it as it is;
/// `StoreError::Missing` when the index, or its log, was never written.
pub fn open_log_for_reading(root: &ProjectRoot) -> Result<Box<dyn CommitStore>, StoreError> {
    lock::own_data_dir(root)?;
    let index = sqlite::SqliteIndex::open_for_reading(root)?;
    if !index.has_log()? {
        return Err(StoreError::Missing(root.index_path()));
    }
    if !index.log_made_here()? {
        return Err(StoreError::LogNotMadeHere(root.index_path()));
    }
    Ok(Box::new(index))
}

/// Whether `root` has an index: its file here, or its project's in the
/// shared database.
pub(crate) fn has_index(root: &ProjectRoot) -> Result<bool, StoreError> {
    match &root.shared {
        Some(shared) => postgres::exists(shared),
        None => Ok(std::fs::symlink_metadata(root.index_path()).is_ok()),
    }
}

/// Remove `root`'s index, the one a run that began at `since_ms` (the
/// epoch's milliseconds) made and gave up before writing to (a declined
/// prompt): it holds nothing, not even a commit log (a shared index's log
/// is the checkout's own file). A shared index's claim that run made goes too.
pub(crate) fn remove_made_index(root: &ProjectRoot, since_ms: i64) -> Result<bool, StoreError> {
    match &root.shared {
        Some(shared) => postgres::remove_made(shared, since_ms),
        None => sqlite::remove(root),
    }
}

/// Remove the index of `root` and of its revisions (ClearCacheResetsIndex); its config stays.
pub fn clear(root: &ProjectRoot) -> Result<bool, StoreError> {
    let mut removed = false;
    if let Some(shared) = &root.shared {
        removed |= postgres::remove(shared)?;
    }
    removed |= sqlite::remove(root)?;
    for revision in revisions(root)? {
        removed |= forget_revision(root, &revision.sha)?;
    }
    // The checkout's own revisions too, kept apart from a shared index's;
    // and those other checkouts of the shared project indexed.
    if let Some(shared) = &root.shared {
        let own = checkout_root(root);
        for revision in revisions(&own)? {
            removed |= forget_revision(&own, &revision.sha)?;
        }
        for sha in postgres::revision_shas(shared)? {
            removed |= forget_revision(root, &sha)?;
        }
    }
    Ok(removed)
}

/// `e` as damage to `root`'s local index when SQLite said, in words of its
/// own, that the file is corrupt (a write that met a damaged page): the
/// error then says where, and how to rebuild it. Any other error as it is.
pub fn name_damage(root: &ProjectRoot, e: StoreError) -> StoreError {
    match e {
        StoreError::Database(source) if root.shared.is_none() => {
            match source.downcast_ref::<rusqlite::Error>().filter(|e| sqlite::is_corruption(e)) {
                Some(corrupt) => {
                    sqlite::leave_damage_mark(&root.index_path(), &corrupt.to_string());
                    StoreError::Damaged { path: root.index_path(), cause: corrupt.to_string() }
                }
                None => StoreError::Database(source),
            }
        }
        e => e,
    }
}

/// `store` emptied for a rebuild (`IndexWriter::reset`). A local index too
/// damaged to empty is removed and made again, as one found damaged when
/// opened is: it is a cache, and `--reindex` must rebuild it whatever
/// state it is in. `rebuilt` hears why.
pub fn reset_or_remake(
    root: &ProjectRoot,
    mut store: Box<dyn IndexWriter>,
    meta: &IndexMeta,
    rebuilt: &mut dyn FnMut(&str),
) -> Result<Box<dyn IndexWriter>, StoreError> {
    match store.reset(meta).map_err(|e| name_damage(root, e)) {
        Ok(()) => Ok(store),
        Err(StoreError::Damaged { path, cause }) if root.shared.is_none() => {
            rebuilt(&format!("rebuilding the index at {}: it is damaged: {cause}", path.display()));
            // The connection goes before the files it holds open.
            drop(store);
            sqlite::remove(root)?;
            let mut store = open_for_writing(root, rebuilt)?;
            store.reset(meta)?;
            Ok(store)
        }
        Err(e) => Err(e),
    }
}
