//! The artifact's manifest, read with a bound: the OCI client reads a
//! manifest whole, whatever its size, so `pull` fetches it itself (with the
//! client's credentials) and stops at [`MAX_MANIFEST_BYTES`], before parsing
//! anything. Its digest is checked against the reference's, when the
//! reference names one.

use anyhow::{Context as _, bail};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use sha2::{Digest as _, Sha256};

/// The most a provider artifact's manifest may be. A provider's has a few
/// layers and is a few kilobytes; 1 MiB is far beyond any real one.
pub(super) const MAX_MANIFEST_BYTES: usize = 1 << 20;

/// The media types a provider artifact's manifest may come as.
const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

/// The manifest of `reference` and its digest, read at most
/// [`MAX_MANIFEST_BYTES`] bytes.
pub(super) async fn pull_manifest(
    client: &Client,
    reference: &Reference,
    auth: &RegistryAuth,
    what: &str,
) -> anyhow::Result<(OciImageManifest, String)> {
    let bearer = client
        .auth(reference, auth, RegistryOperation::Pull)
        .await
        .with_context(|| format!("signing in to {}", reference.resolve_registry()))?;
    let url = manifest_url(reference);
    let http = reqwest::Client::builder()
        .build()
        .context("starting an HTTP client")?;
    let mut request = http.get(&url).header(reqwest::header::ACCEPT, ACCEPT);
    request = match (&bearer, auth) {
        (Some(token), _) => request.bearer_auth(token),
        (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
        _ => request,
    };
    let mut response = request
        .send()
        .await
        .with_context(|| format!("reading {what}"))?;
    if !response.status().is_success() {
        bail!(
            "reading {what}: the registry answered {}",
            response.status()
        );
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_MANIFEST_BYTES as u64)
    {
        bail!(too_big(what));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("reading {what}"))?
    {
        if body.len() + chunk.len() > MAX_MANIFEST_BYTES {
            bail!(too_big(what));
        }
        body.extend_from_slice(&chunk);
    }
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&body)));
    if let Some(named) = reference.digest()
        && !named.eq_ignore_ascii_case(&digest)
    {
        bail!("{what}: the registry sent a manifest whose digest is {digest}, not {named}");
    }
    let manifest: OciImageManifest = serde_json::from_slice(&body)
        .with_context(|| format!("{what}: the manifest is not an OCI image manifest"))?;
    Ok((manifest, digest))
}

fn too_big(what: &str) -> String {
    format!(
        "{what}: its manifest is larger than {MAX_MANIFEST_BYTES} bytes, which no provider's is; refused unread"
    )
}

/// `https://REGISTRY/v2/NAME/manifests/TAG|DIGEST` (plain HTTP to loopback,
/// as the client speaks to it).
fn manifest_url(reference: &Reference) -> String {
    let registry = reference.resolve_registry();
    let scheme = if super::registry::is_loopback(registry) {
        "http"
    } else {
        "https"
    };
    let tag = reference.digest().or(reference.tag()).unwrap_or("latest");
    format!(
        "{scheme}://{registry}/v2/{}/manifests/{tag}",
        reference.repository()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_are_read_from_the_registry_the_reference_names() {
        let r: Reference = "127.0.0.1:5000/team/todo:1.0.0".parse().unwrap();
        assert_eq!(
            manifest_url(&r),
            "http://127.0.0.1:5000/v2/team/todo/manifests/1.0.0"
        );
        let d: Reference = format!("ghcr.io/team/todo@sha256:{}", "a".repeat(64))
            .parse()
            .unwrap();
        assert_eq!(
            manifest_url(&d),
            format!(
                "https://ghcr.io/v2/team/todo/manifests/sha256:{}",
                "a".repeat(64)
            )
        );
    }
}
