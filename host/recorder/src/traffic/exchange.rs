//! One HTTP exchange as a cassette holds it: the request and the response,
//! headers in order, the body as text when it is UTF-8 and as base64 when not.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::error::TrafficError;

/// A request the guest sent, as recorded (secrets redacted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// `GET`, `PUT`, …
    pub method: String,
    /// The full URI, query included.
    pub uri: String,
    /// Kept for a reader; replay does not match on headers (dates, request
    /// ids and signatures change on every run).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "header_lines")]
    pub headers: Vec<(String, String)>,
    /// What it sent.
    #[serde(flatten)]
    pub body: RecordedBody,
}

/// The answer the service gave, as recorded (secrets redacted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedResponse {
    /// The HTTP status.
    pub status: u16,
    /// The headers, in order (transport headers left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "header_lines")]
    pub headers: Vec<(String, String)>,
    /// What it answered.
    #[serde(flatten)]
    pub body: RecordedBody,
}

/// A request and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// What the guest sent.
    pub request: RecordedRequest,
    /// What came back.
    pub response: RecordedResponse,
}

/// A body: `body` (UTF-8 text), `body_base64` (anything else), or neither (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedBody {
    /// The body, when it is UTF-8 text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The body in base64, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
}

impl RecordedBody {
    /// `bytes` in the form a person can read where possible.
    pub fn of(bytes: &[u8]) -> Self {
        if bytes.is_empty() {
            return Self::default();
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Self {
                body: Some(text.to_owned()),
                body_base64: None,
            },
            Err(_) => Self {
                body: None,
                body_base64: Some(STANDARD.encode(bytes)),
            },
        }
    }

    /// The bytes; base64 that does not decode is an error naming it.
    pub fn bytes(&self) -> Result<Bytes, TrafficError> {
        match (&self.body, &self.body_base64) {
            (Some(text), _) => Ok(Bytes::from(text.clone())),
            (None, Some(b64)) => STANDARD
                .decode(b64)
                .map(Bytes::from)
                .map_err(|why| TrafficError::NotBase64 { why }),
            (None, None) => Ok(Bytes::new()),
        }
    }
}

impl RecordedRequest {
    /// `METHOD URI`, as messages name a request.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.uri)
    }
}

/// Headers a recording leaves out: how the bytes travelled, not what they say
/// (a replayed body is whole, so its length is set again from it).
pub(crate) const TRANSPORT_HEADERS: [&str; 5] = [
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "upgrade",
];

/// The headers of `map` as `(name, value)` pairs, in order, transport
/// headers left out; a value that is not text is kept lossily.
pub(crate) fn header_pairs(map: &http::HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .filter(|(name, _)| !TRANSPORT_HEADERS.contains(&name.as_str()))
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// Headers as a cassette writes them: one `name: value` line each, in order.
mod header_lines {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        h: &[(String, String)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(h.iter().map(|(n, v)| format!("{n}: {v}")))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, String)>, D::Error> {
        Vec::<String>::deserialize(d)?
            .into_iter()
            .map(|line| match line.split_once(':') {
                Some((n, v)) => Ok((n.trim().to_owned(), v.trim_start().to_owned())),
                None => Err(serde::de::Error::custom(format!(
                    "header {line:?} is not `name: value`"
                ))),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_keep_text_readable_and_other_bytes_exact() {
        let text = RecordedBody::of(b"<a>x</a>");
        assert_eq!(text.body.as_deref(), Some("<a>x</a>"));
        assert_eq!(text.bytes().unwrap(), Bytes::from_static(b"<a>x</a>"));
        let binary = RecordedBody::of(&[0xff, 0x00, 0x10]);
        assert!(binary.body.is_none());
        assert_eq!(binary.bytes().unwrap().as_ref(), &[0xff, 0x00, 0x10]);
        assert_eq!(RecordedBody::of(b""), RecordedBody::default());
        let bad = RecordedBody {
            body: None,
            body_base64: Some("!!".into()),
        };
        assert!(bad.bytes().unwrap_err().to_string().contains("not base64"));
    }

    #[test]
    fn an_exchange_reads_back_as_written() {
        let exchange = Exchange {
            request: RecordedRequest {
                method: "PUT".into(),
                uri: "http://127.0.0.1:10000/acct/web?restype=container".into(),
                headers: vec![("x-ms-version".into(), "2021-08-06".into())],
                body: RecordedBody::default(),
            },
            response: RecordedResponse {
                status: 201,
                headers: vec![],
                body: RecordedBody::of(b"ok"),
            },
        };
        let text = serde_json::to_string(&exchange).unwrap();
        assert!(text.contains("\"body\":\"ok\""), "{text}");
        assert!(text.contains("[\"x-ms-version: 2021-08-06\"]"), "{text}");
        let back: Exchange = serde_json::from_str(&text).unwrap();
        assert_eq!(back, exchange);
    }
}
