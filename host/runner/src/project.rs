//! The project `run` drives a provider for: its folder, the `infra` section of
//! its `azure.yaml` (as azd reads it), and the provider's name.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_core::json::object_to_struct;
use azd_wasm_host_manifest::Manifest;
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
    /// Opens the project at `dir` and reads its `azure.yaml`, which must
    /// exist and name the provider in `infra.provider` (azd provisions a
    /// project without one with Bicep, never with an extension).
    pub(super) fn open(dir: &Path) -> anyhow::Result<Self> {
        let dir = std::fs::canonicalize(dir)
            .with_context(|| format!("project directory {}", dir.display()))?;
        let infra = read_infra(&dir)?;
        if infra.provider.as_deref().is_none_or(str::is_empty) {
            anyhow::bail!(
                "{} has no infra.provider: azd would provision this project with Bicep, not \
                 with a provider extension; add\n  infra:\n    provider: <the provider's name>",
                dir.join("azure.yaml").display()
            );
        }
        Ok(Self { dir, infra })
    }

    /// The folder as text, as azd sends it.
    pub(super) fn path_text(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    /// The provider's name: `flag`, else the manifest's, else (for a bare
    /// component) `azure.yaml`'s `infra.provider`. It must be the name
    /// `infra.provider` asks for: azd finds the provider by that name (and
    /// fails with `no concrete found` when no extension registered it).
    pub(super) fn provider_name(
        &self,
        provider: &Path,
        flag: Option<&str>,
    ) -> anyhow::Result<String> {
        let bare = provider
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("wasm"));
        let wanted = self.infra.provider.as_deref().unwrap_or_default();
        let hint = match (flag, bare) {
            (Some(f), _) => Some(f),
            (None, true) => Some(wanted),
            (None, false) => None,
        };
        let name = Manifest::resolve(provider, hint)?.name;
        if name != wanted {
            anyhow::bail!(
                "azure.yaml asks for the provider '{wanted}' (infra.provider) but {} is named \
                 '{name}': azd would not find it (`no concrete found`); use one name in both",
                provider.display()
            );
        }
        Ok(name)
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
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
            "no azure.yaml in {}: `run` drives a provider for an azd project (pass its folder \
             with --project; `azd init` or `azd-wasm-host new` makes one)",
            project.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let y: AzureYaml =
        serde_norway::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    Ok(y.infra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provider_must_be_the_one_azure_yaml_names() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = dir.path().join("azure.yaml");
        std::fs::write(&yaml, "name: p\ninfra:\n  provider: files\n").unwrap();
        let project = Project::open(dir.path()).unwrap();
        let m = dir.path().join("provider.toml");
        std::fs::write(&m, "name = \"files\"\ncomponent = \"x.wasm\"\n").unwrap();
        assert_eq!(project.provider_name(&m, None).unwrap(), "files");
        let w = dir.path().join("thing.wasm");
        assert_eq!(project.provider_name(&w, None).unwrap(), "files");
        let e = project.provider_name(&m, Some("other")).unwrap_err();
        assert!(e.to_string().contains("no concrete found"), "{e}");
        std::fs::write(&m, "name = \"renamed\"\ncomponent = \"x.wasm\"\n").unwrap();
        let e = project.provider_name(&m, None).unwrap_err();
        assert!(e.to_string().contains("'renamed'"), "{e}");
    }

    #[test]
    fn a_project_without_azure_yaml_or_infra_provider_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = Project::open(dir.path()).err().unwrap();
        assert!(e.to_string().contains("no azure.yaml"), "{e}");
        let yaml = dir.path().join("azure.yaml");
        for text in [
            "name: p\n",
            "name: p\ninfra:\n  path: infra\n",
            "infra:\n  provider: ''\n",
        ] {
            std::fs::write(&yaml, text).unwrap();
            let e = Project::open(dir.path()).err().unwrap();
            assert!(e.to_string().contains("Bicep"), "{text:?}: {e}");
        }
        std::fs::write(&yaml, "infra: [not, a, map]\n").unwrap();
        assert!(Project::open(dir.path()).is_err());
    }
}
