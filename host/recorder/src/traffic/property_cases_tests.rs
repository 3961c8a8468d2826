//! Test support for `property_tests`: seeded random JSON bodies that hold
//! secrets, under random wrappers (a BOM, JSON lines, deep nesting, JSON in
//! JSON strings, `\u` escapes, whitespace, a break of strict JSON, content
//! and transfer codings, compression no header names), each with what its
//! recording must be.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::property_breaks_tests::{BREAKS, broken, wire};

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
    /// Whether the text (its codings undone) is strict JSON (or
    /// well-formed XML) the recorder reads whole.
    pub(super) strict: bool,
    /// Compressed with no header naming it.
    pub(super) undeclared: bool,
    /// The bound on the decoded body.
    pub(super) max: usize,
    /// Decodes past `max`.
    pub(super) over: bool,
}

/// The bound every body but those made to pass it is served under.
pub(super) const MAX: usize = 1 << 23;

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
            7 if depth == 0 => {
                // A document in a string (an App Configuration value, a Key
                // Vault secret holding JSON), 1 to 3 strings deep.
                let name = ["config", "value", "settings"][self.rng.usize(..3)];
                self.key(name);
                let levels = self.rng.usize(1..=3);
                let nested = self.in_strings(depth, levels);
                self.string(&nested);
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

impl Writer<'_> {
    /// An object, as the text a string holds for it to be `levels` strings
    /// deep; no lone surrogate in it (it would break what the string holds,
    /// not the body).
    fn in_strings(&mut self, depth: u32, levels: usize) -> String {
        let (out, lone, strings) = (
            std::mem::take(&mut self.out),
            self.lone.take(),
            self.strings,
        );
        self.object(depth + 1);
        let text = std::mem::replace(&mut self.out, out);
        (self.lone, self.strings) = (lone, strings);
        self.wrapped(text, levels)
    }

    /// `text` one string deeper `levels - 1` times: each level a string of
    /// the one below, double-encoded or in an object.
    fn wrapped(&mut self, mut text: String, levels: usize) -> String {
        for _ in 1..levels {
            let string = serde_json::Value::from(text).to_string();
            text = if self.rng.bool() {
                string
            } else {
                format!("{{\"v\":{string}}}")
            };
        }
        text
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
    // A secret named 9 or 10 strings deep, past what the recorder redacts.
    let past = (n % 40 == 26).then(|| rng.usize(9..=10));
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
        let mut text = document(&mut w, deep);
        if let Some(levels) = past.filter(|_| last) {
            w.out = String::from("{");
            w.field(0, 1);
            w.out.push('}');
            let named = std::mem::take(&mut w.out);
            let deep = w.wrapped(named, levels);
            text = format!("{{\"v\":{}}}", serde_json::Value::from(deep));
            what.push(format!("a secret {levels} strings deep"));
        }
        match breaking {
            Some(how) if last => body.extend(broken(w.rng, &text, how)),
            _ => body.extend_from_slice(text.as_bytes()),
        }
        if !last || w.rng.bool() {
            body.extend_from_slice([&b"\n"[..], b"\r\n"][w.rng.usize(..2)]);
        }
    }
    // A lone surrogate only where a string got one.
    let strict = past.is_none()
        && match breaking {
            Some("lone surrogate") => w.lone.is_some_and(|k| k >= w.strings),
            Some(_) => false,
            None => true,
        };
    if let Some(how) = breaking {
        what.push(format!("broken: {how}"));
    }
    let (known, secrets) = (std::mem::take(&mut w.known), std::mem::take(&mut w.secrets));
    let content_types = [
        "application/json",
        "application/x-ndjson",
        "application/problem+json; charset=utf-8",
        "text/plain",
        "",
    ];
    let (headers, undeclared, safe) = wire(rng, &mut body, &content_types, marked, &mut what);
    Case {
        what,
        body,
        headers,
        safe,
        known,
        secrets,
        strict,
        undeclared,
        max: MAX,
        over: false,
    }
}
