//! The runtime's tests, one binary (as wasmtime's crates keep theirs): each module drives the
//! `ProviderFactory` / `Provider` seam with fixture components (inline WAT and the project's WIT,
//! `azd-wasm-host-fixtures`) and attacks one part of it: the sandbox, its bounds, links, azd's
//! services, the config schema, the instance made ahead, the baseline compiler; `fuzz` holds the
//! campaigns over what the runtime reads from an author.
//!
//! Run one part: `cargo test -p azd-wasm-host-runtime --test all sandbox::`.

mod ahead;
mod baseline;
mod bound_answer;
mod bound_disk;
mod bound_log;
mod bound_memory;
mod config_schema;
mod fuzz;
mod links;
mod log_sink;
mod runtime_wat;
mod sandbox;
mod services;
