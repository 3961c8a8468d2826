//! XML 1.0's grammar as the strict reader ([`xml_text`](super::xml_text))
//! checks it where quick-xml leaves it to its callers: the characters a
//! document may hold, names, a tag's attributes, references; and how a
//! parser reads an attribute's value.

use std::collections::HashSet;
use std::ops::Range;

/// An attribute of a tag: its name, and its value between the quotes
/// (references unread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Attribute {
    pub(super) name: Range<usize>,
    pub(super) value: Range<usize>,
}

/// An attribute's value as a parser reads it (one [`read`](super::xml_text::read) gave: its
/// references are valid): references read, each blank written as it stands
/// (a line end among them) read as a space.
pub(super) fn attribute_value(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(c) = rest.chars().next() {
        let mut len = c.len_utf8();
        match c {
            '&' => {
                let end = rest.find(';');
                match end.and_then(|e| rest.get(1..e)).and_then(reference) {
                    Some(c) => {
                        out.push(c);
                        len = end.map_or(len, |e| e + 1);
                    }
                    None => out.push('&'),
                }
            }
            '\r' if rest.starts_with("\r\n") => {
                out.push(' ');
                len = 2;
            }
            '\t' | '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
        rest = &rest[len..];
    }
    out
}

/// `raw` with its line ends (`\r\n`, `\r`) read as `\n`.
pub(super) fn line_ends(raw: &str) -> String {
    raw.replace("\r\n", "\n").replace('\r', "\n")
}

/// The character a reference's name stands for (`amp`, `#65`, `#x41`), if
/// it is one XML knows and stands for a character XML allows.
pub(super) fn reference(name: &str) -> Option<char> {
    let number = |digits: &str, radix: u32| {
        let ok = (1..=8).contains(&digits.len()) && digits.chars().all(|c| c.is_digit(radix));
        ok.then(|| u32::from_str_radix(digits, radix).ok())
            .flatten()
            .and_then(char::from_u32)
            .filter(|&c| is_char(c))
    };
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => match name.strip_prefix("#x") {
            Some(hex) => number(hex, 16),
            None => number(name.strip_prefix('#')?, 10),
        },
    }
}

/// A character XML 1.0 allows in a document.
pub(super) fn is_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// XML's blanks: space, tab, line feed, carriage return.
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A character a name may start with (XML 1.0, fifth edition: NameStartChar).
fn is_name_start(c: char) -> bool {
    matches!(c,
        ':' | 'A'..='Z' | '_' | 'a'..='z' | '\u{c0}'..='\u{d6}' | '\u{d8}'..='\u{f6}'
        | '\u{f8}'..='\u{2ff}' | '\u{370}'..='\u{37d}' | '\u{37f}'..='\u{1fff}'
        | '\u{200c}'..='\u{200d}' | '\u{2070}'..='\u{218f}' | '\u{2c00}'..='\u{2fef}'
        | '\u{3001}'..='\u{d7ff}' | '\u{f900}'..='\u{fdcf}' | '\u{fdf0}'..='\u{fffd}'
        | '\u{10000}'..='\u{effff}')
}

/// A character a name may hold after its first (NameChar).
fn is_name_char(c: char) -> bool {
    is_name_start(c)
        || matches!(c, '-' | '.' | '0'..='9' | '\u{b7}' | '\u{300}'..='\u{36f}' | '\u{203f}'..='\u{2040}')
}

/// Where the name at `text[at..to]` ends, if one starts there.
pub(super) fn name_end(text: &str, at: usize, to: usize) -> Option<usize> {
    let s = text.get(at..to)?;
    let mut chars = s.char_indices();
    if !chars.next().is_some_and(|(_, c)| is_name_start(c)) {
        return None;
    }
    let len = chars
        .find(|&(_, c)| !is_name_char(c))
        .map_or(s.len(), |(i, _)| i);
    Some(at + len)
}

/// `at`, past the blanks before `to`.
pub(super) fn skip_blank(b: &[u8], mut at: usize, to: usize) -> usize {
    while at < to && b.get(at).copied().is_some_and(is_blank) {
        at += 1;
    }
    at
}

/// A failure: where, and why.
pub(super) type Fail = (usize, String);

pub(super) fn fail<T>(at: usize, why: &str) -> Result<T, Fail> {
    Err((at, why.to_owned()))
}

/// The attributes of `text[from..to]` (what follows a tag's name, or the
/// `xml` of a declaration): each after a blank, `name = "value"`, none
/// named twice, every value free of `<` and its `&`s references.
pub(super) fn attributes(text: &str, from: usize, to: usize) -> Result<Vec<Attribute>, Fail> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut names = HashSet::new();
    let mut at = from;
    loop {
        let start = skip_blank(b, at, to);
        if start == to {
            return Ok(out);
        }
        if start == at {
            return fail(at, "an attribute with no blank before it");
        }
        let Some(end) = name_end(text, start, to) else {
            return fail(start, "an attribute name XML's grammar does not allow");
        };
        let eq = skip_blank(b, end, to);
        if b.get(eq) != Some(&b'=') || eq >= to {
            return fail(eq, "`=` was expected after an attribute's name");
        }
        let open = skip_blank(b, eq + 1, to);
        let Some(&quote @ (b'"' | b'\'')) = b.get(open).filter(|_| open < to) else {
            return fail(open, "an attribute value not in quotes");
        };
        let Some(len) = b[open + 1..to].iter().position(|&c| c == quote) else {
            return fail(open, "an attribute value is not closed");
        };
        let value = open + 1..open + 1 + len;
        value_is_text(text, &value)?;
        if !names.insert(&text[start..end]) {
            return fail(start, "an attribute named twice in one tag");
        }
        out.push(Attribute {
            name: start..end,
            value: value.clone(),
        });
        at = value.end + 1;
    }
}

/// Whether an attribute's value holds only what one may: no `<`, and each
/// `&` a reference XML knows.
fn value_is_text(text: &str, value: &Range<usize>) -> Result<(), Fail> {
    let raw = &text[value.clone()];
    if let Some(i) = raw.find('<') {
        return fail(value.start + i, "a `<` in an attribute value");
    }
    let mut from = 0;
    while let Some(i) = raw[from..].find('&').map(|i| from + i) {
        let known = raw[i..]
            .find(';')
            .and_then(|end| reference(&raw[i + 1..i + end]).map(|_| i + end + 1));
        let Some(next) = known else {
            return fail(value.start + i, "an `&` that is no reference XML knows");
        };
        from = next;
    }
    Ok(())
}

/// The encodings a declaration may name: those that read the ASCII bytes
/// of a UTF-8 body as ASCII (so that markup, names and known values read as
/// they stand).
pub(super) const ASCII_ENCODINGS: [&str; 9] = [
    "utf-8",
    "utf8",
    "us-ascii",
    "ascii",
    "iso-8859-1",
    "latin1",
    "iso-8859-15",
    "windows-1252",
    "cp1252",
];
