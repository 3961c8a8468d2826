//! The real binary under fuzzing: `azd-wasm-host listen` as a child process of
//! the simulated azd, sent mutated envelopes of every kind for a few seconds
//! (`azd_wasm_host_fuzz::stream`): one answer per readable request id, none for
//! what is not a request, and the process never exits. The samples name
//! another provider than the one registered, so each request is decoded,
//! dispatched and answered by the host (`unknown_provider`) without running
//! guest code: what is fuzzed is the path from azd's bytes to the answer.
//!
//! `AZD_WASM_HOST_BIN` runs it against another build of the binary (say, an
//! earlier release's).

use std::path::PathBuf;
use std::time::Duration;

use azd_wasm_host_fixtures as fixtures;
use azd_wasm_host_fuzz::Campaign;
use azd_wasm_host_fuzz::stream::drive;
use azd_wasm_host_sim::{SimAzd, SimOptions, SpawnOptions};

const NAME: &str = "fixture";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_listen_answers_every_readable_id_and_never_exits() {
    let bin = std::env::var_os("AZD_WASM_HOST_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_azd-wasm-host")),
        PathBuf::from,
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fixture.wasm"),
        fixtures::behaviour_component(),
    )
    .unwrap();
    let manifest = dir.path().join("provider.toml");
    std::fs::write(
        &manifest,
        format!("name = \"{NAME}\"\ncomponent = \"fixture.wasm\"\n"),
    )
    .unwrap();
    let campaign = Campaign::new("listen", 5);
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut cmd = tokio::process::Command::new(&bin);
    cmd.env("AZD_WASM_HOST_MANIFEST", &manifest)
        .env("AZD_WASM_HOST_CACHE_DIR", dir.path().join("cache"))
        .env("AZD_WASM_HOST_LOG_FILE", dir.path().join("host.log"));
    let mut process = sim
        .spawn_extension_with(
            cmd,
            SpawnOptions {
                capture_stderr: true,
                ..SpawnOptions::default()
            },
        )
        .await
        .unwrap();
    let h = sim
        .provider(NAME, Duration::from_secs(20))
        .await
        .unwrap()
        .with_call_timeout(Duration::from_secs(10));
    let (campaign, mut tallies) = drive(campaign, &h, "another-provider", 4).await;
    let mut end = campaign.tally();
    match process.child_mut().try_wait().unwrap() {
        None => end.record("alive", "listen still serves"),
        Some(status) => end.fail(
            b"",
            format!("listen exited ({status}):\n{}", process.stderr_text()),
        ),
    }
    tallies.push(end);
    campaign.finish(tallies);
}
