//! vg-query: search a project by meaning and print hit records.

use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;

use vecgrep::embed::Embedder;
use vecgrep::index::{self, IndexRequest};
use vecgrep::records::{write_record, HitRecord};
use vecgrep::search::SearchRequest;
use vecgrep::store::{self, Scope};
use vecgrep_bins::app::{
    cli_config, embedder_pool, join_embedder, preload_query_embedder, resolve, run_main, CliObserver, Invocation,
    EXIT_ERROR, EXIT_FOUND, EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::QueryCli;

const TOOL: &str = "vg-query";

fn main() -> ExitCode {
    let cli = vecgrep_bins::app::parse_args::<QueryCli>("vg-query");
    run_main(TOOL, || {
        let query = vecgrep::search::check_query(&cli.query)?.to_string();
        let inv = resolve(
            TOOL,
            &cli.paths,
            cli.skip_outside_root,
            cli_config(Some(&cli.search), &cli.index, &cli.walk, cli.quiet),
        )?;
        let mode = inv.config.mode;
        let mut query_embedder = vecgrep::search::needs_embedder(mode).then(|| preload_query_embedder(&inv.config));
        let result = search(&cli, &inv, &query, &mut query_embedder);
        // The model may still be loading when the search fails early; a
        // process that exits under a loading ONNX Runtime can crash.
        if let Some(loading) = query_embedder.take() {
            let _ = loading.join();
        }
        result
    })
}

fn search(
    cli: &QueryCli,
    inv: &Invocation,
    query: &str,
    query_embedder: &mut Option<std::thread::JoinHandle<anyhow::Result<Box<dyn Embedder>>>>,
) -> anyhow::Result<u8> {
    {
        let mode = inv.config.mode;
        let mut embedder = embedder_pool(&inv.config);
        let walk = cli.walk.to_options(&inv.config);
        let filtered = walk.is_filtered();
        let mut errors = 0;
        let mut walked: Option<HashSet<String>> = None;
        if !cli.no_index {
            // CliSearchStartsAfterIndexing: a blocking run first.
            let mut obs = CliObserver::new(TOOL, inv.config.quiet, false);
            // Routine skips are vg-index's to report; a search mentions only errors.
            obs.notable_skips = false;
            let req = IndexRequest {
                root: &inv.root,
                paths: &inv.paths,
                walk: &walk,
                config: &inv.config,
                reindex: cli.reindex,
                warn_on_large: true,
            };
            let result = index::run(&req, &mut embedder, &mut obs);
            obs.finish();
            let (summary, set) = result?;
            if summary.aborted {
                vecgrep_bins::app::note(TOOL, false, "indexing declined; no search was run");
                return Ok(EXIT_NOT_FOUND);
            }
            errors = summary.errors;
            vecgrep_bins::app::note_holes(TOOL, inv.config.quiet, summary.holes);
            walked = Some(set);
        } else if filtered {
            walked = Some(
                vecgrep::project::walk::walk(&inv.root, &inv.paths, &walk)?.files.into_iter().map(|f| f.rel).collect(),
            );
        }
        let store = store::open_for_reading(&inv.root)?;
        let scope = Scope {
            prefixes: if cli.no_scope { Vec::new() } else { inv.paths.iter().map(|p| p.rel.clone()).collect() },
            files: if filtered && !cli.no_scope { walked } else { None },
        };
        let mut query_embedder = query_embedder.take().map(join_embedder).transpose()?;
        let request = SearchRequest { query, mode, scope, k: inv.config.top_k, threshold: inv.config.threshold };
        let hits = vecgrep::search::search(
            &*store,
            query_embedder.as_mut().map(|e| &mut **e as &mut dyn vecgrep::embed::Embedder),
            &request,
        )?;
        let mut out = std::io::stdout().lock();
        let found = !hits.is_empty();
        for hit in hits {
            write_record(&mut out, &HitRecord::new(&inv.root, hit, query))?;
        }
        out.flush()?;
        Ok(if errors > 0 {
            EXIT_ERROR
        } else if found {
            EXIT_FOUND
        } else {
            EXIT_NOT_FOUND
        })
    }
}
