//! The attacks on a recording through how a body travelled: a transfer
//! coding (`Transfer-Encoding: gzip, chunked`, …) over a `listKeys` answer,
//! alone or over a content coding, one no recording can undo, and
//! compressed bytes that no header names, which a `binary:` mark must not
//! let through with keys inside.

use super::LogEvent;
use super::bodies_tests::encode;
use super::json_body_tests::record;
use super::record_tests::{assert_no_key, list_keys};

/// The request's `binary:` mark.
const MARK: &str = "binary: POST https://management.azure.com/s/";

#[tokio::test]
async fn a_transfer_coded_answer_is_decoded_before_it_is_redacted() {
    let keys = list_keys();
    // (transfer coding, how it is encoded, content coding over which it was applied)
    let cases = [
        ("gzip, chunked", vec!["gzip"], ""),
        ("x-gzip", vec!["gzip"], ""),
        ("deflate, chunked", vec!["deflate"], ""),
        ("deflate", vec!["raw-deflate"], ""),
        ("br, chunked", vec!["br"], ""),
        ("zstd", vec!["zstd"], ""),
        ("gzip, br, chunked", vec!["gzip", "br"], ""),
        ("gzip, chunked", vec!["br", "gzip"], "br"),
    ];
    for (transfer, layers, content) in cases {
        let mut body = keys.clone().into_bytes();
        for layer in &layers {
            body = encode(&body, layer);
        }
        let mut headers = vec![
            ("content-type", "application/json"),
            ("transfer-encoding", transfer),
        ];
        if !content.is_empty() {
            headers.push(("content-encoding", content));
        }
        let (bytes, events) = record(&[], &[], &headers, body).await;
        assert_no_key(&bytes, transfer);
        let [LogEvent::Recorded { exchange }] = events.as_slice() else {
            panic!("{transfer} over {content:?}: {events:?}")
        };
        let text = exchange.response.body.body.as_deref().unwrap();
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(doc["keys"][1]["keyName"], "key2", "{transfer}");
        assert_eq!(doc["keys"][0]["value"], "REDACTED", "{transfer}");
        assert!(
            !exchange
                .response
                .headers
                .iter()
                .any(|(n, _)| { n == "content-encoding" || n == "transfer-encoding" }),
            "{transfer}: {:?}",
            exchange.response.headers
        );
    }
}

#[tokio::test]
async fn a_transfer_coding_that_cannot_be_undone_refuses_the_recording() {
    let keys = list_keys().into_bytes();
    let cases = [
        (
            "compress, chunked",
            keys.clone(),
            "transfer coding `compress`",
        ),
        ("foo", keys.clone(), "transfer coding `foo`"),
        (
            "gzip, chunked",
            keys.clone(),
            "says `Transfer-Encoding: gzip` but does not decode",
        ),
    ];
    for (transfer, body, said) in cases {
        let headers = [("transfer-encoding", transfer)];
        let (bytes, events) = record(&[], &[], &headers, body).await;
        assert_no_key(&bytes, transfer);
        let [LogEvent::Refused { why, .. }] = events.as_slice() else {
            panic!("{transfer}: {events:?}")
        };
        assert!(
            why.starts_with("the response body ") && why.contains(said),
            "{transfer}: {why}"
        );
    }
}

#[tokio::test]
async fn compressed_bytes_no_header_names_are_refused_and_no_mark_keeps_a_key_inside() {
    let keys = list_keys().into_bytes();
    for coding in ["gzip", "deflate", "br", "zstd"] {
        let body = encode(&keys, coding);
        let (bytes, events) = record(&[], &[], &[], body.clone()).await;
        assert_no_key(&super::bodies_tests::readable(&bytes), coding);
        let [LogEvent::Refused { why, .. }] = events.as_slice() else {
            panic!("{coding}: {events:?}")
        };
        assert!(
            why.contains("compressed") && why.contains("cannot keep") && !why.contains("binary:"),
            "{coding}: {why}"
        );
        // A mark does not keep it either: decoded, it holds fields a recording redacts.
        let (bytes, events) = record(&[MARK], &[], &[], body).await;
        assert_no_key(&super::bodies_tests::readable(&bytes), coding);
        let [LogEvent::Refused { why, .. }] = events.as_slice() else {
            panic!("{coding}, marked: {events:?}")
        };
        assert!(
            why.contains(coding) && !why.contains("binary:"),
            "{coding}: {why}"
        );
    }
    // Bytes that are no coding's (an image) are still kept where marked.
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01".to_vec();
    let (_, events) = record(&[], &[], &[("content-type", "image/png")], png.clone()).await;
    let [LogEvent::Refused { why, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(why.contains(&format!("\"{MARK}")), "{why}");
    let (_, events) = record(&[MARK], &[], &[], png).await;
    assert!(
        matches!(events.as_slice(), [LogEvent::Recorded { .. }]),
        "{events:?}"
    );
}

#[tokio::test]
async fn compressed_bytes_that_decode_past_the_bound_are_refused_and_never_advised_a_mark() {
    // Past the 4 MiB `record` bounds a response by, keys and all.
    let padded = format!(
        r#"{{"pad":"{}","list":{}}}"#,
        "a".repeat(5 << 20),
        list_keys()
    );
    for coding in ["gzip", "deflate", "raw-deflate", "br", "zstd"] {
        let body = encode(padded.as_bytes(), coding);
        assert!(body.len() < 1 << 20, "{coding}: {} bytes", body.len());
        for safe in [&[][..], &[MARK][..]] {
            let (bytes, events) = record(safe, &[], &[], body.clone()).await;
            assert_no_key(&bytes, coding);
            let [LogEvent::Refused { why, .. }] = events.as_slice() else {
                panic!("{coding}, {safe:?}: {events:?}")
            };
            assert!(
                why.contains("compressed") || why.contains("decodes to more than"),
                "{coding}, {safe:?}: {why}"
            );
            assert!(!why.contains("binary:"), "{coding}, {safe:?}: {why}");
        }
        // Named by a header, it is refused as a decompression bomb.
        let header = if coding == "raw-deflate" {
            "deflate"
        } else {
            coding
        };
        let (_, events) = record(&[], &[], &[("content-encoding", header)], body).await;
        let [LogEvent::Refused { why, .. }] = events.as_slice() else {
            panic!("{coding}, named: {events:?}")
        };
        assert!(why.contains("decompression bomb"), "{coding}: {why}");
    }
    // A zstd frame that asks for a window past HTTP's 8 MiB cannot be decoded
    // to be vetted either: no mark keeps it.
    let mut wide = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 16 << 3];
    wide.extend(b"known-secret-value-1");
    let (_, events) = record(&[MARK], &[], &[], wide).await;
    let [LogEvent::Refused { why, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(
        why.contains("zstd data") && why.contains("cannot be vetted") && !why.contains("binary:"),
        "{why}"
    );
}
