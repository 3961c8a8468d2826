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
//!   request's answer and none after it (see [`crate::Progress`]), and leaves
//!   paced so that azd shows it in that order (`pacing`);
//! - requests run concurrently, at most [`MAX_IN_FLIGHT`] at once; when that many
//!   run, the reader stops taking requests (back-pressure, no unbounded queue);
//! - every task is owned: the reader and each request's task are tracked, and
//!   [`Broker::receive`] returns only after they are done (or, for handlers,
//!   after [`WIND_DOWN`]);
//! - the stream ends when azd closes it, when it fails, or when the caller's
//!   shutdown token fires; every running request is cancelled then, and
//!   `receive` says which of the three it was ([`StreamEnd`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{MAX_MESSAGE_BYTES, Request, RequestKind};
use futures::FutureExt;
use prost::Message;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
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
pub(crate) trait RequestHandler: Send + Sync + 'static {
    /// Produces the body of the answer to one request, or the error to answer
    /// with. The broker sets the request id, checks the size and sends it.
    async fn handle(
        &self,
        request: Request,
        ctx: CallContext,
    ) -> Result<pb::provisioning_message::MessageType, ProviderError>;
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

/// Why the stream ended.
#[derive(Debug, Clone)]
pub enum StreamEnd {
    /// azd closed it: the normal end of an azd command.
    ClosedByAzd,
    /// It failed: a transport error, or a message that could not be read.
    Failed(tonic::Status),
    /// The caller's shutdown token fired (e.g. SIGTERM).
    Shutdown,
}

/// The reader's record of how the stream ended.
type EndRecord = Arc<OnceLock<StreamEnd>>;
type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<pb::ProvisioningMessage>>>>;

/// A request as the reader hands it over: its place in the order azd sent
/// requests, and the envelope (or why it is refused unread).
type Queued = (
    u64,
    Result<pb::ProvisioningMessage, (String, ProviderError)>,
);

/// One open provisioning stream.
pub(crate) struct Broker {
    /// Everything we send goes through here, in order.
    out: mpsc::Sender<pb::ProvisioningMessage>,
    /// Our requests waiting for azd's answer, by request id.
    pending: Pending,
    /// Requests from azd, filled by the reader; taken by `receive`.
    requests: Mutex<Option<mpsc::Receiver<Queued>>>,
    /// `true` once `receive` is dispatching.
    receiving: watch::Sender<bool>,
    /// Cancelled when the stream ends, for whatever reason; parent of every
    /// request's token.
    ended: CancellationToken,
    /// How it ended (set once, by whoever ends it first).
    end: EndRecord,
    /// azd's refusal to open the stream, if it refused.
    refused: Arc<OnceLock<tonic::Status>>,
    /// The reader task.
    reader: TaskTracker,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("ended", &self.ended.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// Opens the provisioning stream and starts its reader task.
    ///
    /// azd's server (grpc-go) sends the stream's response headers only with its
    /// first message, and it has nothing to say until the extension registers. So
    /// the call is started here but awaited in the reader task: our first message
    /// (the registration) can go out before azd answers. If azd refuses the stream
    /// (bad token, missing capability), the refusal is kept and returned by the
    /// next [`Broker::request`] as [`BrokerError::Open`].
    pub(crate) fn open(client: &AzdClient) -> Arc<Self> {
        let (out, out_rx) = mpsc::channel(OUTBOUND_CAPACITY);
        let (req_tx, req_rx) = mpsc::channel(REQUEST_QUEUE_CAPACITY);
        let broker = Arc::new(Self {
            out,
            pending: Arc::default(),
            requests: Mutex::new(Some(req_rx)),
            receiving: watch::channel(false).0,
            ended: CancellationToken::new(),
            end: Arc::default(),
            refused: Arc::default(),
            reader: TaskTracker::new(),
        });
        let reader = Reader {
            pending: broker.pending.clone(),
            requests: req_tx,
            ended: broker.ended.clone(),
            end: broker.end.clone(),
            next_sequence: 0,
        };
        let client = client.clone();
        let refused = broker.refused.clone();
        broker.reader.spawn(async move {
            let opened = tokio::select! {
                () = reader.ended.cancelled() => return,
                r = client.provisioning_stream(crate::pacing::paced(out_rx)) => r,
            };
            match opened {
                Ok(inbound) => reader.run(inbound).await,
                Err(status) => {
                    tracing::debug!(code = ?status.code(), message = status.message(), "azd refused the provisioning stream");
                    let _ = refused.set(status.clone());
                    reader.finish(StreamEnd::Failed(status));
                }
            }
        });
        broker.reader.close();
        broker
    }

    /// `Closed`, or azd's refusal of the stream when that is why it closed.
    fn closed_error(&self) -> BrokerError {
        match self.refused.get() {
            Some(status) => BrokerError::Open(status.clone()),
            None => BrokerError::Closed,
        }
    }

    /// Sends a request of ours and waits for azd's answer with the same id.
    pub(crate) async fn request(
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
        if self.ended.is_cancelled() || self.out.send(msg).await.is_err() {
            return Err(self.closed_error());
        }
        match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(self.closed_error()),
            Err(_) => Err(BrokerError::Timeout(ANSWER_TIMEOUT)),
        }
    }

    /// Resolves once [`Broker::receive`] is dispatching requests, or the stream ended.
    pub(crate) async fn receiving(&self) -> Result<(), BrokerError> {
        let mut rx = self.receiving.subscribe();
        tokio::select! {
            r = rx.wait_for(|r| *r) => r.map(|_| ()).map_err(|_| self.closed_error()),
            () = self.ended.cancelled() => Err(self.closed_error()),
        }
    }

    /// Dispatches azd's requests to `handler` until the stream ends or
    /// `shutdown` fires. Running requests are cancelled then; this returns after
    /// they wind down (at most [`WIND_DOWN`]) and the reader has stopped.
    pub(crate) async fn receive(
        &self,
        handler: Arc<dyn RequestHandler>,
        shutdown: CancellationToken,
    ) -> Result<StreamEnd, BrokerError> {
        let mut requests = lock(&self.requests)
            .take()
            .ok_or(BrokerError::AlreadyReceiving)?;
        self.receiving.send_replace(true);
        let handlers = TaskTracker::new();
        let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        loop {
            let (sequence, msg) = tokio::select! {
                biased;
                () = shutdown.cancelled() => break,
                () = self.ended.cancelled() => break,
                m = requests.recv() => match m {
                    Some(m) => m,
                    None => break,
                },
            };
            let permit = tokio::select! {
                () = shutdown.cancelled() => break,
                () = self.ended.cancelled() => break,
                p = slots.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let request = AzdRequest::new(sequence, msg, self.ended.child_token());
            let out = self.out.clone();
            let handler = handler.clone();
            handlers.spawn(async move {
                request.serve(handler, out).await;
                drop(permit);
            });
        }
        if shutdown.is_cancelled() {
            let _ = self.end.set(StreamEnd::Shutdown);
        }
        self.ended.cancel();
        handlers.close();
        if tokio::time::timeout(WIND_DOWN, handlers.wait())
            .await
            .is_err()
        {
            tracing::debug!("some handlers were still winding down when the stream ended");
        }
        // The reader stops as soon as `ended` fires.
        self.reader.wait().await;
        Ok(self.end.get().cloned().unwrap_or(StreamEnd::ClosedByAzd))
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

/// The reader task's state: where answers and requests go, and how to end.
struct Reader {
    pending: Pending,
    requests: mpsc::Sender<Queued>,
    ended: CancellationToken,
    end: EndRecord,
    /// Numbers requests in the order azd sent them.
    next_sequence: u64,
}

impl Reader {
    /// Reads until the stream ends.
    async fn run(mut self, mut inbound: tonic::Streaming<bytes::Bytes>) {
        let end = loop {
            let next = tokio::select! {
                () = self.ended.cancelled() => break None,
                n = inbound.message() => n,
            };
            match next {
                Ok(Some(bytes)) => match crate::inbound::decode(&bytes) {
                    Ok(msg) => {
                        if !self.route(msg).await {
                            break None;
                        }
                    }
                    Err(crate::inbound::Unreadable::Refused { request_id, error }) => {
                        tracing::warn!(%request_id, error = %error.message, "request refused unread");
                        if !self.dispatch(Err((request_id, error))).await {
                            break None;
                        }
                    }
                    Err(crate::inbound::Unreadable::Malformed(e)) => {
                        tracing::error!(error = %e, "azd sent a message that cannot be read");
                        break Some(StreamEnd::Failed(tonic::Status::internal(format!(
                            "azd sent a message that cannot be read: {e}"
                        ))));
                    }
                },
                Ok(None) => {
                    tracing::debug!("azd closed the provisioning stream");
                    break Some(StreamEnd::ClosedByAzd);
                }
                Err(status) => {
                    tracing::debug!(code = ?status.code(), message = status.message(), "provisioning stream failed");
                    break Some(StreamEnd::Failed(status));
                }
            }
        };
        match end {
            Some(end) => self.finish(end),
            None => self.finish(StreamEnd::Shutdown),
        }
    }

    /// Hands one message to its waiter or to the dispatcher. `false` once the
    /// stream is over.
    async fn route(&mut self, msg: pb::ProvisioningMessage) -> bool {
        let waiter = lock(&self.pending).remove(&msg.request_id);
        if let Some(waiter) = waiter {
            let _ = waiter.send(msg);
            return true;
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
            return true;
        }
        self.dispatch(Ok(msg)).await
    }

    /// Hands a request (or why it is refused) to the dispatcher, numbered in
    /// the order azd sent it. `false` once the stream is over.
    async fn dispatch(
        &mut self,
        request: Result<pb::ProvisioningMessage, (String, ProviderError)>,
    ) -> bool {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        tokio::select! {
            () = self.ended.cancelled() => false,
            r = self.requests.send((sequence, request)) => r.is_ok(),
        }
    }

    /// Records how the stream ended (unless something else ended it first),
    /// ends it, and wakes every waiter of ours.
    fn finish(self, end: StreamEnd) {
        let _ = self.end.set(end);
        self.ended.cancel();
        lock(&self.pending).clear();
    }
}

/// One request of azd's, on its way to its one answer.
struct AzdRequest {
    request_id: String,
    /// The request, or why it is not one this version serves.
    request: Result<Request, ProviderError>,
    ctx: CallContext,
}

impl AzdRequest {
    fn new(
        sequence: u64,
        msg: Result<pb::ProvisioningMessage, (String, ProviderError)>,
        cancel: CancellationToken,
    ) -> Self {
        let msg = match msg {
            Ok(msg) => msg,
            Err((request_id, error)) => {
                return Self {
                    ctx: CallContext {
                        request_id: request_id.clone(),
                        sequence,
                        cancel,
                        progress: Progress::log_only(request_id.clone()),
                    },
                    request_id,
                    request: Err(error),
                };
            }
        };
        let request = msg
            .message_type
            .ok_or(())
            .and_then(|body| Request::from_message(body).map_err(|_| ()))
            .map_err(|()| {
                ProviderError::validation(
                    "unknown_request",
                    "azd-wasm-host cannot serve this message: its kind is empty or unknown to \
                     this version",
                )
                .with_suggestion("Update azd-wasm-host to a version that supports your azd.")
            });
        let ctx = CallContext {
            request_id: msg.request_id.clone(),
            sequence,
            cancel,
            progress: Progress::log_only(msg.request_id.clone()),
        };
        Self {
            request_id: msg.request_id,
            request,
            ctx,
        }
    }

    /// Serves the request and sends its one answer (unless the stream is gone).
    async fn serve(
        self,
        handler: Arc<dyn RequestHandler>,
        out: mpsc::Sender<pb::ProvisioningMessage>,
    ) {
        let Self {
            request_id,
            request,
            mut ctx,
        } = self;
        let request = match request {
            Ok(request) => request,
            Err(err) => {
                let _ = out.send(error_answer(&request_id, &err)).await;
                return;
            }
        };
        let kind = request.kind();
        tracing::debug!(%request_id, %kind, "request");
        let started = std::time::Instant::now();
        // Present while the request may send progress; closed before the answer.
        let progress = kind.sends_progress().then(|| {
            let channel = ProgressChannel::new(out.clone());
            ctx.progress = Progress::to_azd(&request_id, channel.clone());
            channel
        });
        let cancel = ctx.cancel.clone();
        let work = std::panic::AssertUnwindSafe(handler.handle(request, ctx)).catch_unwind();
        let mut work = std::pin::pin!(work);
        let outcome = tokio::select! {
            o = &mut work => o,
            () = cancel.cancelled() => {
                // The stream is gone, so the answer has nowhere to go; the handler
                // still gets a moment to see the cancellation and stop cleanly.
                tracing::debug!(%request_id, %kind, "request cancelled: the stream ended");
                let _ = tokio::time::timeout(WIND_DOWN, work).await;
                return;
            }
        };
        let answer = answer(&request_id, kind, outcome);
        tracing::debug!(%request_id, %kind, micros = started.elapsed().as_micros(), "answered");
        match progress {
            Some(channel) => {
                let guard = channel.close().await;
                let _ = out.send(answer).await;
                drop(guard);
            }
            None => {
                let _ = out.send(answer).await;
            }
        }
    }
}

/// The envelope that answers request `id`: the handler's answer if it fits
/// azd's limit, else an error saying what went wrong.
fn answer(
    id: &str,
    kind: RequestKind,
    outcome: std::thread::Result<Result<pb::provisioning_message::MessageType, ProviderError>>,
) -> pb::ProvisioningMessage {
    let body = match outcome {
        Ok(Ok(body)) => body,
        Ok(Err(err)) => {
            tracing::debug!(request_id = %id, %kind, error = %err.message, "request failed");
            return error_answer(id, &err);
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            tracing::debug!(request_id = %id, panic = %what, "handler panicked");
            return error_answer(
                id,
                &ProviderError::internal(
                    "handler_panicked",
                    format!("the {kind} handler failed unexpectedly: {what}"),
                ),
            );
        }
    };
    let answer = pb::ProvisioningMessage {
        request_id: id.to_owned(),
        error: None,
        message_type: Some(body),
    };
    let size = answer.encoded_len();
    if size + FRAME_MARGIN <= MAX_MESSAGE_BYTES {
        return answer;
    }
    error_answer(
        id,
        &ProviderError::validation(
            "answer_too_large",
            format!(
                "the {kind} answer is {size} bytes, more than azd's limit of \
                 {MAX_MESSAGE_BYTES} bytes per message"
            ),
        )
        .with_suggestion("Return fewer or smaller outputs, parameters or resources."),
    )
}

/// An envelope carrying only an error, for `request_id`.
pub(crate) fn error_answer(request_id: &str, err: &ProviderError) -> pb::ProvisioningMessage {
    pb::ProvisioningMessage {
        request_id: request_id.to_owned(),
        error: Some(err.to_wire()),
        message_type: None,
    }
}
