//! Reading a `.env` as azd 1.31.2 reads it (godotenv v1.5.1), over bytes, so
//! that the statements found, where each one ends and the next one starts,
//! are godotenv's own for any input: invalid UTF-8, lone carriage returns,
//! `export` followed by a tab, a second statement after a closing quote, a
//! file of any size.
//!
//! The parts of godotenv's reader that decide *names* work on bytes or on
//! runes decoded as Go decodes them (an invalid byte is one U+FFFD), and this
//! port keeps each one's unit: statements start after Unicode white space, a
//! key is scanned byte by byte with each byte taken as a Latin-1 character
//! (so a multi-byte letter is accepted or refused byte by byte, as Go does),
//! a quoted value ends at the first quote not preceded by a backslash, an
//! unquoted one at the first `\n` or `\r`. Values are then unescaped and
//! expanded on text; a value holding invalid UTF-8 reads here with U+FFFD
//! where Go keeps the byte (no name depends on it).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// One `KEY=value` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The key, as godotenv reads it (inner blanks kept, trailing white space
    /// trimmed), as text (a byte that is not UTF-8 read as U+FFFD).
    pub key: String,
    /// The key's bytes, as godotenv hands them to the variable it sets.
    pub key_bytes: Vec<u8>,
    /// The value, unquoted, unescaped and expanded.
    pub value: String,
    /// Bytes of the text read from the key (or `export`) to the end of the value.
    pub span: Range<usize>,
    /// Whether the statement starts with `export` and a blank.
    pub export: bool,
}

/// Why a `.env` cannot be read: godotenv's error, with the line it is on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct DotEnvError {
    /// The line (from 1) of the text read.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// What a read found: every statement before the end or before the first
/// error, and that error. azd refuses the whole file on an error; the
/// statements before it are what godotenv had read by then.
#[derive(Debug, Clone, Default)]
pub struct Read {
    /// The statements, in file order (a key may appear twice: the last wins).
    pub statements: Vec<Statement>,
    /// Why reading stopped early, if it did.
    pub error: Option<DotEnvError>,
}

impl Read {
    /// The statements, or the error.
    pub fn into_result(self) -> Result<Vec<Statement>, DotEnvError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.statements),
        }
    }
}

/// Reads `bytes` as godotenv does: `\r\n` becomes `\n` first, then the
/// statements are read (their spans are into that normalised text).
pub fn read(bytes: &[u8]) -> Read {
    read_normalised(&crlf_to_lf(bytes))
}

/// `\r\n` as `\n`, as godotenv replaces it before reading.
pub fn crlf_to_lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Reads text whose `\r\n` were already made `\n`.
pub fn read_normalised(src: &[u8]) -> Read {
    read_with(src, Values::Read)
}

/// Whether a read works out the values, or only where each one ends (all a
/// reader of names needs: no value decides where a statement ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Values {
    Read,
    Skip,
}

pub(super) fn read_with(src: &[u8], values: Values) -> Read {
    let mut out = Read::default();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut pos = 0;
    while let Some(start) = statement_start(src, pos) {
        let (key_bytes, export, after_key) = match locate_key(src, start) {
            Ok(k) => k,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        let key = String::from_utf8_lossy(&key_bytes).into_owned();
        let (value, end) = match extract_value(src, after_key, &seen, values) {
            Ok(v) => v,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        if values == Values::Read {
            seen.insert(key.clone(), value.clone());
        }
        out.statements.push(Statement {
            key,
            key_bytes,
            value,
            span: start..end,
            export,
        });
        pos = end;
    }
    out
}

/// The line (from 1) of byte `at`.
pub fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// `bytes` without the white space it ends with, rune by rune from the end as
/// Go's `strings.TrimRightFunc(_, unicode.IsSpace)` takes them off (a byte
/// that is not UTF-8 is no space).
fn trim_end_space(mut bytes: &[u8]) -> &[u8] {
    'trim: loop {
        for width in 1..=bytes.len().min(4) {
            let tail = &bytes[bytes.len() - width..];
            if let Ok(s) = std::str::from_utf8(tail)
                && s.chars().count() == 1
            {
                if s.chars().all(char::is_whitespace) {
                    bytes = &bytes[..bytes.len() - width];
                    continue 'trim;
                }
                return bytes;
            }
        }
        return bytes;
    }
}

/// godotenv's blank inside a line (`isSpace`): tab, vertical tab, form feed,
/// carriage return, space, U+0085 and U+00A0. Not a line feed.
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    )
}

/// The rune at the start of `bytes` and its width, decoded as Go decodes
/// (an invalid byte is U+FFFD, one byte wide); `None` at the end.
fn rune(bytes: &[u8]) -> Option<(char, usize)> {
    let head = &bytes[..bytes.len().min(4)];
    if head.is_empty() {
        return None;
    }
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    Some(
        valid
            .chars()
            .next()
            .map_or((char::REPLACEMENT_CHARACTER, 1), |c| (c, c.len_utf8())),
    )
}

/// Bytes of the runes at the start of `bytes` for which `f` holds.
fn leading(bytes: &[u8], f: impl Fn(char) -> bool) -> usize {
    let mut at = 0;
    while let Some((c, width)) = rune(&bytes[at..]) {
        if !f(c) {
            break;
        }
        at += width;
    }
    at
}

/// Bytes of blanks ([`is_space`]) that `bytes` starts with.
pub fn leading_blanks(bytes: &[u8]) -> usize {
    leading(bytes, is_space)
}

/// Bytes of blanks ([`is_space`]) that `s` ends with.
pub fn trailing_blanks(s: &str) -> usize {
    s.len() - s.trim_end_matches(is_space).len()
}

/// Where the next statement starts at or after `pos`, skipping white space
/// (Unicode's) and comment lines; `None` at the end (`getStatementStart`).
fn statement_start(src: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        pos += leading(&src[pos..], char::is_whitespace);
        if pos >= src.len() {
            return None;
        }
        if src[pos] != b'#' {
            return Some(pos);
        }
        pos += src[pos..].iter().position(|&b| b == b'\n')?;
    }
}

/// The byte `b` as Go's `rune(b)`: a Latin-1 character.
fn latin1(b: u8) -> char {
    char::from(b)
}

/// The key from `pos`, after an optional `export` and blanks, up to and past
/// `=` or `:` and the blanks after it (`locateKeyName`). A text that ends
/// before any `=` has the empty key, and its value starts where the key
/// would have.
fn locate_key(src: &[u8], mut pos: usize) -> Result<(Vec<u8>, bool, usize), DotEnvError> {
    pos += leading_blanks(&src[pos..]);
    let mut export = false;
    if src[pos..].starts_with(b"export") {
        let after = pos + "export".len();
        if rune(&src[after..]).is_some_and(|(c, _)| is_space(c)) {
            export = true;
            pos = after + leading_blanks(&src[after..]);
        }
    }
    let mut key_end = None;
    for (i, &b) in src[pos..].iter().enumerate() {
        let c = latin1(b);
        if is_space(c) {
            continue;
        }
        match b {
            b'=' | b':' => {
                key_end = Some(i);
                break;
            }
            b'_' | b'.' => {}
            _ if c.is_alphanumeric() => {}
            _ => {
                let what = if b == b'\n' {
                    "a key without `=`: azd expects KEY=value".to_owned()
                } else {
                    format!("unexpected {c:?} in a key: azd expects KEY=value (or a # comment)")
                };
                return Err(DotEnvError {
                    line: line_of(src, pos + i),
                    what,
                });
            }
        }
    }
    if pos >= src.len() {
        return Err(DotEnvError {
            line: line_of(src, pos),
            what: "an empty statement".into(),
        });
    }
    let (key, after) = match key_end {
        Some(i) => (trim_end_space(&src[pos..pos + i]).to_vec(), pos + i + 1),
        None => (Vec::new(), pos),
    };
    Ok((key, export, after + leading_blanks(&src[after..])))
}

/// The value from `pos` and where it ends (`extractVarValue`).
fn extract_value(
    src: &[u8],
    pos: usize,
    seen: &BTreeMap<String, String>,
    values: Values,
) -> Result<(String, usize), DotEnvError> {
    let rest = &src[pos..];
    let Some(&quote) = rest.first().filter(|&&b| b == b'"' || b == b'\'') else {
        let end = rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        if values == Values::Skip {
            return Ok((String::new(), pos + end));
        }
        let line: Vec<char> = String::from_utf8_lossy(&rest[..end]).chars().collect();
        // An unquoted value ends at the last `#` that follows a blank.
        let value_end = (1..line.len())
            .rev()
            .find(|&i| line[i] == '#' && is_space(line[i - 1]))
            .unwrap_or(line.len());
        let value: String = line[..value_end].iter().collect();
        return Ok((
            expand_variables(value.trim_matches(is_space), seen),
            pos + end,
        ));
    };
    let close = (1..rest.len()).find(|&i| rest[i] == quote && rest[i - 1] != b'\\');
    let Some(close) = close else {
        return Err(DotEnvError {
            line: line_of(src, pos),
            what: format!("a value opened with {} is never closed", char::from(quote)),
        });
    };
    if values == Values::Skip {
        return Ok((String::new(), pos + close + 1));
    }
    let mut inner = &rest[..close];
    while let [q, tail @ ..] = inner
        && *q == quote
    {
        inner = tail;
    }
    while let [head @ .., q] = inner
        && *q == quote
    {
        inner = head;
    }
    let inner = String::from_utf8_lossy(inner);
    let value = if quote == b'"' {
        expand_variables(&expand_escapes(&inner), seen)
    } else {
        inner.into_owned()
    };
    Ok((value, pos + close + 1))
}

static ESCAPE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\.").expect("valid regex"));
static UNESCAPE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\([^$])").expect("valid regex"));
static VARIABLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\\)?(\$)(\()?\{?([A-Z0-9_]+)?\}?").expect("valid regex"));

/// `\n` and `\r` become line breaks, then `\X` becomes `X` (except `\$`).
fn expand_escapes(s: &str) -> String {
    let once = ESCAPE.replace_all(s, |c: &regex::Captures<'_>| match &c[0] {
        "\\n" => "\n".to_owned(),
        "\\r" => "\r".to_owned(),
        other => other.to_owned(),
    });
    UNESCAPE.replace_all(&once, "$1").into_owned()
}

/// `$KEY` and `${KEY}` become the value of an earlier key (empty when there is
/// none); `\$` keeps the text after its backslash. (godotenv means `$(` to be
/// kept too, but its test looks at the `$` group, so `$(KEY` expands: so
/// here.)
fn expand_variables(s: &str, seen: &BTreeMap<String, String>) -> String {
    VARIABLE
        .replace_all(s, |c: &regex::Captures<'_>| {
            if c.get(1).is_some() {
                c[0][1..].to_owned()
            } else if let Some(name) = c.get(4) {
                seen.get(name.as_str()).cloned().unwrap_or_default()
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
}
