//! How a granted guest request is sent: as wasmtime-wasi-http's
//! `default_send_request` sends it (TLS by rustls against the Mozilla root
//! store, HTTP/1.1 by hyper, its connect, first-byte and between-bytes
//! timeouts), but over a connection the host opens itself, so that the
//! address rule of grants by name holds ([`crate::sandbox::reach`]): an origin that
//! names a host is resolved here, its addresses a grant by name may not reach
//! are dropped (a name that resolves only to such is refused with
//! `destination-ip-prohibited`, and the log says why and what to grant), and
//! the connection goes to what this one lookup returned (no second lookup a
//! rebinding name could answer otherwise). An origin that names an address
//! literally reaches it, whatever its kind; so does `localhost`, which names
//! loopback by definition and is never looked up.

use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::uri::Scheme;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use crate::intercept::Sent;
use crate::sandbox::reach::{names_loopback, refused_by_name};

/// What a phase waits when the guest gave no bound (the policy always
/// gives one; wasmtime-wasi-http's own default).
const UNBOUNDED: Duration = Duration::from_secs(600);

/// Sends `request` to its service: one deadline for the response's head, TLS
/// handshake included (which the per-phase timeouts leave unbounded), and
/// the body cut at `limit`.
pub(super) async fn send_live(
    request: http::Request<WasiBody>,
    options: RequestOptions,
    deadline: Duration,
    limit: u64,
) -> Sent {
    let (response, io) = tokio::time::timeout(deadline, send(request, options))
        .await
        .map_err(|_| Error::ConnectionTimeout)??;
    if let Some(len) = response.body().size_hint().exact()
        && len > limit
    {
        return Err(Error::HttpResponseBodySize(Some(len)));
    }
    let response = response.map(|body| Capped { body, left: limit }.boxed_unsync());
    Ok((response, Box::new(io) as Box<dyn Future<Output = _> + Send>))
}

/// A stream hyper speaks HTTP over: TCP, or TLS over it.
trait Stream: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static> Stream for T {}

/// rustls with ring (the only provider the host carries) and the Mozilla roots.
static TLS: LazyLock<Option<Arc<rustls::ClientConfig>>> = LazyLock::new(|| {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.into(),
    };
    let config = rustls::ClientConfig::builder_with_provider(
        rustls::crypto::ring::default_provider().into(),
    )
    .with_safe_default_protocol_versions()
    .ok()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Some(Arc::new(config))
});

/// Sends `request` over a connection [`connect`] opened (TLS for `https`),
/// each phase within its timeout.
async fn send(
    mut request: http::Request<WasiBody>,
    options: RequestOptions,
) -> Result<
    (
        http::Response<Incoming>,
        impl Future<Output = Result<(), Error>> + Send + 'static,
    ),
    Error,
> {
    let connect_timeout = options.connect_timeout.unwrap_or(UNBOUNDED);
    let first_byte_timeout = options.first_byte_timeout.unwrap_or(UNBOUNDED);
    let between_bytes_timeout = options.between_bytes_timeout.unwrap_or(UNBOUNDED);
    let stream = tokio::time::timeout(connect_timeout, open(request.uri()))
        .await
        .map_err(|_| Error::ConnectionTimeout)??;
    let (mut sender, conn) = tokio::time::timeout(
        connect_timeout,
        hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(stream)),
    )
    .await
    .map_err(|_| Error::ConnectionTimeout)??;

    // Only the path goes on the wire (the scheme and authority are for a proxy).
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", http::uri::PathAndQuery::as_str)
        .to_owned();
    *request.uri_mut() = http::Uri::builder()
        .path_and_query(path)
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;

    head_while_driving(sender.send_request(request), conn, first_byte_timeout)
        .await
        .map(|(response, io)| {
            let response = response.map(|body| Incoming::new(body, between_bytes_timeout));
            (response, io)
        })
}

/// The response's head (`head`, within `first_byte`) while the connection's
/// I/O (`conn`) runs; then what is left of the connection, to be driven as
/// the body is read.
async fn head_while_driving<H, C>(
    head: H,
    conn: C,
    first_byte: Duration,
) -> Result<
    (
        http::Response<hyper::body::Incoming>,
        impl Future<Output = Result<(), Error>> + Send + 'static,
    ),
    Error,
>
where
    H: Future<Output = hyper::Result<http::Response<hyper::body::Incoming>>>,
    C: Future<Output = hyper::Result<()>> + Send + 'static,
{
    let head = tokio::time::timeout(first_byte, head);
    let mut head = pin!(head);
    let mut conn = Box::pin(conn);
    let mut conn_ended = false;
    let response = loop {
        tokio::select! {
            biased;
            answered = &mut head => {
                break answered.map_err(|_| Error::ConnectionReadTimeout)??;
            }
            ended = &mut conn, if !conn_ended => {
                ended.map_err(Error::from)?;
                conn_ended = true;
            }
        }
    };
    let io = async move {
        if conn_ended {
            return Ok(());
        }
        conn.await.map_err(|e| {
            if e.is_timeout() {
                Error::HttpResponseTimeout
            } else {
                Error::from(e)
            }
        })
    };
    Ok((response, io))
}

/// The stream to the service `uri` names: TCP to it ([`connect`]), then TLS
/// for `https` (the server's name checked against the Mozilla roots).
async fn open(uri: &http::Uri) -> Result<Box<dyn Stream>, Error> {
    let authority = uri.authority().ok_or(Error::HttpRequestUriInvalid)?;
    let tls = uri.scheme() == Some(&Scheme::HTTPS);
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let host = authority.host();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .to_owned();
    let tcp = connect(&host, port).await?;
    if !tls {
        return Ok(Box::new(tcp));
    }
    let config = TLS.clone().ok_or(Error::TlsProtocolError)?;
    let name = match host.parse::<IpAddr>() {
        Ok(ip) => ServerName::from(ip),
        Err(_) => ServerName::try_from(host)?,
    };
    let connector = tokio_rustls::TlsConnector::from(config);
    Ok(Box::new(
        connector.connect(name, tcp).await.map_err(Error::Tls)?,
    ))
}

/// A TCP connection to `host:port`. An address is connected to as it is:
/// the grant named it. A name is resolved once, here; what a grant by name
/// may not reach is dropped, and the rest tried in the order the resolver
/// gave, until one connects.
async fn connect(host: &str, port: u16) -> Result<TcpStream, Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return TcpStream::connect((ip, port)).await.map_err(Error::Connect);
    }
    if names_loopback(host) {
        // `localhost` is loopback by definition, never a DNS answer.
        let loopback = [
            SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)),
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
        ];
        return TcpStream::connect(&loopback[..])
            .await
            .map_err(Error::Connect);
    }
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(Error::Connect)?
        .collect();
    let (reachable, refused): (Vec<SocketAddr>, Vec<SocketAddr>) = resolved
        .into_iter()
        .partition(|addr| refused_by_name(addr.ip()).is_none());
    if reachable.is_empty() {
        return Err(unreachable(host, port, refused.first()));
    }
    if !refused.is_empty() {
        tracing::debug!(%host, ?refused, "addresses a grant by name may not reach were skipped");
    }
    let mut last = None;
    for addr in reachable {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::Connect(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "no address to connect to")
    })))
}

/// The error for a name none of whose addresses a grant by name may reach (`refused`, the first
/// of them, is logged with what to grant instead), or that resolved to no address.
fn unreachable(host: &str, port: u16, refused: Option<&SocketAddr>) -> Error {
    let Some(addr) = refused else {
        return Error::DnsError {
            rcode: Some("no address".to_owned()),
            info_code: None,
        };
    };
    let why = refused_by_name(addr.ip())
        .map(|r| r.to_string())
        .unwrap_or_default();
    let origin = if addr.is_ipv6() {
        format!("[{}]:{port}", addr.ip())
    } else {
        addr.to_string()
    };
    tracing::warn!(
        "guest HTTP request to {host}:{port} refused: the name resolved to {}, {why}, \
         which an origin granted by name never reaches; grant the address itself \
         (\"http://{origin}\" or \"https://{origin}\" under [policy.http] allow) if \
         the provider should reach it",
        addr.ip()
    );
    Error::DestinationIpProhibited
}

/// A response's body: hyper's, failing when nothing comes for `idle`.
pub(super) struct Incoming {
    body: hyper::body::Incoming,
    idle: Duration,
    quiet_until: Pin<Box<tokio::time::Sleep>>,
}

impl Incoming {
    fn new(body: hyper::body::Incoming, idle: Duration) -> Self {
        Self {
            body,
            idle,
            quiet_until: Box::pin(tokio::time::sleep(idle)),
        }
    }
}

impl Body for Incoming {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = tokio::time::Instant::now() + this.idle;
                this.quiet_until.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) if e.is_timeout() => {
                Poll::Ready(Some(Err(Error::HttpResponseTimeout)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Error::from(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.quiet_until.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Error::ConnectionReadTimeout))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A response body that fails once more than its budget has been read.
struct Capped<B> {
    body: B,
    left: u64,
}

impl<B> Body for Capped<B>
where
    B: Body<Data = Bytes, Error = Error> + Unpin,
{
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        if let Some(data) = frame.data_ref() {
            let len = data.len() as u64;
            if len > self.left {
                self.left = 0;
                return Poll::Ready(Some(Err(Error::HttpResponseBodySize(None))));
            }
            self.left -= len;
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_past_its_budget_fails() {
        let chunks = http_body_util::StreamBody::new(futures::stream::iter(
            [Bytes::from_static(b"12345"), Bytes::from_static(b"67890")]
                .map(|b| Ok::<_, Error>(Frame::data(b))),
        ));
        let capped = Capped {
            body: chunks,
            left: 7,
        };
        let err = capped.collect().await.err().unwrap();
        assert!(matches!(err, Error::HttpResponseBodySize(_)), "{err:?}");
        let chunks = http_body_util::StreamBody::new(futures::stream::iter(
            [Bytes::from_static(b"12345")].map(|b| Ok::<_, Error>(Frame::data(b))),
        ));
        let read = Capped {
            body: chunks,
            left: 5,
        }
        .collect()
        .await
        .unwrap()
        .to_bytes();
        assert_eq!(&read[..], b"12345");
    }
}
