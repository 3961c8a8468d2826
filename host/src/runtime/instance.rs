//! [`WasmProviderFactory`] and [`WasmProvider`]: the [`Provider`] seam over a
//! WebAssembly component.
//!
//! Each `initialize` makes a fresh `Store` (its own sandbox, memory limit and
//! call context) and instance from the pre-instantiated world; later calls on
//! that provider use that instance. Calls run on `spawn_blocking` threads and
//! are serialised by an async mutex around the instance.
//!
//! How failures map to [`ProviderError`]s:
//! - the guest returns `err(error)` → that error, every field as the guest said;
//! - the guest traps (panic, `unreachable`, stack overflow, ...) → local,
//!   category `internal`, code `provider_trapped`;
//! - the call ran past `call_timeout_secs` → `provider_timeout`;
//! - the guest trapped after the memory limit refused to grow its memory →
//!   `provider_out_of_memory`;
//! - the request was cancelled (azd went away) → `provider_cancelled`.
//!
//! The epoch callback stops running wasm code within a tick of the deadline or
//! the cancellation. A guest blocked inside a host call (a long WASI sleep)
//! cannot be stopped there: 250 ms after the signal the call is answered
//! anyway (same codes, message says "abandoned") and its thread is left to end
//! when the host call returns.
//!
//! Each of these except a guest `err` retires the instance: later calls get
//! `provider_crashed` until a new `initialize` makes a fresh one. Calls before
//! any `initialize` get `provider_not_initialized`.
//!
//! Progress a guest reports reaches azd only during deploy, preview and
//! destroy; elsewhere it goes to the debug log (azd would take it for the answer).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_proto::azdext as pb;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use wasmtime::component::Component;
use wasmtime::{Store, Trap};

use super::bindings::azd::provisioning::types as wit;
use super::bindings::{ProvisioningProvider, ProvisioningProviderPre};
use super::convert;
use super::host::{HostState, StopReason};
use super::manifest::Policy;
use super::sandbox;
use crate::error::ProviderError;
use crate::provider::{CallContext, Progress, Provider, ProviderFactory};

/// What every instance of one provider shares.
pub(crate) struct Shared {
    pub(crate) name: Arc<str>,
    pub(crate) policy: Policy,
    pub(crate) pre: ProvisioningProviderPre<HostState>,
    pub(crate) component: Component,
}

/// Makes fresh [`WasmProvider`]s for one loaded component.
#[derive(Clone)]
pub struct WasmProviderFactory {
    shared: Arc<Shared>,
}

impl WasmProviderFactory {
    pub(crate) fn new(shared: Shared) -> Self {
        Self {
            shared: Arc::new(shared),
        }
    }

    /// A fresh provider (what [`ProviderFactory::create`] returns), typed.
    pub fn create_wasm(&self) -> WasmProvider {
        WasmProvider {
            shared: self.shared.clone(),
            slot: Arc::new(Mutex::new(Slot::Empty)),
        }
    }
}

impl std::fmt::Debug for WasmProviderFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmProviderFactory")
            .field("name", &self.shared.name)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ProviderFactory for WasmProviderFactory {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(Arc::new(self.create_wasm()))
    }
}

/// One running instance (or none yet, or a retired one).
enum Slot {
    /// Not initialized.
    Empty,
    /// Serving calls.
    Live(Box<Live>),
    /// Retired by a trap; holds what happened.
    Crashed(String),
}

struct Live {
    store: Store<HostState>,
    bindings: ProvisioningProvider,
}

/// A provider instance backed by a WebAssembly component.
pub struct WasmProvider {
    shared: Arc<Shared>,
    slot: Arc<Mutex<Slot>>,
}

impl std::fmt::Debug for WasmProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmProvider")
            .field("name", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// A guest call's raw outcome: a trap/host error, or the guest's own result.
type GuestResult<T> = wasmtime::Result<Result<T, wit::Error>>;

impl WasmProvider {
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.shared.policy.call_timeout_secs)
    }

    /// Takes the instance lock, or gives up when the request is cancelled.
    async fn lock(
        &self,
        ctx: &CallContext,
    ) -> Result<tokio::sync::OwnedMutexGuard<Slot>, ProviderError> {
        tokio::select! {
            biased;
            guard = self.slot.clone().lock_owned() => Ok(guard),
            () = ctx.cancel.cancelled() => Err(cancelled_error(&self.shared.name, "waiting for the provider")),
        }
    }

    /// Runs `f` on the live instance on a blocking thread; maps traps and
    /// retires the instance when one happens.
    async fn call<T, R>(
        &self,
        what: &'static str,
        ctx: CallContext,
        f: impl FnOnce(&ProvisioningProvider, &mut Store<HostState>) -> GuestResult<T> + Send + 'static,
        convert: impl FnOnce(T) -> R,
    ) -> Result<R, ProviderError>
    where
        T: Send + 'static,
    {
        let ctx = progress_only_where_azd_expects_it(what, ctx);
        let mut guard = self.lock(&ctx).await?;
        let mut live = match std::mem::replace(&mut *guard, Slot::Empty) {
            Slot::Live(live) => live,
            Slot::Empty => {
                return Err(ProviderError::local(
                    "provider_not_initialized",
                    crate::error::category::INTERNAL,
                    format!(
                        "provider `{}` got `{what}` before `initialize`",
                        self.shared.name
                    ),
                ));
            }
            Slot::Crashed(why) => {
                let err = crashed_error(&self.shared.name, &why);
                *guard = Slot::Crashed(why);
                return Err(err);
            }
        };
        // Until the call returns; stays if this future is dropped mid-call.
        *guard = Slot::Crashed(format!("a `{what}` call was abandoned while it ran"));
        let timeout = self.timeout();
        let cancel = ctx.cancel.clone();
        let handle = tokio::task::spawn_blocking(move || {
            let _io = guest_io().map(tokio::runtime::Runtime::enter);
            let (result, end) = run_bound(&mut live.store, &ctx, timeout, |store| {
                f(&live.bindings, store)
            });
            (live, result, end)
        });
        let (live, result, end) = match await_guest(handle, &cancel, timeout).await {
            Ok(Ok(parts)) => parts,
            Ok(Err(e)) => {
                let err = self.thread_failed(what, &e);
                *guard = Slot::Crashed(err.message.clone());
                return Err(err);
            }
            Err(reason) => {
                let err = self.abandoned_error(what, reason);
                *guard = Slot::Crashed(err.message.clone());
                return Err(err);
            }
        };
        match result {
            Ok(guest) => {
                *guard = Slot::Live(live);
                guest.map(convert).map_err(convert::error_from_wit)
            }
            Err(trap) => {
                let err = self.trap_error(what, &trap, &end);
                *guard = Slot::Crashed(err.message.clone());
                Err(err)
            }
        }
    }

    /// Builds a fresh instance and calls the guest's `initialize`.
    async fn init(
        &self,
        project_path: String,
        options: wit::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        let ctx = progress_only_where_azd_expects_it("initialize", ctx);
        let mut guard = self.lock(&ctx).await?;
        // Whatever was there is replaced: a new layer gets a new instance.
        *guard = Slot::Empty;
        let wasi = sandbox::build_wasi(&self.shared.policy, &project_path, &self.shared.name)?;
        let shared = self.shared.clone();
        let timeout = self.timeout();
        let cancel = ctx.cancel.clone();
        let handle = tokio::task::spawn_blocking(move || {
            let _io = guest_io().map(tokio::runtime::Runtime::enter);
            let memory_bytes = usize::try_from(shared.policy.memory_mb.saturating_mul(1024 * 1024))
                .unwrap_or(usize::MAX);
            let engine = shared.component.engine();
            let mut store = Store::new(
                engine,
                HostState::new(shared.name.clone(), wasi, memory_bytes),
            );
            store.limiter(|s| &mut s.limits);
            store.epoch_deadline_callback(|mut cx| Ok(cx.data_mut().on_epoch()));
            let (result, end) = run_bound(&mut store, &ctx, timeout, |store| {
                let bindings = shared.pre.instantiate(&mut *store)?;
                let guest = bindings.azd_provisioning_provider().call_initialize(
                    store,
                    &project_path,
                    &options,
                )?;
                Ok((bindings, guest))
            });
            (store, result, end)
        });
        let (store, result, end) = match await_guest(handle, &cancel, timeout).await {
            Ok(joined) => joined.map_err(|e| self.thread_failed("initialize", &e))?,
            Err(reason) => {
                let err = self.abandoned_error("initialize", reason);
                *guard = Slot::Crashed(err.message.clone());
                return Err(err);
            }
        };
        match result {
            Ok((bindings, guest)) => {
                *guard = Slot::Live(Box::new(Live { store, bindings }));
                guest.map_err(convert::error_from_wit)
            }
            Err(trap) => {
                let err = self.trap_error("initialize", &trap, &end);
                *guard = Slot::Crashed(err.message.clone());
                Err(err)
            }
        }
    }

    /// The error for a blocking task that did not finish (it panicked or the
    /// runtime is shutting down).
    fn thread_failed(&self, what: &str, e: &tokio::task::JoinError) -> ProviderError {
        ProviderError::internal(
            "provider_trapped",
            format!(
                "provider `{}` failed during `{what}`: the host thread running it failed: {e}",
                self.shared.name
            ),
        )
    }

    /// The error for a guest the host stopped (deadline or cancellation).
    fn stopped_error(&self, what: &str, reason: StopReason) -> ProviderError {
        let name = &self.shared.name;
        match reason {
            StopReason::Cancelled => cancelled_error(name, what),
            StopReason::Timeout => ProviderError::internal(
                "provider_timeout",
                format!(
                    "provider `{name}` did not finish `{what}` within {} s and was stopped",
                    self.shared.policy.call_timeout_secs
                ),
            )
            .with_suggestion(
                "if the provider needs longer, raise `call_timeout_secs` in its provider.toml",
            ),
        }
    }

    /// The error for a guest that did not stop in time because it is blocked
    /// inside a host call; its instance is abandoned.
    fn abandoned_error(&self, what: &str, reason: StopReason) -> ProviderError {
        tracing::warn!(provider = %self.shared.name, call = what, ?reason, "guest blocked in a host call did not stop; instance abandoned");
        let mut err = self.stopped_error(what, reason);
        err.message
            .push_str(" (it was blocked in a host call and has been abandoned)");
        err
    }

    /// The error for a call that did not return normally.
    fn trap_error(&self, what: &str, error: &wasmtime::Error, end: &RunEnd) -> ProviderError {
        let name = &self.shared.name;
        let policy = &self.shared.policy;
        tracing::warn!(provider = %name, call = what, error = ?error, "provider call failed; instance retired");
        let trap = error.downcast_ref::<Trap>();
        if let Some(reason) = end.stopped.filter(|_| trap == Some(&Trap::Interrupt)) {
            return self.stopped_error(what, reason);
        }
        if end.memory_denied {
            return ProviderError::internal(
                "provider_out_of_memory",
                format!(
                    "provider `{name}` ran out of memory during `{what}` (limit {} MiB)",
                    policy.memory_mb
                ),
            )
            .with_suggestion("if the provider needs more, raise `memory_mb` in its provider.toml");
        }
        let cause = match (trap, error.downcast_ref::<wasmtime_wasi::I32Exit>()) {
            (Some(Trap::StackOverflow), _) => "stack overflow (unbounded recursion?)".to_owned(),
            (Some(t), _) => format!("wasm trap: {t}"),
            (None, Some(exit)) => format!("it called exit({})", exit.0),
            (None, None) => first_line(error),
        };
        ProviderError::internal(
            "provider_trapped",
            format!("provider `{name}` crashed during `{what}`: {cause}"),
        )
        .with_suggestion(
            "this is a bug in the provider; run azd with --debug for the guest's backtrace",
        )
    }
}

/// The runtime WASI host calls of guests block on (wasmtime-wasi's sync
/// bindings run their async work on the ambient runtime). It lives as long as
/// the process, so a guest still blocked in a host call when the caller's
/// runtime shuts down is not cut off mid-call (tokio would panic there); `None`
/// if it cannot be built, and then the caller's runtime serves.
fn guest_io() -> Option<&'static tokio::runtime::Runtime> {
    static IO: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    IO.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("wasm-io")
            .enable_all()
            .build()
            .map_err(|e| tracing::warn!(error = %e, "no separate runtime for guest I/O"))
            .ok()
    })
    .as_ref()
}

/// How long a stopped guest may take to unwind before the call is answered
/// anyway (wasm code stops within an epoch tick; this covers a host call).
const STOP_GRACE: Duration = Duration::from_millis(250);

/// Awaits a guest call running on its blocking thread. When the request is
/// cancelled or its deadline passes, the epoch callback interrupts the guest
/// within a tick, and the call's own result says so. A guest blocked inside a
/// host call (a long WASI sleep, say) cannot be interrupted there: after
/// [`STOP_GRACE`] this gives up waiting and returns why (`Err`); the thread
/// ends by itself once the host call returns and the guest is interrupted.
/// (The deadline here uses tokio's clock: under paused test time it passes
/// as soon as the runtime is idle.)
async fn await_guest<T>(
    mut handle: tokio::task::JoinHandle<T>,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<Result<T, tokio::task::JoinError>, StopReason> {
    let reason = tokio::select! {
        joined = &mut handle => return Ok(joined),
        () = cancel.cancelled() => StopReason::Cancelled,
        () = tokio::time::sleep(timeout) => StopReason::Timeout,
    };
    tokio::time::timeout(STOP_GRACE, handle)
        .await
        .map_err(|_| reason)
}

/// How a bound run ended, besides its result.
struct RunEnd {
    /// Why the epoch callback interrupted the guest, if it did.
    stopped: Option<StopReason>,
    /// Whether the memory limit refused a grow during the run.
    memory_denied: bool,
}

/// Runs `f` with `store` bound to the call `ctx`: its progress reporter, its
/// cancellation, and a deadline `timeout` from now.
fn run_bound<T>(
    store: &mut Store<HostState>,
    ctx: &CallContext,
    timeout: Duration,
    f: impl FnOnce(&mut Store<HostState>) -> wasmtime::Result<T>,
) -> (wasmtime::Result<T>, RunEnd) {
    store.data_mut().begin_call(ctx, timeout);
    store.set_epoch_deadline(1);
    let result = f(store);
    let stopped = store.data_mut().end_call();
    let end = RunEnd {
        stopped,
        memory_denied: store.data().limits.memory_denied,
    };
    (result, end)
}

/// azd takes any message during a call other than deploy, preview or destroy
/// for the answer, so a guest's progress there only goes to the log, whatever
/// reporter the caller passed.
fn progress_only_where_azd_expects_it(what: &str, ctx: CallContext) -> CallContext {
    if matches!(what, "deploy" | "preview" | "destroy") {
        ctx
    } else {
        CallContext {
            progress: Progress::log_only(ctx.request_id.clone()),
            ..ctx
        }
    }
}

fn first_line(e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or("unknown failure").to_owned()
}

fn cancelled_error(name: &str, what: &str) -> ProviderError {
    ProviderError::internal(
        "provider_cancelled",
        format!(
            "provider `{name}`: `{what}` was stopped because the request was cancelled (azd went away)"
        ),
    )
}

fn crashed_error(name: &str, why: &str) -> ProviderError {
    ProviderError::internal(
        "provider_crashed",
        format!("provider `{name}` crashed, needs Initialize (earlier: {why})"),
    )
    .with_suggestion("run the azd command again: it initializes a fresh provider instance")
}

#[async_trait]
impl Provider for WasmProvider {
    async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        let options = convert::options_to_wit(&options);
        self.init(project_path.to_owned(), options, ctx).await
    }

    async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        let options = convert::state_options_to_wit(&options);
        self.call(
            "state",
            ctx,
            move |b, s| b.azd_provisioning_provider().call_state(s, &options),
            convert::state_from_wit,
        )
        .await
    }

    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        self.call(
            "deploy",
            ctx,
            |b, s| b.azd_provisioning_provider().call_deploy(s),
            convert::deploy_from_wit,
        )
        .await
    }

    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        self.call(
            "preview",
            ctx,
            |b, s| b.azd_provisioning_provider().call_preview(s),
            convert::preview_from_wit,
        )
        .await
    }

    async fn destroy(
        &self,
        options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        let options = convert::destroy_options_to_wit(&options);
        self.call(
            "destroy",
            ctx,
            move |b, s| b.azd_provisioning_provider().call_destroy(s, options),
            convert::destroy_from_wit,
        )
        .await
    }

    async fn ensure_env(&self, ctx: CallContext) -> Result<(), ProviderError> {
        self.call(
            "ensure-env",
            ctx,
            |b, s| b.azd_provisioning_provider().call_ensure_env(s),
            |()| (),
        )
        .await
    }

    async fn parameters(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        self.call(
            "parameters",
            ctx,
            |b, s| b.azd_provisioning_provider().call_parameters(s),
            convert::parameters_from_wit,
        )
        .await
    }

    async fn planned_outputs(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        self.call(
            "planned-outputs",
            ctx,
            |b, s| b.azd_provisioning_provider().call_planned_outputs(s),
            convert::planned_outputs_from_wit,
        )
        .await
    }
}
