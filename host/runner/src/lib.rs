//! # azd-wasm-host-runner
//!
//! `azd-wasm-host run`: drive a provider without azd, as a command or as a
//! library call.
//!
//! It plays azd's part: starts a simulated azd (`azd-wasm-host-sim`) on loopback, spawns
//! the binary that links it (the development CLI) as `listen` exactly as azd would (same arguments and
//! environment, same Ready rule), reads the project's `azure.yaml` like azd does
//! for the `infra` section, and sends the requests azd sends for the command:
//!
//! | command      | requests                         | like                        |
//! |--------------|----------------------------------|-----------------------------|
//! | `provision`  | Initialize → Deploy              | `azd provision`             |
//! | `preview`    | Initialize → Preview             | `azd provision --preview`   |
//! | `down`       | Initialize → Destroy{force,purge}| `azd down --force --purge`  |
//! | `state`      | Initialize → State               | `azd env refresh`           |
//! | `parameters` | Initialize → Parameters → PlannedOutputs | `azd pipeline config` |
//!
//! Outputs are written to `.azure/<env>/.env` the way azd writes them, and keys a
//! destroy invalidated are removed from it.
//!
//! The library's entry point is [`execute`]: it plays one command ([`RunOptions`]) in a
//! [`Session`] (the program started as the extension, whether it may use the terminal,
//! the environment it sees as an [`EnvOverlay`] on this process's, the extension's stderr
//! captured or not, a cancellation token) and returns a [`RunOutcome`]: the [`Exit`] and
//! the typed [`RunReport`], the very document `run --output json` prints, with its
//! [`RunError`]. The test kit plays every step of a test this way, inside its own
//! process: the only process a step starts is the extension. The development CLI's `run`
//! is [`play`] in the process's own session (progress live on stderr, a spinner on a
//! terminal, questions asked on it, Ctrl-C cancelling), then [`Played::print_table`] or
//! [`Played::print_json`]; its command line and exit codes are the CLI's.
//!
//! Modules: `options` (what to play), `session` (how a run meets its process),
//! `execute` (one command played: setup, the simulated azd, the extension, `.env`),
//! `extension` (the extension started as azd starts it), `drive` (the requests azd
//! sends for each command), `report` (the typed result), `outcome` (exit codes, the
//! error), `view` (what the user sees: live
//! progress, the table), `ask` (who answers the provider's questions), `project` (the
//! project folder, `azure.yaml`'s `infra`, the provider's name), `environment`
//! (`.azure/<env>`) and `dotenv` (its `.env`).

mod ask;
mod dotenv;
mod drive;
mod environment;
mod execute;
mod extension;
#[cfg(test)]
mod fuzz_tests;
mod options;
mod outcome;
mod project;
mod report;
mod session;
mod view;

pub use azd_wasm_host_core::Exit;
pub use dotenv::DotEnv;
pub use environment::Environment;
pub use execute::{Played, RunOutcome, execute, play};
pub use extension::{EXTENSION_COMMAND_VAR, EXTENSION_PROJECT_PATH_VAR, Extension};
pub use options::{Action, RunOptions, contract_from};
pub use report::{
    ChangeReport, ErrorKind, ErrorLink, OutputValue, ParameterReport, Plan, PreviewReport,
    Question, RunError, RunReport,
};
pub use session::{CompiledProbe, EnvOverlay, Session};
