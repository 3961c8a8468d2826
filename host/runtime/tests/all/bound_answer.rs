//! A provider that answers with a flood of data cannot make the host copy it:
//! 1,000,000 empty outputs (about 24 MB of guest memory, some 72 MB as host
//! strings and maps) are refused while they are being read out of the guest,
//! before the host materialises them.
//!
//! The host's heap is counted on the thread that makes the call, by a counting global allocator
//! (`allocation-counter`; wasm linear memory is mapped by wasmtime directly and is not counted):
//! the call runs on a runtime of that one thread, so the tests running beside it in this binary
//! are never counted.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all bound_answer:: -- --nocapture`

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; figures are printed for the note"
)]

use azd_wasm_host_fixtures as fixtures;

use azd_wasm_host_proto::MAX_MESSAGE_BYTES;

use fixtures::harness::{Setup, code};
use fixtures::{FLOOD_OUTPUTS, answer_flood_component};

#[test]
fn a_flood_of_outputs_is_refused_before_it_is_copied() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let setup = Setup::new(&answer_flood_component(), "");
    let loaded = setup.load();
    let p = runtime.block_on(setup.instance(&loaded));

    let mut answer = None;
    let heap = allocation_counter::measure(|| {
        answer =
            Some(runtime.block_on(p.state(Default::default(), fixtures::harness::ctx("flood"))));
    });
    let e = answer.unwrap().unwrap_err();
    // The counter is live: the refusal itself allocates (its message, at least).
    assert!(heap.count_total > 0, "no allocation counted: {heap:?}");
    let peak = usize::try_from(heap.bytes_max).unwrap();

    println!(
        "{FLOOD_OUTPUTS} empty outputs: refused as {}; host heap peak during the call {:.2} MiB \
         ({} allocations, {} bytes in all)",
        code(&e),
        peak as f64 / (1 << 20) as f64,
        heap.count_total,
        heap.bytes_total
    );
    assert_eq!(code(&e), "answer_too_large", "{e}");
    assert!(e.message.contains("MiB"), "{e}");
    // Within a small multiple of azd's 4 MiB message limit.
    assert!(
        peak <= 4 * MAX_MESSAGE_BYTES,
        "the host took {peak} bytes for one refused answer"
    );
}
