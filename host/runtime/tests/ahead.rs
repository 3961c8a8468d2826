//! The instance made ahead of the first Initialize (`ahead.rs`): taken when
//! its start code kept to itself, never used when that code reached outside
//! (here: asked for the granted directories, which depend on the project the
//! Initialize names), and never made before the factory is told an
//! Initialize is coming.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test ahead`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::time::Duration;

use azd_wasm_host_fixtures as fixtures;
use azd_wasm_host_proto::azdext as pb;
use fixtures::harness::{Setup, ctx, status};

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
