//! What `run` plays ([`RunOptions`]): the command, the provider, the project, and how the
//! simulated azd behaves. The development CLI parses its command line into them; the test kit
//! makes them for each step.

use std::path::PathBuf;

use super::session::EnvOverlay;

/// What to play, against which provider and project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// What to do.
    pub action: Action,
    /// The provider: a manifest (`provider.toml`) or a bare component (`.wasm`).
    pub provider: PathBuf,
    /// The azd project directory (holds `azure.yaml`).
    pub project: PathBuf,
    /// The azd environment. `None`, as in azd: `AZURE_ENV_NAME`, else the project's default
    /// environment, else `dev` in a project without one.
    pub env: Option<String>,
    /// The provider's name, when `provider` is a bare component.
    pub provider_name: Option<String>,
    /// `down`: remove without the provider asking first (as `azd down --force`).
    pub force: bool,
    /// `down`: also purge what supports it (as `azd down --purge`).
    pub purge: bool,
    /// What every yes/no question the provider asks gets: `Some(answer)`, or `None`: asked on
    /// the terminal when the session may use it, else the question's default.
    pub answer: Option<bool>,
    /// Cancel the command, as Ctrl-C does (azd's own cancellation), once the provider has
    /// reported this many progress messages.
    pub cancel_after_progress: Option<usize>,
    /// `preview`: end in [`Exit::ChangesPending`](azd_wasm_host_core::Exit::ChangesPending)
    /// when changes are pending (as `terraform plan -detailed-exitcode`).
    pub detailed_exitcode: bool,
    /// Which of azd's contracts the simulated azd serves.
    pub azd_contract: azd_wasm_host_sim::ContractMode,
}

impl RunOptions {
    /// `action` of the provider `provider` in the project `project`, everything else as
    /// `run` has it by default (the contract as `AZD_WASM_HOST_AZD_CONTRACT` says, or `both`:
    /// a caller that reads the variable itself refuses a value that is not a mode, with
    /// [`contract_from`]).
    pub fn new(action: Action, provider: PathBuf, project: PathBuf) -> Self {
        Self {
            action,
            provider,
            project,
            env: None,
            provider_name: None,
            force: false,
            purge: false,
            answer: None,
            cancel_after_progress: None,
            detailed_exitcode: false,
            azd_contract: contract_from(&EnvOverlay::default()).unwrap_or_default(),
        }
    }
}

/// The environment variable of `run --azd-contract`: `test`'s steps (each a `run`) and
/// golden replays take it from the environment too.
pub(crate) const CONTRACT_VAR: &str = azd_wasm_host_core::settings::AZD_CONTRACT;

/// The contract mode `AZD_WASM_HOST_AZD_CONTRACT` asks for (`both` when it is unset), read
/// through `vars`: what `--azd-contract` defaults to for a run that sees this environment;
/// an error naming the value when it is not one (`run` refuses it as its command line does).
pub fn contract_from(vars: &EnvOverlay) -> Result<azd_wasm_host_sim::ContractMode, String> {
    match vars.var(CONTRACT_VAR) {
        None => Ok(azd_wasm_host_sim::ContractMode::default()),
        Some(v) => v.trim().parse().map_err(|e| format!("{CONTRACT_VAR}: {e}")),
    }
}

/// The commands `run` can play (in a report: `provision`, `preview`, `down`, `state`,
/// `parameters`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

impl Action {
    /// Every command, in the order `run --help` lists them.
    pub const ALL: [Self; 5] = [
        Self::Provision,
        Self::Preview,
        Self::Down,
        Self::State,
        Self::Parameters,
    ];

    /// Its name on the command line and in a report.
    pub fn name(self) -> &'static str {
        match self {
            Self::Provision => "provision",
            Self::Preview => "preview",
            Self::Down => "down",
            Self::State => "state",
            Self::Parameters => "parameters",
        }
    }

    /// The requests azd sends for it, and the azd command it is.
    pub fn summary(self) -> &'static str {
        match self {
            Self::Provision => "Initialize → Deploy (`azd provision`)",
            Self::Preview => "Initialize → Preview (`azd provision --preview`)",
            Self::Down => "Initialize → Destroy (`azd down`; `--force`, `--purge`)",
            Self::State => "Initialize → State (`azd env refresh`)",
            Self::Parameters => "Initialize → Parameters → PlannedOutputs (`azd pipeline config`)",
        }
    }
}
