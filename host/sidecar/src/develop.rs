//! What the development CLI lends `listen`, and the shipped sidecar has not:
//! recording and replaying (the `azd-wasm-host-recorder` crate, which the
//! sidecar does not link). `listen` asks for it through these traits only,
//! so the code stays out of the binary azd runs from an installed package.
//!
//! A packaged sidecar asked to record (`--record`, `AZD_WASM_HOST_RECORD`)
//! hands the session to the development CLI ([`hand_over`]): the binary
//! `AZD_WASM_HOST_DEV_CLI` names, else `azd-wasm-host` on PATH, run as
//! `listen` with the same arguments and environment, told which folder is the
//! installed extension's (`AZD_WASM_HOST_INSTALLED_DIR`), so that it checks
//! the signature and the user's consent as the sidecar would.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use azd_wasm_host_core::AzdServices;
use azd_wasm_host_provisioning::{AzdClient, StreamTap};
use azd_wasm_host_runtime::Intercept;

use crate::env::DEV_CLI;

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

/// The packaged sidecar asked to record: becomes the development CLI's
/// `listen` with this process's arguments and environment (on Unix the same
/// process: azd's signals and the exit code are the development CLI's).
pub(crate) fn hand_over() -> ExitCode {
    let refusal = match development_cli() {
        Ok(program) => match run_as(&program) {
            Ok(code) => return code,
            Err(e) => e,
        },
        Err(e) => e,
    };
    eprintln!(
        "azd-wasm-host: error: {refusal:#}\n  the packaged sidecar does not record a conversation itself; \
         install the development CLI (`azd-wasm-host`) on PATH or name it in {DEV_CLI}, \
         or unset AZD_WASM_HOST_RECORD"
    );
    ExitCode::FAILURE
}

/// The development CLI: the binary [`DEV_CLI`] names, else
/// `azd-wasm-host` on PATH (searched here: Windows would look in this
/// binary's own folder first, where the packaged sidecar itself has that
/// name). Never this binary, nor a sidecar it handed a session to already.
fn development_cli() -> anyhow::Result<PathBuf> {
    if crate::env::installed_dir().is_some() {
        anyhow::bail!(
            "the recording session was already handed over once: {DEV_CLI} or PATH names a packaged sidecar, not the development CLI"
        );
    }
    let me = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let not_me = |p: &Path| std::fs::canonicalize(p).ok() != me;
    if let Some(named) = crate::env::dev_cli() {
        anyhow::ensure!(
            not_me(&named),
            "{DEV_CLI} names this packaged sidecar, not the development CLI"
        );
        return Ok(named);
    }
    let file = format!("azd-wasm-host{}", std::env::consts::EXE_SUFFIX);
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(&file))
        .find(|p| p.is_file() && not_me(p))
        .with_context(|| format!("no development CLI: {file} is not on PATH"))
}

/// Runs `program` as `listen` for this session: the manifest beside this
/// binary (unless the arguments or azd named one), this folder named as the
/// installed extension's (so the development CLI checks its signature and
/// consent as this binary would), and no test's traffic plan (a session
/// under azd records the real traffic).
fn run_as(program: &Path) -> anyhow::Result<ExitCode> {
    let mut cmd = std::process::Command::new(program);
    cmd.args(std::env::args_os().skip(1))
        .env_remove(crate::env::TRAFFIC);
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        cmd.env(crate::env::INSTALLED_DIR, dir);
    }
    if std::env::var_os(crate::locate::ENV_MANIFEST).is_none()
        && let Ok(manifest) = crate::locate::locate_manifest(None)
    {
        cmd.env(crate::locate::ENV_MANIFEST, manifest);
    }
    let started = || {
        format!(
            "starting the development CLI {} to record",
            program.display()
        )
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        // Only returns when the program could not be started.
        Err(cmd.exec()).with_context(started)
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().with_context(started)?;
        Ok(match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::FAILURE,
        })
    }
}
