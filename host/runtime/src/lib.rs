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
//! Design, in three folders:
//! - `code`: one process-wide wasmtime `Engine` for the async API, with epoch
//!   interruption; a ticker thread advances the epoch every 10 ms while a guest
//!   runs and sleeps otherwise (`code::ticker`), and every store yields at each
//!   tick (`code::engine`). A component is compiled once (or loaded from the
//!   compile cache, `code::cache`, or from the code its package shipped for
//!   this platform, `code::shipped` and `code::targets`), type-checked against
//!   a linker holding WASI preview 2, each capability's line and our imports,
//!   and kept as a pre-instantiated world (`code::load`).
//! - `instance`: every azd `Initialize` gets a fresh `Store` and instance
//!   (`instance::provider`), made from the provider's `instance::template`,
//!   with its own sandbox, the log it may write (`instance::guest_log`, within
//!   a budget all instances share), and a bound on what it can hand the host
//!   in one piece. The store's data is `instance::store`. A guest call is a
//!   future raced against its deadline and the request's cancellation; the
//!   loser is dropped, which stops the guest even inside a WASI call and frees
//!   its `Store`. No guest code runs on a thread of its own. A failure answers
//!   that request with a clear error and retires the instance until the next
//!   `Initialize` (`instance::failure` maps each to its error).
//! - `sandbox`: deny by default; each thing a policy can grant is one
//!   capability module (`sandbox::capability`: files, environment, network,
//!   HTTP, credentials, azd's services, and the bounds on memory and time),
//!   owning its policy fields, its part of the store, its linker line, its
//!   seal and its words in `check`.
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

mod bindings;
mod code;
mod convert;
mod error;
mod instance;
mod intercept;
mod options;
mod sandbox;
mod world;

pub use code::cache::{CacheKey, CacheOutcome, CompileCache, user_cache_dir};
pub use code::check::{CheckReport, Import, check};
pub use code::load::{
    BackgroundCompile, LoadedProvider, PreparedProvider, inspect_component, load_provider,
    prepare_provider,
};
pub use code::shipped::is_compiled;
#[cfg(feature = "compiler")]
pub use code::shipped::precompile_into;
pub use code::targets::this_platform;
pub use error::LoadError;
pub use intercept::{Intercept, Io, Live, Sending, Sent};
pub use options::{FolderBounds, RuntimeOptions};
pub use sandbox::remove_unused_dirs;
pub use world::WORLD;
