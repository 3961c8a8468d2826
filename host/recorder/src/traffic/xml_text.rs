//! Well-formed XML 1.0 read as a stream of tokens with their places: what a
//! recording redacts by element and attribute name must first be read as an
//! XML parser reads it, and a body that is not well-formed is not read at
//! all (`keep` treats it as not text).
//!
//! quick-xml finds where each piece of markup starts and ends (a `>` in a
//! quoted attribute value does not end a tag; a CDATA section, a comment or
//! a processing instruction is one piece; a reference is read apart from
//! the text around it). The checks here hold the rest to XML 1.0's grammar,
//! which quick-xml leaves to its callers: only characters XML allows; names
//! by XML's Name production; a tag's attributes each `name="value"` or
//! `name='value'` after a blank, none named twice, no `<` in a value and
//! every `&` a reference; references only to the five predefined entities
//! and to characters XML allows; one root element, and nothing but blanks,
//! comments and processing instructions outside it; every element closed
//! by its own name; an XML declaration only at the start, version 1.0, in
//! an encoding that reads ASCII as ASCII. A document type declaration is
//! refused whole: it may declare entities, which would put text (or markup)
//! where the redactor reads none, and expand without bound. Nesting is
//! followed on stacks (quick-xml's and ours), never the thread's.

use std::ops::Range;

use quick_xml::errors::{Error, IllFormedError};
use quick_xml::events::Event;
use quick_xml::reader::Reader;

pub(super) use super::xml_grammar::Attribute;
use super::xml_grammar::{
    ASCII_ENCODINGS, Fail, attributes, fail, is_blank, is_char, line_ends, name_end, reference,
    skip_blank,
};

/// Why a text is not well-formed XML as the recorder reads it, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Invalid {
    pub(super) at: usize,
    /// What is wrong, never quoting the text (it may hold a secret).
    pub(super) why: String,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.why, self.at)
    }
}

/// What a piece of character data is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Data {
    /// Text with no reference in it.
    Text,
    /// A reference (`&amp;`, `&#65;`): the character it stands for.
    Reference(char),
    /// A CDATA section.
    Section,
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// A start tag, or an empty element's tag (`empty`).
    Open {
        name: Range<usize>,
        attributes: Vec<Attribute>,
        empty: bool,
    },
    /// An end tag.
    Close,
    /// Character data inside the root element.
    Data { span: Range<usize>, data: Data },
    /// A comment or a processing instruction inside the root element.
    Markup { span: Range<usize> },
}

/// Reads `text` (one XML document, a BOM before it allowed), giving each
/// token inside its root element to `visit` in order; fails on the first
/// thing well-formed XML does not allow (tokens before it may have been
/// given).
pub(super) fn read(text: &str, mut visit: impl FnMut(Token)) -> Result<(), Invalid> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let moved = |e: Invalid| Invalid {
        at: e.at + bom,
        why: e.why,
    };
    Document::new(&text[bom..])
        .read(&mut |mut token| {
            shift(&mut token, bom);
            visit(token);
        })
        .map_err(moved)
}

/// `token`'s places moved `by` bytes on.
fn shift(token: &mut Token, by: usize) {
    let moved = |r: &mut Range<usize>| *r = r.start + by..r.end + by;
    match token {
        Token::Open {
            name, attributes, ..
        } => {
            moved(name);
            for a in attributes {
                moved(&mut a.name);
                moved(&mut a.value);
            }
        }
        Token::Data { span, .. } | Token::Markup { span } => moved(span),
        Token::Close => {}
    }
}

/// The text of a piece of character data as a parser reads it: a
/// reference's character, a CDATA section's content; line ends as `\n`.
pub(super) fn data(text: &str, span: &Range<usize>, data: Data) -> String {
    let raw = text.get(span.clone()).unwrap_or_default();
    match data {
        Data::Reference(c) => c.to_string(),
        Data::Text => line_ends(raw),
        Data::Section => line_ends(
            raw.strip_prefix("<![CDATA[")
                .and_then(|r| r.strip_suffix("]]>"))
                .unwrap_or_default(),
        ),
    }
}

/// What quick-xml found wrong, said without quoting the text.
fn described(e: &Error) -> String {
    match e {
        Error::Syntax(s) => s.to_string(),
        Error::IllFormed(
            IllFormedError::MismatchedEndTag { .. } | IllFormedError::MissingEndTag(_),
        ) => "an end tag that does not close the element open".to_owned(),
        Error::IllFormed(IllFormedError::UnmatchedEndTag(_)) => {
            "an end tag with no element open".to_owned()
        }
        Error::IllFormed(IllFormedError::DoubleHyphenInComment) => {
            "`--` inside a comment".to_owned()
        }
        Error::IllFormed(IllFormedError::UnclosedReference) => {
            "an `&` that is no reference (no `;` closes it)".to_owned()
        }
        _ => "markup XML's grammar does not allow".to_owned(),
    }
}

/// A document being read: the elements open (their names' places), and
/// whether its root element was seen.
struct Document<'a> {
    text: &'a str,
    open: Vec<Range<usize>>,
    root: bool,
}

impl<'a> Document<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            open: Vec::new(),
            root: false,
        }
    }

    fn read(mut self, visit: &mut dyn FnMut(Token)) -> Result<(), Invalid> {
        let invalid = |(at, why): Fail| Invalid { at, why };
        if let Some((at, c)) = self.text.char_indices().find(|&(_, c)| !is_char(c)) {
            let why = format!("U+{:04X}, a character XML does not allow", u32::from(c));
            return Err(Invalid { at, why });
        }
        if self.text.starts_with('\u{feff}') {
            // quick-xml would drop it unseen: it is text outside the root element.
            return Err(invalid((0, "a second byte order mark".to_owned())));
        }
        let mut reader = Reader::from_str(self.text);
        let config = reader.config_mut();
        config.check_comments = true;
        config.check_end_names = true;
        config.allow_dangling_amp = false;
        config.allow_unmatched_ends = false;
        config.expand_empty_elements = false;
        config.trim_text(false);
        let place = |p: u64| usize::try_from(p).unwrap_or(usize::MAX);
        loop {
            let start = place(reader.buffer_position());
            let event = reader.read_event().map_err(|e| Invalid {
                at: place(reader.error_position()),
                why: described(&e),
            })?;
            let end = place(reader.buffer_position());
            if matches!(event, Event::Eof) {
                break;
            }
            if let Some(token) = self.event(&event, start..end).map_err(invalid)? {
                visit(token);
            }
        }
        let end = self.text.len();
        if !self.open.is_empty() {
            return Err(invalid((end, "an element is not closed".to_owned())));
        }
        if !self.root {
            return Err(invalid((end, "no root element".to_owned())));
        }
        Ok(())
    }

    /// One event at `span`, checked: the token it gives, if any.
    fn event(&mut self, event: &Event<'_>, span: Range<usize>) -> Result<Option<Token>, Fail> {
        let Some(raw) = self.text.get(span.clone()) else {
            return fail(span.start, "markup the reader could not place");
        };
        let inside = !self.open.is_empty();
        let token = match event {
            Event::Start(_) | Event::Empty(_) => {
                let empty = matches!(event, Event::Empty(_));
                return self.open(span, raw, empty).map(Some);
            }
            Event::End(_) => return self.close(span, raw).map(Some),
            Event::Text(_) if inside => {
                if let Some(i) = raw.find("]]>") {
                    return fail(span.start + i, "`]]>` in text");
                }
                Token::Data {
                    span,
                    data: Data::Text,
                }
            }
            Event::Text(_) if raw.bytes().all(is_blank) => return Ok(None),
            Event::Text(_) => return fail(span.start, "text outside the root element"),
            Event::GeneralRef(_) if inside => {
                let name = raw.strip_prefix('&').and_then(|r| r.strip_suffix(';'));
                let Some(c) = name.and_then(reference) else {
                    return fail(span.start, "a reference to no entity XML predefines");
                };
                Token::Data {
                    span,
                    data: Data::Reference(c),
                }
            }
            Event::CData(_) if !raw.starts_with("<![CDATA[") => {
                return fail(span.start, "a CDATA section XML's grammar does not allow");
            }
            Event::CData(_) if inside => Token::Data {
                span,
                data: Data::Section,
            },
            Event::GeneralRef(_) | Event::CData(_) => {
                return fail(span.start, "character data outside the root element");
            }
            Event::Comment(_) if raw.starts_with("<!--") => Token::Markup { span },
            Event::PI(_) => {
                self.instruction(&span, raw)?;
                Token::Markup { span }
            }
            Event::Decl(_) => return self.declaration(&span).map(|()| None),
            Event::DocType(_) => {
                return fail(
                    span.start,
                    "a document type declaration, which may declare entities the recorder \
                     does not read",
                );
            }
            _ => return fail(span.start, "markup XML's grammar does not allow"),
        };
        Ok(inside.then_some(token))
    }

    /// A start tag (or an empty element's) at `span`.
    fn open(&mut self, span: Range<usize>, raw: &str, empty: bool) -> Result<Token, Fail> {
        let close = if empty { "/>" } else { ">" };
        if !raw.starts_with('<') || !raw.ends_with(close) || raw.len() < 1 + close.len() {
            return fail(span.start, "a tag the reader could not place");
        }
        let from = span.start + 1;
        let to = span.end - close.len();
        let Some(name) = name_end(self.text, from, to).map(|end| from..end) else {
            return fail(from, "an element name XML's grammar does not allow");
        };
        let attributes = attributes(self.text, name.end, to)?;
        if self.open.is_empty() {
            if self.root {
                return fail(span.start, "a second root element");
            }
            self.root = true;
        }
        if !empty {
            self.open.push(name.clone());
        }
        Ok(Token::Open {
            name,
            attributes,
            empty,
        })
    }

    /// An end tag at `span`: it closes the element open by its name.
    fn close(&mut self, span: Range<usize>, raw: &str) -> Result<Token, Fail> {
        let from = span.start + 2;
        let to = span.end.saturating_sub(1);
        let end = (raw.starts_with("</") && raw.ends_with('>'))
            .then(|| name_end(self.text, from, to))
            .flatten();
        let Some(end) = end.filter(|&e| skip_blank(self.text.as_bytes(), e, to) == to) else {
            return fail(span.start, "an end tag XML's grammar does not allow");
        };
        let Some(open) = self.open.pop() else {
            return fail(span.start, "an end tag with no element open");
        };
        if self.text[open] != self.text[from..end] {
            return fail(
                span.start,
                "an end tag that does not close the element open",
            );
        }
        Ok(Token::Close)
    }

    /// A processing instruction: its target a name, not `xml`.
    fn instruction(&self, span: &Range<usize>, raw: &str) -> Result<(), Fail> {
        let from = span.start + 2;
        let to = span.end.saturating_sub(2);
        let Some(end) = name_end(self.text, from, to).filter(|_| raw.ends_with("?>")) else {
            return fail(from, "a processing instruction with no name");
        };
        if self.text[from..end].eq_ignore_ascii_case("xml") {
            return fail(from, "an XML declaration that is not at the start");
        }
        if end < to && !is_blank(self.text.as_bytes()[end]) {
            return fail(
                end,
                "a processing instruction's name not followed by a blank",
            );
        }
        Ok(())
    }

    /// The XML declaration at `span`: at the start, version 1.0, an
    /// encoding that reads ASCII as ASCII, `standalone` yes or no.
    fn declaration(&self, span: &Range<usize>) -> Result<(), Fail> {
        if span.start != 0 {
            return fail(span.start, "an XML declaration that is not at the start");
        }
        let attributes = attributes(self.text, span.start + 5, span.end.saturating_sub(2))?;
        let mut expected = ["version", "encoding", "standalone"].into_iter();
        for a in &attributes {
            let name = &self.text[a.name.clone()];
            let value = self.text[a.value.clone()].to_ascii_lowercase();
            if !expected.any(|n| n == name) {
                return fail(
                    a.name.start,
                    "an XML declaration XML's grammar does not allow",
                );
            }
            let allowed = match name {
                "version" => value == "1.0",
                "encoding" => ASCII_ENCODINGS.contains(&value.as_str()),
                _ => value == "yes" || value == "no",
            };
            if !allowed {
                return fail(
                    a.value.start,
                    "an XML declaration the recorder does not read",
                );
            }
        }
        if attributes
            .first()
            .is_none_or(|a| &self.text[a.name.clone()] != "version")
        {
            return fail(span.start, "an XML declaration with no version");
        }
        Ok(())
    }
}
