//! # azd-wasm-host-runner
//!
//! `azd-wasm-host run`: drive a provider without azd.
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
//! Progress shows live (a spinner on a terminal, plain lines otherwise, on
//! stderr); results print as a table or JSON on stdout; outputs are written to
//! `.azure/<env>/.env` the way azd writes them, and keys a destroy invalidated are
//! removed from it.
//!
//! Modules: `project` (the project folder, `azure.yaml`'s `infra`, the provider's
//! name), `environment` (`.azure/<env>` and its `.env`), `drive` (the requests
//! azd sends for each command), `view` (what the user sees: live progress,
//! the table or JSON).

mod args;
mod ask;
mod dotenv;
mod drive;
mod environment;
#[cfg(test)]
mod fuzz;
mod outcome;
mod project;
mod view;

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use azd_wasm_host_sim::{ExtensionProcess, ProviderHandle, SimAzd, SimOptions, SpawnOptions};
use tokio_util::sync::CancellationToken;

pub use args::Action;
pub use args::{Output, RunArgs, contract_from_env};
pub use dotenv::DotEnv;
pub use environment::Environment;
pub use outcome::Exit;
use outcome::Failure;
use view::{ProgressView, Report};

/// What `run` checked before starting anything.
struct Setup {
    project: project::Project,
    provider_path: PathBuf,
    name: String,
    env: Environment,
}

impl Setup {
    /// Reads the project, the provider's name and the environment; any
    /// failure here is a usage error and nothing has run.
    fn new(args: &RunArgs) -> anyhow::Result<Self> {
        let project = project::Project::open(&args.project)?;
        let provider_path = std::fs::canonicalize(&args.provider).with_context(|| {
            format!(
                "provider {} (name a provider.toml or .wasm with --provider)",
                args.provider.display()
            )
        })?;
        let name = project.provider_name(&provider_path, args.provider_name.as_deref())?;
        let creates = args.action == Action::Provision;
        let env = Environment::open(&project.dir, args.env.as_deref(), creates)?;
        Ok(Self {
            project,
            provider_path,
            name,
            env,
        })
    }
}

/// Runs `run`; the exit code says how it ended ([`Exit`]).
pub async fn run(args: RunArgs, debug: bool) -> ExitCode {
    let interrupt = CancellationToken::new();
    let watcher = tokio::spawn(watch_interrupts(interrupt.clone()));
    let progress = ProgressView::new().cancel_after(args.cancel_after_progress, &interrupt);
    let exit = match Setup::new(&args) {
        Err(e) => outcome::failed(&args, &Failure::Usage(e), &progress),
        Ok(setup) => match execute(&args, &setup, debug, &interrupt, &progress).await {
            Err(failure) => outcome::failed(&args, &failure, &progress),
            // Outputs are saved after the report is printed: a value that
            // cannot be saved is still on the screen.
            Ok(mut report) => {
                report.progress = progress.reported();
                report.prompts = progress.questions();
                outcome::succeeded(&args, &report, || report.apply(&setup.env))
            }
        },
    };
    watcher.abort();
    ExitCode::from(exit.code())
}

/// The first Ctrl-C cancels the command (the provider is stopped and waited
/// for); a second one ends this process at once.
async fn watch_interrupts(interrupt: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    eprintln!("\nCancelling: stopping the provider (press Ctrl-C again to quit at once)…");
    interrupt.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("Quit without waiting for the provider.");
        std::process::exit(i32::from(Exit::Interrupted.code()));
    }
}

/// Starts the simulated azd and the extension, plays the command, and saves
/// what it changed in the environment.
async fn execute(
    args: &RunArgs,
    setup: &Setup,
    debug: bool,
    interrupt: &CancellationToken,
    progress: &ProgressView,
) -> Result<Report, Failure> {
    // An extension started by another command (another platform's build)
    // has its own code and cache: whether it compiles is not known here.
    let cold = extension_command_line().is_none() && {
        let path = setup.provider_path.clone();
        !tokio::task::spawn_blocking(move || {
            azd_wasm_host_runtime::is_compiled(
                &path,
                azd_wasm_host_sidecar::env::cache_dir().as_deref(),
            )
        })
        .await
        .unwrap_or(false)
    };
    let env_before = setup.env.served();
    let sim = SimAzd::start(SimOptions {
        environment: Some(env_before.clone()),
        prompter: ask::prompter(args.answer(), progress.bar(), progress.asked()),
        contract: args.azd_contract,
        ..SimOptions::default()
    })
    .await
    .map_err(Failure::Host)?;
    let started = start_extension(&sim, args, setup, debug).await;
    let (mut process, handle) = started.map_err(Failure::Host)?;
    let destroy = azd_wasm_host_proto::azdext::ProvisioningDestroyOptions {
        force: args.force,
        purge: args.purge,
    };
    let project_path = std::env::var(EXTENSION_PROJECT_PATH_VAR)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| setup.project.path_text());
    let drive = drive::drive(
        &handle,
        &project_path,
        setup.project.options(&setup.name),
        (args.action, destroy),
        progress,
        cold.then_some(Instant::now()),
    );
    let outcome = tokio::select! {
        outcome = drive => outcome.map_err(Failure::from_call),
        () = interrupt.cancelled() => Err(Failure::Interrupted),
    };
    // An answer that came in the same moment as the cancellation is dropped, as
    // azd drops it: the command was cancelled.
    let outcome = if interrupt.is_cancelled() {
        Err(Failure::Interrupted)
    } else {
        outcome
    };
    progress.finish();

    // Closing azd's side ends the extension's stream: it stops the guest's
    // call and exits, as under azd.
    sim.close_streams();
    let _ = process.wait(Duration::from_secs(10)).await;
    let env_after = sim.environment();
    sim.shutdown().await;
    if let Some(after) = env_after {
        save_service_changes(&setup.env, &env_before.values, &after.values)
            .map_err(Failure::Host)?;
    }
    outcome
}

/// Saves to `.env` what the extension set or removed through azd's
/// environment service while the command ran (azd saves them the same way).
fn save_service_changes(
    env: &Environment,
    before: &std::collections::BTreeMap<String, String>,
    after: &std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let set = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let removed = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .map(String::as_str);
    env.save(set, removed)
}

/// Names the command `run` starts as the extension instead of this binary:
/// its words as a shell splits them. For a build of another platform under
/// its emulator, e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu
/// target/aarch64-unknown-linux-gnu/release/azd-wasm-host`, where that build
/// cannot start itself.
pub const EXTENSION_COMMAND_VAR: &str = "AZD_WASM_HOST_EXTENSION_COMMAND";

/// The project's path as `run` sends it in Initialize, where the extension
/// [`EXTENSION_COMMAND_VAR`] starts sees the project under another name: a
/// Windows build under Wine, for which `/tmp/p` is `Z:\tmp\p` (azd on
/// Windows sends a drive path, and a path without one is refused).
pub const EXTENSION_PROJECT_PATH_VAR: &str = "AZD_WASM_HOST_EXTENSION_PROJECT_PATH";

/// The command line [`EXTENSION_COMMAND_VAR`] names, when it names one.
fn extension_command_line() -> Option<String> {
    std::env::var(EXTENSION_COMMAND_VAR)
        .ok()
        .filter(|line| !line.trim().is_empty())
}

/// This binary, or the command [`EXTENSION_COMMAND_VAR`] names.
fn extension_command() -> anyhow::Result<tokio::process::Command> {
    let Some(line) = extension_command_line() else {
        let exe = std::env::current_exe().context("finding this executable")?;
        return Ok(tokio::process::Command::new(exe));
    };
    let words = shell_words::split(&line)
        .with_context(|| format!("{EXTENSION_COMMAND_VAR} is not a command line: {line:?}"))?;
    let (program, args) = words
        .split_first()
        .with_context(|| format!("{EXTENSION_COMMAND_VAR} names no program"))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

/// Spawns this very binary as `listen`, the way azd starts an extension, and
/// waits for its provider to register.
async fn start_extension(
    sim: &SimAzd,
    args: &RunArgs,
    setup: &Setup,
    debug: bool,
) -> anyhow::Result<(ExtensionProcess, ProviderHandle)> {
    let extension = Extension {
        manifest: &setup.provider_path,
        project: &setup.project.dir,
        environment: Some(setup.env.name.as_str()),
        provider: &setup.name,
        debug,
    };
    // azd sets AZD_NO_PROMPT only under --no-prompt: here, only when no one
    // answers (no --yes or --no, no terminal).
    let answered = args.answer().is_some()
        || (std::io::stdin().is_terminal() && std::io::stderr().is_terminal());
    start_listen(sim, &extension, |cmd| {
        if let Some(n) = &args.provider_name {
            cmd.env("AZD_WASM_HOST_PROVIDER_NAME", n);
        }
        if answered {
            cmd.env_remove("AZD_NO_PROMPT");
        }
    })
    .await
}

/// An extension to start under a simulated azd.
pub struct Extension<'a> {
    /// Its manifest (`AZD_WASM_HOST_MANIFEST`).
    pub manifest: &'a Path,
    /// The project: its working folder and `AZD_CWD`.
    pub project: &'a Path,
    /// azd's environment name (`AZD_ENVIRONMENT`); `None`: azd names none.
    pub environment: Option<&'a str>,
    /// The provider name it registers.
    pub provider: &'a str,
    /// Debug logs from the extension (`AZD_DEBUG`).
    pub debug: bool,
}

/// Starts this binary (or the command [`EXTENSION_COMMAND_VAR`] names) as
/// `listen` under `sim`, as azd starts an extension, with what `more` adds to
/// its command, and waits for the provider to register.
pub async fn start_listen(
    sim: &SimAzd,
    extension: &Extension<'_>,
    more: impl FnOnce(&mut tokio::process::Command),
) -> anyhow::Result<(ExtensionProcess, ProviderHandle)> {
    let mut cmd = extension_command()?;
    cmd.env("AZD_WASM_HOST_MANIFEST", extension.manifest)
        .env("AZD_CWD", extension.project)
        .current_dir(extension.project);
    match extension.environment {
        Some(name) => cmd.env("AZD_ENVIRONMENT", name),
        None => cmd.env_remove("AZD_ENVIRONMENT"),
    };
    if extension.debug {
        cmd.env("AZD_DEBUG", "true");
    }
    more(&mut cmd);
    // Not azd's 15 s: `run` and `test` are for trying things out, on any machine.
    let spawn = SpawnOptions {
        ready_timeout: Some(Duration::from_secs(300)),
        ..Default::default()
    };
    let process = sim.spawn_extension_with(cmd, spawn).await?;
    let handle = sim
        .provider(extension.provider, Duration::from_secs(15))
        .await?;
    Ok((process, handle))
}
