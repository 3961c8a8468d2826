//! `progress` and `log`: what a guest reports while it serves a call.
//!
//! Progress goes to the call's reporter (azd's stream during deploy, preview
//! and destroy; the debug log otherwise); log lines go to the host's log,
//! tagged with the provider and the request, within the instance's log
//! budget (`guest_log`, which its stdout and stderr share).

use std::sync::Arc;

use azd_wasm_host_core::text;
use azd_wasm_host_core::{CallContext, Progress};

use crate::bindings::azd::provisioning0_1_0::{log, progress, types};
use crate::instance::guest_log::GuestLog;

/// The call an instance is serving right now.
struct ActiveCall {
    request_id: Arc<str>,
    progress: Progress,
}

/// The provider's name, the call it serves, if any, and what it may still log.
pub(crate) struct CallBinding {
    provider: Arc<str>,
    call: Option<ActiveCall>,
    log: GuestLog,
}

impl CallBinding {
    pub(crate) fn new(provider: Arc<str>, log: GuestLog) -> Self {
        Self {
            provider,
            call: None,
            log,
        }
    }

    /// Says how much of the guest's output was not logged during `call`, if any.
    pub(crate) fn report_dropped(&self, call: &str) {
        self.log.report_dropped(call);
    }

    /// Binds to a call: its progress goes to `ctx`.
    pub(crate) fn begin(&mut self, ctx: &CallContext) {
        self.call = Some(ActiveCall {
            request_id: Arc::from(ctx.request_id.as_str()),
            progress: ctx.progress.clone(),
        });
    }

    /// Unbinds the call.
    pub(crate) fn end(&mut self) {
        self.call = None;
    }

    fn request_id(&self) -> &str {
        self.call.as_ref().map_or("", |c| &c.request_id)
    }
}

impl types::Host for CallBinding {}

impl progress::Host for CallBinding {
    fn report(&mut self, message: String) {
        match &self.call {
            Some(call) => call.progress.report(message),
            None => {
                tracing::debug!(provider = %self.provider, message = %text::line(message), "progress outside a call (dropped)");
            }
        }
    }
}

/// Whether a guest's line at `level` reaches any log.
fn enabled(level: log::Level) -> bool {
    use tracing::Level;
    match level {
        log::Level::Trace => tracing::enabled!(target: "guest", Level::TRACE),
        log::Level::Debug => tracing::enabled!(target: "guest", Level::DEBUG),
        log::Level::Info => tracing::enabled!(target: "guest", Level::INFO),
        log::Level::Warn => tracing::enabled!(target: "guest", Level::WARN),
        log::Level::Error => tracing::enabled!(target: "guest", Level::ERROR),
    }
}

impl log::Host for CallBinding {
    fn write(&mut self, level: log::Level, message: String) {
        if !enabled(level) {
            return;
        }
        if self.log.spent() {
            self.log.drop_line(message.len());
            return;
        }
        let message = text::line(message);
        if !self.log.admit(message.len()) {
            return;
        }
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
