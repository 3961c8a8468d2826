//! # azd-wasm-host-fuzz
//!
//! Test support (never shipped): fuzzing that runs on stable Rust, inside
//! `cargo test`, for every input the host decodes.
//!
//! - [`Campaign`]: one bounded, seeded run of a fuzz target. It lasts
//!   `default_secs` (or `AZD_WASM_HOST_FUZZ_SECS`, for a maintainer's long run),
//!   its seed is random unless `AZD_WASM_HOST_FUZZ_SEED` fixes it, and it prints
//!   its figures: inputs tried, what became of them, how many distinct outcomes
//!   (errors told apart by their text, digits aside) they reached, failures.
//!   A failing input is written to `target/fuzz-failures/` to be kept as a
//!   regression case ([`regressions`] replays a folder of them).
//! - [`Mutator`]: byte and text mutations of real inputs.
//! - [`envelopes`]: azd's envelopes of every kind, with random contents, and
//!   structure-aware mutations of them (unknown fields of every wire type,
//!   groups nested shallow and deep, cuts, flips, garbage).
//! - [`stream`]: a provider's stream driven with them through the simulated
//!   azd, in process or against the real binary, every answer checked.
//! - [`oversized`]: requests with one field as long as azd's messages allow,
//!   every answer checked against azd's limit and the stream kept alive.
//! - [`duplicates`]: about one request in twenty under the id of one still in
//!   flight, every request's one answer and nothing after it checked.

mod campaign;
pub mod duplicates;
pub mod envelopes;
mod mutate;
pub mod oversized;
pub mod stream;

pub use campaign::{Campaign, ENV_SECS, ENV_SEED, Tally, regressions, regressions_dir};
pub use mutate::Mutator;
