//! The provider seam: what the manager calls, and what it hands each call.
//!
//! A [`Provider`] is one provider *instance* (one per azd `Initialize`, i.e. per
//! provisioning layer). A [`ProviderFactory`] makes fresh instances. The
//! WebAssembly runtime implements both; tests use native Rust providers.
//!
//! Data crosses as the protobuf types of `azdext` (plain prost structs): they are
//! exactly azd's data model, and a second copy of every struct would add nothing
//! but conversions. Errors are the host's own [`ProviderError`].
//!
//! Every call gets a [`CallContext`]: its request id, a cancellation token that
//! fires when azd goes away, and a [`Progress`] reporter. Only deploy, preview and
//! destroy get a reporter that reaches azd; for every other call the reporter
//! writes to the debug log, because azd would take a progress message for the
//! answer.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;

/// Longest progress text sent to azd; longer text is cut at a character boundary.
pub const MAX_PROGRESS_BYTES: usize = 16 * 1024;

/// One provider instance. Implementations must be cheap to share (`Arc`).
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// First call on a fresh instance: the project path and the layer's options.
    async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError>;

    /// What is deployed now.
    async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError>;

    /// Provisions the layer.
    async fn deploy(&self, ctx: CallContext)
    -> Result<pb::ProvisioningDeployResult, ProviderError>;

    /// What a deploy would do.
    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError>;

    /// Removes what the layer provisioned.
    async fn destroy(
        &self,
        options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError>;

    /// Makes sure the environment has what the provider needs.
    async fn ensure_env(&self, ctx: CallContext) -> Result<(), ProviderError>;

    /// The inputs the provider takes.
    async fn parameters(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError>;

    /// The outputs a deploy will produce.
    async fn planned_outputs(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError>;
}

/// Makes fresh provider instances; the manager calls it on every `Initialize`.
#[async_trait]
pub trait ProviderFactory: Send + Sync + 'static {
    /// A fresh, not yet initialized instance.
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError>;
}

#[async_trait]
impl<F> ProviderFactory for F
where
    F: Fn() -> Result<Arc<dyn Provider>, ProviderError> + Send + Sync + 'static,
{
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        self()
    }
}

/// What one call to a provider gets besides its arguments.
#[derive(Clone, Debug)]
pub struct CallContext {
    /// azd's id of the request being served.
    pub request_id: String,
    /// The request's place in the order azd sent requests on the stream.
    pub sequence: u64,
    /// Fires when the request is abandoned (azd went away). Long work must stop.
    pub cancel: CancellationToken,
    /// Where progress goes.
    pub progress: Progress,
}

impl CallContext {
    /// A context whose progress only reaches the debug log (tests, `check`).
    pub fn detached(request_id: impl Into<String>) -> Self {
        let request_id = request_id.into();
        Self {
            progress: Progress::log_only(request_id.clone()),
            request_id,
            sequence: 0,
            cancel: CancellationToken::new(),
        }
    }

    /// This context as a request of `kind` may use it: progress reaches azd
    /// only when [`RequestKind::sends_progress`] says so, whatever reporter the
    /// caller passed; otherwise it goes to the debug log.
    #[must_use]
    pub fn for_kind(self, kind: RequestKind) -> Self {
        if kind.sends_progress() {
            self
        } else {
            Self {
                progress: Progress::log_only(self.request_id.clone()),
                ..self
            }
        }
    }
}

/// Reports progress for one request.
///
/// Messages reach azd in the order reported and never after the request's final
/// answer: the broker closes the reporter (under the same lock a report holds
/// while sending) before it sends the answer. A reporter that is not bound to a
/// deploy, preview or destroy writes to the debug log instead.
#[derive(Clone)]
pub struct Progress {
    request_id: Arc<str>,
    channel: Option<Arc<ProgressChannel>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("request_id", &self.request_id)
            .field("sent_to_azd", &self.channel.is_some())
            .finish()
    }
}

/// The link from a reporter to the stream: the outbound queue and an open flag.
pub(crate) struct ProgressChannel {
    out: mpsc::Sender<pb::ProvisioningMessage>,
    /// `true` until the final answer is sent. Held while a message is queued, so
    /// closing waits for a report in flight and nothing can follow the answer.
    open: Mutex<bool>,
}

impl ProgressChannel {
    pub(crate) fn new(out: mpsc::Sender<pb::ProvisioningMessage>) -> Arc<Self> {
        Arc::new(Self {
            out,
            open: Mutex::new(true),
        })
    }

    /// Closes the channel; returns the guard, which the caller holds while it
    /// queues the final answer.
    pub(crate) async fn close(&self) -> tokio::sync::MutexGuard<'_, bool> {
        let mut open = self.open.lock().await;
        *open = false;
        open
    }
}

impl Progress {
    /// A reporter that only logs (for calls whose progress must not reach azd).
    pub fn log_only(request_id: impl Into<String>) -> Self {
        Self {
            request_id: Arc::from(request_id.into()),
            channel: None,
        }
    }

    /// A reporter that sends to azd over `channel`.
    pub(crate) fn to_azd(request_id: &str, channel: Arc<ProgressChannel>) -> Self {
        Self {
            request_id: Arc::from(request_id),
            channel: Some(channel),
        }
    }

    /// A reporter that sends progress envelopes to `out` (test support: lets an
    /// integration test observe what a provider reports).
    pub fn to_sender(request_id: &str, out: mpsc::Sender<pb::ProvisioningMessage>) -> Self {
        Self::to_azd(request_id, ProgressChannel::new(out))
    }

    /// Whether messages reach azd (deploy, preview, destroy) or only the log.
    pub fn reaches_azd(&self) -> bool {
        self.channel.is_some()
    }

    /// The request this reporter belongs to.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Reports one step. Returns once the message is queued for azd (or logged).
    pub async fn report(&self, message: impl Into<String>) {
        let mut message = message.into();
        crate::text::truncate(&mut message, MAX_PROGRESS_BYTES);
        crate::text::sanitize_in_place(&mut message);
        let Some(channel) = &self.channel else {
            tracing::debug!(request_id = %self.request_id, %message, "progress outside deploy/preview/destroy (not sent)");
            return;
        };
        let open = channel.open.lock().await;
        if !*open {
            tracing::debug!(request_id = %self.request_id, %message, "progress after the final answer (dropped)");
            return;
        }
        let msg = self.envelope(message);
        if channel.out.send(msg).await.is_err() {
            tracing::debug!(request_id = %self.request_id, "progress dropped: stream closed");
        }
        drop(open);
    }

    fn envelope(&self, message: String) -> pb::ProvisioningMessage {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        azd_wasm_host_proto::progress_message(&self.request_id, message, timestamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn nothing_is_sent_after_close() {
        let (tx, mut rx) = mpsc::channel(8);
        let ch = ProgressChannel::new(tx);
        let p = Progress::to_azd("r1", ch.clone());
        p.report("one").await;
        let guard = ch.close().await;
        drop(guard);
        p.report("two").await;
        let first = rx.recv().await.expect("one message");
        assert_eq!(first.request_id, "r1");
        assert!(rx.try_recv().is_err(), "a message followed the close");
    }

    #[tokio::test]
    async fn only_kinds_that_send_progress_reach_azd() {
        for kind in RequestKind::ALL {
            let (tx, mut rx) = mpsc::channel(8);
            let ctx = CallContext {
                progress: Progress::to_sender("r2", tx),
                ..CallContext::detached("r2")
            }
            .for_kind(kind);
            ctx.progress.report("hello").await;
            drop(ctx);
            let sent = rx.recv().await.is_some();
            assert_eq!(sent, kind.sends_progress(), "{kind}");
        }
    }
}
