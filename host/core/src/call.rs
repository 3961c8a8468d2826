//! What one call to a provider gets besides its arguments: [`CallContext`].
//!
//! Every call gets its request id, its place in the order azd sent requests, a
//! cancellation token that fires when azd goes away, and a [`Progress`]
//! reporter. Only deploy, preview and destroy get a reporter that reaches azd
//! ([`RequestKind::sends_progress`]); for every other call the reporter writes
//! to the debug log, because azd would take a progress message for the answer.
//! That is decided once, where a reporter is made for a request
//! ([`Progress::for_request`], the only way to give one a sink): whoever serves
//! the call (the runtime, a native provider) never decides it again.
//!
//! Where a reporter's messages go is a [`ProgressSink`]: azd's side implements
//! it over its stream (ordered, never after the answer); a test can implement
//! it to watch what a provider reports.

use std::sync::Arc;

use azd_wasm_host_proto::RequestKind;
use tokio_util::sync::CancellationToken;

/// What one call to a provider gets besides its arguments.
#[derive(Clone, Debug)]
pub struct CallContext {
    /// azd's id of the request being served.
    pub request_id: String,
    /// The request's place in the order azd sent requests on the stream.
    pub sequence: u64,
    /// Fires when the request is abandoned (azd went away). Long work must stop.
    pub cancel: CancellationToken,
    /// Where progress goes.
    pub progress: Progress,
}

/// Where the progress of one request goes (azd's stream, in `listen`).
///
/// Sending never waits: a guest may report a step per loop iteration, and each
/// report is a call across the sandbox's boundary that must cost next to
/// nothing. A sink that cannot keep every step keeps the latest (azd's stream
/// does: see `azd-wasm-host-provisioning`'s `progress` and `pacing`).
pub trait ProgressSink: Send + Sync + 'static {
    /// Takes one step of request `request_id`. The text is already cut to
    /// 16 KiB and safe for a terminal. Returns at once, the step queued (or
    /// dropped, when the request has been answered).
    fn send(&self, request_id: &str, message: String);
}

/// Reports progress for one request, to a [`ProgressSink`] or to the debug log.
#[derive(Clone)]
pub struct Progress {
    request_id: Arc<str>,
    sink: Option<Arc<dyn ProgressSink>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("request_id", &self.request_id)
            .field("sent", &self.sink.is_some())
            .finish()
    }
}

impl Progress {
    /// A reporter that only logs (for calls whose progress must not reach azd).
    pub fn log_only(request_id: impl Into<String>) -> Self {
        Self {
            request_id: Arc::from(request_id.into()),
            sink: None,
        }
    }

    /// The reporter of request `request_id` of `kind`: it sends to the sink `open` makes when
    /// the kind sends progress ([`RequestKind::sends_progress`]; `open` is called then only),
    /// and only logs otherwise.
    pub fn for_request(
        kind: RequestKind,
        request_id: impl Into<String>,
        open: impl FnOnce() -> Arc<dyn ProgressSink>,
    ) -> Self {
        Self {
            request_id: Arc::from(request_id.into()),
            sink: kind.sends_progress().then(open),
        }
    }

    /// The request this reporter belongs to.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Reports one step: cut to [`crate::text::LINE_MAX`], made safe for a
    /// terminal, and handed to the sink (or logged). Never waits.
    pub fn report(&self, message: impl Into<String>) {
        let message = crate::text::line(message.into());
        match &self.sink {
            Some(sink) => sink.send(&self.request_id, message),
            None => {
                tracing::debug!(request_id = %self.request_id, %message, "progress outside deploy/preview/destroy (not sent)");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps what it is sent.
    #[derive(Default)]
    struct Kept(std::sync::Mutex<Vec<(String, String)>>);

    impl ProgressSink for Kept {
        fn send(&self, request_id: &str, message: String) {
            self.0
                .lock()
                .expect("not poisoned")
                .push((request_id.to_owned(), message));
        }
    }

    fn ctx(sink: Arc<Kept>) -> CallContext {
        CallContext {
            request_id: "r2".into(),
            sequence: 0,
            cancel: CancellationToken::new(),
            progress: Progress::for_request(RequestKind::Deploy, "r2", || sink),
        }
    }

    #[test]
    fn only_kinds_that_send_progress_reach_the_sink() {
        for kind in RequestKind::ALL {
            let sink = Arc::new(Kept::default());
            let progress = Progress::for_request(kind, "r2", || sink.clone());
            progress.report("hello");
            let sent = !sink.0.lock().expect("not poisoned").is_empty();
            assert_eq!(sent, kind.sends_progress(), "{kind}");
        }
    }

    #[test]
    fn reports_are_cut_and_made_safe_before_the_sink_sees_them() {
        let sink = Arc::new(Kept::default());
        let ctx = ctx(sink.clone());
        ctx.progress.report("a\u{1b}[2Jb");
        ctx.progress.report("é".repeat(crate::text::LINE_MAX));
        let kept = sink.0.lock().expect("not poisoned");
        assert_eq!(kept[0], ("r2".to_owned(), "a[2Jb".to_owned()));
        assert!(
            kept[1].1.len() <= crate::text::LINE_MAX,
            "{}",
            kept[1].1.len()
        );
        assert!(kept[1].1.chars().all(|c| c == 'é'));
    }
}
