//! The codec of the generated clients: prost's, with the walk of
//! [`super::shape`] before every decode, so that a response nested past
//! [`MAX_NESTING`] is refused with a clear status instead of overflowing the
//! stack.

use std::marker::PhantomData;

use bytes::Buf as _;
use prost::{Message, Name};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder};

/// prost's codec with a nesting check before each decode (see the module).
#[derive(Debug, Clone, Copy)]
pub struct GuardedCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for GuardedCodec<T, U> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T, U> Codec for GuardedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Name + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = tonic_prost::ProstEncoder<T>;
    type Decoder = GuardedDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        GuardedDecoder(PhantomData)
    }
}

/// Decodes a `U` once the walk has measured it.
#[derive(Debug, Clone, Copy)]
pub struct GuardedDecoder<U>(PhantomData<U>);

impl<U: Message + Name + Default> Decoder for GuardedDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        let bytes = buf.copy_to_bytes(buf.remaining());
        read::<U>(&bytes).map(Some)
    }
}

/// Walks `bytes` as a `U`, then decodes it; the status names the message and
/// what was wrong.
pub(super) fn read<U: Message + Name + Default>(bytes: &[u8]) -> Result<U, Status> {
    super::walk::decode::<U>(bytes).map_err(|problem| {
        Status::internal(format!(
            "azd-wasm-host cannot read the {} azd sent ({} bytes): {problem}",
            U::full_name(),
            bytes.len()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::azdext::{KeyValue, KeyValueListResponse};
    use crate::wire::MAX_NESTING;

    /// Field 15 of a message as groups nested `depth` deep (field 15 is unknown
    /// to every response).
    fn deep_groups(depth: usize) -> Vec<u8> {
        let mut out = vec![(15 << 3) | 3; depth];
        out.extend(std::iter::repeat_n((15 << 3) | 4, depth));
        out
    }

    #[test]
    fn a_response_is_decoded_as_prost_decodes_it() {
        let sent = KeyValueListResponse {
            key_values: vec![KeyValue {
                key: "A".into(),
                value: "1".into(),
            }],
        };
        let mut bytes = sent.encode_to_vec();
        // Unknown groups are skipped, as prost skips them.
        bytes.extend(deep_groups(10));
        assert_eq!(read::<KeyValueListResponse>(&bytes).unwrap(), sent);
    }

    #[test]
    fn a_response_nested_past_the_limit_is_refused_by_name() {
        let mut bytes = KeyValueListResponse::default().encode_to_vec();
        bytes.extend(deep_groups(MAX_NESTING));
        read::<KeyValueListResponse>(&bytes).unwrap();
        // Deep enough to overflow a stack, were prost to skip them.
        let bytes = deep_groups(1_000_000);
        let e = read::<KeyValueListResponse>(&bytes).unwrap_err();
        assert_eq!(e.code(), tonic::Code::Internal);
        assert!(
            e.message().contains("azdext.KeyValueListResponse")
                && e.message().contains("nests 1000000 levels deep"),
            "{e}"
        );
    }

    #[test]
    fn a_response_that_is_not_protobuf_is_refused_with_the_reason() {
        let e = read::<KeyValueListResponse>(&[0x0a, 0x05, 0x01]).unwrap_err();
        assert!(e.message().contains("runs past the end"), "{e}");
        // An end group that opens nothing.
        let e = read::<KeyValueListResponse>(&[(15 << 3) | 4]).unwrap_err();
        assert!(e.message().contains("end-group"), "{e}");
    }
}
