//! The stream's reader task: every message azd sends is read here, once,
//! and goes to the one place it belongs: the waiter of one of our requests,
//! the dispatcher (a request, or why one is refused unread), or the debug log.

use azd_wasm_host_core::ProviderError;
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::shared::{EndRecord, Pending, Queued, StreamEnd};

/// The reader task's state: where answers and requests go, and how to end.
pub(super) struct Reader {
    pub(super) pending: Pending,
    pub(super) requests: mpsc::Sender<Queued>,
    pub(super) ended: CancellationToken,
    pub(super) end: EndRecord,
    /// Numbers requests in the order azd sent them.
    pub(super) next_sequence: u64,
}

impl Reader {
    /// Reads until the stream ends.
    pub(super) async fn run(mut self, mut inbound: tonic::Streaming<bytes::Bytes>) {
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
        let waiter = self.pending.lock().remove(&msg.request_id);
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
    pub(super) fn finish(self, end: StreamEnd) {
        let _ = self.end.set(end);
        self.ended.cancel();
        self.pending.lock().clear();
    }
}
