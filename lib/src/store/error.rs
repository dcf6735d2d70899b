//! Why the store could not answer, in the cases callers branch on.

use std::path::PathBuf;

use super::*;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why the store could not answer; the cases callers branch on have their
/// own variants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The project was never indexed.
    #[error("no index at {0}; run vg-index first")]
    Missing(PathBuf),
    /// A run under way is making the index (the first, or one that removed
    /// a damaged index), and has not written it yet (`open_for_searching`).
    #[error(
        "an index run under way is making the index at {0} and has not written it yet; search again once it has \
         (a search without --no-index waits for it)"
    )]
    BeingMade(PathBuf),
    /// The commit log was not made here (copied, or committed beside the
    /// code) and may say what no commit does: not read as it is.
    #[error(
        "the commit log in {0} was not made here (copied, or committed beside the code) and may say what no commit \
         does; vg-log reads it again from git"
    )]
    LogNotMadeHere(PathBuf),
    /// What the config asks for was left out of this build of vecgrep.
    #[error("this vecgrep was built without {0}")]
    NotBuilt(&'static str),
    /// A crash or a disk left the index unreadable; it is a cache, so it is rebuilt.
    #[error("the index at {path} is damaged ({cause}); {}", revisions::rebuild_advice(path))]
    Damaged { path: PathBuf, cause: String },
    /// Built by another version of vecgrep, whose tables have another shape.
    #[error("the index at {path} has schema {found}, this vecgrep uses {wanted}; {}", revisions::rebuild_advice(path))]
    OtherSchema { path: PathBuf, found: String, wanted: i64 },
    /// The write lock could not be taken (not: another run holds it, which is waited for).
    #[error("cannot lock {path}")]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file or directory of the index could not be created, opened or removed.
    #[error("cannot {action} {path}")]
    File {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: BoxError,
    },
    /// The backend failed while answering (busy past its timeout, a full disk, ...).
    #[error("index {path}")]
    Backend {
        path: PathBuf,
        #[source]
        source: BoxError,
    },
    /// The backend failed, in words of its own (a change it was making is rolled back).
    #[error(transparent)]
    Database(BoxError),
    /// A shared project's index that another checkout created, to be
    /// changed or cleared by one not told to adopt it (`store_adopt`).
    #[error(
        "{path} was created by {}; this checkout ({writer}) may not change or clear it unless told to (--store-adopt, or store_adopt = true in the global config or a trusted project config); searching it as it is needs no change (--no-index)",
        .creator.as_deref().unwrap_or("an older vecgrep, which kept no writers")
    )]
    NotWriter { path: PathBuf, creator: Option<String>, writer: String },
}

impl StoreError {
    /// Whether the connection the index was read through was closed under
    /// it (a shared database restarted): a fresh connection may answer.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            StoreError::Backend { source, .. } | StoreError::Database(source) => {
                postgres::connection_lost(source.as_ref())
            }
            _ => false,
        }
    }
}
