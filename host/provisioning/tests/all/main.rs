//! The ProvisioningManager's tests, one binary: the manager against the simulated azd
//! (`azd-wasm-host-sim`) over real loopback gRPC with native providers, in both contracts, with
//! ids reused in flight; `fuzz` holds the campaigns over the stream. `common` is what they share.
//!
//! Run one part: `cargo test -p azd-wasm-host-provisioning --test all contracts::`.

mod common;
mod contracts;
mod duplicates;
mod fuzz;
mod manager;
