//! What signed and consented installs refuse, through the real binaries:
//! providers packaged (signed by default), unpacked the way azd unpacks an
//! extension, then changed the way someone with write access to the
//! extension's folder, or a redistributor, would change them; each started
//! as the extension by `run`'s simulated azd with the unpacked sidecar.
//!
//! - **What runs is signed.** Each file the host runs or reads as policy
//!   swapped or edited (another provider's precompiled code, its binding, a
//!   zeroed code hash, `extension.yaml`), removed, or precompiled code added
//!   to a package signed without it: refused as `untrusted_provider`,
//!   naming the file. Unsigned providers the user allows still have their
//!   code checked against its binding.
//! - **Consent is per signer, extension and name.** A first-seen provider
//!   that asks for any grant is refused under `--no-prompt` (naming each
//!   grant and `approve`), asked on a terminal, and runs after `approve`; a
//!   renamed provider, another extension's provider of the same name, or
//!   the same provider signed by another (trusted) key inherits nothing.
//! - **The trust folder is the user's alone**: a folder or file in it that
//!   others may write is refused, naming it and the fix.
//! - **No laundering**: a provider `pull` kept unverified (unsigned providers
//!   allowed), or a project whose signature does not verify, is not signed
//!   over by `package` or `pull --package` unless `--resign` asks for it
//!   (with a warning naming what failed); no key is made for it.
//!
//! Needs the C example built and the sidecar built beside the CLI
//! (`scripts/test.sh` does both) and python3 (the pseudo-terminal).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod ceiling;
use crate::trust_case;

use azd_wasm_host_fixtures::{behaviour_component, copy_dir, output_text as text};
use std::path::{Path, PathBuf};
use trust_case::{Case, on_a_terminal, refused, refused_with, succeeded};

/// `installed` copied into a new folder for the case `name`, as azd would
/// have installed it ([`Case::place`]), for one change.
fn copy_of(case: &Case, installed: &Path, name: &str) -> PathBuf {
    let copy = case.place(name);
    copy_dir(installed, &copy);
    copy
}

#[test]
fn every_file_the_host_runs_or_reads_is_signed_and_checked() {
    let case = Case::new();
    let v1 = case.install("v1", &[]);
    assert!(
        v1.join("extension.yaml").is_file(),
        "package ships extension.yaml"
    );
    succeeded(&case.provision(&v1, &[], &[]));
    // Another provider's package: its precompiled code is other native code.
    let other = Case::with_component(&behaviour_component());
    let theirs = other.install("theirs", &[]);
    let code = "precompiled/provider.cwasm";
    let binding = "precompiled/binding.toml";
    assert_ne!(
        std::fs::read(v1.join(code)).unwrap(),
        std::fs::read(theirs.join(code)).unwrap()
    );

    // Their code in place of ours: refused before it is mapped.
    let swapped = copy_of(&case, &v1, "swapped-code");
    std::fs::copy(theirs.join(code), swapped.join(code)).unwrap();
    let t = refused_with(
        &case.provision_json(&swapped, &[]),
        "untrusted_provider",
        "provider.cwasm was changed after it was signed",
    );
    assert!(t.contains(&swapped.join(code).display().to_string()), "{t}");

    // Their code with their binding (which names their component): the binding is signed too.
    let both = copy_of(&case, &v1, "swapped-both");
    std::fs::copy(theirs.join(code), both.join(code)).unwrap();
    std::fs::copy(theirs.join(binding), both.join(binding)).unwrap();
    refused_with(
        &case.provision_json(&both, &[]),
        "untrusted_provider",
        "binding.toml was changed after it was signed",
    );

    // The code's hash in the binding zeroed (so that no hash would be compared).
    let zeroed = copy_of(&case, &v1, "zeroed");
    zero_code_hash(&zeroed.join(binding));
    refused_with(
        &case.provision_json(&zeroed, &[]),
        "untrusted_provider",
        "binding.toml was changed after it was signed",
    );

    // extension.yaml changed, or removed.
    let yaml = copy_of(&case, &v1, "yaml");
    let text = std::fs::read_to_string(yaml.join("extension.yaml")).unwrap();
    std::fs::write(yaml.join("extension.yaml"), text.replace("0.1.0", "9.9.9")).unwrap();
    refused_with(
        &case.provision_json(&yaml, &[]),
        "untrusted_provider",
        "extension.yaml was changed after it was signed",
    );
    std::fs::remove_file(yaml.join("extension.yaml")).unwrap();
    refused_with(
        &case.provision_json(&yaml, &[]),
        "untrusted_provider",
        "extension.yaml is signed by",
    );

    // A package signed without precompiled code (it ships the development
    // host, which compiles) given someone's precompiled code: the host would
    // map it, so it must be signed.
    let compiling = case.install("compiling", &["--no-precompile"]);
    assert!(!compiling.join("precompiled").exists());
    succeeded(&case.provision(&compiling, &[], &[]));
    copy_dir(&theirs.join("precompiled"), &compiling.join("precompiled"));
    let t = refused_with(
        &case.provision_json(&compiling, &[]),
        "untrusted_provider",
        "does not sign the precompiled code",
    );
    assert!(t.contains("no code signature"), "{t}");

    // Nothing of the above ran: the original still does.
    succeeded(&case.provision(&v1, &[], &[]));
}

/// Sets `code_sha256` in a binding to 64 zeros.
fn zero_code_hash(binding: &Path) {
    let text = std::fs::read_to_string(binding).unwrap();
    let zeroed: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("code_sha256") {
                format!("code_sha256 = \"{}\"", "0".repeat(64))
            } else {
                l.to_owned()
            }
        })
        .collect();
    assert_ne!(zeroed.join("\n"), text.trim_end());
    std::fs::write(binding, zeroed.join("\n") + "\n").unwrap();
}

#[test]
fn an_unsigned_provider_that_is_allowed_still_runs_only_the_code_its_binding_names() {
    let case = Case::new();
    let unsigned = case.install("unsigned", &["--unsigned"]);
    let allow = [("AZD_WASM_HOST_ALLOW_UNSIGNED", "true")];
    succeeded(&case.provision(&unsigned, &[], &allow));
    let zeroed = copy_of(&case, &unsigned, "zeroed");
    zero_code_hash(&zeroed.join("precompiled/binding.toml"));
    let t = refused_with(
        &case.provision_json(&zeroed, &allow),
        "untrusted_provider",
        "is not the code its binding",
    );
    assert!(t.contains(&"0".repeat(64)), "{t}");
    let other = Case::with_component(&behaviour_component());
    let theirs = other.install("theirs", &["--unsigned"]);
    let swapped = copy_of(&case, &unsigned, "swapped");
    std::fs::copy(
        theirs.join("precompiled/provider.cwasm"),
        swapped.join("precompiled/provider.cwasm"),
    )
    .unwrap();
    refused_with(
        &case.provision_json(&swapped, &allow),
        "untrusted_provider",
        "is not the code its binding",
    );
}

/// A grant beyond the deny-all default: one environment variable.
const GRANT: &str = "env = [\"AZD_WASM_HOST_TEST_GRANT\"]\n";

#[test]
fn a_first_seen_provider_that_asks_for_anything_runs_only_after_consent() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let v1 = case.install("v1", &[]);
    // Nobody to ask: refused, with the whole list and the command that allows it.
    let t = refused_with(
        &case.provision_json(&v1, &[]),
        "consent_required",
        "provider `c-hello` 1.0.0 (extension azd.wasm-host, signed by key",
    );
    assert!(t.contains("runs here for the first time"), "{t}");
    assert!(
        t.contains("+ environment variable AZD_WASM_HOST_TEST_GRANT"),
        "{t}"
    );
    assert!(t.contains("approve --manifest"), "{t}");
    // Asked and declined: refused; nothing recorded.
    refused(
        &case.provision(&v1, &["--no"], &[]),
        "you did not allow what provider `c-hello` 1.0.0",
    );
    refused(
        &case.provision(&v1, &[], &[]),
        "runs here for the first time",
    );
    // Asked on a terminal, yes: it runs, and is not asked again.
    let t = on_a_terminal(case.provision_command(&v1, &[], &[]), "Allow?", "y");
    assert!(
        t.contains("runs here for the first time") && t.contains("AZD_WASM_HOST_TEST_GRANT"),
        "{t}"
    );
    assert!(t.contains("Hello, trust!"), "{t}");
    succeeded(&case.provision(&v1, &[], &[]));

    // `approve`, as CI runs it after installing: a second install elsewhere.
    let ci = Case::new();
    ci.update("1.0.0", |t| t.to_owned() + GRANT);
    let installed = ci.install("ci", &[]);
    refused(
        &ci.provision(&installed, &[], &[]),
        "runs here for the first time",
    );
    let out = ci.approve(&installed);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("+ environment variable AZD_WASM_HOST_TEST_GRANT"),
        "{}",
        text(&out)
    );
    succeeded(&ci.provision(&installed, &[], &[]));
    // A provider that asks for nothing beyond the deny-all default is not asked about.
    let plain = Case::new();
    let installed = plain.install("plain", &[]);
    succeeded(&plain.provision(&installed, &[], &[]));
}

#[test]
fn a_renamed_provider_another_extensions_or_another_keys_inherits_nothing() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let v1 = case.install("v1", &[]);
    let out = case.approve(&v1);
    assert!(out.status.success(), "{}", text(&out));
    succeeded(&case.provision(&v1, &[], &[]));

    // The same provider under another name: first seen.
    case.rename("c-hola");
    let renamed = case.install("renamed", &[]);
    refused_with(
        &case.provision_json(&renamed, &[]),
        "consent_required",
        "provider `c-hola` 1.0.0",
    );
    case.rename("c-hello");

    // The same name, shipped by another extension: first seen.
    case.edit("extension.yaml", "id: azd.wasm-host", "id: someone.else");
    let other_extension = case.install("other-extension", &[]);
    refused_with(
        &case.provision_json(&other_extension, &[]),
        "consent_required",
        "(extension someone.else, signed by key",
    );
    case.edit("extension.yaml", "id: someone.else", "id: azd.wasm-host");

    // The same name and extension signed by another publisher's key, which
    // this user trusts too: first seen.
    let key = case.root.path().join("publisher.key");
    let out = case.host(&["keygen", "--out", key.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let out = case.host(&["trust", "add", key.with_extension("pub").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let theirs = case.install("theirs", &["--sign", key.to_str().unwrap()]);
    let t = refused_with(
        &case.provision_json(&theirs, &[]),
        "consent_required",
        "runs here for the first time",
    );
    assert!(t.contains("provider `c-hello` 1.0.0"), "{t}");
    // The one approved still runs unasked.
    succeeded(&case.provision(&v1, &[], &[]));
}

/// The consent a provider gets is its installed extension's (the folder azd
/// installed it in), never the extension its signature names: the same
/// signed package installed as another extension (an extension source may
/// give a package any id) gets none of the consent of the extension it was
/// signed for; the host refuses it, naming both, and `approve` does too.
#[test]
fn a_package_installed_as_another_extension_gets_none_of_the_consent_its_signature_names() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let ours = case.install("ours", &[]);
    let out = case.approve(&ours);
    assert!(out.status.success(), "{}", text(&out));
    succeeded(&case.provision(&ours, &[], &[]));

    // Signed for azd.wasm-host, whose consent is recorded; installed as local.other.
    let moved = case.install_as("moved", "local.other", &[]);
    let t = refused_with(
        &case.provision_json(&moved, &[]),
        "untrusted_provider",
        "installed as extension local.other",
    );
    assert!(t.contains("for extension azd.wasm-host"), "{t}");
    let out = case.approve(&moved);
    assert!(
        !out.status.success() && text(&out).contains("installed as extension local.other"),
        "{}",
        text(&out)
    );
    // The extension it was signed for keeps its consent, and nothing was recorded for the other.
    succeeded(&case.provision(&ours, &[], &[]));
    refused(
        &case.provision(&moved, &[], &[]),
        "installed as extension local.other",
    );
}

#[cfg(unix)]
#[test]
fn a_trust_folder_others_can_write_to_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let case = Case::new();
    let v1 = case.install("v1", &[]);
    succeeded(&case.provision(&v1, &[], &[]));
    let root = case.config().join("wasm-host");
    let set = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let keys = root.join("trusted-keys");
    let key = std::fs::read_dir(&keys)
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    let consent = root.join("consent");
    let record = std::fs::read_dir(&consent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    // Each place someone else could plant a key or a consent, or allow unsigned providers.
    for (path, bad, good) in [
        (keys.clone(), 0o777, 0o700),
        (keys.clone(), 0o770, 0o700),
        (key.clone(), 0o666, 0o644),
        (root.clone(), 0o757, 0o700),
        (consent.clone(), 0o733, 0o700),
        (record.clone(), 0o620, 0o600),
        (case.config(), 0o777, 0o700),
    ] {
        set(&path, bad);
        let t = refused_with(
            &case.provision_json(&v1, &[]),
            "untrusted_provider",
            "the trust folder cannot be trusted",
        );
        assert!(t.contains(&path.display().to_string()), "{t}");
        assert!(t.contains("chmod go-w"), "{t}");
        // `approve` refuses too.
        let out = case.approve(&v1);
        assert!(
            !out.status.success(),
            "approve ran with {} {bad:o}",
            path.display()
        );
        set(&path, good);
        succeeded(&case.provision(&v1, &[], &[]));
    }
}

/// The trust folder of someone who trusts nobody's key but allows unsigned
/// providers (so that `pull` keeps what it cannot verify).
fn stranger(case: &Case, name: &str) -> PathBuf {
    trust_case::allowing_unsigned(case.root.path(), name)
}

/// The CLI with the trust folder `config`, in `dir`.
fn host_as(config: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(trust_case::BIN)
        .args(args)
        .current_dir(dir)
        .env("AZD_CONFIG_DIR", config)
        .env_remove("AZD_WASM_HOST_ALLOW_UNSIGNED")
        .output()
        .unwrap()
}

#[test]
fn a_pulled_provider_that_did_not_verify_is_not_signed_over_unless_asked() {
    let case = Case::new();
    let registry = trust_case::Registry::start();
    let signed_tag = format!("oci://{}/team/c-hello:0.1.0", registry.address);
    let unsigned_tag = format!("oci://{}/team/c-hello:unsigned", registry.address);
    assert!(case.host(&["publish", &signed_tag]).status.success());
    let out = case.host(&["publish", &unsigned_tag, "--unsigned"]);
    assert!(out.status.success(), "{}", text(&out));
    let work = case.root.path();
    for (tag, why) in [
        (&signed_tag, "which you do not trust"),
        (&unsigned_tag, "is not signed"),
    ] {
        let config = stranger(
            &case,
            &format!("stranger-{}", tag.rsplit(':').next().unwrap()),
        );
        let key = config.join("wasm-host/keys/signing.key");
        let out_dir = work.join(format!("pulled-{}", tag.rsplit(':').next().unwrap()));
        let out = host_as(
            &config,
            work,
            &["pull", tag, "--out", out_dir.to_str().unwrap(), "--package"],
        );
        let t = text(&out);
        assert!(!out.status.success(), "pull --package signed it over:\n{t}");
        assert!(t.contains("NOT VERIFIED"), "{t}");
        assert!(t.contains("did not verify") && t.contains(why), "{t}");
        assert!(t.contains("--resign"), "{t}");
        assert!(!out_dir.join("dist").exists(), "a package was made");
        assert!(
            !key.exists(),
            "a signing key was made for content this user did not build"
        );
        // Nor does a later `package` of the same folder.
        let manifest = out_dir.join("provider.toml");
        let out = host_as(&config, &out_dir, &["package", manifest.to_str().unwrap()]);
        let t = text(&out);
        assert!(!out.status.success() && t.contains("did not verify"), "{t}");
        assert!(!key.exists());
        // Asked for explicitly: signed, with a warning naming what failed.
        let out = host_as(
            &config,
            &out_dir,
            &["package", manifest.to_str().unwrap(), "--resign"],
        );
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        assert!(t.contains("warning: --resign") && t.contains(why), "{t}");
    }
    // `pull --package --resign` in one go.
    let config = stranger(&case, "stranger-resign");
    let out_dir = work.join("pulled-resigned");
    let out = host_as(
        &config,
        work,
        &[
            "pull",
            &signed_tag,
            "--out",
            out_dir.to_str().unwrap(),
            "--package",
            "--resign",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("warning: --resign"), "{}", text(&out));
}

#[test]
fn package_of_someone_elses_signed_package_that_does_not_verify_is_refused() {
    let case = Case::new();
    let installed = case.install("theirs", &[]);
    // Their unpacked package, with their signature, in the hands of a user who
    // does not trust their key, who packages it again.
    let manifest = installed.join("provider.toml");
    let config = case.root.path().join("other-user");
    let out = host_as(
        &config,
        &installed,
        &["package", manifest.to_str().unwrap()],
    );
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("provider.sigstore.json did not verify") && t.contains("which you do not trust"),
        "{t}"
    );
    assert!(!installed.join("dist").exists(), "a package was made");
    assert!(!config.join("wasm-host/keys/signing.key").exists());
    let out = host_as(
        &config,
        &installed,
        &["package", manifest.to_str().unwrap(), "--resign"],
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("warning: --resign") && t.contains("which you do not trust"),
        "{t}"
    );
}
