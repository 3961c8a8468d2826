//! The gRPC services the simulated azd serves: `ExtensionService` (Ready, ReportError) and
//! `ProvisioningService/Stream`, with azd's token check on every call and stream.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::server::extension_service_server::ExtensionService;
use futures::Stream;
use parking_lot::Mutex;
use pb::provisioning_message::MessageType;
use tokio::sync::{mpsc, watch};
use tokio_util::task::TaskTracker;
use tonic::metadata::MetadataMap;
use tonic::{Code, Request, Response, Status, Streaming};

use crate::auth::{ExtensionClaims, PROVISIONING_CAPABILITY, TokenKey};
use crate::conn::{OUTGOING_CAPACITY, Outgoing, StreamConn};
use crate::generated::provisioning_service_server::ProvisioningService;
use crate::handle::ProviderHandle;

/// Errors an extension reported through `ExtensionService/ReportError` kept at most.
const MAX_REPORTED_ERRORS: usize = 100;

/// State shared by the services and the `SimAzd` that owns them.
pub(crate) struct AzdState {
    /// Signs and checks tokens; knows the audience (the server address).
    pub(crate) key: TokenKey,
    /// The one extension "installed" in this azd.
    pub(crate) extension_id: String,
    /// Number of successful `Ready` calls so far.
    pub(crate) ready: watch::Sender<u64>,
    /// Registered providers, in registration order.
    registry: Mutex<Vec<ProviderHandle>>,
    /// Bumped on every registration change.
    pub(crate) registry_changed: watch::Sender<u64>,
    /// Open streams (ended ones are pruned as they end).
    streams: Mutex<Vec<Arc<StreamConn>>>,
    /// Errors the extension reported.
    reported: Mutex<Vec<pb::ExtensionError>>,
    /// The reader task of every stream.
    pub(crate) tasks: TaskTracker,
    /// Numbers streams for logs.
    next_stream: AtomicU64,
    /// The azd environment of the command, if any.
    pub(crate) environment: Mutex<Option<crate::state::SimEnvironment>>,
}

impl AzdState {
    pub(crate) fn new(
        key: TokenKey,
        extension_id: String,
        environment: Option<crate::state::SimEnvironment>,
    ) -> Self {
        Self {
            key,
            extension_id,
            ready: watch::Sender::new(0),
            registry: Mutex::new(Vec::new()),
            registry_changed: watch::Sender::new(0),
            streams: Mutex::new(Vec::new()),
            reported: Mutex::new(Vec::new()),
            tasks: TaskTracker::new(),
            next_stream: AtomicU64::new(1),
            environment: Mutex::new(environment),
        }
    }

    /// azd's token check: a raw JWT in `authorization`, else UNAUTHENTICATED "invalid token".
    pub(crate) fn authenticate(&self, md: &MetadataMap) -> Result<ExtensionClaims, Status> {
        let token = md
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| Status::unauthenticated("invalid token"))?;
        let claims = self
            .key
            .verify(token)
            .map_err(|_| Status::unauthenticated("invalid token"))?;
        // azd looks the subject up among installed extensions.
        if claims.sub != self.extension_id {
            return Err(Status::failed_precondition(format!(
                "failed to get extension: extension '{}' is not installed",
                claims.sub
            )));
        }
        Ok(claims)
    }

    /// The registered provider called `name`, if any.
    pub(crate) fn provider(&self, name: &str) -> Option<ProviderHandle> {
        self.registry
            .lock()
            .iter()
            .find(|h| h.name() == name)
            .cloned()
    }

    /// Names of the registered providers, in registration order.
    pub(crate) fn registrations(&self) -> Vec<String> {
        self.registry
            .lock()
            .iter()
            .map(|h| h.name().to_owned())
            .collect()
    }

    /// Streams opened so far (numbers start at 1).
    pub(crate) fn streams_opened(&self) -> u64 {
        self.next_stream.load(Ordering::Relaxed) - 1
    }

    /// Errors reported through `ExtensionService/ReportError`, oldest first.
    pub(crate) fn reported_errors(&self) -> Vec<pb::ExtensionError> {
        self.reported.lock().clone()
    }

    /// Ends every open stream from azd's side.
    pub(crate) fn close_streams(&self) {
        for conn in self.streams.lock().iter() {
            conn.close.cancel();
        }
    }

    /// Handles `register_provisioning_provider_request` as azd does and builds the answer.
    fn register(
        &self,
        conn: &Arc<StreamConn>,
        request_id: &str,
        name: &str,
    ) -> pb::ProvisioningMessage {
        let refuse = |message: String| pb::ProvisioningMessage {
            request_id: request_id.to_owned(),
            // azd wraps a plain gRPC status: origin unspecified, message = the status text.
            error: Some(pb::ExtensionError {
                message,
                ..pb::ExtensionError::default()
            }),
            message_type: None,
        };
        if name.trim().is_empty() {
            return refuse(
                "rpc error: code = InvalidArgument desc = provider name cannot be empty".into(),
            );
        }
        {
            let mut registry = self.registry.lock();
            if registry.iter().any(|h| h.name() == name) {
                return refuse(format!(
                    "rpc error: code = AlreadyExists desc = provider {name} already registered"
                ));
            }
            registry.push(ProviderHandle::new(Arc::clone(conn), name));
        }
        self.registry_changed.send_modify(|n| *n += 1);
        tracing::debug!(
            stream = conn.number,
            provider = name,
            "sim azd registered provider"
        );
        pb::ProvisioningMessage {
            request_id: request_id.to_owned(),
            error: None,
            message_type: Some(MessageType::RegisterProvisioningProviderResponse(
                pb::RegisterProvisioningProviderResponse {},
            )),
        }
    }

    /// Forgets the providers registered on stream `number`.
    fn unregister_stream(&self, number: u64) {
        let removed = {
            let mut registry = self.registry.lock();
            let before = registry.len();
            registry.retain(|h| h.stream_number() != number);
            before != registry.len()
        };
        if removed {
            self.registry_changed.send_modify(|n| *n += 1);
        }
    }

    fn forget_stream(&self, number: u64) {
        self.streams.lock().retain(|c| c.number != number);
    }
}

/// How a stream ended.
enum End {
    /// azd closed it ([`AzdState::close_streams`]).
    ClosedByAzd,
    /// The extension half-closed.
    Eof,
    /// Receiving failed (e.g. an oversized message, a reset).
    Failed(Status),
}

/// Reads one stream until it ends: registrations are answered here, everything else is
/// routed to the call it answers.
async fn read_stream(
    shared: Arc<AzdState>,
    conn: Arc<StreamConn>,
    mut inbound: Streaming<pb::ProvisioningMessage>,
    mut first: Option<Result<Option<pb::ProvisioningMessage>, Status>>,
) {
    let end = loop {
        let next = match first.take() {
            Some(first) => first,
            None => tokio::select! {
                biased;
                _ = conn.close.cancelled() => break End::ClosedByAzd,
                next = inbound.message() => next,
            },
        };
        match next {
            Ok(Some(msg)) => {
                if let Some(MessageType::RegisterProvisioningProviderRequest(req)) =
                    &msg.message_type
                {
                    let answer = shared.register(&conn, &msg.request_id, &req.name);
                    if conn.send(answer).await.is_err() {
                        break End::ClosedByAzd;
                    }
                } else {
                    conn.route(msg).await;
                }
            }
            Ok(None) => break End::Eof,
            Err(status) => break End::Failed(status),
        }
    };
    conn.finish();
    match end {
        End::Failed(status) if !matches!(status.code(), Code::Cancelled | Code::Unavailable) => {
            // azd's broker returns the error and skips its cleanup: the providers stay
            // registered (and dead) until azd restarts.
            tracing::debug!(stream = conn.number, code = ?status.code(), "sim azd: stream receive failed");
            conn.try_send_status(Status::unknown(format!(
                "broker error: stream receive failed: {}",
                status.message()
            )));
        }
        _ => shared.unregister_stream(conn.number),
    }
    conn.close.cancel();
    shared.forget_stream(conn.number);
}

/// The writer half: what is queued, until azd closes the stream.
fn outgoing(
    rx: mpsc::Receiver<Outgoing>,
    conn: Arc<StreamConn>,
) -> impl Stream<Item = Outgoing> + Send + 'static {
    futures::stream::unfold((rx, conn), |(mut rx, conn)| async move {
        tokio::select! {
            biased;
            next = rx.recv() => next.map(|m| (m, (rx, conn))),
            _ = conn.close.cancelled() => None,
        }
    })
}

/// `ExtensionService` of the simulated azd.
pub(crate) struct ExtensionSvc(pub(crate) Arc<AzdState>);

#[tonic::async_trait]
impl ExtensionService for ExtensionSvc {
    async fn ready(
        &self,
        request: Request<pb::ReadyRequest>,
    ) -> Result<Response<pb::ReadyResponse>, Status> {
        let claims = self.0.authenticate(request.metadata())?;
        tracing::debug!(extension = %claims.sub, "sim azd: extension is ready");
        self.0.ready.send_modify(|n| *n += 1);
        Ok(Response::new(pb::ReadyResponse {}))
    }

    async fn report_error(
        &self,
        request: Request<pb::ReportErrorRequest>,
    ) -> Result<Response<pb::ReportErrorResponse>, Status> {
        self.0.authenticate(request.metadata())?;
        if let Some(e) = request.into_inner().error {
            let mut reported = self.0.reported.lock();
            if reported.len() < MAX_REPORTED_ERRORS {
                reported.push(e);
            }
        }
        Ok(Response::new(pb::ReportErrorResponse {}))
    }
}

/// `ProvisioningService` of the simulated azd.
pub(crate) struct ProvisioningSvc(pub(crate) Arc<AzdState>);

#[tonic::async_trait]
impl ProvisioningService for ProvisioningSvc {
    type StreamStream = Pin<Box<dyn Stream<Item = Outgoing> + Send + 'static>>;

    async fn stream(
        &self,
        request: Request<Streaming<pb::ProvisioningMessage>>,
    ) -> Result<Response<Self::StreamStream>, Status> {
        let claims = self.0.authenticate(request.metadata())?;
        if !claims.has_capability(PROVISIONING_CAPABILITY) {
            return Err(Status::permission_denied(
                "extension does not support provisioning-provider capability",
            ));
        }
        let mut inbound = request.into_inner();
        let (tx, rx) = mpsc::channel(OUTGOING_CAPACITY);
        let number = self.0.next_stream.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(StreamConn::new(number, tx));
        self.0.streams.lock().push(Arc::clone(&conn));
        tracing::debug!(stream = number, extension = %claims.sub, "sim azd: provisioning stream opened");
        // Like azd's gRPC server (grpc-go), send the response headers only once the
        // extension has sent its first message: an extension that waits for them
        // before registering would wait forever against the real azd.
        let first = tokio::select! {
            biased;
            _ = conn.close.cancelled() => {
                conn.finish();
                self.0.unregister_stream(number);
                return Err(Status::cancelled("azd is shutting down"));
            }
            first = inbound.message() => first,
        };
        self.0.tasks.spawn(read_stream(
            Arc::clone(&self.0),
            Arc::clone(&conn),
            inbound,
            Some(first),
        ));
        Ok(Response::new(Box::pin(outgoing(rx, conn))))
    }
}
