//! http-probe: a test guest for the host's `[policy.http]`. Its deploy sends
//! each request its config lists through `wasi:http/outgoing-handler` and
//! reports what came back, so a test can see what the sandbox let through:
//!
//! ```yaml
//! infra:
//!   provider: http-probe
//!   config:
//!     requests:
//!       - url: http://127.0.0.1:8080/ok
//!       - url: https://example.com/
//!         method: PUT
//!         body: hello
//! ```
//!
//! With `token_scope: <scope>` it first asks the host for an access token
//! (`azd:credentials`) and sends it as every request's bearer; the output
//! `TOKEN` says how that went (`expires_on` and `length`, or `code` and
//! `error`; never the token).
//!
//! Deploy's output `RESULTS` holds one object per request, in order:
//! `{ "status": 200, "bytes": 12, "body": "<first 200 bytes>" }`, or
//! `{ "error": "<wasi:http error code>" }` when the request or the body's read
//! failed. Deploy itself fails (a `dependency` error naming the first failure)
//! only with `fail_on_error: true`.

use azd_provider_sdk::prelude::*;
use azd_provider_sdk::serde_json::{Map, Value};
use serde::Deserialize;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, Scheme,
};
use wasi::io::streams::StreamError;

/// `azd:credentials`: access tokens for the scopes the manifest grants.
mod tokens {
    wit_bindgen::generate!({
        path: "../../../../wit/deps/azd-credentials-0.1.0",
        world: "azd:credentials/credentials-user",
    });
}
use tokens::azd::credentials::credentials;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    requests: Vec<Request>,
    #[serde(default)]
    fail_on_error: bool,
    /// Get a token for this scope first, and send it with every request.
    #[serde(default)]
    token_scope: Option<String>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Request {
    url: String,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    body: Option<String>,
}

struct Probe {
    config: Config,
}

/// `scheme://authority/path?query` split for `wasi:http` (no URL crate needed).
fn split(url: &str) -> Result<(Scheme, &str, &str), String> {
    let (scheme, rest) = url.split_once("://").ok_or(format!("{url}: no scheme"))?;
    let scheme = match scheme {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_owned()),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    Ok((scheme, authority, path))
}

/// Sends one request (with `token` as its bearer); the response's status,
/// size and start, or the error code.
fn send(req: &Request, token: Option<&str>) -> Result<(u16, usize, String), String> {
    let (scheme, authority, path) = split(&req.url)?;
    let headers = Fields::new();
    if let Some(token) = token {
        headers
            .append("authorization", format!("Bearer {token}").as_bytes())
            .map_err(|e| format!("cannot set the authorization header: {e:?}"))?;
    }
    let outgoing = OutgoingRequest::new(headers);
    let method = match req.method.as_deref().unwrap_or("GET") {
        "GET" => Method::Get,
        "PUT" => Method::Put,
        "POST" => Method::Post,
        "DELETE" => Method::Delete,
        other => Method::Other(other.to_owned()),
    };
    let set = |ok: Result<(), ()>, what: &str| ok.map_err(|()| format!("cannot set {what}"));
    set(outgoing.set_method(&method), "method")?;
    set(outgoing.set_scheme(Some(&scheme)), "scheme")?;
    set(outgoing.set_authority(Some(authority)), "authority")?;
    set(outgoing.set_path_with_query(Some(path)), "path")?;
    let body = outgoing.body().map_err(|()| "no body".to_owned())?;
    if let Some(text) = &req.body {
        let stream = body.write().map_err(|()| "no body stream".to_owned())?;
        stream
            .blocking_write_and_flush(text.as_bytes())
            .map_err(|e| format!("writing the body: {e:?}"))?;
        drop(stream);
    }
    let future = outgoing_handler::handle(outgoing, None).map_err(|e| code(&e))?;
    OutgoingBody::finish(body, None).map_err(|e| code(&e))?;
    let response = loop {
        match future.get() {
            Some(result) => break result,
            None => future.subscribe().block(),
        }
    };
    let response = response
        .map_err(|()| "the response was taken twice".to_owned())?
        .map_err(|e| code(&e))?;
    let status = response.status();
    let incoming = response
        .consume()
        .map_err(|()| "no response body".to_owned())?;
    let (bytes, start) = read_all(&incoming)?;
    drop(IncomingBody::finish(incoming));
    Ok((status, bytes, start))
}

/// Reads a response body to its end: its length and first 200 bytes.
fn read_all(incoming: &IncomingBody) -> Result<(usize, String), String> {
    let stream = incoming
        .stream()
        .map_err(|()| "no body stream".to_owned())?;
    let mut total = 0;
    let mut start = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => {
                total += chunk.len();
                let room = 200usize.saturating_sub(start.len());
                start.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(match wasi::http::types::http_error_code(&e) {
                    Some(c) => code(&c),
                    None => e.to_debug_string(),
                });
            }
        }
    }
    Ok((total, String::from_utf8_lossy(&start).into_owned()))
}

/// A `wasi:http` error code as text: `HTTP-request-denied`, `connection-refused`, …
fn code(e: &ErrorCode) -> String {
    format!("{e:?}")
}

impl Provider for Probe {
    fn initialize(_project_path: String, options: ProvisioningOptions) -> Result<Self, Error> {
        Ok(Self {
            config: options.config()?,
        })
    }

    fn state(&mut self, _options: StateOptions) -> Result<ProvisioningState, Error> {
        Ok(ProvisioningState::empty())
    }

    fn deploy(&mut self) -> Result<DeployResult, Error> {
        let mut results = Vec::new();
        let mut first_error = None;
        let mut outputs = Vec::new();
        let mut token = None;
        if let Some(scope) = &self.config.token_scope {
            let mut entry = Map::new();
            match credentials::get_token(scope) {
                Ok(t) => {
                    entry.insert("expires_on".into(), Value::from(t.expires_on));
                    entry.insert("length".into(), Value::from(t.token.len()));
                    token = Some(t.token);
                }
                Err(e) => {
                    first_error.get_or_insert_with(|| format!("token: {}: {}", e.code, e.message));
                    entry.insert("code".into(), Value::from(e.code));
                    entry.insert("error".into(), Value::from(e.message));
                }
            }
            outputs.push(("TOKEN", Output::json_object(entry)));
        }
        for req in &self.config.requests {
            progress(format!("Requesting {}", req.url));
            let mut entry = Map::new();
            match send(req, token.as_deref()) {
                Ok((status, bytes, body)) => {
                    entry.insert("status".into(), Value::from(status));
                    entry.insert("bytes".into(), Value::from(bytes));
                    entry.insert("body".into(), Value::from(body));
                }
                Err(e) => {
                    first_error.get_or_insert_with(|| format!("{}: {e}", req.url));
                    entry.insert("error".into(), Value::from(e));
                }
            }
            results.push(Value::Object(entry));
        }
        if let (true, Some(e)) = (self.config.fail_on_error, first_error) {
            return Err(Error::dependency("http_failed", e));
        }
        outputs.push(("RESULTS", Output::json_array(results)));
        Ok(DeployResult::deployed(Deployment::with_outputs(outputs)))
    }

    fn preview(&mut self) -> Result<DeploymentPreview, Error> {
        Ok(DeploymentPreview::new(
            "http-probe sends requests on deploy only",
        ))
    }

    fn destroy(&mut self, _options: DestroyOptions) -> Result<DestroyResult, Error> {
        Ok(DestroyResult::new(Vec::<String>::new()))
    }
}

azd_provider_sdk::export!(Probe);
