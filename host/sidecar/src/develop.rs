//! What the development CLI lends `listen`, and the shipped sidecar has not:
//! recording and replaying (the `azd-wasm-host-recorder` crate, which the
//! sidecar does not link). `listen` asks for it through the traits of the
//! `azd-wasm-host-develop` crate only, so the code stays out of the binary azd
//! runs from an installed package.
//!
//! A packaged sidecar asked to record (`--record`, `AZD_WASM_HOST_RECORD`)
//! hands the session to the development CLI ([`hand_over`]): the binary
//! `AZD_WASM_HOST_DEV_CLI` names, else `azd-wasm-host` on PATH, run as
//! `listen` with the same arguments and environment, told which folder is the
//! installed extension's (`AZD_WASM_HOST_INSTALLED_DIR`), so that it checks
//! the signature and the user's consent as the sidecar would.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use crate::env::DEV_CLI;

/// The packaged sidecar asked to record: becomes the development CLI's
/// `listen` with this process's arguments and environment (on Unix the same
/// process: azd's signals and the exit code are the development CLI's), and
/// the manifest this sidecar would have served (`manifest`: `--manifest`, or
/// none for the one beside it) named explicitly.
pub(crate) fn hand_over(manifest: Option<&Path>) -> ExitCode {
    let refusal = match development_cli() {
        Ok(program) => match run_as(&program, manifest) {
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
/// `azd-wasm-host` in one of PATH's absolute folders (searched here: Windows
/// would look in this binary's own folder first, where the packaged sidecar
/// itself has that name; a relative folder would make the working folder,
/// which a project controls, decide). Only an executable file; never this
/// binary, nor a sidecar it handed a session to already.
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
        anyhow::ensure!(
            is_executable(&named),
            "{DEV_CLI} names {}, which is not an executable file",
            named.display()
        );
        return Ok(named);
    }
    let file = format!("azd-wasm-host{}", std::env::consts::EXE_SUFFIX);
    on_path(std::env::var_os("PATH"), &file, not_me).with_context(|| {
        format!("no development CLI: {file} is not in any absolute folder of PATH")
    })
}

/// The first executable `file` in PATH's absolute folders that `accept` takes.
fn on_path(
    path: Option<std::ffi::OsString>,
    file: &str,
    accept: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    path.iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(file))
        .find(|p| is_executable(p) && accept(p))
}

/// A regular file (links followed) the user may execute.
#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Runs `program` as `listen` for this session: the manifest this binary
/// would serve, named explicitly (so nothing of the development CLI's own
/// lookup, nor a variable, picks another), this folder named as the
/// installed extension's (so the development CLI checks its signature and
/// consent as this binary would), and no test's traffic plan (a session
/// under azd records the real traffic).
fn run_as(program: &Path, manifest: Option<&Path>) -> anyhow::Result<ExitCode> {
    let manifest = crate::locate::locate_manifest(manifest)
        .context("finding the manifest this packaged sidecar serves")?;
    let manifest = std::fs::canonicalize(&manifest).unwrap_or(manifest);
    let mut cmd = std::process::Command::new(program);
    cmd.args(std::env::args_os().skip(1))
        .env_remove(crate::env::TRAFFIC)
        .env(crate::locate::ENV_MANIFEST, &manifest);
    if let Some(dir) = azd_wasm_host_core::files::exe_dir() {
        cmd.env(crate::env::INSTALLED_DIR, dir);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn program(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// The working folder (which a project controls) and files that are not
    /// programs never pick the development CLI a recording is handed to.
    #[cfg(unix)]
    #[test]
    fn only_an_executable_in_an_absolute_folder_of_path_is_the_development_cli() {
        let work = tempfile::tempdir().unwrap();
        let (plain, real) = (work.path().join("plain"), work.path().join("real"));
        program(&plain.join("azd-wasm-host"), 0o644);
        program(&real.join("azd-wasm-host"), 0o755);
        // A relative folder: whatever the working folder holds there is never run.
        let path = std::env::join_paths([
            PathBuf::from("bin"),
            PathBuf::from("."),
            plain.clone(),
            real.clone(),
        ])
        .unwrap();
        let found = on_path(Some(path), "azd-wasm-host", |_| true);
        assert_eq!(found, Some(real.join("azd-wasm-host")));
        let only_bad = std::env::join_paths([PathBuf::from("."), plain]).unwrap();
        assert_eq!(on_path(Some(only_bad), "azd-wasm-host", |_| true), None);
        // The binary itself (or one `accept` refuses) is passed over.
        let path = std::env::join_paths([real]).unwrap();
        assert_eq!(on_path(Some(path), "azd-wasm-host", |_| false), None);
    }
}
