//! The registry side of `publish` and `pull`: references, the client
//! (plain HTTP only to loopback) and credentials, and the artifact's media types.

use std::net::IpAddr;

use anyhow::Context as _;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

/// The component's layer.
pub(super) const WASM: &str = "application/wasm";
/// The config of a Wasm OCI artifact.
pub(super) const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
/// `provider.toml`.
pub(super) const MANIFEST: &str = "application/vnd.azd-wasm-host.provider.v1+toml";
/// `extension.yaml`.
pub(super) const EXTENSION: &str = "application/vnd.azd-wasm-host.extension.v1+yaml";
/// The config schema (`[config] schema`), titled with its path.
pub(super) const CONFIG_SCHEMA: &str = "application/schema+json";
/// `provider.sigstore.json`.
pub(super) const SIGNATURE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The annotation naming a layer's file.
pub(super) const TITLE: &str = "org.opencontainers.image.title";
/// The password of `--user`.
const PASSWORD_ENV: &str = azd_wasm_host_core::settings::REGISTRY_PASSWORD;

/// `oci://REGISTRY/NAME:TAG` (or `@sha256:…`; the scheme is optional) as a reference.
pub(super) fn reference(text: &str) -> anyhow::Result<Reference> {
    let bare = text.strip_prefix("oci://").unwrap_or(text);
    let reference: Reference = bare.parse().with_context(|| {
        format!("{text:?} is not an OCI reference (oci://REGISTRY/NAME:TAG or @sha256:DIGEST)")
    })?;
    anyhow::ensure!(
        bare.contains('/') && reference.registry() != "docker.io" || bare.starts_with("docker.io/"),
        "{text:?} names no registry: write oci://REGISTRY/NAME:TAG (e.g. oci://ghcr.io/you/provider:1.0.0)"
    );
    Ok(reference)
}

/// A client that speaks plain HTTP only to a registry on loopback.
pub(super) fn client(reference: &Reference) -> Client {
    // reqwest is built without a crypto provider of its own: the one ring gives
    // (already the guests' TLS). Installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let registry = reference.resolve_registry().to_owned();
    let protocol = if is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        ..ClientConfig::default()
    })
}

/// Whether `host[:port]` is this machine.
pub(super) fn is_loopback(registry: &str) -> bool {
    let host = match registry.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => registry,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The credentials: `--user` with [`PASSWORD_ENV`], else anonymous.
pub(super) fn auth(user: Option<&str>) -> anyhow::Result<RegistryAuth> {
    Ok(match user {
        None => RegistryAuth::Anonymous,
        Some(user) => {
            let password = std::env::var(PASSWORD_ENV)
                .with_context(|| format!("--user {user}: set the password in {PASSWORD_ENV}"))?;
            RegistryAuth::Basic(user.to_owned(), password)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plaintext_only_to_loopback() {
        for host in [
            "127.0.0.1:5000",
            "localhost:5000",
            "[::1]:5000",
            "127.1.2.3",
            "LOCALHOST",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "ghcr.io",
            "10.0.0.1:5000",
            "localhost.example.com:5000",
            "example.com:80",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn references_need_a_registry() {
        let r =
            reference("oci://127.0.0.1:5000/demo/c-hello:1.0.0").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "demo/c-hello");
        assert_eq!(r.tag(), Some("1.0.0"));
        assert!(reference("c-hello:1.0.0").is_err());
        assert!(reference("oci://Not A Reference").is_err());
    }
}
