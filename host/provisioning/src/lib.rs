//! # azd-wasm-host-provisioning
//!
//! azd's side of the host: the extension's end of azd's gRPC protocol, with
//! no WebAssembly in it. A request travels
//!
//! ```text
//! azd ──gRPC stream──▶ client ─▶ broker ─▶ manager ─▶ Provider (any)
//!     ◀── answer ───── pacing ◀── broker ◀──┘
//!     ◀── progress ─── pacing ◀── progress ◀── the provider's Progress
//! ```
//!
//! - `client`: the connection to azd (`AZD_SERVER`), the token on every call,
//!   plaintext only to loopback; `contract`: which of azd's two packages
//!   (`azd.extensions.v1`, else `azdext`) the calls go under, decided once.
//! - `broker`: the stream: our requests matched with azd's answers, azd's
//!   requests numbered and dispatched (bounded), one answer per request,
//!   shutdown. `inbound` reads what azd sends, safely; `pacing` spaces what
//!   we send; `progress` is a request's progress on the stream.
//! - `manager`: the [`ProvisioningManager`]: lazy stream, register, receive,
//!   ready, a handler per request kind; `answer` makes answers safe for azd.
//! - `adapter`: [`AzdClient`] as the [`AzdServices`](azd_wasm_host_core::AzdServices)
//!   a provider's imports call; `tokens`: access tokens from `azd auth token`.
//! - [`StreamTap`]: what watches the stream both ways (the golden
//!   conversations of `listen --record`, which the `azd-wasm-host-recorder`
//!   crate writes).
//!
//! This file only declares modules and re-exports.

// Library code must not panic on input nor write to stdout (azd's terminal).
#![warn(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

mod adapter;
mod answer;
mod broker;
mod client;
mod contract;
mod inbound;
mod manager;
mod pacing;
mod progress;
mod tokens;

pub use broker::{BrokerError, StreamEnd, Unanswered};
pub use client::{AzdClient, ClientError, StreamTap, require_env};
pub use inbound::MAX_CONFIG_DEPTH;
pub use manager::{ManagerError, ProvisioningManager};
pub use tokens::AzdCliTokens;
