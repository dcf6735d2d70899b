//! The cut of a ranking to its best few, ties kept: which of two equal
//! matches a cut keeps must not hang on the order they were written in.

use std::cmp::Ordering;

/// `items` cut to the best `limit` by `order` (best first, by score alone),
/// and every other one as good as the last of them, in no order. A cut
/// that broke ties by chunk id kept one of two equal matches by when each
/// was indexed, so the same tree gave `-k 1` another file after
/// `--reindex` (audit 204); the caller orders what is kept, ties by place.
pub fn keep_best_with_ties<T>(items: &mut Vec<T>, limit: usize, order: impl Fn(&T, &T) -> Ordering) {
    if limit == 0 {
        items.clear();
        return;
    }
    if items.len() <= limit {
        return;
    }
    items.select_nth_unstable_by(limit - 1, &order);
    let mut end = limit;
    for i in limit..items.len() {
        if order(&items[i], &items[limit - 1]) == Ordering::Equal {
            items.swap(i, end);
            end += 1;
        }
    }
    items.truncate(end);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_are_kept_with_every_one_tied_with_the_last() {
        let by_score = |a: &(u32, i32), b: &(u32, i32)| b.1.cmp(&a.1);
        let mut items = vec![(1, 5), (2, 9), (3, 5), (4, 7), (5, 5), (6, 1)];
        keep_best_with_ties(&mut items, 3, by_score);
        items.sort();
        assert_eq!(items, [(1, 5), (2, 9), (3, 5), (4, 7), (5, 5)]);
        let mut items = vec![(1, 5), (2, 9), (3, 5), (4, 7)];
        keep_best_with_ties(&mut items, 2, by_score);
        items.sort();
        assert_eq!(items, [(2, 9), (4, 7)]);
        keep_best_with_ties(&mut items, 0, by_score);
        assert!(items.is_empty());
    }
}
