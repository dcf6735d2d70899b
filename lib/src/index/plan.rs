//! What an index run has to do, decided before anything is written: whether
//! the index is rebuilt, which walked files are unchanged, which need
//! reading, and which stored files go.

use std::collections::{HashMap, HashSet};

use anyhow::Result;

use super::{FileOutcome, IndexObserver, IndexRequest, IndexSummary, WalkedSet};
use crate::chunk;
use crate::project::is_under;
use crate::project::{AdmittedPath, EmbedderSource, SkipReason, WalkResult, WalkedFile};
use crate::store::{FileState, IndexMeta, IndexReader, StoredFile};

/// Whether the index is emptied first (ReindexOrConfigChangeRebuildsIndex).
pub(super) struct Rebuild {
    pub needed: bool,
    /// Only the static table changed (vecgrep shipped a new one): the
    /// chunks' static vectors are recomputed in place, the model's kept.
    pub restatic: bool,
    /// What the index is built with after the run.
    pub wanted: IndexMeta,
    /// There was an index already (so a rebuild replaces one).
    pub had_index: bool,
    /// What changed, said when the rebuild or recomputing begins (not
    /// before: a bad model name or a declined run leaves the index as it was).
    pub change: Option<String>,
}

/// The work of one run.
pub(super) struct Plan<'w> {
    /// What the index held for each file before the run (nothing when rebuilt).
    pub stored: HashMap<String, StoredFile>,
    /// Stored files to remove: deleted, now ignored or no longer indexable.
    pub removals: Vec<String>,
    /// Walked files whose content may have changed, in the walk's order
    /// (or smallest first, as the request asks).
    pub work: Vec<&'w WalkedFile>,
    /// How many of `work` are there only because their status-change time
    /// differs from the stored one (`same_on_disk`): read to see whether an
    /// edit kept their size and mtime, most likely to be found unchanged.
    pub rechecks: usize,
    pub walked: WalkedSet,
}

/// ReindexOrConfigChangeRebuildsIndex: whether the run rebuilds the index.
/// The rebuild itself waits until the user has agreed to the run and the
/// model is known to load, so that a declined prompt or a bad model name
/// leaves the old index untouched.
pub(super) fn rebuild(req: &IndexRequest<'_>, store: &dyn IndexReader) -> Result<Rebuild> {
    let wanted = meta_of(req);
    let have = store.meta()?;
    let restatic = !req.reindex && have.as_ref().is_some_and(|h| only_the_table_changed(h, &wanted));
    let rebuild = match &have {
        Some(have) => req.reindex || (*have != wanted && !restatic),
        None => true,
    };
    let change = have.as_ref().filter(|h| **h != wanted && !req.reindex).map(|have| {
        let what = if restatic {
            "recomputing the chunks' static vectors, keeping the model's"
        } else {
            "rebuilding the index"
        };
        format!("{what}: {}", describe_change(have, &wanted))
    });
    Ok(Rebuild { needed: rebuild, restatic, wanted, had_index: have.is_some(), change })
}

/// Whether `have` differs from `wanted` in its static table alone, a
/// local run's: its chunks get the table's vectors and keep the model's,
/// whether they had another table's or none (an index a remote embedder
/// built, which records none; the same model's vectors either way).
fn only_the_table_changed(have: &IndexMeta, wanted: &IndexMeta) -> bool {
    !wanted.static_table.is_empty()
        && have.static_table != wanted.static_table
        && IndexMeta { static_table: wanted.static_table.clone(), ..have.clone() } == *wanted
}

fn meta_of(req: &IndexRequest<'_>) -> IndexMeta {
    IndexMeta {
        model: req.config.embedder_model.clone(),
        chunk_size: req.config.chunk_size,
        chunk_overlap: req.config.chunk_overlap,
        chunk_format: chunk::FORMAT,
        static_table: wanted_static_table(req.config),
    }
}

/// The static table an index built under `config` records: the one in use
/// for a local embedder; none for a remote one.
pub(crate) fn wanted_static_table(config: &crate::project::ResolvedConfig) -> String {
    match config.embedder_source {
        EmbedderSource::Local => crate::embed::table_id(),
        EmbedderSource::Remote => String::new(),
    }
}

fn describe_change(have: &IndexMeta, wanted: &IndexMeta) -> String {
    let mut changes = Vec::new();
    if have.model != wanted.model {
        changes.push(format!("embedder_model {} -> {}", have.model, wanted.model));
    }
    if have.chunk_size != wanted.chunk_size {
        changes.push(format!("chunk_size {} -> {}", have.chunk_size, wanted.chunk_size));
    }
    if have.chunk_overlap != wanted.chunk_overlap {
        changes.push(format!("chunk_overlap {} -> {}", have.chunk_overlap, wanted.chunk_overlap));
    }
    // A remote embedder's index records no table: a change to or from it
    // is the source's, not vecgrep's table.
    match (have.static_table.is_empty(), wanted.static_table.is_empty()) {
        _ if have.static_table == wanted.static_table => {}
        (true, false) => changes.push("it records no static table (embedder_source remote -> local)".to_string()),
        (false, true) => changes.push("embedder_source local -> remote".to_string()),
        _ => changes.push(format!("the static table is another ({})", crate::embed::why_another_table())),
    }
    if have.chunk_format != wanted.chunk_format {
        changes.push(format!(
            "this version indexes chunks differently (chunk format {} -> {})",
            have.chunk_format, wanted.chunk_format
        ));
    }
    changes.join(", ")
}

/// Compare the walk with what is stored: unchanged files are counted and
/// reported here, the others become the run's work.
pub(super) fn plan<'w>(
    req: &IndexRequest<'_>,
    walked: &'w WalkResult,
    stored: HashMap<String, StoredFile>,
    recheck_generated: bool,
    full: bool,
    summary: &mut IndexSummary,
    obs: &mut dyn IndexObserver,
) -> Plan<'w> {
    let mut removals: Vec<String> = Vec::new();
    // What the walk did not read whose stored entries stay (`stale_entries`).
    let mut kept: Vec<String> = Vec::new();
    for skip in &walked.skips {
        obs.skipped(skip);
        summary.skipped += 1;
        if skip.reason.is_error() {
            summary.errors += 1;
            // What is closed is what the walk did not see: a directory
            // whose ignore file alone is closed to the user is open.
            let unseen = skip.unseen_under();
            if !closed_to_user(req, unseen) {
                kept.push(unseen.to_string());
                summary.unread += u64::from(skip.reason.may_pass());
            }
        } else if matches!(skip.reason, SkipReason::OwnOutput) {
            // Another tool's run may have indexed it (a server's log, read
            // by a one-shot search's run): removing it here would have the
            // two take turns, each turn a line in the log.
            kept.push(skip.path.clone());
        } else if matches!(skip.reason, SkipReason::TooLarge { .. }) && req.walk.max_filesize_given {
            // Over this run's own limit, not the project's: kept, as a
            // file `-g` passes over is.
            kept.push(skip.path.clone());
        } else if stored.contains_key(&skip.path) {
            removals.push(skip.path.clone());
        }
    }
    let mut walked_set: WalkedSet = HashSet::with_capacity(walked.files.len());
    let mut work: Vec<&WalkedFile> = Vec::new();
    let mut rechecks = 0;
    for f in &walked.files {
        walked_set.insert(f.rel.clone());
        // A full run embeds a file's chunks that lack the model's vector
        // (holes: the server may answer now); a static run leaves those to
        // searches and fills, so reading the file again would only touch it.
        let complete = |s: &StoredFile| (!full || s.holes == Some(0)) && !recheck_generated;
        match stored.get(&f.rel).filter(|s| complete(s)) {
            Some(s) if same_on_disk(&s.state, f) => {
                summary.files += 1;
                summary.chunks += s.chunks;
                summary.reused += s.chunks;
                obs.file(&f.rel, FileOutcome::Unchanged, s.chunks);
                continue;
            }
            Some(s) if same_size_and_mtime(&s.state, f) => rechecks += 1,
            _ => {}
        }
        work.push(f);
    }
    if req.smallest_first {
        // Stable: files of one size keep the walk's order.
        work.sort_by_key(|f| f.size);
    }
    removals.extend(stale_entries(req, &stored, &walked_set, &removals, &kept));
    removals.sort();
    removals.dedup();
    Plan { stored, removals, work, rechecks, walked: walked_set }
}

/// Whether an index run over `paths` with `walk` keeps entries under its
/// paths that it did not walk (files an ignore rule now leaves out, or its
/// filters did not choose): a filtered walk, or one of several paths, did not
/// look at everything it could own, and removes only what is gone from
/// disk. A search of such a run's paths is limited to the files it walked,
/// or those entries come back as results.
pub fn leaves_unwalked_entries(walk: &crate::project::WalkOptions, paths: &[AdmittedPath]) -> bool {
    walk.leaves_out_for_this_run() || outermost(paths).len() > 1
}

/// Whether a search after a run over `paths` with `walk` that met `errors`
/// keeps to the files the run walked: where it kept entries it did not
/// walk (`leaves_unwalked_entries`), or where an error kept them (a
/// directory it could not read, a catalog's project whose ignore file it
/// could not read). Those entries stay for the next run, but their files'
/// rules were not read this time: a file the project's ignore file now
/// leaves out was found through them.
pub fn search_keeps_to_walk(walk: &crate::project::WalkOptions, paths: &[AdmittedPath], errors: u64) -> bool {
    errors > 0 || leaves_unwalked_entries(walk, paths)
}

/// The paths not inside another given directory: a path inside one adds to
/// that one's walk (a file named, which no ignore rule refuses), not to
/// what it owns.
fn outermost(paths: &[AdmittedPath]) -> Vec<&AdmittedPath> {
    paths.iter().filter(|p| !paths.iter().any(|q| q.is_dir && q.rel != p.rel && is_under(&p.rel, &q.rel))).collect()
}

/// Whether the walk found `f` as it was when stored: its size, mtime and
/// status-change time all the same. The ctime is what catches an edit that
/// kept the other two (`touch -r`, `cp -p`, `rsync -t`); one stored as 0
/// (changed too recently to tell, or stored by an older version) is read
/// and hashed again, and only its stat data rewritten if the bytes agree.
/// A file system that keeps no ctime (some FUSE mounts report 0) is judged
/// by size and mtime alone, not read again on every run.
pub(super) fn same_on_disk(stored: &FileState, f: &WalkedFile) -> bool {
    let no_ctime_kept = f.ctime_ns == 0;
    same_size_and_mtime(stored, f) && (no_ctime_kept || (stored.ctime_ns != 0 && stored.ctime_ns == f.ctime_ns))
}

/// Whether the walk found `f` with the size and mtime it was stored with:
/// unchanged, unless an edit kept both (`same_on_disk`).
pub(super) fn same_size_and_mtime(stored: &FileState, f: &WalkedFile) -> bool {
    stored.size == f.size && stored.mtime_ns == f.mtime_ns
}

/// Whether `rel` is a directory this user may not list or enter, or a
/// file they may not read. What the walk could not read for another reason
/// (a failing disk) is kept, not lost; what is closed to the user leaves the
/// index: rg would not show it either, and the summary and `--stats` agree.
fn closed_to_user(req: &IndexRequest<'_>, rel: &str) -> bool {
    let path = req.root.path.join(rel);
    let denied = match path.is_dir() {
        // A directory listed but not entered (`r--`) hides its files' contents too.
        true => std::fs::read_dir(&path).and_then(|_| std::fs::metadata(path.join("."))).map(|_| ()),
        false => crate::project::small_file::open_regular(&path).map(|_| ()),
    };
    denied.map_err(|e| e.kind()).err() == Some(std::io::ErrorKind::PermissionDenied)
}

/// SingleDirectoryWalkRemovesStaleEntries: a single walked path owns
/// everything stored under it that the walk did not see.
/// MultiPathAndFileWalksPreserveOtherEntries: with several paths, every
/// entry outside them stays, and under their directories only the files
/// gone from disk (or no longer files) are removed, so that a deleted or
/// renamed file is not found again by every later search of the same paths.
fn stale_entries(
    req: &IndexRequest<'_>,
    stored: &HashMap<String, StoredFile>,
    walked: &WalkedSet,
    removals: &[String],
    kept: &[String],
) -> Vec<String> {
    let outermost = outermost(req.paths);
    let owned: Vec<&str> = match outermost[..] {
        [only] => vec![only.rel.as_str()],
        ref several => several.iter().filter(|p| p.is_dir).map(|p| p.rel.as_str()).collect(),
    };
    let only_gone = leaves_unwalked_entries(req.walk, req.paths);
    let mut stale = Vec::new();
    for rel in stored.keys() {
        if !owned.iter().any(|dir| is_under(rel, dir)) || walked.contains(rel) || removals.contains(rel) {
            continue;
        }
        // Entries under a directory the walk could not read are kept, not
        // lost, unless it is closed to the user (`closed_to_user`); so is
        // the file the run writes to.
        if kept.iter().any(|d| is_under(rel, d)) {
            continue;
        }
        // Gone means no longer a file: a directory made where it was counts.
        if only_gone && req.root.path.join(rel).is_file() {
            continue;
        }
        stale.push(rel.clone());
    }
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_unchanged_only_when_every_stamp_it_has_agrees() {
        let walked =
            |size, mtime_ns, ctime_ns| WalkedFile { rel: "a.rs".into(), abs: "/a.rs".into(), size, mtime_ns, ctime_ns };
        let stored = |ctime_ns| FileState { size: 10, mtime_ns: 5, hash: Vec::new(), ctime_ns };
        assert!(same_on_disk(&stored(7), &walked(10, 5, 7)));
        assert!(!same_on_disk(&stored(7), &walked(10, 5, 8)), "an edit that kept size and mtime");
        assert!(!same_on_disk(&stored(7), &walked(11, 5, 7)));
        assert!(!same_on_disk(&stored(0), &walked(10, 5, 7)), "stored too soon after a change to trust");
        assert!(same_on_disk(&stored(0), &walked(10, 5, 0)), "a file system that keeps no ctime");
        assert!(!same_on_disk(&stored(0), &walked(10, 6, 0)));
        assert!(same_size_and_mtime(&stored(7), &walked(10, 5, 8)), "a recheck");
    }
}
