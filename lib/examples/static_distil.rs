//! Times distilling (or loading) the static table and prints how it ranks a few texts.
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let assets = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL)?;
    let t = Instant::now();
    let model = vecgrep::embed::StaticModel::load(&assets, &mut || eprintln!("distilling..."))?;
    eprintln!("loaded in {:?}", t.elapsed());
    let query = std::env::args().nth(1).unwrap_or_else(|| "retry failed uploads".into());
    let q = model.embed(&query);
    let texts = [
        "fn upload_with_retry(file: &Path, attempts: u32) -> Result<()>",
        "fn parse_config(path: &str) -> Config",
        "def render_template(name, context):",
        "for attempt in range(retries): try: s3.put_object(...) except: sleep(backoff)",
    ];
    let t = Instant::now();
    for text in texts {
        let v = model.embed(text);
        let cos: f32 = q.iter().zip(&v).map(|(a, b)| a * b).sum();
        println!("{cos:.3}  {text}");
    }
    eprintln!("embedded {} in {:?}", texts.len(), t.elapsed());
    Ok(())
}
