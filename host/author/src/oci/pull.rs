//! `pull oci://REGISTRY/NAME:TAG|@DIGEST`: a provider's folder from its OCI
//! artifact, verified before it is kept. Each layer lands at the path its
//! title names (a plain relative path, or the pull is refused); the folder
//! is written beside the destination and moved into place only once its
//! signature verifies with a key the user trusts (or the user allows
//! unsigned providers, and then says so in the folder, so that `package`
//! will not sign over it). `--package` then makes it an azd extension
//! source, as `package` does, keeping the publisher's signature.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, bail};
use azd_wasm_host_trust::{TrustDir, Verdict};
use oci_client::Reference;
use oci_client::manifest::OciDescriptor;

use super::registry::{CONFIG_SCHEMA, EXTENSION, MANIFEST, SIGNATURE, TITLE, WASM};

/// The most a provider artifact may hold, all layers together.
const MAX_BYTES: i64 = 512 << 20;
/// The most layers a provider artifact may have: it has at most five (the
/// component, `provider.toml`, `extension.yaml`, the config schema, the
/// signature).
const MAX_LAYERS: usize = 16;

/// What `pull` does (the CLI reads its command line into it).
#[derive(Debug, Clone)]
pub struct PullOptions {
    /// What: `oci://REGISTRY/NAME:TAG` or `oci://REGISTRY/NAME@sha256:DIGEST`.
    pub reference: String,
    /// The folder to lay the provider out in (default: the artifact's name,
    /// in the current folder); it must not exist yet, or be empty.
    pub out: Option<PathBuf>,
    /// Then package it (an azd extension source in OUT/dist, with its signature).
    pub package: bool,
    /// With --package: sign it with your key even if its own signature did
    /// not verify (it was kept because unsigned providers are allowed).
    pub resign: bool,
    /// Registry user (the password in AZD_WASM_HOST_REGISTRY_PASSWORD); default: anonymous.
    pub user: Option<String>,
}

/// What `pull` laid out.
#[derive(Debug)]
pub struct Pulled {
    /// The provider's folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: PathBuf,
    /// The artifact's digest.
    pub digest: String,
    /// What verified it: `signed by key … (file)`, or why it runs unverified.
    pub trust: String,
}

/// `pull`.
pub async fn pull(args: &PullOptions) -> anyhow::Result<Pulled> {
    let reference = super::registry::reference(&args.reference)?;
    let name = reference
        .repository()
        .rsplit('/')
        .next()
        .unwrap_or("provider")
        .to_owned();
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(&name));
    let scratch = scratch_beside(&out)?;
    let digest = fetch(args, &reference, scratch.path()).await?;
    only_known_files(scratch.path(), &args.reference)?;
    let trust = TrustDir::from_env()?;
    let verdict = azd_wasm_host_trust::verify(&scratch.path().join("provider.toml"), &trust)
        .with_context(|| format!("{} is not kept", args.reference))?;
    let trust_line = match verdict {
        Verdict::Verified(v) => format!(
            "{} {}, signed by key {} ({})",
            v.statement.predicate.provider,
            v.statement.predicate.version,
            v.key,
            v.key_file.display()
        ),
        Verdict::Allowed(why) => {
            // `package` reads this and will not sign over it (unless --resign).
            let marker = scratch.path().join(crate::package::UNVERIFIED_MARKER);
            std::fs::write(
                &marker,
                format!("{} did not verify: {why}\n", args.reference),
            )
            .with_context(|| format!("cannot write {}", marker.display()))?;
            format!("NOT VERIFIED, kept because unsigned providers are allowed: {why}")
        }
    };
    if out.exists() {
        std::fs::remove_dir(&out)?;
    }
    let kept = scratch.keep();
    std::fs::rename(&kept, &out)
        .with_context(|| format!("cannot move the provider into {}", out.display()))?;
    Ok(Pulled {
        manifest: out.join("provider.toml"),
        dir: out,
        digest,
        trust: trust_line,
    })
}

/// A new, empty folder beside `out` (on its file system, so that the provider moves into `out`
/// whole), once `out` is known to be new or empty.
fn scratch_beside(out: &Path) -> anyhow::Result<tempfile::TempDir> {
    if out.exists()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!(
            "{} exists and is not empty: pull into a new folder (--out)",
            out.display()
        );
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)?;
    Ok(tempfile::Builder::new()
        .prefix(".pull-")
        .tempdir_in(&parent)?)
}

/// Fetches the artifact's layers into `into`, each at the path its title
/// names, each checked against its digest (by pull_blob); returns the artifact's digest.
async fn fetch(args: &PullOptions, reference: &Reference, into: &Path) -> anyhow::Result<String> {
    let client = super::registry::client(reference);
    let auth = super::registry::auth(args.user.as_deref())?;
    let (image, digest) =
        super::bounded::pull_manifest(&client, reference, &auth, &args.reference).await?;
    anyhow::ensure!(
        image.layers.len() <= MAX_LAYERS,
        "{} has {} layers; a provider artifact has at most {MAX_LAYERS}",
        args.reference,
        image.layers.len()
    );
    let total: i64 = image.layers.iter().map(|l| l.size.max(0)).sum();
    anyhow::ensure!(
        total <= MAX_BYTES,
        "{} holds {total} bytes, more than a provider may ({MAX_BYTES})",
        args.reference
    );
    for (layer, path) in files_of(&image.layers, &args.reference)? {
        // No more than the manifest declared: a registry that sends more is refused.
        let declared = usize::try_from(layer.size).unwrap_or(0);
        let mut data = Capped::new(declared);
        client
            .pull_blob(reference, layer, &mut data)
            .await
            .with_context(|| format!("pulling {}", path.display()))?;
        // pull_blob has checked the bytes against the layer's digest.
        let data = data.bytes;
        let dest = into.join(&path);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&dest, &data).with_context(|| format!("cannot write {}", dest.display()))?;
    }
    Ok(digest)
}

/// Refuses a pulled folder that holds anything but what a provider is made
/// of: `provider.toml`, the component it names, its config schema (if it
/// names one), `extension.yaml` and the signature. A layer titled
/// `precompiled/provider.cwasm` (native code) or anything else is refused
/// before the signature is even looked at, and nothing is kept.
fn only_known_files(dir: &Path, what: &str) -> anyhow::Result<()> {
    let manifest = azd_wasm_host_manifest::Manifest::load(&dir.join("provider.toml"))
        .with_context(|| format!("{what}: its provider.toml"))?;
    let inside =
        |path: &Path| -> Option<PathBuf> { path.strip_prefix(dir).ok().map(Path::to_path_buf) };
    let mut known: Vec<PathBuf> = vec![
        "provider.toml".into(),
        "extension.yaml".into(),
        azd_wasm_host_trust::BUNDLE_FILE.into(),
    ];
    known.extend(inside(&manifest.component));
    known.extend(
        manifest
            .config_schema
            .as_ref()
            .and_then(|schema| inside(&schema.path)),
    );
    for file in files_under(dir)? {
        let rel = inside(&file).unwrap_or_else(|| file.clone());
        anyhow::ensure!(
            known.contains(&rel),
            "{what} holds {}, which is none of the files a provider is made of (provider.toml, the component it names, its config schema, extension.yaml, {}): refused, nothing kept",
            rel.display(),
            azd_wasm_host_trust::BUNDLE_FILE
        );
    }
    Ok(())
}

/// Every file beneath `dir`.
fn files_under(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// A blob's bytes, refused past the size its descriptor declared.
struct Capped {
    bytes: Vec<u8>,
    limit: usize,
}

impl Capped {
    fn new(limit: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(limit),
            limit,
        }
    }
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.bytes.len() + buf.len() > this.limit {
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the registry sent more than the {} bytes the layer declares",
                this.limit
            ))));
        }
        this.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Each layer with the path its title names; refuses an artifact that is not
/// a provider (no component, no manifest) or names an unsafe path.
fn files_of<'a>(
    layers: &'a [OciDescriptor],
    what: &str,
) -> anyhow::Result<Vec<(&'a OciDescriptor, PathBuf)>> {
    let mut files = Vec::with_capacity(layers.len());
    for layer in layers {
        let known = [WASM, MANIFEST, EXTENSION, SIGNATURE, CONFIG_SCHEMA];
        if !known.contains(&layer.media_type.as_str()) {
            bail!(
                "{what} has a layer of type {:?}, which a provider artifact does not hold",
                layer.media_type
            );
        }
        let title = layer
            .annotations
            .as_ref()
            .and_then(|a| a.get(TITLE))
            .with_context(|| {
                format!(
                    "{what}: a {} layer names no file ({TITLE})",
                    layer.media_type
                )
            })?;
        let path = safe_path(title).with_context(|| {
            format!("{what}: the layer title {title:?} is not a plain relative path")
        })?;
        let fixed = match layer.media_type.as_str() {
            MANIFEST => Some("provider.toml"),
            EXTENSION => Some("extension.yaml"),
            SIGNATURE => Some(azd_wasm_host_trust::BUNDLE_FILE),
            _ => None,
        };
        if let Some(expected) = fixed {
            anyhow::ensure!(
                path == Path::new(expected),
                "{what}: the {} layer is titled {title:?}, not {expected}",
                layer.media_type
            );
        }
        if files.iter().any(|(_, p)| p == &path) {
            bail!("{what}: two layers are titled {title:?}");
        }
        files.push((layer, path));
    }
    for (kind, name) in [(WASM, "component"), (MANIFEST, "provider.toml")] {
        anyhow::ensure!(
            layers.iter().any(|l| l.media_type == kind),
            "{what} is not a provider: it has no {name} layer ({kind})"
        );
    }
    for (kind, name) in [(WASM, "component"), (CONFIG_SCHEMA, "config schema")] {
        anyhow::ensure!(
            layers.iter().filter(|l| l.media_type == kind).count() <= 1,
            "{what} has more than one {name} layer ({kind}): a provider has one"
        );
    }
    Ok(files)
}

/// `title` as a relative path of plain names.
fn safe_path(title: &str) -> Option<PathBuf> {
    let path = Path::new(title);
    let plain = !title.is_empty()
        && !title.contains('\\')
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    plain.then(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_blob_past_its_declared_size_is_refused() {
        use tokio::io::AsyncWriteExt as _;
        let mut capped = Capped::new(4);
        capped
            .write_all(b"abcd")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let e = capped.write_all(b"e").await.unwrap_err();
        assert!(e.to_string().contains("more than the 4 bytes"), "{e}");
        assert_eq!(capped.bytes, b"abcd");
    }

    #[test]
    fn only_plain_relative_titles_are_paths() {
        assert_eq!(
            safe_path("build/x.wasm"),
            Some(PathBuf::from("build/x.wasm"))
        );
        for bad in [
            "",
            "/etc/passwd",
            "../x.wasm",
            "build/../../x",
            "C:\\x.wasm",
            "./x",
        ] {
            assert_eq!(safe_path(bad), None, "{bad}");
        }
    }
}
