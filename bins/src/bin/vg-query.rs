//! vg-query: search a project by meaning and print hit records.

use std::io::Write;

use anyhow::Result;
use vecgrep::history::Label;
use vecgrep::index::WalkedSet;
use vecgrep::project::catalog::Catalog;
use vecgrep::project::{AdmittedPath, ProjectRoot};
use vecgrep::records::{write_record, HitRecord, JudgementRecord};
use vecgrep::search::SearchRequest;
use vecgrep::store::{self, Scope};
use vecgrep_bins::app::{
    cli_config, embedder_pool, index_blocking, label_of, note, note_all_skipped, note_holes, note_unresolved,
    resolve_in, run_main, search_once, stoppable, Blocking, Invocation, PathsIn, Preloading, EXIT_ERROR, EXIT_FOUND,
    EXIT_INTERRUPTED, EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::QueryCli;

const TOOL: &str = "vg-query";

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<QueryCli>(TOOL);
    run_main(TOOL, || {
        if cli.no_index {
            vecgrep_bins::app::refuse_build_settings_without_indexing::<QueryCli>(&matches)?;
        }
        let query = vecgrep::search::check_query(&cli.query)?.to_string();
        let paths_in = match (&cli.rev, &cli.label.label) {
            (Some(_), _) => PathsIn::Revision,
            (None, Some(_)) => PathsIn::Label,
            (None, None) => PathsIn::WorkingTree,
        };
        let (skip, catalog) = (cli.outside.skip_outside_root, Some(&cli.catalog));
        let inv = resolve_in(TOOL, &cli.paths, skip, catalog, cli_config(&matches)?, paths_in)?;
        // The search an answer is made from sends the code and the
        // question to a remote embedder before the answer is asked for.
        let answering = std::env::var_os(vecgrep_bins::app::ANSWERING_ENV).is_some_and(|v| v == "1");
        if answering || matches.value_source("privacy_mode") == Some(clap::parser::ValueSource::CommandLine) {
            if let Some(why) = vecgrep::ask::embedding_refused(inv.config.privacy_mode, &inv.config) {
                return Err(anyhow::anyhow!("{why}"));
            }
        }
        let mut preloading = Preloading::start_for(&inv);
        let result = search(&cli, &inv, &query, &mut preloading);
        preloading.finish();
        result
    })
}

/// What the walk before the search found: the files it admitted, and
/// whether any could not be read.
struct Walked {
    files: Option<WalkedSet>,
    errors: u64,
    /// Ctrl-C stopped the index run: no search follows.
    interrupted: bool,
    /// The index is searched as it is, not brought up to date first
    /// (`--no-index`, or an index this user may not write).
    as_it_is: bool,
}

impl Walked {
    /// A revision's or a label's: its whole tree, indexed unless a signal
    /// stopped the run, `errors` of its files not written or not read.
    fn whole_tree(errors: u64) -> Self {
        Walked { files: None, errors, interrupted: vecgrep_bins::app::interrupted(), as_it_is: false }
    }
}

/// What a search reads: the working tree's walk, or a revision's or a
/// label's whole tree, with its sha or its label.
type ToSearch = (Walked, Option<String>, Option<(Catalog, Label)>);

/// What the search reads, brought up to date first (unless `--no-index`);
/// None when the user declined a large run.
fn up_to_date(cli: &QueryCli, inv: &Invocation) -> Result<Option<ToSearch>> {
    let label = label_of(&cli.label, inv, cli.rev.is_some())?;
    if cli.rev.is_some() || label.is_some() {
        cli.filter.to_filter().and_then(|f| f.check_for_history()).map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(match (&cli.rev, label) {
        (_, Some((catalog, name))) => label_first(cli, inv, &catalog, &name)?
            .map(|(label, errors)| (Walked::whole_tree(errors), None, Some((catalog, label)))),
        (Some(spec), None) => {
            revision_first(cli, inv, spec)?.map(|(sha, errors)| (Walked::whole_tree(errors), Some(sha), None))
        }
        (None, None) => index_first(cli, inv)?.map(|walked| (walked, None, None)),
    })
}

fn search(cli: &QueryCli, inv: &Invocation, query: &str, preloading: &mut Preloading) -> Result<u8> {
    let Some((walked, rev, label)) = up_to_date(cli, inv)? else {
        note(TOOL, false, "indexing declined; no search was run");
        return Ok(EXIT_NOT_FOUND);
    };
    if walked.interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    let searched = match (&rev, &label) {
        (_, Some((_, label))) => label.root.clone(),
        (Some(sha), None) => store::revision_root(&inv.root, sha),
        (None, None) => inv.root.clone(),
    };
    // Without --no-index the run just made the searched paths whole; the
    // whole index (--no-scope) may still lack the rest.
    let whole_index = walked.as_it_is || cli.no_scope;
    let (store, recheck) =
        open_searched(&searched, whole_index && rev.is_none() && label.is_none(), !walked.as_it_is, inv)?;
    let scope = scope_of(cli, inv, (walked.files, walked.errors), rev.is_some() || label.is_some())?;
    // As a PATH the working tree lacks, but the others are searched, as
    // rg searches the paths it can: the status is 2 all the same.
    let named_nothing =
        note_paths_naming_nothing(inv, (rev.as_deref(), label.as_ref().map(|(_, l)| l)), &searched, &scope, &*store)?;
    let mut filter = cli.filter.to_filter().map_err(|e| anyhow::anyhow!(e))?;
    // With --no-index no walk skips what --max-filesize names: the search
    // does, as ripgrep's would (it was taken and passed over in silence).
    if cli.no_index && cli.walk.max_filesize.is_some() {
        filter.size(&format!("-{}b", inv.config.max_filesize)).map_err(|e| anyhow::anyhow!(e))?;
    }
    let (mode, k, threshold) = (inv.config.mode, inv.config.top_k, inv.config.threshold_in(inv.config.mode));
    let (concepts, problems) = vecgrep::concepts::load(&inv.root);
    for problem in &problems {
        note(TOOL, inv.config.quiet, &problem.to_string());
    }
    let expansion = concepts.expand(query);
    let fired: Vec<String> = expansion.fired().iter().map(|c| c.name.clone()).collect();
    let per_file = cli.max_count.max_count;
    let mut request = SearchRequest { query, mode, scope, k, threshold, filter, expansion, per_file };
    if label.is_some() {
        // A label's index holds the catalog's paths, `project/…`: globs are
        // matched within each project as over the catalog's own index.
        request = request.narrowed(&*store, Some(&inv.root))?;
    }
    let mut hits = search_once(&*store, preloading, &request, &inv.config, &searched)?;
    if recheck {
        // A run that began since the index was opened (a --reindex) may
        // have emptied what the search read.
        vecgrep_bins::app::note_if_incomplete(TOOL, inv.config.quiet, &searched, &*store)?;
    }
    if cli.explain {
        vecgrep::search::explain(query, &mut hits);
    }
    let judgement = cli.judge.then(|| vecgrep::judge::judge(query, mode, &hits, request.expansion.fired()));
    let mut out = vecgrep_bins::app::stdout();
    let found = !hits.is_empty();
    for hit in hits {
        let reasoning = cli.explain.then(|| hit.why.reasoning());
        let record = match &label {
            Some((catalog, label)) => HitRecord::new(&searched, hit, query).placed_in_label(catalog, label),
            None => HitRecord { rev: rev.clone(), ..HitRecord::new(&inv.root, hit, query) },
        };
        write_record(&mut out, &HitRecord { reasoning, ..record })?;
    }
    if let Some(judgement) = judgement {
        write_record(&mut out, &JudgementRecord::new(&inv.root, query, judgement, fired))?;
    }
    out.flush()?;
    Ok(if walked.errors > 0 || named_nothing > 0 {
        EXIT_ERROR
    } else if found {
        EXIT_FOUND
    } else {
        EXIT_NOT_FOUND
    })
}

/// What the search may return: the PATHs (unless --no-scope), the files a
/// filtered walk or one of several PATHs admitted (of the whole project
/// under --no-scope, which lifts the PATHs, not the filters), and those of
/// `--package`, which reads the working tree's manifests and so goes with
/// no revision or label.
fn scope_of(
    cli: &QueryCli,
    inv: &Invocation,
    (walked, errors): (Option<WalkedSet>, u64),
    not_working_tree: bool,
) -> Result<Scope> {
    let walk = cli.walk.to_options(&inv.config);
    // A run that met errors kept entries it did not walk (a directory, a
    // catalog's project whose rules it could not read): under --no-scope too.
    let files = match (walk.leaves_out_for_this_run() || errors > 0, cli.no_scope) {
        // Several PATHs: the run kept entries under them it did not walk
        // (files an ignore rule now leaves out), which are no results.
        (false, false) if vecgrep::index::leaves_unwalked_entries(&walk, &inv.paths) => walked,
        (false, _) => None,
        (true, false) => walked,
        (true, true) => {
            let whole = [AdmittedPath::whole(&inv.root)];
            let files: WalkedSet =
                vecgrep::project::walk(&inv.root, &whole, &walk)?.files.into_iter().map(|f| f.rel).collect();
            if files.is_empty() {
                let by = walk.left_out_by();
                // What was given, not which of it left each file out.
                let why = match by.as_slice() {
                    [] => "the walk found none of the project's files".to_string(),
                    [one] => format!("with {one}, none of the project's files is left"),
                    [rest @ .., last] => {
                        format!("with {} and {last}, none of the project's files is left", rest.join(", "))
                    }
                };
                note(TOOL, inv.config.quiet, &format!("no files were searched: {why}"));
            }
            Some(files)
        }
    };
    let mut scope = Scope {
        prefixes: if cli.no_scope { Vec::new() } else { inv.paths.iter().map(|p| p.rel.clone()).collect() },
        files,
    };
    if let Some(name) = &cli.package.package {
        if not_working_tree {
            return Err(anyhow::anyhow!(
                "--package reads the working tree's manifests; it does not go with --rev or a label (--label, or the default context's)"
            ));
        }
        let in_package = vecgrep::search::package_files(&inv.root, &inv.config, name)?;
        scope.files = Some(match scope.files.take() {
            Some(files) => files.intersection(&in_package).cloned().collect(),
            None => in_package,
        });
    }
    Ok(scope)
}

/// `--rev`: the revision's sha, indexed first unless `--no-index` (then it
/// must be indexed already), and how many of its files the run could not
/// write or read. Its files are not on disk, so the walk's filters cannot
/// choose among them. None when the user declined a large run.
fn revision_first(cli: &QueryCli, inv: &Invocation, spec: &str) -> Result<Option<(String, u64)>> {
    if cli.walk.to_options(&inv.config).is_filtered() || cli.walk.changes_the_walk() {
        return Err(anyhow::anyhow!(
            "--rev searches a revision's whole tree; the walk's options (-t, -g, --hidden, ...) apply to the working tree only"
        ));
    }
    if cli.no_index {
        let sha = vecgrep::history::indexed_revision(&inv.root, spec, &inv.config.embedder_model)?;
        note_unwritten_revision(inv, &sha);
        return Ok(Some((sha, 0)));
    }
    let mut obs = vecgrep_bins::app::CliObserver::new(TOOL, inv.config.quiet, false);
    let ran = stoppable(|| {
        vecgrep::history::index_revision(&inv.root, spec, &inv.config, &mut embedder_pool(&inv.config), &mut obs)
    });
    obs.finish();
    let ran = ran?;
    match &ran.summary {
        Some(s) if s.aborted => return Ok(None),
        Some(s) => note_holes(TOOL, inv.config.quiet, s.holes),
        None => note_unwritten_revision(inv, &ran.sha),
    }
    Ok(Some((ran.sha, ran.summary.map_or(0, |s| s.errors))))
}

/// `--label`: the catalog label, indexed first unless `--no-index` (then
/// it must be indexed whole already), and how many files its run could not
/// write or read. None when the user declined a large run.
fn label_first(cli: &QueryCli, inv: &Invocation, catalog: &Catalog, name: &str) -> Result<Option<(Label, u64)>> {
    if cli.walk.to_options(&inv.config).is_filtered() || cli.walk.changes_the_walk() {
        return Err(anyhow::anyhow!(
            "a label (--label, or the default context's) searches each project's whole tree at the label; the walk's options (-t, -g, --hidden, ...) apply to the working trees only"
        ));
    }
    if cli.no_index {
        let label = vecgrep::history::indexed_label(catalog, &inv.root, name, &inv.config.embedder_model)?;
        note_unresolved(TOOL, inv.config.quiet, &label);
        note_unwritten(inv, &label.root, &format!("label {name}"));
        return Ok(Some((label, 0)));
    }
    let ran = vecgrep_bins::app::index_label(TOOL, inv, (catalog, name), false, cli.reindex)?;
    match &ran.summary {
        Some(s) if s.aborted => return Ok(None),
        Some(s) if s.cancelled => {}
        Some(s) if ran.label.state.updated.is_none() => {
            note_holes(TOOL, inv.config.quiet, s.holes);
            note(
                TOOL,
                false,
                &format!("label {name} is indexed in part (its run did not complete): results may miss files"),
            );
        }
        Some(_) => {}
        None => note_unwritten(inv, &ran.label.root, &format!("label {name}")),
    }
    Ok(Some((ran.label, ran.summary.map_or(0, |s| s.errors))))
}

/// Say which entries of a revision's or label's tree (at `root`) its index
/// lacks for good (`history::unwritten_note`).
fn note_unwritten(inv: &Invocation, root: &vecgrep::project::ProjectRoot, what: &str) {
    if let Some(says) = vecgrep::history::unwritten_note(root, what) {
        note(TOOL, inv.config.quiet, &says);
    }
}

/// `note_unwritten` for revision `sha` of the project.
fn note_unwritten_revision(inv: &Invocation, sha: &str) {
    note_unwritten(inv, &store::revision_root(&inv.root, sha), &format!("revision {}", &sha[..12]));
}

/// Say each PATH that names nothing in the revision or label searched
/// (`at`), and why; how many. A file of the working tree its commits lack,
/// one in a submodule, or a link of the revision's tree, which its walk
/// does not follow (audit 194: said to name nothing).
fn note_paths_naming_nothing(
    inv: &Invocation,
    (rev, label): (Option<&str>, Option<&vecgrep::history::Label>),
    searched: &ProjectRoot,
    scope: &Scope,
    store: &dyn store::IndexReader,
) -> Result<u64> {
    let at = match (rev, label) {
        (_, Some(label)) => format!("label {}", label.state.label),
        (Some(sha), None) => format!("revision {}", &sha[..sha.len().min(12)]),
        (None, None) => return Ok(0),
    };
    let submodules = store::submodules(searched);
    let repo = rev.and_then(|sha| Some((vecgrep::history::GitRepo::open(&inv.root.path).ok()?, sha)));
    let mut named_nothing = 0;
    for missing in scope.prefixes_naming_nothing(store)? {
        let said = match &repo {
            Some((repo, sha)) if repo.is_link_at(sha, &missing) => {
                format!("'{missing}' is a symbolic link in {at}, which a revision's search does not follow")
            }
            _ => naming_nothing_at(&missing, &at, &submodules),
        };
        note(TOOL, false, &said);
        named_nothing += 1;
    }
    Ok(named_nothing)
}

/// Why PATH `missing` names nothing at `at` (a revision or a label): a
/// submodule it lies in holds only a commit there.
fn naming_nothing_at(missing: &str, at: &str, submodules: &[String]) -> String {
    let path = missing.trim_end_matches('/');
    let flag = if at.starts_with("label") { "--label" } else { "--rev" };
    match submodules.iter().find(|s| path == s.as_str() || path.starts_with(&format!("{s}/"))) {
        Some(sub) => format!(
            "'{missing}' is in the submodule {sub}, which {at} holds only the commit of (its checkout is searched without {flag})"
        ),
        None => format!("'{missing}' names nothing in {at}"),
    }
}

/// The index of `searched`; one of the working tree searched beyond what
/// this search indexed (`unindexed`: `--no-index`, `--no-scope`) says when
/// an unfinished run left it.
/// `just_indexed`: this run brought the index up to date before, so one
/// missing now was removed since ("run vg-index first" would be false).
/// With it, whether to look again after the search (nothing was said yet).
fn open_searched(
    searched: &ProjectRoot,
    unindexed: bool,
    just_indexed: bool,
    inv: &Invocation,
) -> Result<(Box<dyn store::IndexReader>, bool)> {
    // Being made again by another process's run meanwhile: removed all
    // the same (audit 212: told to search without --no-index, as it had).
    let store = match store::open_for_searching(searched) {
        Err(store::StoreError::Missing(path) | store::StoreError::BeingMade(path)) if just_indexed => anyhow::bail!(
            "{} was removed after this run brought it up to date (another process's --clear-cache?); search again",
            path.display()
        ),
        opened => opened?,
    };
    let said = unindexed && vecgrep_bins::app::note_if_incomplete(TOOL, inv.config.quiet, searched, &*store)?;
    Ok((store, unindexed && !said))
}

/// CliSearchStartsAfterIndexing: a blocking run first, unless `--no-index`
/// (then a filtered search still walks, to know its files). None when the
/// user declined a large run.
fn index_first(cli: &QueryCli, inv: &Invocation) -> Result<Option<Walked>> {
    let walk = cli.walk.to_options(&inv.config);
    let unwritable = (!cli.no_index).then(|| store::unwritable_index(&inv.root)).flatten();
    // Asked to rebuild, a search that cannot must not pass over the ask.
    if let Some(why) = unwritable.as_ref().filter(|_| cli.reindex) {
        anyhow::bail!("cannot rebuild the index (--reindex): {why}");
    }
    if let Some(why) = &unwritable {
        note(TOOL, inv.config.quiet, &format!("{why}: searching the index as it is; results may miss recent changes"));
    }
    if cli.no_index || unwritable.is_some() {
        if let Some(why) = store::unchecked_index(&inv.root) {
            anyhow::bail!(why);
        }
        vecgrep_bins::app::note_missing_projects(TOOL, inv.config.quiet, &inv.root);
        // Under --no-scope, `scope_of` walks the whole project instead. As
        // an index run would (`scope_of`): several PATHs admit what their
        // walk lets in, not entries an ignore rule now leaves out.
        let files = (vecgrep::index::leaves_unwalked_entries(&walk, &inv.paths) && !cli.no_scope)
            .then(|| vecgrep::project::walk(&inv.root, &inv.paths, &walk))
            .transpose()?;
        return Ok(Some(Walked {
            files: files.map(|w| w.files.into_iter().map(|f| f.rel).collect()),
            errors: 0,
            interrupted: false,
            as_it_is: true,
        }));
    }
    // Routine skips are vg-index's to report; a search mentions only errors.
    let how = Blocking { records: false, notable_skips: false, reindex: cli.reindex };
    let (summary, files, skipped) = index_blocking(TOOL, inv, &walk, &mut embedder_pool(&inv.config), how)?;
    if summary.aborted {
        return Ok(None);
    }
    note_holes(TOOL, inv.config.quiet, summary.holes);
    // Under --no-scope the search is the whole project's: what the PATHs
    // held is no measure of it (`scope_of` says when the filters chose none).
    // A run stopped while it waited walked nothing, which says nothing.
    if !cli.no_scope && !summary.cancelled {
        note_all_skipped(TOOL, inv, &walk, &files, &skipped);
    }
    Ok(Some(Walked { files: Some(files), errors: summary.errors, interrupted: summary.cancelled, as_it_is: false }))
}
