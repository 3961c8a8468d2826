//! The extension a session starts ([`Session::start_extension`]): the program the
//! session names (or the command [`EXTENSION_COMMAND_VAR`] names) as `listen`, started
//! under a simulated azd as azd starts an extension. `run`'s commands, the test kit's
//! steps and its golden replays all start theirs so.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use azd_wasm_host_sim::{ExtensionProcess, ProviderHandle, SimAzd, SpawnOptions};

use super::session::{EnvOverlay, Session};

/// Names the command `run` starts as the extension instead of its program:
/// its words as a shell splits them. For a build of another platform under
/// its emulator, e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu
/// target/aarch64-unknown-linux-gnu/release/azd-wasm-host`, where that build
/// cannot start itself.
pub const EXTENSION_COMMAND_VAR: &str = azd_wasm_host_core::settings::EXTENSION_COMMAND;

/// The project's path as `run` sends it in Initialize, where the extension
/// [`EXTENSION_COMMAND_VAR`] starts sees the project under another name: a
/// Windows build under Wine, for which `/tmp/p` is `Z:\tmp\p` (azd on
/// Windows sends a drive path, and a path without one is refused).
pub const EXTENSION_PROJECT_PATH_VAR: &str = azd_wasm_host_core::settings::EXTENSION_PROJECT_PATH;

/// What a session starts under a simulated azd ([`Session::start_extension`]): which
/// provider, for which project and azd environment. The program, its debug logs, its
/// environment and where its stderr goes are the session's.
#[derive(Debug, Clone, Copy)]
pub struct Extension<'a> {
    /// Its manifest (`AZD_WASM_HOST_MANIFEST`).
    pub manifest: &'a Path,
    /// The project: its working folder and `AZD_CWD`.
    pub project: &'a Path,
    /// azd's environment name (`AZD_ENVIRONMENT`); `None`: azd names none.
    pub environment: Option<&'a str>,
    /// The provider name it registers.
    pub provider: &'a str,
}

/// The command line [`EXTENSION_COMMAND_VAR`] names, when it names one.
pub(crate) fn extension_command_line(env: &EnvOverlay) -> Option<String> {
    env.var(EXTENSION_COMMAND_VAR)
        .filter(|line| !line.trim().is_empty())
}

/// `program`, or the command [`EXTENSION_COMMAND_VAR`] names.
fn extension_command(program: &Path, env: &EnvOverlay) -> anyhow::Result<tokio::process::Command> {
    let Some(line) = extension_command_line(env) else {
        return Ok(tokio::process::Command::new(program));
    };
    let words = shell_words::split(&line)
        .with_context(|| format!("{EXTENSION_COMMAND_VAR} is not a command line: {line:?}"))?;
    let (program, args) = words
        .split_first()
        .with_context(|| format!("{EXTENSION_COMMAND_VAR} names no program"))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

impl Session {
    /// Starts the session's extension program (or the command [`EXTENSION_COMMAND_VAR`]
    /// names) as `listen` under `sim`, as azd starts an extension: it inherits this
    /// process's environment with the session's changes, writes debug logs when the session
    /// asks for them and its stderr where the session says; `more` adds to its command. Waits
    /// for the provider to register.
    pub async fn start_extension(
        &self,
        sim: &SimAzd,
        extension: &Extension<'_>,
        more: impl FnOnce(&mut tokio::process::Command),
    ) -> anyhow::Result<(ExtensionProcess, ProviderHandle)> {
        let mut cmd = extension_command(&self.extension, &self.env)?;
        // First, as what it inherits: the variables azd sets (the simulated azd's, and
        // those below) win over them, as over any it inherits.
        let azd = sim.env();
        let azd: Vec<&str> = azd.iter().map(|(name, _)| name.as_str()).collect();
        self.env.apply_except(&mut cmd, &azd);
        cmd.env(azd_wasm_host_core::settings::MANIFEST, extension.manifest)
            .env("AZD_CWD", extension.project)
            .current_dir(extension.project);
        match extension.environment {
            Some(name) => cmd.env("AZD_ENVIRONMENT", name),
            None => cmd.env_remove("AZD_ENVIRONMENT"),
        };
        if self.debug {
            cmd.env("AZD_DEBUG", "true");
        }
        more(&mut cmd);
        // Not azd's 15 s: `run` and `test` are for trying things out, on any machine.
        let spawn = SpawnOptions {
            ready_timeout: Some(Duration::from_secs(300)),
            capture_stderr: self.capture_extension_stderr,
            ..Default::default()
        };
        let process = sim.spawn_extension_with(cmd, spawn).await?;
        let handle = sim
            .provider(extension.provider, Duration::from_secs(15))
            .await?;
        Ok((process, handle))
    }
}
