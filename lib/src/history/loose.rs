//! Commits gix's parser refuses (an author line without its `<email>`, as
//! old imported histories have), read as leniently as `git log` reads them,
//! so that one malformed commit does not stop vg-log over the whole history.

use gix::bstr::ByteSlice;

/// What a malformed commit's raw text says, as far as it can be read.
#[derive(Debug, PartialEq)]
pub(super) struct LooseCommit<'a> {
    pub parents: Vec<gix::ObjectId>,
    pub author: LooseSignature<'a>,
    /// The committer's time (the order of a history), else the author's, else 0.
    pub time: gix::date::Time,
    pub message: &'a [u8],
}

/// A signature line's name and email, empty where it has none.
#[derive(Debug, PartialEq)]
pub(super) struct LooseSignature<'a> {
    pub name: &'a [u8],
    pub email: &'a [u8],
    pub time: Option<gix::date::Time>,
}

/// Read a commit object's raw bytes: the header up to the first blank line,
/// then the message. Lines it cannot read are passed over.
pub(super) fn parse(data: &[u8]) -> LooseCommit<'_> {
    let (header, message) = match data.find(b"\n\n") {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &data[data.len()..]),
    };
    let mut parents = Vec::new();
    let mut author = LooseSignature { name: b"", email: b"", time: None };
    let mut committed = None;
    for line in header.lines() {
        if let Some(hex) = line.strip_prefix(b"parent ") {
            parents.extend(gix::ObjectId::from_hex(hex.trim()).ok());
        } else if let Some(text) = line.strip_prefix(b"author ") {
            author = signature(text);
        } else if let Some(text) = line.strip_prefix(b"committer ") {
            committed = signature(text).time;
        }
    }
    let time = committed.or(author.time).unwrap_or(gix::date::Time { seconds: 0, offset: 0 });
    LooseCommit { parents, author, time, message }
}

/// `NAME <EMAIL> SECONDS ±HHMM`, each part read where it can be.
fn signature(text: &[u8]) -> LooseSignature<'_> {
    let words: Vec<&[u8]> = text.trim_end().rsplitn(3, |b| *b == b' ').collect();
    let time = match words.as_slice() {
        [offset, seconds, _] => time_of(seconds, offset),
        _ => None,
    };
    let person = if time.is_some() { words[2] } else { text };
    let (name, email) = match (person.find_byte(b'<'), person.rfind_byte(b'>')) {
        (Some(open), Some(close)) if open < close => (&person[..open], &person[open + 1..close]),
        (Some(open), _) => (&person[..open], &person[open + 1..]),
        _ => (person, &person[person.len()..]),
    };
    LooseSignature { name: name.trim(), email: email.trim(), time }
}

fn time_of(seconds: &[u8], offset: &[u8]) -> Option<gix::date::Time> {
    let seconds: i64 = seconds.to_str().ok()?.parse().ok()?;
    let (sign, hhmm) = match offset.first()? {
        b'+' => (1, &offset[1..]),
        b'-' => (-1, &offset[1..]),
        _ => return None,
    };
    let hhmm: i32 = hhmm.to_str().ok().filter(|s| s.len() == 4)?.parse().ok()?;
    Some(gix::date::Time { seconds, offset: sign * ((hhmm / 100) * 3600 + (hhmm % 100) * 60) })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n";
    const PARENT: &str = "parent 1111111111111111111111111111111111111111\n";

    #[test]
    fn an_author_without_an_email_is_read_as_far_as_it_goes() {
        let raw = format!(
            "{TREE}{PARENT}author Mallory m@example.org 1700000000 +0000\ncommitter M <m@example.org> 1700000100 -0130\n\nOdd author line\n\nbody\n"
        );
        let c = parse(raw.as_bytes());
        assert_eq!(c.parents, [gix::ObjectId::from_hex(b"1111111111111111111111111111111111111111").unwrap()]);
        assert_eq!((c.author.name, c.author.email), (&b"Mallory m@example.org"[..], &b""[..]));
        assert_eq!(c.author.time.map(|t| t.seconds), Some(1_700_000_000));
        assert_eq!((c.time.seconds, c.time.offset), (1_700_000_100, -5400));
        assert_eq!(c.message, b"Odd author line\n\nbody\n");
    }

    #[test]
    fn what_cannot_be_read_is_empty_not_an_error() {
        let raw = format!("{TREE}author <a@b> never\ncommitter\n\nsubject");
        let c = parse(raw.as_bytes());
        assert!(c.parents.is_empty());
        assert_eq!((c.author.name, c.author.email, c.author.time), (&b""[..], &b"a@b"[..], None));
        assert_eq!(c.time.seconds, 0, "no time anywhere");
        assert_eq!(c.message, b"subject");
        let headless = parse(b"tree x");
        assert_eq!(headless.message, b"");
    }
}
