//! The WebAssembly provider runtime, driven through the `ProviderFactory` /
//! `Provider` seam with fixtures built from inline core WAT and the project's
//! WIT (`fixtures/`; no external toolchain).
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all runtime_wat:: -- --nocapture`
//! (`--nocapture` shows the measured numbers).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; figures are printed for the note"
)]

use azd_wasm_host_fixtures as fixtures;

use crate::log_sink::LogSink;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use azd_wasm_host_core::Provider;
use azd_wasm_host_core::{ErrorDetail, ErrorOrigin, ProviderError};
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_runtime::{
    CacheOutcome, LoadError, LoadedProvider, RuntimeOptions, check, load_provider,
};
use tokio_util::sync::CancellationToken;

use fixtures::harness::{
    Setup, assert_recovers, code, ctx_with_channel, options, progress_text, status,
};
use fixtures::{
    IMPORTS_AZD, behaviour_component, component, module, socket_component, wasi_component,
};

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn progress_reaches_the_channel_in_order_with_the_request_id() {
    let setup = Setup::new(&behaviour_component(), "");
    let loaded = setup.load();
    let p = loaded.factory.create().await.unwrap();

    // initialize and state report progress too; it must not reach azd even
    // when the caller wires their reporter to the stream.
    let (ctx, mut rx) = ctx_with_channel(RequestKind::Initialize, "req-init");
    p.initialize(setup.project().to_str().unwrap(), options(), ctx)
        .await
        .unwrap();
    assert!(
        rx.try_recv().is_err(),
        "progress during initialize reached azd"
    );
    let (ctx, mut rx) = ctx_with_channel(RequestKind::State, "req-state");
    let state = p.state(Default::default(), ctx).await.unwrap();
    assert!(state.state.is_some(), "state answer must carry a state");
    assert!(rx.try_recv().is_err(), "progress during state reached azd");

    let (ctx, mut rx) = ctx_with_channel(RequestKind::Deploy, "req-deploy");
    let result = p.deploy(ctx).await.unwrap();
    assert!(result.deployment.is_some());
    let mut got = Vec::new();
    while let Ok(m) = rx.try_recv() {
        got.push(progress_text(&m));
    }
    let want: Vec<(String, String, String)> = ["one", "two", "three"]
        .iter()
        .map(|t| ("req-deploy".into(), "req-deploy".into(), (*t).into()))
        .collect();
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_guest_error_keeps_every_field_and_the_instance_lives_on() {
    let setup = Setup::new(&behaviour_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.preview(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(e.message, "quota exceeded");
    assert_eq!(e.origin, ErrorOrigin::Service);
    assert_eq!(e.suggestion, "ask for more");
    assert_eq!(e.links.len(), 1);
    assert_eq!(e.links[0].url, "https://example.com/q");
    assert_eq!(e.links[0].title, "Quotas");
    assert_eq!(
        e.detail,
        Some(ErrorDetail::Service {
            error_code: "QuotaExceeded".into(),
            status_code: 429,
            service_name: "compute".into(),
        })
    );
    p.state(Default::default(), fixtures::harness::ctx("r2"))
        .await
        .expect("a guest error does not retire the instance");
}

#[tokio::test]
async fn calls_before_initialize_are_refused() {
    let setup = Setup::new(&behaviour_component(), "");
    let loaded = setup.load();
    let p = loaded.factory.create().await.unwrap();
    let e = p.deploy(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(code(&e), "provider_not_initialized");
}

#[tokio::test]
async fn a_trap_retires_the_instance_until_initialize() {
    let setup = Setup::new(&behaviour_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p
        .planned_outputs(fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
    assert!(e.message.contains("unreachable"), "{e}");
    let e = p
        .state(Default::default(), fixtures::harness::ctx("r2"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_crashed", "{e}");
    assert!(e.message.contains("needs Initialize"), "{e}");
    // Initialize on the same provider builds a fresh instance.
    p.initialize(
        setup.project().to_str().unwrap(),
        options(),
        fixtures::harness::ctx("r3"),
    )
    .await
    .unwrap();
    p.state(Default::default(), fixtures::harness::ctx("r4"))
        .await
        .unwrap();
    assert_recovers(&setup, &loaded).await;
}

/// A provider's exception that ends in a trap (an uncaught Python exception
/// prints its traceback, then traps) keeps its words: the error carries the
/// guest's last stderr lines.
#[tokio::test]
async fn a_traps_error_carries_the_guests_last_stderr_lines() {
    let setup = Setup::new(&wasi_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p
        .planned_outputs(fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
    assert!(e.message.contains("unreachable"), "{e}");
    assert!(e.message.contains("Traceback: boom"), "{e}");
}

#[tokio::test]
async fn a_runaway_guest_hits_its_deadline() {
    let setup = Setup::new(&behaviour_component(), "call_timeout_secs = 1");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let start = Instant::now();
    let e = p
        .destroy(Default::default(), fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    let took = start.elapsed();
    assert_eq!(code(&e), "provider_timeout", "{e}");
    assert!(e.message.contains("1 s"), "{e}");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(
        code(
            &p.state(Default::default(), fixtures::harness::ctx("r2"))
                .await
                .unwrap_err()
        ),
        "provider_crashed"
    );
    assert_recovers(&setup, &loaded).await;
}

#[tokio::test]
async fn a_runaway_guest_stops_on_cancel() {
    let setup = Setup::new(&behaviour_component(), "");
    let loaded = setup.load();
    let mut latencies = Vec::new();
    for round in 0..5 {
        let p = setup.instance(&loaded).await;
        let (ctx, mut rx) = ctx_with_channel(RequestKind::Destroy, &format!("r{round}"));
        let cancel = ctx.cancel.clone();
        let call = tokio::spawn(async move { p.destroy(Default::default(), ctx).await });
        // The guest reports "looping" right before it loops forever.
        let (_, _, text) = progress_text(&rx.recv().await.expect("guest reported"));
        assert_eq!(text, "looping");
        let cancelled_at = Instant::now();
        cancel.cancel();
        let e = call.await.unwrap().unwrap_err();
        latencies.push(cancelled_at.elapsed());
        assert_eq!(code(&e), "provider_cancelled", "{e}");
        // Stopped by the epoch callback, not abandoned after the grace period.
        assert!(!e.message.contains("abandoned"), "{e}");
    }
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    let max = latencies.iter().max().unwrap();
    println!(
        "runaway stop latency after cancel: {} ms (5 rounds)",
        latencies
            .iter()
            .map(|d| format!("{:.1}", ms(d)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(*max < Duration::from_secs(1), "{max:?}");
    assert_recovers(&setup, &loaded).await;
}

/// Starts `destroy` on a fresh instance of the WASI fixture (reports
/// "sleeping", then sleeps 30 s in one WASI call) and waits until the guest
/// is inside its sleep. Returns the call, its cancellation and when it started.
async fn sleeping_guest(
    setup: &Setup,
    loaded: &LoadedProvider,
) -> (
    tokio::task::JoinHandle<Result<pb::ProvisioningDestroyResult, ProviderError>>,
    CancellationToken,
    Arc<dyn Provider>,
) {
    let p = setup.instance(loaded).await;
    let (ctx, mut rx) = ctx_with_channel(RequestKind::Destroy, "r");
    let cancel = ctx.cancel.clone();
    let call = tokio::spawn({
        let p = p.clone();
        async move { p.destroy(Default::default(), ctx).await }
    });
    let (_, _, text) = progress_text(&rx.recv().await.expect("guest reported"));
    assert_eq!(text, "sleeping");
    // "sleeping" is reported right before the sleep; let the guest get there.
    tokio::time::sleep(Duration::from_millis(50)).await;
    (call, cancel, p)
}

/// A guest sleeping inside a WASI call is stopped by cancellation there and
/// then (the call is a future that is dropped), not when its sleep ends.
/// Prints the median stop latency of 20 rounds.
#[tokio::test]
async fn a_guest_sleeping_in_wasi_is_stopped_by_cancel() {
    let setup = Setup::new(&wasi_component(), "");
    let loaded = setup.load();
    let mut latencies = Vec::new();
    for _ in 0..20 {
        let (call, cancel, p) = sleeping_guest(&setup, &loaded).await;
        let signalled = Instant::now();
        cancel.cancel();
        let e = call.await.unwrap().unwrap_err();
        latencies.push(signalled.elapsed());
        assert_eq!(code(&e), "provider_cancelled", "{e}");
        // Answered long before the 30 s sleep would have ended.
        assert!(signalled.elapsed() < Duration::from_secs(10));
        let e = p
            .state(Default::default(), fixtures::harness::ctx("r2"))
            .await
            .unwrap_err();
        assert_eq!(code(&e), "provider_crashed");
    }
    latencies.sort();
    println!(
        "guest sleeping in WASI, stop after cancel: median {:.2} ms, max {:.2} ms (20 rounds)",
        latencies[10].as_secs_f64() * 1e3,
        latencies[19].as_secs_f64() * 1e3
    );
    assert_recovers(&setup, &loaded).await;
}

#[tokio::test]
async fn a_guest_sleeping_in_wasi_is_stopped_at_its_deadline() {
    let setup = Setup::new(&wasi_component(), "call_timeout_secs = 0.5");
    let loaded = setup.load();
    let started = Instant::now();
    let (call, _cancel, _p) = sleeping_guest(&setup, &loaded).await;
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(code(&e), "provider_timeout", "{e}");
    assert!(e.message.contains("0.5 s"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_recovers(&setup, &loaded).await;
}

#[tokio::test]
async fn unbounded_allocation_is_out_of_memory() {
    let setup = Setup::new(&behaviour_component(), "memory_mb = 16");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.ensure_env(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(code(&e), "provider_out_of_memory", "{e}");
    assert!(e.message.contains("16 MiB"), "{e}");
    assert_recovers(&setup, &loaded).await;
}

#[tokio::test]
async fn unbounded_recursion_is_contained() {
    let setup = Setup::new(&behaviour_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.parameters(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
    assert!(e.message.contains("stack overflow"), "{e}");
    assert_recovers(&setup, &loaded).await;
}

#[tokio::test]
async fn files_outside_the_grant_are_out_of_reach() {
    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \"infra\", access = \"read\" }]",
    );
    std::fs::create_dir_all(setup.project().join("infra")).unwrap();
    std::fs::write(setup.project().join("infra/inside.txt"), "inside").unwrap();
    std::fs::write(setup.project().join("secret.txt"), "secret").unwrap();
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;

    let hint = |h: &str| pb::ProvisioningStateOptions { hint: h.into() };
    let ok = p
        .state(hint("inside.txt"), fixtures::harness::ctx("r"))
        .await
        .expect("a granted file is readable");
    let resources = ok.state.unwrap().resources;
    assert_eq!(resources[0].id, "inside");

    let e = p
        .state(hint("../secret.txt"), fixtures::harness::ctx("r2"))
        .await
        .unwrap_err();
    assert_ne!(status(&e), 0, "{e}");
    // 76 = ENOTCAPABLE, 63 = EPERM, 2 = EACCES in WASI preview1.
    assert!([76, 63, 2].contains(&status(&e)), "errno {}", status(&e));
    assert_recovers(&setup, &loaded).await;
}

#[tokio::test]
async fn read_only_grants_refuse_writes_and_read_write_grants_allow_them() {
    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \".\", access = \"read\" }]",
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.preview(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_ne!(status(&e), 0);
    assert!(
        !setup.project().join("new.txt").exists(),
        "the write went through"
    );
    assert_recovers(&setup, &loaded).await;

    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \".\", access = \"read-write\" }]",
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.preview(fixtures::harness::ctx("r"))
        .await
        .expect("write allowed");
    assert_eq!(
        std::fs::read_to_string(setup.project().join("new.txt")).unwrap(),
        "x"
    );
}

#[tokio::test]
async fn only_allowlisted_environment_variables_are_visible() {
    let path = std::env::var("PATH").expect("tests run with PATH set");
    let (other, _) = std::env::vars()
        .find(|(k, _)| k != "PATH")
        .expect("some other variable is set");
    let setup = Setup::new(
        &wasi_component(),
        "env = [\"PATH\", \"AZD_WASM_HOST_TEST_UNSET_VARIABLE\"]",
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let params = p.parameters(fixtures::harness::ctx("r")).await.unwrap();
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, [format!("PATH={path}")]);
    assert!(!names.iter().any(|n| n.starts_with(&format!("{other}="))));

    let setup = Setup::new(&wasi_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let params = p.parameters(fixtures::harness::ctx("r")).await.unwrap();
    assert!(params.is_empty(), "deny-all leaked {params:?}");
}

#[tokio::test]
async fn sockets_only_reach_allowlisted_destinations() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let hint = pb::ProvisioningStateOptions {
        hint: port.to_string(),
    };

    // Deny-all: no socket at all (100 + access-denied).
    let setup = Setup::new(&socket_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p
        .state(hint.clone(), fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_eq!(status(&e), 101, "{e}");
    assert_recovers(&setup, &loaded).await;

    // Allowlisted destination: connects.
    let setup = Setup::new(
        &socket_component(),
        &format!("network = [\"127.0.0.1:{port}\"]"),
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.state(hint.clone(), fixtures::harness::ctx("r"))
        .await
        .expect("allowlisted connect succeeds");

    // Another port on the same host: refused (300 + access-denied).
    let setup = Setup::new(
        &socket_component(),
        &format!("network = [\"127.0.0.1:{other_port}\"]"),
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p
        .state(hint, fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_eq!(status(&e), 301, "{e}");
}

fn load_err(setup_wasm: &[u8]) -> String {
    let setup = Setup::new(setup_wasm, "");
    format!(
        "{:#}",
        load_provider(
            &setup.manifest(),
            None,
            &RuntimeOptions {
                cache: Some(setup.compile_cache()),
                ..RuntimeOptions::default()
            }
        )
        .unwrap_err()
    )
}

#[test]
fn a_core_module_is_refused() {
    let core = wat::parse_str(module(IMPORTS_AZD, "", &[])).unwrap();
    let e = load_err(&core);
    assert!(
        e.contains("core WebAssembly module, not a component"),
        "{e}"
    );
    assert!(e.contains("fixture.wasm"), "{e}");
    let e = load_err(b"not wasm at all");
    assert!(e.contains("not a WebAssembly component"), "{e}");
}

#[test]
fn a_component_for_another_world_is_refused() {
    let other = r#"
package test:other;
world other {
  export run: func() -> u32;
}
"#;
    let wat = r#"(module
  (memory (export "memory") 1)
  (func (export "run") (result i32) (i32.const 0)))"#;
    let e = load_err(&component(wat, &[other], "other", false));
    assert!(
        e.contains("does not export `azd:provisioning/provider@0.1.0`"),
        "{e}"
    );
    assert!(e.contains("run"), "{e}");
}

#[test]
fn an_import_the_host_cannot_link_is_named() {
    let bad = r#"
package test:bad;
interface gadget {
  frob: func();
}
world bad {
  include azd:provisioning/provisioning-provider@0.1.0;
  import gadget;
}
"#;
    let imports = format!("{IMPORTS_AZD}\n  (import \"test:bad/gadget\" \"frob\" (func $frob))");
    let e = load_err(&component(&module(&imports, "", &[]), &[bad], "bad", false));
    assert!(e.contains("test:bad/gadget"), "{e}");
    assert!(e.contains("cannot provide"), "{e}");
}

#[tokio::test]
async fn a_corrupt_cache_entry_is_rebuilt() {
    let setup = Setup::new(&behaviour_component(), "");
    assert_eq!(setup.load().cache, CacheOutcome::Stored);
    assert_eq!(setup.load().cache, CacheOutcome::Hit);
    let entries: Vec<PathBuf> = std::fs::read_dir(setup.cache())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let artifact = &entries[0];
    let mut data = std::fs::read(artifact).unwrap();
    let mid = data.len() / 2;
    data[mid] ^= 0xff;
    std::fs::write(artifact, &data).unwrap();
    let loaded = setup.load();
    assert_eq!(loaded.cache, CacheOutcome::Rebuilt);
    assert_eq!(setup.load().cache, CacheOutcome::Hit);
    // A truncated entry is caught as well, and so is a lost tag.
    std::fs::write(artifact, &data[..100]).unwrap();
    assert_eq!(setup.load().cache, CacheOutcome::Rebuilt);
    std::fs::remove_file(artifact.with_extension("mac")).unwrap();
    assert_eq!(setup.load().cache, CacheOutcome::Rebuilt);
    assert_eq!(setup.load().cache, CacheOutcome::Hit);
    // The rebuilt provider works.
    let p = setup.load().factory;
    let p = p.create().await.unwrap();
    p.initialize(
        setup.project().to_str().unwrap(),
        options(),
        fixtures::harness::ctx("r"),
    )
    .await
    .unwrap();
}

#[test]
fn an_unwritable_cache_only_costs_a_compile() {
    let setup = Setup::new(&behaviour_component(), "");
    // A file where the cache directory should be: nothing can be written.
    std::fs::write(setup.cache(), "in the way").unwrap();
    assert_eq!(setup.load().cache, CacheOutcome::Uncached);
}

#[test]
fn check_lists_imports_with_what_they_reach_and_the_policy() {
    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \".\", access = \"read\" }]\nenv = [\"PATH\"]",
    );
    let opts = RuntimeOptions {
        cache: Some(setup.compile_cache()),
        ..RuntimeOptions::default()
    };
    let report = check(&setup.manifest(), &opts).unwrap();
    let reach = |name: &str| {
        report
            .imports
            .iter()
            .find(|i| i.name.starts_with(name))
            .map(|i| i.reach)
            .unwrap_or_else(|| panic!("no {name} in {:?}", report.imports))
    };
    assert_eq!(
        reach("wasi:filesystem/preopens"),
        "files (only the fs grants below)"
    );
    assert_eq!(
        reach("wasi:cli/environment"),
        "environment variables (only allowlisted)"
    );
    let mut names: Vec<&str> = report.imports.iter().map(|i| i.name.as_str()).collect();
    let listed = names.clone();
    names.sort_unstable();
    assert_eq!(listed, names, "imports are sorted");
    assert_eq!(report.manifest.policy.fs[0].path, ".");
    assert_eq!(report.manifest.policy.env, ["PATH"]);
    assert!(report.component_bytes > 0);

    let bare = setup.dir.path().join("build/fixture.wasm");
    let report = check(&bare, &opts).unwrap();
    assert!(report.manifest.source.is_none());
    assert!(report.manifest.policy.is_deny_all());
    assert_eq!(
        report
            .imports
            .iter()
            .find(|i| i.name.starts_with("wasi:filesystem/preopens"))
            .map(|i| i.reach),
        Some("files: none granted (no [policy] fs), every open fails")
    );

    let e = check(&setup.dir.path().join("missing.wasm"), &opts).unwrap_err();
    assert!(
        matches!(&e, LoadError::Read { path, .. } if path.ends_with("missing.wasm")),
        "{e:?}"
    );
}

/// Prints the figures for the runtime note (not asserted: timing varies).
#[tokio::test]
async fn measured_costs() {
    let setup = Setup::new(&behaviour_component(), "");
    let cold = setup.load();
    let warm = setup.load();
    assert_eq!(warm.cache, CacheOutcome::Hit);
    println!(
        "component {} bytes: compile+validate {:.2} ms, cache-hit load+validate {:.2} ms",
        std::fs::metadata(setup.dir.path().join("build/fixture.wasm"))
            .unwrap()
            .len(),
        cold.load_time.as_secs_f64() * 1e3,
        warm.load_time.as_secs_f64() * 1e3,
    );

    const INSTANCES: u32 = 50;
    let start = Instant::now();
    for _ in 0..INSTANCES {
        setup.instance(&warm).await;
    }
    println!(
        "instantiate + initialize (incl. spawn_blocking): {:.1} µs each",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(INSTANCES)
    );

    let p = setup.instance(&warm).await;
    const CALLS: u32 = 2000;
    let start = Instant::now();
    for _ in 0..CALLS {
        p.state(Default::default(), fixtures::harness::ctx("r"))
            .await
            .unwrap();
    }
    println!(
        "state call (2 host imports, incl. spawn_blocking): {:.1} µs each",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
    );
}

/// A 12 MB component (the behaviour fixture plus a 12 MB passive data
/// segment): prints how long a load takes with a cold and a warm cache.
#[test]
fn a_large_component_loads_from_the_cache() {
    const BIG: usize = 12 * 1024 * 1024;
    let filler = format!("(data $filler \"{}\")", "a".repeat(BIG));
    let wat = module(IMPORTS_AZD, &filler, &[]);
    let wasm = component(&wat, &[], "provisioning-provider", false);
    assert!(wasm.len() > BIG, "{} bytes", wasm.len());
    let setup = Setup::new(&wasm, "");
    let cold = setup.load();
    let warm = setup.load();
    assert_eq!(cold.cache, CacheOutcome::Stored);
    assert_eq!(warm.cache, CacheOutcome::Hit);
    println!(
        "{:.1} MB component: compile+validate {:.1} ms, cache-hit load+validate {:.1} ms",
        wasm.len() as f64 / 1e6,
        cold.load_time.as_secs_f64() * 1e3,
        warm.load_time.as_secs_f64() * 1e3,
    );
}

/// Guest stdout/stderr become log lines (its subscriber is this thread's, as
/// the call runs here).
#[tokio::test]
async fn guest_output_goes_to_the_log() {
    let sink = LogSink::default();
    let _log = tracing::subscriber::set_default(sink.subscriber(tracing::Level::TRACE).finish());
    let setup = Setup::new(&wasi_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.deploy(fixtures::harness::ctx("r")).await.unwrap();
    drop(p); // flushes any partial line
    let text = sink.text();
    let line = |marker: &str| {
        text.lines()
            .find(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("{marker} not logged:\n{text}"))
            .to_owned()
    };
    assert!(line("guest-out-marker").contains("stdout"));
    assert!(line("guest-err-marker").contains("stderr"));
}

/// `listen`'s way: the component compiles on a thread of its own, the first
/// Initialize waits for it, and the thread is owned: `finish` says it ended.
#[tokio::test]
async fn the_background_compile_is_waited_for_and_ends() {
    let setup = Setup::new(&behaviour_component(), "");
    let opts = RuntimeOptions {
        cache: Some(setup.compile_cache()),
        ..RuntimeOptions::default()
    };
    let (factory, compile) = azd_wasm_host_runtime::prepare_provider(&setup.manifest(), None, opts)
        .unwrap()
        .compile_in_background();
    let p = factory.create().await.unwrap();
    p.initialize(
        setup.project().to_str().unwrap(),
        options(),
        fixtures::harness::ctx("i"),
    )
    .await
    .expect("the first Initialize waits for the compile");
    assert!(
        compile.finish(std::time::Duration::from_secs(60)).await,
        "the compile thread did not end"
    );
}
