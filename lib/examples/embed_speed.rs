//! Measure embedding throughput of the local model on real source text, for
//! choosing threads: `cargo run --release --example embed_speed -- DIR`.
//! Prints one model on every core (what a query or a one-file index run
//! uses), then one model per core with a thread each, embedding side by side
//! (what an index run with many files does). The model embeds one text per
//! run (see `vecgrep::embed::graph`), so there is no batch size to choose.

use std::time::Instant;

use vecgrep::chunk::Syntax;
use vecgrep::embed::{Embedder, LocalEmbedder, Profile};

fn main() -> anyhow::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let mut texts = Vec::new();
    for entry in ignore::Walk::new(&dir).flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            if let Ok(s) = std::fs::read_to_string(entry.path()) {
                for piece in
                    vecgrep::chunk::chunk_text(&s, Syntax::of_path(&entry.path().to_string_lossy()), 500, 100, &|_| {
                        true
                    })
                {
                    texts.push(piece.text);
                }
            }
        }
        if texts.len() >= 400 {
            break;
        }
    }
    texts.truncate(400);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let assets = vecgrep::embed::locate("all-MiniLM-L6-v2")?;
    let t = Instant::now();
    let mut model = LocalEmbedder::load(&assets, "all-MiniLM-L6-v2", Profile::Index, cores)?;
    println!("load: {:?}", t.elapsed());
    let tokens: usize = texts.iter().map(|t| model.count_tokens(t)).sum();
    println!("{} texts, {} tokens", texts.len(), tokens);
    let rate = |secs: f64| format!("{:.1} chunks/s, {:.0} tokens/s", texts.len() as f64 / secs, tokens as f64 / secs);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t = Instant::now();
    model.embed(&refs)?;
    println!("1 model, {cores} threads:          {}", rate(t.elapsed().as_secs_f64()));
    let mut models: Vec<LocalEmbedder> = (0..cores)
        .map(|_| LocalEmbedder::load(&assets, "all-MiniLM-L6-v2", Profile::Index, 1))
        .collect::<anyhow::Result<_>>()?;
    let t = Instant::now();
    std::thread::scope(|s| {
        let share = texts.len().div_ceil(cores);
        for (m, part) in models.iter_mut().zip(texts.chunks(share)) {
            s.spawn(move || part.iter().try_for_each(|x| m.embed(&[x.as_str()]).map(drop)));
        }
    });
    println!("{cores} models, 1 thread each: {}", rate(t.elapsed().as_secs_f64()));
    Ok(())
}
