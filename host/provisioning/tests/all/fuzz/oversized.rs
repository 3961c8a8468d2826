//! The quoted-field campaign (`azd_wasm_host_fuzz::oversized`) against the
//! ProvisioningManager over real loopback gRPC: requests with one field as long as
//! azd's messages allow, served by a provider that quotes what it is given (an error
//! naming its project and config, an output echoing its state hint, progress for every
//! deploy, an error for every ensure-env), while the manager quotes names it does not
//! serve. Every answer must fit
//! azd's 4 MiB (the simulated azd, as azd, ends the stream on one that does not), every
//! answerable request is answered once, and the stream serves on. Prints its figures;
//! `AZD_WASM_HOST_FUZZ_SECS` lengthens it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, ErrorCategory, Provider, ProviderError};
use azd_wasm_host_fuzz::Campaign;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{ProviderHandle, SimOptions};

use crate::common;

const NAME: &str = "quoting";
const WORKERS: u64 = 2;

/// Quotes whatever it is given.
struct Quoting;

#[async_trait]
impl Provider for Quoting {
    async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
        _: CallContext,
    ) -> Result<(), ProviderError> {
        let config = format!("{:?}", options.config);
        if config.len() > 1024 || project_path.len() > 1024 {
            return Err(ProviderError::local(
                "invalid_config",
                ErrorCategory::Validation,
                format!("cannot provision {project_path} with {config}"),
            )
            .with_suggestion(format!("fix {config}")));
        }
        Ok(())
    }
    async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
        _: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        let mut state = pb::ProvisioningState::default();
        state.outputs.insert(
            "HINT".into(),
            pb::ProvisioningOutputParameter {
                r#type: "string".into(),
                value: options.hint,
            },
        );
        Ok(pb::ProvisioningStateResult { state: Some(state) })
    }
    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        ctx.progress.report("deploying");
        Ok(pb::ProvisioningDeployResult::default())
    }
    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        ctx.progress.report("previewing");
        Ok(pb::ProvisioningPreviewResult::default())
    }
    async fn destroy(
        &self,
        _: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        ctx.progress.report("destroying");
        Ok(pb::ProvisioningDestroyResult::default())
    }
    async fn ensure_env(&self, _: CallContext) -> Result<(), ProviderError> {
        // An error answer, for ids too long to carry one.
        Err(ProviderError::local(
            "not_supported",
            ErrorCategory::Validation,
            "this provider keeps no environment of its own",
        ))
    }
    async fn parameters(
        &self,
        _: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        Ok(Vec::new())
    }
    async fn planned_outputs(
        &self,
        _: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        Ok(Vec::new())
    }
}

/// A manager serving [`Quoting`] (a fresh one each Initialize) on a simulated azd.
async fn serve() -> common::Served {
    let factory = || -> Result<Arc<dyn Provider>, ProviderError> { Ok(Arc::new(Quoting)) };
    common::serve(SimOptions::default(), Arc::new(factory), NAME).await
}

/// Initializes the provider, so that requests reach it.
async fn initialize(h: &ProviderHandle) {
    h.initialize(
        "/project",
        pb::ProvisioningOptions {
            provider: NAME.into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_oversized_fields_every_answer_fits_and_the_stream_serves_on() {
    let campaign = Campaign::new("oversized", 10);
    let served = serve().await;
    let (sim, serving) = (served.sim, served.serving);
    let h = served.handle.with_call_timeout(Duration::from_secs(20));
    initialize(&h).await;
    let (campaign, tallies) = azd_wasm_host_fuzz::oversized::drive(campaign, &h, WORKERS).await;
    assert!(!serving.is_finished(), "the dispatcher is still running");
    campaign.finish(tallies);
    sim.shutdown().await;
}

/// The case by itself: a 3 MB provider name is answered with a bounded error
/// naming what was asked, and the stream serves on.
#[tokio::test]
async fn a_3_mb_provider_name_is_answered_with_a_bounded_error_and_the_stream_serves_on() {
    use prost::Message as _;
    let served = serve().await;
    let (sim, h, serving) = (served.sim, served.handle, served.serving);
    let name = "n".repeat(3_000_000);
    let request = pb::ProvisioningMessage {
        request_id: "big-name".into(),
        error: None,
        message_type: Some(pb::provisioning_message::MessageType::StateRequest(
            pb::ProvisioningStateRequest {
                options: None,
                provider_name: name,
            },
        )),
    };
    let raw = h.send_raw(request).await.unwrap();
    assert_eq!(raw.answer.request_id, "big-name");
    let error = raw.answer.error.clone().unwrap();
    let size = raw.answer.encoded_len();
    eprintln!(
        "a 3 MB provider name: answered in {size} bytes: {}",
        error.message
    );
    assert!(size < 2048, "{size}");
    assert!(
        error.message.contains("not \"nnnn") && error.message.contains("(3000000 bytes)"),
        "{}",
        error.message
    );
    // The stream serves on.
    initialize(&h).await;
    h.state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    assert!(!serving.is_finished());
    sim.shutdown().await;
}

/// A storm: 2,000 requests sent without waiting for answers, every 40th with a field as
/// long as azd's messages allow, the rest small. Every one is answered once under its id,
/// no answer passes 4 MiB, and the stream serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_unawaited_requests_is_answered_and_the_stream_lives() {
    use azd_wasm_host_fuzz::oversized::Oversized;
    use prost::Message as _;
    let served = serve().await;
    let (sim, serving) = (served.sim, served.serving);
    let h = served.handle.with_call_timeout(Duration::from_secs(120));
    initialize(&h).await;
    let mut rng = fastrand::Rng::with_seed(2000);
    let mut calls = Vec::new();
    for i in 0..2000 {
        let id = format!("storm-{i}");
        let msg = if i % 40 == 0 {
            // Not one whose id is too long to answer: every request here must be.
            let mut sample = Oversized::random(&mut rng);
            sample.len = sample.len.min(3_000_000);
            sample.envelope(&id, NAME)
        } else {
            pb::ProvisioningMessage {
                request_id: id.clone(),
                error: None,
                message_type: Some(pb::provisioning_message::MessageType::StateRequest(
                    pb::ProvisioningStateRequest {
                        options: Some(pb::ProvisioningStateOptions { hint: id.clone() }),
                        provider_name: NAME.into(),
                    },
                )),
            }
        };
        let expected = msg.request_id.len();
        let what = format!("request {i}");
        let h = h.clone();
        calls.push(tokio::spawn(async move {
            let raw = h.send_raw(msg).await;
            (
                expected,
                raw.map_err(|e| {
                    format!(
                        "{what}: {}",
                        e.to_string().chars().take(80).collect::<String>()
                    )
                }),
            )
        }));
    }
    let mut answered = 0;
    let mut failed = Vec::new();
    let started = std::time::Instant::now();
    for call in calls {
        let (id_len, raw) = call.await.unwrap();
        match raw {
            Ok(raw) => {
                assert_eq!(raw.answer.request_id.len(), id_len);
                assert!(raw.answer.encoded_len() <= azd_wasm_host_proto::MAX_MESSAGE_BYTES);
                answered += 1;
            }
            Err(e) => failed.push(e),
        }
    }
    eprintln!(
        "storm: {answered} of 2000 answered, the last {:?} after the first was awaited",
        started.elapsed()
    );
    assert!(
        failed.is_empty(),
        "{} unanswered: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
    assert_eq!(h.stray_messages(), 0);
    assert_eq!(h.late_messages(), 0);
    // The stream serves on (the storm's last Initialize may have failed: any answer).
    let last = pb::ProvisioningMessage {
        request_id: "after-the-storm".into(),
        error: None,
        message_type: Some(pb::provisioning_message::MessageType::StateRequest(
            pb::ProvisioningStateRequest {
                options: None,
                provider_name: NAME.into(),
            },
        )),
    };
    assert_eq!(
        h.send_raw(last).await.unwrap().answer.request_id,
        "after-the-storm"
    );
    assert!(!serving.is_finished());
    sim.shutdown().await;
}
