//! azd's envelopes, as its protobuf library writes them, of every kind and
//! with random contents; and mutations of them that know the wire format.
//!
//! Every sample starts with its request id (field 1, as azd writes it) and
//! mutations never touch those first bytes ([`Sample::id_len`]), so whoever
//! sent a sample knows which id should be answered.

use azd_wasm_host_proto::azdext as pb;
use pb::provisioning_message::MessageType;
use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_types::value::Kind;

use crate::Mutator;

/// Field `field` as a group (wire types 3 and 4) around `inner`: how an
/// unknown field written by an older protobuf library looks.
pub fn group(field: u32, inner: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key(field, WireType::StartGroup, &mut out);
    out.extend_from_slice(inner);
    encode_key(field, WireType::EndGroup, &mut out);
    out
}

/// One mutated envelope.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The bytes sent.
    pub bytes: Vec<u8>,
    /// The envelope before mutation.
    pub envelope: pb::ProvisioningMessage,
    /// The mutation applied.
    pub mutation: &'static str,
    /// Bytes at the start that hold the request id, untouched.
    pub id_len: usize,
    /// Groups nested this deep were added (0: none).
    pub group_depth: usize,
}

/// Draws envelopes and mutates them.
#[derive(Debug)]
pub struct Envelopes {
    m: Mutator,
}

/// Characters names and values are drawn from.
const ALPHABET: &[char] = &[
    'a', 'z', 'A', '0', '9', '-', '_', '.', '/', ' ', 'é', '雪', '\n', '"',
];

impl Envelopes {
    /// Draws from `rng`.
    pub fn new(rng: fastrand::Rng) -> Self {
        Self {
            m: Mutator::new(rng),
        }
    }

    fn rng(&mut self) -> &mut fastrand::Rng {
        self.m.rng()
    }

    fn text(&mut self, max: usize) -> String {
        let n = self.rng().usize(0..=max);
        (0..n)
            .map(|_| ALPHABET[self.rng().usize(..ALPHABET.len())])
            .collect()
    }

    fn map(&mut self) -> std::collections::BTreeMap<String, String> {
        (0..self.rng().usize(0..3))
            .map(|_| (self.text(8), self.text(8)))
            .collect()
    }

    /// A config value nested at most `depth` levels.
    fn value(&mut self, depth: usize) -> prost_types::Value {
        let pick = if depth == 0 {
            self.rng().u8(0..4)
        } else {
            self.rng().u8(0..6)
        };
        let kind = match pick {
            0 => Kind::NullValue(0),
            1 => Kind::NumberValue(self.rng().f64() * 1e6 - 5e5),
            2 => Kind::StringValue(self.text(12)),
            3 => Kind::BoolValue(self.rng().bool()),
            4 => Kind::StructValue(self.config(depth - 1)),
            _ => Kind::ListValue(prost_types::ListValue {
                values: (0..self.rng().usize(0..3))
                    .map(|_| self.value(depth - 1))
                    .collect(),
            }),
        };
        prost_types::Value { kind: Some(kind) }
    }

    fn config(&mut self, depth: usize) -> prost_types::Struct {
        prost_types::Struct {
            fields: (0..self.rng().usize(0..4))
                .map(|_| (self.text(6), self.value(depth)))
                .collect(),
        }
    }

    /// A random body: each of azd's eight requests most often, sometimes an
    /// answer, progress, a registration, or nothing.
    fn body(&mut self, provider: &str) -> Option<MessageType> {
        let provider_name = provider.to_owned();
        Some(match self.rng().u8(0..12) {
            0 => MessageType::InitializeRequest(pb::ProvisioningInitializeRequest {
                project_path: format!("/{}", self.text(10)),
                options: Some(pb::ProvisioningOptions {
                    provider: provider_name,
                    path: self.text(8),
                    module: self.text(8),
                    deployment_stacks: self.map(),
                    ignore_deployment_state: self.rng().bool(),
                    config: self.rng().bool().then(|| self.config(4)),
                    name: self.text(6),
                    virtual_env: self.map(),
                }),
            }),
            1 => MessageType::StateRequest(pb::ProvisioningStateRequest {
                options: Some(pb::ProvisioningStateOptions { hint: self.text(8) }),
                provider_name,
            }),
            2 => MessageType::DeployRequest(pb::ProvisioningDeployRequest { provider_name }),
            3 => MessageType::PreviewRequest(pb::ProvisioningPreviewRequest { provider_name }),
            4 => MessageType::DestroyRequest(pb::ProvisioningDestroyRequest {
                options: Some(pb::ProvisioningDestroyOptions {
                    force: self.rng().bool(),
                    purge: self.rng().bool(),
                }),
                provider_name,
            }),
            5 => MessageType::EnsureEnvRequest(pb::ProvisioningEnsureEnvRequest { provider_name }),
            6 => {
                MessageType::ParametersRequest(pb::ProvisioningParametersRequest { provider_name })
            }
            7 => MessageType::PlannedOutputsRequest(pb::ProvisioningPlannedOutputsRequest {
                provider_name,
            }),
            8 => MessageType::StateResponse(pb::ProvisioningStateResponse::default()),
            9 => MessageType::ProgressMessage(pb::ProvisioningProgressMessage {
                request_id: self.text(8),
                message: self.text(20),
                timestamp: self.rng().i64(..),
            }),
            10 => MessageType::RegisterProvisioningProviderResponse(
                pb::RegisterProvisioningProviderResponse {},
            ),
            _ => return None,
        })
    }

    /// A well-formed envelope for `provider` with id `id`.
    pub fn envelope(&mut self, id: &str, provider: &str) -> pb::ProvisioningMessage {
        let message_type = self.body(provider);
        // An error with no body is azd answering something: rare.
        let error =
            (message_type.is_none() && self.rng().u8(0..4) == 0).then(|| pb::ExtensionError {
                message: self.text(10),
                ..Default::default()
            });
        pb::ProvisioningMessage {
            request_id: id.to_owned(),
            error,
            message_type,
        }
    }

    /// Unknown fields (numbers from 100) of every wire type, groups nested up
    /// to `depth` among them.
    pub fn unknown_fields(&mut self, depth: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..self.rng().usize(1..4) {
            let field = self.rng().u32(100..100_000);
            match self.rng().u8(0..5) {
                0 => {
                    encode_key(field, WireType::Varint, &mut out);
                    encode_varint(self.rng().u64(..), &mut out);
                }
                1 => {
                    encode_key(field, WireType::SixtyFourBit, &mut out);
                    out.extend(self.rng().u64(..).to_le_bytes());
                }
                2 => {
                    encode_key(field, WireType::ThirtyTwoBit, &mut out);
                    out.extend(self.rng().u32(..).to_le_bytes());
                }
                3 => {
                    let bytes: Vec<u8> = (0..self.rng().usize(0..20))
                        .map(|_| self.rng().u8(..))
                        .collect();
                    encode_key(field, WireType::LengthDelimited, &mut out);
                    encode_varint(bytes.len() as u64, &mut out);
                    out.extend(bytes);
                }
                _ if depth > 0 => {
                    let inner = self.unknown_fields(depth - 1);
                    out.extend(group(field, &inner));
                }
                _ => {
                    encode_key(field, WireType::Varint, &mut out);
                    encode_varint(0, &mut out);
                }
            }
        }
        out
    }

    /// One sample: an envelope for `provider` with id `id`, mutated in one of
    /// the ways azd's bytes could differ from what the host expects.
    pub fn sample(&mut self, id: &str, provider: &str) -> Sample {
        let envelope = self.envelope(id, provider);
        let id_only = pb::ProvisioningMessage {
            request_id: id.to_owned(),
            error: None,
            message_type: None,
        };
        let id_len = id_only.encoded_len();
        let clean = envelope.encode_to_vec();
        let mut group_depth = 0;
        let (bytes, mutation) = match self.rng().u8(0..8) {
            0 => (clean, "as-is"),
            1 => {
                // Unknown fields after the id or at the end: a newer azd's fields.
                let unknown = self.unknown_fields(3);
                let mut out = clean;
                let at = if self.rng().bool() { id_len } else { out.len() };
                out.splice(at..at, unknown);
                (out, "unknown-fields")
            }
            2 => (self.unknown_in_body(&envelope, id_len), "unknown-in-body"),
            3 => {
                // Groups nested deep, past what a recursive skip survives.
                group_depth = if self.rng().bool() {
                    self.rng().usize(50..600)
                } else {
                    self.rng().usize(4000..20_000)
                };
                let mut out = clean;
                let field = self.rng().u32(100..2000);
                let mut key = Vec::new();
                encode_key(field, WireType::StartGroup, &mut key);
                let mut end = Vec::new();
                encode_key(field, WireType::EndGroup, &mut end);
                out.extend(key.repeat(group_depth));
                out.extend(end.repeat(group_depth));
                (out, "deep-groups")
            }
            _ => self.m.bytes(&clean, id_len),
        };
        Sample {
            bytes,
            envelope,
            mutation,
            id_len,
            group_depth,
        }
    }

    /// The envelope with unknown fields inside its body (the body is the
    /// envelope's field after the id, re-encoded with the extra bytes).
    fn unknown_in_body(&mut self, envelope: &pb::ProvisioningMessage, id_len: usize) -> Vec<u8> {
        let clean = envelope.encode_to_vec();
        let Some(body) = &envelope.message_type else {
            return clean;
        };
        let mut body_bytes = Vec::new();
        body.encode(&mut body_bytes);
        // `encode` wrote key, length, contents: re-read the key and length.
        let mut rest = &body_bytes[..];
        let Ok((field, _)) = prost::encoding::decode_key(&mut rest) else {
            return clean;
        };
        let Ok(len) = prost::encoding::decode_varint(&mut rest) else {
            return clean;
        };
        let contents = &rest[..usize::try_from(len).unwrap_or(0).min(rest.len())];
        let mut inner = contents.to_vec();
        inner.extend(self.unknown_fields(2));
        let mut out = clean[..id_len].to_vec();
        encode_key(field, WireType::LengthDelimited, &mut out);
        encode_varint(inner.len() as u64, &mut out);
        out.extend(inner);
        if let Some(error) = &envelope.error {
            prost::encoding::message::encode(99, error, &mut out);
        }
        out
    }
}
