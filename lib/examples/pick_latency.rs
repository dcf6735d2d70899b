//! The interactive picker's keystroke-to-results time, measured in the
//! search path it uses (`live::Searcher`, then a row per hit), on an indexed
//! project: `cargo run --release --example pick_latency -- DIR`. The
//! picker adds its 120 ms debounce before this. Prints the median and the
//! slowest of 20 queries, each searched as a fresh query would be.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use vecgrep::embed::LazyEmbedder;
use vecgrep::embed::{Embedder, LocalEmbedder, Profile};
use vecgrep::index::EmbedderPool;
use vecgrep::live::{LiveIndex, Searcher, Target};
use vecgrep::project::ConfigLayers;
use vecgrep::records::HitRecord;

const QUERIES: [&str; 20] = [
    "spawn a task on the runtime",
    "read from a tcp socket",
    "timeout for an async operation",
    "shut down the runtime gracefully",
    "wake a task when data is ready",
    "bounded channel send",
    "mutex lock guard",
    "schedule work on a thread pool",
    "parse a duration",
    "handle a closed connection",
    "broadcast a value to many receivers",
    "block on a future",
    "interval timer ticks",
    "read a file asynchronously",
    "signal handling on unix",
    "join several tasks",
    "cancel a task",
    "semaphore permits",
    "buffered writer flush",
    "local set of tasks that are not Send",
];

fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into())).canonicalize()?;
    let root = vecgrep::project::select_root(&dir, &[])?;
    let paths = vecgrep::project::admit_paths(&root, &dir, &[], false)?.admitted;
    let config = ConfigLayers::load(Default::default(), &root.config_path())?.resolve()?;
    let walk = vecgrep::project::WalkOptions { max_filesize: config.max_filesize, ..Default::default() };
    let target = Target { root, paths, walk, config: config.clone() };
    let live = LiveIndex::new(target, Arc::new(AtomicBool::new(false)), Box::new(|_| {}));
    // The index must be complete, as after `vg-index`: this measures searching, not indexing.
    let assets = vecgrep::embed::locate(&config.embedder_model)?;
    let name = config.embedder_model.clone();
    let index_assets = assets.clone();
    let index_name = name.clone();
    let mut pool = EmbedderPool::new(move |threads| {
        Ok(Box::new(LocalEmbedder::load(&index_assets, &index_name, Profile::Index, threads)?) as Box<dyn Embedder>)
    });
    live.index_once(&mut pool, true)?;
    let searcher = Searcher::new(
        Arc::clone(&live),
        LazyEmbedder::new(move || {
            Ok(Box::new(LocalEmbedder::load(&assets, &name, Profile::Index, 1)?) as Box<dyn Embedder>)
        }),
    );
    searcher.load_model()?;
    let mut store = None;
    // One search to read the vectors into memory, as the picker's first search does.
    searcher.search(
        &mut store,
        &searcher.request("warm up", config.top_k, config.threshold_in(config.mode), config.mode),
    )?;
    let mut times = Vec::new();
    for q in QUERIES {
        let t = Instant::now();
        let hits = searcher
            .search(&mut store, &searcher.request(q, config.top_k, config.threshold_in(config.mode), config.mode))?;
        let rows: Vec<_> =
            hits.into_iter().map(|h| vecgrep::pick::row(&HitRecord::new(&live.target.root, h, q), &dir)).collect();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(rows);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "picker search path, {} queries: median {:.1} ms, max {:.1} ms",
        times.len(),
        times[times.len() / 2],
        times[times.len() - 1]
    );
    Ok(())
}
