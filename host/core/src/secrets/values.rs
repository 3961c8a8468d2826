//! Known secret values, found in every encoding a recording may hold them in.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use super::names::REDACTED;

/// Values shorter than this are found only where they stand alone (not
/// inside a longer word or number), so that a short value does not take out
/// every occurrence of its letters.
const WHOLE_WORD_BELOW: usize = 8;
/// Values at least this long are also found inside a larger base64 text.
const INSIDE_BASE64_FROM: usize = 12;

/// The values known to be secret, each found plain, URL-encoded or in
/// base64, and replaced (or masked) wherever it appears.
#[derive(Debug, Default, Clone)]
pub struct SecretValues {
    values: Vec<Vec<u8>>,
    /// Base64 forms of the values, whole or as they read inside a larger
    /// base64 text.
    encoded: Vec<Vec<u8>>,
}

impl SecretValues {
    /// Adds `value` (an empty one is nothing).
    pub fn add(&mut self, value: &str) {
        let bytes = value.as_bytes();
        if bytes.is_empty() || self.values.iter().any(|v| v == bytes) {
            return;
        }
        self.values.push(bytes.to_vec());
        let mut forms = Vec::new();
        if bytes.len() >= WHOLE_WORD_BELOW / 2 {
            for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
                forms.push(engine.encode(bytes).into_bytes());
            }
        }
        if bytes.len() >= INSIDE_BASE64_FROM {
            // Inside a larger text the value starts 0, 1 or 2 bytes into a
            // 3-byte group: the chars of the first and last groups depend on
            // its neighbours, the ones between do not.
            for shift in 0..3 {
                let mut shifted = vec![0u8; shift];
                shifted.extend_from_slice(bytes);
                for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                    let text = engine.encode(&shifted).into_bytes();
                    let start = if shift == 0 { 0 } else { 4 };
                    let end = text.len().saturating_sub(4);
                    if end > start + 8 {
                        forms.push(text[start..end].to_vec());
                    }
                }
            }
        }
        for form in forms {
            if !self.encoded.contains(&form) {
                self.encoded.push(form);
            }
        }
    }

    /// Where the known values are in `hay`: byte ranges, sorted, not overlapping.
    pub fn find(&self, hay: &[u8]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        for value in &self.values {
            let whole_word = value.len() < WHOLE_WORD_BELOW;
            let mut i = 0;
            while i < hay.len() {
                match encoded_at(hay, i, value) {
                    Some(end) if !whole_word || stands_alone(hay, i, end) => {
                        found.push((i, end));
                        i = end;
                    }
                    _ => i += 1,
                }
            }
        }
        for form in &self.encoded {
            let mut from = 0;
            while let Some(at) = find_bytes(&hay[from..], form) {
                found.push((from + at, from + at + form.len()));
                from += at + form.len();
            }
        }
        merge(found)
    }

    /// `text` with every known value replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let ranges = self.find(text.as_bytes());
        if ranges.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end) in ranges {
            // Ranges start and end on character boundaries: every form is
            // ASCII or the value's own UTF-8.
            out.push_str(text.get(last..start).unwrap_or_default());
            out.push_str(REDACTED);
            last = end;
        }
        out.push_str(text.get(last..).unwrap_or_default());
        out
    }

    /// Overwrites every known value in `bytes` with as many `*`: what keeps
    /// encoded data (protobuf) readable, its lengths unchanged.
    pub fn mask(&self, bytes: &mut [u8]) {
        for (start, end) in self.find(bytes) {
            bytes[start..end].fill(b'*');
        }
    }
}

/// Where `value` ends when it starts at `hay[at]`, each of its bytes literal
/// or `%XX` (either case), a space also `+`.
fn encoded_at(hay: &[u8], at: usize, value: &[u8]) -> Option<usize> {
    let mut i = at;
    for &want in value {
        let got = *hay.get(i)?;
        if got == want {
            i += 1;
        } else if got == b'%' && hex_at(hay, i + 1) == Some(want) {
            i += 3;
        } else if got == b'+' && want == b' ' {
            i += 1;
        } else {
            return None;
        }
    }
    Some(i)
}

fn hex_at(hay: &[u8], at: usize) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16);
    let hi = digit(*hay.get(at)?)?;
    let lo = digit(*hay.get(at + 1)?)?;
    u8::try_from(hi * 16 + lo).ok()
}

/// Whether `hay[start..end]` is not part of a longer word or number.
fn stands_alone(hay: &[u8], start: usize, end: usize) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric();
    let before = start.checked_sub(1).and_then(|i| hay.get(i));
    !before.is_some_and(word) && !hay.get(end).is_some_and(word)
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Sorted ranges, overlapping ones joined.
fn merge(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[&str]) -> SecretValues {
        let mut s = SecretValues::default();
        for v in values {
            s.add(v);
        }
        s
    }

    #[test]
    fn a_value_is_found_plain_url_encoded_and_in_base64() {
        let key = "Eby8vdM02xNOcqFl/K1SZ+FPTOtr==";
        let s = of(&[key]);
        let cases = [
            format!("k={key}&x=1"),
            "k=Eby8vdM02xNOcqFl%2FK1SZ%2BFPTOtr%3D%3D".to_owned(),
            "k=Eby8vdM02xNOcqFl%2fK1SZ%2bFPTOtr%3d%3d".to_owned(),
            format!("auth {}", STANDARD.encode(key)),
            format!("auth {}", URL_SAFE_NO_PAD.encode(key)),
            // Inside a larger base64 text, at each offset.
            format!("blob {}", STANDARD.encode(format!("user:{key}:rest"))),
            format!("blob {}", STANDARD.encode(format!("u:{key}."))),
            format!("blob {}", STANDARD.encode(format!("us:{key}.."))),
        ];
        for text in cases {
            let out = s.scrub(&text);
            assert!(out.contains(REDACTED), "{text} → {out}");
            assert!(!out.contains("Eby8vdM02xNO"), "{text} → {out}");
            for form in [STANDARD.encode(key), URL_SAFE_NO_PAD.encode(key)] {
                assert!(!out.contains(&form[4..form.len() - 4]), "{text} → {out}");
            }
        }
        assert_eq!(s.scrub("nothing here"), "nothing here");
    }

    #[test]
    fn a_short_value_is_found_where_it_stands_alone() {
        let s = of(&["hunter2", "7"]);
        assert_eq!(s.scrub("pw=hunter2;"), format!("pw={REDACTED};"));
        assert_eq!(s.scrub("\"hunter2\""), format!("\"{REDACTED}\""));
        assert_eq!(s.scrub("xhunter2y"), "xhunter2y");
        assert_eq!(s.scrub("n=7&m=17"), format!("n={REDACTED}&m=17"));
        assert_eq!(s.scrub("hunter%32"), REDACTED);
    }

    #[test]
    fn masking_keeps_the_length() {
        let s = of(&["s3cret-value"]);
        let mut bytes = b"\x0a\x0cs3cret-value\x12\x01x".to_vec();
        s.mask(&mut bytes);
        assert_eq!(bytes, b"\x0a\x0c************\x12\x01x".to_vec());
    }
}
