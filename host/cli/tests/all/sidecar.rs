//! The shipped sidecar (`azd-wasm-host-sidecar`, which carries no compiler),
//! from a package `azd-wasm-host package` made, unpacked the way azd unpacks
//! it, serving under the simulated azd: it runs its package's precompiled code
//! without compiling. Signed, any change to the code, its binding or the
//! component is refused as untrusted (the signature names them all); unsigned
//! and allowed, it still refuses, naming the fix, code that belongs to
//! another platform, another component or another host version, code that is
//! missing, code that is not the code its binding names, and code wasmtime
//! cannot load. The development CLI in the same place compiles instead.
//!
//! Needs the C example built (`scripts/build-examples.sh`) and the sidecar
//! built beside the CLI (`cargo build -p azd-wasm-host-sidecar`);
//! `scripts/test.sh` does both.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use azd_wasm_host_core::json::object_to_struct;
use azd_wasm_host_fixtures::{c_hello_provider, copy_dir};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{CallError, SimAzd, SimOptions, SpawnOptions};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");
const PROVIDER: &str = "c-hello";
/// The extension the C example's `extension.yaml` names, which its package is
/// signed for: azd installs it in a folder of that name.
const EXTENSION: &str = "azd.wasm-host";

/// Where azd would have installed the extension, for the case `name`:
/// `<root>/<name>/azd.wasm-host` (the consent identity's extension is the
/// folder's name).
fn installed_at(root: &Path, name: &str) -> PathBuf {
    root.join(name).join(EXTENSION)
}

/// The sidecar cargo built beside the CLI.
fn sidecar() -> PathBuf {
    let path = Path::new(BIN).with_file_name(format!(
        "azd-wasm-host-sidecar{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p azd-wasm-host-sidecar` (scripts/test.sh does)",
        path.display()
    );
    path
}

/// This machine's platform and another Linux one, as azd names them, and the
/// ELF machine number of the other.
fn platforms() -> (String, String, u16) {
    if cfg!(target_arch = "aarch64") {
        ("linux/arm64".into(), "linux/amd64".into(), 0x3e)
    } else {
        ("linux/amd64".into(), "linux/arm64".into(), 0xb7)
    }
}

/// The C example packaged for this machine (with the sidecar) and for the
/// other Linux platform (with a stand-in binary: `package` reads only its
/// headers); returns the two archives, this machine's first.
fn package(root: &Path) -> (PathBuf, PathBuf) {
    package_asking(root, false)
}

/// [`package`], the provider asking for an environment variable when `grant`
/// (what a user must allow before it runs).
fn package_asking(root: &Path, grant: bool) -> (PathBuf, PathBuf) {
    let dir = root.join("provider");
    c_hello_provider(&dir);
    if grant {
        let manifest = dir.join("provider.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let asking = text.replace("[policy]\n", "[policy]\nenv = [\"C_HELLO_GREETING\"]\n");
        assert_ne!(text, asking, "the example's manifest has no [policy] line");
        std::fs::write(&manifest, asking).unwrap();
    }
    let (here, other, machine) = platforms();
    let stand_in = root.join("other-host");
    let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
    elf.resize(18, 0);
    elf.extend_from_slice(&machine.to_le_bytes());
    elf.resize(4096, 0);
    std::fs::write(&stand_in, elf).unwrap();
    let out = Command::new(BIN)
        .env("AZD_CONFIG_DIR", root.join("azd-config"))
        .arg("package")
        .args(["--host", &format!("{here}={}", sidecar().display())])
        .args(["--host", &format!("{other}={}", stand_in.display())])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "package failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let archive = |p: &str| dir.join(format!("dist/azd-wasm-host-{}.tar.gz", p.replace('/', "-")));
    (archive(&here), archive(&other))
}

fn unpack(archive: &Path, into: &Path) {
    let bytes = std::fs::read(archive).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
        .unpack(into)
        .unwrap();
}

/// Starts the binary of `installed` as azd starts an extension (no manifest
/// named: the one beside it; an empty compile cache of its own), sends one
/// Initialize, and returns its result and the process's debug log.
async fn initialize(installed: &Path) -> (Result<(), CallError>, String) {
    initialize_as(installed, false).await
}

/// [`initialize`], with unsigned providers allowed or not.
async fn initialize_as(installed: &Path, allow_unsigned: bool) -> (Result<(), CallError>, String) {
    let allow = allow_unsigned.to_string();
    initialize_with(
        installed,
        &[("AZD_WASM_HOST_ALLOW_UNSIGNED", allow.as_ref())],
    )
    .await
}

/// [`initialize`], with `env` set for the extension besides.
async fn initialize_with(
    installed: &Path,
    env: &[(&str, &std::ffi::OsStr)],
) -> (Result<(), CallError>, String) {
    let project = tempfile::tempdir().unwrap();
    let case = installed.parent().unwrap();
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut cmd = tokio::process::Command::new(installed.join("azd-wasm-host"));
    cmd.env("AZD_WASM_HOST_CACHE_DIR", case.join("cache"))
        .env("AZD_WASM_HOST_LOG_FILE", case.join("sidecar.log"))
        .env("AZD_DEBUG", "true")
        // The trust folder `package` signed with: its key is trusted there.
        .env("AZD_CONFIG_DIR", case.with_file_name("azd-config"))
        .env_remove("AZD_WASM_HOST_MANIFEST")
        .envs(env.iter().copied());
    let opts = SpawnOptions {
        capture_stderr: true,
        cwd: Some(project.path().to_path_buf()),
        environment: Some("dev".into()),
        ..SpawnOptions::default()
    };
    let mut ext = sim.spawn_extension_with(cmd, opts).await.unwrap();
    let p = sim
        .provider(PROVIDER, Duration::from_secs(30))
        .await
        .unwrap();
    let config = json!({ "name": "sidecar" });
    let options = pb::ProvisioningOptions {
        provider: PROVIDER.to_owned(),
        config: Some(object_to_struct(config.as_object().unwrap())),
        ..Default::default()
    };
    let result = p
        .initialize(project.path().to_str().unwrap(), options)
        .await;
    if result.is_ok() {
        let deployed = p.deploy(|_| {}).await.unwrap().deployment.unwrap().outputs;
        assert_eq!(deployed["GREETING"].value, "Hello, sidecar!");
    }
    sim.shutdown().await;
    let status = ext.wait(Duration::from_secs(10)).await.unwrap();
    let log = ext.stderr_text();
    assert!(status.success(), "{status}\n{log}");
    (result, log)
}

/// The error Initialize answered, which must name the fix.
fn refusal(result: Result<(), CallError>, log: &str) -> String {
    let Err(CallError::Extension(e)) = result else {
        panic!("Initialize did not fail as expected: {result:?}\n{log}");
    };
    assert!(
        e.message
            .contains("Repackage the provider with `azd-wasm-host package`"),
        "{}",
        e.message
    );
    assert!(
        !log.contains("loaded from its package's precompiled code"),
        "{log}"
    );
    e.message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sidecar_runs_its_package_code_and_refuses_code_that_is_not_its_own() {
    let root = tempfile::tempdir().unwrap();
    let (native, other) = package(root.path());
    let installed = installed_at(root.path(), "installed");
    unpack(&native, &installed);
    let (result, log) = initialize(&installed).await;
    result.unwrap();
    assert!(
        log.contains("loaded from its package's precompiled code (no compile)"),
        "{log}"
    );
    assert!(
        !installed.with_file_name("cache").exists(),
        "the sidecar wrote a compile cache"
    );
    let other_unpacked = root.path().join("other");
    unpack(&other, &other_unpacked);
    let (here, there, _) = platforms();

    // Another platform's code (the other archive's, compiled for its CPU and OS): signed, its
    // binding is not the one signed; unsigned and allowed, the binding says why it does not fit.
    let case = installed_at(root.path(), "other-platform");
    copy_dir(&installed, &case);
    std::fs::remove_dir_all(case.join("precompiled")).unwrap();
    copy_dir(
        &other_unpacked.join("precompiled"),
        &case.join("precompiled"),
    );
    let (result, log) = initialize(&case).await;
    untrusted(result, &log, "binding.toml was changed after it was signed");
    unsigned(&case);
    let (result, log) = initialize_as(&case, true).await;
    let message = refusal(result, &log);
    assert!(
        message.contains(&format!("it was compiled for {there}, and this is {here}")),
        "{message}"
    );

    // The development CLI in the same place compiles instead (it has a compiler).
    let dev = installed_at(root.path(), "other-platform-dev");
    copy_dir(&case, &dev);
    std::fs::copy(BIN, dev.join("azd-wasm-host")).unwrap();
    let (result, log) = initialize_as(&dev, true).await;
    result.unwrap();
    assert!(
        log.contains("the package's precompiled code is not used; compiling"),
        "{log}"
    );

    // Another component beside the code.
    let case = installed_at(root.path(), "other-component");
    copy_dir(&installed, &case);
    let mut wasm = std::fs::read(case.join("build/c-hello.wasm")).unwrap();
    // A custom section appended: still a valid component, with another sha256.
    wasm.extend_from_slice(b"\x00\x05\x04note");
    std::fs::write(case.join("build/c-hello.wasm"), wasm).unwrap();
    // Signed, the changed component is refused by its signature before anything is loaded.
    let (result, log) = initialize(&case).await;
    untrusted(result, &log, "c-hello.wasm was changed after it was signed");
    // Unsigned and allowed to run unsigned, its precompiled code still is not this component's.
    unsigned(&case);
    let (result, log) = initialize_as(&case, true).await;
    let message = refusal(result, &log);
    assert!(
        message.contains("compiled from another component"),
        "{message}"
    );

    // Another host version.
    let case = installed_at(root.path(), "other-version");
    copy_dir(&installed, &case);
    let binding = case.join("precompiled/binding.toml");
    let text = std::fs::read_to_string(&binding).unwrap();
    let version = format!("host_version = \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(text.contains(&version), "{text}");
    std::fs::write(&binding, text.replace(&version, "host_version = \"0.0.1\"")).unwrap();
    let (result, log) = initialize(&case).await;
    untrusted(result, &log, "binding.toml was changed after it was signed");
    unsigned(&case);
    let (result, log) = initialize_as(&case, true).await;
    let message = refusal(result, &log);
    assert!(
        message.contains("it was compiled by azd-wasm-host 0.0.1"),
        "{message}"
    );

    // No precompiled code at all: signed, its signature names files that are gone.
    let case = installed_at(root.path(), "no-code");
    copy_dir(&installed, &case);
    std::fs::remove_dir_all(case.join("precompiled")).unwrap();
    let (result, log) = initialize(&case).await;
    untrusted(result, &log, "provider.cwasm is signed by");
    unsigned(&case);
    let (result, log) = initialize_as(&case, true).await;
    let message = refusal(result, &log);
    assert!(message.contains("there is no"), "{message}");

    // Code that is not wasmtime's: signed, not the signed code; unsigned, not the code its
    // binding names; and with a binding that names it, wasmtime refuses it.
    let case = installed_at(root.path(), "broken-code");
    copy_dir(&installed, &case);
    std::fs::write(case.join("precompiled/provider.cwasm"), b"not code").unwrap();
    let (result, log) = initialize(&case).await;
    untrusted(
        result,
        &log,
        "provider.cwasm was changed after it was signed",
    );
    unsigned(&case);
    let (result, log) = initialize_as(&case, true).await;
    untrusted(result, &log, "is not the code its binding");
    let binding = case.join("precompiled/binding.toml");
    let text = std::fs::read_to_string(&binding).unwrap();
    use sha2::Digest as _;
    let named: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("code_sha256") {
                format!(
                    "code_sha256 = \"{}\"",
                    hex::encode(sha2::Sha256::digest(b"not code"))
                )
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(&binding, named.join("\n") + "\n").unwrap();
    let (result, log) = initialize_as(&case, true).await;
    let message = refusal(result, &log);
    assert!(message.contains("wasmtime refused"), "{message}");
}

/// Removes the package's signature (its files then run only where unsigned providers are allowed).
fn unsigned(case: &Path) {
    std::fs::remove_file(case.join("provider.sigstore.json")).unwrap();
}

/// Initialize refused the provider as untrusted, naming `what`, before any code was mapped.
fn untrusted(result: Result<(), CallError>, log: &str, what: &str) {
    let Err(CallError::Extension(e)) = result else {
        panic!("it ran: {result:?}\n{log}");
    };
    assert!(e.message.contains(what), "{}", e.message);
    let e = azd_wasm_host_core::ProviderError::from_wire(&e);
    assert_eq!(e.code(), Some("untrusted_provider"), "{e:?}");
    assert!(
        !log.contains("loaded from its package's precompiled code"),
        "{log}"
    );
}

/// The packaged sidecar carries no recorder: asked to record a golden
/// conversation (`AZD_WASM_HOST_RECORD`, as under azd), it hands the session
/// to the development CLI, which serves it and writes the conversation; with
/// no development CLI to hand it to (or only itself), it says how to get one,
/// and serves nothing unrecorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sidecar_hands_a_recording_to_the_development_cli() {
    let root = tempfile::tempdir().unwrap();
    let (native, _) = package(root.path());
    let installed = installed_at(root.path(), "installed");
    unpack(&native, &installed);
    let recording = root.path().join("golden/provision.conversation.jsonl");
    std::fs::create_dir_all(recording.parent().unwrap()).unwrap();

    // No development CLI, or only the packaged sidecar itself: a clear refusal naming both ways
    // out, before azd is contacted.
    let sidecar = installed.join("azd-wasm-host");
    for (dev_cli, why) in [
        (root.path().join("no-such-cli"), "no-such-cli"),
        (sidecar.clone(), "names this packaged sidecar"),
    ] {
        let out = Command::new(&sidecar)
            .arg("listen")
            .env("AZD_WASM_HOST_RECORD", &recording)
            .env("AZD_WASM_HOST_DEV_CLI", &dev_cli)
            .env_remove("AZD_SERVER")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(why)
                && stderr.contains("AZD_WASM_HOST_DEV_CLI")
                && stderr.contains("unset AZD_WASM_HOST_RECORD"),
            "{stderr}"
        );
        assert!(!recording.exists());
    }

    // With the development CLI named, the session is served and recorded.
    let (result, log) = recorded_session(&installed, &recording, &[]).await;
    result.unwrap();
    let text = std::fs::read_to_string(&recording).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["from"], "recording", "{text}\n{log}");
    assert_eq!(first["provider"], PROVIDER, "{text}");
    assert!(
        text.lines().count() >= 5 && text.contains("\"from\":\"azd\""),
        "{text}"
    );

    // The development CLI checks the installed provider as the sidecar would: unsigned, it is
    // refused (unsigned providers not allowed), however it was started.
    let case = installed_at(root.path(), "unsigned");
    copy_dir(&installed, &case);
    unsigned(&case);
    let (result, log) = recorded_session(&case, &recording, &[]).await;
    untrusted(result, &log, "not signed");
}

/// A handed-over session asks for the user's consent as the sidecar does: a
/// provider asking for a grant not allowed yet is refused under azd's
/// `--no-prompt`, naming it, though the development CLI serves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_over_recording_still_needs_the_users_consent() {
    let root = tempfile::tempdir().unwrap();
    let (native, _) = package_asking(root.path(), true);
    let installed = installed_at(root.path(), "installed");
    unpack(&native, &installed);
    let recording = root.path().join("provision.conversation.jsonl");
    let (result, log) =
        recorded_session(&installed, &recording, &[("AZD_NO_PROMPT", "true")]).await;
    let Err(CallError::Extension(e)) = result else {
        panic!("it ran without consent: {result:?}\n{log}");
    };
    assert!(e.message.contains("C_HELLO_GREETING"), "{}", e.message);
    let e = azd_wasm_host_core::ProviderError::from_wire(&e);
    assert_eq!(e.code(), Some("consent_required"), "{e:?}");
}

/// [`initialize`] of the packaged sidecar of `installed` with
/// `AZD_WASM_HOST_RECORD=recording` and the development CLI named (unsigned
/// providers not allowed), and `env` besides.
async fn recorded_session(
    installed: &Path,
    recording: &Path,
    env: &[(&str, &str)],
) -> (Result<(), CallError>, String) {
    let mut all: Vec<(&str, &std::ffi::OsStr)> = vec![
        ("AZD_WASM_HOST_RECORD", recording.as_os_str()),
        ("AZD_WASM_HOST_DEV_CLI", BIN.as_ref()),
        ("AZD_WASM_HOST_ALLOW_UNSIGNED", "false".as_ref()),
    ];
    all.extend(env.iter().map(|(k, v)| (*k, v.as_ref())));
    initialize_with(installed, &all).await
}
