//! JavaScript providers at full strength (ComponentizeJS): the test guest
//! `host/cli/tests/guests/js-io` with the repository's helpers (`guest-sdk/js`)
//! in a fresh project, built by `azd-wasm-host build` (npm installs the
//! tools `guest-sdk/js/package.json` pins), then driven by `run`: deploy
//! fetches from a loopback HTTP server with a bearer token from a stand-in
//! azd and writes a file in its granted folder; state reads it back; down
//! removes it. A folder or origin the policy does not grant is refused with
//! the error naming the grant.
//!
//! Needs Node.js and npm (the npm registry, or npm's cache).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use azd_wasm_host_fixtures::{copy_dir, output_text as text, repo_root};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

/// A loopback HTTP server answering every GET with `body`, keeping each
/// request's `authorization` header.
fn serve(body: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut auth = String::from("<none>");
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("authorization:") {
                    auth = v.trim().to_owned();
                }
            }
            keep.lock().unwrap().push(auth);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (origin, seen)
}

/// The guest and the helpers in a fresh project at `dir`, its policy granting `origin`.
fn project(dir: &Path, origin: &str) {
    let guest = repo_root().join("host/cli/tests/guests/js-io");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("wit/deps")).unwrap();
    std::fs::copy(guest.join("provider.js"), dir.join("provider.js")).unwrap();
    let manifest = std::fs::read_to_string(guest.join("provider.toml")).unwrap();
    std::fs::write(
        dir.join("provider.toml"),
        manifest.replace("{{origin}}", origin),
    )
    .unwrap();
    for helper in ["azd-provider.js", "azd-io.js"] {
        std::fs::copy(
            repo_root().join("guest-sdk/js").join(helper),
            dir.join("lib").join(helper),
        )
        .unwrap();
    }
    std::fs::copy(
        repo_root().join("guest-sdk/js/package.json"),
        dir.join("package.json"),
    )
    .unwrap();
    copy_dir(&repo_root().join("wit"), &dir.join("wit"));
}

/// A stand-in for `azd auth token`: a token named after the scope.
fn fake_azd(dir: &Path) -> PathBuf {
    let script = dir.join("fake-azd");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf '{\"token\":\"tok-%s\",\"expiresOn\":\"2030-01-02T03:04:05Z\"}' \"$6\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn host(dir: &Path, args: &[&str], root: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("AZD_WASM_HOST_CACHE_DIR", root.join("cache"))
        .env("AZD_WASM_HOST_AZD", fake_azd(root))
        .env_remove("AZURE_ENV_NAME")
        .output()
        .unwrap()
}

fn azure_yaml(dir: &Path, config: &str) {
    std::fs::write(
        dir.join("azure.yaml"),
        format!("name: js-io-test\ninfra:\n  provider: js-io\n  config: {config}\n"),
    )
    .unwrap();
}

#[test]
fn a_javascript_provider_fetches_with_a_token_and_keeps_a_file_in_its_granted_folder() {
    let root = tempfile::tempdir().unwrap();
    let (origin, seen) = serve("hello from the service");
    let dir = root.path().join("js-io");
    project(&dir, &origin);
    let out = host(&dir, &["build"], root.path());
    assert!(out.status.success(), "build failed:\n{}", text(&out));
    let check = host(&dir, &["check", "provider.toml"], root.path());
    let report = text(&check);
    assert!(check.status.success(), "{report}");
    for import in [
        "wasi:http/outgoing-handler",
        "wasi:filesystem/preopens",
        "azd:credentials/credentials",
    ] {
        assert!(
            report.contains(import),
            "the component does not import {import}:\n{report}"
        );
    }

    let scope = "https://storage.azure.com/.default";
    azure_yaml(
        &dir,
        &format!("{{ url: \"{origin}/data\", dir: out, scope: \"{scope}\" }}"),
    );
    let out = host(&dir, &["run", "provision", "--output", "json"], root.path());
    let deployed: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout))
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(
        deployed["outputs"]["BODY"]["value"], "hello from the service",
        "{deployed}"
    );
    assert_eq!(deployed["outputs"]["STATUS"]["value"], "200", "{deployed}");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [format!("bearer tok-{scope}")]
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/fetched.json")).unwrap())
            .unwrap();
    assert_eq!(saved["body"], "hello from the service");

    let out = host(&dir, &["run", "state", "--output", "json"], root.path());
    let state: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout))
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(
        state["outputs"]["FILES"]["value"], "fetched.json",
        "{state}"
    );

    let out = host(&dir, &["run", "down", "--force"], root.path());
    assert!(out.status.success(), "{}", text(&out));
    assert!(!dir.join("out/fetched.json").exists());
    assert!(
        text(&out).contains("Removed fetched.json"),
        "{}",
        text(&out)
    );

    // An origin the policy does not grant: the error names the grant to add.
    azure_yaml(&dir, "{ url: \"http://127.0.0.1:9/nope\", dir: out }");
    let out = host(&dir, &["run", "provision"], root.path());
    assert!(!out.status.success());
    assert!(text(&out).contains("http://127.0.0.1:9"), "{}", text(&out));
    // A folder the policy does not grant.
    azure_yaml(&dir, &format!("{{ url: \"{origin}/data\", dir: secrets }}"));
    let out = host(&dir, &["run", "provision"], root.path());
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no folder secrets is granted"),
        "{}",
        text(&out)
    );
}
