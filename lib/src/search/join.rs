//! One result per place in the code: hits of one file that overlap, touch
//! or have only blank lines between them become one, of up to
//! `MAX_JOINED_LINES` lines; and no line is shown by two results.

use std::collections::{HashMap, HashSet};

use super::fusion::Scored;
use super::spans::SpansByFile;
use super::{Hit, Why};
use crate::store::{ChunkId, IndexReader, StoreError};

/// The hits for `scored`, best first, at most `k` and at most `per_file`
/// of one file: a chunk overlapping, touching or only blank lines away
/// from a better one of the same file joins it (`join_hit`) instead of
/// taking a place of its own; one too long to join keeps only lines no
/// better hit shows (`outside_better`). Each hit takes its chunk's `Why`
/// from `whys`. With them, whether a candidate was passed over because
/// its file had `per_file` hits already.
pub(super) fn collect_hits(
    store: &dyn IndexReader,
    scored: &[Scored],
    whys: &mut HashMap<ChunkId, Why>,
    k: usize,
    per_file: Option<usize>,
) -> Result<(Vec<Hit>, bool), StoreError> {
    let mut hits: Vec<Hit> = Vec::with_capacity(scored.len());
    let mut file_full = false;
    // The lines of each file whose hits are pieces of a long line.
    let mut pieces: HashMap<String, HashSet<usize>> = HashMap::new();
    let mut spans = SpansByFile::default();
    for &Scored { id, score, relevance, fit } in scored {
        // A chunk ranked from vectors in memory, or by another snapshot,
        // may since have been replaced; or the index is damaged, which a
        // quick look tells apart.
        let Some(chunk) = store.chunk(id)? else {
            store.check_structure()?;
            continue;
        };
        let hit = Hit {
            file: chunk.file,
            start_line: chunk.start_line,
            end_line: chunk.end_line,
            best_start_line: chunk.start_line,
            best_end_line: chunk.end_line,
            text: chunk.text,
            score,
            relevance,
            fit,
            concepts: Vec::new(),
            why: whys.remove(&id).unwrap_or_default(),
        };
        // Every line that is not blank is in a chunk, so lines in no chunk
        // are blank. A failed lookup counts as not blank: no join.
        let file_spans = spans.of(store, &hit.file);
        let mut blank = |first: usize, last: usize| file_spans.is_some_and(|s| s.in_no_chunk(first, last));
        // A piece of a long line is no whole line: joined beside others, the
        // result carried that piece as the line (a failed lookup: no join).
        let piece = hit.start_line == hit.end_line && file_spans.is_none_or(|s| s.in_pieces(hit.start_line));
        if piece {
            pieces.entry(hit.file.clone()).or_default().insert(hit.start_line);
        }
        let in_pieces = |h: &Hit| {
            h.start_line == h.end_line && pieces.get(&h.file).is_some_and(|lines| lines.contains(&h.start_line))
        };
        let joined = (!piece)
            .then(|| {
                hits.iter_mut().position(|better: &mut Hit| !in_pieces(better) && join_hit(better, &hit, &mut blank))
            })
            .flatten();
        if let Some(grown) = joined {
            join_grown(&mut hits, grown, &mut blank, &in_pieces);
            continue;
        }
        let Some(hit) = outside_better(hit, &hits) else { continue };
        if hits.len() == k {
            break;
        }
        if per_file.is_none_or(|most| hits.iter().filter(|h| h.file == hit.file).count() < most) {
            hits.push(hit);
        } else {
            file_full = true;
        }
    }
    Ok((hits, file_full))
}

/// `hit` less the lines that `better` hits of its file show: the longest
/// run of its lines outside them, without blank lines at its ends; None
/// when only blank lines are left. Two results never show one line twice,
/// as when a chunk overlaps a better hit but together they would span more
/// than `MAX_JOINED_LINES`. A hit whose text does not match its span is
/// kept whole.
fn outside_better(mut hit: Hit, better: &[Hit]) -> Option<Hit> {
    // The better hits' spans in this file, looked up once: each line asks.
    // Only those that reach into it: a file's thousands of hits (-k), asked
    // of each line, were most of a search.
    let spans: Vec<(usize, usize)> = better
        .iter()
        .filter(|b| b.file == hit.file && b.start_line <= hit.end_line && b.end_line >= hit.start_line)
        .map(|b| (b.start_line, b.end_line))
        .collect();
    let shown = |line: usize| spans.iter().any(|&(start, end)| (start..=end).contains(&line));
    let lines: Vec<&str> = hit.text.split('\n').collect();
    if lines.len() != hit.end_line + 1 - hit.start_line || !(hit.start_line..=hit.end_line).any(shown) {
        return Some(hit);
    }
    // Runs of lines no better hit shows, as indexes into `lines`, trimmed of blank ends.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut run_start = None;
    for i in 0..=lines.len() {
        let free = i < lines.len() && !shown(hit.start_line + i);
        match (free, run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(first)) => {
                runs.push((first, i - 1));
                run_start = None;
            }
            _ => {}
        }
    }
    let not_blank = |i: &usize| !lines[*i].trim().is_empty();
    let (first, last) = runs
        .into_iter()
        .filter_map(|(a, b)| Some(((a..=b).find(not_blank)?, (a..=b).rev().find(not_blank)?)))
        .fold(None, |longest: Option<(usize, usize)>, (a, b)| match longest {
            Some((la, lb)) if lb - la >= b - a => longest,
            _ => Some((a, b)),
        })?;
    hit.text = lines[first..=last].join("\n");
    hit.end_line = hit.start_line + last;
    hit.start_line += first;
    keep_best_within(&mut hit);
    Some(hit)
}

/// A cut hit's best lines, those of its chunk that are left; all of it
/// when none are (a joined hit cut to its lower neighbour's lines).
fn keep_best_within(hit: &mut Hit) {
    let (first, last) = (hit.best_start_line.max(hit.start_line), hit.best_end_line.min(hit.end_line));
    (hit.best_start_line, hit.best_end_line) =
        if first <= last { (first, last) } else { (hit.start_line, hit.end_line) };
}

/// After a join grew `hits[grown]`: it, and the worse hits of its file
/// that overlap it now, cut to the lines no better hit shows
/// (`outside_better`), and left out where nothing is left. No other hit
/// can show a line twice: the join grew this one alone. With thousands of
/// results (`-k`), cutting every hit again at each join took minutes, and
/// every hit of its file (a few big files: -k 8000 took 68 s).
fn without_lines_shown_twice(hits: &mut Vec<Hit>, grown: usize) {
    let (file, start, end) = (hits[grown].file.clone(), hits[grown].start_line, hits[grown].end_line);
    let mut at = grown;
    while at < hits.len() {
        let h = &hits[at];
        if h.file != file || h.end_line < start || h.start_line > end {
            at += 1;
            continue;
        }
        match outside_better(hits[at].clone(), &hits[..at]) {
            Some(cut) => {
                hits[at] = cut;
                at += 1;
            }
            None => {
                hits.remove(at);
            }
        }
    }
}

/// The most lines a result grows to by taking in its neighbours.
pub const MAX_JOINED_LINES: usize = 40;

/// After `hits[grown]` took in a chunk, join to it the other hits it now
/// overlaps or touches (`join_hit`), the worse into the better, until none
/// does: two places that grew towards each other become one. Where the
/// grown hit overlaps one too long to join, the worse gives up the lines.
fn join_grown(
    hits: &mut Vec<Hit>,
    mut grown: usize,
    blank: &mut dyn FnMut(usize, usize) -> bool,
    in_pieces: &dyn Fn(&Hit) -> bool,
) {
    let mut other = 0;
    while other < hits.len() {
        // Only a hit that could join is copied to try (copying each took
        // most of a search with thousands of results).
        if other != grown && !in_pieces(&hits[other]) && within_reach(&hits[grown], &hits[other]) {
            let (better, worse) = (grown.min(other), grown.max(other));
            let next = hits[worse].clone();
            if join_hit(&mut hits[better], &next, blank) {
                hits.remove(worse);
                grown = better;
                other = 0;
                continue;
            }
        }
        other += 1;
    }
    without_lines_shown_twice(hits, grown);
}

/// Whether `a` and `b` are of one file and would span at most
/// `MAX_JOINED_LINES` together: what `join_hit` asks first.
fn within_reach(a: &Hit, b: &Hit) -> bool {
    a.file == b.file && a.end_line.max(b.end_line) + 1 - a.start_line.min(b.start_line) <= MAX_JOINED_LINES
}

/// Extend `better` by `next` when they are chunks of one file that overlap,
/// touch, or have only blank lines between them (`blank(first, last)` says
/// whether lines `first..=last` of the file are all blank), and together
/// span at most `MAX_JOINED_LINES`: one result for one place in the code.
/// `better` keeps its score, relevance and fit. False, and nothing changes, otherwise.
pub(super) fn join_hit(better: &mut Hit, next: &Hit, blank: &mut dyn FnMut(usize, usize) -> bool) -> bool {
    let whole_lines = |h: &Hit| h.text.split('\n').count() == h.end_line + 1 - h.start_line;
    let (start, end) = (better.start_line.min(next.start_line), better.end_line.max(next.end_line));
    if !within_reach(better, next) || !whole_lines(better) || !whole_lines(next) {
        return false;
    }
    // The lines between them, if any, first to last.
    let gap = if next.start_line > better.end_line + 1 {
        Some((better.end_line + 1, next.start_line - 1))
    } else if next.end_line + 1 < better.start_line {
        Some((next.end_line + 1, better.start_line - 1))
    } else {
        None
    };
    if gap.is_some_and(|(first, last)| !blank(first, last)) {
        return false;
    }
    let mut text: Vec<&str> = vec![""; end + 1 - start];
    for hit in [next, &*better] {
        for (i, line) in hit.text.split('\n').enumerate() {
            text[hit.start_line - start + i] = line;
        }
    }
    better.text = text.join("\n");
    better.start_line = start;
    better.end_line = end;
    better.why.joined += 1 + next.why.joined;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(start: usize, end: usize) -> Hit {
        let text = (start..=end).map(|l| format!("line {l}")).collect::<Vec<_>>().join("\n");
        Hit {
            file: "a.rs".into(),
            start_line: start,
            end_line: end,
            best_start_line: start,
            best_end_line: end,
            score: 0.5,
            relevance: 0.7,
            fit: 0.6,
            text,
            concepts: Vec::new(),
            why: Why::default(),
        }
    }

    #[test]
    fn neighbouring_and_overlapping_hits_join() {
        for (better, next, joined) in [
            ((10, 20), (18, 25), Some((10, 25))), // overlapping after
            ((10, 20), (21, 25), Some((10, 25))), // touching after
            ((10, 20), (4, 12), Some((4, 20))),   // overlapping before
            ((10, 20), (4, 9), Some((4, 20))),    // touching before
            ((10, 20), (12, 15), Some((10, 20))), // inside
            ((10, 20), (20, 60), None),           // would span more than MAX_JOINED_LINES
        ] {
            let mut a = hit(better.0, better.1);
            let joins = join_hit(&mut a, &hit(next.0, next.1), &mut |_, _| panic!("no gap to look at"));
            assert_eq!(joins.then_some((a.start_line, a.end_line)), joined, "{better:?} + {next:?}");
            assert_eq!(a.text, hit(a.start_line, a.end_line).text, "the text is the joined lines");
            assert_eq!((a.score, a.relevance), (0.5, 0.7));
        }
        let mut a = hit(10, 20);
        assert!(!join_hit(&mut a, &Hit { file: "b.rs".into(), ..hit(12, 14) }, &mut |_, _| true), "another file");
        // A text whose lines do not match its span is left alone.
        assert!(!join_hit(&mut hit(10, 20), &Hit { text: "x\ny".into(), ..hit(21, 21) }, &mut |_, _| true));
    }

    #[test]
    fn hits_join_across_blank_lines_only() {
        let mut asked = Vec::new();
        let mut a = hit(10, 20);
        assert!(!join_hit(&mut a, &hit(23, 25), &mut |f, l| {
            asked.push((f, l));
            false
        }));
        assert_eq!((a.start_line, a.end_line), (10, 20));
        assert!(join_hit(&mut a, &hit(23, 25), &mut |f, l| {
            asked.push((f, l));
            true
        }));
        assert!(join_hit(&mut a, &hit(4, 7), &mut |f, l| {
            asked.push((f, l));
            true
        }));
        assert_eq!(asked, [(21, 22), (21, 22), (8, 9)]);
        assert_eq!((a.start_line, a.end_line), (4, 25));
        let lines: Vec<&str> = a.text.split('\n').collect();
        assert_eq!(lines.len(), 22);
        assert_eq!((lines[0], lines[3], lines[4], lines[5], lines[6]), ("line 4", "line 7", "", "", "line 10"));
        assert_eq!((lines[16], lines[17], lines[18], lines[19]), ("line 20", "", "", "line 23"));
    }

    fn span(h: Option<Hit>) -> Option<(usize, usize)> {
        h.map(|h| {
            assert_eq!(h.text, hit(h.start_line, h.end_line).text, "the text is the lines kept");
            (h.start_line, h.end_line)
        })
    }

    #[test]
    fn a_hit_too_long_to_join_keeps_only_lines_no_better_hit_shows() {
        let better = [hit(10, 20), Hit { file: "b.rs".into(), ..hit(30, 40) }];
        for (worse, kept) in [
            ((18, 60), Some((21, 60))), // overlapping after
            ((1, 12), Some((1, 9))),    // overlapping before
            ((5, 50), Some((21, 50))),  // around: the longer side
            ((12, 15), None),           // inside: nothing new
            ((30, 40), Some((30, 40))), // another file's lines
            ((21, 25), Some((21, 25))), // no line in common
        ] {
            assert_eq!(span(outside_better(hit(worse.0, worse.1), &better)), kept, "{worse:?}");
        }
        // Blank lines at the ends of what is left go too; only blank lines left is nothing.
        let blank_after = |h: Hit, blank: &[usize]| {
            let text = (h.start_line..=h.end_line)
                .map(|l| if blank.contains(&l) { String::new() } else { format!("line {l}") })
                .collect::<Vec<_>>()
                .join("\n");
            Hit { text, ..h }
        };
        let cut = outside_better(blank_after(hit(18, 30), &[21, 22, 30]), &better).unwrap();
        assert_eq!((cut.start_line, cut.end_line), (23, 29));
        assert!(outside_better(blank_after(hit(18, 22), &[21, 22]), &better).is_none());
        // A text that does not match its span is kept whole.
        let odd = Hit { text: "x".into(), ..hit(18, 25) };
        assert_eq!(outside_better(odd, &better).map(|h| (h.start_line, h.end_line)), Some((18, 25)));
    }

    #[test]
    fn a_hit_grown_into_one_too_long_to_join_takes_its_lines_from_the_worse() {
        let mut hits = vec![hit(10, 30), hit(33, 60)];
        assert!(join_hit(&mut hits[0], &hit(28, 36), &mut |_, _| panic!("no gap")));
        join_grown(&mut hits, 0, &mut |_, _| true, &|_| false);
        let spans: Vec<(usize, usize)> = hits.iter().map(|h| (h.start_line, h.end_line)).collect();
        assert_eq!(spans, [(10, 36), (37, 60)]);
        assert_eq!(hits[1].text, hit(37, 60).text);
        // The worse one grown into a better one gives up the lines instead.
        let mut hits = vec![hit(33, 60), hit(10, 30)];
        assert!(join_hit(&mut hits[1], &hit(28, 36), &mut |_, _| panic!("no gap")));
        join_grown(&mut hits, 1, &mut |_, _| true, &|_| false);
        let spans: Vec<(usize, usize)> = hits.iter().map(|h| (h.start_line, h.end_line)).collect();
        assert_eq!(spans, [(33, 60), (10, 32)]);
    }
}
