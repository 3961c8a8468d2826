//! A golden conversation's HTTP traffic (`listen --record`), recorded
//! through the [`Tools`](crate::Tools) `listen` is lent: compressed answers
//! and bodies that are not text.

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;

use azd_wasm_host_develop::{DevelopmentTools as _, Recording};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::provisioning_message::MessageType;
use azd_wasm_host_runtime::{Intercept, Io, Live};
use base64::Engine as _;
use http_body_util::{BodyExt as _, Full};
use prost::Message as _;
use serde_json::Value;
use wasmtime_wasi_http::WasiBody;

use crate::traffic::{Exchange, LogEvent};

const KEY1: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const KEY2: &str =
    "Zm9vYmFyYmF6cXV4Q29ycmVjdEhvcnNlQmF0dGVyeVN0YXBsZTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcQ==";

fn body(bytes: Vec<u8>) -> WasiBody {
    Full::new(bytes::Bytes::from(bytes))
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// A recording of the conversation at `path`, azd's first request sent.
fn recording(path: &Path, safe: &[String]) -> Box<dyn Recording> {
    let recording = crate::Tools.record(path, "p", None, safe).unwrap();
    let request = pb::ProvisioningMessage {
        request_id: "r0".into(),
        message_type: Some(MessageType::StateRequest(
            pb::ProvisioningStateRequest::default(),
        )),
        ..Default::default()
    };
    recording.tap().azd_sent(&request.encode_to_vec());
    recording
}

/// One request through the recording's traffic, answered with `answer`.
async fn exchange(traffic: Arc<dyn Intercept>, headers: &[(&str, &str)], answer: Vec<u8>) {
    let mut response = http::Response::builder().status(200);
    for (name, value) in headers {
        response = response.header(*name, *value);
    }
    let response = response.body(body(answer)).unwrap();
    let live: Live = Box::new(move |_| {
        let io: Io = Box::new(async { Ok(()) });
        Box::pin(async move { Ok((response, io)) })
    });
    let request = http::Request::post("https://management.azure.com/s/a/listKeys?api-version=1")
        .header("accept-encoding", "gzip, deflate, br, zstd")
        .body(body(Vec::new()))
        .unwrap();
    let (response, _) = traffic.send(request, 1 << 20, live).await.unwrap();
    drop(response);
}

fn holds_a_key(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    [KEY1, KEY2].iter().any(|key| {
        let b64 = base64::engine::general_purpose::STANDARD.encode(key);
        text.contains(key) || text.contains(&key[..40]) || text.contains(&b64[8..b64.len() - 8])
    })
}

/// The HTTP events of the conversation at `path`.
fn events(path: &Path) -> Vec<LogEvent> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("event").is_some())
        .map(|v| serde_json::from_value(v).unwrap())
        .collect()
}

fn recorded(path: &Path) -> Exchange {
    match events(path).as_slice() {
        [LogEvent::Recorded { exchange }] => exchange.clone(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_compressed_list_keys_answer_never_reaches_a_golden_conversation() {
    let keys = format!(
        r#"{{"keys":[{{"keyName":"key1","value":"{KEY1}","permissions":"FULL"}},{{"keyName":"key2","value":"{KEY2}","permissions":"FULL"}}]}}"#
    );
    for coding in ["gzip", "deflate", "br", "zstd"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let recording = recording(&path, &[]);
        let encoded = crate::traffic::bodies_tests::encode(keys.as_bytes(), coding);
        let headers = [
            ("content-type", "application/json"),
            ("content-encoding", coding),
        ];
        exchange(recording.traffic().unwrap(), &headers, encoded).await;
        // While the conversation goes on, and once it is written for the last time.
        assert!(!holds_a_key(&std::fs::read(&path).unwrap()), "{coding}");
        recording.finish();
        let file = std::fs::read(&path).unwrap();
        assert!(
            !holds_a_key(&file),
            "{coding}: {}",
            String::from_utf8_lossy(&file)
        );
        let exchange = recorded(&path);
        let stored = exchange.response.body.bytes().unwrap();
        let readable = crate::traffic::bodies_tests::readable(&stored);
        assert!(
            !holds_a_key(&readable),
            "{coding}: the stored body decodes to a key"
        );
        let doc: Value =
            serde_json::from_str(exchange.response.body.body.as_deref().unwrap()).unwrap();
        assert_eq!(doc["keys"][0]["keyName"], "key1", "{coding}");
        assert_eq!(doc["keys"][1]["value"], "REDACTED", "{coding}");
        assert!(
            !exchange
                .response
                .headers
                .iter()
                .any(|(n, _)| n == "content-encoding"),
            "{coding}"
        );
    }
}

#[tokio::test]
async fn a_body_that_is_not_text_removes_the_conversation_unless_marked_safe() {
    let known = "granted-storage-key-0001";
    let late = "parameter-shown-later-01";
    let mut answer = format!(r#"{{"a":"{known}","b":"{late}"}}"#).into_bytes();
    answer.push(0xff);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let recording = recording(&path, &[]);
    let traffic = recording.traffic().unwrap();
    traffic.keep_secret(known);
    exchange(traffic, &[], answer.clone()).await;
    assert!(matches!(
        events(&path).as_slice(),
        [LogEvent::Refused { .. }]
    ));
    recording.finish();
    assert!(
        !path.exists(),
        "a conversation with a refused exchange was kept"
    );

    // Marked safe (AZD_WASM_HOST_RECORD_SAFE): kept, masked; a value the
    // conversation shows secret only later is masked in its bytes too.
    let safe = vec!["binary: POST https://management.azure.com/s/".to_owned()];
    let recording = self::recording(&path, &safe);
    let traffic = recording.traffic().unwrap();
    traffic.keep_secret(known);
    exchange(traffic, &[], answer).await;
    let parameters = pb::ProvisioningMessage {
        request_id: "r0".into(),
        message_type: Some(MessageType::ParametersResponse(
            pb::ProvisioningParametersResponse {
                parameters: vec![pb::ProvisioningParameter {
                    name: "p".into(),
                    secret: true,
                    value: late.into(),
                    ..Default::default()
                }],
            },
        )),
        ..Default::default()
    };
    recording.tap().host_sent(&parameters);
    recording.finish();
    let kept = recorded(&path).response.body.bytes().unwrap();
    let kept = String::from_utf8_lossy(&kept);
    assert!(!kept.contains(known) && !kept.contains(late), "{kept}");
    assert_eq!(kept.matches(&"*".repeat(known.len())).count(), 2, "{kept}");
}
