//! vg-ask: a question in plain words into a plan, the plan's search with
//! each hit's reasons, and a chat model's answer when one is called for
//! (`vecgrep::ask`); `--plan` prints the plan alone.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::time::SystemTime;

use anyhow::Result;
use vecgrep::ask::{self, AskOptions, AskSearcher};
use vecgrep::concepts::{ConceptSet, Expansion};
use vecgrep::index::WalkedSet;
use vecgrep::search::{Hit, SearchRequest};
use vecgrep::store::{self, IndexReader, Scope};
use vecgrep_bins::app::{
    cli_config, embedder_pool, index_blocking, note, note_holes, resolve, run_main, search_once, Blocking, Invocation,
    Preloading, EXIT_ERROR, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::AskCli;

const TOOL: &str = "vg-ask";

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<AskCli>(TOOL);
    run_main(TOOL, || {
        if cli.no_index {
            vecgrep_bins::app::refuse_build_settings_without_indexing::<AskCli>(&matches)?;
        }
        // Before the config is read, whose notes came before the refusal.
        if cli.plan {
            refuse_beside_plan(&matches)?;
        }
        let inv = resolve(TOOL, &cli.paths, cli.outside.skip_outside_root, Some(&cli.catalog), cli_config(&matches)?)?;
        let options = AskOptions {
            privacy_mode: None,
            force_answer: cli.answer.force_answer,
            context_hits: cli.answer.context_hits,
            learn: cli.answer.learn,
            now: SystemTime::now(),
        };
        let json = cli.json || !std::io::stdout().is_terminal();
        if cli.plan {
            return print_plan(&cli.query, &inv, &options, json);
        }
        // The models load while the index is brought up to date; none where
        // the privacy mode refuses the embedder (the search is then by words).
        let mut preloading = match ask::allowed(inv.config.privacy_mode, &inv.config).embedding {
            true => Preloading::start_for(&inv),
            false => Preloading::default(),
        };
        let result = ask_and_answer(&cli, &inv, &options, json, &mut preloading);
        preloading.finish();
        result
    })
}

/// A flag that shapes no plan, given beside `--plan`: a plan searches
/// nothing, and `-k 3` or `-t py` passed over in silence read as used, as
/// vecgrep refuses them.
fn refuse_beside_plan(matches: &clap::ArgMatches) -> Result<()> {
    let cmd = vecgrep_bins::app::command::<AskCli>();
    let mut shaping = vecgrep_bins::cli::expand_groups(&cmd, vecgrep_bins::cli::PLAN_FLAGS);
    shaping.extend(["plan", "query", "paths"].map(String::from));
    let given = cmd.get_arguments().find(|a| {
        let id = a.get_id().as_str();
        !shaping.iter().any(|s| s == id) && matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    });
    match given {
        Some(arg) => {
            Err(anyhow::anyhow!("{} does nothing with --plan; leave it out", vecgrep_bins::cli::flag_name(arg)))
        }
        None => Ok(()),
    }
}

/// Index first (`index_first`), then ask: the plan's search, its reasons,
/// and the chat model's answer when one is called for.
fn ask_and_answer(
    cli: &AskCli,
    inv: &Invocation,
    options: &AskOptions,
    json: bool,
    preloading: &mut Preloading,
) -> Result<u8> {
    let (errors, walked, run_warnings, as_it_is) = match index_first(cli, inv)? {
        Indexed::Ready { errors, walked, warnings, as_it_is } => (errors, walked, warnings, as_it_is),
        Indexed::Stopped(status) => return Ok(status),
    };
    let store = store::open_for_searching(&inv.root)?;
    let incomplete = || vecgrep_bins::app::note_if_incomplete(TOOL, inv.config.quiet, &inv.root, &*store);
    let said = as_it_is && incomplete()?;
    let (concepts, problems) = vecgrep::concepts::load(&inv.root);
    for problem in &problems {
        note(TOOL, inv.config.quiet, &problem.to_string());
    }
    let scope = Scope { prefixes: inv.paths.iter().map(|p| p.rel.clone()).collect(), files: walked };
    let mut searcher = OneShot { inv, store: &*store, scope, concepts, preloading };
    let mut response = ask::ask(&cli.query, &inv.root, &inv.config, options, &mut searcher)?;
    // A run that began since the index was opened (a --reindex) may have
    // emptied what the search read, as vg-query's may.
    if as_it_is && !said {
        incomplete()?;
    }
    response.warnings.splice(0..0, run_warnings);
    if let Some(label) = &inv.context_label {
        // A question is asked of the working trees (an explicit --label is
        // refused); the default context's label would be dropped unsaid.
        let why = format!(
            "the default context's label {label} does not apply to a question: the catalog's working trees were searched"
        );
        note(TOOL, inv.config.quiet, &why);
        response.warnings.push(why);
    }
    let mut out = vecgrep_bins::app::stdout();
    if json {
        vecgrep::records::write_record(&mut out, &response)?;
    } else {
        let from_here = |file: &str| {
            let path = vecgrep::records::on_disk(&inv.root, file);
            vecgrep::project::relative_to(&path, &inv.cwd).display().to_string()
        };
        out.write_all(ask::render_response(&response, &from_here).as_bytes())?;
    }
    out.flush()?;
    Ok(match (errors, response.hits.is_empty()) {
        (true, _) => EXIT_ERROR,
        (false, false) => EXIT_FOUND,
        (false, true) => EXIT_NOT_FOUND,
    })
}

/// `--plan`: the plan alone, its warnings on stderr.
fn print_plan(question: &str, inv: &Invocation, options: &AskOptions, json: bool) -> Result<u8> {
    vecgrep::search::check_query(question)?;
    // The plan an ask would run: an LLM plan it could not search falls back
    // to the rules', said so (review 198: --plan printed it as it was).
    let (concepts, _) = vecgrep::concepts::load(&inv.root);
    let (plan, warnings) = ask::searchable_plan(question, &inv.root, &inv.config, options, &|q| concepts.expand(q))?;
    for w in &warnings {
        note(TOOL, inv.config.quiet, w);
    }
    let mut out = vecgrep_bins::app::stdout();
    if json {
        vecgrep::records::write_record(&mut out, &ask::PlanRecord::new(plan))?;
    } else {
        out.write_all(ask::render_plan(&plan).as_bytes())?;
    }
    out.flush()?;
    Ok(EXIT_FOUND)
}

/// What bringing the index up to date left: whether a file failed and the
/// files the walk admitted when its filters (`-t`, `-g`) chose some; or
/// the status to stop with, asking nothing (the large-run prompt declined:
/// 1, as vg-query; Ctrl-C or SIGTERM: 130).
enum Indexed {
    /// `warnings`: what the index run warned of, for the response's.
    Ready {
        errors: bool,
        walked: Option<WalkedSet>,
        warnings: Vec<String>,
        /// The index is searched as it is, not brought up to date first.
        as_it_is: bool,
    },
    Stopped(u8),
}

/// Bring the index up to date first, unless `--no-index`, or unless the
/// privacy mode refuses the embedder an index run would send the code to
/// (then the index is searched as it stands).
fn index_first(cli: &AskCli, inv: &Invocation) -> Result<Indexed> {
    let walk = cli.walk.to_options(&inv.config);
    let walked_only = || -> Result<Option<WalkedSet>> {
        if let Some(why) = vecgrep::store::unchecked_index(&inv.root) {
            anyhow::bail!(why);
        }
        vecgrep_bins::app::note_missing_projects(TOOL, inv.config.quiet, &inv.root);
        let narrowed = vecgrep::index::leaves_unwalked_entries(&walk, &inv.paths);
        let files = narrowed.then(|| vecgrep::project::walk(&inv.root, &inv.paths, &walk)).transpose()?;
        Ok(files.map(|w| w.files.into_iter().map(|f| f.rel).collect()))
    };
    if cli.no_index {
        return Ok(Indexed::Ready { errors: false, walked: walked_only()?, warnings: Vec::new(), as_it_is: true });
    }
    if !ask::allowed(inv.config.privacy_mode, &inv.config).embedding {
        let why = "not indexing: the privacy mode refuses the embedding server; searching the index as it stands";
        note(TOOL, inv.config.quiet, why);
        return Ok(Indexed::Ready { errors: false, walked: walked_only()?, warnings: Vec::new(), as_it_is: true });
    }
    if let Some(why) = vecgrep::store::unwritable_index(&inv.root) {
        note(TOOL, inv.config.quiet, &format!("{why}: searching the index as it is; results may miss recent changes"));
        return Ok(Indexed::Ready { errors: false, walked: walked_only()?, warnings: Vec::new(), as_it_is: true });
    }
    let how = Blocking { records: false, notable_skips: false, reindex: false };
    let (summary, files, skipped) = index_blocking(TOOL, inv, &walk, &mut embedder_pool(&inv.config), how)?;
    if summary.aborted {
        note(TOOL, false, "indexing declined; nothing was asked");
        return Ok(Indexed::Stopped(EXIT_NOT_FOUND));
    }
    if summary.cancelled {
        return Ok(Indexed::Stopped(EXIT_INTERRUPTED));
    }
    note_holes(TOOL, inv.config.quiet, summary.holes);
    // Nothing searched is said, on stderr and in the response, as
    // vg-query says it (audit 248: an empty catalog, or `-t` choosing no
    // file, answered with no word).
    let none_searched = vecgrep_bins::app::note_all_skipped(TOOL, inv, &walk, &files, &skipped);
    let warnings: Vec<String> = skipped.warnings.into_iter().chain(none_searched).collect();
    let walked = vecgrep::index::search_keeps_to_walk(&walk, &inv.paths, summary.errors).then_some(files);
    Ok(Indexed::Ready { errors: summary.errors > 0, walked, warnings, as_it_is: false })
}

/// A one-shot search of the project's index, as vg-query runs it.
struct OneShot<'a> {
    inv: &'a Invocation,
    store: &'a dyn IndexReader,
    scope: Scope,
    concepts: ConceptSet,
    /// The models loading since the run began, which the search takes.
    preloading: &'a mut Preloading,
}

impl AskSearcher for OneShot<'_> {
    fn search(&mut self, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        search_once(self.store, self.preloading, request, &self.inv.config, &self.inv.root)
    }

    fn expand(&self, query: &str) -> Expansion {
        self.concepts.expand(query)
    }

    fn scope(&self) -> Scope {
        self.scope.clone()
    }

    fn counts(&mut self) -> (u64, u64) {
        self.store.stats().map_or((0, 0), |s| (s.chunks, s.files))
    }

    fn file_states(&mut self) -> HashMap<String, (u64, i64)> {
        let files = self.store.files(false).unwrap_or_default();
        files.into_iter().map(|(path, f)| (path, (f.state.size, f.state.mtime_ns))).collect()
    }
}
