//! The benchmark's floor: the thinnest azd extension our stack allows. It does what the
//! sidecar's transport does (tonic over loopback, one current-thread runtime, the token on
//! every call, the provisioning stream, Register, Ready) and nothing else: every answer is
//! made ahead, no provider, no guest, no checks. Driven beside the sidecar and the Go SDK
//! extension, it says how much of a round trip belongs to azd's side and the kernel (which
//! no extension can take away) and how much to the extension's own work.
//!
//! Built by `scripts/bench.sh` (`cargo build --release -p azd-wasm-host --example
//! floor_extension --features bench-floor`) and started as azd starts an extension:
//! `floor_extension listen`, `AZD_SERVER`, `AZD_ACCESS_TOKEN`. Serves provider `bench`: State
//! answers the bench provider's two outputs; Deploy reports one progress message (the last of
//! the count Initialize's `progress` config names) and answers; the rest answer empty.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::extension_service_client::ExtensionServiceClient;
use azd_wasm_host_proto::azdext::provisioning_message::MessageType;
use azd_wasm_host_proto::azdext::provisioning_service_client::ProvisioningServiceClient;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataValue;
use tonic::transport::Endpoint;

const PROVIDER: &str = "bench";

fn outputs() -> std::collections::BTreeMap<String, pb::ProvisioningOutputParameter> {
    let output = |t: &str, v: &str| pb::ProvisioningOutputParameter {
        r#type: t.into(),
        value: v.into(),
    };
    [
        ("GREETING".to_owned(), output("string", "hello")),
        ("COUNT".to_owned(), output("number", "3")),
    ]
    .into()
}

/// The count of progress messages Initialize's config names (a decimal string).
fn progress_count(options: Option<&pb::ProvisioningOptions>) -> u64 {
    use prost_types::value::Kind;
    options
        .and_then(|o| o.config.as_ref())
        .and_then(|c| c.fields.get("progress"))
        .and_then(|v| match &v.kind {
            Some(Kind::StringValue(s)) => s.parse().ok(),
            Some(Kind::NumberValue(n)) => Some(*n as u64),
            _ => None,
        })
        .unwrap_or(100_000)
}

/// The answer (and any progress before it) to one of azd's requests.
fn answer(request: pb::ProvisioningMessage, progress: &mut u64) -> Vec<pb::ProvisioningMessage> {
    let id = request.request_id;
    let reply = |m: MessageType| pb::ProvisioningMessage {
        request_id: id.clone(),
        error: None,
        message_type: Some(m),
    };
    let Some(kind) = request.message_type else {
        return Vec::new();
    };
    match kind {
        MessageType::InitializeRequest(r) => {
            *progress = progress_count(r.options.as_ref());
            vec![reply(MessageType::InitializeResponse(Default::default()))]
        }
        MessageType::StateRequest(_) => vec![reply(MessageType::StateResponse(
            pb::ProvisioningStateResponse {
                state_result: Some(pb::ProvisioningStateResult {
                    state: Some(pb::ProvisioningState {
                        outputs: outputs(),
                        resources: Vec::new(),
                    }),
                }),
            },
        ))],
        MessageType::DeployRequest(_) => {
            let millis = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            vec![
                reply(MessageType::ProgressMessage(
                    pb::ProvisioningProgressMessage {
                        request_id: id.clone(),
                        message: progress.saturating_sub(1).to_string(),
                        timestamp: millis,
                    },
                )),
                reply(MessageType::DeployResponse(
                    pb::ProvisioningDeployResponse {
                        result: Some(pb::ProvisioningDeployResult {
                            deployment: Some(pb::ProvisioningDeployment {
                                parameters: Default::default(),
                                outputs: outputs(),
                            }),
                            skipped_reason: 0,
                        }),
                    },
                )),
            ]
        }
        MessageType::PreviewRequest(_) => vec![reply(MessageType::PreviewResponse(
            pb::ProvisioningPreviewResponse {
                result: Some(pb::ProvisioningPreviewResult {
                    preview: Some(Default::default()),
                }),
            },
        ))],
        MessageType::DestroyRequest(_) => {
            vec![reply(MessageType::DestroyResponse(Default::default()))]
        }
        MessageType::ParametersRequest(_) => {
            vec![reply(MessageType::ParametersResponse(Default::default()))]
        }
        MessageType::PlannedOutputsRequest(_) => vec![reply(MessageType::PlannedOutputsResponse(
            Default::default(),
        ))],
        MessageType::EnsureEnvRequest(_) => {
            vec![reply(MessageType::EnsureEnvResponse(Default::default()))]
        }
        _ => Vec::new(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    anyhow::ensure!(
        std::env::args().nth(1).as_deref() == Some("listen"),
        "usage: floor_extension listen (with AZD_SERVER and AZD_ACCESS_TOKEN, as azd starts it)"
    );
    let server = std::env::var("AZD_SERVER").context("AZD_SERVER is not set")?;
    let token: MetadataValue<_> = std::env::var("AZD_ACCESS_TOKEN")
        .context("AZD_ACCESS_TOKEN is not set")?
        .parse()
        .context("the token is not a header value")?;
    let channel = Endpoint::from_shared(format!("http://{server}"))?
        .tcp_nodelay(true)
        .connect()
        .await?;
    let auth = move |mut req: tonic::Request<()>| {
        req.metadata_mut().insert("authorization", token.clone());
        Ok(req)
    };
    let mut provisioning =
        ProvisioningServiceClient::with_interceptor(channel.clone(), auth.clone());
    let (tx, rx) = tokio::sync::mpsc::channel(1024);
    // Queued before the stream opens: azd's server sends its headers only with its first
    // message, the registration's answer.
    tx.send(pb::ProvisioningMessage {
        request_id: "register".into(),
        error: None,
        message_type: Some(MessageType::RegisterProvisioningProviderRequest(
            pb::RegisterProvisioningProviderRequest {
                name: PROVIDER.into(),
            },
        )),
    })
    .await?;
    let mut inbound = provisioning
        .stream(ReceiverStream::new(rx))
        .await?
        .into_inner();
    let registered = inbound.message().await?.context("the stream ended")?;
    anyhow::ensure!(
        registered.error.is_none(),
        "registration refused: {registered:?}"
    );
    ExtensionServiceClient::with_interceptor(channel, auth)
        .ready(pb::ReadyRequest {})
        .await?;
    let mut progress = 100_000;
    // Until azd stops its server (the stream fails): that is how every command ends.
    while let Ok(Some(request)) = inbound.message().await {
        for message in answer(request, &mut progress) {
            tx.send(message).await?;
        }
    }
    Ok(())
}
