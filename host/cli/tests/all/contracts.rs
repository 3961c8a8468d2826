//! The real binary under each of azd's contracts: `azd-wasm-host listen`, a child of the
//! simulated azd serving `azdext` only (every azd released up to 1.34.0), both (the versioned
//! contract expected after 1.34, `azdext` through a counted bridge) or `azd.extensions.v1` only
//! (azd once the bridge is gone), serves a component that uses azd's environment and prompts
//! through its whole lifecycle; the calls it made are listed, and where azd serves
//! `azd.extensions.v1` none goes through the bridge.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use azd_wasm_host_fixtures as fixtures;
use azd_wasm_host_proto::{Contract, azdext as pb};
use azd_wasm_host_sim::{
    CallError, ContractMode, NO_PROMPT_SUGGESTION, SimAzd, SimEnvironment, SimOptions, SpawnOptions,
};

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");
const WAIT: Duration = Duration::from_secs(20);

/// The services fixture with azd's environment (read-write) and prompts granted.
fn write_provider(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("fixture.wasm"), fixtures::services_component()).unwrap();
    let manifest = dir.join("provider.toml");
    std::fs::write(
        &manifest,
        "name = \"fixture\"\ncomponent = \"fixture.wasm\"\n\n[policy.azd]\n\
         environment = \"read-write\"\nprompt = true\n",
    )
    .unwrap();
    manifest
}

#[tokio::test]
async fn the_real_binary_serves_a_lifecycle_under_each_contract() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_provider(dir.path());
    let project = dir.path().to_string_lossy().into_owned();
    for mode in ContractMode::ALL {
        let sim = SimAzd::start(SimOptions {
            environment: Some(SimEnvironment {
                name: "dev".into(),
                values: BTreeMap::from([("REGION".into(), "westus3".into())]),
            }),
            contract: mode,
            ..SimOptions::default()
        })
        .await
        .unwrap();
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.env("AZD_WASM_HOST_MANIFEST", &manifest)
            .env("AZD_WASM_HOST_CACHE_DIR", dir.path().join("cache"))
            .env("AZD_WASM_HOST_LOG_FILE", dir.path().join("host.log"))
            .stdout(Stdio::null());
        let started = Instant::now();
        let mut process = sim
            .spawn_extension_with(
                cmd,
                SpawnOptions {
                    environment: Some("dev".into()),
                    ..SpawnOptions::default()
                },
            )
            .await
            .unwrap();
        let to_ready = started.elapsed();
        let h = sim.provider("fixture", WAIT).await.unwrap();
        h.initialize(
            &project,
            pb::ProvisioningOptions {
                provider: "fixture".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        h.deploy(|_| {}).await.unwrap();
        // State reads a value of azd's environment.
        let state = h
            .state(pb::ProvisioningStateOptions {
                hint: "REGION".into(),
            })
            .await
            .unwrap();
        let resources = state.state.unwrap().resources;
        assert_eq!(resources.len(), 1, "{mode:?}");
        assert_eq!(resources[0].id, "westus3");
        // Preview writes one.
        h.preview(|_| {}).await.unwrap();
        assert_eq!(
            sim.environment().unwrap().values["FIXTURE_KEY"],
            "set by guest"
        );
        // Destroy asks a question with no default: azd (under --no-prompt) refuses it,
        // and its suggestion, in the status's details under this contract's type URL,
        // reaches the user.
        match h
            .destroy(pb::ProvisioningDestroyOptions::default(), |_| {})
            .await
            .unwrap_err()
        {
            CallError::Extension(e) => {
                assert_eq!(e.suggestion, NO_PROMPT_SUGGESTION, "{mode:?}: {e:?}");
                assert!(e.message.contains("prompt required"), "{e:?}");
            }
            other => panic!("{other:?}"),
        }
        sim.close_streams();
        let status = process.wait(WAIT).await.unwrap();
        assert!(status.success(), "{mode:?}: {status}");
        let calls = sim.calls();
        eprintln!(
            "{}: spawn → Ready {to_ready:?}; the sidecar called {calls:#?}",
            mode.name()
        );
        let legacy = sim.legacy_calls();
        match mode {
            ContractMode::Legacy => {
                assert_eq!(calls[0], "/azd.extensions.v1.ProvisioningService/Stream");
                assert_eq!(legacy, calls.len() - 1, "{calls:?}");
            }
            ContractMode::Both | ContractMode::V1 => {
                assert_eq!(legacy, 0, "nothing through the bridge: {calls:?}");
                assert!(
                    calls
                        .iter()
                        .all(|c| matches!(Contract::of_path(c), Some((Contract::V1, _)))),
                    "{calls:?}"
                );
            }
        }
        for method in [
            "ProvisioningService/Stream",
            "ExtensionService/Ready",
            "EnvironmentService/GetValue",
            "EnvironmentService/SetValue",
            "PromptService/Confirm",
        ] {
            assert!(
                calls.iter().any(|c| c.ends_with(method)),
                "{mode:?}: {method} in {calls:?}"
            );
        }
        sim.shutdown().await;
    }
}
