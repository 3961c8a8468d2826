//! An instance made ahead of azd's first Initialize ([`Ahead`]), sealed
//! ([`Seal`], in `seal.rs`) until then.
//!
//! azd starts the extension, waits for Ready, and sends the first Initialize
//! later: it reads the project and the environment meanwhile. Most of what that
//! Initialize costs does not depend on what it carries: the store, the fixed
//! part of the sandbox, instantiating the component (which runs its start
//! code), and, in a new process, the first touch of the code and memory image
//! involved. So once the manager has told azd it is ready, the template makes
//! one instance on the runtime's thread while it is idle, and the first
//! Initialize takes it (waiting if it is still being made), opens the granted
//! directories of the project it names, unseals it and calls the guest's
//! `initialize`.
//!
//! While it is made the instance knows neither the project nor the
//! environment, so it is sealed: the granted directories, azd's services,
//! access tokens, HTTP and sockets all refuse it, and a refusal breaks the
//! seal. A broken seal, a trap, or no instance made yet all end the same way:
//! Initialize makes its own instance, exactly as it would without one made
//! ahead. Nothing a sealed guest does is seen outside it but its log lines; a
//! provider whose start code reaches outside runs that code twice, the first
//! time refused. Start code stopped at the call deadline without reaching
//! outside is the exception: it would run as long again for nothing, so the
//! first Initialize answers with that timeout instead of waiting a second
//! deadline out.
//!
//! One instance is made ahead per process, for the first Initialize (the one
//! that waits while azd's user watches); consent still pending (`listen`'s
//! trust gate) makes none.

use std::sync::Arc;

use azd_wasm_host_core::{CallContext, Progress, ProviderError};
use tokio_util::sync::CancellationToken;
use wasmtime::Store;

use crate::bindings::ProvisioningProvider;
use crate::instance::failure::start_code_timed_out;
use crate::instance::seal::Seal;
use crate::instance::store::HostState;
use crate::instance::template::Template;
use crate::sandbox::Grants;
use crate::sandbox::{StopReason, bounded};

/// An instantiated component, sealed, waiting for its Initialize.
pub(crate) struct Spare {
    store: Store<HostState>,
    bindings: ProvisioningProvider,
    seal: Seal,
}

impl Spare {
    /// The instance, unsealed: everything its policy grants is reachable now.
    pub(crate) fn unseal(self) -> (Store<HostState>, ProvisioningProvider) {
        self.seal.open();
        (self.store, self.bindings)
    }
}

/// Where the instance made ahead waits (one per factory).
#[derive(Default)]
pub(crate) struct Ahead(tokio::sync::Mutex<Slot>);

#[derive(Default)]
enum Slot {
    /// Nothing made or taken yet.
    #[default]
    Open,
    /// Made, waiting for the first Initialize.
    Made(Box<Spare>),
    /// The start code ran until the call deadline: the first Initialize
    /// answers with this error.
    TimedOut(ProviderError),
    /// Taken, or never to be made.
    Done,
}

impl Ahead {
    /// The instance made ahead for `provider`, if there is one to take; waits
    /// while it is being made (unless `ctx` is cancelled). An error if its
    /// start code ran past the call deadline. After this, none is made.
    pub(crate) async fn take(
        &self,
        provider: &str,
        ctx: &CallContext,
    ) -> Result<Option<Spare>, ProviderError> {
        let mut slot = tokio::select! {
            biased;
            slot = self.0.lock() => slot,
            () = ctx.cancel.cancelled() => {
                return Err(crate::instance::failure::cancelled(provider, "waiting for the provider"));
            }
        };
        match std::mem::replace(&mut *slot, Slot::Done) {
            Slot::Made(spare) => Ok(Some(*spare)),
            Slot::TimedOut(err) => Err(err),
            Slot::Open | Slot::Done => Ok(None),
        }
    }

    /// Makes, from `template`, the instance the first Initialize takes,
    /// unless one was made or taken already or the component cannot run
    /// (Initialize says why).
    pub(crate) async fn make(self: Arc<Self>, template: Arc<Template>) {
        let ctx = CallContext {
            request_id: "ahead".to_owned(),
            sequence: 0,
            cancel: CancellationToken::new(),
            progress: Progress::log_only("ahead"),
        };
        let Ok(compiled) = template.compiled(&ctx).await else {
            return;
        };
        let mut slot = self.0.lock().await;
        if !matches!(*slot, Slot::Open) {
            return;
        }
        *slot = Slot::Done;
        let started = std::time::Instant::now();
        let seal = Seal::closed();
        let mut store = template.new_store(&compiled, Grants::default(), seal.clone());
        store.data_mut().begin_call(&ctx);
        let made = bounded(
            compiled.pre.instantiate_async(&mut store),
            &ctx,
            &template.policy,
        )
        .await;
        store.data_mut().end_call();
        let why = match made {
            Ok(Ok(bindings)) if !seal.broken() => {
                tracing::debug!(
                    provider = %template.name,
                    micros = started.elapsed().as_micros(),
                    "instance made ahead of the first initialize"
                );
                *slot = Slot::Made(Box::new(Spare {
                    store,
                    bindings,
                    seal,
                }));
                return;
            }
            Ok(Ok(_)) => "its start code reached outside it".to_owned(),
            Ok(Err(trap)) => format!("{trap:#}"),
            // Refused while sealed, it may have waited for what it will get.
            Err(StopReason::Timeout) if !seal.broken() => {
                let err = start_code_timed_out(&template.name, &template.policy);
                tracing::debug!(provider = %template.name, "start code ran past the call deadline; the first initialize answers with it");
                *slot = Slot::TimedOut(err);
                return;
            }
            Err(reason) => format!("{reason:?}, its seal broken: {}", seal.broken()),
        };
        tracing::debug!(provider = %template.name, %why, "no instance made ahead; the first initialize makes its own");
    }
}
