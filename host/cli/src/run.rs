//! `run`'s command line ([`RunArgs`]) and the command: [`azd_wasm_host_runner::play`] in
//! this process's session (this binary started as the extension, the terminal, Ctrl-C),
//! then the result printed as a table or JSON, and the exit code. What is played is the
//! runner's; this module only reads the command line and says how it ended.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::LazyLock;

use azd_wasm_host_core::{Exit, settings};
use azd_wasm_host_runner::{Action, CompiledProbe, EnvOverlay, RunOptions, Session};
use clap::builder::PossibleValue;
use tokio_util::sync::CancellationToken;

/// Arguments of `run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: ActionArg,
    /// The provider: a manifest (`provider.toml`) or a bare component (`.wasm`).
    #[arg(long, short = 'p', default_value = "provider.toml")]
    pub provider: PathBuf,
    /// The azd project directory (holds `azure.yaml`).
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// The azd environment. Default, as in azd: `AZURE_ENV_NAME`, else the
    /// project's default environment, else `dev` in a project without one.
    #[arg(long, short = 'e')]
    pub env: Option<String>,
    /// How to print results (and errors).
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
    #[arg(long, short = 'y', conflicts_with = "no")]
    pub yes: bool,
    /// Answer no to every yes/no question (others get their defaults).
    #[arg(long)]
    pub no: bool,
    /// Cancel the command, as Ctrl-C does (azd's own cancellation), once the
    /// provider has reported this many progress messages: for tests of what a
    /// provider leaves behind when azd stops it mid-command.
    #[arg(long, hide = true, value_name = "N")]
    pub cancel_after_progress: Option<usize>,
    /// `preview`: exit 2 when changes are pending and 0 when there are none
    /// (as `terraform plan -detailed-exitcode`).
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Which of azd's contracts the simulated azd serves: `both` (the versioned contract,
    /// expected in an azd release after 1.34: `azd.extensions.v1`, and `azdext` through its
    /// bridge), `legacy` (every azd released up to 1.34.0: `azdext` only) or `v1` (azd once the
    /// bridge is gone).
    #[arg(long, env = settings::AZD_CONTRACT, default_value = "both", value_name = "MODE")]
    pub azd_contract: azd_wasm_host_sim::ContractMode,
}

impl RunArgs {
    /// What the runner plays.
    pub(crate) fn options(&self) -> RunOptions {
        RunOptions {
            action: self.action.0,
            provider: self.provider.clone(),
            project: self.project.clone(),
            env: self.env.clone(),
            provider_name: self.provider_name.clone(),
            force: self.force,
            purge: self.purge,
            answer: match (self.yes, self.no) {
                (true, _) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            },
            cancel_after_progress: self.cancel_after_progress,
            detailed_exitcode: self.detailed_exitcode,
            azd_contract: self.azd_contract,
        }
    }
}

/// A command `run` plays, on the command line: the runner's [`Action`], named and
/// described as the runner names and describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ActionArg(pub Action);

impl clap::ValueEnum for ActionArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<ActionArg>> =
            LazyLock::new(|| Action::ALL.map(ActionArg).to_vec());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.summary()))
    }
}

/// How `run` and `test` print their results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Output {
    /// A table for people.
    Table,
    /// JSON for programs.
    Json,
}

/// Runs `run`: the command played in this process's session, then printed; the exit
/// code says how it ended ([`Exit`]).
pub(crate) async fn run(args: RunArgs, debug: bool) -> anyhow::Result<ExitCode> {
    let extension = std::env::current_exe().map_err(|e| {
        anyhow::anyhow!("cannot find this executable to start as the extension: {e}")
    })?;
    let interrupt = CancellationToken::new();
    let watcher = tokio::spawn(watch_interrupts(interrupt.clone()));
    let session = Session {
        compiled: Some(CompiledProbe::new(compiled)),
        ..Session::command(extension, debug, interrupt)
    };
    let played = azd_wasm_host_runner::play(&args.options(), &session).await;
    watcher.abort();
    match args.output {
        Output::Json => played.print_json(),
        Output::Table => played.print_table(),
    }
    Ok(ExitCode::from(played.outcome.exit))
}

/// Whether `provider`'s code is compiled for this machine already: shipped beside this
/// binary, or in the compile cache the extension started under `vars` uses.
fn compiled(provider: &Path, vars: &EnvOverlay) -> bool {
    azd_wasm_host_runtime::is_compiled(provider, cache_dir(vars).as_deref())
}

/// The compile cache's folder for an extension started under `vars`: the sidecar's rule
/// (`AZD_WASM_HOST_CACHE_DIR`, else the user's), read through them.
fn cache_dir(vars: &EnvOverlay) -> Option<PathBuf> {
    let name = settings::CACHE_DIR;
    if vars.var_os(name) == std::env::var_os(name) {
        return azd_wasm_host_sidecar::env::cache_dir();
    }
    match vars.var_os(name).filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => azd_wasm_host_runtime::user_cache_dir(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Parser, ValueEnum as _};

    #[derive(Debug, Parser)]
    struct AsRun {
        #[command(flatten)]
        run: RunArgs,
    }

    /// Every command the runner plays is one `run` takes, under the runner's name for it.
    #[test]
    fn run_takes_every_action_by_the_runners_name() {
        let names: Vec<String> = ActionArg::value_variants()
            .iter()
            .map(|a| a.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        let expected: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        assert_eq!(names, expected);
        for action in Action::ALL {
            let parsed = AsRun::try_parse_from(["run", action.name()]).unwrap();
            assert_eq!(parsed.run.action.0, action);
        }
        assert!(AsRun::try_parse_from(["run", "deploy"]).is_err());
    }

    /// `--yes` and `--no` become the one answer the runner gives every question.
    #[test]
    fn yes_and_no_become_the_runners_answer() {
        let answer = |argv: &[&str]| {
            let mut all = vec!["run", "provision"];
            all.extend_from_slice(argv);
            AsRun::try_parse_from(all).unwrap().run.options().answer
        };
        assert_eq!(answer(&[]), None);
        assert_eq!(answer(&["--yes"]), Some(true));
        assert_eq!(answer(&["--no"]), Some(false));
        assert!(AsRun::try_parse_from(["run", "provision", "--yes", "--no"]).is_err());
    }
}
