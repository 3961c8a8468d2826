//! Text bodies as a cassette holds them: JSON, form-encoded and XML bodies
//! lose what their field, element and attribute names say is a credential;
//! every body loses known secrets and credential shapes. A body that needed
//! nothing keeps its exact text. (`keep` decodes a body first, and handles
//! one that is not text.)
//!
//! A body that says it is JSON (its content type) or looks like it (its
//! first visible character is `{` or `[`) is read as strict JSON
//! ([`redact_json`](super::redact_json)), a BOM before it and JSON lines
//! included; one that says it is XML (`…xml` in its content type) or looks
//! like it (its first visible character is `<`, and it does not say it is
//! HTML) is read as well-formed XML ([`redact_xml`](super::redact_xml)).
//! One that does not read so is not text ([`Unread`]): no rule that reads
//! fields may be left to guess at it. HTML is not XML: it is redacted as XML
//! where it reads as XML, and otherwise scrubbed as text.

use super::redact::{REDACTED, Secrets, secret_query};
use super::{redact_json, redact_xml};

/// What a body claims to be, and is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    Xml,
}

impl Format {
    /// What the body would have to be to be read.
    pub(super) fn strict(self) -> &'static str {
        match self {
            Self::Json => "strict JSON",
            Self::Xml => "well-formed XML",
        }
    }

    /// What the recorder keeps of the format.
    pub(super) fn kept(self) -> &'static str {
        match self {
            Self::Json => {
                "JSON is kept only as RFC 8259 has it, after a BOM or one document a line, and \
                 JSON in its strings no more than 8 deep where it names a secret"
            }
            Self::Xml => {
                "XML is kept only well-formed as XML 1.0 has it, one document with no document \
                 type declaration"
            }
        }
    }
}

/// Why a body that is JSON or XML by its content type or its first
/// character cannot be read as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unread {
    pub(super) format: Format,
    /// What makes it JSON or XML (`says it is JSON (application/json)`, …).
    pub(super) claim: String,
    /// What the format does not allow in it, and where.
    pub(super) why: String,
}

/// The media type of `headers`' `Content-Type`, lower case, without parameters.
fn media(headers: &http::HeaderMap) -> String {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase())
        .unwrap_or_default();
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The first visible character of `bytes` (whitespace, control and format
/// characters, a BOM among them, are not visible; a byte that is not UTF-8
/// is U+FFFD).
fn first_visible(bytes: &[u8]) -> Option<char> {
    bytes.utf8_chunks().find_map(|chunk| {
        let visible = chunk
            .valid()
            .chars()
            .find(|&c| !(c.is_whitespace() || azd_wasm_host_core::text::is_invisible(c)));
        visible.or_else(|| (!chunk.invalid().is_empty()).then_some('\u{fffd}'))
    })
}

/// What makes `bytes` JSON or XML, if anything: a content type that says so
/// (`application/json`, `…+json`, `application/x-ndjson`; `application/xml`,
/// `text/xml`, `…+xml`), or a first visible character `{` or `[` (JSON) or
/// `<` (XML, unless the content type says HTML).
pub(super) fn claim(bytes: &[u8], headers: &http::HeaderMap) -> Option<(Format, String)> {
    let media = media(headers);
    let shown = azd_wasm_host_core::text::clip(&media, 60);
    if media.contains("json") {
        return Some((Format::Json, format!("says it is JSON (`{shown}`)")));
    }
    if media.contains("xml") {
        return Some((Format::Xml, format!("says it is XML (`{shown}`)")));
    }
    match first_visible(bytes) {
        Some(c @ ('{' | '[')) => Some((Format::Json, format!("starts as JSON does (with `{c}`)"))),
        Some('<') if !media.contains("html") => {
            Some((Format::Xml, "starts as XML does (with `<`)".to_owned()))
        }
        _ => None,
    }
}

/// `text` (a decoded body), redacted as its kind allows; a body that is
/// JSON or XML by its claim but does not read as such is not redacted: why.
pub(super) fn text(
    secrets: &Secrets,
    text: &str,
    headers: &http::HeaderMap,
) -> Result<String, Unread> {
    let (bom, body) = text
        .strip_prefix('\u{feff}')
        .map_or(("", text), |rest| ("\u{feff}", rest));
    if let Some((format, claim)) = claim(text.as_bytes(), headers) {
        if body.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
            // An empty answer under a JSON or XML content type: nothing to read.
            return Ok(text.to_owned());
        }
        let unread = |at: usize, why: &str| Unread {
            format,
            claim: claim.clone(),
            why: format!("{why} at byte {at}"),
        };
        return match format {
            Format::Json => match redact_json::redact(secrets, body) {
                Ok(None) => Ok(secrets.scrub_values(text)),
                Ok(Some(redacted)) => Ok(secrets.scrub_values(&format!("{bom}{redacted}"))),
                Err(e) => Err(unread(e.at + bom.len(), e.why)),
            },
            Format::Xml => match redact_xml::redact(secrets, text) {
                Ok(None) => Ok(secrets.scrub(text)),
                Ok(Some(redacted)) => Ok(secrets.scrub(&redacted)),
                Err(e) => Err(unread(e.at, &e.why)),
            },
        };
    }
    if media(headers).contains("html") && first_visible(text.as_bytes()) == Some('<') {
        // HTML that happens to be XML is redacted as XML; other HTML is text.
        return Ok(match redact_xml::redact(secrets, text) {
            Ok(Some(redacted)) => secrets.scrub(&redacted),
            Ok(None) | Err(_) => secrets.scrub(text),
        });
    }
    Ok(
        if media(headers).contains("x-www-form-urlencoded") || looks_like_form(text) {
            secrets.scrub_values(&form(secrets, text))
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
            "<r><Cred Name=\"a\" Password=\"p\"/><Url>https://a/b?sig=s</Url></r>",
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
