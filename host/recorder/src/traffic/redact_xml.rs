//! XML bodies redacted by element and attribute name, token by token
//! ([`xml_text`], which reads only well-formed XML): what an element named
//! like a secret holds (everything between its tags: text, references,
//! CDATA sections, comments, and every element inside it, their attributes
//! too), the `Value` or `Key` of an element whose name ends in `Key` (a user
//! delegation key's), and attributes named like secrets (and every
//! attribute of such an element) become `REDACTED` where they stand. Every
//! other run of character data between two tags and every other attribute
//! value is read as a parser reads it (references and CDATA read, comments
//! left out) and loses known secrets and credential shapes, written back
//! escaped where that changed it. Every other byte stays as it came.

use std::ops::Range;

use azd_wasm_host_core::secrets::is_secret_name;

use super::redact::{REDACTED, Secrets};
use super::xml_grammar;
use super::xml_text::{self, Data, Invalid, Token};

/// `text` (one XML document, well-formed) redacted: `None` when nothing
/// needed it, or why it is not well-formed XML.
pub(super) fn redact(secrets: &Secrets, text: &str) -> Result<Option<String>, Invalid> {
    let mut walk = Walk {
        secrets,
        text,
        open: Vec::new(),
        run: Vec::new(),
        replaced: Vec::new(),
    };
    xml_text::read(text, |token| walk.token(token))?;
    walk.flush();
    if walk.replaced.is_empty() {
        return Ok(None);
    }
    let mut replaced = walk.replaced;
    replaced.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (range, with) in replaced {
        if range.start < last {
            // Never the case (tokens do not overlap); kept whole rather than cut.
            continue;
        }
        out.push_str(&text[last..range.start]);
        out.push_str(&with);
        last = range.end;
    }
    out.push_str(&text[last..]);
    Ok(Some(out))
}

/// An element's or attribute's name as compared: without its namespace
/// prefix, in lower case.
fn local(name: &str) -> String {
    name.rsplit(':').next().unwrap_or(name).to_ascii_lowercase()
}

/// An element open.
struct Element {
    /// Its local name, lower case.
    name: String,
    /// Whether everything it holds is a secret.
    secret: bool,
}

/// The walk over the tokens: the elements open, the run of character data
/// and markup since the last tag, and the replacements so far.
struct Walk<'a> {
    secrets: &'a Secrets,
    text: &'a str,
    open: Vec<Element>,
    /// Character data (`Some`) and comments or instructions (`None`).
    run: Vec<(Range<usize>, Option<Data>)>,
    replaced: Vec<(Range<usize>, String)>,
}

impl Walk<'_> {
    fn token(&mut self, token: Token) {
        match token {
            Token::Open {
                name,
                attributes,
                empty,
            } => {
                self.flush();
                let own = local(&self.text[name]);
                let parent = self.open.last();
                let secret = parent.is_some_and(|p| p.secret)
                    || is_secret_name(&own)
                    || (matches!(own.as_str(), "value" | "key")
                        && parent.is_some_and(|p| p.name.ends_with("key")));
                for attribute in attributes {
                    let name = local(&self.text[attribute.name]);
                    if secret || is_secret_name(&name) {
                        self.redact(attribute.value);
                    } else {
                        self.scrub_attribute(attribute.value);
                    }
                }
                if !empty {
                    self.open.push(Element { name: own, secret });
                }
            }
            Token::Close => {
                self.flush();
                self.open.pop();
            }
            Token::Data { span, data } => self.run.push((span, Some(data))),
            Token::Markup { span } => self.run.push((span, None)),
        }
    }

    /// `range` becomes `REDACTED`, unless it is blank or already that.
    fn redact(&mut self, range: Range<usize>) {
        let raw = &self.text[range.clone()];
        if !raw.bytes().all(xml_grammar::is_blank) && raw != REDACTED {
            self.replaced.push((range, REDACTED.to_owned()));
        }
    }

    /// An attribute's value that is not a secret by name, as a parser reads
    /// it, scrubbed, and written back escaped where that changed it.
    fn scrub_attribute(&mut self, range: Range<usize>) {
        let value = xml_grammar::attribute_value(&self.text[range.clone()]);
        let scrubbed = self.secrets.scrub(&value);
        if scrubbed != value {
            self.replaced.push((range, escaped(&scrubbed, true)));
        }
    }

    /// The run since the last tag: redacted whole inside a secret element;
    /// elsewhere its character data read as a parser reads an element's
    /// text (references and CDATA read, comments and instructions left
    /// out), scrubbed, and, where that changed it, the run written back as
    /// that text escaped.
    fn flush(&mut self) {
        let run = std::mem::take(&mut self.run);
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            return;
        };
        let range = first.0.start..last.0.end;
        if self.open.last().is_some_and(|e| e.secret) {
            self.redact(range);
            return;
        }
        let value: String = run
            .iter()
            .filter_map(|(span, data)| data.map(|d| xml_text::data(self.text, span, d)))
            .collect();
        let scrubbed = self.secrets.scrub(&value);
        if scrubbed != value {
            self.replaced.push((range, escaped(&scrubbed, false)));
        }
    }
}

/// `text` written as XML character data (or, `in_attribute`, as an
/// attribute's value in either quotes) that reads back as `text`.
fn escaped(text: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
    out
}
