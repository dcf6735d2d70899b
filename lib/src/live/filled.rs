//! The model's vectors stored so far, held in memory through a fill. On a
//! large index the store's scan of them was three quarters of a search
//! while the fill ran (74-80 ms a search at 70k chunks); each batch the
//! fill stores is caught up with instead: the chunks that left the index's
//! list of those lacking the model's vector, read by id. Anything else (an
//! index run changed the chunks, a count that does not add up) reads them
//! all again.

use std::collections::HashSet;
use std::sync::Arc;

use crate::search::VectorTable;
use crate::store::{ChunkId, IndexReader, StoreError};

/// The model's vectors of the index, and the state they were read at.
pub(super) struct Filled {
    pub(super) table: Arc<VectorTable>,
    /// The index generation the table is current with.
    generation: i64,
    /// The word generation it was read at: chunks keep their ids within
    /// one (`IndexReader::each_static_vector`), so a fill only adds vectors.
    word_generation: i64,
    /// The chunks lacking the model's vector when last asked: those that
    /// have left the list since are what the fill added.
    unembedded: HashSet<ChunkId>,
}

impl Filled {
    /// `held` brought up to the index as it is now: as it is if the index
    /// has not changed, caught up if only a fill changed it, read again
    /// otherwise.
    pub(super) fn current(held: Option<Filled>, store: &dyn IndexReader) -> Result<Filled, StoreError> {
        let generation = store.generation()?;
        match held {
            Some(filled) if filled.generation == generation => Ok(filled),
            Some(filled) => match filled.caught_up(store)? {
                Some(caught_up) => Ok(caught_up),
                None => Filled::load(store),
            },
            None => Filled::load(store),
        }
    }

    /// Every vector read again. The list of chunks without one is read
    /// first: a chunk the fill stores in between is then in both, and the
    /// next catch-up passes over it.
    fn load(store: &dyn IndexReader) -> Result<Filled, StoreError> {
        let word_generation = store.word_generation()?;
        let unembedded = store.unembedded_ids()?.into_iter().collect();
        let table = VectorTable::load(store)?;
        Ok(Filled { generation: table.generation, table: Arc::new(table), word_generation, unembedded })
    }

    /// The vectors the fill stored since, added, all read from one state of
    /// the index; None when that is not all that changed.
    fn caught_up(mut self, store: &dyn IndexReader) -> Result<Option<Filled>, StoreError> {
        let snapshot = store.snapshot()?;
        let generation = store.generation()?;
        if store.word_generation()? != self.word_generation {
            snapshot.finish()?;
            return Ok(None);
        }
        let unembedded: HashSet<ChunkId> = store.unembedded_ids()?.into_iter().collect();
        let added: Vec<ChunkId> = self.unembedded.difference(&unembedded).copied().collect();
        // A search still ranking by the table keeps the copy it has.
        let table = Arc::make_mut(&mut self.table);
        let mut misfit = false;
        store.vectors_of(&added, &mut |row| {
            misfit |= !table.fits(row.vector);
            if !misfit && !table.has(row.id) {
                table.push(row);
            }
        })?;
        let stored = store.vector_counts()?.vectors;
        snapshot.finish()?;
        // A vector of another length is read again with all the others,
        // where the store reports which one is damaged.
        if misfit || table.len() as u64 != stored {
            return Ok(None);
        }
        table.generation = generation;
        let table = Arc::new(Arc::unwrap_or_clone(self.table).ranked_for_its_size());
        Ok(Some(Filled { table, generation, word_generation: self.word_generation, unembedded }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{ProjectRoot, RootMarker};
    use crate::store::{FileWrite, IndexMeta, IndexWriter, Scope};

    /// A unit vector along axis `i`, near axis `i + 1` too.
    fn toward(i: usize) -> Vec<f32> {
        let mut v = vec![0.0; crate::embed::DIMS];
        (v[i], v[i + 1]) = (0.8, 0.6);
        v
    }

    /// An index of `files` files of 4 chunks each, static vectors only, in
    /// a temporary directory: its writer, a reader on a connection of its
    /// own (a searcher's), and the files written.
    fn static_index(files: usize) -> (tempfile::TempDir, Box<dyn IndexWriter>, Box<dyn IndexReader>, Vec<FileWrite>) {
        let dir = tempfile::tempdir().unwrap();
        let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        let mut index = crate::store::open_for_writing(&root, &mut |_| {}).unwrap();
        index.reset(&IndexMeta::for_tests()).unwrap();
        let texts: Vec<String> = (0..4).map(|i| format!("chunk {i}")).collect();
        let mut written: Vec<FileWrite> =
            (0..files).map(|f| FileWrite::of_texts(&format!("f{f}.py"), &texts, None)).collect();
        for (i, c) in written.iter_mut().flat_map(|f| f.chunks.iter_mut()).enumerate() {
            c.static_vector = Some(toward(i));
        }
        index.write_batch(&written, &[], &[]).unwrap();
        let reader = crate::store::open_for_reading(&root).unwrap();
        (dir, index, reader, written)
    }

    /// The held table ranks as the model's vectors read afresh do.
    fn assert_ranks_as_a_fresh_read(filled: &Filled, store: &dyn IndexReader) {
        let fresh = VectorTable::load_exact(store).unwrap();
        assert_eq!(filled.table.len(), fresh.len());
        for axis in [0, 5, 11, 20] {
            let (held, read) = (
                filled.table.ranking(&toward(axis), &Scope::default(), 6),
                fresh.ranking(&toward(axis), &Scope::default(), 6),
            );
            assert_eq!(held, read, "toward axis {axis}");
        }
    }

    #[test]
    fn a_fill_is_caught_up_batch_by_batch_and_a_change_of_chunks_reads_all_again() {
        let (_dir, mut index, reader, files) = static_index(6);
        let mut filled = Filled::current(None, &*reader).unwrap();
        assert!(filled.table.is_empty());
        for batch in files.chunks(2) {
            let stored: Vec<FileWrite> = batch.iter().map(|f| f.filled(|i| toward(30 + i * 3 + f.rel.len()))).collect();
            index.write_batch(&stored, &[], &[]).unwrap();
            filled = filled.caught_up(&*reader).unwrap().expect("a fill is caught up, not read again");
            assert_eq!(filled.generation, reader.generation().unwrap());
            assert_ranks_as_a_fresh_read(&filled, &*reader);
        }
        // Unchanged, the held table is the one handed back.
        let before = Arc::clone(&filled.table);
        filled = Filled::current(Some(filled), &*reader).unwrap();
        assert!(Arc::ptr_eq(&before, &filled.table));
        // New chunks are a change of words: no catch-up, all read again.
        let texts = vec!["another".to_string()];
        index.write_batch(&[FileWrite::of_texts("g.py", &texts, Some(&toward(40)))], &[], &[]).unwrap();
        assert!(filled.caught_up(&*reader).unwrap().is_none(), "another word generation");
        let again = Filled::current(None, &*reader).unwrap();
        assert_eq!(again.table.len(), 25);
        assert_ranks_as_a_fresh_read(&again, &*reader);
    }

    #[test]
    fn a_vector_cut_short_during_a_fill_is_reported_as_damage() {
        // One of a batch's vectors cut short, then all of them (as long as
        // each other, not as the table's): the first the store's read by id
        // finds, the second the table's own check, and the whole read again.
        for cut_all in [false, true] {
            let (dir, mut index, reader, files) = static_index(2);
            let filled = Filled::current(None, &*reader).unwrap();
            index.write_batch(&[files[0].filled(|i| toward(20 + i))], &[], &[]).unwrap();
            let filled = Filled::current(Some(filled), &*reader).unwrap();
            assert_eq!(filled.table.len(), 4);
            index.write_batch(&[files[1].filled(|i| toward(30 + i))], &[], &[]).unwrap();
            let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
            let which = if cut_all { "" } else { "AND c.start_line = 1" };
            let cut = rusqlite::Connection::open(root.index_path()).unwrap();
            let sql = format!(
                "UPDATE chunks SET embedding = substr(embedding, 1, 40) WHERE id IN
                 (SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'f1.py' {which})"
            );
            assert!(cut.execute(&sql, []).unwrap() > 0);
            match Filled::current(Some(filled), &*reader) {
                Err(StoreError::Damaged { cause, .. }) => {
                    assert!(cause.contains("40") && cause.contains("`embedding`"), "{cause}")
                }
                Err(other) => panic!("another error: {other}"),
                Ok(filled) => panic!("{} vectors held from a damaged index", filled.table.len()),
            }
        }
    }

    #[test]
    fn a_vector_stored_between_the_reads_of_a_load_is_held_once() {
        let (_dir, mut index, reader, files) = static_index(2);
        // The list of chunks without a vector read before f0's were stored,
        // the vectors after: f0's chunks are in both.
        let unembedded: HashSet<ChunkId> = reader.unembedded_ids().unwrap().into_iter().collect();
        index.write_batch(&[files[0].filled(|i| toward(20 + i))], &[], &[]).unwrap();
        let table = VectorTable::load(&*reader).unwrap();
        let word_generation = reader.word_generation().unwrap();
        let loaded = Filled { generation: table.generation, table: Arc::new(table), word_generation, unembedded };
        index.write_batch(&[files[1].filled(|i| toward(30 + i))], &[], &[]).unwrap();
        let caught_up = loaded.caught_up(&*reader).unwrap().expect("caught up");
        assert_eq!(caught_up.table.len(), 8, "each chunk once");
        assert_ranks_as_a_fresh_read(&caught_up, &*reader);
    }
}
