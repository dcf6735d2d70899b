//! Whether a server's static vectors held in memory (`search::VectorTable::
//! load_statics`, ranked by a dot product) rank as the store's SQL scan does
//! (`IndexReader::nearest_static`, sqlite-vec's cosine), on real indexes:
//! for each question of the given evals, the top 100 both ways: how many
//! lists are the same, where the others first differ, the largest score
//! difference, and each way's time.
//! `cargo run --release --example static_held -- EVAL_DIR...` (each with
//! `tree/` indexed statically, and `qrels.jsonl`).

use std::time::{Duration, Instant};

use vecgrep::embed::StaticModel;
use vecgrep::search::VectorTable;
use vecgrep::store::Scope;

fn main() -> anyhow::Result<()> {
    let statics = StaticModel::load(&vecgrep::embed::locate_model("all-MiniLM-L6-v2")?)?;
    let all = Scope::default();
    let (mut questions, mut same, mut worst) = (0usize, 0usize, 0f32);
    let (mut by_store, mut by_memory) = (Duration::ZERO, Duration::ZERO);
    for dir in std::env::args().skip(1) {
        let dir = std::path::Path::new(&dir);
        let root = vecgrep::project::select_root(&dir.join("tree"), &[])?;
        let store = vecgrep::store::open_for_reading(&root)?;
        let held = VectorTable::load_statics(&*store)?;
        for line in std::fs::read_to_string(dir.join("qrels.jsonl"))?.lines() {
            let q: serde_json::Value = serde_json::from_str(line)?;
            let query = statics.embed(q["query"].as_str().unwrap_or_default());
            let t = Instant::now();
            let stored = store.nearest_static(&query, &all, 100)?;
            by_store += t.elapsed();
            let t = Instant::now();
            let memory = held.ranking(&query, &all, 100);
            by_memory += t.elapsed();
            questions += 1;
            let first_apart = stored.iter().zip(&memory).position(|(a, b)| a.0 != b.0);
            match first_apart {
                None => same += 1,
                Some(at) => println!(
                    "{}: apart from rank {} ({:?} / {:?})",
                    dir.display(),
                    at + 1,
                    &stored[at..(at + 2).min(stored.len())],
                    &memory[at..(at + 2).min(memory.len())]
                ),
            }
            for (a, b) in stored.iter().zip(&memory) {
                worst = worst.max((a.1 - b.1).abs());
            }
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1000.0 / questions.max(1) as f64;
    println!("{questions} questions: top 100 the same for {same}, largest score difference {worst:.2e}");
    println!("per question: store {:.2} ms, held in memory {:.2} ms", per(by_store), per(by_memory));
    Ok(())
}
