//! A file's bytes as text, one way for every reader (the index, a hit's
//! context, the picker's preview), so that lines and chunks agree wherever a
//! file is shown: UTF-8 with its byte order mark dropped, UTF-16 with a byte
//! order mark transcoded (as ripgrep does; Windows tools write it), and
//! bytes that are neither as UTF-8 with replacement characters.

/// How many bytes the binary test looks at, as git and ripgrep do.
pub const BINARY_SNIFF: usize = 8192;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The byte order of UTF-16 text that begins with a byte order mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Utf16 {
    Little,
    Big,
}

fn utf16_of(bytes: &[u8]) -> Option<Utf16> {
    match bytes {
        [0xFF, 0xFE, ..] => Some(Utf16::Little),
        [0xFE, 0xFF, ..] => Some(Utf16::Big),
        _ => None,
    }
}

/// Whether content looks binary: a NUL in its first 8 KiB, as git and
/// ripgrep judge; for UTF-16 (whose ASCII letters are half NUL bytes), a
/// NUL character.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF)];
    match utf16_of(head) {
        Some(order) => utf16_chars(&head[2..], order).any(|c| c == '\0'),
        None => head.contains(&0),
    }
}

/// `bytes` as UTF-8 for a test of their text that reads bytes (whether
/// the file is generated): UTF-16 transcoded, anything else as it is.
pub fn as_utf8(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match utf16_of(bytes) {
        Some(order) => std::borrow::Cow::Owned(utf16_chars(&bytes[2..], order).collect::<String>().into_bytes()),
        None => std::borrow::Cow::Borrowed(bytes),
    }
}

/// The text of `bytes` (see the module's note).
pub fn decode(mut bytes: Vec<u8>) -> String {
    if let Some(order) = utf16_of(&bytes) {
        return utf16_chars(&bytes[2..], order).collect();
    }
    if bytes.starts_with(UTF8_BOM) {
        bytes.drain(..UTF8_BOM.len());
    }
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The characters of UTF-16 `units` in byte order `order`; an unpaired
/// surrogate or an odd last byte reads as a replacement character.
fn utf16_chars(units: &[u8], order: Utf16) -> impl Iterator<Item = char> + '_ {
    let pairs = units.chunks_exact(2).map(move |p| match order {
        Utf16::Little => u16::from_le_bytes([p[0], p[1]]),
        Utf16::Big => u16::from_be_bytes([p[0], p[1]]),
    });
    let odd = (units.len() % 2 == 1).then_some(char::REPLACEMENT_CHARACTER);
    char::decode_utf16(pairs).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).chain(odd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, order: Utf16) -> Vec<u8> {
        let mut bytes = match order {
            Utf16::Little => vec![0xFF, 0xFE],
            Utf16::Big => vec![0xFE, 0xFF],
        };
        for unit in text.encode_utf16() {
            bytes.extend(match order {
                Utf16::Little => unit.to_le_bytes(),
                Utf16::Big => unit.to_be_bytes(),
            });
        }
        bytes
    }

    #[test]
    fn utf16_with_a_byte_order_mark_is_text_in_either_order() {
        let source = "fn résumé() {}\n// 😀 done\n";
        for order in [Utf16::Little, Utf16::Big] {
            let bytes = utf16(source, order);
            assert!(!looks_binary(&bytes), "{order:?}");
            assert_eq!(&*as_utf8(&bytes), source.as_bytes(), "{order:?}");
            assert_eq!(decode(bytes), source, "{order:?}");
        }
    }

    #[test]
    fn a_utf8_byte_order_mark_is_dropped_and_other_bytes_kept() {
        assert_eq!(decode(b"\xEF\xBB\xBFfn a() {}\n".to_vec()), "fn a() {}\n");
        assert_eq!(decode("fn é() {}\n".as_bytes().to_vec()), "fn é() {}\n");
        // Latin-1 is not UTF-8: its letters read as replacement characters.
        assert_eq!(decode(b"caf\xE9 = 1\n".to_vec()), "caf\u{FFFD} = 1\n");
    }

    #[test]
    fn nul_bytes_mean_binary_unless_they_are_utf16_halves() {
        assert!(looks_binary(b"ELF\0\0\x01"));
        assert!(!looks_binary(b"plain text\n"));
        let mut with_nul = utf16("a\0b", Utf16::Little);
        assert!(looks_binary(&with_nul), "a NUL character is binary in UTF-16 too");
        with_nul.truncate(3);
        assert_eq!(decode(with_nul), "\u{FFFD}", "an odd last byte");
        let lone_surrogate = [0xFF, 0xFE, 0x00, 0xD8, b'a', 0];
        assert_eq!(decode(lone_surrogate.to_vec()), "\u{FFFD}a");
    }
}
