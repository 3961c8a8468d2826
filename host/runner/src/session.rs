//! How a run meets the process it runs in: [`Session`].
//!
//! `azd-wasm-host run` is a process of its own: it may use the terminal (a spinner,
//! questions asked on it), it reads its environment, the extension it starts writes to
//! its stderr, and Ctrl-C cancels it. A library caller (the test kit, which plays every
//! step of a test inside its own process) wants none of that from its process: the
//! runner stays quiet (still recording the progress and the questions in its report),
//! answers no question on a terminal, captures the extension's stderr, and sees the
//! environment a `run` child would have had: this process's with an [`EnvOverlay`]
//! applied. The runner reads every variable of its own through the overlay
//! ([`EnvOverlay::var`]), and the extension it starts inherits this process's
//! environment with the overlay applied, as a child of that `run` would have.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// How a run meets its process: see the module.
#[derive(Debug, Clone)]
pub struct Session {
    /// The program started as the extension, as azd starts one (`PROGRAM listen`): a
    /// binary that serves the sidecar's `listen` (the development CLI, a test's own binary).
    /// `AZD_WASM_HOST_EXTENSION_COMMAND` in [`Self::env`] names a command line instead.
    pub extension: PathBuf,
    /// Whether the run may use this process's terminal and stderr: live progress (a
    /// spinner on a terminal, plain lines otherwise), questions asked on the terminal
    /// (when stdin and stderr are one), notes. Without it the run is quiet, and a
    /// question gets `--yes`/`--no`'s answer or its default, as azd gives it under
    /// `--no-prompt`.
    pub console: bool,
    /// Debug logs from the extension (`AZD_DEBUG=true`).
    pub debug: bool,
    /// The environment as the run sees it: this process's, changed by the overlay.
    pub env: EnvOverlay,
    /// Capture the extension's stderr into [`crate::RunOutcome::extension_stderr`]
    /// (else the extension writes to this process's stderr).
    pub capture_extension_stderr: bool,
    /// Cancelled: the command is cancelled as azd cancels it on Ctrl-C (the provider is
    /// stopped and waited for; the error's kind is `interrupted`). Nothing watches
    /// signals for a session: `run` cancels it on Ctrl-C itself.
    pub interrupt: CancellationToken,
    /// Whether the provider's code is compiled for this machine already: on the console,
    /// a run whose provider is not says that its first start compiles (seconds for a big
    /// component). `None`: taken as compiled.
    pub compiled: Option<CompiledProbe>,
}

/// Whether a provider's code (`provider`: its manifest or component) is compiled for
/// this machine, for a run that sees the environment `vars`: the development CLI asks
/// the runtime and the compile cache the extension will use.
#[derive(Clone)]
pub struct CompiledProbe(Arc<Ask>);

/// What answers a [`CompiledProbe`].
type Ask = dyn Fn(&Path, &EnvOverlay) -> bool + Send + Sync;

impl CompiledProbe {
    /// The probe `ask` answers.
    pub fn new(ask: impl Fn(&Path, &EnvOverlay) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(ask))
    }

    /// Whether `provider`'s code is compiled, for a run that sees `vars`.
    pub(crate) fn ask(&self, provider: &Path, vars: &EnvOverlay) -> bool {
        (self.0)(provider, vars)
    }
}

impl std::fmt::Debug for CompiledProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledProbe(…)")
    }
}

impl Session {
    /// `azd-wasm-host run`'s: the terminal and stderr, this process's environment as it
    /// is, the extension's stderr on this process's; `interrupt` is what Ctrl-C cancels.
    pub fn command(extension: PathBuf, debug: bool, interrupt: CancellationToken) -> Self {
        Self {
            extension,
            console: true,
            debug,
            env: EnvOverlay::default(),
            capture_extension_stderr: false,
            interrupt,
            compiled: None,
        }
    }

    /// A library's: quiet, the extension's stderr captured, `env` the changes a child
    /// `run` would have had made to its environment.
    pub fn library(extension: PathBuf, debug: bool, env: EnvOverlay) -> Self {
        Self {
            extension,
            console: false,
            debug,
            env,
            capture_extension_stderr: true,
            interrupt: CancellationToken::new(),
            compiled: None,
        }
    }
}

/// Changes to this process's environment, made only in what a run sees: the variables
/// the runner reads, and the environment the extension inherits. Each change of a name
/// replaces the one before (names are compared exactly, as on Unix).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvOverlay {
    /// By name: the value set, or `None`: removed.
    changes: BTreeMap<OsString, Option<OsString>>,
}

impl EnvOverlay {
    /// Sets `name` to `value`.
    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> &mut Self {
        self.changes.insert(name.into(), Some(value.into()));
        self
    }

    /// Removes `name`.
    pub fn remove(&mut self, name: impl Into<OsString>) -> &mut Self {
        self.changes.insert(name.into(), None);
        self
    }

    /// Sets every pair of `vars`.
    pub fn set_all<K, V>(&mut self, vars: impl IntoIterator<Item = (K, V)>) -> &mut Self
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        for (k, v) in vars {
            self.set(k, v);
        }
        self
    }

    /// `name` as the run sees it: the overlay's value, none if it removes it, else this
    /// process's.
    pub fn var_os(&self, name: &str) -> Option<OsString> {
        match self.changes.get(OsStr::new(name)) {
            Some(changed) => changed.clone(),
            None => std::env::var_os(name),
        }
    }

    /// [`Self::var_os`] as text; `None` when unset or not Unicode.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name).and_then(|v| v.into_string().ok())
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Makes the changes on `cmd`, whose child would otherwise inherit this process's
    /// environment as it is.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        self.apply_except(cmd, &[]);
    }

    /// [`Self::apply`] but for the names in `theirs`, which whoever starts `cmd` sets
    /// itself (over what the child would inherit).
    pub(crate) fn apply_except(&self, cmd: &mut tokio::process::Command, theirs: &[&str]) {
        for (name, value) in &self.changes {
            if theirs.iter().any(|t| OsStr::new(t) == name) {
                continue;
            }
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlay_wins_over_the_process_and_the_last_change_of_a_name_wins() {
        let mut env = EnvOverlay::default();
        assert!(env.is_empty());
        // PATH is set in every process that runs tests.
        assert_eq!(env.var_os("PATH"), std::env::var_os("PATH"));
        env.remove("PATH").set("AZD_WASM_HOST_TEST_OVERLAY", "one");
        assert_eq!(env.var("PATH"), None);
        assert_eq!(
            env.var("AZD_WASM_HOST_TEST_OVERLAY").as_deref(),
            Some("one")
        );
        env.set_all([("PATH", "/x")])
            .remove("AZD_WASM_HOST_TEST_OVERLAY");
        assert_eq!(env.var("PATH").as_deref(), Some("/x"));
        assert_eq!(env.var("AZD_WASM_HOST_TEST_OVERLAY"), None);

        let mut cmd = tokio::process::Command::new("true");
        env.apply(&mut cmd);
        let applied: BTreeMap<&OsStr, Option<&OsStr>> = cmd.as_std().get_envs().collect();
        assert_eq!(applied[OsStr::new("PATH")], Some(OsStr::new("/x")));
        assert_eq!(applied[OsStr::new("AZD_WASM_HOST_TEST_OVERLAY")], None);
    }
}
