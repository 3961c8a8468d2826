//! Network faults a test declares: requests to an origin (optionally only
//! one method, or paths under a prefix) answered with a status of the
//! test's choosing, or failing as a timeout or a reset connection would.
//! A faulted request never leaves the host, is never recorded, and is
//! answered the same in every mode.

use std::collections::BTreeMap;

use azd_wasm_host_core::authority::HttpOrigin;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::error::FaultError;

/// One fault, as a test file writes it (`[[step.fault.http]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpFault {
    /// `scheme://host[:port]`, as `[policy.http] allow` names origins.
    pub origin: String,
    /// Only requests with this method (default: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Only requests whose path starts with this (default: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Answer with this HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The answer's headers (with `status`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The answer's body (with `status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Fail as a request whose answer never came (`connection-timeout`),
    /// at once rather than after the policy's deadline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timeout: bool,
    /// Fail as a connection the service reset (`connection-terminated`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
}

/// What a fault does to a request.
pub(crate) enum Effect {
    Answer(http::Response<Bytes>),
    Fail(wasmtime_wasi_http::Error),
}

impl HttpFault {
    /// Whether the fault is well formed; the message says what is wrong.
    pub fn check(&self) -> Result<(), FaultError> {
        HttpOrigin::parse(&self.origin).map_err(|e| FaultError::Origin {
            origin: self.origin.clone(),
            why: e.to_string(),
        })?;
        let ways = usize::from(self.status.is_some())
            + usize::from(self.timeout)
            + usize::from(self.reset);
        if ways != 1 {
            return Err(FaultError::Effects);
        }
        if let Some(status) = self.status
            && http::StatusCode::from_u16(status).is_err()
        {
            return Err(FaultError::Status(status));
        }
        if self.status.is_none() && (self.body.is_some() || !self.headers.is_empty()) {
            return Err(FaultError::StrayAnswer);
        }
        for name in self.headers.keys() {
            http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| FaultError::HeaderName(name.clone()))?;
        }
        if let Some(m) = &self.method {
            http::Method::from_bytes(m.as_bytes()).map_err(|_| FaultError::Method(m.clone()))?;
        }
        Ok(())
    }

    /// Whether `method uri` is one of the requests this fault takes.
    pub(crate) fn applies(&self, method: &http::Method, uri: &http::Uri) -> bool {
        let origin = HttpOrigin::parse(&self.origin).ok();
        origin.is_some()
            && HttpOrigin::of_uri(uri) == origin
            && self
                .method
                .as_ref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method.as_str()))
            && self
                .path
                .as_ref()
                .is_none_or(|p| uri.path().starts_with(p.as_str()))
    }

    /// What the request gets instead of the service's answer.
    pub(crate) fn effect(&self) -> Effect {
        if self.timeout {
            return Effect::Fail(wasmtime_wasi_http::Error::ConnectionTimeout);
        }
        if self.reset {
            return Effect::Fail(wasmtime_wasi_http::Error::ConnectionTerminated);
        }
        let mut response = http::Response::builder().status(self.status.unwrap_or(500));
        for (name, value) in &self.headers {
            response = response.header(name, value);
        }
        let body = Bytes::from(self.body.clone().unwrap_or_default());
        match response.body(body) {
            Ok(r) => Effect::Answer(r),
            Err(e) => Effect::Fail(wasmtime_wasi_http::Error::InternalError(Some(format!(
                "the test's fault for {} is not a valid answer: {e}",
                self.origin
            )))),
        }
    }

    /// The fault in a few words, for the log and for messages.
    pub fn describe(&self) -> String {
        let what = if self.timeout {
            "time out".to_owned()
        } else if self.reset {
            "reset".to_owned()
        } else {
            format!("answer {}", self.status.unwrap_or_default())
        };
        let scope = match (&self.method, &self.path) {
            (Some(m), Some(p)) => format!(" ({m} {p}…)"),
            (Some(m), None) => format!(" ({m})"),
            (None, Some(p)) => format!(" ({p}…)"),
            (None, None) => String::new(),
        };
        format!("{}{scope}: {what}", self.origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(text: &str) -> HttpFault {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_fault_takes_its_origin_method_and_path_only() {
        let f = fault(
            "origin = \"http://127.0.0.1:10000\"\nmethod = \"put\"\npath = \"/acct/web\"\nstatus = 403",
        );
        f.check().unwrap();
        let put = http::Method::PUT;
        let uri = |u: &str| u.parse::<http::Uri>().unwrap();
        assert!(f.applies(
            &put,
            &uri("http://127.0.0.1:10000/acct/web?restype=container")
        ));
        assert!(!f.applies(&http::Method::GET, &uri("http://127.0.0.1:10000/acct/web")));
        assert!(!f.applies(&put, &uri("http://127.0.0.1:10001/acct/web")));
        assert!(!f.applies(&put, &uri("http://127.0.0.1:10000/acct/uploads")));
        assert_eq!(
            f.describe(),
            "http://127.0.0.1:10000 (put /acct/web…): answer 403"
        );
    }

    #[test]
    fn a_fault_answers_with_its_status_or_fails_as_declared() {
        let f = fault(
            "origin = \"http://127.0.0.1:1\"\nstatus = 403\nheaders = { \"x-ms-error-code\" = \"AuthorizationFailure\" }\nbody = \"no\"",
        );
        let Effect::Answer(r) = f.effect() else {
            panic!("an answer")
        };
        assert_eq!(r.status(), 403);
        assert_eq!(r.headers()["x-ms-error-code"], "AuthorizationFailure");
        assert_eq!(r.body().as_ref(), b"no");
        let t = fault("origin = \"http://127.0.0.1:1\"\ntimeout = true");
        assert!(matches!(
            t.effect(),
            Effect::Fail(wasmtime_wasi_http::Error::ConnectionTimeout)
        ));
        let r = fault("origin = \"http://127.0.0.1:1\"\nreset = true");
        assert!(matches!(
            r.effect(),
            Effect::Fail(wasmtime_wasi_http::Error::ConnectionTerminated)
        ));
    }

    #[test]
    fn malformed_faults_are_refused_with_why() {
        let bad = |t: &str| fault(t).check().unwrap_err().to_string();
        assert!(bad("origin = \"h\"\nstatus = 403").contains("origin"));
        assert!(bad("origin = \"http://127.0.0.1:1\"").contains("exactly one"));
        assert!(
            bad("origin = \"http://127.0.0.1:1\"\nstatus = 403\ntimeout = true")
                .contains("exactly one")
        );
        assert!(bad("origin = \"http://127.0.0.1:1\"\nstatus = 42").contains("not an HTTP status"));
        assert!(
            bad("origin = \"http://127.0.0.1:1\"\nreset = true\nbody = \"x\"")
                .contains("go with status")
        );
        assert!(
            bad("origin = \"http://127.0.0.1:1\"\nstatus = 500\nheaders = { \"a b\" = \"x\" }")
                .contains("header name")
        );
        assert!(
            toml::from_str::<HttpFault>("origin = \"http://127.0.0.1:1\"\nstatuss = 4").is_err()
        );
        // Each refusal is its own case, for callers that tell them apart.
        assert_eq!(
            fault("origin = \"http://127.0.0.1:1\"\nstatus = 42").check(),
            Err(super::FaultError::Status(42))
        );
        assert_eq!(
            fault("origin = \"http://127.0.0.1:1\"\nstatus = 500\nmethod = \"a b\"").check(),
            Err(super::FaultError::Method("a b".into()))
        );
    }
}
