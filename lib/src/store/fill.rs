//! What a fill compares: a file's chunks as stored, some without the
//! model's vector, against the same chunks written again with it. When
//! they match, a backend stores the vectors into the rows it has, so the
//! chunks keep their ids, words and static vectors, and what a searcher
//! holds of them in memory (`IndexReader::word_generation`) stays current.

use super::{ChunkId, ChunkWrite, FileWrite};

/// A stored chunk, as far as a fill compares it with a new one.
pub(super) struct StoredChunk {
    pub(super) id: ChunkId,
    pub(super) lines: (i64, i64),
    pub(super) embed_key: Option<Vec<u8>>,
    pub(super) names: String,
    /// Its text and what is embedded with it: a row that holds text of its
    /// own beside the true key (an index that came with the checkout, audit
    /// 235) is replaced, not kept.
    pub(super) text: String,
    pub(super) around: String,
    pub(super) has_static: bool,
    /// Without the model's vector.
    pub(super) hole: bool,
}

impl StoredChunk {
    /// Whether the row is `c` but for the model's vector: the same lines,
    /// text and embedded text (of a file of the same hash), names and tier.
    fn holds(&self, c: &ChunkWrite) -> bool {
        self.lines == (c.chunk.start_line as i64, c.chunk.end_line as i64)
            && self.embed_key.as_deref() == Some(&c.embed_key[..])
            && self.names == c.names
            && self.text == c.chunk.text
            && self.around == c.around
            && self.has_static == c.static_vector.is_some()
    }
}

/// The vectors `w` fills into `stored` (a file of the same hash, in id
/// order), each with the row it goes to; None when `w` is not the stored
/// chunks again, which a backend then replaces.
pub(super) fn holes_filled<'s, 'w>(
    stored: &'s [StoredChunk],
    w: &'w FileWrite,
) -> Option<impl Iterator<Item = (&'s StoredChunk, &'w [f32])>> {
    let same = stored.len() == w.chunks.len() && stored.iter().zip(&w.chunks).all(|(s, c)| s.holds(c));
    same.then(|| {
        stored.iter().zip(&w.chunks).filter(|(s, _)| s.hole).filter_map(|(s, c)| Some((s, c.vector.as_deref()?)))
    })
}
