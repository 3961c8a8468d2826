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

use azd_provider_sdk::http::Request as HttpRequest;
use azd_provider_sdk::prelude::*;
use azd_provider_sdk::serde_json::{Map, Value};
use azd_provider_sdk::{credentials, http};
use serde::Deserialize;

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

/// Sends one request (with `token` as its bearer) through the SDK's client:
/// the response's status, size and first 200 bytes, or the error's debug form
/// (`HttpRequestDenied`, `ConnectionReadTimeout`, …).
fn send(req: &Request, token: Option<&str>) -> Result<(u16, usize, String), String> {
    let mut request = HttpRequest::new(req.method.as_deref().unwrap_or("GET"), &req.url);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(text) = &req.body {
        request = request.body(text.as_bytes());
    }
    let response = request.send().map_err(|e: http::HttpError| e.message)?;
    let start = &response.body[..response.body.len().min(200)];
    Ok((
        response.status,
        response.body.len(),
        String::from_utf8_lossy(start).into_owned(),
    ))
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
            match credentials::token(scope) {
                Ok(t) => {
                    entry.insert("expires_on".into(), Value::from(t.expires_on));
                    entry.insert("length".into(), Value::from(t.token.len()));
                    token = Some(t.token);
                }
                Err(e) => {
                    let code = e.code().unwrap_or_default().replace('_', "-");
                    first_error.get_or_insert_with(|| format!("token: {code}: {}", e.message()));
                    entry.insert("code".into(), Value::from(code));
                    entry.insert("error".into(), Value::from(e.message()));
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
