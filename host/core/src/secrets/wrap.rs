//! Base64 wrapped at 64 or 76 columns (PEM, MIME; `\n` or `\r\n`) read as
//! one line, so that a key or a JWT a line break cuts in two is still seen
//! whole by the shapes, and places in the joined text are mapped back.

use std::borrow::Cow;

/// The widths base64 is wrapped at: PEM's and MIME's.
const WIDTHS: [usize; 2] = [64, 76];

/// Characters of a wrapped block: base64 (standard and URL-safe) and the
/// dots between a JWT's parts.
fn in_block(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-' | b'.')
}

/// A text with the line breaks of wrapped base64 taken out.
pub(super) struct Unwrapped<'a> {
    /// The joined text.
    pub(super) text: Cow<'a, str>,
    /// Each break taken out: where it was in the joined text, and how many
    /// bytes were taken out up to and including it.
    breaks: Vec<(usize, usize)>,
}

/// `text` with every line break that ends a line of exactly 64 or 76 block
/// characters (counted back to the line's start or the block's) and is
/// followed by another block character taken out.
pub(super) fn unwrap(text: &str) -> Unwrapped<'_> {
    let bytes = text.as_bytes();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_block(b) {
            run += 1;
            i += 1;
            continue;
        }
        let width = match bytes.get(i..) {
            Some([b'\n', ..]) => 1,
            Some([b'\r', b'\n', ..]) => 2,
            _ => 0,
        };
        let joins = width > 0
            && WIDTHS.contains(&run)
            && bytes.get(i + width).is_some_and(|&next| in_block(next));
        if joins {
            cuts.push((i, width));
        }
        run = 0;
        i += width.max(1);
    }
    if cuts.is_empty() {
        return Unwrapped {
            text: Cow::Borrowed(text),
            breaks: Vec::new(),
        };
    }
    let mut joined = String::with_capacity(text.len());
    let mut breaks = Vec::with_capacity(cuts.len());
    let (mut last, mut removed) = (0, 0);
    for (at, width) in cuts {
        // Line breaks are ASCII: every cut is on a character boundary.
        joined.push_str(text.get(last..at).unwrap_or_default());
        removed += width;
        breaks.push((joined.len(), removed));
        last = at + width;
    }
    joined.push_str(text.get(last..).unwrap_or_default());
    Unwrapped {
        text: Cow::Owned(joined),
        breaks,
    }
}

impl Unwrapped<'_> {
    /// The range in the original text of `start..end` in the joined one.
    pub(super) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        let removed_before = |at: usize| {
            let n = self.breaks.partition_point(|&(p, _)| p <= at);
            n.checked_sub(1).map_or(0, |i| self.breaks[i].1)
        };
        let start_out = start + removed_before(start);
        let end_out = match end.checked_sub(1) {
            Some(last) if end > start => last + removed_before(last) + 1,
            _ => start_out,
        };
        (start_out, end_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_64_or_76_block_characters_are_joined_and_places_mapped_back() {
        let line64 = "A".repeat(63) + "B";
        let text = format!("k: {line64}\r\nCDEF\nrest");
        let u = unwrap(&text);
        assert_eq!(u.text, format!("k: {line64}CDEF\nrest"));
        // "BC" in the joined text spans the cut.
        let at = u.text.find("BC").unwrap();
        let (s, e) = u.original(at, at + 2);
        assert_eq!(&text[s..e], "B\r\nC");
        let at = u.text.find("rest").unwrap();
        let (s, e) = u.original(at, at + 4);
        assert_eq!(&text[s..e], "rest");
        let line76 = "x".repeat(76);
        let text = format!("{line76}\n{line76}\nyz");
        assert_eq!(unwrap(&text).text, format!("{line76}{line76}yz"));
        // Other widths, and a break before what is not base64, stay.
        for kept in [
            format!("{}\nabc", "a".repeat(63)),
            format!("{line64}\n\nabc"),
            format!("{line64}\n-abc").replace('-', " "),
        ] {
            assert_eq!(unwrap(&kept).text, kept);
        }
    }
}
