//! Every string of a manifest, checked before anything reads it.
//!
//! What a manifest says reaches the user's terminal: azd's consent prompt,
//! `approve`, `check` and refusals quote its name, its grant paths, its
//! variables, addresses, origins and scopes. One control or invisible
//! character there ([`text::is_invisible`]: an escape sequence, a carriage
//! return, a bidi override, a zero-width space, a variation selector or a
//! Hangul filler (default-ignorable: drawn as nothing), a no-break,
//! ideographic or braille blank, …) can make a prompt show something other
//! than what is granted. So the manifest's TOML is walked
//! once, as a document, before it is read into its types: every key and
//! every string, wherever it stands (a field added later included), must
//! hold none; then the file's text, so that a comment cannot hide one from
//! whoever reads the file either. The error names where (the field's TOML
//! path and line, or the line and column) and the character as `U+XXXX`,
//! never the character itself.

use azd_wasm_host_core::text::{self, code_point, find_invisible};
use toml::de::{DeTable, DeValue};

/// Checks the manifest text `text`: `Err` names the first invisible
/// character, where it stands and what it is. Text that is not TOML passes
/// when its characters do (TOML's own error then says what is wrong).
pub(crate) fn check(text: &str) -> Result<(), String> {
    if let Ok(root) = DeTable::parse(text) {
        let mut at = Walk {
            text,
            path: Vec::new(),
        };
        at.table(root.get_ref())?;
    }
    check_file_text(text)
}

/// Checks one string that does not come from a manifest file but is used as
/// one of its fields (a provider name given on the command line): `field`
/// names it in the error.
pub(crate) fn check_field(field: &str, value: &str) -> Result<(), String> {
    match find_invisible(value) {
        Some((_, c)) => Err(refusal(&format!("`{field}`"), c)),
        None => Ok(()),
    }
}

fn refusal(at: &str, c: char) -> String {
    format!(
        "{at} holds {}, a control or invisible character: a manifest's text must read as it \
         shows (no control, format, line-separator, private-use, unassigned or \
         default-ignorable character, and no blank but ASCII's space)",
        code_point(c)
    )
}

/// The walk over the document: where it stands.
struct Walk<'t> {
    text: &'t str,
    path: Vec<Step>,
}

/// One step of a TOML path: a key (as [`text::shown`] writes it), or an
/// array's index.
enum Step {
    Key(String),
    Index(usize),
}

impl Walk<'_> {
    fn table(&mut self, table: &DeTable<'_>) -> Result<(), String> {
        for (key, value) in table {
            if let Some((_, c)) = find_invisible(key.get_ref()) {
                let at = format!("a key of {} ({})", self.here(), self.line(key.span().start));
                return Err(refusal(&at, c));
            }
            self.path
                .push(Step::Key(text::shown(key.get_ref()).into_owned()));
            self.value(value.get_ref(), value.span().start)?;
            self.path.pop();
        }
        Ok(())
    }

    fn value(&mut self, value: &DeValue<'_>, start: usize) -> Result<(), String> {
        match value {
            DeValue::String(s) => match find_invisible(s) {
                Some((_, c)) => {
                    let at = format!("{} ({})", self.here(), self.line(start));
                    Err(refusal(&at, c))
                }
                None => Ok(()),
            },
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    self.value(item.get_ref(), item.span().start)?;
                    self.path.pop();
                }
                Ok(())
            }
            DeValue::Table(table) => self.table(table),
            DeValue::Integer(_)
            | DeValue::Float(_)
            | DeValue::Boolean(_)
            | DeValue::Datetime(_) => Ok(()),
        }
    }

    /// The field's TOML path, `` `policy.fs[1].path` ``; the document's top
    /// level before any key.
    fn here(&self) -> String {
        if self.path.is_empty() {
            return "the manifest's top level".to_owned();
        }
        let mut out = String::from("`");
        for (i, step) in self.path.iter().enumerate() {
            match step {
                Step::Key(key) if i == 0 => out.push_str(key),
                Step::Key(key) => {
                    out.push('.');
                    out.push_str(key);
                }
                Step::Index(n) => out.push_str(&format!("[{n}]")),
            }
        }
        out.push('`');
        out
    }

    fn line(&self, offset: usize) -> String {
        let (line, _) = line_and_column(self.text, offset);
        format!("line {line}")
    }
}

/// Line and column (from 1, in characters) of byte `offset` of `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before, |nl| &before[nl + 1..])
        .chars()
        .count()
        + 1;
    (line, column)
}

/// The file's text, where its strings are not: an invisible character in a
/// comment (or anywhere TOML leaves one), but for what plain text needs:
/// tabs, line ends (`\n`, `\r\n`) and a byte-order mark at the very start.
fn check_file_text(text: &str) -> Result<(), String> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let allowed = match c {
            '\t' | '\n' => true,
            '\r' => chars.peek().is_some_and(|(_, next)| *next == '\n'),
            '\u{feff}' => i == 0,
            _ => !text::is_invisible(c),
        };
        if !allowed {
            let (line, column) = line_and_column(text, i);
            return Err(refusal(&format!("line {line}, column {column}"), c));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_keys_and_comments_are_walked_and_named_by_their_path() {
        let cases = [
            ("name = \"a\\u001b[2Kb\"\n", "`name` (line 1)", "U+001B"),
            (
                "[policy]\nfs = [{ path = \".\", access = \"read\" }, { path = \"x\\u202e\", access = \"read\" }]\n",
                "`policy.fs[1].path` (line 2)",
                "U+202E",
            ),
            (
                "[build]\ncommand = \"make\\r\"\n",
                "`build.command` (line 2)",
                "U+000D",
            ),
            (
                "[future]\ndeep = { list = [[\"ok\", \"a\\u200bb\"]] }\n",
                "`future.deep.list[0][1]` (line 2)",
                "U+200B",
            ),
            (
                "\"k\\u0007\" = 1\n",
                "a key of the manifest's top level (line 1)",
                "U+0007",
            ),
            (
                "[\"my table\"]\nx = \"\\u2066\"\n",
                "`\"my table\".x` (line 2)",
                "U+2066",
            ),
            (
                "name = \"x\"\n# a comment \u{202e} reversed\n",
                "line 2, column 13",
                "U+202E",
            ),
            ("name = \"x\"\r\n\r\r\n", "line 2, column 1", "U+000D"),
        ];
        for (text, at, code) in cases {
            let e = check(text).unwrap_err();
            assert!(e.contains(at) && e.contains(code), "{text:?}: {e}");
            assert!(
                find_invisible(&e).is_none(),
                "the error holds the character: {e:?}"
            );
        }
    }

    #[test]
    fn plain_text_passes_with_tabs_line_ends_and_a_byte_order_mark() {
        check("\u{feff}name = \"données\"\r\n\tcomponent = \"c.wasm\" # tab-indented\n").unwrap();
        check("not = [toml").unwrap();
        assert!(check("not = [\u{1b}").is_err());
        assert!(check("name = \"x\"\u{feff}\n").is_err());
        check_field("name", "todo").unwrap();
        let e = check_field("name", "to\u{ad}do").unwrap_err();
        assert!(e.contains("`name`") && e.contains("U+00AD"), "{e}");
    }
}
