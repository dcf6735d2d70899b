//! Distilling a static table from the local model by model2vec's recipe:
//! each vocabulary token run through MiniLM once, alone between `[CLS]` and
//! `[SEP]`; the vectors centred (what every token shares says nothing) and
//! weighted down the more common the token (SIF weights over the
//! vocabulary's frequency order). This is where the shipped code table's
//! training starts (`train/`, `examples/distil_static.rs`); vecgrep itself
//! loads the trained table (`static_model`) and never distils.

use anyhow::{anyhow, Result};

use super::assets::Assets;
use super::local::LocalEmbedder;
use super::{Profile, DIMS};

/// SIF's smoothing: a token of probability p weighs a / (a + p).
const SIF_A: f32 = 1e-4;

/// BERT's vocabulary: ids below this are padding, unused slots and the
/// special tokens; the rest are characters, then word pieces roughly in
/// order of frequency, which is what the weights take as the token's rank.
pub(super) const FIRST_REAL_TOKEN: usize = 999;

/// Each token's sentence vector, centred and weighted, `vocab` rows of
/// `DIMS`; rows of ids below `FIRST_REAL_TOKEN` stay zero. The vocabulary
/// is shared out between one model per core (at most four).
pub fn distil_table(assets: &Assets) -> Result<Vec<f32>> {
    let vocab = super::local::load_tokenizer(assets)?.get_vocab_size(true);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let ids: Vec<usize> = (FIRST_REAL_TOKEN..vocab).collect();
    let share = ids.len().div_ceil(cores);
    let parts: Vec<Result<Vec<f32>>> = std::thread::scope(|s| {
        let handles: Vec<_> = ids.chunks(share).map(|part| s.spawn(move || token_vectors(assets, part))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("distilling panicked")))).collect()
    });
    let mut rows = vec![0f32; FIRST_REAL_TOKEN * DIMS];
    for part in parts {
        rows.extend(part?);
    }
    centre_and_weigh(&mut rows, vocab);
    Ok(rows)
}

/// The model's vector for each token alone, in order.
fn token_vectors(assets: &Assets, ids: &[usize]) -> Result<Vec<f32>> {
    let mut model = LocalEmbedder::load(assets, "distil", Profile::Index, 1)?;
    let (cls, sep) = special_ids(model.tokenizer())?;
    let mut rows = Vec::with_capacity(ids.len() * DIMS);
    for &id in ids {
        rows.extend(model.embed_ids(vec![cls, id as i64, sep])?);
    }
    Ok(rows)
}

fn special_ids(tokenizer: &tokenizers::Tokenizer) -> Result<(i64, i64)> {
    let id = |t: &str| tokenizer.token_to_id(t).map(i64::from).ok_or_else(|| anyhow!("the tokenizer has no {t}"));
    Ok((id("[CLS]")?, id("[SEP]")?))
}

/// Subtract the mean of the real tokens' rows, then scale each by its SIF
/// weight, taking a token's frequency from its rank (Zipf).
fn centre_and_weigh(rows: &mut [f32], vocab: usize) {
    let real = FIRST_REAL_TOKEN..vocab;
    let mut mean = vec![0f32; DIMS];
    for id in real.clone() {
        mean.iter_mut().zip(&rows[id * DIMS..(id + 1) * DIMS]).for_each(|(m, x)| *m += x);
    }
    mean.iter_mut().for_each(|m| *m /= real.len().max(1) as f32);
    let harmonic: f32 = (1..=real.len()).map(|r| 1.0 / (r as f32 + 1.0)).sum();
    for (rank, id) in real.enumerate() {
        let p = 1.0 / ((rank as f32 + 2.0) * harmonic);
        let weight = SIF_A / (SIF_A + p);
        for (x, m) in rows[id * DIMS..(id + 1) * DIMS].iter_mut().zip(&mean) {
            *x = (*x - m) * weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_fall_as_tokens_get_common_and_the_mean_is_removed() {
        let vocab = FIRST_REAL_TOKEN + 3;
        let mut rows = vec![0f32; vocab * DIMS];
        for (i, id) in (FIRST_REAL_TOKEN..vocab).enumerate() {
            rows[id * DIMS] = 1.0;
            rows[id * DIMS + 1] = i as f32;
        }
        centre_and_weigh(&mut rows, vocab);
        let row = |id: usize| &rows[id * DIMS..id * DIMS + 2];
        assert_eq!(row(FIRST_REAL_TOKEN)[0], 0.0, "what every token shares is removed");
        // The commonest token (first) is below the mean; the rarest above it, weighted more.
        assert!(row(FIRST_REAL_TOKEN)[1] < 0.0 && row(vocab - 1)[1] > 0.0);
        assert!(row(vocab - 1)[1].abs() > row(FIRST_REAL_TOKEN)[1].abs());
        assert!(rows[..FIRST_REAL_TOKEN * DIMS].iter().all(|&x| x == 0.0), "special rows stay zero");
    }
}
