//! The stream's reader task: every message azd sends is read here, once,
//! and goes to the one place it belongs: the waiter of one of our requests,
//! the dispatcher (a request, or why one is refused unread), or the log.
//! No message ends the stream; only its transport does, and how it ended
//! depends on whether azd was still waiting for answers.

use std::sync::Arc;

use azd_wasm_host_core::text::{QUOTE_MAX, clip, quote};
use azd_wasm_host_core::{ErrorCode, ProviderError};
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::shared::{EndRecord, InFlight, Pending, Queued, StreamEnd};
use crate::inbound::Unreadable;

/// The reader task's state: where answers and requests go, and how to end.
pub(super) struct Reader {
    pub(super) pending: Pending,
    pub(super) requests: mpsc::Sender<Queued>,
    pub(super) ended: CancellationToken,
    pub(super) end: EndRecord,
    /// azd's requests not answered yet.
    pub(super) in_flight: InFlight,
    /// Numbers requests in the order azd sent them.
    pub(super) next_sequence: u64,
    /// `listen --record`: every frame azd sends is written down as received.
    pub(super) tap: Option<Arc<dyn crate::client::StreamTap>>,
}

impl Reader {
    /// Reads until the stream ends.
    pub(super) async fn run(mut self, mut inbound: tonic::Streaming<bytes::Bytes>) {
        let end = loop {
            let next = tokio::select! {
                () = self.ended.cancelled() => break StreamEnd::Shutdown,
                n = inbound.message() => n,
            };
            let served = match next {
                Ok(Some(bytes)) => {
                    if let Some(tap) = &self.tap {
                        tap.azd_sent(&bytes);
                    }
                    self.read(&bytes).await
                }
                Ok(None) => break self.azd_left("azd ended the provisioning stream".to_owned()),
                Err(status) if unreadable_frame(&status) => {
                    // The stream cannot go on past a frame it cannot read.
                    tracing::error!(code = ?status.code(), message = status.message(), "azd sent a message the stream cannot read past");
                    break StreamEnd::Failed(status);
                }
                Err(status) if refused_ours(&status) => {
                    // Whatever we sent last may be lost with the stream.
                    tracing::error!(code = ?status.code(), message = %clip(status.message(), QUOTE_MAX), "azd ended the stream: it could not take a message the extension sent");
                    break StreamEnd::Failed(status);
                }
                Err(status) => {
                    break self.azd_left(format!(
                        "the connection to azd ended: {} ({:?})",
                        clip(status.message(), QUOTE_MAX),
                        status.code()
                    ));
                }
            };
            if !served {
                break StreamEnd::Shutdown;
            }
        };
        self.finish(end);
    }

    /// Reads one message and hands it on. `false` once the stream is over.
    async fn read(&mut self, bytes: &bytes::Bytes) -> bool {
        match crate::inbound::decode(bytes) {
            Ok(msg) => self.route(msg).await,
            Err(Unreadable::Refused { request_id, error }) => {
                tracing::warn!(request_id = %clip(&request_id, QUOTE_MAX), size = bytes.len(), error = %clip(&error.message, QUOTE_MAX), "a message azd sent is answered unread");
                let waiter = self.pending.lock().remove(&request_id);
                if let Some(waiter) = waiter {
                    // azd's answer to one of ours: the error is that answer.
                    let _ = waiter.send(pb::ProvisioningMessage {
                        request_id,
                        error: Some(error.to_wire()),
                        message_type: None,
                    });
                    return true;
                }
                self.dispatch(Err((request_id, error)), None).await
            }
            Err(Unreadable::Anonymous(why)) => {
                tracing::warn!(size = bytes.len(), %why, "a message azd sent names no request to answer; ignored");
                true
            }
        }
    }

    /// How the stream ended when azd ended it or its connection broke: the
    /// normal end of a command when every request was answered.
    fn azd_left(&self, cause: String) -> StreamEnd {
        let unanswered = self.in_flight.unanswered();
        if unanswered.is_empty() {
            tracing::info!(%cause, "azd is done: every request it sent was answered");
            StreamEnd::ClosedByAzd
        } else {
            StreamEnd::Interrupted { cause, unanswered }
        }
    }

    /// Hands one message to its waiter or to the dispatcher. `false` once the
    /// stream is over.
    ///
    /// A message of a request kind is azd's request whatever its id, even the
    /// id of a request of ours awaiting azd's answer (which still waits for
    /// it); any other message under such an id (an answer, an error, an
    /// envelope of a kind this version does not know) is azd's answer to ours.
    async fn route(&mut self, msg: pb::ProvisioningMessage) -> bool {
        let kind = RequestKind::of(&msg);
        if kind.is_none() {
            let waiter = self.pending.lock().remove(&msg.request_id);
            if let Some(waiter) = waiter {
                let _ = waiter.send(msg);
                return true;
            }
        }
        // A request of a kind we know, or an empty envelope (an unknown kind decodes
        // as empty): both get an answer. An error envelope with no kind is azd
        // answering something we no longer wait for.
        let is_request = kind.is_some() || (msg.message_type.is_none() && msg.error.is_none());
        if !is_request {
            // An answer or progress for nothing we asked: answering it could start
            // a loop of errors, so it is only logged.
            tracing::debug!(request_id = %clip(&msg.request_id, QUOTE_MAX), "ignoring a message that is neither a request nor an answer we wait for");
            return true;
        }
        self.dispatch(Ok(msg), kind).await
    }

    /// Hands a request (or why it is refused) to the dispatcher, numbered in
    /// the order azd sent it. `false` once the stream is over.
    ///
    /// A request under the id of one still unanswered (*live*: its answer has
    /// not left) is refused with `duplicate_request_id`, whatever it is: azd
    /// tells answers apart by id alone, so serving both would send two answers
    /// it cannot tell apart, their progress interleaved. The refusal leaves at
    /// once (azd's broker waits on the latest request under an id); the first
    /// is served on and answered as if the second had never come.
    async fn dispatch(
        &mut self,
        mut request: Result<pb::ProvisioningMessage, (String, ProviderError)>,
        kind: Option<RequestKind>,
    ) -> bool {
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        let id = request_id(&request);
        if self.in_flight.is_live(id) {
            tracing::warn!(request_id = %clip(id, QUOTE_MAX), kind = kind.map(RequestKind::name), "azd sent a request under the id of one still unanswered; refused");
            request = Err((id.to_owned(), duplicate(id, kind, request.is_ok())));
        }
        let tracked = self.in_flight.track(sequence, request_id(&request), kind);
        let queued = Queued {
            sequence,
            request,
            tracked,
        };
        tokio::select! {
            () = self.ended.cancelled() => false,
            r = self.requests.send(queued) => r.is_ok(),
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

/// The id of a request the reader hands over.
fn request_id(request: &Result<pb::ProvisioningMessage, (String, ProviderError)>) -> &str {
    match request {
        Ok(msg) => &msg.request_id,
        Err((id, _)) => id,
    }
}

/// The refusal of a request under `id`, the id of one still unanswered; `kind`
/// is the request's (`readable`: the message could be read).
fn duplicate(id: &str, kind: Option<RequestKind>, readable: bool) -> ProviderError {
    let what = match (kind, readable) {
        (Some(kind), _) => format!("a {kind} request"),
        (None, true) => "a request of no kind this version knows".to_owned(),
        (None, false) => "a message it cannot read".to_owned(),
    };
    ProviderError::host(
        ErrorCode::DuplicateRequestId,
        format!(
            "azd sent {what} under request id {}, the id of a request it sent before that is \
             not answered yet; it is refused, and the earlier request still gets its own answer",
            quote(id)
        ),
    )
    .with_suggestion(
        "azd gives every request an id of its own: report this with the log of `azd ... --debug`.",
    )
}

/// Whether azd ended the stream because it could not take a message of ours (a
/// message past its limit): a status azd sent (not the transport's, which carries
/// the connection's error as its source) saying it ran out of room.
fn refused_ours(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::ResourceExhausted && std::error::Error::source(status).is_none()
}

/// Whether the stream failed on a message's gRPC frame (larger than even the
/// intake limit, a bad compression flag, a body that does not decompress)
/// rather than on the connection: tonic reads nothing after such a frame.
fn unreadable_frame(status: &tonic::Status) -> bool {
    // By tonic's own messages: the same codes also come from the connection
    // (h2's ENHANCE_YOUR_CALM is ResourceExhausted) and from azd's trailers.
    let m = status.message();
    m.starts_with("Error, decoded message length too large")
        || m.starts_with("Error decompressing")
        || m.starts_with("protocol error: received message")
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod routing_tests;

#[cfg(test)]
mod tests {
    use super::{refused_ours, unreadable_frame};
    use tonic::Status;

    #[test]
    fn a_frame_that_cannot_be_read_is_told_from_a_connection_that_ended() {
        for frame in [
            Status::out_of_range("Error, decoded message length too large: found 99 bytes"),
            Status::resource_exhausted("Error decompressing: size limit exceeded"),
            Status::internal("Error decompressing: corrupt deflate stream"),
            Status::internal("protocol error: received message with invalid compression flag: 7"),
        ] {
            assert!(unreadable_frame(&frame), "{frame:?}");
        }
        // How azd's connection ends (the first is what azd 1.31.2 leaves behind).
        for ended in [
            Status::unknown("h2 protocol error: error reading a body from connection"),
            Status::internal("Unexpected EOF decoding stream."),
            Status::internal("h2 protocol error: stream error received: unexpected internal error"),
            Status::unavailable("connection reset"),
            Status::cancelled("operation was canceled"),
            Status::resource_exhausted("h2 protocol error: enhance your calm"),
            Status::out_of_range("azd's own reason"),
        ] {
            assert!(!unreadable_frame(&ended), "{ended:?}");
        }
    }

    #[test]
    fn azd_refusing_a_message_of_ours_is_told_from_the_connection_running_out() {
        // grpc-go's answer to a message past its limit: a status in the trailers.
        let refused = Status::resource_exhausted(
            "grpc: received message larger than max (5800000 vs. 4194304)",
        );
        assert!(refused_ours(&refused));
        // The transport's errors carry what failed as their source (h2's
        // ENHANCE_YOUR_CALM among them); other codes are the connection ending.
        let transport = Status::from_error(Box::new(std::io::Error::other("reset")));
        assert!(!refused_ours(&transport), "{transport:?}");
        assert!(!refused_ours(&Status::unavailable("connection reset")));
    }
}
