//! azd's services an extension may call besides the provisioning stream, as
//! the simulated azd serves them: `EnvironmentService` (one environment, held
//! in memory; `run` loads it from `.azure/<env>/.env` and saves what was set)
//! and `PromptService` (answered by a [`Prompter`]: by default as azd does
//! under `--no-prompt`). What they serve is in `state.rs`. A question refused
//! under `--no-prompt` carries a suggestion in its status's details
//! (`ActionableErrorDetail`, as azd attaches to its errors), typed under the
//! contract the call came under.

use std::sync::Arc;

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::server::environment_service_server::EnvironmentService;
use azd_wasm_host_proto::server::prompt_service_server::PromptService;
use tonic::{Request, Response, Status};

use crate::contract::CalledUnder;
use crate::state::{Prompter, SimEnvironment};
use crate::streams::AzdState;

/// What azd suggests when it may not ask a question.
pub const NO_PROMPT_SUGGESTION: &str =
    "Run the command again without --no-prompt, or give the question a default.";

/// `status` with azd's suggestion in its details when it is the refusal of a question
/// under `--no-prompt`, its type URL under `contract`.
fn with_suggestion(status: Status, contract: azd_wasm_host_proto::Contract) -> Status {
    if status.code() != tonic::Code::FailedPrecondition {
        return status;
    }
    let detail = pb::ActionableErrorDetail {
        suggestion: NO_PROMPT_SUGGESTION.to_owned(),
        links: Vec::new(),
    };
    let details = azd_wasm_host_proto::details::encode(
        contract,
        status.code() as i32,
        status.message(),
        &detail,
    );
    Status::with_details(status.code(), status.message(), details.into())
}

/// `EnvironmentService` of the simulated azd.
pub(crate) struct EnvironmentSvc(pub(crate) Arc<AzdState>);

impl EnvironmentSvc {
    /// The environment named `name` (empty = the current one), or azd's error.
    fn with_env<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut SimEnvironment) -> T,
    ) -> Result<T, Status> {
        let mut env = self.0.environment.lock();
        match env.as_mut() {
            Some(env) if name.is_empty() || name == env.name => Ok(f(env)),
            Some(_) => Err(Status::not_found(format!(
                "environment '{name}' does not exist"
            ))),
            None => Err(Status::failed_precondition(
                "no default environment found: run `azd env new` or pass -e",
            )),
        }
    }
}

#[tonic::async_trait]
impl EnvironmentService for EnvironmentSvc {
    async fn get_current(
        &self,
        request: Request<pb::EmptyRequest>,
    ) -> Result<Response<pb::EnvironmentResponse>, Status> {
        self.0.authenticate(request.metadata())?;
        let name = self.with_env("", |env| env.name.clone())?;
        Ok(Response::new(pb::EnvironmentResponse {
            environment: Some(pb::Environment { name }),
        }))
    }

    async fn get_values(
        &self,
        request: Request<pb::GetEnvironmentRequest>,
    ) -> Result<Response<pb::KeyValueListResponse>, Status> {
        self.0.authenticate(request.metadata())?;
        let key_values = self.with_env(&request.get_ref().name, |env| {
            env.values
                .iter()
                .map(|(key, value)| pb::KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                })
                .collect()
        })?;
        Ok(Response::new(pb::KeyValueListResponse { key_values }))
    }

    async fn get_value(
        &self,
        request: Request<pb::GetEnvRequest>,
    ) -> Result<Response<pb::KeyValueResponse>, Status> {
        self.0.authenticate(request.metadata())?;
        let r = request.into_inner();
        let value = self.with_env(&r.env_name, |env| {
            env.values.get(&r.key).cloned().unwrap_or_default()
        })?;
        Ok(Response::new(pb::KeyValueResponse { key: r.key, value }))
    }

    async fn set_value(
        &self,
        request: Request<pb::SetEnvRequest>,
    ) -> Result<Response<pb::EmptyResponse>, Status> {
        self.0.authenticate(request.metadata())?;
        let r = request.into_inner();
        self.with_env(&r.env_name, |env| env.values.insert(r.key, r.value))?;
        Ok(Response::new(pb::EmptyResponse {}))
    }
}

/// `PromptService` of the simulated azd; questions are asked one at a time,
/// as azd does.
pub(crate) struct PromptSvc {
    pub(crate) shared: Arc<AzdState>,
    pub(crate) prompter: Arc<dyn Prompter>,
    pub(crate) one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl PromptSvc {
    /// Asks through the prompter on a blocking thread (it may read a terminal).
    async fn ask<T: Send + 'static>(
        &self,
        contract: azd_wasm_host_proto::Contract,
        f: impl FnOnce(&dyn Prompter) -> Result<T, Status> + Send + 'static,
    ) -> Result<T, Status> {
        let _turn = self.one_at_a_time.lock().await;
        let prompter = self.prompter.clone();
        tokio::task::spawn_blocking(move || f(&*prompter))
            .await
            .map_err(|e| Status::internal(format!("the prompt failed: {e}")))?
            .map_err(|s| with_suggestion(s, contract))
    }
}

#[tonic::async_trait]
impl PromptService for PromptSvc {
    async fn confirm(
        &self,
        request: Request<pb::ConfirmRequest>,
    ) -> Result<Response<pb::ConfirmResponse>, Status> {
        self.shared.authenticate(request.metadata())?;
        let contract = CalledUnder::of(&request);
        let options = request
            .into_inner()
            .options
            .ok_or_else(|| Status::invalid_argument("options are required"))?;
        let value = self.ask(contract, move |p| p.confirm(&options)).await?;
        Ok(Response::new(pb::ConfirmResponse { value: Some(value) }))
    }

    async fn prompt(
        &self,
        request: Request<pb::PromptRequest>,
    ) -> Result<Response<pb::PromptResponse>, Status> {
        self.shared.authenticate(request.metadata())?;
        let contract = CalledUnder::of(&request);
        let options = request
            .into_inner()
            .options
            .ok_or_else(|| Status::invalid_argument("options are required"))?;
        let value = self.ask(contract, move |p| p.prompt(&options)).await?;
        Ok(Response::new(pb::PromptResponse { value }))
    }

    async fn select(
        &self,
        request: Request<pb::SelectRequest>,
    ) -> Result<Response<pb::SelectResponse>, Status> {
        self.shared.authenticate(request.metadata())?;
        let contract = CalledUnder::of(&request);
        let options = request
            .into_inner()
            .options
            .ok_or_else(|| Status::invalid_argument("options are required"))?;
        let value = self.ask(contract, move |p| p.select(&options)).await?;
        Ok(Response::new(pb::SelectResponse { value: Some(value) }))
    }
}
