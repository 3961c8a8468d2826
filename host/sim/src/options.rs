//! What a simulated azd is started with: the extension it runs and the command's world.

use std::sync::Arc;

use crate::auth::PROVISIONING_CAPABILITY;
use crate::contract::ContractMode;
use crate::state::{NoPrompt, Prompter, SimEnvironment};

/// What the simulated azd knows about the extension it runs, and the command's
/// world.
#[derive(Clone)]
pub struct SimOptions {
    /// The extension's capabilities, signed into its token (`cap`).
    pub capabilities: Vec<String>,
    /// The extension id (`sub`); tokens for any other id are refused as "not installed".
    pub extension_id: String,
    /// The azd environment of the command (`EnvironmentService`); `None`: azd has none.
    pub environment: Option<SimEnvironment>,
    /// Who answers the extension's questions (`PromptService`); default: azd
    /// under `--no-prompt`.
    pub prompter: Arc<dyn Prompter>,
    /// Which of azd's contracts it serves; default: both, as azd's versioned contract (expected
    /// after 1.34).
    pub contract: ContractMode,
}

impl std::fmt::Debug for SimOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimOptions")
            .field("capabilities", &self.capabilities)
            .field("extension_id", &self.extension_id)
            .field("environment", &self.environment)
            .field("contract", &self.contract)
            .finish_non_exhaustive()
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            capabilities: vec![PROVISIONING_CAPABILITY.to_owned()],
            extension_id: "test.wasm-host".to_owned(),
            environment: None,
            prompter: Arc::new(NoPrompt),
            contract: ContractMode::default(),
        }
    }
}
