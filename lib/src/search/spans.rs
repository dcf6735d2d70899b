//! The lines each chunk of a file spans, read once per file by a search's
//! join: which lines are blank, and which long lines are cut into pieces.

use std::collections::HashMap;

use crate::store::IndexReader;

/// The chunks' spans of one file, sorted by first line, with the furthest
/// last line among each prefix: whether any span reaches into a range is
/// then two binary searches, however many chunks the file has.
pub(super) struct FileSpans {
    spans: Vec<(usize, usize)>,
    furthest_last: Vec<usize>,
}

impl FileSpans {
    pub(super) fn new(mut spans: Vec<(usize, usize)>) -> FileSpans {
        spans.sort_unstable();
        let furthest_last = spans
            .iter()
            .scan(0, |furthest, &(_, last)| {
                *furthest = last.max(*furthest);
                Some(*furthest)
            })
            .collect();
        FileSpans { spans, furthest_last }
    }

    /// Whether lines `first..=last` are in no chunk: every line that is not
    /// blank is in one, so whether they are all blank.
    pub(super) fn in_no_chunk(&self, first: usize, last: usize) -> bool {
        let starting_by_last = self.spans.partition_point(|&(start, _)| start <= last);
        starting_by_last == 0 || self.furthest_last[starting_by_last - 1] < first
    }

    /// Whether `line` is a long line cut into pieces: more than one chunk
    /// spans it alone, each holding part of it.
    pub(super) fn in_pieces(&self, line: usize) -> bool {
        let from = self.spans.partition_point(|&span| span < (line, line));
        self.spans[from..].iter().take_while(|&&span| span == (line, line)).count() > 1
    }
}

/// The spans of each file a search's join has asked about, read from the
/// store at the first ask; None for a file whose read failed.
#[derive(Default)]
pub(super) struct SpansByFile {
    files: HashMap<String, Option<FileSpans>>,
}

impl SpansByFile {
    pub(super) fn of(&mut self, store: &dyn IndexReader, file: &str) -> Option<&FileSpans> {
        if !self.files.contains_key(file) {
            let read = store.chunk_spans(file).ok().map(FileSpans::new);
            self.files.insert(file.to_string(), read);
        }
        self.files.get(file).and_then(Option::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_between_chunks_are_in_none() {
        // A chunk of 30-60 around one of 35-36: 40-50 is inside the first.
        let spans = FileSpans::new(vec![(35, 36), (1, 10), (30, 60), (12, 12)]);
        for (first, last, none) in [
            (11, 11, true),
            (13, 29, true),
            (61, 99, true),
            (10, 11, false),
            (40, 50, false),
            (11, 12, false),
            (0, 0, true),
        ] {
            assert_eq!(spans.in_no_chunk(first, last), none, "{first}..={last}");
        }
        assert!(FileSpans::new(Vec::new()).in_no_chunk(1, 5));
    }

    #[test]
    fn a_line_in_pieces_is_spanned_alone_by_more_than_one_chunk() {
        let spans = FileSpans::new(vec![(5, 5), (4, 6), (5, 5), (7, 7), (8, 8), (8, 8), (8, 8)]);
        assert!(spans.in_pieces(5));
        assert!(spans.in_pieces(8));
        assert!(!spans.in_pieces(7), "one chunk holds the whole line");
        assert!(!spans.in_pieces(6), "a line inside a longer chunk only");
        assert!(!spans.in_pieces(9));
    }
}
