//! A provider's stream driven with mutated envelopes through the simulated
//! azd, every answer checked against prost's reading of the same bytes:
//!
//! - a request prost reads (or an empty envelope) gets exactly one answer,
//!   under its id, and never `invalid_message`;
//! - bytes prost cannot read, or nested past the host's limit, get exactly
//!   one answer under the id they start with: `invalid_message`;
//! - anything else (answers, progress, errors azd would not send unasked)
//!   gets no answer (any would be counted *stray* by the simulated azd);
//! - and the stream lives through it all: a State sent last is answered.
//!
//! The same driver runs in process (the manager) and against the real
//! binary; the kept regression inputs ([`inbound_regressions`]) go first.

use std::path::PathBuf;
use std::sync::Arc;

use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::ProviderHandle;
use prost::Message as _;

use crate::envelopes::Envelopes;
use crate::{Campaign, Tally, regressions};

/// The folder of kept inbound regression inputs (hex; each starts with its
/// request id, under 128 bytes long).
pub fn inbound_regressions() -> PathBuf {
    crate::regressions_dir("inbound")
}

/// What the host must do with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// One answer, not `invalid_message`.
    Answer,
    /// One answer: `invalid_message`.
    Refused,
    /// No answer.
    Nothing,
}

/// The expectation for `bytes`, which start with request id `id` (`deep`:
/// groups nested past the host's limit were added); `None` when a mutation
/// gave them another id (they are not sent: the id could be taken).
pub(crate) fn expectation(bytes: &[u8], id: &str, deep: bool) -> Option<Expect> {
    if deep {
        return Some(Expect::Refused);
    }
    Some(match pb::ProvisioningMessage::decode(bytes) {
        Err(_) => Expect::Refused,
        Ok(msg) if msg.request_id != id => return None,
        Ok(msg) => {
            let empty = msg.message_type.is_none() && msg.error.is_none();
            if RequestKind::of(&msg).is_some() || empty {
                Expect::Answer
            } else {
                Expect::Nothing
            }
        }
    })
}

/// The host's code of an error answer.
pub(crate) fn local_code(error: &pb::ExtensionError) -> &str {
    match &error.source {
        Some(pb::extension_error::Source::LocalError(l)) => &l.code,
        _ => "",
    }
}

/// Sends one input and checks what came back.
async fn exercise(h: &ProviderHandle, id: &str, bytes: Vec<u8>, expect: Expect, tally: &mut Tally) {
    if expect == Expect::Nothing {
        match h.push_bytes(bytes.clone().into()).await {
            Ok(()) => tally.record("ignored", ""),
            Err(e) => tally.fail(&bytes, format!("sending failed: {e}")),
        }
        return;
    }
    let answer = match h.send_bytes(id, bytes.clone().into()).await {
        Ok(raw) => raw.answer,
        Err(e) => return tally.fail(&bytes, format!("expected {expect:?} for {id}, got {e}")),
    };
    let code = answer.error.as_ref().map(local_code);
    match (expect, code) {
        (Expect::Refused, Some("invalid_message")) => {
            let message = answer
                .error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or_default();
            tally.record("refused", message);
        }
        (Expect::Answer, Some("invalid_message")) | (Expect::Refused, _) => {
            tally.fail(&bytes, format!("expected {expect:?}, got {answer:?}"));
        }
        (_, code) => tally.record("answered", code.unwrap_or("ok")),
    }
}

/// Sends the kept regression inputs, then `workers` streams of samples for
/// `provider` until the campaign's time is up; checks the stream still
/// answers and nothing stray came. Returns the campaign and every tally
/// (failures included, for [`Campaign::finish`] to report).
pub async fn drive(
    campaign: Campaign,
    h: &ProviderHandle,
    provider: &str,
    workers: u64,
) -> (Campaign, Vec<Tally>) {
    let mut kept = campaign.tally();
    let dir = inbound_regressions();
    let inputs = regressions(&dir);
    assert!(
        !inputs.is_empty(),
        "no regression inputs in {}",
        dir.display()
    );
    for (name, bytes) in inputs {
        assert!(
            bytes.len() > 2 && bytes[0] == 0x0a && bytes[1] < 0x80,
            "{name} must start with its request id"
        );
        let id = String::from_utf8_lossy(&bytes[2..2 + usize::from(bytes[1])]).into_owned();
        let expect = expectation(&bytes, &id, name.contains("deep")).unwrap_or(Expect::Refused);
        exercise(h, &id, bytes, expect, &mut kept).await;
    }
    let campaign = Arc::new(campaign);
    let mut running = Vec::new();
    for w in 0..workers {
        let (campaign, h, provider) = (campaign.clone(), h.clone(), provider.to_owned());
        running.push(tokio::spawn(async move {
            let mut envelopes = Envelopes::new(campaign.rng(w));
            let mut tally = campaign.tally();
            let mut n = 0u64;
            // A closed stream fails every later input the same way: one is enough.
            while campaign.running() && !h.is_closed() {
                n += 1;
                let id = format!("w{w}-{n}");
                let sample = envelopes.sample(&id, &provider);
                let deep = sample.group_depth >= 1000;
                if let Some(expect) = expectation(&sample.bytes, &id, deep) {
                    exercise(&h, &id, sample.bytes, expect, &mut tally).await;
                }
            }
            tally
        }));
    }
    let mut tallies = vec![kept];
    for worker in running {
        tallies.push(worker.await.expect("a fuzz worker panicked"));
    }
    let mut end = last_request(&campaign, h, provider).await;
    if h.stray_messages() > 0 {
        end.fail(
            b"",
            format!(
                "{} answers to ids azd never sent, or to non-requests",
                h.stray_messages()
            ),
        );
    }
    if h.late_messages() > 0 {
        end.fail(
            b"",
            format!("{} messages after an answer", h.late_messages()),
        );
    }
    tallies.push(end);
    let campaign = Arc::try_unwrap(campaign).expect("every worker is done");
    (campaign, tallies)
}

/// A State sent last, which must be answered: the stream lived through it all.
pub(crate) async fn last_request(campaign: &Campaign, h: &ProviderHandle, provider: &str) -> Tally {
    let mut end = campaign.tally();
    let last = pb::ProvisioningMessage {
        request_id: "fuzz-last".into(),
        error: None,
        message_type: Some(pb::provisioning_message::MessageType::StateRequest(
            pb::ProvisioningStateRequest {
                options: None,
                provider_name: provider.to_owned(),
            },
        )),
    };
    match h.send_raw(last).await {
        Ok(_) => end.record("answered", "the last request"),
        Err(e) => end.fail(
            b"",
            format!("the stream does not answer after fuzzing: {e}"),
        ),
    }
    end
}
