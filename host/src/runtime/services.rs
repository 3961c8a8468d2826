//! azd's own services, as a provider reaches them: the `environment` and
//! `prompt` imports of world 0.2.0.
//!
//! The runtime does not talk gRPC: it calls an [`AzdServices`] (the extension's
//! connection to azd in `listen`, the simulated azd in `run`, a fake in tests).
//! Each import checks the manifest's grant first (`[policy.azd]`); a call that
//! is not granted never reaches azd and returns an `auth` error naming the
//! grant to add. Secret answers are never logged.

use std::sync::Arc;

use async_trait::async_trait;

use super::bindings::azd::provisioning0_1_0::types as wit;
use super::bindings::azd::provisioning0_2_0::{environment, prompt};
use super::host::HostState;
use super::manifest::{AzdGrants, EnvironmentAccess};
use crate::env_name::EnvironmentName;

/// Why a call to azd's services failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ServiceError {
    /// What azd said (or why it could not be asked).
    pub message: String,
}

impl ServiceError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// A yes/no question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmQuestion {
    /// The question.
    pub message: String,
    /// The answer under `--no-prompt`, pre-selected otherwise.
    pub default_value: Option<bool>,
    /// Shown on request.
    pub help_message: String,
}

/// A question answered with text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextQuestion {
    /// The question.
    pub message: String,
    /// The answer under `--no-prompt`, pre-filled otherwise.
    pub default_value: Option<String>,
    /// Shown on request.
    pub help_message: String,
    /// Shown while the answer is empty.
    pub placeholder: String,
    /// Not echoed, never logged.
    pub secret: bool,
    /// An empty answer is refused.
    pub required: bool,
}

/// A question answered by choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectQuestion {
    /// The question.
    pub message: String,
    /// `(value, label)` of each choice.
    pub choices: Vec<(String, String)>,
    /// The index chosen under `--no-prompt`, pre-selected otherwise.
    pub default_index: Option<u32>,
    /// Shown on request.
    pub help_message: String,
}

/// azd's services a provider may be granted.
#[async_trait]
pub trait AzdServices: Send + Sync + 'static {
    /// The environment azd resolved for the command.
    async fn current_environment(&self) -> Result<String, ServiceError>;
    /// Every value of environment `env`.
    async fn environment_values(&self, env: &str) -> Result<Vec<(String, String)>, ServiceError>;
    /// One value of environment `env` (empty when unset).
    async fn environment_value(&self, env: &str, key: &str) -> Result<String, ServiceError>;
    /// Sets one value of environment `env`.
    async fn set_environment_value(
        &self,
        env: &str,
        key: &str,
        value: &str,
    ) -> Result<(), ServiceError>;
    /// Asks a yes/no question.
    async fn confirm(&self, question: ConfirmQuestion) -> Result<bool, ServiceError>;
    /// Asks for text.
    async fn prompt(&self, question: TextQuestion) -> Result<String, ServiceError>;
    /// Asks to choose; the chosen index.
    async fn select(&self, question: SelectQuestion) -> Result<u32, ServiceError>;
}

/// What one instance may use of azd's services, and how to reach them.
#[derive(Clone)]
pub(crate) struct ServiceAccess {
    pub(crate) grants: AzdGrants,
    /// `None` when nothing connects the host to azd (e.g. `check`).
    pub(crate) services: Option<Arc<dyn AzdServices>>,
    /// The environment the command runs in, when known.
    pub(crate) environment: Option<EnvironmentName>,
    /// Whether the user can be asked (false under `--no-prompt`).
    pub(crate) interactive: bool,
}

/// The guest-facing error for a call that failed.
fn error(code: &str, category: &str, message: String, suggestion: &str) -> wit::Error {
    wit::Error {
        message,
        origin: wit::ErrorOrigin::Local,
        suggestion: suggestion.to_owned(),
        links: Vec::new(),
        detail: Some(wit::ErrorDetail::Local(wit::LocalError {
            code: code.to_owned(),
            category: category.to_owned(),
        })),
    }
}

fn not_granted(what: &str, grant: &str) -> wit::Error {
    error(
        "not_granted",
        "auth",
        format!("the provider is not granted {what}"),
        &format!("add `{grant}` under [policy.azd] in the provider's provider.toml"),
    )
}

fn failed(what: &str, e: &ServiceError) -> wit::Error {
    error(
        "azd_service_failed",
        "dependency",
        format!("azd could not {what}: {e}"),
        "",
    )
}

impl ServiceAccess {
    /// The services, if the environment may be read (or written, with `write`).
    fn environment_services(&self, write: bool) -> Result<&Arc<dyn AzdServices>, wit::Error> {
        let allowed = match self.grants.environment {
            EnvironmentAccess::None => false,
            EnvironmentAccess::Read => !write,
            EnvironmentAccess::ReadWrite => true,
        };
        if !allowed {
            return Err(if write {
                not_granted("writing azd's environment", "environment = \"read-write\"")
            } else {
                not_granted("azd's environment", "environment = \"read\"")
            });
        }
        self.services.as_ref().ok_or_else(|| {
            error(
                "azd_unavailable",
                "dependency",
                "azd's services are not reachable here".to_owned(),
                "",
            )
        })
    }

    /// The services, if the provider may ask the user.
    fn prompt_services(&self) -> Result<&Arc<dyn AzdServices>, wit::Error> {
        if !self.grants.prompt {
            return Err(not_granted("asking the user", "prompt = true"));
        }
        self.services.as_ref().ok_or_else(|| {
            error(
                "azd_unavailable",
                "dependency",
                "azd's services are not reachable here".to_owned(),
                "",
            )
        })
    }

    /// The environment's name: the one the command runs in, else azd's current.
    async fn environment_name(
        &self,
        services: &Arc<dyn AzdServices>,
    ) -> Result<String, wit::Error> {
        match &self.environment {
            Some(name) => Ok(name.as_str().to_owned()),
            None => services
                .current_environment()
                .await
                .map_err(|e| failed("tell the current environment", &e)),
        }
    }
}

impl environment::Host for HostState {
    async fn name(&mut self) -> Result<String, wit::Error> {
        let access = self.services().clone();
        let services = access.environment_services(false)?;
        access.environment_name(services).await
    }

    async fn get_value(&mut self, key: String) -> Result<Option<String>, wit::Error> {
        let access = self.services().clone();
        let services = access.environment_services(false)?;
        let env = access.environment_name(services).await?;
        let value = services
            .environment_value(&env, &key)
            .await
            .map_err(|e| failed("read the environment", &e))?;
        Ok(Some(value).filter(|v| !v.is_empty()))
    }

    async fn get_values(&mut self) -> Result<Vec<(String, String)>, wit::Error> {
        let access = self.services().clone();
        let services = access.environment_services(false)?;
        let env = access.environment_name(services).await?;
        let mut values = services
            .environment_values(&env)
            .await
            .map_err(|e| failed("read the environment", &e))?;
        values.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(values)
    }

    async fn set_value(&mut self, key: String, value: String) -> Result<(), wit::Error> {
        let access = self.services().clone();
        let services = access.environment_services(true)?;
        let env = access.environment_name(services).await?;
        services
            .set_environment_value(&env, &key, &value)
            .await
            .map_err(|e| failed("write the environment", &e))
    }
}

impl prompt::Host for HostState {
    fn interactive(&mut self) -> bool {
        let access = self.services();
        access.grants.prompt && access.interactive
    }

    async fn confirm(&mut self, o: prompt::ConfirmOptions) -> Result<bool, wit::Error> {
        let access = self.services().clone();
        let services = access.prompt_services()?;
        services
            .confirm(ConfirmQuestion {
                message: crate::text::sanitize(&o.message).into_owned(),
                default_value: o.default_value,
                help_message: crate::text::sanitize(&o.help_message).into_owned(),
            })
            .await
            .map_err(|e| failed("ask the user", &e))
    }

    async fn text(&mut self, o: prompt::TextOptions) -> Result<String, wit::Error> {
        let access = self.services().clone();
        let services = access.prompt_services()?;
        services
            .prompt(TextQuestion {
                message: crate::text::sanitize(&o.message).into_owned(),
                default_value: o.default_value,
                help_message: crate::text::sanitize(&o.help_message).into_owned(),
                placeholder: crate::text::sanitize(&o.placeholder).into_owned(),
                secret: o.secret,
                required: o.required,
            })
            .await
            .map_err(|e| failed("ask the user", &e))
    }

    async fn select(&mut self, o: prompt::SelectOptions) -> Result<u32, wit::Error> {
        let access = self.services().clone();
        let services = access.prompt_services()?;
        let count = o.choices.len();
        let index = services
            .select(SelectQuestion {
                message: crate::text::sanitize(&o.message).into_owned(),
                choices: o
                    .choices
                    .into_iter()
                    .map(|c| (c.value, crate::text::sanitize(&c.label).into_owned()))
                    .collect(),
                default_index: o.default_index,
                help_message: crate::text::sanitize(&o.help_message).into_owned(),
            })
            .await
            .map_err(|e| failed("ask the user", &e))?;
        if usize::try_from(index).is_ok_and(|i| i < count) {
            Ok(index)
        } else {
            Err(failed(
                "ask the user",
                &ServiceError::new(format!("azd answered choice {index} of {count}")),
            ))
        }
    }
}
