//! The first step of training the static code table (`train/`): distil a
//! table from the local model (`embed::distil_table`) and write it as f32
//! rows after a 48-byte header (`VGSTATIC`, vocabulary size, dimensions,
//! 32 zero bytes), the format `train/model/data.py` reads.
//! `cargo run --release -p vecgrep-lib --example distil_static -- OUT`

use std::io::Write;

fn main() -> anyhow::Result<()> {
    let out = std::env::args().nth(1).ok_or_else(|| anyhow::anyhow!("usage: distil_static OUT"))?;
    let assets = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL)?;
    let started = std::time::Instant::now();
    let rows = vecgrep::embed::distil_table(&assets)?;
    let vocab = rows.len() / vecgrep::embed::DIMS;
    let mut bytes = Vec::with_capacity(48 + rows.len() * 4);
    bytes.extend_from_slice(b"VGSTATIC");
    bytes.extend_from_slice(&(vocab as u32).to_le_bytes());
    bytes.extend_from_slice(&(vecgrep::embed::DIMS as u32).to_le_bytes());
    bytes.extend_from_slice(&[0; 32]);
    rows.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
    let temp = format!("{out}.tmp");
    std::fs::File::create(&temp)?.write_all(&bytes)?;
    std::fs::rename(&temp, &out)?;
    eprintln!("distilled {vocab} rows in {:.0?} into {out}", started.elapsed());
    Ok(())
}
