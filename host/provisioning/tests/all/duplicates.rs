//! A request that reuses the id of one azd sent before and that is still in
//! flight, against the ProvisioningManager over real loopback gRPC with a
//! native provider that holds every call until the test lets it go: the
//! second request gets exactly one answer of its own (`duplicate_request_id`,
//! naming the id) at once, whatever its kind (every request kind, an envelope
//! with no kind, bytes that cannot be read); the first still gets its one
//! answer, its progress before it and nothing after it. Once the first's answer
//! has left, its id may be used again.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_core::{Provider, ProviderError};
use azd_wasm_host_fuzz::envelopes::Envelopes;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{RequestKind, message_name};
use azd_wasm_host_sim::{ProviderHandle, SimOptions};
use pb::provisioning_message::MessageType;
use prost::Message as _;
use tokio::sync::{Semaphore, mpsc};

use crate::common;

use common::held::{Held, Hold};

const NAME: &str = "held";
const WAIT: Duration = Duration::from_secs(5);
/// How long nothing more may come once every request is answered.
const QUIET: Duration = Duration::from_millis(150);

/// What every instance shares: the calls it started, and the permits that let
/// them answer.
struct Gate {
    started: mpsc::UnboundedSender<String>,
    permits: Semaphore,
}

/// Held calls are let go one permit at a time; every call but the setup
/// Initialize is held.
#[async_trait]
impl Hold for Gate {
    async fn hold(&self, request_id: &str) {
        let _ = self.started.send(request_id.to_owned());
        if let Ok(permit) = self.permits.acquire().await {
            permit.forget();
        }
    }

    fn holds_initialize(&self, project_path: &str) -> bool {
        project_path != "/setup"
    }
}

/// The test's side: azd's handle, what the extension sends, which calls started.
struct Azd {
    h: ProviderHandle,
    gate: Arc<Gate>,
    watched: mpsc::UnboundedReceiver<pb::ProvisioningMessage>,
    started: mpsc::UnboundedReceiver<String>,
    /// Messages that came for another id than the one awaited: every one came
    /// after its request's answer, as the requests are sent one after another.
    others: Vec<pb::ProvisioningMessage>,
    envelopes: Envelopes,
    _served: common::Served,
}

impl Azd {
    async fn start() -> Self {
        let (started_tx, started) = mpsc::unbounded_channel();
        let gate = Arc::new(Gate {
            started: started_tx,
            permits: Semaphore::new(0),
        });
        let shared = gate.clone();
        let factory = move || -> Result<Arc<dyn Provider>, ProviderError> {
            Ok(Arc::new(Held(shared.clone())))
        };
        let served = common::serve(SimOptions::default(), Arc::new(factory), NAME).await;
        let h = served.handle.with_call_timeout(WAIT);
        h.initialize(
            "/setup",
            pb::ProvisioningOptions {
                provider: NAME.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let watched = h.watch();
        Self {
            h,
            gate,
            watched,
            started,
            others: Vec::new(),
            envelopes: Envelopes::new(fastrand::Rng::with_seed(52)),
            _served: served,
        }
    }

    /// A request of `kind` under `id`, as azd writes it.
    fn request(&mut self, kind: RequestKind, id: &str) -> Vec<u8> {
        pb::ProvisioningMessage {
            request_id: id.to_owned(),
            error: None,
            message_type: Some(self.envelopes.request(kind, NAME).into_message()),
        }
        .encode_to_vec()
    }

    /// Sends `bytes` without waiting for an answer.
    async fn push(&self, bytes: Vec<u8>) {
        self.h.push_bytes(bytes.into()).await.unwrap();
    }

    /// Waits until the provider holds the call of request `id`.
    async fn started(&mut self, id: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            match tokio::time::timeout_at(deadline, self.started.recv()).await {
                Ok(Some(started)) if started == id => return,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => panic!("the provider never held {id}"),
            }
        }
    }

    /// The messages for `id`, up to and with the first that is not progress;
    /// `None` for it when none came within `within`.
    async fn until_answer(
        &mut self,
        id: &str,
        within: Duration,
    ) -> (
        Vec<pb::ProvisioningMessage>,
        Option<pb::ProvisioningMessage>,
    ) {
        let deadline = tokio::time::Instant::now() + within;
        let mut progress = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, self.watched.recv()).await {
                Ok(Some(m)) if m.request_id != id => self.others.push(m),
                Ok(Some(m)) if is_progress(&m) => progress.push(m),
                Ok(Some(m)) => return (progress, Some(m)),
                Ok(None) | Err(_) => return (progress, None),
            }
        }
    }

    /// Waits [`QUIET`], then checks nothing came for an id after its answer.
    async fn nothing_after_the_answers(&mut self) {
        let (late, extra) = self.until_answer("", QUIET).await;
        assert!(late.is_empty() && extra.is_none(), "{late:?} {extra:?}");
        assert!(
            self.others.is_empty(),
            "after their answer: {:?}",
            self.others
        );
    }

    /// Lets one held call answer.
    fn release(&self) {
        self.gate.permits.add_permits(1);
    }
}

fn is_progress(m: &pb::ProvisioningMessage) -> bool {
    matches!(m.message_type, Some(MessageType::ProgressMessage(_)))
}

/// The host's code of an error answer, if it is one.
fn code(m: &pb::ProvisioningMessage) -> Option<&str> {
    match &m.error.as_ref()?.source {
        Some(pb::extension_error::Source::LocalError(l)) => Some(&l.code),
        _ => Some(""),
    }
}

/// What the second request under a live id is.
#[derive(Debug, Clone, Copy)]
enum Second {
    /// A request of the same kind.
    Same,
    /// A request of another kind.
    Other,
    /// An envelope with no kind.
    NoKind,
    /// Bytes after the id that are not protobuf.
    Unreadable,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_request_under_a_live_id_gets_its_own_error_and_the_first_its_answer() {
    let mut azd = Azd::start().await;
    for kind in RequestKind::ALL {
        for second in [
            Second::Same,
            Second::Other,
            Second::NoKind,
            Second::Unreadable,
        ] {
            let id = format!("{kind}-{second:?}");
            let first = azd.request(kind, &id);
            azd.push(first).await;
            azd.started(&id).await;
            let bytes = match second {
                Second::Same => azd.request(kind, &id),
                Second::Other => azd.request(RequestKind::State, &id),
                Second::NoKind => pb::ProvisioningMessage {
                    request_id: id.clone(),
                    error: None,
                    message_type: None,
                }
                .encode_to_vec(),
                Second::Unreadable => {
                    let mut b = vec![0x0a, u8::try_from(id.len()).unwrap()];
                    b.extend(id.as_bytes());
                    b.extend([0x32, 0x7f, 0x01]);
                    b
                }
            };
            azd.push(bytes).await;
            // The second request's answer comes while the first is still held.
            let (before, refusal) = azd.until_answer(&id, WAIT).await;
            let refusal = refusal.unwrap_or_else(|| {
                panic!("{id}: the second request under a live id got no answer of its own")
            });
            assert_eq!(
                code(&refusal),
                Some("duplicate_request_id"),
                "{id}: {refusal:?}"
            );
            let message = &refusal.error.as_ref().unwrap().message;
            assert!(message.contains(&format!("{id:?}")), "{id}: {message}");
            assert!(
                before.is_empty() || kind.sends_progress(),
                "{id}: progress from a {kind} request: {before:?}"
            );
            // The first answers once let go, after its own progress.
            azd.release();
            let (progress, answer) = azd.until_answer(&id, WAIT).await;
            let answer = answer.unwrap_or_else(|| panic!("{id}: the first request got no answer"));
            assert_eq!(answer.error, None, "{id}: {answer:?}");
            assert_eq!(
                answer.message_type.as_ref().map(message_name),
                Some(kind.answer_name()),
                "{id}"
            );
            let steps = before.len() + progress.len();
            assert_eq!(
                steps,
                if kind.sends_progress() { 2 } else { 0 },
                "{id}: {before:?} {progress:?}"
            );
        }
    }
    // Nothing more for any id: no third answer, no progress after an answer.
    azd.nothing_after_the_answers().await;
    assert!(!azd._served.serving.is_finished(), "the stream serves on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_is_free_again_once_its_answer_has_left() {
    let mut azd = Azd::start().await;
    for round in 0..2 {
        let request = azd.request(RequestKind::Deploy, "again");
        azd.push(request).await;
        azd.started("again").await;
        azd.release();
        let (progress, answer) = azd.until_answer("again", WAIT).await;
        let answer = answer.unwrap_or_else(|| panic!("round {round}: no answer"));
        assert_eq!(answer.error, None, "round {round}: {answer:?}");
        assert_eq!(progress.len(), 2, "round {round}: {progress:?}");
    }
    // Several requests in flight under different ids are each served.
    for id in ["a", "b", "c"] {
        let request = azd.request(RequestKind::State, id);
        azd.push(request).await;
        azd.started(id).await;
    }
    // Let go together, they answer in any order, one answer each.
    for _ in 0..3 {
        azd.release();
    }
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 3 {
        let m = tokio::time::timeout(WAIT, azd.watched.recv())
            .await
            .expect("every held request answers")
            .expect("the stream is open");
        assert_eq!(m.error, None, "{m:?}");
        assert!(
            answered.insert(m.request_id.clone()),
            "answered twice: {m:?}"
        );
    }
    assert_eq!(answered.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
    azd.nothing_after_the_answers().await;
}
