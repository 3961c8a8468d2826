//! Write an [azd](https://aka.ms/azd) provisioning provider in Rust, compiled to a WebAssembly
//! component that `azd-wasm-host` loads and calls.
//!
//! An author implements one trait, [`Provider`], and calls one macro, [`export!`]. The types are
//! the WIT records of `azd:provisioning@0.1.0` (they mirror azd's own messages; world
//! `0.2.0` adds azd's services), with
//! constructors that keep them valid: [`Error::validation`] and friends build the errors azd
//! shows, [`Output`] builds outputs whose `type` matches their value, map-shaped fields are
//! sorted for you, and [`ProvisioningOptions::config`] parses the provider's `config:` section of
//! `azure.yaml`. [`progress`] puts a message on azd's spinner; [`log`] writes to the host's
//! log; [`azd`] reaches azd's own services (the environment's values, questions to the
//! user) where the manifest grants them; [`credentials`] gets Azure access tokens for the
//! scopes it grants, and `http` (feature `http`) sends requests to the origins it grants.
//!
//! The crate generates the component bindings itself; a provider crate depends on this crate
//! only (plus `serde` if it derives its config type).
//!
//! # A complete provider
//!
//! ```
//! use azd_provider_sdk::prelude::*;
//! use serde::Deserialize;
//!
//! /// The provider's `config:` section in azure.yaml.
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Config {
//!     greeting: String,
//! }
//!
//! struct Hello {
//!     greeting: String,
//!     deployed: bool,
//! }
//!
//! impl Provider for Hello {
//!     fn initialize(_project_path: String, options: ProvisioningOptions) -> Result<Self, Error> {
//!         let config: Config = options.config()?;
//!         if config.greeting.is_empty() {
//!             return Err(Error::validation("empty_greeting", "`greeting` is empty")
//!                 .with_suggestion("set infra.config.greeting in azure.yaml"));
//!         }
//!         Ok(Self { greeting: config.greeting, deployed: false })
//!     }
//!
//!     fn state(&mut self, _options: StateOptions) -> Result<ProvisioningState, Error> {
//!         if !self.deployed {
//!             return Ok(ProvisioningState::empty());
//!         }
//!         Ok(ProvisioningState::new(
//!             [("GREETING", Output::string(&self.greeting))],
//!             [Resource::new("hello/greeting")],
//!         ))
//!     }
//!
//!     fn deploy(&mut self) -> Result<DeployResult, Error> {
//!         progress("saying hello");
//!         self.deployed = true;
//!         Ok(DeployResult::deployed(Deployment::with_outputs([
//!             ("GREETING", Output::string(&self.greeting)),
//!             ("GREETING_LENGTH", Output::number(self.greeting.len() as u64)),
//!         ])))
//!     }
//!
//!     fn destroy(&mut self, _options: DestroyOptions) -> Result<DestroyResult, Error> {
//!         progress("saying goodbye");
//!         self.deployed = false;
//!         Ok(DestroyResult::new(["GREETING", "GREETING_LENGTH"]))
//!     }
//! }
//!
//! azd_provider_sdk::export!(Hello);
//! # fn main() {}
//! ```
//!
//! # Building
//!
//! Make the crate a `cdylib`, then `rustup target add wasm32-wasip2` and
//! `cargo build --target wasm32-wasip2 --release`: the `.wasm` under
//! `target/wasm32-wasip2/release/` is already a component. See the crate's `README.md`.
//!
//! # Native builds and tests
//!
//! The crate also compiles for the host machine, so a provider can be checked and unit-tested
//! with plain `cargo test`: natively [`progress`] and [`log`] write to stderr.

#![warn(missing_docs)]

// The generated bindings name this crate by its absolute path (they also expand inside provider
// crates), so the crate must be able to name itself.
extern crate self as azd_provider_sdk;

pub mod azd;
#[doc(hidden)]
pub mod bindings;
pub mod credentials;
mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod log;
mod output;
mod provider;
mod types;

#[doc(hidden)]
pub use wit_bindgen;

/// The JSON crate the SDK uses, for building `object` / `array` outputs and reading config.
pub use serde_json;

pub use bindings::azd::provisioning0_1_0::types::{
    DeployResult, Deployment, DeploymentPreview, DestroyOptions, DestroyResult, ErrorDetail,
    ErrorLink, ErrorOrigin, InputParameter, LocalError, OutputParameter, Parameter, PlannedOutput,
    PreviewChange, ProvisioningOptions, ProvisioningState, Resource, ServiceError, SkippedReason,
    StateOptions,
};
pub use error::{Category, Error};
pub use log::progress;
pub use output::{Output, map_get, sorted_map};
pub use provider::Provider;
pub use types::ChangeType;

/// Everything a provider usually needs: `use azd_provider_sdk::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Category, ChangeType, DeployResult, Deployment, DeploymentPreview, DestroyOptions,
        DestroyResult, Error, ErrorOrigin, InputParameter, Output, Parameter, PlannedOutput,
        PreviewChange, Provider, ProvisioningOptions, ProvisioningState, Resource, StateOptions,
        azd, log, map_get, progress, sorted_map,
    };
}

#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::export_world;
    pub use crate::provider::Adapter;
}
