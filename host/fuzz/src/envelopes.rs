//! azd's envelopes, as its protobuf library writes them, of every kind and
//! with random contents; and mutations of them that know the wire format.
//!
//! Every sample starts with its request id (field 1, as azd writes it) and
//! mutations never touch those first bytes ([`Sample::id_len`]), so whoever
//! sent a sample knows which id should be answered.

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{Request, RequestKind};
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

    /// A random body: each of azd's requests ([`RequestKind::ALL`]) most
    /// often, sometimes an answer, progress, a registration, or nothing.
    fn body(&mut self, provider: &str) -> Option<MessageType> {
        let kinds = RequestKind::ALL.len();
        let pick = self.rng().usize(0..kinds + 4);
        if let Some(kind) = RequestKind::ALL.get(pick) {
            return Some(self.request(*kind, provider).into_message());
        }
        Some(match pick - kinds {
            0 => MessageType::StateResponse(pb::ProvisioningStateResponse::default()),
            1 => MessageType::ProgressMessage(pb::ProvisioningProgressMessage {
                request_id: self.text(8),
                message: self.text(20),
                timestamp: self.rng().i64(..),
            }),
            2 => MessageType::RegisterProvisioningProviderResponse(
                pb::RegisterProvisioningProviderResponse {},
            ),
            _ => return None,
        })
    }

    /// A request of `kind` for `provider`, its other fields random.
    pub fn request(&mut self, kind: RequestKind, provider: &str) -> Request {
        let provider_name = provider.to_owned();
        match kind {
            RequestKind::Initialize => {
                Request::Initialize(Box::new(pb::ProvisioningInitializeRequest {
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
                }))
            }
            RequestKind::State => Request::State(pb::ProvisioningStateRequest {
                options: Some(pb::ProvisioningStateOptions { hint: self.text(8) }),
                provider_name,
            }),
            RequestKind::Deploy => Request::Deploy(pb::ProvisioningDeployRequest { provider_name }),
            RequestKind::Preview => {
                Request::Preview(pb::ProvisioningPreviewRequest { provider_name })
            }
            RequestKind::Destroy => Request::Destroy(pb::ProvisioningDestroyRequest {
                options: Some(pb::ProvisioningDestroyOptions {
                    force: self.rng().bool(),
                    purge: self.rng().bool(),
                }),
                provider_name,
            }),
            RequestKind::EnsureEnv => {
                Request::EnsureEnv(pb::ProvisioningEnsureEnvRequest { provider_name })
            }
            RequestKind::Parameters => {
                Request::Parameters(pb::ProvisioningParametersRequest { provider_name })
            }
            RequestKind::PlannedOutputs => {
                Request::PlannedOutputs(pb::ProvisioningPlannedOutputsRequest { provider_name })
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_request_is_drawn_for_its_provider() {
        let mut e = Envelopes::new(fastrand::Rng::with_seed(7));
        for kind in RequestKind::ALL {
            let r = e.request(kind, "p");
            assert_eq!(r.kind(), kind);
            let named = match &r {
                Request::Initialize(i) => i.options.as_ref().map(|o| o.provider.as_str()),
                other => other.provider_name(),
            };
            assert_eq!(named, Some("p"), "{kind}");
        }
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000 {
            let envelope = e.envelope(&i.to_string(), "p");
            if let Some(kind) = RequestKind::of(&envelope) {
                seen.insert(kind.name());
            }
        }
        assert_eq!(seen.len(), RequestKind::ALL.len(), "{seen:?}");
    }
}
