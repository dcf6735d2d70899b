//! Checks every backend passes, run by each backend's tests.
#![cfg(test)]

use super::*;

/// A unit vector along axis `i`.
fn axis(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; crate::embed::DIMS];
    v[i] = 1.0;
    v
}

/// Each chunk's static cosine to `to`, by the index's own ranking.
fn static_cosines(index: &dyn IndexWriter, to: &[f32]) -> Vec<f32> {
    index.as_reader().nearest_static(to, &Scope::default(), 10_000).unwrap().into_iter().map(|c| c.1).collect()
}

/// `restatic` over more chunks than a page: told to stop, it rolls back
/// whole (vectors and meta) and says how far it was; told to go on, it
/// gives every chunk the new vector and records the new meta, and
/// leaves the model's vectors as they were.
pub(crate) fn restatic_stops_whole_or_completes(index: &mut dyn IndexWriter) {
    let texts: Vec<String> = (0..1500).map(|i| format!("chunk number {i}")).collect();
    let mut file = FileWrite::of_texts("a.py", &texts, Some(&axis(2)));
    file.chunks.iter_mut().for_each(|c| c.static_vector = Some(axis(0)));
    index.reset(&IndexMeta::for_tests()).unwrap();
    index.write_batch(&[file], &[], &[]).unwrap();
    let other = IndexMeta { static_table: "another".into(), ..IndexMeta::for_tests() };
    let restatic = |index: &mut dyn IndexWriter, go_on: bool| {
        let mut heard = Vec::new();
        let done = index
            .restatic(&other, &mut |_, _| axis(1), &mut |done, of| {
                heard.push((done, of));
                go_on
            })
            .unwrap();
        (done, heard)
    };
    assert_eq!(restatic(index, false), (None, vec![(1024, 1500)]));
    assert!(static_cosines(index, &axis(0)).iter().all(|c| (c - 1.0).abs() < 1e-5), "rolled back whole");
    assert_eq!(index.as_reader().meta().unwrap().unwrap().static_table, "");
    assert_eq!(restatic(index, true), (Some(1500), vec![(1024, 1500), (1500, 1500)]));
    let now = static_cosines(index, &axis(1));
    assert!(now.len() == 1500 && now.iter().all(|c| (c - 1.0).abs() < 1e-5), "every chunk has the new vector");
    assert_eq!(index.as_reader().meta().unwrap().unwrap().static_table, "another");
    let model = index.as_reader().nearest_chunks(&axis(2), &Scope::default(), 10_000).unwrap();
    assert!(model.len() == 1500 && model.iter().all(|c| (c.1 - 1.0).abs() < 1e-5), "the model's vectors stay");
}

/// `each_static_vector` hands out every chunk's static vector in path
/// and line order, model's vector or not, at the word generation; held
/// in memory they rank as the store does, and a new static table moves
/// the word generation, so that vectors held from before are not used.
pub(crate) fn static_vectors_are_read_whole_at_the_word_generation(index: &mut dyn IndexWriter) {
    index.reset(&IndexMeta::for_tests()).unwrap();
    let texts = |n: usize| (0..n).map(|i| format!("chunk {i}")).collect::<Vec<_>>();
    let mut b = FileWrite::of_texts("b.py", &texts(3), None);
    let mut a = FileWrite::of_texts("a.py", &texts(2), Some(&axis(9)));
    for (i, c) in b.chunks.iter_mut().chain(a.chunks.iter_mut()).enumerate() {
        c.static_vector = Some(axis(i));
    }
    index.write_batch(&[b, a], &[], &[]).unwrap();
    let mut rows = Vec::new();
    let generation = index
        .as_reader()
        .each_static_vector(&mut |r| rows.push((r.file.to_string(), r.start_line, r.vector.to_vec())))
        .unwrap();
    assert_eq!(generation, index.as_reader().word_generation().unwrap());
    let places: Vec<(&str, usize)> = rows.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(places, [("a.py", 1), ("a.py", 2), ("b.py", 1), ("b.py", 2), ("b.py", 3)]);
    assert_eq!(rows[0].2, axis(3), "the static vector, not the model's");
    let held = crate::search::VectorTable::load_statics(index.as_reader()).unwrap();
    let by_store = index.as_reader().nearest_static(&axis(4), &Scope::default(), 3).unwrap();
    let by_memory = held.ranking(&axis(4), &Scope::default(), 3);
    assert_eq!(by_memory.iter().map(|r| r.0).collect::<Vec<_>>(), by_store.iter().map(|r| r.0).collect::<Vec<_>>());
    assert!((by_memory[0].1 - 1.0).abs() < 1e-6 && (by_store[0].1 - 1.0).abs() < 1e-6);
    let other = IndexMeta { static_table: "another".into(), ..IndexMeta::for_tests() };
    index.restatic(&other, &mut |_, _| axis(7), &mut |_, _| true).unwrap();
    assert_ne!(index.as_reader().word_generation().unwrap(), generation, "a new static table is a new state");
}

/// The chunks without the model's vector are listed, and the vectors
/// of the chunks asked for that have one are read as `each_vector`
/// reads them, in path and line order. A fill keeps the chunks' ids.
pub(crate) fn a_fills_vectors_are_found_by_id(index: &mut dyn IndexWriter) {
    index.reset(&IndexMeta::for_tests()).unwrap();
    let texts = |n: usize| (0..n).map(|i| format!("chunk {i}")).collect::<Vec<_>>();
    let mut files = vec![FileWrite::of_texts("b.py", &texts(3), None), FileWrite::of_texts("a.py", &texts(2), None)];
    for (i, c) in files.iter_mut().flat_map(|f| f.chunks.iter_mut()).enumerate() {
        c.static_vector = Some(axis(i));
    }
    index.write_batch(&files, &[], &[]).unwrap();
    let sorted = |mut ids: Vec<ChunkId>| {
        ids.sort_unstable();
        ids
    };
    type Row = (ChunkId, String, usize, Vec<f32>);
    let row = |r: VectorRow<'_>| (r.id, r.file.to_string(), r.start_line, r.vector.to_vec());
    let all = sorted(index.as_reader().unembedded_ids().unwrap());
    assert_eq!(all.len(), 5);
    let mut read = 0;
    index.as_reader().vectors_of(&all, &mut |_| read += 1).unwrap();
    assert_eq!(read, 0, "no chunk has the model's vector yet");
    let words = index.as_reader().word_generation().unwrap();
    index.write_batch(&[files[1].filled(|i| axis(10 + i))], &[], &[]).unwrap();
    let left = sorted(index.as_reader().unembedded_ids().unwrap());
    assert_eq!(left.len(), 3);
    let mut stored: Vec<Row> = Vec::new();
    index.as_reader().each_vector(&mut |r| stored.push(row(r))).unwrap();
    let places: Vec<(&str, usize)> = stored.iter().map(|r| (r.1.as_str(), r.2)).collect();
    assert_eq!(places, [("a.py", 1), ("a.py", 2)]);
    assert_eq!((stored[0].3.clone(), stored[1].3.clone()), (axis(10), axis(11)));
    let mut asked: Vec<ChunkId> = stored.iter().map(|r| r.0).chain(left.iter().copied()).collect();
    asked.reverse();
    let mut rows: Vec<Row> = Vec::new();
    index.as_reader().vectors_of(&asked, &mut |r| rows.push(row(r))).unwrap();
    assert_eq!(rows, stored, "those with a vector, no other, in path and line order");
    assert_eq!(index.as_reader().word_generation().unwrap(), words, "a fill changes no words");
    assert!(left.iter().chain(&asked).all(|id| all.contains(id)), "ids kept");
}

/// Each way a file's stat data is written (a new file, a rewrite, a
/// touch, a fill in place) keeps its ctime, and `files` reads it back.
pub(crate) fn only_the_latest_jobs_are_kept(index: &mut dyn IndexWriter) {
    let job = |i: i64| IndexJob::running(format!("job-{i}"), 1_000 + i);
    for i in 0..KEPT_JOBS + 5 {
        index.put_index_job(&job(i)).unwrap();
    }
    for i in 0..5 {
        assert!(index.index_job(&format!("job-{i}")).unwrap().is_none(), "job-{i} is one of the oldest");
    }
    assert!(index.index_job("job-5").unwrap().is_some());
    let last = format!("job-{}", KEPT_JOBS + 4);
    let mut done = job(KEPT_JOBS + 4);
    done.state = JobState::Completed;
    index.put_index_job(&done).unwrap();
    assert_eq!(index.index_job(&last).unwrap().map(|j| j.state), Some(JobState::Completed));
    assert!(index.index_job("job-5").unwrap().is_some(), "replacing a job drops none");
}

pub(crate) fn every_write_keeps_the_files_ctime(index: &mut dyn IndexWriter) {
    index.reset(&IndexMeta::for_tests()).unwrap();
    let ctime = |index: &dyn IndexWriter| index.as_reader().files(false).unwrap()["a.rs"].state.ctime_ns;
    let with_ctime = |text: &str, ctime_ns| {
        let mut w = FileWrite::of_texts("a.rs", &[text.into()], None);
        w.state.ctime_ns = ctime_ns;
        w
    };
    index.write_batch(&[with_ctime("first", 5)], &[], &[]).unwrap();
    assert_eq!(ctime(index), 5, "a new file");
    index.write_batch(&[with_ctime("second", 6)], &[], &[]).unwrap();
    assert_eq!(ctime(index), 6, "a rewrite");
    let touched = FileState { ctime_ns: 0, ..with_ctime("second", 6).state };
    index.write_batch(&[], &[("a.rs".into(), touched)], &[]).unwrap();
    assert_eq!(ctime(index), 0, "a touch, of a file changed too recently to tell");
    index.write_batch(&[with_ctime("second", 8).filled(axis)], &[], &[]).unwrap();
    assert_eq!(ctime(index), 8, "a fill in place");
    assert_eq!(index.as_reader().vector_counts().unwrap().unembedded, 0);
}

/// A stored path that climbs out of the root, or is absolute, is damage to
/// `verify`: vecgrep stores none, and a search printed it as a hit's file,
/// which every reader refuses (audit 225).
pub(crate) fn a_path_out_of_the_root_is_damage(index: &mut dyn IndexWriter) {
    index.reset(&IndexMeta::for_tests()).unwrap();
    index.write_batch(&[FileWrite::of_texts("src/a.rs", &["fine".into()], None)], &[], &[]).unwrap();
    assert_eq!(index.as_reader().verify().unwrap().1, Vec::<String>::new());
    for path in ["../../etc/passwd", "/etc/shadow"] {
        index.write_batch(&[FileWrite::of_texts(path, &["planted".into()], None)], &[], &[]).unwrap();
    }
    let problems = index.as_reader().verify().unwrap().1;
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("2 file paths are not paths below the root"), "{problems:?}");
}

/// A fill stores the model's vectors into the rows the chunks have:
/// their words, names and counts stay, and the word generation with
/// them, while the generation moves. Other text in the same lines is a
/// rewrite: new rows, new words, found by a word search (on Postgres,
/// through term stats that the wordless batches before it left current).
pub(crate) fn a_fill_keeps_the_chunks_rows_and_words(index: &mut dyn IndexWriter) {
    index.reset(&IndexMeta::for_tests()).unwrap();
    let file = |text: &str| {
        let mut w = FileWrite::of_texts("a.rs", &[format!("{text} one"), format!("{text} two")], None);
        for (i, c) in w.chunks.iter_mut().enumerate() {
            (c.static_vector, c.names) = (Some(axis(i)), format!("Handler emit{i}"));
        }
        w.state.hash = content_hash("a.rs", &w.chunks);
        w
    };
    index.write_batch(&[file("common body"), FileWrite::of_texts("b.rs", &["other".into()], None)], &[], &[]).unwrap();
    let reader = |index: &dyn IndexWriter| {
        let r = index.as_reader();
        let mut ids = r.unembedded_ids().unwrap();
        r.each_vector(&mut |v| ids.push(v.id)).unwrap();
        ids.sort_unstable();
        let matches = r.best_word_matches(r#""common""#, &Scope::default(), 10).unwrap().len();
        (ids, r.word_generation().unwrap(), r.generation().unwrap(), matches, r.named_chunks().unwrap())
    };
    let (ids, words, generation, matches, named) = reader(index);
    assert_eq!((ids.len(), matches, named), (3, 2, 2));

    index.write_batch(&[file("common body").filled(|i| axis(10 + i))], &[], &[]).unwrap();
    let r = index.as_reader();
    assert_eq!(r.vector_counts().unwrap(), VectorCounts { vectors: 2, unembedded: 1 }, "b.rs is left to fill");
    assert_eq!(reader(index), (ids.clone(), words, generation + 1, 2, 2), "rows and words kept");
    let (_, problems) = index.as_reader().verify().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    // New stat data alone changes nothing a search holds, nor the generation.
    let touched = FileState { mtime_ns: 2, ..FileWrite::of_texts("b.rs", &["other".into()], None).state };
    index.write_batch(&[], &[("b.rs".into(), touched)], &[]).unwrap();
    assert_eq!(reader(index), (ids.clone(), words, generation + 1, 2, 2));

    index.write_batch(&[file("changed body")], &[], &[]).unwrap();
    let (new_ids, new_words, _, matches, named) = reader(index);
    assert_ne!(new_ids, ids);
    assert_ne!(new_words, words);
    assert_eq!((matches, named), (0, 2));
    assert_eq!(index.as_reader().best_word_matches(r#""changed""#, &Scope::default(), 10).unwrap().len(), 2);
}
