//! Bringing the commit log up to date: the commits of HEAD's history that
//! the log lacks (or lacks the diffs of) are read, embedded and stored, a
//! batch at a time, so a kill loses at most one batch.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};

use super::git::{CommitData, GitRepo};
use super::read_again::ReadAgain;
use super::unread_diffs::UnreadDiffs;
use crate::embed::Embedder;
use crate::store::{CommitStore, CommitWrite, PieceKind, PieceWrite, StoredCommit};
use crate::terms::terms;

/// Commits stored per transaction.
const BATCH: usize = 32;

/// How often a run keeps the commits whose diffs wait on a fetch.
const KEEP_WAITING_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogSummary {
    /// Commits in the history searched.
    pub commits: usize,
    /// Commits this run had to read and store.
    pub to_store: u64,
    /// Commits read and stored by this run.
    pub added: u64,
    /// Of those, commits stored before and read again: for their diffs
    /// (`--with-diff` after a run without), or a deepened shallow clone's.
    pub reread: u64,
    /// Pieces embedded by this run.
    pub embedded: u64,
    /// Pieces stored without a vector (their embedding failed).
    pub holes: u64,
    /// Changed files of the commits stored whose diff was left out, their
    /// contents not in the repository (a partial clone lacks old blobs).
    pub unread_diffs: u64,
    /// Whether the log was emptied first (another model).
    pub rebuilt: bool,
    /// Whether the run stopped before it stored every commit it had to
    /// (`LogObserver::cancelled`): those it stored are kept.
    pub stopped: bool,
    pub seconds: f64,
}

/// Hears how an update goes.
pub trait LogObserver {
    /// A line worth telling a person.
    fn note(&mut self, message: &str);
    /// `done` of `total` commits stored.
    fn progress(&mut self, done: usize, total: usize);
    /// Whether to stop after the batch in hand (Ctrl-C, SIGTERM).
    fn cancelled(&self) -> bool {
        false
    }
}

/// The embedder, loaded only when something needs embedding.
pub type LoadEmbedder<'a> = &'a mut dyn FnMut() -> Result<Box<dyn Embedder>>;

/// Store every commit of `history` that `store` lacks, with its diff
/// pieces when `with_diff` (also for commits stored without them).
/// `model` names the embedder; a log embedded with another is emptied first.
pub fn update_log(
    store: &mut dyn CommitStore,
    repo: &GitRepo,
    history: &[String],
    with_diff: bool,
    model: &str,
    load: LoadEmbedder<'_>,
    observer: &mut dyn LogObserver,
) -> Result<LogSummary> {
    let started = Instant::now();
    let mut summary = LogSummary { commits: history.len(), ..LogSummary::default() };
    let had = store.log_model()?;
    let mut loaded = None;
    // A history with nothing in it (HEAD has no commits yet) has nothing to
    // embed with the new model: the log is left for the branch it was of.
    if had.as_deref() != Some(model) && !history.is_empty() {
        // Loaded before the log is emptied: a model that cannot be had (a
        // name mistyped, assets missing) leaves the log as it was.
        match load_for_the_log(load) {
            Ok(embedder) => loaded = Some(embedder),
            Err(_) if observer.cancelled() => return Ok(stopped(summary, started)),
            Err(e) => return Err(e),
        }
        if let Some(m) = had.filter(|_| store.log_counts().is_ok_and(|(commits, ..)| commits > 0)) {
            observer.note(&format!("rebuilding the commit log: it was embedded with {m}, not {model}"));
            summary.rebuilt = true;
        }
        store.reset_log(model)?;
    }
    let stored = store.stored_commits()?;
    let again = ReadAgain::find(&*store, repo, &stored)?;
    let mut unread = UnreadDiffs::find(&*store, repo, &stored)?;
    let fetched = unread.readable_now(repo, history, with_diff)?;
    let todo: Vec<&String> = history
        .iter()
        .filter(|sha| needs_storing(&stored, sha, with_diff) || again.wants(sha) || fetched.contains(*sha))
        .collect();
    summary.to_store = todo.len() as u64;
    if todo.is_empty() {
        again.record(store, history)?;
        unread.record(store, repo, true)?;
        return Ok(LogSummary { seconds: started.elapsed().as_secs_f64(), ..summary });
    }
    let mut embedder = match loaded.map_or_else(|| load_for_the_log(load), Ok) {
        Ok(embedder) => embedder,
        // A remote embedder's probe, given up when told to stop.
        Err(_) if observer.cancelled() => return Ok(stopped(summary, started)),
        Err(e) => return Err(e),
    };
    let mut last_kept = Instant::now();
    for (n, batch) in todo.chunks(BATCH).enumerate() {
        if observer.cancelled() {
            unread.record(store, repo, false)?;
            return Ok(stopped(summary, started));
        }
        let mut batch_summary = summary.clone();
        let mut left_out = Vec::new();
        let writes = read_batch(repo, batch, with_diff, &mut *embedder, (&mut batch_summary, &mut left_out));
        let writes = match writes {
            Ok(writes) => writes,
            // A remote embedder gives up its request when told to stop
            // (review 247: the run ended 2, "embedding stopped"): the
            // batch is dropped, as one not begun.
            Err(_) if observer.cancelled() => {
                unread.record(store, repo, false)?;
                return Ok(stopped(summary, started));
            }
            Err(e) => {
                // The batches stored before it keep what waits on a fetch.
                let _ = unread.record(store, repo, false);
                return Err(e);
            }
        };
        summary = batch_summary;
        store.write_commits(&writes)?;
        // Kept every few seconds, and by a run told to stop: one killed
        // loses at most those seconds' (review 259: rewritten whole after
        // each batch, the list cost a large clone's log hundreds of MB).
        if with_diff {
            left_out.into_iter().for_each(|(sha, n)| unread.read(sha, n));
            if last_kept.elapsed() >= KEEP_WAITING_EVERY {
                unread.record(store, repo, false)?;
                last_kept = Instant::now();
            }
        }
        summary.added += writes.len() as u64;
        summary.reread += batch.iter().filter(|sha| stored.contains_key(**sha)).count() as u64;
        observer.progress((n * BATCH + batch.len()).min(todo.len()), todo.len());
    }
    again.record(store, history)?;
    unread.record(store, repo, true)?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The commits of `batch` read and embedded, each with the count of its
/// changed files whose diffs wait on a fetch added to `left_out`.
fn read_batch<'b>(
    repo: &GitRepo,
    batch: &[&'b String],
    with_diff: bool,
    embedder: &mut dyn Embedder,
    (summary, left_out): (&mut LogSummary, &mut Vec<(&'b str, usize)>),
) -> Result<Vec<CommitWrite>> {
    let mut writes = Vec::with_capacity(batch.len());
    for sha in batch {
        let data = repo.read_commit(sha, with_diff)?;
        summary.unread_diffs += data.unread_diffs as u64;
        // Kept by the count a later run compares with (review 259: the read
        // stops counting at its pieces' cap, and a commit whose count could
        // not fall was never read again).
        let waiting = if data.unread_diffs > 0 { repo.diffs_unread(sha)? } else { 0 };
        left_out.push((sha.as_str(), waiting));
        writes.push(commit_write(data, embedder, summary)?);
    }
    Ok(writes)
}

/// `summary` of a run told to stop (`LogObserver::cancelled`) before its end.
fn stopped(summary: LogSummary, started: Instant) -> LogSummary {
    LogSummary { stopped: true, seconds: started.elapsed().as_secs_f64(), ..summary }
}

fn load_for_the_log(load: LoadEmbedder<'_>) -> Result<Box<dyn Embedder>> {
    load().context("cannot load the embedding model for the commit log")
}

fn needs_storing(stored: &HashMap<String, StoredCommit>, sha: &str, with_diff: bool) -> bool {
    match stored.get(sha) {
        None => true,
        Some(c) => c.holes || (with_diff && !c.diffs),
    }
}

/// A commit read from the repository as the rows that store it: its
/// message and its diff pieces, embedded.
fn commit_write(data: CommitData, embedder: &mut dyn Embedder, summary: &mut LogSummary) -> Result<CommitWrite> {
    let CommitData { commit, pieces: diff, .. } = data;
    let message =
        if commit.body.is_empty() { commit.subject.clone() } else { format!("{}\n\n{}", commit.subject, commit.body) };
    // An empty message (`git commit --allow-empty-message`) says nothing,
    // and is no piece: its vector sat near every question (0.32 to
    // "network"). The commit is found by its changes alone.
    let mut pieces = Vec::new();
    if !message.trim().is_empty() {
        pieces.push(PieceWrite {
            kind: PieceKind::Message,
            path: None,
            line: 0,
            words: terms(&message),
            vector: None,
            text: message,
        });
    }
    for piece in diff {
        pieces.push(PieceWrite {
            kind: PieceKind::Diff,
            words: format!("{} {}", terms(&piece.text), terms(&piece.path)),
            line: piece.line,
            path: Some(piece.path),
            vector: None,
            text: piece.text,
        });
    }
    let texts: Vec<String> = pieces.iter().map(embedded_text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed_each(&refs).with_context(|| format!("cannot embed commit {}", commit.sha))?;
    for (piece, vector) in pieces.iter_mut().zip(vectors) {
        summary.embedded += u64::from(vector.is_some());
        summary.holes += u64::from(vector.is_none());
        piece.vector = vector;
    }
    Ok(CommitWrite { commit, pieces })
}

/// What the model reads for a piece: a message as written; changed lines
/// under their file's path, without the `+`/`-` marks, so they read as code.
fn embedded_text(piece: &PieceWrite) -> String {
    match (&piece.kind, &piece.path) {
        (PieceKind::Diff, Some(path)) => {
            let code: Vec<&str> = piece.text.lines().map(|l| l.get(1..).unwrap_or("")).collect();
            format!("{path}\n{}", code.join("\n"))
        }
        _ => piece.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_stored_again_only_for_diffs_or_vectors_it_lacks() {
        let stored: HashMap<String, StoredCommit> = [
            ("a".to_string(), StoredCommit { diffs: false, holes: false, no_subject: false }),
            ("b".to_string(), StoredCommit { diffs: true, holes: false, no_subject: false }),
            ("h".to_string(), StoredCommit { diffs: true, holes: true, no_subject: false }),
        ]
        .into();
        assert!(!needs_storing(&stored, "a", false));
        assert!(needs_storing(&stored, "a", true));
        assert!(!needs_storing(&stored, "b", true));
        assert!(needs_storing(&stored, "c", false));
        assert!(needs_storing(&stored, "h", false), "a commit with holes is embedded again");
    }

    #[test]
    fn changed_lines_are_embedded_as_code_under_their_path() {
        let piece = PieceWrite {
            kind: PieceKind::Diff,
            path: Some("src/retry.rs".into()),
            line: 3,
            text: "-let n = 1;\n+let n = retries();".into(),
            vector: None,
            words: String::new(),
        };
        assert_eq!(embedded_text(&piece), "src/retry.rs\nlet n = 1;\nlet n = retries();");
    }
}
