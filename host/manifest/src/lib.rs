//! # azd-wasm-host-manifest
//!
//! The provider manifest (`provider.toml`): which component to load, under
//! which name, what its sandbox may reach ([`Policy`], and what one version
//! grants beyond another, [`PolicyDiff`]), and the JSON Schema of its config
//! ([`ConfigSchema`]). Plain data and checks: the runtime, the trust checks and
//! the author's toolchain read manifests through this crate, and none of it
//! needs wasmtime.
//!
//! ```toml
//! name = "localfiles"                 # provider name registered with azd
//! component = "build/localfiles.wasm" # relative to this file
//!
//! [policy]
//! fs = [
//!   { path = ".", access = "read" },               # relative to the azd project
//!   { path = ".azure/{env}", access = "read-write" }, # {env} = AZD_ENVIRONMENT
//! ]
//! env = ["AZD_ENVIRONMENT"]   # environment variables the guest may read
//! network = []                # "host:port" TCP destinations
//! memory_mb = 256             # all memories and tables of an instance together
//! call_timeout_secs = 300     # deadline per call (fractions allowed)
//!
//! [policy.http]               # outbound HTTP (wasi:http/outgoing-handler)
//! allow = ["https://myaccount.blob.core.windows.net", "http://127.0.0.1:10000"]
//! timeout_secs = 30           # per request, at most call_timeout_secs
//! max_response_bytes = 33554432  # response body read per request
//!
//! [policy.azd]                # azd's own services (world 0.2.0)
//! environment = "read"        # "none" (default), "read", "read-write"
//! prompt = true               # may ask the user on azd's terminal
//! credential_scopes = ["https://storage.azure.com/.default"]  # tokens through azd
//!
//! [config]
//! schema = "config.schema.json"  # JSON Schema of azure.yaml's infra.config
//! ```
//!
//! Everything in `[policy]` is optional; the default is deny-all.
//!
//! An optional `[build]` section says how `azd-wasm-host build` makes the
//! component; the author's toolchain reads it, the runtime only accepts it.
//!
//! Grants stay inside the project: a path that is absolute or climbs out with
//! `..` is refused unless the grant says `outside_project = true` in so many
//! words. Variables that carry azd's own credentials ([`RESERVED_ENV`]) can
//! never be granted.
//!
//! No key or string of a manifest, nor its text, may hold a control or
//! invisible character (`azd_wasm_host_core::text::is_invisible`): the
//! manifest is walked as a TOML document before it is read into its types, so
//! every field, one added later too, is checked the same way (`strings`).

// Library code must not panic on input nor write to stdout (azd's terminal).
#![warn(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

mod config_schema;
mod diff;
mod error;
mod fields;
mod manifest;
pub mod package;
mod paths;
mod policy;
mod strings;

pub use config_schema::{ConfigSchema, MAX_SCHEMA_BYTES};
pub use diff::PolicyDiff;
pub use error::{ConfigSchemaError, ManifestError, SchemaAt};
pub use fields::{Field, FieldValue};
pub use manifest::Manifest;
pub use paths::{has_drive_prefix, lexical};
pub use policy::{
    AzdGrants, EnvironmentAccess, FsAccess, FsGrant, GrantLocation, HttpGrants, Policy,
};
