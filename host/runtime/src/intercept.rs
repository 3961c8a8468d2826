//! The seam through which the development tools stand between a guest and the
//! outside world: `azd-wasm-host test` replays recorded HTTP traffic and
//! tokens, records them, or answers requests with faults
//! (`azd-wasm-host-recorder` implements [`Intercept`]). The runtime only
//! calls it; the shipped sidecar never has one, and does not link the code
//! that does.
//!
//! The manifest's policy is enforced before an interceptor sees a request: a
//! recording cannot reach an origin the policy does not grant.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use azd_wasm_host_core::TokenSource;
use wasmtime_wasi_http::WasiBody;

/// The connection's own future, as `wasi:http`'s hook returns it.
pub type Io = Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>;
/// A response and its connection, as `wasi:http`'s hook returns them.
pub type Sent = wasmtime_wasi_http::Result<(http::Response<WasiBody>, Io)>;
/// A request on its way: the future of its [`Sent`].
pub type Sending = Pin<Box<dyn Future<Output = Sent> + Send>>;
/// Sends a request to its service for real (under the policy's deadline and
/// response bound).
pub type Live = Box<dyn FnOnce(http::Request<WasiBody>) -> Sending + Send>;

/// What stands in for the outside world of one provider's guests.
pub trait Intercept: Send + Sync + fmt::Debug {
    /// `value` (a granted environment variable's, say) is secret: nothing
    /// the interceptor writes may hold it.
    fn keep_secret(&self, value: &str);

    /// Where the guest's tokens come from, given azd's (`None`: no azd).
    fn tokens(self: Arc<Self>, azd: Option<Arc<dyn TokenSource>>) -> Option<Arc<dyn TokenSource>>;

    /// Answers a request the policy admitted: by itself, or through `live`.
    /// `limit` bounds a response body read whole.
    fn send(self: Arc<Self>, request: http::Request<WasiBody>, limit: u64, live: Live) -> Sending;
}
