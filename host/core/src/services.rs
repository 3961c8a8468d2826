//! What a provider may ask of azd: the seam between the runtime's imports
//! (which check the manifest's grants and then call it) and whatever reaches
//! azd.
//!
//! - [`AzdServices`]: the azd environment's values and questions to the user
//!   (azd's `EnvironmentService` and `PromptService`). azd's side implements it
//!   over its gRPC connection; the simulated azd and tests have their own.
//! - [`TokenSource`]: Azure access tokens for a scope. azd's side gets them
//!   the way azd's own Go extensions do (`azd auth token`).
//!
//! Secrets never pass through `Debug`: an [`AccessToken`] prints redacted.

use async_trait::async_trait;

/// Why a call to azd's services failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ServiceError {
    /// What azd said (or why it could not be asked).
    pub message: String,
    /// What azd suggests doing about it (empty: nothing), from the details of its answer.
    pub suggestion: String,
}

impl ServiceError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            suggestion: String::new(),
        }
    }

    /// This error with azd's `suggestion`.
    #[must_use]
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = suggestion.into();
        self
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

/// An Azure access token and when it expires.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    /// The bearer token. Secret: never logged.
    pub token: String,
    /// Expiry, in seconds since the Unix epoch.
    pub expires_on: u64,
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &"<redacted>")
            .field("expires_on", &self.expires_on)
            .finish()
    }
}

/// Why no token could be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TokenError {
    /// Machine-readable, in kebab case (`not-signed-in`, `azd-not-found`,
    /// `token-failed`, ...): what the guest's `credential-error` carries.
    pub code: String,
    /// What went wrong, for the user (never a secret).
    pub message: String,
}

impl TokenError {
    /// An error with `code` and `message`.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }
}

/// Gets Azure access tokens. The runtime asks it only for scopes the manifest
/// grants, and keeps each token until shortly before it expires.
#[async_trait]
pub trait TokenSource: Send + Sync + 'static {
    /// A token for `scope` (e.g. `https://storage.azure.com/.default`).
    async fn token(&self, scope: &str) -> Result<AccessToken, TokenError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_never_prints() {
        let t = AccessToken {
            token: "eyJ0.secret".into(),
            expires_on: 7,
        };
        let shown = format!("{t:?}");
        assert!(!shown.contains("secret") && shown.contains('7'), "{shown}");
    }
}
