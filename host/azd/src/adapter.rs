//! The azd client adapter: [`AzdClient`] as the [`AzdServices`] a provider's
//! imports call, with azd's `EnvironmentService` and `PromptService` and the
//! extension's token on every call.

use async_trait::async_trait;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, SelectQuestion, ServiceError, TextQuestion,
};
use azd_wasm_host_proto::azdext as pb;

use crate::client::AzdClient;

/// What a failed call to azd says, without gRPC's framing.
fn failed(status: &tonic::Status) -> ServiceError {
    ServiceError::new(format!("{} ({:?})", status.message(), status.code()))
}

#[async_trait]
impl AzdServices for AzdClient {
    async fn current_environment(&self) -> Result<String, ServiceError> {
        let answer = self
            .environment()
            .get_current(pb::EmptyRequest {})
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
        let answer = self
            .environment()
            .get_values(pb::GetEnvironmentRequest {
                name: env.to_owned(),
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
        let answer = self
            .environment()
            .get_value(pb::GetEnvRequest {
                env_name: env.to_owned(),
                key: key.to_owned(),
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
        self.environment()
            .set_value(pb::SetEnvRequest {
                env_name: env.to_owned(),
                key: key.to_owned(),
                value: value.to_owned(),
            })
            .await
            .map_err(|s| failed(&s))?;
        Ok(())
    }

    async fn confirm(&self, q: ConfirmQuestion) -> Result<bool, ServiceError> {
        let answer = self
            .prompt()
            .confirm(pb::ConfirmRequest {
                options: Some(pb::ConfirmOptions {
                    default_value: q.default_value,
                    message: q.message,
                    help_message: q.help_message,
                    hint: String::new(),
                    placeholder: String::new(),
                }),
            })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        answer
            .value
            .ok_or_else(|| ServiceError::new("azd returned no answer"))
    }

    async fn prompt(&self, q: TextQuestion) -> Result<String, ServiceError> {
        let answer = self
            .prompt()
            .prompt(pb::PromptRequest {
                options: Some(pb::PromptOptions {
                    message: q.message,
                    help_message: q.help_message,
                    placeholder: q.placeholder,
                    required: q.required,
                    default_value: q.default_value.unwrap_or_default(),
                    secret: q.secret,
                    ..Default::default()
                }),
            })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        Ok(answer.value)
    }

    async fn select(&self, q: SelectQuestion) -> Result<u32, ServiceError> {
        let selected_index = q.default_index.and_then(|i| i32::try_from(i).ok());
        let answer = self
            .prompt()
            .select(pb::SelectRequest {
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
            })
            .await
            .map_err(|s| failed(&s))?
            .into_inner();
        answer
            .value
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| ServiceError::new("azd returned no choice"))
    }
}
