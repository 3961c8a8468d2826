//! The HTTP capability: outbound HTTP for guests (`wasi:http/outgoing-handler`),
//! behind the manifest's `[policy.http]` (`allow`, `timeout_secs`,
//! `max_response_bytes`).
//!
//! wasmtime-wasi-http builds the request and sends it (TLS by rustls against
//! the Mozilla root store); [`HttpGate`] is the hook it calls first:
//! - a request to an origin the manifest does not list is refused before any
//!   name lookup or connection (`HTTP-request-denied`), and remembered, so the
//!   error azd shows names the grant to add ([`HttpGate::take_denied`]);
//! - each request's connect, first-byte and between-bytes timeouts are at most
//!   the policy's (itself at most a call), whatever the guest asked for, and
//!   the response's head (TLS handshake included) must come within it;
//! - a response body is read up to `max_response_bytes`, then fails with
//!   `HTTP-response-body-size` (a `Content-Length` above it fails at once);
//! - at most [`MAX_CONNECTIONS`] requests of an instance hold a connection at
//!   once; one more fails with `connection-limit-reached` (no file descriptors
//!   or sockets run out because a guest opened thousands);
//! - an origin granted by name reaches what the name resolves to, but never
//!   this host, its link or a cloud's metadata service ([`crate::sandbox::reach`]): the
//!   host resolves it and connects itself ([`send`]), and a name
//!   that resolves only there fails with `destination-ip-prohibited`.
//!
//! This is separate from `[policy] network` (raw TCP through `wasi:sockets`):
//! an HTTP grant opens no socket to the guest.

mod send;

use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_core::authority::HttpOrigin;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use super::capability::Capability;
use crate::instance::seal::Seal;
use crate::intercept::{Intercept, Sent};
use azd_wasm_host_manifest::Policy;
use send::send_live;

/// Denied origins remembered per call (the first few are enough to name).
const MAX_DENIED_KEPT: usize = 8;
/// Requests of one instance that may hold a connection at the same time.
pub(crate) const MAX_CONNECTIONS: usize = 32;

/// Requests to the granted origins.
pub(crate) struct Http;

impl Capability for Http {
    const KEYS: &'static [&'static str] =
        &["http.allow", "http.timeout_secs", "http.max_response_bytes"];
    const INTERFACES: &'static [&'static str] = &["wasi:http/"];

    fn reach(interface: &str, policy: &Policy) -> &'static str {
        let sends = matches!(interface, "wasi:http/outgoing-handler" | "wasi:http/types");
        if sends && policy.http.allow.is_empty() {
            "HTTP: none granted (no [policy.http] allow), every request is refused"
        } else {
            "HTTP requests (only the [policy.http] origins below)"
        }
    }
}

/// wasmtime-wasi-http, its hook the instance's [`HttpGate`] (the store's
/// `WasiHttpView` hands it over).
pub(super) fn link<T: wasmtime_wasi_http::WasiHttpView + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
}

/// The `[policy.http]` of one instance, as the hook wasmtime-wasi-http calls.
pub(crate) struct HttpGate {
    allow: Arc<[HttpOrigin]>,
    timeout: Duration,
    max_response_bytes: u64,
    /// Origins refused since the last [`HttpGate::take_denied`].
    denied: Vec<String>,
    /// One permit per request holding a connection.
    connections: Arc<tokio::sync::Semaphore>,
    provider: Arc<str>,
    /// Recorded traffic and faults, under `azd-wasm-host test` only.
    traffic: Option<Arc<dyn Intercept>>,
    /// Closed while the instance is made ahead of its Initialize.
    seal: Seal,
}

impl HttpGate {
    /// The gate of `policy` (already checked when the manifest was read).
    pub(crate) fn new(
        policy: &Policy,
        provider: Arc<str>,
        traffic: Option<Arc<dyn Intercept>>,
        seal: Seal,
    ) -> Self {
        let allow = policy
            .http
            .allow
            .iter()
            .filter_map(|o| HttpOrigin::parse(o).ok())
            .collect();
        Self {
            allow,
            timeout: policy.http_timeout(),
            max_response_bytes: policy.http.max_response_bytes,
            denied: Vec::new(),
            connections: Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS)),
            provider,
            traffic,
            seal,
        }
    }

    /// The origins refused since the last call of this, as `scheme://host:port`.
    pub(crate) fn take_denied(&mut self) -> Vec<String> {
        std::mem::take(&mut self.denied)
    }

    /// Whether the policy allows the origin of `uri`; `Err` is the origin as
    /// text, for the error.
    fn admit(&self, uri: &http::Uri) -> Result<(), String> {
        match HttpOrigin::of_uri(uri) {
            Some(wanted) if self.allow.contains(&wanted) => Ok(()),
            Some(wanted) => Err(wanted.to_string()),
            None => Err(uri.to_string()),
        }
    }

    /// The guest's timeouts, each capped at the policy's.
    fn options(&self, asked: Option<RequestOptions>) -> RequestOptions {
        let cap = |t: Option<Duration>| Some(t.map_or(self.timeout, |t| t.min(self.timeout)));
        let asked = asked.unwrap_or_default();
        RequestOptions {
            connect_timeout: cap(asked.connect_timeout),
            first_byte_timeout: cap(asked.first_byte_timeout),
            between_bytes_timeout: cap(asked.between_bytes_timeout),
        }
    }
}

impl WasiHttpHooks for HttpGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        drop(fut);
        if !self.seal.allows("an HTTP request") {
            return Box::new(async { Err(Error::HttpRequestDenied) });
        }
        if let Err(origin) = self.admit(request.uri()) {
            tracing::debug!(provider = %self.provider, %origin, "guest HTTP request refused: origin not granted");
            if self.denied.len() < MAX_DENIED_KEPT && !self.denied.contains(&origin) {
                self.denied.push(origin);
            }
            return Box::new(async { Err(Error::HttpRequestDenied) });
        }
        let Ok(permit) = Arc::clone(&self.connections).try_acquire_owned() else {
            tracing::debug!(provider = %self.provider, "guest HTTP request refused: {MAX_CONNECTIONS} connections already open");
            return Box::new(async { Err(Error::ConnectionLimitReached) });
        };
        let options = self.options(options);
        let limit = self.max_response_bytes;
        let deadline = self.timeout;
        tracing::debug!(provider = %self.provider, method = %request.method(), uri = %azd_wasm_host_core::text::sanitize(&request.uri().to_string()), "guest HTTP request");
        let traffic = self.traffic.clone();
        Box::new(async move {
            let (response, io) = match traffic {
                Some(traffic) => {
                    let live = Box::new(move |request| {
                        Box::pin(send_live(request, options, deadline, limit))
                            as crate::intercept::Sending
                    });
                    traffic.send(request, limit, live).await?
                }
                None => send_live(request, options, deadline, limit).await?,
            };
            // The permit lives as long as the connection does.
            let io = async move {
                let done = Box::into_pin(io).await;
                drop(permit);
                done
            };
            Ok((response, Box::new(io) as Box<dyn Future<Output = _> + Send>))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;
    use std::pin::Pin;

    fn gate(allow: &[&str]) -> HttpGate {
        let mut policy = Policy::default();
        policy.http.allow = allow.iter().map(|s| (*s).to_owned()).collect();
        policy.http.timeout_secs = 5.0;
        HttpGate::new(&policy, Arc::from("p"), None, Seal::none())
    }

    #[test]
    fn only_granted_origins_are_admitted_by_scheme_host_and_port() {
        let g = gate(&["https://Storage.Example.com", "http://127.0.0.1:10000"]);
        let admit = |u: &str| g.admit(&u.parse().unwrap());
        admit("https://storage.example.com/c?restype=container").unwrap();
        admit("https://storage.example.com:443/").unwrap();
        admit("http://127.0.0.1:10000/devstoreaccount1").unwrap();
        for (uri, shown) in [
            (
                "http://storage.example.com/",
                "http://storage.example.com:80",
            ),
            (
                "https://storage.example.com:8443/",
                "https://storage.example.com:8443",
            ),
            ("https://evil.example.com/", "https://evil.example.com:443"),
            ("http://127.0.0.1:10001/", "http://127.0.0.1:10001"),
            (
                "https://storage.example.com.evil.com/",
                "https://storage.example.com.evil.com:443",
            ),
        ] {
            assert_eq!(admit(uri).unwrap_err(), shown, "{uri}");
        }
    }

    #[test]
    fn the_guests_timeouts_never_pass_the_policys() {
        let g = gate(&[]);
        let o = g.options(Some(RequestOptions {
            connect_timeout: Some(Duration::from_secs(1)),
            first_byte_timeout: Some(Duration::from_secs(600)),
            between_bytes_timeout: None,
        }));
        assert_eq!(o.connect_timeout, Some(Duration::from_secs(1)));
        assert_eq!(o.first_byte_timeout, Some(Duration::from_secs(5)));
        assert_eq!(o.between_bytes_timeout, Some(Duration::from_secs(5)));
    }

    #[tokio::test]
    async fn a_denied_request_fails_and_is_remembered_once() {
        let mut g = gate(&["https://ok.example.com"]);
        for _ in 0..2 {
            let req = http::Request::builder()
                .uri("https://other.example.com/x")
                .body(
                    http_body_util::Empty::new()
                        .map_err(|_| unreachable!())
                        .boxed_unsync(),
                )
                .unwrap();
            let sent = Pin::from(g.send_request(req, None, Box::new(async { Ok(()) }))).await;
            assert!(matches!(sent, Err(Error::HttpRequestDenied)));
        }
        assert_eq!(g.take_denied(), ["https://other.example.com:443"]);
        assert!(g.take_denied().is_empty());
    }

    #[tokio::test]
    async fn requests_past_the_connection_bound_are_refused_until_one_ends() {
        // A server that accepts and never answers: every request holds its connection.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((sock, _)) = listener.accept().await {
                held.push(sock);
            }
        });
        let mut g = gate(&[&format!("http://127.0.0.1:{port}")]);
        let request = || {
            http::Request::builder()
                .uri(format!("http://127.0.0.1:{port}/"))
                .body(
                    http_body_util::Empty::new()
                        .map_err(|_| unreachable!())
                        .boxed_unsync(),
                )
                .unwrap()
        };
        let mut pending = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            let sent = Pin::from(g.send_request(request(), None, Box::new(async { Ok(()) })));
            pending.push(tokio::spawn(sent));
        }
        let one_more = Pin::from(g.send_request(request(), None, Box::new(async { Ok(()) }))).await;
        assert!(
            matches!(one_more, Err(Error::ConnectionLimitReached)),
            "the request past the bound was not refused"
        );
        // When the held requests end (here: are dropped), their permits come back.
        for p in &pending {
            p.abort();
        }
        for p in pending {
            let _ = p.await;
        }
        assert_eq!(g.connections.available_permits(), MAX_CONNECTIONS);
    }

    /// A server on loopback that answers every request `200 ok`; counts its connections.
    async fn answering_server() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&count);
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = sock.read(&mut buf).await;
                    let _ = sock
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                        .await;
                });
            }
        });
        (port, count)
    }

    fn get(uri: String) -> http::Request<WasiBody> {
        http::Request::builder()
            .uri(uri)
            .body(
                http_body_util::Empty::new()
                    .map_err(|_| unreachable!())
                    .boxed_unsync(),
            )
            .unwrap()
    }

    /// An origin granted by name reaches what the name resolves to, but never this machine:
    /// `https://127.1:PORT` (a name: the system resolver reads it as 127.0.0.1) is refused
    /// (`destination-ip-prohibited`) before it connects, while `http://127.0.0.1:PORT`, granted
    /// literally, is answered, and so is `http://localhost:PORT` (loopback by definition).
    #[tokio::test]
    async fn an_origin_granted_by_name_never_reaches_loopback() {
        use std::sync::atomic::Ordering;
        let (port, connections) = answering_server().await;
        let mut g = gate(&[&format!("https://127.1:{port}")]);
        let sent = Pin::from(g.send_request(
            get(format!("https://127.1:{port}/")),
            None,
            Box::new(async { Ok(()) }),
        ))
        .await;
        assert!(
            matches!(sent, Err(Error::DestinationIpProhibited)),
            "a name reached loopback: {:?}",
            sent.map(|(r, _)| r.status())
        );
        assert_eq!(connections.load(Ordering::SeqCst), 0, "it connected");

        let mut g = gate(&[&format!("http://localhost:{port}")]);
        let (response, io) = Pin::from(g.send_request(
            get(format!("http://localhost:{port}/")),
            None,
            Box::new(async { Ok(()) }),
        ))
        .await
        .unwrap();
        assert_eq!(response.status(), 200, "localhost names loopback");
        tokio::spawn(Pin::from(io));

        let mut g = gate(&[&format!("http://127.0.0.1:{port}")]);
        let (response, io) = Pin::from(g.send_request(
            get(format!("http://127.0.0.1:{port}/")),
            None,
            Box::new(async { Ok(()) }),
        ))
        .await
        .unwrap();
        assert_eq!(response.status(), 200);
        // The connection's I/O runs beside the body's reads.
        tokio::spawn(Pin::from(io));
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"ok");
    }
}
