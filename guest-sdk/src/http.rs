//! Outbound HTTP (feature `http`): `wasi:http/outgoing-handler` behind a small blocking API.
//!
//! ```no_run
//! # use azd_provider_sdk::http::Request;
//! # fn f() -> Result<(), azd_provider_sdk::Error> {
//! let response = Request::get("https://myaccount.blob.core.windows.net/?comp=list")
//!     .header("x-ms-version", "2021-12-02")
//!     .send()?;
//! if response.status >= 400 {
//!     // the service's own error: see response.header("x-ms-error-code")
//! }
//! # Ok(()) }
//! ```
//!
//! The host lets a request through only to an origin the manifest grants
//! (`[policy.http] allow`), does TLS itself, bounds each request's time
//! (`timeout_secs`) and the bytes a response may carry (`max_response_bytes`).
//! A refusal or failure is an [`HttpError`] with the `wasi:http` error code in
//! kebab case (`http-request-denied`, `connection-refused`,
//! `connection-read-timeout`, `TLS-…` as `tls-certificate-error`, …); `?` turns
//! it into an [`Error`] azd shows (category `dependency`, code `http_…`).
//!
//! A request with a body, or one whose method is not `GET`/`HEAD`, carries a
//! `content-length` header the SDK sets (services such as Azure Storage refuse a
//! chunked upload of a few bytes), so what a signature covers is what is sent.
//!
//! Off WebAssembly (native unit tests) there is no network here: `send`
//! returns an `HttpError` with code `unavailable`.

use std::fmt;

use crate::Error;

/// One HTTP request, built then sent with [`Request::send`]. Its `Debug` form hides the values
/// of credential headers (`authorization`, `cookie`, …).
#[derive(Clone, PartialEq, Eq)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// A response read to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Why a request got no response: the `wasi:http` error code (kebab case) and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpError {
    /// `http-request-denied`, `connection-refused`, `dns-error`, `tls-certificate-error`,
    /// `connection-read-timeout`, `http-response-body-size`, `invalid-url`, `unavailable`, …
    pub code: String,
    /// The method and URL (without its query), and the error's detail.
    pub message: String,
}

/// Headers whose values are credentials: never shown.
const SECRET_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-ms-copy-source-authorization",
];

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let secret = SECRET_HEADERS.iter().any(|s| k.eq_ignore_ascii_case(s));
                (k.as_str(), if secret { "<redacted>" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &without_query(&self.url))
            .field("headers", &headers)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// A URL as errors show it: without its query, which may carry a signature (`sig=`).
fn without_query(url: &str) -> &str {
    url.split_once('?').map_or(url, |(base, _)| base)
}

impl Request {
    /// A request with any method.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A `GET`.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new("GET", url)
    }

    /// A `PUT`.
    pub fn put(url: impl Into<String>) -> Self {
        Self::new("PUT", url)
    }

    /// A `POST`.
    pub fn post(url: impl Into<String>) -> Self {
        Self::new("POST", url)
    }

    /// A `DELETE`.
    pub fn delete(url: impl Into<String>) -> Self {
        Self::new("DELETE", url)
    }

    /// Adds a header (a name may repeat).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers the request is sent with, `content-length` included when the SDK adds it.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = self.headers.clone();
        let has_length = headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-length"));
        let bodiless = matches!(self.method.as_str(), "GET" | "HEAD");
        if !has_length && (!self.body.is_empty() || !bodiless) {
            headers.push(("content-length".to_owned(), self.body.len().to_string()));
        }
        headers
    }

    /// The body.
    pub fn body_bytes(&self) -> &[u8] {
        &self.body
    }

    /// Sends the request and reads the whole response. Any status is a response: check
    /// `status` for the service's own errors.
    pub fn send(&self) -> Result<Response, HttpError> {
        let url = Url::parse(&self.url).map_err(|why| self.error("invalid-url", why))?;
        imp::send(self, &url).map_err(|(code, detail)| self.error(&code, detail))
    }

    fn error(&self, code: &str, detail: impl fmt::Display) -> HttpError {
        HttpError {
            code: code.to_owned(),
            message: format!("{} {}: {detail}", self.method, without_query(&self.url)),
        }
    }
}

impl Response {
    /// The first value of a header (the name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for HttpError {}

impl From<HttpError> for Error {
    fn from(e: HttpError) -> Self {
        let code = format!("http_{}", e.code.replace('-', "_"));
        let suggestion = if e.code == "http-request-denied" {
            "the provider's manifest does not grant this origin: add it to `allow` under \
             [policy.http] in provider.toml"
        } else if e.code.starts_with("tls-") {
            "TLS with the server failed: check the host name and that its certificate is valid"
        } else if e.code.ends_with("-timeout") {
            "the server did not answer in time (the manifest's [policy.http] timeout_secs bounds \
             each request); check that it is reachable, or try again"
        } else if e.code.starts_with("dns-") || e.code.starts_with("destination-") {
            "the host name did not resolve, or the address is unreachable: check the URL"
        } else if e.code == "connection-refused" {
            "nothing accepted the connection: check the URL's host and port, and that the \
             service is running"
        } else {
            ""
        };
        Error::dependency(code, e.to_string()).with_suggestion(suggestion)
    }
}

/// A URL split for `wasi:http`.
#[derive(Debug, PartialEq, Eq)]
struct Url<'a> {
    https: bool,
    authority: &'a str,
    path_and_query: &'a str,
}

impl<'a> Url<'a> {
    fn parse(url: &'a str) -> Result<Self, String> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| "the URL has no scheme (https://…)".to_owned())?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            other => return Err(format!("scheme {other:?} is not http or https")),
        };
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path_and_query) = rest.split_at(split);
        if authority.is_empty() || authority.contains('@') {
            return Err("the URL needs a host, and no user name".to_owned());
        }
        Ok(Self {
            https,
            authority,
            path_and_query: if path_and_query.is_empty() {
                "/"
            } else {
                path_and_query
            },
        })
    }
}

/// `HttpRequestDenied` → `http-request-denied`; `TlsAlertReceived(..)` → `tls-alert-received`.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn kebab(debug: &str) -> String {
    let name = debug
        .trim_start_matches("ErrorCode::")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use wasi::http::outgoing_handler;
    use wasi::http::types::{
        ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, Scheme,
    };
    use wasi::io::streams::StreamError;

    use super::{Request, Response, Url, kebab};

    type Failure = (String, String);

    fn code(e: &ErrorCode) -> Failure {
        let debug = format!("{e:?}");
        (kebab(&debug), debug)
    }

    fn refused(what: &str) -> Failure {
        ("http-request-invalid".to_owned(), what.to_owned())
    }

    fn method(name: &str) -> Method {
        match name {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "OPTIONS" => Method::Options,
            other => Method::Other(other.to_owned()),
        }
    }

    fn outgoing(req: &Request, url: &Url<'_>) -> Result<OutgoingRequest, Failure> {
        let headers = Fields::new();
        for (name, value) in req.headers() {
            headers
                .append(&name.to_ascii_lowercase(), value.as_bytes())
                .map_err(|e| refused(&format!("header {name}: {e:?}")))?;
        }
        let request = OutgoingRequest::new(headers);
        let scheme = if url.https {
            Scheme::Https
        } else {
            Scheme::Http
        };
        let set = |ok: Result<(), ()>, what: &str| ok.map_err(|()| refused(what));
        set(request.set_method(&method(&req.method)), "the method")?;
        set(request.set_scheme(Some(&scheme)), "the scheme")?;
        set(request.set_authority(Some(url.authority)), "the host")?;
        set(
            request.set_path_with_query(Some(url.path_and_query)),
            "the path",
        )?;
        Ok(request)
    }

    pub(super) fn send(req: &Request, url: &Url<'_>) -> Result<Response, Failure> {
        let request = outgoing(req, url)?;
        let body = request.body().map_err(|()| refused("no request body"))?;
        let future = outgoing_handler::handle(request, None).map_err(|e| code(&e))?;
        if !req.body.is_empty() {
            let stream = body.write().map_err(|()| refused("no body stream"))?;
            // blocking_write_and_flush takes at most 4096 bytes at a time.
            for chunk in req.body.chunks(4096) {
                stream
                    .blocking_write_and_flush(chunk)
                    .map_err(|e| ("http-request-body".to_owned(), format!("{e:?}")))?;
            }
            drop(stream);
        }
        OutgoingBody::finish(body, None).map_err(|e| code(&e))?;
        let response = loop {
            match future.get() {
                Some(result) => break result,
                None => future.subscribe().block(),
            }
        };
        let response = response
            .map_err(|()| refused("the response was taken twice"))?
            .map_err(|e| code(&e))?;
        let status = response.status();
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_ascii_lowercase(),
                    String::from_utf8_lossy(&v).into_owned(),
                )
            })
            .collect();
        let incoming = response
            .consume()
            .map_err(|()| refused("no response body"))?;
        let body = read_all(&incoming)?;
        drop(IncomingBody::finish(incoming));
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    fn read_all(incoming: &IncomingBody) -> Result<Vec<u8>, Failure> {
        let stream = incoming.stream().map_err(|()| refused("no body stream"))?;
        let mut body = Vec::new();
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => body.extend_from_slice(&chunk),
                Err(StreamError::Closed) => return Ok(body),
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(match wasi::http::types::http_error_code(&e) {
                        Some(c) => code(&c),
                        None => ("http-response-incomplete".to_owned(), e.to_debug_string()),
                    });
                }
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::{Request, Response, Url};

    pub(super) fn send(_req: &Request, _url: &Url<'_>) -> Result<Response, (String, String)> {
        Err((
            "unavailable".to_owned(),
            "outbound HTTP exists only inside the component (azd-wasm-host runs it)".to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_scheme_host_and_path() {
        let u = Url::parse("https://a.blob.core.windows.net/c?restype=container").unwrap();
        assert!(u.https);
        assert_eq!(u.authority, "a.blob.core.windows.net");
        assert_eq!(u.path_and_query, "/c?restype=container");
        let u = Url::parse("http://127.0.0.1:10000?comp=list").unwrap();
        assert!(!u.https);
        assert_eq!(
            (u.authority, u.path_and_query),
            ("127.0.0.1:10000", "?comp=list")
        );
        assert_eq!(Url::parse("HTTP://h").unwrap().path_and_query, "/");
        for bad in ["a.com/x", "ftp://a.com/", "https:///x", "https://u@h/"] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn debug_hides_credentials() {
        let r = Request::get("https://h/x?sig=SIGNED")
            .header("Authorization", "Bearer TOKEN")
            .header("x-ms-version", "2021-12-02");
        let shown = format!("{r:?}");
        assert!(
            !shown.contains("TOKEN") && !shown.contains("SIGNED"),
            "{shown}"
        );
        assert!(shown.contains("2021-12-02"), "{shown}");
    }

    #[test]
    fn a_request_with_a_body_or_a_writing_method_states_its_length() {
        let length = |r: &Request| {
            r.headers()
                .into_iter()
                .find(|(k, _)| k == "content-length")
                .map(|(_, v)| v)
        };
        assert_eq!(length(&Request::get("https://h/")), None);
        assert_eq!(length(&Request::put("https://h/")).as_deref(), Some("0"));
        assert_eq!(
            length(&Request::post("https://h/").body("{}")).as_deref(),
            Some("2")
        );
        let own = Request::post("https://h/")
            .header("Content-Length", "2")
            .body("{}");
        assert_eq!(own.headers().len(), 1);
    }

    #[test]
    fn error_codes_read_as_kebab_case_and_become_azd_errors() {
        assert_eq!(kebab("HttpRequestDenied"), "http-request-denied");
        assert_eq!(kebab("ErrorCode::ConnectionRefused"), "connection-refused");
        assert_eq!(
            kebab("TlsAlertReceived(TlsAlertReceivedPayload { .. })"),
            "tls-alert-received"
        );
        assert_eq!(kebab("ConnectionReadTimeout"), "connection-read-timeout");
        let e = Request::get("https://h/x").send().unwrap_err();
        assert_eq!(e.code, "unavailable");
        assert!(e.message.starts_with("GET https://h/x: "), "{}", e.message);
        let bad = Request::get("h/x").send().unwrap_err();
        assert_eq!(bad.code, "invalid-url");
        let signed = Request::get("https://h/c?sv=1&sig=SECRET")
            .send()
            .unwrap_err();
        assert!(!signed.message.contains("SECRET"), "{}", signed.message);
        let denied: Error = HttpError {
            code: "http-request-denied".into(),
            message: "GET https://h/: HttpRequestDenied".into(),
        }
        .into();
        assert_eq!(denied.code(), Some("http_http_request_denied"));
        assert!(denied.suggestion().contains("[policy.http]"));
        let tls: Error = HttpError {
            code: "tls-certificate-error".into(),
            message: "m".into(),
        }
        .into();
        assert!(tls.suggestion().contains("certificate"));
    }
}
