//! Known secret values, found in every encoding a recording may hold them in.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use super::names::REDACTED;
use super::{escaped, hex, percent};

/// Values shorter than this are found only where they stand alone (not
/// inside a longer word or number), so that a short value does not take out
/// every occurrence of its letters.
const WHOLE_WORD_BELOW: usize = 8;
/// Values at least this long are also found inside a larger base64 text.
const INSIDE_BASE64_FROM: usize = 12;

/// The values known to be secret, each found plain, URL-encoded, in base64
/// or in hex, also where JSON's escapes or XML's references spell it or
/// what a lenient reader drops cuts it, and replaced (or masked) wherever it appears.
#[derive(Debug, Default, Clone)]
pub struct SecretValues {
    values: Vec<Vec<u8>>,
    /// Base64 forms of the values, whole or as they read inside a larger
    /// base64 text, and hex forms.
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
            forms.extend(hex::forms(bytes));
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

    /// Where the known values are in `hay`: byte ranges, sorted, not
    /// overlapping; also where JSON's escapes (`\u0041…`) or XML's
    /// references (`&#x41;…`, `&amp;`) spell one, at any mix of the two
    /// ([`escaped`]), or a lone surrogate escape or a byte that is not
    /// UTF-8 cuts one in two.
    pub fn find(&self, hay: &[u8]) -> Vec<(usize, usize)> {
        if self.values.is_empty() {
            return Vec::new();
        }
        let mut found = self.found(hay);
        escaped::each_view(hay, |view| {
            for (start, end) in self.found(&view.bytes) {
                found.push(view.original(start, end));
            }
        });
        merge(found)
    }

    /// Where the known values are in `hay`, as it stands.
    fn found(&self, hay: &[u8]) -> Vec<(usize, usize)> {
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
            while let Some((start, end)) = find_form(hay, from, form) {
                found.push((start, end));
                from = end;
            }
        }
        found
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

/// Where `value` ends when it starts at `hay[at]`, each of its bytes
/// literal or percent-encoded (either case, once or more: `%3D`, `%253D`),
/// a space also `+`.
fn encoded_at(hay: &[u8], at: usize, value: &[u8]) -> Option<usize> {
    // Every form of a byte starts with the byte itself, `+` or `%`.
    let first = *value.first()?;
    let starts = hay
        .get(at)
        .is_some_and(|&b| b == first || b == b'%' || b == b'+');
    if !starts {
        return None;
    }
    percent::value_end(hay, at, value)
}

/// Whether `hay[start..end]` is not part of a longer word or number.
fn stands_alone(hay: &[u8], start: usize, end: usize) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric();
    let before = start.checked_sub(1).and_then(|i| hay.get(i));
    !before.is_some_and(word) && !hay.get(end).is_some_and(word)
}

/// The first place from `from` where `hay` holds `form` (a base64 form of
/// a value): each of its bytes literal or percent-encoded (`%2B`, `%252F`),
/// and line breaks (`\n`, `\r\n`) allowed after its first byte, as in base64
/// wrapped at 64 or 76 columns (PEM, MIME). Its start and end.
fn find_form(hay: &[u8], from: usize, form: &[u8]) -> Option<(usize, usize)> {
    let &first = form.first()?;
    let mut start = from;
    while start < hay.len() {
        let at = start + hay[start..].iter().position(|&b| b == first || b == b'%')?;
        if let Some(end) = form_end(hay, at, form) {
            return Some((at, end));
        }
        start = at + 1;
    }
    None
}

/// Where `form` ends when it starts at `hay[at]` (see [`find_form`]).
fn form_end(hay: &[u8], at: usize, form: &[u8]) -> Option<usize> {
    let mut positions = vec![at];
    for (k, &want) in form.iter().enumerate() {
        let mut next = Vec::new();
        for &p in &positions {
            let p = if k == 0 { p } else { after_line_breaks(hay, p) };
            percent::byte_ends(hay, p, want, percent::DEPTH, &mut next);
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

/// `at`, past the line breaks (`\n`, `\r\n`) that start there.
fn after_line_breaks(hay: &[u8], mut at: usize) -> usize {
    loop {
        match hay.get(at..) {
            Some([b'\n', ..]) => at += 1,
            Some([b'\r', b'\n', ..]) => at += 2,
            _ => return at,
        }
    }
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
    fn a_value_is_found_percent_encoded_twice_and_deeper() {
        let key = "Eby8vdM02xNOcqFl/K1SZ+FPTOtr==";
        let s = of(&[key]);
        for text in [
            "k=Eby8vdM02xNOcqFl%252FK1SZ%252BFPTOtr%253D%253D&x=1",
            "k=Eby8vdM02xNOcqFl%25252FK1SZ%25252BFPTOtr%25253D%25253D",
            "k=%45by8vdM02xNOcqFl%252fK1SZ%2BFPTOtr%25%33%44%3D",
        ] {
            let out = s.scrub(text);
            assert!(out.starts_with("k=REDACTED"), "{text} → {out}");
            assert!(!out.contains("Eby8vdM02xNO"), "{text} → {out}");
        }
        // Its base64 percent-encoded (in a query, say) too.
        let b64 = STANDARD.encode(format!("user:{key}"));
        let encoded = b64
            .replace('+', "%2B")
            .replace('/', "%2F")
            .replace('=', "%253D");
        let out = s.scrub(&format!("q={encoded}"));
        assert!(out.contains(REDACTED), "{encoded} → {out}");
        assert!(!out.contains(&STANDARD.encode(key)[8..24]), "{out}");
    }

    #[test]
    fn a_value_is_found_in_base64_wrapped_at_64_and_76_columns() {
        let key = "Eby8vdM02xNOcqFl/K1SZ+FPTOtr-known-secret-value==";
        let s = of(&[key]);
        // A body whose base64 puts the value across a line break, PEM and MIME style.
        let payload = format!("{}{key}{}", "p".repeat(40), "s".repeat(60));
        let b64 = STANDARD.encode(&payload);
        for (width, newline) in [(64, "\n"), (64, "\r\n"), (76, "\n"), (76, "\r\n")] {
            let wrapped: Vec<&str> = b64
                .as_bytes()
                .chunks(width)
                .map(|c| std::str::from_utf8(c).unwrap())
                .collect();
            let wrapped = wrapped.join(newline);
            let middles: Vec<String> = (0..3)
                .map(|shift| {
                    let mut shifted = vec![0u8; shift];
                    shifted.extend_from_slice(key.as_bytes());
                    let form = STANDARD_NO_PAD.encode(&shifted);
                    form[8..form.len() - 8].to_owned()
                })
                .collect();
            assert!(
                middles.iter().any(|m| b64.contains(m.as_str()))
                    && !middles.iter().any(|m| wrapped.contains(m.as_str())),
                "the case: the value's base64 is cut by a line break"
            );
            let out = s.scrub(&wrapped);
            assert!(out.contains(REDACTED), "{width}: {out}");
            let joined = out.replace(['\r', '\n'], "");
            for m in &middles {
                assert!(!joined.contains(m.as_str()), "{width}: {out}");
            }
            let mut bytes = wrapped.clone().into_bytes();
            s.mask(&mut bytes);
            assert!(bytes.contains(&b'*'), "{width}: masked too");
        }
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
    fn a_value_is_found_in_hex_lower_and_upper_case() {
        let key = "Eby8vdM02xNOcqFl/K1SZ+FPTOtr==";
        // A Cognitive Services key: 32 hex digits, granted in one case.
        let cognitive = "9f86d081884c7d659a2feaa0c55ad015";
        let s = of(&[key, cognitive]);
        let lower: String = key.bytes().map(|b| format!("{b:02x}")).collect();
        let upper = lower.to_ascii_uppercase();
        let cognitive_hex: String = cognitive.bytes().map(|b| format!("{b:02x}")).collect();
        for (text, gone) in [
            (format!("k={lower}&x=1"), lower.clone()),
            (format!("<Dump>{upper}</Dump>"), upper.clone()),
            // Inside a longer hex text, and cut by a line break.
            (format!("blob 00ff{lower}ee11"), lower.clone()),
            (
                format!("{}\n{}", &lower[..40], &lower[40..]),
                lower[..40].to_owned(),
            ),
            // The key itself in the other case, and its own bytes in hex.
            (
                format!("x-key: {}", cognitive.to_ascii_uppercase()),
                cognitive.to_ascii_uppercase(),
            ),
            (format!("raw={cognitive_hex}"), cognitive_hex.clone()),
        ] {
            let out = s.scrub(&text);
            assert!(out.contains(REDACTED), "{text} → {out}");
            assert!(!out.contains(&gone[8..gone.len() - 8]), "{text} → {out}");
            let mut bytes = text.clone().into_bytes();
            s.mask(&mut bytes);
            let masked = String::from_utf8_lossy(&bytes);
            assert!(
                !masked.contains(&gone[8..gone.len() - 8]),
                "{text} → {masked}"
            );
        }
        // A hex text that is not the value stays.
        let other = "0123456789abcdef0123456789abcdef";
        assert_eq!(s.scrub(other), other);
    }

    #[test]
    fn a_value_spelled_with_json_escapes_is_found_where_it_stands() {
        let s = of(&["granted-env-value-0001"]);
        let text =
            r#"{"a":"\u0067ranted-env-value-0001", "b": "granted\u002denv\u002Dvalue-0001 x"}"#;
        assert_eq!(s.scrub(text), r#"{"a":"REDACTED", "b": "REDACTED x"}"#);
        let mut bytes = text.as_bytes().to_vec();
        bytes.insert(1, 0xff);
        s.mask(&mut bytes);
        let masked = String::from_utf8_lossy(&bytes);
        assert!(
            !masked.contains("ranted") && !masked.contains("value-0001"),
            "{masked}"
        );
        // A lone surrogate escape, or a byte that is not UTF-8, does not cut a value in two.
        let cut = r#"{"a":"granted-env-\ud800value-0001"}"#;
        assert_eq!(s.scrub(cut), r#"{"a":"REDACTED"}"#);
        let mut cut = b"<granted-env-value-0001>".to_vec();
        cut.insert(9, 0xff);
        s.mask(&mut cut);
        assert_eq!(cut, format!("<{}>", "*".repeat(23)).into_bytes());
        // Even inside an escape: dropped first, then the escape read.
        let mut cut = br"<\u0067ranted-env-value-0001>".to_vec();
        cut.insert(4, 0xff);
        s.mask(&mut cut);
        assert_eq!(cut, format!("<{}>", "*".repeat(28)).into_bytes());
        // Each spelling masked whole, as long as it stands.
        let spelled = [
            r"\u0067ranted-env-value-0001",
            r"granted\u002denv\u002Dvalue-0001",
        ];
        assert_eq!(
            masked.matches('*').count(),
            spelled.iter().map(|s| s.len()).sum::<usize>(),
            "{masked}"
        );
    }

    #[test]
    fn masking_keeps_the_length() {
        let s = of(&["s3cret-value"]);
        let mut bytes = b"\x0a\x0cs3cret-value\x12\x01x".to_vec();
        s.mask(&mut bytes);
        assert_eq!(bytes, b"\x0a\x0c************\x12\x01x".to_vec());
    }
}
