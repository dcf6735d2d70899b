//! The tables and columns an index of this schema must have, checked when
//! it is opened: one dropped by hand or by another program is damage to
//! rebuild from, found before a run writes half its work into the rest.

use std::sync::OnceLock;

use rusqlite::{Connection, OptionalExtension};

use super::codes::SCHEMA_CODES;
use super::schema::{SCHEMA, SCHEMA_COMMITS, SCHEMA_FTS, SCHEMA_JOBS, SCHEMA_KEYS};
use crate::store::parts::{self, Tables};

/// Which tables to expect.
#[derive(Clone, Copy)]
pub(in crate::store) enum Expected {
    /// Those every index of this schema was made with: an index written by
    /// an older vecgrep, and not opened for writing since, lacks the rest.
    Made,
    /// Those too that opening for writing adds (jobs, commits, codes,
    /// `files.ctime_ns`).
    Written,
}

impl Expected {
    fn tables(self) -> rusqlite::Result<&'static Tables> {
        static MADE: OnceLock<Tables> = OnceLock::new();
        static WRITTEN: OnceLock<Tables> = OnceLock::new();
        let (cell, schemas): (_, &[&str]) = match self {
            Expected::Made => (&MADE, &[SCHEMA, SCHEMA_FTS, SCHEMA_KEYS]),
            Expected::Written => {
                (&WRITTEN, &[SCHEMA, SCHEMA_FTS, SCHEMA_KEYS, SCHEMA_JOBS, SCHEMA_COMMITS, SCHEMA_CODES])
            }
        };
        if let Some(tables) = cell.get() {
            return Ok(tables);
        }
        let made = Connection::open_in_memory()?;
        for schema in schemas {
            made.execute_batch(schema)?;
        }
        if let Expected::Written = self {
            super::schema::add_ctime(&made)?;
        }
        let tables = tables_of(&made)?;
        Ok(cell.get_or_init(|| tables))
    }
}

/// The tables of `conn` (FTS5's own included) and the columns of those
/// that are not virtual. A virtual table's columns are fixed by its
/// definition, and asking for them would run FTS5's constructor, which
/// reads its settings: damage there is for a search or `--verify` to find.
fn tables_of(conn: &Connection) -> rusqlite::Result<Tables> {
    let mut stmt =
        conn.prepare("SELECT name, sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_master WHERE type = 'table'")?;
    let listed = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?)))?;
    let mut columns = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    let mut tables = Tables::new();
    for table in listed {
        let (name, is_virtual) = table?;
        let has = if is_virtual {
            Vec::new()
        } else {
            columns.query_map([&name], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        tables.insert(name, has);
    }
    Ok(tables)
}

/// The first table or column of `expected` that `conn` lacks, in SQLite's
/// words for it ("no such table: name_terms"); None when it has them all.
pub(super) fn first_missing(conn: &Connection, expected: Expected) -> rusqlite::Result<Option<String>> {
    Ok(parts::first_missing(expected.tables()?, &tables_of(conn)?))
}

/// A trigger or view in the index, which no index of vecgrep's has: one
/// another made (a committed index.db) to rewrite what a run stores or a
/// search reads (review 240). Damage, so that a writer makes the file anew.
pub(super) fn foreign_object(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let found: Option<(String, String)> = conn
        .query_row("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    Ok(found.map(|(kind, name)| format!("it holds a {kind} ({name:?}), which no index of vecgrep's has")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(schemas: &[&str]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for schema in schemas {
            conn.execute_batch(schema).unwrap();
        }
        conn
    }

    /// An index as opening it for writing leaves it.
    fn written() -> Connection {
        let conn = made(&[SCHEMA, SCHEMA_FTS, SCHEMA_KEYS, SCHEMA_JOBS, SCHEMA_COMMITS, SCHEMA_CODES]);
        super::super::schema::add_ctime(&conn).unwrap();
        conn
    }

    #[test]
    fn a_whole_index_lacks_nothing_and_each_dropped_part_is_named() {
        assert_eq!(first_missing(&written(), Expected::Written).unwrap(), None);
        let older = made(&[SCHEMA, SCHEMA_FTS, SCHEMA_KEYS]);
        assert_eq!(first_missing(&older, Expected::Made).unwrap(), None);
        assert_eq!(first_missing(&older, Expected::Written).unwrap().as_deref(), Some("no such table: commit_fts"));
        for (drop, missing) in [
            ("DROP TABLE name_terms", "no such table: name_terms"),
            ("DROP TABLE chunks_fts_config", "no such table: chunks_fts_config"),
            ("ALTER TABLE chunks DROP COLUMN names", "no such column: chunks.names"),
            ("ALTER TABLE commits DROP COLUMN body", "no such column: commits.body"),
            ("ALTER TABLE files DROP COLUMN ctime_ns", "no such column: files.ctime_ns"),
        ] {
            let conn = written();
            conn.execute_batch(drop).unwrap();
            assert_eq!(first_missing(&conn, Expected::Written).unwrap().as_deref(), Some(missing), "{drop}");
        }
    }
}
