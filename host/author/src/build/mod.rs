//! `azd-wasm-host build`: the provider's component, from its manifest.
//!
//! The manifest's `[build]` section picks the way: `command` (the author's
//! shell command, run in the manifest's folder, like `spin build`), else the
//! built-in recipe of `language`:
//!
//! Each language's recipe lives in its module of `crate::lang`
//! (`crate::lang::Guest::build`), with everything else the toolchain knows
//! of it; docs/authoring.md tabulates them for authors.
//!
//! Every step is printed before it runs; a missing tool is an error that
//! names it, the version it must be, one way to get it (a command or a URL)
//! and the variable that names it instead (`crate::tools::Need`). The component is written to a temporary file and
//! renamed into place only once it has been checked to be a provider (its
//! exports and imports, without compiling it), so a failed build never leaves
//! a half-written or foreign component where `run` and `package` look.

pub(crate) mod step;
pub(crate) mod wit;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_runtime::{self as runtime};

use crate::lang::{Language, Recipe};
use crate::settings::BuildSettings;
use step::{Step, write_component};

/// What `build` does (the CLI reads its command line into it).
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
}

/// `build`: makes the component; returns its path.
pub fn build(args: &BuildOptions) -> anyhow::Result<PathBuf> {
    let path = crate::paths::manifest_path(args.manifest.as_deref())?;
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read provider manifest {}", path.display()))?;
    let manifest = Manifest::parse(&text, &path)?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let Some(settings) = BuildSettings::parse(&text, &path)? else {
        bail!(
            "{} has no [build] section: add `[build]` with `language = \"…\"` ({}), \
             or `command = \"...\"` that writes {}",
            crate::paths::shown(&path),
            Language::names(),
            crate::paths::shown(&manifest.component)
        );
    };
    let started = Instant::now();
    let out = &manifest.component;
    let parent = out.parent().unwrap_or(&dir);
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staged = sibling(out, ".building");
    let previous = sibling(out, ".previous");
    let _ = std::fs::remove_file(&staged);
    // The last good component is set aside while the build runs (an author's
    // command writes straight to `component`), and put back if it fails.
    let had_previous = out.is_file();
    if had_previous {
        std::fs::rename(out, &previous)
            .with_context(|| format!("cannot set {} aside", out.display()))?;
    }
    let done = make(&manifest, &settings, &dir, &staged).and_then(|()| finish(&staged, out));
    let _ = std::fs::remove_file(&staged);
    match (&done, had_previous) {
        (Ok(()), true) => {
            let _ = std::fs::remove_file(&previous);
        }
        (Err(_), true) => {
            std::fs::rename(&previous, out).with_context(|| {
                format!(
                    "the build failed and the previous component is left at {}",
                    previous.display()
                )
            })?;
        }
        (Err(_), false) => {
            let _ = std::fs::remove_file(out);
        }
        (Ok(()), false) => {}
    }
    done?;
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "Built {} ({:.1} KB) in {:.1} s: a provider component for {}",
        crate::paths::shown(out),
        size as f64 / 1024.0,
        started.elapsed().as_secs_f64(),
        runtime::WORLD
    );
    Ok(out.clone())
}

/// `out` with `suffix` added to its file name (a file beside it).
fn sibling(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.file_name().map(OsString::from).unwrap_or_default();
    name.push(suffix);
    out.with_file_name(name)
}

/// Runs the recipe or the command; the component ends up at `staged`.
fn make(
    manifest: &Manifest,
    settings: &BuildSettings,
    dir: &Path,
    staged: &Path,
) -> anyhow::Result<()> {
    if let Some(command) = &settings.command {
        return custom(command, dir, &manifest.component, staged);
    }
    let Some(language) = settings.language else {
        bail!(
            "[build] needs `language` ({}) or `command`",
            Language::names()
        );
    };
    (language.guest().build)(&Recipe {
        dir,
        source: settings.source.as_deref(),
        engine: settings.engine,
        staged,
    })
}

/// The author's command: it writes the manifest's component (set aside
/// before it runs), which then goes to `staged` (made a component if it is
/// a core module) to be checked like any recipe's output.
fn custom(command: &str, dir: &Path, out: &Path, staged: &Path) -> anyhow::Result<()> {
    let shell = if cfg!(windows) {
        Step::new("[build] command", "cmd", dir)
            .arg("/C")
            .arg(command)
    } else {
        Step::new("[build] command", "sh", dir)
            .arg("-c")
            .arg(command)
    };
    shell.run()?;
    if !out.is_file() {
        bail!(
            "the [build] command succeeded but did not write {} (the manifest's `component`)",
            out.display()
        );
    }
    let bytes = std::fs::read(out).with_context(|| format!("cannot read {}", out.display()))?;
    std::fs::remove_file(out).with_context(|| format!("cannot move {}", out.display()))?;
    write_component(&bytes, staged)
}

/// Checks the staged component is a provider this host can run, then moves
/// it into place.
fn finish(staged: &Path, out: &Path) -> anyhow::Result<()> {
    runtime::inspect_component(staged).context("the build's output is not a provider component")?;
    std::fs::rename(staged, out).with_context(|| format!("cannot write {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_without_build_says_what_to_add() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provider.toml");
        std::fs::write(&path, "name = \"x\"\ncomponent = \"build/x.wasm\"\n").unwrap();
        let err = build(&BuildOptions {
            manifest: Some(path),
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("no [build] section") && err.contains("language"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_command_that_writes_nothing_or_garbage_leaves_no_component() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("provider.toml");
        let write = |command: &str| {
            std::fs::write(
                &path,
                format!(
                    "name = \"x\"\ncomponent = \"build/x.wasm\"\n[build]\ncommand = '{command}'\n"
                ),
            )
            .unwrap();
        };
        write("true");
        let err = build(&BuildOptions {
            manifest: Some(path.clone()),
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("did not write"), "{err}");
        write("echo not-wasm > build/x.wasm");
        let err = format!(
            "{:#}",
            build(&BuildOptions {
                manifest: Some(path.clone())
            })
            .unwrap_err()
        );
        assert!(err.contains("not a provider component"), "{err}");
        assert!(!dir.path().join("build/x.wasm").exists());
        assert!(!dir.path().join("build/x.wasm.building").exists());
        write("exit 3");
        let err = build(&BuildOptions {
            manifest: Some(path),
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("[build] command failed"), "{err}");
    }
}
