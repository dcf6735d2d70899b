//! vg-format's rendering of a stream while it is read: in the modes that
//! show a hit alone, its lines leave before the producer ends, what was
//! rendered is written out before more input is waited for, and a reader
//! gone ends the reading, so that `endless | vg-format | head -1` ends.

use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};

use super::counts::Counts;
use super::{render, render_answer, render_commits, FormatOptions, HitByHit, OutputMode};
use crate::records::{HitRecord, Record, SearchStream, StreamRecords, MAX_STREAM_RECORDS};

/// How many records are read between two looks at whether the reader of
/// the output has gone: a stream of hits already shown writes nothing
/// that would tell it.
const RECORDS_PER_LOOK: usize = 64;

/// How much input is read at a time. Each read first writes out what was
/// rendered (a syscall or two): with 8 KiB reads a flat rendering of a
/// 93 MB stream took 11% longer than before it streamed, with 64 KiB ones
/// 5% (what is left is parsing and rendering in turn).
const INPUT_BUFFER_BYTES: usize = 64 * 1024;

/// Render the search stream read from `input` to `out` as it comes, in
/// `opts.mode`; the stream as read. `reader_gone` says whether the
/// output's reader has left (`| head -1`): the rendering then ends as a
/// write to a closed pipe does, with a broken pipe.
pub fn render_stream(
    input: impl Read,
    out: impl Write,
    opts: &FormatOptions,
    reader_gone: &dyn Fn() -> bool,
) -> anyhow::Result<SearchStream> {
    let out = RefCell::new(io::BufWriter::new(out));
    let flush_failed = Cell::new(None);
    // Read in large pieces: each read writes out what was rendered first.
    let input =
        io::BufReader::with_capacity(INPUT_BUFFER_BYTES, FlushBeforeRead { input, out: &out, failed: &flush_failed });
    let mut renderer = StreamRenderer::new(opts);
    for (n, read) in StreamRecords::new(input).enumerate() {
        let (record, _) = read.map_err(|e| flush_failed.take().map_or_else(|| anyhow::Error::new(e), Into::into))?;
        renderer.take(&mut *out.borrow_mut(), record)?;
        if n % RECORDS_PER_LOOK == RECORDS_PER_LOOK - 1 && reader_gone() {
            return Err(io::Error::from(io::ErrorKind::BrokenPipe).into());
        }
    }
    let mut out = out.into_inner();
    let stream = renderer.finish(&mut out)?;
    out.flush()?;
    Ok(stream)
}

/// Input that writes out what was rendered before it reads more, which
/// may wait: a slow producer's hits are shown as they come, while a fast
/// one's are written a buffer at a time. A failed write is kept in
/// `failed`, to be told as the output's error, not the input's.
struct FlushBeforeRead<'o, R, W: Write> {
    input: R,
    out: &'o RefCell<io::BufWriter<W>>,
    failed: &'o Cell<Option<io::Error>>,
}

impl<R: Read, W: Write> Read for FlushBeforeRead<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Err(e) = self.out.borrow_mut().flush() {
            let kind = e.kind();
            self.failed.set(Some(e));
            return Err(io::Error::new(kind, "the output failed"));
        }
        self.input.read(buf)
    }
}

/// Hits shown as read are kept only for what the stream's end asks of
/// them (that there were any, the first one's root, the places an answer
/// cites, which are among the first few it was given), and only so many:
/// memory stays flat under a producer that does not stop.
const HITS_KEPT_WHILE_SHOWN: usize = 10_000;

/// A hit already shown, as the stream's end needs it: where it is, not
/// what it says.
fn shown_already(hit: HitRecord) -> HitRecord {
    HitRecord { text: String::new(), reasoning: None, query: None, concepts: Vec::new(), ..hit }
}

/// Takes a stream's records as they are read and renders each hit at once
/// where the mode allows; the rest (headings, counts, commits, an answer)
/// at the end.
struct StreamRenderer<'o> {
    opts: &'o FormatOptions,
    read: SearchStream,
    each: Option<HitByHit>,
    /// `-c`'s counts, kept as read (`OutputMode::Count`).
    counts: Option<Counts>,
}

impl<'o> StreamRenderer<'o> {
    fn new(opts: &'o FormatOptions) -> StreamRenderer<'o> {
        let each = opts.mode.shows_each_hit_as_read().then(HitByHit::default);
        let counts = (opts.mode == OutputMode::Count).then(Counts::default);
        StreamRenderer { opts, read: SearchStream::default(), each, counts }
    }

    /// Render `record` now if the mode shows it alone, count it (`-c`), and
    /// keep what the end of the stream needs of it. Headings wait for the
    /// end: more hits than any search gives are refused there, as
    /// vg-answer refuses them, where an endless stream grew without bound.
    fn take(&mut self, out: &mut dyn Write, record: Record) -> anyhow::Result<()> {
        match (&mut self.each, &mut self.counts, record) {
            (Some(each), _, Record::Hit(hit)) => {
                each.write(out, &hit, self.opts)?;
                self.keep_shown(hit);
            }
            (_, Some(counts), Record::Hit(hit)) => {
                counts.add(&hit, &self.opts.cwd);
                self.keep_shown(hit);
            }
            (None, None, Record::Hit(_)) if self.read.hits.len() == MAX_STREAM_RECORDS => {
                anyhow::bail!(
                    "more than {MAX_STREAM_RECORDS} results to show under headings; no search gives as many \
                     (--no-heading shows each as it comes)"
                );
            }
            // Commits wait for the end in every mode (review 278: an endless
            // stream of them grew without bound).
            (_, _, Record::Commit(_)) if self.read.commits.len() == MAX_STREAM_RECORDS => {
                anyhow::bail!("more than {MAX_STREAM_RECORDS} commits; no search gives as many");
            }
            (_, _, record) => self.read.keep(record),
        }
        Ok(())
    }

    /// Keep a hit already shown or counted, as the stream's end needs it.
    fn keep_shown(&mut self, hit: HitRecord) {
        if self.read.hits.len() < HITS_KEPT_WHILE_SHOWN {
            self.read.hits.push(shown_already(hit));
        }
    }

    /// Render what waited for the end of the stream; the stream as read
    /// (for the exit code and the advice a judgement gives).
    fn finish(self, out: &mut dyn Write) -> io::Result<SearchStream> {
        match &self.counts {
            Some(counts) => counts.write(out, self.opts)?,
            None if self.each.is_none() => render(out, &self.read.hits, self.opts)?,
            None => {}
        }
        render_commits(out, &self.read.commits, self.opts)?;
        if let Some(answer) = &self.read.answer {
            render_answer(out, answer, &self.read.hits, self.opts)?;
        }
        Ok(self.read)
    }
}
