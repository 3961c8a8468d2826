//! `azd-wasm-host package`: an azd extension source for one provider.
//!
//! It writes, in `dist/` beside the manifest:
//! - `<id>-<os>-<arch>.tar.gz` for each platform ([`platforms`]): the host
//!   binary as the entry point (`azd-wasm-host.exe` on Windows), by default
//!   the sidecar build of that platform ([`sidecars`]), which carries no
//!   compiler; `provider.toml`; `extension.yaml`; the component and the
//!   config schema (`[config] schema`) at their manifest paths; azd's
//!   metadata for the extension ([`metadata`], `azd-metadata.json`, which the
//!   binary's `metadata` command prints for azd); the component's code,
//!   precompiled by this host for that platform into `precompiled/` (so no
//!   `azd provision` compiles anything); and the signature over all of them,
//!   made after the precompile ([`signer`]);
//! - `registry.json` ([`registry`]): the extension in azd's registry format,
//!   an artifact per platform with its sha256, ready for `azd extension
//!   source add -t file`.
//!
//! Before anything is written it checks every name azd matches
//! ([`checks`]).

mod checks;
mod metadata;
mod platforms;
mod registry;
mod sidecars;
mod signer;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_manifest::package::{AZD_METADATA_FILE, PRECOMPILED_DIR};
use azd_wasm_host_runtime::{self as runtime};
use platforms::Shipped as _;

use checks::ExtensionYaml;
use platforms::HostBinary;
use registry::Artifact;
pub(crate) use signer::{Signer, UNVERIFIED_MARKER};

/// What `package` does (the CLI reads its command line into it).
#[derive(Debug, Clone)]
pub struct PackageOptions {
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
    /// The extension manifest (default: `extension.yaml` beside the provider manifest).
    pub extension: Option<PathBuf>,
    /// Where the source is written (default: `dist/` beside the provider manifest).
    pub out: Option<PathBuf>,
    /// The URL the archive will be published under (a folder); default: the
    /// archive's absolute path, for a local `file` source.
    pub base_url: Option<String>,
    /// Ship this binary, the development host with its compilers, for this
    /// machine only, and no precompiled code: the first start compiles the
    /// component (by default each archive ships the sidecar, which carries no
    /// compiler, with the component precompiled for its platform).
    pub no_precompile: bool,
    /// Also (or instead of this binary) ship the host build BINARY for
    /// PLATFORM (`windows/amd64`, `darwin/arm64`, ...); repeatable.
    pub hosts: Vec<String>,
    /// Ship every host build in DIR, laid out as `scripts/release.sh` writes
    /// them: `DIR/<os>-<arch>/azd-wasm-host[.exe]`.
    pub hosts_from: Option<PathBuf>,
    /// How it is signed.
    pub signing: Signing,
}

/// How `package` and `publish` sign what they ship: by default with the author's
/// signing key (made on first use, and trusted on this machine).
#[derive(Debug, Clone, Default)]
pub struct Signing {
    /// Sign with this key (a PKCS#8 PEM ECDSA P-256 key, as `keygen` writes) instead.
    pub key: Option<PathBuf>,
    /// Do not sign: where it is installed it runs only if unsigned providers are allowed.
    pub unsigned: bool,
    /// Sign with the author's key even a provider whose own signature did not verify
    /// (or that `pull` kept unverified): whoever trusts that key will run it.
    pub resign: bool,
}

/// What `package` made.
#[derive(Debug)]
pub struct Packaged {
    /// The registry JSON.
    pub registry: PathBuf,
    /// The archives, with their platforms (`linux/amd64`).
    pub archives: Vec<(String, PathBuf)>,
    /// The extension id.
    pub id: String,
}

/// What `package` reads and checks before it writes anything.
struct Inputs {
    manifest_path: PathBuf,
    dir: PathBuf,
    manifest: Manifest,
    ext: ExtensionYaml,
    /// The component's path inside the provider's folder (and the archive).
    component_rel: PathBuf,
    /// The config schema's, when the manifest names one.
    schema_rel: Option<PathBuf>,
    /// `extension.yaml`, shipped (and signed) beside `provider.toml`.
    ext_path: PathBuf,
}

/// Reads the manifests and checks everything azd and the archive depend on.
fn read_inputs(args: &PackageOptions) -> anyhow::Result<Inputs> {
    let manifest_path = crate::paths::manifest_path(args.manifest.as_deref())?;
    let dir = manifest_path
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let manifest = Manifest::load(&manifest_path)?;
    let ext_path = args
        .extension
        .clone()
        .unwrap_or_else(|| dir.join("extension.yaml"));
    let ext = read_extension(&ext_path)?;
    checks::check(&ext, &manifest, &ext_path)?;
    checks::check_sample_project(&dir, &manifest.name)?;
    let component_rel = archive_path(&manifest.component, &dir)?;
    let schema_rel = (manifest.config_schema.as_ref())
        .map(|schema| archive_path(&schema.path, &dir))
        .transpose()?;
    if !manifest.component.is_file() {
        bail!(
            "{} is not built: run azd-wasm-host build first",
            crate::paths::shown(&manifest.component)
        );
    }
    runtime::inspect_component(&manifest.component)?;
    Ok(Inputs {
        manifest_path,
        dir,
        manifest,
        ext,
        component_rel,
        schema_rel,
        ext_path,
    })
}

/// Reads `extension.yaml`.
pub(crate) fn read_extension(ext_path: &Path) -> anyhow::Result<ExtensionYaml> {
    let ext_text = std::fs::read_to_string(ext_path).with_context(|| {
        format!(
            "cannot read the extension manifest {} (azd-wasm-host new writes one)",
            ext_path.display()
        )
    })?;
    serde_norway::from_str(&ext_text)
        .with_context(|| format!("{} is not an extension manifest", ext_path.display()))
}

/// The path inside the archive of a file the manifest names (the component,
/// the config schema): inside the provider's folder, and clear of the names
/// the archive keeps for the host.
pub(crate) fn archive_path(component: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let rel = component
        .strip_prefix(dir)
        .ok()
        .filter(|rel| {
            !rel.components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        })
        .map(Path::to_path_buf)
        .with_context(|| {
            format!(
                "{} must be inside the provider's folder {}",
                component.display(),
                dir.display()
            )
        })?;
    let top = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    let kept = [
        "azd-wasm-host",
        "azd-wasm-host.exe",
        "provider.toml",
        "extension.yaml",
        azd_wasm_host_trust::BUNDLE_FILE,
        PRECOMPILED_DIR,
        AZD_METADATA_FILE,
    ];
    if kept.contains(&top.as_str()) {
        bail!(
            "the path {} starts with `{top}`, which the archive keeps for the host; \
             put the file elsewhere (e.g. build/)",
            rel.display()
        );
    }
    Ok(rel)
}

/// `package`: checks, stages and writes the extension source.
pub fn package(args: &PackageOptions) -> anyhow::Result<Packaged> {
    let inputs = read_inputs(args)?;
    // Before anything is written: a provider that failed verification is refused here.
    let signer = Signer::choose(
        args.signing.key.as_deref(),
        args.signing.unsigned,
        args.signing.resign,
        &inputs.manifest_path,
    )?;
    let hosts = platforms::host_binaries(&args.hosts, args.hosts_from.as_deref(), || {
        if args.no_precompile {
            let exe = std::env::current_exe().context("cannot find this host's own binary")?;
            Ok(vec![(platforms::Platform::this_machine()?, exe)])
        } else {
            sidecars::default_sidecars()
        }
    })?;
    let out = args.out.clone().unwrap_or_else(|| inputs.dir.join("dist"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let out = std::fs::canonicalize(&out)?;
    let (azd_metadata, left_out) = metadata::document(&inputs.ext.id, &inputs.manifest);
    if let Some(why) = left_out {
        eprintln!("warning: {why}");
    }
    let azd_metadata = serde_json::to_string_pretty(&azd_metadata)? + "\n";
    let mut artifacts = Vec::with_capacity(hosts.len());
    let mut archives = Vec::with_capacity(hosts.len());
    for host in &hosts {
        let archive = package_one(args, &inputs, host, &out, &signer, &azd_metadata)?;
        let url = match &args.base_url {
            Some(base) => format!("{}/{}", base.trim_end_matches('/'), file_name(&archive)),
            None => archive.display().to_string(),
        };
        artifacts.push(Artifact {
            platform: host.platform,
            url,
            sha256: hex::encode(
                azd_wasm_host_core::files::sha256_file(&archive)
                    .with_context(|| format!("cannot read {}", archive.display()))?,
            ),
        });
        archives.push((host.platform.key(), archive));
    }
    let ext = &inputs.ext;
    let registry = out.join("registry.json");
    let json = registry::registry_json(ext, &artifacts);
    std::fs::write(&registry, serde_json::to_string_pretty(&json)? + "\n")?;
    Ok(Packaged {
        registry,
        archives,
        id: ext.id.clone(),
    })
}

/// Stages and writes the archive of one platform; returns its path.
fn package_one(
    args: &PackageOptions,
    inputs: &Inputs,
    host: &HostBinary,
    out: &Path,
    signer: &Signer,
    azd_metadata: &str,
) -> anyhow::Result<PathBuf> {
    let platform = host.platform;
    let stage = tempfile::Builder::new().prefix(".stage-").tempdir_in(out)?;
    let mut members = stage_files(stage.path(), inputs, host)?;
    std::fs::write(stage.path().join(AZD_METADATA_FILE), azd_metadata)?;
    members.push(PathBuf::from(AZD_METADATA_FILE));
    let ext = &inputs.ext;
    if !args.no_precompile {
        eprintln!("==> precompile the component for {platform}");
        runtime::precompile_into(
            &inputs.manifest,
            &stage.path().join(PRECOMPILED_DIR),
            Some(&platform.key()),
        )?;
        members.push(PathBuf::from(PRECOMPILED_DIR));
    }
    // Signed last: the signature names every file the host runs, the
    // precompiled code and its binding included.
    let signed = signer.sign(
        &stage.path().join("provider.toml"),
        &ext.version,
        Some(&ext.id),
    )?;
    members.extend(signed.into_iter().map(PathBuf::from));
    let archive = out.join(format!(
        "{}-{}.tar.gz",
        ext.id.replace('.', "-"),
        platform.slug()
    ));
    write_archive(stage.path(), &members, &archive)?;
    eprintln!(
        "Packaged {} {} for {platform}: {} ({:.1} MB){}",
        ext.id,
        ext.version,
        crate::paths::shown(&archive),
        std::fs::metadata(&archive)?.len() as f64 / 1e6,
        if args.no_precompile {
            "; its first start compiles the component"
        } else {
            ""
        }
    );
    Ok(archive)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Copies the host binary (a native one stripped and started once), the
/// manifest, `extension.yaml`, the component and the config schema into
/// `stage`; returns the archive's top-level members.
fn stage_files(stage: &Path, inputs: &Inputs, host: &HostBinary) -> anyhow::Result<Vec<PathBuf>> {
    let entry_point = host.platform.exe_name();
    let bin = stage.join(entry_point);
    std::fs::copy(&host.path, &bin)
        .with_context(|| format!("cannot copy {}", host.path.display()))?;
    if host.native {
        strip(&bin)?;
    }
    sidecars::announce(host.platform, &host.path, &bin);
    std::fs::copy(&inputs.manifest_path, stage.join("provider.toml"))?;
    std::fs::copy(&inputs.ext_path, stage.join("extension.yaml"))
        .with_context(|| format!("cannot copy {}", inputs.ext_path.display()))?;
    let mut members = vec![
        PathBuf::from(entry_point),
        PathBuf::from("provider.toml"),
        PathBuf::from("extension.yaml"),
    ];
    let schema = (inputs.manifest.config_schema.as_ref()).zip(inputs.schema_rel.as_ref());
    let files = std::iter::once((&inputs.manifest.component, &inputs.component_rel))
        .chain(schema.map(|(schema, rel)| (&schema.path, rel)));
    for (path, rel) in files {
        let dest = stage.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(path, &dest).with_context(|| format!("cannot copy {}", path.display()))?;
        // archive_path already refused a file under a name the host keeps.
        let top = rel
            .components()
            .next()
            .map(|c| PathBuf::from(c.as_os_str()));
        if let Some(top) = top.filter(|top| !members.contains(top)) {
            members.push(top);
        }
    }
    Ok(members)
}

/// Strips the binary's symbols and debug lines with the system's `strip`,
/// when there is one (a symbol-laden binary still works, at several times
/// the size).
fn strip(bin: &Path) -> anyhow::Result<()> {
    let before = std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0);
    let Some(strip) = crate::tools::find_strip() else {
        eprintln!("warning: no `strip` on PATH; the host binary is packaged with its symbols");
        return Ok(());
    };
    let stripped_runs = |bin: &Path| {
        std::process::Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    match std::process::Command::new(&strip).arg(bin).status() {
        Ok(status) if status.success() && !stripped_runs(bin) => {
            bail!(
                "{} made a host binary that does not start; package with a binary stripped by your platform's own tools",
                strip.display()
            );
        }
        Ok(status) if status.success() => {
            let after = std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0);
            eprintln!(
                "==> strip the host binary: {:.1} MB → {:.1} MB",
                before as f64 / 1e6,
                after as f64 / 1e6
            );
        }
        _ => eprintln!(
            "warning: {} failed; the host binary is packaged with its symbols",
            strip.display()
        ),
    }
    Ok(())
}

/// A `.tar.gz` of `members` (paths relative to `stage`), listed by name:
/// azd refuses an entry `./` (it resolves to the extension folder itself).
fn write_archive(stage: &Path, members: &[PathBuf], archive: &Path) -> anyhow::Result<()> {
    let tmp = archive.with_extension("tmp");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    for member in members {
        let path = stage.join(member);
        if path.is_dir() {
            tar.append_dir_all(member, &path)?;
        } else {
            tar.append_path_with_name(&path, member)?;
        }
    }
    tar.into_inner()?.finish()?.flush()?;
    std::fs::rename(&tmp, archive)?;
    Ok(())
}
