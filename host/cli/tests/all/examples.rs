//! The example providers in Python, JavaScript, C and Rust, as built by
//! `scripts/build-examples.sh` and `scripts/build-rust-example.sh`, run by the
//! real binary under the simulated azd.
//!
//! For each example: `azd-wasm-host check` accepts its manifest, then `azd-wasm-host
//! listen` (a child process of [`SimAzd`]) serves Initialize → Parameters → PlannedOutputs
//! → Preview → Deploy → State → Destroy, and a bad configuration is refused with a
//! structured error. The Python example works on a temporary copy of its sample project,
//! so its files are checked on disk.
//!
//! Run: `scripts/build-examples.sh && cargo test -p azd-wasm-host --test all examples:: -- --nocapture`.
//! A missing component fails the test with that hint; with `AZD_WASM_HOST_SKIP_EXAMPLES=1`
//! a missing component is skipped instead. Compiled components are cached under cargo's
//! `target/tmp`, so only the first run pays for compiling them (about 15 s for the Python
//! guest here).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; timings are printed for the note"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use azd_wasm_host_core::json::object_to_struct;
use azd_wasm_host_core::{ErrorDetail, ErrorOrigin, ProviderError};
use azd_wasm_host_fixtures::{copy_dir, repo_root};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{
    CallError, ExtensionProcess, ProviderHandle, SimAzd, SimOptions, SpawnOptions,
};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");
const ENV_NAME: &str = "dev";
/// How long the test waits for the provider to register after Ready.
const REGISTER_TIMEOUT: Duration = Duration::from_secs(30);

/// Compiled components survive between test runs here (keyed by content by the host).
/// Outside the repository: a compile cache inside a git work tree is never
/// used (what arrives with a clone holds no code the host runs).
fn cache_dir() -> PathBuf {
    std::env::temp_dir().join("azd-wasm-host-tests/examples-cache")
}

/// The manifest of a built example, or `None` when it is not built and the caller allowed
/// that with `AZD_WASM_HOST_SKIP_EXAMPLES=1`.
fn built_example(name: &str) -> Option<PathBuf> {
    let dir = repo_root().join("examples").join(name);
    let wasm = dir.join("build").join(format!("{name}.wasm"));
    if wasm.is_file() {
        return Some(dir.join("provider.toml"));
    }
    if std::env::var("AZD_WASM_HOST_SKIP_EXAMPLES").is_ok_and(|v| v == "1") {
        println!("skipped: {name} (not built; AZD_WASM_HOST_SKIP_EXAMPLES=1)");
        return None;
    }
    panic!(
        "{} is not built: run scripts/build-examples.sh first \
         (or set AZD_WASM_HOST_SKIP_EXAMPLES=1 to skip the example tests)",
        wasm.display()
    );
}

/// `azd-wasm-host check <manifest>` succeeds and describes the provider; returns its output.
fn check(manifest: &Path, provider: &str) -> String {
    let started = Instant::now();
    let out = std::process::Command::new(BIN)
        .arg("check")
        .arg(manifest)
        .env("AZD_WASM_HOST_CACHE_DIR", cache_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "check {} failed ({}):\n{stdout}\n{}",
        manifest.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("provider:  {provider}")),
        "{stdout}"
    );
    assert!(
        stdout.contains("targets azd:provisioning/provisioning-provider@0.")
            && stdout.contains(": OK"),
        "{stdout}"
    );
    println!(
        "{provider}: check took {:.2} s (compiles on a cold cache, loads on a warm one)",
        started.elapsed().as_secs_f64()
    );
    stdout
}

/// A simulated azd with the real binary serving `manifest` for the project `project`.
async fn start(manifest: &Path, project: &Path) -> (SimAzd, ExtensionProcess) {
    let log = cache_dir().with_file_name("examples-host.log");
    start_with(manifest, project, &cache_dir(), &log, false).await
}

/// [`start`] with its own compile cache and log file, and optionally `--debug`;
/// returns once the extension is Ready.
async fn start_with(
    manifest: &Path,
    project: &Path,
    cache: &Path,
    log: &Path,
    debug: bool,
) -> (SimAzd, ExtensionProcess) {
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.env("AZD_WASM_HOST_MANIFEST", manifest)
        .env("AZD_WASM_HOST_CACHE_DIR", cache)
        .env("AZD_WASM_HOST_LOG_FILE", log);
    let opts = SpawnOptions {
        capture_stderr: true,
        debug,
        cwd: Some(project.to_path_buf()),
        environment: Some(ENV_NAME.to_owned()),
        ..SpawnOptions::default()
    };
    let ext = sim.spawn_extension_with(cmd, opts).await.unwrap();
    (sim, ext)
}

fn options(provider: &str, config: &Value) -> pb::ProvisioningOptions {
    pb::ProvisioningOptions {
        provider: provider.to_owned(),
        config: Some(object_to_struct(config.as_object().unwrap())),
        ..Default::default()
    }
}

fn output<'a>(
    outputs: &'a BTreeMap<String, pb::ProvisioningOutputParameter>,
    name: &str,
) -> (&'a str, &'a str) {
    let o = outputs
        .get(name)
        .unwrap_or_else(|| panic!("no output {name} in {outputs:?}"));
    (o.r#type.as_str(), o.value.as_str())
}

fn json_output(outputs: &BTreeMap<String, pb::ProvisioningOutputParameter>, name: &str) -> Value {
    serde_json::from_str(output(outputs, name).1).unwrap()
}

/// Runs a call that reports progress and returns its result with the progress texts.
macro_rules! with_progress {
    ($p:expr, $method:ident $(, $arg:expr)*) => {{
        let mut texts: Vec<String> = Vec::new();
        let r = $p.$method($($arg,)* |m: &pb::ProvisioningProgressMessage| texts.push(m.message.clone())).await;
        (r, texts)
    }};
}

/// The provider's answer must be a local `invalid_config` validation error with a suggestion.
fn assert_invalid_config(result: Result<(), CallError>, message_part: &str) {
    let err: ProviderError = match result {
        Err(CallError::Extension(e)) => ProviderError::from_wire(&e),
        other => panic!("expected an invalid_config error, got {other:?}"),
    };
    assert_eq!(err.origin, ErrorOrigin::Local, "{err:?}");
    assert_eq!(
        err.detail,
        Some(ErrorDetail::Local {
            code: "invalid_config".into(),
            category: "validation".into()
        }),
        "{err:?}"
    );
    assert!(err.message.contains(message_part), "{err:?}");
    assert!(!err.suggestion.is_empty(), "{err:?}");
}

// ---------------------------------------------------------------------------
// js-hello and c-hello: the same small provider in two languages
// ---------------------------------------------------------------------------

async fn hello_lifecycle(example: &str, outputs: &[&str]) {
    let Some(manifest) = built_example(example) else {
        return;
    };
    let report = check(&manifest, example);
    assert!(report.contains("deny-all"), "{report}");

    let project = tempfile::tempdir().unwrap();
    let project_path = project.path().to_str().unwrap();
    let (sim, mut ext) = start(&manifest, project.path()).await;
    let p: ProviderHandle = sim.provider(example, REGISTER_TIMEOUT).await.unwrap();
    let config = json!({ "name": "world" });

    p.initialize(project_path, options(example, &config))
        .await
        .unwrap();

    let params = p.parameters().await.unwrap();
    let values: Vec<(&str, &str)> = params
        .iter()
        .map(|x| (x.name.as_str(), x.value.as_str()))
        .collect();
    assert_eq!(values, [("name", "world"), ("greeting", "Hello")]);
    let planned: Vec<String> = p
        .planned_outputs()
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.name)
        .collect();
    assert_eq!(planned, outputs);

    let (preview, progress) = with_progress!(p, preview);
    let preview = preview.unwrap().preview.unwrap();
    assert_eq!(progress, ["Comparing the greeting with the configuration"]);
    assert_eq!(preview.changes.len(), 1, "{preview:?}");
    assert_eq!(preview.changes[0].change_type, "Create");
    assert_eq!(preview.changes[0].name, "world");
    assert_eq!(
        output(&preview.outputs, "GREETING"),
        ("string", "Hello, world!")
    );

    let (deploy, progress) = with_progress!(p, deploy);
    let deploy = deploy.unwrap();
    assert_eq!(
        progress,
        ["Composing the greeting for world", "Greeting ready"]
    );
    assert_eq!(
        deploy.skipped_reason,
        pb::ProvisioningSkippedReason::Unspecified as i32
    );
    let deployed = deploy.deployment.unwrap().outputs;
    let mut names: Vec<&str> = deployed.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut expected = outputs.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert_eq!(output(&deployed, "GREETING"), ("string", "Hello, world!"));
    assert_eq!(output(&deployed, "GREETING_LENGTH"), ("number", "13"));

    let state = p
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    let state = state.state.unwrap();
    assert_eq!(state.outputs, deployed);
    assert_eq!(
        state.resources,
        [pb::ProvisioningResource {
            id: "greeting/world".into()
        }]
    );

    let (destroy, progress) = with_progress!(
        p,
        destroy,
        pb::ProvisioningDestroyOptions {
            force: true,
            purge: false
        }
    );
    assert_eq!(progress, ["Forgetting the greeting for world (forced)"]);
    assert_eq!(destroy.unwrap().invalidated_env_keys, outputs);

    // A configuration without the required key is refused with a structured error.
    let bad = p
        .initialize(project_path, options(example, &json!({ "greeting": "Hi" })))
        .await;
    assert_invalid_config(bad, "name");

    assert_eq!(p.late_messages(), 0);
    sim.shutdown().await;
    let status = ext.wait(Duration::from_secs(10)).await.unwrap();
    assert!(status.success(), "{status}\n{}", ext.stderr_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_hello_serves_the_whole_lifecycle() {
    hello_lifecycle("js-hello", &["GREETING", "GREETING_LENGTH"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_hello_serves_the_whole_lifecycle() {
    hello_lifecycle(
        "rust-hello",
        &["GREETING", "GREETING_DETAILS", "GREETING_LENGTH"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_hello_serves_the_whole_lifecycle() {
    hello_lifecycle(
        "c-hello",
        &["GREETING", "GREETING_LENGTH", "GREETING_DEFAULTED"],
    )
    .await;
}

// ---------------------------------------------------------------------------
// python-localfiles: real files on disk
// ---------------------------------------------------------------------------

/// Copies the example's sample project into a temporary directory with an azd environment
/// folder, and returns it with the provider config from its azure.yaml.
fn sample_project() -> (tempfile::TempDir, Value) {
    let src = repo_root().join("examples/python-localfiles/project");
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&src, dir.path());
    std::fs::create_dir_all(dir.path().join(".azure").join(ENV_NAME)).unwrap();
    let yaml = std::fs::read_to_string(dir.path().join("azure.yaml")).unwrap();
    let doc: Value = serde_norway::from_str(&yaml).unwrap();
    assert_eq!(doc["infra"]["provider"], "localfiles");
    (dir, doc["infra"]["config"].clone())
}

fn changes(preview: &pb::ProvisioningDeploymentPreview) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = preview
        .changes
        .iter()
        .map(|c| (c.name.clone(), c.change_type.clone()))
        .collect();
    all.sort();
    all
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

const LOCALFILES_OUTPUTS: [&str; 6] = [
    "LOCALFILES_ROOT",
    "LOCALFILES_RESOURCE_COUNT",
    "LOCALFILES_RESOURCES",
    "LOCALFILES_PATHS",
    "LOCALFILES_BYTES",
    "LOCALFILES_READY",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_localfiles_provisions_and_removes_real_files() {
    let Some(manifest) = built_example("python-localfiles") else {
        return;
    };
    let report = check(&manifest, "localfiles");
    assert!(report.contains("localinfra (read-write"), "{report}");
    assert!(
        report.contains("azd.environment         read ("),
        "{report}"
    );
    assert!(
        report.contains("azd.prompt              allowed (may ask the user"),
        "{report}"
    );

    let (project, config) = sample_project();
    let root = project.path().join("localinfra");
    let state_file = project
        .path()
        .join(".azure")
        .join(ENV_NAME)
        .join("localfiles-state.json");
    let project_path = project.path().to_str().unwrap();
    let (sim, mut ext) = start(&manifest, project.path()).await;
    let p = sim.provider("localfiles", REGISTER_TIMEOUT).await.unwrap();

    p.initialize(project_path, options("localfiles", &config))
        .await
        .unwrap();

    let params = p.parameters().await.unwrap();
    let names: Vec<&str> = params.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["root", "resources"]);
    assert_eq!(params[0].value, "localinfra");
    let planned: Vec<String> = p
        .planned_outputs()
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.name)
        .collect();
    assert_eq!(planned, LOCALFILES_OUTPUTS);

    // Preview: everything is to be created, and nothing is touched.
    let (preview, progress) = with_progress!(p, preview);
    let preview = preview.unwrap().preview.unwrap();
    assert_eq!(progress, ["Comparing 3 declared resources with localinfra"]);
    assert_eq!(
        changes(&preview),
        pairs(&[("db", "Create"), ("settings", "Create"), ("web", "Create")])
    );
    assert!(
        preview.summary.contains("3 to create"),
        "{}",
        preview.summary
    );
    let listing: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listing, ["README.md"]);
    assert!(!state_file.exists());

    // Deploy: the files exist with the declared content, and the outputs say so.
    let (deploy, progress) = with_progress!(p, deploy);
    let deploy = deploy.unwrap();
    assert_eq!(
        progress,
        [
            "Creating directory web",
            "Writing file settings",
            "Writing json-store db",
            "Recorded 3 resources in .azure/dev/localfiles-state.json"
        ]
    );
    assert_eq!(
        deploy.skipped_reason,
        pb::ProvisioningSkippedReason::Unspecified as i32
    );
    let outputs = deploy.deployment.unwrap().outputs;
    assert!(root.join("web").is_dir());
    let resources = config["resources"].as_array().unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("settings")).unwrap(),
        resources[1]["content"].as_str().unwrap()
    );
    let db: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("db.json")).unwrap()).unwrap();
    assert_eq!(db, resources[2]["data"]);
    assert!(state_file.is_file());

    assert_eq!(
        output(&outputs, "LOCALFILES_ROOT"),
        ("string", root.to_str().unwrap())
    );
    assert_eq!(
        output(&outputs, "LOCALFILES_RESOURCE_COUNT"),
        ("number", "3")
    );
    assert_eq!(output(&outputs, "LOCALFILES_READY"), ("bool", "true"));
    // Compact JSON text (the SDK writes no spaces), sent as `string` so that
    // azd 1.31 writes it to .env as plain JSON (it re-encodes `array`/`object`).
    assert_eq!(
        output(&outputs, "LOCALFILES_RESOURCES"),
        ("string", r#"["db","settings","web"]"#)
    );
    assert_eq!(output(&outputs, "LOCALFILES_PATHS").0, "string");
    assert_eq!(
        json_output(&outputs, "LOCALFILES_PATHS")["db"],
        json!(root.join("db.json").to_str().unwrap())
    );
    let bytes = std::fs::metadata(root.join("settings")).unwrap().len()
        + std::fs::metadata(root.join("db.json")).unwrap().len();
    assert_eq!(
        output(&outputs, "LOCALFILES_BYTES"),
        ("number", bytes.to_string().as_str())
    );

    // Nothing changed: the second deploy is skipped.
    let (again, progress) = with_progress!(p, deploy);
    assert_eq!(
        again.unwrap().skipped_reason,
        pb::ProvisioningSkippedReason::DeploymentState as i32
    );
    assert_eq!(progress, ["Nothing changed since the last deployment"]);

    // A file changed behind the provider's back: preview says Modify for it alone.
    std::fs::write(root.join("settings"), "edited by hand\n").unwrap();
    let (preview, _) = with_progress!(p, preview);
    assert_eq!(
        changes(&preview.unwrap().preview.unwrap()),
        pairs(&[
            ("db", "NoChange"),
            ("settings", "Modify"),
            ("web", "NoChange")
        ])
    );

    let state = p
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    let state = state.state.unwrap();
    let mut ids: Vec<&str> = state.resources.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "localinfra/db.json",
            "localinfra/settings",
            "localinfra/web"
        ]
    );
    assert_eq!(
        output(&state.outputs, "LOCALFILES_READY"),
        ("bool", "false")
    );

    // Without --force the provider asks first; azd under --no-prompt (the
    // simulated azd's default) answers the question's default, no: nothing goes.
    let declined = p
        .destroy(
            pb::ProvisioningDestroyOptions {
                force: false,
                purge: false,
            },
            |_| {},
        )
        .await;
    match declined {
        Err(CallError::Extension(e)) => {
            let e = ProviderError::from_wire(&e);
            assert_eq!(e.code(), Some("destroy_not_confirmed"), "{e:?}");
            assert!(e.suggestion.contains("--force"), "{e:?}");
        }
        other => panic!("expected the removal to be refused, got {other:?}"),
    }
    assert!(
        root.join("web").is_dir() && state_file.is_file(),
        "nothing was removed"
    );

    // Destroy removes what deploy made, and only that.
    let (destroy, progress) = with_progress!(
        p,
        destroy,
        pb::ProvisioningDestroyOptions {
            force: true,
            purge: false
        }
    );
    assert_eq!(destroy.unwrap().invalidated_env_keys, LOCALFILES_OUTPUTS);
    assert_eq!(
        progress,
        [
            "Removing json-store db",
            "Removing file settings",
            "Removing directory web"
        ]
    );
    let listing: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listing, ["README.md"]);
    assert!(!state_file.exists());
    let state = p
        .state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    assert_eq!(state.state.unwrap(), pb::ProvisioningState::default());

    // Bad configurations are refused before anything is touched.
    let unknown_kind = json!({ "resources": [{ "name": "x", "kind": "volcano" }] });
    let r = p
        .initialize(project_path, options("localfiles", &unknown_kind))
        .await;
    assert_invalid_config(r, "volcano");
    let escaping = json!({ "root": "../outside", "resources": [] });
    let r = p
        .initialize(project_path, options("localfiles", &escaping))
        .await;
    assert_invalid_config(r, "inside the project");
    let duplicate = json!({ "resources": [{ "name": "a", "kind": "directory" }, { "name": "a", "kind": "file" }] });
    let r = p
        .initialize(project_path, options("localfiles", &duplicate))
        .await;
    assert_invalid_config(r, "two resources are named 'a'");

    assert_eq!(p.late_messages(), 0);
    sim.shutdown().await;
    let status = ext.wait(Duration::from_secs(10)).await.unwrap();
    assert!(status.success(), "{status}\n{}", ext.stderr_text());
}

// ---------------------------------------------------------------------------
// The largest component on an empty compile cache
// ---------------------------------------------------------------------------

/// The compiled artifacts in a compile cache directory.
fn compiled_artifacts(cache: &Path) -> usize {
    std::fs::read_dir(cache).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
            .count()
    })
}

/// `listen --debug` for `manifest` with its own (empty) compile cache; returns once it is Ready.
async fn start_cold(manifest: &Path, project: &Path, cache: &Path) -> (SimAzd, ExtensionProcess) {
    start_with(
        manifest,
        project,
        cache,
        &cache.with_file_name("cold.log"),
        true,
    )
    .await
}

/// azd gives an extension 15 s to call Ready and then abandons it, so the host signals
/// Ready before compiling, whatever the component's size: here the 19 MB Python component on
/// an empty cache. Ready comes while nothing is compiled yet, the first Initialize waits for
/// the compile and succeeds (on x86_64 with the baseline compiler's code, while the optimised
/// code is compiled into the cache behind it), the next start loads the optimised code from
/// the cache, and azd leaving mid-compile ends `listen` within a second without writing a
/// cache entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_comes_before_a_cold_compile_and_azd_leaving_mid_compile_ends_listen() {
    let Some(manifest) = built_example("python-localfiles") else {
        return;
    };
    let (project, config) = sample_project();
    let caches = tempfile::tempdir().unwrap();

    // Ready, then the first Initialize waits for the compile.
    let cache = caches.path().join("first");
    let started = Instant::now();
    let (sim, mut ext) = start_cold(&manifest, project.path(), &cache).await;
    let ready = started.elapsed();
    assert_eq!(
        compiled_artifacts(&cache),
        0,
        "Ready must come before the component is compiled"
    );
    let p = sim.provider("localfiles", REGISTER_TIMEOUT).await.unwrap();
    p.initialize(
        project.path().to_str().unwrap(),
        options("localfiles", &config),
    )
    .await
    .unwrap();
    let initialized = started.elapsed();
    p.state(pb::ProvisioningStateOptions::default())
        .await
        .unwrap();
    // The optimised code reaches the cache while listen lives on (on x86_64, beside the
    // baseline compiler's).
    let expected = if cfg!(target_arch = "x86_64") { 2 } else { 1 };
    while compiled_artifacts(&cache) < expected && started.elapsed() < Duration::from_secs(300) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stored = started.elapsed();
    assert_eq!(
        compiled_artifacts(&cache),
        expected,
        "the compiles filled the cache"
    );
    if cfg!(target_arch = "x86_64") {
        assert!(
            ext.stderr_text()
                .contains("running the baseline compiler's code"),
            "{}",
            ext.stderr_text()
        );
    }
    println!(
        "python-localfiles on an empty cache: Ready after {ready:?}, first Initialize \
         answered after {initialized:?}, optimised code in the cache after {stored:?}"
    );
    sim.close_streams();
    assert!(ext.wait(REGISTER_TIMEOUT).await.unwrap().success());

    // The next start runs the optimised code from the cache.
    let started = Instant::now();
    let (sim, mut ext) = start_cold(&manifest, project.path(), &cache).await;
    let p = sim.provider("localfiles", REGISTER_TIMEOUT).await.unwrap();
    p.initialize(
        project.path().to_str().unwrap(),
        options("localfiles", &config),
    )
    .await
    .unwrap();
    println!(
        "the next start: first Initialize answered after {:?}",
        started.elapsed()
    );
    assert!(
        ext.stderr_text().contains("loaded from the cache"),
        "{}",
        ext.stderr_text()
    );
    sim.close_streams();
    assert!(ext.wait(REGISTER_TIMEOUT).await.unwrap().success());

    // azd goes away while the component compiles.
    let cache = caches.path().join("second");
    let (sim, mut ext) = start_cold(&manifest, project.path(), &cache).await;
    assert_eq!(compiled_artifacts(&cache), 0);
    let left = Instant::now();
    sim.close_streams();
    let status = ext.wait(Duration::from_secs(10)).await.unwrap();
    let took = left.elapsed();
    println!("azd left mid-compile: listen exited in {took:?} ({status})");
    assert!(status.success(), "{status}\n{}", ext.stderr_text());
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(
        compiled_artifacts(&cache),
        0,
        "the abandoned compile wrote nothing"
    );
}
