//! The attacks on redaction by field name through what a strict JSON reader
//! refuses, or reads otherwise than a lenient one: a byte order mark, JSON
//! lines, nesting deeper than a recursive parser goes, a lone surrogate,
//! JSON that does not parse, duplicate keys, a secret as a key or a number,
//! a known secret written in hex. Each through [`Traffic::serve`] as the
//! runtime calls it.

use std::sync::Arc;

use super::record_tests::{
    KEY1, KEY2, assert_no_key, list_keys, logged, post, read, service, traffic,
};
use super::{LogEvent, TrafficMode};

/// The request every answer here is given to.
const URL: &str = "https://management.azure.com/s/a/listKeys?api-version=1";
/// A `binary:` mark for that request.
const MARK: &str = "binary: POST https://management.azure.com/s/";

/// One exchange recorded: the service answers `body` with `headers`;
/// `known` are the values the host knows to be secret. The log's bytes and
/// events.
pub(super) async fn record(
    safe: &[&str],
    known: &[&str],
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (Vec<u8>, Vec<LogEvent>) {
    let dir = tempfile::tempdir().unwrap();
    let rec = traffic(dir.path(), TrafficMode::Record, safe);
    for value in known {
        rec.keep_secret(value);
    }
    let headers = headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    let sent = Arc::clone(&rec)
        .serve(
            post(URL, &[], Vec::new()),
            1 << 22,
            service(headers, body.clone()),
        )
        .await;
    assert!(
        read(sent).await == body,
        "the guest gets the answer as sent"
    );
    logged(dir.path())
}

/// The text body of the one exchange recorded, or a panic naming what happened.
fn recorded_text(events: &[LogEvent]) -> String {
    match events {
        [LogEvent::Recorded { exchange }] => {
            exchange.response.body.body.clone().expect("a text body")
        }
        other => panic!("not recorded: {other:?}"),
    }
}

/// Why the one exchange was refused, or a panic naming what happened.
fn refusal(events: &[LogEvent]) -> String {
    match events {
        [LogEvent::Refused { why, .. }] => why.clone(),
        other => panic!("not refused: {other:?}"),
    }
}

/// Each JSON document of `text`, one a line (a BOM before the first left out).
fn documents(text: &str) -> Vec<serde_json::Value> {
    text.trim_start_matches('\u{feff}')
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test]
async fn a_list_keys_answer_behind_a_bom_is_redacted_by_field_name() {
    let body = format!("\u{feff}{}", list_keys());
    for content_type in ["application/json; charset=utf-8", "text/plain", ""] {
        let headers: Vec<(&str, &str)> = [("content-type", content_type)]
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let (bytes, events) = record(&[], &[], &headers, body.clone().into_bytes()).await;
        assert_no_key(&bytes, content_type);
        let text = recorded_text(&events);
        let [doc] = documents(&text).try_into().unwrap();
        assert_eq!(doc["keys"][1]["keyName"], "key2", "{text}");
        assert_eq!(doc["keys"][0]["value"], "REDACTED", "{text}");
        assert_eq!(doc["keys"][1]["value"], "REDACTED", "{text}");
    }
}

#[tokio::test]
async fn a_json_lines_answer_is_redacted_line_by_line() {
    let body = format!(
        "{}\n{{\"event\":\"rotated\",\"key1\":\"{KEY1}\"}}\r\n\n  {{\"keyName\":\"key2\",\"value\":\"{KEY2}\"}}\n",
        list_keys()
    );
    for content_type in ["application/x-ndjson", ""] {
        let headers: Vec<(&str, &str)> = [("content-type", content_type)]
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let (bytes, events) = record(&[], &[], &headers, body.clone().into_bytes()).await;
        assert_no_key(&bytes, content_type);
        let text = recorded_text(&events);
        let docs = documents(&text);
        assert_eq!(docs.len(), 3, "{text}");
        assert_eq!(docs[0]["keys"][1]["value"], "REDACTED", "{text}");
        assert_eq!(docs[1]["key1"], "REDACTED", "{text}");
        assert_eq!(docs[1]["event"], "rotated", "{text}");
        assert_eq!(docs[2]["value"], "REDACTED", "{text}");
        assert_eq!(text.lines().count(), body.lines().count(), "{text}");
    }
}

#[tokio::test]
async fn an_answer_nested_100000_deep_is_redacted_without_overflowing_the_stack() {
    let depth = 100_000;
    let leaf = format!(r#"{{"keyName":"key1","value":"{KEY1}","key2":"{KEY2}","n":7}}"#);
    let arrays = format!("{}{leaf}{}", "[".repeat(depth), "]".repeat(depth));
    let objects = format!("{}{leaf}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    for body in [arrays, objects] {
        let (bytes, events) = record(&[], &[], &[], body.clone().into_bytes()).await;
        assert_no_key(&bytes, "deep");
        let text = recorded_text(&events);
        assert_eq!(
            text.matches("\"REDACTED\"").count(),
            2,
            "{}",
            &text[depth..depth + 200]
        );
        assert!(text.contains(r#""keyName":"key1""#) && text.contains(r#""n":7"#));
        assert_eq!(text.len(), body.len() - KEY1.len() - KEY2.len() + 16);
        // Cut short, as deep: it does not parse, so it is not kept.
        let cut = body[..body.len() - 1].to_owned();
        let (bytes, events) = record(&[], &[], &[], cut.into_bytes()).await;
        assert_no_key(&bytes, "deep, cut short");
        let why = refusal(&events);
        assert!(!why.contains("binary:"), "{why}");
    }
}

#[tokio::test]
async fn json_with_a_lone_surrogate_is_not_text_and_is_refused_or_masked() {
    for surrogate in [r"\ud800", r"\uDC00", r"\ud800\u0041", r"\udbff\ud800"] {
        let body = format!(
            r#"{{"note":"{surrogate}","keys":[{{"keyName":"key1","value":"{KEY1}","permissions":"FULL"}}]}}"#
        );
        let (bytes, events) = record(&[], &[], &[], body.clone().into_bytes()).await;
        assert_no_key(&bytes, surrogate);
        let why = refusal(&events);
        assert!(
            why.contains("is not strict JSON") && !why.contains("binary:"),
            "{surrogate}: {why}"
        );
        // Marked safe, it is kept only with every known value masked.
        let (bytes, events) = record(&[MARK], &[KEY1], &[], body.into_bytes()).await;
        assert_no_key(&bytes, surrogate);
        let text = recorded_text(&events);
        assert!(text.contains(&"*".repeat(KEY1.len())), "{text}");
    }
}

#[tokio::test]
async fn a_body_that_says_or_looks_like_json_and_does_not_parse_is_refused_without_advising_a_mark()
{
    let entry = format!(r#""keyName":"key1","value":"{KEY1}""#);
    let cases: [(&str, String); 9] = [
        ("application/json", format!("{{{entry},}}")),
        ("", format!("{{{entry}")),
        ("", format!("{{{}}}", entry.replace('"', "'"))),
        ("", format!("[{{{entry}}}] /* listKeys */")),
        ("", format!("{{{entry},\"n\":NaN}}")),
        ("", format!("{{{entry},\"tab\":\"a\tb\"}}")),
        ("", format!("\u{b}{{{entry}}}")),
        ("application/json", format!("key1: {KEY1}")),
        (
            "application/problem+json",
            format!("{{{entry}}}{{{entry}}}"),
        ),
    ];
    for (content_type, body) in cases {
        let headers: Vec<(&str, &str)> = [("content-type", content_type)]
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let (bytes, events) = record(&[], &[], &headers, body.clone().into_bytes()).await;
        assert_no_key(&bytes, &body);
        let why = refusal(&events);
        assert!(
            why.starts_with("the response body ")
                && why.contains("is not strict JSON")
                && why.contains("cannot keep")
                && !why.contains("binary:"),
            "{body}: {why}"
        );
    }
    // Blank bodies, and JSON that parses, are text.
    for body in ["", "  \r\n", "{}", "[]", "\"a string\"", "12"] {
        let headers = [("content-type", "application/json")];
        let (_, events) = record(&[], &[], &headers, body.as_bytes().to_vec()).await;
        assert!(
            matches!(events.as_slice(), [LogEvent::Recorded { .. }]),
            "{body:?}: {events:?}"
        );
    }
}

#[tokio::test]
async fn a_secret_cannot_hide_behind_a_duplicate_key_an_object_key_or_a_number() {
    let known = "granted-env-value-0001";
    let cases = [
        r#"{"password":"hunter2-secret","password":null}"#.to_owned(),
        r#"{"key1":"hunter2-secret","key1":"REDACTED"}"#.to_owned(),
        r#"{"clientSecret":{"nested":["hunter2-secret",{"deeper":"hunter2-secret"}]}}"#.to_owned(),
        format!(r#"{{"{known}":{{"n":1}},"x":"y"}}"#),
        r#"{"\u0067ranted-env-value-0001":1}"#.to_owned(),
        r#"{"adminPassword":{"pin":31415926535}}"#.to_owned(),
        r#"{"pin":31415926535}"#.to_owned(),
    ];
    for body in cases {
        let (bytes, events) =
            record(&[], &[known, "31415926535"], &[], body.clone().into_bytes()).await;
        let text = recorded_text(&events);
        let logged = String::from_utf8_lossy(&bytes);
        for secret in ["hunter2-secret", known, "31415926535"] {
            assert!(!logged.contains(secret), "{body}: {logged}");
            // Nor in what a reader of the JSON gets.
            let read = documents(&text)[0].to_string();
            assert!(!read.contains(secret), "{body}: {read}");
        }
    }
}

#[tokio::test]
async fn a_known_secret_written_in_hex_never_reaches_the_recording() {
    let known = "granted-account-key-0001";
    let lower: String = known.bytes().map(|b| format!("{b:02x}")).collect();
    let upper = lower.to_ascii_uppercase();
    let text_body = format!(r#"{{"blob":"{lower}","note":"x {upper} y"}}"#);
    let mut binary = format!("\u{1}{lower}\u{2}").into_bytes();
    binary.push(0xff);
    for (safe, body) in [(vec![], text_body.into_bytes()), (vec![MARK], binary)] {
        let (bytes, events) = record(&safe, &[known], &[], body).await;
        let logged = String::from_utf8_lossy(&bytes);
        assert!(
            matches!(events.as_slice(), [LogEvent::Recorded { .. }]),
            "{events:?}"
        );
        let [LogEvent::Recorded { exchange }] = events.as_slice() else {
            unreachable!()
        };
        let kept = exchange.response.body.bytes().unwrap();
        let kept = String::from_utf8_lossy(&kept);
        for form in [&lower, &upper] {
            assert!(!logged.contains(&form[4..form.len() - 4]), "{logged}");
            assert!(!kept.contains(&form[4..form.len() - 4]), "{kept}");
        }
    }
}

/// `doc` written as a JSON string, `levels` times over (JSON in a string in
/// a string …), each level under a plain field name.
fn in_strings(doc: &str, levels: usize) -> String {
    let mut text = doc.to_owned();
    for level in 0..levels {
        let as_string = serde_json::Value::from(text).to_string();
        text = format!(r#"{{"level{level}":{as_string},"n":{level}}}"#);
    }
    text
}

/// The JSON text a string of `doc` holds, read `levels` strings deep.
fn out_of_strings(doc: &serde_json::Value, levels: usize) -> serde_json::Value {
    let mut doc = doc.clone();
    for level in (0..levels).rev() {
        let inner = doc[format!("level{level}")].as_str().unwrap().to_owned();
        doc = serde_json::from_str(&inner).unwrap_or_else(|e| panic!("{e}: {inner}"));
    }
    doc
}

#[tokio::test]
async fn json_stored_inside_a_json_string_is_redacted_by_field_name() {
    let secret = "hunter2-secret-0001";
    let inner = [
        format!(r#"{{"password":"{secret}","port":5432}}"#),
        format!(r#"[{{"keyName":"key1","value":"{secret}","permissions":"FULL"}}]"#),
        format!(
            r#" {{"db":{{"adminPassword":"\u0068{}"}},"port":5432}} "#,
            &secret[1..]
        ),
        format!(r#"{{"value":"{secret}","type":"SecureString","port":5432}}"#),
    ];
    for doc in &inner {
        for levels in 1..=8 {
            let body = in_strings(doc, levels);
            let (bytes, events) = record(&[], &[], &[], body.clone().into_bytes()).await;
            let logged = String::from_utf8_lossy(&bytes);
            assert!(!logged.contains(&secret[2..]), "{levels}: {body}\n{logged}");
            // What a reader gets, string by string, is JSON without the secret.
            let text = recorded_text(&events);
            let [outer] = documents(&text).try_into().unwrap();
            let read = out_of_strings(&outer, levels).to_string();
            assert!(
                !read.contains(&secret[2..]) && read.contains("REDACTED"),
                "{read}"
            );
            assert!(read.contains("5432") || !doc.contains("5432"), "{read}");
        }
    }
    // The Azure shapes: an App Configuration value, a Key Vault secret holding JSON.
    let app_config = format!(
        r#"{{"items":[{{"key":"db","label":null,"value":"{{\"connectionString\":\"Server=x;Password={secret}\"}}"}}]}}"#
    );
    let (bytes, _) = record(&[], &[], &[], app_config.into_bytes()).await;
    assert!(!String::from_utf8_lossy(&bytes).contains(&secret[2..]));
    // A string that starts as JSON does but is not JSON is a string.
    let text = r#"{"d":"{not json} password"}"#;
    let (_, events) = record(&[], &[], &[], text.as_bytes().to_vec()).await;
    assert_eq!(recorded_text(&events), text);
}

#[tokio::test]
async fn json_in_strings_past_eight_deep_is_refused_where_it_names_a_secret() {
    let secret = "hunter2-secret-0001";
    let named = format!(r#"{{"password":"{secret}"}}"#);
    for levels in [9, 12] {
        let body = in_strings(&named, levels);
        let (bytes, events) = record(&[], &[], &[], body.into_bytes()).await;
        assert!(!String::from_utf8_lossy(&bytes).contains(&secret[2..]));
        let why = refusal(&events);
        assert!(
            why.contains("nested in strings more than 8 deep") && !why.contains("binary:"),
            "{levels}: {why}"
        );
        // A mark keeps it only masked, a known value found through every level's escapes.
        let body = in_strings(
            &format!(r#"{{"password":"\u0068{}"}}"#, &secret[1..]),
            levels,
        );
        let (bytes, events) = record(&[MARK], &[secret], &[], body.into_bytes()).await;
        assert!(!String::from_utf8_lossy(&bytes).contains(&secret[2..]));
        assert!(
            matches!(events.as_slice(), [LogEvent::Recorded { .. }]),
            "{events:?}"
        );
    }
    // Past eight deep, JSON that names no secret is kept as it came.
    let body = in_strings(r#"{"name":"web","port":80}"#, 10);
    let (_, events) = record(&[], &[], &[], body.clone().into_bytes()).await;
    assert_eq!(recorded_text(&events), body);
}
