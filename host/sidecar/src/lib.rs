//! # azd-wasm-host-sidecar
//!
//! What azd runs: `listen` (connect to azd, register the provider, Ready,
//! serve until azd ends the stream; see `listen`) and `metadata` (azd's
//! metadata for the extension, at install; see `metadata`), with the process around it:
//! the environment read in one place ([`env`]), where log lines go ([`logs`]),
//! and the thread and async runtime it serves on (`process`: [`run_listen`]).
//!
//! Two binaries serve through it:
//! - the development CLI (`azd-wasm-host listen`, from a checkout), which
//!   compiles a component that has no precompiled code (and caches the code),
//!   and lends `listen` recording and replay ([`DevelopmentTools`], the
//!   `azd-wasm-host-recorder` crate's, which this crate does not link);
//! - this crate's `azd-wasm-host-sidecar`, the binary `package` ships as an
//!   extension's entry point. It is built without wasmtime's compilers and
//!   without the author's toolchain, so it is a fraction of the size, and runs
//!   only the code `package` precompiled beside it for its platform; anything
//!   else is refused with the fix, repackaging ([`Serving::Sidecar`]). Asked
//!   to record, it hands the session to the development CLI ([`env::DEV_CLI`]).
//!
//! Modules: `listen`, `admission` (signature and consent before a provider
//! runs; `approve`), `develop` (what the development CLI lends, and the
//! hand-over), `locate` (the manifest), `metadata`, [`env`], [`launch`] (the
//! environment kept when azd started the process), [`logs`], `process` (the
//! thread, the runtime and the exit code).

mod admission;
mod approve;
mod ceiling;
mod develop;
pub mod env;
pub mod launch;
mod listen;
mod locate;
pub mod logs;
mod metadata;
mod process;

pub use approve::approve;
pub use azd_wasm_host_develop::{DevelopmentTools, Recording};
pub use ceiling::{
    Forbidden, lines as judged_lines, machine_policy, project_names_policy,
    render as render_policy, show as show_policy,
};
pub use listen::{ListenArgs, Serving};
pub use metadata::print_metadata;
pub use process::{STACK_SIZE, exit_code, on_main_thread, run_listen};
