//! Hex: a known value written in hex (lower or upper case, or in the other
//! case when it is hex itself), and hex keys that a name says are secrets
//! (Cognitive Services' `key1` and `key2` are 32 hex digits). Hex alone is
//! not a secret: request ids, digests and etags are hex too, so a hex run
//! counts only under a name.

use super::names::is_secret_name;

/// The shortest run of hex digits taken for a key under a secret name
/// (64 bits).
const MIN_KEY_DIGITS: usize = 16;
/// How many separator characters may stand between a name and its value
/// (`"key1" : "…`, `\"key1\":\"…`).
const MAX_SEPARATORS: usize = 8;

/// The forms `value` is searched in beside itself: its bytes in hex, lower
/// and upper case; and, when it is hex digits itself (8 or more), itself in
/// either case.
pub(super) fn forms(value: &[u8]) -> Vec<Vec<u8>> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let lower: Vec<u8> = value
        .iter()
        .flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .collect();
    let mut out = vec![lower.to_ascii_uppercase(), lower];
    if value.len() >= 8 && value.iter().all(u8::is_ascii_hexdigit) {
        out.push(value.to_ascii_lowercase());
        out.push(value.to_ascii_uppercase());
    }
    out.retain(|form| form != value);
    out.dedup();
    out
}

/// The hex keys of `text` a name says are secrets: a run of
/// [`MIN_KEY_DIGITS`] or more hex digits, with both digits and letters
/// (a key, not a number or a word), right after a name [`is_secret_name`]
/// knows and a `:`, `=` or `>` (quotes, blanks and backslashes around it):
/// a JSON field `"key1": "…"`, a form field or query `key1=…`, an attribute
/// `key1="…"`, an element `<Key1>…`, a header line `Key1: …`.
pub(super) fn named_keys(text: &str, ranges: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let run = &bytes[start..i];
        let key = run.len() >= MIN_KEY_DIGITS
            && run.iter().all(u8::is_ascii_hexdigit)
            && run.iter().any(u8::is_ascii_digit)
            && run.iter().any(u8::is_ascii_alphabetic);
        if key && named_secret(bytes, start) {
            ranges.push((start, i));
        }
    }
}

/// Whether a secret's name ends just before `at`: separators (at least one
/// `:`, `=` or `>`), then the name.
fn named_secret(bytes: &[u8], at: usize) -> bool {
    let mut end = at;
    let mut assigns = false;
    while end > 0 && at - end < MAX_SEPARATORS {
        match bytes[end - 1] {
            b':' | b'=' | b'>' => assigns = true,
            b'"' | b'\'' | b' ' | b'\t' | b'\\' => {}
            _ => break,
        }
        end -= 1;
    }
    let name_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$');
    let mut start = end;
    while start > 0 && name_char(bytes[start - 1]) {
        start -= 1;
    }
    assigns && start < end && std::str::from_utf8(&bytes[start..end]).is_ok_and(is_secret_name)
}
