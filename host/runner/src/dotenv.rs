//! azd's `.env` file (`.azure/<env>/.env`), read as azd reads it and edited
//! without losing anything.
//!
//! **Reading** is the workspace's one `.env` reader
//! (`azd_wasm_host_core::dotenv`, held to godotenv v1.5.1 itself by a
//! differential test), which follows the parser azd uses: statements are
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

use anyhow::Context as _;
pub(super) use azd_wasm_host_core::dotenv::DotEnvError;
use azd_wasm_host_core::dotenv::{Statement, leading_blanks, line_of, trailing_blanks};

/// A `.env` file: its text and the statements found in it.
#[derive(Debug, Default, Clone)]
pub struct DotEnv {
    /// The text, with `\r\n` read as `\n` (see `crlf`).
    text: String,
    /// Every statement, in file order (a key may appear twice: the last wins).
    statements: Vec<Statement>,
    /// The file used `\r\n` line endings; they are written back.
    crlf: bool,
}

impl DotEnv {
    /// Reads `path` (an absent file is empty).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
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
        let statements =
            azd_wasm_host_core::dotenv::read_normalised(text.as_bytes()).into_result()?;
        Ok(Self {
            text,
            statements,
            crlf,
        })
    }

    /// Every key and its value, as azd sees them (a later statement wins).
    pub fn values(&self) -> BTreeMap<String, String> {
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
    ///
    /// Every candidate is checked in place, in the whole file: the edit must
    /// leave every other statement with its own text, and the key with
    /// `value`. (A statement may follow a quoted value on its line, so a bare
    /// replacement there would swallow it: then a line break goes after it.)
    pub(super) fn set(&mut self, key: &str, value: &str) -> Result<(), UnwritableValue> {
        let index = self.statements.iter().rposition(|s| s.key == key);
        if index.is_some_and(|i| self.statements[i].value == value) {
            return Ok(());
        }
        // Where the statement may go, and what goes before and after it there.
        let places = match index {
            Some(i) => {
                let s = &self.statements[i];
                let prefix = if s.export { "export " } else { "" };
                let rest = &self.text[s.span.end..];
                let blanks = leading_blanks(rest.as_bytes());
                let mut places = vec![(s.span.clone(), prefix, "")];
                if !rest[blanks..].is_empty() && !rest[blanks..].starts_with('\n') {
                    // What follows on the line moves to a line of its own.
                    places.push((s.span.start..s.span.end + blanks, prefix, "\n"));
                }
                places
            }
            None => {
                let end = self.text.len();
                let open = !self.text.is_empty() && !self.text.ends_with('\n');
                vec![(end..end, if open { "\n" } else { "" }, "\n")]
            }
        };
        let edited = notations(key, value).iter().find_map(|line| {
            places.iter().find_map(|(span, before, after)| {
                self.edited(
                    span.clone(),
                    &format!("{before}{line}{after}"),
                    Some((key, value)),
                )
            })
        });
        *self = edited.ok_or_else(|| UnwritableValue(key.to_owned()))?;
        Ok(())
    }

    /// Removes every statement of `key` (its whole line when nothing else is
    /// on it). Fails, changing nothing, if no cut leaves its neighbours as they
    /// were (none is known: the check stands in for a proof).
    pub(super) fn remove(&mut self, key: &str) -> Result<(), UnremovableKey> {
        let mut edited = self.clone();
        while let Some(i) = edited.statements.iter().rposition(|s| s.key == key) {
            let span = edited.statements[i].span.clone();
            let line = whole_line_if_alone(&edited.text, span.clone());
            let before = &edited.text[..span.start];
            // A lone `\r` before it must not meet the line break after it:
            // the blanks before it go too, or (when they end the statement
            // before) a blank stands in for it.
            let with_blanks = span.start - trailing_blanks(before)..span.end;
            edited = [
                (line, ""),
                (span.clone(), ""),
                (with_blanks, ""),
                (span.clone(), " "),
                (span, "\n"),
            ]
            .into_iter()
            .find_map(|(span, with)| edited.edited(span, with, None))
            .ok_or_else(|| UnremovableKey(key.to_owned()))?;
        }
        *self = edited;
        Ok(())
    }

    /// The file with `span` replaced by `with`, when it still reads as the
    /// same statements, each with its own text: those before `span`, then
    /// `key = value` when `new` is given, then those after `span` (the ones
    /// inside it are gone).
    fn edited(&self, span: Range<usize>, with: &str, new: Option<(&str, &str)>) -> Option<Self> {
        let mut text = self.text.clone();
        text.replace_range(span.clone(), with);
        // Judged as it will be read: written out and read back (a `\r` next
        // to a line break would read as a line ending).
        let spliced = Self {
            text,
            statements: Vec::new(),
            crlf: self.crlf,
        };
        let after = Self::parse(&spliced.render()).ok()?;
        if after.crlf != self.crlf && !after.text.is_empty() {
            return None;
        }
        let mut now = after.statements.iter();
        let same = |old: &Statement, now: Option<&Statement>| {
            now.is_some_and(|s| {
                s.key == old.key && after.text[s.span.clone()] == self.text[old.span.clone()]
            })
        };
        for old in self.statements.iter().filter(|s| s.span.end <= span.start) {
            if !same(old, now.next()) {
                return None;
            }
        }
        if let Some((key, value)) = new
            && !now.next().is_some_and(|s| s.key == key && s.value == value)
        {
            return None;
        }
        for old in self.statements.iter().filter(|s| s.span.start >= span.end) {
            if !same(old, now.next()) {
                return None;
            }
        }
        now.next().is_none().then_some(after)
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
}

/// The ways to write `KEY=value`, best first: as azd writes it (an integer
/// bare when it prints back the same, anything else double-quoted and
/// escaped); single-quoted; bare, unless the value holds a `$` (bare text
/// expands `$NAME` from the keys above it). azd's reader ends no quoted value
/// at a backslash and takes a `"` next to the closing quote as part of the
/// value, so a caller keeps the first one that reads back.
fn notations(key: &str, value: &str) -> Vec<String> {
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
    let mut all = vec![azd, format!("{key}='{value}'")];
    if !value.contains('$') {
        all.push(format!("{key}={value}"));
    }
    all
}

/// A value no `.env` notation carries back to azd unchanged.
#[derive(Debug, thiserror::Error)]
#[error(
    "the value of {0} cannot be written to .env so that azd reads it back unchanged \
     (azd's .env reader cannot end a quoted value with a backslash)"
)]
pub(super) struct UnwritableValue(String);

/// A key whose statement cannot be cut out without changing another.
#[derive(Debug, thiserror::Error)]
#[error("{0} cannot be removed from .env without changing the statements around it")]
pub(super) struct UnremovableKey(String);

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
        d.remove("GONE").unwrap();
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
    fn an_edit_never_swallows_the_statement_after_it_on_its_line() {
        // A statement may follow a quoted value on its line; a value only a
        // bare notation carries must not run on into it (found by the fuzzer).
        let mut d = parse("A=\"dev\"B=us\"\nC='x' D=2\n");
        d.set("A", "v \\").unwrap();
        assert_eq!(d.render(), "A=v \\\nB=us\"\nC='x' D=2\n");
        let back = parse(&d.render());
        assert_eq!(back.get("A"), Some("v \\"));
        assert_eq!(back.get("B"), Some("us\""));
        d.set("C", "y z\\").unwrap();
        assert_eq!(parse(&d.render()).get("D"), Some("2"));
        assert_eq!(parse(&d.render()).get("C"), Some("y z\\"));
        d.remove("C").unwrap();
        assert_eq!(d.render(), "A=v \\\nB=us\"\nD=2\n");
    }

    #[test]
    fn removing_a_key_drops_every_copy_and_keeps_its_neighbours() {
        let mut d = parse("A=1\nB=2 # note\nA=3\nC=\"x\" D=4\n");
        d.remove("A").unwrap();
        assert_eq!(d.render(), "B=2 # note\nC=\"x\" D=4\n");
        d.remove("D").unwrap();
        assert_eq!(d.get("C"), Some("x"));
        assert_eq!(d.get("D"), None);
        // A lone `\r` before the cut must not meet the line break after it
        // (it would read as a Windows line ending).
        let mut d = parse("A=1\rB=2\n");
        d.remove("B").unwrap();
        assert_eq!(d.render(), "A=1\n");
        // ... nor when the blanks before it belong to the statement before
        // (found by the fuzzer: an empty key after `E=- \r`).
        let mut d = parse("E=- \r=\nE=- \r=\n");
        d.remove("").unwrap();
        assert_eq!(
            d.values(),
            BTreeMap::from([("E".to_owned(), "-".to_owned())])
        );
        assert_eq!(d.render(), "E=- \r \nE=- \r \n");
    }

    #[test]
    fn windows_line_endings_are_kept() {
        let mut d = parse("A=1\r\nB=\"two\r\nlines\"\r\n");
        assert_eq!(d.get("B"), Some("two\nlines"));
        d.set("C", "3").unwrap();
        assert_eq!(d.render(), "A=1\r\nB=\"two\r\nlines\"\r\nC=3\r\n");
    }
}
