//! The provider author's toolchain: `new`, `build` and `package`.
//!
//! - [`new()`]: a provider project anywhere, from files packaged in this binary
//!   (the WIT package, the guest helpers of each language, a provider that
//!   greets, its manifest, a sample `azure.yaml` and an `extension.yaml`).
//! - [`build()`]: the component, from the manifest's `[build]` section: a
//!   built-in recipe per language, or the author's own command. Core modules
//!   (Rust for `wasm32-wasip1`, C) are made components here, with the WASI
//!   preview1 adapter this host was built with.
//! - [`package()`]: an azd extension source for the provider: `registry.json`
//!   and an archive for this platform with the stripped host, the manifest,
//!   the component and its precompiled code, after checking every name azd
//!   will match.
//!
//! None of it runs while azd is talking to the host: these are commands for
//! the author's terminal, and they print what they do on stderr.
//!
//! `lang` holds one module per guest language (its template files, its
//! recipe, its name: [`Language`]); `names` every naming rule `new` and
//! `package` share; `settings` the manifest's `[build]` section; `tools` finds
//! the programs the commands run.
//! This file only declares modules and re-exports.

// The toolchain prints what it does on stderr; stdout stays the caller's.
#![warn(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

mod build;
mod componentize;
mod lang;
mod names;
mod new;
mod oci;
mod package;
mod paths;
mod settings;
mod templates;
mod tools;
// The generator of guest-sdk/js/azd-provisioning.d.ts, run by its own test (see the module).
#[cfg(test)]
mod typescript_tests;

pub use build::wit::WORLD_NAME;
pub use build::{BuildOptions, build};
pub use lang::{CBindingsOptions, Language, c_bindings};
pub use names::shell_word;
pub use new::{NewOptions, new};
pub use oci::{PublishOptions, Published, PullOptions, Pulled, publish, pull};
pub use package::{PackageOptions, Packaged, Signing, package};
pub use settings::check_build_section;
