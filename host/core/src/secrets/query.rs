//! The `sig` of a URL's query wherever a URL stands: in a URL, or in a URL
//! inside another URL's query, where its `?`, `&` and `=` are percent-encoded
//! once or more (`%26sig%3D`, `%2526sig%253D`), and whatever its name's own
//! encoding (`s%69g=`, `%73%69%67=`).

use super::percent;

/// Characters a query parameter's name may be written with, its
/// percent-encoding and the separators encoded before it included.
fn in_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'%' | b'.' | b'_' | b'-' | b'~' | b'$' | b'+')
}

/// The values of `sig` query parameters in `text`, as byte ranges.
pub(super) fn sas_signatures(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let Some(len) = equals_at(bytes, i) else {
            i += 1;
            continue;
        };
        let value_start = i + len;
        if named_sig(bytes, i) {
            let end = value_end(bytes, value_start);
            if end > value_start {
                ranges.push((value_start, end));
            }
            i = end.max(value_start);
        } else {
            i = value_start;
        }
    }
}

/// The length of an `=` at `bytes[at]`, literal or percent-encoded at any
/// depth (`%3D`, `%253D`, …).
fn equals_at(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'=' => Some(1),
        b'%' => percent::encoded_len(bytes, at, b'='),
        _ => None,
    }
}

/// Whether the parameter whose `=` is at `eq` is named `sig`: the name
/// before it, decoded until it no longer changes, after its last separator
/// (`?`, `&`, `;`, themselves decoded), read as a name is.
fn named_sig(bytes: &[u8], eq: usize) -> bool {
    let mut start = eq;
    while start > 0 && in_name(bytes[start - 1]) {
        start -= 1;
    }
    let Ok(written) = std::str::from_utf8(&bytes[start..eq]) else {
        return false;
    };
    let decoded = percent::percent_decoded(written);
    let name = decoded
        .rsplit(['?', '&', ';', '/', '#', '='])
        .next()
        .unwrap_or_default();
    let normal: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    normal == "sig"
}

/// Where a query value starting at `from` ends: at a character no URL
/// value holds unencoded, or at an `&` percent-encoded at any depth.
fn value_end(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    while end < bytes.len() {
        let b = bytes[end];
        if matches!(
            b,
            b'&' | b'"' | b'\'' | b'<' | b'>' | b'#' | b';' | b',' | b'\\'
        ) || b.is_ascii_whitespace()
            || (b == b'%' && percent::encoded_len(bytes, end, b'&').is_some())
        {
            break;
        }
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signatures(text: &str) -> Vec<&str> {
        let mut ranges = Vec::new();
        sas_signatures(text, &mut ranges);
        ranges.iter().map(|&(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn a_sig_is_found_under_any_encoding_of_its_name_and_its_url() {
        let cases = [
            ("https://a/c?sv=1&sig=abc%2F&se=2", "abc%2F"),
            ("https://a/c?sv=1&s%69g=abc&se=2", "abc"),
            ("https://a/c?sv=1&S%2569G=abc&se=2", "abc"),
            ("https://a/c?%73%69%67=abc", "abc"),
            (
                "src=https%3A%2F%2Fa%2Fc%3Fsv%3D1%26sig%3Dabc%252F%26se%3D2",
                "abc%252F",
            ),
            (
                "src=https%253A%252F%252Fa%252Fc%253Fsv%253D1%2526sig%253Dabc%25252F%2526se%253D2",
                "abc%25252F",
            ),
            ("u=x%25253Fsig%2525253Dabc", "abc"),
            ("<a>&amp;sig=qq</a>", "qq"),
            ("sig=first", "first"),
        ];
        for (text, want) in cases {
            assert_eq!(signatures(text), [want], "{text}");
        }
        for plain in [
            "design=1&signal=2",
            "https://a/c?restype=container&comp=list",
            "mysig=x",
            "x=sig",
        ] {
            assert!(signatures(plain).is_empty(), "{plain}");
        }
    }
}
