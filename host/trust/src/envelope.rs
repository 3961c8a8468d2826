//! The signature's file format: a Sigstore bundle (v0.3, JSON) whose DSSE
//! envelope carries an in-toto statement v1 and its ECDSA signature.
//!
//! ```json
//! { "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
//!   "verificationMaterial": { "publicKey": { "hint": "<key id>" }, "tlogEntries": [] },
//!   "dsseEnvelope": { "payloadType": "application/vnd.in-toto+json",
//!                     "payload": "<base64 statement>",
//!                     "signatures": [ { "keyid": "<key id>", "sig": "<base64 DER>" } ] } }
//! ```
//!
//! The signature is over DSSE's pre-authentication encoding of the payload
//! (`DSSEv1 <len> <type> <len> <payload>`), so the payload's type is signed too.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};

/// The signature's file name, beside `provider.toml` (Sigstore's
/// `<artifact>.sigstore.json`).
pub const BUNDLE_FILE: &str = "provider.sigstore.json";
pub(crate) const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
pub(crate) const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// What the statement says of its subjects: they are this provider.
pub(crate) const PREDICATE_TYPE: &str = "https://example.invalid/azd-wasm-host/provider/v1";
/// What a tool's sidecars statement says: its subjects are the sidecars a
/// release of the author's tool carries (`crate::sidecars`).
pub(crate) const SIDECARS_PREDICATE_TYPE: &str =
    "https://example.invalid/azd-wasm-host/tool-sidecars/v1";
/// What a code statement says: its subjects are the code precompiled, by the
/// one who packaged it, for the provider whose signature it names.
pub(crate) const CODE_PREDICATE_TYPE: &str =
    "https://example.invalid/azd-wasm-host/provider-code/v1";

/// What a signature says: these files, with these digests, are this
/// provider at this version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub(crate) statement_type: String,
    /// Every file of the provider's folder the host runs or reads as policy
    /// (the component, `provider.toml`, `extension.yaml`, the precompiled
    /// code and its binding), by its path in the folder.
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub(crate) predicate_type: String,
    /// The provider's name and version.
    pub predicate: Predicate,
}

/// A signed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// Its path in the provider's folder, with `/`.
    pub name: String,
    /// `sha256` → hex.
    pub digest: BTreeMap<String, String>,
}

/// The provider the subjects are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Predicate {
    /// The name it registers with azd.
    pub provider: String,
    /// Its version (the extension's).
    pub version: String,
    /// The id of the azd extension that ships it (`extension.yaml`'s `id`),
    /// when the signer knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
}

impl Statement {
    /// A statement that `subjects` are `provider` at `version`, shipped as
    /// the extension `extension`.
    pub fn new(
        subjects: Vec<Subject>,
        provider: &str,
        version: &str,
        extension: Option<&str>,
    ) -> Self {
        Self {
            statement_type: STATEMENT_TYPE.to_owned(),
            subject: subjects,
            predicate_type: PREDICATE_TYPE.to_owned(),
            predicate: Predicate {
                provider: provider.to_owned(),
                version: version.to_owned(),
                extension: extension.map(str::to_owned),
            },
        }
    }

    /// A code statement: `subjects` are the code precompiled for `provider`
    /// at `version`.
    pub(crate) fn code(subjects: Vec<Subject>, provider: &str, version: &str) -> Self {
        Self {
            predicate_type: CODE_PREDICATE_TYPE.to_owned(),
            ..Self::new(subjects, provider, version, None)
        }
    }

    /// The sha256 the statement gives the file at `name`.
    pub fn sha256_of(&self, name: &str) -> Option<&str> {
        self.subject
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.digest.get("sha256"))
            .map(String::as_str)
    }
}

impl Subject {
    /// The file at `name` with this sha256 (hex).
    pub fn sha256(name: impl Into<String>, hex: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            digest: BTreeMap::from([("sha256".to_owned(), hex.into())]),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Bundle {
    pub(crate) media_type: String,
    pub(crate) verification_material: VerificationMaterial,
    pub(crate) dsse_envelope: Envelope,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VerificationMaterial {
    pub(crate) public_key: KeyHint,
    #[serde(default)]
    pub(crate) tlog_entries: Vec<serde_json::Value>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct KeyHint {
    pub(crate) hint: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Envelope {
    pub(crate) payload: String,
    pub(crate) payload_type: String,
    pub(crate) signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct EnvelopeSignature {
    #[serde(default)]
    pub(crate) keyid: String,
    pub(crate) sig: String,
}

impl Bundle {
    /// A bundle of `payload` signed by `key_id` with `sig`.
    pub(crate) fn new(payload: &[u8], key_id: &str, sig: &[u8]) -> Self {
        Self {
            media_type: BUNDLE_MEDIA_TYPE.to_owned(),
            verification_material: VerificationMaterial {
                public_key: KeyHint {
                    hint: key_id.to_owned(),
                },
                tlog_entries: Vec::new(),
            },
            dsse_envelope: Envelope {
                payload: B64.encode(payload),
                payload_type: PAYLOAD_TYPE.to_owned(),
                signatures: vec![EnvelopeSignature {
                    keyid: key_id.to_owned(),
                    sig: B64.encode(sig),
                }],
            },
        }
    }
}

/// DSSE's pre-authentication encoding: what is signed.
pub(crate) fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

pub(crate) fn decode_b64(text: &str) -> Option<Vec<u8>> {
    B64.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pre_authentication_encoding_is_dsse_v1() {
        // DSSE's own test vector (protocol.md): type "http://example.com/HelloWorld", body "hello world".
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }
}
