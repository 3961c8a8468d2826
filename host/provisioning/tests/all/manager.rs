//! The ProvisioningManager against the simulated azd, over real loopback gRPC,
//! with native (non-wasm) providers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, ErrorCategory, Provider, ProviderError, ProviderFactory};
use azd_wasm_host_fuzz::envelopes::group;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_provisioning::{AzdClient, ManagerError, ProvisioningManager, StreamEnd};
use azd_wasm_host_sim::{CallError, ProviderHandle, SimAzd, SimOptions};
use pb::provisioning_message::MessageType;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

const NAME: &str = "fake";
const WAIT: Duration = Duration::from_secs(10);

/// Shared knobs and observations of the fake provider.
#[derive(Default)]
struct Script {
    /// Progress messages deploy reports.
    deploy_progress: usize,
    /// Deploy waits for this before answering, when set.
    deploy_gate: Option<Arc<Notify>>,
    /// Told when a deploy starts.
    deploy_started: Option<mpsc::Sender<()>>,
    /// Told when a call sees its cancellation.
    cancelled: Option<mpsc::Sender<String>>,
    /// Outputs deploy returns.
    deploy_outputs: Vec<(String, String, String)>,
    /// Names planned_outputs returns.
    planned: usize,
    /// When set, deploy keeps its progress reporter past its answer, and once
    /// the gate opens reports through it 50 times, then says so on `late_done`.
    late_gate: Option<(Arc<Notify>, mpsc::Sender<()>)>,
    /// When set, an initialize of the layer named "slow" says it started, then
    /// waits for the gate.
    slow_init: Option<(Arc<Notify>, mpsc::Sender<()>)>,
    /// Instances created.
    created: AtomicUsize,
    /// Times the factory was told an Initialize is coming.
    prepared: AtomicUsize,
}

struct Fake {
    script: Arc<Script>,
    layer: std::sync::Mutex<String>,
}

fn output(ty: &str, value: &str) -> pb::ProvisioningOutputParameter {
    pb::ProvisioningOutputParameter {
        r#type: ty.into(),
        value: value.into(),
    }
}

#[async_trait]
impl Provider for Fake {
    async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
        _ctx: CallContext,
    ) -> Result<(), ProviderError> {
        if project_path == "/bad" {
            return Err(ProviderError::local(
                "bad_project",
                ErrorCategory::Validation,
                "no such project",
            )
            .with_suggestion("pick another"));
        }
        if let Some((gate, started)) = self
            .script
            .slow_init
            .as_ref()
            .filter(|_| options.name == "slow")
        {
            let _ = started.send(()).await;
            gate.notified().await;
        }
        *self.layer.lock().unwrap() = options.name;
        Ok(())
    }

    async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        // Must not reach azd: it would be taken for the answer.
        ctx.progress.report("reading state");
        if let Some(us) = options.hint.strip_prefix("sleep:") {
            let us: u64 = us.parse().unwrap_or(0);
            tokio::time::sleep(Duration::from_micros(us % 2000)).await;
        }
        let mut state = pb::ProvisioningState::default();
        state
            .outputs
            .insert("HINT".into(), output("string", &options.hint));
        state.outputs.insert(
            "LAYER".into(),
            output("String", &self.layer.lock().unwrap().clone()),
        );
        Ok(pb::ProvisioningStateResult { state: Some(state) })
    }

    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        let layer = self.layer.lock().unwrap().clone();
        if let Some(tx) = &self.script.deploy_started {
            let _ = tx.send(()).await;
        }
        for i in 0..self.script.deploy_progress {
            ctx.progress.report(format!("step {i}"));
        }
        if let Some(gate) = &self.script.deploy_gate {
            tokio::select! {
                () = gate.notified() => {}
                () = ctx.cancel.cancelled() => {
                    if let Some(tx) = &self.script.cancelled {
                        let _ = tx.send(ctx.request_id.clone()).await;
                    }
                    return Err(ProviderError::local("cancelled", ErrorCategory::Internal, "cancelled"));
                }
            }
        }
        // A reporter kept past the answer must not leak messages after it.
        if let Some((gate, done)) = self.script.late_gate.clone() {
            let late = ctx.progress.clone();
            tokio::spawn(async move {
                gate.notified().await;
                for _ in 0..50 {
                    late.report("too late");
                }
                let _ = done.send(()).await;
            });
        }
        let mut deployment = pb::ProvisioningDeployment::default();
        deployment
            .outputs
            .insert("LAYER".into(), output("string", &layer));
        for (k, t, v) in &self.script.deploy_outputs {
            deployment.outputs.insert(k.clone(), output(t, v));
        }
        Ok(pb::ProvisioningDeployResult {
            deployment: Some(deployment),
            skipped_reason: 0,
        })
    }

    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        ctx.progress.report("diffing");
        // Leaves `preview` out: the manager must fill it, or azd would crash.
        Ok(pb::ProvisioningPreviewResult { preview: None })
    }

    async fn destroy(
        &self,
        options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        ctx.progress.report("deleting");
        Ok(pb::ProvisioningDestroyResult {
            invalidated_env_keys: vec![format!("FORCE_{}_PURGE_{}", options.force, options.purge)],
        })
    }

    async fn ensure_env(&self, _ctx: CallContext) -> Result<(), ProviderError> {
        Err(ProviderError {
            message: "quota".into(),
            origin: azd_wasm_host_core::ErrorOrigin::Service,
            suggestion: "ask".into(),
            links: vec![azd_wasm_host_core::ErrorLink {
                url: "https://example.com".into(),
                title: "docs".into(),
            }],
            detail: Some(azd_wasm_host_core::ErrorDetail::Service {
                error_code: "QuotaExceeded".into(),
                status_code: 409,
                service_name: "svc".into(),
            }),
        })
    }

    async fn parameters(
        &self,
        _ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        panic!("the parameters handler blew up");
    }

    async fn planned_outputs(
        &self,
        _ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        Ok((0..self.script.planned)
            .map(|i| pb::ProvisioningPlannedOutput {
                // A variable's name (azd takes planned outputs as such), 64 bytes.
                name: format!("O{i:0>63}"),
            })
            .collect())
    }
}

struct FakeFactory(Arc<Script>);

#[async_trait]
impl ProviderFactory for FakeFactory {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        self.0.created.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(Fake {
            script: self.0.clone(),
            layer: std::sync::Mutex::new(String::new()),
        }))
    }

    fn prepare(&self) {
        self.0.prepared.fetch_add(1, Ordering::SeqCst);
    }
}

struct Setup {
    sim: SimAzd,
    manager: Arc<ProvisioningManager>,
    handle: ProviderHandle,
    serving: tokio::task::JoinHandle<Result<StreamEnd, ManagerError>>,
}

async fn setup(script: Script) -> Setup {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let client = AzdClient::connect(&sim.address(), &sim.token())
        .await
        .unwrap();
    let manager = ProvisioningManager::new(client);
    let script = Arc::new(script);
    // The simulated azd, like azd, answers the stream only after our first
    // message: a client that waits for azd first would hang here.
    tokio::time::timeout(
        WAIT,
        manager.register(Arc::new(FakeFactory(script.clone())), NAME),
    )
    .await
    .expect("registration must not wait for azd to speak first")
    .unwrap();
    let serving = {
        let m = manager.clone();
        tokio::spawn(async move { m.receive(CancellationToken::new()).await })
    };
    assert_eq!(
        script.prepared.load(Ordering::SeqCst),
        0,
        "prepared before Ready"
    );
    manager.ready().await.unwrap();
    assert_eq!(
        script.prepared.load(Ordering::SeqCst),
        1,
        "Ready must tell the factory, once, that an Initialize is coming"
    );
    let handle = sim.provider(NAME, WAIT).await.unwrap();
    Setup {
        sim,
        manager,
        handle,
        serving,
    }
}

fn options(layer: &str) -> pb::ProvisioningOptions {
    pb::ProvisioningOptions {
        provider: NAME.into(),
        name: layer.into(),
        ..Default::default()
    }
}

fn local_code(e: &CallError) -> String {
    match e {
        CallError::Extension(e) => ProviderError::from_wire(e)
            .code()
            .unwrap_or_default()
            .to_owned(),
        other => panic!("expected an extension error, got {other:?}"),
    }
}

#[tokio::test]
async fn full_lifecycle_with_every_handler() {
    let s = setup(Script {
        deploy_progress: 3,
        deploy_outputs: vec![("COUNT".into(), "int".into(), "3".into())],
        ..Default::default()
    })
    .await;
    assert_eq!(s.manager.provider_name().as_deref(), Some(NAME));
    assert_eq!(s.sim.ready_calls(), 1);
    s.handle.initialize("/proj", options("")).await.unwrap();

    let mut seen = Vec::new();
    let d = s.handle.deploy(|p| seen.push(p.clone())).await.unwrap();
    let outs = d.deployment.unwrap().outputs;
    assert_eq!(outs["COUNT"].r#type, "number", "int is normalised");
    // The fake also keeps a reporter past its answer: what it sends before the
    // answer is legitimate progress; only the steps are counted here.
    seen.retain(|p| p.message.starts_with("step"));
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|p| !p.request_id.is_empty() && p.timestamp > 0)
    );

    let st = s
        .handle
        .state(pb::ProvisioningStateOptions { hint: "h1".into() })
        .await
        .unwrap();
    let state = st.state.unwrap();
    assert_eq!(state.outputs["HINT"].value, "h1");
    assert_eq!(state.outputs["LAYER"].r#type, "string");

    let mut pv = Vec::new();
    let p = s
        .handle
        .preview(|m| pv.push(m.message.clone()))
        .await
        .unwrap();
    assert!(p.preview.is_some(), "a missing preview is filled");
    assert_eq!(pv, vec!["diffing".to_string()]);

    let mut dv = Vec::new();
    let r = s
        .handle
        .destroy(
            pb::ProvisioningDestroyOptions {
                force: true,
                purge: false,
            },
            |m| dv.push(m.message.clone()),
        )
        .await
        .unwrap();
    assert_eq!(r.invalidated_env_keys, vec!["FORCE_true_PURGE_false"]);
    assert_eq!(dv, vec!["deleting".to_string()]);

    // A service error keeps every field on the way to azd.
    match s.handle.ensure_env().await.unwrap_err() {
        CallError::Extension(e) => {
            let e = ProviderError::from_wire(&e);
            assert_eq!(e.message, "quota");
            assert_eq!(e.origin, azd_wasm_host_core::ErrorOrigin::Service);
            assert_eq!(e.links.len(), 1);
            assert!(matches!(
                e.detail,
                Some(azd_wasm_host_core::ErrorDetail::Service {
                    status_code: 409,
                    ..
                })
            ));
        }
        other => panic!("{other:?}"),
    }
    assert!(s.handle.planned_outputs().await.unwrap().is_empty());
    assert_eq!(s.handle.late_messages(), 0);
    assert_eq!(s.handle.stray_messages(), 0);
}

#[tokio::test]
async fn concurrent_first_callers_share_one_stream() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let client = AzdClient::connect(&sim.address(), &sim.token())
        .await
        .unwrap();
    let manager = ProvisioningManager::new(client);
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let m = manager.clone();
        tasks.push(tokio::spawn(async move { m.ensure_stream().await }));
    }
    for t in futures::future::join_all(tasks).await {
        t.unwrap();
    }
    manager
        .register(Arc::new(FakeFactory(Arc::default())), NAME)
        .await
        .unwrap();
    assert_eq!(sim.streams_opened(), 1, "one stream for every caller");
}

#[tokio::test]
async fn the_stream_outlives_the_caller_that_opened_it() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let client = AzdClient::connect(&sim.address(), &sim.token())
        .await
        .unwrap();
    let manager = ProvisioningManager::new(client);
    // Open the stream from a task that then ends.
    let m = manager.clone();
    tokio::spawn(async move { m.ensure_stream().await })
        .await
        .unwrap();
    manager
        .register(Arc::new(FakeFactory(Arc::default())), NAME)
        .await
        .unwrap();
    assert_eq!(sim.registrations(), vec![NAME.to_string()]);
}

#[tokio::test]
async fn azd_refusals_of_a_name_become_errors() {
    let s = setup(Script::default()).await;
    let empty = s
        .manager
        .register(Arc::new(FakeFactory(Arc::default())), "")
        .await
        .unwrap_err();
    assert!(matches!(empty, ManagerError::Refused { .. }), "{empty}");

    let client = AzdClient::connect(&s.sim.address(), &s.sim.token())
        .await
        .unwrap();
    let second = ProvisioningManager::new(client);
    let dup = second
        .register(Arc::new(FakeFactory(Arc::default())), NAME)
        .await
        .unwrap_err();
    match dup {
        ManagerError::Refused { message, .. } => {
            assert!(message.to_lowercase().contains("already"), "{message}");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn auth_is_refused_without_a_token_and_with_a_bad_one() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let other = SimAzd::start(SimOptions::default()).await.unwrap();
    let bad = other.token(); // signed with another run's key, for another address
    for token in ["", "not-a-jwt", bad.as_str()] {
        let client = AzdClient::connect(&sim.address(), token).await.unwrap();
        let manager = ProvisioningManager::new(client);
        let err = manager
            .register(Arc::new(FakeFactory(Arc::default())), NAME)
            .await
            .unwrap_err();
        match err {
            ManagerError::Stream(azd_wasm_host_provisioning::BrokerError::Open(status)) => {
                assert_eq!(
                    status.code(),
                    tonic::Code::Unauthenticated,
                    "token {token:?}"
                );
            }
            other => panic!("{other}"),
        }
        assert!(sim.registrations().is_empty());
    }
}

#[tokio::test]
async fn requests_before_initialize_or_for_another_provider_get_errors() {
    let s = setup(Script::default()).await;
    let e = s.handle.deploy(|_| {}).await.unwrap_err();
    assert_eq!(local_code(&e), "not_initialized");

    let mut wrong = options("");
    wrong.provider = "someone-else".into();
    let e = s.handle.initialize("/proj", wrong).await.unwrap_err();
    assert_eq!(local_code(&e), "unknown_provider");

    s.handle.initialize("/proj", options("")).await.unwrap();
    let raw = s
        .handle
        .send_raw(pb::ProvisioningMessage {
            request_id: String::new(),
            error: None,
            message_type: Some(MessageType::StateRequest(pb::ProvisioningStateRequest {
                options: None,
                provider_name: "someone-else".into(),
            })),
        })
        .await
        .unwrap();
    let err = raw.answer.error.expect("an error answer");
    assert!(err.message.contains("someone-else"), "{}", err.message);

    // A failed initialize leaves no instance behind.
    let e = s.handle.initialize("/bad", options("")).await.unwrap_err();
    assert_eq!(local_code(&e), "bad_project");
    let e = s.handle.deploy(|_| {}).await.unwrap_err();
    match e {
        CallError::Extension(e) => assert!(
            e.message.contains("last Initialize failed"),
            "{}",
            e.message
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_empty_message_kind_gets_an_error_answer_with_its_id() {
    let s = setup(Script::default()).await;
    let raw = s
        .handle
        .send_raw(pb::ProvisioningMessage {
            request_id: "odd-1".into(),
            error: None,
            message_type: None,
        })
        .await
        .unwrap();
    assert_eq!(raw.answer.request_id, "odd-1");
    let err = raw.answer.error.expect("an error answer");
    assert!(matches!(
        err.source,
        Some(pb::extension_error::Source::LocalError(ref l)) if l.code == "unknown_request"
    ));
    // The stream still works.
    s.handle.initialize("/proj", options("")).await.unwrap();
}

#[tokio::test]
async fn progress_outside_deploy_preview_destroy_is_not_sent() {
    let s = setup(Script::default()).await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let raw = s
        .handle
        .send_raw(pb::ProvisioningMessage {
            request_id: String::new(),
            error: None,
            message_type: Some(MessageType::StateRequest(pb::ProvisioningStateRequest {
                options: Some(pb::ProvisioningStateOptions { hint: "x".into() }),
                provider_name: NAME.into(),
            })),
        })
        .await
        .unwrap();
    assert!(raw.progress.is_empty());
    assert!(
        matches!(raw.answer.message_type, Some(MessageType::StateResponse(_))),
        "the first message for a state request must be its answer"
    );
}

#[tokio::test]
async fn a_thousand_progress_reports_reach_azd_paced_in_order_and_none_after_the_answer() {
    let gate = Arc::new(Notify::new());
    let (done_tx, mut done) = mpsc::channel(1);
    let s = setup(Script {
        deploy_progress: 1000,
        late_gate: Some((gate.clone(), done_tx)),
        ..Default::default()
    })
    .await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let mut got = Vec::new();
    let mut ids = std::collections::HashSet::new();
    s.handle
        .deploy(|p| {
            got.push(p.message.clone());
            ids.insert(p.request_id.clone());
        })
        .await
        .unwrap();
    // Reported faster than azd can show them in order, they are paced: the
    // first leaves at once, a few wait their turn, the latest wins the rest.
    let steps: Vec<u32> = got
        .iter()
        .map(|m| m.strip_prefix("step ").unwrap().parse().unwrap())
        .collect();
    assert_eq!(steps.first(), Some(&0), "{got:?}");
    assert_eq!(
        steps.last(),
        Some(&999),
        "the latest step is shown: {got:?}"
    );
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "in order: {got:?}");
    assert!(steps.len() <= 10, "a flood is thinned: {got:?}");
    assert_eq!(ids.len(), 1, "all progress carries the deploy's id");
    // The answer has arrived; now the provider's leftover reporter tries 50
    // times. A round trip after it finished flushes anything it queued.
    gate.notify_one();
    done.recv().await.expect("the leftover reporter finished");
    s.handle.initialize("/proj", options("")).await.unwrap();
    assert_eq!(s.handle.late_messages(), 0);
}

#[tokio::test]
async fn two_hundred_overlapping_requests_are_each_answered_once_with_their_own_id() {
    let s = setup(Script::default()).await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let mut calls = Vec::new();
    for i in 0..200u64 {
        let h = s.handle.clone();
        calls.push(tokio::spawn(async move {
            let hint = format!("sleep:{}", (i * 7919) % 2000);
            let r = h
                .state(pb::ProvisioningStateOptions { hint: hint.clone() })
                .await
                .unwrap();
            (hint, r.state.unwrap().outputs["HINT"].value.clone())
        }));
    }
    for c in calls {
        let (sent, echoed) = c.await.unwrap();
        assert_eq!(sent, echoed);
    }
    assert_eq!(s.handle.late_messages(), 0);
    assert_eq!(s.handle.stray_messages(), 0);
}

#[tokio::test]
async fn a_long_deploy_does_not_block_state() {
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::channel(1);
    let s = setup(Script {
        deploy_gate: Some(gate.clone()),
        deploy_started: Some(started_tx),
        ..Default::default()
    })
    .await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let h = s.handle.clone();
    let deploy = tokio::spawn(async move { h.deploy(|_| {}).await });
    started.recv().await.unwrap();
    let st = s
        .handle
        .state(pb::ProvisioningStateOptions {
            hint: "while".into(),
        })
        .await
        .unwrap();
    assert_eq!(st.state.unwrap().outputs["HINT"].value, "while");
    assert!(!deploy.is_finished());
    gate.notify_one();
    deploy.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_panicking_handler_becomes_an_error_answer() {
    let s = setup(Script::default()).await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let e = s.handle.parameters().await.unwrap_err();
    match &e {
        CallError::Extension(err) => {
            let err = ProviderError::from_wire(err);
            assert_eq!(err.code(), Some("handler_panicked"));
            assert!(err.message.contains("blew up"), "{}", err.message);
        }
        other => panic!("{other:?}"),
    }
    // The stream survives.
    s.handle
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_oversized_answer_is_replaced_by_an_error_and_the_stream_survives() {
    // 70,000 names of 64 bytes ≈ 4.7 MB, over azd's 4 MiB.
    let s = setup(Script {
        planned: 70_000,
        ..Default::default()
    })
    .await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let e = s.handle.planned_outputs().await.unwrap_err();
    assert_eq!(local_code(&e), "answer_too_large");
    s.handle
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn bad_output_types_are_refused_not_sent() {
    let s = setup(Script {
        deploy_outputs: vec![("WHEN".into(), "datetime".into(), "now".into())],
        ..Default::default()
    })
    .await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let e = s.handle.deploy(|_| {}).await.unwrap_err();
    assert_eq!(local_code(&e), "invalid_output_type");
}

/// azd's order decides which instance is current, not the order the
/// Initializes finish in: an earlier, slower one must not replace a later one.
#[tokio::test]
async fn instances_become_current_in_the_order_azd_sent_the_initializes() {
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::channel(1);
    let s = setup(Script {
        slow_init: Some((gate.clone(), started_tx)),
        ..Default::default()
    })
    .await;
    let slow = tokio::spawn({
        let h = s.handle.clone();
        async move { h.initialize("/proj", options("slow")).await }
    });
    started.recv().await.expect("the slow initialize started");
    s.handle.initialize("/proj", options("fast")).await.unwrap();
    gate.notify_one();
    slow.await.unwrap().unwrap();
    let st = s.handle.state(Default::default()).await.unwrap();
    assert_eq!(st.state.unwrap().outputs["LAYER"].value, "fast");
}

#[tokio::test]
async fn re_initialize_makes_a_fresh_instance_and_running_requests_keep_theirs() {
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::channel(1);
    let script = Script {
        deploy_gate: Some(gate.clone()),
        deploy_started: Some(started_tx),
        ..Default::default()
    };
    let s = setup(script).await;
    s.handle
        .initialize("/proj", options("layer0"))
        .await
        .unwrap();
    let h = s.handle.clone();
    let deploy = tokio::spawn(async move { h.deploy(|_| {}).await });
    started.recv().await.unwrap();
    s.handle
        .initialize("/proj", options("layer1"))
        .await
        .unwrap();
    gate.notify_one();
    let d = deploy.await.unwrap().unwrap();
    assert_eq!(d.deployment.unwrap().outputs["LAYER"].value, "layer0");
    let st = s
        .handle
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    assert_eq!(st.state.unwrap().outputs["LAYER"].value, "layer1");
}

/// A deploy that holds its answer until it is cancelled, started: the setup,
/// the call, and where the provider says which request saw its cancellation.
async fn deploy_held_open() -> (
    Setup,
    tokio::task::JoinHandle<Result<pb::ProvisioningDeployResult, CallError>>,
    mpsc::Receiver<String>,
) {
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::channel(1);
    let (cancel_tx, cancelled) = mpsc::channel(1);
    let s = setup(Script {
        deploy_gate: Some(gate),
        deploy_started: Some(started_tx),
        cancelled: Some(cancel_tx),
        ..Default::default()
    })
    .await;
    s.handle.initialize("/proj", options("")).await.unwrap();
    let h = s.handle.clone();
    let deploy = tokio::spawn(async move { h.deploy(|_| {}).await });
    started.recv().await.unwrap();
    (s, deploy, cancelled)
}

#[tokio::test]
async fn cancellation_reaches_the_provider_when_the_stream_ends() {
    let (s, deploy, mut cancelled) = deploy_held_open().await;
    let t0 = Instant::now();
    s.sim.close_streams();
    let id = tokio::time::timeout(WAIT, cancelled.recv())
        .await
        .expect("the provider saw the cancellation")
        .unwrap();
    assert!(!id.is_empty());
    tokio::time::timeout(Duration::from_secs(1), s.serving)
        .await
        .expect("receive returns within 1 s of the stream ending")
        .unwrap()
        .unwrap();
    eprintln!("stream end → receive returned in {:?}", t0.elapsed());
    assert!(matches!(
        deploy.await.unwrap(),
        Err(CallError::StreamClosed)
    ));
}

#[tokio::test]
async fn ready_waits_for_the_dispatcher() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let client = AzdClient::connect(&sim.address(), &sim.token())
        .await
        .unwrap();
    let manager = ProvisioningManager::new(client);
    manager
        .register(Arc::new(FakeFactory(Arc::default())), NAME)
        .await
        .unwrap();
    // Until receive() dispatches, ready() has nothing it could finish on, so
    // this wait can only time out (it never fails a correct build); a ready()
    // that did not wait would call azd and finish well within it.
    let mut ready = Box::pin(manager.ready());
    assert!(
        tokio::time::timeout(Duration::from_millis(500), ready.as_mut())
            .await
            .is_err(),
        "ready() must wait for receive()"
    );
    assert_eq!(sim.ready_calls(), 0);
    let m = manager.clone();
    let _serving = tokio::spawn(async move { m.receive(CancellationToken::new()).await });
    tokio::time::timeout(WAIT, ready).await.unwrap().unwrap();
    assert_eq!(sim.ready_calls(), 1);
}

/// `msg`'s bytes as prost writes them.
fn bytes_of(msg: &pb::ProvisioningMessage) -> Vec<u8> {
    prost::Message::encode_to_vec(msg)
}

/// A state request with id `id` and hint `hint`.
fn state_request(id: &str, hint: &str) -> pb::ProvisioningMessage {
    pb::ProvisioningMessage {
        request_id: id.into(),
        error: None,
        message_type: Some(MessageType::StateRequest(pb::ProvisioningStateRequest {
            options: Some(pb::ProvisioningStateOptions { hint: hint.into() }),
            provider_name: NAME.into(),
        })),
    }
}

fn hint_of(answer: &pb::ProvisioningMessage) -> String {
    match &answer.message_type {
        Some(MessageType::StateResponse(r)) => r
            .state_result
            .as_ref()
            .and_then(|s| s.state.as_ref())
            .map(|s| s.outputs["HINT"].value.clone())
            .unwrap_or_default(),
        other => panic!("expected a state response, got {other:?} ({answer:?})"),
    }
}

#[tokio::test]
async fn an_envelope_with_an_unknown_group_field_is_answered_normally() {
    let s = setup(Script::default()).await;
    s.handle
        .initialize("/proj", options("layer1"))
        .await
        .unwrap();
    // A group holding a varint and a nested group, after the body (as a newer
    // azd's extra field would come) and before it.
    let unknown = group(
        1000,
        &[&[0x08, 0x2a][..], &group(7, &[0x10, 0x01])].concat(),
    );
    let after = [bytes_of(&state_request("g-after", "a")), unknown.clone()].concat();
    let before = [unknown, bytes_of(&state_request("g-before", "b"))].concat();
    for (id, hint, bytes) in [("g-after", "a", after), ("g-before", "b", before)] {
        let raw = s.handle.send_bytes(id, bytes.into()).await.unwrap();
        assert_eq!(raw.answer.request_id, id);
        assert!(raw.answer.error.is_none(), "{:?}", raw.answer.error);
        assert_eq!(hint_of(&raw.answer), hint);
    }
}

#[tokio::test]
async fn garbage_after_a_request_id_is_answered_with_invalid_message_and_the_stream_serves_on() {
    let s = setup(Script::default()).await;
    s.handle
        .initialize("/proj", options("layer1"))
        .await
        .unwrap();
    // The id, then a state request whose body claims more bytes than follow.
    let garbage = [
        &[0x0a, 5][..],
        b"bad-1",
        &[0x32, 0x7f, 0x12, 0x03, 0xff, 0x00],
    ]
    .concat();
    let raw = s.handle.send_bytes("bad-1", garbage.into()).await.unwrap();
    assert_eq!(raw.answer.request_id, "bad-1");
    let err = ProviderError::from_wire(&raw.answer.error.expect("an error answer"));
    assert_eq!(err.code(), Some("invalid_message"), "{err:?}");
    assert!(err.message.contains("the state request"), "{}", err.message);
    assert!(
        matches!(&err.detail, Some(azd_wasm_host_core::ErrorDetail::Local { category, .. }) if category == "validation"),
        "{err:?}"
    );
    // Nothing to answer in bytes with no id: nothing comes back.
    s.handle.push_bytes(vec![0xff; 12].into()).await.unwrap();
    // The stream still serves, in order.
    let st = s
        .handle
        .state(pb::ProvisioningStateOptions {
            hint: "after".into(),
        })
        .await
        .unwrap();
    assert_eq!(st.state.unwrap().outputs["HINT"].value, "after");
    assert_eq!(s.handle.stray_messages(), 0);
    assert_eq!(s.handle.late_messages(), 0);
    assert!(!s.serving.is_finished());
}

#[tokio::test]
async fn azd_dropping_the_connection_after_its_last_answer_is_a_clean_end() {
    let s = setup(Script::default()).await;
    s.handle
        .initialize("/proj", options("layer1"))
        .await
        .unwrap();
    s.handle
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    // azd's process ends: no stream end, the connection just goes.
    s.sim.cut_connections();
    let end = tokio::time::timeout(WAIT, s.serving)
        .await
        .expect("receive returns once the connection is gone")
        .unwrap()
        .unwrap();
    assert!(matches!(end, StreamEnd::ClosedByAzd), "{end:?}");
}

#[tokio::test]
async fn azd_dropping_the_connection_mid_deploy_names_the_request_it_cut_short() {
    let (s, deploy, mut cancelled) = deploy_held_open().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.sim.cut_connections();
    let end = tokio::time::timeout(WAIT, s.serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let StreamEnd::Interrupted { cause, unanswered } = end else {
        panic!("expected an interrupted end, got {end:?}");
    };
    assert_eq!(unanswered.len(), 1, "{unanswered:?}");
    let cut = &unanswered[0];
    assert_eq!(cut.kind, Some(azd_wasm_host_proto::RequestKind::Deploy));
    assert!(cut.running_for >= Duration::from_millis(50), "{cut}");
    assert!(cut.to_string().starts_with("deploy "), "{cut}");
    // The transport failed (as when azd's process ends), not a stream end.
    assert!(cause.starts_with("the connection to azd ended"), "{cause}");
    eprintln!("cut mid-deploy: {cause}; unanswered: {cut}");
    // The provider was stopped: the same request saw its cancellation.
    let id = tokio::time::timeout(WAIT, cancelled.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(id, cut.request_id);
    assert!(deploy.await.unwrap().is_err());
}
