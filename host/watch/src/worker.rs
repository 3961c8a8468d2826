//! One step of a cycle, in a child process of `watch` (`azd-wasm-host watch
//! --step build|test|package`): the same library code as `build`, `test` and
//! `package`, in a process of its own so that stopping it stops everything
//! it started (see [`crate::child`]).
//!
//! It shields itself from SIGTERM: the signal ends the tools it runs, and the
//! step's own clean-up runs before it exits (a build puts the previous
//! component back, a test removes its temporary projects).
//!
//! What it tells `watch` besides its exit code, on stdout: `test`'s JSON
//! document (`test --output json`); for `package`, one JSON object with the
//! extension's id and its registry file.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_author as author;
use azd_wasm_host_core::Exit;
use azd_wasm_host_runtime::CompileCache;

/// A step `watch` runs in a child process of this binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerStep {
    /// `build`.
    Build,
    /// `test`, replayed from cassettes where they exist (`--output json`).
    Test,
    /// `package`.
    Package,
}

impl WorkerStep {
    /// Every step.
    pub const ALL: [Self; 3] = [Self::Build, Self::Test, Self::Package];

    /// The word `--step` takes.
    pub fn word(self) -> &'static str {
        match self {
            Self::Build => "build",
            Self::Test => "test",
            Self::Package => "package",
        }
    }
}

/// What `package` made, as the worker tells it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Packaged {
    /// The extension id.
    pub(crate) id: String,
    /// Its `registry.json`.
    pub(crate) registry: PathBuf,
}

/// Options of the steps, from `watch`'s ([`crate::WatchOptions`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct StepOptions {
    pub(crate) filter: Option<String>,
    pub(crate) signing: author::Signing,
    /// The binary each step runs as (`PROGRAM watch MANIFEST --step STEP`), and the
    /// extension a test step starts.
    pub(crate) program: PathBuf,
    pub(crate) debug: bool,
    pub(crate) compile_cache: Option<CompileCache>,
}

/// Runs `step` on the provider of `manifest`.
pub(crate) async fn run(
    step: WorkerStep,
    manifest: PathBuf,
    options: &StepOptions,
) -> anyhow::Result<Exit> {
    let _shield = shield()?;
    match step {
        WorkerStep::Build => {
            let args = author::BuildOptions {
                manifest: Some(manifest),
            };
            blocking(move || author::build(&args).map(drop)).await?;
            Ok(Exit::Done)
        }
        WorkerStep::Test => {
            let tests = azd_wasm_host_testkit::TestOptions {
                filter: options.filter.clone(),
                debug: options.debug,
                compile_cache: options.compile_cache.clone(),
                ..azd_wasm_host_testkit::TestOptions::new(
                    vec![folder_of(&manifest)],
                    options.program.clone(),
                )
            };
            match azd_wasm_host_testkit::run_tests(&tests).await {
                Ok(summary) => {
                    summary.print_json();
                    Ok(Exit::holds(summary.all_passed()))
                }
                Err(e) => {
                    eprintln!("azd-wasm-host test: {e:#}");
                    Ok(Exit::Usage)
                }
            }
        }
        WorkerStep::Package => {
            let args = author::PackageOptions {
                manifest: Some(manifest),
                extension: None,
                out: None,
                base_url: None,
                no_precompile: false,
                hosts: Vec::new(),
                hosts_from: None,
                signing: options.signing.clone(),
            };
            let packaged = blocking(move || author::package(&args)).await?;
            let told = Packaged {
                id: packaged.id,
                registry: packaged.registry,
            };
            let line = serde_json::to_string(&told).context("writing what package made")?;
            println!("{line}");
            Ok(Exit::Done)
        }
    }
}

/// The folder of a manifest.
pub(crate) fn folder_of(manifest: &Path) -> PathBuf {
    manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .context("the step stopped unexpectedly")?
}

/// Keeps SIGTERM from ending this process while it lives (the handler
/// replaces the default action; the tools it starts get the default back).
#[cfg(unix)]
fn shield() -> anyhow::Result<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{SignalKind, signal};
    signal(SignalKind::terminate()).context("cannot handle SIGTERM")
}

#[cfg(not(unix))]
fn shield() -> anyhow::Result<()> {
    Ok(())
}
