//! A property of recording, over seeded random bodies: whatever wraps a JSON
//! or XML body that holds secrets (a BOM, JSON lines, nesting up to 100,000
//! deep, JSON in JSON strings up to 10 deep, `\u` escapes, whitespace, a
//! lone surrogate or another break of strict JSON; CDATA sections, a `>` in
//! a quoted attribute value, references, comments, a DOCTYPE or another
//! break of well-formed XML; content and transfer codings, compression no
//! header names, compression past the bound), no secret reaches what the
//! recorder writes, in any form a reader could decode (plain,
//! percent-encoded, base64, hex, behind escapes or references); a body that
//! is not strict JSON or well-formed XML is refused, or, where a `binary:`
//! mark keeps it, masked; one that decodes past its bound is refused, and
//! no refusal of either advises a mark.
//!
//! `AZD_WASM_HOST_FUZZ_SEED=<seed>` replays a run (each prints its seed).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use super::bodies_tests::readable;
use super::property_cases_tests::{Case, case, hex};
use super::property_xml_tests::{over_bound_case, xml_case, xml_read};
use super::record_tests::{logged, post, read, service, traffic};
use super::{LogEvent, TrafficMode};

/// How many bodies one run tries (a few seconds in a debug build).
const CASES: usize = 400;
/// `text` with JSON's escapes read (`\uXXXX`, surrogate pairs joined;
/// `\"`, `\\`, `\/`), as a reader of the JSON gets its strings.
fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut high: Option<u32> = None;
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('u') => {
                let digits: String = chars.clone().take(4).collect();
                let hex = digits.len() == 4 && digits.chars().all(|c| c.is_ascii_hexdigit());
                let Some(unit) = hex.then(|| u32::from_str_radix(&digits, 16).ok()).flatten()
                else {
                    // Not an escape: read as it stands.
                    out.push_str("\\u");
                    continue;
                };
                chars.nth(3);
                match (high.take(), unit) {
                    (None, 0xD800..=0xDBFF) => high = Some(unit),
                    (Some(h), 0xDC00..=0xDFFF) => {
                        let c = 0x10000 + ((h - 0xD800) << 10) + (unit - 0xDC00);
                        out.extend(char::from_u32(c));
                    }
                    (_, unit) => out.extend(char::from_u32(unit)),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Every form of `secret` a reader could decode: plain, percent-encoded,
/// base64 (alone, and its middle as it reads inside a larger base64 text),
/// hex in either case.
fn forms(secret: &str) -> Vec<String> {
    let b64 = STANDARD.encode(secret);
    let url = URL_SAFE_NO_PAD.encode(secret);
    vec![
        secret.to_owned(),
        secret.replace('/', "%2F").replace('+', "%2B"),
        b64[4..b64.len() - 4].to_owned(),
        url[4..url.len() - 4].to_owned(),
        hex(secret),
        hex(secret).to_ascii_uppercase(),
    ]
}

/// Everything a reader could get from what the recorder wrote: the log as
/// it stands, and a recorded body decoded, its XML read, and its JSON
/// escapes read level by level (JSON in JSON strings).
fn seen(bytes: &[u8], events: &[LogEvent]) -> Result<String, String> {
    let mut seen = String::from_utf8_lossy(bytes).into_owned();
    if let [LogEvent::Recorded { exchange }] = events {
        let body = exchange.response.body.bytes().map_err(|e| e.to_string())?;
        let stored = String::from_utf8_lossy(&readable(&body)).into_owned();
        seen.push('\n');
        seen.push_str(&stored);
        seen.push('\n');
        seen.push_str(&xml_read(&stored));
        let mut level = stored;
        for _ in 0..12 {
            let next = unescaped(&level);
            if next == level {
                break;
            }
            seen.push('\n');
            seen.push_str(&next);
            level = next;
        }
    }
    Ok(seen)
}

/// What `case` must hold to, checked against the log the recorder wrote.
fn check(case: &Case, bytes: &[u8], events: &[LogEvent]) -> Result<(), String> {
    let seen = seen(bytes, events)?;
    for secret in &case.secrets {
        for form in forms(secret) {
            if let Some(at) = seen.find(&form) {
                let mut from = at.saturating_sub(60);
                while !seen.is_char_boundary(from) {
                    from -= 1;
                }
                let mut to = (at + form.len() + 60).min(seen.len());
                while !seen.is_char_boundary(to) {
                    to += 1;
                }
                let around = &seen[from..to];
                return Err(format!("{form} (of {secret}) was written: …{around}…"));
            }
        }
    }
    let marked = !case.safe.is_empty();
    match events {
        [LogEvent::Refused { why, .. }] => {
            if case.strict && !case.undeclared && !case.over {
                return Err(format!("strict JSON or well-formed XML was refused: {why}"));
            }
            if why.contains("binary:") && (case.undeclared || !case.strict || case.over) {
                return Err(format!("a refusal advises a mark: {why}"));
            }
        }
        [LogEvent::Recorded { .. }] => {
            if case.over {
                return Err("a body that decodes past its bound was kept".into());
            }
            if case.undeclared {
                return Err("compressed bytes no header names were kept".into());
            }
            if !case.strict && !marked {
                return Err("a body that does not parse strictly was kept unmarked".into());
            }
        }
        other => return Err(format!("events {other:?}")),
    }
    Ok(())
}

#[tokio::test]
async fn no_secret_reaches_the_recording_whatever_wraps_a_json_body() {
    // XML bodies, and bodies past their bound, are tried beside JSON ones
    // (the name is older than they are).
    let seed = std::env::var("AZD_WASM_HOST_FUZZ_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("recording property: seed {seed} (AZD_WASM_HOST_FUZZ_SEED={seed} replays it)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut failures = Vec::new();
    for n in 0..CASES {
        let case = match n % 8 {
            1 | 5 => xml_case(&mut rng, n),
            6 => over_bound_case(&mut rng, n),
            _ => case(&mut rng, n),
        };
        let dir = tempfile::tempdir().unwrap();
        let safe: Vec<&str> = case.safe.iter().map(String::as_str).collect();
        let rec = traffic(dir.path(), TrafficMode::Record, &safe);
        for value in &case.known {
            rec.keep_secret(value);
        }
        let request = post(
            "https://management.azure.com/s/a/listKeys?api-version=1",
            &[],
            Vec::new(),
        );
        let sent = Arc::clone(&rec)
            .serve(
                request,
                u64::try_from(case.max).unwrap(),
                service(case.headers.clone(), case.body.clone()),
            )
            .await;
        assert!(
            read(sent).await == case.body,
            "the guest gets the answer as sent"
        );
        let (bytes, events) = logged(dir.path());
        if let Err(why) = check(&case, &bytes, &events) {
            failures.push(format!("{}: {why}", case.what.join(", ")));
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {CASES} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
