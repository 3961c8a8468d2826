//! [`CallError`]: why a call to the extension did not produce a usable answer.

use azd_wasm_host_proto::azdext as pb;

/// Why a call to the extension did not produce a usable answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The answer envelope carried `error`: the provider failed, and azd shows this.
    #[error("the extension answered with an error: {}", .0.message)]
    Extension(pb::ExtensionError),
    /// The answer was of the wrong kind or lacks a field azd relies on (azd would crash or
    /// misbehave).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The stream ended before the answer arrived.
    #[error("the provisioning stream is closed")]
    StreamClosed,
    /// No answer within the call timeout.
    #[error("no answer within the call timeout")]
    Timeout,
}
