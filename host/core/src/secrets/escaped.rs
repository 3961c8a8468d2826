//! Bytes as lenient readers read them: what such a reader drops dropped
//! (a byte that is not UTF-8, a lone surrogate escape, a character
//! reference to no character), then JSON's string escapes (`\u0041`, `\"`,
//! `\/`, `\n`, …) and XML's references (`&amp;`, `&#65;`, `&#x41;`, the
//! five named ones in any case, as HTML reads them too) read over what is
//! left, with what XML's text reads through (a CDATA section's markers, a
//! comment) dropped, without asking whether it is JSON or XML. Each is read again over
//! what the other read, both ways round, as often as that changes
//! something (JSON in a JSON string, XML in one, JSON in XML's text), up to
//! [`READINGS`] deep. A known value written with escapes or references, or
//! cut in two by what is dropped, in a body no reader vouched for (JSON or
//! XML that does not parse, a body that is not text, a log line quoting
//! either) is still found, and its place mapped back to the bytes as they
//! stand.

/// The most escape and reference readings one view is made of: JSON in
/// JSON strings nested half again as deep as a recording redacts it (8),
/// and an escape inside the last.
const READINGS: usize = 16;

/// `bytes` read leniently, and how to find where a part of it stands.
pub(super) struct Lenient {
    pub(super) bytes: Vec<u8>,
    /// The readings that made it, in order (drops, then escapes and
    /// references).
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

    /// This view read once more by `how`; `None` when that changes nothing.
    fn read(&self, how: Escape) -> Option<Self> {
        let triggers: &[u8] = match how {
            Escape::Json => b"\\",
            Escape::Xml => b"&<]",
        };
        if !self.bytes.iter().any(|b| triggers.contains(b)) {
            return None;
        }
        let (bytes, pieces) = match how {
            Escape::Json => reading(&self.bytes, triggers, json_escape),
            Escape::Xml => reading(&self.bytes, triggers, xml_markup),
        };
        if pieces.0.is_empty() {
            return None;
        }
        let mut readings = self.readings.clone();
        readings.push(pieces);
        Some(Self { bytes, readings })
    }
}

/// The two kinds of escape a view reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    Json,
    Xml,
}

/// Each lenient view of `hay` given to `visit`, one at a time (none when
/// every reading reads it as it stands, or when it is too long to map:
/// 4 GiB): what is dropped dropped, alone; then, from there, JSON's escapes
/// and XML's references read in turn, starting with either, each view
/// given as it is made.
pub(super) fn each_view(hay: &[u8], mut visit: impl FnMut(&Lenient)) {
    let utf8 = std::str::from_utf8(hay).is_ok();
    if (utf8 && !hay.iter().any(|b| b"\\&<".contains(b))) || u32::try_from(hay.len()).is_err() {
        return;
    }
    let base = if utf8 {
        Lenient {
            bytes: hay.to_vec(),
            readings: Vec::new(),
        }
    } else {
        let (bytes, drops) = dropped(hay);
        let base = Lenient {
            bytes,
            readings: vec![drops],
        };
        visit(&base);
        base
    };
    let dropped = base.readings.len();
    for first in [Escape::Json, Escape::Xml] {
        let Some(mut view) = base.read(first) else {
            continue;
        };
        let mut next = first;
        loop {
            visit(&view);
            if view.readings.len() - dropped >= READINGS {
                break;
            }
            // The other kind first, then the same again.
            let other = if next == Escape::Json {
                Escape::Xml
            } else {
                Escape::Json
            };
            let Some((read, how)) = view
                .read(other)
                .map(|v| (v, other))
                .or_else(|| view.read(next).map(|v| (v, next)))
            else {
                break;
            };
            view = read;
            next = how;
        }
    }
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
#[derive(Debug, Default, Clone)]
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

/// What an escape or reference at `hay[at]` is, if one starts there: how
/// long it is, and the character it stands for (none: it stands for nothing).
type ReadAt = fn(&[u8], usize) -> Option<(usize, Option<char>)>;

/// `hay` with the escapes `escape` reads (each starting with one of
/// `triggers`) read, what one stands for in place of it (nothing, where it
/// stands for no character).
fn reading(hay: &[u8], triggers: &[u8], escape: ReadAt) -> (Vec<u8>, Pieces) {
    let mut out = Vec::with_capacity(hay.len());
    let mut pieces = Pieces::default();
    let mut i = 0;
    while i < hay.len() {
        let found = triggers.contains(&hay[i]).then(|| escape(hay, i)).flatten();
        let Some((len, c)) = found else {
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

/// The longest comment a view drops whole (the bound on what one `<!--` makes
/// it look at).
const COMMENT: usize = 64;

/// What XML reads as part of the text around it at `hay[at]`: a reference
/// ([`xml_reference`]), or markup that stands for nothing in an element's
/// text (a CDATA section's `<![CDATA[` and `]]>`, a comment of up to
/// [`COMMENT`] bytes whole), so that a value cut by it is read whole.
fn xml_markup(hay: &[u8], at: usize) -> Option<(usize, Option<char>)> {
    let rest = hay.get(at..)?;
    if rest.starts_with(b"<![CDATA[") {
        return Some((9, None));
    }
    if rest.starts_with(b"]]>") {
        return Some((3, None));
    }
    if rest.starts_with(b"<!--") {
        // A short comment only: no more is looked at from each `<!--`.
        let within = rest.get(4..).unwrap_or_default();
        let within = &within[..within.len().min(COMMENT)];
        let end = within.windows(3).position(|w| w == b"-->")?;
        return Some((4 + end + 3, None));
    }
    xml_reference(hay, at)
}

/// The XML (or HTML) character reference at `hay[at]` (`&amp;`, `&#65;`,
/// `&#x41;`): how long it is and the character it stands for (none for a
/// number that is no character's: a surrogate, past U+10FFFF).
fn xml_reference(hay: &[u8], at: usize) -> Option<(usize, Option<char>)> {
    if hay.get(at) != Some(&b'&') {
        return None;
    }
    let rest = hay.get(at + 1..)?;
    // The longest reference read: `&#x` and eight hex digits, or ten decimal ones.
    let len = rest.iter().take(12).position(|&b| b == b';')?;
    let name = &rest[..len];
    let number = |digits: &[u8], radix: u32| {
        let text = std::str::from_utf8(digits).ok()?;
        let all = !text.is_empty() && text.chars().all(|c| c.is_digit(radix));
        let n = all.then(|| u64::from_str_radix(text, radix).ok())??;
        Some(u32::try_from(n).ok().and_then(char::from_u32))
    };
    let c = match name {
        [b'#', b'x' | b'X', digits @ ..] => number(digits, 16)?,
        [b'#', digits @ ..] => number(digits, 10)?,
        _ => Some(
            [
                ("amp", '&'),
                ("lt", '<'),
                ("gt", '>'),
                ("quot", '"'),
                ("apos", '\''),
            ]
            .into_iter()
            .find(|(n, _)| name.eq_ignore_ascii_case(n.as_bytes()))?
            .1,
        ),
    };
    Some((len + 2, c))
}

/// The JSON escape at `hay[at]`: how long it is and the character it
/// stands for (none for a lone surrogate).
fn json_escape(hay: &[u8], at: usize) -> Option<(usize, Option<char>)> {
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

#[cfg(test)]
mod tests {
    use super::super::{REDACTED, SecretValues};

    fn of(values: &[&str]) -> SecretValues {
        let mut s = SecretValues::default();
        for v in values {
            s.add(v);
        }
        s
    }

    #[test]
    fn a_value_spelled_with_xml_references_is_found_where_it_stands() {
        let s = of(&["granted&value<0001>", "Eby8vdM02xNOcqFl/K1SZ+FPTOtr=="]);
        for (text, want) in [
            ("<a>granted&amp;value&lt;0001&gt;</a>", "<a>REDACTED</a>"),
            // Decimal and hex, either case; the named ones in any case, as HTML reads them.
            (
                "<a v='granted&#38;value&#x3C;0001&GT;'/>",
                "<a v='REDACTED'/>",
            ),
            (
                "<a>&#69;by8vdM02xNOcqFl&#x2F;K1SZ&#43;FPTOtr&#x3d;&#61;</a>",
                "<a>REDACTED</a>",
            ),
            // A reference to no character (a surrogate) cuts nothing in two,
            // nor does a CDATA section's markup or a comment.
            ("x granted&amp;value&#xD800;&lt;0001> y", "x REDACTED y"),
            (
                "<a>granted&amp;<![CDATA[value<0001>]]></a>",
                "<a>REDACTED]]></a>",
            ),
            (
                "<a>granted&amp;val<!-- c -->ue&lt;0001></a>",
                "<a>REDACTED</a>",
            ),
        ] {
            assert_eq!(s.scrub(text), want, "{text}");
            let mut bytes = text.as_bytes().to_vec();
            s.mask(&mut bytes);
            let masked = String::from_utf8_lossy(&bytes);
            assert!(
                !masked.contains("value") && !masked.contains("vdM02"),
                "{masked}"
            );
        }
        // Neither `&` nor `\` alone is a reference or an escape.
        assert_eq!(s.scrub("a & b &amp c \\ d"), "a & b &amp c \\ d");
    }

    #[test]
    fn a_value_under_escapes_and_references_nested_in_each_other_is_found() {
        let s = of(&["Eby8vdM02xNOcqFl/K1SZ+FPTOtr==", "C:\\new&more-0001"]);
        for text in [
            // JSON in a JSON string in a JSON string, escapes at each level.
            r#"{"a":"{\"b\":\"{\\\"c\\\":\\\"\\\\u0045by8vdM02xNOcqFl\\\\/K1SZ+FPTOtr==\\\"}\"}"}"#,
            // XML in a JSON string; JSON in XML's text.
            r#"{"x":"<a>\u0026#69;by8vdM02xNOcqFl&#x2F;K1SZ+FPTOtr==</a>"}"#,
            "<a>{&quot;k&quot;:&quot;\\u0045by8vdM02xNOcqFl\\/K1SZ+FPTOtr==&quot;}</a>",
            // A backslash XML's text holds as it is, beside a reference.
            "<p>C:\\new&amp;more-0001</p>",
        ] {
            let out = s.scrub(text);
            assert!(out.contains(REDACTED), "{text} → {out}");
            assert!(
                !out.contains("vdM02xNOcqFl") && !out.contains("more-0001"),
                "{text} → {out}"
            );
            let mut bytes = text.as_bytes().to_vec();
            s.mask(&mut bytes);
            let masked = String::from_utf8_lossy(&bytes);
            assert!(
                !masked.contains("vdM02xNOcqFl") && !masked.contains("more-0001"),
                "{masked}"
            );
        }
    }
}
