//! Where a term may start and end in a query or a chunk: at word
//! boundaries, and inside identifiers where their parts meet (`saml_login`,
//! `AccountBookEntry`), so that a term matches a whole part, never a piece
//! of one.

/// Whether `text[start..end]` starts and ends at boundaries.
pub(super) fn at_boundaries(text: &str, start: usize, end: usize) -> bool {
    let (Some(first), Some(last)) = (text[start..end].chars().next(), text[start..end].chars().next_back()) else {
        return false;
    };
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    starts_a_part(before, first) && ends_a_part(last, after)
}

/// Whether `c` belongs to a word: a letter, a digit, or a combining mark,
/// which belongs to the letter before it (`cafe` + U+0301 is "café").
fn in_a_word(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c, '\u{300}'..='\u{36f}' | '\u{1ab0}'..='\u{1aff}' | '\u{1dc0}'..='\u{1dff}' | '\u{20d0}'..='\u{20ff}' | '\u{fe20}'..='\u{fe2f}')
}

fn starts_a_part(before: Option<char>, first: char) -> bool {
    match before {
        None => true,
        Some(b) if !in_a_word(b) => true,
        // `accountBook`: a capital after a lower-case letter or a digit starts a part.
        Some(b) => first.is_uppercase() && (b.is_lowercase() || b.is_ascii_digit()),
    }
}

fn ends_a_part(last: char, after: Option<char>) -> bool {
    match after {
        None => true,
        Some(a) if !in_a_word(a) => true,
        Some(a) => a.is_uppercase() && (last.is_lowercase() || last.is_ascii_digit()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, term: &str) -> bool {
        let start = text.find(term).unwrap();
        at_boundaries(text, start, start + term.len())
    }

    #[test]
    fn terms_match_whole_words_and_whole_parts_of_identifiers() {
        assert!(at("the ledger.", "ledger"));
        assert!(at("saml_login", "saml"));
        assert!(at("newAccountBook", "Account"));
        assert!(at("AccountBookEntry", "AccountBook"));
        assert!(!at("ledgers", "ledger"));
        assert!(!at("samlogin", "saml"));
        assert!(!at("SSOn", "SSO"));
        assert!(!at("XSSO", "SSO"));
    }
}
