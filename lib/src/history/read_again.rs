//! Which stored commits of the log are read again, and why: a shallow
//! clone deepened past them, a reader that misread them, or a `git
//! replace` set or removed since they were read.

use std::collections::{HashMap, HashSet};

use super::git::GitRepo;
use crate::store::{CommitStore, StoreError, StoredCommit};

/// How commits are read into the log; a log read by an older reader has
/// the commits it misread read again. 1: a message beginning with blank
/// lines had an empty subject.
const LOG_READER: u32 = 1;

/// The stored commits to read again, and what to record once they are.
/// Those not in HEAD's history (another branch's) are kept for the run
/// that has them in its history (`log_read_again`): recorded as read, they
/// kept what was misread for good.
pub(super) struct ReadAgain {
    commits: HashSet<String>,
    pending_were: String,
    boundary: Vec<String>,
    boundary_was: Vec<String>,
    older_reader: bool,
    replacements: String,
    replacements_were: String,
}

impl ReadAgain {
    pub(super) fn find(
        store: &dyn CommitStore,
        repo: &GitRepo,
        stored: &HashMap<String, StoredCommit>,
    ) -> Result<ReadAgain, StoreError> {
        let mut commits = HashSet::new();
        // A commit at a shallow clone's boundary was stored as adding every
        // file it holds (its parent was missing); once the clone is deepened
        // past it, it is read again. One stored at the boundary but not
        // recorded there was stored touching nothing (before they were read
        // so): it is read again too.
        let boundary = repo.shallow_boundary();
        let boundary_was = store.log_shallow()?;
        let moved = boundary_was.iter().filter(|sha| !boundary.contains(sha));
        commits.extend(moved.chain(boundary.iter().filter(|sha| !boundary_was.contains(sha))).cloned());
        let older_reader = store.log_value("log_reader")?.and_then(|v| v.parse().ok()).unwrap_or(0) < LOG_READER;
        if older_reader {
            commits.extend(stored.iter().filter(|(_, c)| c.no_subject).map(|(sha, _)| sha.clone()));
        }
        // A commit git reads another in place of (`git replace`), or no
        // longer does: what was stored of it is the other's.
        let pairs = repo.replacements();
        let replacements: String = pairs.iter().map(|(a, b)| format!("{a}:{b} ")).collect();
        let replacements_were = store.log_value("log_replacements")?.unwrap_or_default();
        if replacements != replacements_were {
            let originals = |text: &str| {
                text.split_whitespace()
                    .filter_map(|p| p.split_once(':'))
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect::<HashSet<_>>()
            };
            let (now, were) = (originals(&replacements), originals(&replacements_were));
            commits.extend(now.symmetric_difference(&were).map(|(a, _)| a.clone()));
        }
        let pending_were = store.log_value("log_read_again")?.unwrap_or_default();
        commits.extend(pending_were.split_whitespace().map(str::to_string));
        commits.retain(|sha| stored.contains_key(sha));
        Ok(ReadAgain { commits, pending_were, boundary, boundary_was, older_reader, replacements, replacements_were })
    }

    pub(super) fn wants(&self, sha: &str) -> bool {
        self.commits.contains(sha)
    }

    /// Record how the log is read now, once the commits are read again: a
    /// run killed before leaves them to the next. Written only where it
    /// changed: a search with nothing new writes nothing.
    pub(super) fn record(&self, store: &mut dyn CommitStore, history: &[String]) -> Result<(), StoreError> {
        let read: HashSet<&str> = history.iter().map(String::as_str).collect();
        let mut pending: Vec<&str> =
            self.commits.iter().map(String::as_str).filter(|sha| !read.contains(sha)).collect();
        pending.sort_unstable();
        let pending = pending.join(" ");
        if pending != self.pending_were {
            store.set_log_value("log_read_again", &pending)?;
        }
        if self.boundary_was != self.boundary {
            store.set_log_shallow(&self.boundary)?;
        }
        if self.older_reader {
            store.set_log_value("log_reader", &LOG_READER.to_string())?;
        }
        if self.replacements != self.replacements_were {
            store.set_log_value("log_replacements", &self.replacements)?;
        }
        Ok(())
    }
}
