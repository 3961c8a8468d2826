//! The instance made ahead of the first Initialize (`ahead.rs`): taken when
//! its start code kept to itself, never used when that code reached outside
//! (here: asked for the granted directories, which depend on the project the
//! Initialize names), and never made before the factory is told an
//! Initialize is coming. Start code that runs until its deadline is waited
//! out once, not twice, unless it was refused while sealed.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all ahead::`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, SelectQuestion, ServiceError, TextQuestion,
};
use azd_wasm_host_fixtures as fixtures;
use azd_wasm_host_proto::azdext as pb;
use fixtures::harness::{Setup, code, ctx, options, status, with_azd};

/// How long the tests let the runtime make the instance ahead (it takes
/// milliseconds; the Initialize waits for it if it is still under way).
const IDLE: Duration = Duration::from_millis(400);

/// The milliseconds between the instance's start code and its `initialize`.
async fn start_to_initialize_ms(p: &dyn azd_wasm_host_core::Provider) -> i32 {
    let e = p
        .state(pb::ProvisioningStateOptions::default(), ctx("state"))
        .await
        .unwrap_err();
    status(&e)
}

#[tokio::test]
async fn the_first_initialize_takes_the_instance_made_ahead() {
    let setup = Setup::new(&fixtures::start_code_component(false), "");
    let loaded = setup.load();
    loaded.factory.prepare();
    tokio::time::sleep(IDLE).await;

    let first = setup.instance(&loaded).await;
    let waited = start_to_initialize_ms(first.as_ref()).await;
    assert!(
        waited >= 300,
        "the first instance's start code ran {waited} ms before its initialize: it was not made ahead"
    );

    // One instance is made ahead: the next Initialize makes its own.
    tokio::time::sleep(IDLE).await;
    let second = setup.instance(&loaded).await;
    let waited = start_to_initialize_ms(second.as_ref()).await;
    assert!(
        waited < 300,
        "the second instance's start code ran {waited} ms before its initialize"
    );
}

#[tokio::test]
async fn without_the_hint_no_instance_is_made_ahead() {
    let setup = Setup::new(&fixtures::start_code_component(false), "");
    let loaded = setup.load();
    tokio::time::sleep(IDLE).await;
    let p = setup.instance(&loaded).await;
    let waited = start_to_initialize_ms(p.as_ref()).await;
    assert!(waited < 300, "start code ran {waited} ms before initialize");
}

#[tokio::test]
async fn start_code_that_reaches_outside_runs_for_its_initialize_with_the_grants() {
    let setup = Setup::new(
        &fixtures::start_code_component(true),
        "fs = [{ path = \"infra\", access = \"read\" }]",
    );
    std::fs::create_dir_all(setup.project().join("infra")).unwrap();
    let loaded = setup.load();
    loaded.factory.prepare();
    tokio::time::sleep(IDLE).await;

    let p = setup.instance(&loaded).await;
    let e = p.parameters(ctx("parameters")).await.unwrap_err();
    assert_eq!(
        status(&e),
        0,
        "the start code of the instance serving the project did not get its granted directory"
    );
    let waited = start_to_initialize_ms(p.as_ref()).await;
    assert!(
        waited < 300,
        "the instance whose start code asked for the grants while sealed was used ({waited} ms)"
    );
}

#[tokio::test]
async fn start_code_past_its_deadline_is_waited_out_once() {
    // A 1.5 s deadline, and the Initialize sent 1 s after the instance began to be made ahead:
    // its answer is that instance's timeout, 0.5 s later. Its own instance would take 1.5 s.
    let setup = Setup::new(
        &fixtures::endless_start_component(false),
        "call_timeout_secs = 1.5",
    );
    let loaded = setup.load();
    loaded.factory.prepare();
    tokio::time::sleep(Duration::from_millis(1000)).await;

    let p = loaded.factory.create().await.unwrap();
    let sent = Instant::now();
    let e = p
        .initialize(setup.project().to_str().unwrap(), options(), ctx("init"))
        .await
        .unwrap_err();
    let waited = sent.elapsed();
    assert_eq!(code(&e), "provider_timeout", "{e}");
    assert!(e.message.contains("start code"), "{e}");
    assert!(
        waited < Duration::from_millis(1200),
        "the first initialize answered {waited:?} after it was sent: it ran the start code again"
    );
    // The instance is gone: its next call says why.
    let again = p
        .state(pb::ProvisioningStateOptions::default(), ctx("state"))
        .await
        .unwrap_err();
    assert!(again.message.contains("did not finish"), "{again}");
}

/// azd's environment, faked: one environment whose every key has a value.
struct AnyValue;

#[async_trait::async_trait]
impl AzdServices for AnyValue {
    async fn current_environment(&self) -> Result<String, ServiceError> {
        Ok("dev".to_owned())
    }
    async fn environment_values(&self, _: &str) -> Result<Vec<(String, String)>, ServiceError> {
        Ok(Vec::new())
    }
    async fn environment_value(&self, _: &str, _: &str) -> Result<String, ServiceError> {
        Ok("value".to_owned())
    }
    async fn set_environment_value(&self, _: &str, _: &str, _: &str) -> Result<(), ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
    async fn confirm(&self, _: ConfirmQuestion) -> Result<bool, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
    async fn prompt(&self, _: TextQuestion) -> Result<String, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
    async fn select(&self, _: SelectQuestion) -> Result<u32, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
}

#[tokio::test]
async fn start_code_that_waits_for_azd_while_sealed_runs_again_at_initialize() {
    let setup = Setup::new(
        &fixtures::endless_start_component(true),
        "call_timeout_secs = 0.5\n[policy.azd]\nenvironment = \"read\"",
    );
    let loaded = setup.try_load(with_azd(Arc::new(AnyValue), None)).unwrap();
    loaded.factory.prepare();
    // Long enough for the sealed start code to be stopped at its deadline.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let _initialized = setup.instance(&loaded).await;
}
