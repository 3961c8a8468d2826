//! # azd-wasm-host
//!
//! An azd extension that serves a provisioning provider written as a sandboxed
//! WebAssembly component. A request travels
//!
//! ```text
//! azd ──gRPC stream──▶ client ─▶ broker ─▶ manager ─▶ provider ─▶ component
//!     ◀─answer / progress── broker ◀── Progress ◀─── host import ◀──┘
//! ```
//!
//! Rooms (all private; what callers need is re-exported below):
//! - `client`: the connection to azd (`AZD_SERVER`), auth metadata, loopback rule.
//! - `broker`: the stream: correlation of our requests, dispatch of azd's,
//!   ordered progress, size checks, one answer per request, shutdown.
//! - `manager`: the `ProvisioningManager`: lazy stream, register/receive/ready,
//!   one handler per request kind, the current provider instance.
//! - `provider`: the `Provider` seam every provider implements, and `Progress`.
//! - `answer`: checks that an answer cannot crash azd (required fields, output types).
//! - `error`: `ProviderError` and its one conversion to azd's `ExtensionError`.
//! - [`runtime`]: the WebAssembly provider (wasmtime): manifest, sandbox, cache.
//! - `env_name`, `text`: azd's environment-name rule; guest text made safe for
//!   a terminal.
//!
//! The binary's own rooms (`cli`, `listen`, `run`) live beside `main.rs`; the
//! simulated azd `run` plays against is the `azd-wasm-host-sim` crate.

// Library code must not panic on input nor write to stdout (azd's terminal).
#![warn(clippy::unwrap_used, clippy::print_stdout)]

mod answer;
mod azd_services;
mod broker;
mod client;
mod env_name;
mod error;
mod inbound;
mod manager;
mod pacing;
mod provider;
pub mod runtime;
mod text;

pub use azd_wasm_host_proto::{Request, RequestKind};
pub use broker::{BrokerError, MAX_IN_FLIGHT, StreamEnd};
pub use client::{AzdClient, ClientError, ENV_SERVER, ENV_TOKEN, require_env};
pub use env_name::{EnvironmentName, InvalidEnvironmentName};
pub use error::{ErrorCategory, ErrorDetail, ErrorLink, ErrorOrigin, FAULT_CODES, ProviderError};
pub use manager::{ManagerError, ProvisioningManager};
pub use provider::{CallContext, MAX_PROGRESS_BYTES, Progress, Provider, ProviderFactory};
pub use text::sanitize;
