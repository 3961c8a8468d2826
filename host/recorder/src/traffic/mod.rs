//! Recorded traffic, for tests: what `azd-wasm-host test` uses to run a
//! provider against the outside world it met once, without it. [`Traffic`]
//! is the runtime's [`Intercept`](azd_wasm_host_runtime::Intercept).
//!
//! Every byte a guest exchanges with a service passes the HTTP gate
//! (`sandbox::http`), and every access token comes through `azd:credentials`,
//! so the host can stand in for both. A [`TrafficPlan`] (a JSON file the test
//! runner writes for one step; the development `listen` reads it from
//! `AZD_WASM_HOST_TRAFFIC`, the shipped sidecar never does) says how:
//! - **record**: requests go out as usual (after the policy's gate); each
//!   exchange and each token scope asked is written to the plan's log, its
//!   bodies' content and transfer codings undone ([`coding`]) and
//!   credentials redacted ([`redact`], [`keep`]; JSON read strictly by
//!   [`json_text`], XML by [`xml_text`]); an exchange that cannot be kept
//!   safely (a body that does not decode, decodes past its bound, is JSON
//!   or XML that does not parse, or is not text and not marked safe) is
//!   logged as refused instead, which refuses the recording;
//! - **replay**: nothing goes out; each request is answered from the plan's
//!   recorded exchanges ([`matching`]), a request not recorded fails with the
//!   nearest recorded one and the difference, and tokens are stand-ins for the
//!   recorded scopes;
//! - **faults** ([`HttpFault`]), in any mode: matching requests get the
//!   test's status, or fail as a timeout or a reset would.
//!
//! The log is JSON lines ([`LogEvent`]), appended as things happen, so what a
//! step did survives however its process ends. The policy is enforced first
//! in every mode: a cassette cannot reach an origin the manifest does not grant.

#[cfg(test)]
pub(crate) mod bodies_tests;
mod coding;
mod control;
mod error;
mod exchange;
mod fault;
#[cfg(test)]
mod json_body_tests;
mod json_text;
mod keep;
mod matching;
#[cfg(test)]
mod property_breaks_tests;
#[cfg(test)]
mod property_cases_tests;
#[cfg(test)]
mod property_tests;
#[cfg(test)]
mod property_xml_tests;
#[cfg(test)]
mod record_tests;
mod redact;
mod redact_body;
mod redact_json;
mod redact_xml;
mod serve;
mod tokens;
#[cfg(test)]
mod transfer_tests;
#[cfg(test)]
mod xml_body_tests;
mod xml_grammar;
mod xml_text;

pub use control::{LogEvent, Traffic, TrafficMode, TrafficPlan, read_log};
pub use error::{FaultError, TrafficError};
pub use exchange::{Exchange, RecordedBody, RecordedRequest, RecordedResponse};
pub use fault::HttpFault;
pub use matching::Miss;
pub use redact::REDACTED;
pub use tokens::STAND_IN_TOKEN;
