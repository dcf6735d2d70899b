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

use super::names::named_identifiers;
use crate::terms::words;

/// A word of negation or absence.
static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:not|no|none|nothing|never|neither|nor|cannot|unrelated|irrelevant|insufficient|unclear|absent|missing|lacks?|lacking|fails?|elsewhere)\b|\boutside\s+(?:of\s+)?(?:their|its|the|this|these|our)\s+scope\b|n't\b",
    )
});

/// An answer that says it has none, or is unsure, whatever it names after:
/// a guess taught as a concept misleads every later search (review 272:
/// "I don't know. `AccountBook` perhaps." taught it).
static DOES_NOT_ANSWER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:do|does|did|can|could)(?:\s+not|n't)\s+answer\b|\bcannot\s+answer\b|\bcan(?:not|'t)\s+be\s+answered\b|\bnot\s+enough\s+to\s+answer\b|\bnot\s+in\s+the\s+(?:given|provided|shown)\b|\bno\s+(?:evidence|mention)\b|\b(?:do|does)(?:\s+not|n't)\s+know\b|\bnot\s+sure\b|\bunsure\b|\bunknown\b|\bunable\s+to\b|\bhard\s+to\s+(?:say|tell)\b|\bsorry\b|\bperhaps\b|\bmaybe\b|\b(?:might|may|could)\s+be\b|\bcan\s+only\s+see\b",
    )
});

/// Where a clause ends: a sentence's or a list's punctuation, a dash, a
/// bracket, a line, or a conjunction that turns ("…, but", "although").
static CLAUSE_END: LazyLock<Regex> = LazyLock::new(|| {
    re(r"[.!?;:,]+(?:\s+|$)|\n|\s[-\u{2013}\u{2014}]+\s|[()]|\s(?:but|although|though|however|whereas|while)\s")
});

/// Where the answer's first sentence ends.
static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| re(r"[.!?]+(?:\s+|$)|\n"));

/// What an inline code span becomes while prose is split: one word no
/// split falls inside (review 272: `saml_login()` split at its bracket,
/// and its denial was read as code).
const CODE_SPAN: &str = "\u{e000}";

fn re(pattern: &str) -> Regex {
    Regex::new(&format!("(?i){pattern}")).expect("a valid pattern")
}

/// Each block of the answer's prose (fenced code left out) with its inline
/// code spans masked (`CODE_SPAN`), a curly apostrophe read as a straight
/// one, and the spans in order.
fn masked_prose(answer: &str) -> Vec<(String, Vec<&str>)> {
    answer.split("```").step_by(2).map(masked_block).collect()
}

/// One block of prose with its code spans masked, and the spans.
fn masked_block(block: &str) -> (String, Vec<&str>) {
    let (mut masked, mut spans) = (String::new(), Vec::new());
    for (i, part) in block.split('`').enumerate() {
        match i % 2 {
            1 => {
                masked.push_str(CODE_SPAN);
                spans.push(part);
            }
            _ => masked.push_str(&part.replace('\u{2019}', "'")),
        }
    }
    (masked, spans)
}

/// The pieces of the answer's prose that `ends` splits, each as its words
/// (a code span as its placeholder) and the names it holds.
fn pieces<'a>(answer: &'a str, ends: &Regex) -> Vec<(String, Vec<&'a str>)> {
    let mut out = Vec::new();
    for (masked, spans) in masked_prose(answer) {
        let mut spans = spans.into_iter();
        for piece in ends.split(&masked) {
            let mut names: Vec<&str> = Vec::new();
            for (i, part) in piece.split(CODE_SPAN).enumerate() {
                if i > 0 {
                    names.extend(spans.next().map(|s| named_identifiers(quoted(answer, s))).unwrap_or_default());
                }
                names.extend(named_identifiers_in_prose(answer, part));
            }
            out.push((piece.replace(CODE_SPAN, " "), names));
        }
    }
    out
}

/// `span`, a code span's text inside `answer`, with its backquotes: a word
/// quoted alone is a name (`named_identifiers`).
fn quoted<'a>(answer: &'a str, span: &'a str) -> &'a str {
    let at = span.as_ptr() as usize - answer.as_ptr() as usize;
    answer.get(at.saturating_sub(1)..(at + span.len() + 1).min(answer.len())).unwrap_or(span)
}

/// The names `part` (a piece of the masked prose) holds, as slices of
/// `answer` when they are found there (prose outside code is the answer's
/// own text but for its apostrophes).
fn named_identifiers_in_prose<'a>(answer: &'a str, part: &str) -> Vec<&'a str> {
    named_identifiers(part).into_iter().filter_map(|n| answer.find(n).map(|at| &answer[at..at + n.len()])).collect()
}

/// Whether the answer's first sentence says it has none or is unsure (a
/// hedge later on is about something else: "its total could be zero";
/// review 273), or a clause denies one of the `missing` words it would
/// teach. A clause of nothing but missing words is read with the next
/// ("Payroll: not found", "Payroll? There's none here"; review 272).
pub(super) fn denies_an_answer(answer: &str, missing: &[&str]) -> bool {
    let missing: Vec<String> = missing.iter().map(|m| m.to_lowercase()).collect();
    let is_missing = |w: &str| missing.iter().any(|m| w.to_lowercase().starts_with(m.as_str()));
    // The first sentence, with those after it while it says little ("No.
    // Maybe `AccountBook`."; review 273).
    let mut first = String::new();
    for (prose, names) in pieces(answer, &SENTENCE_END) {
        first = format!("{first} {prose}");
        if words(&first).count() + names.len() >= 3 {
            break;
        }
    }
    if DOES_NOT_ANSWER.is_match(&first) {
        return true;
    }
    let mut carried = String::new();
    for (prose, _) in pieces(answer, &CLAUSE_END) {
        let clause = format!("{carried} {prose}");
        let said: Vec<String> = words(&prose).map(str::to_string).collect();
        if !said.is_empty() && said.iter().all(|w| is_missing(w)) {
            carried = clause;
            continue;
        }
        carried.clear();
        if NEGATIVE.is_match(&clause) && words(&clause).any(is_missing) {
            return true;
        }
    }
    false
}

/// The names the answer affirms: said in some clause with no negation. A
/// name also said in a denial is still affirmed ("`AccountBook` handles
/// payroll, and `AccountBook.total()` never fails"; review 273); an answer
/// that denies the missing word itself is refused whole before this.
pub(super) fn affirmed_names(answer: &str) -> HashSet<&str> {
    let mut affirmed = HashSet::new();
    for (prose, names) in pieces(answer, &CLAUSE_END) {
        if !NEGATIVE.is_match(&prose) {
            affirmed.extend(names);
        }
    }
    affirmed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payroll(answer: &str) -> Vec<&str> {
        if denies_an_answer(answer, &["payroll"]) {
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
            ("`AccountBook` keeps it; `AccountBook.total()` returns `None` when empty.", &["AccountBook"]),
            ("`AccountBook` keeps it, and `post_entry` checks `if not entry`.", &["AccountBook", "post_entry"]),
            (
                "Yes - AccountBook keeps it. I can't be sure about totals, but post_entry appends.",
                &["AccountBook", "post_entry"],
            ),
            ("The ledger: `AccountBook` (e.g. `post_entry`) — never `saml_login`.", &["AccountBook", "post_entry"]),
            ("AccountBook (not AccountBook2) keeps it.", &["AccountBook"]),
            ("The answer is `AccountBook`, which is not abstract.", &["AccountBook"]),
            ("Use AccountBook:\n```python\nif not entries: return None\n```", &["AccountBook"]),
            // Review 272.
            ("`AccountBook` handles payroll without any external service.", &["AccountBook"]),
            // Review 273: a hedge or a negation about something else, a call in a span.
            ("`AccountBook` handles payroll. It could be extended for taxes.", &["AccountBook"]),
            ("Nothing else is needed: `AccountBook` handles payroll.", &["AccountBook"]),
            ("`AccountBook` handles payroll, and `AccountBook.total()` never fails.", &["AccountBook"]),
            ("`AccountBook` handles payroll via `post_entry(entry)`.", &["AccountBook", "post_entry"]),
            ("`AccountBook` keeps the ledger outside of the web layer.", &["AccountBook"]),
            ("`AccountBook.post_entry()` handles payroll; `saml_login()` doesn't.", &["AccountBook", "post_entry"]),
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
            // Review 272: code spans with brackets, unsure answers, a colon, a curly apostrophe.
            "`saml_login(request)` has nothing to do with payroll.",
            "I don't know. `AccountBook` perhaps.",
            "The question can't be answered from these excerpts. `AccountBook` keeps a ledger.",
            "Payroll: not found. Mentioned: `AccountBook`, `saml_login`.",
            "Payroll? There's none here; `AccountBook` tracks money in and out.",
            "The excerpts don\u{2019}t answer the question. `AccountBook` is closest.",
            "Payroll is handled elsewhere; `AccountBook` only keeps a ledger.",
            // Review 273.
            "No. Maybe `AccountBook`.",
            "The excerpts show `AccountBook` (a ledger) and `saml_login` (auth); payroll is outside their scope.",
        ] {
            assert!(payroll(answer).is_empty(), "{answer}: {:?}", payroll(answer));
        }
    }
}
