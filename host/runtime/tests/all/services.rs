//! azd's services for providers (world 0.2.0): the `environment` and `prompt`
//! imports, granted by `[policy.azd]`, reaching an [`AzdServices`] (a fake here;
//! azd itself in `listen`, the simulated azd in `run`).
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all services::`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use azd_wasm_host_fixtures as fixtures;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, ErrorDetail, ProviderError, SelectQuestion, ServiceError,
    TextQuestion,
};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_runtime::RuntimeOptions;

use fixtures::harness::{Setup, code, options, with_azd};
use fixtures::{services_component, world_0_1_0_component};

/// azd's services, faked: one environment and a scripted answer to confirm.
#[derive(Default)]
struct FakeAzd {
    current: Option<String>,
    values: Mutex<BTreeMap<String, String>>,
    confirm_answer: bool,
    questions: Mutex<Vec<ConfirmQuestion>>,
    /// Every `(env, key)` read and `(env, key, value)` written.
    reads: Mutex<Vec<(String, String)>>,
    writes: Mutex<Vec<(String, String, String)>>,
}

#[async_trait]
impl AzdServices for FakeAzd {
    async fn current_environment(&self) -> Result<String, ServiceError> {
        self.current
            .clone()
            .ok_or_else(|| ServiceError::new("no default environment"))
    }
    async fn environment_values(&self, _env: &str) -> Result<Vec<(String, String)>, ServiceError> {
        Ok(self.values.lock().unwrap().clone().into_iter().collect())
    }
    async fn environment_value(&self, env: &str, key: &str) -> Result<String, ServiceError> {
        self.reads
            .lock()
            .unwrap()
            .push((env.to_owned(), key.to_owned()));
        Ok(self
            .values
            .lock()
            .unwrap()
            .get(key)
            .cloned()
            .unwrap_or_default())
    }
    async fn set_environment_value(
        &self,
        env: &str,
        key: &str,
        value: &str,
    ) -> Result<(), ServiceError> {
        self.writes
            .lock()
            .unwrap()
            .push((env.to_owned(), key.to_owned(), value.to_owned()));
        self.values
            .lock()
            .unwrap()
            .insert(key.to_owned(), value.to_owned());
        Ok(())
    }
    async fn confirm(&self, question: ConfirmQuestion) -> Result<bool, ServiceError> {
        self.questions.lock().unwrap().push(question);
        Ok(self.confirm_answer)
    }
    async fn prompt(&self, _: TextQuestion) -> Result<String, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
    async fn select(&self, _: SelectQuestion) -> Result<u32, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
}

fn fake() -> Arc<FakeAzd> {
    Arc::new(FakeAzd {
        current: Some("dev".into()),
        values: Mutex::new(BTreeMap::from([("REGION".into(), "westeurope".into())])),
        confirm_answer: true,
        ..FakeAzd::default()
    })
}

/// Loads the services fixture with `policy`, talking to `azd`.
fn load(
    policy: &str,
    azd: &Arc<FakeAzd>,
    environment: Option<&str>,
) -> (Setup, azd_wasm_host_runtime::LoadedProvider) {
    let setup = Setup::new(&services_component(), policy);
    let loaded = setup
        .try_load(RuntimeOptions {
            interactive: true,
            ..with_azd(azd.clone(), environment)
        })
        .unwrap();
    (setup, loaded)
}

fn read(key: &str) -> pb::ProvisioningStateOptions {
    pb::ProvisioningStateOptions { hint: key.into() }
}

fn category(e: &ProviderError) -> &str {
    match &e.detail {
        Some(ErrorDetail::Local { category, .. }) => category,
        _ => "",
    }
}

#[tokio::test]
async fn nothing_reaches_azd_without_a_grant() {
    let azd = fake();
    let (setup, loaded) = load("", &azd, Some("dev"));
    let p = setup.instance(&loaded).await;
    let e = p
        .state(read("REGION"), fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "not_granted", "{e}");
    assert_eq!(category(&e), "auth");
    assert!(e.suggestion.contains("environment = \"read\""), "{e:?}");
    let e = p
        .destroy(Default::default(), fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "not_granted", "{e}");
    assert!(e.suggestion.contains("prompt = true"), "{e:?}");
    assert!(azd.reads.lock().unwrap().is_empty());
    assert!(azd.questions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_read_grant_reads_the_commands_environment_and_cannot_write() {
    let azd = fake();
    let (setup, loaded) = load("[policy.azd]\nenvironment = \"read\"", &azd, Some("dev"));
    let p = setup.instance(&loaded).await;
    let got = p
        .state(read("REGION"), fixtures::harness::ctx("r"))
        .await
        .unwrap();
    assert_eq!(got.state.unwrap().resources[0].id, "westeurope");
    let none = p
        .state(read("UNSET"), fixtures::harness::ctx("r"))
        .await
        .unwrap();
    assert!(
        none.state.unwrap().resources.is_empty(),
        "unset reads as none"
    );
    assert_eq!(
        azd.reads.lock().unwrap()[0],
        ("dev".to_owned(), "REGION".to_owned())
    );
    let e = p.preview(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(code(&e), "not_granted", "{e}");
    assert!(e.suggestion.contains("read-write"), "{e:?}");
    assert!(azd.writes.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_read_write_grant_sets_values_in_azds_current_environment() {
    let azd = fake();
    // No name from azd's launch: the host asks azd for its current environment.
    let (setup, loaded) = load("[policy.azd]\nenvironment = \"read-write\"", &azd, None);
    let p = setup.instance(&loaded).await;
    p.preview(fixtures::harness::ctx("r")).await.unwrap();
    assert_eq!(
        azd.writes.lock().unwrap().clone(),
        [(
            "dev".to_owned(),
            "FIXTURE_KEY".to_owned(),
            "set by guest".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_prompt_grant_asks_azd_and_the_answer_reaches_the_guest() {
    for answer in [true, false] {
        let azd = Arc::new(FakeAzd {
            confirm_answer: answer,
            ..FakeAzd::default()
        });
        let (setup, loaded) = load("[policy.azd]\nprompt = true", &azd, Some("dev"));
        let p = setup.instance(&loaded).await;
        let r = p
            .destroy(Default::default(), fixtures::harness::ctx("r"))
            .await
            .unwrap();
        assert_eq!(r.invalidated_env_keys, [if answer { "yes" } else { "no" }]);
        let asked = azd.questions.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].message, "Remove everything?");
        assert_eq!(asked[0].default_value, None);
    }
}

/// A component built for the released world 0.1.0 (no services) still loads
/// and runs in this host.
#[tokio::test]
async fn a_component_built_for_world_0_1_0_still_runs() {
    let setup = Setup::new(&world_0_1_0_component(), "");
    let loaded = setup.load();
    let p = loaded.factory.create().await.unwrap();
    p.initialize(
        setup.project().to_str().unwrap(),
        options(),
        fixtures::harness::ctx("i"),
    )
    .await
    .unwrap();
    p.deploy(fixtures::harness::ctx("d")).await.unwrap();
    let report =
        azd_wasm_host_runtime::check(&setup.manifest(), &RuntimeOptions::default()).unwrap();
    assert_eq!(report.world, "azd:provisioning/provisioning-provider@0.1.0");
}

/// The provider profile-guided sidecars are trained with (`scripts/pgo.sh`)
/// serves a whole lifecycle with values, under its own manifest: a training
/// on errors would lay out the wrong code.
#[tokio::test]
async fn the_training_provider_answers_a_whole_lifecycle_with_values() {
    use azd_wasm_host_proto::RequestKind;
    use fixtures::harness::{ctx_with_channel, progress_text};
    use fixtures::{TRAINING_POLICY, TRAINING_PROGRESS, training_component};

    let azd = fake();
    let setup = Setup::with_manifest(
        &training_component(),
        "build/training.wasm",
        TRAINING_POLICY,
    );
    std::fs::create_dir_all(setup.project().join("infra")).unwrap();
    let loaded = setup.try_load(with_azd(azd.clone(), Some("dev"))).unwrap();
    let p = setup.instance(&loaded).await;
    assert_eq!(
        azd.reads.lock().unwrap().clone(),
        [("dev".to_owned(), "AZURE_ENV_NAME".to_owned())]
    );
    let state = |p: Arc<dyn azd_wasm_host_core::Provider>| async move {
        let got = p
            .state(read(""), fixtures::harness::ctx("s"))
            .await
            .unwrap();
        let state = got.state.unwrap();
        assert_eq!(state.resources.len(), 2, "{state:?}");
        state.outputs["STATE"].value.clone()
    };
    assert_eq!(state(p.clone()).await, "", "no file yet");

    let (c, mut rx) = ctx_with_channel(RequestKind::Deploy, "d");
    let deployed = p.deploy(c).await.unwrap();
    let deployment = deployed.deployment.unwrap();
    assert_eq!(deployment.outputs["COUNT"].value, "3");
    assert_eq!(deployment.parameters["location"].value, "westus3");
    let mut steps = Vec::new();
    while let Ok(m) = rx.try_recv() {
        steps.push(progress_text(&m).2);
    }
    assert_eq!(steps.len(), 10 + TRAINING_PROGRESS as usize);
    assert_eq!(steps[9], "step 10 of 10");
    assert!(
        steps[10..].iter().all(|s| s == "working"),
        "{:?}",
        &steps[10..]
    );
    let file = setup.project().join("infra/state.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "deployed\n");
    let made = setup.project().join("infra/resources");
    assert!(made.is_dir(), "deploy makes its folder");
    assert!(
        !setup.project().join("infra/state.tmp").exists(),
        "renamed into place"
    );
    assert_eq!(state(p.clone()).await, "deployed\n");

    let preview = p
        .preview(fixtures::harness::ctx("v"))
        .await
        .unwrap()
        .preview
        .unwrap();
    assert_eq!(preview.changes.len(), 1);
    let parameters = p.parameters(fixtures::harness::ctx("p")).await.unwrap();
    assert_eq!(parameters.len(), 2);
    assert!(
        parameters
            .iter()
            .any(|x| x.secret && x.using_env_var_mapping)
    );
    let planned = p
        .planned_outputs(fixtures::harness::ctx("o"))
        .await
        .unwrap();
    assert_eq!(planned.len(), 2);
    p.ensure_env(fixtures::harness::ctx("e")).await.unwrap();
    let destroyed = p
        .destroy(Default::default(), fixtures::harness::ctx("x"))
        .await
        .unwrap();
    assert_eq!(destroyed.invalidated_env_keys, ["STATE"]);
    assert!(!file.exists(), "destroy removes the state file");
    assert!(!made.exists(), "and its folder");
}
