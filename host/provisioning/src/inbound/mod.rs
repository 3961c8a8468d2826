//! Reading what azd sends on the provisioning stream.
//!
//! Whatever azd sends, the stream lives and every request it can name gets
//! one answer. The stream hands over raw bytes, and each message is walked
//! first, without recursion ([`wire::shape`], which follows the schema
//! protoc described, [`wire::Schema`]):
//!
//! - azd's protobuf library accepts messages nested 10,000 levels deep, so an
//!   Initialize's `infra.config` can nest that deep (each level of an object
//!   is three protobuf levels: `Struct`, its map entry, `Value`), and an
//!   unknown field can hold groups nested as deep, which prost skips by
//!   recursion. Decoding either could overflow a thread's stack. A config up
//!   to [`MAX_CONFIG_DEPTH`] levels deep is decoded (prost without its
//!   recursion limit; the runtime's threads have stacks sized for it); a
//!   deeper one is refused by name (`config_too_deep`), and any other
//!   nesting past [`MAX_NESTING`] as an invalid message.
//! - Unknown fields of every wire type, groups included, are skipped, as
//!   prost and Go's protobuf skip them.
//! - A message that is not protobuf, or that prost refuses, is answered with
//!   `invalid_message` naming what was wrong, under the request id read from
//!   what survives of it ([`wire::head`]); only a message with no readable
//!   id goes unanswered (there is nobody to answer), and is logged.

use azd_wasm_host_core::{ErrorCode, ProviderError};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{MAX_MESSAGE_BYTES, RequestKind};
use bytes::Bytes;
use prost::Message as _;

pub use azd_wasm_host_proto::wire::MAX_CONFIG_DEPTH;
use azd_wasm_host_proto::wire::{self, MAX_NESTING, Malformed};

#[cfg(test)]
mod fuzz_tests;

/// The largest message read off the stream: four times azd's limit. A message
/// over azd's limit but within this is read and answered (`invalid_message`);
/// a larger one ends the stream (its bytes are never read, so no id is known).
pub(crate) const MAX_INTAKE_BYTES: usize = 4 * MAX_MESSAGE_BYTES;

/// Bytes of an unreadable message shown (in hex) in the debug log.
const HEX_PREFIX: usize = 64;

/// Why a message azd sent is not served.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// A request the host cannot or will not read: answer `request_id` with
    /// `error`.
    Refused {
        request_id: String,
        error: ProviderError,
    },
    /// Nothing in the message names a request to answer.
    Anonymous(String),
}

/// The walk of an envelope.
fn envelope_shape(bytes: &[u8]) -> Result<wire::Shape, Malformed> {
    wire::shape(bytes, wire::Schema::get().envelope)
}

/// Decodes one message; refuses one nested too deep or not readable.
pub(crate) fn decode(bytes: &Bytes) -> Result<pb::ProvisioningMessage, Unreadable> {
    let problem = if bytes.len() > MAX_MESSAGE_BYTES {
        format!("it is larger than azd's limit of {MAX_MESSAGE_BYTES} bytes per message")
    } else {
        match envelope_shape(bytes) {
            Ok(shape) if shape.config_depth > MAX_CONFIG_DEPTH => {
                return Err(refuse(bytes, too_deep(shape.config_depth)));
            }
            Ok(shape) if shape.nesting > MAX_NESTING => format!(
                "it nests messages or groups {} levels deep; azd-wasm-host reads at most \
                 {MAX_NESTING}",
                shape.nesting
            ),
            Ok(_) => match pb::ProvisioningMessage::decode(bytes.clone()) {
                Ok(msg) => return Ok(msg),
                Err(e) => e.to_string(),
            },
            Err(Malformed { what, at }) => {
                format!("it is not valid protobuf: {what} at byte {at}")
            }
        }
    };
    let head = wire::head(bytes);
    let kind = head.body_field.and_then(RequestKind::from_envelope_field);
    let what = match kind {
        Some(kind) => format!("the {kind} request azd sent"),
        None => "a message azd sent".to_owned(),
    };
    tracing::debug!(
        size = bytes.len(),
        prefix = %hex::encode(debug_prefix(bytes, &head)),
        %problem,
        "unreadable message"
    );
    let error = ProviderError::host(
        ErrorCode::InvalidMessage,
        format!(
            "azd-wasm-host cannot read {what} ({} bytes): {problem}",
            bytes.len()
        ),
    )
    .with_suggestion(
        "azd and azd-wasm-host disagree on the message format: update both, and if it \
         persists, report it with the log of `azd ... --debug` (it shows the message's first bytes).",
    );
    match head.request_id {
        Some(request_id) => Err(Unreadable::Refused { request_id, error }),
        None => Err(Unreadable::Anonymous(error.message)),
    }
}

/// The first bytes of an unreadable message, for the debug log: at most
/// [`HEX_PREFIX`], and of an Initialize, whose contents carry the
/// environment's values (`virtual_env`), only the bytes before its contents.
fn debug_prefix<'a>(bytes: &'a [u8], head: &wire::Head) -> &'a [u8] {
    let initialize = head.body_field == Some(RequestKind::Initialize.envelope_field());
    let shown = match (initialize, head.body_contents_at) {
        (true, at) => at.unwrap_or(0),
        (false, _) => HEX_PREFIX,
    };
    &bytes[..bytes.len().min(shown).min(HEX_PREFIX)]
}

/// The refusal of a config nested `depth` levels deep.
fn too_deep(depth: usize) -> ProviderError {
    ProviderError::host(
        ErrorCode::ConfigTooDeep,
        format!(
            "the provider's `infra.config` is nested {depth} levels deep; \
             azd-wasm-host reads at most {MAX_CONFIG_DEPTH}"
        ),
    )
    .with_suggestion("Flatten the `infra.config` section of azure.yaml.")
}

/// Refuses the message in `bytes` with `error`, under its request id.
fn refuse(bytes: &[u8], error: ProviderError) -> Unreadable {
    match wire::head(bytes).request_id {
        Some(request_id) => Unreadable::Refused { request_id, error },
        None => Unreadable::Anonymous(error.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use azd_wasm_host_fuzz::envelopes::group;
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

    fn depth(bytes: &[u8]) -> usize {
        envelope_shape(bytes).unwrap().config_depth
    }

    fn refused(bytes: &[u8]) -> (String, ProviderError) {
        match decode(&Bytes::copy_from_slice(bytes)) {
            Err(Unreadable::Refused { request_id, error }) => (request_id, error),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn depth_is_counted_in_objects_and_lists() {
        assert_eq!(depth(&encoded(&initialize(1, false))), 1);
        assert_eq!(depth(&encoded(&initialize(64, false))), 64);
        // A list level is one level too (the outer config object is the first).
        assert_eq!(depth(&encoded(&initialize(48, true))), 48);
        let state = pb::ProvisioningMessage {
            request_id: "s".into(),
            error: None,
            message_type: Some(MessageType::StateRequest(Default::default())),
        };
        assert_eq!(depth(&encoded(&state)), 0);
    }

    /// Runs `f` on a thread with a stack like the host's runtime threads:
    /// building, decoding and dropping a 1000-level config recurses.
    fn on_big_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn deep_configs_up_to_the_limit_are_read_and_deeper_ones_refused_by_name() {
        on_big_stack(|| {
            let msg = initialize(64, false);
            assert_eq!(decode(&encoded(&msg)).unwrap(), msg);
            let limit = initialize(MAX_CONFIG_DEPTH, false);
            assert_eq!(decode(&encoded(&limit)).unwrap(), limit);
            for (depth, shown) in [
                (MAX_CONFIG_DEPTH + 1, (MAX_CONFIG_DEPTH + 1).to_string()),
                (MAX_CONFIG_DEPTH + 100, (MAX_CONFIG_DEPTH + 100).to_string()),
            ] {
                let (request_id, error) = refused(&encoded(&initialize(depth, false)));
                assert_eq!(request_id, "deep");
                assert_eq!(error.code(), Some("config_too_deep"));
                assert!(
                    error.message.contains(&format!("nested {shown} levels")),
                    "{error}"
                );
            }
        });
    }

    #[test]
    fn unknown_groups_are_skipped_wherever_they_are() {
        let state = pb::ProvisioningMessage {
            request_id: "g".into(),
            error: None,
            message_type: Some(MessageType::StateRequest(pb::ProvisioningStateRequest {
                options: None,
                provider_name: "p".into(),
            })),
        };
        // A group with a varint, a fixed64, a string and a nested group inside.
        let inner = [
            &[0x08, 0x96, 0x01][..],
            &[0x11, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0x1a, 2, b'h', b'i'],
        ]
        .concat();
        let unknown = group(50, &[inner.clone(), group(51, &inner)].concat());
        // At the top level, before and after the body.
        let mut front = unknown.clone();
        front.extend(encoded(&state));
        let mut back = encoded(&state).to_vec();
        back.extend(&unknown);
        for bytes in [front, back] {
            assert_eq!(decode(&Bytes::from(bytes)).unwrap(), state);
        }
        // Inside the body: field 6 (state_request) holding the group too.
        let body = [&[0x12, 1, b'p'][..], &unknown].concat();
        let mut nested = vec![0x0a, 1, b'g', 0x32, u8::try_from(body.len()).unwrap()];
        nested.extend(&body);
        assert_eq!(decode(&Bytes::from(nested)).unwrap(), state);
    }

    #[test]
    fn groups_nested_past_the_limit_are_refused_not_recursed() {
        // 100,000 nested groups would overflow a recursive skip; the walk
        // stops at the limit and answers with the request id.
        let mut bytes = vec![0x0a, 2, b'i', b'd'];
        let levels = 100_000;
        for _ in 0..levels {
            bytes.extend([0xab, 0x02]); // field 37, start group
        }
        for _ in 0..levels {
            bytes.extend([0xac, 0x02]); // field 37, end group
        }
        let (request_id, error) = refused(&bytes);
        assert_eq!(request_id, "id");
        assert_eq!(error.code(), Some("invalid_message"));
        assert!(error.message.contains("levels deep"), "{error}");
    }

    #[test]
    fn garbage_after_a_request_id_is_refused_under_that_id_naming_the_kind() {
        // A state request whose body runs past the end of the message.
        let (request_id, error) = refused(&[0x0a, 3, b'r', b'-', b'1', 0x32, 0x7f, 0x01]);
        assert_eq!(request_id, "r-1");
        assert_eq!(error.code(), Some("invalid_message"));
        assert!(error.message.contains("the state request"), "{error}");
        assert!(error.message.contains("8 bytes"), "{error}");
        // Protobuf, but not what prost accepts: a string field that is not UTF-8.
        let bad_utf8 = [&[0x0a, 1, b'u', 0x32, 4, 0x12, 2][..], &[0xff, 0xfe]].concat();
        let (request_id, error) = refused(&bad_utf8);
        assert_eq!(request_id, "u");
        assert_eq!(error.code(), Some("invalid_message"));
        // An end-group key with no group, a field number 0, wire type 7.
        for tail in [&[0x0c][..], &[0x00, 0x00], &[0x0f]] {
            let (request_id, _) = refused(&[&[0x0a, 1, b'x'][..], tail].concat());
            assert_eq!(request_id, "x");
        }
    }

    #[test]
    fn a_message_past_azds_size_limit_is_refused_under_its_id() {
        let msg = pb::ProvisioningMessage {
            request_id: "big".into(),
            error: None,
            message_type: Some(MessageType::StateRequest(pb::ProvisioningStateRequest {
                options: Some(pb::ProvisioningStateOptions {
                    hint: "x".repeat(MAX_MESSAGE_BYTES),
                }),
                provider_name: "p".into(),
            })),
        };
        let (request_id, error) = refused(&encoded(&msg));
        assert_eq!(request_id, "big");
        assert_eq!(error.code(), Some("invalid_message"));
        assert!(error.message.contains("larger than azd's limit"), "{error}");
    }

    #[test]
    fn the_debug_log_shows_no_contents_of_an_initialize() {
        // id "i", then initialize_request (field 4) of 5 bytes, cut short.
        let bytes = [0x0a, 1, b'i', 0x22, 5, 0x0a, 3, b's', b'e', b'c'];
        let head = wire::head(&bytes);
        assert_eq!(debug_prefix(&bytes, &head), &bytes[..5]);
        // Any other kind: the first 64 bytes.
        let state = [&[0x0a, 1, b's', 0x32, 0x7f][..], &[b'x'; 100]].concat();
        assert_eq!(debug_prefix(&state, &wire::head(&state)).len(), HEX_PREFIX);
    }

    #[test]
    fn a_message_with_no_readable_id_is_anonymous() {
        for bad in [
            &[0x22u8, 0x05, 0x01][..],
            &[0xff; 12],
            &[0x0b],
            &[0x0a, 2, 0xff, 0xfe, 0x0f],
        ] {
            assert!(matches!(
                decode(&Bytes::copy_from_slice(bad)),
                Err(Unreadable::Anonymous(_))
            ));
        }
    }
}
