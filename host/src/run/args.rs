//! The arguments of `run`: what to play, against which provider and project.

use std::path::PathBuf;

use clap::ValueEnum;

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
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
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// `preview`: exit 2 when changes are pending and 0 when there are none
    /// (as `terraform plan -detailed-exitcode`).
    #[arg(long)]
    pub detailed_exitcode: bool,
}

/// The commands `run` can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Action {
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
    /// The command's name, as reports and errors give it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Provision => "provision",
            Self::Preview => "preview",
            Self::Down => "down",
            Self::State => "state",
            Self::Parameters => "parameters",
        }
    }
}

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    /// A table for people.
    Table,
    /// JSON for programs.
    Json,
}
