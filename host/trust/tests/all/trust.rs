//! Signing and verifying a provider's folder, and consent across versions,
//! on files in a temporary folder (the component's bytes are not loaded).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};

use azd_wasm_host_trust::consent::{self, Consent, Identity};
use azd_wasm_host_trust::{
    BUNDLE_FILE, CODE_BUNDLE_FILE, KeyPair, SignInputs, TrustDir, TrustError, Verdict, read_key,
    sign, sign_code, verify, verify_to_run, write_key,
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
            extension: Some("local.demo"),
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

/// What a signature claims reaches the user as a manifest's strings do (a
/// refusal names the provider and its version, consent shows both): a
/// statement whose version or extension holds a control or invisible
/// character is refused, trusted key or not, naming the field and the code
/// point, never echoing the character.
#[test]
fn a_statement_whose_claims_hold_invisible_characters_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let key = KeyPair::generate().unwrap();
    let trusted = TrustDir::at(tmp.path().join("trust"));
    trusted.trust(&key.public(), Some("alice")).unwrap();
    let stranger = TrustDir::at(tmp.path().join("stranger"));
    let cases = [
        (
            "1.2.0\u{1b}[2K",
            Some("local.demo"),
            "`predicate.version`",
            "U+001B",
        ),
        (
            "1.2.0\r",
            Some("local.demo"),
            "`predicate.version`",
            "U+000D",
        ),
        (
            "1.2.0",
            Some("local.\u{202e}demo"),
            "`predicate.extension`",
            "U+202E",
        ),
        (
            "1.2.0",
            Some("local.demo\u{200b}"),
            "`predicate.extension`",
            "U+200B",
        ),
        // Default-ignorable (a Hangul filler, a variation selector) and blanks other than
        // ASCII's space (no-break, braille).
        (
            "1.2.0",
            Some("local.\u{3164}demo"),
            "`predicate.extension`",
            "U+3164",
        ),
        (
            "1.2.0\u{fe0f}",
            Some("local.demo"),
            "`predicate.version`",
            "U+FE0F",
        ),
        (
            "1.2.0\u{a0}",
            Some("local.demo"),
            "`predicate.version`",
            "U+00A0",
        ),
        (
            "1.2.0",
            Some("local.demo\u{2800}"),
            "`predicate.extension`",
            "U+2800",
        ),
    ];
    for (i, (version, extension, field, code)) in cases.into_iter().enumerate() {
        let dir = tmp.path().join(format!("p{i}"));
        let manifest = provider(&dir, MANIFEST);
        let inputs = SignInputs {
            manifest: &manifest,
            version,
            extension,
        };
        std::fs::write(dir.join(BUNDLE_FILE), sign(&inputs, &key).unwrap()).unwrap();
        for trust in [&trusted, &stranger] {
            let e = refusal(&manifest, trust).to_string();
            assert!(
                e.contains(field) && e.contains(code),
                "{version:?} {extension:?}: {e}"
            );
            assert!(
                !e.chars().any(azd_wasm_host_core::text::is_invisible),
                "the refusal echoes the character: {e:?}"
            );
        }
    }
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
            extension: Some("local.demo"),
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

fn who(key: &str, extension: &str, provider: &str) -> Identity {
    Identity {
        key: key.into(),
        extension: extension.into(),
        provider: provider.into(),
    }
}

#[test]
fn consent_holds_when_an_update_renames_its_config_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let dir = tmp.path().join("p");
    let with_schema = |file: &str| format!("{MANIFEST}\n[config]\nschema = \"{file}\"\n");
    let manifest = provider(&dir, &with_schema("config.schema.json"));
    std::fs::write(dir.join("config.schema.json"), "{}").unwrap();
    let id = who("k1", "local.demo", "demo");
    let Consent::Asks(p) = consent::check(&trust, &manifest, &id, Some("1.0.0")).unwrap() else {
        panic!("a first-seen provider with grants was not asked about")
    };
    p.approve().unwrap();
    // 1.1.0 asks for the same grants; its schema has another name.
    std::fs::remove_file(dir.join("config.schema.json")).unwrap();
    std::fs::write(dir.join("schema.json"), "{}").unwrap();
    std::fs::write(&manifest, with_schema("schema.json")).unwrap();
    let consent = consent::check(&trust, &manifest, &id, Some("1.1.0"));
    assert!(
        matches!(consent, Ok(Consent::Allowed)),
        "{:?}",
        consent.err()
    );
}

#[test]
fn consent_is_asked_first_for_every_grant_then_only_for_more() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let manifest = provider(&tmp.path().join("p"), MANIFEST);
    let id = who("k1", "local.demo", "demo");
    // First seen, asking for grants: asked for all of them, until approved.
    for _ in 0..2 {
        let Consent::Asks(p) = consent::check(&trust, &manifest, &id, Some("1.0.0")).unwrap()
        else {
            panic!("a first-seen provider with grants was not asked about")
        };
        assert!(p.first);
        assert_eq!(
            p.diff.more,
            [
                "environment variable HOME",
                "HTTP origin https://management.azure.com"
            ]
        );
        assert!(
            p.why().starts_with(
                "provider `demo` 1.0.0 (extension local.demo, signed by key k1) runs here for the \
                 first time"
            ),
            "{}",
            p.why()
        );
    }
    let Consent::Asks(p) = consent::check(&trust, &manifest, &id, Some("1.0.0")).unwrap() else {
        panic!()
    };
    p.approve().unwrap();
    assert!(matches!(
        consent::check(&trust, &manifest, &id, Some("1.0.0")).unwrap(),
        Consent::Allowed
    ));

    // 1.1.0 adds an origin: asked, and asked again until approved.
    let more = MANIFEST.replace(
        "\"https://management.azure.com\"]",
        "\"https://management.azure.com\", \"https://example.com\"]",
    );
    std::fs::write(&manifest, &more).unwrap();
    for _ in 0..2 {
        let Consent::Asks(p) = consent::check(&trust, &manifest, &id, Some("1.1.0")).unwrap()
        else {
            panic!("not asked")
        };
        assert!(!p.first);
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
    let Consent::Asks(p) = consent::check(&trust, &manifest, &id, Some("1.1.0")).unwrap() else {
        panic!()
    };
    p.approve().unwrap();
    assert!(matches!(
        consent::check(&trust, &manifest, &id, Some("1.1.0")).unwrap(),
        Consent::Allowed
    ));

    // 1.2.0 drops a grant: runs unasked; 1.3.0 asks for it back: asked again.
    std::fs::write(&manifest, more.replace("env = [\"HOME\"]", "env = []")).unwrap();
    assert!(matches!(
        consent::check(&trust, &manifest, &id, Some("1.2.0")).unwrap(),
        Consent::Allowed
    ));
    std::fs::write(&manifest, &more).unwrap();
    let Consent::Asks(p) = consent::check(&trust, &manifest, &id, Some("1.3.0")).unwrap() else {
        panic!()
    };
    assert_eq!(p.diff.more, vec!["environment variable HOME".to_owned()]);

    // A provider that asks for nothing beyond the deny-all default is recorded unasked.
    let plain = provider(
        &tmp.path().join("plain"),
        "name = \"plain\"\ncomponent = \"build/demo.wasm\"\n[policy]\nmemory_mb = 16\n",
    );
    let plain_id = who("k1", "local.demo", "plain");
    assert!(matches!(
        consent::check(&trust, &plain, &plain_id, None).unwrap(),
        Consent::FirstSeen
    ));
    assert!(matches!(
        consent::check(&trust, &plain, &plain_id, None).unwrap(),
        Consent::Allowed
    ));
}

#[test]
fn consent_belongs_to_the_signer_the_extension_and_the_exact_name() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let manifest = provider(&tmp.path().join("p"), MANIFEST);
    let allowed = who("k1", "local.demo", "demo");
    let Consent::Asks(p) = consent::check(&trust, &manifest, &allowed, None).unwrap() else {
        panic!()
    };
    p.approve().unwrap();
    // The same manifest under every other identity: first seen, asked for everything.
    for other in [
        who("k2", "local.demo", "demo"),
        who("k1", "local.other", "demo"),
        who("unsigned", "local.demo", "demo"),
        who("k1", "", "demo"),
    ] {
        let Consent::Asks(p) = consent::check(&trust, &manifest, &other, None).unwrap() else {
            panic!("{other:?} inherited the consent of {allowed:?}")
        };
        assert!(p.first && p.diff.more.len() == 2, "{other:?}: {:?}", p.diff);
    }
    // Names that differ only in case, or in characters a file name cannot
    // hold, never share a record (each manifest names itself).
    let names = [
        "demo", "Demo", "DEMO", "de/mo", "de:mo", "de mo", "de_mo", "démo",
    ];
    for (i, name) in names.iter().enumerate() {
        let dir = tmp.path().join(format!("n{i}"));
        let m = provider(&dir, &MANIFEST.replace("\"demo\"", &format!("{name:?}")));
        let id = who("k9", "local.demo", name);
        let Consent::Asks(p) = consent::check(&trust, &m, &id, None).unwrap() else {
            panic!("`{name}` inherited another name's consent")
        };
        p.approve().unwrap();
    }
    let records = std::fs::read_dir(trust.consent_dir()).unwrap().count();
    assert_eq!(records, 1 + names.len());
    // A record edited to name another provider is no record of this one.
    let Consent::Asks(_) =
        consent::check(&trust, &manifest, &who("k3", "x.y", "demo"), None).unwrap()
    else {
        panic!()
    };
    for entry in std::fs::read_dir(trust.consent_dir()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("key = \"k1\"") && text.contains("provider = \"demo\"") {
            std::fs::write(&path, text.replace("key = \"k1\"", "key = \"k3\"")).unwrap();
        }
    }
    assert!(matches!(
        consent::check(&trust, &manifest, &allowed, None).unwrap(),
        Consent::Asks(_)
    ));
    // The manifest must be the provider the identity names.
    assert!(consent::check(&trust, &manifest, &who("k1", "local.demo", "other"), None).is_err());
}

/// A provider folder as `package` stages it: manifest, component,
/// extension.yaml and precompiled code with its binding.
fn packaged(dir: &Path) -> PathBuf {
    let manifest = provider(dir, MANIFEST);
    std::fs::write(
        dir.join("extension.yaml"),
        "id: local.demo\nversion: 1.2.0\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("precompiled")).unwrap();
    std::fs::write(dir.join("precompiled/provider.cwasm"), b"native code").unwrap();
    std::fs::write(dir.join("precompiled/binding.toml"), "format = 1\n").unwrap();
    manifest
}

fn sign_into(manifest: &Path, key: &KeyPair) {
    let bundle = sign(
        &SignInputs {
            manifest,
            version: "1.2.0",
            extension: Some("local.demo"),
        },
        key,
    )
    .unwrap();
    std::fs::write(manifest.parent().unwrap().join(BUNDLE_FILE), bundle).unwrap();
}

#[test]
fn the_code_the_binding_and_extension_yaml_are_signed_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), None).unwrap();
    let dir = tmp.path().join("p");
    let manifest = packaged(&dir);
    sign_into(&manifest, &key);
    let Ok(Verdict::Verified(v)) = verify(&manifest, &trust) else {
        panic!("not verified")
    };
    for name in [
        "provider.toml",
        "build/demo.wasm",
        "extension.yaml",
        "precompiled/provider.cwasm",
        "precompiled/binding.toml",
    ] {
        assert!(
            v.statement.sha256_of(name).is_some(),
            "{name} is not signed"
        );
    }
    assert_eq!(
        v.statement.predicate.extension.as_deref(),
        Some("local.demo")
    );
    let shipped = v.shipped.unwrap();
    assert_eq!(
        shipped.code,
        v.statement.sha256_of("precompiled/provider.cwasm").unwrap()
    );

    // Each file changed: refused naming it.
    for file in [
        "precompiled/provider.cwasm",
        "precompiled/binding.toml",
        "extension.yaml",
    ] {
        let copy = tmp.path().join(file.replace('/', "-"));
        copy_tree(&dir, &copy);
        std::fs::write(copy.join(file), b"changed").unwrap();
        let e = refusal(&copy.join("provider.toml"), &trust);
        assert!(
            e.to_string()
                .contains(&format!("{file} was changed after it was signed")),
            "{e}"
        );
    }
    // Before a start the code is left to the runtime, which gets its signed sha256.
    let copy = tmp.path().join("to-run");
    copy_tree(&dir, &copy);
    std::fs::write(copy.join("precompiled/provider.cwasm"), b"other code").unwrap();
    let Ok(Verdict::Verified(v)) = verify_to_run(&copy.join("provider.toml"), &trust) else {
        panic!("not verified")
    };
    assert_eq!(v.shipped.unwrap(), shipped);

    // A file the host reads that the signature does not name.
    let unsigned_yaml = tmp.path().join("late-yaml");
    let m = provider(&unsigned_yaml, MANIFEST);
    sign_into(&m, &key);
    std::fs::write(unsigned_yaml.join("extension.yaml"), "id: x.y\n").unwrap();
    let e = refusal(&m, &trust);
    assert!(
        e.to_string().contains("does not sign extension.yaml"),
        "{e}"
    );
    // A signed file removed.
    let removed = tmp.path().join("removed");
    copy_tree(&dir, &removed);
    std::fs::remove_file(removed.join("extension.yaml")).unwrap();
    let e = refusal(&removed.join("provider.toml"), &trust);
    assert!(e.to_string().contains("extension.yaml is signed by"), "{e}");
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_statement_that_names_a_file_outside_the_folder_is_refused() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let key = KeyPair::generate().unwrap();
    trust.trust(&key.public(), None).unwrap();
    std::fs::write(tmp.path().join("outside.txt"), b"x").unwrap();
    for name in ["../outside.txt", "/etc/hostname", "build/../../outside.txt"] {
        let dir = tmp.path().join("p");
        let _ = std::fs::remove_dir_all(&dir);
        let manifest = signed(&dir, &key);
        let path = dir.join(BUNDLE_FILE);
        let mut bundle: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let payload = b64
            .decode(bundle["dsseEnvelope"]["payload"].as_str().unwrap())
            .unwrap();
        let mut statement: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        statement["subject"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "name": name, "digest": { "sha256": "00" }
            }));
        // Signed again by the trusted key: a publisher's own crafted statement.
        let payload = serde_json::to_vec(&statement).unwrap();
        let kind = "application/vnd.in-toto+json";
        let mut pae = format!("DSSEv1 {} {kind} {} ", kind.len(), payload.len()).into_bytes();
        pae.extend_from_slice(&payload);
        bundle["dsseEnvelope"]["payload"] = b64.encode(&payload).into();
        bundle["dsseEnvelope"]["signatures"][0]["sig"] = b64.encode(key.sign(&pae).unwrap()).into();
        std::fs::write(&path, bundle.to_string()).unwrap();
        let e = refusal(&manifest, &trust);
        assert!(
            e.to_string()
                .contains("not a plain path inside the provider's folder"),
            "{name}: {e}"
        );
    }
}

#[test]
fn code_compiled_for_a_kept_signature_is_signed_apart_and_tied_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("trust"));
    let publisher = KeyPair::generate().unwrap();
    let packager = KeyPair::generate().unwrap();
    trust.trust(&publisher.public(), Some("publisher")).unwrap();
    let dir = tmp.path().join("p");
    // The publisher signed the provider without code; the packager compiled it.
    let manifest = provider(&dir, MANIFEST);
    std::fs::write(dir.join("extension.yaml"), "id: local.demo\n").unwrap();
    sign_into(&manifest, &publisher);
    std::fs::create_dir_all(dir.join("precompiled")).unwrap();
    std::fs::write(dir.join("precompiled/provider.cwasm"), b"native code").unwrap();
    std::fs::write(dir.join("precompiled/binding.toml"), "format = 1\n").unwrap();
    // No code signature: the code is not signed.
    let e = refusal(&manifest, &trust);
    assert!(
        e.to_string().contains("does not sign the precompiled code"),
        "{e}"
    );
    std::fs::write(
        dir.join(CODE_BUNDLE_FILE),
        sign_code(&manifest, "1.2.0", &packager).unwrap(),
    )
    .unwrap();
    // The packager's key is not trusted: refused (run only where unsigned is allowed).
    let e = refusal(&manifest, &trust);
    assert!(matches!(e, TrustError::UntrustedKey { .. }), "{e}");
    trust.trust(&packager.public(), Some("packager")).unwrap();
    let Ok(Verdict::Verified(v)) = verify(&manifest, &trust) else {
        panic!("not verified")
    };
    // Consent belongs to the publisher, whose statement holds the policy;
    // the native code's signer is named apart (a ceiling judges it too).
    assert_eq!(v.key_id, publisher.public().id());
    assert_eq!(v.code_key_id, Some(packager.public().id()));
    assert!(v.shipped.is_some());
    // Changed code: refused.
    std::fs::write(dir.join("precompiled/provider.cwasm"), b"other code").unwrap();
    let e = refusal(&manifest, &trust);
    assert!(
        e.to_string()
            .contains("provider.cwasm was changed after it was signed"),
        "{e}"
    );
    std::fs::write(dir.join("precompiled/provider.cwasm"), b"native code").unwrap();
    // The code statement of another signature of the same provider: refused.
    std::fs::write(dir.join("build/demo.wasm"), b"\0asm other").unwrap();
    let aside = tmp.path().join("aside");
    std::fs::rename(dir.join("precompiled"), &aside).unwrap();
    sign_into(&manifest, &publisher);
    std::fs::rename(&aside, dir.join("precompiled")).unwrap();
    let e = refusal(&manifest, &trust);
    assert!(
        e.to_string()
            .contains("code compiled for another signature"),
        "{e}"
    );
}

#[cfg(unix)]
#[test]
fn a_trust_folder_others_may_write_to_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let trust = TrustDir::at(tmp.path().join("azd/wasm-host"));
    let key = KeyPair::generate().unwrap();
    let file = trust.trust(&key.public(), None).unwrap();
    let manifest = signed(&tmp.path().join("p"), &key);
    assert!(matches!(
        verify(&manifest, &trust),
        Ok(Verdict::Verified(_))
    ));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&trust.keys_dir()), 0o700, "made private");
    for path in [trust.keys_dir(), file.clone(), trust.root().to_path_buf()] {
        let before = mode(&path);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(before | 0o022)).unwrap();
        let e = refusal(&manifest, &trust);
        assert!(matches!(e, TrustError::UnsafeFolder { .. }), "{e}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        assert!(e.to_string().contains("chmod go-w"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(before)).unwrap();
    }
    assert!(matches!(
        verify(&manifest, &trust),
        Ok(Verdict::Verified(_))
    ));
}

#[test]
fn commands_making_the_default_key_at_once_agree_on_one() {
    let tmp = tempfile::tempdir().unwrap();
    let made: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    TrustDir::at(tmp.path().join("azd/wasm-host"))
                        .default_signing_key()
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(made.iter().filter(|(_, new)| *new).count(), 1);
    let first = made[0].0.public();
    assert!(made.iter().all(|(k, _)| k.public() == first));
    let trust = TrustDir::at(tmp.path().join("azd/wasm-host"));
    assert_eq!(trust.trusted_keys().len(), 1);
    assert_eq!(trust.trusted_keys()[0].1, first);
}

/// A clone can carry a trust folder (trusted keys, `allow_unsigned`) and a
/// project can point AZD_CONFIG_DIR at it: one inside a git work tree or an
/// azd project decides nothing.
#[test]
fn a_trust_folder_a_repository_or_project_carries_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let key = KeyPair::generate().unwrap();
    for (marker, what) in [(".git", "git work tree"), ("azure.yaml", "azd project")] {
        let repo = tmp.path().join(format!("clone-{what}").replace(' ', "-"));
        let trust = TrustDir::at(repo.join("tools/.azd/wasm-host"));
        trust.trust(&key.public(), None).unwrap();
        let manifest = signed(
            &tmp.path()
                .join(format!("p-{}", marker.trim_start_matches('.'))),
            &key,
        );
        // Without the marker it is a trust folder like any other.
        assert!(matches!(
            verify(&manifest, &trust),
            Ok(Verdict::Verified(_))
        ));
        if marker == ".git" {
            std::fs::create_dir_all(repo.join(marker)).unwrap();
        } else {
            std::fs::write(repo.join(marker), "name: p\n").unwrap();
        }
        let e = refusal(&manifest, &trust);
        assert!(matches!(e, TrustError::CarriedFolder { .. }), "{e}");
        assert!(e.to_string().contains(what), "{e}");
        assert!(e.to_string().contains(&repo.display().to_string()), "{e}");
        // Nor is its default signing key made or read.
        assert!(trust.default_signing_key().is_err());
    }
}

/// A signing key others may read is refused unread, as ssh refuses one; the
/// default key is read only after the trust folder's privacy check.
#[cfg(unix)]
#[test]
fn a_signing_key_others_may_read_is_refused_and_read_only_after_the_folder_check() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("keys/mine.key");
    write_key(&path, &KeyPair::generate().unwrap()).unwrap();
    assert!(read_key(&path).is_ok());
    for mode in [0o644, 0o640, 0o604, 0o660] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let e = read_key(&path).unwrap_err().to_string();
        assert!(
            e.contains("chmod 600") && e.contains(&format!("{mode:o}")),
            "{e}"
        );
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(read_key(&path).is_ok());

    // The default key of a trust folder others may write to: the folder is
    // refused before the key file is even read (it is not a key at all here).
    let trust = TrustDir::at(tmp.path().join("azd/wasm-host"));
    let default = trust.default_key();
    std::fs::create_dir_all(default.parent().unwrap()).unwrap();
    std::fs::write(&default, "not a key").unwrap();
    std::fs::set_permissions(&default, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(trust.root(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = format!("{:#}", trust.default_signing_key().unwrap_err());
    assert!(
        e.contains("cannot be trusted") && !e.contains("not a signing key"),
        "{e}"
    );
}
