//! How a live index stands: what vg-serve's `/status` and vg-mcp's `status`
//! tool report, defined once.

use serde::Serialize;

use super::{LiveIndex, StoreSlot};
use crate::store::{IndexStats, StoreError};

/// The spec's IndexStatus of the served index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum IndexingState {
    /// The index holds nothing yet, and no run is at work.
    Empty,
    /// An index run has files to embed (results cover what it has written
    /// so far), or the fill is giving chunks the model's vectors (`filling`:
    /// every served file is searchable meanwhile).
    Indexing,
    /// The index holds every served file as of the last walk.
    Ready,
    /// The last index run failed (`error` says why); the next refresh, or
    /// an index job, tries again.
    Aborted,
}

/// The live index as it stands.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
pub struct LiveStatus {
    pub status: IndexingState,
    /// Whether the background fill is giving chunks the model's vectors
    /// (`status` is then `indexing`; searches embed the candidates they
    /// need meanwhile).
    pub filling: bool,
    /// Files processed so far in the current (or last) run that had work:
    /// the index run, or while `filling` the fill.
    pub indexed: u64,
    /// Files that run has to process; null while it is still walking.
    pub total: Option<u64>,
    /// Files the index holds now.
    pub files: u64,
    /// Chunks the index holds now.
    pub chunks: u64,
    /// The spec's holes: chunks the embedder refused, which have no vector
    /// (found by their words only); the next run tries them again.
    pub holes: u64,
    /// Chunks awaiting the model's vector, found meanwhile by their words
    /// and static vectors (the fill, or a search that needs them, embeds them).
    pub pending: u64,
    /// Chunks with the model's vector.
    pub vectors: u64,
    /// The model queries and chunks are embedded with.
    pub embedder_model: String,
    /// vecgrep's version.
    pub version: String,
    /// The project root, absolute.
    pub root: String,
    /// The served paths, relative to the root ("" is the whole root).
    pub scope: Vec<String>,
    /// Why the last index run failed, or null.
    pub error: Option<String>,
    /// Why the index cannot be read now (damaged, or its database gone),
    /// or null: the counts above are then 0, not what the index holds, and
    /// a search fails until a run makes the index again. Null before the
    /// first run has made the index, and while a run is at work, which
    /// remakes it. Added within version 1.
    pub index_error: Option<String>,
    /// While an index run gives the chunks another static table's vectors
    /// (vecgrep's table was updated), how far it is; null otherwise.
    /// Searches read the previous vectors until it is done.
    pub recomputing_static: Option<super::Recomputing>,
    /// Whether searches rank words from memory (`search::WordTable`) for
    /// the index as it is now, rather than asking the index.
    pub words_in_memory: bool,
}

/// An index run of another process over a served index (`others_run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OthersRun {
    UnderWay,
    /// It stopped part-way (killed), leaving the index marked unfinished:
    /// this server's own run, asked for at once, completes it.
    Stopped,
}

impl OthersRun {
    /// What a search's results miss, in words.
    pub fn said(self) -> &'static str {
        match self {
            OthersRun::UnderWay => {
                "another process's index run is under way: results may miss the files it has not reached yet"
            }
            OthersRun::Stopped => {
                "another process's index run stopped part-way: results may miss files until this server's own run, begun now, completes it"
            }
        }
    }
}

/// What a search's results are when the last index run failed with `error`.
pub fn failed_run_note(error: &str) -> String {
    format!("the last index run failed ({error}): results come from the index as it stands")
}

/// The spec's state from a run's progress and what the index holds.
fn state(progress: &super::Progress, files: u64) -> IndexingState {
    if progress.indexing || (progress.filling && progress.error.is_none()) {
        IndexingState::Indexing
    } else if progress.error.is_some() {
        IndexingState::Aborted
    } else if files == 0 {
        IndexingState::Empty
    } else {
        IndexingState::Ready
    }
}

/// Why the index could not be read, in words.
enum Unread {
    /// There is no index: not made yet, or removed since.
    NotMade(String),
    Failed(String),
}

/// What the index holds, or why it cannot be read: its meta is read too,
/// as a table dropped under an open connection is found only when read.
fn read_stats(store: &mut StoreSlot, root: &crate::project::ProjectRoot) -> Result<IndexStats, Unread> {
    let said = |e: StoreError| format!("{:#}", anyhow::Error::new(e));
    match super::open_slot(store, root) {
        Err(e @ StoreError::Missing(_)) => return Err(Unread::NotMade(said(e))),
        Err(e) => return Err(Unread::Failed(said(e))),
        Ok(()) => {}
    }
    let Some(reader) = store.as_ref() else { return Err(Unread::NotMade(String::new())) };
    reader.meta().and_then(|_| reader.stats()).map_err(|e| Unread::Failed(said(e)))
}

impl LiveIndex {
    /// The status now; `store` is the caller's connection, opened if need be
    /// (before the first run has made the index, the counts are 0).
    pub fn status(&self, store: &mut StoreSlot) -> LiveStatus {
        let t = &self.target;
        let read = read_stats(store, &t.root);
        if read.is_err() {
            // The index may have been rebuilt under this connection: reopen next time.
            *store = None;
        }
        let progress = self.progress();
        let (stats, index_error) = match read {
            Ok(stats) => (Some(stats), None),
            Err(_) if progress.indexing => (None, None),
            // Before the first run has made the index there is none to read.
            Err(Unread::NotMade(_)) if !progress.ran => (None, None),
            Err(Unread::NotMade(why) | Unread::Failed(why)) => (None, Some(why)),
        };
        let files = stats.as_ref().map_or(0, |s| s.files);
        let (mut status, error) = (state(&progress, files), progress.error);
        // Another process's run over this index ("ready" read it as whole).
        if stats.as_ref().and_then(|_| self.others_run(store)).is_some() {
            status = IndexingState::Indexing;
        }
        LiveStatus {
            status,
            filling: progress.filling,
            indexed: progress.indexed,
            total: progress.total,
            files,
            chunks: stats.as_ref().map_or(0, |s| s.chunks),
            holes: stats.as_ref().map_or(0, |s| s.holes),
            pending: stats.as_ref().map_or(0, |s| s.pending),
            vectors: stats.as_ref().map_or(0, |s| s.vectors()),
            embedder_model: t.config.embedder_model.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            root: t.root.path.to_string_lossy().into_owned(),
            scope: t.scope_names(),
            error,
            index_error,
            recomputing_static: progress.recomputing,
            words_in_memory: false,
        }
    }

    /// An index run of another process under way over this index while this
    /// one runs none (a `vg-index --reindex` beside the server), which has
    /// marked it unfinished: results miss the files it has not reached.
    /// Only what can be known: the index's lock is held (by a process other
    /// than this one's own run or fill; a shared store's runs hold none
    /// here), and the server serves the whole project, whose own runs leave
    /// no mark. A server of part of a project leaves the mark itself, and
    /// any holder of the lock (its own refresh, vg-log, --verify) read as
    /// another's run: it says nothing; so does one whose own last run left
    /// the mark (files it could not read). A run of another process that
    /// stopped part-way (the mark, and no lock held) asks for a run of this
    /// server's at once: `ready` read it as whole until the next refresh,
    /// 30 s with `--refresh 30` (audit 204). Not after a failed run of its
    /// own, which the refresh tries again: polls would ask for one each.
    pub fn others_run(&self, store: &StoreSlot) -> Option<OthersRun> {
        let reader = store.as_deref()?;
        if super::lock(&self.state).own_mark {
            return None;
        }
        let progress = self.progress();
        let whole = crate::index::walks_the_whole_project(&self.target.walk, &self.target.paths);
        if !whole {
            return None;
        }
        // Said until the run that completes it ends: its answers are partial
        // too (review 206: only the first said so).
        if self.catching_up() {
            return Some(OthersRun::Stopped);
        }
        if progress.indexing || !reader.run_unfinished().unwrap_or(false) {
            return None;
        }
        // The lock of a run of this server's own, before it says it indexes,
        // is no other's (review 206: "another process's index run is under
        // way" of its own); one waiting for the lock holds none. Nor is a
        // round of its fill's; a fill paused for another writer holds none,
        // and that writer's run killed went unsaid until the next refresh
        // (review 208: the fill counted as a run of its own throughout).
        let own_fill_round = super::lock(&self.state).fill_round_under_way;
        if (self.own_run_under_way() && !progress.waiting) || own_fill_round {
            return None;
        }
        if crate::store::run_under_way(&self.target.root) {
            return Some(OthersRun::UnderWay);
        }
        if progress.error.is_some() {
            return None;
        }
        self.request_catch_up();
        Some(OthersRun::Stopped)
    }

    /// Whether a first run has ended, none is at work and the last one did
    /// not fail: a search sees every served file (a fill may still be giving
    /// chunks the model's vectors). After a failed run a search may miss
    /// files, or fail (no index could be made): not ready.
    pub fn is_ready(&self) -> bool {
        let progress = self.progress();
        progress.ran && !progress.indexing && progress.error.is_none()
    }
}
