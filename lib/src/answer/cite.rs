//! Holding an answer to the results it was given: every citation in it, an
//! excerpt's number (`[2]`) or a place (`src/book.rs:14`), is checked
//! against those results. A citation of one of them becomes its place; one
//! of anything else (a file it was not shown, a line outside the excerpt, a
//! number past the last) is taken out of the text and listed as dropped.
//! A file given that the answer names without a line (small models often
//! do) counts as a citation of its excerpt's first line.

use super::spaceless::{after_the_sentence, spaceless, starts};
use crate::records::HitRecord;

/// Longest bracketed group read as citations, in bytes.
const MAX_GROUP_BYTES: usize = 200;

/// A place the answer cites that it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    pub file: String,
    pub line: usize,
}

impl Citation {
    pub fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// An answer's text with its citations checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cited {
    /// The text, numbers replaced by places and dropped citations taken out.
    pub text: String,
    /// The places cited, each once, in the order first cited.
    pub citations: Vec<Citation>,
    /// The citations taken out, as the model wrote them.
    pub dropped: Vec<String>,
}

/// A citation as written: an excerpt's number or a place.
enum Written<'t> {
    Number(usize),
    Place { path: &'t str, line: usize },
}

/// Check the citations of `text` against the excerpts `given` (numbered from 1).
pub fn cite(text: &str, given: &[HitRecord]) -> Cited {
    let mut cited = Cited::default();
    let mut i = 0;
    // Where in a run of path characters a place may start: a place read at
    // each change of script in a long run rescanned the run each time, and
    // a reply of 160 KB took over a minute (audit 195).
    let mut no_place_before = 0;
    while i < text.len() {
        let rest = &text[i..];
        if i >= no_place_before {
            if let Some(from) = places_start_from(text, i) {
                no_place_before = from;
            }
        }
        if let Some((group, len)) = bracketed_group(rest) {
            let kept: Vec<String> = group.iter().filter_map(|w| cited.check(w.0, &w.1, given)).collect();
            if kept.is_empty() {
                // `(see [4])` or `([4])` goes whole, not as `()`.
                if cited.text.ends_with('(') && text[i + len..].starts_with(')') {
                    cited.text.pop();
                    i += 1;
                }
                drop_space_before(&mut cited.text);
            } else {
                cited.text.push_str(&format!("[{}]", kept.join(", ")));
            }
            i += len;
        } else if let Some(len) = url_len(text, i) {
            // A URL is left as written: no place is read from within it.
            cited.text.push_str(&rest[..len]);
            i += len;
        } else if let Some((skip, written, len)) = (i >= no_place_before).then(|| bare_place(text, i, given)).flatten()
        {
            cited.text.push_str(&rest[..skip]);
            match cited.check(&rest[skip..len], &written, given) {
                Some(place) => cited.text.push_str(&place),
                None => drop_space_before(&mut cited.text),
            }
            i += len;
        } else {
            let c = rest.chars().next().expect("not at the end");
            cited.text.push(c);
            i += c.len_utf8();
        }
    }
    // A citation dropped at the start leaves the space after it.
    cited.text = cited.text.trim_start().to_string();
    cite_files_named(&mut cited, given);
    cited
}

/// Add a citation for each file given that the text names by its path (or
/// by its file name, when no other file given has that name) and that has
/// none yet.
fn cite_files_named(cited: &mut Cited, given: &[HitRecord]) {
    for hit in given {
        let file = hit.cited_name();
        if cited.citations.iter().any(|c| c.file == file) {
            continue;
        }
        let name = file.rsplit('/').next().unwrap_or(&file);
        let name_is_unique = given.iter().filter(|h| h.file.rsplit('/').next() == Some(name)).count() == 1
            || given.iter().all(|h| h.cited_name() == file);
        if names_file(&cited.text, &file) || (name_is_unique && names_file(&cited.text, name)) {
            cited.citations.push(Citation { file: file.clone(), line: hit.start_line });
        }
    }
}

/// Whether `text` has `path` as a whole word (not inside a longer path).
fn names_file(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + path.len()..].chars().next();
        !before.is_some_and(|c| !ends_name(c) && c != '.')
            && !after.is_some_and(|c| !ends_name(c) && c != '.' || c == ':')
    })
}

impl Cited {
    /// The place `written` cites if it was given (recorded once), else None
    /// (and `as_written` is recorded as dropped).
    fn check(&mut self, as_written: &str, written: &Written<'_>, given: &[HitRecord]) -> Option<String> {
        match resolve(written, given) {
            Some(c) => {
                let place = c.place();
                if !self.citations.contains(&c) {
                    self.citations.push(c);
                }
                Some(place)
            }
            None => {
                self.dropped.push(as_written.trim().to_string());
                None
            }
        }
    }
}

/// The given place a citation names, if it names one.
fn resolve(written: &Written<'_>, given: &[HitRecord]) -> Option<Citation> {
    match *written {
        Written::Number(n) => {
            given.get(n.checked_sub(1)?).map(|h| Citation { file: h.cited_name(), line: h.start_line })
        }
        Written::Place { path, line } => {
            let path = path.strip_prefix("./").unwrap_or(path);
            // A path two given files end with (`src/app.py` of two of a
            // catalog's projects) names neither: it is not cited.
            let mut files = given
                .iter()
                .filter(|h| {
                    let file = h.cited_name();
                    // An absolute path is the given file's when it is the hit's root and file.
                    let absolute = h
                        .root
                        .as_deref()
                        .is_some_and(|r| std::path::Path::new(r).join(&h.file) == std::path::Path::new(path));
                    let same_file = file == path || file.ends_with(&format!("/{path}")) || absolute;
                    // Of its lines, those its excerpt showed (a long hit is cut).
                    same_file && (h.start_line..=super::prompt::last_line_shown(h)).contains(&line)
                })
                .map(HitRecord::cited_name);
            let file = files.next()?;
            files.all(|other| other == file).then_some(Citation { file, line })
        }
    }
}

/// At the start of `rest`, a `[...]` group whose comma-separated items are
/// all citations: the items (as written) and the group's length in bytes.
fn bracketed_group(rest: &str) -> Option<(Vec<(&str, Written<'_>)>, usize)> {
    let inner = rest.strip_prefix('[')?;
    // Looked for within the bound only: a reply of many `[` and no `]`
    // would otherwise be scanned to its end from each of them.
    let close = inner.bytes().take(MAX_GROUP_BYTES + 1).position(|b| b == b']')?;
    let body = &inner[..close];
    if body.contains('\n') || body.trim().is_empty() {
        return None;
    }
    let items: Option<Vec<(&str, Written<'_>)>> =
        body.split([',', ';']).map(|item| Some((item, written(item.trim())?))).collect();
    Some((items?, close + 2))
}

/// An item of a bracketed group: a number, or a whole place.
fn written(item: &str) -> Option<Written<'_>> {
    if let Some(n) = number(item) {
        return Some(Written::Number(n));
    }
    match place_at(item, 0) {
        Some((w, len)) if len == item.len() => Some(w),
        _ => None,
    }
}

/// A place cited outside brackets, starting at byte `i` of `text`: only at
/// the start of a word, so `a.rs:1` inside `xa.rs:1` is not read twice.
///
/// In text of a script written without spaces the path may begin within
/// the words before it (`见说明.py:1`): it begins where a file given says
/// (`spaceless::starts`), else after the sentence's words, else where the
/// run does. The bytes before it are the sentence's (`skip`).
fn bare_place<'t>(text: &'t str, i: usize, given: &[HitRecord]) -> Option<(usize, Written<'t>, usize)> {
    if !starts_path(text[..i].chars().next_back(), text[i..].chars().next()?) {
        return None;
    }
    let (Written::Place { path, line }, len) = place_at(text, i)? else { return None };
    let starts = starts(path);
    let is_given = |at: usize| resolve(&Written::Place { path: &path[at..], line }, given).is_some();
    let skip = starts
        .iter()
        .copied()
        .find(|&at| looks_like_path(&path[at..]) && is_given(at))
        .or_else(|| {
            starts.iter().copied().rev().find(|&at| after_the_sentence(path, at) && looks_like_path(&path[at..]))
        })
        .or_else(|| starts.first().copied().filter(|&at| looks_like_path(&path[at..])))?;
    Some((skip, Written::Place { path: &path[skip..], line }, len))
}

/// The most bytes of a path read as a place's: far above any a project
/// holds, and what bounds the work of reading places in a long run of
/// path characters.
const MAX_PLACE_PATH: usize = 1024;

/// Where a place may start in the run of path characters at byte `i` of
/// `text`, when later than `i`: past the run when no line number follows it
/// (`:12`), which every start within it shares; within its last
/// `MAX_PLACE_PATH` bytes when it is longer.
fn places_start_from(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i..];
    let run = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
    let path = rest[..run].trim_end_matches('.');
    let after = rest[path.len()..].strip_prefix(':').map(|a| a.strip_prefix('-').unwrap_or(a));
    if !after.is_some_and(|a| a.starts_with(|c: char| c.is_ascii_digit())) {
        return (run > 0).then_some(i + run);
    }
    let mut from = (i + path.len()).checked_sub(MAX_PLACE_PATH).filter(|&from| from > i)?;
    while !text.is_char_boundary(from) {
        from += 1;
    }
    Some(from)
}

/// `path:line` or `path:line-line` at byte `i` of `text`, where the path has
/// a letter and a `.` or `/` (so that `12:30` and `localhost:80` are not places).
fn place_at(text: &str, i: usize) -> Option<(Written<'_>, usize)> {
    let rest = &text[i..];
    let path_len = rest.find(|c: char| !is_path_char(c)).unwrap_or(rest.len());
    let path = rest[..path_len].trim_end_matches('.');
    let after = rest[path.len()..].strip_prefix(':')?;
    // A negative line (`:-1`) is a place no excerpt has: checked and
    // dropped, not left in the text as no citation.
    let negative = after.strip_prefix('-').filter(|unsigned| unsigned.starts_with(|c: char| c.is_ascii_digit()));
    let sign = usize::from(negative.is_some());
    let after = negative.unwrap_or(after);
    let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
    let line = number(&after[..digits]).map(|n| if negative.is_some() { usize::MAX } else { n })?;
    // Line 0 is a place too, checked as any and dropped: no excerpt has it.
    if !looks_like_path(path) {
        return None;
    }
    let mut len = path.len() + 1 + sign + digits;
    // A range (`:14-20`) cites its first line.
    if let Some(tail) = after[digits..].strip_prefix('-') {
        let more = tail.find(|c: char| !c.is_ascii_digit()).unwrap_or(tail.len());
        if more > 0 {
            len += 1 + more;
        }
    }
    Some((Written::Place { path, line }, len))
}

/// The length of the URL at byte `i` of `text` (`https://x.y:8080/a.py:3`,
/// `file:///…`): a scheme, at the start of a word, then `://`, up to a
/// space, a bracket or a quote, or a letter of a script written without
/// spaces. Read as places, its pieces were taken out (`https:` left).
fn url_len(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i..];
    if text[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric()) {
        return None;
    }
    // Only a scheme's length (32 at most) is looked at from each byte: a
    // search for `://` in the rest, at each, took minutes on a long answer.
    if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let scheme = rest.bytes().take(33).position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')))?;
    if !rest[scheme..].starts_with("://") {
        return None;
    }
    let ends = |c: char| {
        c.is_whitespace() || "<>\"'()[]{}".contains(c) || spaceless(c) || (!c.is_ascii() && !c.is_alphanumeric())
    };
    Some(rest.find(ends).unwrap_or(rest.len()))
}

/// Whether `path` can be a place's: a letter and a `.` or `/` (so that
/// `12:30` and `localhost:80` are not places). One that starts with a dot
/// is when it has a directory in it (`../secret.py`, `.github/ci.yml`) or
/// names a dotfile (`.env`, `.eslintrc.js`), so that it is checked like
/// any: a dotfile the model was not given stayed in the answer, and one it
/// was given was cited at its first line, not the line written (audit 195).
fn looks_like_path(path: &str) -> bool {
    let dotfile = path.strip_prefix('.').is_some_and(|name| name.starts_with(|c: char| c.is_alphabetic()));
    let named = path.chars().any(|c| c.is_ascii_alphabetic())
        && path.contains(['.', '/'])
        && (!path.starts_with('.') || path.contains('/') || dotfile);
    named || path.starts_with("./")
}

/// The number `digits` writes; one past usize is usize::MAX, which no
/// excerpt has, so that a citation of it is checked and dropped, not left
/// in the text as if it were no citation.
fn number(digits: &str) -> Option<usize> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(usize::MAX))
}

/// `~` too: `~/.ssh/id_rsa:1`, dropped, left its `~` in the text.
/// A character a path may hold: letters and digits of any script (a cited
/// `src/données.py` was read from `es.py`, and dropped), their marks, and
/// `_ . / - ~`.
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || spaceless(c) || matches!(c, '_' | '.' | '/' | '-' | '~')
}

/// Whether a path may start at `first`, after `before`: not inside a word,
/// but where the script changes to or from one written without spaces
/// (`详见src/retry.py:2`).
fn starts_path(before: Option<char>, first: char) -> bool {
    match before {
        Some(c) if is_path_char(c) => (c.is_alphanumeric() || spaceless(c)) && spaceless(c) != spaceless(first),
        _ => true,
    }
}

/// A character that ends a name written in running text: one no path
/// holds, or a letter of a script written without spaces (`在retry.py中`).
fn ends_name(c: char) -> bool {
    !is_path_char(c) || spaceless(c)
}

/// Take out the space a dropped citation leaves behind (`word [9].`).
fn drop_space_before(text: &mut String) {
    if text.ends_with(' ') {
        text.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(file: &str, start: usize, end: usize) -> HitRecord {
        serde_json::from_value(serde_json::json!({"file": file, "start_line": start, "end_line": end})).unwrap()
    }

    fn given() -> Vec<HitRecord> {
        vec![hit("src/book.rs", 10, 30), hit("src/sso/saml.py", 1, 8)]
    }

    #[test]
    fn a_dotfile_is_a_place_checked_like_any() {
        let given = [hit(".eslintrc.js", 1, 3), hit("src/book.rs", 10, 30)];
        let c = cite("Rule at .eslintrc.js:3 [1]. Secret in .env:1 and .npmrc:2, and ../.env:1.", &given);
        assert_eq!(c.text, "Rule at .eslintrc.js:3 [.eslintrc.js:1]. Secret in and, and.");
        let places: Vec<String> = c.citations.iter().map(Citation::place).collect();
        assert_eq!(places, [".eslintrc.js:3", ".eslintrc.js:1"]);
        assert_eq!(c.dropped, [".env:1", ".npmrc:2", "../.env:1"]);
        // Not a place: an ellipsis, a time, a fraction.
        let c = cite("Wait...:3 at 12:30 or .5:2", &given);
        assert!(c.dropped.is_empty() && c.citations.is_empty(), "{:?}", c.dropped);
    }

    /// A long run of letters that changes script at every letter: a place
    /// read at each change rescanned the run, and 160 KB took over a minute
    /// (audit 195). A citation at the end of a long run is still read.
    #[test]
    fn a_long_run_of_mixed_scripts_is_read_once() {
        let run = "a见".repeat(40_000);
        let started = std::time::Instant::now();
        let c = cite(&run, &given());
        assert_eq!((c.text.len(), c.citations.len()), (run.len(), 0));
        let c = cite(&format!("{run}:12"), &given());
        assert!(c.citations.is_empty());
        let c = cite(&format!("{}src/book.rs:12", "见".repeat(2000)), &given());
        assert_eq!(c.citations.iter().map(Citation::place).collect::<Vec<_>>(), ["src/book.rs:12"], "{}", c.text);
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    }

    #[test]
    fn a_catalogs_files_of_one_path_are_cited_by_project() {
        let in_project = |project: &str| HitRecord { project: Some(project.into()), ..hit("src/lib.rs", 1, 9) };
        let given = [in_project("api"), in_project("billing")];
        let c = cite("Billing does it [2]; see also [billing/src/lib.rs:4] and [api/src/lib.rs:99].", &given);
        assert_eq!(c.text, "Billing does it [billing/src/lib.rs:1]; see also [billing/src/lib.rs:4] and.");
        assert_eq!(
            c.citations.iter().map(Citation::place).collect::<Vec<_>>(),
            ["billing/src/lib.rs:1", "billing/src/lib.rs:4"]
        );
        assert_eq!(c.dropped, ["api/src/lib.rs:99"]);
        // A bare path both projects have names neither.
        let c = cite("One of them does [src/lib.rs:4].", &given);
        assert_eq!((c.text.as_str(), c.dropped.as_slice()), ("One of them does.", &["src/lib.rs:4".to_string()][..]));
        let c = cite("Only api's is given [src/lib.rs:4].", &given[..1]);
        assert_eq!(c.text, "Only api's is given [api/src/lib.rs:4].");
    }

    #[test]
    fn a_place_past_a_cut_excerpt_or_under_a_name_of_any_script_is_read_whole() {
        let long = (1..=60)
            .map(|i| format!("    total_{i:02} = book.entries[{i}] * 1.0 + adjustment  # x"))
            .collect::<Vec<_>>();
        let recon = HitRecord { text: long.join("\n"), ..hit("src/recon.py", 1, 60) };
        let given = [recon, hit("src/données.py", 1, 3)];
        let c = cite("Total 2 is at src/recon.py:2, total 55 at src/recon.py:55; see src/données.py:2.", &given);
        assert_eq!(c.citations.iter().map(Citation::place).collect::<Vec<_>>(), ["src/recon.py:2", "src/données.py:2"]);
        assert_eq!(c.dropped, ["src/recon.py:55"], "line 55 was past what its excerpt showed");
        let c = cite("Not given: src/ünknown.py:9.", &given);
        assert_eq!((c.text.as_str(), c.dropped.as_slice()), ("Not given:.", &["src/ünknown.py:9".to_string()][..]));
        // Words of a script written without spaces run into a citation: not its path.
        let c = cite("详见src/données.py:2，重试逻辑在循环中。", &given);
        assert_eq!(c.citations.iter().map(Citation::place).collect::<Vec<_>>(), ["src/données.py:2"], "{}", c.text);
        assert!(c.text.starts_with("详见") && c.dropped.is_empty(), "{}", c.text);
        // Such letters in a path are its own; a name in running text is cited.
        let given = [hit("docs/说明.py", 1, 3), hit("src/retry.py", 1, 9)];
        let c = cite("重试逻辑见 docs/说明.py:1，配置见 docs/secret密码.py:1。逻辑在retry.py中实现。", &given);
        let places: Vec<String> = c.citations.iter().map(Citation::place).collect();
        assert_eq!(places, ["docs/说明.py:1", "src/retry.py:1"], "{}", c.text);
        assert_eq!(c.dropped, ["docs/secret密码.py:1"], "{}", c.text);
    }

    #[test]
    fn latin_words_glued_to_text_of_scripts_without_spaces_are_the_texts() {
        let given = [
            hit("src/retry.py", 1, 9),
            hit("src/book.rs", 1, 30),
            hit("配置/config.py", 1, 5),
            hit("설정/main.py", 1, 5),
            hit("docs/คู่มือ.py", 1, 5),
        ];
        let places = |text: &str| {
            let c = cite(text, &given);
            (c.citations.iter().map(Citation::place).collect::<Vec<_>>(), c.dropped, c.text)
        };
        let (cited, dropped, text) = places("重试逻辑在retry.py和src/book.rs:2。");
        assert_eq!((cited, dropped.len()), (vec!["src/book.rs:2".to_string(), "src/retry.py:1".into()], 0), "{text}");
        assert_eq!(text, "重试逻辑在retry.py和src/book.rs:2。");
        let (cited, _, text) = places("函数retry在src/retry.py:2定义。retry関数はsrc/book.rs:3で定義。");
        assert_eq!(cited, ["src/retry.py:2", "src/book.rs:3"], "{text}");
        let (cited, dropped, text) = places("src/retry.py里的超时为12:30。");
        assert_eq!((cited, dropped.len()), (vec!["src/retry.py:1".to_string()], 0), "{text}");
        let (cited, _, text) =
            places("见 配置/config.py:2 以及 설정/main.py:3, 리트라이는 retry.py와src/book.rs:12 참조");
        assert_eq!(cited, ["配置/config.py:2", "설정/main.py:3", "src/book.rs:12", "src/retry.py:1"], "{text}");
        let (cited, dropped, text) = places("ดูที่ docs/คู่มือ.py:1 และ docs/ไม่มี.py:2 ครับ");
        assert_eq!((cited, dropped), (vec!["docs/คู่มือ.py:1".to_string()], vec!["docs/ไม่มี.py:2".to_string()]), "{text}");
    }

    #[test]
    fn a_given_file_decides_where_a_place_begins_in_words_written_without_spaces() {
        let names = ["docs/第1章.md", "src/测试_utils.py", "src/说明v2.py", "src/v2说明.py", "src/テスト-helper.ts"];
        let more = ["docs/時々.md", "src/한글README.md", "data/数据2024.csv", "docs/说明.py", "配置/config.py"];
        let given: Vec<HitRecord> = names.iter().chain(&more).map(|f| hit(f, 1, 9)).collect();
        for file in names.iter().chain(&more) {
            let text = format!("See {file}:2 and 见 {file}:3。");
            let c = cite(&text, &given);
            assert_eq!(c.text, text, "{file}");
            assert_eq!(
                c.citations.iter().map(Citation::place).collect::<Vec<_>>(),
                [format!("{file}:2"), format!("{file}:3")]
            );
        }
        for (text, kept, place) in [
            (
                "重试逻辑见说明.py:1，另见 docs/第1章.md:2。",
                "重试逻辑见docs/说明.py:1，另见 docs/第1章.md:2。",
                "docs/说明.py:1",
            ),
            ("第一步：打开配置/config.py:3。", "第一步：打开配置/config.py:3。", "配置/config.py:3"),
            ("タイムアウトは配置/config.py:3で設定。", "タイムアウトは配置/config.py:3で設定。", "配置/config.py:3"),
        ] {
            let c = cite(text, &given);
            assert_eq!(c.text, kept);
            assert_eq!(c.citations[0].place(), place, "{text}");
            assert!(c.dropped.is_empty(), "{text}: {:?}", c.dropped);
        }
        // Not given, a name mixing scripts is taken out whole, a sentence's words kept.
        for (text, kept, dropped) in [
            ("See docs/第9章.md:2 and src/说明v9.py:3.", "See and.", vec!["docs/第9章.md:2", "src/说明v9.py:3"]),
            ("ファイルsrc/nothere.py:5と。", "ファイルと。", vec!["src/nothere.py:5"]),
            ("重试逻辑在retry.py和src/nothere.py:5。", "重试逻辑在retry.py和。", vec!["src/nothere.py:5"]),
            ("See https://x.y/a.py:3 for it.", "See https://x.y/a.py:3 for it.", vec![]),
            ("See https://x.y:8080/src/a.py:3 now.", "See https://x.y:8080/src/a.py:3 now.", vec![]),
            ("See https://user@x.y/v?file=src/a.py:3 now.", "See https://user@x.y/v?file=src/a.py:3 now.", vec![]),
            ("See //src/nothere.py:3 here.", "See here.", vec!["//src/nothere.py:3"]),
        ] {
            let c = cite(text, &given);
            assert_eq!((c.text.as_str(), c.dropped.iter().map(String::as_str).collect::<Vec<_>>()), (kept, dropped));
        }
        let thai = [hit("docs/คู่มือ.py", 1, 9)];
        let c = cite("ดูคู่มือ.py:2ครับ", &thai);
        assert_eq!((c.text.as_str(), c.citations[0].place()), ("ดูdocs/คู่มือ.py:2ครับ", "docs/คู่มือ.py:2".into()));
    }

    #[test]
    fn numbers_become_the_places_of_the_excerpts_given() {
        let c = cite("AccountBook keeps the ledger [1]. SAML logs in [2][1].", &given());
        assert_eq!(
            c.text,
            "AccountBook keeps the ledger [src/book.rs:10]. SAML logs in [src/sso/saml.py:1][src/book.rs:10]."
        );
        assert_eq!(
            c.citations.iter().map(Citation::place).collect::<Vec<_>>(),
            ["src/book.rs:10", "src/sso/saml.py:1"]
        );
        assert!(c.dropped.is_empty());
    }

    #[test]
    fn places_are_kept_only_inside_an_excerpt_given() {
        let c =
            cite("See src/book.rs:14, book.rs:12-13 and src/book.rs:99; also [7] and [src/other.rs:3, 2].", &given());
        assert_eq!(c.text, "See src/book.rs:14, src/book.rs:12 and; also and [src/sso/saml.py:1].");
        assert_eq!(
            c.citations.iter().map(Citation::place).collect::<Vec<_>>(),
            ["src/book.rs:14", "src/book.rs:12", "src/sso/saml.py:1"]
        );
        assert_eq!(c.dropped, ["src/book.rs:99", "7", "src/other.rs:3"]);
    }

    #[test]
    fn a_number_past_any_excerpt_or_line_is_a_citation_dropped() {
        let big = "99999999999999999999999";
        let c = cite(&format!("Kept [1]. Gone [{big}] and [src/book.rs:{big}]."), &given());
        assert_eq!(c.text, "Kept [src/book.rs:10]. Gone and.");
        assert_eq!(c.dropped, [big.to_string(), format!("src/book.rs:{big}")]);
    }

    #[test]
    fn a_home_path_or_a_negative_line_is_a_citation_dropped_whole() {
        let c = cite("See ~/.ssh/id_rsa:1 and src/book.rs:-1 here.", &given());
        assert_eq!(c.text, "See and here.");
        assert_eq!(c.dropped, ["~/.ssh/id_rsa:1".to_string(), "src/book.rs:-1".to_string()]);
    }

    #[test]
    fn a_dropped_citation_leaves_no_empty_parentheses_or_leading_space() {
        let c = cite("[9] It calls `verify` ([7]), then logs in (see [8]).", &given());
        assert_eq!(c.text, "It calls `verify`, then logs in (see).");
        assert_eq!(c.dropped, ["9", "7", "8"]);
    }

    #[test]
    fn places_outside_the_root_or_hidden_are_checked_as_any() {
        let c = cite("See ../../etc/passwd:1, `../secret.py:3`, [../x.py:9] and .github/ci.yml:2.", &given());
        assert_eq!(c.text, "See, ``, and.");
        assert!(c.citations.is_empty());
        assert_eq!(c.dropped, ["../../etc/passwd:1", "../secret.py:3", "../x.py:9", ".github/ci.yml:2"]);
        assert_eq!(cite("./src/book.rs:14", &given()).citations.len(), 1);
        // Line 0 is no line of an excerpt: dropped, not left as text.
        let c = cite("See src/book.rs:0.", &given());
        assert_eq!((c.text.as_str(), c.dropped.as_slice()), ("See.", &["src/book.rs:0".to_string()][..]));
        // The given file named by its absolute path is the given file.
        let rooted = [HitRecord { root: Some("/p".into()), ..hit("src/book.rs", 10, 30) }];
        let c = cite("See /p/src/book.rs:12 and /q/src/book.rs:12.", &rooted);
        assert_eq!(c.citations.iter().map(Citation::place).collect::<Vec<_>>(), ["src/book.rs:12"]);
        assert_eq!(c.dropped, ["/q/src/book.rs:12"]);
    }

    #[test]
    fn a_file_given_that_is_named_without_a_line_cites_its_excerpt() {
        let c =
            cite("AccountBook is defined in the `src/book.rs` file; saml.py logs in. See also mybook.rs.", &given());
        assert_eq!(
            c.citations.iter().map(Citation::place).collect::<Vec<_>>(),
            ["src/book.rs:10", "src/sso/saml.py:1"]
        );
        assert_eq!(c.text, "AccountBook is defined in the `src/book.rs` file; saml.py logs in. See also mybook.rs.");
        assert!(cite("It is in xsrc/book.rs and book.rsx.", &given()).citations.is_empty());
    }

    #[test]
    fn text_that_is_not_a_citation_is_left_alone() {
        let text =
            "Call v[i] at 12:30 on localhost:8080 or http://127.0.0.1:8080; see [the docs] and x.y(). Ünïcode [ok]";
        let c = cite(text, &given());
        assert_eq!((c.text.as_str(), c.citations.len(), c.dropped.len()), (text, 0, 0));
    }
}
