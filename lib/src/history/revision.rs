//! A git revision indexed without a checkout (`vg-index --rev`): the files
//! of its tree are written from the object database into the revision's
//! own root under `.vecgrep/revs/<sha>/`, indexed as any tree is, and
//! removed; the working tree is never touched. Chunks whose embedded text
//! any index of the project already holds take that vector (`index`'s
//! known vectors span the project's indexes), so a second revision embeds
//! only what differs from the first.

use anyhow::{anyhow, Result};

use super::git::{AmbiguousRevision, GitRepo};
use crate::index::{self, EmbedderPool, IndexObserver, IndexRequest, IndexSummary};
use crate::project::{admit_paths, ProjectRoot, ResolvedConfig, Skip, WalkOptions};
use crate::store;

/// What indexing a revision did.
#[derive(Clone, Debug)]
pub struct RevisionRun {
    pub sha: String,
    /// The run, or None when the revision was indexed already.
    pub summary: Option<IndexSummary>,
}

/// Index the revision `spec` names (a branch, tag, sha, `HEAD~3`, ...) of `project`.
pub fn index_revision(
    project: &ProjectRoot,
    spec: &str,
    config: &ResolvedConfig,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
) -> Result<RevisionRun> {
    not_a_catalog(project)?;
    let repo = GitRepo::open(&project.path)?;
    let stored = store::revisions(project)?;
    let sha = match repo.resolve_commit(spec) {
        Ok(sha) => sha,
        // A commit git no longer has (its branch deleted, then pruned) is
        // still searched by its index's sha, as `--no-index` searches it;
        // not one of several that git has and the sha's start names.
        Err(e) => match stored_by_prefix(&stored, spec).filter(|_| !e.is::<AmbiguousRevision>()) {
            Some(sha) if stored.iter().any(|r| r.sha == sha && r.complete) => {
                // With no commit to check it against, one not made here is
                // not searched (review 241: a shallow clone's).
                if store::unchecked_index(&store::revision_root(project, &sha)).is_some() {
                    return Err(anyhow!(
                        "git no longer has {spec}, and its index was not made here, nor checked here since it came: \
                         with no commit to check it against, it is not searched (vg-index --forget {} removes it)",
                        &sha[..12]
                    ));
                }
                obs.note(&format!("git no longer has {spec}; its index is searched as it was made"));
                return Ok(RevisionRun { sha, summary: None });
            }
            _ => return Err(unknown(e, &stored, spec)),
        },
    };
    if let Some(said) = tag_taken(&repo, spec, &sha) {
        obs.note(&said);
    }
    // Or a shared one another checkout made whole, whatever marks this one
    // has (a run of its own refused left one): a checkout that may not
    // write the project's index was refused a revision it had only to read.
    let complete = stored.iter().any(|r| r.sha == sha && r.complete) || shared_index_whole(project, &sha);
    let root = store::revision_root(project, &sha);
    let outside = repo.outside_rules_key();
    if complete && built_as_configured(&root, config, &outside) {
        // Without the lock: a run at work on it keeps its unfinished mark.
        store::record_name(project, &sha, spec)?;
        return Ok(RevisionRun { sha, summary: None });
    }
    // The project's lock keeps two runs of one revision from writing its files at once.
    let Some(_lock) = index::wait_for_lock(project, obs)? else {
        return Ok(RevisionRun { sha, summary: Some(index::stopped_waiting()) });
    };
    // A run that only gives chunks their model vectors (`--full`) leaves
    // every file indexed if stopped: it is no rebuild to mark unfinished.
    // Asked under the lock: a rebuild may have ended while this run waited.
    let complete = store::revisions(project)?.iter().any(|r| r.sha == sha && r.complete);
    if complete && built_as_configured(&root, config, &outside) {
        // Made whole by the run this one waited for: indexed already, not
        // written out, walked and counted again.
        store::record_name(project, &sha, spec)?;
        return Ok(RevisionRun { sha, summary: None });
    }
    let filling = ResolvedConfig { embed_all: false, ..config.clone() };
    let only_filling = complete && built_as_configured(&root, &filling, &outside);
    store::check_tree_root(&root)?;
    let fresh = !root.path.exists();
    std::fs::create_dir_all(&root.path).map_err(|e| anyhow!("cannot create {}: {e}", root.path.display()))?;
    // Listed as incomplete until this run completes: a rebuild killed
    // half way (other settings) leaves a partial index to resume.
    if !only_filling {
        store::mark_unfinished(project, &sha)?;
    }
    let mut submodules = Vec::new();
    let written = index_written(&root, config, (embedders, obs), |dir| {
        let tree = repo.write_tree(&sha, dir, config.max_filesize)?;
        submodules = tree.submodules;
        Ok(tree.unwritten)
    });
    note_submodules(obs, &submodules);
    let run = match written {
        Ok(run) => run,
        Err(e) => {
            // A first run that could not write the tree (a root the
            // revision lacks, blobs a partial clone lacks) leaves no
            // index to resume, nor one --stats would call incomplete. One
            // refused a shared index another checkout writes leaves that
            // index alone, and no marks of its own.
            if fresh {
                let refused = e.chain().any(|c| matches!(c.downcast_ref(), Some(store::StoreError::NotWriter { .. })));
                let _ =
                    if refused { store::forget_marks(project, &sha) } else { store::forget_revision(project, &sha) };
            }
            return Err(e);
        }
    };
    // A first run leaves nothing to resume, as one that could not write the
    // tree leaves nothing.
    if fresh && made_no_index(&run, &root) {
        store::forget_marks(project, &sha)?;
    }
    if completed(&run) {
        record_admission(&root, config, &outside)?;
        store::record_submodules(&root, &submodules)?;
        store::record_unwritten(&root, &run.unwritten)?;
        store::mark_complete(project, &sha, spec)?;
    }
    Ok(RevisionRun { sha, summary: Some(run.summary) })
}

/// Whether `run` was declined or stopped at the large-run question, and
/// so made no index at `root` (`index::run` removes the one it made).
pub(super) fn made_no_index(run: &WrittenRun, root: &ProjectRoot) -> bool {
    (run.summary.aborted || run.summary.cancelled) && !store::has_index(root).unwrap_or(true)
}

/// Say that a revision's submodules were left out: their files are another
/// repository's, which a revision's tree names only by commit.
pub(super) fn note_submodules(obs: &mut dyn IndexObserver, submodules: &[String]) {
    if let Some(which) = first_and_more(submodules) {
        obs.note(&format!(
            "left out the submodule {which}: a revision or label holds only its commit (the working tree's checkout is searched without --rev or --label)"
        ));
    }
}

/// What a search of the revision's or label's index at `root` (`what`
/// names it) should hear of its tree's entries that could not be written,
/// which the run that met them said with skips: none is searched.
pub fn unwritten_note(root: &ProjectRoot, what: &str) -> Option<String> {
    let which = first_and_more(&store::unwritten(root))?;
    Some(format!("{what} lacks entries of its tree that could not be written: {which}"))
}

/// The first of `items` and how many more, for a note; None when there is none.
fn first_and_more(items: &[String]) -> Option<String> {
    let first = items.first()?;
    let more = if items.len() > 1 { format!(" and {} more", items.len() - 1) } else { String::new() };
    Some(format!("{first}{more}"))
}

/// An index run over a tree's written files.
pub(super) struct WrittenRun {
    pub summary: IndexSummary,
    /// The entries no run can write, `path: why`: skips of this run, which
    /// its summary counts as errors, and left out of the index for good.
    pub unwritten: Vec<String>,
}

/// Write files into revision root `root` with `write`, index them as a
/// tree, and remove them: they were only there to be read, and the index
/// keeps what it needs (revisions and catalog labels alike). What `write`
/// could not write are skips of the run, as files it could not read are.
pub(super) fn index_written(
    root: &ProjectRoot,
    config: &ResolvedConfig,
    (embedders, obs): (&mut EmbedderPool, &mut dyn IndexObserver),
    write: impl FnOnce(&std::path::Path) -> Result<Vec<Skip>>,
) -> Result<WrittenRun> {
    store::check_tree_root(root)?;
    // The root holds only its index between runs; anything else there
    // (a link a repository shipped inside it, a killed run's files) goes
    // first, as links, so that no file is written through one.
    store::remove_revision_files(root)?;
    let run = write(&root.path).and_then(|unwritten| {
        let mut summary = index_tree(root, config, embedders, obs)?;
        let mut lines = Vec::new();
        for skip in &unwritten {
            obs.skipped(skip);
            summary.skipped += 1;
            // A link the disk refuses is a link skipped, as any link is.
            if skip.reason.is_error() {
                summary.errors += 1;
                lines.push(format!("{}: {}", skip.path, skip.reason.describe()));
            }
        }
        Ok(WrittenRun { summary, unwritten: lines })
    });
    store::remove_revision_files(root)?;
    run
}

/// Whether a run over a revision's files completed, so that its index can
/// be searched as whole: a run with holes or unreadable files is resumed by
/// the next, as the working tree's is. Entries no run can write (a tree
/// does not change) do not keep it from completing; they are recorded.
pub(super) fn completed(run: &WrittenRun) -> bool {
    let summary = &run.summary;
    !summary.aborted && !summary.cancelled && summary.errors == run.unwritten.len() as u64 && summary.holes == 0
}

/// Whether the index at `root` was built with the model, chunking, static
/// table and admission of files `config` asks for, in this version's schema, and,
/// when `config` asks for every chunk's model vector (`--full`), has them
/// all: if not, a run rebuilds or completes it.
pub(super) fn built_as_configured(root: &ProjectRoot, config: &ResolvedConfig, outside: &str) -> bool {
    // The admission is recorded beside the checkout that ran it: a shared
    // index another checkout made has none here, and is taken as it was made.
    match store::admission(root) {
        Some(recorded) if recorded != admission(config, outside) => return false,
        None if root.shared.is_none() => return false,
        _ => {}
    }
    let Ok(index) = store::open_for_reading(root) else { return false };
    // One not made here (committed with the checkout's `.vecgrep`) is run
    // over again, which checks what it keeps (review 240).
    if !index.checked_here().unwrap_or(false) {
        return false;
    }
    // One a search found damaged is run over again, which checks it whole
    // and rebuilds it, as a working tree's is (audit 276: "indexed
    // already", and every search of it failed).
    if index.damage_marked() {
        return false;
    }
    let same = index.meta().ok().flatten().is_some_and(|m| {
        m.model == config.embedder_model
            && m.chunk_size == config.chunk_size
            && m.chunk_overlap == config.chunk_overlap
            && m.chunk_format == crate::chunk::FORMAT
            // Another table (vecgrep updated, VECGREP_STATIC_TABLE): the
            // run recomputes the static vectors. Taken as built, every
            // search of the revision was refused for them, and no run redid them.
            && m.static_table == crate::index::wanted_static_table(config)
    });
    same && (!config.embed_all || index.stats().is_ok_and(|s| s.pending == 0))
}

/// The settings that choose which of a tree's files its index holds,
/// beside what the index's meta records: a revision's tree does not change,
/// but a run with other settings admits other files of it. `outside` says
/// what the rules from outside the tree were (`GitRepo::outside_rules_key`):
/// a revision indexed under others, or before they were kept (audits 191,
/// 194), is indexed again.
fn admission(config: &ResolvedConfig, outside: &str) -> String {
    format!(
        "include_generated = {}\nmax_filesize = {}\nrules_outside_tree = {outside}\n",
        config.include_generated, config.max_filesize
    )
}

/// Record that the run over revision root `root` completed as `config`
/// (and the rules `outside` the tree) admit files.
pub(super) fn record_admission(root: &ProjectRoot, config: &ResolvedConfig, outside: &str) -> Result<()> {
    Ok(store::record_admission(root, &admission(config, outside))?)
}

/// An error unless the index at `root` holds vectors of `model`: a query
/// of one model scored against vectors of another finds nonsense.
pub fn check_model(root: &ProjectRoot, model: &str, rebuild: &str) -> Result<()> {
    match store::other_model(&*store::open_for_reading(root)?, model)? {
        Some(other) => Err(anyhow!("that index was built with {other}, not {model}; {rebuild}")),
        None => Ok(()),
    }
}

/// One index run over a revision's written files.
fn index_tree(
    root: &ProjectRoot,
    config: &ResolvedConfig,
    embedders: &mut EmbedderPool,
    obs: &mut dyn IndexObserver,
) -> Result<IndexSummary> {
    let paths = admit_paths(root, &root.path, &[], false)?.admitted;
    let walk = WalkOptions::unfiltered(config);
    let request = IndexRequest {
        root,
        paths: &paths,
        walk: &walk,
        config,
        reindex: false,
        warn_on_large: true,
        smallest_first: false,
    };
    Ok(index::run(&request, embedders, obs)?.0)
}

/// The indexed revision `spec` names, for a search with `model`: its sha,
/// or an error saying how to index it. A `spec` that git no longer resolves may
/// still be a stored revision's sha or a prefix of one.
pub fn indexed_revision(project: &ProjectRoot, spec: &str, model: &str) -> Result<String> {
    let stored = store::revisions(project)?;
    let sha = resolve_stored(project, &stored, spec)?;
    let marked = stored.iter().find(|r| r.sha == sha);
    // A name as a client sent it (`rev=` over HTTP): its messages repeat
    // 100 characters of it at most (http.md), not 4 KiB twice.
    let spec = crate::project::shown::clipped(spec, 100);
    // Or a shared one another checkout made whole, whatever marks this one has.
    if marked.is_some_and(|r| r.complete) || shared_index_whole(project, &sha) {
        let root = store::revision_root(project, &sha);
        check_model(&root, model, &format!("run vg-index --rev {spec} to rebuild it"))?;
        // A revision index not made here is searched once a run checked it
        // (review 240: a committed one's text was shown as the revision's).
        if store::unchecked_index(&root).is_some() {
            return Err(anyhow!(
                "revision {spec} ({})'s index was not made here, nor checked here since it came; \
                 vg-index --rev {spec} checks it",
                &sha[..12]
            ));
        }
        return Ok(sha);
    }
    match marked {
        // A run under way is said as the working tree's is: told to start
        // one, a user would wait on the lock for the run already going.
        Some(_) if store::run_under_way(&store::revision_root(project, &sha)) => Err(anyhow!(
            "revision {spec} ({}) is being indexed: an index run is under way; search again when it ends",
            &sha[..12]
        )),
        Some(_) => Err(anyhow!(
            "revision {spec} ({}) is indexed in part (its run has not finished); vg-index --rev {spec} completes it",
            &sha[..12]
        )),
        None => Err(anyhow!("revision {spec} ({}) is not indexed; run vg-index --rev {spec}", &sha[..12])),
    }
}

/// Whether the shared store holds revision `sha`'s index whole, as another
/// checkout of the project made it (this one has no marks of it): built,
/// and no run left it unfinished.
fn shared_index_whole(project: &ProjectRoot, sha: &str) -> bool {
    let root = store::revision_root(project, sha);
    if root.shared.is_none() {
        return false;
    }
    let whole = |index: Box<dyn store::IndexReader>| -> Result<bool, store::StoreError> {
        Ok(index.meta()?.is_some() && !index.run_unfinished()?)
    };
    store::open_for_reading(&root).and_then(whole).unwrap_or(false)
}

/// The revision `vg-index --forget SPEC` removes: the one `spec` names now,
/// as a search takes it. A name that moves (`main`, `HEAD~1`) may have been
/// recorded for another revision when that one was indexed; forgetting by
/// it is then refused, naming both, since `--stats` lists the other under it.
pub fn revision_to_forget(project: &ProjectRoot, spec: &str) -> Result<String> {
    // A catalog's stored "revisions" are its labels' indexes: said as such,
    // not as a `--rev` refused that was never given (audit 207).
    if project.marker == crate::project::RootMarker::Catalog {
        anyhow::bail!(
            "--forget drops a revision's index of one repository; a catalog's label index is dropped with --label NAME --clear-cache (--stats lists them)"
        );
    }
    let stored = store::revisions(project)?;
    // A sha that names a stored index is that index, whatever git reads
    // for it now (under `git replace`, the commit it was replaced by, which
    // has none: the index could not be forgotten).
    // A branch or tag named with hex digits (`cafe`, `2024`) is what git
    // reads, and --rev took, before a stored sha it starts: the other
    // revision's index was dropped.
    let a_ref = || GitRepo::open(&project.path).is_ok_and(|repo| repo.names_a_ref(spec));
    let sha = match stored_by_prefix(&stored, spec) {
        Some(_) if a_ref() => resolve_stored(project, &stored, spec)?,
        Some(sha) => {
            not_a_catalog(project)?;
            sha
        }
        None => resolve_stored(project, &stored, spec)?,
    };
    let indexed_as: Vec<&str> =
        stored.iter().filter(|r| r.sha != sha && r.names.iter().any(|n| n == spec)).map(|r| &r.sha[..12]).collect();
    if !indexed_as.is_empty() {
        let was = if indexed_as.len() == 1 { "was" } else { "were" };
        anyhow::bail!(
            "{spec} names {} now, but {} {was} indexed as {spec}; forget a revision by its sha (vg-index --forget {})",
            &sha[..12],
            indexed_as.join(" and "),
            indexed_as[0]
        );
    }
    Ok(sha)
}

/// What to say when `spec` names a tag and a branch of another commit, and
/// `sha`, the tag's, is taken: `--forget` dropped the tag's index unsaid.
pub fn tag_taken_note(project: &ProjectRoot, spec: &str, sha: &str) -> Option<String> {
    tag_taken(&GitRepo::open(&project.path).ok()?, spec, sha)
}

fn tag_taken(repo: &GitRepo, spec: &str, sha: &str) -> Option<String> {
    let branch = repo.branch_beside_tag(spec)?;
    Some(format!(
        "{spec} names a tag and a branch; the tag's commit {} is taken, as git takes it (the branch's is {}: name it heads/{spec})",
        &sha[..12.min(sha.len())],
        &branch[..12]
    ))
}

/// A revision is one repository's; a catalog's projects are searched at a
/// named revision with a label.
fn not_a_catalog(project: &ProjectRoot) -> Result<()> {
    if project.marker == crate::project::RootMarker::Catalog {
        anyhow::bail!(
            "--rev names a revision of one repository; a catalog's projects are searched at a branch or tag with --label NAME"
        );
    }
    Ok(())
}

fn resolve_stored(project: &ProjectRoot, stored: &[store::Revision], spec: &str) -> Result<String> {
    not_a_catalog(project)?;
    match GitRepo::open(&project.path).and_then(|repo| repo.resolve_commit(spec)) {
        Ok(sha) => Ok(sha),
        Err(e) if e.is::<AmbiguousRevision>() => Err(e),
        Err(e) => stored_by_prefix(stored, spec).ok_or_else(|| unknown(e, stored, spec)),
    }
}

/// Git's error for a `spec` it does not know, with the stored revision
/// recorded under that name (a branch since deleted), as `--stats` lists it,
/// to name instead.
fn unknown(e: anyhow::Error, stored: &[store::Revision], spec: &str) -> anyhow::Error {
    match stored.iter().find(|r| r.names.iter().any(|n| n == spec)) {
        Some(r) => anyhow!("{e}; {} was indexed as {spec}: name it by that sha", &r.sha[..12]),
        None => e,
    }
}

/// The one stored revision whose sha starts with `prefix` (at least 4 hex digits).
fn stored_by_prefix(stored: &[store::Revision], prefix: &str) -> Option<String> {
    if prefix.len() < 4 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let prefix = prefix.to_ascii_lowercase();
    let mut matching = stored.iter().filter(|r| r.sha.starts_with(&prefix));
    match (matching.next(), matching.next()) {
        (Some(one), None) => Some(one.sha.clone()),
        _ => None,
    }
}
