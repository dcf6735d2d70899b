//! Every vector of an index in memory, for a long-running searcher (the
//! server, the picker): ranking by them here takes about a millisecond,
//! where asking the store to compute each distance takes several. A large
//! table is ranked in two passes: sign codes (`signs`) pick candidates,
//! the exact cosine orders them.

use std::collections::HashMap;

use crate::store::{ChunkId, IndexReader, Scope, SignCodes, StoreError, VectorRow};

/// Tables of at least this many vectors are ranked in two passes: an exact
/// scan of a million vectors reads 1.5 GB and took 308 ms a search
/// (bench/scale.sh); below this size it takes under 10 ms. The same size
/// from which an SQLite index keeps its vectors' codes.
const TWO_PASSES_FROM: usize = crate::store::CODES_FROM as usize;

/// The vectors, with the id, file and first line of each chunk.
#[derive(Clone)]
pub struct VectorTable {
    /// The index generation the vectors were read at (`IndexReader::generation`);
    /// for static vectors, the word generation (`IndexReader::each_static_vector`).
    pub generation: i64,
    ids: Vec<ChunkId>,
    /// Position of each id in `ids`.
    position: HashMap<ChunkId, u32>,
    /// Index into `paths` per vector.
    files: Vec<u32>,
    /// First line of each vector's chunk.
    lines: Vec<u32>,
    paths: Vec<String>,
    dims: usize,
    data: Vec<f32>,
    /// The first pass of a large table's ranking, and how many candidates
    /// it keeps: None for `store::first_pass_size`.
    signs: Option<(SignCodes, Option<usize>)>,
}

impl std::fmt::Debug for VectorTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the vectors themselves: there are thousands.
        f.debug_struct("VectorTable")
            .field("generation", &self.generation)
            .field("vectors", &self.ids.len())
            .field("files", &self.paths.len())
            .field("dims", &self.dims)
            .finish()
    }
}

impl VectorTable {
    /// Cosine similarity of chunk `id` to `query`, if the table has it.
    /// None for a vector without an angle, as the store's cosine gives.
    pub fn score(&self, id: ChunkId, query: &[f32]) -> Option<f32> {
        let i = *self.position.get(&id)? as usize;
        (query.len() == self.dims)
            .then(|| dot(&self.data[i * self.dims..(i + 1) * self.dims], query))
            .filter(|score| score.is_finite())
    }

    /// File and first line of chunk `id`, if the table has it.
    pub fn place(&self, id: ChunkId) -> Option<(&str, usize)> {
        let i = *self.position.get(&id)? as usize;
        Some((self.paths[self.files[i] as usize].as_str(), self.lines[i] as usize))
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `vector` is as long as the table's others (any length fits
    /// an empty table): `push` lays vectors end to end, so one of another
    /// length would shift every one after it.
    pub fn fits(&self, vector: &[f32]) -> bool {
        self.dims == 0 || vector.len() == self.dims
    }

    /// Vectors in scope by cosine similarity to `query` (all vectors are
    /// unit length, so the dot product), best first, at most `limit`; ties
    /// keep path and line order, as the SQL ranking does. A vector without
    /// an angle is no candidate, as in the store (`store::cosine_of_row`).
    pub fn ranking(&self, query: &[f32], scope: &Scope, limit: usize) -> Vec<(ChunkId, f32)> {
        if query.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        let in_scope: Vec<bool> = self.paths.iter().map(|p| scope.admits(p)).collect();
        let vector = |i: usize| &self.data[i * self.dims..(i + 1) * self.dims];
        let mut scored: Vec<(usize, f32)> = match &self.signs {
            Some((signs, kept)) => {
                let keep = kept.unwrap_or_else(|| crate::store::first_pass_size(self.ids.len(), limit));
                // One without an angle (held as NaN) takes no candidate's place.
                let admits = |i: usize| in_scope[self.files[i] as usize] && !self.data[i * self.dims].is_nan();
                let candidates = signs.nearest(query, admits, keep);
                candidates.into_iter().map(|i| (i, dot(vector(i), query))).filter(|(_, s)| s.is_finite()).collect()
            }
            None => (0..self.ids.len())
                .filter(|&i| in_scope[self.files[i] as usize])
                .map(|i| (i, dot(vector(i), query)))
                .filter(|(_, s)| s.is_finite())
                .collect(),
        };
        let by_score = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored.into_iter().map(|(i, s)| (self.ids[i], s)).collect()
    }
}

/// Dot product in eight lanes, so that the compiler can vectorize it.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

impl VectorTable {
    /// Read every vector of the index into memory; a table of
    /// `TWO_PASSES_FROM` vectors or more is ranked in two passes.
    pub fn load(store: &dyn IndexReader) -> Result<VectorTable, StoreError> {
        let table = Self::load_exact(store)?;
        Ok(if table.len() >= TWO_PASSES_FROM { table.in_two_passes() } else { table })
    }

    /// This table, ranked in two passes whatever its size: the first keeps
    /// what `store::first_pass_size` says: about the exact top 10 in a
    /// fifth of the exact scan's time (bench/TUNING.md, examples/two_passes.rs).
    pub fn in_two_passes(mut self) -> VectorTable {
        self.signs = Some((SignCodes::new(&self.data, self.dims), None));
        self
    }

    /// This table, ranked in two passes whose first keeps `kept`
    /// candidates (to measure what it misses: examples/two_passes.rs).
    pub fn keeping(mut self, kept: usize) -> VectorTable {
        self.signs = Some((SignCodes::new(&self.data, self.dims), Some(kept)));
        self
    }

    /// Read every static vector of the index into memory (the static tier,
    /// `search::statics`), ranked as `load`'s are.
    pub fn load_statics(store: &dyn IndexReader) -> Result<VectorTable, StoreError> {
        let mut table = VectorTable::empty();
        table.generation = store.each_static_vector(&mut |row| table.push(row))?;
        Ok(if table.len() >= TWO_PASSES_FROM { table.in_two_passes() } else { table })
    }

    /// Read every vector of the index into memory, to be ranked by an exact scan.
    pub fn load_exact(store: &dyn IndexReader) -> Result<VectorTable, StoreError> {
        let mut table = VectorTable::empty();
        table.generation = store.each_vector(&mut |row| table.push(row))?;
        Ok(table)
    }

    /// A table of no vectors, to `push` them into.
    pub fn empty() -> VectorTable {
        VectorTable {
            generation: 0,
            ids: Vec::new(),
            position: HashMap::new(),
            files: Vec::new(),
            lines: Vec::new(),
            paths: Vec::new(),
            dims: 0,
            data: Vec::new(),
            signs: None,
        }
    }

    /// Whether the table has chunk `id`'s vector.
    pub fn has(&self, id: ChunkId) -> bool {
        self.position.contains_key(&id)
    }

    /// This table as `load` ranks one of its size: in two passes from
    /// `TWO_PASSES_FROM` vectors (a table that grew to it, for one).
    pub fn ranked_for_its_size(self) -> VectorTable {
        if self.signs.is_none() && self.len() >= TWO_PASSES_FROM {
            self.in_two_passes()
        } else {
            self
        }
    }

    /// Add one vector, with its sign code where the table has codes; rows
    /// in path order keep each path once. A vector without an angle (all
    /// zeros: a text without a token the static table knows; or damaged,
    /// not finite) is held as NaN, so that every product with it is NaN
    /// and passed over: it stays counted, so the fill's catch-up still
    /// sees every stored vector held.
    pub fn push(&mut self, row: VectorRow<'_>) {
        let no_angle;
        let vector = if has_angle(row.vector) {
            row.vector
        } else {
            no_angle = vec![f32::NAN; row.vector.len()];
            &no_angle
        };
        if let Some((signs, _)) = &mut self.signs {
            signs.push(vector);
        }
        if self.paths.last().map(String::as_str) != Some(row.file) {
            self.paths.push(row.file.to_string());
        }
        if self.dims == 0 {
            self.dims = row.vector.len();
        }
        self.position.insert(row.id, self.ids.len() as u32);
        self.ids.push(row.id);
        self.files.push((self.paths.len() - 1) as u32);
        self.lines.push(row.start_line.min(u32::MAX as usize) as u32);
        self.data.extend_from_slice(vector);
    }
}

/// Whether a vector has a direction to take a cosine with.
fn has_angle(vector: &[f32]) -> bool {
    vector.iter().all(|x| x.is_finite()) && vector.iter().any(|&x| x != 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(prefixes: &[&str]) -> Scope {
        Scope { prefixes: prefixes.iter().map(|p| p.to_string()).collect(), files: None }
    }

    #[test]
    fn vector_table_ranks_by_dot_product_within_scope() {
        let dims = 10; // not a multiple of the 8 lanes
        let unit = |i: usize| (0..dims).map(|d| if d == i { 1.0 } else { 0.0 }).collect::<Vec<f32>>();
        let mut data = Vec::new();
        for i in [0, 1, 9, 0] {
            data.extend(unit(i));
        }
        let table = VectorTable {
            generation: 1,
            ids: vec![10, 11, 12, 13],
            position: [(10, 0), (11, 1), (12, 2), (13, 3)].into(),
            files: vec![0, 0, 1, 1],
            lines: vec![1, 9, 1, 20],
            paths: vec!["a.rs".into(), "b/c.rs".into()],
            dims,
            data,
            signs: None,
        };
        let mut query = unit(0);
        query[9] = 0.5;
        let all = table.ranking(&query, &scope(&[]), 10);
        // Equal scores keep table (path, line) order: 10 before 13.
        assert_eq!(all, vec![(10, 1.0), (13, 1.0), (12, 0.5), (11, 0.0)]);
        assert_eq!(table.ranking(&query, &scope(&[]), 2), vec![(10, 1.0), (13, 1.0)]);
        assert_eq!(table.ranking(&query, &scope(&["b"]), 10), vec![(13, 1.0), (12, 0.5)]);
        assert!(table.ranking(&[1.0], &scope(&[]), 10).is_empty(), "a vector of other dimensions matches nothing");
        assert_eq!(table.score(12, &query), Some(0.5));
        assert_eq!(table.score(99, &query), None);
        assert_eq!(table.place(13), Some(("b/c.rs", 20)));
    }

    #[test]
    fn two_passes_rank_by_the_exact_cosine_among_what_the_first_keeps() {
        let dims = 16;
        let mut table = VectorTable::empty();
        // Unit vectors spread over a half circle in the first two dimensions.
        for i in 0..40 {
            let angle = i as f32 * std::f32::consts::PI / 40.0;
            let mut v = vec![0.0; dims];
            (v[0], v[1]) = (angle.cos(), angle.sin());
            let file = if i < 20 { "a.rs" } else { "b.rs" };
            table.push(VectorRow { id: 100 + i, file, start_line: i as usize + 1, vector: &v });
        }
        let mut query = vec![0.0; dims];
        query[0] = 1.0;
        let exact = table.ranking(&query, &scope(&[]), 5);
        assert_eq!(exact.iter().map(|r| r.0).collect::<Vec<_>>(), [100, 101, 102, 103, 104]);
        // Keeping everything, the two passes rank as the exact scan does, scores included.
        assert_eq!(table.clone().keeping(40).ranking(&query, &scope(&[]), 5), exact);
        // Keeping fewer, what is returned is still ordered by the exact cosine, in scope.
        let two = table.clone().keeping(8);
        let ranked = two.ranking(&query, &scope(&["b.rs"]), 3);
        assert_eq!(ranked.len(), 3);
        assert!(ranked.iter().all(|r| r.0 >= 120), "{ranked:?}");
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn a_vector_without_an_angle_is_never_a_candidate_but_stays_counted() {
        let dims = 16;
        let mut table = VectorTable::empty();
        let along = |d: usize| (0..dims).map(|i| if i == d { 1.0 } else { 0.0 }).collect::<Vec<f32>>();
        let zeros = vec![0.0; dims];
        let mut damaged = along(0);
        damaged[3] = f32::NAN;
        let rows: [(ChunkId, &[f32]); 4] = [(1, &along(0)), (2, &zeros), (3, &damaged), (4, &along(1))];
        for (id, vector) in rows {
            table.push(VectorRow { id, file: "a.rs", start_line: id as usize, vector });
        }
        let query = along(0);
        let want = vec![(1, 1.0), (4, 0.0)];
        assert_eq!(table.ranking(&query, &scope(&[]), 10), want);
        // The first pass's codes are taken about a mean the NaN rows do not
        // spoil, and keeping two, it keeps the two with an angle.
        assert_eq!(table.clone().keeping(2).ranking(&query, &scope(&[]), 10), want);
        assert_eq!((table.score(2, &query), table.score(3, &query)), (None, None));
        assert_eq!(table.score(4, &query), Some(0.0));
        assert_eq!(table.len(), 4, "the fill's catch-up compares this with the stored count");
    }
}
