//! What the broker, its reader and its requests share: how a stream ends,
//! who serves a request, and the tables between them.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, ProviderError};
use azd_wasm_host_proto::Request;
use azd_wasm_host_proto::azdext as pb;
use parking_lot::Mutex;
use tokio::sync::oneshot;

/// How long a cancelled handler may take to wind down after the stream ends
/// (the process must exit within a second of azd going away).
pub(super) const WIND_DOWN: Duration = Duration::from_millis(400);

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
pub(super) type EndRecord = Arc<OnceLock<StreamEnd>>;
pub(super) type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<pb::ProvisioningMessage>>>>;

/// A request as the reader hands it over: its place in the order azd sent
/// requests, and the envelope (or why it is refused unread).
pub(super) type Queued = (
    u64,
    Result<pb::ProvisioningMessage, (String, ProviderError)>,
);
