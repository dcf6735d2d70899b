//! vg-log: search the project's git history by meaning and print commit records.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget};
use vecgrep::embed::{Embedder, Profile};
use vecgrep::history::{self, CommitFilter, GitRepo, LogObserver, LogQuery, Pieces};
use vecgrep::project::shown::{clipped_middle, SHOWN_PATH_CHARS};
use vecgrep::project::{admit_paths_lexically, Admission, RootError};
use vecgrep::records::{write_record, CommitRecord};
use vecgrep::store::{self, CommitStore};
use vecgrep_bins::app::{
    all_cores, cli_config, interrupted, join_embedder, load_embedder, note, note_skipped_paths, preload_query_embedder,
    progress_bar, resolve, resolve_in, run_main, shown_name, stoppable, wait_for_write_lock, Invocation, PathsIn,
    EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::LogCli;

const TOOL: &str = "vg-log";

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<LogCli>(TOOL);
    run_main(TOOL, || {
        let query = vecgrep::search::check_query(&cli.query)?.to_string();
        check_paths_looked_at(&cli)?;
        // Paths the history knew may be gone from the working tree, or be
        // links there now: each chooses the root by what is on disk of it,
        // and is taken as written from where it enters the root, as a
        // revision's PATHs are (`PathsIn::Revision`).
        let skip = cli.outside.skip_outside_root;
        let config = cli_config(&matches)?;
        let (inv, said) = match resolve_in(TOOL, &cli.paths, skip, None, config.clone(), PathsIn::Revision) {
            // Every one skipped: the root is the current directory's, and
            // `admitted_paths` says each skipped.
            Err(e) if skip && all_skipped(&e) => (resolve(TOOL, &[], skip, None, config)?, false),
            resolved => (resolved?, true),
        };
        note_store_flags(&cli, inv.config.quiet);
        let repo = GitRepo::open(&inv.root.path)?;
        let filter = CommitFilter { within_root: repo.root_is_subdirectory(), ..commit_filter(&cli, &inv, said)? };
        let in_git_dir = |rel: &String| history::in_git_dir(rel) && inv.root.path.join(rel).exists();
        if !filter.paths.is_empty() && filter.paths.iter().all(in_git_dir) {
            // Run from inside .git, or given it: found nothing, in silence
            // (audit 276). A path there that names nothing is a typo, said
            // as any other (review 279).
            note(TOOL, inv.config.quiet, "no commits were searched: the paths lie in .git, which no commit touches");
            return Ok(EXIT_NOT_FOUND);
        }
        let mut query_embedder =
            vecgrep::search::needs_embedder(inv.config.mode).then(|| preload_query_embedder(&inv.config));
        let result = (|| {
            let history = repo.head_history(cli.log.limit.map(|l| l as usize))?;
            if let Some(branch) = repo.unborn_head().filter(|_| history.is_empty()) {
                note(TOOL, inv.config.quiet, &format!("HEAD names {branch}, which has no commits yet"));
            }
            // No commits: nothing to search, indexed or not (`--no-index`
            // said "never indexed; run vg-log", whose run records nothing).
            if history.is_empty() && cli.no_index {
                // Of the PATHs admitted (one skipped as outside was said so).
                let gone = filter.paths.iter().find(|rel| !inv.root.path.join(rel).exists());
                return match gone {
                    Some(rel) => Err(anyhow!(
                        "'{}': no such file or directory, and there are no commits",
                        clipped_middle(rel, SHOWN_PATH_CHARS)
                    )),
                    None => Ok(EXIT_NOT_FOUND),
                };
            }
            let store = match cli.no_index {
                true => log_as_it_is(&inv, &history, cli.log.with_diff || cli.log.diffs_only)?,
                false => match update(&cli, &inv, &repo, &history)? {
                    Some(store) => store,
                    None => return Ok(EXIT_INTERRUPTED),
                },
            };
            let vector = match query_embedder.take() {
                Some(loading) => Some(embed_query(join_embedder(loading)?, &query)?),
                None => None,
            };
            let pieces = match (cli.log.diffs_only, cli.log.with_diff) {
                (true, _) => Pieces::DiffsOnly,
                (false, true) => Pieces::MessagesAndDiffs,
                (false, false) => Pieces::Messages,
            };
            let (mode, k, threshold) = (inv.config.mode, inv.config.top_k, inv.config.threshold_in(inv.config.mode).at);
            let q = LogQuery { query: &query, mode, k, threshold, pieces, filter };
            let hits = history::search_log(&*store, &history, vector.as_deref(), &q)?;
            let mut out = vecgrep_bins::app::stdout();
            let found = !hits.is_empty();
            for hit in hits {
                write_record(&mut out, &CommitRecord::new(&inv.root, hit, &query))?;
            }
            out.flush()?;
            let unknown = unknown_paths(&cli, &inv, &*store, &history)?;
            if !unknown.is_empty() {
                return Err(anyhow!(
                    "{}: no such file or directory, and no commit searched touched it",
                    unknown
                        .iter()
                        .map(|p| format!("'{}'", clipped_middle(&p.display().to_string(), SHOWN_PATH_CHARS)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            Ok(if found { EXIT_FOUND } else { EXIT_NOT_FOUND })
        })();
        // A process that exits under a loading ONNX Runtime can crash.
        if let Some(loading) = query_embedder.take() {
            let _ = loading.join();
        }
        result
    })
}

/// A PATH that cannot be looked at (closed to the user, a name too long)
/// is an error as rg says it; one gone may be the history's.
fn check_paths_looked_at(cli: &LogCli) -> Result<()> {
    for path in &cli.paths {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(anyhow!("'{}': {e}", clipped_middle(&path.display().to_string(), SHOWN_PATH_CHARS)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The store flags are taken, as a config's are, but hold no commit log:
/// said, under the config's `quiet` too.
fn note_store_flags(cli: &LogCli, quiet: bool) {
    if cli.store.store_url.is_some() || cli.store.store_project.is_some() || cli.store.store_adopt {
        let why = "the commit log is kept in the checkout's own index: --store, --store-project and --store-adopt apply to the code index";
        note(TOOL, quiet, why);
    }
}

/// The filter options and PATHS as a commit filter.
fn commit_filter(cli: &LogCli, inv: &Invocation, said: bool) -> Result<CommitFilter> {
    Ok(CommitFilter {
        since: cli.log.since.as_deref().map(history::parse_date).transpose()?,
        until: cli.log.until.as_deref().map(history::parse_until).transpose()?,
        author: cli.log.author.as_ref().map(|a| a.to_lowercase()),
        paths: admitted_paths(cli, inv, said)?,
        within_root: false,
    })
}

/// Whether `e` says every PATH was skipped as outside the root.
fn all_skipped(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<RootError>(), Some(RootError::NoPathsRemain { .. }))
}

/// The PATHS as root-relative paths (the root itself as none), each named
/// if skipped as outside the root, unless `resolve_in` said them.
fn admitted_paths(cli: &LogCli, inv: &Invocation, said: bool) -> Result<Vec<String>> {
    let admission = admit_paths_lexically(&inv.root, &inv.cwd, &cli.paths, cli.outside.skip_outside_root)?;
    let unsaid = if said { Vec::new() } else { admission.skipped };
    note_skipped_paths(TOOL, inv.config.quiet, &inv.root, &Admission { admitted: Vec::new(), skipped: unsaid });
    Ok(admission.admitted.into_iter().filter(|rel| !rel.is_empty()).collect())
}

/// The PATHS, as written, that are gone from the working tree and that no
/// commit of `history` touched: a typo, said as rg says a missing PATH,
/// where git's log would find nothing in silence.
fn unknown_paths(cli: &LogCli, inv: &Invocation, store: &dyn CommitStore, history: &[String]) -> Result<Vec<PathBuf>> {
    let root_relative = |p: &PathBuf| {
        let admitted = admit_paths_lexically(&inv.root, &inv.cwd, std::slice::from_ref(p), true).ok()?;
        admitted.admitted.into_iter().next().filter(|rel| !rel.is_empty())
    };
    // Gone, not closed to the user nor too long a name (`exists` says no to those).
    let is_gone = |p: &&PathBuf| std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    let gone: Vec<(&PathBuf, String)> =
        cli.paths.iter().filter(is_gone).filter_map(|p| Some((p, root_relative(p)?))).collect();
    if gone.is_empty() {
        return Ok(Vec::new());
    }
    let shas: Vec<&str> = history.iter().map(String::as_str).collect();
    let rels: Vec<String> = gone.iter().map(|(_, rel)| rel.clone()).collect();
    let untouched = history::untouched_paths(&rels, &store.commit_rows(&shas)?);
    Ok(gone.into_iter().filter(|(_, rel)| untouched.contains(rel)).map(|(p, _)| p.clone()).collect())
}

/// `--no-index`: the commit log as it stands, if it was embedded with the
/// configured model; said when it lacks commits of `history` (a run that
/// was stopped, or commits made since), or their diffs when `with_diff`
/// asks for them, as a search of an incomplete index is.
fn log_as_it_is(inv: &Invocation, history: &[String], with_diff: bool) -> Result<Box<dyn CommitStore>> {
    let never =
        || anyhow!("the history of {} was never indexed; run vg-log without --no-index", inv.root.path.display());
    let store = match store::open_log_for_reading(&inv.root) {
        Err(store::StoreError::Missing(_)) => return Err(never()),
        opened => opened?,
    };
    let model = &inv.config.embedder_model;
    match store.log_model()? {
        None => Err(never()),
        // Words alone ask nothing of the vectors (vg-query searches so).
        Some(m) if &m != model && vecgrep::search::needs_embedder(inv.config.mode) => Err(anyhow!(
            "the commit log was embedded with {m}, not {model}; run vg-log without --no-index to rebuild it"
        )),
        Some(_) => {
            let stored = store.stored_commits()?;
            let missing = history.iter().filter(|sha| !stored.contains_key(*sha)).count();
            if missing > 0 {
                let of = history.len();
                let said = format!(
                    "the commit log lacks {missing} of the {of} commits of HEAD's history (a run was stopped, or they came since): results may miss them; vg-log without --no-index adds them"
                );
                note(TOOL, inv.config.quiet, &said);
            }
            let undiffed = history.iter().filter(|sha| stored.get(*sha).is_some_and(|c| !c.diffs)).count();
            if with_diff && undiffed > 0 {
                let said = format!(
                    "the commit log holds {undiffed} of the {} commits of HEAD's history without their diffs (indexed without --with-diff): results may miss them; vg-log --with-diff without --no-index adds them",
                    history.len()
                );
                note(TOOL, inv.config.quiet, &said);
            }
            Ok(store)
        }
    }
}

/// Bring the commit log up to date with `history`, under the index's write
/// lock; None when a signal ended the wait for it.
fn update(cli: &LogCli, inv: &Invocation, repo: &GitRepo, history: &[String]) -> Result<Option<Box<dyn CommitStore>>> {
    let quiet = inv.config.quiet;
    let root = store::checkout_root(&inv.root);
    let Some(_lock) = wait_for_write_lock(TOOL, &root, quiet)? else { return Ok(None) };
    let mut store = store::open_log_for_writing(&root, &mut |why| note(TOOL, quiet, why))?;
    let mut progress = Progress { quiet, bar: None };
    let config = inv.config.clone();
    let mut load = move || load_embedder(&config, Profile::Index, all_cores());
    let with_diff = cli.log.with_diff || cli.log.diffs_only;
    // Ctrl-C or SIGTERM stops it after the batch in hand, with what was
    // stored kept and said (it ended the process at once, saying nothing:
    // audit 245); a second ends it at once.
    let summary = stoppable(|| {
        history::update_log(&mut *store, repo, history, with_diff, &inv.config.embedder_model, &mut load, &mut progress)
    });
    if let Some(bar) = progress.bar.take() {
        bar.finish_and_clear();
    }
    let summary = summary?;
    // Ctrl-C after the last batch: the log is whole, and the run ends as
    // the user asked, without its search.
    if summary.stopped || interrupted() {
        let (added, of) = (summary.added, summary.to_store);
        let said = match (summary.stopped, of, added) {
            (true, 0, _) => "interrupted before any commit was stored; the next run stores them".to_string(),
            (true, ..) => format!(
                "interrupted after {added} of {of} commits: what they added is kept, and the next run stores the rest"
            ),
            (false, _, 0) => "interrupted: the commit log is up to date, the search not made".to_string(),
            (false, ..) => {
                format!("interrupted: the commit log is up to date ({added} commits added), the search not made")
            }
        };
        note(TOOL, quiet, &said);
        return Ok(None);
    }
    if summary.added > 0 {
        note(TOOL, quiet, &run_said(&summary));
    }
    if summary.unread_diffs > 0 {
        let n = summary.unread_diffs;
        let (files, their) = if n == 1 { ("file", "its") } else { ("files", "their") };
        let why = history::NOT_FETCHED;
        note(TOOL, quiet, &format!("left out the diffs of {n} changed {files}: {their} contents are {why}"));
    }
    if summary.holes > 0 {
        note(
            TOOL,
            quiet,
            &format!(
                "{} pieces of commits could not be embedded; lexical mode finds them, and the next run tries them again",
                summary.holes
            ),
        );
    }
    Ok(Some(store))
}

fn embed_query(mut embedder: Box<dyn Embedder>, query: &str) -> Result<Vec<f32>> {
    embedder.embed(&[query])?.pop().ok_or_else(|| anyhow!("cannot embed the query: no vector returned"))
}

/// Progress of a log update on a terminal, and its notes.
struct Progress {
    quiet: bool,
    bar: Option<ProgressBar>,
}

impl LogObserver for Progress {
    fn cancelled(&self) -> bool {
        interrupted()
    }

    fn note(&mut self, message: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| note(TOOL, self.quiet, message)),
            None => note(TOOL, self.quiet, message),
        }
    }

    fn progress(&mut self, done: usize, total: usize) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar =
                progress_bar(format!("{}: indexing history", shown_name(TOOL)), total as u64, "{pos}/{len} commits");
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar
        });
        bar.set_position(done as u64);
    }
}

/// What a run that stored commits did, in one line.
fn run_said(summary: &history::LogSummary) -> String {
    let counted = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let new = summary.added - summary.reread;
    let mut did = Vec::new();
    if new > 0 {
        did.push(format!("indexed {} of {}", counted(new, "new commit"), summary.commits));
    }
    if summary.reread > 0 {
        let they = if summary.reread == 1 { "it" } else { "they" };
        did.push(format!("read {} again for what {they} changed", counted(summary.reread, "stored commit")));
    }
    let how = format!("{} embedded in {:.1}s", counted(summary.embedded, "piece"), summary.seconds);
    format!("{} ({how})", did.join(", "))
}
