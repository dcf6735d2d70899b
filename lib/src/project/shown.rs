//! How text that came from outside (a path a client sent, a value read from
//! a stream) is shown in an error: bounded, so that an 8 MiB path makes a
//! one-line error, not an 8 MiB one.

/// At most `max_chars` characters of `text`, and `…` where it was cut.
pub(crate) fn clipped(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_at_a_character() {
        assert_eq!(clipped("short", 80), "short");
        assert_eq!(clipped("ééééé", 3), "ééé…");
        assert_eq!(clipped(&"x".repeat(8 << 20), 200).chars().count(), 201);
    }
}
