//! `pull` against a registry that serves what no provider is: a tiny HTTP
//! registry on loopback serving hand-made manifests and blobs, so that each
//! attack is a test (`oci/pull.rs` holds the rules).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::pull::{PullOptions, pull};
use super::registry::{MANIFEST, TITLE, WASM};

/// Paths (`/v2/...`) and the bytes served there.
struct Fake {
    routes: BTreeMap<String, Vec<u8>>,
}

/// Serves `fake` on a free loopback port until the test ends; returns `host:port`.
async fn serve(fake: Fake) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let fake = Arc::new(fake);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let fake = Arc::clone(&fake);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 64 << 10 {
                    if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let path = path.split('?').next().unwrap_or("/").to_owned();
                let (status, body) = match fake.routes.get(&path) {
                    Some(body) => ("200 OK", body.clone()),
                    None if path == "/v2/" => ("200 OK", b"{}".to_vec()),
                    None => ("404 Not Found", Vec::new()),
                };
                let content_type = if path.contains("/manifests/") {
                    "application/vnd.oci.image.manifest.v1+json"
                } else {
                    "application/octet-stream"
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
                let _ = stream.write_all(&body).await;
            });
        }
    });
    address
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A layer: its descriptor JSON, and the blob route and bytes.
fn layer(media_type: &str, title: &str, bytes: &[u8]) -> (serde_json::Value, (String, Vec<u8>)) {
    let d = digest(bytes);
    (
        serde_json::json!({
            "mediaType": media_type,
            "digest": d,
            "size": bytes.len(),
            "annotations": { TITLE: title },
        }),
        (format!("/v2/team/p/blobs/{d}"), bytes.to_vec()),
    )
}

/// A registry serving `team/p:1` with these layers (and `pad` bytes of
/// annotation, to make the manifest as large as a test needs).
fn artifact(layers: Vec<(serde_json::Value, (String, Vec<u8>))>, pad: usize) -> Fake {
    let config = b"{}".to_vec();
    let mut routes: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    routes.insert(
        format!("/v2/team/p/blobs/{}", digest(&config)),
        config.clone(),
    );
    let mut descriptors = Vec::new();
    for (descriptor, (route, bytes)) in layers {
        descriptors.push(descriptor);
        routes.insert(route, bytes);
    }
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.wasm.config.v0+json",
            "digest": digest(&config),
            "size": config.len(),
        },
        "layers": descriptors,
        "annotations": { "pad": "x".repeat(pad) },
    });
    routes.insert(
        "/v2/team/p/manifests/1".to_owned(),
        serde_json::to_vec(&manifest).unwrap(),
    );
    Fake { routes }
}

fn provider_layers() -> Vec<(serde_json::Value, (String, Vec<u8>))> {
    vec![
        layer(WASM, "build/p.wasm", b"\0asm\x0d\0\x01\0"),
        layer(
            MANIFEST,
            "provider.toml",
            b"name = \"p\"\ncomponent = \"build/p.wasm\"\n",
        ),
    ]
}

async fn pull_from(address: &str, out: PathBuf) -> anyhow::Result<super::pull::Pulled> {
    pull(&PullOptions {
        reference: format!("oci://{address}/team/p:1"),
        out: Some(out),
        package: false,
        resign: false,
        user: None,
    })
    .await
}

#[tokio::test]
async fn a_manifest_over_a_mebibyte_is_refused_unread() {
    let address = serve(artifact(provider_layers(), 2 << 20)).await;
    let dir = tempfile::tempdir().unwrap();
    let e = pull_from(&address, dir.path().join("p")).await.unwrap_err();
    assert!(
        format!("{e:#}").contains("larger than 1048576 bytes"),
        "{e:#}"
    );
    assert!(!dir.path().join("p").exists());
}

#[tokio::test]
async fn an_artifact_of_more_than_sixteen_layers_is_refused() {
    let mut layers = provider_layers();
    for i in 0..15 {
        layers.push(layer(
            "application/schema+json",
            &format!("s{i}.json"),
            format!("{{\"n\":{i}}}").as_bytes(),
        ));
    }
    let address = serve(artifact(layers, 0)).await;
    let dir = tempfile::tempdir().unwrap();
    let e = pull_from(&address, dir.path().join("p")).await.unwrap_err();
    assert!(format!("{e:#}").contains("17 layers"), "{e:#}");
    assert!(format!("{e:#}").contains("at most 16"), "{e:#}");
}

#[tokio::test]
async fn a_layer_that_is_none_of_a_providers_files_is_refused_and_nothing_is_kept() {
    // Native code smuggled in as a second "component" layer, and as a schema.
    for (media_type, title) in [
        (WASM, "precompiled/provider.cwasm"),
        ("application/schema+json", "precompiled/provider.cwasm"),
    ] {
        let mut layers = provider_layers();
        layers.push(layer(media_type, title, b"native code"));
        let address = serve(artifact(layers, 0)).await;
        let dir = tempfile::tempdir().unwrap();
        let e = pull_from(&address, dir.path().join("p")).await.unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("more than one component layer") || e.contains("precompiled/provider.cwasm"),
            "{e}"
        );
        assert!(!dir.path().join("p").exists(), "{media_type}: kept");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{media_type}: left {left:?}");
    }
}
