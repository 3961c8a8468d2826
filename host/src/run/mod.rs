//! `azd-wasm-host run`: drive a provider without azd.
//!
//! It plays azd's part: starts a [simulated azd](crate::sim) on loopback, spawns
//! this very binary as `listen` exactly as azd would (same arguments and
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
//! Rooms: `project` (the project folder, `azure.yaml`'s `infra`, the provider's
//! name), `environment` (`.azure/<env>` and its `.env`), `drive` (the requests
//! azd sends for each command), `report` (what the user sees: live progress,
//! the table or JSON).

mod ask;
mod drive;
mod environment;
mod project;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use azd_wasm_host_sim::{
    CallError, ExtensionProcess, ProviderHandle, SimAzd, SimOptions, SpawnOptions,
};
use clap::ValueEnum;

use report::ProgressView;

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: Action,
    /// The provider: a manifest (`provider.toml`) or a bare component (`.wasm`).
    #[arg(long, short = 'p')]
    pub provider: PathBuf,
    /// The azd project directory (holds `azure.yaml`).
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// The azd environment name.
    #[arg(long, short = 'e', default_value = "dev")]
    pub env: String,
    /// How to print results.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Provider name, when `--provider` is a bare component.
    #[arg(long)]
    pub provider_name: Option<String>,
    /// `down`: remove without the provider asking first (as `azd down --force`).
    #[arg(long)]
    pub force: bool,
    /// `down`: also purge what supports it (as `azd down --purge`).
    #[arg(long)]
    pub purge: bool,
    /// Answer yes to every question the provider asks (otherwise they are asked
    /// on this terminal, or get their default when there is none).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// The commands `run` can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Action {
    /// Initialize → Deploy (`azd provision`).
    Provision,
    /// Initialize → Preview (`azd provision --preview`).
    Preview,
    /// Initialize → Destroy (`azd down`; `--force`, `--purge`).
    Down,
    /// Initialize → State (`azd env refresh`).
    State,
    /// Initialize → Parameters → PlannedOutputs (`azd pipeline config`).
    Parameters,
}

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// A table for people.
    Table,
    /// JSON for programs.
    Json,
}

/// Runs `run`; returns the exit code (non-zero when the provider failed).
pub async fn run(args: RunArgs, debug: bool) -> anyhow::Result<ExitCode> {
    let project = project::Project::open(&args.project)?;
    let provider_path = std::fs::canonicalize(&args.provider)
        .with_context(|| format!("provider {}", args.provider.display()))?;
    let name = project.provider_name(&provider_path, args.provider_name.as_deref())?;
    environment::prepare(&project.dir, &args.env)?;
    let env_before = environment::load(&project.dir, &args.env)?;

    let progress = ProgressView::new();
    let sim = SimAzd::start(SimOptions {
        environment: Some(env_before.clone()),
        prompter: ask::prompter(args.yes, progress.bar()),
        ..SimOptions::default()
    })
    .await?;
    let (mut process, handle) =
        start_extension(&sim, &args, &project, &provider_path, &name, debug).await?;
    let options = project.options(&name);
    let destroy = azd_wasm_host_proto::azdext::ProvisioningDestroyOptions {
        force: args.force,
        purge: args.purge,
    };
    let outcome = drive::drive(
        &handle,
        &project.path_text(),
        options,
        (args.action, destroy),
        &progress,
    )
    .await;
    progress.finish();

    sim.close_streams();
    let _ = process.wait(Duration::from_secs(5)).await;
    let env_after = sim.environment();
    sim.shutdown().await;
    if let Some(after) = env_after {
        environment::save_changes(&project.dir, &env_before, &after)?;
    }

    match outcome {
        Ok(report) => {
            report.apply(&project.dir, &args.env)?;
            report.print(args.output)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(CallError::Extension(e)) => {
            report::print_error(&azd_wasm_host::ProviderError::from_wire(&e));
            Ok(ExitCode::from(1))
        }
        Err(other) => Err(anyhow::anyhow!(
            "the provider did not answer properly: {other}"
        )),
    }
}

/// Spawns this very binary as `listen`, the way azd starts an extension, and
/// waits for its provider to register.
async fn start_extension(
    sim: &SimAzd,
    args: &RunArgs,
    project: &project::Project,
    provider_path: &std::path::Path,
    name: &str,
    debug: bool,
) -> anyhow::Result<(ExtensionProcess, ProviderHandle)> {
    let exe = std::env::current_exe().context("finding this executable")?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.env("AZD_WASM_HOST_MANIFEST", provider_path)
        .env("AZD_ENVIRONMENT", &args.env)
        .env("AZD_CWD", &project.dir)
        .current_dir(&project.dir);
    if let Some(n) = &args.provider_name {
        cmd.env("AZD_WASM_HOST_PROVIDER_NAME", n);
    }
    if debug {
        cmd.env("AZD_DEBUG", "true");
    }
    // Not azd's 15 s: the first start compiles the component (seconds for a large
    // one), and `run` is for trying things out.
    let spawn = SpawnOptions {
        ready_timeout: Some(Duration::from_secs(300)),
        ..Default::default()
    };
    let process = sim.spawn_extension_with(cmd, spawn).await?;
    let handle = sim.provider(name, Duration::from_secs(15)).await?;
    Ok((process, handle))
}
