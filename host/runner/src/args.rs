//! The arguments of `run`: what to play, against which provider and project.

use std::path::PathBuf;

use clap::ValueEnum;

use super::session::EnvOverlay;

/// Arguments of `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: Action,
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
    #[arg(long, env = CONTRACT_VAR, default_value = "both", value_name = "MODE")]
    pub azd_contract: azd_wasm_host_sim::ContractMode,
}

/// The environment variable of `--azd-contract`: `test`'s steps (each a `run`) and
/// golden replays take it from the environment too.
pub(crate) const CONTRACT_VAR: &str = azd_wasm_host_core::settings::AZD_CONTRACT;

/// The contract mode `AZD_WASM_HOST_AZD_CONTRACT` asks for (`both` when it is unset); an
/// error naming the value when it is not one (`run` refuses it as its command line does).
pub fn contract_from_env() -> Result<azd_wasm_host_sim::ContractMode, String> {
    contract_from(&EnvOverlay::default())
}

/// [`contract_from_env`], reading the variable through `vars`: what `--azd-contract`
/// defaults to for a run that sees this environment.
pub fn contract_from(vars: &EnvOverlay) -> Result<azd_wasm_host_sim::ContractMode, String> {
    match vars.var(CONTRACT_VAR) {
        None => Ok(azd_wasm_host_sim::ContractMode::default()),
        Some(v) => v.trim().parse().map_err(|e| format!("{CONTRACT_VAR}: {e}")),
    }
}

/// The commands `run` can play (in a report: `provision`, `preview`, `down`, `state`,
/// `parameters`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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

impl RunArgs {
    /// `run ACTION --provider PROVIDER --project PROJECT`, every other argument as the
    /// command line leaves it (`--azd-contract` as `AZD_WASM_HOST_AZD_CONTRACT` says, or
    /// `both`: a caller that reads the variable itself refuses a value that is not a mode,
    /// with [`contract_from`]).
    pub fn new(action: Action, provider: PathBuf, project: PathBuf) -> Self {
        Self {
            action,
            provider,
            project,
            env: None,
            output: Output::Table,
            provider_name: None,
            force: false,
            purge: false,
            yes: false,
            no: false,
            cancel_after_progress: None,
            detailed_exitcode: false,
            azd_contract: contract_from_env().unwrap_or_default(),
        }
    }

    /// What every yes/no question gets: `--yes`, `--no`, or (`None`) the
    /// user's answer on a terminal, else the question's default.
    pub(crate) fn answer(&self) -> Option<bool> {
        match (self.yes, self.no) {
            (true, _) => Some(true),
            (false, true) => Some(false),
            (false, false) => None,
        }
    }
}

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// A table for people.
    Table,
    /// JSON for programs.
    Json,
}
