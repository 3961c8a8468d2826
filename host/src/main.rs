//! The `azd-wasm-host` binary: the command line over the library.
//!
//! It ties the crates together and does nothing else of its own: `cli`
//! (arguments, the async runtime, exit codes), `run` (azd played without azd,
//! against the simulated azd of `azd-wasm-host-sim`), `test` (a provider's test files, each
//! step a `run`) and `check` (the
//! runtime's report as text). `listen` (what azd runs), the process
//! environment and the log lines are the `azd-wasm-host-sidecar` crate's, which
//! also builds the compiler-less binary `package` ships; `new`, `build` and
//! `package` are the `azd-wasm-host-author` crate's.

mod check;
mod cli;
mod distribute;
mod run;
mod test;
mod trust;

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
