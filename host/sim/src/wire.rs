//! What the simulated azd writes on the provisioning stream: the messages azd
//! sends, encoded by prost as azd's protobuf library would, or raw bytes that
//! no protobuf library would write (tests of what the extension does with
//! them). What the extension sends is decoded by prost.

use azd_wasm_host_proto::azdext as pb;
use bytes::{BufMut as _, Bytes};
use prost::Message as _;
use tonic::Status;
use tonic::codec::{Codec, EncodeBuf, Encoder};

/// One message towards the extension.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "nearly every message is a Message; boxing it would allocate for each"
)]
pub(crate) enum ToExtension {
    /// A message as azd sends it.
    Message(pb::ProvisioningMessage),
    /// Bytes sent as they are, as one gRPC message.
    Raw(Bytes),
}

/// The stream's codec as the simulated azd uses it: what it sends may be raw
/// bytes (a hostile or malformed message) as well as a message; what it reads
/// is decoded by prost.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BytesOutCodec;

impl Codec for BytesOutCodec {
    type Encode = ToExtension;
    type Decode = pb::ProvisioningMessage;
    type Encoder = WireEncoder;
    type Decoder = tonic_prost::ProstDecoder<pb::ProvisioningMessage>;

    fn encoder(&mut self) -> Self::Encoder {
        WireEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::default()
    }
}

/// Writes a [`ToExtension`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WireEncoder;

impl Encoder for WireEncoder {
    type Item = ToExtension;
    type Error = Status;

    fn encode(&mut self, item: ToExtension, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            ToExtension::Message(msg) => msg
                .encode(buf)
                .map_err(|e| Status::internal(format!("encoding a message: {e}"))),
            ToExtension::Raw(bytes) => {
                buf.put_slice(&bytes);
                Ok(())
            }
        }
    }
}
