//! The tables and columns an index must have, as both backends check them
//! when it is opened: one that lacks any is damage to rebuild from; and the
//! paths its files may have, as both check them in `verify`.

use std::collections::BTreeMap;

/// Each table's columns, by table name.
pub(super) type Tables = BTreeMap<String, Vec<String>>;

/// The first table or column of `expected` that `found` lacks, in SQLite's
/// words for it ("no such table: name_terms", "no such column:
/// chunks.names"), as both backends say it; None when it has them all.
pub(super) fn first_missing(expected: &Tables, found: &Tables) -> Option<String> {
    for (table, columns) in expected {
        let Some(has) = found.get(table) else { return Some(format!("no such table: {table}")) };
        if let Some(column) = columns.iter().find(|c| !has.contains(c)) {
            return Some(format!("no such column: {table}.{column}"));
        }
    }
    None
}

/// The problem an index has when a file path it holds is not one a hit may
/// carry (`project::is_below_root`): vecgrep stores none, so the index was
/// changed by hand or damaged, and a search printed it as a hit's file,
/// which every reader refuses (audit 225).
pub(super) fn stored_paths_problem<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut outside = paths.into_iter().filter(|p| !crate::project::is_below_root(p));
    let first = outside.next()?;
    let n = 1 + outside.count();
    Some(format!("{n} file paths are not paths below the root ({:?})", crate::project::shown::clipped(first, 80)))
}
