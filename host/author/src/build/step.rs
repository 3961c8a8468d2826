//! One program a build runs ([`Step`]), and where a recipe's output goes
//! ([`write_component`]): the pieces every recipe shares.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// One program the build runs.
pub(crate) struct Step {
    /// What it is for, in a few words (printed with the command).
    what: String,
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
}

impl Step {
    pub(crate) fn new(what: impl Into<String>, program: impl Into<OsString>, cwd: &Path) -> Self {
        Self {
            what: what.into(),
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: cwd.to_path_buf(),
        }
    }

    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<I: IntoIterator<Item = A>, A: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs it with the terminal's stdout/stderr (the tools' own progress).
    pub(crate) fn run(&self) -> anyhow::Result<()> {
        let line: Vec<String> = std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        eprintln!("==> {}: {}", self.what, line.join(" "));
        // The tools' output is for the author, and stdout stays ours.
        let status = Command::new(&self.program)
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.cwd)
            .stdout(std::process::Stdio::from(std::io::stderr()))
            .status()
            .with_context(|| {
                format!(
                    "cannot run {} ({})",
                    self.program.to_string_lossy(),
                    self.what
                )
            })?;
        if !status.success() {
            bail!("{} failed ({status})", self.what);
        }
        Ok(())
    }
}

/// Writes `bytes` (a component, or a core module made one here) to `staged`.
pub(crate) fn write_component(bytes: &[u8], staged: &Path) -> anyhow::Result<()> {
    let component = if crate::componentize::is_core_module(bytes) {
        eprintln!("==> make the core module a component (WASI preview1 adapter, reactor)");
        crate::componentize::componentize(bytes)?
    } else {
        bytes.to_vec()
    };
    std::fs::write(staged, component).with_context(|| format!("cannot write {}", staged.display()))
}

/// A scratch folder beside the staged component (`.{tag}-build-…`, for the
/// `language` build), gone however the build ends.
pub(crate) fn scratch(
    staged: &Path,
    dir: &Path,
    tag: &str,
    language: &str,
) -> anyhow::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!(".{tag}-build-"))
        .tempdir_in(staged.parent().unwrap_or(dir))
        .with_context(|| format!("cannot make a scratch folder for the {language} build"))
}
