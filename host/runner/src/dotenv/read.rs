//! Reading a `.env` as azd reads it (godotenv 1.5): the statements, their
//! values and where each one sits in the text.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// One `KEY=value` statement.
#[derive(Debug, Clone)]
pub(super) struct Statement {
    pub(super) key: String,
    pub(super) value: String,
    /// Bytes of `text` from the key (or `export`) to the end of the value.
    pub(super) span: Range<usize>,
    pub(super) export: bool,
}

/// Why a `.env` file cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {what}")]
pub(crate) struct DotEnvError {
    pub(super) line: usize,
    pub(super) what: String,
}

pub(super) fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1
}

/// godotenv's notion of a blank inside a line.
pub(super) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    )
}

/// Bytes of blanks ([`is_space`]) that `s` starts with.
pub(super) fn leading_blanks(s: &str) -> usize {
    s.len() - s.trim_start_matches(is_space).len()
}

/// Bytes of blanks ([`is_space`]) that `s` ends with.
pub(super) fn trailing_blanks(s: &str) -> usize {
    s.len() - s.trim_end_matches(is_space).len()
}

pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn statements(mut self) -> Result<Vec<Statement>, DotEnvError> {
        let mut out: Vec<Statement> = Vec::new();
        let mut seen = BTreeMap::new();
        while self.next_statement() {
            let start = self.pos;
            let (key, export) = self.key()?;
            let value = self.value(&seen)?;
            seen.insert(key.clone(), value.clone());
            out.push(Statement {
                key,
                value,
                span: start..self.pos,
                export,
            });
        }
        Ok(out)
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn error(&self, what: impl Into<String>) -> DotEnvError {
        DotEnvError {
            line: line_of(self.text.as_bytes(), self.pos),
            what: what.into(),
        }
    }

    /// Skips blanks and comment lines; false at the end of the text.
    fn next_statement(&mut self) -> bool {
        loop {
            let skipped = self.rest().len() - self.rest().trim_start().len();
            self.pos += skipped;
            if self.rest().is_empty() {
                return false;
            }
            if !self.rest().starts_with('#') {
                return true;
            }
            match self.rest().find('\n') {
                Some(i) => self.pos += i,
                None => return false,
            }
        }
    }

    /// The key (after an optional `export `), up to and past `=` or `:`.
    fn key(&mut self) -> Result<(String, bool), DotEnvError> {
        let mut export = false;
        if let Some(after) = self.rest().strip_prefix("export")
            && after.starts_with(is_space)
        {
            export = true;
            self.pos += "export".len() + leading_blanks(after);
        }
        for (i, c) in self.rest().char_indices() {
            match c {
                '\n' => break,
                '=' | ':' => {
                    let key = self.rest()[..i].trim_end().to_owned();
                    self.pos += i + 1;
                    self.pos += leading_blanks(self.rest());
                    return Ok((key, export));
                }
                c if is_space(c) || c == '_' || c == '.' || c.is_alphanumeric() => {}
                c => {
                    self.pos += i;
                    return Err(self.error(format!(
                        "unexpected {c:?} in a key: azd expects KEY=value (or a # comment)"
                    )));
                }
            }
        }
        Err(self.error("a key without `=`: azd expects KEY=value"))
    }

    fn value(&mut self, seen: &BTreeMap<String, String>) -> Result<String, DotEnvError> {
        let rest = self.rest();
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
            let line = &rest[..end];
            // An unquoted value ends at a `#` that follows a blank.
            let value_end = line
                .char_indices()
                .skip(1)
                .filter(|&(i, c)| c == '#' && line[..i].chars().next_back().is_some_and(is_space))
                .map(|(i, _)| i)
                .last()
                .unwrap_or(line.len());
            let value = line[..value_end].trim_matches(is_space);
            self.pos += end;
            return Ok(expand_variables(value, seen));
        };
        let bytes = rest.as_bytes();
        let close = (1..bytes.len()).find(|&i| bytes[i] == quote as u8 && bytes[i - 1] != b'\\');
        let Some(close) = close else {
            return Err(self.error(format!("a value opened with {quote} is never closed")));
        };
        let inner = rest[..close].trim_matches(quote);
        self.pos += close + 1;
        Ok(if quote == '"' {
            expand_variables(&expand_escapes(inner), seen)
        } else {
            inner.to_owned()
        })
    }
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
/// none); `\$` and `$(` keep the text after their first character.
fn expand_variables(s: &str, seen: &BTreeMap<String, String>) -> String {
    VARIABLE
        .replace_all(s, |c: &regex::Captures<'_>| {
            if c.get(1).is_some() || c.get(3).is_some() {
                c[0][1..].to_owned()
            } else if let Some(name) = c.get(4) {
                seen.get(name.as_str()).cloned().unwrap_or_default()
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
}
