//! Commits stored with some of their diffs left out, their files' contents
//! not in the repository (a partial clone fetches them only when checked
//! out), and when to read them again: once git has fetched objects since,
//! each whose diffs more of its files can now give (audit 253: they stayed
//! out for good, and searches of those lines missed them in silence).

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::Result;

use super::git::GitRepo;
use crate::store::{CommitStore, StoredCommit};

/// The log's keys: the commits waiting, as `sha:files` words, and the
/// repository's packs when they were last looked at.
const WAITING: &str = "log_diffs_unread";
const PACKS_SEEN: &str = "log_diffs_unread_packs";

pub(super) struct UnreadDiffs {
    were: BTreeMap<String, usize>,
    now: BTreeMap<String, usize>,
    packs_were: String,
    packs: String,
    /// Whether every commit that waited when the run began has been looked
    /// at against `packs` (none waited, or `readable_now` saw them all):
    /// only then are the packs recorded as seen. A run without diffs, or
    /// over part of the history (`--limit`, another branch), looks at
    /// none or some, and recorded, the rest waited for a fetch that had
    /// come (review 257).
    all_looked_at: bool,
}

impl UnreadDiffs {
    /// The commits waiting, of those still stored.
    pub(super) fn find(
        store: &dyn CommitStore,
        repo: &GitRepo,
        stored: &HashMap<String, StoredCommit>,
    ) -> Result<UnreadDiffs> {
        let text = store.log_value(WAITING)?.unwrap_or_default();
        let were: BTreeMap<String, usize> = text
            .split_whitespace()
            .filter_map(|w| w.split_once(':'))
            .filter_map(|(sha, n)| Some((sha.to_string(), n.parse().ok()?)))
            .collect();
        let now = were.iter().filter(|(sha, _)| stored.contains_key(*sha)).map(|(s, n)| (s.clone(), *n)).collect();
        let packs_were = store.log_value(PACKS_SEEN)?.unwrap_or_default();
        let packs = if were.is_empty() { String::new() } else { repo.packs_seen() };
        let all_looked_at = were.is_empty();
        Ok(UnreadDiffs { were, now, packs_were, packs, all_looked_at })
    }

    /// The commits of `history` waiting whose diffs more of their files can
    /// give now: none until git has fetched objects since the last look.
    pub(super) fn readable_now(
        &mut self,
        repo: &GitRepo,
        history: &[String],
        with_diff: bool,
    ) -> Result<HashSet<String>> {
        let mut readable = HashSet::new();
        if !with_diff || self.now.is_empty() || self.packs == self.packs_were {
            return Ok(readable);
        }
        let mut looked_at = 0;
        for sha in history {
            if let Some(&waiting) = self.now.get(sha) {
                looked_at += 1;
                let unread = repo.diffs_unread(sha)?;
                if unread < waiting || unread == 0 {
                    readable.insert(sha.clone());
                }
            }
        }
        self.all_looked_at = looked_at == self.now.len();
        Ok(readable)
    }

    /// Commit `sha` was read with `unread` of its diffs left out.
    pub(super) fn read(&mut self, sha: &str, unread: usize) {
        match unread {
            0 => self.now.remove(sha),
            n => self.now.insert(sha.to_string(), n),
        };
    }

    /// Record the commits waiting, where changed, and once the run has
    /// `finished`, the packs they wait on: a run stopped after a batch has
    /// commits it found readable still unread (review 258: recorded then,
    /// the next run never looked at them again).
    pub(super) fn record(&mut self, store: &mut dyn CommitStore, repo: &GitRepo, finished: bool) -> Result<()> {
        if self.now != self.were {
            let words: Vec<String> = self.now.iter().map(|(sha, n)| format!("{sha}:{n}")).collect();
            store.set_log_value(WAITING, &words.join(" "))?;
            self.were = self.now.clone();
        }
        if !finished || (!self.all_looked_at && !self.now.is_empty()) {
            return Ok(());
        }
        if self.packs.is_empty() && !self.now.is_empty() {
            self.packs = repo.packs_seen();
        }
        let packs = if self.now.is_empty() { String::new() } else { self.packs.clone() };
        if packs != self.packs_were {
            store.set_log_value(PACKS_SEEN, &packs)?;
            self.packs_were = packs;
        }
        Ok(())
    }
}
