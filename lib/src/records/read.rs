//! Reading records back: a line checked and typed, a search's stream of
//! hits, each line bounded.

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{
    AnswerRecord, CatalogRecord, CommitRecord, FileRecord, HitRecord, JudgementRecord, ListeningRecord, RootRecord,
    SkipRecord, StatsRecord, SummaryRecord, VerifyRecord, CONTRACT_VERSION,
};
use crate::project::shown::{clipped, words_clipped};
use crate::project::{is_below_root, MAX_TOP_K};

/// Why a line of input is not a usable record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("line {line}: not a JSON object: {cause}")]
    NotJson { line: usize, cause: String },
    /// JSON still, but past what the parser reads (serde's 128 levels).
    #[error("line {line}: the record is nested deeper than the 128 levels a reader takes")]
    TooDeep { line: usize },
    #[error("line {line}: not a hit record: {cause}")]
    BadHit { line: usize, cause: String },
    #[error("line {line}: not a commit record: {cause}")]
    BadCommit { line: usize, cause: String },
    #[error("line {line}: record version {found} is newer than this tool understands ({CONTRACT_VERSION})")]
    TooNew { line: usize, found: u64 },
    /// As `TooNew`, for a version past what a u64 holds.
    #[error("line {line}: record version {found} is newer than this tool understands ({CONTRACT_VERSION})")]
    TooNewToRead { line: usize, found: String },
    #[error("line {line}: its version is {found}, not a whole number of 0 or more (v)")]
    BadVersion { line: usize, found: String },
    #[error("line {line}: its type is {found}, not a string naming a record")]
    BadType { line: usize, found: String },
    /// vg-serve's error body (`{"error": {"status": N, "message": …}}`),
    /// piped on as `curl -s … | vg-format` does.
    #[error("line {line}: an error from the server, not a record: {status} {message}")]
    ServerError { line: usize, status: String, message: String },
}

/// Every record of the contract, tagged by its `type`: what a reader gets
/// from a line, read once and dispatched. Each record type also names
/// itself when written (`#[serde(tag = "type", rename = …)]` on its struct),
/// so a record is written the same whether or not it is wrapped here.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Hit(HitRecord),
    Commit(CommitRecord),
    Root(RootRecord),
    Catalog(CatalogRecord),
    File(FileRecord),
    Skip(SkipRecord),
    Summary(SummaryRecord),
    Stats(StatsRecord),
    Verify(VerifyRecord),
    Listening(ListeningRecord),
    Judgement(JudgementRecord),
    Answer(AnswerRecord),
    /// A type this version does not know (a newer tool's), or a record no
    /// reader acts on that it could not read: passed on, never acted on.
    #[serde(other)]
    Other,
}

impl Record {
    /// One line of a stream: None for a blank line. The line is parsed
    /// once; its `type` (`hit` when absent, as in the first streams)
    /// chooses the record. A line that is not a JSON object, or a record
    /// newer than this tool, is an error naming its line, and so is a hit
    /// or a commit that is not one (readers act on them). A judgement or
    /// answer a reader cannot use is advice, never worth failing a pipeline
    /// for: it is `Other`, as is a record of another type.
    pub fn parse(text: &str, line: usize) -> Result<Option<Record>, RecordError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        // serde's words quote what the line holds (a string where a
        // number goes, whole): a cause is bounded, as every value shown is.
        let cause = |e: serde_json::Error| words_clipped(&e.to_string(), 200, 400);
        let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| match e.to_string() {
            deep if deep.starts_with("recursion limit exceeded") => RecordError::TooDeep { line },
            _ => RecordError::NotJson { line, cause: cause(e) },
        })?;
        let object =
            value.as_object_mut().ok_or_else(|| RecordError::NotJson { line, cause: "expected an object".into() })?;
        if let Some(v) = object.get("v") {
            match v.as_u64() {
                Some(found) if found > u64::from(CONTRACT_VERSION) => return Err(RecordError::TooNew { line, found }),
                Some(_) => {}
                // Past u64 (`99999999999999999999`): a version, and newer, not "no whole number".
                None if v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0 && f >= u64::MAX as f64) => {
                    return Err(RecordError::TooNewToRead { line, found: short_json(v) })
                }
                // `2.0` or `"2"` is no version this tool can compare: read on, it could be misread.
                None => return Err(RecordError::BadVersion { line, found: short_json(v) }),
            }
        }
        // The server's error body is `{"error": {...}}`: a hand-made hit
        // with an `error` field of its own (a linter's message) is a hit
        // (audit 277: refused as the server's error).
        let server =
            |e: &&serde_json::Value| e.is_object() && !object.contains_key("type") && !object.contains_key("file");
        if let Some(error) = object.get("error").filter(server) {
            return Err(server_error(error, line));
        }
        let kind = match object.get("type") {
            None => {
                // The first hit streams named no type: a record without one is a hit.
                object.insert("type".into(), "hit".into());
                "hit".to_string()
            }
            Some(serde_json::Value::String(kind)) => kind.clone(),
            Some(other) => return Err(RecordError::BadType { line, found: short_json(other) }),
        };
        match (Record::deserialize(value), kind.as_str()) {
            (Ok(Record::Hit(hit)), _) => check_hit(hit, line).map(|h| Some(Record::Hit(h))),
            (Ok(Record::Commit(commit)), _) => check_commit(commit, line).map(|c| Some(Record::Commit(c))),
            (Ok(record), _) => Ok(Some(record)),
            (Err(e), "hit") => Err(RecordError::BadHit { line, cause: cause(e) }),
            (Err(e), "commit") => Err(RecordError::BadCommit { line, cause: cause(e) }),
            (Err(_), _) => Ok(Some(Record::Other)),
        }
    }
}

/// A hit whose lines are a 1-based range, whose root (if any) is absolute
/// and whose file names one below it, or the error saying what it is not:
/// a reader joins the root and the file to read the file, and a relative
/// root would be read from wherever the reader runs, a file outside the
/// root from anywhere. Without a root the file is the current directory's
/// to name, as a path on a command line is.
fn check_hit(hit: HitRecord, line: usize) -> Result<HitRecord, RecordError> {
    let cause = if hit.start_line == 0 || hit.end_line < hit.start_line {
        format!("line range {}-{} is not a 1-based range", hit.start_line, hit.end_line)
    } else if let Some(root) = hit.root.as_deref().filter(|r| !Path::new(r).is_absolute()) {
        format!("root {:?} is not an absolute path", clipped(root, 80))
    } else if hit.file.is_empty() {
        "file is empty".to_string()
    } else if let Some(rev) = hit.rev.as_deref().filter(|r| !crate::store::is_commit_id(r)) {
        // Shown in a heading as it is: only a commit id passes for one.
        format!("rev {:?} is not a commit id (lowercase hex)", clipped(rev, 80))
    } else if hit.file.contains('\0') {
        // No path holds one, with a root or without; `--files -0` would cut the name at it.
        format!("file {:?} holds a NUL, which no path does", clipped(&hit.file, 80))
    } else if hit.root.is_some() && !is_below_root(&hit.file) {
        format!("file {:?} is not a path below root", clipped(&hit.file, 80))
    } else {
        return Ok(hit);
    };
    Err(RecordError::BadHit { line, cause })
}

/// The real path of `file` under `root`, when it exists and its links,
/// followed, still lead below the root; else None, so that nothing is read.
/// The walk never follows a link, so only a hand-made record names a file
/// through one (`etc-link/passwd`), and what it leads to is not the
/// project's to show.
pub fn file_below(root: &Path, file: &str) -> Option<PathBuf> {
    let real = root.join(file).canonicalize().ok()?;
    real.starts_with(root.canonicalize().ok()?).then_some(real)
}

/// A commit whose root is absolute and whose paths (touched, and of the
/// lines that matched) are below it, or the error saying which is not: the
/// same rule as a hit's file, for the same readers.
fn check_commit(commit: CommitRecord, line: usize) -> Result<CommitRecord, RecordError> {
    let line_paths = commit.lines.iter().filter_map(|l| l.path.as_deref());
    let cause = if !Path::new(&commit.root).is_absolute() {
        format!("root {:?} is not an absolute path", clipped(&commit.root, 80))
    } else if !crate::store::is_commit_id(&commit.sha) {
        format!("sha {:?} is not a commit id (lowercase hex)", clipped(&commit.sha, 80))
    } else if let Some(path) = commit.paths.iter().map(String::as_str).chain(line_paths).find(|p| !is_below_root(p)) {
        format!("path {:?} is not a path below root", clipped(path, 80))
    } else {
        return Ok(commit);
    };
    Err(RecordError::BadCommit { line, cause })
}

/// An error body of vg-serve's read as a record (audit 254: "not a hit
/// record: missing field `file`" hid the server's 400 or 429): its status
/// and message, quoted as JSON, so that what a server sent is never obeyed.
fn server_error(error: &serde_json::Value, line: usize) -> RecordError {
    let status = error.get("status").map_or_else(|| "(no status)".to_string(), short_json);
    let message = error.get("message").map_or_else(|| short_json(error), |m| clipped(&m.to_string(), 300));
    RecordError::ServerError { line, status, message }
}

/// A JSON value as an error line shows it.
fn short_json(value: &serde_json::Value) -> String {
    clipped(&value.to_string(), 80)
}

/// A search stream as read: its records, and its lines to copy on.
#[derive(Clone, Debug, Default)]
pub struct SearchStream {
    /// Every line that is not blank, as read (`read_search_stream_with_lines` only).
    pub lines: Vec<String>,
    pub hits: Vec<HitRecord>,
    /// Commits (vg-log), in the order read.
    pub commits: Vec<CommitRecord>,
    /// The last judgement and answer read, if any.
    pub judgement: Option<JudgementRecord>,
    pub answer: Option<AnswerRecord>,
}

/// Why a search stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("cannot read standard input")]
    Read(#[from] io::Error),
    #[error("line {0}: not valid UTF-8")]
    NotUtf8(usize),
    #[error("line {0}: longer than {MAX_LINE_BYTES} bytes; no record is")]
    TooLong(usize),
    #[error("line {0}: more than {MAX_STREAM_RECORDS} records; no search gives as many (-k is at most {MAX_TOP_K})")]
    TooMany(usize),
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// The most records `read_search_stream_with_lines` takes: a search's
/// most hits (`MAX_TOP_K`, and as many commits under `--log`) and the
/// records around them, with room to spare.
pub const MAX_STREAM_RECORDS: usize = 2 * MAX_TOP_K + 64;

/// Read a search stream (`vg-query`'s output, on standard input) to its
/// end, keeping every line that is not blank as it came, less a `\r` that
/// ended it (`lines`), for a reader that passes the stream on (vg-answer),
/// whose records end with `\n` alone as every record does; a line that is not a
/// record is an error naming it. A reader that acts as it reads takes
/// [`StreamRecords`].
///
/// A stream longer than any search gives (`MAX_STREAM_RECORDS`) is an
/// error at the record past it: read whole, an endless one (`yes RECORD |
/// vg-answer`) grew without bound and never ended.
pub fn read_search_stream_with_lines(input: impl io::BufRead) -> Result<SearchStream, StreamError> {
    let mut stream = SearchStream::default();
    for read in StreamRecords::new(input) {
        let (record, text) = read?;
        if stream.lines.len() == MAX_STREAM_RECORDS {
            return Err(StreamError::TooMany(MAX_STREAM_RECORDS + 1));
        }
        stream.lines.push(match text.strip_suffix('\r') {
            Some(line) => line.to_string(),
            None => text,
        });
        stream.keep(record);
    }
    Ok(stream)
}

impl SearchStream {
    /// Keep what a reader acts on of `record`; other records are dropped.
    pub fn keep(&mut self, record: Record) {
        match record {
            Record::Hit(hit) => self.hits.push(hit),
            Record::Judgement(j) => self.judgement = Some(j),
            Record::Answer(a) => self.answer = Some(a),
            Record::Commit(c) => self.commits.push(c),
            _ => {}
        }
    }
}

/// A search stream's records one at a time, each with its line as read,
/// blank lines passed over: for a reader that acts before the stream ends
/// (vg-format in a pipe). The first error ends it.
pub struct StreamRecords<R> {
    input: R,
    line: usize,
    failed: bool,
}

impl<R: io::BufRead> StreamRecords<R> {
    pub fn new(input: R) -> StreamRecords<R> {
        StreamRecords { input, line: 0, failed: false }
    }

    fn read_next(&mut self) -> Result<Option<(Record, String)>, StreamError> {
        loop {
            self.line += 1;
            let Some(line) = bounded_line(&mut self.input).map_err(|e| e.at(self.line))? else { return Ok(None) };
            let mut text = String::from_utf8(line).map_err(|_| StreamError::NotUtf8(self.line))?;
            // A stream saved by an editor on Windows may begin with a byte
            // order mark: JSON's RFC lets a reader pass over it, as jq does.
            if self.line == 1 && text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            if let Some(record) = Record::parse(&text, self.line)? {
                return Ok(Some((record, text)));
            }
        }
    }
}

impl<R: io::BufRead> Iterator for StreamRecords<R> {
    type Item = Result<(Record, String), StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let read = self.read_next();
        self.failed = read.is_err();
        read.transpose()
    }
}

/// The longest line a stream may hold: far above any record the tools
/// write (a hit carries one chunk), far below what would exhaust memory
/// (`vg-format < /dev/zero` is one endless line).
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a line could not be read: the input failed, or the line has no end
/// within `MAX_LINE_BYTES`.
enum LineError {
    Read(io::Error),
    TooLong,
}

impl LineError {
    fn at(self, line: usize) -> StreamError {
        match self {
            LineError::Read(e) => StreamError::Read(e),
            LineError::TooLong => StreamError::TooLong(line),
        }
    }
}

/// The next line of `input` without its newline, None at the end, read no
/// further than `MAX_LINE_BYTES`.
fn bounded_line(input: &mut impl io::BufRead) -> Result<Option<Vec<u8>>, LineError> {
    let mut line = Vec::new();
    let read = io::BufRead::read_until(&mut io::Read::take(&mut *input, MAX_LINE_BYTES + 1), b'\n', &mut line)
        .map_err(LineError::Read)?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() as u64 > MAX_LINE_BYTES {
        return Err(LineError::TooLong);
    }
    Ok(Some(line))
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;
    use crate::index::{FileOutcome, IndexSummary};
    use crate::project::catalog::Catalog;
    use crate::project::ProjectRoot;
    use crate::records::{escape_what_terminals_obey, write_record};
    use crate::store::IndexStats;

    #[test]
    fn lines_passed_on_end_as_records_do_whatever_ended_them() {
        let input =
            "{\"file\":\"a\",\"start_line\":1,\"end_line\":1}\r\n\r\n{\"file\":\"b\",\"start_line\":2,\"end_line\":2}";
        let stream = read_search_stream_with_lines(input.as_bytes()).unwrap();
        assert_eq!(
            stream.lines,
            [r#"{"file":"a","start_line":1,"end_line":1}"#, r#"{"file":"b","start_line":2,"end_line":2}"#]
        );
        assert_eq!(stream.hits.len(), 2);
    }

    #[test]
    fn a_record_nested_past_what_the_parser_reads_is_said_so() {
        let deep = format!("{{\"type\":\"summary\",\"v\":1,\"x\":{}{}}}", "[".repeat(200), "]".repeat(200));
        let e = Record::parse(&deep, 3).unwrap_err().to_string();
        assert_eq!(e, "line 3: the record is nested deeper than the 128 levels a reader takes");
    }

    #[test]
    fn a_stream_is_read_record_by_record_blank_lines_passed_and_stops_at_its_first_error() {
        let input = "{\"type\":\"other\",\"v\":1}\n\n{\"file\":\"a\",\"start_line\":1,\"end_line\":1}\nnot json\n{}\n";
        let mut records = StreamRecords::new(input.as_bytes());
        assert!(matches!(records.next(), Some(Ok((Record::Other, _)))));
        assert!(matches!(records.next(), Some(Ok((Record::Hit(_), ref text))) if text.starts_with("{\"file\"")));
        let e = records.next().unwrap().unwrap_err().to_string();
        assert!(e.starts_with("line 4: not a JSON object"), "{e}");
        assert!(records.next().is_none(), "nothing is read past an error");
        let kept = read_search_stream_with_lines(&input.as_bytes()[..input.find("not").unwrap()]).unwrap();
        assert_eq!((kept.hits.len(), kept.lines.len()), (1, 2));
    }

    /// `yes RECORD | vg-answer` read for ever, its memory growing; a stream
    /// longer than any search gives is an error where it passes the most.
    #[test]
    fn a_stream_longer_than_any_search_gives_is_refused_as_it_passes_the_most() {
        let hit = "{\"file\":\"a\",\"start_line\":1,\"end_line\":1,\"text\":\"x\"}\n";
        let most = read_search_stream_with_lines(hit.repeat(MAX_STREAM_RECORDS).as_bytes()).unwrap();
        assert_eq!(most.hits.len(), MAX_STREAM_RECORDS);
        let e = read_search_stream_with_lines(hit.repeat(MAX_STREAM_RECORDS + 5).as_bytes()).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("line {}: more than {MAX_STREAM_RECORDS} records", MAX_STREAM_RECORDS + 1)),
            "{e}"
        );
    }

    #[test]
    fn what_a_terminal_would_obey_is_written_escaped_as_the_same_value() {
        // A C1 CSI clears the screen on terminals that take 8-bit controls; a
        // right-to-left override shows code in another order than it runs.
        let text = "ok = 1 \u{9b}2J // \u{202e}} ;lla_kcehc \u{7f} é \u{2014} \u{1b}";
        let hit = HitRecord {
            text: text.into(),
            ..serde_json::from_str(r#"{"file":"a","start_line":1,"end_line":1}"#).unwrap()
        };
        let mut out = Vec::new();
        write_record(&mut out, &hit).unwrap();
        let line = String::from_utf8(out).unwrap();
        for escaped in ["\\u009b2J", "\\u202e}", "\\u007f", "\\u001b", "é \u{2014}"] {
            assert!(line.contains(escaped), "{escaped}: {line}");
        }
        assert!(!line.chars().any(|c| c == '\u{9b}' || c == '\u{202e}' || c == '\u{7f}'), "{line}");
        assert_eq!(parse_hit_line(line.trim_end(), 1).unwrap().unwrap().text, text, "the same value");
        // A line read (vg-answer passes them on) may hold whitespace between its tokens.
        let read = "{\"file\":\t\"a\u{85}\",\r\"start_line\":1,\"end_line\":1}".to_string();
        let passed = escape_what_terminals_obey(read);
        assert_eq!(passed, "{\"file\":\t\"a\\u0085\",\r\"start_line\":1,\"end_line\":1}");
        assert_eq!(parse_hit_line(&passed, 1).unwrap().unwrap().file, "a\u{85}");
    }

    /// The hit a line is, if it is one.
    fn parse_hit_line(text: &str, line: usize) -> Result<Option<HitRecord>, RecordError> {
        Ok(match Record::parse(text, line)? {
            Some(Record::Hit(hit)) => Some(hit),
            _ => None,
        })
    }

    #[test]
    fn each_record_is_written_with_the_type_it_is_read_as() {
        use crate::project::RootMarker;
        let root = ProjectRoot { path: "/r".into(), marker: RootMarker::Git, shared: None };
        let stats = IndexStats::default();
        fn line<T: Serialize>(record: &T) -> Record {
            let mut buf = Vec::new();
            write_record(&mut buf, record).unwrap();
            Record::parse(std::str::from_utf8(&buf).unwrap().trim_end(), 1).unwrap().unwrap()
        }
        assert!(matches!(line(&RootRecord::new(&root)), Record::Root(_)));
        let catalog = Catalog { name: "team".into(), dir: "/c/team".into(), projects: Vec::new() };
        assert!(matches!(line(&CatalogRecord::new(&catalog, true)), Record::Catalog(c) if c.default));
        assert!(matches!(line(&FileRecord::new("a.rs", FileOutcome::Indexed, 2)), Record::File(_)));
        assert!(matches!(line(&SummaryRecord::new(&root, &IndexSummary::default())), Record::Summary(_)));
        assert!(matches!(line(&StatsRecord::new(&root, &stats, None)), Record::Stats(_)));
        assert!(matches!(line(&VerifyRecord::new(&root, &stats, Vec::new(), true)), Record::Verify(_)));
        assert!(matches!(line(&ListeningRecord::new(&root, "http://127.0.0.1:1")), Record::Listening(_)));
        // An unknown type is passed on; so is a record no reader acts on that it cannot read.
        assert!(matches!(Record::parse(r#"{"type":"progress","v":1}"#, 1).unwrap(), Some(Record::Other)));
        assert!(matches!(Record::parse(r#"{"type":"judgement","v":1}"#, 1).unwrap(), Some(Record::Other)));
        let e = Record::parse(r#"{"type":"commit","v":1}"#, 4).unwrap_err().to_string();
        assert!(e.starts_with("line 4: not a commit record"), "{e}");
    }

    #[test]
    fn a_file_whose_links_lead_out_of_its_root_is_not_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "x").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("src")).unwrap();
        std::fs::write(root.path().join("src/a.rs"), "y").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::os::unix::fs::symlink("a.rs", root.path().join("src/inner")).unwrap();
        assert_eq!(file_below(root.path(), "out/secret"), None);
        assert_eq!(file_below(root.path(), "src/missing.rs"), None);
        let real = root.path().canonicalize().unwrap().join("src/a.rs");
        assert_eq!(file_below(root.path(), "src/a.rs").as_deref(), Some(real.as_path()));
        // A link that stays inside the root is followed.
        assert_eq!(file_below(root.path(), "src/inner").as_deref(), Some(real.as_path()));
    }

    #[test]
    fn minimal_hits_are_accepted_and_unknown_fields_ignored() {
        let h = parse_hit_line(r#"{"file":"a.rs","start_line":3,"end_line":4,"future":[1]}"#, 1).unwrap().unwrap();
        assert_eq!((h.file.as_str(), h.start_line, h.end_line, h.v), ("a.rs", 3, 4, 1));
        // Optional fields written null are left out, `text` and `concepts` too.
        let line = r#"{"file":"a.rs","start_line":3,"end_line":4,"score":null,"text":null,"concepts":null,"rev":null}"#;
        let h = parse_hit_line(line, 1).unwrap().unwrap();
        assert_eq!((h.score, h.text.as_str(), h.concepts.len(), h.rev), (0.0, "", 0, None));
    }

    #[test]
    fn other_record_types_and_blank_lines_are_skipped() {
        assert!(parse_hit_line(r#"{"type":"summary","files":3}"#, 1).unwrap().is_none());
        assert!(parse_hit_line("   ", 1).unwrap().is_none());
    }

    #[test]
    fn a_servers_error_body_is_said_as_the_servers_error() {
        let body = r#"{"error":{"message":"the query parameter q is missing or empty","status":400}}"#;
        let e = parse_hit_line(body, 1).unwrap_err().to_string();
        assert_eq!(
            e,
            r#"line 1: an error from the server, not a record: 400 "the query parameter q is missing or empty""#
        );
        // What a hostile server sends is quoted, never obeyed on a terminal.
        let e = parse_hit_line(r#"{"error":{"message":"\u001b]0;x\u0007"}}"#, 2).unwrap_err().to_string();
        assert_eq!(e, r#"line 2: an error from the server, not a record: (no status) "\u001b]0;x\u0007""#);
        // A hit may carry a field of that name, added by a later version.
        let hit = r#"{"type":"hit","file":"a.rs","start_line":1,"end_line":2,"error":{"message":"x"}}"#;
        assert!(parse_hit_line(hit, 3).unwrap().is_some());
        // So may a hand-made one, which names no type (audit 277: a
        // linter's `error` message was read as the server's).
        for error in [r#""unused variable""#, "null", "false", r#"{"message":"x"}"#] {
            let hit = format!(r#"{{"file":"a.rs","start_line":1,"end_line":1,"error":{error}}}"#);
            assert!(parse_hit_line(&hit, 4).unwrap().is_some(), "{hit}");
        }
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let e = parse_hit_line("{not json", 7).unwrap_err().to_string();
        assert!(e.starts_with("line 7:"), "{e}");
        let e = parse_hit_line(r#"{"file":"a","start_line":"x","end_line":1}"#, 2).unwrap_err().to_string();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = parse_hit_line(r#"{"file":"a","start_line":5,"end_line":1}"#, 3).unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = parse_hit_line(r#"{"file":"a","start_line":1,"end_line":1,"root":"rel/dir"}"#, 5).unwrap_err();
        assert_eq!(e.to_string(), r#"line 5: not a hit record: root "rel/dir" is not an absolute path"#);
        for (file, says) in [
            ("", "file is empty"),
            ("/etc/passwd", r#"file "/etc/passwd" is not a path below root"#),
            ("src/../../etc/hostname", r#"file "src/../../etc/hostname" is not a path below root"#),
            (".", r#"file "." is not a path below root"#),
            ("./.", r#"file "./." is not a path below root"#),
            ("src\0/etc/passwd", r#"file "src\0/etc/passwd" holds a NUL, which no path does"#),
        ] {
            let hit = serde_json::json!({"root": "/p", "file": file, "start_line": 1, "end_line": 1}).to_string();
            let e = parse_hit_line(&hit, 9).unwrap_err();
            assert_eq!(e.to_string(), format!("line 9: not a hit record: {says}"));
        }
        let hit = serde_json::json!({"root": "/p", "file": "./src/a.rs", "start_line": 1, "end_line": 1});
        assert!(parse_hit_line(&hit.to_string(), 1).unwrap().is_some());
        // Without a root a path is the current directory's, as on a command line.
        for file in ["/tmp/a.rs", "../b.rs", "./src/c.rs"] {
            let hit = serde_json::json!({"file": file, "start_line": 1, "end_line": 1}).to_string();
            assert!(parse_hit_line(&hit, 1).unwrap().is_some(), "{file}");
        }
        let hit =
            serde_json::json!({"file": "a", "start_line": 1, "end_line": 1, "rev": "\u{1b}]2;t\u{7}"}).to_string();
        let e = parse_hit_line(&hit, 3).unwrap_err().to_string();
        assert!(e.contains("rev ") && e.contains("is not a commit id"), "{e}");
        let hit = serde_json::json!({"file": "a\0b", "start_line": 1, "end_line": 1}).to_string();
        let e = parse_hit_line(&hit, 2).unwrap_err().to_string();
        assert!(e.contains("holds a NUL"), "without a root too: {e}");
        let e = Record::parse(r#"{"type":5,"file":"a","start_line":1,"end_line":1}"#, 6).unwrap_err();
        assert_eq!(e.to_string(), "line 6: its type is 5, not a string naming a record");
        let sample = include_str!("../../../spec/samples/commits.ndjson").lines().next().unwrap();
        let mut commit: serde_json::Value = serde_json::from_str(sample).unwrap();
        assert!(matches!(Record::parse(sample, 8), Ok(Some(Record::Commit(_)))));
        commit["root"] = "p".into();
        let e = Record::parse(&commit.to_string(), 8).unwrap_err().to_string();
        assert!(e.starts_with("line 8: not a commit record: root \"p\""), "{e}");
        commit["root"] = "/p".into();
        commit["paths"] = serde_json::json!(["src/a.rs", "../../etc/passwd"]);
        let e = Record::parse(&commit.to_string(), 8).unwrap_err().to_string();
        assert_eq!(e, r#"line 8: not a commit record: path "../../etc/passwd" is not a path below root"#);
        commit["paths"] = serde_json::json!(["src/a.rs"]);
        commit["lines"] = serde_json::json!([{"kind": "added", "path": "/etc/shadow", "line": 1, "text": "x"}]);
        let e = Record::parse(&commit.to_string(), 8).unwrap_err().to_string();
        assert!(e.contains(r#"path "/etc/shadow" is not a path below root"#), "{e}");
        commit["lines"] = serde_json::json!([]);
        // A sha is printed as it is: only a commit id passes for one.
        for sha in ["\u{1b}]2;title\u{7}", "CC29D138AF8F5CD5BC24D3E20D3D14A09D0AD028", "cc29d138", ""] {
            commit["sha"] = sha.into();
            let e = Record::parse(&commit.to_string(), 9).unwrap_err().to_string();
            assert!(e.starts_with("line 9: not a commit record: sha ") && e.contains("not a commit id"), "{e}");
        }
        commit["sha"] = "ab".repeat(32).into();
        assert!(matches!(Record::parse(&commit.to_string(), 9), Ok(Some(Record::Commit(_)))), "a SHA-256 id");
        // A version past u64 is newer, not "no whole number".
        let e = Record::parse(r#"{"type":"hit","v":99999999999999999999}"#, 4).unwrap_err().to_string();
        assert_eq!(e, format!("line 4: record version 1e+20 is newer than this tool understands ({CONTRACT_VERSION})"));
        // A version that is not a whole number is refused before the type is looked at.
        for v in ["2.0", "\"2\"", "-1"] {
            let e = Record::parse(&format!(r#"{{"type":"judgement","v":{v}}}"#), 3).unwrap_err().to_string();
            assert_eq!(e, format!("line 3: its version is {v}, not a whole number of 0 or more (v)"));
        }
        let e = parse_hit_line(r#"[1,2]"#, 4).unwrap_err().to_string();
        assert!(e.contains("line 4"), "{e}");
        let e = parse_hit_line(r#"{"v":9,"file":"a","start_line":1,"end_line":1}"#, 5).unwrap_err().to_string();
        assert!(e.contains("newer"), "{e}");
    }

    #[test]
    fn a_hits_fields_are_written_in_the_order_ndjson_md_lists_them() {
        let spec = include_str!("../../../spec/ndjson.md");
        let table = spec.split("\n### `hit`").nth(1).and_then(|s| s.split("\n### ").next()).unwrap();
        let order: Vec<&str> =
            table.lines().filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(name, _)| name)).collect();
        assert!(order.len() > 10 && order[0] == "type", "{order:?}");
        let h = HitRecord {
            v: 1,
            root: Some("/r".into()),
            file: "a.rs".into(),
            start_line: 1,
            end_line: 2,
            score: 0.5,
            relevance: Some(0.8),
            fit: Some(0.6),
            text: "x".into(),
            query: Some("q".into()),
            concepts: vec!["c".into()],
            rev: Some("278a66376cddaf8ec87070020ca35e9e809d95c0".into()),
            reasoning: Some("why".into()),
            project: Some("p".into()),
            best_start_line: Some(1),
            best_end_line: Some(2),
        };
        let line = serde_json::to_string(&h).unwrap();
        let at = |name: &str| line.find(&format!("\"{name}\":")).unwrap_or_else(|| panic!("{name} in {line}"));
        let written: Vec<usize> = order.iter().map(|name| at(name)).collect();
        assert!(written.windows(2).all(|w| w[0] < w[1]), "{order:?} in {line}");
    }

    #[test]
    fn hits_round_trip() {
        let h = HitRecord {
            v: 1,
            root: Some("/r".into()),
            file: "a.rs".into(),
            start_line: 1,
            end_line: 2,
            score: 0.5,
            relevance: Some(0.8125),
            fit: Some(0.6712),
            text: "x\ny".into(),
            query: Some("q".into()),
            concepts: Vec::new(),
            rev: None,
            reasoning: Some("1st by words of 3".into()),
            project: None,
            best_start_line: Some(2),
            best_end_line: Some(2),
        };
        let mut buf = Vec::new();
        write_record(&mut buf, &h).unwrap();
        let line = String::from_utf8(buf).unwrap();
        assert_eq!(parse_hit_line(line.trim_end(), 1).unwrap().unwrap(), h);
        // A stream from before `relevance` was added is ordered by `score`.
        let old = parse_hit_line(r#"{"file":"a","start_line":1,"end_line":1,"score":0.4}"#, 1).unwrap().unwrap();
        assert_eq!((old.relevance, old.order(), old.shown()), (None, 0.4, 0.4));
        assert_eq!((h.order(), h.shown()), (0.8125, 0.6712));
        // One from before `fit` was added shows what it is ordered by.
        assert_eq!(HitRecord { fit: None, ..h }.shown(), 0.8125);
    }

    mod fuzz {
        //! Property tests for the NDJSON reader: any line is a hit, ignored,
        //! or an error naming its line number; written hits read back equal.
        use super::super::*;
        use super::parse_hit_line;
        use crate::records::{round4, write_record};
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_line_is_read_or_refused_with_its_number(line in "\\PC{0,300}", n in 1usize..100_000) {
                if let Err(e) = parse_hit_line(&line, n) {
                    prop_assert!(e.to_string().contains(&format!("line {n}")), "{e}");
                }
            }

            #[test]
            fn json_objects_with_odd_fields_never_panic(fields in proptest::collection::vec(("[a-z_]{1,12}", prop_oneof![
                Just(serde_json::Value::Null),
                any::<i64>().prop_map(serde_json::Value::from),
                any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)),
                "\\PC{0,20}".prop_map(serde_json::Value::from),
            ]), 0..8)) {
                let object: serde_json::Map<String, serde_json::Value> = fields.into_iter().collect();
                let _ = parse_hit_line(&serde_json::Value::Object(object).to_string(), 1);
            }

            #[test]
            fn written_hits_read_back_equal(file in "[a-z][a-z/]{0,29}", start in 1usize..10_000, len in 0usize..100, text in "\\PC{0,200}", score in -1.0f64..1.0) {
                // Scores are written rounded, as HitRecord::new rounds them.
                let hit = HitRecord { v: 1, root: Some("/r".into()), file, start_line: start, end_line: start + len, score: round4(score), relevance: Some(round4(score + 0.5)), fit: Some(round4(score * 0.9)), text, query: Some("q".into()), concepts: Vec::new(), rev: None, reasoning: None, project: None, best_start_line: Some(start), best_end_line: Some(start + len / 2) };
                let mut line = Vec::new();
                write_record(&mut line, &hit).unwrap();
                let back = parse_hit_line(std::str::from_utf8(&line).unwrap().trim_end(), 1).unwrap().unwrap();
                prop_assert_eq!(back, hit);
            }
        }
    }
}
