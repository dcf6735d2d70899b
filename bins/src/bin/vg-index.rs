//! vg-index: build or update a project's index, or report on it.

use std::io::{IsTerminal, Write};

use vecgrep::index::IndexSummary;
use vecgrep::project::catalog::Catalog;
use vecgrep::records::{write_record, LabelRecord, RevisionRecord, StatsRecord, SummaryRecord, VerifyRecord};
use vecgrep::store::{self, IndexStats, StoreError};
use vecgrep_bins::app::{
    cli_config, embedder_pool, index_blocking, label_of, note, note_holes, resolve_in, run_main, stoppable,
    wait_for_write_lock, Blocking, CliObserver, Invocation, PathsIn, EXIT_ERROR, EXIT_FOUND, EXIT_INTERRUPTED,
    EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::{expand_groups, flag_name, IndexCli};

const TOOL: &str = "vg-index";

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<IndexCli>(TOOL);
    run_main(TOOL, || {
        // A revision named (--rev, --forget) is the project's here, even
        // where the default context would make it a catalog's.
        let paths_in = match (cli.rev.is_some() || cli.forget.is_some(), &cli.label.label) {
            (true, _) => PathsIn::Revision,
            (false, Some(_)) => PathsIn::Label,
            (false, None) => PathsIn::WorkingTree,
        };
        // Before the config is read: its notes (a flag not used) came
        // before the refusal, two lines for one error.
        refuse_run_options(&cli, &matches)?;
        let (skip, catalog) = (cli.outside.skip_outside_root, Some(&cli.catalog));
        let inv = resolve_in(TOOL, &cli.paths, skip, catalog, cli_config(&matches)?, paths_in)?;
        // A revision is indexed, or forgotten, whole: a PATH below the root
        // was checked against the working tree (one since deleted refused),
        // then passed over. The project itself (`vg-index --rev v1 .`) is
        // the whole, and so is a run from below the root with no PATH
        // (audit 253: the directory it ran from was taken for one).
        let below_root = !cli.paths.is_empty() && inv.paths.iter().any(|p| !p.rel.is_empty());
        if cli.rev.is_some() && below_root {
            return Err(anyhow::anyhow!(
                "--rev indexes a revision's whole tree; leave out the PATHs below the root (vg-query --rev REV PATH searches part of it)"
            ));
        }
        if cli.forget.is_some() && below_root {
            return Err(anyhow::anyhow!("--forget drops a revision's whole index; leave out the PATHs below the root"));
        }
        if cli.label.label.is_some() {
            refuse_beside_a_label(&cli)?;
        }
        if cli.stats {
            return print_stats(&cli, &inv.root);
        }
        if cli.verify {
            return verify(&cli, &inv.root, inv.config.quiet);
        }
        if cli.json {
            return Err(anyhow::anyhow!("--json goes with --stats or --verify"));
        }
        if let Some(spec) = &cli.forget {
            return forget(spec, &inv);
        }
        // With a label in effect (--label, or the default context's), the
        // run, --reindex and --clear-cache are about the label's index.
        if let Some((catalog, label)) = label_of(&cli.label, &inv, cli.rev.is_some())? {
            // As a revision: a PATH was passed over, the whole label indexed.
            if below_root {
                return Err(anyhow::anyhow!(
                    "a label indexes each project's whole tree at the label; leave out the PATHs (vg-query --label NAME PATH searches part of it)"
                ));
            }
            if cli.walk.to_options(&inv.config).is_filtered() || cli.walk.changes_the_walk() {
                return Err(anyhow::anyhow!(
                    "a label (--label, or the default context's) indexes each project's whole tree at the label; the walk's options (-t, -g, --hidden, ...) apply to the working trees only"
                ));
            }
            if cli.clear_cache {
                return forget_label(&inv, &catalog, &label);
            }
            return index_catalog_label(&inv, &catalog, &label, cli.reindex);
        }
        if cli.clear_cache {
            return clear_cache(&inv);
        }
        if let Some(spec) = &cli.rev {
            if cli.walk.to_options(&inv.config).is_filtered() || cli.walk.changes_the_walk() {
                return Err(anyhow::anyhow!(
                    "--rev indexes a revision's whole tree; the walk's options (-t, -g, --hidden, ...) apply to the working tree only"
                ));
            }
            return index_revision(spec, &inv);
        }
        index(&cli, &inv)
    })
}

/// The options that shape an index run, given beside a flag that runs
/// none (`--stats`, `--verify`, `--clear-cache`, `--forget`): each was
/// passed over, and `--clear-cache -t md` removed every file's index.
fn refuse_run_options(cli: &IndexCli, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let reports = [
        (cli.stats, "--stats"),
        (cli.verify, "--verify"),
        (cli.clear_cache, "--clear-cache"),
        (cli.forget.is_some(), "--forget"),
    ];
    let Some(report) = reports.into_iter().find_map(|(given, flag)| given.then_some(flag)) else { return Ok(()) };
    // The command as parsed, with the settings' `--no-` twins.
    let cmd = vecgrep_bins::app::command::<IndexCli>();
    let run_options = ["WalkArgs", "EmbedderArgs", "chunk_size", "chunk_overlap", "embed_all", "index_warn_threshold"];
    let shaping = expand_groups(&cmd, &run_options);
    let given = cmd.get_arguments().find(|a| {
        let id = a.get_id().as_str();
        shaping.iter().any(|s| s == id) && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    });
    let Some(arg) = given else { return Ok(()) };
    let whole = if cli.clear_cache { " (--clear-cache removes the whole index)" } else { "" };
    Err(anyhow::anyhow!("{} does nothing with {report}; leave it out{whole}", flag_name(arg)))
}

/// What `--label` does not go with: these report on or drop the catalog's
/// own index, which would be taken for the label's (`--clear-cache` and
/// `--reindex` act on the label's index).
fn refuse_beside_a_label(cli: &IndexCli) -> anyhow::Result<()> {
    let flag = [(cli.stats, "--stats"), (cli.verify, "--verify"), (cli.forget.is_some(), "--forget")]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag));
    match flag {
        Some(flag) => Err(anyhow::anyhow!(
            "{flag} does not go with --label: it is about the catalog's own index (vg-catalog show lists its labels; --label NAME --clear-cache drops one's index)"
        )),
        None => Ok(()),
    }
}

/// `--clear-cache` with a label in effect: drop the label's index, and
/// only it, whether or not the label names anything now.
fn forget_label(inv: &Invocation, catalog: &Catalog, label: &str) -> anyhow::Result<u8> {
    let Some(_lock) = wait_for_write_lock(TOOL, &inv.root, inv.config.quiet)? else { return Ok(EXIT_INTERRUPTED) };
    let what = format!("label {label} of catalog {}", catalog.name);
    let said = match vecgrep::history::forget_label(&inv.root, label)? {
        0 => format!("{what} holds no index to remove"),
        _ => format!("removed the index of {what}"),
    };
    note(TOOL, inv.config.quiet, &said);
    Ok(EXIT_FOUND)
}

/// ClearCacheResetsIndex.
fn clear_cache(inv: &Invocation) -> anyhow::Result<u8> {
    let mut obs = CliObserver::new(TOOL, inv.config.quiet, false);
    // A shared index is dropped for every checkout that shares it: named
    // as the store names it, not as this checkout (audit 228).
    let (what, everyone) = match &inv.root.shared {
        Some(_) => (vecgrep::store::location(&inv.root), ", for every checkout that shares it"),
        None => (inv.root.path.display().to_string(), ""),
    };
    let said = match stoppable(|| vecgrep::index::clear_cache(&inv.root, &mut obs))? {
        Some(true) => format!("removed the index of {what}{everyone}"),
        Some(false) => format!("{what} holds no index to remove"),
        None => return Ok(EXIT_INTERRUPTED),
    };
    note(TOOL, inv.config.quiet, &said);
    Ok(EXIT_FOUND)
}

/// `--rev`: index a revision's tree from the repository and print the
/// summary record, after the `file` and `skip` records on a pipe.
fn index_revision(spec: &str, inv: &Invocation) -> anyhow::Result<u8> {
    let mut obs = CliObserver::new(TOOL, inv.config.quiet, !std::io::stdout().is_terminal());
    let ran = stoppable(|| {
        vecgrep::history::index_revision(&inv.root, spec, &inv.config, &mut embedder_pool(&inv.config), &mut obs)
    });
    obs.finish();
    let ran = ran?;
    let what = format!("revision {spec} ({})", &ran.sha[..12]);
    report_tree_run(inv, ran.summary, &what, |r| SummaryRecord { rev: Some(ran.sha.clone()), ..r })
}

/// `--label`: index the label's commit of each project of the catalog and
/// print the summary record, which names them.
fn index_catalog_label(inv: &Invocation, catalog: &Catalog, label: &str, reindex: bool) -> anyhow::Result<u8> {
    let ran = vecgrep_bins::app::index_label(TOOL, inv, (catalog, label), !std::io::stdout().is_terminal(), reindex)?;
    let what = format!("label {label} of catalog {}", catalog.name);
    report_tree_run(inv, ran.summary, &what, |r| SummaryRecord { label: Some(LabelRecord::new(&ran.label.state)), ..r })
}

/// The end of a revision's or a label's run (`what`): its summary record,
/// which `named` makes say what was indexed (all counts 0 when it was
/// indexed already), and the exit status.
fn report_tree_run(
    inv: &Invocation,
    summary: Option<IndexSummary>,
    what: &str,
    named: impl FnOnce(SummaryRecord) -> SummaryRecord,
) -> anyhow::Result<u8> {
    let summary = summary.unwrap_or_else(|| {
        note(TOOL, inv.config.quiet, &format!("{what} is indexed already"));
        IndexSummary::default()
    });
    note_holes(TOOL, inv.config.quiet, summary.holes);
    let mut out = vecgrep_bins::app::stdout();
    let record = named(SummaryRecord::new(&inv.root, &summary));
    vecgrep_bins::app::unless_reader_gone(write_record(&mut out, &record).and_then(|()| out.flush()))?;
    if summary.aborted {
        note(TOOL, false, &format!("indexing declined; the index of {what} was left as it was"));
        return Ok(EXIT_NOT_FOUND);
    }
    if summary.cancelled {
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(if summary.errors > 0 { EXIT_ERROR } else { EXIT_FOUND })
}

/// `--forget`: drop a revision's index.
fn forget(spec: &str, inv: &Invocation) -> anyhow::Result<u8> {
    let sha = vecgrep::history::revision_to_forget(&inv.root, spec)?;
    if let Some(said) = vecgrep::history::tag_taken_note(&inv.root, spec, &sha) {
        note(TOOL, inv.config.quiet, &said);
    }
    let Some(_lock) = wait_for_write_lock(TOOL, &inv.root, inv.config.quiet)? else { return Ok(EXIT_INTERRUPTED) };
    if !store::forget_revision(&inv.root, &sha)? {
        return Err(anyhow::anyhow!("revision {spec} ({}) has no index", &sha[..12]));
    }
    note(TOOL, inv.config.quiet, &format!("forgot revision {spec} ({})", &sha[..12]));
    Ok(EXIT_FOUND)
}

/// Bring the index up to date and print the summary record.
fn index(cli: &IndexCli, inv: &Invocation) -> anyhow::Result<u8> {
    // Said before the run, in words, rather than by SQLite at its first write.
    if let Some(why) = vecgrep::store::unwritable_index(&inv.root) {
        anyhow::bail!("cannot bring the index up to date: {why}");
    }
    let walk = cli.walk.to_options(&inv.config);
    // On a terminal only the summary is printed; per-file records are for pipes.
    let how = Blocking { records: !std::io::stdout().is_terminal(), notable_skips: true, reindex: cli.reindex };
    let (summary, files, skipped) = index_blocking(TOOL, inv, &walk, &mut embedder_pool(&inv.config), how)?;
    if !summary.aborted && !summary.cancelled {
        let _said = vecgrep_bins::app::note_none_walked(TOOL, inv, &walk, (&files, &skipped), "indexed");
    }
    note_holes(TOOL, inv.config.quiet, summary.holes);
    let mut out = vecgrep_bins::app::stdout();
    let record = SummaryRecord::new(&inv.root, &summary);
    vecgrep_bins::app::unless_reader_gone(write_record(&mut out, &record).and_then(|()| out.flush()))?;
    if summary.aborted {
        note(TOOL, false, "indexing declined; the index was left as it was");
        return Ok(EXIT_NOT_FOUND);
    }
    if summary.cancelled {
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(if summary.errors > 0 { EXIT_ERROR } else { EXIT_FOUND })
}

fn print_stats(cli: &IndexCli, root: &vecgrep::project::ProjectRoot) -> anyhow::Result<u8> {
    let (stats, meta, complete) = match store::open_for_reading(root) {
        Ok(store) => (store.stats()?, store.meta()?, !store.run_unfinished()?),
        // ShowStats on a root that was never indexed: all zero.
        Err(StoreError::Missing(_)) => (IndexStats::default(), None, true),
        Err(e) => return Err(e.into()),
    };
    let (commits, pieces, _) = match store::open_log_for_reading(root) {
        Ok(log) => log.log_counts()?,
        // One not made here counts for nothing until vg-log reads it again.
        Err(StoreError::Missing(_) | StoreError::LogNotMadeHere(_)) => (0, 0, 0),
        Err(e) => return Err(e.into()),
    };
    // A catalog's are its labels' indexes, keyed by no commit (audit 207:
    // listed as revisions with a sha --forget refused).
    let (revisions, labels) = match root.marker {
        vecgrep::project::RootMarker::Catalog => {
            (Vec::new(), revision_stats(root)?.into_iter().map(Into::into).collect())
        }
        _ => (revision_stats(root)?, Vec::new()),
    };
    let record = StatsRecord {
        commits,
        commit_pieces: pieces,
        revisions,
        labels,
        complete,
        ..StatsRecord::new(root, &stats, meta.as_ref())
    };
    let mut out = vecgrep_bins::app::text_stdout(cli.json);
    if cli.json {
        write_record(&mut out, &record)?;
    } else {
        writeln!(out, "root:     {}", root.path.display())?;
        writeln!(out, "index:    {}", store::location(root))?;
        writeln!(out, "files:    {}{}", stats.files, incomplete(root, complete))?;
        writeln!(out, "chunks:   {}", stats.chunks)?;
        writeln!(out, "holes:    {} (refused by the embedder)", stats.holes)?;
        writeln!(out, "vectors:  {}", model_vectors(&stats))?;
        writeln!(out, "size:     {} ({} bytes)", human_bytes(stats.db_size_bytes), stats.db_size_bytes)?;
        match meta {
            Some(m) => {
                writeln!(out, "model:    {} (chunk_size {}, chunk_overlap {})", m.model, m.chunk_size, m.chunk_overlap)?
            }
            None => writeln!(out, "model:    none (not indexed yet)")?,
        }
        if let (Some(table), Some(in_use)) = (&record.static_table, record.static_table_in_use) {
            writeln!(out, "static:   {}", static_table_line(table, in_use))?;
        }
        if commits > 0 {
            writeln!(out, "commits:  {commits} ({pieces} pieces; vg-log)")?;
        }
        for r in &record.revisions {
            // A ref's name is the repository's to choose: a bidi override in it shows, not acts.
            let names = if r.names.is_empty() {
                String::new()
            } else {
                format!(" (indexed as {})", vecgrep::format::escape_controls(&r.names.join(", ")))
            };
            let sha = &r.sha[..12];
            if r.damaged {
                writeln!(out, "revision: {sha}{names}: damaged; vg-index --rev {sha} rebuilds it")?;
                continue;
            }
            let state = if r.complete { "" } else { " (incomplete; vg-index --rev resumes it)" };
            writeln!(
                out,
                "revision: {sha}{names}: {} files, {} chunks, {}{state}",
                r.files,
                r.chunks,
                human_bytes(r.db_size_bytes)
            )?;
        }
        for l in &record.labels {
            write_label_stats(&mut out, root, l)?;
        }
    }
    out.flush()?;
    Ok(EXIT_FOUND)
}

/// A catalog label's index as `--stats` says it.
fn write_label_stats(
    out: &mut dyn Write,
    catalog: &vecgrep::project::ProjectRoot,
    label: &vecgrep::records::LabelIndexRecord,
) -> std::io::Result<()> {
    let catalog = catalog_name(catalog);
    let Some(first) = label.names.first() else {
        let state = match label.damaged {
            true => "damaged".to_string(),
            false => format!("{} files, {} chunks, {}", label.files, label.chunks, human_bytes(label.db_size_bytes)),
        };
        return writeln!(
            out,
            "label:    (name unreadable): {state}; {}",
            vecgrep::history::unnamed_label_advice(&catalog)
        );
    };
    let joined = label.names.join(", ");
    let names = vecgrep::format::escape_controls(&joined);
    let again = format!("vg-index --catalog {catalog} --label {}", vecgrep::format::escape_controls(first));
    if label.damaged {
        return writeln!(out, "label:    {names}: damaged; {again} --clear-cache, then {again}, rebuilds it");
    }
    let state = if label.complete { String::new() } else { format!(" (incomplete; {again} resumes it)") };
    writeln!(
        out,
        "label:    {names}: {} files, {} chunks, {}{state}",
        label.files,
        label.chunks,
        human_bytes(label.db_size_bytes)
    )
}

/// Which table the index's static vectors come from, and whether a search
/// can compare a question with them now.
fn static_table_line(table: &str, in_use: bool) -> String {
    if in_use {
        format!("table {table}, the one in use")
    } else {
        format!(
            "table {table}, not the one in use ({}): the next index run recomputes the static vectors",
            vecgrep::embed::table_id()
        )
    }
}

/// Each revision's index, with its counts.
fn revision_stats(root: &vecgrep::project::ProjectRoot) -> anyhow::Result<Vec<RevisionRecord>> {
    let mut out = Vec::new();
    for r in store::revisions(root)? {
        // A revision's index that cannot be read (damaged, another schema)
        // is listed as incomplete, and a damaged one as such (it read as a
        // run to resume, of 0 B): the next --rev run rebuilds it.
        let stats = store::open_for_reading(&store::revision_root(root, &r.sha)).and_then(|index| index.stats());
        let damaged = matches!(stats, Err(StoreError::Damaged { .. }));
        let names = names_of(root, &r);
        out.push(RevisionRecord {
            sha: r.sha,
            names,
            complete: r.complete && stats.is_ok(),
            files: stats.as_ref().map_or(0, |s| s.files),
            chunks: stats.as_ref().map_or(0, |s| s.chunks),
            db_size_bytes: stats.as_ref().map_or(0, |s| s.db_size_bytes),
            damaged,
        });
    }
    Ok(out)
}

/// What `--stats` and `--verify` add when the index lacks part of the
/// project: a run is under way, or the last one did not finish.
fn incomplete(root: &vecgrep::project::ProjectRoot, complete: bool) -> &'static str {
    match (complete, store::run_under_way(root)) {
        (true, _) => "",
        (false, true) => " (incomplete: an index run is under way)",
        (false, false) => " (incomplete: no run over the whole project has finished since it was stopped or rebuilt, or could read every file; vg-index completes it)",
    }
}

/// `--verify`: status 0 when the index is sound, and the revisions'
/// indexes (`--rev`) too, 2 when one is not. An index too damaged to open
/// or count is one problem, said as any other.
fn verify(cli: &IndexCli, root: &vecgrep::project::ProjectRoot, quiet: bool) -> anyhow::Result<u8> {
    let revisions = store::revisions(root)?;
    let mut only_revisions = false;
    let Verified { stats, mut problems, complete, marked } = match verified(root, quiet) {
        Ok(Some(checked)) => checked,
        Ok(None) => return Ok(EXIT_INTERRUPTED),
        // Only revisions' indexes (`--rev`, a catalog's labels): they are
        // checked still (their damage went unsaid).
        Err(e) if matches!(e.downcast_ref::<StoreError>(), Some(StoreError::Missing(_))) && !revisions.is_empty() => {
            note(TOOL, quiet, &format!("{e:#}; checking the {}' indexes", kept_indexes(root)));
            only_revisions = true;
            Verified { stats: IndexStats::default(), problems: Vec::new(), complete: true, marked: false }
        }
        Err(e) => return Err(e),
    };
    let root_sound = problems.is_empty();
    let mut damaged_revisions = Vec::new();
    for r in revisions {
        let at = store::revision_root(root, &r.sha);
        // A revision's index is a file here, or a shared store's schema.
        if at.shared.is_none() && !at.index_path().exists() {
            continue;
        }
        let found = match verified(&at, quiet) {
            Ok(Some(checked)) => checked.problems,
            Ok(None) => return Ok(EXIT_INTERRUPTED),
            // Marked but never written (a run stopped at once) is no damage.
            Err(_) if !r.complete => continue,
            Err(e) => vec![format!("it cannot be checked: {e:#}")],
        };
        if !found.is_empty() {
            let (what, rebuild) = revision_named(root, &r);
            problems.extend(found.iter().map(|p| format!("{what}: {p}")));
            damaged_revisions.push((what, rebuild));
        }
    }
    let ok = problems.is_empty();
    let mut out = vecgrep_bins::app::text_stdout(cli.json);
    if cli.json {
        write_record(&mut out, &VerifyRecord::new(root, &stats, problems, complete))?;
    } else if ok && only_revisions {
        writeln!(out, "the {}' indexes of {} are sound", kept_indexes(root), root.path.display())?;
    } else if ok {
        writeln!(
            out,
            "the index of {} is sound: {} files, {} chunks, {} holes{}",
            root.path.display(),
            stats.files,
            stats.chunks,
            stats.holes,
            incomplete(root, complete)
        )?;
    } else {
        for p in &problems {
            writeln!(out, "problem: {p}")?;
        }
    }
    out.flush()?;
    if !root_sound {
        let shown = root.path.display();
        let rebuild = match marked {
            true => format!("{} rebuilds it", rebuilding_run(root)),
            // Another user's index, a role that may only read it, or a
            // co-writer's: no mark this user's next run acts on, and it
            // reads too little to find the damage (reviews 230, 231).
            false => format!("{} --reindex, run by the index's owner, rebuilds it", rebuilding_run(root)),
        };
        note(TOOL, false, &format!("the index of {shown} is damaged; {rebuild}"));
    }
    for (what, rebuild) in &damaged_revisions {
        note(TOOL, false, &format!("the index of {what} is damaged; {rebuild}"));
    }
    Ok(if ok { EXIT_FOUND } else { EXIT_ERROR })
}

/// The names a stored revision was indexed as: for a catalog's label whose
/// run has not completed, the label its state names (review 209: an empty
/// name, and `--verify` took it for a revision of one repository).
fn names_of(root: &vecgrep::project::ProjectRoot, r: &store::Revision) -> Vec<String> {
    match root.marker {
        vecgrep::project::RootMarker::Catalog if r.names.is_empty() => {
            vecgrep::history::label_indexed_at(root, &r.sha).into_iter().collect()
        }
        _ => r.names.clone(),
    }
}

/// The name of the catalog whose root is `root`: its directory's.
fn catalog_name(root: &vecgrep::project::ProjectRoot) -> String {
    root.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The run that rebuilds the index of `root`, damaged: a catalog's by a
/// run of the catalog (review 215).
fn rebuilding_run(root: &vecgrep::project::ProjectRoot) -> String {
    match root.marker {
        vecgrep::project::RootMarker::Catalog => {
            format!("vg-index --catalog {}", catalog_name(root))
        }
        _ => "vg-index".into(),
    }
}

/// What a project keeps beside its own index: revisions' (`--rev`), or a
/// catalog's labels'.
fn kept_indexes(root: &vecgrep::project::ProjectRoot) -> &'static str {
    match root.marker {
        vecgrep::project::RootMarker::Catalog => "labels",
        _ => "revisions",
    }
}

/// A stored revision's index as `--verify` names it, and what rebuilds it:
/// `--rev` alone takes a revision's index whose file opens for whole. A
/// catalog's are its labels', keyed by no commit: named by the label, as
/// `--stats` names them (review 208: "revision SHA" no output showed).
fn revision_named(root: &vecgrep::project::ProjectRoot, r: &store::Revision) -> (String, String) {
    let sha = &r.sha[..12];
    if root.marker != vecgrep::project::RootMarker::Catalog {
        return (format!("revision {sha}"), format!("vg-index --forget {sha}, then vg-index --rev {sha}, rebuilds it"));
    }
    let catalog = catalog_name(root);
    match names_of(root, r).first() {
        Some(label) => {
            let label = vecgrep::format::escape_controls(label);
            let again = format!("vg-index --catalog {catalog} --label {label}");
            (format!("label {label}"), format!("{again} --clear-cache, then {again}, rebuilds it"))
        }
        // Its state unreadable too: which label is not known here, and
        // only the catalog's own --clear-cache finds it (review 210).
        None => (format!("an unnamed label ({sha})"), vecgrep::history::unnamed_label_advice(&catalog)),
    }
}

/// An index checked (`verified`).
struct Verified {
    stats: IndexStats,
    problems: Vec<String>,
    /// Whether its last run finished.
    complete: bool,
    /// Whether damage found is marked for the next run to rebuild.
    marked: bool,
}

/// The index at `root` checked; None when a signal ended the wait for its lock.
fn verified(root: &vecgrep::project::ProjectRoot, quiet: bool) -> anyhow::Result<Option<Verified>> {
    let checked = match store::open_for_reading(root) {
        Ok(store) => {
            // The word index's check writes a command row: it takes turns with
            // index runs, or a run under way fails on it ("database is locked").
            // An index this user may only read takes no lock, and needs none.
            let lock = match wait_for_write_lock(TOOL, root, quiet) {
                Ok(None) => return Ok(None),
                taken => taken.ok().flatten(),
            };
            let checked = store.verify().and_then(|(stats, problems)| {
                Ok(Verified { stats, problems, complete: !store.run_unfinished()?, marked: store.damage_marked() })
            });
            // Let go before `incomplete` looks whether a run holds the lock.
            drop(lock);
            checked
        }
        Err(e) => Err(e),
    };
    match checked {
        Ok(checked) => Ok(Some(checked)),
        // Damage found on opening is found by the next writer's opening too,
        // which only the owning role of a shared index may rebuild (review 233).
        Err(StoreError::Damaged { cause, .. }) => {
            let problems = vec![format!("it cannot be read: {cause}")];
            let marked = root.shared.is_none();
            Ok(Some(Verified { stats: IndexStats::default(), problems, complete: false, marked }))
        }
        Err(e) => Err(e.into()),
    }
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// How much of the index has the model's vectors: all of it after full
/// runs, part of it with the static tier (searches embed what they need).
fn model_vectors(stats: &vecgrep::store::IndexStats) -> String {
    if stats.chunks == 0 {
        return "none: the index holds no chunks".into();
    }
    let with = stats.vectors();
    // Cut, not rounded: 6859 of 6861 said 100.0% (audit 271).
    let share = (1000.0 * with as f64 / stats.chunks as f64).floor() / 10.0;
    format!("{with} of {} chunks have the model's vector ({share:.1}%)", stats.chunks)
}
