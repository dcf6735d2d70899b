//! What an answer denies, so that `--learn` learns nothing of it. Read
//! clause by clause (prose only: fenced and inline code are code, where
//! `not` and `None` deny nothing):
//! - an answer that says it does not answer ("The excerpts do not answer
//!   the question", "cannot answer", "not in the given code"), or denies
//!   the word it would teach ("There is no payroll code", "`AccountBook`
//!   handles invoices, not payroll"), teaches nothing;
//! - a name is learned only from a clause that affirms it: one said only
//!   in denials ("it does not use `saml_login`", "Not in `AccountBook`")
//!   is not.
//!
//! Audit 267 found denials learned as the question's missing word (the
//! next search then found the wrong code, judged sufficient). Reviews 268
//! and 270 found the first forms, a negation anywhere in a sentence or in
//! a first sentence naming no code, refusing answers that did name it and
//! learning names the answer denied. Where the reading is unsure it learns
//! nothing: a concept missed costs a question, a wrong one every search.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::learn::named_identifiers;
use crate::terms::words;

/// A word of negation, absence or doubt.
static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:not|no|none|nothing|never|neither|nor|cannot|unrelated|irrelevant|insufficient|unclear|absent|missing|lacks?|lacking|fails?|without)\b|n't\b",
    )
});

/// An answer that says it has none, whatever it names after.
static DOES_NOT_ANSWER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:do|does|did|can|could)(?:\s+not|n't)\s+answer\b|\bcannot\s+answer\b|\bnot\s+in\s+the\s+(?:given|provided|shown)\b|\bno\s+(?:evidence|mention)\b",
    )
});

/// Where a clause ends: a sentence's or a list's punctuation, a dash, a
/// bracket, a line, or a conjunction that turns ("…, but", "although").
static CLAUSE_END: LazyLock<Regex> = LazyLock::new(|| {
    re(r"[.!?;:,]+(?:\s+|$)|\n|\s[-\u{2013}\u{2014}]+\s|[()]|\s(?:but|although|though|however|whereas|while)\s")
});

fn re(pattern: &str) -> Regex {
    Regex::new(&format!("(?i){pattern}")).expect("a valid pattern")
}

/// The answer's clauses of prose, each with its words outside inline code.
fn clauses(answer: &str) -> Vec<(&str, String)> {
    let prose = answer.split("```").step_by(2);
    let pieces = prose.flat_map(|block| CLAUSE_END.split(block).collect::<Vec<_>>());
    pieces
        .filter(|c| !c.trim().is_empty())
        .map(|c| (c, c.split('`').step_by(2).collect::<Vec<_>>().join(" ")))
        .collect()
}

/// Whether the answer says it has none, or denies one of the `missing`
/// words it would teach.
pub(super) fn denies_an_answer(answer: &str, missing: &[String]) -> bool {
    let missing: Vec<String> = missing.iter().map(|m| m.to_lowercase()).collect();
    let names_missing =
        |text: &str| words(text).any(|w| missing.iter().any(|m| w.to_lowercase().starts_with(m.as_str())));
    clauses(answer)
        .iter()
        .any(|(_, prose)| DOES_NOT_ANSWER.is_match(prose) || (NEGATIVE.is_match(prose) && names_missing(prose)))
}

/// The names the answer affirms: said in some clause with no negation, and
/// in none with one.
pub(super) fn affirmed_names(answer: &str) -> HashSet<&str> {
    let (mut affirmed, mut denied) = (HashSet::new(), HashSet::new());
    for (clause, prose) in clauses(answer) {
        let names = named_identifiers(clause);
        match NEGATIVE.is_match(&prose) {
            true => denied.extend(names),
            false => affirmed.extend(names),
        }
    }
    affirmed.retain(|n| !denied.contains(n));
    affirmed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payroll(answer: &str) -> Vec<&str> {
        if denies_an_answer(answer, &["payroll".into()]) {
            return Vec::new();
        }
        let mut names: Vec<&str> = affirmed_names(answer).into_iter().collect();
        names.sort_unstable();
        names
    }

    /// Reviews 268 and 270: answers that name what handles it.
    #[test]
    fn an_answer_that_names_it_teaches_it() {
        for (answer, taught) in [
            ("AccountBook handles payroll; no other class does.", &["AccountBook"][..]),
            ("Not the Invoice class but AccountBook handles payroll.", &["AccountBook"]),
            ("AccountBook handles payroll, not saml_login.", &["AccountBook"]),
            ("`AccountBook` handles payroll (it does not use `saml_login`).", &["AccountBook"]),
            ("It's AccountBook. It doesn't use saml_login.", &["AccountBook"]),
            ("`AccountBook` keeps it; `AccountBook.total()` returns `None` when empty.", &["AccountBook", "total"]),
            ("`AccountBook` keeps it, and `post_entry` checks `if not entry`.", &["AccountBook", "post_entry"]),
            (
                "Yes - AccountBook keeps it. I can't be sure about totals, but post_entry appends.",
                &["AccountBook", "post_entry"],
            ),
            ("The ledger: `AccountBook` (e.g. `post_entry`) — never `saml_login`.", &["AccountBook", "post_entry"]),
            ("AccountBook (not AccountBook2) keeps it.", &["AccountBook"]),
            ("The answer is `AccountBook`, which is not abstract.", &["AccountBook"]),
            ("Use AccountBook:\n```python\nif not entries: return None\n```", &["AccountBook"]),
        ] {
            assert_eq!(payroll(answer), taught, "{answer}");
        }
    }

    /// Audit 267, reviews 268 and 270: answers that have none, or deny a name.
    #[test]
    fn an_answer_that_denies_it_teaches_nothing_of_it() {
        for answer in [
            "The excerpts do not answer the question: nothing here handles payroll. `AccountBook` is closest.",
            "I don't see payroll here. The closest is `AccountBook`.",
            "There is no payroll code; the closest is `AccountBook`.",
            "I couldn't find payroll; `AccountBook` is the closest.",
            "Nothing in the results handles payroll — `AccountBook` only keeps a ledger.",
            "`AccountBook` handles invoices, not payroll.",
            "No payroll handling appears in these excerpts (`AccountBook` is a generic ledger).",
            "The answer is not in the given code, although `AccountBook` keeps money entries.",
            "I cannot tell from `AccountBook` alone; payroll is absent.",
            "There's no evidence `AccountBook` handles payroll.",
            "Hmm, payroll? Not in `AccountBook`.",
            "`AccountBook` lacks any payroll logic.",
            "It is unclear whether `AccountBook` handles payroll.",
            "`AccountBook` and `saml_login` are unrelated to payroll.",
            "`AccountBook` does not, and neither does `saml_login`.",
            "I cannot answer from these excerpts; AccountBook is about money.",
        ] {
            assert!(payroll(answer).is_empty(), "{answer}: {:?}", payroll(answer));
        }
    }
}
