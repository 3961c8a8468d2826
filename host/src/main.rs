//! The `azd-wasm-host` binary: parses arguments and hands over to the library.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    azd_wasm_host::cli::main_with(azd_wasm_host::cli::Cli::parse())
}
