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
//! - [`client`]: the connection to azd (`AZD_SERVER`), auth metadata, loopback rule.
//! - [`broker`]: the stream: correlation of our requests, dispatch of azd's,
//!   ordered progress, size checks, one answer per request.
//! - [`manager`]: the `ProvisioningManager`: lazy stream, register/receive/ready,
//!   one handler per request kind, the current provider instance.
//! - [`provider`]: the `Provider` trait every provider implements.
//! - [`answer`]: checks that an answer cannot crash azd (required fields, output types).
//! - [`runtime`]: the WebAssembly provider (wasmtime): manifest, sandbox, cache.
//! - [`sim`]: a simulated azd, for tests and for `azd-wasm-host run`.
//! - [`run`]: `azd-wasm-host run`, which drives a provider without azd.
//! - [`cli`]: the command line.

// Library code must not panic on input nor write to stdout (azd's terminal);
// tests, benches and the CLI's own output are exempt.
#![warn(clippy::unwrap_used, clippy::print_stdout)]

pub mod answer;
pub mod broker;
pub mod cli;
pub mod client;
pub mod env_name;
pub mod error;
pub mod manager;
pub mod provider;
pub mod run;
pub mod runtime;
pub mod sim;
pub mod text;
