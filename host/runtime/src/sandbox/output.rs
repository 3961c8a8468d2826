//! Guest stdout and stderr: complete lines go to the host's `tracing` log,
//! never to the terminal (the terminal belongs to azd's user), within the
//! instance's log budget ([`GuestLog`]), and stderr's newest lines are kept for
//! the error of a trap (also once the budget is spent).

use std::sync::Arc;

use azd_wasm_host_core::text;
use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

use crate::instance::guest_log::GuestLog;

/// Guest stdout or stderr: complete lines go to the host's `tracing` log, never
/// to the terminal (the terminal belongs to azd's user).
#[derive(Clone)]
pub(crate) struct LogStream {
    provider: Arc<str>,
    name: &'static str,
    /// What the instance may still write to the log (shared with its other
    /// stream and its `log` calls).
    log: GuestLog,
    /// The newest lines, kept for the error of a trap (stderr only).
    tail: Option<OutputTail>,
}

impl LogStream {
    pub(crate) fn new(
        provider: Arc<str>,
        name: &'static str,
        log: GuestLog,
        tail: Option<OutputTail>,
    ) -> Self {
        Self {
            provider,
            name,
            log,
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
pub(crate) struct OutputTail(Arc<parking_lot::Mutex<std::collections::VecDeque<String>>>);

impl OutputTail {
    /// Keeps `line` (as [`text::line`] made it), unless it is blank.
    fn push(&self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let mut line = line.to_owned();
        text::truncate(&mut line, TAIL_LINE_BYTES);
        let mut tail = self.0.lock();
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    /// Keeps a line as the guest wrote it: no more of it is cleaned than
    /// the tail keeps.
    fn push_raw(&self, line: &[u8]) {
        // A character is at most 4 bytes, and an invalid byte becomes one.
        let head = &line[..line.len().min(4 * TAIL_LINE_BYTES)];
        self.push(&text::line(String::from_utf8_lossy(head).into_owned()));
    }

    /// The kept lines, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.0.lock().iter().cloned().collect()
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
    /// Logs each complete line of `bytes` (after what was pending), and keeps
    /// the rest; a line longer than [`text::LINE_MAX`] is cut. Linear in the
    /// bytes, however many lines they hold.
    fn push(&mut self, mut bytes: &[u8]) {
        while let Some(pos) = bytes.iter().position(|b| *b == b'\n') {
            let (line, rest) = (&bytes[..pos], &bytes[pos + 1..]);
            if self.pending.is_empty() {
                self.emit(line);
            } else {
                self.pending.extend_from_slice(line);
                self.flush_pending();
            }
            bytes = rest;
        }
        self.pending.extend_from_slice(bytes);
        if self.pending.len() > text::LINE_MAX {
            self.flush_pending();
        }
    }

    fn emit(&self, line: &[u8]) {
        let stream = &self.stream;
        let logged = tracing::enabled!(target: "guest", tracing::Level::DEBUG);
        if stream.log.spent() || !logged {
            // Not logged: cleaned only for the tail, if that keeps it.
            if logged {
                stream.log.drop_line(line.len());
            }
            if let Some(tail) = &stream.tail {
                tail.push_raw(line);
            }
            return;
        }
        // What `text::line` keeps of it, and no more to convert.
        let line = &line[..line.len().min(text::LINE_MAX)];
        let text = text::line(String::from_utf8_lossy(line).into_owned());
        if let Some(tail) = &stream.tail {
            tail.push(&text);
        }
        if stream.log.admit(text.len()) {
            tracing::debug!(target: "guest", provider = %stream.provider, stream = stream.name, "{text}");
        }
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
