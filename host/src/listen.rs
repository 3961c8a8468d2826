//! `azd-wasm-host listen`: what azd runs.
//!
//! Loads and validates the provider, connects to azd, registers, calls Ready,
//! and serves until azd ends the stream. SIGINT and SIGTERM end it the same
//! way: running requests are cancelled, every task winds down, and the process
//! exits 0. A stream that *fails* (a message that cannot be read, a broken
//! connection that is not azd going away) is reported on stderr and exits
//! non-zero. Writes nothing to stdout: azd's terminal is the user's.

use std::time::Instant;

use anyhow::Context as _;
use azd_wasm_host::runtime::{self, RuntimeOptions};
use azd_wasm_host::{AzdClient, ProvisioningManager, StreamEnd};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cli::ListenArgs;

/// `listen`: load the provider, connect, register, Ready, serve.
pub(crate) async fn listen(args: ListenArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    // Fail fast, before the (possibly slow) component load, when azd's variables
    // are missing: someone ran `listen` by hand.
    azd_wasm_host::require_env()?;
    let loaded = load(args).await?;
    tracing::debug!(provider = %loaded.name, elapsed = ?started.elapsed(), "provider loaded");

    let client = AzdClient::from_env().await?;
    let manager = ProvisioningManager::new(client);
    manager
        .register(loaded.factory.clone(), &loaded.name)
        .await
        .context("registering the provider with azd")?;

    let shutdown = CancellationToken::new();
    let tasks = TaskTracker::new();
    tasks.spawn(shut_down_on_signal(shutdown.clone()));
    let serving = tasks.spawn({
        let manager = manager.clone();
        let shutdown = shutdown.clone();
        async move { manager.receive(shutdown).await }
    });
    tasks.close();
    let ready = manager.ready().await.context("telling azd we are ready");
    if ready.is_ok() {
        tracing::debug!(elapsed = ?started.elapsed(), "ready");
    } else {
        shutdown.cancel();
    }
    let end = serving
        .await
        .context("the dispatcher stopped unexpectedly")?;
    // The signal watcher ends with the stream.
    shutdown.cancel();
    tasks.wait().await;
    ready?;
    match end? {
        StreamEnd::Failed(status) if !azd_went_away(&status) => Err(anyhow::anyhow!(
            "the provisioning stream with azd failed: {} ({:?})",
            status.message(),
            status.code()
        )),
        end => {
            tracing::debug!(?end, "stream ended; exiting");
            Ok(())
        }
    }
}

/// Finds, reads, compiles (or loads from the cache) and validates the
/// provider, off the async runtime's threads.
async fn load(args: ListenArgs) -> anyhow::Result<runtime::LoadedProvider> {
    let manifest = runtime::locate_manifest(args.manifest.as_deref())?;
    tokio::task::spawn_blocking(move || {
        runtime::load_provider(
            &manifest,
            args.provider_name.as_deref(),
            &RuntimeOptions {
                environment: std::env::var(runtime::ENV_ENVIRONMENT).ok(),
                ..RuntimeOptions::default()
            },
        )
    })
    .await
    .context("loading the provider stopped unexpectedly")?
}

/// Whether a failed stream is just azd going away (its process ended, or it
/// cancelled the call), which is how every azd command ends.
fn azd_went_away(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Cancelled | tonic::Code::Unavailable
    )
}

/// Cancels `shutdown` on SIGINT or SIGTERM (Ctrl-C or Ctrl-Break on Windows);
/// returns when either happens or `shutdown` is cancelled by someone else.
async fn shut_down_on_signal(shutdown: CancellationToken) {
    tokio::select! {
        () = shutdown.cancelled() => {}
        signal = signal() => {
            tracing::debug!(%signal, "signal received; shutting down");
            shutdown.cancel();
        }
    }
}

/// Resolves with the name of the first termination signal.
#[cfg(unix)]
async fn signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::debug!("cannot watch for signals; only the stream's end stops listen");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}

/// Resolves with the name of the first termination signal.
#[cfg(not(unix))]
async fn signal() -> &'static str {
    match tokio::signal::ctrl_c().await {
        Ok(()) => "Ctrl-C",
        Err(_) => std::future::pending().await,
    }
}
