//! The simulated azd against a raw tonic client: azd's token rules, the capability check,
//! registration on the stream, and request/answer routing (progress order, late and stray
//! messages, protocol checks, azd going away).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers; a failed unwrap is a failed test"
)]

use std::time::Duration;

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{
    CallError, ExtensionClaims, SimAzd, SimOptions, SpawnOptions, TOKEN_LIFETIME, unix_now,
};
use pb::extension_service_client::ExtensionServiceClient;
use pb::provisioning_message::MessageType;
use pb::provisioning_service_client::ProvisioningServiceClient;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status, Streaming};

/// Generous bound for anything that should happen at once.
const SOON: Duration = Duration::from_secs(10);

async fn channel(sim: &SimAzd) -> Channel {
    Endpoint::from_shared(format!("http://{}", sim.address()))
        .unwrap()
        .connect()
        .await
        .unwrap()
}

fn authed<T>(body: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(body);
    if let Some(t) = token {
        r.metadata_mut().insert("authorization", t.parse().unwrap());
    }
    r
}

async fn ready(sim: &SimAzd, token: Option<&str>) -> Result<(), Status> {
    let mut client = ExtensionServiceClient::new(channel(sim).await);
    client
        .ready(authed(pb::ReadyRequest {}, token))
        .await
        .map(|_| ())
}

type Opening =
    tokio::task::JoinHandle<Result<tonic::Response<Streaming<pb::ProvisioningMessage>>, Status>>;

/// The extension's end of a provisioning stream, driven by hand.
///
/// Like azd (grpc-go), the simulated azd answers the stream call only after the
/// extension's first message, so the call is awaited lazily, on the first receive.
struct RawExtension {
    tx: mpsc::Sender<pb::ProvisioningMessage>,
    opening: Option<Opening>,
    rx: Option<Streaming<pb::ProvisioningMessage>>,
}

impl RawExtension {
    async fn open(sim: &SimAzd, token: Option<&str>) -> Self {
        let (tx, rx) = mpsc::channel(16);
        let mut client = ProvisioningServiceClient::new(channel(sim).await);
        let request = authed(ReceiverStream::new(rx), token);
        let opening = tokio::spawn(async move { client.stream(request).await });
        Self {
            tx,
            opening: Some(opening),
            rx: None,
        }
    }

    /// The stream, once azd has answered the call (panics if it refused).
    async fn inbound(&mut self) -> &mut Streaming<pb::ProvisioningMessage> {
        if let Some(opening) = self.opening.take() {
            let resp = tokio::time::timeout(SOON, opening)
                .await
                .expect("the simulated azd did not answer the stream call")
                .unwrap()
                .expect("the stream was refused");
            self.rx = Some(resp.into_inner());
        }
        self.rx.as_mut().expect("stream opened")
    }

    /// azd's refusal of the stream: sends a first message (azd answers the call
    /// only then) and returns the status the call failed with.
    async fn refusal(mut self) -> Status {
        let _ = self
            .tx
            .send(pb::ProvisioningMessage {
                request_id: "probe".into(),
                error: None,
                message_type: Some(MessageType::RegisterProvisioningProviderRequest(
                    pb::RegisterProvisioningProviderRequest {
                        name: "probe".into(),
                    },
                )),
            })
            .await;
        let opening = self.opening.take().expect("not yet opened");
        match tokio::time::timeout(SOON, opening)
            .await
            .expect("no answer")
            .unwrap()
        {
            Ok(_) => panic!("the stream was accepted"),
            Err(status) => status,
        }
    }

    async fn send(&self, request_id: &str, body: MessageType) {
        self.tx
            .send(pb::ProvisioningMessage {
                request_id: request_id.into(),
                error: None,
                message_type: Some(body),
            })
            .await
            .unwrap();
    }

    async fn recv(&mut self) -> Option<pb::ProvisioningMessage> {
        let rx = self.inbound().await;
        tokio::time::timeout(SOON, rx.message())
            .await
            .expect("no message from the simulated azd")
            .unwrap()
    }

    async fn register(&mut self, request_id: &str, name: &str) -> pb::ProvisioningMessage {
        self.send(
            request_id,
            MessageType::RegisterProvisioningProviderRequest(
                pb::RegisterProvisioningProviderRequest { name: name.into() },
            ),
        )
        .await;
        self.recv()
            .await
            .expect("stream ended instead of a registration answer")
    }

    async fn progress(&self, request_id: &str, text: &str) {
        self.send(
            request_id,
            MessageType::ProgressMessage(pb::ProvisioningProgressMessage {
                request_id: request_id.into(),
                message: text.into(),
                timestamp: 1_700_000_000_000,
            }),
        )
        .await;
    }
}

fn deployment_with_output(name: &str, ty: &str, value: &str) -> pb::ProvisioningDeployResponse {
    pb::ProvisioningDeployResponse {
        result: Some(pb::ProvisioningDeployResult {
            deployment: Some(pb::ProvisioningDeployment {
                parameters: Default::default(),
                outputs: [(
                    name.to_owned(),
                    pb::ProvisioningOutputParameter {
                        r#type: ty.into(),
                        value: value.into(),
                    },
                )]
                .into(),
            }),
            skipped_reason: 0,
        }),
    }
}

/// Starts a sim, opens a stream with a valid token and registers `name` on it.
async fn registered(name: &str) -> (SimAzd, RawExtension, azd_wasm_host_sim::ProviderHandle) {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut ext = RawExtension::open(&sim, Some(&sim.token())).await;
    let answer = ext.register("reg-1", name).await;
    assert!(answer.error.is_none(), "{answer:?}");
    let handle = sim.provider(name, SOON).await.unwrap();
    (sim, ext, handle)
}

#[tokio::test]
async fn ready_with_a_valid_token_works() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    assert!(sim.address().starts_with("127.0.0.1:"));
    assert_eq!(sim.ready_calls(), 0);
    ready(&sim, Some(&sim.token())).await.unwrap();
    assert_eq!(sim.ready_calls(), 1);
    sim.wait_ready(SOON).await.unwrap();

    // The token claims are what azd signs.
    let header = jsonwebtoken::decode_header(&sim.token()).unwrap();
    assert_eq!(header.alg, jsonwebtoken::Algorithm::HS256);

    // The environment azd gives an extension.
    let env: std::collections::HashMap<_, _> = sim.env().into_iter().collect();
    assert_eq!(env["AZD_SERVER"], sim.address());
    assert_eq!(env["AZD_NO_PROMPT"], "true");
    assert_eq!(env["FORCE_COLOR"], "1");
    assert!(env["TRACEPARENT"].starts_with("00-"));
    ready(&sim, Some(&env["AZD_ACCESS_TOKEN"])).await.unwrap();
    assert_eq!(sim.ready_calls(), 2);
    sim.shutdown().await;
}

#[tokio::test]
async fn bad_tokens_are_unauthenticated() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let id = sim.options().extension_id.clone();
    let good = ExtensionClaims::new(
        &sim.address(),
        &id,
        &["provisioning-provider"],
        TOKEN_LIFETIME,
    );

    let other_key = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &good,
        &jsonwebtoken::EncodingKey::from_secret(b"some other azd run's key........"),
    )
    .unwrap();
    let other_audience = sim.sign(&ExtensionClaims::new(
        "127.0.0.1:1",
        &id,
        &["provisioning-provider"],
        TOKEN_LIFETIME,
    ));
    let mut expired = good.clone();
    expired.iat = unix_now() - 7200;
    expired.exp = unix_now() - 60;
    let expired = sim.sign(&expired);
    let bearer = format!("Bearer {}", sim.token());

    let cases: [(&str, Option<&str>); 5] = [
        ("no token", None),
        ("another key", Some(&other_key)),
        ("another audience", Some(&other_audience)),
        ("expired", Some(&expired)),
        ("Bearer prefix", Some(&bearer)),
    ];
    for (what, token) in cases {
        let err = ready(&sim, token).await.expect_err(what);
        assert_eq!(err.code(), Code::Unauthenticated, "{what}: {err:?}");
        assert_eq!(err.message(), "invalid token", "{what}");
        let err = RawExtension::open(&sim, token).await.refusal().await;
        assert_eq!(err.code(), Code::Unauthenticated, "{what}: {err:?}");
    }
    assert_eq!(sim.ready_calls(), 0);

    // A well-signed token for an extension azd has not installed.
    let stranger = sim.token_with("someone.else", &["provisioning-provider"], TOKEN_LIFETIME);
    let err = ready(&sim, Some(&stranger)).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");

    // The good one, for contrast.
    ready(&sim, Some(&sim.sign(&good))).await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn stream_without_the_capability_is_permission_denied() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let id = sim.options().extension_id.clone();
    let no_cap = sim.token_with(&id, &["custom-commands"], TOKEN_LIFETIME);
    // Ready does not need the capability...
    ready(&sim, Some(&no_cap)).await.unwrap();
    // ...the provisioning stream does.
    let err = RawExtension::open(&sim, Some(&no_cap))
        .await
        .refusal()
        .await;
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");

    // A sim whose extension lacks the capability hands out such tokens itself.
    let plain = SimAzd::start(SimOptions {
        capabilities: vec![],
        extension_id: "x.y".into(),
        ..SimOptions::default()
    })
    .await
    .unwrap();
    let err = RawExtension::open(&plain, Some(&plain.token()))
        .await
        .refusal()
        .await;
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
    plain.shutdown().await;
    sim.shutdown().await;
}

#[tokio::test]
async fn registration_answers_and_refusals() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut a = RawExtension::open(&sim, Some(&sim.token())).await;

    let ok = a.register("r1", "files").await;
    assert_eq!(ok.request_id, "r1");
    assert!(ok.error.is_none());
    assert!(matches!(
        ok.message_type,
        Some(MessageType::RegisterProvisioningProviderResponse(_))
    ));

    for (id, name) in [("r2", ""), ("r3", "   ")] {
        let empty = a.register(id, name).await;
        assert_eq!(empty.request_id, id);
        assert!(empty.message_type.is_none());
        let msg = empty.error.expect("error for an empty name").message;
        assert!(
            msg.contains("InvalidArgument") && msg.contains("empty"),
            "{msg}"
        );
    }

    // The same name again, from another stream of the same extension.
    let mut b = RawExtension::open(&sim, Some(&sim.token())).await;
    let dup = b.register("r4", "files").await;
    assert_eq!(dup.request_id, "r4");
    let msg = dup.error.expect("error for a duplicate").message;
    assert!(
        msg.contains("AlreadyExists") && msg.contains("files"),
        "{msg}"
    );

    let other = b.register("r5", "other").await;
    assert!(other.error.is_none());
    assert_eq!(sim.registrations(), ["files", "other"]);

    // Nothing else was counted as stray: registrations are azd's own business.
    let h = sim.provider("files", SOON).await.unwrap();
    assert_eq!(h.stray_messages(), 0);
    let err = sim
        .provider("nobody", Duration::from_millis(50))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nobody"), "{err}");
    sim.shutdown().await;
}

#[tokio::test]
async fn deploy_sees_progress_in_order_then_the_answer_and_late_messages_are_counted() {
    let (sim, mut ext, handle) = registered("manual").await;

    // The extension, by hand: progress, a stray, the answer, then a late message.
    let extension = tokio::spawn(async move {
        let req = ext.recv().await.unwrap();
        let Some(MessageType::DeployRequest(d)) = &req.message_type else {
            panic!("expected a deploy request, got {req:?}");
        };
        assert_eq!(d.provider_name, "manual");
        let id = req.request_id.clone();
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
        for text in ["one", "two", "", "three"] {
            ext.progress(&id, text).await;
        }
        ext.progress("never-sent-id", "stray").await;
        ext.send(
            &id,
            MessageType::DeployResponse(deployment_with_output("url", "string", "http://x")),
        )
        .await;
        ext.progress(&id, "too late").await;

        // Answer the next request only after the late message is on the wire, so the
        // simulated azd has routed it by the time this answer arrives.
        let req = ext.recv().await.unwrap();
        assert!(matches!(
            req.message_type,
            Some(MessageType::ParametersRequest(_))
        ));
        ext.send(
            &req.request_id,
            MessageType::ParametersResponse(pb::ProvisioningParametersResponse {
                parameters: vec![pb::ProvisioningParameter {
                    name: "p".into(),
                    ..Default::default()
                }],
            }),
        )
        .await;
        ext
    });

    let mut seen = Vec::new();
    let result = handle
        .deploy(|p| seen.push((p.request_id.clone(), p.message.clone())))
        .await
        .unwrap();
    let texts: Vec<&str> = seen.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(texts, ["one", "two", "", "three"]);
    assert!(seen.iter().all(|(id, _)| id == &seen[0].0));
    let outputs = &result.deployment.unwrap().outputs;
    assert_eq!(outputs["url"].value, "http://x");

    let params = handle.parameters().await.unwrap();
    assert_eq!(params.len(), 1);
    assert_eq!(handle.late_messages(), 1);
    assert_eq!(handle.stray_messages(), 1);
    extension.await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn answers_that_would_break_azd_are_protocol_errors() {
    let (sim, mut ext, handle) = registered("strict").await;
    let extension = tokio::spawn(async move {
        // 1. deploy answered without `deployment`.
        let req = ext.recv().await.unwrap();
        ext.send(
            &req.request_id,
            MessageType::DeployResponse(pb::ProvisioningDeployResponse {
                result: Some(pb::ProvisioningDeployResult {
                    deployment: None,
                    skipped_reason: 0,
                }),
            }),
        )
        .await;
        // 2. state answered with a progress message first.
        let req = ext.recv().await.unwrap();
        ext.progress(&req.request_id, "working").await;
        ext.send(
            &req.request_id,
            MessageType::StateResponse(pb::ProvisioningStateResponse::default()),
        )
        .await;
        // 3. deploy with an output type azd does not know.
        let req = ext.recv().await.unwrap();
        ext.send(
            &req.request_id,
            MessageType::DeployResponse(deployment_with_output("n", "int", "1")),
        )
        .await;
        // 4. initialize answered with the wrong kind.
        let req = ext.recv().await.unwrap();
        ext.send(
            &req.request_id,
            MessageType::EnsureEnvResponse(pb::ProvisioningEnsureEnvResponse {}),
        )
        .await;
        // 5. an error envelope.
        let req = ext.recv().await.unwrap();
        ext.tx
            .send(pb::ProvisioningMessage {
                request_id: req.request_id.clone(),
                error: Some(pb::ExtensionError {
                    message: "nope".into(),
                    origin: pb::ErrorOrigin::Local as i32,
                    suggestion: "fix it".into(),
                    links: Vec::new(),
                    source: Some(pb::extension_error::Source::LocalError(
                        pb::LocalErrorDetail {
                            code: "bad_config".into(),
                            category: "validation".into(),
                        },
                    )),
                }),
                message_type: None,
            })
            .await
            .unwrap();
        ext
    });

    let err = handle.deploy(|_| {}).await.unwrap_err();
    assert!(
        matches!(&err, CallError::Protocol(m) if m.contains("deployment")),
        "{err:?}"
    );
    let err = handle.state(Default::default()).await.unwrap_err();
    assert!(
        matches!(&err, CallError::Protocol(m) if m.contains("progress")),
        "{err:?}"
    );
    let err = handle.deploy(|_| {}).await.unwrap_err();
    assert!(
        matches!(&err, CallError::Protocol(m) if m.contains("\"int\"")),
        "{err:?}"
    );
    let err = handle
        .initialize("/tmp/p", pb::ProvisioningOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CallError::Protocol(m) if m.contains("ensure_env_response")),
        "{err:?}"
    );
    match handle.planned_outputs().await.unwrap_err() {
        CallError::Extension(e) => {
            assert_eq!(e.message, "nope");
            assert!(matches!(
                e.source,
                Some(pb::extension_error::Source::LocalError(ref l)) if l.code == "bad_config"
            ));
            assert_eq!(e.suggestion, "fix it");
        }
        other => panic!("{other:?}"),
    }
    // The real state answer after the progress message was late.
    assert_eq!(handle.late_messages(), 1);
    let _ext = extension.await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn azd_going_away_ends_the_stream_and_pending_calls() {
    let (sim, mut ext, handle) = registered("goner").await;
    let call = tokio::spawn({
        let handle = handle.clone();
        async move { handle.deploy(|_| {}).await }
    });
    // The request reached the extension; now azd goes away before the answer.
    let req = ext.recv().await.unwrap();
    assert!(matches!(
        req.message_type,
        Some(MessageType::DeployRequest(_))
    ));
    sim.close_streams();
    assert!(ext.recv().await.is_none(), "the extension sees EOF");
    let result = tokio::time::timeout(SOON, call).await.unwrap().unwrap();
    assert!(matches!(result, Err(CallError::StreamClosed)), "{result:?}");
    assert!(handle.is_closed());
    assert!(matches!(
        handle.ensure_env().await,
        Err(CallError::StreamClosed)
    ));
    sim.shutdown().await;
}

#[tokio::test]
async fn extension_closing_its_stream_fails_pending_calls_and_unregisters() {
    let (sim, ext, handle) = registered("leaver").await;
    let RawExtension { tx, rx, .. } = ext;
    let mut rx = rx.expect("registered, so the stream is open");
    let call = tokio::spawn({
        let handle = handle.clone();
        async move { handle.parameters().await }
    });
    let req = tokio::time::timeout(SOON, rx.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(
        req.message_type,
        Some(MessageType::ParametersRequest(_))
    ));
    drop(tx); // half-close: azd's broker sees EOF
    let result = tokio::time::timeout(SOON, call).await.unwrap().unwrap();
    assert!(matches!(result, Err(CallError::StreamClosed)), "{result:?}");
    // azd answers EOF by ending the stream and forgetting the providers.
    assert!(
        tokio::time::timeout(SOON, rx.message())
            .await
            .unwrap()
            .unwrap()
            .is_none()
    );
    assert!(sim.registrations().is_empty(), "{:?}", sim.registrations());
    sim.shutdown().await;
}

#[tokio::test]
async fn send_raw_and_call_timeout() {
    let (sim, mut ext, handle) = registered("raw").await;
    let extension = tokio::spawn(async move {
        let req = ext.recv().await.unwrap();
        assert_eq!(req.request_id, "my-own-id");
        ext.progress(&req.request_id, "p1").await;
        ext.send(
            &req.request_id,
            MessageType::DestroyResponse(pb::ProvisioningDestroyResponse {
                result: Some(pb::ProvisioningDestroyResult {
                    invalidated_env_keys: vec!["K".into()],
                }),
            }),
        )
        .await;
        // Receive the next request and never answer it.
        let _unanswered = ext.recv().await.unwrap();
        ext
    });
    let raw = handle
        .send_raw(pb::ProvisioningMessage {
            request_id: "my-own-id".into(),
            error: None,
            message_type: Some(MessageType::DestroyRequest(
                pb::ProvisioningDestroyRequest {
                    options: Some(pb::ProvisioningDestroyOptions {
                        force: true,
                        purge: true,
                    }),
                    provider_name: "raw".into(),
                },
            )),
        })
        .await
        .unwrap();
    assert_eq!(raw.progress.len(), 1);
    assert_eq!(raw.progress[0].message, "p1");
    assert_eq!(raw.answer.request_id, "my-own-id");
    assert!(matches!(
        raw.answer.message_type,
        Some(MessageType::DestroyResponse(_))
    ));

    let quick = handle.with_call_timeout(Duration::from_millis(200));
    assert!(matches!(
        quick.planned_outputs().await,
        Err(CallError::Timeout)
    ));
    let _ext = extension.await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn spawn_extension_reports_an_early_exit_with_its_stderr() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    // `sh -c SCRIPT listen --debug`: the script sees `listen` as $0, `--debug` as $1 and
    // azd's environment.
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(concat!(
            r#"echo "arg=$0 $1 server=$AZD_SERVER noprompt=$AZD_NO_PROMPT debug=$AZD_DEBUG "#,
            r#"cwd=$AZD_CWD env=$AZD_ENVIRONMENT mine=$MINE" >&2; exit 3"#
        ))
        .env("MINE", "kept")
        .env("AZD_ENVIRONMENT", "callers-wins");
    let opts = SpawnOptions {
        capture_stderr: true,
        debug: true,
        cwd: Some("/some/project".into()),
        environment: Some("dev".into()),
        ..SpawnOptions::default()
    };
    let err = sim
        .spawn_extension_with(cmd, opts)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("exited before calling ExtensionService/Ready"),
        "{err}"
    );
    assert!(err.contains("exit status: 3"), "{err}");
    let expected = format!(
        "arg=listen --debug server={} noprompt=true debug=true cwd=/some/project env=callers-wins mine=kept",
        sim.address()
    );
    assert!(err.contains(&expected), "{err}");
    assert!(
        !err.contains(&sim.token()),
        "the token is never in messages"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn spawn_extension_kills_an_extension_that_never_gets_ready() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut cmd = tokio::process::Command::new("sh");
    // Says something, then hangs without ever calling Ready.
    cmd.arg("-c").arg("echo starting >&2; exec sleep 600");
    let opts = SpawnOptions {
        capture_stderr: true,
        ready_timeout: Some(Duration::from_millis(300)),
        ..SpawnOptions::default()
    };
    let started = std::time::Instant::now();
    let err = sim
        .spawn_extension_with(cmd, opts)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < SOON,
        "gave up late: {:?}",
        started.elapsed()
    );
    assert!(
        err.contains("did not call ExtensionService/Ready within 300ms"),
        "{err}"
    );
    assert!(err.contains("killed it"), "{err}");
    assert!(
        err.contains("starting"),
        "stderr is part of the error: {err}"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn gzip_from_the_extension_is_accepted() {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let (tx, rx) = mpsc::channel(4);
    let mut client = ProvisioningServiceClient::new(channel(&sim).await)
        .send_compressed(tonic::codec::CompressionEncoding::Gzip);
    // Queued before the call: azd answers the call only after a first message.
    tx.send(pb::ProvisioningMessage {
        request_id: "z".into(),
        error: None,
        message_type: Some(MessageType::RegisterProvisioningProviderRequest(
            pb::RegisterProvisioningProviderRequest {
                name: "zipped".repeat(1000),
            },
        )),
    })
    .await
    .unwrap();
    let mut inbound = client
        .stream(authed(ReceiverStream::new(rx), Some(&sim.token())))
        .await
        .unwrap()
        .into_inner();
    let answer = tokio::time::timeout(SOON, inbound.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer.request_id, "z");
    assert!(answer.error.is_none(), "{answer:?}");
    sim.shutdown().await;
}

#[tokio::test]
async fn an_oversized_message_kills_the_stream_and_the_name_stays_taken() {
    let (sim, mut ext, handle) = registered("big").await;
    // Over azd's 4 MiB limit: azd's receive fails and it ends the stream with an error,
    // skipping its cleanup, so the name cannot register again until azd restarts.
    ext.progress(
        "whatever",
        &"x".repeat(azd_wasm_host_proto::MAX_MESSAGE_BYTES + 1),
    )
    .await;
    let end = tokio::time::timeout(SOON, ext.inbound().await.message())
        .await
        .unwrap();
    let status = end.expect_err("the stream ends with an error status");
    assert_eq!(status.code(), Code::Unknown, "{status:?}");
    assert!(
        status.message().contains("stream receive failed"),
        "{status:?}"
    );
    assert!(matches!(
        handle.ensure_env().await,
        Err(CallError::StreamClosed)
    ));
    assert_eq!(sim.registrations(), ["big"]);
    let mut again = RawExtension::open(&sim, Some(&sim.token())).await;
    let dup = again.register("r", "big").await;
    assert!(dup.error.unwrap().message.contains("AlreadyExists"));
    sim.shutdown().await;
}

/// Prints what one request/answer round trip through the simulated azd costs (a hand
/// answering client on loopback); asserts only that every answer arrived.
#[tokio::test]
async fn round_trip_cost_is_printed() {
    const CALLS: u32 = 2000;
    let (sim, mut ext, handle) = registered("bench").await;
    let answering = tokio::spawn(async move {
        let mut answered = 0u32;
        while let Some(req) = ext.inbound().await.message().await.ok().flatten() {
            ext.send(
                &req.request_id,
                MessageType::PlannedOutputsResponse(pb::ProvisioningPlannedOutputsResponse {
                    planned_outputs: vec![pb::ProvisioningPlannedOutput { name: "o".into() }],
                }),
            )
            .await;
            answered += 1;
        }
        answered
    });
    let start = std::time::Instant::now();
    for _ in 0..CALLS {
        assert_eq!(handle.planned_outputs().await.unwrap().len(), 1);
    }
    let per_call = start.elapsed() / CALLS;
    eprintln!(
        "sim azd round trip (planned_outputs, loopback gRPC): {per_call:?} per call over {CALLS} calls"
    );
    sim.close_streams();
    assert_eq!(answering.await.unwrap(), CALLS);
    assert_eq!(handle.late_messages() + handle.stray_messages(), 0);
    sim.shutdown().await;
}
