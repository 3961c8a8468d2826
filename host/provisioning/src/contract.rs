//! Which of azd's two contracts this process speaks, decided once.
//!
//! azd's versioned contract (expected in a release after 1.34) serves the extension services
//! under `azd.extensions.v1`; every azd released so far (1.31.x up to 1.34.0) only under
//! `azdext`, which the versioned contract keeps as a bridge that counts every
//! call and is to be removed (`azd_wasm_host_proto::contract`). The first call of the
//! process goes under `azd.extensions.v1`; azd versions that do not know it answer
//! `UNIMPLEMENTED` at once, and the call goes again under `azdext`. Whatever answered is
//! kept ([`Negotiated`]) and every later call of every service follows it, so the choice
//! costs at most one round trip, once, and only against an older azd.
//!
//! - [`OnContract`]: a connection whose calls go under one contract (the generated clients
//!   write `azdext` paths; it moves each to the contract's package).
//! - [`Replayable`]: the provisioning stream's outbound messages, given again to the
//!   second attempt when the first was refused (what the first took is not lost).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use azd_wasm_host_proto::Contract;
use futures::Stream;
use parking_lot::Mutex;

/// The contract azd answered under, once known.
#[derive(Debug, Default)]
pub(crate) struct Negotiated(OnceLock<Contract>);

impl Negotiated {
    /// The contract, if a call has decided it.
    pub(crate) fn get(&self) -> Option<Contract> {
        self.0.get().copied()
    }

    /// Records that azd answered under `contract` (the first decision stays); `since` is
    /// when the first attempt started, for the log.
    pub(crate) fn decide(&self, contract: Contract, since: Instant) -> Contract {
        let decided = *self.0.get_or_init(|| contract);
        if decided == contract {
            match contract {
                Contract::V1 => tracing::info!(%contract, "azd serves the versioned contract"),
                Contract::Legacy => tracing::info!(
                    %contract,
                    fallback_micros = since.elapsed().as_micros(),
                    "azd does not serve azd.extensions.v1: every call goes under azdext"
                ),
            }
        }
        decided
    }
}

/// Whether azd's refusal of a call under [`Contract::V1`] means it does not serve that
/// contract: gRPC's answer to an unknown service.
pub(crate) fn not_served(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unimplemented
}

/// A connection whose calls go under one contract: each request's path, written by the
/// generated clients under `azdext`, is moved to `contract`'s package.
#[derive(Debug, Clone)]
pub(crate) struct OnContract<S> {
    inner: S,
    contract: Contract,
}

impl<S> OnContract<S> {
    pub(crate) fn new(inner: S, contract: Contract) -> Self {
        Self { inner, contract }
    }
}

impl<S, B> tower_service::Service<http::Request<B>> for OnContract<S>
where
    S: tower_service::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        if let Some(uri) = self.contract.move_uri(request.uri()) {
            *request.uri_mut() = uri;
        }
        self.inner.call(request)
    }
}

/// The outbound messages of a stream, taken by one attempt to open it and, if that
/// attempt is refused, by a second one that is first given what the first took.
pub(crate) struct Replayable<T, S> {
    shared: Arc<Mutex<Shared<T, S>>>,
}

struct Shared<T, S> {
    source: S,
    /// What the current attempt took, while it may still be refused.
    taken: Vec<T>,
    /// Whether `taken` is kept (until the stream opened or the second attempt started).
    keeping: bool,
    /// The attempt allowed to take messages (1 or 2).
    current: u8,
}

/// One attempt's view of a [`Replayable`]: it ends once a later attempt started.
pub(crate) struct Attempt<T, S> {
    shared: Arc<Mutex<Shared<T, S>>>,
    number: u8,
    replay: VecDeque<T>,
}

impl<T: Clone, S: Stream<Item = T> + Unpin> Replayable<T, S> {
    pub(crate) fn new(source: S) -> Self {
        Self {
            shared: Arc::new(Mutex::new(Shared {
                source,
                taken: Vec::new(),
                keeping: true,
                current: 1,
            })),
        }
    }

    /// The first attempt's messages.
    pub(crate) fn first(&self) -> Attempt<T, S> {
        Attempt {
            shared: Arc::clone(&self.shared),
            number: 1,
            replay: VecDeque::new(),
        }
    }

    /// The second attempt's: what the first took, then the rest. The first ends.
    pub(crate) fn second(&self) -> Attempt<T, S> {
        let mut shared = self.shared.lock();
        shared.current = 2;
        shared.keeping = false;
        Attempt {
            shared: Arc::clone(&self.shared),
            number: 2,
            replay: std::mem::take(&mut shared.taken).into(),
        }
    }

    /// The first attempt opened the stream: nothing need be kept any more.
    pub(crate) fn opened(&self) {
        let mut shared = self.shared.lock();
        shared.keeping = false;
        shared.taken.clear();
    }
}

impl<T: Clone + Unpin, S: Stream<Item = T> + Unpin> Stream for Attempt<T, S> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        let mut shared = this.shared.lock();
        if shared.current != this.number {
            return Poll::Ready(None);
        }
        if let Some(item) = this.replay.pop_front() {
            return Poll::Ready(Some(item));
        }
        let next = Pin::new(&mut shared.source).poll_next(cx);
        if let Poll::Ready(Some(item)) = &next
            && shared.keeping
        {
            shared.taken.push(item.clone());
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;

    use super::*;

    #[tokio::test]
    async fn the_second_attempt_gets_what_the_first_took_then_the_rest() {
        let replay = Replayable::new(futures::stream::iter(1..=5));
        let mut first = replay.first();
        assert_eq!(first.next().await, Some(1));
        assert_eq!(first.next().await, Some(2));
        let second = replay.second();
        assert_eq!(first.next().await, None, "the first attempt ends");
        assert_eq!(second.collect::<Vec<_>>().await, vec![1, 2, 3, 4, 5]);
    }

    #[tokio::test]
    async fn once_opened_nothing_is_kept() {
        let replay = Replayable::new(futures::stream::iter(1..=3));
        let mut first = replay.first();
        assert_eq!(first.next().await, Some(1));
        replay.opened();
        assert_eq!(first.next().await, Some(2));
        assert!(replay.shared.lock().taken.is_empty());
    }

    #[test]
    fn paths_are_moved_to_the_contract() {
        use tower_service::Service as _;
        #[derive(Clone)]
        struct Echo;
        impl tower_service::Service<http::Request<()>> for Echo {
            type Response = String;
            type Error = ();
            type Future = std::future::Ready<Result<String, ()>>;
            fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ()>> {
                Poll::Ready(Ok(()))
            }
            fn call(&mut self, r: http::Request<()>) -> Self::Future {
                std::future::ready(Ok(r.uri().to_string()))
            }
        }
        let request = || {
            http::Request::builder()
                .uri("http://127.0.0.1:5/azdext.EnvironmentService/GetValue")
                .body(())
                .unwrap()
        };
        let v1 = OnContract::new(Echo, Contract::V1)
            .call(request())
            .into_inner();
        assert_eq!(
            v1.unwrap(),
            "http://127.0.0.1:5/azd.extensions.v1.EnvironmentService/GetValue"
        );
        let legacy = OnContract::new(Echo, Contract::Legacy)
            .call(request())
            .into_inner();
        assert_eq!(
            legacy.unwrap(),
            "http://127.0.0.1:5/azdext.EnvironmentService/GetValue"
        );
    }
}
