//! Test support for `property_tests`: seeded random XML bodies that hold
//! secrets (in element text, CDATA sections, attributes after a quoted `>`,
//! written with references, cut by comments; known ones in every encoding),
//! well-formed or broken, under the same wrappers as JSON; and bodies that
//! decode past their bound, declared or not. Each with what its recording
//! must be.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::bodies_tests::encode;
use super::property_breaks_tests::{MARK, XML_BREAKS, broken_xml, wire};
use super::property_cases_tests::{Case, hex};

/// Element names that say their text is a secret, as services spell them
/// (`s:` is a namespace the root declares).
const SECRET_ELEMENTS: [&str; 7] = [
    "Password",
    "AccountKey",
    "ClientSecret",
    "SasToken",
    "PrimaryKey",
    "Key1",
    "s:Password",
];

/// Writes an XML document holding secrets.
struct Xml<'a> {
    rng: &'a mut fastrand::Rng,
    out: String,
    known: Vec<String>,
    secrets: Vec<String>,
    marked: bool,
}

impl Xml<'_> {
    /// A new secret: base64-like characters or 32 hex digits; told to the
    /// recorder when `known` or when the body is marked binary.
    fn secret(&mut self, known: bool) -> String {
        let chars: &[u8] = if self.rng.bool() {
            b"0123456789abcdef"
        } else {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        };
        let len = if chars.len() == 16 {
            32
        } else {
            self.rng.usize(24..44)
        };
        let value: String = (0..len)
            .map(|_| char::from(chars[self.rng.usize(..chars.len())]))
            .collect();
        if known || self.marked {
            self.known.push(value.clone());
        }
        self.secrets.push(value.clone());
        value
    }

    /// `value` as character data: in pieces, each plain, in references or
    /// in a CDATA section, a comment maybe between two (never inside a
    /// reference `value` is written with).
    fn text(&mut self, value: &str) {
        let mut rest = value;
        while !rest.is_empty() {
            let mut cut = self.rng.usize(1..=rest.len());
            while !rest.is_char_boundary(cut)
                || (value.contains('&') && !rest[cut..].is_empty() && !rest[cut..].starts_with('&'))
            {
                cut += 1;
            }
            let (piece, after) = rest.split_at(cut);
            match self.rng.u8(..5) {
                0 => self.out.push_str(&format!("<![CDATA[{piece}]]>")),
                1 => self.out.push_str(&references(piece)),
                2 if !after.is_empty() => self.out.push_str(&format!("{piece}<!-- c -->")),
                _ => self.out.push_str(piece),
            }
            rest = after;
        }
    }

    /// One element, of kind `kind`: long because it is the table of every
    /// secret-bearing shape, one arm each.
    fn element(&mut self, kind: u8, depth: u32) {
        // Past three groups deep, a group is a secret element instead.
        let kind = if kind == 4 && depth >= 3 { 0 } else { kind };
        match kind {
            0 => {
                let name = SECRET_ELEMENTS[self.rng.usize(..SECRET_ELEMENTS.len())];
                let secret = self.secret(false);
                self.out.push_str(&format!("<{name}>"));
                self.text(&secret);
                self.out.push_str(&format!("</{name}>"));
            }
            1 => {
                // A `>` in a quoted value, then the secret attribute.
                let secret = self.secret(false);
                let name = ["Password", "AccountKey", "sig"][self.rng.usize(..3)];
                let (q, note) = [('"', "a>b 'x'"), ('\'', "c > \"d\"")][self.rng.usize(..2)];
                let value = if self.rng.bool() {
                    references(&secret)
                } else {
                    secret
                };
                let attrs = format!("note={q}{note}{q} {name}={q}{value}{q}");
                self.out.push_str(&format!("<Cred {attrs}/>"));
            }
            2 => {
                self.out
                    .push_str("<UserDelegationKey><SignedOid>o</SignedOid><Value>");
                let secret = self.secret(false);
                self.text(&secret);
                self.out.push_str("</Value></UserDelegationKey>");
            }
            3 => {
                // A known secret under a plain name, in one of its encodings.
                let secret = self.secret(true);
                let shown = match self.rng.u8(..5) {
                    0 => secret.replace('/', "%2F").replace('+', "%2B"),
                    1 => STANDARD.encode(&secret),
                    2 => hex(&secret),
                    3 => references(&secret),
                    _ => secret,
                };
                self.out.push_str("<Note>");
                self.text(&shown);
                self.out.push_str("</Note>");
            }
            4 => {
                // A group: its first element holds a secret, as the root's does.
                self.out.push_str("<Group kind=\"a&amp;b\">");
                for i in 0..self.rng.usize(1..3) {
                    let kind = self.rng.u8(..if i == 0 { 6 } else { 8 });
                    self.element(kind, depth + 1);
                }
                self.out.push_str("</Group>");
            }
            5 => {
                let secret = self.secret(false);
                self.out.push_str("<ConnectionString><Part>");
                self.text(&secret);
                self.out.push_str("</Part></ConnectionString>");
            }
            _ => {
                let plain = [
                    "<Name>westus</Name>",
                    "<Empty/>",
                    "<Desc>a &amp; b &lt; c &#x3E; d</Desc>",
                    "<?note some data?>",
                ];
                self.out.push_str(plain[self.rng.usize(..plain.len())]);
            }
        }
    }
}

/// `text` with every character written as a decimal or hex reference, at random.
fn references(text: &str) -> String {
    text.chars()
        .map(|c| {
            let n = u32::from(c);
            if n % 2 == 0 {
                format!("&#{n};")
            } else {
                format!("&#x{n:x};")
            }
        })
        .collect()
}

/// `text` as a reader of XML reads its character data: CDATA sections'
/// markers and comments dropped, references read (for the property's
/// check of what a recording holds).
pub(super) fn xml_read(text: &str) -> String {
    let mut text = text.replace("<![CDATA[", "").replace("]]>", "");
    while let Some(start) = text.find("<!--") {
        let Some(end) = text[start..].find("-->") else {
            break;
        };
        text.replace_range(start..start + end + 3, "");
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("&#") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').filter(|&e| e <= 12);
        let digits = end.map(|e| &rest[at + 2..at + e]).unwrap_or_default();
        let n = match digits.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => digits.parse().ok(),
        };
        match (n.and_then(char::from_u32), end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[at + e + 1..];
            }
            _ => {
                out.push_str("&#");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// A random XML case (the `n`th of a run: every third broken, each break
/// in turn).
pub(super) fn xml_case(rng: &mut fastrand::Rng, n: usize) -> Case {
    let marked = rng.u8(..6) == 0;
    let breaking = n
        .is_multiple_of(3)
        .then(|| XML_BREAKS[(n / 3) % XML_BREAKS.len()]);
    let mut w = Xml {
        rng,
        out: String::new(),
        known: Vec::new(),
        secrets: Vec::new(),
        marked,
    };
    let mut what = vec![format!("case {n}, XML")];
    if w.rng.u8(..4) == 0 {
        w.out.push('\u{feff}');
    }
    if w.rng.bool() {
        w.out
            .push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- listKeys -->\n");
    }
    let root = w.out.len();
    w.out.push_str("<r xmlns:s=\"urn:s\">");
    for i in 0..w.rng.usize(1..5) {
        let kind = if i == 0 { w.rng.u8(..6) } else { w.rng.u8(..8) };
        w.element(kind, 0);
        if w.rng.bool() {
            w.out.push_str("\n  ");
        }
    }
    w.out.push_str("</r>\n");
    let text = std::mem::take(&mut w.out);
    let mut body = match breaking {
        Some(how) => {
            what.push(format!("broken: {how}"));
            broken_xml(w.rng, &text, root, how)
        }
        None => text.into_bytes(),
    };
    let (known, secrets) = (w.known, w.secrets);
    let types = [
        "application/xml",
        "text/xml; charset=utf-8",
        "text/plain",
        "",
    ];
    let (headers, undeclared, safe) = wire(rng, &mut body, &types, marked, &mut what);
    Case {
        what,
        body,
        headers,
        safe,
        known,
        secrets,
        strict: breaking.is_none(),
        undeclared,
        max: super::property_cases_tests::MAX,
        over: false,
    }
}

/// A body that decodes past its bound (128 KiB), in one coding, named by a
/// header or not, JSON or XML, holding a secret named so and a known one.
pub(super) fn over_bound_case(rng: &mut fastrand::Rng, n: usize) -> Case {
    let max = 128 << 10;
    let (named, known) = (
        format!("named{}", rng.u64(..)),
        format!("known{}", rng.u64(..)),
    );
    let pad = "a".repeat(rng.usize(max + 1..2 * max));
    let text = if rng.bool() {
        format!(r#"{{"pad":"{pad}","password":"{named}","note":"{known}"}}"#)
    } else {
        format!("<r><Pad>{pad}</Pad><Password>{named}</Password><Note>{known}</Note></r>")
    };
    let coding = ["gzip", "deflate", "raw-deflate", "br", "zstd"][rng.usize(..5)];
    let header = coding.trim_start_matches("raw-");
    let declared = [None, Some("content-encoding"), Some("transfer-encoding")][rng.usize(..3)];
    let marked = rng.bool();
    let headers: Vec<(String, String)> = declared
        .map(|h| (h.to_owned(), header.to_owned()))
        .into_iter()
        .collect();
    Case {
        what: vec![format!(
            "case {n}, {} bytes past the bound in {coding}, {headers:?}, marked {marked}",
            text.len()
        )],
        body: encode(text.as_bytes(), coding),
        headers,
        safe: if marked {
            vec![MARK.to_owned()]
        } else {
            vec![]
        },
        known: vec![known.clone()],
        secrets: vec![named, known],
        strict: true,
        undeclared: declared.is_none(),
        max,
        over: true,
    }
}
