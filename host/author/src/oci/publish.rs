//! `publish oci://REGISTRY/NAME:TAG`: the provider's component, manifest,
//! config schema (when it names one), `extension.yaml` and signature pushed
//! as one OCI artifact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;

use super::registry::{CONFIG_SCHEMA, EXTENSION, MANIFEST, SIGNATURE, TITLE, WASM, WASM_CONFIG};
use crate::package::Signer;

/// What `publish` does (the CLI reads its command line into it).
#[derive(Debug, Clone)]
pub struct PublishOptions {
    /// Where: `oci://REGISTRY/NAME:TAG`.
    pub reference: String,
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
    /// The extension manifest, for the version (default: `extension.yaml` beside the provider manifest).
    pub extension: Option<PathBuf>,
    /// How it is signed, as `package` signs.
    pub signing: crate::package::Signing,
    /// Registry user (the password in AZD_WASM_HOST_REGISTRY_PASSWORD); default: anonymous.
    pub user: Option<String>,
}

/// What `publish` pushed.
#[derive(Debug)]
pub struct Published {
    /// The reference pushed to.
    pub reference: String,
    /// The artifact's manifest digest (`sha256:…`).
    pub digest: String,
}

/// `publish`.
pub async fn publish(args: &PublishOptions) -> anyhow::Result<Published> {
    let reference = super::registry::reference(&args.reference)?;
    let manifest_path = crate::paths::manifest_path(args.manifest.as_deref())?;
    let (layers, name, version) = layers(args, &manifest_path)?;
    let layer_digests: Vec<String> = layers.iter().map(ImageLayer::sha256_digest).collect();
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": layer_digests,
    });
    let config = Config::new(serde_json::to_vec(&config)?, WASM_CONFIG.to_owned(), None);
    let annotations = BTreeMap::from([
        ("org.opencontainers.image.title".to_owned(), name),
        ("org.opencontainers.image.version".to_owned(), version),
    ]);
    let image = OciImageManifest::build(&layers, &config, Some(annotations));
    let client = super::registry::client(&reference);
    let auth = super::registry::auth(args.user.as_deref())?;
    client
        .push(&reference, &layers, config, &auth, Some(image))
        .await
        .with_context(|| format!("pushing to {}", args.reference))?;
    // The digest as the registry keeps it (what `pull REF@DIGEST` names).
    let digest = client
        .fetch_manifest_digest(&reference, &auth)
        .await
        .with_context(|| format!("reading back the digest of {}", args.reference))?;
    Ok(Published {
        reference: args.reference.clone(),
        digest,
    })
}

/// The artifact's layers (the component first), the provider's name and its
/// version: [`stage`] then [`layers_of`].
fn layers(
    args: &PublishOptions,
    manifest_path: &Path,
) -> anyhow::Result<(Vec<ImageLayer>, String, String)> {
    let staged = stage(args, manifest_path)?;
    let layers = layers_of(&staged)?;
    Ok((layers, staged.name, staged.version))
}

/// The provider's files copied into a scratch folder of our own and signed
/// there: the project keeps no signature that its next build would make
/// stale, and what is pushed is read from that folder only, so the layers
/// are the very files the signature covers, whatever happens to the
/// project's files meanwhile.
struct Staged {
    scratch: tempfile::TempDir,
    /// The component's name in the provider's folder (`build/x.wasm`).
    component: String,
    /// The config schema's, when the manifest names one.
    schema: Option<String>,
    /// The signature's file name, when signed.
    signature: Option<&'static str>,
    name: String,
    version: String,
}

fn stage(args: &PublishOptions, manifest_path: &Path) -> anyhow::Result<Staged> {
    let dir = manifest_path
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let manifest = azd_wasm_host_manifest::Manifest::load(manifest_path)?;
    anyhow::ensure!(
        manifest.component.is_file(),
        "{} is not built: run azd-wasm-host build first",
        crate::paths::shown(&manifest.component)
    );
    azd_wasm_host_runtime::inspect_component(&manifest.component)?;
    let ext_path = args
        .extension
        .clone()
        .unwrap_or_else(|| dir.join("extension.yaml"));
    let ext = crate::package::read_extension(&ext_path)?;
    let component_rel = crate::package::archive_path(&manifest.component, &dir)?;

    let scratch = tempfile::tempdir()?;
    std::fs::copy(manifest_path, scratch.path().join("provider.toml"))?;
    let staged = scratch.path().join(&component_rel);
    if let Some(parent) = staged.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(&manifest.component, &staged)?;
    let schema = stage_schema(&manifest, &dir, scratch.path())?;
    // Signed with the component and the manifest: the extension's id and version.
    std::fs::copy(&ext_path, scratch.path().join("extension.yaml"))
        .with_context(|| format!("cannot copy {}", ext_path.display()))?;
    let signer = Signer::choose(
        args.signing.key.as_deref(),
        args.signing.unsigned,
        args.signing.resign,
        manifest_path,
    )?;
    let signature = signer
        .sign(
            &scratch.path().join("provider.toml"),
            &ext.version,
            Some(&ext.id),
        )?
        .into_iter()
        .next();
    Ok(Staged {
        scratch,
        component: component_rel.to_string_lossy().replace('\\', "/"),
        schema,
        signature,
        name: manifest.name,
        version: ext.version,
    })
}

/// The layers, each read from the staged (signed) folder.
fn layers_of(staged: &Staged) -> anyhow::Result<Vec<ImageLayer>> {
    let title = |name: &str| Some(BTreeMap::from([(TITLE.to_owned(), name.to_owned())]));
    let read = |name: &str| {
        let path = staged.scratch.path().join(name);
        std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))
    };
    let mut layers = vec![
        ImageLayer::new(
            read(&staged.component)?,
            WASM.to_owned(),
            title(&staged.component),
        ),
        ImageLayer::new(
            read("provider.toml")?,
            MANIFEST.to_owned(),
            title("provider.toml"),
        ),
        ImageLayer::new(
            read("extension.yaml")?,
            EXTENSION.to_owned(),
            title("extension.yaml"),
        ),
    ];
    if let Some(schema) = &staged.schema {
        layers.push(ImageLayer::new(
            read(schema)?,
            CONFIG_SCHEMA.to_owned(),
            title(schema),
        ));
    }
    if let Some(file) = staged.signature {
        layers.push(ImageLayer::new(
            read(file)?,
            SIGNATURE.to_owned(),
            title(file),
        ));
    }
    Ok(layers)
}

/// Copies the config schema, if the manifest names one, into the scratch
/// folder (it is signed with the manifest); returns its path in the
/// provider's folder.
fn stage_schema(
    manifest: &azd_wasm_host_manifest::Manifest,
    dir: &Path,
    scratch: &Path,
) -> anyhow::Result<Option<String>> {
    let Some(schema) = &manifest.config_schema else {
        return Ok(None);
    };
    let rel = crate::package::archive_path(&schema.path, dir)?;
    let staged = scratch.join(&rel);
    if let Some(parent) = staged.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(&schema.path, &staged)?;
    Ok(Some(rel.to_string_lossy().replace('\\', "/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is pushed is what was signed: every layer is read from the
    /// staged folder the signature was made in, never from the project,
    /// whose files may change after the signature was made.
    #[test]
    fn every_layer_is_the_staged_signed_file() {
        let scratch = tempfile::tempdir().unwrap();
        let files = [
            ("build/p.wasm", "signed component"),
            ("provider.toml", "signed manifest"),
            ("extension.yaml", "signed extension"),
            ("schema.json", "signed schema"),
            (azd_wasm_host_trust::BUNDLE_FILE, "the signature"),
        ];
        for (name, text) in files {
            let path = scratch.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let staged = Staged {
            scratch,
            component: "build/p.wasm".into(),
            schema: Some("schema.json".into()),
            signature: Some(azd_wasm_host_trust::BUNDLE_FILE),
            name: "p".into(),
            version: "1.0.0".into(),
        };
        let layers = layers_of(&staged).unwrap();
        let got: Vec<(String, String, String)> = layers
            .iter()
            .map(|l| {
                let title = l.annotations.as_ref().unwrap()[TITLE].clone();
                let text = String::from_utf8(l.data.to_vec()).unwrap();
                (title, l.media_type.clone(), text)
            })
            .collect();
        let want = [
            ("build/p.wasm", WASM, "signed component"),
            ("provider.toml", MANIFEST, "signed manifest"),
            ("extension.yaml", EXTENSION, "signed extension"),
            ("schema.json", CONFIG_SCHEMA, "signed schema"),
            (azd_wasm_host_trust::BUNDLE_FILE, SIGNATURE, "the signature"),
        ]
        .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
        assert_eq!(got, want);
    }
}
