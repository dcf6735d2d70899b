//! What an answer denies, so that `--learn` learns nothing of it: an answer
//! whose first sentence says it has none ("The excerpts do not answer the
//! question", "I don't see payroll here"), and the names it says are not
//! the thing ("`saml_login` is unrelated to payroll", "not `Invoice`").
//! Audit 267 found both learned as the question's missing word; review 268
//! found a first form, any negation in a sentence, refusing answers that
//! did name it ("AccountBook keeps the ledger; no other class does").

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::learn::named_identifiers;

/// A word of negation or absence.
static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:not|no|none|nothing|never|cannot|unrelated|irrelevant|insufficient|unclear|absent|missing)\b|n't\b")
});

/// An answer that says it does not answer, whatever it names after.
static DOES_NOT_ANSWER: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:do|does|did|can|could)(?:\s+not|n't)\s+answer\b|\bcannot\s+answer\b"));

/// A name right after a negation: "not `saml_login`", "never Invoice".
static AFTER_A_NEGATION: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:not|never|nor|neither|no)\s+(?:(?:the|a|an)\s+)?`?([A-Za-z_]\w*(?:(?:\.|::)\w+)*)"));

/// A clause whose subject, one name or a list, is denied by its verb:
/// "`AccountBook` and `saml_login` are unrelated", "X does not handle it".
static DENIED_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\W*((?:`?[\w.:()]+`?\s*(?:,|\band\b|\bor\b|&)?\s*)+?)\s*\b(?:is|are|was|were|does|do|did|has|have|had)\s*(?:not\b|n't\b|no\b|nothing\b|unrelated\b|irrelevant\b)",
    )
});

fn re(pattern: &str) -> Regex {
    Regex::new(&format!("(?i){pattern}")).expect("a valid pattern")
}

/// The answer's prose: fenced code (```) left out, where `not` is code.
fn prose(answer: &str) -> impl Iterator<Item = &str> {
    answer.split("```").step_by(2)
}

/// `text` without its inline code spans, whose `None` or `if not` deny nothing.
fn without_inline_code(text: &str) -> String {
    text.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// Whether the answer's first sentence says it has none: that it does not
/// answer, or a word of negation or absence and no name of the code.
pub(super) fn says_it_has_none(answer: &str) -> bool {
    static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| re(r"[.!?]+(?:\s+|$)|\n"));
    let first = prose(answer).next().unwrap_or_default();
    let first = SENTENCE_END.split(first).map(str::trim).find(|s| !s.is_empty()).unwrap_or_default();
    let words = without_inline_code(first);
    DOES_NOT_ANSWER.is_match(&words) || (NEGATIVE.is_match(&words) && named_identifiers(first).is_empty())
}

/// The names the answer denies: right after a negation, or the subject of
/// a clause that denies it.
pub(super) fn denied_names(answer: &str) -> HashSet<&str> {
    static CLAUSE_END: LazyLock<Regex> = LazyLock::new(|| re(r"[.!?;:]+(?:\s+|$)|\n|\s[-—]+\s|[()]"));
    let mut denied = HashSet::new();
    for block in prose(answer) {
        denied.extend(AFTER_A_NEGATION.captures_iter(block).filter_map(|c| c.get(1)).map(|m| m.as_str()));
        for clause in CLAUSE_END.split(block) {
            if let Some(subject) = DENIED_SUBJECT.captures(clause).and_then(|c| c.get(1)) {
                denied.extend(named_identifiers(subject.as_str()));
            }
        }
    }
    denied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_has_none_says_so_in_its_first_sentence() {
        for none in [
            "The excerpts do not answer the question: nothing here handles payroll. `AccountBook` is closest.",
            "I don't see payroll here. The closest is `AccountBook`.",
            "None of these excerpts handle payroll. `AccountBook` is closest.",
            "Payroll: not found. Mentioned: `AccountBook`, `saml_login`.",
            "The provided excerpts are insufficient to determine it.\n`AccountBook` posts entries.",
        ] {
            assert!(says_it_has_none(none), "{none}");
        }
        for some in [
            "AccountBook keeps the ledger; no other class does.",
            "Not the Invoice class but AccountBook keeps the ledger.",
            "`AccountBook` keeps the ledger; `AccountBook.total()` returns `None` for an empty one.",
            "AccountBook keeps the ledger. None of the other excerpts matter.",
            "The class `AccountBook` keeps the ledger.",
            "```python\n# none of the entries\nclass AccountBook: pass\n```\nThat is the ledger.",
        ] {
            assert!(!says_it_has_none(some), "{some}");
        }
    }

    #[test]
    fn a_name_is_denied_after_a_negation_or_as_the_subject_of_one() {
        let denied = |answer| {
            let mut d: Vec<&str> = denied_names(answer).into_iter().filter(|n| n.contains(['_', 'B'])).collect();
            d.sort_unstable();
            d
        };
        assert_eq!(denied("`AccountBook` and `saml_login` are unrelated to payroll."), ["AccountBook", "saml_login"]);
        assert_eq!(denied("AccountBook keeps the ledger, not saml_login."), ["saml_login"]);
        assert_eq!(denied("AccountBook (not AccountBook2) keeps it."), ["AccountBook2"]);
        assert_eq!(denied("`saml_login` doesn't handle it; `AccountBook` does."), ["saml_login"]);
        assert!(denied("AccountBook keeps the ledger; no other class does.").is_empty());
        assert!(denied("Yes - AccountBook keeps it. I can't be sure about totals, but post_entry appends.").is_empty());
        assert!(denied("`AccountBook` keeps it (its docstring says \"Money in\"; it cannot go negative).").is_empty());
        assert!(denied("`AccountBook` keeps it, and `post_entry` checks `if not entry`.").is_empty());
        assert!(denied("The ledger: `AccountBook` (e.g. `post_entry`) — never `saml_login`.") == ["saml_login"]);
    }
}
