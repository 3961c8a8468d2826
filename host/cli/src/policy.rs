//! `policy show` and `policy check`: the administrator's ceiling seen before
//! it bites.
//!
//! `policy check PATH [--policy FILE]…` judges a provider (its
//! `provider.toml`, its folder, or a package's `.tar.gz` as `package` makes
//! it) against this machine's ceiling, or against the files given: what a
//! platform team runs in CI. A provider with an `extension.yaml` beside it is
//! judged as azd would install it (as that extension, signed by whichever of
//! your trusted keys verifies its signature, else unverified); one without,
//! as a provider run from its folder. Exit 0: within the ceiling; 1: beyond
//! it; 2: the provider or a ceiling cannot be read.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use azd_wasm_host_core::Exit;
use azd_wasm_host_core::text::shown;
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_trust::ceiling::{Candidate, Ceiling, Judged, Signer};
use azd_wasm_host_trust::{TrustDir, TrustError, Verdict};

/// What `policy` does.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum PolicyAction {
    /// Print this machine's ceiling: every place it is read from, and what each sets.
    Show,
    /// Judge a provider (provider.toml, its folder, or a package .tar.gz) against the ceiling
    /// (exit 0: within it; 1: beyond it; 2: cannot read).
    Check {
        /// The provider: its manifest, its folder, or a package archive (`.tar.gz`).
        path: PathBuf,
        /// Judge against this ceiling file instead of this machine's (repeatable: every one holds).
        #[arg(long = "policy", value_name = "FILE")]
        policy: Vec<PathBuf>,
    },
}

/// Runs `policy ACTION`.
pub(crate) fn policy(action: PolicyAction) -> anyhow::Result<ExitCode> {
    match action {
        PolicyAction::Show => {
            azd_wasm_host_sidecar::show_policy()?;
            Ok(ExitCode::SUCCESS)
        }
        PolicyAction::Check { path, policy } => match check(&path, &policy) {
            Ok((text, within)) => {
                print!("{text}");
                Ok(Exit::holds(within).into())
            }
            Err(e) => {
                eprintln!("azd-wasm-host: error: {e:#}");
                Ok(Exit::Trouble.into())
            }
        },
    }
}

/// The report of `policy check`, and whether the provider is within the ceiling.
fn check(path: &Path, files: &[PathBuf]) -> anyhow::Result<(String, bool)> {
    let ceiling = if files.is_empty() {
        azd_wasm_host_sidecar::machine_policy()?
    } else {
        Ceiling::from_files(files)?
    };
    let unpacked;
    let manifest = if is_archive(path) {
        unpacked = unpack(path)?;
        unpacked.path().join("provider.toml")
    } else if path.is_dir() {
        path.join("provider.toml")
    } else {
        path.to_path_buf()
    };
    let (who, judged) = judge(&ceiling, &manifest)?;
    let refused = judged.iter().filter(|j| !j.within).count();
    let mut out = String::new();
    let _ = writeln!(out, "{who}");
    for s in ceiling.sources() {
        let state = if s.rules.is_some() { "read" } else { "absent" };
        let _ = writeln!(
            out,
            "  policy {:<18} {state:<7} {}",
            s.place.to_string(),
            s.path.display()
        );
    }
    if !judged.is_empty() {
        let _ = writeln!(out, "{}", azd_wasm_host_sidecar::judged_lines(&judged));
    }
    if ceiling.is_empty() {
        let _ = writeln!(out, "no ceiling: nothing is refused here");
    } else if refused == 0 {
        let _ = writeln!(out, "within the ceiling");
    } else {
        let _ = writeln!(out, "beyond the ceiling: {refused} refused");
    }
    Ok((out, refused == 0))
}

/// Who the provider of `manifest` is, judged as it would run, and every
/// answer of `ceiling` for it (`check` shows them too).
pub(crate) fn judge(ceiling: &Ceiling, manifest: &Path) -> anyhow::Result<(String, Vec<Judged>)> {
    let m = Manifest::resolve(manifest, None)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let extension = extension_id(folder);
    let keys: (String, Option<String>);
    let (signer, code_signer, signed) = match &extension {
        None => (
            Signer::Development,
            None,
            "judged as run from its folder, unsigned: it has no extension.yaml".to_owned(),
        ),
        Some(_) => match verified_keys(manifest) {
            Ok(ids) => {
                keys = ids;
                let signed = format!("signed by key {}", keys.0);
                (Signer::Key(&keys.0), keys.1.as_deref(), signed)
            }
            Err(why) => (Signer::Unverified, None, format!("not verified: {why}")),
        },
    };
    let candidate = Candidate {
        provider: &m.name,
        extension: extension.as_deref(),
        signer,
        code_signer,
        policy: &m.policy,
    };
    let who = match &extension {
        Some(e) => format!(
            "provider {} (extension {}, {signed})",
            shown(&m.name),
            shown(e)
        ),
        None => format!("provider {} ({signed})", shown(&m.name)),
    };
    Ok((who, ceiling.judge(&candidate)))
}

/// The whole id of the trusted key that verifies the provider's signature,
/// and of the one that signed its precompiled code apart, if one did.
fn verified_keys(manifest: &Path) -> Result<(String, Option<String>), String> {
    let trust = TrustDir::from_env().map_err(|e| azd_wasm_host_core::report::chain(&e))?;
    let why = match azd_wasm_host_trust::verify(manifest, &trust) {
        Ok(Verdict::Verified(v)) => return Ok((v.key_id, v.code_key_id)),
        Ok(Verdict::Allowed(why)) | Err(why) => why,
    };
    Err(match why {
        TrustError::Unsigned { .. } => "unsigned".to_owned(),
        why => why.to_string(),
    })
}

/// The `id:` of the `extension.yaml` in `folder`: the extension azd installs it as.
fn extension_id(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join("extension.yaml")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(|id| id.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|id| !id.is_empty())
}

fn is_archive(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

/// The most a package may unpack to (its sidecars and precompiled code are
/// tens of MiB; a package is never near this).
const MAX_UNPACKED: u64 = 1 << 30;

/// A package unpacked into a temporary folder: regular files and folders
/// only (a link, a device or a pipe in it is refused: what is read then is
/// what the archive holds, never a file of this machine), each member where
/// tar puts it inside the folder, at most [`MAX_UNPACKED`] bytes in all.
fn unpack(archive: &Path) -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let file = std::fs::File::open(archive)
        .with_context(|| format!("cannot open {}", archive.display()))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut total = 0u64;
    let entries = tar
        .entries()
        .with_context(|| format!("cannot read {}", archive.display()))?;
    for entry in entries {
        let mut entry = entry.with_context(|| format!("cannot read {}", archive.display()))?;
        let kind = entry.header().entry_type();
        let name = entry
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        anyhow::ensure!(
            kind.is_file() || kind.is_dir(),
            "{} holds {}, which is neither a file nor a folder: a package holds only those",
            archive.display(),
            shown(&name)
        );
        total = total.saturating_add(entry.size());
        anyhow::ensure!(
            total <= MAX_UNPACKED,
            "{} unpacks to more than {} MiB: not a package",
            archive.display(),
            MAX_UNPACKED >> 20
        );
        let inside = entry
            .unpack_in(dir.path())
            .with_context(|| format!("cannot unpack {} of {}", shown(&name), archive.display()))?;
        anyhow::ensure!(
            inside,
            "{} holds {}, which would land outside the folder it unpacks to",
            archive.display(),
            shown(&name)
        );
    }
    Ok(dir)
}
