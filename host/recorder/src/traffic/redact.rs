//! What a cassette must never hold: credentials. A recording replaces them
//! with [`REDACTED`] before anything is written, and replay applies the same
//! to each live request before comparing, so both sides read alike.
//!
//! The rules are `azd_wasm_host_core::secrets`' (by name, by value, by
//! shape), applied to each part of an exchange:
//! - headers: a credential-bearing name (`Authorization*`, `*key*`,
//!   `*secret*`, `*token*`, `*signature*`, cookies, …) is redacted whole; any
//!   other value loses known secrets and shapes (a SAS URL in `Location`,
//!   `x-ms-copy-source` or `Azure-AsyncOperation` loses its `sig`);
//! - the URI: secret query values by name (`sig`, `code`, `*token*`, …;
//!   the name read percent-decoded until it no longer changes, so `s%69g`
//!   and `s%2569g` are `sig`), known secrets (also percent-encoded, once or
//!   more), user-info;
//! - bodies (`keep`, `redact_body`, `redact_json`, `redact_xml`): their
//!   content and transfer codings undone first; JSON fields (read strictly,
//!   JSON in JSON strings too: JSON that does not parse is not text), form
//!   fields, and XML elements and attributes (read as well-formed XML: XML
//!   that does not parse is not text) named like secrets (and Key Vault's
//!   or `listKeys`' `value`), and everywhere known secrets and shapes; a
//!   body that is not text loses known secrets byte by byte and is kept
//!   only where the author marks it safe, and never when it is compressed
//!   data that cannot be read whole;
//! - known secrets: every token the host handed the guest and every value of
//!   an `env` grant, of any length.

use azd_wasm_host_core::secrets::{
    SecretValues, is_secret_header, is_secret_name, percent_decoded, scrub_shapes,
};

pub use azd_wasm_host_core::secrets::REDACTED;

/// Query parameter names (lowercase) whose values are always redacted,
/// beside those [`is_secret_name`] knows (`sig`, `key`, `signature`,
/// `apikey`, … are among those): an OAuth `code`, a SAS's signing key id.
const SECRET_QUERY: [&str; 2] = ["code", "skoid"];

/// The values known to be secret in this process (tokens given, granted
/// environment values), each replaced wherever it appears.
#[derive(Debug, Default)]
pub(crate) struct Secrets(pub(super) SecretValues);

impl Secrets {
    pub(crate) fn add(&mut self, value: &str) {
        self.0.add(value);
    }

    /// `text` with every known secret and every credential shape replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        scrub_shapes(&self.0.scrub(text))
    }

    /// `text` with every known secret replaced (and no shape looked for).
    pub(crate) fn scrub_values(&self, text: &str) -> String {
        self.0.scrub(text)
    }

    /// `bytes` (a body that is not text) with every known secret overwritten
    /// by as many `*`.
    pub(crate) fn mask(&self, bytes: &mut [u8]) {
        self.0.mask(bytes);
    }

    /// Whether `bytes` hold a known secret.
    pub(crate) fn holds(&self, bytes: &[u8]) -> bool {
        !self.0.find(bytes).is_empty()
    }

    /// A header's value, redacted by its name or by what it holds.
    pub(crate) fn header(&self, name: &str, value: &str) -> String {
        if is_secret_header(name) {
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

    /// `METHOD URL` of a request, redacted and without its query: how a
    /// refusal names it, and what a `binary:` mark is matched to.
    pub(crate) fn line(&self, parts: &http::request::Parts) -> String {
        let uri = self.uri(&parts.uri.to_string());
        let url = uri.split(['?', '#']).next().unwrap_or_default();
        format!("{} {url}", parts.method)
    }

    /// A URI with its secret query values (by name or by value) and
    /// user-info redacted.
    pub(crate) fn uri(&self, uri: &str) -> String {
        let uri = self.scrub(uri);
        let Some((base, query)) = uri.split_once('?') else {
            return uri;
        };
        let query: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if secret_query(k) => format!("{k}={REDACTED}"),
                _ => pair.to_owned(),
            })
            .collect();
        format!("{base}?{}", query.join("&"))
    }
}

/// Whether a query parameter (or form field) named `name` is a credential:
/// its name percent-decoded until it no longer changes (`s%69g`, `s%2569g`
/// and `%73ig` are `sig`; `%24skiptoken` is `$skiptoken`).
pub(super) fn secret_query(name: &str) -> bool {
    let decoded = percent_decoded(name);
    let lower = decoded.trim_start_matches('$').to_ascii_lowercase();
    let plain: String = lower.chars().filter(char::is_ascii_alphanumeric).collect();
    SECRET_QUERY.contains(&plain.as_str()) || is_secret_name(&lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        let mut s = Secrets::default();
        s.add("Eby8vdM02xNOcqFl/key==");
        s.add("pw1"); // a short value: removed where it stands alone
        s
    }

    #[test]
    fn credentials_in_headers_queries_and_values_are_redacted() {
        let s = secrets();
        for name in [
            "Authorization",
            "x-ms-copy-source-authorization",
            "X-Custom-Token",
            "x-api-key",
            "x-my-signature",
            "Set-Cookie",
            "x-functions-key",
        ] {
            assert_eq!(s.header(name, "v"), REDACTED, "{name}");
        }
        assert_eq!(s.header("x-ms-date", "Mon"), "Mon");
        assert_eq!(
            s.header("x-custom", "k=Eby8vdM02xNOcqFl/key=="),
            "k=REDACTED"
        );
        assert_eq!(
            s.header("Location", "https://a.blob.core.windows.net/c?sv=1&sig=abc"),
            "https://a.blob.core.windows.net/c?sv=1&sig=REDACTED"
        );
        assert_eq!(
            s.header("x-ms-copy-source", "https://u:p@a/c?sig=abc&se=1"),
            "https://REDACTED@a/c?sig=REDACTED&se=1"
        );
        assert_eq!(
            s.uri(
                "https://a.blob.core.windows.net/c?sv=1&sig=abc%2F&comp=list&$skiptoken=t&code=c"
            ),
            "https://a.blob.core.windows.net/c?sv=1&sig=REDACTED&comp=list&$skiptoken=REDACTED&code=REDACTED"
        );
        assert_eq!(s.uri("http://h/p?u=pw1"), "http://h/p?u=REDACTED");
        // Names written in percent-encoding, once or more, are read decoded.
        assert_eq!(
            s.uri("https://a/c?sv=1&s%69g=abc&S%2569G=def&%63ode=c&sk%256Fid=o&ok=1"),
            "https://a/c?sv=1&s%69g=REDACTED&S%2569G=REDACTED&%63ode=REDACTED&sk%256Fid=REDACTED&ok=1"
        );
        // A known value percent-encoded twice.
        assert_eq!(
            s.uri("http://h/p?x=Eby8vdM02xNOcqFl%252Fkey%253D%253D"),
            "http://h/p?x=REDACTED"
        );
        assert_eq!(s.uri("http://h/p"), "http://h/p");
        assert_eq!(s.scrub("apw1b stays"), "apw1b stays");
    }
}
