//! # azd-wasm-host-core
//!
//! The language every crate of the host speaks, and nothing else: no gRPC
//! client, no WebAssembly engine.
//!
//! - [`Provider`] and [`ProviderFactory`]: the seam between azd's side (the
//!   manager, which calls providers) and the WebAssembly runtime (which
//!   implements them); tests implement it natively.
//! - [`CallContext`] and [`Progress`]: what each call gets besides its
//!   arguments. Progress goes to a [`ProgressSink`], which azd's side
//!   implements over its stream.
//! - [`ProviderError`], and [`ErrorCode`]: every code the host itself reports,
//!   with its one string form.
//! - [`AzdServices`] and [`TokenSource`]: what a provider may ask of azd
//!   (environment values, questions to the user, access tokens), implemented
//!   by azd's side and by the simulated azd, called by the runtime's imports.
//! - Rules every side applies the same way: [`EnvironmentName`] (azd's rule
//!   for environment names), [`text`] (guest text made safe for a terminal),
//!   [`clock`] (Unix time, as tokens and progress carry it), [`files`] (folders
//!   and files only the user may change, and file digests),
//!   [`authority`] (`host:port` and HTTP origins, and what counts as loopback),
//!   [`json`] (azd's `Struct` configs as JSON), [`secrets`] (what a
//!   recording must never hold: credentials by name, value and shape),
//!   [`steering`] (environment variables a provider may not set: what picks
//!   a program, a trust root, a place written to, or credentials), [`dotenv`]
//!   (azd's `.env` read as azd reads it, and the grammar of what a provider
//!   may put into it).
//!
//! Data crosses as the protobuf types of `azdext` (plain prost structs from
//! `azd-wasm-host-proto`, without tonic): they are exactly azd's data model.

// Library code must not panic on input nor write to stdout (azd's terminal).
#![warn(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

pub mod authority;
pub mod azd;
mod call;
pub mod clock;
mod code;
pub mod dotenv;
mod env_name;
mod error;
mod exit;
pub mod files;
pub mod json;
mod provider;
pub mod report;
pub mod secrets;
mod services;
pub mod settings;
pub mod steering;
pub mod text;

pub use call::{CallContext, Progress, ProgressSink};
pub use code::{ErrorCategory, ErrorCode};
pub use env_name::{EnvironmentName, InvalidEnvironmentName};
pub use error::{ErrorDetail, ErrorLink, ErrorOrigin, ProviderError};
pub use exit::Exit;
pub use provider::{Provider, ProviderFactory};
pub use services::{
    AccessToken, AzdServices, ConfirmQuestion, SelectQuestion, ServiceError, TextQuestion,
    TokenError, TokenSource,
};
