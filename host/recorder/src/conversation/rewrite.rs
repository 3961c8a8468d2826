//! A whole conversation rewritten before it is kept: every secret [`Known`]
//! takes out of each line (a message of azd's or the host's redacted field by
//! field and masked, a service call or an HTTP exchange by its strings), and
//! the refusal of a line that still holds what looks like a credential.

use azd_wasm_host_proto::azdext as pb;
use prost::Message as _;
use serde_json::Value;

use super::secrets::Known;

/// The conversation `text` (JSON lines) with every secret `known` taken out
/// of every line, or why it cannot be kept: a line that still holds what
/// looks like a credential not in `safe` (named by its number and kind,
/// never shown).
pub(crate) fn rewrite(text: &str, known: &Known, safe: &[String]) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        if let Some(why) = refused(raw) {
            return Err(format!("line {}: {why}", n + 1));
        }
        let (line, scanned) = rewrite_line(raw, known);
        if let Some(f) = azd_wasm_host_core::secrets::find_unsafe_credential(&scanned, safe) {
            return Err(format!(
                "line {} holds what looks like {}; if it is no secret, add it to the \
                 recording's first line, \"safe\": [\"…\"] (or AZD_WASM_HOST_RECORD_SAFE), \
                 and record again",
                n + 1,
                f.shown()
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// Why the HTTP exchange a line names could not be recorded, when it is a
/// refusal (`traffic::LogEvent::Refused`).
fn refused(raw: &str) -> Option<String> {
    let value: Value = serde_json::from_str(raw).ok()?;
    if value.get("event").and_then(Value::as_str) != Some("refused") {
        return None;
    }
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(format!(
        "the HTTP exchange {} could not be recorded: {}",
        text("request"),
        text("why")
    ))
}

/// One line redacted, and the text the scan reads of it (a message's
/// fields, not its base64; an exchange's strings, a binary body as lossy text).
fn rewrite_line(raw: &str, known: &Known) -> (String, String) {
    let Ok(mut value) = serde_json::from_str::<Value>(raw) else {
        let scrubbed = known.scrub(raw);
        return (scrubbed.clone(), scrubbed);
    };
    let from = value.get("from").and_then(Value::as_str).map(str::to_owned);
    match from.as_deref() {
        Some("azd" | "host") => {
            use base64::Engine as _;
            let b64 = base64::engine::general_purpose::STANDARD;
            let bytes = value
                .get("message")
                .and_then(Value::as_str)
                .and_then(|m| b64.decode(m).ok())
                .unwrap_or_default();
            let (bytes, scanned) = match pb::ProvisioningMessage::decode(bytes.as_slice()) {
                Ok(mut msg) => {
                    known.redact(&mut msg);
                    (msg.encode_to_vec(), format!("{msg:?}"))
                }
                Err(_) => {
                    let mut raw = bytes;
                    known.mask(&mut raw);
                    let scanned = String::from_utf8_lossy(&raw).into_owned();
                    (raw, scanned)
                }
            };
            value["message"] = b64.encode(bytes).into();
            (value.to_string(), scanned)
        }
        Some("recording") => (raw.to_owned(), String::new()),
        _ => {
            // A service call, or an HTTP exchange the runtime logged (already
            // redacted by its own rules).
            known.json(&mut value, false);
            let mut scanned = String::new();
            strings(&value, &mut scanned);
            (value.to_string(), scanned)
        }
    }
}

/// Every string of `value`, one per line; a binary body as its bytes read
/// as lossy text (not its base64).
fn strings(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                match v.as_str() {
                    Some(b64) if key == "body_base64" => {
                        use base64::Engine as _;
                        let engine = base64::engine::general_purpose::STANDARD;
                        let bytes = engine.decode(b64).unwrap_or_default();
                        out.push_str(&String::from_utf8_lossy(&bytes));
                        out.push('\n');
                    }
                    _ => strings(v, out),
                }
            }
        }
        _ => {}
    }
}
