//! Requests that reuse the id of one still in flight, as an azd-role fuzzer
//! sends them: mutated envelopes of every kind (the same samples as
//! [`crate::stream`]) under fresh ids, and about one in twenty under the id of
//! a request the provider is still holding ([`Holds`]), so that its first
//! request is certainly unanswered when the second is read.
//!
//! Everything the extension sends is watched ([`ProviderHandle::watch`]) and
//! each message is put down to the request it belongs to; the campaign fails
//! unless
//! - every request gets exactly one answer: a request under a live id an
//!   error of its own, `duplicate_request_id`, naming the id; the first its
//!   own answer (`invalid_message` exactly when prost cannot read it);
//! - no progress follows a request's answer, and only deploy, preview and
//!   destroy send any;
//! - nothing comes for an id the campaign never sent, and nothing more than
//!   one answer per request (`duplicate_request_id` only where an id was
//!   reused);
//! - the stream serves on: a State sent last is answered.
//!
//! It prints its figures: requests, reuses, refusals, and every way one
//! failed (without an answer, answered twice, progress after its answer).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::ProviderHandle;
use pb::provisioning_message::MessageType;
use prost::Message as _;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::envelopes::Envelopes;
use crate::stream::{Expect, expectation, last_request, local_code};
use crate::{Campaign, Tally};

/// The code of the host's answer to a request under the id of one in flight.
pub const DUPLICATE_CODE: &str = "duplicate_request_id";
/// Inputs in a hundred sent under the id of a request still held.
const REUSE_PERCENT: u32 = 5;
/// Requests awaiting an answer at most (under the host's 64 in flight, so its
/// reader always reads on while the provider holds calls).
const MAX_OUTSTANDING: usize = 32;
/// The longest a call is held (unless a request reused its id).
const MAX_HOLD_MICROS: u64 = 8_000;
/// How long a held call waits for the answer to a request that reused its id
/// before it is let go anyway (a host that never answers it still finishes).
/// Until that answer comes, the campaign cannot know the host has read the
/// reuse: the host reads in order, and a reuse it reads after the first
/// request's answer is a request of its own; so this is long.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long the campaign waits, at its end, for the answers still owed.
const SETTLE: Duration = Duration::from_secs(10);
/// How long it then watches for anything more.
const QUIET: Duration = Duration::from_millis(200);
/// A call is never held longer than this, whatever the campaign does.
const HOLD_LIMIT: Duration = Duration::from_secs(30);

/// The calls a provider holds until the campaign lets them go: its provider
/// calls [`Holds::hold`] with the request's id in every call.
#[derive(Debug, Default)]
pub struct Holds(Mutex<HoldTable>);

#[derive(Debug, Default)]
struct HoldTable {
    held: HashMap<String, Vec<oneshot::Sender<()>>>,
    stopped: bool,
}

impl Holds {
    /// Waits until the campaign lets the call of request `request_id` go (at
    /// once once the campaign is over).
    pub async fn hold(&self, request_id: &str) {
        let (tx, rx) = oneshot::channel();
        {
            let mut table = self.table();
            if table.stopped {
                return;
            }
            table
                .held
                .entry(request_id.to_owned())
                .or_default()
                .push(tx);
        }
        let _ = tokio::time::timeout(HOLD_LIMIT, rx).await;
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HoldTable> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The ids of the calls held now.
    fn held(&self) -> Vec<String> {
        self.table().held.keys().cloned().collect()
    }

    /// Lets every call of request `id` go.
    fn release(&self, id: &str) {
        self.table().held.remove(id);
    }

    /// Lets every call go, now and from now on.
    fn stop(&self) {
        let mut table = self.table();
        table.stopped = true;
        table.held.clear();
    }
}

/// What the campaign knows of one id.
struct IdState {
    /// What the first request under it must get (`Nothing`: it was no request).
    first: Expect,
    /// Its kind sends progress.
    progress: bool,
    /// Its answer came.
    answered: bool,
    /// Requests that reused the id while it was held, not answered yet.
    reusers: u32,
    /// When the last of them was sent.
    reused_at: Option<Instant>,
    /// When its call may be let go, once the provider holds it.
    release_at: Option<Instant>,
    /// The first request's bytes (saved with a failure).
    bytes: Vec<u8>,
}

/// The campaign's figures.
#[derive(Debug, Default)]
struct Figures {
    sent: u64,
    reused: u64,
    refused: u64,
    answered: u64,
    unanswered: u64,
    twice: u64,
    late: u64,
    misplaced: u64,
    stray: u64,
}

/// One run: what was sent, what came back.
struct Run {
    ids: HashMap<String, IdState>,
    watched: mpsc::UnboundedReceiver<pb::ProvisioningMessage>,
    /// Requests sent whose answer has not come.
    outstanding: usize,
    figures: Figures,
    tally: Tally,
}

fn is_progress(m: &pb::ProvisioningMessage) -> bool {
    matches!(m.message_type, Some(MessageType::ProgressMessage(_)))
}

impl Run {
    /// Records input `bytes` sent under `id` (a reuse when the id is known).
    fn sent(&mut self, id: &str, bytes: &[u8], expect: Expect) {
        self.figures.sent += 1;
        if let Some(state) = self.ids.get_mut(id) {
            self.figures.reused += 1;
            if expect != Expect::Nothing {
                state.reusers += 1;
                state.reused_at = Some(Instant::now());
                self.outstanding += 1;
            }
            return;
        }
        // Only what prost reads is decoded (groups nested deep would overflow the stack).
        let progress = expect == Expect::Answer
            && pb::ProvisioningMessage::decode(bytes)
                .ok()
                .and_then(|m| RequestKind::of(&m))
                .is_some_and(RequestKind::sends_progress);
        if expect != Expect::Nothing {
            self.outstanding += 1;
        }
        let state = IdState {
            first: expect,
            progress,
            answered: false,
            reusers: 0,
            reused_at: None,
            release_at: None,
            bytes: bytes.to_vec(),
        };
        self.ids.insert(id.to_owned(), state);
    }

    /// Puts one message the extension sent down to its request.
    fn account(&mut self, m: &pb::ProvisioningMessage) {
        let id = m.request_id.as_str();
        let Some(state) = self.ids.get(id) else {
            self.figures.stray += 1;
            return self
                .tally
                .fail(b"", format!("a message for an id never sent: {m:?}"));
        };
        let bytes = state.bytes.clone();
        if is_progress(m) {
            return self.progress(id, &bytes);
        }
        let error = m.error.as_ref();
        let code = error.map(local_code);
        if code == Some(DUPLICATE_CODE) {
            let message = error.map(|e| e.message.as_str()).unwrap_or_default();
            return self.refusal(id, &bytes, message);
        }
        self.answer(id, &bytes, m, code);
    }

    /// Progress for `id`: only before its first request's answer, and only
    /// for a kind that sends some.
    fn progress(&mut self, id: &str, bytes: &[u8]) {
        let Some(state) = self.ids.get(id) else {
            return;
        };
        if state.answered {
            self.figures.late += 1;
            self.tally
                .fail(bytes, format!("progress for {id} after its answer"));
        } else if !state.progress {
            self.figures.misplaced += 1;
            self.tally
                .fail(bytes, format!("progress for {id}, whose kind sends none"));
        }
    }

    /// A `duplicate_request_id` refusal under `id`: the answer of a request
    /// that reused it, naming it.
    fn refusal(&mut self, id: &str, bytes: &[u8], message: &str) {
        let Some(state) = self.ids.get_mut(id) else {
            return;
        };
        if state.reusers == 0 {
            self.figures.twice += 1;
            return self.tally.fail(
                bytes,
                format!("{DUPLICATE_CODE} for {id}, which no request in flight reused: {message}"),
            );
        }
        state.reusers -= 1;
        self.outstanding -= 1;
        self.figures.refused += 1;
        if !message.contains(&format!("{id:?}")) {
            return self
                .tally
                .fail(bytes, format!("the refusal does not name {id}: {message}"));
        }
        self.tally.record("refused as a duplicate", message);
    }

    /// Any other message under `id` (with the host's `code`, if an error): the
    /// answer of its first request, once.
    fn answer(&mut self, id: &str, bytes: &[u8], m: &pb::ProvisioningMessage, code: Option<&str>) {
        let Some(state) = self.ids.get_mut(id) else {
            return;
        };
        if state.answered || state.first == Expect::Nothing {
            self.figures.twice += 1;
            return self
                .tally
                .fail(bytes, format!("a second answer for {id}: {m:?}"));
        }
        state.answered = true;
        self.outstanding -= 1;
        self.figures.answered += 1;
        match (state.first, code) {
            (Expect::Refused, Some("invalid_message")) => self.tally.record("refused unread", ""),
            (Expect::Answer, Some("invalid_message")) | (Expect::Refused, _) => {
                let want = state.first;
                self.tally
                    .fail(bytes, format!("expected {want:?} for {id}, got {m:?}"));
            }
            (_, code) => self.tally.record("answered", code.unwrap_or("ok")),
        }
    }

    /// Takes in everything the extension has sent so far.
    fn take_arrived(&mut self) {
        while let Ok(m) = self.watched.try_recv() {
            self.account(&m);
        }
    }

    /// Waits up to `within` for one message, and takes in what came.
    async fn wait(&mut self, within: Duration) {
        if let Ok(Some(m)) = tokio::time::timeout(within, self.watched.recv()).await {
            self.account(&m);
        }
        self.take_arrived();
    }

    /// Lets go the held calls whose time has come: never one whose id a request
    /// reused that is still unanswered (but after [`PATIENCE`]).
    fn release_due(&mut self, holds: &Holds, rng: &mut fastrand::Rng) {
        let now = Instant::now();
        for id in holds.held() {
            let Some(state) = self.ids.get_mut(&id) else {
                holds.release(&id);
                continue;
            };
            let at = *state
                .release_at
                .get_or_insert_with(|| now + Duration::from_micros(rng.u64(0..=MAX_HOLD_MICROS)));
            let waiting = state.reusers > 0 && state.reused_at.is_some_and(|t| now < t + PATIENCE);
            if now >= at && !waiting {
                holds.release(&id);
            }
        }
    }

    /// An id whose first request the provider holds, to reuse.
    fn live_id(&self, holds: &Holds, rng: &mut fastrand::Rng) -> Option<String> {
        let live: Vec<String> = holds
            .held()
            .into_iter()
            .filter(|id| self.ids.get(id).is_some_and(|s| !s.answered))
            .collect();
        (!live.is_empty()).then(|| live[rng.usize(..live.len())].clone())
    }

    /// Whether a request that reused a held id awaits its refusal.
    fn awaiting_refusal(&self) -> bool {
        self.ids.values().any(|s| s.reusers > 0 && !s.answered)
    }

    /// Lets the held calls go as they fall due until every request that reused
    /// an id has its refusal (for at most [`SETTLE`]; letting its call go
    /// before would race the host's read of it), then every call; takes in the
    /// answers still owed (for at most [`SETTLE`]), then watches [`QUIET`] for
    /// anything more.
    async fn settle(&mut self, holds: &Holds, rng: &mut fastrand::Rng) {
        let deadline = Instant::now() + SETTLE;
        while self.awaiting_refusal() && Instant::now() < deadline {
            self.release_due(holds, rng);
            self.wait(Duration::from_millis(20)).await;
        }
        holds.stop();
        let deadline = Instant::now() + SETTLE;
        while self.outstanding > 0 && Instant::now() < deadline {
            self.wait(Duration::from_millis(50)).await;
        }
        let quiet = Instant::now() + QUIET;
        while Instant::now() < quiet {
            self.wait(quiet - Instant::now()).await;
        }
    }

    /// Counts what is still owed, prints the figures, and returns the tally.
    fn finish(mut self) -> Tally {
        for (id, state) in &self.ids {
            let owed = u64::from(state.reusers)
                + u64::from(state.first != Expect::Nothing && !state.answered);
            if owed > 0 {
                self.figures.unanswered += owed;
                self.tally.fail(
                    &state.bytes,
                    format!("{owed} request(s) under {id} got no answer (reused {} time(s) while in flight)", state.reusers),
                );
            }
        }
        let f = &self.figures;
        eprintln!(
            "fuzz duplicates: {} sent, {} under the id of a request in flight: {} refused as \
             duplicates, {} other answers; {} requests without an answer, {} answered twice, {} \
             progress after an answer, {} progress where none may go, {} for ids never sent",
            f.sent,
            f.reused,
            f.refused,
            f.answered,
            f.unanswered,
            f.twice,
            f.late,
            f.misplaced,
            f.stray
        );
        self.tally
    }
}

/// The `n`th input under `id`: an Initialize first (so that requests reach the
/// provider), then samples; and whether groups nested deep were added.
fn input(envelopes: &mut Envelopes, n: u64, id: &str, provider: &str) -> (Vec<u8>, bool) {
    if n == 1 {
        let initialize = envelopes.request(RequestKind::Initialize, provider);
        let msg = pb::ProvisioningMessage {
            request_id: id.to_owned(),
            error: None,
            message_type: Some(initialize.into_message()),
        };
        return (msg.encode_to_vec(), false);
    }
    let sample = envelopes.sample(id, provider);
    (sample.bytes, sample.group_depth >= 1000)
}

/// Sends inputs for `provider` until the campaign's time is up, ~5% of them
/// under the id of a request `holds` still holds; checks every request got
/// exactly one answer and nothing followed it, and that the stream serves on.
/// The provider must call [`Holds::hold`] in every call.
pub async fn drive_duplicates(
    campaign: Campaign,
    h: &ProviderHandle,
    provider: &str,
    holds: &Holds,
) -> (Campaign, Vec<Tally>) {
    let mut run = Run {
        ids: HashMap::new(),
        watched: h.watch(),
        outstanding: 0,
        figures: Figures::default(),
        tally: campaign.tally(),
    };
    let mut envelopes = Envelopes::new(campaign.rng(0));
    let mut rng = campaign.rng(1);
    let mut n = 0u64;
    while campaign.running() && !h.is_closed() {
        run.take_arrived();
        run.release_due(holds, &mut rng);
        if run.outstanding >= MAX_OUTSTANDING {
            run.wait(Duration::from_millis(2)).await;
            continue;
        }
        n += 1;
        let reuse = (rng.u32(0..100) < REUSE_PERCENT)
            .then(|| run.live_id(holds, &mut rng))
            .flatten();
        let id = reuse.unwrap_or_else(|| format!("d{n}"));
        let (bytes, deep) = input(&mut envelopes, n, &id, provider);
        let Some(expect) = expectation(&bytes, &id, deep) else {
            continue;
        };
        run.sent(&id, &bytes, expect);
        if let Err(e) = h.push_bytes(bytes.clone().into()).await {
            run.tally.fail(&bytes, format!("sending failed: {e}"));
            break;
        }
    }
    run.settle(holds, &mut rng).await;
    let end = last_request(&campaign, h, provider).await;
    (campaign, vec![run.finish(), end])
}
