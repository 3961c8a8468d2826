//! # azd-wasm-host-develop
//!
//! What the development CLI lends `listen`, and the shipped sidecar has not: recording and
//! replaying (the `azd-wasm-host-recorder` crate). `listen` (the `azd-wasm-host-sidecar`
//! crate) asks through [`DevelopmentTools`] and [`Recording`] only, so the recorder stays out
//! of the binary azd runs from an installed package; the recorder implements them without
//! linking the sidecar, and the development CLI hands one to the other.
//!
//! Modules: `tools` (the two traits).

mod tools;

pub use tools::{DevelopmentTools, Recording};
