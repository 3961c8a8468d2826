//! The `azd-wasm-host` binary: the command line over the library.
//!
//! Its rooms: `cli` (arguments, logging, runtime, exit codes, `check`),
//! `listen` (what azd runs) and `run` (azd played without azd, against the
//! simulated azd of the `azd-wasm-host-sim` crate).

mod cli;
mod listen;
mod run;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    cli::main_with(cli::Cli::parse())
}
