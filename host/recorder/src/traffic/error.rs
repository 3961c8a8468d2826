//! What can be wrong with a step's traffic: its plan, one of its faults, its
//! log, a recorded body ([`TrafficError`], [`FaultError`]). An I/O or JSON
//! failure is kept as the source; every message names the file or the fault.

use std::path::PathBuf;

/// Why a traffic plan, its log or a recorded body cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrafficError {
    /// The plan file could not be read.
    #[error("reading the traffic plan {}", path.display())]
    ReadPlan {
        /// The plan.
        path: PathBuf,
        /// What reading it answered.
        source: std::io::Error,
    },
    /// The plan file is not a traffic plan.
    #[error("reading the traffic plan {}", path.display())]
    PlanShape {
        /// The plan.
        path: PathBuf,
        /// The JSON reader's words.
        source: serde_json::Error,
    },
    /// One of the plan's faults is malformed.
    #[error("fault {origin}: {why}")]
    Fault {
        /// The fault's origin, as the plan gives it.
        origin: String,
        /// What is wrong with it.
        why: FaultError,
    },
    /// The log could not be opened for appending.
    #[error("opening the traffic log {}", path.display())]
    OpenLog {
        /// The log.
        path: PathBuf,
        /// What opening it answered.
        source: std::io::Error,
    },
    /// The log could not be read.
    #[error("reading {}", path.display())]
    ReadLog {
        /// The log.
        path: PathBuf,
        /// What reading it answered.
        source: std::io::Error,
    },
    /// A line of the log is not a traffic event.
    #[error("{} line {line}: not a traffic event", path.display())]
    LogLine {
        /// The log.
        path: PathBuf,
        /// The line's number, from 1.
        line: usize,
        /// The JSON reader's words.
        source: serde_json::Error,
    },
    /// A recorded body's base64 does not decode.
    #[error("body_base64 is not base64: {why}")]
    NotBase64 {
        /// The decoder's words.
        why: base64::DecodeError,
    },
}

/// Why an HTTP fault of a test step is malformed (what `HttpFault::check` refuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FaultError {
    /// Its origin is not `scheme://host[:port]`.
    #[error("origin {origin:?}: {why}")]
    Origin {
        /// The origin given.
        origin: String,
        /// Why it is not one.
        why: String,
    },
    /// Not exactly one of its three effects is given.
    #[error("give exactly one of status = N, timeout = true, reset = true")]
    Effects,
    /// Its status is not an HTTP status.
    #[error("status {0} is not an HTTP status (100-999)")]
    Status(u16),
    /// Headers or a body without a status to carry them.
    #[error("headers and body go with status")]
    StrayAnswer,
    /// One of its headers has a name HTTP does not allow.
    #[error("{0:?} is not a header name")]
    HeaderName(String),
    /// Its method is not an HTTP method.
    #[error("{0:?} is not a method")]
    Method(String),
}
