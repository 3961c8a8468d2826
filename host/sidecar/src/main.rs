//! `azd-wasm-host-sidecar`: the binary `azd-wasm-host package` ships as an
//! extension's entry point (named `azd-wasm-host` in the archive). It only
//! serves azd (`listen`), and only with the code `package` precompiled beside
//! it: no compiler, no author's toolchain.

use std::process::ExitCode;

use azd_wasm_host_sidecar::{ListenArgs, Serving, launch};
use clap::{CommandFactory as _, Parser, Subcommand};

/// Serve an azd provisioning provider written as a WebAssembly component
/// (the packaged sidecar: it runs only the code `azd-wasm-host package`
/// precompiled beside it; `run`, `check`, `build` and `package` are the
/// development CLI's).
#[derive(Debug, Parser)]
#[command(
    name = "azd-wasm-host",
    version = concat!(env!("CARGO_PKG_VERSION"), " (packaged sidecar: precompiled code only)"),
    about
)]
struct Cli {
    /// Write debug logs to stderr (also: AZD_DEBUG=true).
    #[arg(long, global = true)]
    debug: bool,

    /// Under azd, use this variable though azd may have taken it from the project's
    /// environment (repeatable; see docs/trust.md).
    #[arg(long = "trust-env", value_name = "NAME", global = true)]
    trust_env: Vec<String>,

    /// What to do.
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve azd (azd starts the extension this way, with AZD_SERVER and AZD_ACCESS_TOKEN set).
    Listen(ListenArgs),
    /// Print azd's metadata for this extension (azd runs it at `azd extension install`).
    Metadata,
    /// Allow what the provider asks for: its grants the first time, or what
    /// a new version asks for beyond what you allowed before (azd's
    /// `--no-prompt` refusal names this command; CI runs it once after
    /// `azd extension install`).
    Approve {
        /// The provider manifest (default: `provider.toml` beside this binary).
        #[arg(long)]
        manifest: Option<std::path::PathBuf>,
    },
    /// This machine's provider policy, the ceiling no provider exceeds (`policy show`).
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
}

#[derive(Debug, Subcommand)]
enum PolicyAction {
    /// Print every place the ceiling is read from, and what each sets.
    Show,
}

fn main() -> ExitCode {
    // The environment is settled before clap reads any of it (an argument's
    // `env` fallback): the role and `--trust-env` come from the command line
    // alone.
    let (role, trusted) = launch::arguments(Cli::command(), std::env::args_os());
    // SAFETY: the first thing the process does; no other thread exists yet.
    #[allow(
        unsafe_code,
        reason = "the process environment is settled before any thread starts"
    )]
    unsafe {
        launch::settle(role, &trusted);
    }
    match Cli::try_parse() {
        Ok(Cli {
            debug,
            command: Command::Listen(args),
            ..
        }) => azd_wasm_host_sidecar::run_listen(args, debug, Serving::Sidecar),
        Ok(Cli {
            command: Command::Metadata,
            ..
        }) => azd_wasm_host_sidecar::exit_code(
            azd_wasm_host_sidecar::print_metadata().map(|()| ExitCode::SUCCESS),
        ),
        Ok(Cli {
            command: Command::Approve { manifest },
            ..
        }) => match azd_wasm_host_sidecar::approve(manifest.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("azd-wasm-host: error: {e:#}");
                ExitCode::FAILURE
            }
        },
        Ok(Cli {
            command: Command::Policy {
                action: PolicyAction::Show,
            },
            ..
        }) => azd_wasm_host_sidecar::exit_code(
            azd_wasm_host_sidecar::show_policy().map(|()| ExitCode::SUCCESS),
        ),
        Err(e) => {
            let _ = e.print();
            // Bad arguments, as the development CLI says them.
            if e.use_stderr() {
                ExitCode::from(azd_wasm_host_core::Exit::Usage)
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
