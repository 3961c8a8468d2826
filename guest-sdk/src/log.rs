//! Levelled logging into the host's debug log (stderr of the host, shown only when azd runs
//! with `--debug`). Never log secrets.
//!
//! Off WebAssembly (when a provider's unit tests run natively) lines go to this process's
//! stderr instead, so the same code runs in both places.

pub use crate::bindings::azd::provisioning0_1_0::log::Level;

/// Writes one line at `level`.
pub fn write(level: Level, message: impl AsRef<str>) {
    imp::write(level, message.as_ref());
}

/// Writes a `trace` line.
pub fn trace(message: impl AsRef<str>) {
    write(Level::Trace, message);
}

/// Writes a `debug` line.
pub fn debug(message: impl AsRef<str>) {
    write(Level::Debug, message);
}

/// Writes an `info` line.
pub fn info(message: impl AsRef<str>) {
    write(Level::Info, message);
}

/// Writes a `warn` line.
pub fn warn(message: impl AsRef<str>) {
    write(Level::Warn, message);
}

/// Writes an `error` line.
pub fn error(message: impl AsRef<str>) {
    write(Level::Error, message);
}

/// Reports a step of the current `deploy`, `preview` or `destroy`; azd shows the latest one on
/// its spinner. During other calls the host sends it to its debug log instead, because azd would
/// take a progress message for the answer.
pub fn progress(message: impl AsRef<str>) {
    imp::progress(message.as_ref());
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::Level;
    use crate::bindings::azd::provisioning0_1_0::{log, progress};

    pub(super) fn write(level: Level, message: &str) {
        log::write(level, message);
    }

    pub(super) fn progress(message: &str) {
        progress::report(message);
    }
}

/// Natively there is no host: the generated imports would hit `unreachable!`, so write to stderr.
#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::Level;

    pub(super) fn write(level: Level, message: &str) {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        eprintln!("[{level}] {message}");
    }

    pub(super) fn progress(message: &str) {
        eprintln!("[progress] {message}");
    }
}
