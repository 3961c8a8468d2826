//! The `ProvisioningManager`: the extension side of azd's provisioning protocol.
//!
//! It owns the connection ([`AzdClient`]), opens the stream lazily
//! ([`ProvisioningManager::ensure_stream`]: concurrent first callers open exactly
//! one; the stream's tasks live as long as the process), registers one provider
//! name, and serves azd's requests through the [`Broker`], one handler per kind:
//!
//! - **initialize** makes a fresh instance through the factory and calls its
//!   `initialize`. azd sends one per layer: each success replaces the current
//!   instance; requests already running keep the instance they started with. A
//!   failed initialize leaves no current instance, so later requests cannot run
//!   on the previous layer's.
//! - **state, deploy, preview, destroy, ensure-env, parameters, planned-outputs**
//!   check the provider name and delegate to the current instance; deploy, preview
//!   and destroy get a progress reporter bound to their request id.
//!
//! Every answer passes [`crate::answer`] so it cannot crash azd.

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use azd_wasm_host_proto::azdext as pb;
use pb::provisioning_message::MessageType;
use tokio::sync::{Mutex, OnceCell};

use crate::answer;
use crate::broker::{Broker, BrokerError, RequestHandler, RequestKind, error_answer};
use crate::client::AzdClient;
use crate::error::ProviderError;
use crate::provider::{CallContext, Provider, ProviderFactory};

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

/// The current provider instance, or why there is none.
enum Current {
    /// No initialize yet.
    Uninitialized,
    /// The last initialize failed.
    Failed(ProviderError),
    /// Serving.
    Ready(Arc<dyn Provider>),
}

/// Serves azd's provisioning requests with one provider.
pub struct ProvisioningManager {
    /// The extension id (the token's subject), for logs.
    extension_id: String,
    /// The connection to azd.
    client: AzdClient,
    /// The stream, opened on first use.
    broker: OnceCell<Arc<Broker>>,
    /// The provider name and factory, set by `register`.
    registration: RwLock<Option<Arc<Registration>>>,
    /// The instance the latest successful initialize made.
    provider: RwLock<Current>,
    /// Orders initializes: instances become current in the order azd sent them.
    lock: Mutex<()>,
}

impl std::fmt::Debug for ProvisioningManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvisioningManager")
            .field("extension_id", &self.extension_id)
            .field("provider_name", &self.provider_name())
            .finish_non_exhaustive()
    }
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ProvisioningManager {
    /// A manager for the extension `extension_id`, talking over `client`.
    pub fn new(extension_id: impl Into<String>, client: AzdClient) -> Arc<Self> {
        Arc::new(Self {
            extension_id: extension_id.into(),
            client,
            broker: OnceCell::new(),
            registration: RwLock::new(None),
            provider: RwLock::new(Current::Uninitialized),
            lock: Mutex::new(()),
        })
    }

    /// The registered provider name, if any.
    pub fn provider_name(&self) -> Option<String> {
        read(&self.registration).as_ref().map(|r| r.name.clone())
    }

    /// The extension id.
    pub fn extension_id(&self) -> &str {
        &self.extension_id
    }

    /// Opens the stream on first use; later and concurrent callers share it.
    pub async fn ensure_stream(&self) -> Result<Arc<Broker>, BrokerError> {
        self.broker
            .get_or_try_init(|| Broker::open(&self.client))
            .await
            .cloned()
    }

    /// Registers the provider `name`, served by instances from `factory`.
    pub async fn register(
        &self,
        factory: Arc<dyn ProviderFactory>,
        name: &str,
    ) -> Result<(), ManagerError> {
        let broker = self.ensure_stream().await?;
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
                message: err.message,
            });
        }
        if !matches!(
            answer.message_type,
            Some(MessageType::RegisterProvisioningProviderResponse(_))
        ) {
            return Err(ManagerError::UnexpectedAnswer(name.to_owned()));
        }
        *write(&self.registration) = Some(Arc::new(Registration {
            name: name.to_owned(),
            factory,
        }));
        tracing::debug!(provider = name, extension = %self.extension_id, "registered");
        Ok(())
    }

    /// Serves azd's requests until the stream ends (the blocking dispatcher).
    pub async fn receive(self: &Arc<Self>) -> Result<(), ManagerError> {
        if read(&self.registration).is_none() {
            return Err(ManagerError::NotRegistered);
        }
        let broker = self.ensure_stream().await?;
        let handler: Arc<dyn RequestHandler> = self.clone();
        broker.receive(handler).await?;
        Ok(())
    }

    /// Waits until [`ProvisioningManager::receive`] is dispatching, then tells azd
    /// the extension is ready.
    pub async fn ready(&self) -> Result<(), ManagerError> {
        let broker = self.ensure_stream().await?;
        broker.receiving().await?;
        self.client
            .extension()
            .ready(pb::ReadyRequest {})
            .await
            .map_err(ManagerError::Ready)?;
        Ok(())
    }

    fn registration(&self) -> Result<Arc<Registration>, ProviderError> {
        read(&self.registration).clone().ok_or_else(|| {
            ProviderError::internal("not_registered", "no provider is registered yet")
        })
    }

    /// The current instance for a request naming `provider_name`.
    fn instance(&self, provider_name: &str) -> Result<Arc<dyn Provider>, ProviderError> {
        let reg = self.registration()?;
        if provider_name != reg.name {
            return Err(unknown_provider(provider_name, &reg.name));
        }
        match &*read(&self.provider) {
            Current::Ready(p) => Ok(p.clone()),
            Current::Uninitialized => Err(ProviderError::validation(
                "not_initialized",
                format!("provider {:?} has not been initialized", reg.name),
            )
            .with_suggestion(
                "azd sends Initialize before any other request; this one came first.",
            )),
            Current::Failed(e) => Err(ProviderError {
                message: format!(
                    "provider {:?} is not initialized: the last Initialize failed: {}",
                    reg.name, e.message
                ),
                ..e.clone()
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
        let instance = reg.factory.create().await?;
        let result = instance.initialize(&req.project_path, options, ctx).await;
        let _ordered = self.lock.lock().await;
        match result {
            Ok(()) => {
                *write(&self.provider) = Current::Ready(instance);
                Ok(())
            }
            Err(e) => {
                *write(&self.provider) = Current::Failed(e.clone());
                Err(e)
            }
        }
    }

    async fn dispatch(
        &self,
        request: pb::ProvisioningMessage,
        ctx: CallContext,
    ) -> Result<MessageType, ProviderError> {
        let Some(kind) = request.message_type else {
            return Err(ProviderError::validation(
                "unknown_request",
                "empty request",
            ));
        };
        Ok(match kind {
            MessageType::InitializeRequest(r) => {
                self.initialize(r, ctx).await?;
                MessageType::InitializeResponse(pb::ProvisioningInitializeResponse {})
            }
            MessageType::StateRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                let result = p.state(r.options.unwrap_or_default(), ctx).await?;
                MessageType::StateResponse(pb::ProvisioningStateResponse {
                    state_result: Some(answer::state_result(result)?),
                })
            }
            MessageType::DeployRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                let result = p.deploy(ctx).await?;
                MessageType::DeployResponse(pb::ProvisioningDeployResponse {
                    result: Some(answer::deploy_result(result)?),
                })
            }
            MessageType::PreviewRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                let result = p.preview(ctx).await?;
                MessageType::PreviewResponse(pb::ProvisioningPreviewResponse {
                    result: Some(answer::preview_result(result)?),
                })
            }
            MessageType::DestroyRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                let result = p.destroy(r.options.unwrap_or_default(), ctx).await?;
                MessageType::DestroyResponse(pb::ProvisioningDestroyResponse {
                    result: Some(result),
                })
            }
            MessageType::EnsureEnvRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                p.ensure_env(ctx).await?;
                MessageType::EnsureEnvResponse(pb::ProvisioningEnsureEnvResponse {})
            }
            MessageType::ParametersRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                let parameters = p.parameters(ctx).await?;
                MessageType::ParametersResponse(pb::ProvisioningParametersResponse { parameters })
            }
            MessageType::PlannedOutputsRequest(r) => {
                let p = self.instance(&r.provider_name)?;
                let planned_outputs = p.planned_outputs(ctx).await?;
                MessageType::PlannedOutputsResponse(pb::ProvisioningPlannedOutputsResponse {
                    planned_outputs,
                })
            }
            _ => {
                return Err(ProviderError::validation(
                    "unknown_request",
                    "this message is not a request azd-wasm-host serves",
                ));
            }
        })
    }
}

fn unknown_provider(asked: &str, ours: &str) -> ProviderError {
    ProviderError::validation(
        "unknown_provider",
        format!("this extension serves provider {ours:?}, not {asked:?}"),
    )
    .with_suggestion(format!(
        "Set `infra.provider: {ours}` in azure.yaml, or install the extension that provides {asked:?}."
    ))
}

#[async_trait]
impl RequestHandler for ProvisioningManager {
    async fn handle(
        &self,
        kind: RequestKind,
        request: pb::ProvisioningMessage,
        ctx: CallContext,
    ) -> pb::ProvisioningMessage {
        let request_id = request.request_id.clone();
        match self.dispatch(request, ctx).await {
            Ok(message) => pb::ProvisioningMessage {
                request_id,
                error: None,
                message_type: Some(message),
            },
            Err(err) => {
                tracing::debug!(%request_id, kind = kind.name(), error = %err.message, "request failed");
                error_answer(&request_id, &err)
            }
        }
    }
}
