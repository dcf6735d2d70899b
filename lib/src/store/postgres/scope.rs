//! A search's scope as Postgres statements take it: a filter on `files f`
//! and its five parameters, for the vector search and for finding the
//! files a search in a directory keeps to.

use postgres::types::ToSql;

use super::PgIndex;
use crate::store::{Scope, StoreError};

/// The parameters of `filter`, in its order.
pub(super) struct ScopeParams {
    /// The whole root: no prefix to match.
    whole: bool,
    /// Paths a file may be, and directories (with their slash) it may be under.
    exact: Vec<String>,
    under: Vec<String>,
    /// No filtered walk: any file under the prefixes.
    unfiltered: bool,
    files: Vec<String>,
}

impl ScopeParams {
    pub(super) fn of(scope: &Scope) -> ScopeParams {
        let whole = scope.spans_root();
        let (exact, under) = if whole {
            (Vec::new(), Vec::new())
        } else {
            (scope.prefixes.clone(), scope.prefixes.iter().map(|p| format!("{p}/")).collect())
        };
        let files = scope.files.iter().flatten().cloned().collect();
        ScopeParams { whole, exact, under, unfiltered: scope.files.is_none(), files }
    }

    /// Whether the scope admits every file.
    pub(super) fn admits_all(&self) -> bool {
        self.whole && self.unfiltered
    }

    /// The condition on `f.path`, its parameters numbered from `first`.
    pub(super) fn filter(first: usize) -> String {
        let [whole, exact, under, unfiltered, files] = [0, 1, 2, 3, 4].map(|i| first + i);
        format!(
            "(${whole} OR f.path = ANY(${exact}) OR EXISTS (SELECT 1 FROM unnest(${under}::text[]) p WHERE starts_with(f.path, p)))
             AND (${unfiltered} OR f.path = ANY(${files}))"
        )
    }

    /// The parameters, in `filter`'s order.
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 5] {
        [&self.whole, &self.exact, &self.under, &self.unfiltered, &self.files]
    }
}

impl PgIndex {
    /// The ids of the files in `scope`, and how many chunks they have.
    pub(super) fn files_in(&self, scope: &ScopeParams) -> Result<(Vec<i64>, i64), StoreError> {
        let sql = format!("SELECT f.id FROM files f WHERE {}", ScopeParams::filter(1));
        let files: Vec<i64> = self.rows(&sql, &scope.params())?.iter().map(|r| r.get(0)).collect();
        let chunks = self.row("SELECT count(*) FROM chunks WHERE file_id = ANY($1)", &[&files])?;
        Ok((files, chunks.map_or(0, |r| r.get(0))))
    }
}
