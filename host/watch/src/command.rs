//! `azd-wasm-host watch`: its arguments, and the loop put together from the
//! provider's real steps ([`crate::steps`]), the file system's events
//! ([`crate::fs_events`]) and the terminal ([`crate::report`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};

use crate::azd::Azd;
use crate::cycle;
use crate::files::Watched;
use crate::fs_events::FsEvents;
use crate::report::Printer;
use crate::steps::ProviderSteps;
use crate::worker::{self, StepOptions, WorkerStep};

/// Arguments of `watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The provider's folder, or its manifest (default: `provider.toml` in the current folder).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// After the tests pass, also package the provider and reinstall it into
    /// azd (`azd` from AZD, else PATH).
    #[arg(long)]
    pub install: bool,
    /// After the tests pass, also package the provider (as `package` does).
    #[arg(long)]
    pub package: bool,
    /// Do not run the provider's tests.
    #[arg(long)]
    pub no_test: bool,
    /// Run only the tests whose name contains this text.
    #[arg(long, conflicts_with = "no_test")]
    pub filter: Option<String>,
    /// Sign the package with KEY (default: your signing key).
    #[arg(long, value_name = "KEY", conflicts_with = "unsigned")]
    pub sign: Option<PathBuf>,
    /// Do not sign the package.
    #[arg(long)]
    pub unsigned: bool,
    /// How long the files must be quiet after a change before a cycle starts, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub debounce: u64,
    /// Run one step of a cycle and exit (what `watch` starts as its child process).
    #[arg(long, value_enum, hide = true)]
    pub step: Option<WorkerStep>,
}

/// Runs `watch` until Ctrl-C or SIGTERM (exit 0), or one step of it as its
/// child process (`--step`).
pub async fn watch(args: WatchArgs, debug: bool) -> anyhow::Result<ExitCode> {
    let manifest = manifest_of(&args.path)?;
    let options = StepOptions {
        filter: args.filter.clone(),
        sign: args.sign.clone(),
        unsigned: args.unsigned,
    };
    if let Some(step) = args.step {
        return worker::run(step, manifest, options, debug).await;
    }
    let azd = if args.install {
        Some(Azd::find()?)
    } else {
        None
    };
    let watched = Watched::new(&manifest)?;
    let dir = watched.dir.clone();
    let mut events = FsEvents::start(watched)?;
    let tmp = tempfile::Builder::new()
        .prefix("azd-wasm-host-watch-")
        .tempdir()
        .context("cannot make a temporary folder")?;
    let mut steps = ProviderSteps::new(
        manifest,
        !args.no_test,
        args.package,
        azd,
        options,
        tmp.path().to_path_buf(),
        debug,
    )
    .context("cannot find this executable")?;
    eprintln!(
        "watch: {}: {} on every change to the provider (Ctrl-C stops)",
        dir.display(),
        cycle::Steps::names(&steps).join(", ")
    );
    let quiet = Duration::from_millis(args.debounce);
    let ended = cycle::run(&mut steps, &mut events, quiet, &mut Printer::new()).await;
    drop(events);
    let removed = tmp.close();
    let interrupted = ended
        .interrupted
        .map(|step| format!(" ({step} interrupted)"))
        .unwrap_or_default();
    let plural = if ended.cycles == 1 { "" } else { "s" };
    eprintln!(
        "watch: stopped after {} cycle{plural}{interrupted}",
        ended.cycles
    );
    if let Err(e) = removed {
        eprintln!("watch: cannot remove its temporary folder: {e}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The manifest `path` names: itself, or `provider.toml` in it.
fn manifest_of(path: &Path) -> anyhow::Result<PathBuf> {
    let manifest = if path.is_dir() {
        path.join("provider.toml")
    } else {
        path.to_path_buf()
    };
    if !manifest.is_file() {
        bail!(
            "no provider manifest at {}: run watch in the provider's folder, or name it",
            manifest.display()
        );
    }
    std::path::absolute(&manifest).with_context(|| format!("cannot resolve {}", manifest.display()))
}
