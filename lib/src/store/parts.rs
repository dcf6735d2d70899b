//! The tables and columns an index must have, as both backends check them
//! when it is opened: one that lacks any is damage to rebuild from.

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
