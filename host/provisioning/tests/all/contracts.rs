//! azd's two contracts (`azdext` in every azd released so far, `azd.extensions.v1` in the
//! versioned contract expected after 1.34, with `azdext` as a counted bridge until it is
//! removed): the manager serves a whole lifecycle, azd's environment and prompts included,
//! against the simulated azd in each of its three modes, over real loopback gRPC, and the calls
//! it made are the ones it should have: none under `azdext` where azd serves
//! `azd.extensions.v1`.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use azd_wasm_host_core::{
    AzdServices, CallContext, ConfirmQuestion, Provider, ProviderError, TextQuestion,
};
use azd_wasm_host_proto::{Contract, azdext as pb};
use azd_wasm_host_provisioning::AzdClient;
use azd_wasm_host_sim::{
    ContractMode, NO_PROMPT_SUGGESTION, Prompter, SimAzd, SimEnvironment, SimOptions,
};
use tonic::Status;

use crate::common;

const NAME: &str = "versioned";
const WAIT: Duration = Duration::from_secs(10);

/// Confirms everything; refuses text questions as azd does under `--no-prompt`.
struct ConfirmOnly;

impl Prompter for ConfirmOnly {
    fn confirm(&self, _: &pb::ConfirmOptions) -> Result<bool, Status> {
        Ok(true)
    }
    fn prompt(&self, o: &pb::PromptOptions) -> Result<String, Status> {
        Err(Status::failed_precondition(format!(
            "prompt required but running in --no-prompt mode: {}",
            o.message
        )))
    }
    fn select(&self, _: &pb::SelectOptions) -> Result<i32, Status> {
        Ok(0)
    }
}

/// A provider that uses azd's services in deploy: reads a value, writes one, asks a
/// yes/no question and a text question (refused), and reports what it got.
struct Services(Arc<dyn AzdServices>);

fn output(value: &str) -> pb::ProvisioningOutputParameter {
    pb::ProvisioningOutputParameter {
        r#type: "string".into(),
        value: value.into(),
    }
}

#[async_trait]
impl Provider for Services {
    async fn initialize(
        &self,
        _: &str,
        _: pb::ProvisioningOptions,
        _: CallContext,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn state(
        &self,
        _: pb::ProvisioningStateOptions,
        _: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        let env = self.0.current_environment().await.map_err(service)?;
        let mut state = pb::ProvisioningState::default();
        state.outputs.insert("ENV".into(), output(&env));
        Ok(pb::ProvisioningStateResult { state: Some(state) })
    }
    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        ctx.progress.report("reading the environment");
        let greeting = self
            .0
            .environment_value("dev", "GREETING")
            .await
            .map_err(service)?;
        self.0
            .set_environment_value("dev", "SEEN", &greeting)
            .await
            .map_err(service)?;
        let confirmed = self
            .0
            .confirm(ConfirmQuestion {
                message: "Go on?".into(),
                default_value: None,
                help_message: String::new(),
            })
            .await
            .map_err(service)?;
        let refused = self
            .0
            .prompt(TextQuestion {
                message: "Your name?".into(),
                default_value: None,
                help_message: String::new(),
                placeholder: String::new(),
                secret: false,
                required: true,
            })
            .await
            .expect_err("text questions are refused");
        let mut deployment = pb::ProvisioningDeployment::default();
        deployment
            .outputs
            .insert("GREETING".into(), output(&greeting));
        deployment
            .outputs
            .insert("CONFIRMED".into(), output(&confirmed.to_string()));
        deployment
            .outputs
            .insert("SUGGESTION".into(), output(&refused.suggestion));
        Ok(pb::ProvisioningDeployResult {
            deployment: Some(deployment),
            skipped_reason: 0,
        })
    }
    async fn preview(
        &self,
        _: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        Ok(pb::ProvisioningPreviewResult::default())
    }
    async fn destroy(
        &self,
        _: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        ctx.progress.report("removing");
        Ok(pb::ProvisioningDestroyResult {
            invalidated_env_keys: vec!["SEEN".into()],
        })
    }
    async fn ensure_env(&self, _: CallContext) -> Result<(), ProviderError> {
        Ok(())
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

fn service(e: azd_wasm_host_core::ServiceError) -> ProviderError {
    ProviderError::local(
        "azd_service_failed",
        azd_wasm_host_core::ErrorCategory::Dependency,
        e.message,
    )
}

/// The whole lifecycle against a simulated azd serving `mode`; the paths the extension
/// called, the contract it settled on, and the time from connecting to Ready.
async fn lifecycle(mode: ContractMode) -> (Vec<String>, Option<Contract>, Duration) {
    // The factory makes [`Services`] over the client, set once connected.
    let services: Arc<OnceLock<Arc<dyn AzdServices>>> = Arc::new(OnceLock::new());
    let factory = {
        let services = services.clone();
        move || -> Result<Arc<dyn Provider>, ProviderError> {
            let services = services.get().expect("the client is set before Initialize");
            Ok(Arc::new(Services(services.clone())))
        }
    };
    let started = Instant::now();
    let served = common::serve(
        SimOptions {
            environment: Some(SimEnvironment {
                name: "dev".into(),
                values: BTreeMap::from([("GREETING".into(), "hello".into())]),
            }),
            prompter: Arc::new(ConfirmOnly),
            contract: mode,
            ..SimOptions::default()
        },
        Arc::new(factory),
        NAME,
    )
    .await;
    let to_ready = started.elapsed();
    let (sim, client, h, serving) = (served.sim, served.client, served.handle, served.serving);
    let _ = services.set(Arc::new(client.clone()));
    h.initialize(
        "/project",
        pb::ProvisioningOptions {
            provider: NAME.into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let mut progress = Vec::new();
    let deployed = h
        .deploy(|p| progress.push(p.message.clone()))
        .await
        .unwrap();
    let outputs = deployed.deployment.unwrap().outputs;
    assert_eq!(outputs["GREETING"].value, "hello", "{mode:?}");
    assert_eq!(outputs["CONFIRMED"].value, "true", "{mode:?}");
    assert_eq!(
        outputs["SUGGESTION"].value, NO_PROMPT_SUGGESTION,
        "{mode:?}: azd's suggestion is read from its status's details, whatever their type URL"
    );
    assert_eq!(progress, ["reading the environment"], "{mode:?}");
    assert_eq!(
        sim.environment()
            .unwrap()
            .values
            .get("SEEN")
            .map(String::as_str),
        Some("hello")
    );
    let state = h
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    assert_eq!(state.state.unwrap().outputs["ENV"].value, "dev");
    h.preview(|_| {}).await.unwrap();
    let destroyed = h
        .destroy(pb::ProvisioningDestroyOptions::default(), |_| {})
        .await
        .unwrap();
    assert_eq!(destroyed.invalidated_env_keys, ["SEEN"]);
    assert_eq!(h.stray_messages(), 0);
    assert_eq!(h.late_messages(), 0);
    sim.close_streams();
    let _ = tokio::time::timeout(WAIT, serving).await;
    let calls = sim.calls();
    sim.shutdown().await;
    (calls, client.contract(), to_ready)
}

/// The method names in `calls`, without their package.
fn methods(calls: &[String]) -> Vec<String> {
    let mut m: Vec<String> = calls
        .iter()
        .filter_map(|p| Contract::of_path(p).map(|(_, m)| m.to_owned()))
        .collect();
    m.sort();
    m.dedup();
    m
}

#[tokio::test]
async fn the_whole_lifecycle_is_served_in_each_contract_mode() {
    let every_service = [
        "EnvironmentService/GetCurrent",
        "EnvironmentService/GetValue",
        "EnvironmentService/SetValue",
        "ExtensionService/Ready",
        "PromptService/Confirm",
        "PromptService/Prompt",
        "ProvisioningService/Stream",
    ];
    for mode in ContractMode::ALL {
        let (calls, contract, to_ready) = lifecycle(mode).await;
        eprintln!("{}: {to_ready:?} to Ready; called {calls:#?}", mode.name());
        assert_eq!(methods(&calls), every_service, "{mode:?}: {calls:?}");
        let under = |c: Contract| {
            calls
                .iter()
                .filter(|p| matches!(Contract::of_path(p), Some((x, _)) if x == c))
                .count()
        };
        match mode {
            ContractMode::Legacy => {
                assert_eq!(contract, Some(Contract::Legacy));
                // One attempt under azd.extensions.v1, refused; everything else under azdext.
                assert_eq!(calls[0], "/azd.extensions.v1.ProvisioningService/Stream");
                assert_eq!(under(Contract::V1), 1, "{calls:?}");
                assert_eq!(under(Contract::Legacy), calls.len() - 1);
            }
            ContractMode::Both | ContractMode::V1 => {
                assert_eq!(contract, Some(Contract::V1));
                assert_eq!(
                    under(Contract::Legacy),
                    0,
                    "no call through the bridge: {calls:?}"
                );
            }
        }
    }
}

/// A call before the stream (as `listen` reports an error before it registers) decides
/// the contract too, with one round trip more only against an older azd.
#[tokio::test]
async fn a_unary_call_first_finds_the_contract_itself() {
    for (mode, expected) in [
        (ContractMode::Legacy, Contract::Legacy),
        (ContractMode::V1, Contract::V1),
    ] {
        let sim = SimAzd::start(SimOptions {
            contract: mode,
            ..SimOptions::default()
        })
        .await
        .unwrap();
        let client = AzdClient::connect(&sim.address(), &sim.token())
            .await
            .unwrap();
        client
            .report_error(pb::ExtensionError {
                message: "cannot start".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(client.contract(), Some(expected));
        assert_eq!(sim.reported_errors().len(), 1);
        // Decided once: the next call goes straight to the right name.
        client.ready().await.unwrap();
        let calls = sim.calls();
        let expected_calls = match mode {
            ContractMode::Legacy => vec![
                "/azd.extensions.v1.ExtensionService/ReportError",
                "/azdext.ExtensionService/ReportError",
                "/azdext.ExtensionService/Ready",
            ],
            _ => vec![
                "/azd.extensions.v1.ExtensionService/ReportError",
                "/azd.extensions.v1.ExtensionService/Ready",
            ],
        };
        assert_eq!(calls, expected_calls);
        sim.shutdown().await;
    }
}
