//! The core crate's tests that reach outside it (one test target, as
//! wasmtime's crates keep theirs): `godotenv`, the `.env` rules held to
//! godotenv v1.5.1, the module azd reads and writes `.env` with.
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod godotenv;
