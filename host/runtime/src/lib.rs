//! # azd-wasm-host-runtime
//!
//! The WebAssembly provider runtime: runs a provider component (world
//! `azd:provisioning/provisioning-provider@0.2.0`, or 0.1.0's) in a sandbox,
//! behind the [`Provider`](azd_wasm_host_core::Provider) seam. It knows
//! nothing of gRPC: what a guest asks of azd goes through the seams of
//! `azd-wasm-host-core` ([`AzdServices`](azd_wasm_host_core::AzdServices),
//! [`TokenSource`](azd_wasm_host_core::TokenSource)), given in
//! [`RuntimeOptions`].
//!
//! Design:
//! - One process-wide wasmtime `Engine` for the async API, with epoch
//!   interruption; a ticker thread advances the epoch every 10 ms while a guest
//!   runs and sleeps otherwise (`ticker`), and every store yields at each tick
//!   (`engine`). A component is compiled once (or
//!   loaded from the compile cache, `cache`, or from the code its package
//!   shipped for this platform, `shipped` and `targets`), type-checked against a linker holding WASI preview 2,
//!   `wasi:http` and our imports, and kept as a pre-instantiated world (`load`).
//! - Every azd `Initialize` gets a fresh `Store` and instance (`instance`),
//!   made from the provider's `template`: its own sandbox built from the
//!   manifest policy (`sandbox`: deny by default; grants opened beneath the
//!   project), its own budget for all its memories and tables (`limits`) and
//!   for what it writes into its read-write grants (`sandbox::disk`) and to
//!   the log (`guest_log`, within a budget all instances share), and a bound
//!   on what it can hand the host in one piece. The store's data is
//!   `store`; the host side of each import is in `imports`.
//! - A guest call is a future raced against its deadline and the request's
//!   cancellation; the loser is dropped, which stops the guest even inside a
//!   WASI call and frees its `Store`. No guest code runs on a thread of its own.
//!   A failure answers that request with a clear error and retires the instance
//!   until the next `Initialize` (`failure` maps each to its error).
//! - wasmtime's compilers are the `compiler` feature (on by default): the
//!   development CLI has them; the shipped sidecar (`host/sidecar`) is built
//!   without them and runs only the code `package` precompiled for its
//!   platform ([`RuntimeOptions::shipped_code_only`]).
//! - WIT ⇄ protobuf conversions live in one place (`convert`); the `bindgen!`
//!   output lives alone in `bindings`.
//!
//! The public face: [`load_provider`] and [`prepare_provider`] (a provider
//! ready to register), [`check`] (a [`CheckReport`] the CLI renders), each
//! failing with a [`LoadError`] that names the file and what is wrong,
//! [`RuntimeOptions`], and what `package`
//! needs to ship precompiled code for every platform (`precompile_into`, with the `compiler`
//! feature; `azd_wasm_host_manifest::package`), and [`this_platform`].
//! [`Intercept`] is the seam through which the development tools (the
//! `azd-wasm-host-recorder` crate) record, replay and fault a guest's HTTP
//! and tokens for `azd-wasm-host test`.
//! This file only declares modules and re-exports.

// Library code must not panic on input nor write to stdout (azd's terminal).
#![warn(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

mod ahead;
mod bindings;
mod cache;
mod check;
mod convert;
mod engine;
mod error;
mod factory;
mod failure;
mod guest_log;
mod imports;
mod instance;
mod intercept;
mod limits;
mod load;
mod opened;
mod options;
mod sandbox;
mod seal;
mod shipped;
mod store;
mod targets;
mod template;
mod ticker;
mod world;

pub use cache::{CacheKey, CacheOutcome, CompileCache, user_cache_dir};
pub use check::{CheckReport, Import, check};
pub use error::LoadError;
pub use intercept::{Intercept, Io, Live, Sending, Sent};
pub use load::{
    BackgroundCompile, LoadedProvider, PreparedProvider, inspect_component, load_provider,
    prepare_provider,
};
pub use options::{FolderBounds, RuntimeOptions};
pub use sandbox::remove_unused_dirs;
pub use shipped::is_compiled;
#[cfg(feature = "compiler")]
pub use shipped::precompile_into;
pub use targets::this_platform;
pub use world::WORLD;
