//! `test --record` against a service that answers with secrets: a loopback
//! HTTP server (in this test) plays a Key Vault secret, a `listKeys` body, a
//! SAS URL in `Location`, `Azure-AsyncOperation` and JSON fields, a custom
//! token header, a connection string, an OAuth token endpoint that takes a
//! form body with `client_secret` and answers a JWT, and a short granted
//! environment value echoed back; the Python HTTP probe
//! (`host/cli/tests/guests/http-probe-py`, built by `scripts/build-examples.sh`)
//! asks for each. The cassette must hold none of them, in any form; a value
//! that looks like a key but is not known to be one refuses the recording,
//! naming where it is, until the test file marks it safe; the cassette is
//! the user's alone and replays with the server gone.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

/// Every secret the service hands out or is handed; none may reach the cassette.
const SECRETS: [&str; 13] = [
    "KV-SECRET-VALUE-0001",
    "LISTKEYS-KEY1-VALUE-aaaa",
    "LISTKEYS-KEY2-VALUE-bbbb",
    "LOCATION-SIG-VALUE-cccc",
    "ASYNC-SIG-VALUE-dddd",
    "CUSTOM-HEADER-TOKEN-eeee",
    "JSON-SASURI-SIG-ffff",
    "JSON-LINK-SIG-gggg",
    "CONN-ACCOUNT-KEY-hhhh",
    "ADMIN-PASSWORD-iiii",
    "PRIMARY-MASTER-KEY-jjjj",
    "FORM-CLIENT-SECRET-kkkk",
    JWT,
];
const JWT: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL3ZhdWx0LmF6dXJlLm5ldCIsIm9pZCI6IjEyMyJ9.c2lnbmF0dXJlLXZhbHVl";
/// A granted environment value shorter than 8 characters.
const SHORT: &str = "pw7";
/// Looks like a key, is known to nobody: the scan's to find.
const LOOKS_LIKE_A_KEY: &str = "9fK2pQ7zR4mW8vL1sT6yB3nH5cJ0dG2aE8uX";

/// The answer to `path` (the request line's second word), with `port` for URLs.
fn answer(path: &str, port: u16) -> String {
    let json = |status: &str, body: String, extra: &str| {
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    match path {
        "/vault/secrets/db" => json(
            "200 OK",
            r#"{"value":"KV-SECRET-VALUE-0001","id":"https://v.vault.azure.net/secrets/db/0001","attributes":{"enabled":true}}"#.into(),
            "",
        ),
        "/listKeys" => json(
            "200 OK",
            r#"{"keys":[{"keyName":"key1","value":"LISTKEYS-KEY1-VALUE-aaaa","permissions":"FULL"},{"keyName":"key2","value":"LISTKEYS-KEY2-VALUE-bbbb","permissions":"FULL"}]}"#.into(),
            "",
        ),
        "/copy" => json(
            "202 Accepted",
            "{}".into(),
            &format!(
                "location: http://127.0.0.1:{port}/blob?sv=2021-08-06&sig=LOCATION-SIG-VALUE-cccc\r\n\
                 azure-asyncoperation: http://127.0.0.1:{port}/op?api-version=1&sig=ASYNC-SIG-VALUE-dddd\r\n\
                 x-ms-custom-token: CUSTOM-HEADER-TOKEN-eeee\r\n"
            ),
        ),
        "/sas" => json(
            "200 OK",
            r#"{"sasUri":"https://acct.blob.core.windows.net/c?sp=r&sig=JSON-SASURI-SIG-ffff","properties":{"link":"https://acct.blob.core.windows.net/c?sp=r&sig=JSON-LINK-SIG-gggg"},"conn":"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=CONN-ACCOUNT-KEY-hhhh;EndpointSuffix=core.windows.net","adminPassword":"ADMIN-PASSWORD-iiii","primaryMasterKey":"PRIMARY-MASTER-KEY-jjjj"}"#.into(),
            "",
        ),
        "/oauth2/token" => json(
            "200 OK",
            format!(r#"{{"access_token":"{JWT}","token_type":"Bearer","expires_in":3599}}"#),
            "",
        ),
        "/echo-short" => json("200 OK", format!(r#"{{"said":"the password is {SHORT}"}}"#), ""),
        "/blob" => json("200 OK", format!(r#"{{"blob":"{LOOKS_LIKE_A_KEY}"}}"#), ""),
        _ => json("404 Not Found", "{}".into(), ""),
    }
}

/// Connections the service took.
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// The service: answers by path, one request per connection, until the test ends.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            CONNECTIONS.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request);
                    if let Some(head_end) = text.find("\r\n\r\n") {
                        let length = text[..head_end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if request.len() >= head_end + 4 + length {
                            break;
                        }
                    }
                }
                let text = String::from_utf8_lossy(&request).into_owned();
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let _ = stream.write_all(answer(&path, port).as_bytes());
            });
        }
    });
    port
}

fn probe() -> PathBuf {
    let wasm = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/guests/http-probe-py/build/http-probe-py.wasm");
    assert!(
        wasm.is_file(),
        "{} is missing: run scripts/build-examples.sh http-probe-py",
        wasm.display()
    );
    wasm
}

/// The provider (the probe, granted the service's origin and one variable)
/// and its test file, asking for every answer of [`answer`].
fn provider(dir: &Path, port: u16, safe: &[&str]) -> PathBuf {
    std::fs::copy(probe(), dir.join("probe.wasm")).unwrap();
    std::fs::write(
        dir.join("provider.toml"),
        format!(
            "name = \"http-probe\"\ncomponent = \"probe.wasm\"\n[policy]\nmemory_mb = 256\n\
             env = [\"RECORD_TEST_SHORT\"]\n[policy.http]\nallow = [\"http://127.0.0.1:{port}\"]\n"
        ),
    )
    .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let requests = [
        ("GET", "/vault/secrets/db", ""),
        ("POST", "/listKeys", ""),
        ("GET", "/copy", ""),
        ("GET", "/sas", ""),
        (
            "POST",
            "/oauth2/token",
            "grant_type=client_credentials&client_id=app&client_secret=FORM-CLIENT-SECRET-kkkk&scope=https%3A%2F%2Fvault.azure.net%2F.default",
        ),
        ("GET", "/echo-short", ""),
        ("GET", "/blob", ""),
    ];
    let requests: Vec<String> = requests
        .iter()
        .map(|(method, path, body)| {
            format!("{{ method = \"{method}\", url = \"{base}{path}\", body = \"{body}\" }}")
        })
        .collect();
    let safe: Vec<String> = safe.iter().map(|s| format!("{s:?}")).collect();
    let tests = dir.join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    let file = tests.join("secrets.test.toml");
    std::fs::write(
        &file,
        format!(
            "provider = \"../provider.toml\"\nsafe = [{}]\n\n[project]\nconfig = {{ fail_on_error = true, requests = [{}] }}\n\
             process_env = {{ RECORD_TEST_SHORT = \"{SHORT}\" }}\n\n[[step]]\ncommand = \"provision\"\n",
            safe.join(", "),
            requests.join(", ")
        ),
    )
    .unwrap();
    file
}

fn test(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("test")
        .arg(dir)
        .args(args)
        .env("AZD_WASM_HOST_CACHE_DIR", dir.join(".cache"))
        .env("AZD_WASM_HOST_LOG_FILE", dir.join("host.log"))
        .env_remove("AZD_DEBUG")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every form `secret` could take in a cassette: plain, URL-encoded, base64.
fn forms(secret: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    vec![
        secret.to_owned(),
        secret.replace('-', "%2D"),
        b64.encode(secret),
        url.encode(secret),
    ]
}

#[test]
fn a_cassette_holds_none_of_the_secrets_the_service_answered_with() {
    let dir = tempfile::tempdir().unwrap();
    let port = serve();
    provider(dir.path(), port, &[]);
    let cassette = dir.path().join("tests/cassettes/secrets.json");

    // Something that looks like a key and is known to nobody: refused, naming where.
    let out = test(dir.path(), &["--record"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("recording refused"), "{t}");
    assert!(
        t.contains("exchange 7 (GET http://127.0.0.1:") && t.contains("/blob): the response body"),
        "{t}"
    );
    assert!(
        t.contains("a high-entropy string (9fK2…, 36 characters)"),
        "{t}"
    );
    assert!(
        !t.contains(LOOKS_LIKE_A_KEY),
        "the refusal shows the value: {t}"
    );
    assert!(!cassette.exists(), "a refused recording was written");

    // Marked safe in the test file: recorded.
    provider(dir.path(), port, &[LOOKS_LIKE_A_KEY]);
    let out = test(dir.path(), &["--record"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let recorded = std::fs::read_to_string(&cassette).unwrap();
    for secret in SECRETS.iter().chain([&"the password is pw7"]) {
        for form in forms(secret) {
            assert!(
                !recorded.contains(&form),
                "{form} (of {secret}) is in the cassette:\n{recorded}"
            );
        }
    }
    assert!(
        recorded.contains(LOOKS_LIKE_A_KEY),
        "the value marked safe was not kept"
    );
    // What is no secret is kept, so that a reader sees what was exchanged.
    for kept in [
        "keyName",
        "key1",
        "/listKeys",
        "client_id=app",
        "sv=2021-08-06",
        "enabled",
    ] {
        assert!(recorded.contains(kept), "{kept} is gone:\n{recorded}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&cassette).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the cassette is readable by others");
    }

    // Replayed: the cassette answers, nothing reaches the service.
    let before = CONNECTIONS.load(Ordering::SeqCst);
    let offline = tempfile::tempdir().unwrap();
    provider(offline.path(), port, &[LOOKS_LIKE_A_KEY]);
    std::fs::create_dir_all(offline.path().join("tests/cassettes")).unwrap();
    std::fs::copy(
        &cassette,
        offline.path().join("tests/cassettes/secrets.json"),
    )
    .unwrap();
    let out = test(offline.path(), &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("replayed from"), "{t}");
    assert_eq!(
        CONNECTIONS.load(Ordering::SeqCst),
        before,
        "the replay reached the service"
    );
}
