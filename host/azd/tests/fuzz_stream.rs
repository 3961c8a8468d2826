//! Fuzzing the whole inbound path over real loopback gRPC: the simulated azd
//! sends mutated envelopes of every kind (unknown fields of every wire type,
//! groups shallow and deep, cuts, flips, garbage after the id) to a
//! ProvisioningManager serving a native provider, and checks each against
//! prost's reading of the same bytes:
//!
//! - a request prost reads (or an empty envelope) gets exactly one answer,
//!   under its id, and never `invalid_message`;
//! - bytes prost cannot read, or nested past the host's limit, get exactly one
//!   answer under the id they start with: `invalid_message`;
//! - anything else (answers, progress, errors azd would not send unasked) gets
//!   no answer;
//! - and the stream lives through all of it: a State is served at the end.
//!
//! Bounded in time (`AZD_WASM_HOST_FUZZ_SECS` for longer runs); prints its
//! figures. The kept regression inputs (`tests/regressions/inbound/`) are sent
//! first.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_azd::{AzdClient, ProvisioningManager};
use azd_wasm_host_core::{CallContext, Provider, ProviderError, ProviderFactory};
use azd_wasm_host_fuzz::envelopes::Envelopes;
use azd_wasm_host_fuzz::{Campaign, Tally, regressions};
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{ProviderHandle, SimAzd, SimOptions};
use prost::Message as _;
use tokio_util::sync::CancellationToken;

const NAME: &str = "fuzzed";
const WORKERS: u64 = 8;

/// Answers everything at once; deploy, preview and destroy report progress.
struct Quick;

#[async_trait]
impl Provider for Quick {
    async fn initialize(
        &self,
        _project_path: &str,
        _options: pb::ProvisioningOptions,
        _ctx: CallContext,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn state(
        &self,
        _options: pb::ProvisioningStateOptions,
        _ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        Ok(pb::ProvisioningStateResult {
            state: Some(pb::ProvisioningState::default()),
        })
    }
    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        ctx.progress.report("deploying").await;
        Ok(pb::ProvisioningDeployResult::default())
    }
    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        ctx.progress.report("previewing").await;
        Ok(pb::ProvisioningPreviewResult::default())
    }
    async fn destroy(
        &self,
        _options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        ctx.progress.report("destroying").await;
        Ok(pb::ProvisioningDestroyResult::default())
    }
    async fn ensure_env(&self, _ctx: CallContext) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn parameters(
        &self,
        _ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        Ok(Vec::new())
    }
    async fn planned_outputs(
        &self,
        _ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        Ok(Vec::new())
    }
}

struct QuickFactory;

#[async_trait]
impl ProviderFactory for QuickFactory {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(Arc::new(Quick))
    }
}

/// What the host must do with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// One answer, not `invalid_message`.
    Answer,
    /// One answer: `invalid_message`.
    Refused,
    /// No answer.
    Nothing,
}

/// The expectation for `bytes`, which start with request id `id`; `None` when
/// the mutation gave them another id (they are not sent).
fn expectation(bytes: &[u8], id: &str, deep: bool) -> Option<Expect> {
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
    let code = answer.error.as_ref().map(|e| {
        ProviderError::from_wire(e)
            .code()
            .unwrap_or_default()
            .to_owned()
    });
    match (expect, code.as_deref()) {
        (Expect::Refused, Some("invalid_message")) => {
            let message = answer.error.map(|e| e.message).unwrap_or_default();
            tally.record("refused", &message);
        }
        (Expect::Answer, Some("invalid_message")) | (Expect::Refused, _) => {
            tally.fail(&bytes, format!("expected {expect:?}, got {answer:?}"));
        }
        (_, code) => tally.record("answered", code.unwrap_or("ok")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_the_stream_one_answer_per_readable_id_and_it_never_ends() {
    let campaign = Campaign::new("stream", 20);
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let client = AzdClient::connect(&sim.address(), &sim.token())
        .await
        .unwrap();
    let manager = ProvisioningManager::new(client);
    manager
        .register(Arc::new(QuickFactory), NAME)
        .await
        .unwrap();
    let serving = {
        let m = manager.clone();
        tokio::spawn(async move { m.receive(CancellationToken::new()).await })
    };
    manager.ready().await.unwrap();
    let h = sim
        .provider(NAME, Duration::from_secs(10))
        .await
        .unwrap()
        .with_call_timeout(Duration::from_secs(10));

    let mut kept = campaign.tally();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/inbound");
    for (name, bytes) in regressions(&dir) {
        // Each kept input starts with its id (field 1, a length under 128).
        assert_eq!(bytes[0], 0x0a, "{name} must start with its request id");
        let id = String::from_utf8(bytes[2..2 + usize::from(bytes[1])].to_vec()).unwrap();
        let deep = name.contains("deep");
        let expect = expectation(&bytes, &id, deep).unwrap_or(Expect::Refused);
        exercise(&h, &id, bytes, expect, &mut kept).await;
    }

    let campaign = Arc::new(campaign);
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (campaign, h) = (campaign.clone(), h.clone());
        workers.push(tokio::spawn(async move {
            let mut envelopes = Envelopes::new(campaign.rng(w));
            let mut tally = campaign.tally();
            let mut n = 0u64;
            while campaign.running() {
                n += 1;
                let id = format!("w{w}-{n}");
                let sample = envelopes.sample(&id, NAME);
                let deep = sample.group_depth >= 1000;
                let Some(expect) = expectation(&sample.bytes, &id, deep) else {
                    continue;
                };
                exercise(&h, &id, sample.bytes, expect, &mut tally).await;
            }
            tally
        }));
    }
    let mut tallies = vec![kept];
    for w in workers {
        tallies.push(w.await.unwrap());
    }
    // The stream lived through it all, and nothing came that azd did not ask for.
    let after = h.state(pb::ProvisioningStateOptions::default()).await;
    assert!(after.is_ok(), "the stream serves after fuzzing: {after:?}");
    assert!(!serving.is_finished(), "the dispatcher is still running");
    assert_eq!(
        h.stray_messages(),
        0,
        "answers to ids azd never sent, or to non-requests"
    );
    assert_eq!(h.late_messages(), 0, "messages after an answer");
    Arc::try_unwrap(campaign).unwrap().finish(tallies);
    sim.shutdown().await;
}
