//! [`WasmProvider`]: the [`Provider`] seam over a WebAssembly component (the
//! factory and what it makes instances from are in `template.rs`).
//!
//! Each `initialize` makes a fresh `Store` (its own sandbox, resource budget
//! and call context) and instance from the pre-instantiated world; later calls
//! on that provider use that instance, one at a time.
//!
//! A guest call is a future on wasmtime's async API, raced against the call's
//! deadline and its cancellation (azd went away). When either wins, the call
//! future is dropped: the guest stops wherever it is, inside a WASI call too,
//! and its `Store` (memory, tables, open files, sockets) is freed at once. No
//! guest code runs on a thread of its own, so nothing is left behind.
//!
//! How failures map to [`ProviderError`]s:
//! - the guest returns `err(error)` → that error, every field as the guest said;
//! - the guest traps (panic, `unreachable`, stack overflow, ...) → local,
//!   category `internal`, code `provider_trapped`;
//! - the call ran past `call_timeout_secs` → `provider_timeout`;
//! - the guest trapped after its budget refused to grow a memory or table →
//!   `provider_out_of_memory`;
//! - the guest handed the host more than [`MAX_GUEST_TRANSFER`] in one piece
//!   (an answer, or a progress or log text) → `answer_too_large`;
//! - the request was cancelled (azd went away) → `provider_cancelled`.
//!
//! Each of these except a guest `err` retires the instance: later calls get
//! `provider_crashed` until a new `initialize` makes a fresh one. Calls before
//! any `initialize` get `provider_not_initialized`.
//!
//! Progress a guest reports reaches azd only during deploy, preview and
//! destroy; elsewhere it goes to the debug log (azd would take it for the answer).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use tokio::sync::Mutex;
use wasmtime::{Store, Trap};

use super::bindings::ProvisioningProvider;
use super::bindings::azd::provisioning0_1_0::types as wit;
use super::convert;
use super::host::HostState;
use super::manifest::Policy;
use super::sandbox;
use super::template::Template;
use crate::error::ProviderError;
use crate::provider::{CallContext, Provider};

/// Most bytes a guest may hand the host in one transfer: the lifted answer of
/// a call (strings and lists, counted as the host's copy), or the arguments of
/// one import call. azd reads at most 4 MiB per answer; this leaves room for
/// the host's own representation of a legitimate one.
pub const MAX_GUEST_TRANSFER: usize = 16 << 20;

/// One running instance (or none yet, or a retired one).
pub(crate) enum InstanceState {
    /// Not initialized.
    Empty,
    /// Serving calls.
    Running(Box<Instance>),
    /// Retired by a fault; holds what happened.
    Retired(String),
}

pub(crate) struct Instance {
    store: Store<HostState>,
    bindings: ProvisioningProvider,
}

/// A provider instance backed by a WebAssembly component.
pub(crate) struct WasmProvider {
    shared: Arc<Template>,
    state: Arc<Mutex<InstanceState>>,
}

impl std::fmt::Debug for WasmProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmProvider")
            .field("name", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// A guest call's raw outcome: a trap or host error, or the guest's own result.
type GuestResult<T> = wasmtime::Result<Result<T, wit::Error>>;

/// A guest call in flight, borrowing the instance it runs on.
type GuestCall<'a, T> = Pin<Box<dyn Future<Output = GuestResult<T>> + Send + 'a>>;

/// Why the host stopped a guest call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    /// The call's deadline (`call_timeout_secs`) passed.
    Timeout,
    /// The request was cancelled (azd went away).
    Cancelled,
}

/// Runs `call` until it finishes, its deadline passes or `ctx` is cancelled.
/// A call that loses the race is dropped here, which stops the guest.
async fn bounded<T>(
    call: impl Future<Output = T>,
    ctx: &CallContext,
    policy: &Policy,
) -> Result<T, StopReason> {
    tokio::select! {
        done = call => Ok(done),
        () = ctx.cancel.cancelled() => Err(StopReason::Cancelled),
        () = tokio::time::sleep(policy.call_timeout()) => Err(StopReason::Timeout),
    }
}

impl WasmProvider {
    pub(crate) fn new(shared: Arc<Template>, state: Arc<Mutex<InstanceState>>) -> Self {
        Self { shared, state }
    }

    /// Takes the instance lock, or gives up when the request is cancelled.
    async fn lock(
        &self,
        ctx: &CallContext,
    ) -> Result<tokio::sync::OwnedMutexGuard<InstanceState>, ProviderError> {
        tokio::select! {
            biased;
            guard = self.state.clone().lock_owned() => Ok(guard),
            () = ctx.cancel.cancelled() => Err(cancelled_error(&self.shared.name, "waiting for the provider")),
        }
    }

    /// Runs the guest call `f` on the instance instance, bounded by the call's
    /// deadline and cancellation; maps faults and retires the instance when one
    /// happens.
    async fn call<T, R>(
        &self,
        kind: RequestKind,
        ctx: CallContext,
        f: impl for<'a> FnOnce(&'a ProvisioningProvider, &'a mut Store<HostState>) -> GuestCall<'a, T>,
        convert: impl FnOnce(T) -> R,
    ) -> Result<R, ProviderError> {
        let what = kind.name();
        let ctx = ctx.for_kind(kind);
        let mut guard = self.lock(&ctx).await?;
        let mut instance = match std::mem::replace(&mut *guard, InstanceState::Empty) {
            InstanceState::Running(instance) => instance,
            InstanceState::Empty => {
                return Err(ProviderError::local(
                    "provider_not_initialized",
                    crate::error::ErrorCategory::Internal,
                    format!(
                        "provider `{}` got `{what}` before `initialize`",
                        self.shared.name
                    ),
                ));
            }
            InstanceState::Retired(why) => {
                let err = crashed_error(&self.shared.name, &why);
                *guard = InstanceState::Retired(why);
                return Err(err);
            }
        };
        // Until the call returns; stays if this future is dropped mid-call.
        *guard = InstanceState::Retired(format!("a `{what}` call was abandoned while it ran"));
        instance.store.data_mut().begin_call(&ctx);
        let outcome = {
            let Instance { store, bindings } = &mut *instance;
            bounded(f(bindings, store), &ctx, &self.shared.policy).await
        };
        match outcome {
            Ok(Ok(guest)) => {
                instance.store.data_mut().end_call();
                let guest = guest.map_err(|e| guest_error(e, instance.store.data_mut()));
                *guard = InstanceState::Running(instance);
                guest.map(convert)
            }
            Ok(Err(trap)) => {
                let err = self.failed_call(what, &trap, instance.store.data_mut());
                *guard = InstanceState::Retired(err.message.clone());
                Err(err)
            }
            Err(reason) => {
                // The call future is gone; so goes the instance and its memory.
                drop(instance);
                let err = self.stopped_error(what, reason);
                *guard = InstanceState::Retired(err.message.clone());
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
        let ctx = ctx.for_kind(RequestKind::Initialize);
        let mut guard = self.lock(&ctx).await?;
        // Whatever was there is replaced: a new layer gets a new instance.
        *guard = InstanceState::Empty;
        let shared = &self.shared;
        let compiled = shared.compiled(&ctx).await?;
        let environment = shared.environment().await?;
        let sandbox = sandbox::build(
            &shared.policy,
            &project_path,
            environment.as_ref(),
            &shared.name,
        )?;
        let mut store = shared.new_store(&compiled, sandbox, environment);
        store.data_mut().begin_call(&ctx);
        let started = {
            let store = &mut store;
            bounded(
                async move {
                    let bindings = compiled.pre.instantiate_async(&mut *store).await?;
                    let guest = bindings
                        .azd_provisioning0_1_0_provider()
                        .call_initialize(&mut *store, &sandbox::guest_form(&project_path), &options)
                        .await?;
                    wasmtime::Result::Ok((bindings, guest))
                },
                &ctx,
                &shared.policy,
            )
            .await
        };
        match started {
            Ok(Ok((bindings, guest))) => {
                store.data_mut().end_call();
                let guest = guest.map_err(|e| guest_error(e, store.data_mut()));
                *guard = InstanceState::Running(Box::new(Instance { store, bindings }));
                guest
            }
            Ok(Err(trap)) => {
                let err = self.failed_call("initialize", &trap, store.data_mut());
                *guard = InstanceState::Retired(err.message.clone());
                Err(err)
            }
            Err(reason) => {
                drop(store);
                let err = self.stopped_error("initialize", reason);
                *guard = InstanceState::Retired(err.message.clone());
                Err(err)
            }
        }
    }

    /// The error for a guest the host stopped (deadline or cancellation).
    fn stopped_error(&self, what: &str, reason: StopReason) -> ProviderError {
        let name = &self.shared.name;
        tracing::debug!(provider = %name, call = what, ?reason, "guest call stopped; instance dropped");
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

    /// The error for a call that trapped, with what the sandbox refused during
    /// it and the guest's last stderr lines.
    fn failed_call(
        &self,
        what: &str,
        trap: &wasmtime::Error,
        state: &mut HostState,
    ) -> ProviderError {
        let memory_denied = state.limits.take_denied();
        self.trap_error(what, trap, memory_denied)
            .with_http_denied(&state.http.take_denied())
            .with_guest_stderr(&state.stderr_tail())
    }

    /// The error for a call that did not return normally; `memory_denied`
    /// says whether the budget refused a grow during the call.
    fn trap_error(
        &self,
        what: &str,
        error: &wasmtime::Error,
        memory_denied: bool,
    ) -> ProviderError {
        let name = &self.shared.name;
        let policy = &self.shared.policy;
        tracing::warn!(provider = %name, call = what, error = ?error, "provider call failed; instance retired");
        if is_transfer_too_large(error) {
            return ProviderError::validation(
                "answer_too_large",
                format!(
                    "provider `{name}` handed the host more than {} MiB at once during `{what}` \
                     (an answer, or a progress or log text); azd accepts at most 4 MiB per answer",
                    MAX_GUEST_TRANSFER >> 20
                ),
            )
            .with_suggestion("Return fewer or smaller outputs, parameters or resources.");
        }
        if memory_denied {
            return ProviderError::internal(
                "provider_out_of_memory",
                format!(
                    "provider `{name}` ran out of memory during `{what}` (limit {} MiB)",
                    policy.memory_mb
                ),
            )
            .with_suggestion("if the provider needs more, raise `memory_mb` in its provider.toml");
        }
        let trap = error.downcast_ref::<Trap>();
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

/// Whether wasmtime refused to copy more than [`MAX_GUEST_TRANSFER`] out of
/// the guest (its "hostcall fuel" ran out). wasmtime keeps that error type
/// private, so its text is what identifies it.
fn is_transfer_too_large(error: &wasmtime::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .to_string()
            .contains("fuel allocated for hostcalls has been exhausted")
    })
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
            RequestKind::State,
            ctx,
            move |b, s| {
                Box::pin(async move {
                    b.azd_provisioning0_1_0_provider()
                        .call_state(s, &options)
                        .await
                })
            },
            convert::state_from_wit,
        )
        .await
    }

    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        self.call(
            RequestKind::Deploy,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_deploy(s)),
            convert::deploy_from_wit,
        )
        .await
    }

    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        self.call(
            RequestKind::Preview,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_preview(s)),
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
            RequestKind::Destroy,
            ctx,
            move |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_destroy(s, options)),
            convert::destroy_from_wit,
        )
        .await
    }

    async fn ensure_env(&self, ctx: CallContext) -> Result<(), ProviderError> {
        self.call(
            RequestKind::EnsureEnv,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_ensure_env(s)),
            |()| (),
        )
        .await
    }

    async fn parameters(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        self.call(
            RequestKind::Parameters,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_parameters(s)),
            convert::parameters_from_wit,
        )
        .await
    }

    async fn planned_outputs(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        self.call(
            RequestKind::PlannedOutputs,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_planned_outputs(s)),
            convert::planned_outputs_from_wit,
        )
        .await
    }
}

/// An error the guest returned, with the HTTP origins the sandbox refused it
/// during the call.
fn guest_error(e: wit::Error, state: &mut HostState) -> ProviderError {
    convert::error_from_wit(e).with_http_denied(&state.http.take_denied())
}
