//! # azd-wasm-host-testkit
//!
//! `azd-wasm-host test`: runs a provider's test files, like a test runner.
//!
//! A test file (`*.test.toml`, format in [`spec`]) names a project and the
//! steps to play in it, each a command azd would run (`provision`, `preview`,
//! `state` / `env refresh`, `down`, `parameters`) with what its result must be.
//! The path of a test is the path of a user's command: every step is played
//! as `azd-wasm-host run` plays it, by the runner library inside this process
//! (`azd_wasm_host_runner::execute`, its typed report checked), which starts a
//! simulated azd on loopback gRPC and this binary as the extension, exactly
//! as azd does ([`exec`]). The extension is the one process a step starts (a
//! step used to be a `run` child that started it: two). Each test gets a fresh temporary copy of its
//! project; tests run in parallel (one per core unless `--jobs` says), each
//! printing its line as it ends; then a summary ([`summary`]), or JSON, and a
//! JUnit file when asked.
//!
//! | exit | meaning |
//! |------|---------|
//! | 0    | every test passed |
//! | 1    | a test failed |
//! | 64   | a test file is invalid (named with its line), or no test was found; nothing ran |
//!
//! A test with a cassette replays the HTTP traffic and tokens recorded for
//! it, offline; `--record` writes it, `--live` ignores it ([`cassette`]).
//!
//! A golden conversation (`*.conversation.jsonl`, written by `listen
//! --record` under azd) is a test too: azd's side is played again and each
//! answer compared ([`golden`]; `--update` accepts the changes).
//!
//! Modules: `command` (what `test` runs: its options, the cases it finds,
//! running them), `spec` (the file format), `exec` (one test: project, steps),
//! `conversation`, `golden` and `replies` (golden conversations: the file, its replay, the
//! user's recorded answers), `results` (what a test comes to),
//! `cassette` (recorded traffic: the file, each step's plan and log),
//! `fault` (a step's policy, tightened), `expect` (checking a result),
//! `summary` (what people and CI read).

mod cassette;
mod command;
mod conversation;
mod exec;
mod expect;
mod fault;
mod golden;
mod replies;
mod results;
mod spec;
mod summary;

pub use command::{TestOptions, run_tests};
pub use summary::Summary;
