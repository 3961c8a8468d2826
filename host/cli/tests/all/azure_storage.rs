//! The `azure-storage` example against Azurite, the Azure Storage emulator: the real binary
//! runs `run preview|provision|state|down` on a project that declares containers, a queue and a
//! table, and after each step this test reads Azurite's own listings (its REST API, signed with
//! the account key by the test's own code) to see what exists.
//!
//! Azurite is installed by `scripts/install-azurite.sh` (pinned, once per version under
//! `.tools/`), which this test runs, and started on free loopback ports, in memory, for each test
//! and killed after it. The component is built by `scripts/build-rust-example.sh`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");
/// Azurite's one account and its published key (not a secret: every Azurite has it).
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example() -> Option<PathBuf> {
    let dir = repo().join("examples/azure-storage");
    if dir.join("build/azure-storage.wasm").is_file() {
        return Some(dir);
    }
    if std::env::var("AZD_WASM_HOST_SKIP_EXAMPLES").is_ok_and(|v| v == "1") {
        println!("skipped: azure-storage is not built (AZD_WASM_HOST_SKIP_EXAMPLES=1)");
        return None;
    }
    panic!(
        "examples/azure-storage/build/azure-storage.wasm is missing: run \
         scripts/build-rust-example.sh (or set AZD_WASM_HOST_SKIP_EXAMPLES=1)"
    );
}

/// A running Azurite on three free loopback ports, killed when dropped.
struct Azurite {
    child: Child,
    /// Blob, queue and table ports.
    ports: [u16; 3],
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port, held until the caller drops the listener (just before Azurite binds).
fn free_port() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn start_azurite() -> Azurite {
    start_azurite_with(&[])
}

/// Azurite with more arguments (`--cert`, `--key` for HTTPS).
fn start_azurite_with(extra: &[&str]) -> Azurite {
    let install = Command::new(repo().join("scripts/install-azurite.sh"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "scripts/install-azurite.sh failed"
    );
    let bin = String::from_utf8(install.stdout).unwrap().trim().to_owned();
    let held = [free_port(), free_port(), free_port()];
    let ports = held.each_ref().map(|(_, port)| *port);
    drop(held);
    let child = Command::new(bin)
        .args([
            "--silent",
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--disableTelemetry",
        ])
        .args(["--blobHost", "127.0.0.1", "--queueHost", "127.0.0.1"])
        .args(["--tableHost", "127.0.0.1"])
        .args(["--blobPort", &ports[0].to_string()])
        .args(["--queuePort", &ports[1].to_string()])
        .args(["--tablePort", &ports[2].to_string()])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut azurite = Azurite { child, ports };
    let deadline = Instant::now() + Duration::from_secs(60);
    for port in ports {
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = azurite.child.try_wait().unwrap() {
                panic!("Azurite exited ({status}) before it listened on {port}");
            }
            assert!(
                Instant::now() < deadline,
                "Azurite did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    azurite
}

impl Azurite {
    fn endpoint(&self, service: usize) -> String {
        format!("http://127.0.0.1:{}/{ACCOUNT}", self.ports[service])
    }

    /// A project with the example's azure.yaml and manifest, pointed at this Azurite.
    fn project(&self, example: &Path) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut yaml = std::fs::read_to_string(example.join("project/azure.yaml")).unwrap();
        let mut manifest = std::fs::read_to_string(example.join("provider.toml")).unwrap();
        for (default, port) in [10000, 10001, 10002].into_iter().zip(self.ports) {
            let (from, to) = (format!("127.0.0.1:{default}"), format!("127.0.0.1:{port}"));
            assert!(yaml.contains(&from) && manifest.contains(&from), "{from}");
            yaml = yaml.replace(&from, &to);
            manifest = manifest.replace(&from, &to);
        }
        let component = example.join("build/azure-storage.wasm");
        let manifest = manifest.replace(
            "component = \"build/azure-storage.wasm\"",
            &format!("component = {:?}", component.display().to_string()),
        );
        std::fs::write(dir.path().join("azure.yaml"), yaml).unwrap();
        std::fs::write(dir.path().join("provider.toml"), manifest).unwrap();
        dir
    }

    /// One request to Azurite, signed with the account key (Shared Key); status and body.
    async fn call(&self, method: &str, service: usize, path_and_query: &str) -> (u16, String) {
        let url = format!("{}{path_and_query}", self.endpoint(service));
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let path = format!("/{ACCOUNT}{path}");
        let version = "2021-12-02";
        // A request without a body; Content-Length 0 is signed as empty.
        let length = if method == "GET" { "" } else { "0" };
        let to_sign = if service == 2 {
            format!("{method}\n\n\n{date}\n/{ACCOUNT}{path}")
        } else {
            let mut params: Vec<(&str, &str)> = query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once('=').unwrap())
                .collect();
            params.sort_unstable();
            let canonical: String = params.iter().map(|(k, v)| format!("\n{k}:{v}")).collect();
            format!(
                "{method}\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n/{ACCOUNT}{path}{canonical}"
            )
        };
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &STANDARD.decode(KEY).unwrap());
        let signature = STANDARD.encode(ring::hmac::sign(&key, to_sign.as_bytes()).as_ref());
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(&url)
            .header("x-ms-date", &date)
            .header("x-ms-version", version)
            .header("accept", "application/json;odata=nometadata")
            .header("authorization", format!("SharedKey {ACCOUNT}:{signature}"));
        if !length.is_empty() {
            request = request.header("content-length", length);
        }
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<Full<Bytes>>();
        let response = client
            .request(request.body(Full::new(Bytes::new())).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// What Azurite holds: container, queue and table names, each sorted.
    async fn listing(&self) -> [Vec<String>; 3] {
        let (s0, containers) = self.call("GET", 0, "?comp=list").await;
        let (s1, queues) = self.call("GET", 1, "?comp=list").await;
        let (s2, tables) = self.call("GET", 2, "/Tables").await;
        assert_eq!(
            (s0, s1, s2),
            (200, 200, 200),
            "{containers}\n{queues}\n{tables}"
        );
        let names = |xml: &str| {
            let mut names: Vec<String> = xml
                .split("<Name>")
                .skip(1)
                .map(|s| s.split("</Name>").next().unwrap().to_owned())
                .collect();
            names.sort();
            names
        };
        let tables: Value = serde_json::from_str(&tables).unwrap();
        let mut table_names: Vec<String> = tables["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["TableName"].as_str().unwrap().to_owned())
            .collect();
        table_names.sort();
        [names(&containers), names(&queues), table_names]
    }
}

/// The binary in `dir`, with its own compile cache and HOME, no `AZURE_ENV_NAME`, the key.
fn host(dir: &Path, key: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir)
        .env("AZD_WASM_HOST_CACHE_DIR", dir.join(".cache"))
        .env("HOME", dir.join(".home"))
        .env("AZURE_STORAGE_KEY", key)
        .env_remove("AZURE_ENV_NAME")
        .env_remove("AZD_DEBUG")
        .stdin(Stdio::null())
        .args(args);
    cmd
}

async fn run(dir: &Path, args: &[&str]) -> Output {
    run_with_key(dir, KEY, args).await
}

/// [`run`] with another account key in `AZURE_STORAGE_KEY`.
async fn run_with_key(dir: &Path, key: &str, args: &[&str]) -> Output {
    let mut cmd = host(dir, key, args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// The JSON report of a `--output json` step that must succeed.
fn report(step: &str, out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{step}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// Each preview change as `(changeType, name)`.
fn changes(preview: &Value) -> Vec<(String, String)> {
    preview["preview"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["changeType"].as_str().unwrap().to_owned(),
                c["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_previews_provisions_reads_and_destroys_what_azurite_holds() {
    let Some(example) = example() else {
        return;
    };
    let azurite = start_azurite();
    let project = azurite.project(&example);
    let dir = project.path();
    // Something the project does not declare, which no step may touch.
    assert_eq!(
        azurite.call("PUT", 0, "/keep?restype=container").await.0,
        201
    );
    let none: [Vec<String>; 3] = [strings(&["keep"]), vec![], vec![]];
    assert_eq!(azurite.listing().await, none);

    // preview: everything to create, nothing made.
    let preview = report(
        "preview",
        &run(dir, &["run", "preview", "--output", "json"]).await,
    );
    let creates: Vec<(String, String)> = ["web", "uploads", "jobs", "audit"]
        .iter()
        .map(|n| ("Create".to_owned(), (*n).to_owned()))
        .collect();
    assert_eq!(changes(&preview), creates);
    assert_eq!(azurite.listing().await, none);

    // provision: all four exist, and the outputs name them and the endpoints.
    let out = run(dir, &["run", "provision", "--output", "json"]).await;
    let provision = report("provision", &out);
    let all = [
        strings(&["keep", "uploads", "web"]),
        strings(&["jobs"]),
        strings(&["audit"]),
    ];
    assert_eq!(azurite.listing().await, all);
    let outputs = &provision["outputs"];
    assert_eq!(outputs["AZURE_STORAGE_ACCOUNT_NAME"]["value"], ACCOUNT);
    assert_eq!(
        outputs["AZURE_STORAGE_BLOB_ENDPOINT"]["value"],
        azurite.endpoint(0)
    );
    assert_eq!(
        outputs["AZURE_STORAGE_QUEUE_ENDPOINT"]["value"],
        azurite.endpoint(1)
    );
    assert_eq!(
        outputs["AZURE_STORAGE_TABLE_ENDPOINT"]["value"],
        azurite.endpoint(2)
    );
    let containers: Value = serde_json::from_str(
        outputs["AZURE_STORAGE_CONTAINERS"]["value"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(containers, serde_json::json!(["web", "uploads"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for step in [
        "Creating container web",
        "Creating container uploads",
        "Creating queue jobs",
        "Creating table audit",
    ] {
        assert!(stderr.contains(step), "no progress {step:?} in: {stderr}");
    }

    // provision again: nothing to create, so skipped; preview: nothing changes.
    let again = report(
        "provision again",
        &run(dir, &["run", "provision", "--output", "json"]).await,
    );
    assert_eq!(again["skipped"], true, "{again}");
    let preview = report(
        "preview after",
        &run(dir, &["run", "preview", "--output", "json"]).await,
    );
    assert!(
        changes(&preview).iter().all(|(c, _)| c == "NoChange"),
        "{preview}"
    );

    // state after a container is deleted behind the provider's back: what exists, no more.
    assert_eq!(
        azurite
            .call("DELETE", 0, "/uploads?restype=container")
            .await
            .0,
        202
    );
    let state = report(
        "state",
        &run(dir, &["run", "state", "--output", "json"]).await,
    );
    let p = azurite.ports;
    assert_eq!(
        state["resources"],
        serde_json::json!([
            format!("http://127.0.0.1:{}/{ACCOUNT}/web", p[0]),
            format!("http://127.0.0.1:{}/{ACCOUNT}/jobs", p[1]),
            format!("http://127.0.0.1:{}/{ACCOUNT}/Tables('audit')", p[2]),
        ])
    );
    let preview = report(
        "preview again",
        &run(dir, &["run", "preview", "--output", "json"]).await,
    );
    assert!(changes(&preview).contains(&("Create".to_owned(), "uploads".to_owned())));

    // down with no one to ask and no --force: refused, nothing deleted.
    let refused = run(dir, &["run", "down"]).await;
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("the deletion was not confirmed"), "{said}");
    let left = [
        strings(&["keep", "web"]),
        strings(&["jobs"]),
        strings(&["audit"]),
    ];
    assert_eq!(azurite.listing().await, left);

    // down --force: the declared resources are gone; `keep` stays.
    let down = run(dir, &["run", "down", "--force"]).await;
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert_eq!(azurite.listing().await, none);
    let state = report(
        "state after down",
        &run(dir, &["run", "state", "--output", "json"]).await,
    );
    assert_eq!(state["resources"], serde_json::json!([]), "{state}");
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_name_the_service_code_the_key_or_the_grant() {
    let Some(example) = example() else {
        return;
    };
    let azurite = start_azurite();
    let project = azurite.project(&example);
    let dir = project.path();

    // A wrong key: the service's own code and message, and what to check.
    let wrong = STANDARD.encode([7u8; 64]);
    let out = run_with_key(dir, &wrong, &["run", "provision"]).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("AuthorizationFailure"), "{said}");
    assert!(said.contains("check the account key"), "{said}");

    // No key at all: said before any request.
    let out = run_with_key(dir, "", &["run", "provision"]).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("needs the account key in AZURE_STORAGE_KEY"),
        "{said}"
    );

    // The table service's origin not granted: the error names the grant to add.
    let manifest = dir.join("provider.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let table = format!("\"http://127.0.0.1:{}\"", azurite.ports[2]);
    std::fs::write(&manifest, text.replace(&format!(", {table}"), "")).unwrap();
    let out = run(dir, &["run", "provision"]).await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains(&format!("add {table} to `allow` under [policy.http]")),
        "{said}"
    );
    // Deploy lists every service before it creates anything, so nothing was made.
    let nothing: [Vec<String>; 3] = Default::default();
    assert_eq!(azurite.listing().await, nothing);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_the_host_does_not_trust_is_a_tls_error_not_a_hang() {
    let Some(example) = example() else {
        return;
    };
    // Azurite over HTTPS with a self-signed certificate, which no root the host trusts signed.
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null())
        .status()
        .expect("openssl (Debian package openssl) makes the test's certificate");
    assert!(made.success());
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let azurite = start_azurite_with(&["--cert", &cert, "--key", &key]);
    let project = azurite.project(&example);
    let dir = project.path();
    for file in ["azure.yaml", "provider.toml"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        std::fs::write(
            dir.join(file),
            text.replace("http://127.0.0.1", "https://127.0.0.1"),
        )
        .unwrap();
    }
    let started = Instant::now();
    let out = run(dir, &["run", "provision"]).await;
    let said = String::from_utf8_lossy(&out.stderr);
    println!("{said}");
    assert!(!out.status.success());
    assert!(said.contains("tls-") || said.contains("Tls"), "{said}");
    assert!(
        said.contains("check the host name and that its certificate is valid"),
        "{said}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

/// `azd-wasm-host test` in `dir`: its exit code, stdout and stderr.
async fn test_cmd(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["test"];
    all.extend_from_slice(args);
    let out = run_with_key(dir, "", &all).await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A test file for a project pointed at `azurite`: the lifecycle, with the key given the way a
/// test file gives it (`process_env`), not by the environment `test` runs in.
fn lifecycle_test(azurite: &Azurite) -> String {
    format!(
        r#"[project]
from = ".."
process_env = {{ AZURE_STORAGE_KEY = "{KEY}" }}

[[step]]
command = "preview"
expect.plan = {{ create = 4 }}

[[step]]
command = "provision"
expect.outputs = {{ AZURE_STORAGE_BLOB_ENDPOINT = "{}", AZURE_STORAGE_CONTAINERS = '["web","uploads"]' }}

[[step]]
command = "state"
expect.resources = [{{ contains = "/web" }}, {{ contains = "/uploads" }}, {{ contains = "/jobs" }}, {{ contains = "audit" }}]

[[step]]
command = "down"
expect.progress = ["Deleting container web"]
"#,
        azurite.endpoint(0)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_test_recorded_against_azurite_replays_with_azurite_gone() {
    let Some(example) = example() else {
        return;
    };
    let azurite = start_azurite();
    let project = azurite.project(&example);
    let dir = project.path();
    std::fs::create_dir(dir.join("tests")).unwrap();
    let file = dir.join("tests/lifecycle.test.toml");
    std::fs::write(&file, lifecycle_test(&azurite)).unwrap();

    // Recorded against the real service, credentials redacted.
    let (code, stdout, stderr) = test_cmd(dir, &["--record", "tests"]).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("exchange(s) into"), "{stderr}");
    let cassette_path = dir.join("tests/cassettes/lifecycle.json");
    let cassette = std::fs::read_to_string(&cassette_path).unwrap();
    assert!(cassette.contains("\"PUT\""), "{cassette}");
    assert!(cassette.contains("authorization: REDACTED"), "{cassette}");
    for secret in [KEY, "SharedKey "] {
        assert!(!cassette.contains(secret), "the cassette holds {secret:?}");
    }
    // The steps ran against Azurite: `down` left it empty.
    assert_eq!(
        azurite.listing().await,
        [Vec::<String>::new(), vec![], vec![]]
    );

    // Azurite gone: the replay passes, and live it would not.
    let ports = azurite.ports;
    drop(azurite);
    for port in ports {
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    }
    let (code, stdout, stderr) = test_cmd(dir, &["tests"]).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("replayed from"), "{stderr}");
    let (code, stdout, _) = test_cmd(dir, &["--live", "tests"]).await;
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("connection"), "{stdout}");

    // A changed expectation fails with what came instead.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(r#"'["web","uploads"]'"#, r#"'["web"]'"#),
    )
    .unwrap();
    let (code, stdout, _) = test_cmd(dir, &["tests"]).await;
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(r#"expected "[\"web\"]", got "[\"web\",\"uploads\"]""#),
        "{stdout}"
    );
    std::fs::write(&file, &text).unwrap();

    // A request the recording does not hold fails with the nearest recorded one.
    let yaml = std::fs::read_to_string(dir.join("azure.yaml")).unwrap();
    std::fs::write(dir.join("azure.yaml"), yaml.replace("uploads", "upload")).unwrap();
    let (code, stdout, _) = test_cmd(dir, &["tests"]).await;
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("no recorded answer for PUT")
            && stdout.contains("/upload?restype=container; nearest recorded: PUT")
            && stdout.contains("/uploads?restype=container"),
        "{stdout}"
    );
}
