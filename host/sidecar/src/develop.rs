//! What the development CLI lends `listen`, and the shipped sidecar has not:
//! recording and replaying (the `azd-wasm-host-recorder` crate, which the
//! sidecar does not link). `listen` asks for it through these traits only,
//! so the code stays out of the binary azd runs from an installed package.
//!
//! A packaged sidecar asked to record (`--record`, `AZD_WASM_HOST_RECORD`)
//! hands the session to the development CLI ([`hand_over`]): the binary
//! `AZD_WASM_HOST_DEV_CLI` names, else `azd-wasm-host` on PATH, run as
//! `listen` with the same arguments and environment.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use azd_wasm_host_core::AzdServices;
use azd_wasm_host_provisioning::{AzdClient, StreamTap};
use azd_wasm_host_runtime::Intercept;

/// Names the development CLI a packaged sidecar hands a recording to.
pub const DEV_CLI_ENV: &str = "AZD_WASM_HOST_DEV_CLI";

/// Recording and replaying, lent by the development CLI.
pub trait DevelopmentTools: Send + Sync {
    /// The traffic plan of a test's step (the file `AZD_WASM_HOST_TRAFFIC`
    /// names): what replays, records or faults the guest's HTTP and tokens.
    fn replay(&self, plan: &Path) -> anyhow::Result<Arc<dyn Intercept>>;

    /// Starts `--record`'s golden conversation in `path` for `provider`
    /// (`environment`: the azd environment azd named; `safe`: strings the
    /// recording may keep though they look like credentials).
    fn record(
        &self,
        path: &Path,
        provider: &str,
        environment: Option<&str>,
        safe: &[String],
    ) -> anyhow::Result<Box<dyn Recording>>;
}

/// A golden conversation being recorded.
pub trait Recording: Send + Sync {
    /// What writes down the provisioning stream both ways.
    fn tap(&self) -> Arc<dyn StreamTap>;
    /// azd's services, each call and answer written down.
    fn services(&self, azd: AzdClient) -> Arc<dyn AzdServices>;
    /// What records the guest's HTTP traffic into the conversation.
    fn traffic(&self) -> anyhow::Result<Arc<dyn Intercept>>;
    /// The conversation ended: written again without what was learned secret.
    fn finish(&self);
}

/// The packaged sidecar asked to record: runs the development CLI's `listen`
/// with this process's arguments and environment, and exits as it does.
pub(crate) fn hand_over() -> ExitCode {
    match run_development_cli() {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "azd-wasm-host: error: {e:#}\n  the packaged sidecar does not record a conversation itself; \
                 install the development CLI (`azd-wasm-host`) on PATH or name it in {DEV_CLI_ENV}, \
                 or unset AZD_WASM_HOST_RECORD"
            );
            ExitCode::FAILURE
        }
    }
}

fn run_development_cli() -> anyhow::Result<ExitCode> {
    let program = std::env::var_os(DEV_CLI_ENV)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "azd-wasm-host".into());
    // The manifest beside this binary, unless the arguments or azd named one.
    let manifest = crate::locate::locate_manifest(None).ok();
    let mut cmd = std::process::Command::new(&program);
    cmd.args(std::env::args_os().skip(1));
    if std::env::var_os(crate::locate::ENV_MANIFEST).is_none()
        && let Some(manifest) = manifest
    {
        cmd.env(crate::locate::ENV_MANIFEST, manifest);
    }
    tracing::debug!(program = ?program, "handing the recording session to the development CLI");
    let status = cmd.status().with_context(|| {
        format!(
            "starting the development CLI {} to record",
            Path::new(&program).display()
        )
    })?;
    Ok(match status.code() {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
