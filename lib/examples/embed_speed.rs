//! Measure embedding throughput of the local model on real source text, for
//! choosing batch size and threads: `cargo run --release --example embed_speed -- DIR`.

use std::time::Instant;

use vecgrep::embed::{Embedder, LocalEmbedder, Profile};

fn main() -> anyhow::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let mut texts = Vec::new();
    for entry in ignore::Walk::new(&dir).flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            if let Ok(s) = std::fs::read_to_string(entry.path()) {
                for piece in vecgrep::chunk::chunk_text(&s, 500, 100, &|_| true) {
                    texts.push(piece.text);
                }
            }
        }
        if texts.len() >= 200 {
            break;
        }
    }
    texts.truncate(200);
    let assets = vecgrep::assets::locate("all-MiniLM-L6-v2")?;
    let t = Instant::now();
    let mut model = LocalEmbedder::load(&assets, "all-MiniLM-L6-v2", Profile::Index)?;
    println!("load: {:?}", t.elapsed());
    let tokens: usize = texts.iter().map(|t| model.count_tokens(t)).sum();
    println!("{} texts, {} tokens", texts.len(), tokens);
    for batch in [1usize, 4, 16] {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        for group in refs.chunks(batch) {
            model.embed(group)?;
        }
        let secs = t.elapsed().as_secs_f64();
        println!("batch {batch:>2}: {:.1} chunks/s, {:.0} tokens/s", texts.len() as f64 / secs, tokens as f64 / secs);
    }
    Ok(())
}
