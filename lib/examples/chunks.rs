//! Print the chunks of a file as the index would cut them, for tuning the
//! chunker: `cargo run --release --example chunks -- FILE [SIZE] [OVERLAP]`.
fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or_else(|| anyhow::anyhow!("usage: chunks FILE [SIZE] [OVERLAP]"))?;
    let size = args.next().map_or(Ok(500), |s| s.parse())?;
    let overlap = args.next().map_or(Ok(100), |s| s.parse())?;
    let text = String::from_utf8_lossy(&std::fs::read(&path)?).into_owned();
    let chunks =
        vecgrep::chunk::chunk_text(&text, vecgrep::chunk::Syntax::of_path(&path), size, overlap, &|t| t.len() < 900);
    let contexts = vecgrep::chunk::contexts(&path, &text, &chunks);
    for (c, ctx) in chunks.iter().zip(&contexts) {
        println!("=== {}-{} ({} chars) [{}]", c.start_line, c.end_line, c.text.chars().count(), ctx.words());
        println!("{}", c.text);
    }
    Ok(())
}
