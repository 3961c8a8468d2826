//! A big component (4 MB or more) on an empty compile cache starts on code from
//! Winch, wasmtime's baseline compiler (x86_64), while Cranelift's code is
//! compiled into the cache behind it. The sandbox's bounds must hold on that
//! code exactly as on Cranelift's: a runaway loop stops at its deadline,
//! unbounded allocation at the memory budget, unbounded recursion at the stack
//! limit, and a trap retires only its instance.
//!
//! It runs in a process of its own (`rusty-fork`): it installs a global log subscriber to see
//! which code ran (the compile is logged from a thread of its own).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use azd_wasm_host_fixtures as fixtures;

use crate::log_sink::LogSink;

use std::time::{Duration, Instant};

use azd_wasm_host_runtime::{RuntimeOptions, prepare_provider};
use rusty_fork::rusty_fork_test;

use fixtures::behaviour_component_with;
use fixtures::harness::{Setup, code, options};

rusty_fork_test! {
    #[test]
    fn a_big_component_on_baseline_code_is_bounded_like_any_other() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(big_component());
    }
}

async fn big_component() {
    let sink = LogSink::default();
    sink.subscriber(tracing::Level::DEBUG).init();
    const FILLER: usize = 5 << 20;
    let wasm = behaviour_component_with(&format!("(data $filler \"{}\")", "a".repeat(FILLER)));
    assert!(wasm.len() > FILLER, "{} bytes", wasm.len());
    let setup = Setup::new(&wasm, "call_timeout_secs = 1\nmemory_mb = 16");
    let opts = RuntimeOptions {
        cache: Some(setup.compile_cache()),
        ..RuntimeOptions::default()
    };
    let (factory, _compile) = prepare_provider(&setup.manifest(), None, opts)
        .unwrap()
        .compile_in_background();
    let project = setup.project();
    let fresh = || async {
        let p = factory.create().await.unwrap();
        p.initialize(
            project.to_str().unwrap(),
            options(),
            fixtures::harness::ctx("init"),
        )
        .await
        .unwrap();
        p
    };

    let p = fresh().await;
    let log = sink.text();
    if cfg!(target_arch = "x86_64") {
        assert!(
            log.contains("running the baseline compiler's code"),
            "{log}"
        );
    }

    let start = Instant::now();
    let e = p
        .destroy(Default::default(), fixtures::harness::ctx("loop"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_timeout", "{e}");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(5),
        "{took:?}"
    );

    let e = fresh()
        .await
        .ensure_env(fixtures::harness::ctx("grow"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_out_of_memory", "{e}");
    assert!(e.message.contains("16 MiB"), "{e}");

    let e = fresh()
        .await
        .parameters(fixtures::harness::ctx("recurse"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
    assert!(e.message.contains("stack overflow"), "{e}");

    let p = fresh().await;
    let e = p
        .planned_outputs(fixtures::harness::ctx("trap"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
    fresh()
        .await
        .deploy(fixtures::harness::ctx("after"))
        .await
        .expect("a fresh instance serves calls");
}
