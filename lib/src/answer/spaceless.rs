//! Where a place cited in the text of a script written without spaces
//! (Han, kana, Hangul, Thai...) begins: the sentence's words run into the
//! path with nothing between (`重试逻辑见说明.py:1`), so the files given
//! decide where the path starts.

/// A letter (or its mark) of a script written without spaces: Han, kana,
/// Hangul, Thai, Lao, Myanmar, Khmer; not their punctuation (`。`, `：`).
pub(super) fn spaceless(c: char) -> bool {
    let marked_script = matches!(c,
        '\u{0E00}'..='\u{0EFF}' // Thai, Lao (tone marks are no letters)
        | '\u{1000}'..='\u{109F}' // Myanmar
        | '\u{1780}'..='\u{17FF}' // Khmer
    );
    let letters = matches!(c,
        '\u{1100}'..='\u{11FF}' // Hangul Jamo
        | '\u{3005}'..='\u{3007}' // 々 〆 〇
        | '\u{3040}'..='\u{9FFF}' // kana, CJK extension A, Han
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
        | '\u{20000}'..='\u{3134F}' // Han extensions
    );
    marked_script || (letters && c.is_alphanumeric())
}

/// A letter or digit of any script, such a script's marks included.
fn wordlike(c: char) -> bool {
    c.is_alphanumeric() || spaceless(c)
}

/// Byte offsets of `path` where a cited path could begin: its start, each
/// letter of a run of such a script it begins with (`见说明.py` may be
/// `说明.py`), and each change of script (`在src/…`); none before a file
/// name the sentence ran through (`retry.py和src/book.rs`: only from `和`).
pub(super) fn starts(path: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let (mut floor, mut dot_in_name, mut leading) = (0, false, true);
    let mut before: Option<char> = None;
    for (at, c) in path.char_indices() {
        if let Some(b) = before {
            let change = wordlike(b) && wordlike(c) && spaceless(b) != spaceless(c);
            if change && spaceless(c) && dot_in_name {
                floor = at;
            }
            if change || (leading && spaceless(c)) {
                starts.push(at);
            }
        }
        leading &= spaceless(c);
        match c {
            '/' => dot_in_name = false,
            '.' => dot_in_name = true,
            _ => {}
        }
        before = Some(c);
    }
    // Only where the words before it are the sentence's, which hold no `/`
    // or `.`: `src/v2说明.py` is no `说明.py`.
    starts.retain(|&s| s == floor || (s > floor && !path[floor..s].contains(['/', '.'])));
    starts
}

/// Whether the path from byte `at` of `path`, one of its `starts`, begins
/// a Latin word after words of such a script (`在src/`): where the
/// sentence's words end.
pub(super) fn after_the_sentence(path: &str, at: usize) -> bool {
    let first = path[at..].chars().next();
    path[..at].chars().next_back().is_some_and(spaceless) && first.is_some_and(|c| !spaceless(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suffixes(path: &str) -> Vec<&str> {
        starts(path).into_iter().map(|s| &path[s..]).collect()
    }

    #[test]
    fn a_path_may_begin_within_the_words_before_it_but_not_before_a_name_they_gave() {
        assert_eq!(suffixes("见说明.py"), ["见说明.py", "说明.py", "明.py"]);
        assert_eq!(suffixes("在src/book.rs"), ["在src/book.rs", "src/book.rs"]);
        assert_eq!(suffixes("retry.py和src/book.rs"), ["和src/book.rs", "src/book.rs"]);
        assert_eq!(suffixes("docs/第1章.md"), ["docs/第1章.md"]);
        assert_eq!(suffixes("src/v2说明.py"), ["src/v2说明.py"]);
        assert_eq!(
            suffixes("ดูที่docs/a.py"),
            ["ดูที่docs/a.py", "ูที่docs/a.py", "ที่docs/a.py", "ี่docs/a.py", "่docs/a.py", "docs/a.py"]
        );
        assert_eq!(suffixes("src/retry.py"), ["src/retry.py"]);
        assert!(after_the_sentence("在src/book.rs", "在".len()));
        assert!(!after_the_sentence("docs/secret密码.py", "docs/secret".len()));
        assert!(spaceless('々') && spaceless('ค') && spaceless('่') && !spaceless('：') && !spaceless('。'));
    }
}
