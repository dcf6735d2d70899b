//! Whether a search's hits answer its query: heuristics a person can
//! check, computed from the hits alone (terraphim-grep's first tier). A
//! search that looks insufficient says why, so that a person or an agent
//! can rephrase, add a concept, or ask a language model (`vg-answer`).

use std::collections::HashSet;

use crate::concepts::Concept;
use crate::project::SearchMode;
use crate::search::{query_words, Hit};
use crate::terms::{name_terms, stem, words};

/// Hits whose words count towards coverage.
const COVERAGE_HITS: usize = 3;
/// Hits whose files and scores count towards spread and margin.
const SPREAD_HITS: usize = 5;
/// Below this share of the query's words in the top hits, coverage is low.
const MIN_COVERAGE: f32 = 0.5;
/// Below this cosine the best match is weak (semantic and hybrid modes).
const WEAK_SCORE: f32 = 0.35;
/// Scores of the top hits within this of each other do not single one out.
const FLAT_MARGIN: f32 = 0.02;

/// The verdict on a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Sufficient,
    Insufficient,
}

/// A verdict and the measures behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// The query's words found in the top hits (or named by a concept they mention).
    pub covered: Vec<String>,
    /// The query's words no top hit has.
    pub missing: Vec<String>,
    /// `covered` over all the query's words, 0..1; 1 for a query without such words.
    pub coverage: f32,
    /// The best hit's score, if any.
    pub top_score: Option<f32>,
    /// The best score minus the mean of the next ones among the top 5.
    pub margin: Option<f32>,
    /// Distinct files among the top 5 hits.
    pub files: usize,
    /// Why the search looks insufficient, one phrase each; empty when sufficient.
    pub reasons: Vec<String>,
}

/// Judge `hits` (best first) as answers to `query`, searched in `mode`.
/// Insufficient when there are none, or when two of three signals are bad:
/// low coverage of the query's words, a weak best score, no hit standing out.
/// `named` are the concepts the query named: a query word that is a term
/// of one a top hit mentions (a synonym, `journal` for the ledger) is
/// covered by it.
pub fn judge(query: &str, mode: SearchMode, hits: &[Hit], named: &[Concept]) -> Judgement {
    let (covered, missing) = coverage(query, hits, named);
    let total = covered.len() + missing.len();
    let share = if total == 0 { 1.0 } else { covered.len() as f32 / total as f32 };
    let top: Vec<&Hit> = hits.iter().take(SPREAD_HITS).collect();
    let top_score = top.first().map(|h| h.score);
    let margin = margin(&top);
    let files = top.iter().map(|h| h.file.as_str()).collect::<HashSet<_>>().len();
    let mut reasons = Vec::new();
    if hits.is_empty() {
        reasons.push("no results above the threshold".to_string());
    } else {
        if share < MIN_COVERAGE {
            reasons.push(format!(
                "the top results lack {} of the query's words ({})",
                missing.len(),
                missing.join(", ")
            ));
        }
        if let Some(score) = top_score.filter(|&s| mode != SearchMode::Lexical && s < WEAK_SCORE) {
            reasons.push(format!("the best match is weak (score {score:.2})"));
        }
        if let Some(m) = margin.filter(|&m| m < FLAT_MARGIN && files == top.len() && top.len() > 1) {
            // Ordered by more than the score, the first may score below the
            // others: "within -0.066" said nothing.
            let how = match m < 0.0 {
                true => format!("the first scoring {:.3} below the others' mean", -m),
                false => format!("within {m:.3}"),
            };
            reasons.push(format!("no result stands out (the top {} are in {files} files, {how})", top.len()));
        }
    }
    let insufficient = hits.is_empty() || reasons.len() >= 2;
    if !insufficient {
        reasons.clear();
    }
    let verdict = if insufficient { Verdict::Insufficient } else { Verdict::Sufficient };
    Judgement { verdict, covered, missing, coverage: share, top_score, margin, files, reasons }
}

/// The query's words the top hits have, and those they lack, each once.
fn coverage(query: &str, hits: &[Hit], named: &[Concept]) -> (Vec<String>, Vec<String>) {
    // Stemmed twice on both sides: one pass takes `postings` only to
    // `posting`, while `posting` goes to `post`.
    let root = |w: &str| stem(&stem(w));
    let mut seen: HashSet<String> = HashSet::new();
    for hit in hits.iter().take(COVERAGE_HITS) {
        let terms = words(&hit.text).flat_map(name_terms);
        seen.extend(terms.chain(hit.concepts.iter().flat_map(|c| name_terms(c))).map(|t| root(&t)));
        let mentioned = named.iter().filter(|c| hit.concepts.iter().any(|m| m.eq_ignore_ascii_case(&c.name)));
        let synonyms =
            mentioned.flat_map(|c| c.terms.iter()).flat_map(|t| words(t).flat_map(name_terms).collect::<Vec<_>>());
        seen.extend(synonyms.map(|t| root(&t)));
    }
    let mut covered = Vec::new();
    let mut missing = Vec::new();
    for word in query_words(query) {
        if covered.contains(&word) || missing.contains(&word) {
            continue;
        }
        if seen.contains(&root(&word)) {
            covered.push(word);
        } else {
            missing.push(word);
        }
    }
    (covered, missing)
}

fn margin(top: &[&Hit]) -> Option<f32> {
    let (first, rest) = top.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let mean = rest.iter().map(|h| h.score).sum::<f32>() / rest.len() as f32;
    Some(first.score - mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(file: &str, score: f32, text: &str) -> Hit {
        Hit {
            file: file.into(),
            start_line: 1,
            end_line: 2,
            best_start_line: 1,
            best_end_line: 2,
            score,
            relevance: score,
            fit: score,
            text: text.into(),
            concepts: Vec::new(),
            why: Default::default(),
        }
    }

    #[test]
    fn a_strong_hit_that_has_the_query_words_is_sufficient() {
        let hits = [hit("up.py", 0.62, "def upload_with_retry(client):\n    retries"), hit("b.py", 0.4, "x")];
        let j = judge("retry failed uploads", SearchMode::Hybrid, &hits, &[]);
        assert_eq!(j.verdict, Verdict::Sufficient, "{j:?}");
        assert_eq!(
            (j.covered.clone(), j.missing.clone()),
            (vec!["retry".into(), "uploads".into()], vec!["failed".into()])
        );
        assert!(j.reasons.is_empty());
    }

    #[test]
    fn a_plural_in_the_query_is_covered_by_the_singular_in_the_code() {
        let hits = [hit("book.rs", 0.5, "/// Every posting the firm made")];
        assert_eq!(judge("postings", SearchMode::Hybrid, &hits, &[]).covered, ["postings"]);
    }

    #[test]
    fn nothing_found_or_two_bad_signals_is_insufficient_and_says_why() {
        let none = judge("ledger balance", SearchMode::Hybrid, &[], &[]);
        assert_eq!((none.verdict, none.reasons.len()), (Verdict::Insufficient, 1));
        let flat: Vec<Hit> =
            (0..5).map(|i| hit(&format!("f{i}.rs"), 0.30 - i as f32 * 0.001, "fn other() {}")).collect();
        let j = judge("ledger balance", SearchMode::Hybrid, &flat, &[]);
        assert_eq!(j.verdict, Verdict::Insufficient);
        assert_eq!(j.reasons.len(), 3, "{:?}", j.reasons);
        assert!(j.reasons[0].contains("ledger, balance"), "{:?}", j.reasons);
        assert!(j.reasons[2].ends_with("5 files, within 0.002)"), "{:?}", j.reasons);
        // The first below the others (ordered by more than the score).
        let mut below = flat.clone();
        below[0].score = 0.2;
        let j = judge("ledger balance", SearchMode::Hybrid, &below, &[]);
        assert!(
            j.reasons
                .iter()
                .any(|r| r.contains("5 files, the first scoring 0.09") && r.ends_with("below the others' mean)")),
            "{:?}",
            j.reasons
        );
        // One bad signal alone is not enough: a weak score in lexical mode means nothing.
        let j = judge("ledger balance", SearchMode::Lexical, &[hit("a.rs", 0.1, "fn ledger_balance()")], &[]);
        assert_eq!(j.verdict, Verdict::Sufficient, "{j:?}");
    }

    #[test]
    fn a_concept_the_hit_mentions_covers_its_name() {
        let mut h = hit("book.py", 0.5, "class AccountBook: ...");
        h.concepts = vec!["ledger".into()];
        assert_eq!(judge("the ledger", SearchMode::Hybrid, &[h.clone()], &[]).covered, ["ledger"]);
        // Named by a synonym, the concept covers it too, and only the
        // concept the hit mentions.
        let term = |n: &str, t: &[&str]| Concept {
            name: n.into(),
            terms: std::iter::once(n).chain(t.iter().copied()).map(String::from).collect(),
            source: "kg/x.md".into(),
        };
        let named = [term("ledger", &["AccountBook", "cash journal"]), term("auth", &["login"])];
        let j = judge("where is the journal login", SearchMode::Hybrid, &[h], &named);
        assert_eq!((j.covered, j.missing), (vec!["journal".to_string()], vec!["login".to_string()]));
    }
}
