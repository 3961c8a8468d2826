//! Text bodies as a cassette holds them: JSON, form-encoded and XML bodies
//! lose what their field and element names say is a credential; every body
//! loses known secrets and credential shapes. A body that needed nothing
//! keeps its exact text. (`keep` decodes a body first, and handles one that
//! is not text.)
//!
//! A body that says it is JSON (its content type) or looks like it (its
//! first visible character is `{` or `[`) is read as strict JSON
//! ([`redact_json`](super::redact_json)), a BOM before it and JSON lines
//! included; one that does not read so is not text ([`NotJson`]): no rule
//! that reads fields may be left to guess at it.

use azd_wasm_host_core::secrets::is_secret_name;

use super::redact::{REDACTED, Secrets, secret_query};
use super::redact_json;

/// Why a body that is JSON by its content type or its first character
/// cannot be read as strict JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NotJson {
    /// What makes it JSON (`says it is JSON (application/json)`, …).
    pub(super) claim: String,
    /// What strict JSON does not allow in it, and where.
    pub(super) why: String,
}

/// What makes `bytes` JSON, if anything: a content type that says so
/// (`application/json`, `…+json`, `application/x-ndjson`, …), or a first
/// visible character `{` or `[` (whitespace, control and format characters,
/// a BOM among them, are not visible).
pub(super) fn json_claim(bytes: &[u8], headers: &http::HeaderMap) -> Option<String> {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase())
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if media.contains("json") {
        let media = azd_wasm_host_core::text::clip(media, 60);
        return Some(format!("says it is JSON (`{media}`)"));
    }
    let first = bytes.utf8_chunks().find_map(|chunk| {
        let visible = chunk
            .valid()
            .chars()
            .find(|&c| !(c.is_whitespace() || azd_wasm_host_core::text::is_invisible(c)));
        visible.or_else(|| (!chunk.invalid().is_empty()).then_some('\u{fffd}'))
    });
    match first {
        Some(c @ ('{' | '[')) => Some(format!("starts as JSON does (with `{c}`)")),
        _ => None,
    }
}

/// `text` (a decoded body), redacted as its kind allows; a body that is JSON
/// by its claim but not strict JSON is not redacted: why.
pub(super) fn text(
    secrets: &Secrets,
    text: &str,
    headers: &http::HeaderMap,
) -> Result<String, NotJson> {
    if let Some(claim) = json_claim(text.as_bytes(), headers) {
        let (bom, body) = text
            .strip_prefix('\u{feff}')
            .map_or(("", text), |rest| ("\u{feff}", rest));
        if body.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
            // An empty answer under a JSON content type: nothing to read.
            return Ok(text.to_owned());
        }
        return match redact_json::redact(secrets, body) {
            Ok(None) => Ok(secrets.scrub_values(text)),
            Ok(Some(redacted)) => Ok(secrets.scrub_values(&format!("{bom}{redacted}"))),
            Err(e) => Err(NotJson {
                claim,
                why: format!("{} at byte {}", e.why, e.at + bom.len()),
            }),
        };
    }
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    Ok(
        if content_type.contains("x-www-form-urlencoded") || looks_like_form(text) {
            secrets.scrub_values(&form(secrets, text))
        } else if text.trim_start().starts_with('<') {
            xml(&secrets.scrub(text))
        } else {
            secrets.scrub(text)
        },
    )
}

/// `a=1&b=2` with nothing a form could not hold (no space, quote or angle bracket).
fn looks_like_form(text: &str) -> bool {
    !text.is_empty()
        && text.contains('=')
        && !text
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b"\"'<>{}".contains(&b))
        && text
            .split('&')
            .all(|pair| pair.is_empty() || pair.contains('='))
}

/// A form body: fields named like secrets redacted, the rest scrubbed.
fn form(secrets: &Secrets, text: &str) -> String {
    text.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret_query(&name.replace('+', " ")) => {
                format!("{name}={REDACTED}")
            }
            _ => secrets.scrub(pair),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// An XML body: the text of elements named like secrets (and of a `Value`
/// or `Key` inside one, as a user delegation key's) and attributes named
/// like secrets redacted. A small scanner over tags: text is only ever
/// replaced, so what it cannot read stays as it was.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut stack: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let content = &rest[..open];
        let secret_text = match stack.as_slice() {
            [.., parent, own] => {
                is_secret_name(own)
                    || (matches!(own.as_str(), "value" | "key")
                        && (parent.ends_with("key") || is_secret_name(parent)))
            }
            [own] => is_secret_name(own),
            [] => false,
        };
        if secret_text && !content.trim().is_empty() {
            out.push_str(REDACTED);
        } else {
            out.push_str(content);
        }
        let Some(close) = rest[open..].find('>') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let tag = &rest[open..open + close + 1];
        out.push_str(&xml_tag(tag, &mut stack));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// One tag: the element stack follows it, secret attributes are redacted.
fn xml_tag(tag: &str, stack: &mut Vec<String>) -> String {
    let inner = tag.trim_start_matches('<').trim_end_matches('>');
    if inner.starts_with('?') || inner.starts_with('!') {
        return tag.to_owned();
    }
    if let Some(name) = inner.strip_prefix('/') {
        let name = local(name.trim());
        if let Some(at) = stack.iter().rposition(|n| *n == name) {
            stack.truncate(at);
        }
        return tag.to_owned();
    }
    let name_end = inner
        .find(|c: char| c.is_whitespace() || c == '/')
        .unwrap_or(inner.len());
    if !inner.ends_with('/') {
        stack.push(local(&inner[..name_end]));
    }
    // Attributes: name="value" pairs, the secret ones' values replaced.
    let mut out = String::from(&tag[..1 + name_end]);
    let mut attrs = &inner[name_end..];
    while let Some(eq) = attrs.find('=') {
        let (before, after) = attrs.split_at(eq);
        let quote = after[1..].chars().next();
        let Some(q @ ('"' | '\'')) = quote else { break };
        let Some(end) = after[2..].find(q) else { break };
        let name = before.trim();
        out.push_str(before);
        out.push('=');
        out.push(q);
        if is_secret_name(name) {
            out.push_str(REDACTED);
        } else {
            out.push_str(&after[2..2 + end]);
        }
        out.push(q);
        attrs = &after[2 + end + 1..];
    }
    out.push_str(attrs);
    out.push('>');
    out
}

/// An element's name without its namespace prefix, in lower case.
fn local(name: &str) -> String {
    name.rsplit(':').next().unwrap_or(name).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(text: &str, content_type: &str) -> String {
        let mut s = Secrets::default();
        s.add("granted-env-value");
        let mut headers = http::HeaderMap::new();
        if !content_type.is_empty() {
            headers.insert(http::header::CONTENT_TYPE, content_type.parse().unwrap());
        }
        super::text(&s, text, &headers).unwrap()
    }

    #[test]
    fn json_bodies_lose_secret_fields_key_vault_and_list_keys_values() {
        let keys = redacted(
            r#"{"keys":[{"keyName":"key1","value":"AAA111","permissions":"FULL"},{"keyName":"key2","value":"BBB222","permissions":"FULL"}]}"#,
            "application/json",
        );
        assert!(
            !keys.contains("AAA111") && !keys.contains("BBB222"),
            "{keys}"
        );
        assert!(keys.contains("\"keyName\":\"key1\""), "{keys}");
        let vault = redacted(
            r#"{"value":"s3cr3t","id":"https://v.vault.azure.net/secrets/db/1","attributes":{"enabled":true}}"#,
            "",
        );
        assert!(
            !vault.contains("s3cr3t") && vault.contains("\"enabled\":true"),
            "{vault}"
        );
        let cosmos = redacted(
            r#"{"primaryMasterKey":"pmk","secondaryMasterKey":"smk","key1":"k1","key2":"k2","adminPassword":"ap","blobSasToken":"st","sasUri":"https://a/b?sig=q","properties":{"port":5432}}"#,
            "",
        );
        for secret in [
            "pmk", "smk", "\"k1\"", "\"k2\"", "\"ap\"", "\"st\"", "sig=q",
        ] {
            assert!(!cosmos.contains(secret), "{secret} in {cosmos}");
        }
        assert!(cosmos.contains("5432"), "{cosmos}");
        let nested = redacted(
            r#"{"a":{"link":"https://x/y?sv=1&sig=zz","u":"granted-env-value"}}"#,
            "",
        );
        assert!(
            !nested.contains("sig=zz") && !nested.contains("granted-env-value"),
            "{nested}"
        );
        let secure = redacted(
            r#"{"p":{"type":"securestring","value":"hid"},"q":{"type":"string","value":"shown"}}"#,
            "",
        );
        assert!(
            !secure.contains("hid") && secure.contains("shown"),
            "{secure}"
        );
        // An ARM list (`value` an array of plain objects) is not a secret.
        let list = redacted(r#"{"value":[{"name":"a"}]}"#, "");
        assert_eq!(list, r#"{"value":[{"name":"a"}]}"#);
        // Untouched JSON keeps its exact bytes.
        assert_eq!(
            redacted("{ \"TableName\": \"audit\" }", ""),
            "{ \"TableName\": \"audit\" }"
        );
    }

    #[test]
    fn form_and_xml_bodies_lose_secret_fields_and_elements() {
        let form = redacted(
            "grant_type=client_credentials&client_id=app&client_secret=p%40ss&scope=x",
            "application/x-www-form-urlencoded",
        );
        assert_eq!(
            form,
            "grant_type=client_credentials&client_id=app&client_secret=REDACTED&scope=x"
        );
        // Recognised without the header too.
        assert!(redacted("password=hunter2&user=me", "").contains("password=REDACTED"));
        // Names written in percent-encoding, once or more; a known value encoded twice.
        assert_eq!(
            redacted(
                "client_s%65cret=a&client%255Fsecret=b&s%2569g=c&x=granted%252Denv%252Dvalue&ok=1",
                "application/x-www-form-urlencoded",
            ),
            "client_s%65cret=REDACTED&client%255Fsecret=REDACTED&s%2569g=REDACTED&x=REDACTED&ok=1"
        );
        let key = redacted(
            "<?xml version=\"1.0\"?><UserDelegationKey><SignedOid>o</SignedOid><Value>dmFsdWU=</Value></UserDelegationKey>",
            "application/xml",
        );
        assert!(
            !key.contains("dmFsdWU=") && key.contains("<SignedOid>o</SignedOid>"),
            "{key}"
        );
        let attrs = redacted(
            "<Cred Name=\"a\" Password=\"p\"/><Url>https://a/b?sig=s</Url>",
            "",
        );
        assert!(
            !attrs.contains("\"p\"") && !attrs.contains("sig=s"),
            "{attrs}"
        );
        assert!(attrs.contains("Name=\"a\""), "{attrs}");
        let list = "<EnumerationResults><Containers><Container><Name>web</Name></Container></Containers></EnumerationResults>";
        assert_eq!(redacted(list, "application/xml"), list);
        assert_eq!(
            redacted("plain granted-env-value text", ""),
            "plain REDACTED text"
        );
    }
}
