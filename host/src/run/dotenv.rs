//! azd's `.env` file (`.azure/<env>/.env`), read as azd reads it and edited
//! without losing anything.
//!
//! **Reading** follows the parser azd uses (godotenv 1.5): statements are
//! `KEY=value` or `KEY: value`, optionally after `export `; `#` starts a
//! comment line, and an unquoted value ends at ` #`; a value in single quotes
//! is taken as written, one in double quotes may span lines and has its
//! escapes (`\n`, `\r`, `\"`, `\\`, `\$`, …) undone; unquoted and
//! double-quoted values expand `$KEY`/`${KEY}` from keys earlier in the file.
//! A file azd could not read (a statement without `=`, an unterminated quote,
//! text that is not UTF-8) is refused with its line number, before anything
//! runs.
//!
//! **Writing** changes only what changed: a new value replaces its own
//! statement, a removed key loses its statement (and its line when nothing
//! else is left on it), new keys are appended in key order. Comments, blank
//! lines, `export` prefixes, the quoting of untouched values and the file's
//! line endings stay as they were. A value is written the way azd writes one
//! (an integer bare, anything else double-quoted with `\ " ! $ `` ` escaped and
//! line breaks as `\n`/`\r`), so azd reads back exactly the value set.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::ops::Range;
use std::path::Path;
use std::sync::LazyLock;

use anyhow::Context as _;
use regex::Regex;

/// A `.env` file: its text and the statements found in it.
#[derive(Debug, Default, Clone)]
pub(super) struct DotEnv {
    /// The text, with `\r\n` read as `\n` (see `crlf`).
    text: String,
    /// Every statement, in file order (a key may appear twice: the last wins).
    statements: Vec<Statement>,
    /// The file used `\r\n` line endings; they are written back.
    crlf: bool,
}

#[derive(Debug, Clone)]
struct Statement {
    key: String,
    value: String,
    /// Bytes of `text` from the key (or `export`) to the end of the value.
    span: Range<usize>,
    export: bool,
}

/// Why a `.env` file cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {what}")]
pub(super) struct DotEnvError {
    line: usize,
    what: String,
}

impl DotEnv {
    /// Reads `path` (an absent file is empty).
    pub(super) fn load(path: &Path) -> anyhow::Result<Self> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Self::parse_bytes(&bytes).with_context(|| {
            format!(
                "{} cannot be read as azd reads it; fix that line (nothing was run)",
                path.display()
            )
        })
    }

    /// Parses `.env` bytes.
    pub(super) fn parse_bytes(bytes: &[u8]) -> Result<Self, DotEnvError> {
        let text = std::str::from_utf8(bytes).map_err(|e| DotEnvError {
            line: line_of(bytes, e.valid_up_to()),
            what: "not UTF-8 text (azd's extension protocol carries text only)".into(),
        })?;
        Self::parse(text)
    }

    /// Parses `.env` text.
    pub(super) fn parse(text: &str) -> Result<Self, DotEnvError> {
        let crlf = text.contains("\r\n");
        let text = text.replace("\r\n", "\n");
        let statements = Parser {
            text: &text,
            pos: 0,
        }
        .statements()?;
        Ok(Self {
            text,
            statements,
            crlf,
        })
    }

    /// Every key and its value, as azd sees them (a later statement wins).
    pub(super) fn values(&self) -> BTreeMap<String, String> {
        self.statements
            .iter()
            .map(|s| (s.key.clone(), s.value.clone()))
            .collect()
    }

    /// A value.
    #[cfg(test)]
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        let s = self.statements.iter().rev().find(|s| s.key == key)?;
        Some(&s.value)
    }

    /// Sets `key` to `value`: its statement is rewritten in place, or a new one
    /// is appended. Fails, changing nothing, for the rare value azd's reader
    /// cannot read back in any notation (it ends in a backslash and needs
    /// quotes).
    pub(super) fn set(&mut self, key: &str, value: &str) -> Result<(), UnwritableValue> {
        let index = self.statements.iter().rposition(|s| s.key == key);
        if index.is_some_and(|i| self.statements[i].value == value) {
            return Ok(());
        }
        let line = assignment(key, value).ok_or_else(|| UnwritableValue(key.to_owned()))?;
        match index {
            Some(i) => {
                let s = &self.statements[i];
                let prefix = if s.export { "export " } else { "" };
                self.splice(s.span.clone(), &format!("{prefix}{line}"));
            }
            None => {
                if !self.text.is_empty() && !self.text.ends_with('\n') {
                    self.text.push('\n');
                }
                self.text.push_str(&line);
                self.text.push('\n');
            }
        }
        self.reparse();
        Ok(())
    }

    /// Removes every statement of `key`.
    pub(super) fn remove(&mut self, key: &str) {
        while let Some(s) = self.statements.iter().rev().find(|s| s.key == key) {
            let span = whole_line_if_alone(&self.text, s.span.clone());
            self.splice(span, "");
            self.reparse();
        }
    }

    /// The file text.
    pub(super) fn render(&self) -> String {
        if self.crlf {
            self.text.replace('\n', "\r\n")
        } else {
            self.text.clone()
        }
    }

    /// Writes the file atomically (a sibling temporary file renamed over it).
    pub(super) fn save(&self, path: &Path) -> anyhow::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("writing {}", path.display()))?;
        tmp.write_all(self.render().as_bytes())?;
        tmp.persist(path)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    fn splice(&mut self, span: Range<usize>, with: &str) {
        self.text.replace_range(span, with);
    }

    /// Finds the statements again after an edit. The text only ever holds
    /// statements this module wrote or read, so it parses.
    fn reparse(&mut self) {
        match (Parser {
            text: &self.text,
            pos: 0,
        })
        .statements()
        {
            Ok(s) => self.statements = s,
            Err(e) => unreachable!("an edited .env no longer parses: {e}"),
        }
    }
}

/// `KEY=value` as azd writes it (an integer bare when it reads back the same,
/// anything else double-quoted and escaped) when azd reads that back as
/// `value`; else single-quoted or bare, whichever reads back; `None` when no
/// notation does (azd's reader ends no quoted value at a backslash, and takes
/// `"` next to the closing quote as part of it).
fn assignment(key: &str, value: &str) -> Option<String> {
    let azd = if is_go_int(value) {
        format!("{key}={value}")
    } else {
        let mut out = String::with_capacity(key.len() + value.len() + 3);
        out.push_str(key);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\\' | '"' | '!' | '$' | '`' => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    let single = format!("{key}='{value}'");
    let bare = format!("{key}={value}");
    let reads_back = |line: &String| {
        DotEnv::parse(&format!("{line}\n")).is_ok_and(|d| {
            d.statements.len() == 1 && d.statements[0].key == key && d.statements[0].value == value
        })
    };
    // Bare text would expand `$NAME` from the keys above it: never bare then.
    let bare_allowed = !value.contains('$');
    [(azd, true), (single, true), (bare, bare_allowed)]
        .into_iter()
        .find(|(line, allowed)| *allowed && reads_back(line))
        .map(|(line, _)| line)
}

/// A value no `.env` notation carries back to azd unchanged.
#[derive(Debug, thiserror::Error)]
#[error(
    "the value of {0} cannot be written to .env so that azd reads it back unchanged \
     (azd's .env reader cannot end a quoted value with a backslash)"
)]
pub(super) struct UnwritableValue(String);

/// A value Go's `strconv.Atoi` reads, and prints back unchanged (azd writes
/// those bare; `+1` or `007` are quoted so they keep their text).
fn is_go_int(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && v != "-0"
        && v.parse::<i64>().is_ok()
}

/// `span` widened to its whole line (with the line break) when nothing but
/// blanks shares the line with it.
fn whole_line_if_alone(text: &str, span: Range<usize>) -> Range<usize> {
    let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[span.end..]
        .find('\n')
        .map_or(text.len(), |i| span.end + i + 1);
    let blank = |s: &str| s.chars().all(|c| c == ' ' || c == '\t' || c == '\n');
    if blank(&text[start..span.start]) && blank(&text[span.end..end]) {
        start..end
    } else {
        span
    }
}

fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1
}

/// godotenv's notion of a blank inside a line.
fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    )
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn statements(mut self) -> Result<Vec<Statement>, DotEnvError> {
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
            self.pos += "export".len() + (after.len() - after.trim_start_matches(is_space).len());
        }
        for (i, c) in self.rest().char_indices() {
            match c {
                '\n' => break,
                '=' | ':' => {
                    let key = self.rest()[..i].trim_end().to_owned();
                    self.pos += i + 1;
                    let blanks = self.rest().len() - self.rest().trim_start_matches(is_space).len();
                    self.pos += blanks;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> DotEnv {
        DotEnv::parse(text).unwrap()
    }

    #[test]
    fn reads_the_forms_azd_reads() {
        let d = parse(concat!(
            "# a comment\n",
            "export EXPORTED=bar\n",
            "PLAIN = spaced value   # trailing comment\n",
            "HASH=a#b\n",
            "SINGLE='raw $PLAIN \\n'\n",
            "MULTI=\"line one\n",
            "line two\"\n",
            "ESCAPED=\"tab\\tq\\\"uote\\\\ \\$NOT \\n\"\n",
            "YAML: style\n",
            "REF=\"${PLAIN}!\"\n",
            "MISSING=$NOPE.\n",
            "EMPTY=\n",
            "DUP=1\n",
            "DUP=2\n",
        ));
        assert_eq!(d.get("EXPORTED"), Some("bar"));
        assert_eq!(d.get("PLAIN"), Some("spaced value"));
        assert_eq!(d.get("HASH"), Some("a#b"));
        assert_eq!(d.get("SINGLE"), Some("raw $PLAIN \\n"));
        assert_eq!(d.get("MULTI"), Some("line one\nline two"));
        assert_eq!(d.get("ESCAPED"), Some("tabtq\"uote\\ $NOT \n"));
        assert_eq!(d.get("YAML"), Some("style"));
        assert_eq!(d.get("REF"), Some("spaced value!"));
        assert_eq!(d.get("MISSING"), Some("."));
        assert_eq!(d.get("EMPTY"), Some(""));
        assert_eq!(d.get("DUP"), Some("2"));
        assert_eq!(d.values().len(), 11);
    }

    #[test]
    fn refuses_what_azd_cannot_read_and_names_the_line() {
        for (text, line, what) in [
            ("A=1\nNOEQUALS\n", 2, "expects KEY=value"),
            ("A=1\n\nB=\"open\n", 3, "never closed"),
            ("A=1\nB-C=2\n", 2, "unexpected '-'"),
        ] {
            let e = DotEnv::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(what), "{text:?}: {e}");
        }
        let e = DotEnv::parse_bytes(b"A=1\nB=\xff\xfe\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("UTF-8"), "{e}");
    }

    #[test]
    fn an_edit_keeps_everything_it_does_not_touch() {
        let original = concat!(
            "# managed by hand\n",
            "export FOO=bar\n",
            "\n",
            "KEEP='single'   # why it is kept\n",
            "OLD=\"first\n",
            "second\"\n",
            "GONE=1\n",
            "TAIL=x",
        );
        let mut d = parse(original);
        d.set("KEEP", "single").unwrap(); // unchanged value: untouched text
        d.set("FOO", "new value").unwrap();
        d.set("OLD", "replaced").unwrap();
        d.remove("GONE");
        d.set("ADDED_B", "2").unwrap();
        d.set("ADDED_A", "$HOME").unwrap();
        assert_eq!(
            d.render(),
            concat!(
                "# managed by hand\n",
                "export FOO=\"new value\"\n",
                "\n",
                "KEEP='single'   # why it is kept\n",
                "OLD=\"replaced\"\n",
                "TAIL=x\n",
                "ADDED_B=2\n",
                "ADDED_A=\"\\$HOME\"\n",
            )
        );
        let back = parse(&d.render());
        assert_eq!(back.get("FOO"), Some("new value"));
        assert_eq!(back.get("ADDED_A"), Some("$HOME"));
        assert_eq!(back.get("GONE"), None);
    }

    #[test]
    fn every_value_reads_back_as_written() {
        let awkward = [
            "",
            "0",
            "-12",
            "007",
            "+1",
            "-0",
            "99999999999999999999",
            "plain",
            "two words",
            "tab\there",
            "line1\nline2\r\n",
            "\"quoted\"",
            "'single'",
            "back\\slash",
            "\\n literal",
            "$HOME ${HOME} $(cmd) \\$",
            "bang! `tick`",
            "# not a comment",
            "trailing space ",
            " leading",
            "ünïcödé ✓",
            "a\\\"b",
            "=",
            "x: y",
            // azd's own notation does not read these back: other notations do.
            "\"ends in a quote\"",
            "C:\\dir\\",
            "a b\\",
        ];
        let mut d = parse("");
        for (i, v) in awkward.iter().enumerate() {
            d.set(&format!("K{i}"), v).unwrap();
        }
        let back = parse(&d.render());
        for (i, v) in awkward.iter().enumerate() {
            assert_eq!(back.get(&format!("K{i}")), Some(*v), "value {v:?}");
        }
        assert!(d.render().contains("K2=-12\n"), "{}", d.render());
        assert!(d.render().contains("K3=\"007\"\n"), "{}", d.render());
    }

    #[test]
    fn a_value_no_notation_carries_is_refused_and_changes_nothing() {
        let mut d = parse("A=1\n");
        let e = d.set("BAD", " needs quotes\\").unwrap_err();
        assert!(e.to_string().contains("BAD"), "{e}");
        d.set("A", "'starts with a quote\\").unwrap_err();
        assert_eq!(d.render(), "A=1\n");
    }

    #[test]
    fn removing_a_key_drops_every_copy_and_keeps_its_neighbours() {
        let mut d = parse("A=1\nB=2 # note\nA=3\nC=\"x\" D=4\n");
        d.remove("A");
        assert_eq!(d.render(), "B=2 # note\nC=\"x\" D=4\n");
        d.remove("D");
        assert_eq!(d.get("C"), Some("x"));
        assert_eq!(d.get("D"), None);
    }

    #[test]
    fn windows_line_endings_are_kept() {
        let mut d = parse("A=1\r\nB=\"two\r\nlines\"\r\n");
        assert_eq!(d.get("B"), Some("two\nlines"));
        d.set("C", "3").unwrap();
        assert_eq!(d.render(), "A=1\r\nB=\"two\r\nlines\"\r\nC=3\r\n");
    }
}
