//! Cutting an outline into pieces of about `chunk_size` characters at the
//! boundaries of the largest units that fit, and emitting them as chunks
//! that fit the model's window.

use super::outline::{Outline, Role};
use super::{char_len, is_blank, Chunk};

/// A run of lines `[a, b)` (0-based) on its way to becoming a chunk.
/// `whole` when it is one or more complete units, not a piece of a split one.
#[derive(Clone, Copy, Debug)]
pub(super) struct Piece {
    pub a: usize,
    pub b: usize,
    whole: bool,
}

/// Deeper than this, a unit is cut into line windows without looking at its
/// structure: it bounds the work on pathological nesting.
const MAX_NESTING: usize = 64;

/// Cuts a file's outline into pieces of about `size` characters.
pub(super) struct Splitter<'o, 'a> {
    pub outline: &'o Outline<'a>,
    pub size: usize,
}

impl Splitter<'_, '_> {
    /// Cut `[a, b)` into pieces of at most `size` characters (twice that
    /// where a unit's opening or closing lines stay with its body), at the
    /// boundaries of the largest units that fit, packing neighbouring whole
    /// units together.
    pub(super) fn split(&self, a: usize, b: usize, nesting: usize, out: &mut Vec<Piece>) {
        let o = self.outline;
        let (a, b) = o.trim(a, b);
        if a >= b {
            return;
        }
        if o.chars(a, b) <= self.size {
            out.push(Piece { a, b, whole: true });
            return;
        }
        if nesting > MAX_NESTING {
            return self.windows(a, b, out);
        }
        let base = (a..b).filter(|&i| o.role[i] != Role::Blank).map(|i| o.depth[i]).min().unwrap_or(0);
        let starts = self.unit_starts(a, b, base);
        if starts.len() >= 2 {
            let mut pieces = Vec::new();
            for (k, &s) in starts.iter().enumerate() {
                let e = starts.get(k + 1).copied().unwrap_or(b);
                self.split(s, e, nesting + 1, &mut pieces);
            }
            return self.pack(pieces, true, out);
        }
        // One unit: a header at `base`, a deeper body, then closing lines.
        let Some(body) = (a + 1..b).find(|&i| o.role[i] != Role::Blank && o.depth[i] > base) else {
            return self.windows(a, b, out);
        };
        let body_end = (body..b).rev().find(|&i| o.role[i] != Role::Blank && o.depth[i] > base).map_or(b, |i| i + 1);
        let (mut head, mut inner, mut tail) = (Vec::new(), Vec::new(), Vec::new());
        self.split(a, body, nesting + 1, &mut head);
        self.split(body, body_end, nesting + 1, &mut inner);
        self.split(body_end, b, nesting + 1, &mut tail);
        // A lone opening line (`def f(x):`, `impl T {`) and lone closing
        // brackets are no use as chunks of their own: they stay with the
        // body, up to twice the size.
        if let ([h], Some(first)) = (head.as_slice(), inner.first_mut()) {
            if o.chars(h.a, first.b) <= 2 * self.size {
                first.a = h.a;
                head.clear();
            }
        }
        if let (Some(last), [t]) = (inner.last_mut(), tail.as_slice()) {
            if (t.a..t.b).all(|i| matches!(o.role[i], Role::Closer | Role::Blank))
                && o.chars(last.a, t.b) <= 2 * self.size
            {
                last.b = t.b;
                tail.clear();
            }
        }
        let mut pieces = head;
        pieces.extend(inner);
        pieces.extend(tail);
        for piece in &mut pieces {
            piece.whole = false;
        }
        let first_new = out.len();
        self.pack(pieces, false, out);
        for piece in &mut out[first_new..] {
            piece.whole = false;
        }
    }

    /// The first lines of the units that make up `[a, b)` at depth `base`: a
    /// line at that depth starts a unit unless it closes or continues the one
    /// above, or follows that unit's leading comments and attributes.
    fn unit_starts(&self, a: usize, b: usize, base: usize) -> Vec<usize> {
        let o = self.outline;
        // A run that starts inside a block (`if` body, then `} else {`) is
        // cut at its shallow closing lines too.
        let closers_start = o.depth[a] > base;
        let mut starts = vec![a];
        let mut prev = a;
        for i in a + 1..b {
            let role = o.role[i];
            if role == Role::Blank {
                continue;
            }
            let after_lead = o.role[prev] == Role::Lead && o.depth[prev] == base && prev + 1 == i;
            let starts_here = match role {
                Role::Start | Role::Lead => !after_lead,
                Role::Closer => closers_start && !after_lead,
                Role::Continues | Role::Blank => false,
            };
            if starts_here && o.depth[i] == base {
                starts.push(i);
            }
            prev = i;
        }
        starts
    }

    /// Merge neighbouring pieces while they fit in `size` together; with
    /// `only_whole`, pieces of a split unit are left as they are.
    fn pack(&self, pieces: Vec<Piece>, only_whole: bool, out: &mut Vec<Piece>) {
        let mut current: Option<Piece> = None;
        for piece in pieces {
            current = match current {
                Some(c)
                    if (!only_whole || (c.whole && piece.whole)) && self.outline.chars(c.a, piece.b) <= self.size =>
                {
                    Some(Piece { a: c.a, b: piece.b, whole: c.whole && piece.whole })
                }
                Some(c) => {
                    out.push(c);
                    Some(piece)
                }
                None => Some(piece),
            };
        }
        out.extend(current);
    }

    /// Line windows over `[a, b)`, for runs with no smaller units: as many
    /// whole lines as fit in `size`.
    fn windows(&self, a: usize, b: usize, out: &mut Vec<Piece>) {
        let o = self.outline;
        let len = |i: usize| o.chars(i, i + 1);
        let mut start = a;
        while start < b {
            if o.role[start] == Role::Blank {
                start += 1;
                continue;
            }
            if len(start) > self.size {
                out.push(Piece { a: start, b: start + 1, whole: false });
                start += 1;
                continue;
            }
            let mut end = start;
            let mut taken = 0;
            while end < b && len(end) <= self.size && (end == start || taken + len(end) < self.size) {
                taken += len(end) + 1;
                end += 1;
            }
            out.push(Piece { a: start, b: end, whole: false });
            start = end;
        }
    }
}

/// Emit lines `[a, b)` (0-based) as one chunk, trimmed of blank edge lines,
/// splitting further while the model window is exceeded.
pub(super) fn emit_lines(
    lines: &[&str],
    mut a: usize,
    mut b: usize,
    fits: &dyn Fn(&str) -> bool,
    out: &mut Vec<Chunk>,
) {
    while a < b && is_blank(lines[a]) {
        a += 1;
    }
    while b > a && is_blank(lines[b - 1]) {
        b -= 1;
    }
    if a >= b {
        return;
    }
    let text = lines[a..b].join("\n");
    if fits(&text) {
        out.push(Chunk { start_line: a + 1, end_line: b, text });
    } else if b - a == 1 {
        split_long_line(lines[a], a + 1, char_len(lines[a]).div_ceil(2).max(1), fits, out);
    } else {
        let mid = a + (b - a) / 2;
        emit_lines(lines, a, mid, fits, out);
        emit_lines(lines, mid, b, fits, out);
    }
}

/// Cut one line into pieces of at most `size` characters that fit the window.
pub(super) fn split_long_line(
    line: &str,
    line_no: usize,
    size: usize,
    fits: &dyn Fn(&str) -> bool,
    out: &mut Vec<Chunk>,
) {
    // A line long only for its blank ends stays whole: cut, its blank
    // pieces were left out, and the one piece left read as all of the line
    // (`path:N:` printed it without its indentation).
    let words = line.trim();
    if char_len(words) <= size && fits(line) {
        out.push(Chunk { start_line: line_no, end_line: line_no, text: line.to_string() });
        return;
    }
    for text in cut_line(line, size.max(1)) {
        if is_blank(&text) {
            continue;
        }
        let len = char_len(&text);
        if fits(&text) || len <= 1 {
            out.push(Chunk { start_line: line_no, end_line: line_no, text });
        } else {
            split_long_line(&text, line_no, len.div_ceil(2), fits, out);
        }
    }
}

/// `line` in pieces of at most `size` characters. A line that lone CRs
/// divide (a file written with classic Mac line ends, read as grep reads
/// it: one line) is cut at them, its parts packed into pieces, so that no
/// piece begins mid-word (audit 181: `ef f143(v):`); any other, and a part
/// longer than `size`, every `size` characters.
fn cut_line(line: &str, size: usize) -> Vec<String> {
    let by_chars = |text: &str| -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(size).map(|piece| piece.iter().collect()).collect()
    };
    if !line.trim_end_matches('\r').contains('\r') {
        return by_chars(line);
    }
    let mut pieces = Vec::new();
    let (mut piece, mut piece_len) = (String::new(), 0);
    for part in line.split_inclusive('\r') {
        let part_len = char_len(part);
        if piece_len + part_len > size && piece_len > 0 {
            pieces.push(std::mem::take(&mut piece));
            piece_len = 0;
        }
        if part_len > size {
            pieces.extend(by_chars(part));
        } else {
            piece.push_str(part);
            piece_len += part_len;
        }
    }
    if piece_len > 0 {
        pieces.push(piece);
    }
    pieces
}
