//! The `azd-wasm-host` binary: the development CLI. It parses arguments and
//! calls the libraries, and does nothing else of its own.
//!
//! Modules: `cli` (the arguments, the async runtime, exit codes), `check`
//! (the runtime's report as text), `run`, `testing` and `watching` (`run`'s, `test`'s and `watch`'s arguments, what they print and their exit codes), `keys` (`keygen`, `trust`), `distribute`
//! (what `package` and `pull` print). The commands themselves are the crates':
//!
//! | command | crate |
//! |---|---|
//! | `listen`, `metadata`, `approve` | `azd-wasm-host-sidecar` (what azd runs; also the packaged sidecar) |
//! | `run` | `azd-wasm-host-runner` (azd played without azd) |
//! | `test` | `azd-wasm-host-testkit` (test files, cassettes, golden conversations) |
//! | `new`, `build`, `package`, `publish`, `pull` | `azd-wasm-host-author` |
//! | `watch` | `azd-wasm-host-watch` (the dev loop: build, test, package, install on every change) |
//! | `keygen`, `trust` | `azd-wasm-host-trust` |
//! | `check` | `azd-wasm-host-runtime` and `azd-wasm-host-manifest` |

mod authoring;
mod check;
mod cli;
mod distribute;
mod keys;
mod policy;
mod run;
mod testing;
mod watching;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

fn main() -> ExitCode {
    // The environment is settled before clap reads any of it (an argument's
    // `env` fallback): the role and `--trust-env` come from the command line
    // alone.
    let (role, trusted) =
        azd_wasm_host_sidecar::launch::arguments(cli::Cli::command(), std::env::args_os());
    // SAFETY: the first thing the process does; no other thread exists yet.
    #[allow(
        unsafe_code,
        reason = "the process environment is settled before any thread starts"
    )]
    unsafe {
        azd_wasm_host_sidecar::launch::settle(role, &trusted);
    }
    match cli::Cli::command()
        .try_get_matches()
        .and_then(|m| cli::Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli::main_with(cli),
        Err(e) => {
            let _ = e.print();
            // Help and --version are not errors; bad arguments exit with
            // EX_USAGE, as every other usage error of `run` does.
            if e.use_stderr() {
                ExitCode::from(azd_wasm_host_core::Exit::Usage)
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
