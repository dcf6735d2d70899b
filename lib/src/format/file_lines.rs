//! The lines of the files hits come from, read for context (`-C`) or for a
//! record without text: kept as the file's text with a mark every few
//! lines, not a string per line (a 64 MiB file of short lines took 1.8 GB
//! so), and only the few files used last are kept.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

/// The most of a file read for a hit's context. An indexed file is at most
/// `max_filesize` (1 MiB unless raised); a stream may name anything, and a
/// FIFO would block and `/dev/zero` never end: those show the hit's text.
const MAX_CONTEXT_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Lines between two marks: a line is found by scanning at most this many.
const LINES_PER_MARK: usize = 64;

/// Files kept read at once, and their bytes at most (but for the last
/// read): hits of one file mostly come together, and a file asked for
/// again after others is read again.
const FILES_KEPT: usize = 16;
const BYTES_KEPT: usize = 256 * 1024 * 1024;

/// A file's text and where every `LINES_PER_MARK`th line starts; lines as
/// `str::lines` cuts them, but that a `\r` ending the text is no part of
/// its last line either (as the chunker reads lines).
pub(super) struct FileLines {
    text: String,
    marks: Vec<u32>,
    count: usize,
}

impl FileLines {
    pub(super) fn new(text: String) -> FileLines {
        let bytes = text.as_bytes();
        let (mut marks, mut count, mut at) = (vec![0u32], 0, 0);
        while at < bytes.len() {
            count += 1;
            at = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
            if count % LINES_PER_MARK == 0 {
                // At most 64 MiB is read: every offset fits.
                marks.push(at as u32);
            }
        }
        FileLines { text, marks, count }
    }

    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// The memory it holds, near enough.
    fn size(&self) -> usize {
        self.text.len() + self.marks.len() * 4
    }

    /// Line `i`, counted from 0.
    pub(super) fn get(&self, i: usize) -> Option<&str> {
        if i >= self.count {
            return None;
        }
        let bytes = self.text.as_bytes();
        let mut at = self.marks[i / LINES_PER_MARK] as usize;
        for _ in 0..i % LINES_PER_MARK {
            at += memchr::memchr(b'\n', &bytes[at..])? + 1;
        }
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let line = &self.text[at..end];
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// The files read so far in a rendering, the `FILES_KEPT` used last.
#[derive(Default)]
pub(super) struct FileCache {
    read: HashMap<String, Option<FileLines>>,
    order: VecDeque<String>,
    bytes: usize,
}

impl FileCache {
    /// The lines of the file shown as `path` (at a revision: `sha:path`),
    /// read by `read` unless kept; None when it cannot be read as text of
    /// at most 64 MiB.
    pub(super) fn get(&mut self, path: &str, read: impl FnOnce() -> Option<FileLines>) -> Option<&FileLines> {
        if self.read.contains_key(path) {
            // The least recently used goes first.
            if let Some(at) = self.order.iter().position(|p| p == path) {
                let again = self.order.remove(at).expect("a position in it");
                self.order.push_back(again);
            }
        } else {
            let lines = read();
            let size = lines.as_ref().map_or(0, FileLines::size);
            while self.order.len() == FILES_KEPT || (self.bytes + size > BYTES_KEPT && !self.order.is_empty()) {
                let Some(oldest) = self.order.pop_front() else { break };
                self.bytes -= self.read.remove(&oldest).flatten().as_ref().map_or(0, FileLines::size);
            }
            self.bytes += size;
            self.order.push_back(path.to_string());
            self.read.insert(path.to_string(), lines);
        }
        self.read.get(path).and_then(Option::as_ref)
    }
}

/// The lines of the file at `path` on disk.
pub(super) fn read_lines(path: &Path) -> Option<FileLines> {
    let bytes = crate::project::small_file::read_small(path, MAX_CONTEXT_FILE_BYTES).ok()??;
    Some(FileLines::new(crate::project::decode_text(bytes)))
}

/// The lines of root-relative `file` in commit `sha` of the repository
/// holding `root`: a hit's from a revision, whose file on disk is
/// another revision's.
pub(super) fn lines_at(root: &Path, sha: &str, file: &str) -> Option<FileLines> {
    let repo = crate::history::GitRepo::open(root).ok()?;
    let bytes = repo.file_at(sha, file, MAX_CONTEXT_FILE_BYTES).ok()??;
    Some(FileLines::new(crate::project::decode_text(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_as_str_lines_cuts_them() {
        for text in ["", "\n", "a", "a\n", "a\n\nb", "a\r\nb\r\n", "x\n".repeat(200).as_str(), "\n\n\n"] {
            let lines = FileLines::new(text.to_string());
            let expected: Vec<&str> = text.lines().collect();
            let got: Vec<&str> = (0..lines.len()).map(|i| lines.get(i).unwrap()).collect();
            assert_eq!(got, expected, "{text:?}");
            assert_eq!(lines.get(lines.len()), None);
        }
        let last = FileLines::new("a\nb\r".to_string());
        assert_eq!((last.len(), last.get(1)), (2, Some("b")));
        let numbered: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let lines = FileLines::new(numbered);
        assert_eq!(
            (lines.get(0), lines.get(63), lines.get(64), lines.get(999)),
            (Some("line 0"), Some("line 63"), Some("line 64"), Some("line 999"))
        );
    }

    #[test]
    fn only_the_last_files_read_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = FileCache::default();
        for i in 0..FILES_KEPT + 1 {
            let path = dir.path().join(format!("{i}.txt"));
            std::fs::write(&path, format!("file {i}\n")).unwrap();
            assert_eq!(
                cache.get(&format!("{i}.txt"), || read_lines(&path)).and_then(|f| f.get(0)),
                Some(format!("file {i}").as_str())
            );
        }
        assert_eq!(cache.read.len(), FILES_KEPT);
        assert!(!cache.read.contains_key("0.txt"), "the first file read went first");
        // One asked for again is kept over those asked for since.
        cache.get("1.txt", || None);
        let path = dir.path().join("new.txt");
        std::fs::write(&path, "new\n").unwrap();
        cache.get("new.txt", || read_lines(&path));
        assert!(cache.read.contains_key("1.txt") && !cache.read.contains_key("2.txt"));
        assert_eq!(cache.get("missing.txt", || None).map(FileLines::len), None);
    }
}
