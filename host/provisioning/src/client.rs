//! The connection to azd.
//!
//! azd passes its gRPC address in `AZD_SERVER` and a JWT in `AZD_ACCESS_TOKEN`.
//! [`AzdClient`] opens one HTTP/2 connection, attaches `authorization: <token>`
//! (the raw JWT, as azd expects) to every call and to the stream, and hands out
//! the service clients over that connection, under the contract azd serves
//! (`contract`: `azd.extensions.v1`, else `azdext`; decided by the first call).
//!
//! Plaintext is allowed only to a loopback address: the token is a bearer secret
//! and must not cross a network in the clear. This build has no TLS, so any other
//! address is refused with a clear error.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use azd_wasm_host_core::authority::{is_loopback_host, parse_host_port};
use azd_wasm_host_proto::azdext::environment_service_client::EnvironmentServiceClient;
use azd_wasm_host_proto::azdext::extension_service_client::ExtensionServiceClient;
use azd_wasm_host_proto::azdext::prompt_service_client::PromptServiceClient;
use azd_wasm_host_proto::{Contract, MAX_MESSAGE_BYTES, azdext as pb};
use tonic::codec::CompressionEncoding;
use tonic::metadata::AsciiMetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::contract::{Negotiated, OnContract, Replayable, not_served};

/// Environment variable holding azd's gRPC address.
pub(crate) const ENV_SERVER: &str = "AZD_SERVER";
/// Environment variable holding the access token.
pub(crate) const ENV_TOKEN: &str = "AZD_ACCESS_TOKEN";

/// Why the client could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A required environment variable is missing or empty.
    #[error(
        "{0} is not set: azd sets AZD_SERVER and AZD_ACCESS_TOKEN when it starts an extension with `listen` (to try a provider without azd, use `azd-wasm-host run`)"
    )]
    MissingEnv(&'static str),
    /// The address cannot be parsed.
    #[error("AZD_SERVER {0:?} is not a host:port address")]
    BadAddress(String),
    /// The address is not loopback and this build cannot use TLS.
    #[error(
        "AZD_SERVER {0:?} is not a loopback address: the access token may only be sent in plaintext to loopback, and TLS is not supported by this build"
    )]
    NotLoopback(String),
    /// The token cannot be sent as gRPC metadata.
    #[error("AZD_ACCESS_TOKEN contains characters that cannot be sent as gRPC metadata")]
    BadToken,
    /// The connection failed.
    #[error("cannot connect to azd at {address}")]
    Connect {
        /// Where we tried.
        address: String,
        /// Why it failed.
        #[source]
        source: tonic::transport::Error,
    },
}

/// The access token. Its `Debug` never shows the value.
#[derive(Clone)]
pub(crate) struct Token(AsciiMetadataValue);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token([redacted])")
    }
}

impl Token {
    /// Wraps a raw JWT.
    pub(crate) fn new(raw: &str) -> Result<Self, ClientError> {
        let mut v = AsciiMetadataValue::try_from(raw).map_err(|_| ClientError::BadToken)?;
        v.set_sensitive(true);
        Ok(Self(v))
    }
}

/// Adds `authorization: <token>` to every request.
#[derive(Clone, Debug)]
pub(crate) struct AuthInterceptor {
    token: Token,
}

impl Interceptor for AuthInterceptor {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        req.metadata_mut()
            .insert("authorization", self.token.0.clone());
        Ok(req)
    }
}

/// The authenticated channel type both service clients use.
pub(crate) type AuthChannel = InterceptedService<Channel, AuthInterceptor>;

/// The authenticated channel, its calls under one of azd's contracts.
pub(crate) type ContractChannel = OnContract<AuthChannel>;

/// One connection to azd with lazily created service clients.
#[derive(Clone)]
pub struct AzdClient {
    inner: Arc<Inner>,
    /// What watches the provisioning stream (`listen --record`'s recorder).
    tap: Option<Arc<dyn StreamTap>>,
}

/// Watches the provisioning stream both ways, as the bytes azd sent and the
/// messages the extension sends (`listen --record` writes a golden
/// conversation with one; the `azd-wasm-host-recorder` crate's).
pub trait StreamTap: Send + Sync {
    /// One message azd sent, exactly as received (before it is read).
    fn azd_sent(&self, bytes: &[u8]);
    /// One message the extension sends.
    fn host_sent(&self, msg: &pb::ProvisioningMessage);
}

struct Inner {
    address: String,
    channel: Channel,
    auth: AuthInterceptor,
    /// The contract azd answered under, once a call has found it.
    contract: Negotiated,
}

impl fmt::Debug for AzdClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzdClient")
            .field("address", &self.inner.address)
            .finish_non_exhaustive()
    }
}

/// Checks that `address` (`host:port`, optionally with an `http://` prefix) is
/// loopback, and returns the URI to dial.
fn loopback_uri(address: &str) -> Result<String, ClientError> {
    let hostport = address
        .strip_prefix("http://")
        .unwrap_or(address)
        .trim_end_matches('/');
    let (host, port) =
        parse_host_port(hostport).map_err(|_| ClientError::BadAddress(address.to_owned()))?;
    if !is_loopback_host(&host) {
        return Err(ClientError::NotLoopback(address.to_owned()));
    }
    Ok(if host.contains(':') {
        format!("http://[{host}]:{port}")
    } else {
        format!("http://{host}:{port}")
    })
}

impl AzdClient {
    /// Connects using `AZD_SERVER` and `AZD_ACCESS_TOKEN`.
    pub async fn from_env() -> Result<Self, ClientError> {
        let address = non_empty_env(ENV_SERVER)?;
        let token = non_empty_env(ENV_TOKEN)?;
        Self::connect(&address, &token).await
    }

    /// Connects to `address` with `token`.
    pub async fn connect(address: &str, token: &str) -> Result<Self, ClientError> {
        let uri = loopback_uri(address)?;
        let token = Token::new(token)?;
        let endpoint = Endpoint::from_shared(uri)
            .map_err(|_| ClientError::BadAddress(address.to_owned()))?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_while_idle(true);
        let channel = endpoint
            .connect()
            .await
            .map_err(|source| ClientError::Connect {
                address: address.to_owned(),
                source,
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                address: address.to_owned(),
                channel,
                auth: AuthInterceptor { token },
                contract: Negotiated::default(),
            }),
            tap: None,
        })
    }

    /// This client, with `tap` watching the provisioning stream (`listen --record`).
    #[must_use]
    pub fn with_tap(mut self, tap: Arc<dyn StreamTap>) -> Self {
        self.tap = Some(tap);
        self
    }

    /// What watches the provisioning stream, if anything.
    pub(crate) fn tap(&self) -> Option<Arc<dyn StreamTap>> {
        self.tap.clone()
    }

    /// The contract azd answered under, once a call has found it: `azd.extensions.v1`
    /// (the versioned contract, expected in an azd release after 1.34) or `azdext` (every
    /// azd released so far).
    pub fn contract(&self) -> Option<Contract> {
        self.inner.contract.get()
    }

    /// The authenticated connection, its calls under `contract`.
    fn on(&self, contract: Contract) -> ContractChannel {
        OnContract::new(
            InterceptedService::new(self.inner.channel.clone(), self.inner.auth.clone()),
            contract,
        )
    }

    /// Makes a unary call of `request` (`call` is given the connection to make it on)
    /// under the contract azd serves: the one found, else `azd.extensions.v1` first
    /// and, when azd does not know it, `azdext` (which every later call then takes).
    /// The request is copied only for that first attempt.
    pub(crate) async fn unary<R, T, F, Fut>(&self, request: R, call: F) -> Result<T, tonic::Status>
    where
        R: Clone,
        F: Fn(ContractChannel, R) -> Fut,
        Fut: Future<Output = Result<T, tonic::Status>>,
    {
        if let Some(contract) = self.contract() {
            return call(self.on(contract), request).await;
        }
        let started = Instant::now();
        match call(self.on(Contract::V1), request.clone()).await {
            Err(status) if not_served(&status) => {
                let contract = self.inner.contract.decide(Contract::Legacy, started);
                call(self.on(contract), request).await
            }
            answered => {
                if answered.is_ok() {
                    self.inner.contract.decide(Contract::V1, started);
                }
                answered
            }
        }
    }

    /// Tells azd the extension is ready (`ExtensionService/Ready`).
    pub async fn ready(&self) -> Result<(), tonic::Status> {
        self.unary(pb::ReadyRequest {}, |ch, r| async move {
            extension(ch).ready(r).await
        })
        .await
        .map(drop)
    }

    /// Reports an error that stops the extension (`ExtensionService/ReportError`).
    pub async fn report_error(&self, error: pb::ExtensionError) -> Result<(), tonic::Status> {
        let request = pb::ReportErrorRequest { error: Some(error) };
        self.unary(request, |ch, r| async move {
            extension(ch).report_error(r).await
        })
        .await
        .map(drop)
    }

    /// Opens `ProvisioningService/Stream`: `outbound` is what we send; what azd
    /// sends arrives as raw bytes, for [`crate::inbound`] to read safely. The first
    /// call of the process tries `azd.extensions.v1` and, refused as unknown, opens it
    /// again under `azdext` with the same messages (see [`crate::contract`]).
    pub(crate) async fn provisioning_stream(
        &self,
        outbound: impl futures::Stream<Item = pb::ProvisioningMessage> + Send + 'static,
    ) -> Result<tonic::Streaming<bytes::Bytes>, tonic::Status> {
        use futures::StreamExt as _;
        let outbound = match self.tap() {
            Some(tap) => outbound.inspect(move |msg| tap.host_sent(msg)).boxed(),
            None => outbound.boxed(),
        };
        if let Some(contract) = self.contract() {
            return self.open_stream(contract, outbound).await;
        }
        let started = Instant::now();
        let replay = Replayable::new(outbound);
        match self.open_stream(Contract::V1, replay.first()).await {
            Ok(inbound) => {
                replay.opened();
                self.inner.contract.decide(Contract::V1, started);
                Ok(inbound)
            }
            Err(status) if not_served(&status) => {
                let contract = self.inner.contract.decide(Contract::Legacy, started);
                self.open_stream(contract, replay.second()).await
            }
            Err(status) => Err(status),
        }
    }

    /// Opens the provisioning stream under `contract`.
    async fn open_stream(
        &self,
        contract: Contract,
        outbound: impl futures::Stream<Item = pb::ProvisioningMessage> + Send + 'static,
    ) -> Result<tonic::Streaming<bytes::Bytes>, tonic::Status> {
        // Read more than azd's limit, so that a message past it (azd's own
        // never is) is answered by name instead of ending the stream.
        let mut grpc = tonic::client::Grpc::new(self.on(contract))
            .max_decoding_message_size(crate::inbound::MAX_INTAKE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES)
            .accept_compressed(CompressionEncoding::Gzip);
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unavailable(format!("azd is not reachable: {e}")))?;
        // Written under `azdext`, as the generated clients write theirs: the
        // connection moves it to `contract`.
        let path = http::uri::PathAndQuery::from_static("/azdext.ProvisioningService/Stream");
        let response = grpc
            .streaming(tonic::Request::new(outbound), path, BytesInCodec)
            .await?;
        Ok(response.into_inner())
    }
}

/// The extension service's client on `ch`.
fn extension(ch: ContractChannel) -> ExtensionServiceClient<ContractChannel> {
    ExtensionServiceClient::new(ch)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
        .accept_compressed(CompressionEncoding::Gzip)
}

/// The environment service's client on `ch`.
pub(crate) fn environment(ch: ContractChannel) -> EnvironmentServiceClient<ContractChannel> {
    EnvironmentServiceClient::new(ch)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
        .accept_compressed(CompressionEncoding::Gzip)
}

/// The prompt service's client on `ch`.
pub(crate) fn prompt(ch: ContractChannel) -> PromptServiceClient<ContractChannel> {
    PromptServiceClient::new(ch)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
        .accept_compressed(CompressionEncoding::Gzip)
}

/// The provisioning stream's codec: what we send is encoded by prost; what
/// azd sends is handed over as bytes.
#[derive(Debug, Clone, Copy, Default)]
struct BytesInCodec;

impl tonic::codec::Codec for BytesInCodec {
    type Encode = pb::ProvisioningMessage;
    type Decode = bytes::Bytes;
    type Encoder = tonic_prost::ProstEncoder<Self::Encode>;
    type Decoder = RawDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawDecoder
    }
}

/// Hands a received message over as its bytes.
#[derive(Debug, Clone, Copy, Default)]
struct RawDecoder;

impl tonic::codec::Decoder for RawDecoder {
    type Item = bytes::Bytes;
    type Error = tonic::Status;

    fn decode(
        &mut self,
        buf: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Self::Item>, Self::Error> {
        use bytes::Buf as _;
        Ok(Some(buf.copy_to_bytes(buf.remaining())))
    }
}

/// Checks that `AZD_SERVER` and `AZD_ACCESS_TOKEN` are set, without connecting.
pub fn require_env() -> Result<(), ClientError> {
    non_empty_env(ENV_SERVER)?;
    non_empty_env(ENV_TOKEN)?;
    Ok(())
}

fn non_empty_env(name: &'static str) -> Result<String, ClientError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_owned()),
        _ => Err(ClientError::MissingEnv(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_accepted() {
        assert_eq!(
            loopback_uri("127.0.0.1:5000").unwrap(),
            "http://127.0.0.1:5000"
        );
        assert_eq!(loopback_uri("localhost:1").unwrap(), "http://localhost:1");
        assert_eq!(loopback_uri("[::1]:80").unwrap(), "http://[::1]:80");
        assert_eq!(
            loopback_uri("http://127.1.2.3:9").unwrap(),
            "http://127.1.2.3:9"
        );
    }

    #[test]
    fn other_addresses_are_refused() {
        assert!(matches!(
            loopback_uri("10.0.0.5:5000"),
            Err(ClientError::NotLoopback(_))
        ));
        assert!(matches!(
            loopback_uri("example.com:443"),
            Err(ClientError::NotLoopback(_))
        ));
        assert!(matches!(
            loopback_uri("127.0.0.1"),
            Err(ClientError::BadAddress(_))
        ));
        assert!(matches!(
            loopback_uri("127.0.0.1:notaport"),
            Err(ClientError::BadAddress(_))
        ));
        assert!(matches!(
            loopback_uri("https://127.0.0.1:5/x"),
            Err(ClientError::BadAddress(_))
        ));
        assert!(matches!(
            loopback_uri("user@127.0.0.1:5"),
            Err(ClientError::BadAddress(_))
        ));
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = Token::new("secret.jwt.value").unwrap();
        assert!(!format!("{t:?}").contains("secret"));
        assert!(matches!(
            Token::new("bad\nvalue"),
            Err(ClientError::BadToken)
        ));
    }
}
