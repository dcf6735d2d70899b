//! A large vector table's first pass: each vector as the signs of its
//! components about the table's mean, 48 bytes for 384 dimensions instead
//! of 1,536, compared by Hamming distance. Cheap enough to scan a million
//! in milliseconds; it keeps many more candidates than a search returns,
//! and the exact cosine ranks those (`VectorTable::ranking`).

/// The sign codes of a table's vectors.
#[derive(Clone)]
pub(super) struct SignCodes {
    /// Subtracted before taking signs: embeddings share a common direction,
    /// and signs about zero would say little but that.
    mean: Vec<f32>,
    /// u64 words per code.
    words: usize,
    codes: Vec<u64>,
}

impl SignCodes {
    /// The codes of `data`, vectors of `dims` components one after another.
    pub(super) fn new(data: &[f32], dims: usize) -> SignCodes {
        let count = data.len() / dims.max(1);
        let mut mean = vec![0f64; dims];
        for v in data.chunks_exact(dims) {
            for (m, x) in mean.iter_mut().zip(v) {
                *m += f64::from(*x);
            }
        }
        let mean: Vec<f32> = mean.iter().map(|m| (m / count.max(1) as f64) as f32).collect();
        let words = dims.div_ceil(64);
        let mut signs = SignCodes { mean, words, codes: vec![0; count * words] };
        let mut code = vec![0u64; words];
        for (i, v) in data.chunks_exact(dims).enumerate() {
            signs.code(v, &mut code);
            signs.codes[i * words..(i + 1) * words].copy_from_slice(&code);
        }
        signs
    }

    /// Bit d of `out` set when component d of `v` is above the mean.
    fn code(&self, v: &[f32], out: &mut [u64]) {
        out.fill(0);
        for (d, (x, m)) in v.iter().zip(&self.mean).enumerate() {
            if x > m {
                out[d / 64] |= 1 << (d % 64);
            }
        }
    }

    /// The positions of the `keep` codes nearest `query`'s among those
    /// `admits` lets in, nearest first; equal distances in position order.
    pub(super) fn nearest(&self, query: &[f32], admits: impl Fn(usize) -> bool, keep: usize) -> Vec<usize> {
        let mut q = vec![0u64; self.words];
        self.code(query, &mut q);
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
                let d: u32 = code.iter().zip(&q).map(|(a, b)| (a ^ b).count_ones()).sum();
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
    }
}
