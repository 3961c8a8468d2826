//! `watch`'s command line ([`WatchArgs`]) and the command: the watcher's loop
//! ([`azd_wasm_host_watch::watch`]) with this binary running each step, or (`--step`,
//! what the loop starts as its child process) one step and its exit code.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::LazyLock;
use std::time::Duration;

use azd_wasm_host_watch::{WatchOptions, WorkerStep};
use clap::builder::PossibleValue;

/// Arguments of `watch`.
#[derive(Debug, clap::Args)]
pub(crate) struct WatchArgs {
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
    /// How the package is signed (as `package` signs).
    #[command(flatten)]
    pub signing: crate::authoring::SigningArgs,
    /// How long the files must be quiet after a change before a cycle starts, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub debounce: u64,
    /// Run one step of a cycle and exit (what `watch` starts as its child process).
    #[arg(long, value_enum, hide = true)]
    pub step: Option<StepArg>,
}

impl WatchArgs {
    /// What the watcher does, each step run by `program`.
    fn options(&self, program: PathBuf, debug: bool) -> WatchOptions {
        WatchOptions {
            path: self.path.clone(),
            install: self.install,
            package: self.package,
            test: !self.no_test,
            filter: self.filter.clone(),
            signing: self.signing.options(),
            debounce: Duration::from_millis(self.debounce),
            program,
            debug,
            compile_cache: azd_wasm_host_sidecar::env::compile_cache(),
        }
    }
}

/// A step of a cycle on the command line (`--step build|test|package`), as the watcher
/// names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepArg(WorkerStep);

impl clap::ValueEnum for StepArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<StepArg>> =
            LazyLock::new(|| WorkerStep::ALL.map(StepArg).to_vec());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.word()))
    }
}

/// Runs `watch` until Ctrl-C or SIGTERM (exit 0), or one step of it (`--step`).
pub(crate) async fn watch(args: WatchArgs, debug: bool) -> anyhow::Result<ExitCode> {
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find this executable to run the steps: {e}"))?;
    let options = args.options(program, debug);
    match args.step {
        Some(StepArg(step)) => Ok(azd_wasm_host_watch::run_step(step, &options).await?.into()),
        None => azd_wasm_host_watch::watch(&options)
            .await
            .map(|()| ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct AsWatch {
        #[command(flatten)]
        watch: WatchArgs,
    }

    /// `--step` takes each of the watcher's steps by the word it starts its child with.
    #[test]
    fn every_step_is_taken_by_the_watchers_word() {
        for step in WorkerStep::ALL {
            let args = AsWatch::try_parse_from(["watch", "--step", step.word()]).unwrap();
            assert_eq!(args.watch.step, Some(StepArg(step)));
        }
        assert!(AsWatch::try_parse_from(["watch", "--step", "deploy"]).is_err());
    }

    /// `--no-test` and the debounce in milliseconds become the watcher's options.
    #[test]
    fn the_command_line_becomes_the_watchers_options() {
        let args = AsWatch::try_parse_from(["watch", "p", "--no-test", "--debounce", "40"])
            .unwrap()
            .watch;
        let options = args.options(PathBuf::from("/bin/tool"), false);
        let expected = WatchOptions {
            test: false,
            debounce: Duration::from_millis(40),
            compile_cache: options.compile_cache.clone(),
            ..WatchOptions::new(PathBuf::from("p"), PathBuf::from("/bin/tool"))
        };
        assert_eq!(format!("{options:?}"), format!("{expected:?}"));
        let defaults = AsWatch::try_parse_from(["watch"])
            .unwrap()
            .watch
            .options(PathBuf::from("/bin/tool"), false);
        let expected = WatchOptions {
            compile_cache: defaults.compile_cache.clone(),
            ..WatchOptions::new(PathBuf::from("."), PathBuf::from("/bin/tool"))
        };
        assert_eq!(format!("{defaults:?}"), format!("{expected:?}"));
    }
}
