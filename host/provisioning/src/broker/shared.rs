//! What the broker, its reader and its requests share: how a stream ends,
//! who serves a request, and the tables between them.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, ProviderError};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{Request, RequestKind};
use parking_lot::Mutex;
use tokio::sync::oneshot;

/// How long a cancelled handler may take to wind down after the stream ends
/// (the process must exit within a second of azd going away).
pub(super) const WIND_DOWN: Duration = Duration::from_millis(400);

/// Serves the requests azd sends. The manager implements it; tests use others.
#[async_trait]
pub(crate) trait RequestHandler: Send + Sync + 'static {
    /// Produces the body of the answer to one request, or the error to answer
    /// with. The broker sets the request id, checks the size and sends it.
    async fn handle(
        &self,
        request: Request,
        ctx: CallContext,
    ) -> Result<pb::provisioning_message::MessageType, ProviderError>;
}

/// Why the stream ended.
#[derive(Debug, Clone)]
pub enum StreamEnd {
    /// azd ended the stream, or dropped the connection, with every request it
    /// sent answered: the normal end of an azd command.
    ClosedByAzd,
    /// The stream or the connection ended while requests azd sent were still
    /// unanswered (they were cancelled).
    Interrupted {
        /// How it ended, as the transport said.
        cause: String,
        /// The requests left unanswered, in the order azd sent them.
        unanswered: Vec<Unanswered>,
    },
    /// azd refused to open the stream, or sent a message whose gRPC frame
    /// cannot be read (the stream cannot go on past it).
    Failed(tonic::Status),
    /// The caller's shutdown token fired (e.g. SIGTERM).
    Shutdown,
}

/// A request azd sent that had no answer when the stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanswered {
    /// Its id.
    pub request_id: String,
    /// Its kind, when it could be read.
    pub kind: Option<RequestKind>,
    /// How long it had been running.
    pub running_for: Duration,
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id =
            azd_wasm_host_core::text::clip(&self.request_id, azd_wasm_host_core::text::QUOTE_MAX);
        match self.kind {
            Some(kind) => write!(f, "{kind} {id}")?,
            None => write!(f, "request {id}")?,
        }
        write!(f, " (running for {:.1} s)", self.running_for.as_secs_f64())
    }
}

/// The reader's record of how the stream ended.
pub(super) type EndRecord = Arc<OnceLock<StreamEnd>>;
pub(super) type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<pb::ProvisioningMessage>>>>;

/// azd's requests not answered yet, by their place in azd's order: taken in
/// by the reader, let go when their answer has left (`pacing`). An id is
/// *live* while a request under it is here: a request under a live id is
/// refused (`reader`), so no two requests under one id are ever served at
/// once (azd tells answers apart by id alone).
#[derive(Clone, Default)]
pub(super) struct InFlight(Arc<Mutex<Table>>);

/// What [`InFlight`] holds under its lock.
#[derive(Default)]
struct Table {
    /// By the request's place in azd's order.
    running: HashMap<u64, Running>,
    /// How many of them have each id.
    live: HashMap<Arc<str>, usize>,
}

/// One request in [`InFlight`].
struct Running {
    request_id: Arc<str>,
    kind: Option<RequestKind>,
    since: Instant,
}

impl InFlight {
    /// Records request `sequence`; it stays recorded while the result lives.
    pub(super) fn track(
        &self,
        sequence: u64,
        request_id: &str,
        kind: Option<RequestKind>,
    ) -> Tracked {
        let request_id: Arc<str> = Arc::from(request_id);
        let mut table = self.0.lock();
        *table.live.entry(request_id.clone()).or_default() += 1;
        let running = Running {
            request_id,
            kind,
            since: Instant::now(),
        };
        table.running.insert(sequence, running);
        drop(table);
        Tracked {
            table: self.clone(),
            sequence,
            unanswerable: false,
        }
    }

    /// Whether a request under `request_id` is still unanswered.
    pub(super) fn is_live(&self, request_id: &str) -> bool {
        self.0.lock().live.contains_key(request_id)
    }

    /// Forgets request `sequence`.
    fn settle(&self, sequence: u64) {
        let mut table = self.0.lock();
        let Some(running) = table.running.remove(&sequence) else {
            return;
        };
        if let Some(n) = table.live.get_mut(&running.request_id) {
            *n -= 1;
            if *n == 0 {
                table.live.remove(&running.request_id);
            }
        }
    }

    /// The requests still unanswered, in azd's order.
    pub(super) fn unanswered(&self) -> Vec<Unanswered> {
        let table = self.0.lock();
        let mut out: Vec<(u64, Unanswered)> = table
            .running
            .iter()
            .map(|(sequence, r)| {
                let request = Unanswered {
                    request_id: r.request_id.to_string(),
                    kind: r.kind,
                    running_for: r.since.elapsed(),
                };
                (*sequence, request)
            })
            .collect();
        drop(table);
        out.sort_by_key(|(sequence, _)| *sequence);
        out.into_iter().map(|(_, r)| r).collect()
    }
}

/// One request's place in [`InFlight`], given up when dropped.
pub(super) struct Tracked {
    table: InFlight,
    sequence: u64,
    /// Left in the table when dropped: the request gets no answer.
    unanswerable: bool,
}

impl Tracked {
    /// The request will get no answer (none that names it fits azd's limit): it
    /// stays among the unanswered for as long as the stream lives.
    pub(super) fn never_answered(mut self) {
        self.unanswerable = true;
    }
}

impl crate::pacing::Settles for Tracked {
    /// Its answer never left (the stream ended first): it was not answered.
    fn unsent(self: Box<Self>) {
        self.never_answered();
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if !self.unanswerable {
            self.table.settle(self.sequence);
        }
    }
}

/// A request as the reader hands it over: its place in the order azd sent
/// requests, the envelope (or why it is refused unread), and its record
/// among the unanswered.
pub(super) struct Queued {
    pub(super) sequence: u64,
    pub(super) request: Result<pb::ProvisioningMessage, (String, ProviderError)>,
    pub(super) tracked: Tracked,
}
