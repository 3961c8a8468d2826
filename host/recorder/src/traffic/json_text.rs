//! Strict JSON (RFC 8259) read as a stream of tokens, without recursion:
//! what a recording redacts by field name must first be read as a JSON
//! reader would read it, and a body that is not strict JSON is not read at
//! all (`keep` treats it as not text). Nesting is followed on a stack of
//! its own, so no depth (100,000 levels, or a body's whole bound) can
//! overflow the thread's; each token's place is kept, so that a redaction
//! replaces a string or a number where it stands and leaves every other
//! byte as it came.
//!
//! Strict: whitespace is JSON's four; strings hold no control character,
//! only JSON's escapes, and no lone surrogate (`\ud800` alone, or a low
//! surrogate first); numbers are JSON's grammar (no `NaN`, no leading
//! zero, no `+`); no comment, no trailing comma, no single quote. A text
//! may hold several documents, each after a line break (JSON lines); one
//! followed by anything else on its line is not JSON.

use std::borrow::Cow;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `{`
    Object,
    /// `[`
    Array,
    /// `}` or `]`
    End,
    /// An object's key (a string, quotes included).
    Key,
    /// A string value (quotes included).
    String,
    /// A number.
    Number,
    /// `true`, `false` or `null`.
    Literal,
}

/// One token: its kind and its bytes in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Why a text is not strict JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Invalid {
    pub(super) at: usize,
    pub(super) why: &'static str,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.why, self.at)
    }
}

/// Reads `text` (one JSON document, or several each after a line break),
/// giving each token to `visit` in order; fails on the first thing strict
/// JSON does not allow (tokens before it may have been given).
pub(super) fn read(text: &str, mut visit: impl FnMut(Token)) -> Result<(), Invalid> {
    let b = text.as_bytes();
    let mut at = skip_blank(b, 0);
    loop {
        at = document(b, at, &mut visit)?;
        let next = skip_blank(b, at);
        if next == b.len() {
            return Ok(());
        }
        if !b[at..next].contains(&b'\n') {
            return Err(Invalid {
                at: next,
                why: "more follows the document on its line",
            });
        }
        at = next;
    }
}

/// The text of a string or key token, its escapes read (a token [`read`]
/// gave: its escapes are valid).
pub(super) fn unquoted<'a>(text: &'a str, token: Token) -> Cow<'a, str> {
    let inner = text.get(token.start + 1..token.end - 1).unwrap_or_default();
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let escape = &rest[at..];
        let (c, len) = match escape.as_bytes().get(1) {
            Some(b'u') => {
                let unit = hex4(escape.as_bytes(), 2).unwrap_or(0xfffd);
                match (unit, hex4(escape.as_bytes(), 8)) {
                    (0xd800..=0xdbff, Some(low @ 0xdc00..=0xdfff)) => {
                        let c = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                        (char::from_u32(c), 12)
                    }
                    _ => (char::from_u32(unit), 6),
                }
            }
            Some(&e) => (Some(escaped(e).map_or('\u{fffd}', char::from)), 2),
            None => (None, 1),
        };
        out.push(c.unwrap_or('\u{fffd}'));
        rest = escape.get(len..).unwrap_or_default();
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The byte a one-character escape (`\n`, `\"`, …) stands for.
fn escaped(e: u8) -> Option<u8> {
    Some(match e {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// JSON's whitespace skipped from `at`.
fn skip_blank(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// One document from `at` (after its leading whitespace); where it ends.
/// Containers are followed on `open` (whether each is an object), not on
/// the call stack. Long because it is the whole state machine of an
/// iterative parser in one loop: a value, then what may follow it in the
/// container it closes, with the stack's discipline visible in one place.
fn document(b: &[u8], mut at: usize, visit: &mut impl FnMut(Token)) -> Result<usize, Invalid> {
    let mut open: Vec<bool> = Vec::new();
    let mut token = |kind, start, end| visit(Token { kind, start, end });
    loop {
        // A value starts here.
        at = skip_blank(b, at);
        let Some(&c) = b.get(at) else {
            return Err(Invalid {
                at,
                why: "the text ends where a value was expected",
            });
        };
        match c {
            b'{' | b'[' => {
                let object = c == b'{';
                token(if object { Kind::Object } else { Kind::Array }, at, at + 1);
                at = skip_blank(b, at + 1);
                let close = if object { b'}' } else { b']' };
                if b.get(at) == Some(&close) {
                    token(Kind::End, at, at + 1);
                    at += 1;
                } else {
                    open.push(object);
                    if object {
                        at = key(b, at, &mut token)?;
                    }
                    continue;
                }
            }
            b'"' => {
                let end = string(b, at)?;
                token(Kind::String, at, end);
                at = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = number(b, at)?;
                token(Kind::Number, at, end);
                at = end;
            }
            _ => {
                let word = [&b"true"[..], b"false", b"null"]
                    .into_iter()
                    .find(|w| b[at..].starts_with(w))
                    .ok_or(Invalid {
                        at,
                        why: "a value was expected",
                    })?;
                token(Kind::Literal, at, at + word.len());
                at += word.len();
            }
        }
        // After a value: the containers it ends, then a `,` before the next.
        loop {
            let Some(&object) = open.last() else {
                return Ok(at);
            };
            at = skip_blank(b, at);
            match (b.get(at), object) {
                (Some(b','), true) => {
                    at = key(b, skip_blank(b, at + 1), &mut token)?;
                    break;
                }
                (Some(b','), false) => {
                    at += 1;
                    break;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    open.pop();
                    token(Kind::End, at, at + 1);
                    at += 1;
                }
                _ => {
                    return Err(Invalid {
                        at,
                        why: if object {
                            "`,` or `}` was expected"
                        } else {
                            "`,` or `]` was expected"
                        },
                    });
                }
            }
        }
    }
}

/// A key at `at`, and the `:` after it; where its value starts.
fn key(b: &[u8], at: usize, token: &mut impl FnMut(Kind, usize, usize)) -> Result<usize, Invalid> {
    if b.get(at) != Some(&b'"') {
        return Err(Invalid {
            at,
            why: "a key (a string in double quotes) was expected",
        });
    }
    let end = string(b, at)?;
    token(Kind::Key, at, end);
    let colon = skip_blank(b, end);
    if b.get(colon) != Some(&b':') {
        return Err(Invalid {
            at: colon,
            why: "`:` was expected after a key",
        });
    }
    Ok(colon + 1)
}

/// The four hex digits at `b[at..]`, as a number.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0u32, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
}

/// The string at `at` (a `"`); where it ends (after its closing quote).
fn string(b: &[u8], at: usize) -> Result<usize, Invalid> {
    let fail = |at, why| Err(Invalid { at, why });
    let mut i = at + 1;
    loop {
        match b.get(i) {
            None => return fail(at, "a string is not closed"),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match b.get(i + 1) {
                Some(b'u') => {
                    let Some(unit) = hex4(b, i + 2) else {
                        return fail(i, "`\\u` is not followed by four hex digits");
                    };
                    match unit {
                        0xd800..=0xdbff => {
                            let low = (b.get(i + 6..i + 8) == Some(b"\\u"))
                                .then(|| hex4(b, i + 8))
                                .flatten();
                            if !matches!(low, Some(0xdc00..=0xdfff)) {
                                return fail(i, "a lone surrogate escape (a high one, unpaired)");
                            }
                            i += 12;
                        }
                        0xdc00..=0xdfff => {
                            return fail(i, "a lone surrogate escape (a low one, unpaired)");
                        }
                        _ => i += 6,
                    }
                }
                Some(&e) if escaped(e).is_some() => i += 2,
                _ => return fail(i, "an escape JSON does not have"),
            },
            Some(&c) if c < 0x20 => return fail(i, "a control character in a string"),
            Some(_) => i += 1,
        }
    }
}

/// The number at `at`; where it ends.
fn number(b: &[u8], at: usize) -> Result<usize, Invalid> {
    let digits = |mut i: usize| {
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let bad = |i| Invalid {
        at: i,
        why: "a number JSON's grammar does not allow",
    };
    let mut i = at + usize::from(b[at] == b'-');
    i = match b.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits(i).ok_or(bad(i))?,
        _ => return Err(bad(i)),
    };
    if b.get(i) == Some(&b'.') {
        i = digits(i + 1).ok_or(bad(i))?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        i = digits(i + 1 + sign).ok_or(bad(i))?;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Result<Vec<(Kind, &str)>, Invalid> {
        let mut out = Vec::new();
        read(text, |t| out.push((t.kind, &text[t.start..t.end])))?;
        Ok(out)
    }

    #[test]
    fn tokens_keep_their_places_and_strings_read_their_escapes() {
        use Kind::*;
        let text =
            " {\"a\\u0062\" : [1, -2.5e+3, true, null, \"\\ud83d\\ude42\\n\"], \"c\":{}}\n[]";
        assert_eq!(
            tokens(text).unwrap(),
            [
                (Object, "{"),
                (Key, "\"a\\u0062\""),
                (Array, "["),
                (Number, "1"),
                (Number, "-2.5e+3"),
                (Literal, "true"),
                (Literal, "null"),
                (String, "\"\\ud83d\\ude42\\n\""),
                (End, "]"),
                (Key, "\"c\""),
                (Object, "{"),
                (End, "}"),
                (End, "}"),
                (Array, "["),
                (End, "]"),
            ]
        );
        let mut strings = Vec::new();
        read(text, |t| {
            if matches!(t.kind, Key | String) {
                strings.push(unquoted(text, t).into_owned());
            }
        })
        .unwrap();
        assert_eq!(strings, ["ab", "🙂\n", "c"]);
    }

    #[test]
    fn what_strict_json_does_not_allow_is_refused_with_its_place() {
        for (text, at) in [
            ("{\"a\":1,}", 7),
            ("[1,]", 3),
            ("{'a':1}", 1),
            ("[\"\\ud800\"]", 2),
            ("[\"\\udc00\\ud800\"]", 2),
            ("[\"\\ud800\\u0041\"]", 2),
            ("[\"a\tb\"]", 3),
            ("[01]", 2),
            ("[NaN]", 1),
            ("[1] // c", 4),
            ("{\"a\":1}{\"b\":2}", 7),
            ("[1", 2),
            ("", 0),
            ("\u{feff}[]", 0),
            ("[\"\\x\"]", 2),
            ("[1.]", 2),
            ("[+1]", 1),
            ("\u{b}[]", 0),
        ] {
            let e = tokens(text).unwrap_err();
            assert_eq!(e.at, at, "{text:?}: {e}");
        }
    }

    #[test]
    fn nesting_is_read_without_recursion() {
        let depth = 1_000_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut n = 0;
        read(&text, |_| n += 1).unwrap();
        assert_eq!(n, 2 * depth);
        let cut = &text[..text.len() - 1];
        assert_eq!(read(cut, |_| ()).unwrap_err().at, cut.len());
    }

    /// The reader against serde_json's `Value` on mutated documents: strict
    /// JSON either way (serde_json reads one document and nests 128 deep at
    /// most, so neither is generated).
    #[test]
    fn it_accepts_what_serde_json_accepts_and_nothing_else() {
        let seed = fastrand::u64(..);
        let mut rng = fastrand::Rng::with_seed(seed);
        let pieces = [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "\\udc00", "d83d",
            "\\ude42", "0", "-", ".", "e", "+", "1", " ", "\t", "\u{1}", "true", "nul", "\u{e9}",
            "'", "/", "NaN",
        ];
        for _ in 0..20_000 {
            let mut text = String::from(
                [
                    r#"{"a":[1,-0.5e3,true,null,{"b":"c\u00e9\ud83d\ude42"}],"d":{}}"#,
                    r#"[[],[[]],"x\"y",0,1E+2,{"k":false}]"#,
                    r#""just a string""#,
                    "-12.0",
                ][rng.usize(..4)],
            );
            for _ in 0..rng.usize(0..3) {
                let mut at = rng.usize(..=text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                match rng.u8(..3) {
                    0 => text.insert_str(at, pieces[rng.usize(..pieces.len())]),
                    1 => {
                        let mut end = (at + rng.usize(1..4)).min(text.len());
                        while !text.is_char_boundary(end) {
                            end += 1;
                        }
                        text.replace_range(at..end, "");
                    }
                    _ => text.insert(at, ' '),
                }
            }
            let serde = serde_json::from_str::<serde_json::Value>(&text);
            // serde_json refuses numbers past f64's range; JSON's grammar does not.
            if serde
                .as_ref()
                .is_err_and(|e| e.to_string().contains("out of range"))
            {
                continue;
            }
            let ours = read(&text, |_| ());
            assert_eq!(
                ours.is_ok(),
                serde.is_ok(),
                "seed {seed}: {text:?}: {ours:?}"
            );
        }
    }
}
