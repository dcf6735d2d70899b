//! Peak memory of N index sessions embedding one text each, to weigh memory
//! against speed: `/usr/bin/time -v cargo run --release --example session_memory -- N`.
use vecgrep::embed::{Embedder, LocalEmbedder, Profile};
fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1), |s| s.parse())?;
    let assets = vecgrep::embed::locate("all-MiniLM-L6-v2")?;
    let mut models: Vec<LocalEmbedder> = (0..n)
        .map(|_| LocalEmbedder::load(&assets, "all-MiniLM-L6-v2", Profile::Index, 1))
        .collect::<anyhow::Result<_>>()?;
    let text = "fn main() { println!(\"hello\"); } ".repeat(30);
    for m in &mut models {
        m.embed(&[text.as_str()])?;
    }
    Ok(())
}
