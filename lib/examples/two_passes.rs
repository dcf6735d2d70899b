//! What the first passes of a large vector table's ranking miss, on real
//! vectors: the indexes of the given evals joined into one table, queried
//! with their questions embedded by the model, the top 10 and top 100
//! against the exact ones. First the server's two passes (sign codes by
//! Hamming distance, then the exact cosine: `search::VectorTable::
//! in_two_passes`) at several first-pass sizes; then the one-shot search's
//! three (`store::SignCodes::best_estimates` between them, so that only a
//! few hundred exact cosines are read from the index).
//! `cargo run --release --example two_passes -- EVAL_DIR...` (each with
//! `tree/` indexed and fully embedded, and `qrels.jsonl`).

use std::time::Instant;

use vecgrep::embed::{Embedder, LocalEmbedder, Profile};
use vecgrep::search::VectorTable;
use vecgrep::store::{Scope, VectorRow};

fn main() -> anyhow::Result<()> {
    let mut table = VectorTable::empty();
    let (mut data, mut row_ids) = (Vec::new(), Vec::new());
    let mut questions = Vec::new();
    for (n, dir) in std::env::args().skip(1).enumerate() {
        let dir = std::path::Path::new(&dir);
        let root = vecgrep::project::select_root(&dir.join("tree"), &[])?;
        let store = vecgrep::store::open_for_reading(&root)?;
        // Ids of different indexes kept apart.
        let offset = n as i64 * 1_000_000_000;
        store.each_vector(&mut |row| {
            data.extend_from_slice(row.vector);
            row_ids.push(row.id + offset);
            table.push(VectorRow {
                id: row.id + offset,
                file: row.file,
                start_line: row.start_line,
                vector: row.vector,
            })
        })?;
        for line in std::fs::read_to_string(dir.join("qrels.jsonl"))?.lines() {
            let q: serde_json::Value = serde_json::from_str(line)?;
            questions.push(q["query"].as_str().unwrap_or_default().to_string());
        }
    }
    let assets = vecgrep::embed::locate("all-MiniLM-L6-v2")?;
    let mut model = LocalEmbedder::load(&assets, "all-MiniLM-L6-v2", Profile::Index, 2)?;
    let refs: Vec<&str> = questions.iter().map(String::as_str).collect();
    let queries = model.embed(&refs)?;
    println!("{} vectors, {} questions", table.len(), queries.len());
    println!(
        "{:>9} {:>8} | {:>11} {:>12} {:>10} | {:>9} {:>9}",
        "kept", "of table", "top-10 same", "recall@10", "recall@100", "exact ms", "2-pass ms"
    );
    let all = Scope::default();
    let exact: Vec<Vec<i64>> = queries.iter().map(|q| ids(&table.ranking(q, &all, 100))).collect();
    let t = Instant::now();
    queries.iter().for_each(|q| drop(table.ranking(q, &all, 100)));
    let exact_ms = t.elapsed().as_secs_f64() * 1000.0 / queries.len() as f64;
    // 1/25 of the table is what a first pass keeps at least (`in_two_passes`).
    for kept in [8000, 4000, table.len() / 25, 2000, 1000, 500, 200] {
        let two = table.clone().keeping(kept);
        let t = Instant::now();
        let found: Vec<Vec<i64>> = queries.iter().map(|q| ids(&two.ranking(q, &all, 100))).collect();
        let two_ms = t.elapsed().as_secs_f64() * 1000.0 / queries.len() as f64;
        let (same, recall10, recall100) = agreement(&exact, &found);
        println!(
            "{kept:>9} {:>7.2}% | {same:>10.1}% {recall10:>12.4} {recall100:>10.4} | {exact_ms:>9.2} {two_ms:>9.2}",
            kept as f64 * 100.0 / table.len() as f64,
        );
    }
    three_passes(&data, &row_ids, &queries, &exact);
    Ok(())
}

/// The one-shot search's passes: Hamming keeps `first`, the estimates keep
/// `second`, the exact cosine orders those.
fn three_passes(data: &[f32], ids: &[i64], queries: &[Vec<f32>], exact: &[Vec<i64>]) {
    let dims = queries.first().map_or(0, Vec::len);
    let codes = vecgrep::store::SignCodes::new(data, dims);
    println!();
    println!(
        "{:>9} {:>9} | {:>11} {:>12} {:>10} | {:>9}",
        "first", "second", "top-10 same", "recall@10", "recall@100", "ms"
    );
    let dot = |i: usize, q: &[f32]| data[i * dims..(i + 1) * dims].iter().zip(q).map(|(a, b)| a * b).sum::<f32>();
    for first in [ids.len() / 25, ids.len() / 10] {
        for second in [200, 400, 1000, 2000] {
            let t = Instant::now();
            let found: Vec<Vec<i64>> = queries
                .iter()
                .map(|q| {
                    let kept = codes.nearest(q, |_| true, first);
                    let mut best: Vec<(f32, usize)> =
                        codes.best_estimates(q, &kept, second).into_iter().map(|i| (dot(i, q), i)).collect();
                    best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    best.iter().take(100).map(|&(_, i)| ids[i]).collect()
                })
                .collect();
            let ms = t.elapsed().as_secs_f64() * 1000.0 / queries.len() as f64;
            let (same, recall10, recall100) = agreement(exact, &found);
            println!("{first:>9} {second:>9} | {same:>10.1}% {recall10:>12.4} {recall100:>10.4} | {ms:>9.2}");
        }
    }
}

/// How far `found` agrees with `exact` (the ids each query should get,
/// best first): the share of queries with the same top 10, in percent,
/// and recall at 10 and at 100.
fn agreement(exact: &[Vec<i64>], found: &[Vec<i64>]) -> (f64, f64, f64) {
    let recall = |k: usize| -> f64 {
        let hits: usize = exact
            .iter()
            .zip(found)
            .map(|(e, f)| e[..k.min(e.len())].iter().filter(|id| f[..k.min(f.len())].contains(id)).count())
            .sum();
        hits as f64 / exact.iter().map(|e| k.min(e.len())).sum::<usize>() as f64
    };
    let same = exact.iter().zip(found).filter(|(e, f)| e[..10.min(e.len())] == f[..10.min(f.len())]).count();
    (same as f64 * 100.0 / exact.len().max(1) as f64, recall(10), recall(100))
}

fn ids(ranked: &[(i64, f32)]) -> Vec<i64> {
    ranked.iter().map(|r| r.0).collect()
}
