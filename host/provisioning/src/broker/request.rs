//! One request of azd's on its way to its one answer: served by the
//! handler, its progress bound to the stream while it may send some, and the
//! answer (whatever it is: the provider's, an error of the provider's or of the
//! host's) made to fit azd's size limit before it goes ([`fit`]).

use std::sync::Arc;

use azd_wasm_host_core::text::{QUOTE_MAX, clip};
use azd_wasm_host_core::{CallContext, ErrorCode, Progress, ProviderError};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{MAX_MESSAGE_BYTES, Request, RequestKind};
use futures::FutureExt;
use prost::Message;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::shared::{Queued, RequestHandler, Tracked, WIND_DOWN};
use crate::pacing::{Outgoing, fits};
use crate::progress::{Lanes, ProgressLane};

/// One request of azd's, on its way to its one answer.
pub(super) struct AzdRequest {
    request_id: String,
    /// The request, or why it is not one this version serves.
    request: Result<Request, ProviderError>,
    ctx: CallContext,
    /// Its place among the unanswered, given up once the answer is queued.
    tracked: Tracked,
}

impl AzdRequest {
    pub(super) fn new(queued: Queued, cancel: CancellationToken) -> Self {
        let Queued {
            sequence,
            request: msg,
            tracked,
        } = queued;
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
                    tracked,
                };
            }
        };
        let request = msg
            .message_type
            .ok_or(())
            .and_then(|body| Request::from_message(body).map_err(|_| ()))
            .map_err(|()| {
                ProviderError::host(
                    ErrorCode::UnknownRequest,
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
            tracked,
        }
    }

    /// Serves the request and sends its one answer (unless the stream is gone);
    /// its progress goes through a lane of `lanes`.
    pub(super) async fn serve(
        self,
        handler: Arc<dyn RequestHandler>,
        out: mpsc::Sender<Outgoing>,
        lanes: Lanes,
    ) {
        let Self {
            request_id,
            request,
            mut ctx,
            tracked,
        } = self;
        let request = match request {
            Ok(request) => request,
            Err(err) => {
                send(
                    &out,
                    fit(error_answer(&request_id, &err), None),
                    tracked,
                    None,
                )
                .await;
                return;
            }
        };
        let kind = request.kind();
        tracing::debug!(request_id = %clip(&request_id, QUOTE_MAX), %kind, "request");
        let started = std::time::Instant::now();
        // Present while the request may send progress; closed before the answer.
        let mut progress = None;
        ctx.progress = Progress::for_request(kind, request_id.clone(), || {
            let lane = lanes.open(&request_id);
            progress = Some(lane.clone());
            lane
        });
        let cancel = ctx.cancel.clone();
        let work = std::panic::AssertUnwindSafe(handler.handle(request, ctx)).catch_unwind();
        let mut work = std::pin::pin!(work);
        let outcome = tokio::select! {
            o = &mut work => o,
            () = cancel.cancelled() => {
                // The stream is gone, so the answer has nowhere to go; the handler
                // still gets a moment to see the cancellation and stop cleanly.
                tracing::debug!(request_id = %clip(&request_id, QUOTE_MAX), %kind, "request cancelled: the stream ended");
                let _ = tokio::time::timeout(WIND_DOWN, work).await;
                return;
            }
        };
        let answer = fit(answer(&request_id, kind, outcome), Some(kind));
        tracing::debug!(request_id = %clip(&request_id, QUOTE_MAX), %kind, micros = started.elapsed().as_micros(), "answered");
        if let Some(lane) = &progress {
            lane.close();
        }
        send(&out, answer, tracked, progress).await;
    }
}

/// Queues `answer`, its request settled once it has left, after the steps
/// waiting in the request's progress lane; a request with no answer that fits
/// stays among the unanswered (and is said to be when the stream ends).
async fn send(
    out: &mpsc::Sender<Outgoing>,
    answer: Option<pb::ProvisioningMessage>,
    tracked: Tracked,
    lane: Option<Arc<ProgressLane>>,
) {
    match answer {
        Some(answer) => {
            let mut answer = Outgoing::settling(answer, tracked);
            if let Some(lane) = lane {
                answer = answer.after(lane);
            }
            let _ = out.send(answer).await;
        }
        None => tracked.never_answered(),
    }
}

/// `answer` as it may go to azd: itself if it fits azd's limit per message;
/// else an error naming the request's kind and the answer's size, under the same
/// id; `None` when not even that fits (an id nearly as long as the limit: nothing
/// that names the request can be sent).
fn fit(
    answer: pb::ProvisioningMessage,
    kind: Option<RequestKind>,
) -> Option<pb::ProvisioningMessage> {
    if fits(&answer) {
        return Some(answer);
    }
    let size = answer.encoded_len();
    let what = kind.map_or_else(|| "an".to_owned(), |k| format!("the {k}"));
    let refusal = error_answer(
        &answer.request_id,
        &ProviderError::host(
            ErrorCode::AnswerTooLarge,
            format!(
                "{what} answer is {size} bytes, more than azd's limit of \
                 {MAX_MESSAGE_BYTES} bytes per message"
            ),
        )
        .with_suggestion(
            "Return fewer or smaller outputs, parameters or resources, or shorter errors.",
        ),
    );
    if fits(&refusal) {
        return Some(refusal);
    }
    tracing::error!(
        request_id = %clip(&answer.request_id, QUOTE_MAX),
        id_bytes = answer.request_id.len(),
        "a request cannot be answered: its id alone is too long for an answer within azd's limit of {MAX_MESSAGE_BYTES} bytes"
    );
    None
}

/// The envelope that answers request `id`: the handler's answer, or its error.
fn answer(
    id: &str,
    kind: RequestKind,
    outcome: std::thread::Result<Result<pb::provisioning_message::MessageType, ProviderError>>,
) -> pb::ProvisioningMessage {
    let body = match outcome {
        Ok(Ok(body)) => body,
        Ok(Err(err)) => {
            tracing::debug!(request_id = %clip(id, QUOTE_MAX), %kind, error = %clip(&err.message, QUOTE_MAX), "request failed");
            return error_answer(id, &err);
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            tracing::debug!(request_id = %clip(id, QUOTE_MAX), panic = %what, "handler panicked");
            return error_answer(
                id,
                &ProviderError::host(
                    ErrorCode::HandlerPanicked,
                    format!("the {kind} handler failed unexpectedly: {what}"),
                ),
            );
        }
    };
    pb::ProvisioningMessage {
        request_id: id.to_owned(),
        error: None,
        message_type: Some(body),
    }
}

/// An envelope carrying only an error, for `request_id`.
fn error_answer(request_id: &str, err: &ProviderError) -> pb::ProvisioningMessage {
    pb::ProvisioningMessage {
        request_id: request_id.to_owned(),
        error: Some(err.to_wire()),
        message_type: None,
    }
}
