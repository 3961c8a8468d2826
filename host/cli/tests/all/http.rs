//! Outbound HTTP under `[policy.http]`, end to end: the real binary runs the
//! `http-probe` test guest (`host/cli/tests/guests/http-probe`, built by
//! `scripts/build-rust-example.sh`) with `run provision`, against loopback
//! servers this test starts and watches.
//!
//! What the sandbox must hold: a request to an origin the manifest does not
//! grant is refused without a connection (the listener counts them), a body
//! past `max_response_bytes` fails whether or not it says its length, a
//! server that stalls (before or during TLS) costs a request's timeout and
//! not the call's, and the error azd shows names the grant to add.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

/// The probes that are built: the Rust one (`scripts/build-rust-example.sh`), the Python, C and
/// Go ones (`scripts/build-examples.sh`). They report the same outputs; the C one reads its
/// URLs from one string and has no `fail_on_error` (its config helper reads top-level strings).
fn probes() -> Vec<PathBuf> {
    let guests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guests");
    let mut found = Vec::new();
    for (path, script) in [
        (
            guests.join("http-probe/build/http-probe.wasm"),
            "scripts/build-rust-example.sh",
        ),
        (
            guests.join("http-probe-py/build/http-probe-py.wasm"),
            "scripts/build-examples.sh",
        ),
        (
            guests.join("http-probe-c/build/http-probe-c.wasm"),
            "scripts/build-examples.sh",
        ),
        (
            guests.join("http-probe-go/build/http-probe-go.wasm"),
            "scripts/build-examples.sh",
        ),
    ] {
        if path.is_file() {
            found.push(path);
        } else if std::env::var("AZD_WASM_HOST_SKIP_EXAMPLES").is_ok_and(|v| v == "1") {
            println!(
                "skipped: {} is not built (AZD_WASM_HOST_SKIP_EXAMPLES=1)",
                path.display()
            );
        } else {
            panic!(
                "{} is missing: run {script} (or set AZD_WASM_HOST_SKIP_EXAMPLES=1)",
                path.display()
            );
        }
    }
    found
}

fn is_c(component: &Path) -> bool {
    component.ends_with("http-probe-c/build/http-probe-c.wasm")
}

/// A loopback HTTP/1.1 server that answers by path and counts connections.
struct Server {
    port: u16,
    connections: Arc<AtomicUsize>,
}

async fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                    if head.first() == Some(&0x16) {
                        // A TLS ClientHello: stall, as a server that never finishes a handshake.
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let reply: Vec<u8> = match path.as_str() {
                    "/echo-length" => {
                        let Some(got) = read_body(&mut sock, &text, &head).await else {
                            return;
                        };
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{got}",
                            got.len()
                        )
                        .into_bytes()
                    }
                    "/ok" => {
                        b"HTTP/1.1 200 OK\r\ncontent-length: 19\r\n\r\nhello from loopback".to_vec()
                    }
                    "/whoami" => {
                        let auth = text
                            .lines()
                            .find_map(|l| l.strip_prefix("authorization: "))
                            .unwrap_or("nobody")
                            .to_owned();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{auth}",
                            auth.len()
                        )
                        .into_bytes()
                    }
                    "/big" => {
                        let mut r = b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n".to_vec();
                        r.resize(r.len() + 5000, b'x');
                        r
                    }
                    "/chunked" => {
                        let mut r =
                            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
                        for _ in 0..10 {
                            r.extend_from_slice(b"200\r\n");
                            r.resize(r.len() + 0x200, b'y');
                            r.extend_from_slice(b"\r\n");
                        }
                        r.extend_from_slice(b"0\r\n\r\n");
                        r
                    }
                    _ => {
                        // "/slow" and anything else: never answer.
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    }
                };
                let _ = sock.write_all(&reply).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Server { port, connections }
}

/// The request body after a request's head (`head` holds what was read so far), as what
/// `/echo-length` answers: "N bytes" for a `content-length` body, "N bytes, chunked" for a
/// chunked one.
async fn read_body(sock: &mut tokio::net::TcpStream, text: &str, head: &[u8]) -> Option<String> {
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let mut rest = head[end..].to_vec();
    let lower = text.to_lowercase();
    let mut buf = [0u8; 4096];
    if lower.contains("transfer-encoding: chunked") {
        // Read to the last chunk, then count the data of every chunk.
        while !rest.windows(5).any(|w| w == b"0\r\n\r\n") {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => rest.extend_from_slice(&buf[..n]),
            }
        }
        let (mut at, mut total) = (0, 0);
        loop {
            let line_end = at + rest[at..].windows(2).position(|w| w == b"\r\n")?;
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[at..line_end]).ok()?, 16).ok()?;
            if size == 0 {
                return Some(format!("{total} bytes, chunked"));
            }
            total += size;
            at = line_end + 2 + size + 2;
        }
    }
    let length: usize = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while rest.len() < length {
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => rest.extend_from_slice(&buf[..n]),
        }
    }
    Some(format!("{length} bytes"))
}

/// A project for the probe: its manifest (granting `allow`) and azure.yaml
/// listing `urls`.
fn project(
    component: &Path,
    allow: &[String],
    urls: &[String],
    fail_on_error: bool,
) -> tempfile::TempDir {
    project_with(component, allow, urls, fail_on_error, &[], None)
}

/// [`project`], also granting token `scopes` and asking for `token_scope`.
fn project_with(
    component: &Path,
    allow: &[String],
    urls: &[String],
    fail_on_error: bool,
    scopes: &[&str],
    token_scope: Option<&str>,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let allow: Vec<String> = allow.iter().map(|a| format!("{a:?}")).collect();
    let scopes: Vec<String> = scopes.iter().map(|a| format!("{a:?}")).collect();
    std::fs::write(
        dir.path().join("provider.toml"),
        format!(
            "name = \"http-probe\"\ncomponent = {:?}\n[policy]\ncall_timeout_secs = 30\nmemory_mb = 256\n\
             [policy.http]\nallow = [{}]\ntimeout_secs = 1\nmax_response_bytes = 1000\n\
             [policy.azd]\ncredential_scopes = [{}]\n",
            component.display().to_string(),
            allow.join(", "),
            scopes.join(", ")
        ),
    )
    .unwrap();
    let requests: Vec<String> = urls.iter().map(|u| format!("      - url: {u}\n")).collect();
    let token = token_scope
        .map(|s| format!("    token_scope: {s}\n"))
        .unwrap_or_default();
    if is_c(component) {
        assert!(!fail_on_error, "the C probe has no fail_on_error");
        std::fs::write(
            dir.path().join("azure.yaml"),
            format!(
                "name: probe\ninfra:\n  provider: http-probe\n  config:\n{token}    urls: {:?}\n",
                urls.join(" ")
            ),
        )
        .unwrap();
        return dir;
    }
    std::fs::write(
        dir.path().join("azure.yaml"),
        format!(
            "name: probe\ninfra:\n  provider: http-probe\n  config:\n    fail_on_error: {fail_on_error}\n{token}    requests:{}\n{}",
            if urls.is_empty() { " []" } else { "" },
            requests.concat()
        ),
    )
    .unwrap();
    dir
}

/// The outputs of a `run provision --output json`.
fn outputs(out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    report["outputs"].clone()
}

/// An output's value, as JSON (object and array outputs come as JSON text or values).
fn value_of(outputs: &Value, name: &str) -> Value {
    let v = &outputs[name]["value"];
    v.as_str()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_else(|| v.clone())
}

/// The host binary, to run in `dir` with its own compile cache and no `AZURE_ENV_NAME`.
fn host_in(dir: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(BIN);
    cmd.current_dir(dir)
        .env("AZD_WASM_HOST_CACHE_DIR", dir.join(".cache"))
        .env_remove("AZURE_ENV_NAME");
    cmd
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    host_in(dir).args(args).output().unwrap()
}

/// `cmd`'s output, waited for off the async runtime (whose loopback servers keep serving).
async fn output_of(mut cmd: std::process::Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn only_granted_origins_are_reached_and_every_request_is_bounded() {
    for component in probes() {
        println!("{}", component.display());
        only_granted_origins_are_reached_and_every_request_is_bounded_with(&component).await;
    }
}

async fn only_granted_origins_are_reached_and_every_request_is_bounded_with(component: &Path) {
    let granted = serve().await;
    let other = serve().await;
    let g = granted.port;
    let urls = [
        format!("http://127.0.0.1:{g}/ok"),
        format!("http://127.0.0.1:{g}/big"),
        format!("http://127.0.0.1:{g}/chunked"),
        format!("http://127.0.0.1:{}/ok", other.port),
        format!("http://localhost:{g}/ok"),
        format!("http://127.0.0.1:{g}/slow"),
        format!("https://127.0.0.1:{g}/ok"),
    ];
    let allow = [
        format!("http://127.0.0.1:{g}"),
        format!("https://127.0.0.1:{g}"),
    ];
    let dir = project(component, &allow, &urls, false);
    // Compiled first, into the cache the run uses: what is timed below is the requests, not a
    // compile (seconds for the Python probe on a loaded machine).
    let checked = run(dir.path(), &["check", "provider.toml"]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    // What a run of this probe costs on this machine now, with one quick request: the bound
    // below is on what the other requests add to it (a loaded machine slows both alike).
    let full = std::fs::read(dir.path().join("azure.yaml")).unwrap();
    let one = project(component, &allow, &urls[..1], false);
    std::fs::copy(one.path().join("azure.yaml"), dir.path().join("azure.yaml")).unwrap();
    let provision = |dir: &Path| {
        let mut cmd = host_in(dir);
        cmd.args(["run", "provision", "--output", "json"]);
        cmd
    };
    let started = Instant::now();
    let base = output_of(provision(dir.path())).await;
    let baseline = started.elapsed();
    assert!(
        base.status.success(),
        "{}",
        String::from_utf8_lossy(&base.stderr)
    );
    std::fs::write(dir.path().join("azure.yaml"), full).unwrap();
    let connected_before = granted.connections.load(Ordering::SeqCst);
    let started = Instant::now();
    let out = output_of(provision(dir.path())).await;
    let elapsed = started.elapsed();
    let results = value_of(&outputs(&out), "RESULTS");
    let r = |i: usize| &results[i];
    println!("{results:#}");

    // The error's code, whichever way the probe spells it (`HttpRequestDenied`,
    // `http-request-denied`), lower case without separators, and the error's whole text.
    let error = |i: usize| {
        let text = r(i)["error"].as_str().unwrap_or_default().to_owned();
        (text.to_lowercase().replace(['-', '_'], ""), text)
    };
    assert_eq!(r(0)["status"], 200, "{results}");
    assert_eq!(r(0)["body"], "hello from loopback");
    // Past the budget: said up front (content-length), and found while reading (chunked).
    assert!(error(1).0.contains("httpresponsebodysize"), "{results}");
    // (wasmtime-wasi-http hands a body's read error to the guest as an `io/error` without
    // its HTTP code; the text says what happened, and the C helper reports the read's failure.)
    let (chunked, text) = error(2);
    assert!(
        text.contains("body size exceeds limit")
            || (is_c(component) && chunked.contains("httpresponseincomplete")),
        "{results}"
    );
    // Not granted: another port, and the same port under another host name.
    assert!(error(3).0.contains("httprequestdenied"), "{results}");
    assert!(error(4).0.contains("httprequestdenied"), "{results}");
    assert_eq!(
        other.connections.load(Ordering::SeqCst),
        0,
        "a refused request reached the listener"
    );
    // A stalled answer and a stalled TLS handshake each cost the request's 1 s, not the call's
    // 30 s (nor a longer timeout of the host's own: two of 10 s would add 20 s).
    assert!(error(5).0.contains("timeout"), "{results}");
    assert!(error(6).0.contains("timeout"), "{results}");
    assert!(
        elapsed < baseline + Duration::from_secs(12),
        "took {elapsed:?}, against {baseline:?} for one request"
    );
    // /ok, /big, /chunked, /slow, and the TLS attempt: localhost was refused before connecting.
    assert_eq!(
        granted.connections.load(Ordering::SeqCst) - connected_before,
        5
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_origin_is_named_with_the_grant_to_add() {
    // The C probe reports failures as outputs only (no `fail_on_error`).
    for component in probes().into_iter().filter(|c| !is_c(c)) {
        println!("{}", component.display());
        a_refused_origin_is_named_with_the_grant_to_add_with(&component).await;
    }
}

async fn a_refused_origin_is_named_with_the_grant_to_add_with(component: &Path) {
    let other = serve().await;
    let url = format!("http://127.0.0.1:{}/ok", other.port);
    let dir = project(component, &[], &[url], true);
    let mut cmd = host_in(dir.path());
    cmd.args(["run", "provision"]);
    let out = output_of(cmd).await;
    assert!(!out.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let origin = format!("http://127.0.0.1:{}", other.port);
    // `HttpRequestDenied` (Rust, Python) or `http-request-denied` (Go).
    assert!(
        said.to_lowercase()
            .replace(['-', '_'], "")
            .contains("httprequestdenied"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "add \"{origin}\" to `allow` under [policy.http] in provider.toml"
        )),
        "{said}"
    );
    assert_eq!(other.connections.load(Ordering::SeqCst), 0);
}

#[test]
fn plaintext_http_is_granted_only_to_loopback() {
    let Some(component) = probes().into_iter().next() else {
        return;
    };
    let dir = project(&component, &["http://example.com".to_owned()], &[], false);
    let out = run(dir.path(), &["check", "provider.toml"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plaintext HTTP") && stderr.contains("https://example.com"),
        "{stderr}"
    );

    let dir = project(
        &component,
        &[
            "https://storage.example.com".to_owned(),
            "http://127.0.0.1:10000".to_owned(),
        ],
        &[],
        false,
    );
    let out = run(dir.path(), &["check", "provider.toml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("http.allow              https://storage.example.com"),
        "{stdout}"
    );
    assert!(
        stdout.contains("HTTP requests (only the [policy.http] origins below)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("http.timeout_secs       1 s (per request"),
        "{stdout}"
    );
    assert!(
        stdout.contains("http.max_response_bytes 1000 bytes (of response body"),
        "{stdout}"
    );
}

/// A stand-in for azd's `auth token`: it records its arguments (and whether
/// the extension's own azd token reached it) and answers with a token named
/// after the scope.
fn fake_azd(dir: &Path) -> (PathBuf, PathBuf) {
    let script = dir.join("fake-azd");
    let calls = dir.join("fake-azd.calls");
    let calls_shown = calls.display();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{calls_shown}'\n[ -n \"$AZD_ACCESS_TOKEN\" ] && echo leaked >> '{calls_shown}'\n\
             printf '{{\"token\":\"tok-%s\",\"expiresOn\":\"2030-01-02T03:04:05Z\"}}' \"$6\"\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, calls)
}

/// `run provision --output json` (with `--debug` when asked) in `dir`, with
/// `azd` as the azd that gives tokens.
async fn provision_with_azd(dir: &Path, azd: &Path, debug: bool) -> std::process::Output {
    let mut cmd = host_in(dir);
    cmd.args(["run", "provision", "--output", "json"])
        .env("AZD_WASM_HOST_AZD", azd);
    if debug {
        cmd.arg("--debug");
    }
    output_of(cmd).await
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_come_from_azd_for_granted_scopes_only_and_are_never_logged() {
    for component in probes() {
        println!("{}", component.display());
        tokens_come_from_azd_for_granted_scopes_only_and_are_never_logged_with(&component).await;
    }
}

async fn tokens_come_from_azd_for_granted_scopes_only_and_are_never_logged_with(component: &Path) {
    let server = serve().await;
    let storage = "https://storage.azure.com/.default";
    let whoami = format!("http://127.0.0.1:{}/whoami", server.port);
    let allow = [format!("http://127.0.0.1:{}", server.port)];
    let dir = project_with(
        component,
        &allow,
        &[whoami.clone(), whoami],
        false,
        &[storage],
        Some(storage),
    );
    let (azd, calls) = fake_azd(dir.path());
    let out = provision_with_azd(dir.path(), &azd, true).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let first = outputs(&out);
    let token = value_of(&first, "TOKEN");
    let results = value_of(&first, "RESULTS");
    assert_eq!(token["expires_on"], 1_893_553_445, "{token}");
    let bearer = format!("Bearer tok-{storage}");
    assert_eq!(results[0]["body"], bearer.as_str(), "{results}");
    assert_eq!(results[1]["body"], bearer.as_str(), "{results}");
    // Asked once (the token is kept), as azd's Go extensions ask, and without the extension's own token.
    let asked = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(
        asked,
        format!("auth token --output json --scope {storage}\n")
    );
    assert!(
        !stderr.contains("tok-https"),
        "a token reached the debug log:\n{stderr}"
    );
    assert!(
        stderr.contains("access token obtained from azd"),
        "{stderr}"
    );

    // A scope the manifest does not grant: refused, and azd is never asked.
    let management = "https://management.azure.com/.default";
    let dir = project_with(component, &allow, &[], false, &[storage], Some(management));
    let (azd, calls) = fake_azd(dir.path());
    let token = value_of(
        &outputs(&provision_with_azd(dir.path(), &azd, false).await),
        "TOKEN",
    );
    assert_eq!(token["code"], "scope-not-granted", "{token}");
    assert!(
        token["error"]
            .as_str()
            .unwrap()
            .contains("credential_scopes"),
        "{token}"
    );
    assert!(
        !calls.exists(),
        "azd was asked for a scope the manifest does not grant"
    );
}

/// Go's `net/http` over the SDK's transport: a body of known length goes out with it, one of
/// unknown length streams out chunked, a request's context ends it at its deadline (well
/// inside the policy's), as Go callers expect (`context deadline exceeded`), and a response
/// nobody closes is released without breaking the requests after it.
#[tokio::test(flavor = "multi_thread")]
async fn go_requests_stream_their_bodies_and_end_with_their_context() {
    let Some(component) = probes()
        .into_iter()
        .find(|c| c.ends_with("http-probe-go/build/http-probe-go.wasm"))
    else {
        return;
    };
    let server = serve().await;
    let base = format!("http://127.0.0.1:{}", server.port);
    let dir = project(&component, std::slice::from_ref(&base), &[], false);
    let body = "y".repeat(100_000);
    std::fs::write(
        dir.path().join("azure.yaml"),
        format!(
            "name: probe\ninfra:\n  provider: http-probe\n  config:\n    requests:\n\
             \x20     - {{ url: {base}/echo-length, method: PUT, body: {body} }}\n\
             \x20     - {{ url: {base}/echo-length, method: PUT, body: {body}, chunked: true }}\n\
             \x20     - {{ url: {base}/echo-length, method: POST }}\n\
             \x20     - {{ url: {base}/slow, timeout_ms: 200 }}\n\
             \x20     - {{ url: {base}/chunked, left_open: true }}\n\
             \x20     - {{ url: {base}/ok }}\n"
        ),
    )
    .unwrap();
    let mut cmd = host_in(dir.path());
    cmd.args(["run", "provision", "--output", "json"]);
    let results = value_of(&outputs(&output_of(cmd).await), "RESULTS");
    println!("{results:#}");
    assert_eq!(results[0]["body"], "100000 bytes", "{results}");
    assert_eq!(results[1]["body"], "100000 bytes, chunked", "{results}");
    assert_eq!(results[2]["body"], "0 bytes", "{results}");
    let timed_out = results[3]["error"].as_str().unwrap_or_default();
    assert!(timed_out.contains("context deadline exceeded"), "{results}");
    // A response left open (its handles found by the collector, released by the next
    // request) breaks nothing after it.
    assert_eq!(results[4]["left_open"], true, "{results}");
    assert_eq!(results[5]["body"], "hello from loopback", "{results}");
    assert_eq!(server.connections.load(Ordering::SeqCst), 6);
}
