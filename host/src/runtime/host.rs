//! What a guest's `Store` holds, and the host side of the guest's imports.
//!
//! [`HostState`] is the data of one instance's `Store`: the sandbox built from
//! the manifest policy (WASI context, granted directories, network rule), the
//! resource table, the instance's resource budget, and the call in progress
//! (request id and progress reporter). The `progress` and `log` imports of our
//! world are implemented here, as is the stream that turns guest
//! stdout/stderr into log lines.
//!
//! Deadlines and cancellation are not here: a call is a future, and the
//! runtime drops it (see `instance.rs`).

use std::sync::Arc;

use bytes::Bytes;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};
use wasmtime_wasi::sockets::WasiSocketsCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::azd::provisioning0_1_0::{log, progress, types};
use super::limits::InstanceLimits;
use super::sandbox::{GrantedDir, GrantedPreopens, GuestLookup, HttpGate, NetworkPolicy, Sandbox};
use super::services::ServiceAccess;
use crate::provider::{CallContext, Progress};
use crate::text;

/// Longest log line or output line taken from a guest; longer text is cut.
const MAX_LINE_BYTES: usize = 16 * 1024;

/// The call an instance is serving right now.
struct ActiveCall {
    request_id: Arc<str>,
    progress: Progress,
}

/// The data of one instance's `Store`.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    dirs: Vec<GrantedDir>,
    network: NetworkPolicy,
    http_ctx: wasmtime_wasi_http::WasiHttpCtx,
    /// The HTTP grants; what it refused names the grant in errors.
    pub(crate) http: HttpGate,
    pub(crate) limits: InstanceLimits,
    /// azd's services and what the manifest grants of them.
    services: ServiceAccess,
    /// The guest's last stderr lines.
    stderr_tail: OutputTail,
    /// Provider name, for log lines.
    provider: Arc<str>,
    /// Access tokens given to the guest, by scope (`azd:credentials`).
    pub(crate) tokens: super::credentials::TokenCache,
    call: Option<ActiveCall>,
}

impl HostState {
    pub(crate) fn new(
        provider: Arc<str>,
        sandbox: Sandbox,
        memory_bytes: usize,
        services: ServiceAccess,
    ) -> Self {
        Self {
            wasi: sandbox.wasi,
            table: ResourceTable::new(),
            dirs: sandbox.dirs,
            network: sandbox.network,
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            http: sandbox.http,
            limits: InstanceLimits::new(memory_bytes),
            stderr_tail: sandbox.stderr_tail,
            services,
            provider,
            tokens: super::credentials::TokenCache::default(),
            call: None,
        }
    }

    /// azd's services and the grants of them.
    pub(crate) fn services(&self) -> &ServiceAccess {
        &self.services
    }

    /// The provider's name.
    pub(crate) fn provider_name(&self) -> &str {
        &self.provider
    }

    /// The guest's last lines on stderr.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail.lines()
    }

    /// Binds the instance to a call: its progress goes to `ctx`.
    pub(crate) fn begin_call(&mut self, ctx: &CallContext) {
        self.call = Some(ActiveCall {
            request_id: Arc::from(ctx.request_id.as_str()),
            progress: ctx.progress.clone(),
        });
        self.limits.take_denied();
        self.http.take_denied();
    }

    /// Unbinds the call.
    pub(crate) fn end_call(&mut self) {
        self.call = None;
    }

    fn request_id(&self) -> &str {
        self.call.as_ref().map_or("", |c| &c.request_id)
    }

    /// The granted directories, for `wasi:filesystem/preopens`.
    pub(crate) fn preopens(&mut self) -> GrantedPreopens<'_> {
        GrantedPreopens {
            table: &mut self.table,
            dirs: &self.dirs,
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wasmtime_wasi_http::WasiHttpView for HostState {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

impl HostState {
    /// Name lookups, behind the network allowlist.
    pub(crate) fn lookup(&mut self) -> GuestLookup<'_> {
        GuestLookup {
            sockets: WasiSocketsCtxView {
                ctx: self.wasi.sockets(),
                table: &mut self.table,
            },
            policy: &mut self.network,
        }
    }
}
impl types::Host for HostState {}

impl progress::Host for HostState {
    async fn report(&mut self, message: String) {
        match &self.call {
            Some(call) => call.progress.clone().report(message).await,
            None => {
                tracing::debug!(provider = %self.provider, message = %clean_line(message), "progress outside a call (dropped)");
            }
        }
    }
}

impl log::Host for HostState {
    fn write(&mut self, level: log::Level, message: String) {
        let message = clean_line(message);
        let provider = &*self.provider;
        let request_id = self.request_id();
        match level {
            log::Level::Trace => {
                tracing::trace!(target: "guest", provider, request_id, "{message}");
            }
            log::Level::Debug => {
                tracing::debug!(target: "guest", provider, request_id, "{message}");
            }
            log::Level::Info => tracing::info!(target: "guest", provider, request_id, "{message}"),
            log::Level::Warn => tracing::warn!(target: "guest", provider, request_id, "{message}"),
            log::Level::Error => {
                tracing::error!(target: "guest", provider, request_id, "{message}");
            }
        }
    }
}

/// A guest's text as one log line: control characters removed, cut at
/// [`MAX_LINE_BYTES`].
fn clean_line(mut text: String) -> String {
    text::truncate(&mut text, MAX_LINE_BYTES);
    text::sanitize_in_place(&mut text);
    text
}

/// Guest stdout or stderr: complete lines go to the host's `tracing` log, never
/// to the terminal (the terminal belongs to azd's user).
#[derive(Clone)]
pub(crate) struct LogStream {
    provider: Arc<str>,
    name: &'static str,
    /// The newest lines, kept for the error of a trap (stderr only).
    tail: Option<OutputTail>,
}

impl LogStream {
    pub(crate) fn new(provider: Arc<str>, name: &'static str, tail: Option<OutputTail>) -> Self {
        Self {
            provider,
            name,
            tail,
        }
    }
}

/// How many of a guest's last stderr lines a trap's error carries.
const TAIL_LINES: usize = 12;
/// How long each of those lines may be.
const TAIL_LINE_BYTES: usize = 512;

/// The newest lines a guest wrote to a stream: a trap's error carries them
/// (a Python traceback, a JavaScript exception), so its words are not lost.
#[derive(Clone, Default)]
pub(crate) struct OutputTail(Arc<std::sync::Mutex<std::collections::VecDeque<String>>>);

impl OutputTail {
    fn push(&self, line: &str) {
        let mut line = line.to_owned();
        text::truncate(&mut line, TAIL_LINE_BYTES);
        let mut tail = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    /// The kept lines, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        let tail = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tail.iter().cloned().collect()
    }
}

impl IsTerminal for LogStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(LineWriter {
            stream: self.clone(),
            pending: Vec::new(),
        })
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(LineWriter {
            stream: self.clone(),
            pending: Vec::new(),
        })
    }
}

/// Splits written bytes into lines and logs each one.
struct LineWriter {
    stream: LogStream,
    pending: Vec<u8>,
}

impl LineWriter {
    fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(pos) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=pos).collect();
            self.emit(&line[..line.len() - 1]);
        }
        if self.pending.len() > MAX_LINE_BYTES {
            let line = std::mem::take(&mut self.pending);
            self.emit(&line);
        }
    }

    fn emit(&self, line: &[u8]) {
        let text = clean_line(String::from_utf8_lossy(line).into_owned());
        if let Some(tail) = &self.stream.tail
            && !text.trim().is_empty()
        {
            tail.push(&text);
        }
        tracing::debug!(target: "guest", provider = %self.stream.provider, stream = self.stream.name, "{text}");
    }

    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.emit(&line);
        }
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        self.flush_pending();
    }
}

impl OutputStream for LineWriter {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 * 1024)
    }
}

#[async_trait::async_trait]
impl Pollable for LineWriter {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for LineWriter {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.push(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.flush_pending();
        std::task::Poll::Ready(Ok(()))
    }
}
