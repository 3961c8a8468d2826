//! `azd-wasm-host run` as a user runs it: the real binary plays azd (over
//! loopback gRPC), spawns itself as `listen`, and drives the Python `localfiles`
//! example through preview → provision → state → down on a copy of its sample
//! project.
//!
//! Needs the example component: `scripts/build-examples.sh` (the test suite
//! builds it first). With `AZD_WASM_HOST_SKIP_EXAMPLES=1` the test says it
//! skipped instead of failing.

use azd_wasm_host_fixtures::copy_dir;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example's manifest, or `None` when skipping is allowed and it is not built.
fn example_manifest() -> Option<PathBuf> {
    let dir = root().join("examples/python-localfiles");
    if dir.join("build/python-localfiles.wasm").exists() {
        return Some(dir.join("provider.toml"));
    }
    if std::env::var("AZD_WASM_HOST_SKIP_EXAMPLES").as_deref() == Ok("1") {
        println!("skipped: python-localfiles is not built (AZD_WASM_HOST_SKIP_EXAMPLES=1)");
        return None;
    }
    panic!("examples/python-localfiles is not built: run scripts/build-examples.sh");
}

struct Outcome {
    ok: bool,
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(manifest: &Path, project: &Path, cache: &Path, args: &[&str]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"))
        .arg("run")
        .args(args)
        .arg("--provider")
        .arg(manifest)
        .arg("--project")
        .arg(project)
        .env("AZD_WASM_HOST_CACHE_DIR", cache)
        .env(
            "AZD_WASM_HOST_LOG_FILE",
            cache.with_file_name("run-host.log"),
        )
        .env_remove("AZD_DEBUG")
        .env_remove("AZURE_ENV_NAME")
        .output()
        .unwrap();
    Outcome {
        ok: out.status.success(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// One compile cache for every test run: the 19 MB component is compiled once
/// (tests starting together exercise the cache's concurrent writers).
/// Outside the repository, where a compile cache is used at all.
fn shared_cache() -> PathBuf {
    std::env::temp_dir().join("azd-wasm-host-tests/component-cache")
}

fn dotenv(project: &Path) -> String {
    std::fs::read_to_string(project.join(".azure/dev/.env")).unwrap_or_default()
}

#[test]
fn run_drives_the_localfiles_example_through_its_lifecycle() {
    let Some(manifest) = example_manifest() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    copy_dir(&root().join("examples/python-localfiles/project"), &project);
    // A fresh project has no `localinfra/` yet: the host makes the read-write
    // grant's folder, as azd makes `.azure/<env>`.
    std::fs::remove_dir_all(project.join("localinfra")).unwrap();
    let cache = shared_cache();

    // Preview: everything is to be created, nothing is touched; with
    // --detailed-exitcode it exits 2 (changes pending).
    let p = run(
        &manifest,
        &project,
        &cache,
        &["preview", "--detailed-exitcode"],
    );
    assert_eq!(p.code, 2, "preview: {}", p.stderr);
    assert!(p.stdout.contains("Create"), "{}", p.stdout);
    assert!(
        p.stdout
            .contains("Plan: 3 to create, 0 to modify, 0 to delete, 0 unchanged."),
        "{}",
        p.stdout
    );
    assert!(!project.join("localinfra/web").exists());
    assert!(!project.join(".azure").exists(), "preview created .azure");

    // Provision: resources exist, progress was shown, outputs landed in .env.
    let d = run(&manifest, &project, &cache, &["provision"]);
    assert!(d.ok, "provision failed: {}", d.stderr);
    assert!(project.join("localinfra/web").is_dir());
    assert!(project.join("localinfra/settings").is_file());
    assert!(project.join("localinfra/db.json").is_file());
    assert!(
        !d.stderr.trim().is_empty(),
        "progress steps are shown on stderr"
    );
    let env = dotenv(&project);
    // Written as azd writes it: an integer bare, other text quoted.
    assert!(env.contains("LOCALFILES_RESOURCE_COUNT=3\n"), "{env}");
    assert!(env.contains("LOCALFILES_READY=\"true\""), "{env}");
    assert!(d.stdout.contains("LOCALFILES_ROOT"), "{}", d.stdout);

    // Preview again: nothing to do (exit 0 even with --detailed-exitcode).
    let p2 = run(
        &manifest,
        &project,
        &cache,
        &["preview", "--output", "json", "--detailed-exitcode"],
    );
    assert_eq!(p2.code, 0, "{}", p2.stderr);
    let v: serde_json::Value = serde_json::from_str(&p2.stdout).unwrap();
    assert_eq!(v["preview"]["plan"]["unchanged"], 3, "{v:#}");
    let changes = v["preview"]["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    assert!(
        changes.iter().all(|c| c["changeType"] == "NoChange"),
        "{changes:?}"
    );

    // State as JSON, from an azd that serves only the old names (every azd released so far).
    let s = run(
        &manifest,
        &project,
        &cache,
        &["state", "--output", "json", "--azd-contract", "legacy"],
    );
    assert!(s.ok, "{}", s.stderr);
    let v: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    assert_eq!(v["outputs"]["LOCALFILES_RESOURCE_COUNT"]["value"], "3");
    // Sent as `string` with its JSON text (azd 1.31 would re-encode an `array`).
    assert_eq!(v["outputs"]["LOCALFILES_RESOURCES"]["type"], "string");
    let resources: serde_json::Value = serde_json::from_str(
        v["outputs"]["LOCALFILES_RESOURCES"]["value"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(resources.is_array(), "{resources}");

    // Down without --force: the provider asks; with no terminal the question
    // gets its default (no), as under azd --no-prompt, and nothing goes.
    let kept = run(
        &manifest,
        &project,
        &cache,
        &["down", "--azd-contract", "legacy"],
    );
    assert_eq!(
        kept.code, 1,
        "an unconfirmed removal fails: {}",
        kept.stdout
    );
    assert!(kept.stderr.contains("not confirmed"), "{}", kept.stderr);
    assert!(kept.stderr.contains("--force"), "{}", kept.stderr);
    assert!(project.join("localinfra/web").exists());
    assert!(dotenv(&project).contains("LOCALFILES_ROOT"));

    // Down --yes answers the question: resources and their keys are gone (from an azd
    // whose bridge to the old names is gone).
    let down = run(
        &manifest,
        &project,
        &cache,
        &["down", "--yes", "--azd-contract", "v1"],
    );
    assert!(down.ok, "{}", down.stderr);
    assert!(!project.join("localinfra/web").exists());
    assert!(!project.join("localinfra/db.json").exists());
    let env = dotenv(&project);
    assert!(!env.contains("LOCALFILES_"), "{env}");
}

#[test]
fn an_unknown_contract_mode_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        Path::new("provider.toml"),
        tmp.path(),
        tmp.path(),
        &["state", "--azd-contract", "v2"],
    );
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert!(out.stderr.contains("legacy, both or v1"), "{}", out.stderr);
}

#[test]
fn run_reports_a_bad_configuration_with_its_suggestion_and_fails() {
    let Some(manifest) = example_manifest() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("localinfra")).unwrap();
    std::fs::write(
        project.join("azure.yaml"),
        "name: bad\ninfra:\n  provider: localfiles\n  config:\n    root: localinfra\n    resources:\n      - name: x\n        kind: volcano\n",
    )
    .unwrap();
    let out = run(&manifest, &project, &shared_cache(), &["provision"]);
    assert!(!out.ok, "a bad config must fail: {}", out.stdout);
    assert!(out.stderr.contains("ERROR:"), "{}", out.stderr);
    assert!(out.stderr.contains("volcano"), "{}", out.stderr);
    assert!(out.stderr.contains("Suggestion:"), "{}", out.stderr);
    assert!(!project.join(".azure/dev/.env").exists());
}
