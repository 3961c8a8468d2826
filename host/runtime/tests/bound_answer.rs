//! A provider that answers with a flood of data cannot make the host copy it:
//! 1,000,000 empty outputs (about 24 MB of guest memory, some 72 MB as host
//! strings and maps) are refused while they are being read out of the guest,
//! before the host materialises them.
//!
//! This binary counts the host's heap with a counting global allocator
//! (wasm linear memory is mapped by wasmtime directly and is not counted), so
//! it holds this one test alone.
//!
//! Run: `cargo test -p azd-wasm-host --test bound_answer -- --nocapture`

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; figures are printed for the note"
)]

use azd_wasm_host_fixtures as fixtures;

use azd_wasm_host_proto::MAX_MESSAGE_BYTES;
use peak_alloc::PeakAlloc;

use fixtures::harness::{Setup, code};
use fixtures::{FLOOD_OUTPUTS, answer_flood_component};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

#[tokio::test]
async fn a_flood_of_outputs_is_refused_before_it_is_copied() {
    let setup = Setup::new(&answer_flood_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;

    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let e = p
        .state(Default::default(), fixtures::harness::ctx("flood"))
        .await
        .unwrap_err();
    let peak = HEAP.peak_usage().saturating_sub(before);

    println!(
        "{FLOOD_OUTPUTS} empty outputs: refused as {}; host heap peak during the call {:.2} MiB",
        code(&e),
        peak as f64 / (1 << 20) as f64
    );
    assert_eq!(code(&e), "answer_too_large", "{e}");
    assert!(e.message.contains("MiB"), "{e}");
    // Within a small multiple of azd's 4 MiB message limit.
    assert!(
        peak <= 4 * MAX_MESSAGE_BYTES,
        "the host took {peak} bytes for one refused answer"
    );
}
