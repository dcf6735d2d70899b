//! Which lines of a hit are shown for it: those sharing the most words
//! with the query, as a person would pick them, the line that holds an
//! identifier the query names verbatim first.

use std::collections::{HashMap, HashSet};

use crate::records::HitRecord;

/// Lower-cased words of `text`, identifiers split at `_` and camelCase
/// humps, but for stop words.
pub fn words(text: &str) -> Vec<String> {
    let mut out = all_words(text);
    out.retain(|w| !STOP_WORDS.contains(&w.as_str()));
    out
}

/// `words` with the stop words kept.
fn all_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        let mut prev_lower = false;
        for c in token.chars() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out.retain(|w| w.chars().count() > 1);
    out
}

const STOP_WORDS: [&str; 24] = [
    "the", "a", "an", "of", "to", "in", "is", "and", "or", "for", "on", "at", "by", "with", "it", "be", "as", "are",
    "this", "that", "from", "where", "we", "do",
];

/// A query's words, counted by what a word of a line matches them by:
/// its stem (a shared 4-letter prefix), or itself where it is shorter.
/// Built once per hit, so that scoring a line costs its own words only: a
/// long question over a long hand-made text would otherwise be their product.
/// A query of stop words alone ("for") is matched by them, as a search by
/// words keeps the chunks that hold them (audit 260: the line shown was
/// the chunk's first, which held none), each by itself: `from` by its stem
/// found `fromkeys` (review 265).
pub(super) struct QueryTerms {
    by_stem: HashMap<String, usize>,
    by_short_word: HashMap<String, usize>,
    stop_words_count: bool,
}

impl QueryTerms {
    pub(super) fn of(query: &str) -> QueryTerms {
        let mut query_words = words(query);
        let stop_words_count = query_words.is_empty();
        if stop_words_count {
            query_words = all_words(query);
        }
        let (mut by_stem, mut by_short_word) = (HashMap::new(), HashMap::new());
        for q in &query_words {
            match stem(q).filter(|_| !stop_words_count) {
                Some(s) => *by_stem.entry(s.to_string()).or_insert(0) += 1,
                None => *by_short_word.entry(q.clone()).or_insert(0) += 1,
            }
        }
        QueryTerms { by_stem, by_short_word, stop_words_count }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_stem.is_empty() && self.by_short_word.is_empty()
    }

    /// How many of the query's words appear in `line`, as loose stems. A
    /// long query word matches a line word of its stem (the word itself
    /// included); a short one, itself only: each is counted once.
    pub(super) fn overlap(&self, line: &str) -> usize {
        let line_words = if self.stop_words_count { all_words(line) } else { words(line) };
        let mut seen: HashSet<(bool, &str)> = HashSet::new();
        let mut matched = 0;
        for w in &line_words {
            let key = stem(w).filter(|_| !self.stop_words_count).map_or((false, w.as_str()), |s| (true, s));
            if seen.insert(key) {
                let counts = if key.0 { &self.by_stem } else { &self.by_short_word };
                matched += counts.get(key.1).copied().unwrap_or(0);
            }
        }
        matched
    }
}

/// A word's first four letters, counted as characters (`café`, `日本語の`);
/// None for a shorter word.
pub(super) fn stem(word: &str) -> Option<&str> {
    word.char_indices().nth(3).map(|(at, c)| &word[..at + c.len_utf8()])
}

/// Line numbers (absolute, ascending) of the hit's most relevant lines:
/// those of its best chunk sharing the most words with the query, else its
/// first non-blank line. Only the best chunk's: a lower neighbour joined to
/// it that shared as many words put another function's lines first, and
/// `-k`, which joins more, changed what the first result showed.
pub fn best_lines(hit: &HitRecord, max: usize) -> Vec<usize> {
    best_lines_of(hit, &hit.text, max)
}

/// As [`best_lines`], with `text` as the chunk's lines (read from the file
/// for a hand-made record without `text`).
pub(super) fn best_lines_of(hit: &HitRecord, text: &str, max: usize) -> Vec<usize> {
    let lines: Vec<&str> = text.split('\n').collect();
    let best = hit.best_lines();
    let of_best = |i: &usize| best.contains(&hit.start_line.saturating_add(*i));
    let query = QueryTerms::of(hit.query.as_deref().unwrap_or_default());
    let identifiers = hit.query.as_deref().map(identifiers).unwrap_or_default();
    // By the identifiers named verbatim, then the words shared: `step_3`'s
    // stem is every `step_N`'s, and the first of those used to be shown.
    let mut scored: Vec<((usize, usize), usize)> = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| of_best(i) && !l.trim().is_empty())
        .map(|(i, l)| ((named_in(&identifiers, l), query.overlap(l)), i))
        .filter(|(s, _)| *s != (0, 0))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<usize> = scored.into_iter().take(max.max(1)).map(|(_, i)| i).collect();
    if picked.is_empty() {
        let not_blank = |i: &usize| !lines[*i].trim().is_empty();
        let says_something = |i: &usize| says_something(lines[*i]);
        let first = |of: &dyn Fn(&usize) -> bool| (0..lines.len()).filter(of_best).find(of);
        let any = || (0..lines.len()).find(not_blank);
        if let Some(i) = first(&says_something).or_else(|| first(&not_blank)).or_else(any) {
            picked.push(i);
        }
    }
    picked.sort();
    // A chunk cut from one long line repeats its line number; show it once.
    let mut out: Vec<usize> =
        picked.into_iter().map(|i| hit.start_line.saturating_add(i)).filter(|&n| n <= hit.end_line).collect();
    if out.is_empty() {
        out.push(*best.start());
    }
    out.dedup();
    out
}

/// Whether a line says more than how code around it is marked or closed:
/// not an attribute or decorator (`#[inline]`, `@property`,
/// `@app.route("/up")`), and not only brackets and punctuation. A hit
/// sharing no word with the query is shown by its first such line, which
/// names what it is.
fn says_something(line: &str) -> bool {
    let line = line.trim();
    !line.starts_with("#[")
        && !line.starts_with("#![")
        && !is_annotation(line)
        && line.chars().any(char::is_alphanumeric)
}

/// `@name` or `@name(...)` alone on its line: a decorator or annotation,
/// not Ruby's `@count = 0` or Objective-C's `@interface Cache`, which say
/// what they are.
fn is_annotation(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('@') else { return false };
    let after = rest.trim_start_matches(|c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'));
    after.len() < rest.len() && (after.is_empty() || after.starts_with('(') && after.ends_with(')'))
}

/// The query's identifiers, lower-cased: its words written as code writes
/// names (`step_3`, `viewItem7`, `compute17`, `Matrix::transpose`'s parts),
/// which `words` splits and stems into what their neighbours share.
fn identifiers(query: &str) -> Vec<String> {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    query
        .split(|c: char| !is_name(c))
        .filter(|token| {
            let shaped = token.contains('_')
                || token.chars().any(|c| c.is_ascii_digit())
                || token.chars().skip(1).any(char::is_uppercase);
            shaped && token.chars().any(char::is_alphabetic)
        })
        .map(str::to_lowercase)
        .collect()
}

/// How many of `identifiers` `line` holds as whole names (`step_3` in
/// `def step_3(state):`, not in `step_30`), case aside.
fn named_in(identifiers: &[String], line: &str) -> usize {
    if identifiers.is_empty() {
        return 0;
    }
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let names: HashSet<String> = line.split(|c: char| !is_name(c)).map(str::to_lowercase).collect();
    identifiers.iter().filter(|id| names.contains(id.as_str())).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(text: &str, query: &str) -> HitRecord {
        serde_json::from_value(serde_json::json!({
            "type": "hit", "v": 1, "root": "/r", "file": "f.py", "start_line": 1,
            "end_line": text.lines().count(), "score": 0.5, "text": text, "query": query
        }))
        .unwrap()
    }

    #[test]
    fn a_name_the_query_gives_verbatim_picks_its_line_over_its_neighbours() {
        let steps = "def step_1(state):\n    return state\n\ndef step_3(state):\n    return state\n";
        assert_eq!(best_lines(&hit(steps, "step_3"), 1), [4]);
        assert_eq!(best_lines(&hit(steps, "where is step_1 defined"), 1), [1]);
        let humps = "/** Compute value 16. */\nint compute16() {}\n/** Compute value 17. */\nint compute17() {}\n";
        assert_eq!(best_lines(&hit(humps, "compute17"), 1), [4]);
        let views = "def view_item_7():\n    pass\ndef view_item_70():\n    pass\n";
        assert_eq!(best_lines(&hit(views, "VIEW_ITEM_70"), 1), [3], "whole names, case aside");
        // A plain question keeps its words' count.
        let prose = "# retry\n# retry the failed upload\n";
        assert_eq!(best_lines(&hit(prose, "retry failed uploads"), 1), [2]);
    }

    #[test]
    fn a_joined_hit_shows_the_lines_of_its_best_chunk() {
        let status = "/// Check if status is 100-199.\npub fn is_informational() {}\n\n/// Check if status is 400-499.\npub fn is_client_error() {}\n";
        let query = "check whether a status code is a client error";
        let joined = |best: serde_json::Value| -> HitRecord {
            let mut v = serde_json::to_value(hit(status, query)).unwrap();
            v.as_object_mut().unwrap().extend(best.as_object().unwrap().clone());
            serde_json::from_value(v).unwrap()
        };
        let best = joined(serde_json::json!({"best_start_line": 4, "best_end_line": 5}));
        assert_eq!(best_lines(&best, 1), [4], "the best chunk's line, not the earlier tie at 1");
        assert_eq!(best_lines(&best, 3), [4, 5]);
        // Without them, or with lines that are not the hit's, all of it is searched.
        assert_eq!(best_lines(&hit(status, query), 1), [1]);
        assert_eq!(best_lines(&joined(serde_json::json!({"best_start_line": 4, "best_end_line": 9})), 1), [1]);
        // A best chunk sharing no word shows its first line that is not blank.
        assert_eq!(best_lines(&joined(serde_json::json!({"best_start_line": 2, "best_end_line": 3})), 1), [2]);
        // Nor an attribute or only brackets, where a line says what it is.
        let marked = "    }\n\n    #[inline]\n    pub fn as_str(&self) -> &str {\n        &self.0\n    }\n";
        assert_eq!(best_lines(&hit(marked, "what is held"), 1), [4]);
        assert_eq!(best_lines(&hit("}\n#[inline]\n", "what is held"), 1), [1], "else the first that is not blank");
        let decorated = "@app.route(\"/up\")\n@login_required\ndef upload():\n";
        assert_eq!(best_lines(&hit(decorated, "what is held"), 1), [3]);
        for says in ["@interface Cache : NSObject", "@count = 0", "@media screen {"] {
            assert_eq!(best_lines(&hit(&format!("@Override\n{says}\n"), "what is held"), 1), [2], "{says}");
        }
    }
}
