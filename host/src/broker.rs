//! The message broker over azd's provisioning stream.
//!
//! ```text
//!            ┌──────────── reader task ─────────────┐
//! azd ──────▶│ answer to one of ours? → its waiter  │
//!            │ a request?             → request queue ──▶ receive(): one task per
//!            │ anything else          → debug log   │     request (bounded), each
//!            └──────────────────────────────────────┘     answers exactly once
//! azd ◀────── outbound queue (bounded) ◀── progress, answers, our requests
//! ```
//!
//! Guarantees:
//! - every request azd sends gets exactly one answer: an unknown or empty kind
//!   gets an error answer; a handler that panics becomes an error answer; an
//!   answer over azd's 4 MiB limit is replaced by an error answer (the stream
//!   survives);
//! - progress for a request is queued in the order reported, all before that
//!   request's answer and none after it (see [`crate::provider::Progress`]);
//! - requests run concurrently, at most [`MAX_IN_FLIGHT`] at once; when that many
//!   run, the reader stops taking requests (back-pressure, no unbounded queue);
//! - when the stream ends (azd closed it or went away) every running request is
//!   cancelled and [`Broker::receive`] returns.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_proto::MAX_MESSAGE_BYTES;
use azd_wasm_host_proto::azdext as pb;
use futures::FutureExt;
use pb::provisioning_message::MessageType;
use prost::Message;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::client::AzdClient;
use crate::error::ProviderError;
use crate::provider::{CallContext, Progress, ProgressChannel};

/// Most requests served at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// Capacity of the outbound queue (messages waiting for the stream).
const OUTBOUND_CAPACITY: usize = 256;
/// Capacity of the queue between the reader and the dispatcher.
const REQUEST_QUEUE_CAPACITY: usize = 32;
/// How long we wait for azd to answer a request of ours.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a cancelled handler may take to wind down after the stream ends
/// (the process must exit within a second of azd going away).
const WIND_DOWN: Duration = Duration::from_millis(400);
/// Room left under azd's limit for gRPC framing.
const FRAME_MARGIN: usize = 64;

/// Serves the requests azd sends. The manager implements it; tests use others.
#[async_trait]
pub trait RequestHandler: Send + Sync + 'static {
    /// Produces the answer to one request (a known request kind; see
    /// [`RequestKind`]). The broker sets the answer's request id and checks its size.
    async fn handle(
        &self,
        kind: RequestKind,
        request: pb::ProvisioningMessage,
        ctx: CallContext,
    ) -> pb::ProvisioningMessage;
}

/// The request kinds azd sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `initialize_request`.
    Initialize,
    /// `state_request`.
    State,
    /// `deploy_request`.
    Deploy,
    /// `preview_request`.
    Preview,
    /// `destroy_request`.
    Destroy,
    /// `ensure_env_request`.
    EnsureEnv,
    /// `parameters_request`.
    Parameters,
    /// `planned_outputs_request`.
    PlannedOutputs,
}

impl RequestKind {
    /// The kind of a message, if it is a request azd may send.
    pub fn of(msg: &pb::ProvisioningMessage) -> Option<Self> {
        Some(match msg.message_type.as_ref()? {
            MessageType::InitializeRequest(_) => Self::Initialize,
            MessageType::StateRequest(_) => Self::State,
            MessageType::DeployRequest(_) => Self::Deploy,
            MessageType::PreviewRequest(_) => Self::Preview,
            MessageType::DestroyRequest(_) => Self::Destroy,
            MessageType::EnsureEnvRequest(_) => Self::EnsureEnv,
            MessageType::ParametersRequest(_) => Self::Parameters,
            MessageType::PlannedOutputsRequest(_) => Self::PlannedOutputs,
            _ => return None,
        })
    }

    /// Whether progress during this request reaches azd.
    pub fn sends_progress(self) -> bool {
        matches!(self, Self::Deploy | Self::Preview | Self::Destroy)
    }

    /// A short name for logs and errors.
    pub fn name(self) -> &'static str {
        match self {
            Self::Initialize => "initialize",
            Self::State => "state",
            Self::Deploy => "deploy",
            Self::Preview => "preview",
            Self::Destroy => "destroy",
            Self::EnsureEnv => "ensure-env",
            Self::Parameters => "parameters",
            Self::PlannedOutputs => "planned-outputs",
        }
    }
}

/// What went wrong on the stream.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// azd refused to open the stream.
    #[error("azd refused the provisioning stream: {}", .0.message())]
    Open(#[source] tonic::Status),
    /// The stream ended before azd answered.
    #[error("the provisioning stream closed before azd answered")]
    Closed,
    /// azd did not answer in time.
    #[error("azd did not answer within {0:?}")]
    Timeout(Duration),
    /// `receive` was called twice.
    #[error("the dispatcher is already running")]
    AlreadyReceiving,
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<pb::ProvisioningMessage>>>>;

/// One open provisioning stream.
pub struct Broker {
    /// Everything we send goes through here, in order.
    out: mpsc::Sender<pb::ProvisioningMessage>,
    /// Our requests waiting for azd's answer, by request id.
    pending: Pending,
    /// Requests from azd, filled by the reader; taken by `receive`.
    requests: Mutex<Option<mpsc::Receiver<pb::ProvisioningMessage>>>,
    /// `true` once `receive` is dispatching.
    receiving: watch::Sender<bool>,
    /// Cancelled when the stream ends; parent of every request's token.
    closed: CancellationToken,
    /// azd's refusal to open the stream, if it refused.
    refused: Arc<std::sync::OnceLock<tonic::Status>>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("closed", &self.closed.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// Opens the provisioning stream and starts its reader task. The stream and
    /// its tasks live until azd ends the stream, independent of the caller.
    ///
    /// azd's server (grpc-go) sends the stream's response headers only with its
    /// first message, and it has nothing to say until the extension registers. So
    /// the call is started here but awaited in the reader task: our first message
    /// (the registration) can go out before azd answers. If azd refuses the stream
    /// (bad token, missing capability), the refusal is kept and returned by the
    /// next [`Broker::request`] as [`BrokerError::Open`].
    pub async fn open(client: &AzdClient) -> Result<Arc<Self>, BrokerError> {
        let (out, out_rx) = mpsc::channel(OUTBOUND_CAPACITY);
        let (req_tx, req_rx) = mpsc::channel(REQUEST_QUEUE_CAPACITY);
        let broker = Arc::new(Self {
            out,
            pending: Arc::default(),
            requests: Mutex::new(Some(req_rx)),
            receiving: watch::channel(false).0,
            closed: CancellationToken::new(),
            refused: Arc::default(),
        });
        let mut service = client.provisioning();
        let pending = broker.pending.clone();
        let closed = broker.closed.clone();
        let refused = broker.refused.clone();
        tokio::spawn(async move {
            let opened = tokio::select! {
                () = closed.cancelled() => return,
                r = service.stream(ReceiverStream::new(out_rx)) => r,
            };
            match opened {
                Ok(response) => read_loop(response.into_inner(), pending, req_tx, closed).await,
                Err(status) => {
                    tracing::debug!(code = ?status.code(), message = status.message(), "azd refused the provisioning stream");
                    let _ = refused.set(status);
                    closed.cancel();
                    lock(&pending).clear();
                }
            }
        });
        Ok(broker)
    }

    /// `Closed`, or azd's refusal of the stream when that is why it closed.
    fn closed_error(&self) -> BrokerError {
        match self.refused.get() {
            Some(status) => BrokerError::Open(status.clone()),
            None => BrokerError::Closed,
        }
    }

    /// Sends a request of ours and waits for azd's answer with the same id.
    pub async fn request(
        &self,
        mut msg: pb::ProvisioningMessage,
    ) -> Result<pb::ProvisioningMessage, BrokerError> {
        if msg.request_id.is_empty() {
            msg.request_id = uuid::Uuid::new_v4().to_string();
        }
        let id = msg.request_id.clone();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        let _forget = RemoveOnDrop {
            pending: &self.pending,
            id: &id,
        };
        if self.closed.is_cancelled() || self.out.send(msg).await.is_err() {
            return Err(self.closed_error());
        }
        match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(self.closed_error()),
            Err(_) => Err(BrokerError::Timeout(ANSWER_TIMEOUT)),
        }
    }

    /// Resolves once [`Broker::receive`] is dispatching requests, or the stream ended.
    pub async fn receiving(&self) -> Result<(), BrokerError> {
        let mut rx = self.receiving.subscribe();
        tokio::select! {
            r = rx.wait_for(|r| *r) => r.map(|_| ()).map_err(|_| self.closed_error()),
            () = self.closed.cancelled() => Err(self.closed_error()),
        }
    }

    /// Whether the stream has ended.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// A token cancelled when the stream ends.
    pub fn closed_token(&self) -> CancellationToken {
        self.closed.clone()
    }

    /// Dispatches azd's requests to `handler` until the stream ends. Running
    /// requests are cancelled then; this returns after they wind down (at most
    /// [`WIND_DOWN`]).
    pub async fn receive(&self, handler: Arc<dyn RequestHandler>) -> Result<(), BrokerError> {
        let mut requests = lock(&self.requests)
            .take()
            .ok_or(BrokerError::AlreadyReceiving)?;
        self.receiving.send_replace(true);
        let tracker = TaskTracker::new();
        let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        loop {
            let msg = tokio::select! {
                biased;
                () = self.closed.cancelled() => break,
                m = requests.recv() => match m {
                    Some(m) => m,
                    None => break,
                },
            };
            let permit = tokio::select! {
                () = self.closed.cancelled() => break,
                p = slots.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let out = self.out.clone();
            let cancel = self.closed.child_token();
            let handler = handler.clone();
            tracker.spawn(async move {
                serve_one(msg, handler, out, cancel).await;
                drop(permit);
            });
        }
        self.closed.cancel();
        tracker.close();
        if tokio::time::timeout(WIND_DOWN, tracker.wait())
            .await
            .is_err()
        {
            tracing::debug!("some handlers were still winding down when the stream ended");
        }
        Ok(())
    }
}

/// Removes a pending entry when the waiter gives up.
struct RemoveOnDrop<'a> {
    pending: &'a Pending,
    id: &'a str,
}

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        lock(self.pending).remove(self.id);
    }
}

/// Locks a std mutex, recovering the data if a holder panicked (nothing we keep
/// behind these locks can be left half-updated).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn read_loop(
    mut inbound: tonic::Streaming<pb::ProvisioningMessage>,
    pending: Pending,
    requests: mpsc::Sender<pb::ProvisioningMessage>,
    closed: CancellationToken,
) {
    loop {
        let next = tokio::select! {
            () = closed.cancelled() => break,
            n = inbound.message() => n,
        };
        let msg = match next {
            Ok(Some(msg)) => msg,
            Ok(None) => {
                tracing::debug!("azd closed the provisioning stream");
                break;
            }
            Err(status) => {
                tracing::debug!(code = ?status.code(), message = status.message(), "provisioning stream failed");
                break;
            }
        };
        let waiter = lock(&pending).remove(&msg.request_id);
        if let Some(waiter) = waiter {
            let _ = waiter.send(msg);
            continue;
        }
        // A request of a kind we know, or an empty envelope (an unknown kind decodes
        // as empty): both get an answer. An error envelope with no kind is azd
        // answering something we no longer wait for.
        let is_request =
            RequestKind::of(&msg).is_some() || (msg.message_type.is_none() && msg.error.is_none());
        if !is_request {
            // An answer or progress for nothing we asked: answering it could start
            // a loop of errors, so it is only logged.
            tracing::debug!(request_id = %msg.request_id, "ignoring a message that is neither a request nor an answer we wait for");
            continue;
        }
        tokio::select! {
            () = closed.cancelled() => break,
            r = requests.send(msg) => if r.is_err() { break },
        }
    }
    closed.cancel();
    // Wake every waiter of ours: their senders drop with the map entries.
    lock(&pending).clear();
}

/// Serves one request and sends its one answer (unless the stream is gone).
async fn serve_one(
    msg: pb::ProvisioningMessage,
    handler: Arc<dyn RequestHandler>,
    out: mpsc::Sender<pb::ProvisioningMessage>,
    cancel: CancellationToken,
) {
    let request_id = msg.request_id.clone();
    let Some(kind) = RequestKind::of(&msg) else {
        let err = ProviderError::validation(
            "unknown_request",
            "azd-wasm-host cannot serve this message: its kind is empty or unknown to this version",
        )
        .with_suggestion("Update azd-wasm-host to a version that supports your azd.");
        let _ = out.send(error_answer(&request_id, &err)).await;
        return;
    };
    tracing::debug!(%request_id, kind = kind.name(), "request");
    let channel = kind
        .sends_progress()
        .then(|| ProgressChannel::new(out.clone()));
    let progress = match &channel {
        Some(ch) => Progress::to_azd(&request_id, ch.clone()),
        None => Progress::log_only(request_id.clone()),
    };
    let ctx = CallContext {
        request_id: request_id.clone(),
        cancel: cancel.clone(),
        progress,
    };
    let work = std::panic::AssertUnwindSafe(handler.handle(kind, msg, ctx)).catch_unwind();
    let mut work = std::pin::pin!(work);
    let outcome = tokio::select! {
        o = &mut work => o,
        () = cancel.cancelled() => {
            // The stream is gone, so the answer has nowhere to go; the handler
            // still gets a moment to see the cancellation and stop cleanly.
            tracing::debug!(%request_id, kind = kind.name(), "request cancelled: the stream ended");
            let _ = tokio::time::timeout(WIND_DOWN, work).await;
            return;
        }
    };
    let mut answer = match outcome {
        Ok(answer) => answer,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            tracing::debug!(%request_id, panic = %what, "handler panicked");
            error_answer(
                &request_id,
                &ProviderError::internal(
                    "handler_panicked",
                    format!("the {} handler failed unexpectedly: {what}", kind.name()),
                ),
            )
        }
    };
    answer.request_id.clone_from(&request_id);
    let size = answer.encoded_len();
    if size + FRAME_MARGIN > MAX_MESSAGE_BYTES {
        answer = error_answer(
            &request_id,
            &ProviderError::validation(
                "answer_too_large",
                format!(
                    "the {} answer is {size} bytes, more than azd's limit of {MAX_MESSAGE_BYTES} bytes per message",
                    kind.name()
                ),
            )
            .with_suggestion("Return fewer or smaller outputs, parameters or resources."),
        );
    }
    match channel {
        Some(ch) => {
            let guard = ch.close().await;
            let _ = out.send(answer).await;
            drop(guard);
        }
        None => {
            let _ = out.send(answer).await;
        }
    }
}

/// An envelope carrying only an error, for `request_id`.
pub fn error_answer(request_id: &str, err: &ProviderError) -> pb::ProvisioningMessage {
    pb::ProvisioningMessage {
        request_id: request_id.to_owned(),
        error: Some(err.to_wire()),
        message_type: None,
    }
}
