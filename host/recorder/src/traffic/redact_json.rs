//! JSON bodies redacted by field name, token by token ([`json_text`]): a
//! string or number a name says is a secret becomes `"REDACTED"` where it
//! stands; every other string and key loses known secrets and credential
//! shapes (read with its escapes, written back escaped); every other byte
//! stays as it came. Nothing is rebuilt from a parsed value, so a duplicate
//! key, a key holding a secret or a number cannot slip past a comparison
//! of what was parsed.
//!
//! Two passes over the tokens, each with a stack of its own (no recursion):
//! the first learns which objects make their `value` a secret (Key Vault's
//! secret bundle, a `listKeys` entry, a parameter of a secure type: a
//! sibling can come after `value`), the second redacts.
//!
//! A string (or key) that is itself strict JSON, an object or an array (an
//! App Configuration value typed `application/json`, a Key Vault secret
//! holding JSON) or a string of such JSON (double-encoded), is a document
//! of its own: redacted the same way, and written back as a string,
//! escaped. That is the one recursion, at most [`NESTED_DEPTH`] documents
//! deep; past it, a string that is JSON naming a secret anywhere (read on a
//! worklist, however deep) makes the body one the recorder does not read.
//! All nested reading shares one budget, [`NESTED_WORK`] times the body (a
//! nested string is read a few times: whether it parses, then the two
//! passes).

use azd_wasm_host_core::secrets::is_secret_name;

use super::json_text::{self, Invalid, Kind, Token};
use super::redact::{REDACTED, Secrets};

/// Sibling field names that make a JSON object's `value` a secret: a Key
/// Vault secret (`id` …`/secrets/`…, `attributes`, `contentType`, `kid`) or
/// a `listKeys` entry (`keyName`, `permissions`).
const SECRET_VALUE_SIBLINGS: [&str; 5] =
    ["keyname", "permissions", "attributes", "contenttype", "kid"];

/// How many documents deep JSON in JSON strings is redacted where it stands.
const NESTED_DEPTH: usize = 8;

/// How many times the body's length nested reading may read in all.
const NESTED_WORK: usize = 8;

/// `text` (JSON documents, strict) redacted: `None` when nothing needed it,
/// or where it is not strict JSON (or holds JSON in strings past
/// [`NESTED_DEPTH`] that names a secret, or past the work budget).
pub(super) fn redact(secrets: &Secrets, text: &str) -> Result<Option<String>, Invalid> {
    let mut budget = NESTED_WORK.saturating_mul(text.len()).max(1 << 16);
    redact_at(secrets, text, 0, &mut budget)
}

/// `text` redacted as a document `depth` strings deep (the body is 0).
fn redact_at(
    secrets: &Secrets,
    text: &str,
    depth: usize,
    budget: &mut usize,
) -> Result<Option<String>, Invalid> {
    let secret_values = learn(text)?;
    let mut walk = Walk {
        secrets,
        text,
        secret_values: secret_values.into_iter(),
        open: Vec::new(),
        replaced: Vec::new(),
        depth,
        budget,
        failed: None,
    };
    // The same text read again: it is strict JSON, as the first pass found.
    json_text::read(text, |token| walk.token(token))?;
    if let Some(failed) = walk.failed {
        return Err(failed);
    }
    if walk.replaced.is_empty() {
        return Ok(None);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, with) in walk.replaced {
        out.push_str(&text[last..start]);
        out.push_str(&with);
        last = end;
    }
    out.push_str(&text[last..]);
    Ok(Some(out))
}

/// A name as compared: letters and digits, lower case.
pub(super) fn normalized(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// What the key before a value says the value may make of its object.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    Nothing,
    /// `type`: a secure type makes `value` a secret.
    Type,
    /// `id` or `name`: one naming a secret does.
    Names,
}

/// An object open in the first pass.
struct Learning {
    /// Its place among the objects, in the order they open.
    index: usize,
    has_value: bool,
    makes_secret: bool,
    pending: Pending,
}

/// The first pass: for each object, in the order they open, whether its
/// `value` is a secret.
fn learn(text: &str) -> Result<Vec<bool>, Invalid> {
    let mut objects: Vec<bool> = Vec::new();
    // Open containers: an object's learning, or `None` for an array.
    let mut open: Vec<Option<Learning>> = Vec::new();
    json_text::read(text, |token| {
        // What the token makes of the object it is in.
        if let Some(Some(object)) = open.last_mut() {
            match token.kind {
                Kind::Key => {
                    let name = normalized(&json_text::unquoted(text, token));
                    object.has_value |= name == "value";
                    object.makes_secret |= SECRET_VALUE_SIBLINGS.contains(&name.as_str());
                    object.pending = match name.as_str() {
                        "type" => Pending::Type,
                        "id" | "name" => Pending::Names,
                        _ => Pending::Nothing,
                    };
                    return;
                }
                Kind::String => {
                    let value = json_text::unquoted(text, token);
                    object.makes_secret |= match object.pending {
                        Pending::Type => value.to_ascii_lowercase().starts_with("secure"),
                        Pending::Names => {
                            value.contains("/secrets/")
                                || value.contains("/keys/")
                                || is_secret_name(&value)
                        }
                        Pending::Nothing => false,
                    };
                    object.pending = Pending::Nothing;
                }
                Kind::Object | Kind::Array | Kind::Number | Kind::Literal => {
                    object.pending = Pending::Nothing;
                }
                Kind::End => {}
            }
        }
        match token.kind {
            Kind::Object => {
                open.push(Some(Learning {
                    index: objects.len(),
                    has_value: false,
                    makes_secret: false,
                    pending: Pending::Nothing,
                }));
                objects.push(false);
            }
            Kind::Array => open.push(None),
            Kind::End => {
                if let Some(Some(object)) = open.pop() {
                    objects[object.index] = object.has_value && object.makes_secret;
                }
            }
            Kind::Key | Kind::String | Kind::Number | Kind::Literal => {}
        }
    })?;
    Ok(objects)
}

/// A container open in the second pass.
struct Open {
    object: bool,
    /// Every string and number under it is a secret (it is under a secret name).
    whole: bool,
    /// Its `value` is a secret (an object the first pass found so).
    secret_value: bool,
    /// The key of the value that comes next names a secret.
    secret_key: bool,
}

/// The second pass: the replacements, in order.
struct Walk<'a, 'b> {
    secrets: &'a Secrets,
    text: &'a str,
    secret_values: std::vec::IntoIter<bool>,
    open: Vec<Open>,
    replaced: Vec<(usize, usize, String)>,
    /// How many strings deep this document is.
    depth: usize,
    /// What nested reading may still read (bytes).
    budget: &'b mut usize,
    /// Why JSON nested in one of its strings cannot be read.
    failed: Option<Invalid>,
}

impl Walk<'_, '_> {
    /// Whether the value that starts here is under a secret name.
    fn secret_here(&self) -> bool {
        self.open
            .last()
            .is_some_and(|o| o.whole || (o.object && o.secret_key))
    }

    fn replace(&mut self, token: Token, with: String) {
        self.replaced.push((token.start, token.end, with));
    }

    /// A string's text scrubbed, written back as a JSON string when it
    /// changed; one that is JSON redacted as a document first.
    fn scrub(&mut self, token: Token) {
        if self.nested(token) {
            return;
        }
        let value = json_text::unquoted(self.text, token);
        let scrubbed = self.secrets.scrub(&value);
        if scrubbed != value {
            self.replace(token, serde_json::Value::from(scrubbed).to_string());
        }
    }

    /// A string that is strict JSON (an object, an array, or a string of
    /// JSON), redacted as a document one string deeper and written back as
    /// a string (or, past [`NESTED_DEPTH`], the body failed if it names a
    /// secret): whether the string was dealt with.
    fn nested(&mut self, token: Token) -> bool {
        let value = json_text::unquoted(self.text, token);
        if self.failed.is_some() || !starts_as_json(&value) {
            return self.failed.is_some();
        }
        let fail = |why| {
            Some(Invalid {
                at: token.start,
                why,
            })
        };
        if !spend(self.budget, value.len()) {
            self.failed = fail(PAST_WORK);
            return true;
        }
        if json_text::read(&value, |_| ()).is_err() {
            // Not JSON: a string like any other.
            return false;
        }
        if self.depth + 1 > NESTED_DEPTH {
            match names_a_secret(value.into_owned(), self.budget) {
                Ok(false) => return false,
                Ok(true) => self.failed = fail(PAST_DEPTH),
                Err(()) => self.failed = fail(PAST_WORK),
            }
            return true;
        }
        match redact_at(self.secrets, &value, self.depth + 1, self.budget) {
            Ok(None) => false,
            Ok(Some(redacted)) => {
                let redacted = self.secrets.scrub(&redacted);
                self.replace(token, serde_json::Value::from(redacted).to_string());
                true
            }
            Err(e) => {
                self.failed = fail(e.why);
                true
            }
        }
    }

    fn token(&mut self, token: Token) {
        let secret = self.secret_here();
        match token.kind {
            Kind::Object | Kind::Array => {
                let object = token.kind == Kind::Object;
                let learned = object && self.secret_values.next().unwrap_or(true);
                self.open.push(Open {
                    object,
                    whole: secret,
                    secret_value: secret || learned,
                    secret_key: false,
                });
            }
            Kind::End => {
                self.open.pop();
            }
            Kind::Key => {
                let name = json_text::unquoted(self.text, token);
                let secret_key = is_secret_name(&name)
                    || (self.open.last().is_some_and(|o| o.secret_value)
                        && normalized(&name) == "value");
                if let Some(open) = self.open.last_mut() {
                    open.secret_key = secret_key;
                }
                self.scrub(token);
            }
            Kind::String if secret => {
                if json_text::unquoted(self.text, token) != REDACTED {
                    self.replace(token, format!("\"{REDACTED}\""));
                }
            }
            Kind::String => self.scrub(token),
            Kind::Number => {
                let number = &self.text[token.start..token.end];
                // A number under a secret name (a PIN), or one known secret.
                if secret || self.secrets.scrub(number) != number {
                    self.replace(token, format!("\"{REDACTED}\""));
                }
            }
            Kind::Literal => {}
        }
    }
}

/// Why JSON nested in strings past [`NESTED_DEPTH`] is not read.
const PAST_DEPTH: &str =
    "JSON nested in strings more than 8 deep names a secret (the recorder redacts 8 deep)";
/// Why JSON nested in strings past the work budget is not read.
const PAST_WORK: &str = "JSON nested in strings past what the recorder reads (8 times the body)";

/// Whether a string's text starts as a JSON object, an array or a string
/// does (a string of JSON, double-encoded, is JSON in a string too).
fn starts_as_json(value: &str) -> bool {
    value
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with(['{', '[', '"'])
}

/// Takes `n` bytes from `budget`; `false` when there are not that many.
fn spend(budget: &mut usize, n: usize) -> bool {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}

/// Whether `text` (strict JSON) names a secret: a key named like one, an
/// object whose `value` its siblings make one, here or in JSON nested in
/// its strings however deep (read on a worklist, not the call stack);
/// `Err` past the budget.
fn names_a_secret(text: String, budget: &mut usize) -> Result<bool, ()> {
    let mut pending = vec![text];
    while let Some(doc) = pending.pop() {
        let mut named = false;
        let mut inner = Vec::new();
        let read = json_text::read(&doc, |t| {
            if matches!(t.kind, Kind::Key | Kind::String) {
                let s = json_text::unquoted(&doc, t);
                named |= t.kind == Kind::Key && is_secret_name(&s);
                if starts_as_json(&s) {
                    inner.push(s.into_owned());
                }
            }
        });
        if read.is_err() {
            // A string that starts as JSON does but is not: text.
            continue;
        }
        if named || learn(&doc).is_ok_and(|objects| objects.contains(&true)) {
            return Ok(true);
        }
        for s in inner {
            if !spend(budget, s.len()) {
                return Err(());
            }
            pending.push(s);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(text: &str) -> String {
        let mut s = Secrets::default();
        s.add("granted-env-value");
        redact(&s, text).unwrap().unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn a_value_is_a_secret_by_its_siblings_wherever_they_stand() {
        for text in [
            r#"{"value":"v1","keyName":"key1"}"#,
            r#"{"keyName":"key1","value":"v1"}"#,
            r#"{"VALUE":"v1","Permissions":"Full"}"#,
            r#"{"value":"v1","type":"SecureString"}"#,
            r#"{"value":"v1","id":"https://v.vault.azure.net/secrets/a/1"}"#,
            r#"{"value":{"deep":["v1",2]},"name":"adminPassword"}"#,
        ] {
            let out = redacted(text);
            assert!(
                !out.contains("v1") && out.contains(REDACTED),
                "{text} → {out}"
            );
        }
        for text in [
            r#"{"value":"v1","type":"string"}"#,
            r#"{"value":[{"name":"a","id":"/x"}]}"#,
            r#"{"value":"v1","other":{"keyName":"k"}}"#,
        ] {
            assert_eq!(redacted(text), text);
        }
    }

    #[test]
    fn only_what_is_redacted_changes_and_keys_lose_known_values() {
        let text = "{ \"a\" : [ 1 ,\n \"granted-env-value\" ], \"password\":\t\"p\", \"granted-env-value\": true }";
        assert_eq!(
            redacted(text),
            "{ \"a\" : [ 1 ,\n \"REDACTED\" ], \"password\":\t\"REDACTED\", \"REDACTED\": true }"
        );
        // Escaped, a known value is still one, and is written back escaped.
        assert_eq!(
            redacted(r#"["x\"\u0067ranted-env-value"]"#),
            r#"["x\"REDACTED"]"#
        );
        assert_eq!(
            redacted(r#"{"password":"REDACTED"}"#),
            r#"{"password":"REDACTED"}"#
        );
    }
}
