//! The attacks on a recording through its bodies, each through
//! [`Traffic::serve`] as the runtime calls it: compressed `listKeys`
//! answers, a decompression bomb, a body that lies about its coding, text
//! with one stray byte, a compressed request body; and the replay of a
//! decoded recording.

use std::convert::Infallible;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use wasmtime_wasi_http::WasiBody;

use super::bodies_tests::encode;
use super::{Exchange, LogEvent, Traffic, TrafficMode, TrafficPlan, read_log};
use azd_wasm_host_runtime::{Io, Sent};

/// Two storage account keys, as ARM's `listKeys` answers them.
pub(super) const KEY1: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
pub(super) const KEY2: &str =
    "Zm9vYmFyYmF6cXV4Q29ycmVjdEhvcnNlQmF0dGVyeVN0YXBsZTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcQ==";

pub(super) fn list_keys() -> String {
    format!(
        r#"{{"keys":[{{"keyName":"key1","value":"{KEY1}","permissions":"FULL"}},{{"keyName":"key2","value":"{KEY2}","permissions":"FULL"}}]}}"#
    )
}

fn whole(bytes: impl Into<Bytes>) -> WasiBody {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

fn done() -> Io {
    Box::new(async { Ok(()) })
}

pub(super) fn traffic(dir: &std::path::Path, mode: TrafficMode, safe: &[&str]) -> Arc<Traffic> {
    traffic_with(dir, mode, safe, Vec::new())
}

fn traffic_with(
    dir: &std::path::Path,
    mode: TrafficMode,
    safe: &[&str],
    exchanges: Vec<Exchange>,
) -> Arc<Traffic> {
    Traffic::new(TrafficPlan {
        mode,
        log: dir.join("log.jsonl"),
        exchanges,
        tokens: vec![],
        faults: vec![],
        safe: safe.iter().map(|s| (*s).to_owned()).collect(),
    })
    .unwrap()
}

pub(super) fn post(uri: &str, headers: &[(&str, &str)], body: Vec<u8>) -> http::Request<WasiBody> {
    let mut request = http::Request::builder().method("POST").uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(whole(body)).unwrap()
}

/// A service that answers `body` with `headers`, whatever it is asked.
pub(super) fn service(
    headers: Vec<(String, String)>,
    body: Vec<u8>,
) -> impl FnOnce(http::Request<WasiBody>) -> std::future::Ready<Sent> {
    move |_| {
        let mut response = http::Response::builder().status(200);
        for (name, value) in &headers {
            response = response.header(name, value);
        }
        std::future::ready(Ok((response.body(whole(body)).unwrap(), done())))
    }
}

pub(super) async fn read(sent: Sent) -> Vec<u8> {
    let (response, _) = sent.unwrap();
    response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec()
}

/// What the log file holds, as bytes and as the events it reads as.
pub(super) fn logged(dir: &std::path::Path) -> (Vec<u8>, Vec<LogEvent>) {
    let path = dir.join("log.jsonl");
    (
        std::fs::read(&path).unwrap_or_default(),
        read_log(&path).unwrap(),
    )
}

/// Every form a key could take in a file: plain, in base64 (and the middle
/// of its base64 inside a larger text), percent-encoded.
fn forms(secret: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
    vec![
        secret.to_owned(),
        secret[..40].to_owned(),
        b64[8..b64.len() - 8].to_owned(),
        secret.replace('/', "%2F").replace('=', "%3D"),
    ]
}

/// Everything a reader of a stored body gets from it.
pub(super) fn readable(body: &super::RecordedBody) -> Vec<u8> {
    super::bodies_tests::readable(&body.bytes().unwrap())
}

pub(super) fn assert_no_key(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    for key in [KEY1, KEY2] {
        for form in forms(key) {
            assert!(!text.contains(&form), "{what}: {form} is in\n{text}");
        }
    }
}

#[tokio::test]
async fn a_compressed_list_keys_answer_is_recorded_decoded_with_its_keys_redacted() {
    let keys = list_keys();
    for (coding, header) in super::bodies_tests::CODINGS {
        let dir = tempfile::tempdir().unwrap();
        let rec = traffic(dir.path(), TrafficMode::Record, &[]);
        let body = encode(keys.as_bytes(), coding);
        let headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("content-encoding".to_owned(), header.to_owned()),
        ];
        let request = post(
            "https://management.azure.com/sub/listKeys?api-version=2023-01-01",
            &[("accept-encoding", "gzip, deflate, br, zstd")],
            Vec::new(),
        );
        let sent = Arc::clone(&rec)
            .serve(request, 1 << 20, service(headers, body.clone()))
            .await;
        // The guest gets the answer exactly as the service sent it.
        assert_eq!(read(sent).await, body, "{coding}");
        let (bytes, events) = logged(dir.path());
        assert_no_key(&bytes, coding);
        let [LogEvent::Recorded { exchange }] = events.as_slice() else {
            panic!("{coding}: {events:?}")
        };
        assert_no_key(&readable(&exchange.response.body), coding);
        // Kept decoded: readable JSON without its keys, and without the coding.
        let text = exchange.response.body.body.as_deref().unwrap();
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(doc["keys"][0]["keyName"], "key1", "{coding}");
        assert_eq!(doc["keys"][1]["value"], "REDACTED", "{coding}");
        assert_no_key(text.as_bytes(), coding);
        assert!(
            !exchange
                .response
                .headers
                .iter()
                .any(|(n, _)| n == "content-encoding"),
            "{coding}: {:?}",
            exchange.response.headers
        );
    }
}

#[tokio::test]
async fn a_gzip_then_br_answer_is_undone_in_reverse_order() {
    let dir = tempfile::tempdir().unwrap();
    let rec = traffic(dir.path(), TrafficMode::Record, &[]);
    let body = encode(&encode(list_keys().as_bytes(), "gzip"), "br");
    let headers = vec![("content-encoding".to_owned(), "gzip, br".to_owned())];
    let sent = Arc::clone(&rec)
        .serve(
            post("https://m/listKeys", &[], Vec::new()),
            1 << 20,
            service(headers, body),
        )
        .await;
    read(sent).await;
    let (bytes, events) = logged(dir.path());
    assert_no_key(&bytes, "gzip, br");
    let [LogEvent::Recorded { exchange }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(
        exchange
            .response
            .body
            .body
            .as_deref()
            .unwrap()
            .contains("\"keyName\":\"key2\"")
    );
}

#[tokio::test]
async fn a_bomb_a_lie_and_an_unknown_coding_refuse_the_recording_and_write_no_body() {
    let keys = list_keys();
    let bomb = encode(&vec![b'a'; 8 << 20], "gzip");
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "gzip",
            bomb,
            "more than 1048576 bytes (the provider's `max_response_bytes`, 1048576)",
        ),
        (
            "gzip",
            keys.clone().into_bytes(),
            "says `Content-Encoding: gzip` but does not decode",
        ),
        (
            "compress",
            keys.clone().into_bytes(),
            "`compress`, which a recording cannot undo",
        ),
    ];
    for (header, body, why) in cases {
        let dir = tempfile::tempdir().unwrap();
        let rec = traffic(dir.path(), TrafficMode::Record, &[]);
        let headers = vec![("content-encoding".to_owned(), header.to_owned())];
        let sent = Arc::clone(&rec)
            .serve(
                post("https://m/sub/listKeys?sig=s3cret", &[], Vec::new()),
                1 << 20,
                service(headers, body.clone()),
            )
            .await;
        assert_eq!(read(sent).await, body, "the guest still gets its answer");
        let (bytes, events) = logged(dir.path());
        assert_no_key(&bytes, header);
        let [LogEvent::Refused { request, why: said }] = events.as_slice() else {
            panic!("{header}: {events:?}")
        };
        assert_eq!(request, "POST https://m/sub/listKeys");
        assert!(
            said.starts_with("the response body ") && said.contains(why),
            "{said}"
        );
        assert!(!String::from_utf8_lossy(&bytes).contains("s3cret"));
    }
}

#[tokio::test]
async fn a_body_with_one_stray_byte_is_masked_and_refused_unless_marked_safe() {
    let known = "granted-account-key-0001";
    let mut body = format!(r#"{{"keys":[{{"keyName":"key1","value":"{known}"}}]}}"#).into_bytes();
    body.insert(1, 0xff);
    let line = "POST https://m/listKeys";
    for safe in [vec![], vec!["binary: POST https://m/listKeys".to_owned()]] {
        let dir = tempfile::tempdir().unwrap();
        let safe: Vec<&str> = safe.iter().map(String::as_str).collect();
        let rec = traffic(dir.path(), TrafficMode::Record, &safe);
        rec.keep_secret(known);
        let sent = Arc::clone(&rec)
            .serve(
                post("https://m/listKeys", &[], Vec::new()),
                1 << 20,
                service(vec![], body.clone()),
            )
            .await;
        read(sent).await;
        let (bytes, events) = logged(dir.path());
        let text = String::from_utf8_lossy(&bytes);
        let b64 = base64::engine::general_purpose::STANDARD.encode(known);
        assert!(
            !text.contains(known) && !text.contains(&b64[4..20]),
            "{text}"
        );
        match (safe.is_empty(), events.as_slice()) {
            (true, [LogEvent::Refused { request, why }]) => {
                assert_eq!(request, line);
                // JSON that does not parse: refused, and no mark advised.
                assert!(
                    why.contains("is not strict JSON (a byte that is not UTF-8 at byte 1)")
                        && !why.contains("binary:"),
                    "{why}"
                );
            }
            (false, [LogEvent::Recorded { exchange }]) => {
                let kept = exchange.response.body.bytes().unwrap();
                let kept = String::from_utf8_lossy(&kept);
                assert!(
                    kept.contains(&format!("\"value\":\"{}\"", "*".repeat(known.len()))),
                    "{kept}"
                );
            }
            (_, other) => panic!("{safe:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_gzip_request_body_is_recorded_decoded_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = traffic(dir.path(), TrafficMode::Record, &[]);
    rec.keep_secret("client-secret-value-01");
    let form = b"grant_type=client_credentials&client_s%2565cret=raw-secret-9&scope=x&pw=client-secret-value-01";
    let gz = encode(form, "gzip");
    let uri = "https://login/token";
    let answer = encode(b"{\"access_token\":\"abc\",\"note\":\"fine\"}", "gzip");
    let headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("content-encoding".to_owned(), "gzip".to_owned()),
    ];
    let request = |body: Vec<u8>| {
        post(
            uri,
            &[
                ("content-encoding", "gzip"),
                ("content-type", "application/x-www-form-urlencoded"),
            ],
            body,
        )
    };
    let sent = Arc::clone(&rec)
        .serve(request(gz.clone()), 1 << 20, service(headers, answer))
        .await;
    read(sent).await;
    let (bytes, events) = logged(dir.path());
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        !text.contains("raw-secret-9") && !text.contains("client-secret-value-01"),
        "{text}"
    );
    let [LogEvent::Recorded { exchange }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(
        exchange.request.body.body.as_deref(),
        Some("grant_type=client_credentials&client_s%2565cret=REDACTED&scope=x&pw=REDACTED")
    );
    assert!(
        !exchange
            .request
            .headers
            .iter()
            .any(|(n, _)| n == "content-encoding")
    );

    // Replayed: the same gzip request matches the decoded recording, and the
    // guest is served the decoded answer as identity, which it can read.
    let replay_dir = tempfile::tempdir().unwrap();
    let rep = traffic_with(
        replay_dir.path(),
        TrafficMode::Replay,
        &[],
        vec![exchange.clone()],
    );
    rep.keep_secret("client-secret-value-01");
    let never = |_| async { panic!("replay sent a request") };
    let (response, _) = Arc::clone(&rep)
        .serve(request(gz), 1 << 20, never)
        .await
        .unwrap();
    assert!(response.headers().get("content-encoding").is_none());
    let length = response.headers().get("content-length").cloned();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(length.unwrap().to_str().unwrap(), body.len().to_string());
    let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc["access_token"], "REDACTED");
    assert_eq!(doc["note"], "fine");
    let (_, events) = logged(replay_dir.path());
    assert_eq!(events, [LogEvent::Served { index: 0 }]);
}
