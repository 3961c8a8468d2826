//! A body as a recording keeps it, or why the recording is refused.
//!
//! 1. Its codings are undone ([`coding`](super::coding)), content codings
//!    and transfer codings alike (`chunked` the connection undid): the
//!    recording keeps the decoded body (text a reader can read) without
//!    `Content-Encoding`, so a replay serves the identity body, which every
//!    client accepts. A body that does not decode as its headers say, in a
//!    coding none can undo, or that decodes past its bound is refused.
//! 2. Text (UTF-8) is redacted by its kind (`redact_body`). A body that is
//!    JSON or XML by its content type or its first character is read as
//!    strict JSON or well-formed XML, or not at all: one that does not
//!    parse is not text.
//! 3. Anything else (an image, an archive, JSON or XML that does not parse) has
//!    every known secret masked over its bytes (`***`, in every form the
//!    text path finds them in), and the credential scan reads it as lossy
//!    text; no rule that reads fields can read it, so a recording keeps it
//!    only where the author marked it safe: a `safe` entry `binary: METHOD
//!    URL` (or `binary: URL`), matching the start of the request's method
//!    and URL without its query. Even marked, bytes that decode in a coding
//!    no header names (compressed data) are read decoded, and refused when
//!    they hold what a recording redacts, decode past the body's bound, or
//!    say they are gzip or zstd and do not decode (what cannot be read
//!    cannot be vetted): masking over compressed bytes reaches nothing
//!    inside them.
//!
//! A refusal says why, and advises a mark only where one would hide no
//! secret from every rule: never for compressed data (however far it
//! decodes), nor for JSON or XML that does not parse (whose fields no rule
//! read).

use azd_wasm_host_core::secrets::find_unsafe_credential;

use super::coding;
use super::exchange::RecordedBody;
use super::redact::Secrets;
use super::redact_body::{self, Unread};

/// What a `safe` entry starts with to mark binary bodies safe.
pub(super) const BINARY_MARK: &str = "binary:";

/// One side of an exchange, as read.
pub(super) struct Part<'a> {
    /// `request` or `response`, for messages.
    pub(super) side: &'static str,
    pub(super) headers: &'a http::HeaderMap,
    pub(super) bytes: &'a [u8],
    /// The most a decoded body may hold, and the name of that bound.
    pub(super) max: usize,
    pub(super) bound: &'a str,
}

/// How a body is judged.
#[derive(Clone, Copy)]
pub(super) enum Judge<'a> {
    /// Recording: what cannot be kept safely refuses it. `request` is
    /// `METHOD URL` (redacted, no query), what a binary mark is matched to.
    Record {
        safe: &'a [String],
        request: &'a str,
    },
    /// Replay, which only compares: the same redaction, never a refusal.
    Replay,
}

/// A body as kept, and whether its codings were undone (then the recording
/// leaves `Content-Encoding` out).
#[derive(Debug)]
pub(super) struct Kept {
    pub(super) body: RecordedBody,
    pub(super) decoded: bool,
}

/// `part`'s body as a recording holds it, or why it cannot (recording only).
pub(super) fn keep(secrets: &Secrets, part: &Part<'_>, judge: Judge<'_>) -> Result<Kept, String> {
    let side = part.side;
    let decoded = match decode(part) {
        Ok(decoded) => decoded,
        Err(why) => match judge {
            Judge::Record { .. } => return Err(format!("the {side} body {why}")),
            // Compared as it came: a recording of it was refused anyway.
            Judge::Replay => None,
        },
    };
    let bytes = decoded.as_deref().unwrap_or(part.bytes);
    let body = match std::str::from_utf8(bytes) {
        Ok(text) => match redact_body::text(secrets, text, part.headers) {
            Ok(redacted) => RecordedBody::of(redacted.as_bytes()),
            Err(unread) => binary(secrets, part, bytes, judge, Some(unread))?,
        },
        Err(e) => {
            let unread = redact_body::claim(bytes, part.headers).map(|(format, claim)| Unread {
                format,
                claim,
                why: format!("a byte that is not UTF-8 at byte {}", e.valid_up_to()),
            });
            binary(secrets, part, bytes, judge, unread)?
        }
    };
    Ok(Kept {
        body,
        decoded: decoded.is_some(),
    })
}

/// The body with its codings undone; `None` when its headers name none.
fn decode(part: &Part<'_>) -> Result<Option<Vec<u8>>, String> {
    let Some(codings) = coding::codings(part.headers)? else {
        return Ok(None);
    };
    if part.bytes.is_empty() {
        // A HEAD's answer, a 204, a 304: nothing was encoded.
        return Ok(Some(Vec::new()));
    }
    coding::decode(part.bytes, &codings, part.max, part.bound).map(Some)
}

/// A body that is not text (`unread`: JSON or XML by its claim that does
/// not parse): known secrets masked; when recording, refused unless marked
/// safe, clean to the scan, and holding nothing to redact once decoded.
fn binary(
    secrets: &Secrets,
    part: &Part<'_>,
    bytes: &[u8],
    judge: Judge<'_>,
    unread: Option<Unread>,
) -> Result<RecordedBody, String> {
    let mut masked = bytes.to_vec();
    secrets.mask(&mut masked);
    let Judge::Record { safe, request } = judge else {
        return Ok(RecordedBody::of(&masked));
    };
    let side = part.side;
    if !marked(safe, request) {
        return Err(refusal(part, bytes, unread.as_ref(), request));
    }
    if let Some(found) = inside(secrets, safe, bytes, part) {
        return Err(format!(
            "the {side} body (not text, marked safe) is {found}: masking over its bytes cannot \
             reach inside, so the recording cannot keep it"
        ));
    }
    let lossy = String::from_utf8_lossy(&masked);
    if let Some(f) = find_unsafe_credential(&lossy, safe) {
        return Err(format!(
            "the {side} body (not text, marked safe) holds what looks like {}",
            f.shown()
        ));
    }
    Ok(RecordedBody::of(&masked))
}

/// Why a body that is not text, and not marked, is refused; a mark is
/// advised only for bytes that are neither compressed nor JSON nor XML.
fn refusal(part: &Part<'_>, bytes: &[u8], unread: Option<&Unread>, request: &str) -> String {
    let side = part.side;
    let kind = part
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map_or_else(String::new, |t| {
            format!("{}, ", azd_wasm_host_core::text::clip(t, 80))
        });
    let what = format!("{kind}{} bytes", bytes.len());
    if let Some(format) = coding::compressed(bytes, part.max) {
        return format!(
            "the {side} body ({what}) is compressed ({format}) with no `Content-Encoding` or \
             `Transfer-Encoding` naming it: what it holds is out of reach of every redaction \
             rule and of the credential scan, so the recording cannot keep it"
        );
    }
    if let Some(n) = unread {
        return format!(
            "the {side} body ({what}) {} but is not {} ({}): no rule can read its fields, so \
             one named like a secret would be kept as it came; known secrets are masked in it, \
             but the recording cannot keep it ({})",
            n.claim,
            n.format.strict(),
            n.why,
            n.format.kept()
        );
    }
    format!(
        "the {side} body is not text ({what}): no redaction rule reads it and the \
         credential scan cannot vouch for it (known secrets are masked in it), so it is \
         kept only where marked safe: if it holds no secret, add \"{BINARY_MARK} {request}\" \
         to `safe` (the test file's; for `listen --record`, a line of \
         AZD_WASM_HOST_RECORD_SAFE) and record again"
    )
}

/// What a recording would take out of `bytes` once decoded, when they
/// decode in a coding no header names (or that they decode past the body's
/// bound, or say they are gzip or zstd and do not decode, so that what they
/// hold cannot be read); `None` when nothing.
fn inside(secrets: &Secrets, safe: &[String], bytes: &[u8], part: &Part<'_>) -> Option<String> {
    let (max, bound) = (part.max, part.bound);
    let undone = match coding::undo_any(bytes, max) {
        Ok(undone) => undone,
        Err(name) => {
            return Some(format!(
                "{name} data that decodes to more than {max} bytes ({bound}), so what it holds \
                 cannot be vetted"
            ));
        }
    };
    if let Some(coding) = coding::marked(bytes)
        && !undone.iter().any(|(name, _)| name == coding.name())
    {
        return Some(format!(
            "{} data (by its first bytes) that does not decode, so what it holds cannot be \
             vetted",
            coding.name()
        ));
    }
    for (name, decoded) in undone {
        let found = match std::str::from_utf8(&decoded) {
            Ok(text) => match redact_body::text(secrets, text, &http::HeaderMap::new()) {
                Ok(redacted) if redacted == text => None,
                Ok(_) => Some("what a recording redacts".to_owned()),
                Err(n) => Some(format!(
                    "text that {} but is not {} ({})",
                    n.claim,
                    n.format.strict(),
                    n.why
                )),
            },
            Err(_) => secrets.holds(&decoded).then(|| "a known secret".to_owned()),
        };
        let found = found.or_else(|| {
            find_unsafe_credential(&String::from_utf8_lossy(&decoded), safe)
                .map(|f| format!("what looks like {}", f.shown()))
        });
        if let Some(found) = found {
            return Some(format!("{name} data that, decoded, holds {found}"));
        }
    }
    None
}

/// Whether a `safe` entry `binary: …` marks `request` (`METHOD URL`): its
/// text starts the request, or its URL.
fn marked(safe: &[String], request: &str) -> bool {
    let url = request.split_once(' ').map_or(request, |(_, url)| url);
    safe.iter()
        .filter_map(|s| s.strip_prefix(BINARY_MARK))
        .map(str::trim)
        .any(|mark| !mark.is_empty() && (request.starts_with(mark) || url.starts_with(mark)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part<'a>(headers: &'a http::HeaderMap, bytes: &'a [u8]) -> Part<'a> {
        Part {
            side: "response",
            headers,
            bytes,
            max: 1 << 20,
            bound: "the test's bound",
        }
    }

    #[test]
    fn a_binary_mark_names_a_method_and_url_or_a_url() {
        let safe = |s: &str| vec![s.to_owned()];
        let request = "GET https://a.blob.core.windows.net/c/logo.png";
        assert!(marked(
            &safe("binary: GET https://a.blob.core.windows.net/c/"),
            request
        ));
        assert!(marked(
            &safe("binary:https://a.blob.core.windows.net/"),
            request
        ));
        assert!(!marked(
            &safe("binary: PUT https://a.blob.core.windows.net/"),
            request
        ));
        assert!(!marked(&safe("binary: "), request));
        assert!(!marked(
            &safe("GET https://a.blob.core.windows.net/"),
            request
        ));
    }

    #[test]
    fn a_body_that_is_not_text_is_masked_and_refused_unless_marked_safe() {
        let mut secrets = Secrets::default();
        secrets.add("known-secret-value-1");
        // JSON with one stray byte: not UTF-8, so none of the JSON rules can read it.
        let mut body = br#"{"keys":[{"keyName":"key1","value":"known-secret-value-1"}]}"#.to_vec();
        body.insert(2, 0xff);
        let headers = http::HeaderMap::new();
        let request = "POST https://m/listKeys";
        let refused = keep(
            &secrets,
            &part(&headers, &body),
            Judge::Record { safe: &[], request },
        )
        .unwrap_err();
        // It starts as JSON does: no mark is advised, since none of its fields was read.
        assert!(
            refused.contains("starts as JSON does (with `{`) but is not strict JSON")
                && refused.contains("cannot keep it")
                && !refused.contains("binary:"),
            "{refused}"
        );
        // Bytes that are neither JSON nor compressed: a mark is advised.
        let mut image = b"\x89PNG\r\n\x1a\n".to_vec();
        image.extend(b"known-secret-value-1");
        let refused = keep(
            &secrets,
            &part(&headers, &image),
            Judge::Record { safe: &[], request },
        )
        .unwrap_err();
        assert!(
            refused.contains("the response body is not text (")
                && refused.contains("\"binary: POST https://m/listKeys\""),
            "{refused}"
        );
        let safe = vec![format!("binary: {request}")];
        let kept = keep(
            &secrets,
            &part(&headers, &body),
            Judge::Record {
                safe: &safe,
                request,
            },
        )
        .unwrap();
        let bytes = kept.body.bytes().unwrap();
        assert!(kept.body.body.is_none() && kept.body.body_base64.is_some());
        let lossy = String::from_utf8_lossy(&bytes);
        assert!(!lossy.contains("known-secret-value-1"), "{lossy}");
        assert!(
            lossy.contains("\"value\":\"********************\""),
            "{lossy}"
        );
        // Marked, but the scan still finds a key no one told the host of.
        let key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
        let mut leaky = format!("\u{1}{key}").into_bytes();
        leaky.push(0xfe);
        let e = keep(
            &secrets,
            &part(&headers, &leaky),
            Judge::Record {
                safe: &safe,
                request,
            },
        )
        .unwrap_err();
        assert!(
            e.contains("holds what looks like an Azure storage key"),
            "{e}"
        );
        assert!(!e.contains(key), "{e}");
        // Replay compares the same masked bytes, refusing nothing.
        let replayed = keep(&secrets, &part(&headers, &body), Judge::Replay).unwrap();
        assert_eq!(replayed.body, kept.body);
    }
}
