//! `azd-wasm-host package`: an azd extension source for one provider.
//!
//! It writes, in `dist/` beside the manifest:
//! - `<id>-<os>-<arch>.tar.gz`: this host binary (stripped) as the entry
//!   point, `provider.toml`, the component at its manifest path, and its code
//!   precompiled by this host into `precompiled/` (so the first `azd
//!   provision` compiles nothing);
//! - `registry.json`: the extension in azd's registry format, its artifact
//!   with its sha256, ready for `azd extension source add -t file`.
//!
//! Before anything is written it checks every name azd matches: the
//! extension id and version (azd's own rules), the `provisioning-provider`
//! capability, the `providers` entry that must name the manifest's provider
//! (otherwise azd starts the extension and then fails with `no concrete
//! found`), a provider name azd keeps for itself, and the sample
//! `azure.yaml`'s `infra.provider`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use azd_wasm_host::runtime::{self, Manifest};
use serde::Deserialize;

/// Arguments of `package`.
#[derive(Debug, clap::Args)]
pub struct PackageArgs {
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
    /// The extension manifest (default: `extension.yaml` beside the provider manifest).
    #[arg(long)]
    pub extension: Option<PathBuf>,
    /// Where the source is written (default: `dist/` beside the provider manifest).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The URL the archive will be published under (a folder); default: the
    /// archive's absolute path, for a local `file` source.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Do not ship precompiled code (the first start compiles the component).
    #[arg(long)]
    pub no_precompile: bool,
}

/// The capabilities azd 1.31 knows (`ValidCapabilities`, pkg/extensions).
const AZD_CAPABILITIES: &[&str] = &[
    "custom-commands",
    "lifecycle-events",
    "mcp-server",
    "service-target-provider",
    "framework-service-provider",
    "metadata",
    "provisioning-provider",
    "validation-provider",
];
/// The capability and provider type of a provisioning provider.
const PROVISIONING: &str = "provisioning-provider";
/// The platforms azd has artifacts for (`ValidPlatforms`).
const AZD_PLATFORMS: &[&str] = &[
    "windows/amd64",
    "windows/arm64",
    "darwin/amd64",
    "darwin/arm64",
    "linux/amd64",
    "linux/arm64",
];

/// The extension manifest, as far as `package` reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExtensionYaml {
    id: String,
    #[serde(default)]
    namespace: Option<String>,
    display_name: String,
    description: String,
    version: String,
    #[serde(default)]
    usage: Option<String>,
    #[serde(default)]
    required_azd_version: Option<String>,
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default)]
    providers: Vec<ProviderEntry>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    examples: Vec<serde_json::Value>,
    /// Must be the host binary's name when given: the archive's executable is it.
    #[serde(default)]
    entry_point: Option<String>,
}

/// One entry of `providers`.
#[derive(Debug, Deserialize, serde::Serialize)]
struct ProviderEntry {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    description: String,
}

/// Checks an extension id against azd's rule (`extensionIdRegex`): at least
/// two dot-separated segments of lower-case letters, digits and inner hyphens.
pub fn check_extension_id(id: &str) -> anyhow::Result<()> {
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !s.starts_with('-')
            && !s.ends_with('-')
    };
    let segments: Vec<&str> = id.split('.').collect();
    if segments.len() < 2 || !segments.iter().all(|s| segment_ok(s)) {
        bail!(
            "extension id `{}` is not one azd accepts: dot-separated segments of lower-case letters, \
             digits and inner hyphens, at least two (e.g. `contoso.todo`)",
            id.escape_debug()
        );
    }
    Ok(())
}

/// Everything azd will match, checked; the first problem is the error.
fn check(ext: &ExtensionYaml, manifest: &Manifest, ext_path: &Path) -> anyhow::Result<()> {
    let at = |field: &str| format!("{}: `{field}`", ext_path.display());
    check_extension_id(&ext.id).with_context(|| at("id"))?;
    semver::Version::parse(&ext.version).map_err(|e| {
        anyhow::anyhow!(
            "{} `{}` is not MAJOR.MINOR.PATCH: {e}",
            at("version"),
            ext.version
        )
    })?;
    if ext.display_name.trim().is_empty() || ext.description.trim().is_empty() {
        bail!("{} and `description` must not be empty", at("displayName"));
    }
    if let Some(unknown) = ext
        .capabilities
        .iter()
        .find(|c| !AZD_CAPABILITIES.contains(&c.as_str()))
    {
        bail!(
            "{} names `{unknown}`, which azd does not know (it knows {})",
            at("capabilities"),
            AZD_CAPABILITIES.join(", ")
        );
    }
    if !ext.capabilities.iter().any(|c| c == PROVISIONING) {
        bail!(
            "{} must include `{PROVISIONING}`, or azd never starts the extension for provisioning",
            at("capabilities")
        );
    }
    check_providers(ext, &manifest.name, &at("providers"))?;
    if let Some(entry) = ext.entry_point.as_deref()
        && entry.trim_end_matches(".exe") != "azd-wasm-host"
    {
        bail!(
            "{} is `{entry}`, but the archive's executable is the host, `azd-wasm-host` \
             (`.exe` on Windows): remove the line or name the host",
            at("entryPoint")
        );
    }
    if let Some(ns) = &ext.namespace
        && (ns.is_empty() || ns.contains(char::is_whitespace))
    {
        bail!("{} must be one word", at("namespace"));
    }
    Ok(())
}

/// The `providers` list must name `name` as this extension's one
/// provisioning provider (`at` names the field in errors).
fn check_providers(ext: &ExtensionYaml, name: &str, at: &str) -> anyhow::Result<()> {
    if super::new::RESERVED_PROVIDER_NAMES.contains(&name) {
        bail!(
            "`{}` is one of azd's own provider names; azd would never ask the extension",
            name
        );
    }
    let provisioning: Vec<&ProviderEntry> = ext
        .providers
        .iter()
        .filter(|p| p.kind == PROVISIONING)
        .collect();
    if !provisioning.iter().any(|p| p.name == name) {
        let listed: Vec<&str> = provisioning.iter().map(|p| p.name.as_str()).collect();
        bail!(
            "{} has no `{{ name: {}, type: {PROVISIONING} }}` entry (it lists {}): provider.toml names \
             `{}`, and azd picks the extension by this list; with a mismatch azd fails inside with \
             `no concrete found`",
            at,
            name,
            if listed.is_empty() {
                "none".to_owned()
            } else {
                listed.join(", ")
            },
            name
        );
    }
    if let Some(other) = provisioning.iter().find(|p| p.name != name) {
        bail!(
            "{} also names the provisioning provider `{}`, but this extension serves only `{}`",
            at,
            other.name,
            name
        );
    }
    Ok(())
}

/// The sample `azure.yaml` beside the manifest, when there is one, must
/// select this provider (as `run` and azd will check).
fn check_sample_project(dir: &Path, name: &str) -> anyhow::Result<()> {
    let path = dir.join("azure.yaml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let doc: serde_norway::Value = serde_norway::from_str(&text)
        .with_context(|| format!("{} is not valid YAML", path.display()))?;
    match doc
        .get("infra")
        .and_then(|i| i.get("provider"))
        .and_then(|p| p.as_str())
    {
        Some(p) if p != name => bail!(
            "{}: infra.provider is `{p}` but provider.toml names `{name}`; azd would not find the provider",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// This machine's platform as azd names it (`<GOOS>/<GOARCH>`).
fn platform() -> anyhow::Result<&'static str> {
    let key = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux/amd64",
        ("linux", "aarch64") => "linux/arm64",
        ("macos", "x86_64") => "darwin/amd64",
        ("macos", "aarch64") => "darwin/arm64",
        ("windows", "x86_64") => "windows/amd64",
        ("windows", "aarch64") => "windows/arm64",
        (os, arch) => bail!("azd has no extension artifacts for {os}/{arch}"),
    };
    debug_assert!(AZD_PLATFORMS.contains(&key));
    Ok(key)
}

/// What `package` made.
#[derive(Debug)]
pub struct Packaged {
    /// The registry JSON.
    pub registry: PathBuf,
    /// The archive for this platform.
    pub archive: PathBuf,
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
}

/// Reads the manifests and checks everything azd and the archive depend on.
fn read_inputs(args: &PackageArgs) -> anyhow::Result<Inputs> {
    let manifest_path = super::manifest_path(args.manifest.as_deref())?;
    let dir = manifest_path
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let manifest = Manifest::load(&manifest_path)?;
    let ext_path = args
        .extension
        .clone()
        .unwrap_or_else(|| dir.join("extension.yaml"));
    let ext_text = std::fs::read_to_string(&ext_path).with_context(|| {
        format!(
            "cannot read the extension manifest {} (azd-wasm-host new writes one)",
            ext_path.display()
        )
    })?;
    let ext: ExtensionYaml = serde_norway::from_str(&ext_text)
        .with_context(|| format!("{} is not an extension manifest", ext_path.display()))?;
    check(&ext, &manifest, &ext_path)?;
    check_sample_project(&dir, &manifest.name)?;
    let component_rel = archive_path(&manifest.component, &dir)?;
    if !manifest.component.is_file() {
        bail!(
            "{} is not built: run azd-wasm-host build first",
            super::shown(&manifest.component)
        );
    }
    runtime::inspect_component(&manifest.component)?;
    Ok(Inputs {
        manifest_path,
        dir,
        manifest,
        ext,
        component_rel,
    })
}

/// The component's path inside the archive: inside the provider's folder,
/// and clear of the names the archive keeps for the host.
fn archive_path(component: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
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
                "the component {} must be inside the provider's folder {}",
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
        runtime::PRECOMPILED_DIR,
    ];
    if kept.contains(&top.as_str()) {
        bail!(
            "the component's path {} starts with `{top}`, which the archive keeps for the host; \
             put the component elsewhere (e.g. build/)",
            rel.display()
        );
    }
    Ok(rel)
}

/// `package`: checks, stages and writes the extension source.
pub fn package(args: &PackageArgs) -> anyhow::Result<Packaged> {
    let inputs = read_inputs(args)?;
    let platform = platform()?;
    let entry_point = format!("azd-wasm-host{}", std::env::consts::EXE_SUFFIX);
    let out = args.out.clone().unwrap_or_else(|| inputs.dir.join("dist"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let out = std::fs::canonicalize(&out)?;
    let stage = tempfile::Builder::new()
        .prefix(".stage-")
        .tempdir_in(&out)?;
    let mut members = stage_files(
        stage.path(),
        &inputs.manifest_path,
        &inputs.manifest,
        &inputs.component_rel,
        &entry_point,
    )?;
    if !args.no_precompile {
        let staged_manifest = Manifest::load(&stage.path().join("provider.toml"))?;
        eprintln!("==> precompile the component for {platform}");
        runtime::precompile_into(
            &staged_manifest,
            &stage.path().join(runtime::PRECOMPILED_DIR),
        )?;
        members.push(PathBuf::from(runtime::PRECOMPILED_DIR));
    }
    let ext = &inputs.ext;
    let (os, arch) = platform.split_once('/').unwrap_or((platform, ""));
    let archive = out.join(format!("{}-{os}-{arch}.tar.gz", ext.id.replace('.', "-")));
    write_archive(stage.path(), &members, &archive)?;
    let sha = hex::encode(runtime::sha256_file(&archive)?);
    let url = match &args.base_url {
        Some(base) => format!("{}/{}", base.trim_end_matches('/'), file_name(&archive)),
        None => archive.display().to_string(),
    };
    let registry = out.join("registry.json");
    let json = registry_json(ext, platform, &url, &sha, &entry_point);
    std::fs::write(&registry, serde_json::to_string_pretty(&json)? + "\n")?;
    eprintln!(
        "Packaged {} {} for {platform}: {} ({:.1} MB)",
        ext.id,
        ext.version,
        super::shown(&archive),
        std::fs::metadata(&archive)?.len() as f64 / 1e6
    );
    Ok(Packaged {
        registry,
        archive,
        id: ext.id.clone(),
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Copies the binary (stripped), the manifest and the component into `stage`;
/// returns the archive's top-level members.
fn stage_files(
    stage: &Path,
    manifest_path: &Path,
    manifest: &Manifest,
    component_rel: &Path,
    entry_point: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let exe = std::env::current_exe().context("cannot find this host's own binary")?;
    let bin = stage.join(entry_point);
    std::fs::copy(&exe, &bin).with_context(|| format!("cannot copy {}", exe.display()))?;
    strip(&bin)?;
    std::fs::copy(manifest_path, stage.join("provider.toml"))?;
    let dest = stage.join(component_rel);
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(&manifest.component, &dest)?;
    let top = component_rel
        .components()
        .next()
        .map(|c| PathBuf::from(c.as_os_str()));
    let mut members = vec![PathBuf::from(entry_point), PathBuf::from("provider.toml")];
    // archive_path already refused a component under a name the host keeps.
    members.extend(top);
    Ok(members)
}

/// Strips the binary's symbols and debug lines with the system's `strip`,
/// when there is one (a symbol-laden binary still works, at several times
/// the size).
fn strip(bin: &Path) -> anyhow::Result<()> {
    let before = std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0);
    let Some(strip) = super::build::find_strip() else {
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

/// The registry JSON of one extension version with one artifact.
fn registry_json(
    ext: &ExtensionYaml,
    platform: &str,
    url: &str,
    sha: &str,
    entry_point: &str,
) -> serde_json::Value {
    let mut version = serde_json::json!({
        "version": ext.version,
        "capabilities": ext.capabilities,
        "providers": ext.providers,
        "entryPoint": entry_point,
        "artifacts": {
            platform: {
                "url": url,
                "checksum": { "algorithm": "sha256", "value": sha },
                "entryPoint": entry_point,
            }
        },
    });
    if let Some(req) = &ext.required_azd_version {
        version["requiredAzdVersion"] = req.clone().into();
    }
    if let Some(usage) = &ext.usage {
        version["usage"] = usage.clone().into();
    }
    if !ext.examples.is_empty() {
        version["examples"] = ext.examples.clone().into();
    }
    let mut extension = serde_json::json!({
        "id": ext.id,
        "displayName": ext.display_name,
        "description": ext.description,
        "versions": [version],
    });
    if let Some(ns) = &ext.namespace {
        extension["namespace"] = ns.clone().into();
    }
    if !ext.tags.is_empty() {
        extension["tags"] = ext.tags.clone().into();
    }
    serde_json::json!({ "schemaVersion": "1.0", "extensions": [extension] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(providers: &str) -> ExtensionYaml {
        serde_norway::from_str(&format!(
            "id: local.todo\ndisplayName: t\ndescription: d\nversion: 0.1.0\n\
             capabilities: [provisioning-provider]\nproviders:\n{providers}"
        ))
        .unwrap()
    }

    fn manifest(name: &str) -> Manifest {
        Manifest::parse(
            &format!("name = \"{name}\"\ncomponent = \"build/x.wasm\"\n"),
            Path::new("/p/provider.toml"),
        )
        .unwrap()
    }

    #[test]
    fn extension_ids_follow_azds_rule() {
        for ok in ["local.todo", "contoso.azd.storage-accounts", "a.b", "x1.y2"] {
            check_extension_id(ok).unwrap();
        }
        for bad in [
            "todo",
            "Local.todo",
            "local..todo",
            "local.-todo",
            "local.todo-",
            "local.to do",
            ".a",
            "a.",
        ] {
            assert!(check_extension_id(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn a_provider_name_missing_from_the_list_is_refused_with_azds_symptom() {
        let err = check(
            &ext("  - name: other\n    type: provisioning-provider\n"),
            &manifest("todo"),
            Path::new("extension.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("no concrete found") && err.contains("other"),
            "{err}"
        );
        check(
            &ext("  - name: todo\n    type: provisioning-provider\n"),
            &manifest("todo"),
            Path::new("e"),
        )
        .unwrap();
        let err = check(
            &ext("  - name: todo\n    type: provisioning-provider\n  - name: two\n    type: provisioning-provider\n"),
            &manifest("todo"),
            Path::new("e"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("only `todo`"), "{err}");
    }

    #[test]
    fn bad_versions_and_capabilities_are_refused() {
        let mut e = ext("  - name: todo\n    type: provisioning-provider\n");
        e.version = "1.0".into();
        assert!(
            check(&e, &manifest("todo"), Path::new("e"))
                .unwrap_err()
                .to_string()
                .contains("MAJOR.MINOR.PATCH")
        );
        let mut e = ext("  - name: todo\n    type: provisioning-provider\n");
        e.capabilities = vec!["custom-commands".into()];
        assert!(check(&e, &manifest("todo"), Path::new("e")).is_err());
        e.capabilities = vec!["provisioning-provider".into(), "teleport".into()];
        assert!(
            check(&e, &manifest("todo"), Path::new("e"))
                .unwrap_err()
                .to_string()
                .contains("teleport")
        );
    }

    #[test]
    fn the_sample_project_must_select_the_provider() {
        let dir = tempfile::tempdir().unwrap();
        check_sample_project(dir.path(), "todo").unwrap();
        std::fs::write(
            dir.path().join("azure.yaml"),
            "name: x\ninfra:\n  provider: other\n",
        )
        .unwrap();
        let err = check_sample_project(dir.path(), "todo")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`other`"), "{err}");
    }
}
