//! Percent-encoding at any depth: what a name reads as once decoded until it
//! no longer changes (`s%69g` and `s%2569g` are `sig`), and where a byte
//! stands in a text that may hold it encoded once, twice or more (`=` as
//! `%3D`, `%253D`, `%25253D`).

/// How many layers of percent-encoding are looked through: more than any
/// client stacks by accident (a URL inside a query inside a query is two).
pub(super) const DEPTH: usize = 4;

/// `text` percent-decoded again and again until it no longer changes (at
/// most [`DEPTH`] + 1 times); bytes that are not UTF-8 read as U+FFFD.
pub fn percent_decoded(text: &str) -> String {
    let mut current = text.to_owned();
    for _ in 0..=DEPTH {
        let next = decode_once(&current);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

/// One layer of `%XX` decoded; a `%` not followed by two hex digits stays.
fn decode_once(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], hex_at(bytes, i + 1)) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The byte two hex digits at `hay[at..]` spell.
pub(super) fn hex_at(hay: &[u8], at: usize) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16);
    let hi = digit(*hay.get(at)?)?;
    let lo = digit(*hay.get(at + 1)?)?;
    u8::try_from(hi * 16 + lo).ok()
}

/// Where the text at `hay[at..]` may end when it reads as the byte `want`:
/// literally, `+` for a space, or as `%XX` whose three characters may each
/// be encoded again, down to `depth` layers. Ends are pushed to `out`.
pub(super) fn byte_ends(hay: &[u8], at: usize, want: u8, depth: usize, out: &mut Vec<usize>) {
    let Some(&got) = hay.get(at) else {
        return;
    };
    if got == want || (got == b'+' && want == b' ') {
        out.push(at + 1);
    }
    // Every encoded form starts with a literal `%`.
    if depth == 0 || got != b'%' {
        return;
    }
    let mut percents = Vec::new();
    byte_ends(hay, at, b'%', depth - 1, &mut percents);
    for p in percents {
        for hi in hex_digits(want >> 4) {
            let mut his = Vec::new();
            byte_ends(hay, p, hi, depth - 1, &mut his);
            for h in his {
                for lo in hex_digits(want & 0x0f) {
                    byte_ends(hay, h, lo, depth - 1, out);
                }
            }
        }
    }
}

/// The characters that spell the hex digit `nibble` (both cases of a letter).
fn hex_digits(nibble: u8) -> impl Iterator<Item = u8> {
    let (a, b) = match nibble {
        0..=9 => (b'0' + nibble, b'0' + nibble),
        _ => (b'a' + nibble - 10, b'A' + nibble - 10),
    };
    std::iter::once(a).chain((a != b).then_some(b))
}

/// Where `value` ends when it starts at `hay[at]`, each of its bytes
/// literal or percent-encoded up to [`DEPTH`] times (the furthest end when
/// several readings fit).
pub(super) fn value_end(hay: &[u8], at: usize, value: &[u8]) -> Option<usize> {
    let mut positions = vec![at];
    for &want in value {
        let mut next = Vec::new();
        for &p in &positions {
            byte_ends(hay, p, want, DEPTH, &mut next);
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            return None;
        }
        positions = next;
    }
    positions.last().copied()
}

/// How long the byte `want` encoded at `hay[at..]` is (1 when literal), the
/// shortest reading.
pub(super) fn encoded_len(hay: &[u8], at: usize, want: u8) -> Option<usize> {
    let mut ends = Vec::new();
    byte_ends(hay, at, want, DEPTH, &mut ends);
    ends.into_iter().min().map(|end| end - at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_decoded_until_they_no_longer_change() {
        assert_eq!(percent_decoded("s%69g"), "sig");
        assert_eq!(percent_decoded("s%2569g"), "sig");
        assert_eq!(percent_decoded("s%252569g"), "sig");
        assert_eq!(percent_decoded("%73%69%67"), "sig");
        assert_eq!(percent_decoded("100%"), "100%");
        assert_eq!(percent_decoded("a%zzb"), "a%zzb");
    }

    #[test]
    fn a_value_is_found_under_any_depth_of_encoding() {
        for hay in [
            "k=ab=c",
            "k=ab%3Dc",
            "k=ab%3dc",
            "k=ab%253Dc",
            "k=ab%25253Dc",
            "k=%61b%3Dc",
            "k=ab%25%33%44c",
        ] {
            assert_eq!(
                value_end(hay.as_bytes(), 2, b"ab=c"),
                Some(hay.len()),
                "{hay}"
            );
        }
        assert_eq!(value_end(b"k=ab%3Ec", 2, b"ab=c"), None);
        assert_eq!(value_end(b"a+b", 0, b"a b"), Some(3));
        assert_eq!(encoded_len(b"%2526", 0, b'&'), Some(5));
        assert_eq!(encoded_len(b"&", 0, b'&'), Some(1));
        assert_eq!(encoded_len(b"%41", 0, b'&'), None);
    }
}
