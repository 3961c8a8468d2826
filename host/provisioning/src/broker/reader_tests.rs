//! The reader's routing by request id: a request under the id of one still
//! unanswered is refused by name, and a request under the id of one of ours is
//! azd's request, not azd's answer to ours.

use std::sync::Arc;

use azd_wasm_host_core::ErrorCode;
use azd_wasm_host_proto::azdext as pb;
use pb::provisioning_message::MessageType;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Reader;
use crate::broker::shared::{InFlight, Pending, Queued};

fn reader() -> (Reader, mpsc::Receiver<Queued>, Pending) {
    let pending = Pending::default();
    let (requests, queue) = mpsc::channel(16);
    let reader = Reader {
        pending: pending.clone(),
        requests,
        ended: CancellationToken::new(),
        end: Arc::default(),
        in_flight: InFlight::default(),
        next_sequence: 0,
        tap: None,
    };
    (reader, queue, pending)
}

fn envelope(id: &str, body: Option<MessageType>) -> pb::ProvisioningMessage {
    pb::ProvisioningMessage {
        request_id: id.into(),
        error: None,
        message_type: body,
    }
}

fn state(id: &str) -> pb::ProvisioningMessage {
    envelope(
        id,
        Some(MessageType::StateRequest(
            pb::ProvisioningStateRequest::default(),
        )),
    )
}

fn deploy(id: &str) -> pb::ProvisioningMessage {
    envelope(
        id,
        Some(MessageType::DeployRequest(
            pb::ProvisioningDeployRequest::default(),
        )),
    )
}

/// The next request handed over, served as it is.
fn served(queue: &mut mpsc::Receiver<Queued>) -> Queued {
    let queued = queue.try_recv().expect("a request was handed over");
    assert!(
        queued.request.is_ok(),
        "refused: {:?}",
        queued.request.err()
    );
    queued
}

/// The next request handed over, refused as a duplicate of `id`; its message.
fn refused(queue: &mut mpsc::Receiver<Queued>, id: &str) -> (Queued, String) {
    let queued = queue.try_recv().expect("a request was handed over");
    let message = match &queued.request {
        Err((refused_id, error)) => {
            assert_eq!(refused_id, id);
            assert_eq!(error.host_code(), Some(ErrorCode::DuplicateRequestId));
            error.message.clone()
        }
        Ok(msg) => panic!("served, not refused: {msg:?}"),
    };
    assert!(message.contains(&format!("{id:?}")), "{message}");
    (queued, message)
}

#[tokio::test]
async fn a_request_under_a_live_id_is_refused_naming_it_until_the_first_is_answered() {
    let (mut reader, mut queue, _) = reader();
    assert!(reader.route(deploy("x")).await);
    let first = served(&mut queue);
    let mut owed = Vec::new();
    for second in [deploy("x"), state("x"), envelope("x", None)] {
        assert!(reader.route(second).await);
        owed.push(refused(&mut queue, "x").0);
    }
    // Bytes that cannot be read, under the live id, too.
    let unreadable = bytes::Bytes::from_static(&[0x0a, 1, b'x', 0x32, 0x7f, 0x01]);
    assert!(reader.read(&unreadable).await);
    let (queued, message) = refused(&mut queue, "x");
    assert!(message.contains("cannot read"), "{message}");
    owed.push(queued);
    // A refusal is owed an answer too: the id stays live until every one has left.
    assert_eq!(reader.in_flight.unanswered().len(), 5);
    drop(first);
    assert!(reader.route(state("x")).await);
    owed.push(refused(&mut queue, "x").0);
    owed.clear();
    assert!(reader.in_flight.unanswered().is_empty());
    // Answered: the id is free again; other ids never were taken.
    assert!(reader.route(state("x")).await);
    let _again = served(&mut queue);
    assert!(reader.route(state("y")).await);
    let _other = served(&mut queue);
}

#[tokio::test]
async fn a_request_under_the_id_of_one_of_ours_is_azds_and_ours_still_waits() {
    let (mut reader, mut queue, pending) = reader();
    let (tx, mut ours) = oneshot::channel();
    pending.lock().insert("ours".into(), tx);
    // azd's request under our id is served as azd's request.
    assert!(reader.route(state("ours")).await);
    let _request = served(&mut queue);
    assert!(ours.try_recv().is_err(), "taken as the answer to ours");
    assert!(pending.lock().contains_key("ours"));
    // azd's answer under it is ours.
    let answer = envelope(
        "ours",
        Some(MessageType::RegisterProvisioningProviderResponse(
            pb::RegisterProvisioningProviderResponse {},
        )),
    );
    assert!(reader.route(answer.clone()).await);
    assert_eq!(ours.try_recv().ok(), Some(answer));
    assert!(queue.try_recv().is_err(), "an answer is not a request");
    // So is an envelope of a kind this version does not know (it reads as
    // empty), or an error.
    for answer in [
        envelope("ours", None),
        pb::ProvisioningMessage {
            error: Some(pb::ExtensionError::default()),
            ..envelope("ours", None)
        },
    ] {
        let (tx, mut ours) = oneshot::channel();
        pending.lock().insert("ours".into(), tx);
        assert!(reader.route(answer.clone()).await);
        assert_eq!(ours.try_recv().ok(), Some(answer));
        assert!(queue.try_recv().is_err(), "an answer is not a request");
    }
}
