//! Signing and verifying a provider's folder, and consent across versions,
//! on files in a temporary folder (the component's bytes are not loaded).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};

use azd_wasm_host_trust::consent::{self, Consent};
use azd_wasm_host_trust::{
    BUNDLE_FILE, KeyPair, SignInputs, TrustDir, TrustError, Verdict, sign, verify,
};

const MANIFEST: &str = r#"name = "demo"
component = "build/demo.wasm"

[policy]
env = ["HOME"]

[policy.http]
allow = ["https://management.azure.com"]
"#;

/// A provider folder with a manifest and a component; returns the manifest.
fn provider(dir: &Path, manifest: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::write(dir.join("build/demo.wasm"), b"\0asm component bytes").unwrap();
    let path = dir.join("provider.toml");
    std::fs::write(&path, manifest).unwrap();
    path
}

fn signed(dir: &Path, key: &KeyPair) -> PathBuf {
    let manifest = provider(dir, MANIFEST);
    let bundle = sign(
        &SignInputs {
            manifest: &manifest,
            version: "1.2.0",
        },
        key,
    )
    .unwrap();
    std::fs::write(dir.join(BUNDLE_FILE), bundle).unwrap();
    manifest
}

fn refusal(manifest: &Path, trust: &TrustDir) -> TrustError {
    match verify(manifest, trust) {
        Err(e) => e,
        Ok(v) => panic!("expected a refusal, got {v:?}"),
    }
}

#[test]
fn a_provider_signed_by_a_trusted_key_verifies_and_names_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), Some("alice")).unwrap();
    let manifest = signed(&tmp.path().join("p"), &key);
    let Ok(Verdict::Verified(v)) = verify(&manifest, &trust) else {
        panic!("not verified")
    };
    assert_eq!(v.key, key.public().short_id());
    assert!(
        v.key_file.ends_with("trusted-keys/alice.pub"),
        "{}",
        v.key_file.display()
    );
    assert_eq!(v.statement.predicate.provider, "demo");
    assert_eq!(v.statement.predicate.version, "1.2.0");
    assert!(v.statement.sha256_of("build/demo.wasm").is_some());
}

#[test]
fn a_changed_component_or_manifest_is_refused_naming_the_file_and_both_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), None).unwrap();
    let dir = tmp.path().join("p");
    let manifest = signed(&dir, &key);
    std::fs::write(dir.join("build/demo.wasm"), b"\0asm another component").unwrap();
    let e = refusal(&manifest, &trust);
    assert!(matches!(e, TrustError::Changed { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("demo.wasm was changed after it was signed"),
        "{e}"
    );

    let manifest = signed(&tmp.path().join("q"), &key);
    let more = MANIFEST.replace("\"HOME\"", "\"HOME\", \"PATH\"");
    std::fs::write(&manifest, more).unwrap();
    let e = refusal(&manifest, &trust);
    assert!(
        e.to_string()
            .contains("provider.toml was changed after it was signed"),
        "{e}"
    );
    // Even when unsigned providers are allowed: a tampered one never runs.
    std::fs::write(trust.config_file(), "allow_unsigned = true\n").unwrap();
    assert!(matches!(
        verify(&manifest, &trust),
        Err(TrustError::Changed { .. })
    ));
}

#[test]
fn the_config_schema_is_signed_with_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), None).unwrap();
    let dir = tmp.path().join("p");
    let with_schema = format!("{MANIFEST}\n[config]\nschema = \"schemas/config.json\"\n");
    let manifest = provider(&dir, &with_schema);
    std::fs::create_dir_all(dir.join("schemas")).unwrap();
    std::fs::write(
        dir.join("schemas/config.json"),
        r#"{ "required": ["name"] }"#,
    )
    .unwrap();
    let bundle = sign(
        &SignInputs {
            manifest: &manifest,
            version: "1.2.0",
        },
        &key,
    )
    .unwrap();
    std::fs::write(dir.join(BUNDLE_FILE), &bundle).unwrap();
    let Ok(Verdict::Verified(v)) = verify(&manifest, &trust) else {
        panic!("not verified")
    };
    assert!(v.statement.sha256_of("schemas/config.json").is_some());
    // A schema loosened after signing is refused, naming it.
    std::fs::write(dir.join("schemas/config.json"), "{}").unwrap();
    let e = refusal(&manifest, &trust);
    assert!(matches!(e, TrustError::Changed { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("config.json was changed after it was signed"),
        "{e}"
    );
    // A signature made before the manifest named a schema does not cover it.
    let old = signed(&tmp.path().join("q"), &key);
    std::fs::write(tmp.path().join("q/config.json"), "{}").unwrap();
    std::fs::write(
        &old,
        format!("{MANIFEST}\n[config]\nschema = \"config.json\"\n"),
    )
    .unwrap();
    let e = refusal(&old, &trust);
    assert!(e.to_string().contains("provider.toml was changed"), "{e}");
}

#[test]
fn a_key_not_trusted_and_an_unsigned_provider_are_refused_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let mallory = KeyPair::generate().unwrap();
    trust
        .trust(&KeyPair::generate().unwrap().public(), None)
        .unwrap();
    let manifest = signed(&tmp.path().join("p"), &mallory);
    let e = refusal(&manifest, &trust);
    let text = e.to_string();
    assert!(matches!(e, TrustError::UntrustedKey { .. }), "{text}");
    assert!(
        text.contains(&mallory.public().short_id()) && text.contains("1 other key"),
        "{text}"
    );
    assert!(text.contains("azd-wasm-host trust add"), "{text}");

    let unsigned = provider(&tmp.path().join("u"), MANIFEST);
    let e = refusal(&unsigned, &trust);
    assert!(matches!(e, TrustError::Unsigned { .. }), "{e}");
    assert!(
        e.to_string().contains("AZD_WASM_HOST_ALLOW_UNSIGNED"),
        "{e}"
    );

    std::fs::create_dir_all(trust.root()).unwrap();
    std::fs::write(trust.config_file(), "allow_unsigned = true\n").unwrap();
    assert!(matches!(
        verify(&unsigned, &trust),
        Ok(Verdict::Allowed(TrustError::Unsigned { .. }))
    ));
    assert!(matches!(
        verify(&manifest, &trust),
        Ok(Verdict::Allowed(TrustError::UntrustedKey { .. }))
    ));
}

#[test]
fn a_changed_statement_or_signature_fails_to_verify_with_the_trusted_key() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), None).unwrap();
    let dir = tmp.path().join("p");
    let manifest = signed(&dir, &key);
    let path = dir.join(BUNDLE_FILE);
    let mut bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Another version in the statement, keeping the signature.
    let payload = bundle["dsseEnvelope"]["payload"]
        .as_str()
        .unwrap()
        .to_owned();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let statement = String::from_utf8(b64.decode(payload).unwrap())
        .unwrap()
        .replace("1.2.0", "1.2.1");
    bundle["dsseEnvelope"]["payload"] = b64.encode(statement).into();
    std::fs::write(&path, bundle.to_string()).unwrap();
    let e = refusal(&manifest, &trust);
    assert!(matches!(e, TrustError::BadSignature { .. }), "{e}");
    assert!(e.to_string().contains(&key.public().short_id()), "{e}");

    std::fs::write(&path, "{ not json").unwrap();
    assert!(matches!(
        refusal(&manifest, &trust),
        TrustError::Malformed { .. }
    ));
}

#[test]
fn a_signature_for_another_provider_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), None).unwrap();
    let a = tmp.path().join("a");
    signed(&a, &key);
    let b = provider(
        &tmp.path().join("b"),
        &MANIFEST.replace("\"demo\"", "\"other\""),
    );
    std::fs::copy(a.join(BUNDLE_FILE), tmp.path().join("b").join(BUNDLE_FILE)).unwrap();
    let e = refusal(&b, &trust);
    assert!(e.to_string().contains("signs provider `demo`"), "{e}");
}

/// The signature is standard ECDSA P-256 over DSSE's encoding: OpenSSL,
/// another implementation, verifies it with the `.pub` file as written.
#[test]
fn openssl_verifies_the_signature_with_the_public_key_file() {
    let tmp = tempfile::tempdir().unwrap();
    let key = KeyPair::generate().unwrap();
    let dir = tmp.path().join("p");
    signed(&dir, &key);
    let bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(BUNDLE_FILE)).unwrap()).unwrap();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let envelope = &bundle["dsseEnvelope"];
    let payload = b64.decode(envelope["payload"].as_str().unwrap()).unwrap();
    let kind = envelope["payloadType"].as_str().unwrap();
    let mut pae = format!("DSSEv1 {} {kind} {} ", kind.len(), payload.len()).into_bytes();
    pae.extend_from_slice(&payload);
    std::fs::write(tmp.path().join("pae"), &pae).unwrap();
    let sig = b64
        .decode(envelope["signatures"][0]["sig"].as_str().unwrap())
        .unwrap();
    std::fs::write(tmp.path().join("sig"), sig).unwrap();
    std::fs::write(tmp.path().join("key.pub"), key.public().to_pem()).unwrap();
    let verify = |data: &str| {
        std::process::Command::new("openssl")
            .args([
                "dgst",
                "-sha256",
                "-verify",
                "key.pub",
                "-signature",
                "sig",
                data,
            ])
            .current_dir(tmp.path())
            .output()
            .expect("openssl is needed (Debian: apt-get install openssl)")
    };
    let ok = verify("pae");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "Verified OK");
    pae[10] ^= 1;
    std::fs::write(tmp.path().join("pae2"), &pae).unwrap();
    assert!(!verify("pae2").status.success());
    // And a key OpenSSL made signs for us.
    let made = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .output()
        .unwrap();
    assert!(made.status.success());
    let theirs = KeyPair::from_pem(&String::from_utf8(made.stdout).unwrap()).unwrap();
    let sig = theirs.sign(b"x").unwrap();
    assert!(theirs.public().verifies(b"x", &sig));
}

#[test]
fn consent_is_recorded_first_then_asked_only_for_more() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let manifest = provider(&tmp.path().join("p"), MANIFEST);
    assert!(matches!(
        consent::check(&trust, &manifest, Some("1.0.0")).unwrap(),
        Consent::FirstSeen
    ));
    assert!(matches!(
        consent::check(&trust, &manifest, Some("1.0.0")).unwrap(),
        Consent::Allowed
    ));

    // 1.1.0 adds an origin: asked, and asked again until approved.
    let more = MANIFEST.replace(
        "\"https://management.azure.com\"]",
        "\"https://management.azure.com\", \"https://example.com\"]",
    );
    std::fs::write(&manifest, &more).unwrap();
    for _ in 0..2 {
        let Consent::Asks(p) = consent::check(&trust, &manifest, Some("1.1.0")).unwrap() else {
            panic!("not asked")
        };
        assert_eq!(
            p.diff.more,
            vec!["HTTP origin https://example.com".to_owned()],
            "{:?}",
            p.diff
        );
        assert!(
            p.question().starts_with(
                "provider `demo` 1.1.0 also asks for: HTTP origin https://example.com"
            ),
            "{}",
            p.question()
        );
        assert_eq!(p.allowed_version.as_deref(), Some("1.0.0"));
    }
    let Consent::Asks(p) = consent::check(&trust, &manifest, Some("1.1.0")).unwrap() else {
        panic!()
    };
    p.approve().unwrap();
    assert!(matches!(
        consent::check(&trust, &manifest, Some("1.1.0")).unwrap(),
        Consent::Allowed
    ));

    // 1.2.0 drops a grant: runs unasked; 1.3.0 asks for it back: asked again.
    std::fs::write(&manifest, more.replace("env = [\"HOME\"]", "env = []")).unwrap();
    assert!(matches!(
        consent::check(&trust, &manifest, Some("1.2.0")).unwrap(),
        Consent::Allowed
    ));
    std::fs::write(&manifest, &more).unwrap();
    let Consent::Asks(p) = consent::check(&trust, &manifest, Some("1.3.0")).unwrap() else {
        panic!()
    };
    assert_eq!(p.diff.more, vec!["environment variable HOME".to_owned()]);
}

#[test]
fn commands_making_the_default_key_at_once_agree_on_one() {
    let tmp = tempfile::tempdir().unwrap();
    let made: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| TrustDir::at(tmp.path()).default_signing_key().unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(made.iter().filter(|(_, new)| *new).count(), 1);
    let first = made[0].0.public();
    assert!(made.iter().all(|(k, _)| k.public() == first));
    let trust = TrustDir::at(tmp.path());
    assert_eq!(trust.trusted_keys().len(), 1);
    assert_eq!(trust.trusted_keys()[0].1, first);
}
