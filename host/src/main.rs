//! The `azd-wasm-host` binary: the command line over the library.
//!
//! Its rooms: `cli` (arguments, runtime, exit codes, `check`), `author`
//! (`new`, `build`, `package`), `logs` (stderr
//! when debugging, and the log file), `listen` (what azd runs) and `run` (azd
//! played without azd, against the simulated azd of the `azd-wasm-host-sim`
//! crate).

mod author;
mod cli;
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
