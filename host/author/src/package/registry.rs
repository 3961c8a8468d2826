//! The extension source's `registry.json`, in azd's registry format.

use super::checks::ExtensionYaml;
use super::platforms::{Platform, Shipped as _};

/// One platform's archive, as the registry lists it.
#[derive(Debug, Clone)]
pub(super) struct Artifact {
    pub(super) platform: Platform,
    pub(super) url: String,
    pub(super) sha256: String,
}

/// The registry JSON of one extension version with an artifact per platform.
///
/// Each artifact names its own entry point (azd reads an artifact's
/// `entryPoint` before the version's), so a Windows archive starts
/// `azd-wasm-host.exe`; the version's is the name on every other platform,
/// for an azd that reads only that one.
pub(super) fn registry_json(ext: &ExtensionYaml, artifacts: &[Artifact]) -> serde_json::Value {
    let artifacts: serde_json::Map<String, serde_json::Value> = artifacts
        .iter()
        .map(|a| {
            let artifact = serde_json::json!({
                "url": a.url,
                "checksum": { "algorithm": "sha256", "value": a.sha256 },
                "entryPoint": a.platform.exe_name(),
            });
            (a.platform.key(), artifact)
        })
        .collect();
    // The archive's binary answers `metadata` (azd's metadata, `package`'s
    // azd-metadata.json), whether extension.yaml lists the capability or not.
    let mut capabilities = ext.capabilities.clone();
    if !capabilities
        .iter()
        .any(|c| c == super::metadata::CAPABILITY)
    {
        capabilities.push(super::metadata::CAPABILITY.to_owned());
    }
    let mut version = serde_json::json!({
        "version": ext.version,
        "capabilities": capabilities,
        "providers": ext.providers,
        "entryPoint": "azd-wasm-host",
        "artifacts": artifacts,
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

    #[test]
    fn every_platform_gets_its_own_artifact_and_entry_point() {
        let ext: ExtensionYaml = serde_norway::from_str(
            "id: local.todo\ndisplayName: t\ndescription: d\nversion: 0.2.0\n\
             capabilities: [provisioning-provider]\nproviders:\n  - name: todo\n    type: provisioning-provider\n",
        )
        .unwrap();
        let artifact = |p: &str| Artifact {
            platform: Platform::parse(p).unwrap(),
            url: format!("https://x/{p}.tar.gz"),
            sha256: format!("sha-{p}"),
        };
        let json = registry_json(&ext, &[artifact("linux/amd64"), artifact("windows/amd64")]);
        let version = &json["extensions"][0]["versions"][0];
        assert_eq!(version["version"], "0.2.0");
        assert_eq!(version["providers"][0]["name"], "todo");
        assert_eq!(
            version["capabilities"],
            serde_json::json!(["provisioning-provider", "metadata"])
        );
        let arts = version["artifacts"].as_object().unwrap();
        assert_eq!(arts.len(), 2);
        assert_eq!(arts["windows/amd64"]["entryPoint"], "azd-wasm-host.exe");
        assert_eq!(arts["linux/amd64"]["entryPoint"], "azd-wasm-host");
        assert_eq!(
            arts["windows/amd64"]["checksum"]["value"],
            "sha-windows/amd64"
        );
        assert_eq!(arts["linux/amd64"]["url"], "https://x/linux/amd64.tar.gz");
        assert_eq!(json["schemaVersion"], "1.0");
    }
}
