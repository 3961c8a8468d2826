//! [`SimAzd`]: the simulated azd itself, its gRPC server on loopback, the
//! extensions it starts and the providers they register.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_proto::MAX_MESSAGE_BYTES;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::server::environment_service_server::EnvironmentServiceServer;
use azd_wasm_host_proto::server::extension_service_server::ExtensionServiceServer;
use azd_wasm_host_proto::server::prompt_service_server::PromptServiceServer;
use futures::TryStreamExt as _;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::TcpListenerStream;
use tokio_util::sync::CancellationToken;
use tonic::codec::CompressionEncoding;

use crate::auth::{self, ExtensionClaims, TOKEN_LIFETIME};
use crate::env_prompt::{EnvironmentSvc, PromptSvc};
use crate::error::SimError;
use crate::generated::provisioning_service_server::ProvisioningServiceServer;
use crate::options::SimOptions;
use crate::process::{ExtensionProcess, SpawnOptions, ready_timeout_from_env};
use crate::state::SimEnvironment;
use crate::streams::{AzdState, ExtensionSvc, ProvisioningSvc};
use crate::{contract, cut, handle::ProviderHandle};

/// How long [`SimAzd::shutdown`] waits for the server and the stream readers.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// HTTP/2 flow-control windows of the simulated azd (see [`SimAzd::start`]).
const STREAM_WINDOW: u32 = 256 * 1024;
const CONNECTION_WINDOW: u32 = 32 * 1024 * 1024;

/// One simulated azd run: a gRPC server on loopback and its signing key.
pub struct SimAzd {
    shared: Arc<AzdState>,
    opts: SimOptions,
    address: String,
    traceparent: String,
    stop: CancellationToken,
    /// Fails every connection when cancelled ([`SimAzd::cut_connections`]).
    cut: CancellationToken,
    /// Every call made, under whichever contract.
    calls: Arc<contract::CallLog>,
    server: Option<JoinHandle<Result<(), tonic::transport::Error>>>,
}

impl std::fmt::Debug for SimAzd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimAzd")
            .field("address", &self.address)
            .field("extension_id", &self.opts.extension_id)
            .finish_non_exhaustive()
    }
}

impl SimAzd {
    /// Binds `127.0.0.1:0` and serves `ProvisioningService` and `ExtensionService`.
    /// Long because it is the server's whole configuration (the services, azd's message
    /// limit, the flow-control windows, the contract layer), each with its reason beside it.
    pub async fn start(opts: SimOptions) -> Result<SimAzd, SimError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(SimError::Bind)?;
        let port = listener.local_addr().map_err(SimError::Bind)?.port();
        let address = format!("127.0.0.1:{port}");
        let key = auth::TokenKey::random(&address)?;
        let shared = Arc::new(AzdState::new(
            key,
            opts.extension_id.clone(),
            opts.environment.clone(),
        ));

        let provisioning = ProvisioningServiceServer::new(ProvisioningSvc(Arc::clone(&shared)))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES)
            .accept_compressed(CompressionEncoding::Gzip);
        let extension = ExtensionServiceServer::new(ExtensionSvc(Arc::clone(&shared)))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES)
            .accept_compressed(CompressionEncoding::Gzip);
        // Small messages both ways: without TCP_NODELAY, Nagle's algorithm adds delays.
        let cut = CancellationToken::new();
        let incoming = TcpListenerStream::new(listener).and_then({
            let cut = cut.clone();
            move |s| {
                let cut = cut.clone();
                async move {
                    s.set_nodelay(true)?;
                    Ok(cut::Cuttable::new(s, &cut))
                }
            }
        });
        let stop = CancellationToken::new();
        let calls = Arc::new(contract::CallLog::default());
        let server = tokio::spawn(
            tonic::transport::Server::builder()
                // h2 (0.4.20 on) closes a connection with ENHANCE_YOUR_CALM once the small
                // DATA frames it holds unread cost more than half the connection window
                // (about 250 bytes of budget per small frame). grpc-go's client, as in azd's
                // Go SDK, sends each progress message in its own frame, so a flood of them
                // tripped that with the default windows; azd's own server (grpc-go) has no
                // such rule. A stream window of 256 KiB holds at most ~44k frames of 6 bytes
                // (≈ 11 MB of budget), under the 16 MiB that a 32 MiB connection window gives.
                .initial_stream_window_size(STREAM_WINDOW)
                .initial_connection_window_size(CONNECTION_WINDOW)
                .layer(contract::ContractLayer {
                    mode: opts.contract,
                    log: Arc::clone(&calls),
                })
                .add_service(provisioning)
                .add_service(extension)
                .add_service(EnvironmentServiceServer::new(EnvironmentSvc(Arc::clone(
                    &shared,
                ))))
                .add_service(PromptServiceServer::new(PromptSvc {
                    shared: Arc::clone(&shared),
                    prompter: opts.prompter.clone(),
                    one_at_a_time: Arc::default(),
                }))
                .serve_with_incoming_shutdown(incoming, stop.clone().cancelled_owned()),
        );
        tracing::debug!(%address, "sim azd listening");
        Ok(SimAzd {
            shared,
            opts,
            address,
            traceparent: auth::random_traceparent()?,
            stop,
            cut,
            calls,
            server: Some(server),
        })
    }

    /// `127.0.0.1:PORT`, the `AZD_SERVER` value.
    pub fn address(&self) -> String {
        self.address.clone()
    }

    /// The options this azd was started with.
    pub fn options(&self) -> &SimOptions {
        &self.opts
    }

    /// A valid token for the configured extension id and capabilities (1 hour, as azd).
    pub fn token(&self) -> String {
        let caps: Vec<&str> = self.opts.capabilities.iter().map(String::as_str).collect();
        self.token_with(&self.opts.extension_id, &caps, TOKEN_LIFETIME)
    }

    /// A token signed with this azd's key for any extension id, capabilities and lifetime.
    pub fn token_with(
        &self,
        extension_id: &str,
        capabilities: &[&str],
        lifetime: Duration,
    ) -> String {
        let mut claims = ExtensionClaims::new(&self.address, extension_id, capabilities, lifetime);
        claims.traceparent = self.traceparent.clone();
        self.sign(&claims)
    }

    /// Signs arbitrary claims with this azd's key (e.g. an expired token or another
    /// audience, to test refusals).
    pub fn sign(&self, claims: &ExtensionClaims) -> String {
        self.shared.key.sign(claims)
    }

    /// The environment azd gives an extension: `AZD_SERVER`, `AZD_ACCESS_TOKEN`,
    /// `AZD_NO_PROMPT=true`, `FORCE_COLOR=1`, `TRACEPARENT`. (`AZD_CWD`, `AZD_ENVIRONMENT` and
    /// `AZD_DEBUG` depend on the project and flags: set them on the command yourself.)
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AZD_SERVER".into(), self.address()),
            ("AZD_ACCESS_TOKEN".into(), self.token()),
            ("AZD_NO_PROMPT".into(), "true".into()),
            ("FORCE_COLOR".into(), "1".into()),
            ("TRACEPARENT".into(), self.traceparent.clone()),
        ]
    }

    /// Starts `cmd listen` as azd does (its environment plus [`SimAzd::env`]; variables the
    /// caller set on `cmd` win; stdin null; stdout and stderr as the caller set them) and waits for `ExtensionService/Ready` with
    /// azd's timeout ([`ready_timeout_from_env`]). On timeout or early exit the child is killed
    /// and the error says why.
    pub async fn spawn_extension(
        &self,
        cmd: tokio::process::Command,
    ) -> Result<ExtensionProcess, SimError> {
        self.spawn_extension_with(cmd, SpawnOptions::default())
            .await
    }

    /// [`SimAzd::spawn_extension`] with options (e.g. stderr capture).
    pub async fn spawn_extension_with(
        &self,
        mut cmd: tokio::process::Command,
        opts: SpawnOptions,
    ) -> Result<ExtensionProcess, SimError> {
        self.prepare_command(&mut cmd, &opts);
        let program = cmd.as_std().get_program().to_string_lossy().into_owned();
        let mut ready = self.shared.ready.subscribe();
        let before = *ready.borrow_and_update();
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(source) => return Err(SimError::Start { program, source }),
        };
        let mut process = ExtensionProcess::new(child, opts.capture_stderr);
        let timeout = opts.ready_timeout.unwrap_or_else(ready_timeout_from_env);
        let exited = tokio::select! {
            r = ready.wait_for(|n| *n > before) => match r {
                Ok(_) => return Ok(process),
                // The sender lives in `shared`, which we hold: cannot happen; treat as timeout.
                Err(_) => None,
            },
            status = process.child_mut().wait() => Some(status),
            () = tokio::time::sleep(timeout) => None,
        };
        let Some(status) = exited else {
            let _ = process.kill().await;
            let whose = if opts.ready_timeout.is_some() {
                "the caller's limit"
            } else {
                "azd's limit; AZD_EXT_TIMEOUT=<seconds> changes it"
            };
            return Err(SimError::NotReady {
                program,
                timeout,
                whose,
                stderr: process.stderr_suffix(),
            });
        };
        // Let the stderr reader drain what the process wrote before exiting.
        let _ = process.wait(Duration::from_secs(2)).await;
        let status = match status {
            Ok(s) => s.to_string(),
            Err(e) => format!("unknown status ({e})"),
        };
        Err(SimError::ExitedBeforeReady {
            program,
            status,
            stderr: process.stderr_suffix(),
        })
    }

    /// Makes `cmd` what azd runs: `listen` (and `--debug`), azd's environment
    /// (variables the caller set win), stdin closed, killed when dropped.
    fn prepare_command(&self, cmd: &mut tokio::process::Command, opts: &SpawnOptions) {
        let mut env = self.env();
        if opts.debug {
            env.push(("AZD_DEBUG".into(), "true".into()));
        }
        if let Some(cwd) = &opts.cwd {
            env.push(("AZD_CWD".into(), cwd.to_string_lossy().into_owned()));
        }
        if let Some(name) = &opts.environment {
            env.push(("AZD_ENVIRONMENT".into(), name.clone()));
        }
        let caller_set: HashSet<&OsStr> = cmd.as_std().get_envs().map(|(k, _)| k).collect();
        let ours: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| !caller_set.contains(OsStr::new(k)))
            .collect();
        cmd.arg("listen");
        if opts.debug {
            cmd.arg("--debug");
        }
        cmd.envs(ours).stdin(Stdio::null()).kill_on_drop(true);
        if opts.capture_stderr {
            cmd.stderr(Stdio::piped());
        }
    }

    /// Waits until some extension has called `ExtensionService/Ready` (for extensions run in
    /// process).
    pub async fn wait_ready(&self, timeout: Duration) -> Result<(), SimError> {
        let mut ready = self.shared.ready.subscribe();
        match tokio::time::timeout(timeout, ready.wait_for(|n| *n > 0)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) | Err(_) => Err(SimError::NoReady(timeout)),
        }
    }

    /// The environment as it is now (with what the extension set).
    pub fn environment(&self) -> Option<SimEnvironment> {
        self.shared.environment.lock().clone()
    }

    /// The path of every call and stream extensions made, in order, under whichever
    /// contract (`/azd.extensions.v1.ExtensionService/Ready`, …), refused ones included.
    pub fn calls(&self) -> Vec<String> {
        self.calls.paths()
    }

    /// How many calls and streams came under `azdext`: what the versioned contract's bridge
    /// counts as `extension.grpc.legacy_call_count`.
    pub fn legacy_calls(&self) -> usize {
        self.calls.legacy_calls()
    }

    /// How many provisioning streams extensions have opened so far.
    pub fn streams_opened(&self) -> u64 {
        self.shared.streams_opened()
    }

    /// How many times `ExtensionService/Ready` was called.
    pub fn ready_calls(&self) -> u64 {
        *self.shared.ready.borrow()
    }

    /// Waits until a provider called `name` is registered and returns its handle.
    pub async fn provider(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<ProviderHandle, SimError> {
        let mut changed = self.shared.registry_changed.subscribe();
        let wait = async {
            loop {
                changed.borrow_and_update();
                if let Some(h) = self.shared.provider(name) {
                    return Some(h);
                }
                if changed.changed().await.is_err() {
                    return None;
                }
            }
        };
        match tokio::time::timeout(timeout, wait).await {
            Ok(Some(h)) => Ok(h),
            Ok(None) | Err(_) => Err(SimError::NoProvider {
                name: name.to_owned(),
                timeout,
                registered: self.registrations(),
            }),
        }
    }

    /// Ends every open stream from azd's side (the extension sees EOF): "azd goes away".
    /// Waiting calls fail with [`CallError::StreamClosed`].
    pub fn close_streams(&self) {
        self.shared.close_streams();
    }

    /// Drops every connection at once, as the real azd's do when its process ends after
    /// a command: no stream is closed first and nothing more is answered. Later
    /// connections are dropped as they come.
    pub fn cut_connections(&self) {
        self.cut.cancel();
    }

    /// Errors the extension reported through `ExtensionService/ReportError`.
    pub fn reported_errors(&self) -> Vec<pb::ExtensionError> {
        self.shared.reported_errors()
    }

    /// Names of the registered providers, in registration order. Providers of a stream that
    /// ended cleanly are forgotten; those of a stream that failed stay (as in azd).
    pub fn registrations(&self) -> Vec<String> {
        self.shared.registrations()
    }

    /// Closes every stream, stops the server and waits (a few seconds at most) for it.
    pub async fn shutdown(mut self) {
        self.close_streams();
        self.stop.cancel();
        if let Some(mut server) = self.server.take() {
            match tokio::time::timeout(SHUTDOWN_GRACE, &mut server).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => tracing::debug!("sim azd server ended with {e}"),
                Ok(Err(e)) => tracing::debug!("sim azd server task failed: {e}"),
                Err(_) => {
                    tracing::debug!("sim azd server did not stop in time; aborting it");
                    server.abort();
                }
            }
        }
        self.shared.tasks.close();
        if tokio::time::timeout(SHUTDOWN_GRACE, self.shared.tasks.wait())
            .await
            .is_err()
        {
            tracing::debug!("sim azd stream readers did not stop in time");
        }
    }
}

impl Drop for SimAzd {
    fn drop(&mut self) {
        self.shared.close_streams();
        self.stop.cancel();
    }
}
