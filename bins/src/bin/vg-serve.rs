//! vg-serve: the HTTP search server over a warm model and index.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use vecgrep::embed::LazyEmbedder;
use vecgrep::embed::Profile;
use vecgrep::live::Target;
use vecgrep::records::{write_record, ListeningRecord};
use vecgrep::serve::{ServeEvents, ServeSettings};
use vecgrep_bins::app::{
    cli_config, embedder_pool, load_embedder, load_query_embedder, note, resolve, run_main, static_loader,
    unless_reader_gone, EXIT_FOUND,
};
use vecgrep_bins::cli::ServeCli;

const TOOL: &str = "vg-serve";

/// Reports on stderr (and the listening record on stdout).
struct Events {
    quiet: bool,
    root: vecgrep::project::ProjectRoot,
    /// Said once listening: an address it could not bind is no exposure.
    exposure: Option<String>,
}

impl ServeEvents for Events {
    fn listening(&self, url: &str) -> anyhow::Result<()> {
        if let Some(warning) = &self.exposure {
            vecgrep_bins::app::say_line(TOOL, &format!("warning: {warning}"));
        }
        // The URL goes to stderr even when quiet: it is what the user asked for.
        vecgrep_bins::app::say_line(TOOL, &format!("listening on {url}"));
        let mut out = vecgrep_bins::app::stdout();
        // A reader gone (`vg-serve | head -1`) leaves the server serving.
        unless_reader_gone(write_record(&mut out, &ListeningRecord::new(&self.root, url)).and_then(|()| out.flush()))
    }

    fn note(&self, message: &str) {
        note(TOOL, self.quiet, message);
    }
}

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<ServeCli>(TOOL);
    run_main(TOOL, || {
        vecgrep_bins::app::refuse_warn_threshold(&matches, "a server indexes without asking anyone")?;
        let inv = resolve(TOOL, &cli.paths, cli.outside.skip_outside_root, Some(&cli.catalog), cli_config(&matches)?)?;
        let token =
            vecgrep::serve::token(cli.token.clone(), std::env::var_os("VECGREP_TOKEN")).map_err(|e| anyhow!(e))?;
        let exposure = (!vecgrep::serve::is_loopback(cli.bind)).then(|| {
            format!(
                "listening on {}, which other machines can reach; {}",
                cli.bind,
                if token.is_some() {
                    "requests need the token"
                } else {
                    "anyone who can connect can read the code (set --token)"
                }
            )
        });
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&shutdown);
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .map_err(|e| anyhow!("cannot install the signal handler: {e}"))?;
        vecgrep_bins::app::embedders_stop_with(&shutdown);
        // The model answers queries for as long as the server runs: load the
        // optimized graph once rather than the fast-starting one.
        let query_config = inv.config.clone();
        // One thread per query: the word index is searched beside it, and
        // parallel requests would only fight over more (live::Searcher).
        let query_embedder = LazyEmbedder::new(move || load_query_embedder(&query_config, Profile::Index, 1))
            .with_static(static_loader(&inv.config));
        let index_embedders = embedder_pool(&inv.config);
        let embeddings_config = inv.config.clone();
        let embeddings_loader: vecgrep::index::ThreadedLoader =
            std::sync::Arc::new(move |threads| load_embedder(&embeddings_config, Profile::Index, threads));
        let walk = cli.walk.to_options(&inv.config);
        vecgrep::project::check_walk_options(&inv.root, &walk)?;
        let events = Arc::new(Events { quiet: inv.config.quiet, root: inv.root.clone(), exposure });
        let rate_limit = inv.config.rate_limit;
        vecgrep::serve::serve(
            Target { root: inv.root, paths: inv.paths, walk, config: inv.config },
            ServeSettings {
                addr: SocketAddr::new(cli.bind, cli.port),
                token,
                workers: usize::from(cli.workers),
                refresh: Duration::from_secs_f64(cli.refresh),
                limits: Default::default(),
                rate_limit,
            },
            query_embedder,
            index_embedders,
            embeddings_loader,
            shutdown,
            events,
        )?;
        Ok(EXIT_FOUND)
    })
}
