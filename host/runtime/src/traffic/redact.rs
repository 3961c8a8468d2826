//! What a cassette must never hold: credentials. A recording replaces them
//! with [`REDACTED`] before anything is written, and replay applies the same
//! to each live request before comparing, so both sides read alike.
//!
//! Redacted:
//! - headers that carry credentials ([`SECRET_HEADERS`]: `Authorization`,
//!   and so Shared Key signatures and bearer tokens, cookies, API keys);
//! - query parameters that carry them ([`SECRET_QUERY`]: SAS `sig`, `code`, …);
//! - in a JSON body, the values of fields named like secrets ([`SECRET_FIELDS`]);
//! - anywhere (URI, headers, bodies): every token the host handed the guest
//!   and every value of an `env` grant of 8 characters or more (an account
//!   key comes that way).

/// What a secret reads as in a cassette.
pub const REDACTED: &str = "REDACTED";

/// Header names (lowercase) whose values are always redacted.
const SECRET_HEADERS: [&str; 11] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-ms-copy-source-authorization",
    "x-ms-encryption-key",
    "x-api-key",
    "api-key",
    "ocp-apim-subscription-key",
    "x-functions-key",
    "x-ms-authorization-auxiliary",
];

/// Query parameter names (lowercase) whose values are always redacted.
const SECRET_QUERY: [&str; 10] = [
    "sig",
    "signature",
    "code",
    "key",
    "api-key",
    "apikey",
    "access_token",
    "token",
    "client_secret",
    "password",
];

/// JSON field names (lowercase) whose string values are redacted.
const SECRET_FIELDS: [&str; 14] = [
    "password",
    "secret",
    "clientsecret",
    "client_secret",
    "accesstoken",
    "access_token",
    "refresh_token",
    "id_token",
    "primarykey",
    "secondarykey",
    "connectionstring",
    "primaryconnectionstring",
    "secondaryconnectionstring",
    "sharedaccesssignature",
];

/// The shortest `env` grant value treated as a secret (shorter ones, such
/// as a region, would redact ordinary words).
pub(crate) const MIN_SECRET_LEN: usize = 8;

/// The values known to be secret in this process (tokens given, granted
/// environment values), each replaced wherever it appears.
#[derive(Debug, Default)]
pub(crate) struct Secrets(Vec<String>);

impl Secrets {
    pub(crate) fn add(&mut self, value: &str) {
        if value.len() >= MIN_SECRET_LEN && !self.0.iter().any(|v| v == value) {
            self.0.push(value.to_owned());
        }
    }

    /// `text` with every known secret replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.0 {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// A header's value, redacted by its name or by what it holds.
    pub(crate) fn header(&self, name: &str, value: &str) -> String {
        if SECRET_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            REDACTED.to_owned()
        } else {
            self.scrub(value)
        }
    }

    /// A message's headers as a cassette holds them: in order, transport
    /// headers left out, each value redacted by its name or by what it holds.
    pub(crate) fn headers(&self, map: &http::HeaderMap) -> Vec<(String, String)> {
        super::exchange::header_pairs(map)
            .into_iter()
            .map(|(name, value)| {
                let value = self.header(&name, &value);
                (name, value)
            })
            .collect()
    }

    /// A URI with its secret query values (by name or by value) redacted.
    pub(crate) fn uri(&self, uri: &str) -> String {
        let uri = self.scrub(uri);
        let Some((base, query)) = uri.split_once('?') else {
            return uri;
        };
        let query: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if SECRET_QUERY.contains(&k.to_ascii_lowercase().as_str()) => {
                    format!("{k}={REDACTED}")
                }
                _ => pair.to_owned(),
            })
            .collect();
        format!("{base}?{}", query.join("&"))
    }

    /// A body: known secrets replaced; in JSON, secret fields redacted too
    /// (the JSON is written again only when a field was).
    pub(crate) fn body(&self, bytes: &[u8]) -> Vec<u8> {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return bytes.to_vec();
        };
        let text = self.scrub(text);
        if let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(&text)
            && redact_fields(&mut doc)
        {
            return doc.to_string().into_bytes();
        }
        text.into_bytes()
    }
}

/// Redacts the string values of secret-named fields in `doc`; whether any was.
fn redact_fields(doc: &mut serde_json::Value) -> bool {
    match doc {
        serde_json::Value::Object(map) => {
            let mut any = false;
            for (k, v) in map.iter_mut() {
                if v.is_string() && SECRET_FIELDS.contains(&k.to_ascii_lowercase().as_str()) {
                    *v = REDACTED.into();
                    any = true;
                } else {
                    any |= redact_fields(v);
                }
            }
            any
        }
        serde_json::Value::Array(items) => {
            items.iter_mut().fold(false, |a, v| redact_fields(v) | a)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        let mut s = Secrets::default();
        s.add("Eby8vdM02xNOcqFl/key==");
        s.add("short"); // too short to be taken for a secret
        s
    }

    #[test]
    fn credentials_in_headers_queries_and_values_are_redacted() {
        let s = secrets();
        assert_eq!(s.header("Authorization", "SharedKey a:sig"), REDACTED);
        assert_eq!(s.header("x-ms-date", "Mon"), "Mon");
        assert_eq!(
            s.header("x-custom", "k=Eby8vdM02xNOcqFl/key=="),
            "k=REDACTED"
        );
        assert_eq!(
            s.uri("https://a.blob.core.windows.net/c?sv=1&sig=abc%2F&comp=list"),
            "https://a.blob.core.windows.net/c?sv=1&sig=REDACTED&comp=list"
        );
        assert_eq!(s.uri("http://h/p"), "http://h/p");
        assert_eq!(s.scrub("a short word"), "a short word");
    }

    #[test]
    fn json_bodies_lose_secret_fields_and_keep_the_rest() {
        let s = secrets();
        let body = br#"{"keys":[{"keyName":"key1","value":"x","primaryKey":"pk"}],"name":"n"}"#;
        let out: serde_json::Value = serde_json::from_slice(&s.body(body)).unwrap();
        assert_eq!(out["keys"][0]["primaryKey"], REDACTED);
        assert_eq!(out["keys"][0]["keyName"], "key1");
        assert_eq!(out["name"], "n");
        // Untouched JSON keeps its exact bytes.
        let plain = br#"{ "TableName": "audit" }"#;
        assert_eq!(s.body(plain), plain.to_vec());
        assert_eq!(s.body(&[0xff, 0x01]), vec![0xff, 0x01]);
    }
}
