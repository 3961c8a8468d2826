//! The outbound side of the stream, paced so that azd shows progress in the
//! order it was reported.
//!
//! azd (1.31) hands every message it receives to a goroutine of its own, so
//! two messages that arrive back to back may be handled in either order: a
//! deploy's steps flicker on the spinner out of order, or one is shown twice.
//! Here, progress messages of one request leave at least [`PACE`] apart,
//! taken from the request's lane (`progress`: a short queue where the
//! latest step wins once the provider outruns it). A request's answer waits
//! until its lane's steps have left, [`PACE`] after the last one, so it is
//! never overtaken by its own progress, and nothing of that request follows
//! it. Every other message (answers of requests without steps waiting, our
//! own requests) leaves at once, in order.
//!
//! The pacer is one task; it sleeps until a message is queued, a lane's queue
//! stops being empty (its bell), or a lane's next turn comes. A provider
//! reporting in a tight loop wakes it at most once per turn, not per report,
//! and each progress envelope is built only when it leaves.
//!
//! This is also the one door everything leaves by: a message past azd's 4 MiB
//! limit would end the stream (azd's server refuses it and drops the stream), so
//! none passes ([`Outgoing::leave`]); answers are made to fit before they are
//! queued (`broker::request`), so what is stopped here is progress of a request
//! whose id alone is too long. An answer's place among the unanswered is let go
//! only when it leaves, not when it is queued: a stream that ends with answers
//! still waiting here did not answer them.

use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_proto::MAX_MESSAGE_BYTES;
use azd_wasm_host_proto::azdext as pb;
use futures::{Stream, StreamExt as _};
use pb::provisioning_message::MessageType;
use prost::Message as _;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::progress::{Lanes, ProgressLane};

/// Least time between two messages of one request (progress, then its answer).
pub(crate) const PACE: Duration = Duration::from_millis(20);

/// Room left under azd's limit for gRPC's framing of a message.
pub(crate) const FRAME_MARGIN: usize = 64;

/// Whether `msg` may be sent to azd: within its limit per message, framing included.
pub(crate) fn fits(msg: &pb::ProvisioningMessage) -> bool {
    msg.encoded_len() + FRAME_MARGIN <= MAX_MESSAGE_BYTES
}

/// What a message settles once it has left (an answer's place among the
/// unanswered): dropped when the message leaves; told it never did when the
/// message is dropped unsent (the stream ended first).
pub(crate) trait Settles: Send {
    /// The message never left.
    fn unsent(self: Box<Self>);
}

/// A message on its way out, and what it settles once it has left.
pub(crate) struct Outgoing {
    msg: pb::ProvisioningMessage,
    settles: Option<Box<dyn Settles>>,
    /// The lane whose steps must leave first (a request's answer).
    after: Option<Arc<ProgressLane>>,
}

impl Outgoing {
    /// `msg`, settling `settles` once it has left.
    pub(crate) fn settling(msg: pb::ProvisioningMessage, settles: impl Settles + 'static) -> Self {
        Self {
            msg,
            settles: Some(Box::new(settles)),
            after: None,
        }
    }

    /// This message, leaving only after `lane`'s steps (and [`PACE`] after
    /// the last of them).
    pub(crate) fn after(mut self, lane: Arc<ProgressLane>) -> Self {
        self.after = Some(lane);
        self
    }

    /// The message as it leaves: itself, if it fits azd's limit (and then
    /// what it settles is settled); else nothing, and an answer stays
    /// unanswered.
    fn leave(mut self) -> Option<pb::ProvisioningMessage> {
        let msg = std::mem::take(&mut self.msg);
        if fits(&msg) {
            drop(self.settles.take());
            return Some(msg);
        }
        tracing::warn!(
            request_id = %azd_wasm_host_core::text::clip(&msg.request_id, azd_wasm_host_core::text::QUOTE_MAX),
            what = if is_progress(&msg) { "progress" } else { "message" },
            size = msg.encoded_len(),
            "not sent: larger than azd's limit of {MAX_MESSAGE_BYTES} bytes per message, which would end the stream"
        );
        None
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        if let Some(settles) = self.settles.take() {
            settles.unsent();
        }
    }
}

impl From<pb::ProvisioningMessage> for Outgoing {
    fn from(msg: pb::ProvisioningMessage) -> Self {
        Self {
            msg,
            settles: None,
            after: None,
        }
    }
}

fn is_progress(msg: &pb::ProvisioningMessage) -> bool {
    matches!(msg.message_type, Some(MessageType::ProgressMessage(_)))
}

/// One lane as the pacer sees it: when its last message left, and its
/// answer once it came.
struct Turn {
    lane: Arc<ProgressLane>,
    last_sent: Option<Instant>,
    answer: Option<Outgoing>,
}

impl Turn {
    /// Whether a message of this lane may leave at `now`.
    fn free(&self, now: Instant) -> bool {
        self.last_sent.is_none_or(|t| now >= t + PACE)
    }

    /// When its next message (a step, or the answer) may leave, if it has one.
    fn next_turn(&self) -> Option<Instant> {
        if self.answer.is_none() && !self.lane.has_waiting() {
            return None;
        }
        Some(self.last_sent.map_or_else(Instant::now, |t| t + PACE))
    }

    /// Whether nothing can leave through this lane any more and nothing
    /// will: closed and empty with no answer, or its request gone without one.
    fn finished(&self) -> bool {
        self.answer.is_none() && self.lane.is_spent() && Arc::strong_count(&self.lane) == 1
    }
}

/// The pacer's state: the queue, and the lanes it serves.
struct Pacer {
    rx: mpsc::Receiver<Outgoing>,
    /// Whether the queue has closed (what waits still leaves, then the stream ends).
    closed: bool,
    lanes: Lanes,
    turns: Vec<Turn>,
}

impl Pacer {
    fn pick_up_lanes(&mut self) {
        for lane in self.lanes.opened() {
            self.turns.push(Turn {
                lane,
                last_sent: None,
                answer: None,
            });
        }
    }

    /// A message that may leave now: a lane's next step, or an answer whose
    /// lane has nothing left before it.
    fn ready(&mut self, now: Instant) -> Option<Outgoing> {
        let index = self
            .turns
            .iter()
            .position(|t| t.free(now) && (t.answer.is_some() || t.lane.has_waiting()))?;
        let turn = &mut self.turns[index];
        if let Some(step) = turn.lane.take() {
            turn.last_sent = Some(now);
            let msg = azd_wasm_host_proto::progress_message(
                turn.lane.request_id(),
                step.text,
                step.timestamp,
            );
            return Some(msg.into());
        }
        self.turns.swap_remove(index).answer
    }

    /// Takes one message from the queue: returns it if it may leave at once;
    /// an answer after a lane waits with its lane.
    fn admit(&mut self, mut msg: Outgoing) -> Option<Outgoing> {
        let Some(lane) = msg.after.take() else {
            return Some(msg);
        };
        self.pick_up_lanes();
        match self.turns.iter_mut().find(|t| Arc::ptr_eq(&t.lane, &lane)) {
            Some(turn) => {
                turn.answer = Some(msg);
                None
            }
            // Not a lane of this stream's: nothing of it can be waiting.
            None => Some(msg),
        }
    }

    /// The next message to send, waiting for its turn; `None` once the queue
    /// has closed and nothing waits any more.
    async fn next(&mut self) -> Option<Outgoing> {
        loop {
            self.pick_up_lanes();
            self.turns.retain(|t| !t.finished());
            let now = Instant::now();
            if let Some(msg) = self.ready(now) {
                return Some(msg);
            }
            let due = self.turns.iter().filter_map(Turn::next_turn).min();
            if self.closed && due.is_none() {
                return None;
            }
            let wake = async {
                match due {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                msg = self.rx.recv(), if !self.closed => {
                    let Some(msg) = msg else {
                        self.closed = true;
                        continue;
                    };
                    if let Some(ready) = self.admit(msg) {
                        return Some(ready);
                    }
                }
                () = self.lanes.rung() => {}
                () = wake => {}
            }
        }
    }
}

/// The messages of `rx` and the steps of `lanes`, paced as the module says,
/// each leaving only if it fits azd's limit.
pub(crate) fn paced(
    rx: mpsc::Receiver<Outgoing>,
    lanes: Lanes,
) -> impl Stream<Item = pb::ProvisioningMessage> + Send + 'static {
    let pacer = Pacer {
        rx,
        closed: false,
        lanes,
        turns: Vec::new(),
    };
    futures::stream::unfold(pacer, |mut pacer| async move {
        let msg = pacer.next().await?;
        Some((msg, pacer))
    })
    .filter_map(|msg| std::future::ready(msg.leave()))
}

#[cfg(test)]
mod tests {
    use azd_wasm_host_core::ProgressSink as _;

    use super::*;
    use crate::progress::QUEUED;

    fn answer(id: &str) -> pb::ProvisioningMessage {
        pb::ProvisioningMessage {
            request_id: id.into(),
            error: None,
            message_type: Some(MessageType::DeployResponse(Default::default())),
        }
    }

    fn text(m: &pb::ProvisioningMessage) -> String {
        match &m.message_type {
            Some(MessageType::ProgressMessage(p)) => format!("{}:{}", m.request_id, p.message),
            _ => format!("{}:answer", m.request_id),
        }
    }

    /// One request's work as a test plays it: steps reported, then its answer.
    enum Act {
        Steps(&'static str, Vec<String>),
        Answer(&'static str),
    }

    fn steps(id: &'static str, texts: &[&str]) -> Act {
        Act::Steps(id, texts.iter().map(|t| (*t).to_owned()).collect())
    }

    /// What leaves, and when (relative to the start), for acts played at once.
    async fn run(acts: Vec<Act>) -> Vec<(String, Duration)> {
        let (tx, rx) = mpsc::channel(16);
        let lanes = Lanes::default();
        let start = Instant::now();
        let mut open = std::collections::HashMap::new();
        for act in acts {
            match act {
                Act::Steps(id, texts) => {
                    let lane = open.entry(id).or_insert_with(|| lanes.open(id)).clone();
                    for t in texts {
                        lane.send(id, t);
                    }
                }
                Act::Answer(id) => {
                    let mut msg = Outgoing::from(answer(id));
                    if let Some(lane) = open.remove(id) {
                        lane.close();
                        msg = msg.after(lane);
                    }
                    tx.send(msg).await.unwrap();
                }
            }
        }
        drop(tx);
        paced(rx, lanes)
            .map(|m| (text(&m), start.elapsed()))
            .collect()
            .await
    }

    #[tokio::test(start_paused = true)]
    async fn progress_leaves_in_order_paced_and_before_its_answer() {
        let out = run(vec![steps("a", &["1", "2", "3"]), Act::Answer("a")]).await;
        let texts: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a:1", "a:2", "a:3", "a:answer"]);
        for pair in out.windows(2) {
            assert!(pair[1].1 - pair[0].1 >= PACE, "{out:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_flood_shows_the_latest_and_its_answer_waits_one_turn() {
        let flood: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let out = run(vec![Act::Steps("a", flood), Act::Answer("a")]).await;
        let texts: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            texts,
            ["a:0", "a:99", "a:answer"],
            "the first step and the latest"
        );
        for pair in out.windows(2) {
            assert!(pair[1].1 - pair[0].1 >= PACE, "{out:?}");
        }
        assert!(
            out[2].1 <= 2 * PACE,
            "no backlog before the answer: {out:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_as_long_as_the_queue_is_shown_whole() {
        let burst: Vec<String> = (0..QUEUED).map(|i| i.to_string()).collect();
        let out = run(vec![Act::Steps("a", burst), Act::Answer("a")]).await;
        let texts: Vec<String> = out.iter().map(|(t, _)| t.clone()).collect();
        let mut want: Vec<String> = (0..QUEUED).map(|i| format!("a:{i}")).collect();
        want.push("a:answer".into());
        assert_eq!(texts, want);
    }

    #[tokio::test(start_paused = true)]
    async fn other_requests_are_not_held_back() {
        let out = run(vec![
            steps("a", &["1", "2"]),
            Act::Answer("b"),
            Act::Answer("a"),
        ])
        .await;
        let texts: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a:1", "b:answer", "a:2", "a:answer"]);
        assert_eq!(out[1].1, Duration::ZERO, "b's answer leaves at once");
    }

    #[tokio::test(start_paused = true)]
    async fn steps_reported_while_the_pacer_waits_wake_it() {
        let (tx, rx) = mpsc::channel::<Outgoing>(4);
        let lanes = Lanes::default();
        let lane = lanes.open("a");
        let mut out = std::pin::pin!(paced(rx, lanes));
        let reporter = {
            let lane = lane.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                lane.send("a", "late".into());
            })
        };
        let first = out.next().await.unwrap();
        assert_eq!(text(&first), "a:late");
        reporter.await.unwrap();
        lane.close();
        tx.send(Outgoing::from(answer("a")).after(lane))
            .await
            .unwrap();
        drop(tx);
        assert_eq!(text(&out.next().await.unwrap()), "a:answer");
        assert!(out.next().await.is_none());
    }

    /// Says how it was settled.
    struct Probe(std::sync::mpsc::Sender<&'static str>);

    impl Settles for Probe {
        fn unsent(self: Box<Self>) {
            let _ = self.0.send("unsent");
            std::mem::forget(*self);
        }
    }

    impl Drop for Probe {
        fn drop(&mut self) {
            let _ = self.0.send("left");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_past_azds_limit_leaves_and_an_answer_is_settled_when_it_leaves() {
        let huge = "i".repeat(MAX_MESSAGE_BYTES / 2 + 1);
        let (tx, rx) = mpsc::channel(4);
        let (said, told) = std::sync::mpsc::channel();
        // Its id twice (envelope and body) is past the limit.
        let lanes = Lanes::default();
        let lane = lanes.open(&huge);
        lane.send(&huge, "step".into());
        lane.close();
        tx.send(Outgoing::settling(answer("a"), Probe(said.clone())))
            .await
            .unwrap();
        drop(tx);
        let mut out = std::pin::pin!(paced(rx, lanes));
        assert!(told.try_recv().is_err(), "not settled before it leaves");
        let first = out.next().await.unwrap();
        assert_eq!(text(&first), "a:answer");
        assert_eq!(told.try_recv(), Ok("left"));
        drop(lane);
        assert!(out.next().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_past_azds_limit_stays_unanswered() {
        let (tx, rx) = mpsc::channel(4);
        let (said, told) = std::sync::mpsc::channel();
        let huge = "i".repeat(MAX_MESSAGE_BYTES);
        tx.send(Outgoing::settling(answer(&huge), Probe(said)))
            .await
            .unwrap();
        drop(tx);
        let mut out = std::pin::pin!(paced(rx, Lanes::default()));
        assert!(out.next().await.is_none());
        assert_eq!(told.try_recv(), Ok("unsent"));
        assert!(told.try_recv().is_err(), "settled once");
    }

    #[test]
    fn an_answer_dropped_unsent_stays_unanswered() {
        let (said, told) = std::sync::mpsc::channel();
        drop(Outgoing::settling(answer("a"), Probe(said)));
        assert_eq!(told.try_recv(), Ok("unsent"));
        assert!(told.try_recv().is_err(), "settled once");
    }
}
