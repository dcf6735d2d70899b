//! The last step of training the static code table (`train/`): calibrate a
//! trained table of f32 rows (the format `distil_static` writes) and pack
//! it into the file vecgrep loads (`embed::encode_table`: i8 rows, a scale
//! each, the tokenizer's hash, the calibration), writing its BLAKE3 beside
//! it (`OUT.blake3`), which vecgrep checks the shipped table against.
//!
//! The calibration maps a static cosine onto the model's scale, so that a
//! threshold means the same for chunks known by their static vector alone:
//! for questions of the pairs (every 40th), the 100 teacher chunks nearest
//! by static cosine, each with its cosine by the model (the question
//! embedded here, the chunk's vector from the teacher's index); the line
//! that gives the static cosines the model's mean and spread over those.
//! Not least squares: that line regresses to the mean, and would put the
//! best static matches below a threshold their model cosines pass.
//! The packed table weighs a token that recurs in a text by `1 + ln n`
//! (`TokenWeighting::LogCount`); `--by-count` packs one that sums its rows
//! `n` times, as tables did before.
//! `cargo run --release -p vecgrep-lib --example pack_static -- IN PAIRS TEACHER_INDEX_DB OUT [--by-count]`

use anyhow::{bail, Context};
use vecgrep::embed::{Embedder, LocalEmbedder, Profile, StaticModel, TokenWeighting, DIMS};

const QUESTION_STRIDE: usize = 40;
const NEAREST: usize = 100;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let weighting = match args.last().map(String::as_str) {
        Some("--by-count") => {
            args.pop();
            TokenWeighting::Count
        }
        _ => TokenWeighting::LogCount,
    };
    let [input, pairs, teacher, out] = args.as_slice() else {
        bail!("usage: pack_static IN PAIRS TEACHER_INDEX_DB OUT [--by-count]")
    };
    let (rows, vocab) = read_rows(input)?;
    let assets = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL)?;
    let tokenizer = *blake3::hash(&std::fs::read(assets.model_dir.join("tokenizer.json"))?).as_bytes();
    let uncalibrated = format!("{out}.uncalibrated");
    std::fs::write(&uncalibrated, vecgrep::embed::encode_table(&rows, vocab, weighting, tokenizer, (1.0, 0.0)))?;
    // The table being packed, by name: the loader takes any table so named.
    std::env::set_var(vecgrep::embed::TABLE_OVERRIDE_VAR, &uncalibrated);
    let statics = StaticModel::load(&assets.model_dir)?;
    let (slope, intercept, points) = calibrate(&statics, &assets, pairs, teacher)?;
    std::fs::remove_file(&uncalibrated)?;
    let packed = vecgrep::embed::encode_table(&rows, vocab, weighting, tokenizer, (slope, intercept));
    std::fs::write(out, &packed).with_context(|| format!("cannot write {out}"))?;
    let hash = blake3::hash(&packed).to_hex();
    std::fs::write(format!("{out}.blake3"), format!("{hash}\n"))?;
    eprintln!(
        "packed {vocab} rows into {out} ({} bytes, blake3 {hash}); model cosine = {slope:.4} x static + {intercept:.4} over {points} pairs",
        packed.len()
    );
    Ok(())
}

fn read_rows(input: &str) -> anyhow::Result<(Vec<f32>, usize)> {
    let bytes = std::fs::read(input).with_context(|| format!("cannot read {input}"))?;
    if bytes.len() < 48 || &bytes[..8] != b"VGSTATIC" {
        bail!("{input} is not a table of f32 rows");
    }
    let vocab = u32::from_le_bytes(bytes[8..12].try_into()?) as usize;
    let rows: Vec<f32> = bytes[48..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    if rows.len() != vocab * DIMS {
        bail!("{input} holds {} values, not {vocab} rows of {DIMS}", rows.len());
    }
    Ok((rows, vocab))
}

/// The line from static cosines to the model's that matches their means and
/// spreads, and how many points it went through.
fn calibrate(
    statics: &StaticModel,
    assets: &vecgrep::embed::Assets,
    pairs: &str,
    teacher: &str,
) -> anyhow::Result<(f32, f32, usize)> {
    let questions: Vec<String> = std::fs::read_to_string(pairs)?
        .lines()
        .step_by(QUESTION_STRIDE)
        .map(|l| Ok(serde_json::from_str::<serde_json::Value>(l)?["query"].as_str().unwrap_or_default().to_string()))
        .collect::<anyhow::Result<_>>()?;
    let (chunk_statics, chunk_models) = teacher_chunks(statics, teacher)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut model = LocalEmbedder::load(assets, "calibrate", Profile::Index, threads)?;
    let (mut sx, mut sy, mut sxx, mut syy, mut n) = (0f64, 0f64, 0f64, 0f64, 0usize);
    for question in &questions {
        let by_static = statics.embed(question);
        let by_model = model.embed(&[question.as_str()])?.remove(0);
        let mut nearest: Vec<(f32, usize)> =
            chunk_statics.chunks_exact(DIMS).enumerate().map(|(i, c)| (dot(c, &by_static), i)).collect();
        nearest.sort_by(|a, b| b.0.total_cmp(&a.0));
        for &(s, i) in nearest.iter().take(NEAREST) {
            let m = dot(&chunk_models[i * DIMS..(i + 1) * DIMS], &by_model);
            (sx, sy, sxx, syy, n) = (sx + s as f64, sy + m as f64, sxx + (s * s) as f64, syy + (m * m) as f64, n + 1);
        }
    }
    let n_f = n as f64;
    let spread = |sum: f64, squares: f64| (squares / n_f - (sum / n_f).powi(2)).max(1e-12).sqrt();
    let slope = spread(sy, syy) / spread(sx, sxx);
    let intercept = (sy - slope * sx) / n_f;
    Ok((slope as f32, intercept as f32, n))
}

/// The teacher's chunks: their static vectors by `statics` and their model vectors, row after row.
fn teacher_chunks(statics: &StaticModel, teacher: &str) -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
    let db = rusqlite::Connection::open_with_flags(teacher, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = db.prepare("SELECT around, text, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id")?;
    let (mut by_static, mut by_model) = (Vec::new(), Vec::new());
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (around, text, vector): (String, String, Vec<u8>) = (row.get(0)?, row.get(1)?, row.get(2)?);
        by_static.extend(statics.embed(&vecgrep::chunk::embedded_text(&around, &text)));
        by_model.extend(vector.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    }
    Ok((by_static, by_model))
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
