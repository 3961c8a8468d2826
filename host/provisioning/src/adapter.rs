//! The azd client adapter: [`AzdClient`] as the [`AzdServices`] a provider's
//! imports call, with azd's `EnvironmentService` and `PromptService` and the
//! extension's token on every call, under the contract azd serves.

use async_trait::async_trait;
use azd_wasm_host_core::text::{AZD_MESSAGE_MAX, clip};
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, SelectQuestion, ServiceError, TextQuestion,
};
use azd_wasm_host_proto::azdext as pb;

use crate::client::{AzdClient, environment, prompt};

/// What a failed call to azd says, without gRPC's framing, bounded: azd's message
/// and the suggestion it attached (`ActionableErrorDetail`, under either
/// contract's type URL).
fn failed(status: &tonic::Status) -> ServiceError {
    let details = azd_wasm_host_proto::details::read(status.details());
    let message = format!(
        "{} ({:?})",
        clip(status.message(), AZD_MESSAGE_MAX),
        status.code()
    );
    let suggestion = details
        .actionable
        .map(|a| clip(&a.suggestion, AZD_MESSAGE_MAX).into_owned())
        .unwrap_or_default();
    ServiceError::new(message).with_suggestion(suggestion)
}

#[async_trait]
impl AzdServices for AzdClient {
    async fn current_environment(&self) -> Result<String, ServiceError> {
        let answer = self
            .unary(pb::EmptyRequest {}, |ch, r| async move {
                environment(ch).get_current(r).await
            })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        answer
            .environment
            .map(|e| e.name)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| ServiceError::new("azd has no current environment"))
    }

    async fn environment_values(&self, env: &str) -> Result<Vec<(String, String)>, ServiceError> {
        let request = pb::GetEnvironmentRequest {
            name: env.to_owned(),
        };
        let answer = self
            .unary(request, |ch, r| async move {
                environment(ch).get_values(r).await
            })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        Ok(answer
            .key_values
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect())
    }

    async fn environment_value(&self, env: &str, key: &str) -> Result<String, ServiceError> {
        let request = pb::GetEnvRequest {
            env_name: env.to_owned(),
            key: key.to_owned(),
        };
        let answer = self
            .unary(request, |ch, r| async move {
                environment(ch).get_value(r).await
            })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        Ok(answer.value)
    }

    async fn set_environment_value(
        &self,
        env: &str,
        key: &str,
        value: &str,
    ) -> Result<(), ServiceError> {
        let request = pb::SetEnvRequest {
            env_name: env.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
        };
        self.unary(request, |ch, r| async move {
            environment(ch).set_value(r).await
        })
        .await
        .map_err(|s| failed(&s))?;
        Ok(())
    }

    async fn confirm(&self, q: ConfirmQuestion) -> Result<bool, ServiceError> {
        let request = pb::ConfirmRequest {
            options: Some(pb::ConfirmOptions {
                default_value: q.default_value,
                message: q.message,
                help_message: q.help_message,
                hint: String::new(),
                placeholder: String::new(),
            }),
        };
        let answer = self
            .unary(request, |ch, r| async move { prompt(ch).confirm(r).await })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        answer
            .value
            .ok_or_else(|| ServiceError::new("azd returned no answer"))
    }

    async fn prompt(&self, q: TextQuestion) -> Result<String, ServiceError> {
        let request = pb::PromptRequest {
            options: Some(pb::PromptOptions {
                message: q.message,
                help_message: q.help_message,
                placeholder: q.placeholder,
                required: q.required,
                default_value: q.default_value.unwrap_or_default(),
                secret: q.secret,
                ..Default::default()
            }),
        };
        let answer = self
            .unary(request, |ch, r| async move { prompt(ch).prompt(r).await })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        Ok(answer.value)
    }

    async fn select(&self, q: SelectQuestion) -> Result<u32, ServiceError> {
        let selected_index = q.default_index.and_then(|i| i32::try_from(i).ok());
        let request = pb::SelectRequest {
            options: Some(pb::SelectOptions {
                selected_index,
                message: q.message,
                choices: q
                    .choices
                    .into_iter()
                    .map(|(value, label)| pb::SelectChoice { value, label })
                    .collect(),
                help_message: q.help_message,
                ..Default::default()
            }),
        };
        let answer = self
            .unary(request, |ch, r| async move { prompt(ch).select(r).await })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        answer
            .value
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| ServiceError::new("azd returned no choice"))
    }
}
