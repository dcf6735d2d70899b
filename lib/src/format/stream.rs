//! vg-format's rendering of a stream while it is read: in the modes that
//! show a hit alone, its lines leave before the producer ends, so that
//! `endless | vg-format | head -1` ends.

use std::io::{self, Write};

use super::{render, render_answer, render_commits, FormatOptions, HitByHit};
use crate::records::{Record, SearchStream};

/// Takes a stream's records as they are read and renders each hit at once
/// where the mode allows; the rest (headings, counts, commits, an answer)
/// at the end.
pub struct StreamRenderer<'o> {
    opts: &'o FormatOptions,
    read: SearchStream,
    each: Option<HitByHit>,
}

impl<'o> StreamRenderer<'o> {
    pub fn new(opts: &'o FormatOptions) -> StreamRenderer<'o> {
        let each = opts.mode.shows_each_hit_as_read().then(HitByHit::default);
        StreamRenderer { opts, read: SearchStream::default(), each }
    }

    /// Render `record` now if the mode shows it alone, and keep what the
    /// end of the stream needs of it.
    pub fn take(&mut self, out: &mut dyn Write, record: Record) -> io::Result<()> {
        if let (Some(each), Record::Hit(hit)) = (&mut self.each, &record) {
            each.write(out, hit, self.opts)?;
        }
        self.read.keep(record);
        Ok(())
    }

    /// Render what waited for the end of the stream; the stream as read
    /// (for the exit code and the advice a judgement gives).
    pub fn finish(self, out: &mut dyn Write) -> io::Result<SearchStream> {
        if self.each.is_none() {
            render(out, &self.read.hits, self.opts)?;
        }
        render_commits(out, &self.read.commits, self.opts)?;
        if let Some(answer) = &self.read.answer {
            render_answer(out, answer, &self.read.hits, self.opts)?;
        }
        Ok(self.read)
    }
}
