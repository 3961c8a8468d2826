//! `azd-wasm-host watch`: its options, and the loop put together from the
//! provider's real steps ([`crate::steps`]), the file system's events
//! ([`crate::fs_events`]) and the terminal ([`crate::report`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use azd_wasm_host_core::Exit;
use azd_wasm_host_runtime::CompileCache;

use anyhow::{Context as _, bail};

use crate::azd::Azd;
use crate::cycle;
use crate::files::Watched;
use crate::fs_events::FsEvents;
use crate::report::Printer;
use crate::steps::ProviderSteps;
use crate::worker::{self, StepOptions, WorkerStep};

/// What `watch` does.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// The provider's folder, or its manifest (a folder's `provider.toml`).
    pub path: PathBuf,
    /// After the tests pass, also package the provider and reinstall it into azd (`azd`
    /// from AZD, else PATH).
    pub install: bool,
    /// After the tests pass, also package the provider (as `package` does).
    pub package: bool,
    /// Run the provider's tests.
    pub test: bool,
    /// Run only the tests whose name contains this text.
    pub filter: Option<String>,
    /// How the package is signed (as `package` signs).
    pub signing: azd_wasm_host_author::Signing,
    /// How long the files must be quiet after a change before a cycle starts.
    pub debounce: Duration,
    /// This tool's binary: each step runs as `PROGRAM watch MANIFEST --step STEP` in a
    /// child process ([`run_step`]), and a test step starts it as the extension.
    pub program: PathBuf,
    /// Debug logs from the steps.
    pub debug: bool,
    /// The compile cache the tests' extensions use (each provider compiled once before
    /// its tests start; `None`: each test's extension compiles it).
    pub compile_cache: Option<CompileCache>,
}

impl WatchOptions {
    /// Watching `path` (build, then test, on every change), each step run by `program`.
    pub fn new(path: PathBuf, program: PathBuf) -> Self {
        Self {
            path,
            install: false,
            package: false,
            test: true,
            filter: None,
            signing: azd_wasm_host_author::Signing::default(),
            debounce: Duration::from_millis(250),
            program,
            debug: false,
            compile_cache: None,
        }
    }

    fn step_options(&self) -> StepOptions {
        StepOptions {
            filter: self.filter.clone(),
            signing: self.signing.clone(),
            program: self.program.clone(),
            debug: self.debug,
            compile_cache: self.compile_cache.clone(),
        }
    }
}

/// One step of a cycle, as `watch` runs it in its child process (`PROGRAM watch
/// MANIFEST --step STEP`): how it ended.
pub async fn run_step(step: WorkerStep, options: &WatchOptions) -> anyhow::Result<Exit> {
    let manifest = manifest_of(&options.path)?;
    worker::run(step, manifest, &options.step_options()).await
}

/// Runs `watch` until Ctrl-C or SIGTERM.
pub async fn watch(args: &WatchOptions) -> anyhow::Result<()> {
    let manifest = manifest_of(&args.path)?;
    let options = args.step_options();
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
        args.test,
        args.package,
        azd,
        options,
        tmp.path().to_path_buf(),
    );
    eprintln!(
        "watch: {}: {} on every change to the provider (Ctrl-C stops)",
        dir.display(),
        cycle::Steps::names(&steps).join(", ")
    );
    let ended = cycle::run(&mut steps, &mut events, args.debounce, &mut Printer::new()).await;
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
    Ok(())
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
