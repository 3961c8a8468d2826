//! What a guest's `Store` holds, and the host side of the guest's imports.
//!
//! [`HostState`] is the data of one instance's `Store`: the WASI context built
//! from the manifest policy, the resource table, the memory limiter, and the
//! call in progress (request id, progress reporter, cancellation, deadline).
//! The `progress` and `log` imports of our world are implemented here, as is the
//! stream that turns guest stdout/stderr into `tracing` lines.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio_util::sync::CancellationToken;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder, UpdateDeadline};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::azd::provisioning::{log, progress, types};
use crate::provider::{CallContext, Progress, truncate_utf8};

/// Longest log line or output line taken from a guest; longer text is cut.
const MAX_LINE_BYTES: usize = 16 * 1024;

/// Why the host stopped a running guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// The call's deadline (`call_timeout_secs`) passed.
    Timeout,
    /// The request was cancelled (azd went away).
    Cancelled,
}

/// The call an instance is serving right now.
pub(crate) struct ActiveCall {
    request_id: Arc<str>,
    progress: Progress,
    cancel: CancellationToken,
    deadline: Option<Instant>,
}

/// The data of one instance's `Store`.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: Limits,
    /// Provider name, for log lines.
    provider: Arc<str>,
    call: Option<ActiveCall>,
    /// Set by the epoch callback when it interrupts the guest.
    pub(crate) stopped: Option<StopReason>,
}

impl HostState {
    pub(crate) fn new(provider: Arc<str>, wasi: WasiCtx, memory_bytes: usize) -> Self {
        Self {
            wasi,
            table: ResourceTable::new(),
            limits: Limits::new(memory_bytes),
            provider,
            call: None,
            stopped: None,
        }
    }

    /// Binds the instance to a call: progress goes to `ctx`, and the guest is
    /// stopped at `timeout` or when `ctx.cancel` fires.
    pub(crate) fn begin_call(&mut self, ctx: &CallContext, timeout: Duration) {
        let now = Instant::now();
        self.call = Some(ActiveCall {
            request_id: Arc::from(ctx.request_id.as_str()),
            progress: ctx.progress.clone(),
            cancel: ctx.cancel.clone(),
            // An unrepresentable deadline (absurd timeout) means none.
            deadline: now.checked_add(timeout),
        });
        self.stopped = None;
        self.limits.memory_denied = false;
    }

    /// Unbinds the call; returns why the guest was stopped, if it was.
    pub(crate) fn end_call(&mut self) -> Option<StopReason> {
        self.call = None;
        self.stopped.take()
    }

    /// The epoch callback: runs every tick while guest code runs.
    pub(crate) fn on_epoch(&mut self) -> UpdateDeadline {
        let reason = match &self.call {
            Some(call) if call.cancel.is_cancelled() => Some(StopReason::Cancelled),
            Some(call) if call.deadline.is_some_and(|d| Instant::now() >= d) => {
                Some(StopReason::Timeout)
            }
            // Guest code running outside a call (none should) gets no extra time.
            None => Some(StopReason::Cancelled),
            Some(_) => None,
        };
        match reason {
            Some(r) => {
                self.stopped = Some(r);
                UpdateDeadline::Interrupt
            }
            None => UpdateDeadline::Continue(1),
        }
    }

    fn request_id(&self) -> &str {
        self.call.as_ref().map_or("", |c| &c.request_id)
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

impl types::Host for HostState {}

impl progress::Host for HostState {
    fn report(&mut self, mut message: String) {
        match &self.call {
            Some(call) => call.progress.report_blocking(message),
            None => {
                truncate_utf8(&mut message, MAX_LINE_BYTES);
                tracing::debug!(provider = %self.provider, %message, "progress outside a call (dropped)");
            }
        }
    }
}

impl log::Host for HostState {
    fn write(&mut self, level: log::Level, mut message: String) {
        truncate_utf8(&mut message, MAX_LINE_BYTES);
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

/// Bounds on what one instance may create besides linear memory, so a guest
/// cannot exhaust the host through tables or many memories. Generous for real
/// guests (a Python or JS component uses a handful of each, tables of tens of
/// thousands of entries).
const MAX_TABLE_ELEMENTS: usize = 1_000_000;
const MAX_INSTANCES: usize = 1_000;
const MAX_MEMORIES: usize = 100;
const MAX_TABLES: usize = 1_000;

/// The memory limit of one instance, remembering whether it refused a grow (so
/// a trap that follows can be reported as "out of memory").
pub(crate) struct Limits {
    inner: StoreLimits,
    pub(crate) memory_denied: bool,
}

impl Limits {
    fn new(memory_bytes: usize) -> Self {
        Self {
            inner: StoreLimitsBuilder::new()
                .memory_size(memory_bytes)
                .table_elements(MAX_TABLE_ELEMENTS)
                .instances(MAX_INSTANCES)
                .memories(MAX_MEMORIES)
                .tables(MAX_TABLES)
                .trap_on_grow_failure(false)
                .build(),
            memory_denied: false,
        }
    }
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.inner.memory_growing(current, desired, maximum)?;
        if !allowed {
            self.memory_denied = true;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// Guest stdout or stderr: complete lines go to the host's `tracing` log, never
/// to the terminal (the terminal belongs to azd's user).
#[derive(Clone)]
pub(crate) struct LogStream {
    provider: Arc<str>,
    name: &'static str,
}

impl LogStream {
    pub(crate) fn new(provider: Arc<str>, name: &'static str) -> Self {
        Self { provider, name }
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
        let mut text = String::from_utf8_lossy(line).into_owned();
        truncate_utf8(&mut text, MAX_LINE_BYTES);
        let text = text.trim_end_matches('\r');
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
