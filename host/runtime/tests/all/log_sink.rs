//! What a test logs through `tracing`, kept to be read back: the one sink the tests that look at
//! the log write into.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a poisoned lock or a log that is not UTF-8 fails the test"
)]

use std::sync::{Arc, Mutex};

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::SubscriberBuilder;
use tracing_subscriber::fmt::format::{DefaultFields, Format};
use tracing_subscriber::fmt::writer::BoxMakeWriter;

/// Collects every line logged into it, from every thread that logs through its subscriber.
#[derive(Clone, Default)]
pub(crate) struct LogSink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl LogSink {
    /// A subscriber that writes into this sink up to `level`, without colours, as `listen`
    /// writes its log file: `.finish()` it for one thread, `.init()` it for the process.
    pub(crate) fn subscriber(
        &self,
        level: tracing::Level,
    ) -> SubscriberBuilder<DefaultFields, Format, LevelFilter, BoxMakeWriter> {
        let writer = self.clone();
        tracing_subscriber::fmt()
            .with_max_level(level)
            .with_ansi(false)
            .with_writer(BoxMakeWriter::new(move || writer.clone()))
    }

    /// Everything logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// What was logged since the last take, taken out.
    pub(crate) fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
    }
}
