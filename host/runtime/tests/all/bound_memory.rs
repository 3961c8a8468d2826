//! Calls stopped at their deadline leave nothing behind: 100 calls of a guest
//! that touches all the memory its budget allows and then sleeps in a WASI
//! call, each stopped at a 150 ms deadline (100 × 32 MiB kept would be 3 GiB;
//! the deadline also bounds each instance's `initialize`, which a loaded
//! 2-core CI machine once took over 30 ms to finish in a debug build). The
//! host's peak resident memory stays within `memory_mb` + 64 MiB and its
//! thread count stays flat: a stopped call's `Store` is freed at once and no
//! thread waits out the sleep.
//!
//! It reads the whole process's figures (`/proc/self/status`), so it runs in a
//! process of its own (`rusty-fork`: the test binary run again for this one test),
//! never beside the other tests of this binary. Linux only.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all bound_memory:: -- --nocapture`

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; figures are printed for the note"
)]

use azd_wasm_host_fixtures as fixtures;

use std::time::Instant;

use fixtures::harness::{Setup, code};
use fixtures::wasi_component;

const MEMORY_MB: u64 = 32;
const CALLS: usize = 100;
const MIB: u64 = 1 << 20;

/// A `kB` field of `/proc/self/status`, in bytes (or a count for `Threads`).
#[cfg(target_os = "linux")]
fn status_field(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("{name} missing from /proc/self/status"));
    let value: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    if line.ends_with("kB") {
        value * 1024
    } else {
        value
    }
}

#[cfg(target_os = "linux")]
use rusty_fork::rusty_fork_test;

#[cfg(target_os = "linux")]
rusty_fork_test! {
    #[test]
    fn timed_out_calls_leave_no_memory_or_threads_behind() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(timed_out_calls());
    }
}

#[cfg(target_os = "linux")]
async fn timed_out_calls() {
    let setup = Setup::new(
        &wasi_component(),
        &format!("memory_mb = {MEMORY_MB}\ncall_timeout_secs = 0.15"),
    );
    let loaded = setup.load();
    let stop = |_| async {
        let p = setup.instance(&loaded).await;
        let e = p
            .ensure_env(fixtures::harness::ctx("touch-and-sleep"))
            .await
            .unwrap_err();
        assert_eq!(code(&e), "provider_timeout", "{e}");
    };
    // Warm up: the runtime's worker threads and caches.
    for i in 0..5 {
        stop(i).await;
    }
    let threads_before = status_field("Threads");
    let rss_before = status_field("VmRSS");
    // Resets VmHWM (peak RSS) to the current RSS (Linux 4.0+).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();

    let started = Instant::now();
    let mut max_threads = threads_before;
    for i in 0..CALLS {
        stop(i).await;
        max_threads = max_threads.max(status_field("Threads"));
    }
    let took = started.elapsed();
    let peak = status_field("VmHWM");
    let threads_after = status_field("Threads");

    println!(
        "{CALLS} timed-out calls (touch {MEMORY_MB} MiB, then sleep in WASI) in {:.1} s: \
         RSS before {:.1} MiB, peak {:.1} MiB (limit {} MiB; peak reset: {reset}); \
         threads before {threads_before}, max {max_threads}, after {threads_after}",
        took.as_secs_f64(),
        rss_before as f64 / MIB as f64,
        peak as f64 / MIB as f64,
        MEMORY_MB + 64,
    );
    assert!(
        peak <= (MEMORY_MB + 64) * MIB,
        "peak RSS {peak} bytes is over memory_mb + 64 MiB"
    );
    // The guest did touch its memory: the peak shows at least half of it.
    assert!(
        !reset || peak >= rss_before + MEMORY_MB * MIB / 2,
        "the guest never touched its memory (peak {peak}, before {rss_before})"
    );
    assert!(
        max_threads <= threads_before + 2,
        "threads grew from {threads_before} to {max_threads}"
    );
}
