//! One provisioning stream seen from azd's side: the bounded writer, the table of requests
//! azd is waiting on, and the routing of what the extension sends back.
//!
//! The reader task (in [`super::service`]) hands every message that is not a registration
//! to [`StreamConn::route`]: a progress message for a deploy, preview or destroy goes to that
//! call's channel; the first other message with the id is the final answer; anything after
//! that counts as *late*, anything for an id azd never sent as *stray*. Both are dropped, as
//! azd drops them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use azd_wasm_host_proto::azdext as pb;
use parking_lot::Mutex;
use pb::provisioning_message::MessageType;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::CallError;
use crate::wire::ToExtension;

/// What the writer half carries: a message, or the status that ends the stream.
pub(crate) type Outgoing = Result<ToExtension, tonic::Status>;

/// Messages queued towards the extension before senders wait.
pub(crate) const OUTGOING_CAPACITY: usize = 64;

/// Messages (progress and the answer) queued for one call before the reader waits.
const CALL_CAPACITY: usize = 64;

/// Where a request of azd's stands.
enum CallSlot {
    /// azd waits for the answer; progress is forwarded only if allowed for the request kind.
    Waiting {
        /// Feeds the waiting call.
        tx: mpsc::Sender<pb::ProvisioningMessage>,
        /// Whether progress messages are progress (deploy/preview/destroy) or "the answer".
        progress_allowed: bool,
    },
    /// The final answer arrived; anything more is late.
    Answered,
    /// The caller gave up (timeout, dropped future) before an answer: later messages are
    /// dropped without counting.
    Abandoned,
}

/// One open `ProvisioningService/Stream`.
pub(crate) struct StreamConn {
    /// Sequence number of the stream within its simulated azd, for logs.
    pub(crate) number: u64,
    /// The writer half (bounded).
    out: mpsc::Sender<Outgoing>,
    /// Requests azd sent on this stream, by request id.
    calls: Mutex<HashMap<String, CallSlot>>,
    /// Messages for an id after its final answer.
    late: AtomicU64,
    /// Messages for ids azd never sent.
    stray: AtomicU64,
    /// Who watches everything the extension sends ([`StreamConn::watch`]).
    watchers: Mutex<Vec<mpsc::UnboundedSender<pb::ProvisioningMessage>>>,
    /// Cancelled to end the stream from azd's side (the extension sees EOF).
    pub(crate) close: CancellationToken,
    /// Cancelled once the stream is over, whichever side ended it.
    pub(crate) ended: CancellationToken,
}

impl StreamConn {
    /// A stream whose writer half is `out`.
    pub(crate) fn new(number: u64, out: mpsc::Sender<Outgoing>) -> Self {
        Self {
            number,
            out,
            calls: Mutex::new(HashMap::new()),
            late: AtomicU64::new(0),
            stray: AtomicU64::new(0),
            watchers: Mutex::new(Vec::new()),
            close: CancellationToken::new(),
            ended: CancellationToken::new(),
        }
    }

    /// Messages that arrived for an id after its final answer.
    pub(crate) fn late_messages(&self) -> u64 {
        self.late.load(Ordering::Relaxed)
    }

    /// Messages that arrived for ids never sent.
    pub(crate) fn stray_messages(&self) -> u64 {
        self.stray.load(Ordering::Relaxed)
    }

    /// Whether the stream is over or being closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.ended.is_cancelled() || self.close.is_cancelled()
    }

    /// Records that azd waits for an answer to `id`; the returned receiver gets the progress
    /// (if allowed) and the final answer. The guard marks the call abandoned when dropped early.
    pub(crate) fn begin_call(
        self: &Arc<Self>,
        id: &str,
        progress_allowed: bool,
    ) -> Result<(mpsc::Receiver<pb::ProvisioningMessage>, CallGuard), CallError> {
        if self.is_closed() {
            return Err(CallError::StreamClosed);
        }
        let (tx, rx) = mpsc::channel(CALL_CAPACITY);
        let mut calls = self.calls.lock();
        if calls.contains_key(id) {
            return Err(CallError::Protocol(format!(
                "request id {id} was already used on this stream"
            )));
        }
        calls.insert(
            id.to_owned(),
            CallSlot::Waiting {
                tx,
                progress_allowed,
            },
        );
        drop(calls);
        Ok((
            rx,
            CallGuard {
                conn: Arc::clone(self),
                id: id.to_owned(),
            },
        ))
    }

    /// Queues a message towards the extension; fails once the stream is over.
    pub(crate) async fn send(&self, msg: pb::ProvisioningMessage) -> Result<(), CallError> {
        self.send_wire(ToExtension::Message(msg)).await
    }

    /// Queues a message or raw bytes towards the extension.
    pub(crate) async fn send_wire(&self, msg: ToExtension) -> Result<(), CallError> {
        if self.is_closed() {
            return Err(CallError::StreamClosed);
        }
        tokio::select! {
            biased;
            _ = self.close.cancelled() => Err(CallError::StreamClosed),
            _ = self.ended.cancelled() => Err(CallError::StreamClosed),
            sent = self.out.send(Ok(msg)) => sent.map_err(|_| CallError::StreamClosed),
        }
    }

    /// Queues the status that ends the stream, if there is room; never waits.
    pub(crate) fn try_send_status(&self, status: tonic::Status) {
        if self.out.try_send(Err(status)).is_err() {
            tracing::debug!(stream = self.number, "no room for the closing status");
        }
    }

    /// Every message the extension sends from now on (registrations aside), in arrival
    /// order, whatever its id, before it is routed.
    pub(crate) fn watch(&self) -> mpsc::UnboundedReceiver<pb::ProvisioningMessage> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.watchers.lock().push(tx);
        rx
    }

    /// Routes one message from the extension (not a registration) to the call it answers.
    pub(crate) async fn route(&self, msg: pb::ProvisioningMessage) {
        {
            let mut watchers = self.watchers.lock();
            if !watchers.is_empty() {
                watchers.retain(|w| w.send(msg.clone()).is_ok());
            }
        }
        let is_progress = matches!(msg.message_type, Some(MessageType::ProgressMessage(_)));
        let target = {
            let mut calls = self.calls.lock();
            match calls.get_mut(&msg.request_id) {
                None => {
                    self.stray.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(stream = self.number, id = %msg.request_id, "message for an id azd never sent");
                    None
                }
                Some(CallSlot::Answered) => {
                    self.late.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(stream = self.number, id = %msg.request_id, "message after the final answer, dropped");
                    None
                }
                Some(CallSlot::Abandoned) => None,
                Some(CallSlot::Waiting {
                    tx,
                    progress_allowed,
                }) if is_progress && *progress_allowed => Some(tx.clone()),
                Some(slot) => match std::mem::replace(slot, CallSlot::Answered) {
                    CallSlot::Waiting { tx, .. } => Some(tx),
                    _ => None,
                },
            }
        };
        if let Some(tx) = target {
            tokio::select! {
                biased;
                _ = self.close.cancelled() => {}
                // A closed receiver means the caller gave up; the message is dropped.
                _ = tx.send(msg) => {}
            }
        }
    }

    /// Marks the stream over: every waiting call sees its channel close.
    pub(crate) fn finish(&self) {
        self.ended.cancel();
        let mut calls = self.calls.lock();
        for slot in calls.values_mut() {
            if matches!(slot, CallSlot::Waiting { .. }) {
                *slot = CallSlot::Abandoned;
            }
        }
    }
}

/// Marks a call abandoned if it is dropped before its answer arrived.
pub(crate) struct CallGuard {
    conn: Arc<StreamConn>,
    id: String,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let mut calls = self.conn.calls.lock();
        if let Some(slot) = calls.get_mut(&self.id)
            && matches!(slot, CallSlot::Waiting { .. })
        {
            *slot = CallSlot::Abandoned;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(id: &str, text: &str) -> pb::ProvisioningMessage {
        azd_wasm_host_proto::progress_message(id, text.into(), 0)
    }

    fn answer(id: &str) -> pb::ProvisioningMessage {
        pb::ProvisioningMessage {
            request_id: id.into(),
            error: None,
            message_type: Some(MessageType::InitializeResponse(
                pb::ProvisioningInitializeResponse {},
            )),
        }
    }

    #[tokio::test]
    async fn routes_progress_then_answer_and_counts_late_and_stray() {
        let (tx, _rx) = mpsc::channel(4);
        let conn = Arc::new(StreamConn::new(1, tx));
        let (mut rx, _guard) = conn.begin_call("a", true).unwrap();
        conn.route(progress("a", "one")).await;
        conn.route(progress("a", "two")).await;
        conn.route(answer("a")).await;
        conn.route(progress("a", "late")).await;
        conn.route(answer("nobody")).await;
        let texts: Vec<_> = [rx.recv().await, rx.recv().await]
            .into_iter()
            .map(|m| match m.unwrap().message_type {
                Some(MessageType::ProgressMessage(p)) => p.message,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["one", "two"]);
        assert!(matches!(
            rx.recv().await.unwrap().message_type,
            Some(MessageType::InitializeResponse(_))
        ));
        assert_eq!(conn.late_messages(), 1);
        assert_eq!(conn.stray_messages(), 1);
    }

    #[tokio::test]
    async fn a_watcher_sees_every_message_whatever_its_id() {
        let (tx, _rx) = mpsc::channel(4);
        let conn = Arc::new(StreamConn::new(1, tx));
        let mut watched = conn.watch();
        conn.route(answer("x")).await;
        conn.route(progress("x", "after")).await;
        conn.route(answer("x")).await;
        let ids: Vec<_> = std::iter::from_fn(|| watched.try_recv().ok())
            .map(|m| m.request_id)
            .collect();
        assert_eq!(ids, ["x", "x", "x"]);
        assert_eq!(conn.stray_messages(), 3, "still routed: no call sent x");
    }

    #[tokio::test]
    async fn progress_is_the_answer_where_azd_allows_none() {
        let (tx, _rx) = mpsc::channel(4);
        let conn = Arc::new(StreamConn::new(1, tx));
        let (mut rx, _guard) = conn.begin_call("s", false).unwrap();
        conn.route(progress("s", "oops")).await;
        conn.route(answer("s")).await;
        assert!(matches!(
            rx.recv().await.unwrap().message_type,
            Some(MessageType::ProgressMessage(_))
        ));
        assert_eq!(conn.late_messages(), 1);
    }

    #[tokio::test]
    async fn finish_closes_waiting_calls_and_refuses_new_ones() {
        let (tx, _rx) = mpsc::channel(4);
        let conn = Arc::new(StreamConn::new(1, tx));
        let (mut rx, guard) = conn.begin_call("x", true).unwrap();
        assert!(matches!(
            conn.begin_call("x", true),
            Err(CallError::Protocol(_))
        ));
        conn.finish();
        assert!(rx.recv().await.is_none());
        drop(guard);
        assert!(matches!(
            conn.begin_call("y", true),
            Err(CallError::StreamClosed)
        ));
        assert!(matches!(
            conn.send(answer("y")).await,
            Err(CallError::StreamClosed)
        ));
    }
}
