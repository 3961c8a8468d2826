//! Reading what azd sends on the provisioning stream.
//!
//! azd's protobuf library accepts messages nested 10,000 levels deep, so azd
//! can send an Initialize whose `infra.config` nests that deep (each level of
//! a config object is three protobuf levels: `Struct`, its map entry,
//! `Value`). Decoding such a message recursively could overflow a thread's
//! stack; prost's default guard (100 levels) would instead fail the whole
//! stream, and azd would never get an answer.
//!
//! So the stream hands over raw bytes, and each message is measured first,
//! without recursion ([`config_depth`]): a config up to [`MAX_CONFIG_DEPTH`]
//! levels deep is decoded (prost without its recursion limit; the runtime's
//! threads have stacks sized for it), a deeper one is answered with a clear
//! error naming its depth and the limit, read from the request id alone.

use azd_wasm_host_core::{ErrorCode, ProviderError};
use azd_wasm_host_proto::azdext as pb;
use bytes::Bytes;
use prost::Message as _;

/// The deepest `infra.config` read, in levels of nested objects and lists.
pub const MAX_CONFIG_DEPTH: usize = 1000;

/// Why a message azd sent is not served.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// The message is malformed: the stream cannot go on.
    Malformed(String),
    /// A request the host refuses to read; answer it with `error`.
    Refused {
        request_id: String,
        error: ProviderError,
    },
}

/// Decodes one message, refusing a config deeper than [`MAX_CONFIG_DEPTH`].
pub(crate) fn decode(bytes: &Bytes) -> Result<pb::ProvisioningMessage, Unreadable> {
    let depth = config_depth(bytes).map_err(|e| Unreadable::Malformed(e.to_owned()))?;
    if depth > MAX_CONFIG_DEPTH {
        let request_id = RequestIdOnly::decode(bytes.clone())
            .map_err(|e| Unreadable::Malformed(e.to_string()))?
            .request_id;
        return Err(Unreadable::Refused {
            request_id,
            error: ProviderError::host(
                ErrorCode::ConfigTooDeep,
                format!(
                    "the provider's `infra.config` is nested {depth} levels deep; \
                     azd-wasm-host reads at most {MAX_CONFIG_DEPTH}"
                ),
            )
            .with_suggestion("Flatten the `infra.config` section of azure.yaml."),
        });
    }
    pb::ProvisioningMessage::decode(bytes.clone()).map_err(|e| Unreadable::Malformed(e.to_string()))
}

/// Only the request id of an envelope (prost skips the other fields without
/// descending into them).
#[derive(Clone, PartialEq, prost::Message)]
struct RequestIdOnly {
    #[prost(string, tag = "1")]
    request_id: String,
}

/// What a length-delimited field holds, as far as nesting goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Envelope,
    InitializeRequest,
    Options,
    Struct,
    MapEntry,
    Value,
    List,
    /// Anything that cannot nest a config.
    Opaque,
}

impl Kind {
    /// The kind of field `tag` inside a message of this kind.
    fn child(self, tag: u64) -> Kind {
        match (self, tag) {
            (Kind::Envelope, 4) => Kind::InitializeRequest,
            (Kind::InitializeRequest, 2) => Kind::Options,
            (Kind::Options, 6) | (Kind::Value, 5) => Kind::Struct,
            (Kind::Struct, 1) => Kind::MapEntry,
            (Kind::MapEntry, 2) | (Kind::List, 1) => Kind::Value,
            (Kind::Value, 6) => Kind::List,
            _ => Kind::Opaque,
        }
    }
}

/// How deep the `infra.config` of an envelope nests (objects and lists), read
/// without recursion: an explicit stack of the messages entered.
pub(crate) fn config_depth(bytes: &[u8]) -> Result<usize, &'static str> {
    let mut stack: Vec<(Kind, usize, usize)> = Vec::new(); // (kind, end, config depth)
    let (mut kind, mut end, mut depth) = (Kind::Envelope, bytes.len(), 0usize);
    let mut deepest = 0;
    let mut pos = 0;
    loop {
        while pos == end {
            match stack.pop() {
                Some(outer) => (kind, end, depth) = outer,
                None => return Ok(deepest),
            }
        }
        let key = varint(bytes, &mut pos)?;
        let (tag, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(bytes, &mut pos)?;
            }
            1 => pos = skip(pos, 8, end)?,
            5 => pos = skip(pos, 4, end)?,
            2 => {
                let len =
                    usize::try_from(varint(bytes, &mut pos)?).map_err(|_| "length too large")?;
                let field_end = skip(pos, len, end)?;
                let child = kind.child(tag);
                if child == Kind::Opaque {
                    pos = field_end;
                    continue;
                }
                let child_depth = depth + usize::from(matches!(child, Kind::Struct | Kind::List));
                deepest = deepest.max(child_depth);
                stack.push((kind, end, depth));
                (kind, end, depth) = (child, field_end, child_depth);
            }
            _ => return Err("unsupported wire type"),
        }
    }
}

fn skip(pos: usize, len: usize, end: usize) -> Result<usize, &'static str> {
    pos.checked_add(len)
        .filter(|p| *p <= end)
        .ok_or("field runs past its message")
}

fn varint(bytes: &[u8], pos: &mut usize) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint too long")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::provisioning_message::MessageType;
    use prost_types::value::Kind as V;

    /// An Initialize whose config nests `depth` objects (or lists) deep.
    fn initialize(depth: usize, lists: bool) -> pb::ProvisioningMessage {
        let mut value = prost_types::Value {
            kind: Some(V::StringValue("leaf".into())),
        };
        for _ in 0..depth.saturating_sub(1) {
            value = prost_types::Value {
                kind: Some(if lists {
                    V::ListValue(prost_types::ListValue {
                        values: vec![value],
                    })
                } else {
                    V::StructValue(prost_types::Struct {
                        fields: [("k".to_owned(), value)].into(),
                    })
                }),
            };
        }
        pb::ProvisioningMessage {
            request_id: "deep".into(),
            error: None,
            message_type: Some(MessageType::InitializeRequest(
                pb::ProvisioningInitializeRequest {
                    project_path: "/p".into(),
                    options: Some(pb::ProvisioningOptions {
                        provider: "p".into(),
                        config: Some(prost_types::Struct {
                            fields: [("root".to_owned(), value)].into(),
                        }),
                        ..Default::default()
                    }),
                },
            )),
        }
    }

    fn encoded(msg: &pb::ProvisioningMessage) -> Bytes {
        Bytes::from(msg.encode_to_vec())
    }

    #[test]
    fn depth_is_counted_in_objects_and_lists() {
        assert_eq!(config_depth(&encoded(&initialize(1, false))).unwrap(), 1);
        assert_eq!(config_depth(&encoded(&initialize(64, false))).unwrap(), 64);
        // A list level is one level too (the outer config object is the first).
        assert_eq!(config_depth(&encoded(&initialize(48, true))).unwrap(), 48);
        let state = pb::ProvisioningMessage {
            request_id: "s".into(),
            error: None,
            message_type: Some(MessageType::StateRequest(Default::default())),
        };
        assert_eq!(config_depth(&encoded(&state)).unwrap(), 0);
    }

    #[test]
    fn deep_configs_up_to_the_limit_are_read_and_deeper_ones_refused_by_name() {
        let msg = initialize(64, false);
        assert_eq!(decode(&encoded(&msg)).unwrap(), msg);
        let deep = initialize(MAX_CONFIG_DEPTH + 1, false);
        match decode(&encoded(&deep)) {
            Err(Unreadable::Refused { request_id, error }) => {
                assert_eq!(request_id, "deep");
                assert_eq!(error.code(), Some("config_too_deep"));
                assert!(
                    error.message.contains(&(MAX_CONFIG_DEPTH + 1).to_string()),
                    "{error}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_bytes_are_an_error_not_a_panic() {
        for bad in [&[0x22u8, 0x05, 0x01][..], &[0xff; 12], &[0x0b]] {
            assert!(matches!(
                decode(&Bytes::copy_from_slice(bad)),
                Err(Unreadable::Malformed(_))
            ));
        }
    }
}
