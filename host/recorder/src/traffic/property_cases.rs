//! Test support for `property_tests`: seeded random JSON bodies that hold
//! secrets, under random wrappers (a BOM, JSON lines, deep nesting, `\u`
//! escapes, whitespace, a break of strict JSON, content and transfer
//! codings, compression no header names), each with what its recording
//! must be.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::test_bodies::encode_randomly;

/// The mark of the request every body answers.
pub(super) const MARK: &str = "binary: POST https://management.azure.com/s/";

/// Names that say their value is a secret, as services spell them.
const SECRET_NAMES: [&str; 10] = [
    "key1",
    "key2",
    "password",
    "adminPassword",
    "client_secret",
    "primaryMasterKey",
    "connectionString",
    "blobSasToken",
    "apiKey",
    "secondaryKey",
];

/// How a JSON text is broken so that it no longer parses strictly.
const BREAKS: [&str; 9] = [
    "lone surrogate",
    "trailing comma",
    "cut short",
    "control character",
    "single quote",
    "comment",
    "junk before",
    "two on a line",
    "stray byte",
];

/// One body and what the recording of it must be.
#[derive(Debug, Default)]
pub(super) struct Case {
    pub(super) what: Vec<String>,
    pub(super) body: Vec<u8>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) safe: Vec<String>,
    /// Told to the recorder (`keep_secret`).
    pub(super) known: Vec<String>,
    /// Every secret the body holds, known or only named so.
    pub(super) secrets: Vec<String>,
    /// Whether the text (its codings undone) is strict JSON.
    pub(super) strict: bool,
    /// Compressed with no header naming it.
    pub(super) undeclared: bool,
}

/// Writes JSON documents holding secrets, with random whitespace and escapes.
struct Writer<'a> {
    rng: &'a mut fastrand::Rng,
    out: String,
    spaces: bool,
    newlines: bool,
    escapes: bool,
    /// The string (counted from 0) that gets a lone surrogate, if any.
    lone: Option<usize>,
    strings: usize,
    known: Vec<String>,
    secrets: Vec<String>,
    marked: bool,
}

impl Writer<'_> {
    fn ws(&mut self) {
        if self.spaces && self.rng.u8(..3) == 0 {
            let all = [" ", "\t", "  ", "\n", "\r\n"];
            let n = if self.newlines { all.len() } else { 3 };
            self.out.push_str(all[self.rng.usize(..n)]);
        }
    }

    fn string(&mut self, s: &str) {
        let lone = self.lone == Some(self.strings);
        self.strings += 1;
        self.out.push('"');
        for (i, c) in s.chars().enumerate() {
            if lone && i == s.chars().count() / 2 {
                self.out
                    .push_str(["\\ud800", "\\uDFFF", "\\udbff\\u0041"][self.rng.usize(..3)]);
            }
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c if self.escapes && self.rng.u8(..4) == 0 => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(self.out, "\\u{unit:04X}");
                    }
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    /// A new secret: base64-like characters, or 32 hex digits as a
    /// Cognitive Services key; known to the recorder when `known` (always
    /// when the body is marked binary, so that masking alone must hide it).
    fn secret(&mut self, known: bool) -> String {
        let value: String = if self.rng.bool() {
            (0..32)
                .map(|_| char::from(b"0123456789abcdef"[self.rng.usize(..16)]))
                .collect()
        } else {
            let chars = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let len = self.rng.usize(24..44);
            (0..len)
                .map(|_| char::from(chars[self.rng.usize(..chars.len())]))
                .collect()
        };
        self.remember(&value, known);
        value
    }

    /// `value` is a secret of the body; the recorder is told of it when
    /// `known` or when the body is marked binary.
    fn remember(&mut self, value: &str, known: bool) {
        if known || self.marked {
            self.known.push(value.to_owned());
        }
        self.secrets.push(value.to_owned());
    }

    fn key(&mut self, name: &str) {
        self.ws();
        self.string(name);
        self.ws();
        self.out.push(':');
        self.ws();
    }

    /// An object of a few fields, at least one of them a secret.
    fn object(&mut self, depth: u32) {
        self.out.push('{');
        let fields = self.rng.usize(1..5);
        for i in 0..fields {
            if i > 0 {
                self.ws();
                self.out.push(',');
            }
            let kind = if i == 0 {
                self.rng.u8(..6)
            } else {
                self.rng.u8(..9)
            };
            self.field(kind, depth);
        }
        self.ws();
        self.out.push('}');
    }

    /// One field of a generated object, of kind `kind`: long because it is
    /// the table of every secret-bearing shape, one arm each.
    fn field(&mut self, kind: u8, depth: u32) {
        match kind {
            0 => {
                let name = SECRET_NAMES[self.rng.usize(..SECRET_NAMES.len())];
                self.key(name);
                let secret = self.secret(false);
                self.string(&secret);
            }
            1 => {
                self.key("keys");
                self.out.push('[');
                let n = self.rng.usize(1..3);
                for k in 0..n {
                    if k > 0 {
                        self.out.push(',');
                    }
                    self.out.push('{');
                    self.key("keyName");
                    self.string(&format!("key{}", k + 1));
                    self.out.push(',');
                    self.key("value");
                    let secret = self.secret(false);
                    self.string(&secret);
                    self.out.push(',');
                    self.key("permissions");
                    self.string("FULL");
                    self.out.push('}');
                }
                self.out.push(']');
            }
            2 => {
                // A Key Vault secret bundle: `value` before the siblings that make it one.
                self.key("bundle");
                self.out.push('{');
                self.key("value");
                let secret = self.secret(false);
                self.string(&secret);
                self.out.push(',');
                self.key("id");
                self.string("https://v.vault.azure.net/secrets/db/1");
                self.out.push('}');
            }
            3 => {
                // A known secret under a plain name, in one of its encodings.
                let secret = self.secret(true);
                let shown = match self.rng.u8(..5) {
                    0 => secret.clone(),
                    1 => secret.replace('/', "%2F").replace('+', "%2B"),
                    2 => STANDARD.encode(&secret),
                    3 => hex(&secret),
                    _ => format!("see {} here", hex(&secret).to_ascii_uppercase()),
                };
                self.key("note");
                self.string(&shown);
            }
            4 => {
                let name = SECRET_NAMES[self.rng.usize(..SECRET_NAMES.len())];
                self.key(name);
                let digits: String = (0..14)
                    .map(|_| char::from(b'1' + self.rng.u8(..9)))
                    .collect();
                self.remember(&digits, false);
                self.out.push_str(&digits);
            }
            5 => {
                self.key("parameter");
                self.out.push('{');
                self.key("type");
                self.string("secureString");
                self.out.push(',');
                self.key("value");
                let secret = self.secret(false);
                self.string(&secret);
                self.out.push('}');
            }
            6 if depth < 3 => {
                self.key("nested");
                if self.rng.bool() {
                    self.object(depth + 1);
                } else {
                    self.out.push('[');
                    self.object(depth + 1);
                    self.out.push(',');
                    self.out
                        .push_str(["true", "null", "-1.5e3"][self.rng.usize(..3)]);
                    self.out.push(']');
                }
            }
            _ => {
                let name = ["name", "location", "kind", "ünïcødé 🙂"][self.rng.usize(..4)];
                self.key(name);
                let value =
                    ["westus", "Storage", "a \"quoted\" word", "🙂 ok"][self.rng.usize(..4)];
                self.string(value);
            }
        }
    }
}

pub(super) fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// One document (an object, maybe nested `deep` levels down), its text.
fn document(w: &mut Writer<'_>, deep: usize) -> String {
    w.out.clear();
    w.ws();
    w.object(0);
    w.ws();
    let inner = std::mem::take(&mut w.out);
    if deep == 0 {
        return inner;
    }
    let (open, close) = if w.rng.bool() {
        ("[", "]")
    } else {
        ("{\"a\":", "}")
    };
    let mut text = String::with_capacity(inner.len() + deep * 6);
    for _ in 0..deep {
        text.push_str(open);
    }
    text.push_str(&inner);
    for _ in 0..deep {
        text.push_str(close);
    }
    text
}

/// `text` (a document) broken as `how` says, so that it no longer parses.
fn broken(rng: &mut fastrand::Rng, text: &str, how: &str) -> Vec<u8> {
    let first = text.len() - text.trim_start().len();
    let last = text.trim_end().len() - 1;
    let inside = |rng: &mut fastrand::Rng| {
        // A place between two characters, after the document's first and
        // before its last.
        let mut at = rng.usize(first + 1..=last);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    match how {
        "trailing comma" => {
            let at = text.rfind('}').unwrap();
            format!("{},{}", &text[..at], &text[at..]).into_bytes()
        }
        "cut short" => text.as_bytes()[..inside(rng)].to_vec(),
        "control character" => {
            let at = text.find('"').unwrap() + 1;
            format!("{}\u{1}{}", &text[..at], &text[at..]).into_bytes()
        }
        "single quote" => text.replacen('"', "'", 1).into_bytes(),
        "comment" => format!("{text} // listKeys").into_bytes(),
        "junk before" => {
            let junk = ["\u{b}", "\u{0}", "\u{a0}", "\u{200b}"][rng.usize(..4)];
            format!("{junk}{text}").into_bytes()
        }
        "two on a line" => format!("{0}{0}", text.trim()).into_bytes(),
        "stray byte" => {
            let mut bytes = text.as_bytes().to_vec();
            bytes.insert(inside(rng), 0xff);
            bytes
        }
        // The surrogate is written by the writer itself.
        _ => text.as_bytes().to_vec(),
    }
}

/// A random case (the `n`th of a run: some are always made, each break
/// in turn). Long because it is the list of every wrapper and break the
/// property is tried under, one arm each.
pub(super) fn case(rng: &mut fastrand::Rng, n: usize) -> Case {
    let marked = rng.u8(..6) == 0;
    let ndjson = rng.u8(..3) == 0;
    let docs = if ndjson { rng.usize(1..4) } else { 1 };
    // Every run reaches 100,000 deep twice (broken, and not), and each break.
    let deep = match (n, rng.u8(..40)) {
        (3 | 100, _) => 100_000,
        (_, 0..=3) => rng.usize(129..5_000),
        (_, 4..=15) => rng.usize(1..129),
        _ => 0,
    };
    let breaking = n.is_multiple_of(3).then(|| BREAKS[(n / 3) % BREAKS.len()]);
    let mut w = Writer {
        rng,
        out: String::new(),
        spaces: n.is_multiple_of(2),
        newlines: !ndjson,
        escapes: n % 5 < 2,
        lone: None,
        strings: 0,
        known: Vec::new(),
        secrets: Vec::new(),
        marked,
    };
    let mut what = vec![format!("case {n}, {docs} document(s), {deep} deep")];
    let mut body = Vec::new();
    let bom = w.rng.u8(..4) == 0;
    if bom {
        body.extend_from_slice("\u{feff}".as_bytes());
        what.push("a BOM".into());
    }
    for d in 0..docs {
        let last = d + 1 == docs;
        if last && breaking == Some("lone surrogate") {
            w.lone = Some(w.rng.usize(..3));
            w.strings = 0;
        }
        let text = document(&mut w, deep);
        match breaking {
            Some(how) if last => body.extend(broken(w.rng, &text, how)),
            _ => body.extend_from_slice(text.as_bytes()),
        }
        if !last || w.rng.bool() {
            body.extend_from_slice([&b"\n"[..], b"\r\n"][w.rng.usize(..2)]);
        }
    }
    // A lone surrogate only where a string got one.
    let strict = match breaking {
        Some("lone surrogate") => w.lone.is_some_and(|k| k >= w.strings),
        Some(_) => false,
        None => true,
    };
    if let Some(how) = breaking {
        what.push(format!("broken: {how}"));
    }
    let (known, secrets) = (std::mem::take(&mut w.known), std::mem::take(&mut w.secrets));
    let mut headers = Vec::new();
    let content_type = [
        "application/json",
        "application/x-ndjson",
        "application/problem+json; charset=utf-8",
        "text/plain",
        "",
    ][rng.usize(..5)];
    if !content_type.is_empty() {
        headers.push(("content-type".to_owned(), content_type.to_owned()));
    }
    let mut undeclared = false;
    if body.len() < 1 << 16 {
        let (coded, named) = encode_randomly(rng, &body);
        match named {
            Ok(named) => headers.extend(named),
            Err(coding) => {
                undeclared = true;
                what.push(format!("{coding}, named by no header"));
            }
        }
        body = coded;
    }
    what.push(format!("headers {headers:?}"));
    if marked {
        what.push("marked binary".into());
    }
    Case {
        what,
        body,
        headers,
        safe: if marked {
            vec![MARK.to_owned()]
        } else {
            vec![]
        },
        known,
        secrets,
        strict,
        undeclared,
    }
}
