//! # azd-wasm-host-recorder
//!
//! Record and replay, for the development tools only: the development CLI
//! links this crate and the shipped sidecar does not (`scripts/import-graph.py`
//! forbids it), so none of it is in what azd runs from an installed package.
//!
//! - [`traffic`]: a provider's HTTP exchanges and token scopes, recorded
//!   (credentials redacted), replayed offline, or answered with a test's
//!   faults. [`traffic::Traffic`] is the runtime's
//!   [`Intercept`](azd_wasm_host_runtime::Intercept).
//! - [`conversation`]: golden conversations, what `listen --record` writes
//!   (every message both ways, the calls to azd's services, the HTTP
//!   traffic), with no secret in them. [`conversation::Recorder`] is the
//!   provisioning client's [`StreamTap`](azd_wasm_host_provisioning::StreamTap).
//!
//! - [`Tools`]: both, lent to `listen` (the sidecar crate's
//!   `DevelopmentTools`) by the development CLI.
//!
//! This file only declares modules and re-exports.

// Library code must not panic on input nor write to stdout (azd's terminal).
#![warn(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

pub mod conversation;
#[cfg(test)]
mod golden_http_tests;
mod tools;
pub mod traffic;

pub use tools::Tools;
