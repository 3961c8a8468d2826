//! The real binary as azd runs it: `azd-wasm-host listen` as a child process of
//! the simulated azd, serving a WAT fixture component over loopback gRPC.

use azd_wasm_host_fixtures as fixtures;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use azd_wasm_host_core::ProviderError;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{
    CallError, ExtensionProcess, ProviderHandle, SimAzd, SimOptions, SpawnOptions,
};
use tokio::sync::mpsc;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");
const NAME: &str = "fixture";
const WAIT: Duration = Duration::from_secs(20);

/// A manifest naming the behaviour fixture, in `dir`.
fn write_fixture(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("fixture.wasm"), fixtures::behaviour_component()).unwrap();
    let manifest = dir.join("provider.toml");
    std::fs::write(
        &manifest,
        format!(
            "name = \"{NAME}\"\ncomponent = \"fixture.wasm\"\n\n[policy]\ncall_timeout_secs = 600\n"
        ),
    )
    .unwrap();
    manifest
}

fn command(manifest: &Path, cache: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.env("AZD_WASM_HOST_MANIFEST", manifest)
        .env("AZD_WASM_HOST_CACHE_DIR", cache)
        .env("AZD_WASM_HOST_LOG_FILE", cache.with_file_name("host.log"))
        .stdout(Stdio::piped());
    cmd
}

fn debug_spawn() -> SpawnOptions {
    SpawnOptions {
        capture_stderr: true,
        debug: true,
        ..SpawnOptions::default()
    }
}

fn options() -> pb::ProvisioningOptions {
    pb::ProvisioningOptions {
        provider: NAME.into(),
        ..Default::default()
    }
}

fn code(e: &CallError) -> String {
    match e {
        CallError::Extension(e) => ProviderError::from_wire(e)
            .code()
            .unwrap_or_default()
            .to_owned(),
        other => panic!("expected an extension error, got {other:?}"),
    }
}

/// Reads what the child wrote to stdout (it must be nothing).
async fn stdout_of(process: &mut ExtensionProcess) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut out = String::new();
    if let Some(mut pipe) = process.child_mut().stdout.take() {
        let _ = tokio::time::timeout(WAIT, pipe.read_to_string(&mut out)).await;
    }
    out
}

#[tokio::test]
async fn the_real_binary_serves_a_component_through_its_lifecycle() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_fixture(dir.path());
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let t0 = Instant::now();
    let mut process = sim
        .spawn_extension_with(command(&manifest, &dir.path().join("cache")), debug_spawn())
        .await
        .unwrap();
    eprintln!("spawn → Ready (cold cache): {:?}", t0.elapsed());
    let h = sim.provider(NAME, WAIT).await.unwrap();

    h.initialize(&dir.path().to_string_lossy(), options())
        .await
        .unwrap();
    let mut steps = Vec::new();
    h.deploy(|p| steps.push((p.request_id.clone(), p.message.clone())))
        .await
        .unwrap();
    let texts: Vec<&str> = steps.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(texts, ["one", "two", "three"]);
    assert!(steps.iter().all(|(id, _)| id == &steps[0].0));
    // The fixture reports progress during state too: it must not reach azd.
    h.state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();

    match h.preview(|_| {}).await.unwrap_err() {
        CallError::Extension(e) => {
            assert_eq!(e.message, "quota exceeded");
            assert_eq!(e.suggestion, "ask for more");
            // The guest's own link, then the host's log file.
            assert_eq!(e.links.len(), 2);
            assert_eq!(e.links[0].url, "https://example.com/q");
            assert!(e.links[1].url.ends_with("host.log"), "{:?}", e.links);
        }
        other => panic!("{other:?}"),
    }
    // A trap answers with an error and retires the instance ...
    let trap = h.planned_outputs().await.unwrap_err();
    assert!(code(&trap).starts_with("provider_"), "{trap:?}");
    let crashed = h.deploy(|_| {}).await.unwrap_err();
    assert_eq!(code(&crashed), "provider_crashed");
    // ... until the next Initialize builds a fresh one.
    h.initialize(&dir.path().to_string_lossy(), options())
        .await
        .unwrap();
    h.deploy(|_| {}).await.unwrap();
    assert_eq!(h.late_messages(), 0);

    sim.close_streams();
    let status = process.wait(WAIT).await.unwrap();
    assert!(
        status.success(),
        "listen exits 0 when azd ends the stream: {status}"
    );
    assert_eq!(
        stdout_of(&mut process).await,
        "",
        "listen writes nothing to stdout"
    );
}

/// A loopback TCP relay between the extension and the simulated azd, so a test
/// can cut the connection the way a killed azd process does.
struct Relay {
    address: String,
    cut: tokio_util::sync::CancellationToken,
}

impl Relay {
    async fn start(upstream: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let cut = tokio_util::sync::CancellationToken::new();
        let token = cut.clone();
        tokio::spawn(async move {
            loop {
                let (mut inbound, _) = tokio::select! {
                    a = listener.accept() => a.unwrap(),
                    () = token.cancelled() => return,
                };
                let mut outbound = tokio::net::TcpStream::connect(&upstream).await.unwrap();
                let token = token.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        () = token.cancelled() => {}
                    }
                    // Dropping both sockets closes them, as the kernel does for a dead process.
                });
            }
        });
        Self { address, cut }
    }
}

/// Starts the fixture's destroy, which reports "looping" and then spins forever
/// inside the guest; returns once the guest is spinning.
async fn start_endless_destroy(
    h: ProviderHandle,
) -> tokio::task::JoinHandle<Result<pb::ProvisioningDestroyResult, CallError>> {
    let (tx, mut started) = mpsc::channel(1);
    let call = tokio::spawn(async move {
        h.destroy(pb::ProvisioningDestroyOptions::default(), |p| {
            let _ = tx.try_send(p.message.clone());
        })
        .await
    });
    assert_eq!(started.recv().await.unwrap(), "looping");
    call
}

#[tokio::test]
async fn azd_killed_mid_operation_makes_listen_exit_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_fixture(dir.path());
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let relay = Relay::start(sim.address()).await;
    let mut cmd = command(&manifest, &dir.path().join("cache"));
    cmd.env("AZD_SERVER", &relay.address);
    let mut process = sim.spawn_extension_with(cmd, debug_spawn()).await.unwrap();
    let h = sim.provider(NAME, WAIT).await.unwrap();
    h.initialize(&dir.path().to_string_lossy(), options())
        .await
        .unwrap();

    let call = start_endless_destroy(h).await;

    let t0 = Instant::now();
    relay.cut.cancel();
    let status = process.wait(Duration::from_secs(5)).await.unwrap();
    let took = t0.elapsed();
    eprintln!("azd killed → listen exited in {took:?} ({status})");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(call.await.unwrap().is_err());
}

/// The fixture served by the real binary (spawned with `spawn`) and
/// initialized: its folder (which holds `host.log`), the simulated azd, the
/// process, and the provider.
async fn initialized(
    spawn: SpawnOptions,
) -> (tempfile::TempDir, SimAzd, ExtensionProcess, ProviderHandle) {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_fixture(dir.path());
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let process = sim
        .spawn_extension_with(command(&manifest, &dir.path().join("cache")), spawn)
        .await
        .unwrap();
    let h = sim.provider(NAME, WAIT).await.unwrap();
    h.initialize(&dir.path().to_string_lossy(), options())
        .await
        .unwrap();
    (dir, sim, process, h)
}

/// How every azd command ends: once the last answer is in, azd's process exits
/// and the connection drops, with no stream end first. That is not an error.
#[tokio::test]
async fn azd_dropping_the_connection_after_the_last_answer_exits_0_with_no_error_logged() {
    let (dir, sim, mut process, h) = initialized(SpawnOptions::default()).await;
    h.state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    sim.cut_connections();
    let status = process.wait(Duration::from_secs(5)).await.unwrap();
    assert!(status.success(), "{status}");
    let log = std::fs::read_to_string(dir.path().join("host.log")).unwrap();
    assert!(
        !log.lines().any(|l| l.contains("ERROR")),
        "a normal end logs no error:\n{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("INFO") && l.contains("every request it sent was answered")),
        "the end is said once, at info:\n{log}"
    );
}

/// The same drop while a request runs is never a clean end: the guest is stopped,
/// the log names the request and how long it had run, and the exit code says a
/// request went unanswered.
#[tokio::test]
async fn azd_dropping_the_connection_mid_operation_names_what_it_cut_short() {
    let (dir, sim, mut process, h) = initialized(SpawnOptions::default()).await;
    let call = start_endless_destroy(h).await;
    sim.cut_connections();
    let status = process.wait(Duration::from_secs(5)).await.unwrap();
    assert!(call.await.unwrap().is_err());
    assert_eq!(
        status.code(),
        Some(i32::from(azd_wasm_host_core::Exit::Unanswered.code())),
        "a request was left unanswered: {status}"
    );
    let log = std::fs::read_to_string(dir.path().join("host.log")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("WARN") && l.contains("unanswered"))
        .unwrap_or_else(|| panic!("a warning names the request:\n{log}"));
    assert!(
        line.contains("destroy ") && line.contains("running for"),
        "{line}"
    );
}

#[tokio::test]
async fn the_stream_closed_mid_operation_interrupts_the_guest() {
    let (_dir, sim, mut process, h) = initialized(debug_spawn()).await;
    let call = start_endless_destroy(h).await;
    let t0 = Instant::now();
    sim.close_streams();
    let status = process.wait(Duration::from_secs(5)).await.unwrap();
    let took = t0.elapsed();
    eprintln!("stream closed → listen exited in {took:?}");
    assert_eq!(
        status.code(),
        Some(i32::from(azd_wasm_host_core::Exit::Unanswered.code())),
        "{status}"
    );
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(matches!(call.await.unwrap(), Err(CallError::StreamClosed)));
    // The runtime itself stopped the guest call (the broker's own "request
    // cancelled" line does not count).
    let log = process.stderr_text();
    assert!(
        log.lines()
            .any(|l| l.contains("guest call stopped") && l.contains("Cancelled")),
        "the runtime logs the guest it stopped:\n{log}"
    );
}

/// SIGTERM (or SIGINT) ends `listen` like a stream end: the running guest is
/// stopped, every task winds down, and the process exits 0 within a second.
#[cfg(unix)]
#[tokio::test]
async fn sigterm_stops_the_guest_and_exits_cleanly() {
    let (_dir, _sim, mut process, h) = initialized(debug_spawn()).await;
    let call = start_endless_destroy(h).await;
    let t0 = Instant::now();
    let pid = process.id().unwrap().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = process.wait(Duration::from_secs(5)).await.unwrap();
    let took = t0.elapsed();
    eprintln!("SIGTERM → listen exited in {took:?} ({status})");
    assert!(status.success(), "{status}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(call.await.unwrap().is_err());
    let log = process.stderr_text();
    assert!(log.contains("SIGTERM"), "{log}");
    assert!(
        log.lines()
            .any(|l| l.contains("guest call stopped") && l.contains("Cancelled")),
        "the runtime logs the guest it stopped:\n{log}"
    );
}

/// `infra.config` nested `depth` objects deep.
fn nested_config(depth: usize) -> prost_types::Struct {
    use prost_types::value::Kind;
    let mut value = prost_types::Value {
        kind: Some(Kind::StringValue("leaf".into())),
    };
    for _ in 0..depth.saturating_sub(1) {
        value = prost_types::Value {
            kind: Some(Kind::StructValue(prost_types::Struct {
                fields: [("k".to_owned(), value)].into(),
            })),
        };
    }
    prost_types::Struct {
        fields: [("root".to_owned(), value)].into(),
    }
}

/// Whatever depth azd's protobuf library lets through is answered: a config
/// nested 64 (prost's own guard would have killed the stream at 33) or 1,000
/// levels deep is read; a deeper one gets an error naming its depth, and the
/// stream goes on. (The test's own side builds and encodes those configs
/// recursively, so it runs on threads with big stacks.)
#[test]
fn deeply_nested_configs_are_answered_and_the_stream_survives() {
    let big_stack = 64 << 20;
    std::thread::Builder::new()
        .stack_size(big_stack)
        .spawn(move || {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_stack_size(big_stack)
                .build()
                .unwrap()
                .block_on(deep_configs())
        })
        .unwrap()
        .join()
        .unwrap();
}

async fn deep_configs() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_fixture(dir.path());
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let _process = sim
        .spawn_extension_with(command(&manifest, &dir.path().join("cache")), debug_spawn())
        .await
        .unwrap();
    let h = sim.provider(NAME, WAIT).await.unwrap();
    let project = dir.path().to_string_lossy().into_owned();
    for depth in [64, 1000] {
        let options = pb::ProvisioningOptions {
            config: Some(nested_config(depth)),
            ..options()
        };
        h.initialize(&project, options)
            .await
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
    }
    let too_deep = pb::ProvisioningOptions {
        config: Some(nested_config(1500)),
        ..options()
    };
    match h.initialize(&project, too_deep).await {
        Err(CallError::Extension(e)) => {
            let e = ProviderError::from_wire(&e);
            assert_eq!(e.code(), Some("config_too_deep"), "{e:?}");
            assert!(e.message.contains("1500"), "{e:?}");
        }
        other => panic!("expected config_too_deep, got {other:?}"),
    }
    h.initialize(&project, options()).await.unwrap();
    assert!(!h.is_closed());
}

#[tokio::test]
async fn a_warm_cache_restart_loads_without_compiling() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_fixture(dir.path());
    let cache = dir.path().join("cache");
    let mut times = Vec::new();
    for _ in 0..2 {
        let sim = SimAzd::start(SimOptions::default()).await.unwrap();
        let t0 = Instant::now();
        let mut process = sim
            .spawn_extension_with(command(&manifest, &cache), debug_spawn())
            .await
            .unwrap();
        times.push(t0.elapsed());
        let h = sim.provider(NAME, WAIT).await.unwrap();
        h.initialize(&dir.path().to_string_lossy(), options())
            .await
            .unwrap();
        sim.close_streams();
        process.wait(WAIT).await.unwrap();
        let log = process.stderr_text();
        if times.len() == 2 {
            assert!(
                log.contains("Hit"),
                "the second start hits the cache:\n{log}"
            );
        }
    }
    eprintln!("spawn → Ready: cold {:?}, warm {:?}", times[0], times[1]);
    let entries = std::fs::read_dir(&cache).unwrap().count();
    assert!(entries >= 1, "the cache holds the compiled component");
}

/// A component that cannot run still registers under its manifest's name, so
/// that azd shows why at the first Initialize (instead of a generic "provider
/// not found"); the error names the file and the log.
#[tokio::test]
async fn a_broken_component_is_explained_at_initialize() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.wasm"), b"\0asm not really").unwrap();
    let manifest = dir.path().join("provider.toml");
    std::fs::write(
        &manifest,
        "name = \"broken\"\ncomponent = \"broken.wasm\"\n",
    )
    .unwrap();
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let _process = sim
        .spawn_extension_with(command(&manifest, &dir.path().join("cache")), debug_spawn())
        .await
        .unwrap();
    let h = sim.provider("broken", WAIT).await.unwrap();
    let options = pb::ProvisioningOptions {
        provider: "broken".into(),
        ..Default::default()
    };
    let err = match h.initialize(&dir.path().to_string_lossy(), options).await {
        Err(CallError::Extension(e)) => ProviderError::from_wire(&e),
        other => panic!("expected an error, got {other:?}"),
    };
    assert_eq!(err.code(), Some("invalid_component"), "{err:?}");
    assert!(
        err.message.contains("broken.wasm"),
        "names the file: {err:?}"
    );
    assert!(err.suggestion.contains("check"), "{err:?}");
    assert!(
        err.links.iter().any(|l| l.url.ends_with("host.log")),
        "{err:?}"
    );
    let log = std::fs::read_to_string(dir.path().join("host.log")).unwrap();
    assert!(log.contains("broken.wasm"), "the log file says why:\n{log}");
}

/// Without a manifest there is no name to register: `listen` stops before
/// Ready and says where it looked.
#[tokio::test]
async fn listen_without_a_manifest_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let spawn = SpawnOptions {
        capture_stderr: true,
        ..SpawnOptions::default()
    };
    let missing = dir.path().join("nowhere/provider.toml");
    let err = sim
        .spawn_extension_with(command(&missing, &dir.path().join("cache")), spawn)
        .await
        .unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("nowhere/provider.toml"), "{text}");
    assert!(sim.registrations().is_empty());
    // azd gets the reason too (it keeps it in its debug log).
    let reported = sim.reported_errors();
    assert!(
        reported
            .iter()
            .any(|e| e.message.contains("nowhere/provider.toml")),
        "{reported:?}"
    );
}

#[test]
fn listen_without_azd_names_the_missing_variables() {
    let out = std::process::Command::new(BIN)
        .arg("listen")
        .env_remove("AZD_SERVER")
        .env_remove("AZD_ACCESS_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("AZD_SERVER"), "{err}");
    assert!(err.contains("AZD_ACCESS_TOKEN"), "{err}");
}

#[test]
fn listen_refuses_a_non_loopback_azd() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_fixture(dir.path());
    let out = std::process::Command::new(BIN)
        .arg("listen")
        .env("AZD_SERVER", "192.0.2.10:443")
        .env("AZD_ACCESS_TOKEN", "secret-token-value")
        .env("AZD_WASM_HOST_MANIFEST", &manifest)
        .env("AZD_WASM_HOST_CACHE_DIR", dir.path().join("cache"))
        .env("AZD_DEBUG", "true")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(
        !err.contains("secret-token-value"),
        "the token is never logged"
    );
}
