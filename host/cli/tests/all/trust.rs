//! Signed providers and consent, through the real binaries: the C example
//! packaged (signed by default, as `package` does), unpacked the way azd
//! unpacks an extension, and served by its shipped sidecar under `run`'s
//! simulated azd (`AZD_WASM_HOST_EXTENSION_COMMAND`), each test with a trust
//! folder of its own (`AZD_CONFIG_DIR`).
//!
//! - a changed component, a key not trusted and an unsigned provider are
//!   refused, each with its message; unsigned runs only where allowed;
//! - keygen, `package --sign`, trust add/list/remove;
//! - an update that asks for one more grant is refused under `--no-prompt`
//!   (naming it and the approve command), asked on a pseudo-terminal, and
//!   runs after a yes or `approve`; an update with fewer grants runs unasked.
//!
//! Needs the C example built and the sidecar built beside the CLI
//! (`scripts/test.sh` does both) and python3 (the pseudo-terminal).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]
use crate::trust_case;

use azd_wasm_host_fixtures::{copy_dir, output_text as text};
use std::path::Path;
use std::process::Command;
use trust_case::{BIN, Case, Registry, on_a_terminal, refused, succeeded};

#[test]
fn signed_providers_run_and_changed_untrusted_or_unsigned_ones_are_refused() {
    let case = Case::new();
    // `package` made this user's signing key and trusts it here.
    let installed = case.install("v1", &[]);
    assert!(installed.join("provider.sigstore.json").is_file());
    assert!(case.config().join("wasm-host/keys/signing.key").is_file());
    succeeded(&case.provision(&installed, &[], &[]));

    // A changed component: refused, even where unsigned providers are allowed.
    let mut wasm = std::fs::read(installed.join("build/c-hello.wasm")).unwrap();
    wasm.extend_from_slice(b"\x00\x05\x04note");
    let changed = case.place("changed");
    copy_dir(&installed, &changed);
    std::fs::write(changed.join("build/c-hello.wasm"), &wasm).unwrap();
    let t = refused(
        &case.provision(&changed, &[], &[]),
        "c-hello.wasm was changed after it was signed",
    );
    assert!(t.contains("its sha256 is"), "{t}");
    refused(
        &case.provision(&changed, &[], &[("AZD_WASM_HOST_ALLOW_UNSIGNED", "true")]),
        "was changed after it was signed",
    );
    // A changed manifest: refused too.
    let changed = case.place("changed-manifest");
    copy_dir(&installed, &changed);
    let manifest = changed.join("provider.toml");
    let more = std::fs::read_to_string(&manifest).unwrap() + "env = [\"HOME\"]\n";
    std::fs::write(&manifest, more).unwrap();
    refused(
        &case.provision(&changed, &[], &[]),
        "provider.toml was changed after it was signed",
    );

    // A key this user does not trust (another user's trust folder).
    let stranger = case.root.path().join("stranger-config");
    let t = refused(
        &case.provision(
            &installed,
            &[],
            &[("AZD_CONFIG_DIR", stranger.to_str().unwrap())],
        ),
        "which you do not trust",
    );
    assert!(t.contains("azd-wasm-host trust add"), "{t}");

    // Unsigned: refused, unless allowed.
    let unsigned = case.install("unsigned", &["--unsigned"]);
    assert!(!unsigned.join("provider.sigstore.json").exists());
    let t = refused(
        &case.provision(&unsigned, &[], &[]),
        "provider `c-hello` is not signed",
    );
    assert!(t.contains("AZD_WASM_HOST_ALLOW_UNSIGNED=true"), "{t}");
    succeeded(&case.provision(&unsigned, &[], &[("AZD_WASM_HOST_ALLOW_UNSIGNED", "true")]));
    std::fs::write(
        case.config().join("wasm-host/config.toml"),
        "allow_unsigned = true\n",
    )
    .unwrap();
    succeeded(&case.provision(&unsigned, &[], &[]));
}

#[test]
fn keygen_package_sign_and_trust_add_list_remove() {
    let case = Case::new();
    let key = case.root.path().join("team.key");
    let out = case.host(&["keygen", "--out", key.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(key.with_extension("pub").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the signing key is readable by others");
    }
    // A key is never overwritten.
    let again = case.host(&["keygen", "--out", key.to_str().unwrap()]);
    assert!(
        !again.status.success() && text(&again).contains("never overwritten"),
        "{}",
        text(&again)
    );

    let installed = case.install("team", &["--sign", key.to_str().unwrap()]);
    // keygen --out trusts nothing: the team's key is not trusted yet.
    refused(
        &case.provision(&installed, &[], &[]),
        "which you do not trust",
    );
    let out = case.host(&[
        "trust",
        "add",
        key.with_extension("pub").to_str().unwrap(),
        "--name",
        "team",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    succeeded(&case.provision(&installed, &[], &[]));
    let list = text(&case.host(&["trust", "list"]));
    assert!(
        list.contains("team.pub") && list.contains("unsigned providers: refused"),
        "{list}"
    );
    let out = case.host(&["trust", "remove", "team"]);
    assert!(out.status.success(), "{}", text(&out));
    refused(
        &case.provision(&installed, &[], &[]),
        "which you do not trust",
    );
    // A private key is not a public one.
    let out = case.host(&["trust", "add", key.to_str().unwrap()]);
    assert!(
        !out.status.success() && text(&out).contains("not a public key"),
        "{}",
        text(&out)
    );
}

/// The grant an update adds: one HTTP origin.
const ORIGIN: &str = "\n[policy.http]\nallow = [\"https://example.com\"]\n";

#[test]
fn an_update_that_asks_for_more_runs_only_after_consent_and_one_that_asks_for_less_runs_unasked() {
    let case = Case::new();
    let v1 = case.install("v1", &[]);
    // The first run records what it was allowed.
    succeeded(&case.provision(&v1, &[], &[]));
    let records: Vec<_> = std::fs::read_dir(case.config().join("wasm-host/consent"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        records.len() == 1 && records[0].starts_with("c-hello-"),
        "{records:?}"
    );

    // 1.1.0 also asks for one HTTP origin and more memory.
    case.update("1.1.0", |t| {
        t.replace("memory_mb = 16", "memory_mb = 32") + ORIGIN
    });
    let v2 = case.install("v2", &[]);
    // Nobody to ask (azd --no-prompt): refused, naming the grants and the command that approves.
    let t = refused(
        &case.provision(&v2, &[], &[]),
        "provider `c-hello` 1.1.0 asks for more than you allowed for 0.1.0",
    );
    assert!(t.contains("+ HTTP origin https://example.com"), "{t}");
    assert!(t.contains("+ memory_mb 16 → 32"), "{t}");
    assert!(t.contains("approve --manifest"), "{t}");
    assert!(
        t.contains("does not run until you allow it (not asked: --no-prompt)"),
        "{t}"
    );
    // Asked and declined: still refused.
    refused(
        &case.provision(&v2, &["--no"], &[]),
        "you did not allow what provider `c-hello` 1.1.0 also asks for",
    );
    // Asked on a terminal (a pseudo-terminal), answered yes: it runs, and is not asked again.
    let t = on_a_terminal(case.provision_command(&v2, &[], &[]), "Allow?", "y");
    assert!(
        t.contains("provider `c-hello` 1.1.0 also asks for: HTTP origin https://example.com"),
        "{t}"
    );
    assert!(t.contains("Hello, trust!"), "{t}");
    succeeded(&case.provision(&v2, &[], &[]));

    // 1.2.0 drops the origin: runs unasked, under --no-prompt.
    case.update("1.2.0", |t| t.replace(ORIGIN, ""));
    let v3 = case.install("v3", &[]);
    succeeded(&case.provision(&v3, &[], &[]));

    // 1.3.0 asks for it again: asked again; `approve` (the command the refusal names) allows it.
    case.update("1.3.0", |t| t.to_owned() + "env = [\"HOME\"]\n");
    let v4 = case.install("v4", &[]);
    let t = refused(
        &case.provision(&v4, &[], &[]),
        "asks for more than you allowed for 1.2.0",
    );
    let approve = Command::new(v4.join("azd-wasm-host"))
        .args(["approve", "--manifest"])
        .arg(v4.join("provider.toml"))
        .env("AZD_CONFIG_DIR", case.config())
        .output()
        .unwrap();
    assert!(approve.status.success(), "{}\n{t}", text(&approve));
    assert!(
        text(&approve).contains("+ environment variable HOME"),
        "{}",
        text(&approve)
    );
    succeeded(&case.provision(&v4, &[], &[]));
}

#[test]
fn publish_then_pull_through_a_registry_gives_the_same_verified_provider() {
    let case = Case::new();
    let registry = Registry::start();
    let tag = format!("oci://{}/team/c-hello:0.1.0", registry.address);
    let out = case.host(&["publish", &tag]);
    assert!(out.status.success(), "{}", text(&out));
    let published = String::from_utf8_lossy(&out.stdout).into_owned();
    let digest = published
        .split(['(', ')'])
        .find(|w| w.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("no digest in {published:?}"))
        .to_owned();
    // publish signs a scratch copy: the project keeps no signature of its own.
    assert!(!case.provider().join("provider.sigstore.json").exists());

    let same = |pulled: &Path| {
        for file in ["provider.toml", "build/c-hello.wasm", "extension.yaml"] {
            let a = std::fs::read(case.provider().join(file)).unwrap();
            let b = std::fs::read(pulled.join(file)).unwrap();
            assert!(a == b, "{file} differs after publish and pull");
        }
        assert!(pulled.join("provider.sigstore.json").is_file());
    };
    let by_tag = case.root.path().join("by-tag");
    let out = case.host(&["pull", &tag, "--out", by_tag.to_str().unwrap()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains(&digest) && t.contains("c-hello 0.1.0, signed by key"),
        "{t}"
    );
    same(&by_tag);
    let by_digest = case.root.path().join("by-digest");
    let pinned = format!("oci://{}/team/c-hello@{digest}", registry.address);
    let out = case.host(&["pull", &pinned, "--out", by_digest.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    same(&by_digest);

    // Someone who does not trust the publisher's key keeps nothing.
    let stranger = case.root.path().join("stranger");
    let out = Command::new(BIN)
        .args(["pull", &tag, "--out"])
        .arg(&stranger)
        .env("AZD_CONFIG_DIR", case.root.path().join("stranger-config"))
        .current_dir(case.root.path())
        .output()
        .unwrap();
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("which you do not trust"),
        "{t}"
    );
    assert!(
        !stranger.exists(),
        "a refused pull left {}",
        stranger.display()
    );
    let leftovers: Vec<_> = std::fs::read_dir(case.root.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".pull-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A folder that is not empty is not pulled into.
    let out = case.host(&["pull", &tag, "--out", by_tag.to_str().unwrap()]);
    assert!(
        !out.status.success() && text(&out).contains("is not empty"),
        "{}",
        text(&out)
    );

    // pull --package: an extension source that keeps the publisher's signature, and runs.
    let packaged = case.root.path().join("packaged");
    let out = case.host(&[
        "pull",
        &tag,
        "--out",
        packaged.to_str().unwrap(),
        "--package",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("keep its signature"), "{}", text(&out));
    let archive = std::fs::read_dir(packaged.join("dist"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let installed = case.place("installed-from-registry");
    let bytes = std::fs::read(archive).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
        .unpack(&installed)
        .unwrap();
    assert_eq!(
        std::fs::read(installed.join("provider.sigstore.json")).unwrap(),
        std::fs::read(packaged.join("provider.sigstore.json")).unwrap()
    );
    succeeded(&case.provision(&installed, &[], &[]));

    // Nothing but a provider is pulled: a reference to nothing fails with the registry's word.
    let missing = format!("oci://{}/team/nothing:1.0.0", registry.address);
    let out = case.host(&[
        "pull",
        &missing,
        "--out",
        case.root.path().join("none").to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{}", text(&out));
}
