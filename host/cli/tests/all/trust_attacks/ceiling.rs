//! The administrator's ceiling through the real binaries: the C example,
//! packaged, unpacked as azd installs it and started by `run`'s simulated
//! azd with the unpacked sidecar (as azd starts it), or run from its folder
//! by `run`, `test` and `watch`'s test step.
//!
//! - **No consent lifts it.** A provider the user approved is refused once a
//!   ceiling below its grants appears (`forbidden_by_policy`, naming the
//!   field, what it asks, what the ceiling allows and the file); so is its
//!   update and the same provider under another name; `approve` refuses to
//!   record anything beyond it.
//! - **Consent only ahead of time**: on a terminal, no question is asked;
//!   `approve` beforehand lets it run.
//! - **Signers**: only the keys it names, a key named by its public key file.
//! - **Every route**: `run`, `test` and `watch` hold a provider run from its
//!   folder to it too (and to `development = false`).
//! - **A ceiling others could change** refuses every provider.
//! - **Seen before it bites**: `policy show`, `policy check` of a package
//!   (exit 1 beyond, 0 within, 2 unreadable) and `check`.

use std::path::{Path, PathBuf};
use std::process::Command;

use azd_wasm_host_fixtures::output_text as text;

use super::GRANT;
use crate::trust_case::{BIN, Case, on_a_terminal_ending, refused, refused_with, succeeded};

/// `text` as the ceiling in the case's azd config folder (0644).
fn ceiling(case: &Case, text: &str) -> PathBuf {
    let dir = case.config().join("wasm-host");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.toml");
    std::fs::write(&path, text).unwrap();
    mode(&path, 0o644);
    path
}

fn mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A ceiling file of its own, outside the trust folder (for `AZD_WASM_HOST_POLICY`).
fn named(case: &Case, name: &str, text: &str) -> PathBuf {
    let path = case.root.path().join(name);
    std::fs::write(&path, text).unwrap();
    mode(&path, 0o644);
    path
}

#[test]
fn consent_given_before_an_update_or_a_new_name_never_lifts_the_ceiling() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let v1 = case.install("v1", &[]);
    let out = case.approve(&v1);
    assert!(out.status.success(), "{}", text(&out));
    succeeded(&case.provision(&v1, &[], &[]));

    let policy = ceiling(&case, "[grants]\nenv = [\"CONTOSO_*\"]\nmemory_mb = 64\n");
    let t = refused_with(
        &case.provision_json(&v1, &[]),
        "forbidden_by_policy",
        "grants.env: asks AZD_WASM_HOST_TEST_GRANT; the ceiling allows CONTOSO_*",
    );
    assert!(t.contains(&policy.display().to_string()), "{t}");
    assert!(t.contains("no consent lifts"), "{t}");
    // What is within it is not named as refused.
    assert!(!t.contains("grants.memory_mb"), "{t}");

    // `approve` shows the judgement and records nothing.
    let out = case.approve(&v1);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("REFUSED grants.env") && t.contains("ok grants.memory_mb"),
        "{t}"
    );

    // An update within consent's reach asks more: refused by the ceiling, not asked.
    case.update("1.1.0", |t| {
        t.to_owned() + "network = [\"db.example.com:5432\"]\n"
    });
    let v2 = case.install("v2", &[]);
    let t = refused_with(
        &case.provision_json(&v2, &[]),
        "forbidden_by_policy",
        "grants.env",
    );
    assert!(!t.contains("consent_required"), "{t}");

    // The same provider under another name: judged the same.
    case.rename("c-renamed");
    let renamed = case.install("renamed", &[]);
    refused_with(
        &case.provision_json(&renamed, &[]),
        "forbidden_by_policy",
        "provider c-renamed",
    );

    // The ceiling taken away: what the user allowed runs again.
    case.rename("c-hello");
    std::fs::remove_file(&policy).unwrap();
    succeeded(&case.provision(&v1, &[], &[]));
}

#[test]
fn consent_only_ahead_of_time_is_never_asked_even_on_a_terminal() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let v1 = case.install("v1", &[]);
    let policy = ceiling(&case, "[consent]\nprompt = false\n");
    let (code, t) = on_a_terminal_ending(case.provision_command(&v1, &[], &[]), "Allow?", "y");
    assert_eq!(code, Some(3), "the question was asked:\n{t}");
    assert!(t.contains("allows consent only ahead of time"), "{t}");
    assert!(t.contains(&policy.display().to_string()), "{t}");
    assert!(!t.contains("Hello, trust!"), "{t}");
    let out = case.approve(&v1);
    assert!(out.status.success(), "{}", text(&out));
    succeeded(&case.provision(&v1, &[], &[]));
}

#[test]
fn only_the_signers_the_ceiling_names_run_and_a_key_file_names_its_key() {
    let case = Case::new();
    let v1 = case.install("v1", &[]);
    let other = "ab".repeat(32);
    ceiling(&case, &format!("[signers]\nkeys = [\"{other}\"]\n"));
    let t = refused_with(
        &case.provision_json(&v1, &[]),
        "forbidden_by_policy",
        "signers.keys",
    );
    assert!(t.contains(&other), "{t}");
    // The key `package` signed with, named by its public key file.
    let keys = case.config().join("wasm-host/trusted-keys");
    let file = std::fs::read_dir(&keys)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    ceiling(
        &case,
        &format!("[signers]\nkeys = [{:?}]\n", file.display().to_string()),
    );
    succeeded(&case.provision(&v1, &[], &[]));
    // Unsigned providers the user allows: not when the ceiling says none.
    ceiling(&case, "[signers]\nunsigned = false\n");
    let unsigned = case.install("unsigned", &["--unsigned"]);
    refused_with(
        &case.provision_json(&unsigned, &[("AZD_WASM_HOST_ALLOW_UNSIGNED", "true")]),
        "forbidden_by_policy",
        "signers.unsigned",
    );
}

#[test]
fn a_ceiling_others_could_change_or_that_does_not_read_refuses_every_provider() {
    let case = Case::new();
    let v1 = case.install("v1", &[]);
    let policy = ceiling(&case, "[grants]\nmemory_mb = 64\n");
    succeeded(&case.provision(&v1, &[], &[]));
    mode(&policy, 0o666);
    let t = refused_with(
        &case.provision_json(&v1, &[]),
        "forbidden_by_policy",
        "cannot be trusted",
    );
    assert!(
        t.contains(&policy.display().to_string()) && t.contains("chmod go-w"),
        "{t}"
    );
    ceiling(&case, "[grants]\nmemroy_mb = 64\n");
    refused_with(
        &case.provision_json(&v1, &[]),
        "forbidden_by_policy",
        "unknown field",
    );
}

/// `run`, `test` and `watch`'s test step run a provider from its folder:
/// held to the ceiling too, and to `development = false`.
#[test]
fn every_route_that_runs_a_provider_from_its_folder_is_held_to_the_ceiling() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let env = named(&case, "ci.toml", "[grants]\nenv = []\n");
    let tests = case.provider().join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("hello.test.toml"),
        "[project]\nconfig = { name = \"trust\" }\n\n[[step]]\ncommand = \"provision\"\n",
    )
    .unwrap();
    let with = |env: &Path, mut cmd: Command| {
        cmd.env("AZD_CONFIG_DIR", case.config())
            .env("AZD_WASM_HOST_POLICY", env)
            .env("AZD_WASM_HOST_CACHE_DIR", case.root.path().join("cache"))
            .env_remove("AZD_WASM_HOST_ALLOW_UNSIGNED")
            .env_remove("AZD_WASM_HOST_EXTENSION_COMMAND");
        cmd.output().unwrap()
    };
    let run = || {
        let mut cmd = Command::new(BIN);
        cmd.args([
            "run",
            "provision",
            "-e",
            "dev",
            "--output",
            "json",
            "--provider",
        ])
        .arg(case.provider().join("provider.toml"))
        .current_dir(case.project());
        cmd
    };
    let test = || {
        let mut cmd = Command::new(BIN);
        cmd.arg("test").current_dir(case.provider());
        cmd
    };
    let watch_step = || {
        let mut cmd = Command::new(BIN);
        cmd.args(["watch", "--step", "test"])
            .current_dir(case.provider());
        cmd
    };
    for (route, out) in [
        ("run", with(&env, run())),
        ("test", with(&env, test())),
        ("watch", with(&env, watch_step())),
    ] {
        let t = refused(&out, "grants.env: asks AZD_WASM_HOST_TEST_GRANT");
        assert!(t.contains("the ceiling allows none"), "{route}: {t}");
        assert!(route != "run" || t.contains("forbidden_by_policy"), "{t}");
    }
    // Within the ceiling it runs; `development = false` refuses it unsigned.
    let lax = named(&case, "lax.toml", "[grants]\nenv = [\"AZD_WASM_HOST_*\"]\n");
    let out = with(&lax, run());
    assert!(out.status.success(), "{}", text(&out));
    let strict = named(&case, "strict.toml", "[signers]\ndevelopment = false\n");
    let t = refused(&with(&strict, run()), "forbidden_by_policy");
    assert!(t.contains("signers.development"), "{t}");
    let out = with(&strict, test());
    assert!(!out.status.success(), "{}", text(&out));
    // Unsigned providers the user allows are still refused from a folder.
    let mut allowed = run();
    allowed.env("AZD_WASM_HOST_ALLOW_UNSIGNED", "true");
    let out = with(&strict, allowed);
    let t = refused(&out, "signers.development");
    assert!(t.contains("forbidden_by_policy"), "{t}");
    // A project that names a policy of its own in its azd environment: every
    // provider refused (dropping the variable would lose the job's own).
    let dotenv = case.project().join(".azure/dev");
    std::fs::create_dir_all(&dotenv).unwrap();
    std::fs::write(
        dotenv.join(".env"),
        "AZD_WASM_HOST_POLICY=\"/nowhere/lax.toml\"\n",
    )
    .unwrap();
    let t = refused(&with(&lax, run()), "forbidden_by_policy");
    assert!(t.contains("sets AZD_WASM_HOST_POLICY"), "{t}");
    // Under azd (`azd wasm test`), the tool refuses to start: the `listen`
    // it starts serves a folder of its own, where no `.env` says so.
    std::fs::write(case.provider().join("azure.yaml"), "name: p\n").unwrap();
    let provider_env = case.provider().join(".azure/ci");
    std::fs::create_dir_all(&provider_env).unwrap();
    std::fs::write(provider_env.join(".env"), "AZD_WASM_HOST_POLICY=/nowhere\n").unwrap();
    let mut under_azd = test();
    under_azd.env("AZD_SERVER", "127.0.0.1:1");
    let t = refused(&with(&lax, under_azd), "sets AZD_WASM_HOST_POLICY");
    assert!(!t.contains("PASS"), "{t}");
}

#[test]
fn policy_show_policy_check_and_check_show_the_ceiling_before_it_bites() {
    let case = Case::new();
    case.update("1.0.0", |t| t.to_owned() + GRANT);
    let v1 = case.install("v1", &[]);
    let dist = case.root.path().join("dist-v1");
    let archive = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let strict = named(&case, "strict.toml", "[grants]\nenv = [\"CONTOSO_*\"]\n");
    let lax = named(&case, "lax.toml", "[grants]\nenv = [\"AZD_WASM_HOST_*\"]\n");
    let check_of = |package: &Path, ceiling: &Path| {
        case.host(&[
            "policy",
            "check",
            package.to_str().unwrap(),
            "--policy",
            ceiling.to_str().unwrap(),
        ])
    };
    let check = |ceiling: &Path| check_of(&archive, ceiling);
    let out = check(&strict);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("REFUSED grants.env: asks AZD_WASM_HOST_TEST_GRANT"),
        "{t}"
    );
    assert!(t.contains("extension azd.wasm-host, signed by key"), "{t}");
    let out = check(&lax);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("within the ceiling"), "{}", text(&out));
    let broken = named(&case, "broken.toml", "[grants\n");
    assert_eq!(check(&broken).status.code(), Some(2));
    // A package whose provider.toml is a link to a file of this machine: refused unread.
    let secret = named(&case, "secret.txt", "password = \"hunter2-do-not-print\"\n");
    let hostile = case.root.path().join("hostile.tar.gz");
    {
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&hostile).unwrap(),
            flate2::Compression::default(),
        );
        let mut tar = tar::Builder::new(gz);
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        tar.append_link(&mut header, "provider.toml", &secret)
            .unwrap();
        tar.into_inner().unwrap().finish().unwrap();
    }
    let out = check_of(&hostile, &strict);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("neither a file nor a folder"), "{t}");
    assert!(!t.contains("hunter2"), "{t}");

    // `policy show`: every source, and what the one there sets.
    let out = Command::new(BIN)
        .args(["policy", "show"])
        .env("AZD_CONFIG_DIR", case.config())
        .env("AZD_WASM_HOST_POLICY", &strict)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("machine-wide") && t.contains("azd config folder"),
        "{t}"
    );
    assert!(t.contains("grants.env") && t.contains("CONTOSO_*"), "{t}");

    // The shipped sidecar has `policy show` too (users without the development CLI).
    let out = Command::new(v1.join("azd-wasm-host"))
        .args(["policy", "show"])
        .env("AZD_CONFIG_DIR", case.config())
        .env("AZD_WASM_HOST_POLICY", &strict)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success() && t.contains("CONTOSO_*"), "{t}");

    // `check` of the manifest: the same judgement after the capabilities.
    let out = Command::new(BIN)
        .args(["check", "provider.toml"])
        .current_dir(case.provider())
        .env("AZD_CONFIG_DIR", case.config())
        .env("AZD_WASM_HOST_POLICY", &strict)
        .env("AZD_WASM_HOST_CACHE_DIR", case.root.path().join("cache"))
        .output()
        .unwrap();
    let t = text(&out);
    assert!(t.contains("this machine's provider policy"), "{t}");
    assert!(t.contains("REFUSED grants.env"), "{t}");
}
