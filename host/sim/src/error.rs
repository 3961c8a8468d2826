//! [`CallError`]: why a call to the extension did not produce a usable answer;
//! [`SimError`]: why the simulated azd could not start, start an extension, or see what
//! it waited for.

use std::time::Duration;

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

/// Why the simulated azd could not start, start an extension or see what it waited for.
/// Each message is whole; a cause the system gave is its source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// Listening on loopback failed.
    #[error("binding the simulated azd to 127.0.0.1:0")]
    Bind(#[source] std::io::Error),
    /// The system gave no randomness (for the token key, a trace id).
    #[error("no randomness for {what}: {reason}")]
    NoRandomness {
        /// What it was for.
        what: &'static str,
        /// What the system said.
        reason: String,
    },
    /// The extension's program did not start.
    #[error("starting the extension {program}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The extension did not call `ExtensionService/Ready` in time, and was killed.
    #[error(
        "the extension {program} did not call ExtensionService/Ready within {timeout:?} \
         ({whose}); killed it{stderr}"
    )]
    NotReady {
        /// The program.
        program: String,
        /// How long it was given.
        timeout: Duration,
        /// Whose limit that is, and how to change it.
        whose: &'static str,
        /// What it wrote to stderr, when captured (with its heading; else empty).
        stderr: String,
    },
    /// The extension exited before calling `ExtensionService/Ready`.
    #[error(
        "the extension {program} exited before calling ExtensionService/Ready ({status}){stderr}"
    )]
    ExitedBeforeReady {
        /// The program.
        program: String,
        /// How it exited.
        status: String,
        /// What it wrote to stderr, when captured (with its heading; else empty).
        stderr: String,
    },
    /// No extension run in process called `ExtensionService/Ready` in time.
    #[error("no extension called ExtensionService/Ready within {0:?}")]
    NoReady(Duration),
    /// No provider of that name registered in time.
    #[error("no provider {name:?} registered within {timeout:?} (registered: {registered:?})")]
    NoProvider {
        /// The name waited for.
        name: String,
        /// How long.
        timeout: Duration,
        /// The providers registered meanwhile.
        registered: Vec<String>,
    },
    /// Waiting for the extension's process failed.
    #[error("waiting for the extension process")]
    Wait(#[source] std::io::Error),
    /// The extension's process did not exit in time, and was killed.
    #[error("the extension process did not exit within {timeout:?}; killed it{stderr}")]
    DidNotExit {
        /// How long it was given.
        timeout: Duration,
        /// What it wrote to stderr, when captured (with its heading; else empty).
        stderr: String,
    },
    /// Killing the extension's process failed.
    #[error("killing the extension process")]
    Kill(#[source] std::io::Error),
}
