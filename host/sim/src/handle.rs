//! [`ProviderHandle`]: azd's side of a registered provider — sends requests the way azd does
//! and checks the answers for what would break azd.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{Exchange, RequestKind, message_name};
use pb::provisioning_message::MessageType;
use tokio::time::{Instant, timeout_at};

use crate::conn::StreamConn;
use crate::error::CallError;
use crate::wire::ToExtension;

/// How long a call waits for its answer unless [`ProviderHandle::with_call_timeout`] says
/// otherwise. azd itself waits forever; this only turns a hang into [`CallError::Timeout`].
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// Output types azd can convert; any other panics its environment refresh.
pub const OUTPUT_TYPES: [&str; 5] = ["string", "number", "bool", "object", "array"];

/// Everything the extension sent for one request.
#[derive(Debug, Clone)]
pub struct RawExchange {
    /// Progress messages, in arrival order (only for deploy, preview and destroy).
    pub progress: Vec<pb::ProvisioningProgressMessage>,
    /// The final answer, as received.
    pub answer: pb::ProvisioningMessage,
}

/// A provider the extension registered, on the stream it registered on. Cheap to clone;
/// clones share the stream and its counters.
#[derive(Clone)]
pub struct ProviderHandle {
    conn: Arc<StreamConn>,
    name: String,
    call_timeout: Duration,
}

impl fmt::Debug for ProviderHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderHandle")
            .field("name", &self.name)
            .field("stream", &self.conn.number)
            .field("call_timeout", &self.call_timeout)
            .finish()
    }
}

/// A short name for the kind of an envelope, for messages: the envelope field
/// of its body (`state_request`, …), `error` or `empty envelope`.
pub fn message_kind(msg: &pb::ProvisioningMessage) -> &'static str {
    match &msg.message_type {
        None if msg.error.is_some() => "error",
        None => "empty envelope",
        Some(body) => message_name(body),
    }
}

fn wrong_kind(expected: &str, kind: &str) -> CallError {
    if kind == "progress_message" {
        CallError::Protocol(format!(
            "expected {expected}, got a progress_message: azd takes the first message with the \
             request id as the answer here, so progress must only be sent during deploy, preview \
             and destroy"
        ))
    } else {
        CallError::Protocol(format!("expected {expected}, got {kind}"))
    }
}

/// Checks output types the way azd converts them.
fn check_outputs(
    what: &str,
    outputs: &std::collections::BTreeMap<String, pb::ProvisioningOutputParameter>,
) -> Result<(), CallError> {
    for (name, out) in outputs {
        if !OUTPUT_TYPES.contains(&out.r#type.as_str()) {
            return Err(CallError::Protocol(format!(
                "{what}: output {name:?} has type {:?}; azd knows only {OUTPUT_TYPES:?} and \
                 panics on anything else",
                out.r#type
            )));
        }
    }
    Ok(())
}

impl ProviderHandle {
    pub(crate) fn new(conn: Arc<StreamConn>, name: &str) -> Self {
        Self {
            conn,
            name: name.to_owned(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }

    pub(crate) fn stream_number(&self) -> u64 {
        self.conn.number
    }

    /// The registered provider name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A handle whose calls give up with [`CallError::Timeout`] after `timeout`.
    #[must_use]
    pub fn with_call_timeout(&self, timeout: Duration) -> Self {
        Self {
            call_timeout: timeout,
            ..self.clone()
        }
    }

    /// Whether the stream this provider registered on is over.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// Messages that arrived for a request id after its final answer, on this provider's
    /// stream (must stay 0: azd drops them).
    pub fn late_messages(&self) -> u64 {
        self.conn.late_messages()
    }

    /// Messages for request ids azd never sent, on this provider's stream.
    pub fn stray_messages(&self) -> u64 {
        self.conn.stray_messages()
    }

    /// Sends any envelope (a fresh UUID request id is set if empty) and returns what came back
    /// for its id. Progress is collected only for deploy, preview and destroy requests; for
    /// any other request the first message with the id is the answer, as in azd.
    pub async fn send_raw(&self, msg: pb::ProvisioningMessage) -> Result<RawExchange, CallError> {
        let mut progress = Vec::new();
        let answer = self
            .exchange(msg, &mut |p: &pb::ProvisioningProgressMessage| {
                progress.push(p.clone());
            })
            .await?;
        Ok(RawExchange { progress, answer })
    }

    /// Sends `bytes` as one message, exactly as they are (they need not be protobuf), and
    /// returns what came back for `request_id`, which they should carry: progress, then the
    /// first other message as the answer.
    pub async fn send_bytes(
        &self,
        request_id: &str,
        bytes: bytes::Bytes,
    ) -> Result<RawExchange, CallError> {
        let mut progress = Vec::new();
        let answer = self
            .exchange_wire(
                request_id,
                ToExtension::Raw(bytes),
                true,
                &mut |p: &pb::ProvisioningProgressMessage| progress.push(p.clone()),
            )
            .await?;
        Ok(RawExchange { progress, answer })
    }

    /// Sends `bytes` as one message and expects nothing back (anything that comes counts as
    /// stray, [`ProviderHandle::stray_messages`]).
    pub async fn push_bytes(&self, bytes: bytes::Bytes) -> Result<(), CallError> {
        timeout_at(
            Instant::now() + self.call_timeout,
            self.conn.send_wire(ToExtension::Raw(bytes)),
        )
        .await
        .map_err(|_| CallError::Timeout)?
    }

    /// Everything the extension sends on this provider's stream from now on (registrations
    /// aside), in arrival order, whatever its id, as it arrives: how a test follows requests
    /// it sent with [`ProviderHandle::push_bytes`], which waits for no answer, among them
    /// several under one id (a call refuses an id already used). What is watched is still
    /// routed as usual: a message for an id no call sent counts as stray.
    pub fn watch(&self) -> tokio::sync::mpsc::UnboundedReceiver<pb::ProvisioningMessage> {
        self.conn.watch()
    }

    /// Sends `msg` and waits for its final answer, passing progress to `on_progress`.
    async fn exchange(
        &self,
        mut msg: pb::ProvisioningMessage,
        on_progress: &mut (dyn FnMut(&pb::ProvisioningProgressMessage) + Send),
    ) -> Result<pb::ProvisioningMessage, CallError> {
        if msg.request_id.is_empty() {
            msg.request_id = uuid::Uuid::new_v4().to_string();
        }
        let progress_allowed = RequestKind::of(&msg).is_some_and(RequestKind::sends_progress);
        tracing::debug!(
            provider = %self.name,
            id = %msg.request_id,
            kind = message_kind(&msg),
            "sim azd sends"
        );
        let id = msg.request_id.clone();
        self.exchange_wire(
            &id,
            ToExtension::Message(msg),
            progress_allowed,
            on_progress,
        )
        .await
    }

    /// Sends `msg` for request `id` and waits for its final answer.
    async fn exchange_wire(
        &self,
        id: &str,
        msg: ToExtension,
        progress_allowed: bool,
        on_progress: &mut (dyn FnMut(&pb::ProvisioningProgressMessage) + Send),
    ) -> Result<pb::ProvisioningMessage, CallError> {
        let deadline = Instant::now() + self.call_timeout;
        let (mut rx, _guard) = self.conn.begin_call(id, progress_allowed)?;
        timeout_at(deadline, self.conn.send_wire(msg))
            .await
            .map_err(|_| CallError::Timeout)??;
        loop {
            match timeout_at(deadline, rx.recv()).await {
                Err(_) => return Err(CallError::Timeout),
                Ok(None) => return Err(CallError::StreamClosed),
                Ok(Some(m)) => match &m.message_type {
                    Some(MessageType::ProgressMessage(p)) if progress_allowed => on_progress(p),
                    _ => return Ok(m),
                },
            }
        }
    }

    /// Sends a typed request and returns the body of its answer, or the
    /// provider's error; an answer of another kind is a protocol error.
    async fn call<R: Exchange>(
        &self,
        request: R,
        on_progress: &mut (dyn FnMut(&pb::ProvisioningProgressMessage) + Send),
    ) -> Result<R::Answer, CallError> {
        let answer = self
            .exchange(
                pb::ProvisioningMessage {
                    request_id: String::new(),
                    error: None,
                    message_type: Some(request.into_message()),
                },
                on_progress,
            )
            .await?;
        if let Some(e) = answer.error {
            return Err(CallError::Extension(e));
        }
        let kind = message_kind(&answer);
        match answer.message_type.map(R::answer_of) {
            Some(Ok(body)) => Ok(body),
            _ => Err(wrong_kind(R::KIND.answer_name(), kind)),
        }
    }

    /// `initialize_request { project_path, options }`; the provider's identity is
    /// `options.provider` (azd sends no provider_name here).
    pub async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
    ) -> Result<(), CallError> {
        let req = pb::ProvisioningInitializeRequest {
            project_path: project_path.to_owned(),
            options: Some(options),
        };
        self.call(req, &mut |_| {}).await.map(drop)
    }

    /// `state_request`; the answer must carry `state_result.state` (azd dereferences it) with
    /// output types azd knows.
    pub async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
    ) -> Result<pb::ProvisioningStateResult, CallError> {
        let req = pb::ProvisioningStateRequest {
            options: Some(options),
            provider_name: self.name.clone(),
        };
        let resp = self.call(req, &mut |_| {}).await?;
        let result = resp.state_result.ok_or_else(|| {
            CallError::Protocol("state_response.state_result is missing (azd would crash)".into())
        })?;
        let state = result.state.as_ref().ok_or_else(|| {
            CallError::Protocol(
                "state_response.state_result.state is missing (azd would crash)".into(),
            )
        })?;
        check_outputs("state", &state.outputs)?;
        Ok(result)
    }

    /// `deploy_request`; progress goes to `on_progress` in arrival order (azd shows only
    /// non-empty texts). The answer must carry `result.deployment` with known output types.
    pub async fn deploy(
        &self,
        mut on_progress: impl FnMut(&pb::ProvisioningProgressMessage) + Send,
    ) -> Result<pb::ProvisioningDeployResult, CallError> {
        let req = pb::ProvisioningDeployRequest {
            provider_name: self.name.clone(),
        };
        let resp = self.call(req, &mut on_progress).await?;
        let result = resp.result.ok_or_else(|| {
            CallError::Protocol("deploy_response.result is missing (azd would crash)".into())
        })?;
        let deployment = result.deployment.as_ref().ok_or_else(|| {
            CallError::Protocol(
                "deploy_response.result.deployment is missing (azd would crash)".into(),
            )
        })?;
        check_outputs("deploy", &deployment.outputs)?;
        Ok(result)
    }

    /// `preview_request`; progress as for deploy. The answer must carry `result.preview`.
    pub async fn preview(
        &self,
        mut on_progress: impl FnMut(&pb::ProvisioningProgressMessage) + Send,
    ) -> Result<pb::ProvisioningPreviewResult, CallError> {
        let req = pb::ProvisioningPreviewRequest {
            provider_name: self.name.clone(),
        };
        let resp = self.call(req, &mut on_progress).await?;
        let result = resp.result.ok_or_else(|| {
            CallError::Protocol("preview_response.result is missing (azd would crash)".into())
        })?;
        if result.preview.is_none() {
            return Err(CallError::Protocol(
                "preview_response.result.preview is missing (azd would crash)".into(),
            ));
        }
        Ok(result)
    }

    /// `destroy_request { force, purge }`; progress as for deploy.
    pub async fn destroy(
        &self,
        options: pb::ProvisioningDestroyOptions,
        mut on_progress: impl FnMut(&pb::ProvisioningProgressMessage) + Send,
    ) -> Result<pb::ProvisioningDestroyResult, CallError> {
        let req = pb::ProvisioningDestroyRequest {
            options: Some(options),
            provider_name: self.name.clone(),
        };
        let resp = self.call(req, &mut on_progress).await?;
        resp.result
            .ok_or_else(|| CallError::Protocol("destroy_response.result is missing".into()))
    }

    /// `ensure_env_request` (part of the protocol; azd 1.31.x never sends it).
    pub async fn ensure_env(&self) -> Result<(), CallError> {
        let req = pb::ProvisioningEnsureEnvRequest {
            provider_name: self.name.clone(),
        };
        self.call(req, &mut |_| {}).await.map(drop)
    }

    /// `parameters_request`.
    pub async fn parameters(&self) -> Result<Vec<pb::ProvisioningParameter>, CallError> {
        let req = pb::ProvisioningParametersRequest {
            provider_name: self.name.clone(),
        };
        Ok(self.call(req, &mut |_| {}).await?.parameters)
    }

    /// `planned_outputs_request`.
    pub async fn planned_outputs(&self) -> Result<Vec<pb::ProvisioningPlannedOutput>, CallError> {
        let req = pb::ProvisioningPlannedOutputsRequest {
            provider_name: self.name.clone(),
        };
        Ok(self.call(req, &mut |_| {}).await?.planned_outputs)
    }
}
