//! Progress over azd's stream: the [`ProgressSink`] a request's reporter
//! sends to while the request may send progress (deploy, preview, destroy).
//!
//! Messages reach the outbound queue in the order reported and never after
//! the request's final answer: the request closes its channel (under the same
//! lock a report holds while it queues) before it queues the answer.

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::ProgressSink;
use tokio::sync::{Mutex, MutexGuard, mpsc};

use crate::pacing::Outgoing;

/// The link from a request's reporter to the stream: the outbound queue and
/// an open flag.
pub(crate) struct ProgressChannel {
    out: mpsc::Sender<Outgoing>,
    /// `true` until the final answer is sent. Held while a message is queued,
    /// so closing waits for a report in flight and nothing can follow the answer.
    open: Mutex<bool>,
}

impl ProgressChannel {
    pub(crate) fn new(out: mpsc::Sender<Outgoing>) -> Arc<Self> {
        Arc::new(Self {
            out,
            open: Mutex::new(true),
        })
    }

    /// Closes the channel; returns the guard, which the caller holds while it
    /// queues the final answer.
    pub(crate) async fn close(&self) -> MutexGuard<'_, bool> {
        let mut open = self.open.lock().await;
        *open = false;
        open
    }
}

#[async_trait]
impl ProgressSink for ProgressChannel {
    async fn send(&self, request_id: &str, message: String) {
        let open = self.open.lock().await;
        if !*open {
            tracing::debug!(%request_id, %message, "progress after the final answer (dropped)");
            return;
        }
        let timestamp = azd_wasm_host_core::clock::unix_millis();
        let msg = azd_wasm_host_proto::progress_message(request_id, message, timestamp);
        if self.out.send(msg.into()).await.is_err() {
            tracing::debug!(%request_id, "progress dropped: stream closed");
        }
        drop(open);
    }
}

#[cfg(test)]
mod tests {
    use azd_wasm_host_core::Progress;

    use super::*;

    #[tokio::test]
    async fn nothing_is_sent_after_close() {
        let (tx, mut rx) = mpsc::channel(8);
        let ch = ProgressChannel::new(tx);
        let p = Progress::to_sink("r1", ch.clone());
        p.report("one").await;
        let guard = ch.close().await;
        drop(guard);
        p.report("two").await;
        let first = rx.recv().await.expect("one message");
        assert_eq!(first.message().request_id, "r1");
        assert!(rx.try_recv().is_err(), "a message followed the close");
    }
}
