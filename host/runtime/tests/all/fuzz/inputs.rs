//! Fuzzing of what the runtime reads from a provider's author: `provider.toml`
//! and the component's bytes. Each is seeded with real inputs (every
//! example's manifest; the WAT fixtures' components), mutated, and must be
//! read or refused with a message, never panic. Bounded in time
//! (`azd_wasm_host_fuzz::Campaign`).

use std::path::Path;

use azd_wasm_host_core::report::chain;
use azd_wasm_host_fixtures as fixtures;
use azd_wasm_host_fuzz::{Campaign, Mutator};
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_runtime::{RuntimeOptions, check, inspect_component};

/// Words of `provider.toml` that steer its parser and its checks.
const MANIFEST_WORDS: [&str; 24] = [
    "name = ",
    "component = ",
    "[policy]",
    "[policy.http]",
    "[policy.azd]",
    "[build]",
    "fs = [",
    "{ path = ",
    "access = \"read-write\"",
    "outside_project = true",
    "env = [",
    "network = [",
    "allow = [",
    "memory_mb = ",
    "call_timeout_secs = ",
    "credential_scopes = [",
    "\"{env}\"",
    "\"../..\"",
    "\"/etc\"",
    "\"http://example.com\"",
    "18446744073709551616",
    "-1",
    "language = \"rust\"",
    "prompt = true",
];

#[test]
fn fuzz_provider_toml_is_read_or_refused_never_a_panic() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seeds: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("provider.toml")).ok())
        .collect();
    assert!(seeds.len() >= 4, "the examples' manifests: {}", seeds.len());
    seeds.push(
        "name = \"p\"\ncomponent = \"p.wasm\"\n[policy]\nfs = [{ path = \".azure/{env}\", access = \"read-write\" }]\nnetwork = [\"db.example.com:5432\", \"10.0.0.5:1\"]\n".to_owned(),
    );
    let campaign = Campaign::new("provider-toml", 5);
    let mut tally = campaign.tally();
    let mut m = Mutator::new(campaign.rng(0));
    let path = Path::new("/project/provider.toml");
    while campaign.running() {
        let seed = &seeds[m.rng().usize(..seeds.len())];
        let text = m.text(seed, &MANIFEST_WORDS);
        match std::panic::catch_unwind(|| Manifest::parse(&text, path)) {
            Err(_) => tally.fail(text.as_bytes(), "reading provider.toml panicked"),
            Ok(Ok(_)) => tally.record("read", ""),
            Ok(Err(e)) if format!("{e:#}").trim().is_empty() => {
                tally.fail(text.as_bytes(), "refused without a message");
            }
            Ok(Err(e)) => tally.record("refused", &format!("{e:#}")),
        }
    }
    campaign.finish([tally]);
}

#[test]
fn fuzz_component_bytes_are_loaded_or_refused_never_a_panic() {
    let seeds = [
        fixtures::behaviour_component(),
        fixtures::wasi_component(),
        fixtures::services_component(),
        fixtures::world_0_1_0_component(),
    ];
    let campaign = Campaign::new("component-bytes", 10);
    let mut tally = campaign.tally();
    let mut m = Mutator::new(campaign.rng(0));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fuzzed.wasm");
    let opts = RuntimeOptions::default();
    while campaign.running() {
        let seed = &seeds[m.rng().usize(..seeds.len())];
        // Past the 8-byte header most of the time: the parser has more to read.
        let keep = if m.rng().u8(0..4) == 0 { 0 } else { 8 };
        let (bytes, _) = m.bytes(seed, keep);
        std::fs::write(&file, &bytes).unwrap();
        // What `listen` does first (look it over), then what `check` and the
        // first Initialize do (compile it), for every input the look-over lets
        // through and for some it does not.
        let looked = std::panic::catch_unwind(|| inspect_component(&file));
        let compile = matches!(looked, Ok(Ok(()))) || m.rng().u8(0..8) == 0;
        let outcome = match looked {
            Err(_) => Err("looking the component over panicked"),
            Ok(_) if compile => {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&file, &opts)))
                {
                    Err(_) => Err("compiling the component panicked"),
                    Ok(Ok(_)) => Ok(("compiled", String::new())),
                    Ok(Err(e)) => Ok(("refused at compile", chain(&e))),
                }
            }
            Ok(Ok(())) => Ok(("looked over", String::new())),
            Ok(Err(e)) => Ok(("refused at look-over", chain(&e))),
        };
        match outcome {
            Err(why) => tally.fail(&bytes, why),
            Ok((class, e)) if class.starts_with("refused") && e.trim().is_empty() => {
                tally.fail(&bytes, format!("{class} without a message"));
            }
            Ok((class, e)) => tally.record(class, &e.replace(&file.display().to_string(), "FILE")),
        }
    }
    campaign.finish([tally]);
}
