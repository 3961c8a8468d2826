//! The message broker over azd's provisioning stream.
//!
//! ```text
//!            ┌──────────── reader task ─────────────┐
//! azd ──────▶│ a request?             → request queue ──▶ receive(): one task per
//!            │   (its id in flight?   → refused)    │     request (bounded), each
//!            │ answer to one of ours? → its waiter  │     answers exactly once
//!            │ anything else          → debug log   │
//!            └──────────────────────────────────────┘
//! azd ◀────── outbound queue (bounded) ◀── progress, answers, our requests
//! ```
//!
//! Guarantees:
//! - every request azd sends gets exactly one answer: an unknown or empty kind
//!   gets an error answer; a request under the id of one still unanswered (its
//!   answer has not left) is not served but answered at once with
//!   `duplicate_request_id` naming the id, while the first is served on and
//!   answered as usual (serving both would send two answers azd, which tells
//!   answers apart by id alone, cannot tell apart, and their progress
//!   interleaved); a message of a request kind is a request even under the id
//!   of one of ours awaiting azd's answer (only other messages answer ours); a
//!   handler that panics becomes an error answer; an answer over azd's 4 MiB
//!   limit, the host's own errors included, is replaced
//!   by a bounded error answer (the stream survives); nothing over the limit
//!   ever leaves (`pacing`), and a request whose id alone is too long to be
//!   answered within it stays unanswered, and is said to be when the stream ends;
//! - progress for a request is queued in the order reported, all before that
//!   request's answer and none after it (see `progress.rs`), and leaves
//!   paced so that azd shows it in that order (`pacing`);
//! - requests run concurrently, at most [`MAX_IN_FLIGHT`] at once; when that many
//!   run, the reader stops taking requests (back-pressure, no unbounded queue);
//! - every task is owned: the reader and each request's task are tracked, and
//!   [`Broker::receive`] returns only after they are done (or, for handlers,
//!   after [`WIND_DOWN`]);
//! - no message ends the stream: one that cannot be read is answered (see
//!   `inbound`); the stream ends when azd closes it or its connection breaks,
//!   or when the caller's shutdown token fires; every running request is
//!   cancelled then, and `receive` says how it ended ([`StreamEnd`]): azd done
//!   with every request answered (the normal end of a command, whether azd
//!   closed the stream or just dropped the connection), or interrupted with
//!   requests unanswered (which, and how long they had run). A request counts as
//!   answered once its answer has left, not once it is queued.
//!
//! The reader task is in `reader.rs`, each request's way to its answer in
//! `request.rs`, what they share with the broker in `shared.rs`.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use azd_wasm_host_proto::azdext as pb;
use parking_lot::Mutex;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::client::AzdClient;
use crate::pacing::Outgoing;
use crate::progress::Lanes;
use reader::Reader;
use request::AzdRequest;
pub(crate) use shared::RequestHandler;
pub use shared::StreamEnd;
pub use shared::Unanswered;
use shared::{EndRecord, InFlight, Pending, Queued, WIND_DOWN};

mod reader;
mod request;
mod shared;

/// Most requests served at once.
pub(crate) const MAX_IN_FLIGHT: usize = 64;
/// Capacity of the outbound queue (messages waiting for the stream).
const OUTBOUND_CAPACITY: usize = 256;
/// Capacity of the queue between the reader and the dispatcher.
const REQUEST_QUEUE_CAPACITY: usize = 32;
/// How long we wait for azd to answer a request of ours.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
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

/// One open provisioning stream.
pub(crate) struct Broker {
    /// Everything we send goes through here, in order.
    out: mpsc::Sender<Outgoing>,
    /// The progress lanes of the requests that may send progress; the pacer
    /// takes their steps.
    lanes: Lanes,
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
        let lanes = Lanes::default();
        let (req_tx, req_rx) = mpsc::channel(REQUEST_QUEUE_CAPACITY);
        let pacer_lanes = lanes.clone();
        let broker = Arc::new(Self {
            out,
            lanes,
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
            in_flight: InFlight::default(),
            next_sequence: 0,
            tap: client.tap(),
        };
        let client = client.clone();
        let refused = broker.refused.clone();
        broker.reader.spawn(async move {
            let opened = tokio::select! {
                () = reader.ended.cancelled() => return,
                r = client.provisioning_stream(crate::pacing::paced(out_rx, pacer_lanes)) => r,
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
        self.pending.lock().insert(id.clone(), tx);
        let _forget = RemoveOnDrop {
            pending: &self.pending,
            id: &id,
        };
        if self.ended.is_cancelled() || self.out.send(msg.into()).await.is_err() {
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
        let mut requests = self
            .requests
            .lock()
            .take()
            .ok_or(BrokerError::AlreadyReceiving)?;
        self.receiving.send_replace(true);
        let handlers = TaskTracker::new();
        let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        loop {
            let queued = tokio::select! {
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
            let request = AzdRequest::new(queued, self.ended.child_token());
            let (out, lanes) = (self.out.clone(), self.lanes.clone());
            let handler = handler.clone();
            handlers.spawn(async move {
                request.serve(handler, out, lanes).await;
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
        self.pending.lock().remove(self.id);
    }
}
