//! The project `run` drives a provider for: its folder, the `infra` section of
//! its `azure.yaml` (as azd reads it), and the provider's name.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host::runtime::{Manifest, object_to_struct};
use azd_wasm_host_proto::azdext as pb;

/// The `infra` section of `azure.yaml`, as far as a provider needs it.
#[derive(Debug, Default, serde::Deserialize)]
struct AzureYaml {
    #[serde(default)]
    infra: Infra,
}

#[derive(Debug, Default, serde::Deserialize)]
struct Infra {
    provider: Option<String>,
    path: Option<String>,
    module: Option<String>,
    #[serde(default)]
    config: Option<serde_json::Value>,
}

/// A project folder and what its `azure.yaml` says about infrastructure.
pub(super) struct Project {
    /// The folder, canonical.
    pub(super) dir: PathBuf,
    infra: Infra,
}

impl Project {
    /// Opens the project at `dir` and reads its `azure.yaml` (an absent file
    /// reads as no `infra` section).
    pub(super) fn open(dir: &Path) -> anyhow::Result<Self> {
        let dir = std::fs::canonicalize(dir)
            .with_context(|| format!("project directory {}", dir.display()))?;
        let infra = read_infra(&dir)?;
        Ok(Self { dir, infra })
    }

    /// The folder as text, as azd sends it.
    pub(super) fn path_text(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    /// The provider's name: `flag`, else the manifest's, else (for a bare
    /// component) `azure.yaml`'s `infra.provider`, else the file stem.
    pub(super) fn provider_name(
        &self,
        provider: &Path,
        flag: Option<&str>,
    ) -> anyhow::Result<String> {
        let bare = provider
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("wasm"));
        let hint = match (flag, bare) {
            (Some(f), _) => Some(f),
            (None, true) => self.infra.provider.as_deref(),
            (None, false) => None,
        };
        Ok(Manifest::resolve(provider, hint)?.name)
    }

    /// The Initialize options azd would send for this project's layer.
    pub(super) fn options(&self, provider: &str) -> pb::ProvisioningOptions {
        pb::ProvisioningOptions {
            provider: provider.to_owned(),
            path: self.infra.path.clone().unwrap_or_else(|| "infra".into()),
            module: self.infra.module.clone().unwrap_or_else(|| "main".into()),
            config: self
                .infra
                .config
                .as_ref()
                .and_then(serde_json::Value::as_object)
                .map(object_to_struct),
            ..Default::default()
        }
    }
}

fn read_infra(project: &Path) -> anyhow::Result<Infra> {
    let path = project.join("azure.yaml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let y: AzureYaml = serde_norway::from_str(&text)
                .with_context(|| format!("reading {}", path.display()))?;
            Ok(y.infra)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Infra::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_name_prefers_flag_then_manifest_then_yaml_for_a_bare_component() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("azure.yaml"),
            "name: p\ninfra:\n  provider: yaml\n",
        )
        .unwrap();
        let project = Project::open(dir.path()).unwrap();
        let m = dir.path().join("provider.toml");
        std::fs::write(&m, "name = \"files\"\ncomponent = \"x.wasm\"\n").unwrap();
        assert_eq!(project.provider_name(&m, None).unwrap(), "files");
        assert_eq!(project.provider_name(&m, Some("flag")).unwrap(), "flag");
        let w = dir.path().join("thing.wasm");
        assert_eq!(project.provider_name(&w, None).unwrap(), "yaml");
        std::fs::remove_file(dir.path().join("azure.yaml")).unwrap();
        let project = Project::open(dir.path()).unwrap();
        assert_eq!(project.provider_name(&w, None).unwrap(), "thing");
    }
}
