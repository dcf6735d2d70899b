//! Time each step of loading the model and embedding one query, per ONNX
//! Runtime graph-optimization level: `cargo run --release --example load_time`.

#![allow(unsafe_code)]

use std::time::Instant;

use ort::session::{builder::GraphOptimizationLevel, Session};
use ort::value::Tensor;

fn main() -> anyhow::Result<()> {
    let assets = vecgrep::embed::locate("all-MiniLM-L6-v2")?;
    let t = Instant::now();
    let env = ort::init_from(&assets.ort_library)?.build()?;
    println!("ort init: {:?}", t.elapsed());
    let t = Instant::now();
    let bytes = std::fs::read(assets.model_dir.join("model.onnx"))?;
    println!("read model: {:?}", t.elapsed());
    let t = Instant::now();
    let mut tok = tokenizers::Tokenizer::from_file(assets.model_dir.join("tokenizer.json"))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    tok.with_padding(None);
    tok.with_truncation(Some(tokenizers::TruncationParams { max_length: 256, ..Default::default() }))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("tokenizer: {:?}", t.elapsed());
    let level = std::env::args().nth(1).unwrap_or_else(|| "3".into());
    let threads: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(2);
    let opt = match level.as_str() {
        "0" => GraphOptimizationLevel::Disable,
        "1" => GraphOptimizationLevel::Level1,
        "2" => GraphOptimizationLevel::Level2,
        _ => GraphOptimizationLevel::Level3,
    };
    let t = Instant::now();
    let mut b = Session::builder(&env)?
        .with_optimization_level(opt)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .with_intra_threads(threads)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(p) = std::env::args().nth(3) {
        if let Some(path) = p.strip_prefix("save:") {
            b = b.with_optimized_model_path(path).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
    }
    for kv in std::env::args().skip(4) {
        let (k, v) = kv.split_once('=').unwrap();
        b = b.with_config_entry(k, v).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let ort_bytes;
    let mut in_mem;
    let mut plain;
    let session: &mut Session = if let Some(p) = std::env::args().nth(3).filter(|p| p.starts_with("load:")) {
        plain = b.commit_from_file(&p[5..])?;
        &mut plain
    } else if let Some(p) = std::env::args().nth(3).filter(|p| p.starts_with("mem:")) {
        let t2 = Instant::now();
        ort_bytes = unsafe { memmap2::Mmap::map(&std::fs::File::open(&p[4..])?)? };
        println!("read ort bytes: {:?}", t2.elapsed());
        b = b
            .with_config_entry("session.use_ort_model_bytes_directly", "1")
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .with_config_entry("session.use_ort_model_bytes_for_initializers", "1")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        in_mem = b.commit_from_memory(&ort_bytes)?;
        &mut in_mem
    } else {
        plain = b.commit_from_memory(&bytes)?;
        &mut plain
    };
    println!("session L{level} t{threads}: {:?}", t.elapsed());
    for text in ["how is the project root chosen", &"fn main() { let x = foo(bar); }\n".repeat(20)] {
        let enc = tok.encode(text, true).map_err(|e| anyhow::anyhow!("{e}"))?;
        let n = enc.len().min(256);
        let ids: Vec<i64> = enc.get_ids()[..n].iter().map(|&x| x as i64).collect();
        let mask = vec![1i64; n];
        let types = vec![0i64; n];
        for i in 0..3 {
            let t = Instant::now();
            let out = session.run(ort::inputs![
                "input_ids" => Tensor::from_array(([1usize, n], ids.clone()))?,
                "attention_mask" => Tensor::from_array(([1usize, n], mask.clone()))?,
                "token_type_ids" => Tensor::from_array(([1usize, n], types.clone()))?,
            ])?;
            let (shape, data) = out[0].try_extract_tensor::<f32>()?;
            if i == 0 || i == 2 {
                println!("run{i} {n} tokens: {:?} shape {:?} first {}", t.elapsed(), shape, data[0]);
            }
        }
    }
    Ok(())
}
