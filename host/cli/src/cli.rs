//! The command line: arguments, logging, the async runtime, the exit code.
//! `main.rs` only parses arguments and calls [`main_with`].
//!
//! - `listen`: what azd runs (the `azd-wasm-host-sidecar` crate's). Writes nothing to stdout.
//! - `check`: validates a component (or manifest) and prints what it asks for
//!   (see [`crate::check`]).
//! - `run`: plays azd itself to drive a provider without azd (`azd-wasm-host-runner`).
//! - `test`: runs a provider's test files, each step a `run` (`azd-wasm-host-testkit`).
//! - `new`, `build`, `package`: the provider author's toolchain (the
//!   `azd-wasm-host-author` crate); `c-bindings` (hidden): the C bindings
//!   `build` generates, for the repository's scripts.
//! - `watch`: the author's dev loop (`azd-wasm-host-watch`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use azd_wasm_host_author as author;
use azd_wasm_host_sidecar as sidecar;
use clap::{Parser, Subcommand};

/// Serve an azd provisioning provider written as a WebAssembly component.
#[derive(Debug, Parser)]
#[command(name = "azd-wasm-host", version, about)]
pub(crate) struct Cli {
    /// Write debug logs to stderr (also: AZD_DEBUG=true).
    #[arg(long, global = true)]
    pub debug: bool,

    /// Under azd (`azd wasm …`), use this variable though this tool ignores it there
    /// (azd passes the project's environment values to the tools it runs; repeatable).
    #[arg(long = "trust-env", value_name = "NAME", global = true)]
    pub trust_env: Vec<String>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve azd (azd starts the extension this way, with AZD_SERVER and AZD_ACCESS_TOKEN set).
    Listen(azd_wasm_host_sidecar::ListenArgs),
    /// Validate a provider component or manifest and show the capabilities it asks for.
    Check {
        /// A component (`.wasm`) or a provider manifest (`provider.toml`).
        #[arg(required_unless_present = "diff")]
        path: Option<PathBuf>,
        /// Instead: what NEW's policy grants beyond OLD's, and what it no
        /// longer grants (exit 0: nothing more; 1: it asks for more; 2: a
        /// manifest cannot be read).
        #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with = "path")]
        diff: Option<Vec<PathBuf>>,
    },
    /// Drive a provider without azd: provision, preview, down, state or parameters.
    Run(crate::run::RunArgs),
    /// Run a provider's tests (`*.test.toml`): each step a command played as `run` plays it.
    Test(crate::testing::TestArgs),
    /// Start a provider project: `new <rust|js|ts|python|c|go> NAME`.
    New(crate::authoring::NewArgs),
    /// Build the provider's component from the manifest's `[build]` section.
    Build(crate::authoring::BuildArgs),
    /// Write the C bindings of a WIT world, as `build` of a C provider makes them (for scripts:
    /// `c-bindings WIT [--world NAME] [--features A,B] --out-dir DIR`).
    #[command(hide = true)]
    CBindings(crate::authoring::CBindingsArgs),
    /// Make an azd extension source for the provider (registry JSON + archive), signed.
    Package(crate::authoring::PackageArgs),
    /// Rebuild and test the provider on every change (with --install, also repackage and
    /// reinstall it into azd) until Ctrl-C.
    Watch(crate::watching::WatchArgs),
    /// Push the provider, signed, to an OCI registry: `publish oci://REGISTRY/NAME:TAG`.
    Publish(crate::authoring::PublishArgs),
    /// Fetch a provider from an OCI registry and verify its signature: `pull oci://REGISTRY/NAME:TAG`.
    Pull(crate::authoring::PullArgs),
    /// Make a signing key (default: yours, which `package` signs with, trusted on this machine).
    Keygen {
        /// Write the key here (and its public half beside it, `.pub`) instead.
        #[arg(long, value_name = "KEY")]
        out: Option<PathBuf>,
    },
    /// Sign the sidecars' folder of a release of this tool (for scripts/release-tools.sh:
    /// `sign-sidecars DIR --version V [--key KEY]`, default key: yours).
    #[command(hide = true)]
    SignSidecars {
        /// The folder: `<os>-<arch>/azd-wasm-host[.exe]` and the build notes.
        dir: PathBuf,
        /// The tool's version the release is.
        #[arg(long)]
        version: String,
        /// The release's signing key (default: your default signing key).
        #[arg(long, value_name = "KEY")]
        key: Option<PathBuf>,
    },
    /// The keys whose signed providers run here, and (`--for tool`) those that may sign the
    /// tool's sidecars: add, list, remove.
    Trust {
        #[command(subcommand)]
        action: crate::keys::TrustAction,
    },
    /// Print azd's metadata for the packaged extension beside this binary (azd runs it at install).
    Metadata,
    /// Allow what an installed provider asks for: a new one's grants, or what an update asks for
    /// beyond what you allowed before (CI runs it once after `azd extension install`).
    Approve {
        /// The provider manifest (default: `provider.toml` beside this binary).
        #[arg(long)]
        manifest: Option<PathBuf>,
    },
    /// This machine's provider policy, the ceiling no provider exceeds: `policy show`, or
    /// `policy check PROVIDER [--policy FILE]`.
    Policy {
        #[command(subcommand)]
        action: crate::policy::PolicyAction,
    },
}

/// The multi-threaded runtime every command but `listen` runs on (`run`
/// hosts the simulated azd beside its child).
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(sidecar::STACK_SIZE)
        .build()
}

/// Runs the CLI; returns the process exit code. `listen` is the sidecar
/// crate's, as the shipped sidecar runs it, except that this binary compiles
/// a component that has no precompiled code.
pub(crate) fn main_with(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Listen(args) => sidecar::run_listen(
            args,
            cli.debug,
            sidecar::Serving::Development(std::sync::Arc::new(azd_wasm_host_recorder::Tools)),
        ),
        command => sidecar::on_main_thread(move || run_command(cli.debug, command)),
    }
}

fn run_command(debug_flag: bool, command: Command) -> ExitCode {
    let debug = sidecar::logs::debug_requested(debug_flag);
    sidecar::logs::init(debug, false);
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("azd-wasm-host: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(execute(command, debug));
    // A blocking thread still finishing must not hold the process open.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    sidecar::exit_code(result)
}

/// Runs one command but `listen` on the async runtime.
async fn execute(command: Command, debug: bool) -> anyhow::Result<ExitCode> {
    // A project that names its own ceiling runs no provider (the `listen`
    // these start may serve another folder, where no `.env` says so).
    if matches!(
        command,
        Command::Run(_) | Command::Test(_) | Command::Watch(_)
    ) {
        sidecar::project_names_policy()?;
    }
    match command {
        // `main_with` gives `listen` its own thread and runtime.
        Command::Listen(_) => Err(anyhow::anyhow!(
            "`listen` cannot run inside another command"
        )),
        Command::Check {
            diff: Some(pair), ..
        } => crate::check::diff(&pair[0], &pair[1]),
        Command::Check { path, .. } => match path {
            Some(path) => crate::check::check(path).await.map(|()| ExitCode::SUCCESS),
            None => Err(anyhow::anyhow!("check: name a component or a manifest")),
        },
        Command::Run(args) => crate::run::run(args, debug).await,
        Command::Test(args) => crate::testing::test(args, debug).await,
        Command::New(args) => blocking(move || author::new(&args.options()).map(drop)).await,
        Command::Build(args) => blocking(move || author::build(&args.options()).map(drop)).await,
        Command::CBindings(args) => blocking(move || author::c_bindings(&args.options())).await,
        Command::Package(args) => {
            blocking(move || {
                author::package(&args.options()).map(|p| crate::distribute::print_packaged(&p))
            })
            .await
        }
        Command::Watch(args) => crate::watching::watch(args, debug).await,
        Command::Publish(args) => author::publish(&args.options()).await.map(|p| {
            println!("published {} ({})", p.reference, p.digest);
            ExitCode::SUCCESS
        }),
        Command::Pull(args) => crate::distribute::pull(args).await,
        Command::Keygen { out } => blocking(move || crate::keys::keygen(out)).await,
        Command::Trust { action } => blocking(move || crate::keys::trust(action)).await,
        Command::SignSidecars { dir, version, key } => {
            blocking(move || crate::keys::sign_sidecars(&dir, &version, key.as_deref())).await
        }
        Command::Metadata => blocking(sidecar::print_metadata).await,
        Command::Approve { manifest } => {
            blocking(move || sidecar::approve(manifest.as_deref())).await
        }
        Command::Policy { action } => {
            tokio::task::spawn_blocking(move || crate::policy::policy(action))
                .await
                .context("the command stopped unexpectedly")?
        }
    }
}

/// Runs an author command (files and child processes) off the async threads.
async fn blocking(
    work: impl FnOnce() -> anyhow::Result<()> + Send + 'static,
) -> anyhow::Result<ExitCode> {
    tokio::task::spawn_blocking(work)
        .await
        .context("the command stopped unexpectedly")??;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_parses_listen_and_check() {
        let cli = Cli::try_parse_from(["azd-wasm-host", "listen", "--debug"]).unwrap();
        assert!(cli.debug);
        assert!(matches!(cli.command, Command::Listen(_)));
        let cli = Cli::try_parse_from(["azd-wasm-host", "check", "x.wasm"]).unwrap();
        assert!(matches!(cli.command, Command::Check { .. }));
        assert!(Cli::try_parse_from(["azd-wasm-host", "bogus"]).is_err());
    }

    /// `c-bindings` parses as scripts call it, and stays out of `--help`.
    #[test]
    fn c_bindings_is_hidden_and_parses() {
        let cli = Cli::try_parse_from([
            "azd-wasm-host",
            "c-bindings",
            "wit",
            "--out-dir",
            "gen",
            "--features",
            "a,b",
        ])
        .unwrap();
        let Command::CBindings(args) = cli.command else {
            panic!("not c-bindings: {:?}", cli.command);
        };
        assert_eq!(args.world, "provisioning-provider");
        assert_eq!(args.features, ["a", "b"]);
        assert!(Cli::try_parse_from(["azd-wasm-host", "c-bindings", "wit"]).is_err());
        let help = <Cli as clap::CommandFactory>::command()
            .render_help()
            .to_string();
        assert!(
            help.contains("build") && !help.contains("c-bindings"),
            "{help}"
        );
    }

    /// The words of a README command line as the shell would pass them,
    /// with the doc's notation taken out: `# comments`, `[optional]` parts,
    /// `...`, and `a|b|c` alternatives (the first is kept).
    fn readme_words(line: &str) -> Vec<String> {
        let line = line.split(" #").next().unwrap_or(line);
        let mut words = Vec::new();
        let mut optional = 0usize;
        for word in line.split_whitespace() {
            let opens = word.starts_with('[');
            optional += usize::from(opens);
            let closes = word.ends_with(']');
            if optional == 0 && word != "..." {
                let word = word.trim_matches('"');
                let first = word.split('|').next().unwrap_or(word);
                words.push(first.to_owned());
            }
            if closes {
                optional = optional.saturating_sub(1);
            }
        }
        words
    }

    #[test]
    fn every_command_the_readmes_show_parses() {
        let readmes = [
            ("README.md", include_str!("../../../README.md")),
            (
                "docs/commands.md",
                include_str!("../../../docs/commands.md"),
            ),
            (
                "docs/authoring.md",
                include_str!("../../../docs/authoring.md"),
            ),
            ("docs/testing.md", include_str!("../../../docs/testing.md")),
            (
                "docs/packaging.md",
                include_str!("../../../docs/packaging.md"),
            ),
            ("docs/trust.md", include_str!("../../../docs/trust.md")),
            (
                "host/author/templates/common/README.md",
                include_str!("../../author/templates/common/README.md"),
            ),
            (
                "guest-sdk/README.md",
                include_str!("../../../guest-sdk/README.md"),
            ),
            (
                "examples/rust-hello/README.md",
                include_str!("../../../examples/rust-hello/README.md"),
            ),
        ];
        for (name, text) in readmes {
            let mut in_shell = false;
            let mut commands = 0;
            for (n, line) in text.lines().enumerate() {
                let trimmed = line.trim();
                if let Some(fence) = trimmed.strip_prefix("```") {
                    in_shell = !in_shell && matches!(fence, "sh" | "bash" | "shell");
                    continue;
                }
                if !in_shell {
                    continue;
                }
                // `azd wasm ARGS` is the installed tool's `azd-wasm-host ARGS`; `a && b` is two.
                let shown = trimmed.split(" #").next().unwrap_or(trimmed);
                for command in shown.split("&&").map(str::trim) {
                    let Some(rest) = (command.strip_prefix("azd-wasm-host "))
                        .or_else(|| command.strip_prefix("azd wasm "))
                    else {
                        continue;
                    };
                    let words: Vec<String> = std::iter::once("azd-wasm-host".to_owned())
                        .chain(readme_words(rest))
                        .collect();
                    if let Err(e) = Cli::try_parse_from(&words) {
                        panic!(
                            "{name}:{}: `{command}` does not parse as {words:?}:\n{e}",
                            n + 1
                        );
                    }
                    commands += 1;
                }
            }
            assert!(
                commands > 0 || name.starts_with("guest-sdk") || name.starts_with("examples"),
                "{name}: no azd-wasm-host command found"
            );
        }
        assert_eq!(
            readme_words("run preview|down [-e ENV] [--output json] ... # note"),
            ["run", "preview"]
        );
    }
}
