//! A large vector table in brief: each vector as the signs of its
//! components about the table's mean, 48 bytes for 384 dimensions instead
//! of 1,536. Two questions narrow a million vectors to a few hundred in
//! milliseconds: the codes nearest the query's code by Hamming distance
//! (`nearest`), and among those, the ones whose signs best agree with the
//! query's own components (`best_estimates`, an estimate of the cosine
//! far closer than the Hamming distance). The exact cosine then orders
//! what is left: the server's in-memory table (`search::VectorTable`) and a
//! one-shot search of a large SQLite index (`sqlite/codes.rs`) both do so.

/// The sign codes of a table's vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct SignCodes {
    /// Subtracted before taking signs: embeddings share a common direction,
    /// and signs about zero would say little but that.
    mean: Vec<f32>,
    /// u64 words per code.
    words: usize,
    codes: Vec<u64>,
}

impl SignCodes {
    /// The codes of `data`, vectors of `dims` components one after another.
    pub fn new(data: &[f32], dims: usize) -> SignCodes {
        let mut count = 0usize;
        let mut mean = vec![0f64; dims];
        // A vector not finite (held as NaN where it has no angle,
        // `VectorTable::push`) would make every code alike.
        for v in data.chunks_exact(dims).filter(|v| v.iter().all(|x| x.is_finite())) {
            count += 1;
            for (m, x) in mean.iter_mut().zip(v) {
                *m += f64::from(*x);
            }
        }
        let mean: Vec<f32> = mean.iter().map(|m| (m / count.max(1) as f64) as f32).collect();
        let mut signs = SignCodes::about(mean);
        for v in data.chunks_exact(dims) {
            signs.push(v);
        }
        signs
    }

    /// No codes yet, of vectors to be taken about `mean` (`push`).
    pub fn about(mean: Vec<f32>) -> SignCodes {
        let words = mean.len().div_ceil(64);
        SignCodes { mean, words, codes: Vec::new() }
    }

    /// Add the code of `v`.
    pub fn push(&mut self, v: &[f32]) {
        let at = self.codes.len();
        self.codes.resize(at + self.words, 0);
        let (mean, code) = (&self.mean, &mut self.codes[at..]);
        for (d, (x, m)) in v.iter().zip(mean).enumerate() {
            if x > m {
                code[d / 64] |= 1 << (d % 64);
            }
        }
    }

    /// How many codes there are.
    pub fn len(&self) -> usize {
        self.codes.len() / self.words.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The mean the signs are taken about.
    pub fn mean(&self) -> &[f32] {
        &self.mean
    }

    /// Code `i`, as little-endian bytes one after another.
    pub fn code_bytes(&self, i: usize) -> impl Iterator<Item = u8> + '_ {
        self.codes[i * self.words..(i + 1) * self.words].iter().flat_map(|w| w.to_le_bytes())
    }

    /// Add a code given as `code_bytes` gives it.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks(8).map(|b| {
            let mut word = [0u8; 8];
            word[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(word)
        });
        for _ in 0..self.words {
            self.codes.push(words.next().unwrap_or(0));
        }
    }

    /// Bytes a code takes.
    pub fn code_size(&self) -> usize {
        self.words * 8
    }

    /// The positions of the `keep` codes nearest `query`'s among those
    /// `admits` lets in, nearest first; equal distances in position order.
    pub fn nearest(&self, query: &[f32], admits: impl Fn(usize) -> bool, keep: usize) -> Vec<usize> {
        let mut q = SignCodes::about(self.mean.clone());
        q.push(query);
        let q = &q.codes;
        // One pass for every distance and how many share it, then the
        // nearest taken by distance: no sort of a million.
        let out_of_scope = u16::MAX;
        let mut counts = vec![0usize; self.words * 64 + 1];
        let distances: Vec<u16> = self
            .codes
            .chunks_exact(self.words)
            .enumerate()
            .map(|(i, code)| {
                if !admits(i) {
                    return out_of_scope;
                }
                let d: u32 = code.iter().zip(q).map(|(a, b)| (a ^ b).count_ones()).sum();
                counts[d as usize] += 1;
                d as u16
            })
            .collect();
        let mut taken = 0;
        let mut by_distance: Vec<Vec<usize>> = Vec::new();
        for n in counts {
            if taken >= keep {
                break;
            }
            by_distance.push(Vec::with_capacity(n.min(keep - taken)));
            taken += n;
        }
        let cutoff = by_distance.len();
        for (i, &d) in distances.iter().enumerate() {
            if usize::from(d) < cutoff {
                by_distance[usize::from(d)].push(i);
            }
        }
        by_distance.into_iter().flatten().take(keep).collect()
    }

    /// The `keep` of `candidates` (positions) whose codes agree best with
    /// `query`, best first, equal estimates in position order: each sign
    /// weighed by the query's own component about the mean, which
    /// estimates the cosine where the Hamming distance only counts
    /// disagreements. A table per byte of the code holds the sums of the
    /// components its bits stand for, so a code costs one lookup a byte.
    pub fn best_estimates(&self, query: &[f32], candidates: &[usize], keep: usize) -> Vec<usize> {
        let centred: Vec<f32> = query.iter().zip(&self.mean).map(|(q, m)| q - m).collect();
        let bytes = self.words * 8;
        let mut sums = vec![0f32; bytes * 256];
        for (byte, table) in sums.chunks_exact_mut(256).enumerate() {
            let parts = centred.get(byte * 8..).unwrap_or_default();
            for (value, sum) in table.iter_mut().enumerate() {
                *sum = parts.iter().take(8).enumerate().filter(|(bit, _)| value >> bit & 1 == 1).map(|(_, c)| c).sum();
            }
        }
        let mut estimated: Vec<(f32, usize)> = candidates
            .iter()
            .map(|&i| {
                let code = &self.codes[i * self.words..(i + 1) * self.words];
                let bytes = code.iter().flat_map(|w| w.to_le_bytes());
                let estimate = bytes.enumerate().map(|(at, b)| sums[at * 256 + usize::from(b)]).sum::<f32>();
                (estimate, i)
            })
            .collect();
        let better = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if estimated.len() > keep {
            estimated.select_nth_unstable_by(keep, better);
            estimated.truncate(keep);
        }
        estimated.sort_by(better);
        estimated.into_iter().map(|(_, i)| i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_codes_are_those_with_the_fewest_signs_apart() {
        let dims = 70; // two words, the second partly used
        let vector = |flipped: &[usize]| -> Vec<f32> {
            (0..dims)
                .map(|d| if flipped.contains(&d) { -1.0 } else { 1.0 } * if d % 2 == 0 { 1.0 } else { 0.5 })
                .collect()
        };
        let mut data = Vec::new();
        // A vector and its opposite make the mean 0 in every component.
        for flipped in [&[][..], &[3, 66], &[1], &(0..dims).collect::<Vec<_>>(), &[5, 6, 69]] {
            data.extend(vector(flipped));
        }
        let signs = SignCodes::new(&data, dims);
        let query = vector(&[]);
        assert_eq!(signs.nearest(&query, |_| true, 5), [0, 2, 1, 4, 3]);
        assert_eq!(signs.nearest(&query, |_| true, 2), [0, 2]);
        assert_eq!(signs.nearest(&query, |i| i != 0, 2), [2, 1], "what the scope leaves out is never kept");
        assert_eq!(signs.nearest(&query, |_| true, 99).len(), 5);
        assert!(signs.nearest(&query, |_| false, 3).is_empty());
        // Estimates weigh each disagreement by the query's component:
        // flipping dimension 1 (0.5) costs less than flipping 3 and 66 (0.5 + 1).
        assert_eq!(signs.best_estimates(&query, &[3, 1, 0, 2, 4], 5), [0, 2, 1, 4, 3]);
        assert_eq!(signs.best_estimates(&query, &[4, 2], 1), [2]);
    }

    #[test]
    fn estimates_sum_the_query_components_the_signs_agree_with() {
        let dims = 20;
        let mut rng = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % 2001) as f32 / 1000.0 - 1.0
        };
        let data: Vec<f32> = (0..dims * 50).map(|_| next()).collect();
        let signs = SignCodes::new(&data, dims);
        let query: Vec<f32> = (0..dims).map(|_| next()).collect();
        // The estimate by hand: the centred query's components, each
        // counted with the sign the code gives it.
        let by_hand = |i: usize| -> f32 {
            let v = &data[i * dims..(i + 1) * dims];
            (0..dims).map(|d| (query[d] - signs.mean[d]) * if v[d] > signs.mean[d] { 1.0 } else { -1.0 }).sum()
        };
        let all: Vec<usize> = (0..50).collect();
        let ordered = signs.best_estimates(&query, &all, 50);
        assert_eq!(ordered.len(), 50);
        assert!(ordered.windows(2).all(|w| by_hand(w[0]) >= by_hand(w[1]) - 1e-5), "{ordered:?}");
        let best = by_hand(ordered[0]);
        assert!(all.iter().all(|&i| by_hand(i) <= best + 1e-5));
        assert_eq!(signs.best_estimates(&query, &all, 7), ordered[..7]);
    }

    #[test]
    fn codes_round_trip_through_their_bytes() {
        let data: Vec<f32> = (0..70 * 3).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let signs = SignCodes::new(&data, 70);
        let mut copy = SignCodes::about(signs.mean().to_vec());
        for i in 0..signs.len() {
            copy.push_bytes(&signs.code_bytes(i).collect::<Vec<_>>());
        }
        assert_eq!(copy, signs);
        assert_eq!(signs.code_size(), 16);
    }
}
