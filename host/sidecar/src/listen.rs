//! `azd-wasm-host listen`: what azd runs.
//!
//! Connects to azd, looks the provider over (without compiling it: Ready comes
//! in milliseconds whatever the component's size), registers, calls Ready,
//! and serves until azd ends the stream; meanwhile, on a blocking thread, the
//! component's code is loaded (what its package precompiled; the development
//! CLI compiles what has none) and the first Initialize waits for it. SIGINT and SIGTERM end it the same
//! way: running requests are cancelled, every task winds down, and the process
//! exits 0. azd ending the stream, or dropping the connection, once every
//! request it sent is answered is how every azd command ends: an info line in
//! the log, exit 0. The stream ending while requests are unanswered (azd's
//! command was cancelled, azd was killed, or a request could not be answered)
//! is never a clean end: the running ones are stopped, a warning names each and
//! how long it had run, and the exit code is [`Exit::Unanswered`](azd_wasm_host_core::Exit::Unanswered) (3). azd refusing
//! the stream, ending it because it could not take a message, or a gRPC frame
//! that cannot be read at all (over 16 MiB, or not decompressing), is an error
//! (exit 1). Writes nothing to stdout: azd's terminal is the user's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use azd_wasm_host_core::{ErrorCode, Exit, Provider, ProviderError, ProviderFactory, report};
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_provisioning::{AzdCliTokens, AzdClient, ProvisioningManager, StreamEnd};
use azd_wasm_host_runtime::{self as runtime, BackgroundCompile, Intercept, RuntimeOptions};

use azd_wasm_host_develop::{DevelopmentTools, Recording};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Arguments of `listen`.
#[derive(Debug, clap::Args)]
pub struct ListenArgs {
    /// The provider manifest or component; default: `provider.toml` beside the executable.
    #[arg(long, env = crate::locate::ENV_MANIFEST)]
    pub manifest: Option<PathBuf>,
    /// The provider name, when `--manifest` is a bare component.
    #[arg(long, env = azd_wasm_host_core::settings::PROVIDER_NAME)]
    pub provider_name: Option<String>,
    /// Record the conversation with azd into FILE (a golden conversation that
    /// `azd-wasm-host test` replays): azd's requests, the answers, the calls to
    /// azd's services and the provider's HTTP traffic. Under azd, set
    /// `AZD_WASM_HOST_RECORD=FILE` before the azd command.
    #[arg(long, env = azd_wasm_host_core::settings::RECORD, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

/// Which binary serves azd.
#[derive(Clone)]
pub enum Serving {
    /// The development CLI: a component without precompiled code beside the
    /// binary is compiled (or taken from the compile cache), and its tools
    /// record and replay.
    Development(Arc<dyn DevelopmentTools>),
    /// The shipped sidecar: only the code `package` precompiled beside it runs.
    Sidecar,
}

/// How long `listen` waits, once azd is gone, for a compile still under way.
const COMPILE_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// `listen`: connect, look the provider over, register, Ready, serve; the
/// component compiles meanwhile and the first Initialize waits for it.
pub(crate) async fn listen(
    args: ListenArgs,
    log_file: Option<PathBuf>,
    serving: Serving,
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // Fail fast when azd's variables are missing: someone ran `listen` by hand.
    azd_wasm_host_provisioning::require_env()?;
    let (client, recording) = connect(&args, &serving).await?;
    let (name, factory, compile) = match provider(&args, &client, &serving, recording.as_deref()) {
        Ok(found) => found,
        Err(e) => {
            report_error(&client, &e, log_file.as_deref()).await;
            return Err(e);
        }
    };
    tracing::debug!(provider = %name, elapsed = ?started.elapsed(), "provider looked over; compiling in the background");

    let manager = ProvisioningManager::with_log_file(client, log_file);
    manager
        .register(factory, &name)
        .await
        .context("registering the provider with azd")?;
    let served = serve(&manager, started).await;
    if let Some(compile) = compile {
        compile.finish(COMPILE_GRACE).await;
    }
    // The conversation, written again without any secret it showed (and scanned).
    if let Some(recording) = &recording {
        recording.finish();
    }
    exit_of(served?)
}

/// How `listen` ends, from how the stream with azd ended.
fn exit_of(end: StreamEnd) -> anyhow::Result<ExitCode> {
    match end {
        StreamEnd::Failed(status) => {
            let e = anyhow::anyhow!(
                "the provisioning stream with azd failed: {} ({:?})",
                azd_wasm_host_core::text::clip(
                    status.message(),
                    azd_wasm_host_core::text::QUOTE_MAX
                ),
                status.code()
            );
            tracing::error!("{e}");
            Err(e)
        }
        StreamEnd::Interrupted { cause, unanswered } => {
            // azd's command was cancelled, azd was killed, or a request could not be
            // answered: whichever, azd did not get every answer.
            let list: Vec<String> = unanswered.iter().map(ToString::to_string).collect();
            tracing::warn!(
                "the stream with azd ended with {} request(s) unanswered, which were stopped: {} ({cause})",
                unanswered.len(),
                list.join(", ")
            );
            Ok(Exit::Unanswered.into())
        }
        end @ (StreamEnd::ClosedByAzd | StreamEnd::Shutdown) => {
            tracing::debug!(?end, "stream ended; exiting");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The provider's name, its factory, and the thread compiling its component.
/// The component is only looked over here (milliseconds) and compiles in the
/// background; a component that cannot run still registers under its
/// manifest's name, so that azd shows why at the first Initialize instead of
/// a generic "provider not found".
fn provider(
    args: &ListenArgs,
    client: &AzdClient,
    serving: &Serving,
    recording: Option<&dyn Recording>,
) -> anyhow::Result<(String, Arc<dyn ProviderFactory>, Option<BackgroundCompile>)> {
    let manifest = crate::locate::locate_manifest(args.manifest.as_deref())?;
    let traffic = traffic(serving, recording)?;
    let services: Arc<dyn azd_wasm_host_core::AzdServices> = match recording {
        Some(r) => r.services(client.clone()),
        None => Arc::new(client.clone()),
    };
    // Signature and consent, before anything of the component is loaded.
    let checked = match crate::admission::check(&manifest, args.provider_name.as_deref()) {
        Ok(checked) => checked,
        Err(e) => {
            let refusal = ProviderError::host(crate::ceiling::code_of(&e), format!("{e:#}"));
            return unavailable(&manifest, args, refusal, "the provider may not run here");
        }
    };
    let interactive = !crate::env::no_prompt();
    let opts = RuntimeOptions {
        cache: crate::env::compile_cache(),
        environment: crate::env::azd_environment(),
        services: Some(Arc::clone(&services)),
        tokens: Some(Arc::new(AzdCliTokens::new(crate::env::azd_executable()))),
        interactive,
        shipped_code_only: matches!(serving, Serving::Sidecar),
        signed_code: checked.signed_code,
        traffic,
        folder_bounds: checked.folder_bounds,
    };
    match runtime::prepare_provider(&manifest, args.provider_name.as_deref(), opts) {
        Ok(prepared) => {
            let name = prepared.name().to_owned();
            let (factory, compile) = prepared.compile_in_background();
            let factory = crate::admission::ConsentGate::wrap(
                factory,
                checked.pending,
                services,
                interactive,
                checked.ahead_only,
                &manifest,
            );
            Ok((name, factory, Some(compile)))
        }
        Err(e) => {
            let refusal = ProviderError::host(ErrorCode::InvalidComponent, report::chain(&e))
                .with_suggestion(
                    "run `azd-wasm-host check` on the provider's manifest for details",
                );
            unavailable(
                &manifest,
                args,
                refusal,
                "the provider component cannot run",
            )
        }
    }
}

/// A provider that cannot run here, registered under its manifest's name so that its first
/// Initialize answers with `refusal` (`why` is the log's line).
fn unavailable(
    manifest: &Path,
    args: &ListenArgs,
    refusal: ProviderError,
    why: &str,
) -> anyhow::Result<(String, Arc<dyn ProviderFactory>, Option<BackgroundCompile>)> {
    let name = Manifest::resolve(manifest, args.provider_name.as_deref())?.name;
    tracing::error!(provider = %name, error = %refusal.message, "{why}");
    Ok((name, Arc::new(Unavailable(refusal)), None))
}

/// The HTTP traffic plan: a test's (development `listen` only: the shipped
/// sidecar never reads one), or `--record`'s recording of it.
fn traffic(
    serving: &Serving,
    recording: Option<&dyn Recording>,
) -> anyhow::Result<Option<Arc<dyn Intercept>>> {
    let traffic = match (serving, crate::env::traffic_plan(), recording) {
        (Serving::Development(tools), Some(plan), _) => Some(tools.replay(&plan)?),
        (_, _, Some(recording)) => Some(recording.traffic()?),
        _ => None,
    };
    if let Some(t) = &traffic {
        tracing::debug!(?t, "serving the test's traffic plan");
    }
    Ok(traffic)
}

/// The connection to azd, recording the conversation under `--record`.
async fn connect(
    args: &ListenArgs,
    serving: &Serving,
) -> anyhow::Result<(AzdClient, Option<Box<dyn Recording>>)> {
    let client = AzdClient::from_env().await?;
    Ok(match (&args.record, serving) {
        (Some(path), Serving::Development(tools)) => {
            let recording = start_recording(args, path, tools.as_ref())?;
            (client.with_tap(recording.tap()), Some(recording))
        }
        // `run_listen` handed a recording session to the development CLI.
        (Some(_), Serving::Sidecar) => {
            anyhow::bail!("the packaged sidecar does not record; the development CLI does")
        }
        (None, _) => (client, None),
    })
}

/// Starts `--record`'s conversation at `path`, headed with the provider's name.
fn start_recording(
    args: &ListenArgs,
    path: &Path,
    tools: &dyn DevelopmentTools,
) -> anyhow::Result<Box<dyn Recording>> {
    let manifest = crate::locate::locate_manifest(args.manifest.as_deref())?;
    let name = Manifest::resolve(&manifest, args.provider_name.as_deref())?.name;
    // `{provider}` in the path: one file per provider when several record at once (the name as
    // a file name: only `[A-Za-z0-9._-]` kept, so that no name leads the file elsewhere).
    let path = PathBuf::from(
        path.to_string_lossy()
            .replace("{provider}", &file_name_of(&name)),
    );
    let path = path.as_path();
    let environment = crate::env::azd_environment().filter(|e| !e.is_empty());
    let recording = tools
        .record(
            path,
            &name,
            environment.as_deref(),
            &crate::env::record_safe(),
        )
        .with_context(|| format!("starting the recording {}", path.display()))?;
    tracing::info!(path = %path.display(), "recording the conversation with azd");
    Ok(recording)
}

/// `name` as one file name: characters other than `[A-Za-z0-9._-]` become
/// `_`, and a name of dots only (`.`, `..`) is `_`.
fn file_name_of(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.chars().all(|c| c == '.') {
        "_".to_owned()
    } else {
        safe
    }
}

/// The factory of a provider that cannot run (its component cannot, or it is
/// not trusted): every Initialize answers why.
struct Unavailable(ProviderError);

#[async_trait::async_trait]
impl ProviderFactory for Unavailable {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Err(self.0.clone())
    }
}

/// Serves until the stream ends or a signal stops it; every task it spawns
/// ends first.
async fn serve(manager: &Arc<ProvisioningManager>, started: Instant) -> anyhow::Result<StreamEnd> {
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
    // Folders made for the provider that it left empty go again: a command
    // that changed nothing leaves nothing behind.
    runtime::remove_unused_dirs();
    ready?;
    Ok(end?)
}

/// Tells azd about an error that stops `listen` before it serves (azd keeps it
/// in its debug log), and logs it.
async fn report_error(client: &AzdClient, e: &anyhow::Error, log_file: Option<&Path>) {
    tracing::error!(error = %format!("{e:#}"), "listen cannot start");
    let mut err = ProviderError::host(ErrorCode::ExtensionFailedToStart, format!("{e:#}"));
    if let Some(log) = log_file {
        err = err.with_log_file(log);
    }
    if let Err(status) = client.report_error(err.to_wire()).await {
        tracing::debug!(code = ?status.code(), "azd did not take the error report");
    }
}

/// Cancels `shutdown` on SIGINT or SIGTERM (on Windows: Ctrl-C, Ctrl-Break, or
/// the console closing or the system shutting down);
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

/// Resolves with the name of the first console event that ends a program on
/// Windows: Ctrl-C, Ctrl-Break, the console window closing, or the system
/// shutting down. (azd itself stops an extension by ending its stream, or by
/// terminating the process, which no handler sees.)
#[cfg(windows)]
async fn signal() -> &'static str {
    use tokio::signal::windows;
    let (Ok(mut c), Ok(mut brk), Ok(mut close), Ok(mut shutdown)) = (
        windows::ctrl_c(),
        windows::ctrl_break(),
        windows::ctrl_close(),
        windows::ctrl_shutdown(),
    ) else {
        tracing::debug!("cannot watch for console events; only the stream's end stops listen");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = c.recv() => "Ctrl-C",
        _ = brk.recv() => "Ctrl-Break",
        _ = close.recv() => "console closed",
        _ = shutdown.recv() => "system shutdown",
    }
}

/// Resolves with the name of the first termination signal.
#[cfg(not(any(unix, windows)))]
async fn signal() -> &'static str {
    match tokio::signal::ctrl_c().await {
        Ok(()) => "Ctrl-C",
        Err(_) => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::file_name_of;

    #[test]
    fn a_provider_name_becomes_one_file_name() {
        assert_eq!(file_name_of("storage"), "storage");
        assert_eq!(file_name_of("../../etc/x"), ".._.._etc_x");
        assert_eq!(file_name_of(".."), "_");
        assert_eq!(file_name_of("a/b\\c:d e"), "a_b_c_d_e");
        assert_eq!(file_name_of(""), "_");
        assert!(!file_name_of("../x").contains('/'));
    }
}
