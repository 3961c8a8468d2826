//! The CLI's tests, one binary: each module runs the real binaries (`azd-wasm-host`, and the
//! shipped sidecar beside it) as child processes, against the example components, a simulated
//! azd over loopback gRPC, Azurite, an OCI registry, a real terminal; `fuzz` holds the campaign
//! over `listen`'s stream; `trust_case` is the trust tests' shared setup.
//!
//! Run one part: `cargo test -p azd-wasm-host --test all trust_attacks::`.

mod author;
mod azd_environment;
mod azd_releases;
mod azure_storage;
mod check_diff;
mod contracts;
mod docs;
mod docs_names;
mod examples;
mod fuzz;
mod golden;
mod http;
mod js_io;
mod listen;
mod platforms;
mod record_secrets;
mod release_tools;
mod run_cli;
mod run_fidelity;
mod settings;
mod sidecar;
mod test_cli;
mod tree;
mod trust;
mod trust_attacks;
mod trust_case;
mod watch;
