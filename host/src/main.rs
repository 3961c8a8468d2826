//! The `azd-wasm-host` binary: the command line over the library.
//!
//! It ties the crates together and does nothing else of its own: `cli`
//! (arguments, the async runtime, exit codes), `listen` (what azd runs: azd's
//! side over the WebAssembly runtime), `run` (azd played without azd, against
//! the simulated azd of `azd-wasm-host-sim`), `check` (the runtime's report as
//! text), `env` (the process environment handed to the libraries) and `logs`
//! (stderr when debugging, and the log file). `new`, `build` and `package` are
//! the `azd-wasm-host-author` crate's.

mod check;
mod cli;
mod env;
mod listen;
mod logs;
mod run;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    match cli::Cli::try_parse() {
        Ok(cli) => cli::main_with(cli),
        Err(e) => {
            let _ = e.print();
            // Help and --version are not errors; bad arguments exit with
            // EX_USAGE, as every other usage error of `run` does.
            if e.use_stderr() {
                ExitCode::from(run::Exit::Usage.code())
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
