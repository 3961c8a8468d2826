//! The outbound side of the stream, paced so that azd shows progress in the
//! order it was reported.
//!
//! azd (1.31) hands every message it receives to a goroutine of its own, so
//! two messages that arrive back to back may be handled in either order: a
//! deploy's steps flicker on the spinner out of order, or one is shown twice.
//! Here, progress messages of one request leave at least [`PACE`] apart;
//! those reported faster wait in a short queue (at most [`QUEUED`] per
//! request; when it is full the newest replaces the last one queued: the
//! latest step wins). A request's answer waits until its queued progress has
//! left, [`PACE`] after the last one, so it is never overtaken by its own
//! progress, and nothing of that request follows it. Every other message
//! (answers of requests without queued progress, our own requests) leaves at
//! once, in order.
//!
//! This is also the one door everything leaves by: a message past azd's 4 MiB
//! limit would end the stream (azd's server refuses it and drops the stream), so
//! none passes ([`Outgoing::leave`]); answers are made to fit before they are
//! queued (`broker::request`), so what is stopped here is progress of a request
//! whose id alone is too long. An answer's place among the unanswered is let go
//! only when it leaves, not when it is queued: a stream that ends with answers
//! still waiting here did not answer them.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use azd_wasm_host_proto::MAX_MESSAGE_BYTES;
use azd_wasm_host_proto::azdext as pb;
use futures::{Stream, StreamExt as _};
use pb::provisioning_message::MessageType;
use prost::Message as _;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Least time between two messages of one request (progress, then its answer).
pub(crate) const PACE: Duration = Duration::from_millis(20);
/// Most progress messages of one request waiting for their turn.
pub(crate) const QUEUED: usize = 8;

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
}

impl Outgoing {
    /// `msg`, settling `settles` once it has left.
    pub(crate) fn settling(msg: pb::ProvisioningMessage, settles: impl Settles + 'static) -> Self {
        Self {
            msg,
            settles: Some(Box::new(settles)),
        }
    }

    /// The message.
    #[cfg(test)]
    pub(crate) fn message(&self) -> &pb::ProvisioningMessage {
        &self.msg
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
        Self { msg, settles: None }
    }
}

/// One request's messages waiting for their turn.
#[derive(Default)]
struct Lane {
    /// When the request's last message left.
    last_sent: Option<Instant>,
    /// Progress waiting, oldest first.
    progress: VecDeque<Outgoing>,
    /// The answer, once it came; it leaves after the progress.
    answer: Option<Outgoing>,
}

impl Lane {
    /// When the next message of this lane may leave, if it has one.
    fn due(&self) -> Option<Instant> {
        if self.progress.is_empty() && self.answer.is_none() {
            return None;
        }
        Some(self.last_sent.map_or_else(Instant::now, |t| t + PACE))
    }

    /// The next message of this lane, and whether the lane is done (its answer left).
    fn pop(&mut self, now: Instant) -> Option<(Outgoing, bool)> {
        if let Some(p) = self.progress.pop_front() {
            self.last_sent = Some(now);
            return Some((p, false));
        }
        self.answer.take().map(|a| (a, true))
    }
}

fn is_progress(msg: &pb::ProvisioningMessage) -> bool {
    matches!(msg.message_type, Some(MessageType::ProgressMessage(_)))
}

/// The pacer's state: what is waiting, by request id.
struct Pacer {
    rx: mpsc::Receiver<Outgoing>,
    /// Whether the queue has closed (what waits still leaves, then the stream ends).
    closed: bool,
    lanes: HashMap<String, Lane>,
}

impl Pacer {
    /// Takes one message from the queue: returns it if it may leave now.
    fn admit(&mut self, msg: Outgoing, now: Instant) -> Option<Outgoing> {
        let id = msg.msg.request_id.clone();
        if is_progress(&msg.msg) {
            let lane = self.lanes.entry(id).or_default();
            let free = lane.progress.is_empty() && lane.last_sent.is_none_or(|t| now >= t + PACE);
            if free {
                lane.last_sent = Some(now);
                return Some(msg);
            }
            if lane.progress.len() == QUEUED {
                // The latest step wins over the last one waiting.
                lane.progress.pop_back();
            }
            lane.progress.push_back(msg);
            return None;
        }
        match self.lanes.get_mut(&id) {
            // Progress of this request is waiting, or left less than PACE ago:
            // the answer goes after it.
            Some(lane)
                if lane.due().is_some() || lane.last_sent.is_some_and(|t| now < t + PACE) =>
            {
                lane.answer = Some(msg);
                None
            }
            _ => {
                self.lanes.remove(&id);
                Some(msg)
            }
        }
    }

    /// The lane whose next message is due first, and when.
    fn next_due(&self) -> Option<(String, Instant)> {
        self.lanes
            .iter()
            .filter_map(|(id, lane)| {
                let due = lane.due().or_else(|| {
                    // An answer waiting only for the gap after the last progress.
                    lane.answer.as_ref().and(lane.last_sent.map(|t| t + PACE))
                })?;
                Some((id.clone(), due))
            })
            .min_by_key(|(_, due)| *due)
    }

    /// The next message to send, waiting for its turn; `None` once the queue
    /// has closed and nothing waits any more.
    async fn next(&mut self) -> Option<Outgoing> {
        loop {
            let due = self.next_due();
            if self.closed && due.is_none() {
                return None;
            }
            let wake = async {
                match &due {
                    Some((_, at)) => tokio::time::sleep_until(*at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = wake => {
                    let Some((id, _)) = due else { continue };
                    let now = Instant::now();
                    let Some(lane) = self.lanes.get_mut(&id) else { continue };
                    match lane.pop(now) {
                        Some((msg, done)) => {
                            if done {
                                self.lanes.remove(&id);
                            }
                            return Some(msg);
                        }
                        None => {
                            self.lanes.remove(&id);
                        }
                    }
                }
                msg = self.rx.recv(), if !self.closed => {
                    let Some(msg) = msg else {
                        self.closed = true;
                        continue;
                    };
                    if let Some(ready) = self.admit(msg, Instant::now()) {
                        return Some(ready);
                    }
                }
            }
        }
    }
}

/// The messages of `rx`, paced as the module says, each leaving only if it fits
/// azd's limit.
pub(crate) fn paced(
    rx: mpsc::Receiver<Outgoing>,
) -> impl Stream<Item = pb::ProvisioningMessage> + Send + 'static {
    let pacer = Pacer {
        rx,
        closed: false,
        lanes: HashMap::new(),
    };
    futures::stream::unfold(pacer, |mut pacer| async move {
        let msg = pacer.next().await?;
        Some((msg, pacer))
    })
    .filter_map(|msg| std::future::ready(msg.leave()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(id: &str, text: &str) -> pb::ProvisioningMessage {
        azd_wasm_host_proto::progress_message(id, text.into(), 0)
    }

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

    /// What leaves, and when (relative to the start), for messages queued at once.
    async fn run(input: Vec<pb::ProvisioningMessage>) -> Vec<(String, Duration)> {
        let (tx, rx) = mpsc::channel(input.len());
        let start = Instant::now();
        for m in input {
            tx.send(Outgoing::from(m)).await.unwrap();
        }
        drop(tx);
        paced(rx)
            .map(|m| (text(&m), start.elapsed()))
            .collect()
            .await
    }

    #[tokio::test(start_paused = true)]
    async fn progress_leaves_in_order_paced_and_before_its_answer() {
        let out = run(vec![
            progress("a", "1"),
            progress("a", "2"),
            progress("a", "3"),
            answer("a"),
        ])
        .await;
        let texts: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a:1", "a:2", "a:3", "a:answer"]);
        for pair in out.windows(2) {
            assert!(pair[1].1 - pair[0].1 >= PACE, "{out:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_flood_keeps_the_first_steps_and_the_latest() {
        let mut input: Vec<_> = (0..100).map(|i| progress("a", &i.to_string())).collect();
        input.push(answer("a"));
        let out = run(input).await;
        let texts: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
        // The first leaves at once, QUEUED wait (the last slot taken by the latest).
        assert_eq!(texts.len(), 1 + QUEUED + 1, "{texts:?}");
        assert_eq!(texts[0], "a:0");
        assert_eq!(texts[QUEUED], "a:99", "the latest step wins: {texts:?}");
        assert_eq!(texts[QUEUED + 1], "a:answer");
        let numbers: Vec<u32> = texts[..=QUEUED]
            .iter()
            .map(|t| t[2..].parse().unwrap())
            .collect();
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "in order: {numbers:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn other_requests_are_not_held_back() {
        let out = run(vec![
            progress("a", "1"),
            progress("a", "2"),
            answer("b"),
            answer("a"),
        ])
        .await;
        let texts: Vec<&str> = out.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["a:1", "b:answer", "a:2", "a:answer"]);
        assert_eq!(out[1].1, Duration::ZERO, "b's answer leaves at once");
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
        tx.send(progress(&huge, "step").into()).await.unwrap();
        tx.send(Outgoing::settling(answer("a"), Probe(said.clone())))
            .await
            .unwrap();
        drop(tx);
        let mut out = std::pin::pin!(paced(rx));
        assert!(told.try_recv().is_err(), "not settled before it leaves");
        let first = out.next().await.unwrap();
        assert_eq!(text(&first), "a:answer");
        assert_eq!(told.try_recv(), Ok("left"));
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
        let mut out = std::pin::pin!(paced(rx));
        assert!(out.next().await.is_none());
        assert_eq!(told.try_recv(), Ok("unsent"));
        assert!(told.try_recv().is_err(), "settled once");
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_dropped_unsent_stays_unanswered() {
        let (said, told) = std::sync::mpsc::channel();
        drop(Outgoing::settling(answer("a"), Probe(said)));
        assert_eq!(told.try_recv(), Ok("unsent"));
        assert!(told.try_recv().is_err(), "settled once");
    }
}
