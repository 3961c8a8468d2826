//! Progress over azd's stream: the [`ProgressSink`] a request's reporter
//! sends to while the request may send progress (deploy, preview, destroy).
//!
//! Each such request has a [`ProgressLane`]: a short queue of the steps its
//! provider reported that have not left yet. A report never waits and costs
//! only the step's own text: it takes the lane's lock for a few instructions,
//! puts the step in the queue and rings the pacer's bell (`pacing`) only when
//! the queue was empty, so a provider reporting in a tight loop makes no
//! system call, no allocation of an envelope and no task switch per report.
//! The pacer takes the steps out at azd's pace and builds their envelopes as
//! they leave.
//!
//! What waits, and what is let go:
//! - up to [`QUEUED`] steps wait, in the order reported: a short burst
//!   (`Composing…`, `Ready`) reaches azd whole;
//! - a step that finds the queue full means the provider outruns what azd can
//!   show: the steps waiting are stale, so they are let go (all but the
//!   request's first step, if it has not left yet), and from then on the lane
//!   keeps only the newest step (the latest wins at every turn), so azd's
//!   spinner follows the provider without lag and the answer never waits
//!   behind a backlog;
//! - the request closes its lane before it queues its answer; a step reported
//!   after that is dropped, so nothing follows the answer, and the steps still
//!   waiting leave before it (in order, paced).

use std::collections::VecDeque;
use std::sync::Arc;

use azd_wasm_host_core::ProgressSink;
use parking_lot::Mutex;
use tokio::sync::Notify;

/// Most steps of one request waiting for their turn.
pub(crate) const QUEUED: usize = 8;

/// One step waiting: its text (already cut and made safe) and when it was
/// reported (Unix milliseconds, as azd's message carries it).
pub(crate) struct Step {
    pub(crate) text: String,
    pub(crate) timestamp: i64,
}

/// What a lane holds, under its lock.
struct Steps {
    /// `false` once the request's answer is on its way.
    open: bool,
    waiting: VecDeque<Step>,
    /// The provider outran the queue once: only the newest step waits.
    latest_only: bool,
    /// The front of `waiting` is the request's first step (it leaves at its
    /// first turn: it is never let go).
    first_waiting: bool,
    /// A step was ever queued.
    started: bool,
    /// Steps let go: stale when a newer one came (said in the debug log).
    superseded: u64,
}

/// The steps of one request on their way to azd's stream.
pub(crate) struct ProgressLane {
    request_id: Arc<str>,
    steps: Mutex<Steps>,
    /// The pacer's bell (one for every lane of the stream).
    bell: Arc<Notify>,
}

impl ProgressLane {
    fn new(request_id: &str, bell: Arc<Notify>) -> Self {
        Self {
            request_id: Arc::from(request_id),
            steps: Mutex::new(Steps {
                open: true,
                waiting: VecDeque::with_capacity(QUEUED),
                latest_only: false,
                first_waiting: false,
                started: false,
                superseded: 0,
            }),
            bell,
        }
    }

    /// The request's id.
    pub(crate) fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Closes the lane: the answer is on its way; later steps are dropped.
    /// The steps waiting still leave, before the answer.
    pub(crate) fn close(&self) {
        let mut steps = self.steps.lock();
        steps.open = false;
        if steps.superseded > 0 {
            tracing::debug!(
                request_id = %azd_wasm_host_core::text::clip(&self.request_id, azd_wasm_host_core::text::QUOTE_MAX),
                superseded = steps.superseded,
                "progress reported faster than azd shows it: the latest step won"
            );
        }
    }

    /// The oldest step waiting, if any.
    pub(crate) fn take(&self) -> Option<Step> {
        let mut steps = self.steps.lock();
        steps.first_waiting = false;
        steps.waiting.pop_front()
    }

    /// Whether a step is waiting.
    pub(crate) fn has_waiting(&self) -> bool {
        !self.steps.lock().waiting.is_empty()
    }

    /// Whether the lane is closed with nothing waiting: nothing more can
    /// leave through it.
    pub(crate) fn is_spent(&self) -> bool {
        let steps = self.steps.lock();
        !steps.open && steps.waiting.is_empty()
    }

    /// Queues `step`; returns whether the queue was empty (the pacer may be
    /// asleep), or `None` when the lane is closed and the step was dropped.
    fn queue(&self, step: Step) -> Option<bool> {
        let mut guard = self.steps.lock();
        let steps = &mut *guard;
        if !steps.open {
            return None;
        }
        let was_empty = steps.waiting.is_empty();
        if !steps.started {
            steps.started = true;
            steps.first_waiting = true;
        }
        // The request's first step, while it waits, is never let go.
        let kept = usize::from(steps.first_waiting);
        if steps.waiting.len() >= QUEUED {
            // The provider outruns azd's pace: what waits is stale.
            steps.latest_only = true;
            steps.superseded += (steps.waiting.len() - kept) as u64;
            steps.waiting.truncate(kept);
        }
        if steps.latest_only && steps.waiting.len() > kept {
            if let Some(last) = steps.waiting.back_mut() {
                *last = step;
            }
            steps.superseded += 1;
        } else {
            steps.waiting.push_back(step);
        }
        Some(was_empty)
    }
}

impl ProgressSink for ProgressLane {
    fn send(&self, request_id: &str, message: String) {
        let timestamp = azd_wasm_host_core::clock::unix_millis();
        match self.queue(Step {
            text: message,
            timestamp,
        }) {
            Some(true) => self.bell.notify_one(),
            Some(false) => {}
            None => {
                tracing::debug!(request_id = %azd_wasm_host_core::text::clip(request_id, azd_wasm_host_core::text::QUOTE_MAX), "progress after the final answer (dropped)");
            }
        }
    }
}

/// The lanes of one stream: those the pacer has not picked up yet, and the
/// bell that wakes it. Cloned into every request that may send progress.
#[derive(Clone, Default)]
pub(crate) struct Lanes {
    new: Arc<Mutex<Vec<Arc<ProgressLane>>>>,
    bell: Arc<Notify>,
}

impl Lanes {
    /// Opens a lane for request `request_id`; the pacer picks it up at its
    /// next turn.
    pub(crate) fn open(&self, request_id: &str) -> Arc<ProgressLane> {
        let lane = Arc::new(ProgressLane::new(request_id, self.bell.clone()));
        self.new.lock().push(lane.clone());
        lane
    }

    /// The lanes opened since the last call.
    pub(crate) fn opened(&self) -> Vec<Arc<ProgressLane>> {
        std::mem::take(&mut *self.new.lock())
    }

    /// Waits for a lane's queue to go from empty to not.
    pub(crate) async fn rung(&self) {
        self.bell.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use azd_wasm_host_core::Progress;
    use azd_wasm_host_proto::RequestKind;

    use super::*;

    fn texts(lane: &ProgressLane) -> Vec<String> {
        std::iter::from_fn(|| lane.take()).map(|s| s.text).collect()
    }

    #[test]
    fn nothing_is_queued_after_close() {
        let lanes = Lanes::default();
        let lane = lanes.open("r1");
        let p = Progress::for_request(RequestKind::Deploy, "r1", || lane.clone());
        p.report("one");
        lane.close();
        p.report("two");
        assert_eq!(texts(&lane), ["one"]);
        assert!(lane.is_spent());
    }

    #[test]
    fn a_short_burst_waits_whole_and_in_order() {
        let lane = Lanes::default().open("r1");
        let p = Progress::for_request(RequestKind::Deploy, "r1", || lane.clone());
        for i in 0..QUEUED {
            p.report(i.to_string());
        }
        let want: Vec<String> = (0..QUEUED).map(|i| i.to_string()).collect();
        assert_eq!(texts(&lane), want);
    }

    #[test]
    fn a_flood_keeps_only_the_latest_from_the_first_overflow_on() {
        let lane = Lanes::default().open("r1");
        let p = Progress::for_request(RequestKind::Deploy, "r1", || lane.clone());
        for i in 0..1000 {
            p.report(i.to_string());
        }
        assert_eq!(texts(&lane), ["0", "999"], "the first step and the latest");
        // Still the latest only: a second burst does not queue again.
        for i in 0..3 {
            p.report(format!("b{i}"));
        }
        assert_eq!(texts(&lane), ["b2"]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_bell_rings_when_a_queue_stops_being_empty() {
        let lanes = Lanes::default();
        let lane = lanes.open("r1");
        assert_eq!(lanes.opened().len(), 1);
        assert!(lanes.opened().is_empty(), "picked up once");
        let quiet = tokio::time::timeout(std::time::Duration::from_secs(1), lanes.rung()).await;
        assert!(quiet.is_err(), "rang with nothing queued");
        lane.send("r1", "one".into());
        lane.send("r1", "two".into());
        tokio::time::timeout(std::time::Duration::from_secs(1), lanes.rung())
            .await
            .expect("rang");
        assert!(lane.has_waiting());
    }
}
