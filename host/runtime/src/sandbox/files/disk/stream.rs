//! A file's output stream (`write-via-stream`, `append-via-stream`) with
//! every write charged to the instance's [`DiskBudget`] before it is handed
//! on to wasmtime-wasi's own stream.

use std::sync::Arc;

use bytes::Bytes;
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

use super::budget::{DiskBudget, growth};

/// Where a stream writes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Position {
    /// From this offset on, advancing with each write.
    At(u64),
    /// At the end, whatever it is then.
    End,
}

/// wasmtime-wasi's stream of one file, bounded.
pub(super) struct BoundedOutput {
    pub(super) inner: DynOutputStream,
    /// The file, to read its size before a positioned write.
    pub(super) file: Arc<std::fs::File>,
    pub(super) position: Position,
    pub(super) budget: DiskBudget,
}

impl BoundedOutput {
    /// What writing `len` bytes now costs. A size that cannot be read counts
    /// as an empty file (the write is then charged in full).
    fn cost(&self, len: u64) -> u64 {
        match self.position {
            Position::End => len,
            Position::At(offset) => {
                let size = self.file.metadata().map(|m| m.len()).unwrap_or(0);
                growth(size, offset, len)
            }
        }
    }
}

#[async_trait::async_trait]
impl Pollable for BoundedOutput {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[async_trait::async_trait]
impl OutputStream for BoundedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let len = bytes.len() as u64;
        let cost = self.cost(len);
        self.budget
            .charge(cost)
            .map_err(|no| StreamError::LastOperationFailed(wasmtime::Error::new(no)))?;
        match self.inner.write(bytes) {
            Ok(()) => {
                if let Position::At(offset) = &mut self.position {
                    *offset = offset.saturating_add(len);
                }
                Ok(())
            }
            Err(e) => {
                self.budget.refund(cost);
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    // `blocking_write_and_flush`, `write_zeroes` and `write_ready` keep the
    // trait's own versions, which go through `write` above (wasmtime-wasi's
    // file stream writes past it in its own `blocking_write_and_flush`).

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}
