//! What `package` checks before it writes anything: every name azd matches
//! in the extension manifest (`extension.yaml`) and the sample project.

use std::path::Path;

use anyhow::{Context as _, bail};
use azd_wasm_host_manifest::Manifest;

use crate::names::check_extension_id;
use serde::Deserialize;

use azd_wasm_host_core::azd::{
    CAPABILITIES as AZD_CAPABILITIES, PROVISIONING_PROVIDER as PROVISIONING,
};

/// The extension manifest, as far as `package` reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExtensionYaml {
    pub(crate) id: String,
    #[serde(default)]
    pub(super) namespace: Option<String>,
    pub(super) display_name: String,
    pub(super) description: String,
    pub(crate) version: String,
    #[serde(default)]
    pub(super) usage: Option<String>,
    #[serde(default)]
    pub(super) required_azd_version: Option<String>,
    #[serde(default)]
    pub(super) capabilities: Vec<String>,
    #[serde(default)]
    pub(super) providers: Vec<ProviderEntry>,
    #[serde(default)]
    pub(super) tags: Vec<String>,
    #[serde(default)]
    pub(super) examples: Vec<serde_json::Value>,
    /// Must be the host binary's name when given: the archive's executable is it.
    #[serde(default)]
    pub(super) entry_point: Option<String>,
}

/// One entry of `providers`.
#[derive(Debug, Deserialize, serde::Serialize)]
pub(super) struct ProviderEntry {
    pub(super) name: String,
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) description: String,
}

/// Everything azd will match, checked; the first problem is the error.
pub(super) fn check(
    ext: &ExtensionYaml,
    manifest: &Manifest,
    ext_path: &Path,
) -> anyhow::Result<()> {
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
    if crate::names::RESERVED_PROVIDER_NAMES.contains(&name) {
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
pub(super) fn check_sample_project(dir: &Path, name: &str) -> anyhow::Result<()> {
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
