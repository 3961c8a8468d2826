//! Bytes as a lenient reader reads them: what such a reader drops dropped
//! (a byte that is not UTF-8, a lone surrogate escape), then JSON's string
//! escapes (`\u0041`, `\"`, `\/`, `\n`, …) read over what is left, without
//! asking whether it is JSON. A known value written with escapes, or cut in
//! two by what is dropped, in a body no JSON reader vouched for (JSON that
//! does not parse, a body that is not text, a log line quoting JSON) is
//! still found, and its place mapped back to the bytes as they stand.

/// `bytes` read leniently, and how to find where a part of it stands.
pub(super) struct Lenient {
    pub(super) bytes: Vec<u8>,
    /// The readings that made it, in order (drops, then escapes).
    readings: Vec<Pieces>,
}

impl Lenient {
    /// The range of the original bytes that `start..end` of `bytes` was read from.
    pub(super) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        let (mut start, mut end) = (start, end);
        for reading in self.readings.iter().rev() {
            (start, end) = (reading.start(start), reading.end(end));
        }
        (start, end.max(start))
    }
}

/// `hay` read leniently; `None` when that reads it as it stands (no escape,
/// nothing that is not UTF-8), or when it is too long to map (4 GiB).
pub(super) fn unescaped(hay: &[u8]) -> Option<Lenient> {
    let utf8 = std::str::from_utf8(hay).is_ok();
    if (utf8 && !hay.contains(&b'\\')) || u32::try_from(hay.len()).is_err() {
        return None;
    }
    let mut readings = Vec::new();
    let mut bytes = hay.to_vec();
    if !utf8 {
        let (kept, drops) = dropped(&bytes);
        bytes = kept;
        readings.push(drops);
    }
    if bytes.contains(&b'\\') {
        let (read, escapes) = escapes(&bytes);
        bytes = read;
        readings.push(escapes);
    }
    Some(Lenient { bytes, readings })
}

/// One place where a reading differs from what it read: `len` bytes of
/// the reading at `at` stand for `was_len` bytes at `was`.
#[derive(Debug, Clone, Copy)]
struct Piece {
    at: u32,
    len: u32,
    was: u32,
    was_len: u32,
}

/// The places where a reading differs, in order; between them, the
/// reading is the bytes it read.
#[derive(Debug, Default)]
struct Pieces(Vec<Piece>);

/// A place in a text no longer than `u32::MAX` (checked before reading).
fn small(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Pieces {
    fn push(&mut self, at: usize, len: usize, was: usize, was_len: usize) {
        let (at, len, was, was_len) = (small(at), small(len), small(was), small(was_len));
        // Drops next to each other are one.
        if let Some(last) = self.0.last_mut()
            && len == 0
            && last.len == 0
            && last.at == at
            && last.was + last.was_len == was
        {
            last.was_len += was_len;
            return;
        }
        self.0.push(Piece {
            at,
            len,
            was,
            was_len,
        });
    }

    /// Where the byte at `p` of the reading was read from (a piece's start).
    fn start(&self, p: usize) -> usize {
        let at = small(p);
        let i = self.0.partition_point(|x| x.at <= at);
        let read = match i.checked_sub(1).map(|i| self.0[i]) {
            None => at,
            Some(x) if at < x.at + x.len => x.was,
            Some(x) => x.was + x.was_len + (at - x.at - x.len),
        };
        read as usize
    }

    /// Where the reading's `..e` ends in what was read (a piece's end).
    fn end(&self, e: usize) -> usize {
        let Some(last) = e.checked_sub(1) else {
            return 0;
        };
        let at = small(last);
        let i = self.0.partition_point(|x| x.at <= at);
        let read = match i.checked_sub(1).map(|i| self.0[i]) {
            None => at + 1,
            Some(x) if at < x.at + x.len => x.was + x.was_len,
            Some(x) => x.was + x.was_len + (at - x.at - x.len) + 1,
        };
        read as usize
    }
}

/// `hay` without the bytes that are not UTF-8.
fn dropped(hay: &[u8]) -> (Vec<u8>, Pieces) {
    let mut kept = Vec::with_capacity(hay.len());
    let mut pieces = Pieces::default();
    let mut at = 0;
    for chunk in hay.utf8_chunks() {
        kept.extend_from_slice(chunk.valid().as_bytes());
        at += chunk.valid().len();
        if !chunk.invalid().is_empty() {
            pieces.push(kept.len(), 0, at, chunk.invalid().len());
            at += chunk.invalid().len();
        }
    }
    (kept, pieces)
}

/// `hay` with JSON's escapes read (a lone surrogate dropped).
fn escapes(hay: &[u8]) -> (Vec<u8>, Pieces) {
    let mut out = Vec::with_capacity(hay.len());
    let mut pieces = Pieces::default();
    let mut i = 0;
    while i < hay.len() {
        let Some((len, c)) = escape(hay, i) else {
            out.push(hay[i]);
            i += 1;
            continue;
        };
        let mut buf = [0u8; 4];
        let read = c.map_or(&[][..], |c| c.encode_utf8(&mut buf).as_bytes());
        pieces.push(out.len(), read.len(), i, len);
        out.extend_from_slice(read);
        i += len;
    }
    (out, pieces)
}

/// The escape at `hay[at]`: how long it is and the character it stands for
/// (none for a lone surrogate).
fn escape(hay: &[u8], at: usize) -> Option<(usize, Option<char>)> {
    if hay.get(at) != Some(&b'\\') {
        return None;
    }
    let c = match *hay.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(hay, at + 2)?;
            if (0xd800..0xdc00).contains(&unit)
                && hay.get(at + 6..at + 8) == Some(b"\\u")
                && let Some(low @ 0xdc00..0xe000) = hex4(hay, at + 8)
            {
                let c = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                return Some((12, char::from_u32(c)));
            }
            return Some((6, char::from_u32(unit)));
        }
        _ => return None,
    };
    Some((2, Some(c)))
}

/// The four hex digits at `hay[at..]`, as a number.
fn hex4(hay: &[u8], at: usize) -> Option<u32> {
    hay.get(at..at + 4)?
        .iter()
        .try_fold(0u32, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
}
