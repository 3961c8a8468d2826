//! The `ProvisioningManager`: the extension side of azd's provisioning protocol.
//!
//! It owns the connection ([`AzdClient`]), opens the stream lazily
//! ([`ProvisioningManager::ensure_stream`]: concurrent first callers open exactly
//! one), registers one provider name, and serves azd's requests through the
//! broker, one handler per [`Request`] kind:
//!
//! - **initialize** makes a fresh instance through the factory and calls its
//!   `initialize`. azd sends one per layer: instances become current in the
//!   order azd *sent* the Initializes, whatever order they finish in (a slower,
//!   earlier one never replaces a later one); requests already running keep the
//!   instance they started with. A failed initialize leaves no current
//!   instance, so later requests cannot run on the previous layer's.
//! - **state, deploy, preview, destroy, ensure-env, parameters, planned-outputs**
//!   check the provider name and delegate to the current instance; deploy,
//!   preview and destroy get a progress reporter bound to their request id.
//!
//! Every answer passes [`crate::answer`] so it cannot crash azd.

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::text::{AZD_MESSAGE_MAX, clip, quote};
use azd_wasm_host_core::{CallContext, ErrorCode, Provider, ProviderError, ProviderFactory};
use azd_wasm_host_proto::Request;
use azd_wasm_host_proto::azdext as pb;
use parking_lot::RwLock;
use pb::provisioning_message::MessageType;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::answer;
use crate::broker::{Broker, BrokerError, RequestHandler, StreamEnd};
use crate::client::AzdClient;

/// Why registration or serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// The stream failed.
    #[error(transparent)]
    Stream(#[from] BrokerError),
    /// azd refused the provider name.
    #[error("azd refused to register provider {name:?}: {message}")]
    Refused {
        /// The name we asked for.
        name: String,
        /// azd's reason.
        message: String,
    },
    /// azd answered with something else than the registration response.
    #[error("azd answered the registration of {0:?} with an unexpected message")]
    UnexpectedAnswer(String),
    /// `receive` or `ready` before `register`.
    #[error("no provider is registered yet")]
    NotRegistered,
    /// The Ready call failed.
    #[error("azd refused Ready: {}", .0.message())]
    Ready(#[source] tonic::Status),
}

/// The registered provider: its name and how to make instances.
struct Registration {
    name: String,
    factory: Arc<dyn ProviderFactory>,
}

/// What the latest Initialize (in the order azd sent them) left behind.
enum CurrentInstance {
    /// No initialize yet.
    None,
    /// The latest initialize failed.
    Failed { sequence: u64, error: ProviderError },
    /// Serving.
    Ready {
        sequence: u64,
        provider: Arc<dyn Provider>,
    },
}

impl CurrentInstance {
    /// The place in azd's order of the Initialize that made this, if any.
    fn sequence(&self) -> Option<u64> {
        match self {
            Self::None => None,
            Self::Failed { sequence, .. } | Self::Ready { sequence, .. } => Some(*sequence),
        }
    }
}

/// Serves azd's provisioning requests with one provider.
pub struct ProvisioningManager {
    /// The connection to azd.
    client: AzdClient,
    /// The stream, opened on first use.
    broker: OnceCell<Arc<Broker>>,
    /// The provider name and factory, set by `register`.
    registration: RwLock<Option<Arc<Registration>>>,
    /// The instance the latest Initialize made.
    current: RwLock<CurrentInstance>,
    /// The host's log file, linked from every error azd shows.
    log_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for ProvisioningManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvisioningManager")
            .field("provider_name", &self.provider_name())
            .finish_non_exhaustive()
    }
}

impl ProvisioningManager {
    /// A manager talking to azd over `client`.
    pub fn new(client: AzdClient) -> Arc<Self> {
        Self::with_log_file(client, None)
    }

    /// A manager whose error answers link to `log_file`.
    pub fn with_log_file(client: AzdClient, log_file: Option<std::path::PathBuf>) -> Arc<Self> {
        Arc::new(Self {
            client,
            broker: OnceCell::new(),
            registration: RwLock::new(None),
            current: RwLock::new(CurrentInstance::None),
            log_file,
        })
    }

    /// The registered provider name, if any.
    pub fn provider_name(&self) -> Option<String> {
        self.registration.read().as_ref().map(|r| r.name.clone())
    }

    /// Opens the stream on first use; later and concurrent callers share it.
    /// `register`, `receive` and `ready` call it; calling it first only opens
    /// the stream earlier.
    pub async fn ensure_stream(&self) {
        self.stream().await;
    }

    /// The stream, opened on first use.
    async fn stream(&self) -> Arc<Broker> {
        self.broker
            .get_or_init(|| async { Broker::open(&self.client) })
            .await
            .clone()
    }

    /// Registers the provider `name`, served by instances from `factory`.
    pub async fn register(
        &self,
        factory: Arc<dyn ProviderFactory>,
        name: &str,
    ) -> Result<(), ManagerError> {
        let broker = self.stream().await;
        let request = pb::ProvisioningMessage {
            request_id: uuid::Uuid::new_v4().to_string(),
            error: None,
            message_type: Some(MessageType::RegisterProvisioningProviderRequest(
                pb::RegisterProvisioningProviderRequest {
                    name: name.to_owned(),
                },
            )),
        };
        let answer = broker.request(request).await?;
        if let Some(err) = answer.error {
            return Err(ManagerError::Refused {
                name: name.to_owned(),
                message: clip(&err.message, AZD_MESSAGE_MAX).into_owned(),
            });
        }
        if !matches!(
            answer.message_type,
            Some(MessageType::RegisterProvisioningProviderResponse(_))
        ) {
            return Err(ManagerError::UnexpectedAnswer(name.to_owned()));
        }
        *self.registration.write() = Some(Arc::new(Registration {
            name: name.to_owned(),
            factory,
        }));
        tracing::debug!(provider = name, "registered");
        Ok(())
    }

    /// Serves azd's requests until the stream ends or `shutdown` fires (the
    /// blocking dispatcher); says which.
    pub async fn receive(
        self: &Arc<Self>,
        shutdown: CancellationToken,
    ) -> Result<StreamEnd, ManagerError> {
        if self.registration.read().is_none() {
            return Err(ManagerError::NotRegistered);
        }
        let broker = self.stream().await;
        let handler: Arc<dyn RequestHandler> = self.clone();
        Ok(broker.receive(handler, shutdown).await?)
    }

    /// Waits until [`ProvisioningManager::receive`] is dispatching, then tells azd
    /// the extension is ready, and the provider's factory that the first
    /// Initialize is coming ([`ProviderFactory::prepare`]).
    pub async fn ready(&self) -> Result<(), ManagerError> {
        let broker = self.stream().await;
        broker.receiving().await?;
        self.client.ready().await.map_err(ManagerError::Ready)?;
        // azd sends Initialize next, once it has read its project.
        if let Ok(reg) = self.registration() {
            reg.factory.prepare();
        }
        Ok(())
    }

    fn registration(&self) -> Result<Arc<Registration>, ProviderError> {
        self.registration.read().clone().ok_or_else(|| {
            ProviderError::host(ErrorCode::NotRegistered, "no provider is registered yet")
        })
    }

    /// The current instance for a request naming `provider_name`.
    fn instance(&self, provider_name: &str) -> Result<Arc<dyn Provider>, ProviderError> {
        let reg = self.registration()?;
        if provider_name != reg.name {
            return Err(unknown_provider(provider_name, &reg.name));
        }
        match &*self.current.read() {
            CurrentInstance::Ready { provider, .. } => Ok(provider.clone()),
            CurrentInstance::None => Err(ProviderError::host(
                ErrorCode::NotInitialized,
                format!("provider {:?} has not been initialized", reg.name),
            )
            .with_suggestion(
                "azd sends Initialize before any other request; this one came first.",
            )),
            CurrentInstance::Failed { error, .. } => Err(ProviderError {
                message: format!(
                    "provider {:?} is not initialized: the last Initialize failed: {}",
                    reg.name, error.message
                ),
                ..error.clone()
            }),
        }
    }

    async fn initialize(
        &self,
        req: pb::ProvisioningInitializeRequest,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        let reg = self.registration()?;
        let options = req.options.unwrap_or_default();
        if options.provider != reg.name {
            return Err(unknown_provider(&options.provider, &reg.name));
        }
        let sequence = ctx.sequence;
        let instance = reg.factory.create().await?;
        let result = instance.initialize(&req.project_path, options, ctx).await;
        let mut current = self.current.write();
        // An Initialize azd sent later has already made the current instance.
        if current.sequence().is_some_and(|s| s > sequence) {
            return result;
        }
        *current = match &result {
            Ok(()) => CurrentInstance::Ready {
                sequence,
                provider: instance,
            },
            // Quoted by every request until the next Initialize: kept bounded.
            Err(error) => CurrentInstance::Failed {
                sequence,
                error: error.bounded(),
            },
        };
        result
    }

    /// Serves one request; the body of the answer.
    async fn serve(
        &self,
        request: Request,
        ctx: CallContext,
    ) -> Result<MessageType, ProviderError> {
        let request = match request {
            Request::Initialize(r) => {
                self.initialize(*r, ctx).await?;
                return Ok(MessageType::InitializeResponse(
                    pb::ProvisioningInitializeResponse {},
                ));
            }
            other => other,
        };
        let provider = self.instance(request.provider_name().unwrap_or_default())?;
        serve_with(&*provider, request, ctx).await
    }
}

/// Serves a request other than Initialize with the instance `provider`.
async fn serve_with(
    provider: &dyn Provider,
    request: Request,
    ctx: CallContext,
) -> Result<MessageType, ProviderError> {
    let progress = ctx.progress.clone();
    Ok(match request {
        // Served by the manager itself; here only to keep the match whole.
        Request::Initialize(_) => {
            return Err(ProviderError::host(
                ErrorCode::MisroutedRequest,
                "an initialize request reached the instance handlers",
            ));
        }
        Request::State(r) => {
            let result = provider.state(r.options.unwrap_or_default(), ctx).await?;
            MessageType::StateResponse(pb::ProvisioningStateResponse {
                state_result: Some(answer::state_result(result, &progress)?),
            })
        }
        Request::Deploy(_) => {
            let result = provider.deploy(ctx).await?;
            MessageType::DeployResponse(pb::ProvisioningDeployResponse {
                result: Some(answer::deploy_result(result, &progress)?),
            })
        }
        Request::Preview(_) => {
            let result = provider.preview(ctx).await?;
            MessageType::PreviewResponse(pb::ProvisioningPreviewResponse {
                result: Some(answer::preview_result(result, &progress)?),
            })
        }
        Request::Destroy(r) => {
            let result = provider.destroy(r.options.unwrap_or_default(), ctx).await?;
            MessageType::DestroyResponse(pb::ProvisioningDestroyResponse {
                result: Some(answer::destroy_result(result, &progress)),
            })
        }
        Request::EnsureEnv(_) => {
            provider.ensure_env(ctx).await?;
            MessageType::EnsureEnvResponse(pb::ProvisioningEnsureEnvResponse {})
        }
        Request::Parameters(_) => {
            let parameters = provider.parameters(ctx).await?;
            MessageType::ParametersResponse(pb::ProvisioningParametersResponse {
                parameters: answer::parameters(parameters, &progress),
            })
        }
        Request::PlannedOutputs(_) => {
            let planned_outputs = provider.planned_outputs(ctx).await?;
            MessageType::PlannedOutputsResponse(pb::ProvisioningPlannedOutputsResponse {
                planned_outputs: answer::planned_outputs(planned_outputs, &progress),
            })
        }
    })
}

/// The answer to a request for a provider this extension does not serve; the name azd
/// sent is quoted bounded (it can be as long as a message).
fn unknown_provider(asked: &str, ours: &str) -> ProviderError {
    let asked = quote(asked);
    ProviderError::host(
        ErrorCode::UnknownProvider,
        format!("this extension serves provider {ours:?}, not {asked}"),
    )
    .with_suggestion(format!(
        "Set `infra.provider: {ours}` in azure.yaml, or install the extension that provides {asked}."
    ))
}

#[async_trait]
impl RequestHandler for ProvisioningManager {
    async fn handle(
        &self,
        request: Request,
        ctx: CallContext,
    ) -> Result<MessageType, ProviderError> {
        let answer = self.serve(request, ctx).await;
        match (&self.log_file, answer) {
            (Some(log), Err(e)) => {
                tracing::warn!(error = %e.message, code = e.code().unwrap_or_default(), "request failed");
                Err(e.with_log_file(log))
            }
            (_, answer) => answer,
        }
    }
}
