//! The disk bound against a hostile guest: `[policy] disk_mb = 1` and a
//! read-write grant, and a provider that writes past it each way a guest
//! can (`fixtures::disk_component`): one big file, many small files, a file
//! set to 1 TiB, one byte at offset 1 TiB (a sparse file), eight files
//! written in turn. Each gets WASI's no-space error (ENOSPC), which reaches
//! the caller as the provider's own error, and the folder then holds no
//! more than the bound: the files' sizes (holes included) and 4 KiB for each
//! entry. A write within the bound works, and a fresh instance has the
//! whole budget again.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all bound_disk::`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;
use std::sync::Arc;

use azd_wasm_host_core::{Provider, ProviderError};
use azd_wasm_host_fixtures::harness::{Setup, ctx, status};
use azd_wasm_host_fixtures::{DISK_CHUNK, DISK_CHUNKS, ENOSPC, disk_component};

const BOUND: u64 = 1 << 20;

/// What the folder holds as the bound counts it: every file's size (holes
/// included) and 4 KiB per entry.
fn held(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            let inner = if meta.is_dir() {
                held(&e.path())
            } else {
                meta.len()
            };
            4096 + inner
        })
        .sum()
}

fn empty(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
}

async fn each_way(p: Arc<dyn Provider>, way: &str) -> Result<(), ProviderError> {
    match way {
        "one big file" => p.deploy(ctx(way)).await.map(drop),
        "many small files" => p.preview(ctx(way)).await.map(drop),
        "set-size to 1 TiB" => p.destroy(Default::default(), ctx(way)).await.map(drop),
        "one byte at 1 TiB" => p.ensure_env(ctx(way)).await,
        "eight streams in turn" => p.parameters(ctx(way)).await.map(drop),
        "100 KiB" => p.planned_outputs(ctx(way)).await.map(drop),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_guest_writing_past_disk_mb_gets_no_space_and_the_folder_stays_within_it() {
    let setup = Setup::new(
        &disk_component(),
        "fs = [{ path = \"out\", access = \"read-write\" }]\ndisk_mb = 1",
    );
    let loaded = setup.load();
    let out = setup.project().join("out");
    // Without the bound each way would write far more than it (8 MiB, 2,000
    // entries, 1 TiB): none of them may succeed.
    const { assert!(DISK_CHUNK * DISK_CHUNKS > 4 * BOUND) };
    for way in [
        "one big file",
        "many small files",
        "set-size to 1 TiB",
        "one byte at 1 TiB",
        "eight streams in turn",
    ] {
        let p = setup.instance(&loaded).await;
        let e = each_way(p, way).await.expect_err(way);
        assert_eq!(status(&e), ENOSPC, "{way}: {e}");
        let held = held(&out);
        assert!(held <= BOUND, "{way}: the folder holds {held} bytes");
        // It did write up to the bound (not refused from the start), but for the 1 TiB ways.
        if !way.contains("TiB") {
            assert!(held > BOUND / 2, "{way}: only {held} bytes were written");
        }
        empty(&out);
    }
    // Within the bound, writes work; and one instance's budget is its own.
    let p = setup.instance(&loaded).await;
    each_way(p.clone(), "100 KiB").await.unwrap();
    assert_eq!(
        std::fs::metadata(out.join("small.bin")).unwrap().len(),
        100 << 10
    );
    let e = each_way(p, "one big file").await.unwrap_err();
    assert_eq!(status(&e), ENOSPC);
    let fresh = setup.instance(&loaded).await;
    each_way(fresh, "100 KiB").await.unwrap();
}

#[tokio::test]
async fn the_default_bound_lets_an_ordinary_provider_write() {
    // No disk_mb: the default (64 MiB) takes the 8 MiB the big-file way writes.
    let setup = Setup::new(
        &disk_component(),
        "fs = [{ path = \"out\", access = \"read-write\" }]",
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    each_way(p, "one big file").await.unwrap();
    let written = std::fs::metadata(setup.project().join("out/big.bin"))
        .unwrap()
        .len();
    assert_eq!(written, DISK_CHUNK * DISK_CHUNKS);
}
