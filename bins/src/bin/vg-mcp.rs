//! vg-mcp: vecgrep for coding agents, over the Model Context Protocol on stdio.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use vecgrep::embed::{LazyEmbedder, Profile};
use vecgrep::live::Target;
use vecgrep::mcp::McpEvents;
use vecgrep_bins::app::{
    all_cores, cli_config, embedder_pool, load_query_embedder, note, resolve, run_main, static_loader, EXIT_FOUND,
};
use vecgrep_bins::cli::McpCli;

const TOOL: &str = "vg-mcp";

/// Notes on stderr: stdout carries the protocol.
struct Events {
    quiet: bool,
}

impl McpEvents for Events {
    fn note(&self, message: &str) {
        note(TOOL, self.quiet, message);
    }
}

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<McpCli>(TOOL);
    run_main(TOOL, || {
        vecgrep_bins::app::refuse_warn_threshold(&matches, "a server indexes without asking anyone")?;
        let inv = resolve(TOOL, &cli.paths, cli.outside.skip_outside_root, Some(&cli.catalog), cli_config(&matches)?)?;
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&shutdown);
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .map_err(|e| anyhow!("cannot install the signal handler: {e}"))?;
        vecgrep_bins::app::embedders_stop_with(&shutdown);
        // The first search should come within a second or two of start:
        // the fast-starting graph, on every core, loaded while the client
        // shakes hands.
        let query_config = inv.config.clone();
        let query_embedder = LazyEmbedder::new(move || load_query_embedder(&query_config, Profile::Query, all_cores()))
            .with_static(static_loader(&inv.config));
        let walk = cli.walk.to_options(&inv.config);
        vecgrep::project::check_walk_options(&inv.root, &walk)?;
        let events = Arc::new(Events { quiet: inv.config.quiet });
        let index_embedders = embedder_pool(&inv.config);
        vecgrep::mcp::serve_stdio(
            Target { root: inv.root, paths: inv.paths, walk, config: inv.config },
            Duration::from_secs_f64(cli.refresh),
            query_embedder,
            index_embedders,
            shutdown,
            events,
        )?;
        Ok(EXIT_FOUND)
    })
}
