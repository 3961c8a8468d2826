//! How a request proves who sends it: a Shared Key signature (the account key, HMAC-SHA256 over
//! the request as the Storage services define it) or a bearer token from azd.
//!
//! The strings signed, from the Storage REST reference ("Authorize with Shared Key"):
//! - Blob and Queue: the verb, eleven standard headers (Content-Length empty when 0), the
//!   `x-ms-` headers sorted, then `/<account><path>` and each query parameter sorted, as
//!   `\nname:value`;
//! - Table: the verb, Content-MD5, Content-Type, the date, then `/<account><path>`, plus
//!   `?comp=<value>` when the query has one.

use azd_provider_sdk::Error;
use azd_provider_sdk::http::Request;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The environment variable that holds the account key for `auth: shared-key`.
pub(crate) const KEY_VARIABLE: &str = "AZURE_STORAGE_KEY";
/// The scope of a token for the Storage data plane.
pub(crate) const STORAGE_SCOPE: &str = "https://storage.azure.com/.default";

/// What signs requests.
pub(crate) enum Signer {
    /// The account name and its decoded key.
    SharedKey { account: String, key: Vec<u8> },
    /// A bearer token from azd, asked for on each request (the host caches it).
    Token,
}

impl Signer {
    /// The account key from `AZURE_STORAGE_KEY`.
    pub(crate) fn shared_key(account: &str) -> Result<Self, Error> {
        let key = match std::env::var(KEY_VARIABLE) {
            Ok(key) => key,
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(Error::auth(
                    "invalid_storage_key",
                    format!("{KEY_VARIABLE} is not a base64 account key"),
                ));
            }
            Err(std::env::VarError::NotPresent) => String::new(),
        };
        if key.trim().is_empty() {
            return Err(Error::auth(
                "no_storage_key",
                format!(
                    "`auth: shared-key` needs the account key in {KEY_VARIABLE}, which is not set"
                ),
            )
            .with_suggestion(format!(
                "export {KEY_VARIABLE}=<key> before running azd (and keep {KEY_VARIABLE} in the \
                 manifest's [policy] env), or use `auth: token`"
            )));
        }
        let key = STANDARD.decode(key.trim()).map_err(|_| {
            Error::auth(
                "invalid_storage_key",
                format!("{KEY_VARIABLE} is not a base64 account key"),
            )
        })?;
        Ok(Self::SharedKey {
            account: account.to_owned(),
            key,
        })
    }

    /// The request with its `authorization` header.
    pub(crate) fn sign(&self, request: Request, table: bool) -> Result<Request, Error> {
        match self {
            Self::Token => {
                let token = azd_provider_sdk::credentials::token(STORAGE_SCOPE)?;
                Ok(request.header("authorization", format!("Bearer {}", token.token)))
            }
            Self::SharedKey { account, key } => {
                let text = if table {
                    table_string_to_sign(&request, account)
                } else {
                    string_to_sign(&request, account)
                };
                let mut mac = Hmac::<Sha256>::new_from_slice(key)
                    .map_err(|_| Error::internal("hmac_key", "the account key cannot key HMAC"))?;
                mac.update(text.as_bytes());
                let signature = STANDARD.encode(mac.finalize().into_bytes());
                Ok(request.header("authorization", format!("SharedKey {account}:{signature}")))
            }
        }
    }
}

fn header(headers: &[(String, String)], name: &str) -> String {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default()
}

/// `(path, [(name, value)])` of a URL, the query decoded and its names lower-cased.
fn path_and_query(url: &str) -> (String, Vec<(String, String)>) {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = after_scheme
        .find(['/', '?'])
        .map_or("", |i| &after_scheme[i..]);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let params = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k).to_ascii_lowercase(), decode(v))
        })
        .collect();
    (
        if path.is_empty() {
            "/".to_owned()
        } else {
            path.to_owned()
        },
        params,
    )
}

/// The Blob and Queue services' string to sign.
fn string_to_sign(request: &Request, account: &str) -> String {
    let headers = request.headers();
    let mut text = format!("{}\n", request.method());
    for name in [
        "content-encoding",
        "content-language",
        "content-length",
        "content-md5",
        "content-type",
        "date",
        "if-modified-since",
        "if-match",
        "if-none-match",
        "if-unmodified-since",
        "range",
    ] {
        let value = header(&headers, name);
        if !(name == "content-length" && value == "0") {
            text.push_str(&value);
        }
        text.push('\n');
    }
    let mut ms: Vec<(String, String)> = headers
        .iter()
        .filter(|(k, _)| k.to_ascii_lowercase().starts_with("x-ms-"))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    ms.sort();
    for (k, v) in ms {
        text.push_str(&format!("{k}:{v}\n"));
    }
    let (path, mut params) = path_and_query(request.url());
    text.push_str(&format!("/{account}{path}"));
    params.sort();
    let mut names: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
    names.dedup();
    for name in names {
        let values: Vec<&str> = params
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect();
        text.push_str(&format!("\n{name}:{}", values.join(",")));
    }
    text
}

/// The Table service's string to sign.
fn table_string_to_sign(request: &Request, account: &str) -> String {
    let headers = request.headers();
    let date = match header(&headers, "x-ms-date") {
        d if d.is_empty() => header(&headers, "date"),
        d => d,
    };
    let (path, params) = path_and_query(request.url());
    let mut resource = format!("/{account}{path}");
    if let Some((_, comp)) = params.iter().find(|(k, _)| k == "comp") {
        resource.push_str(&format!("?comp={comp}"));
    }
    format!(
        "{}\n{}\n{}\n{date}\n{resource}",
        request.method(),
        header(&headers, "content-md5"),
        header(&headers, "content-type"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_and_queue_requests_sign_their_headers_path_and_sorted_query() {
        let r = Request::get(
            "http://127.0.0.1:10000/devstoreaccount1?restype=x&comp=list&marker=a%2Fb",
        )
        .header("x-ms-version", "2021-12-02")
        .header("X-Ms-Date", "Tue, 01 Dec 2026 20:00:00 GMT");
        assert_eq!(
            string_to_sign(&r, "devstoreaccount1"),
            "GET\n\n\n\n\n\n\n\n\n\n\n\n\
             x-ms-date:Tue, 01 Dec 2026 20:00:00 GMT\nx-ms-version:2021-12-02\n\
             /devstoreaccount1/devstoreaccount1\ncomp:list\nmarker:a/b\nrestype:x"
        );
        // A PUT without a body says Content-Length 0, which is signed as empty; one with a body
        // signs its length and type.
        let put = Request::put("https://a.queue.core.windows.net/jobs");
        assert!(string_to_sign(&put, "a").starts_with("PUT\n\n\n\n\n"));
        let post = Request::post("https://a.blob.core.windows.net/c")
            .header("content-type", "application/json")
            .body("{}");
        assert!(string_to_sign(&post, "a").starts_with("POST\n\n\n2\n\napplication/json\n"));
    }

    #[test]
    fn table_requests_sign_the_short_form() {
        let r = Request::post("https://a.table.core.windows.net/Tables?comp=x&timeout=5")
            .header("content-type", "application/json")
            .header("x-ms-date", "D");
        assert_eq!(
            table_string_to_sign(&r, "a"),
            "POST\n\napplication/json\nD\n/a/Tables?comp=x"
        );
    }

    #[test]
    fn a_signature_names_the_account_and_changes_with_the_key() {
        let sign = |key: &[u8]| {
            let signer = Signer::SharedKey {
                account: "a".into(),
                key: key.to_vec(),
            };
            let r = signer
                .sign(
                    Request::get("https://a.blob.core.windows.net/?comp=list"),
                    false,
                )
                .unwrap();
            r.headers()
                .into_iter()
                .find(|(k, _)| k == "authorization")
                .unwrap()
                .1
        };
        assert!(sign(b"k1").starts_with("SharedKey a:"));
        assert_ne!(sign(b"k1"), sign(b"k2"));
        assert_eq!(sign(b"k1"), sign(b"k1"));
    }
}
