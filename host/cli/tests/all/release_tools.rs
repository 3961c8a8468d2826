//! `scripts/release-tools.sh`: the author's tool as an azd extension source, released as azd
//! releases its own extensions.
//!
//! Run on small stand-ins for the CLI and the sidecar (copies of `true`; the sidecars are signed
//! by this test's CLI with a key made here), so that what is checked is the source the script
//! writes: its registry (azd's own `--strict` rules, [`azd_registry::errors`]; id, namespace, the
//! `custom-commands` capability, one artifact per platform azd ships, whose checksum is its
//! archive's), the archives (`.tar.gz` on Linux, `.zip` elsewhere, named
//! `<id-with-dashes>-<os>-<arch>`, normalised modes and times, the CLI as entry point, the
//! sidecars under `sidecars/<os>-<arch>/` with what build each is and the release's signed list of
//! them), and that the registry says what `host/cli/extension.yaml` says, read by a real YAML
//! parser.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use azd_wasm_host_core::azd::PLATFORMS;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use azd_wasm_host_fixtures::azd_registry;
use azd_wasm_host_trust::{KeyPair, PublicKey};
use sha2::Digest as _;

/// Has `cmd` sign the sidecars as a release does: this test's CLI signs, with a key made in
/// `work` (and azd's config folder there, so nothing of the user's is read or made); returns
/// the key's public half.
fn signed_by_a_release_key(cmd: &mut Command, work: &Path) -> PublicKey {
    let key_file = work.join("release-key.pem");
    let key = KeyPair::generate().unwrap();
    azd_wasm_host_trust::write_key(&key_file, &key).unwrap();
    cmd.env("SIGNER_CLI", env!("CARGO_BIN_EXE_azd-wasm-host"))
        .env("RELEASE_SIGNING_KEY", &key_file)
        .env("AZD_CONFIG_DIR", work.join("azd-config"))
        .env_remove("RELEASE_TAG");
    key.public()
}

/// Every entry of a `.tar.gz`: its path, mode, time and bytes.
fn tar_entries(bytes: &[u8]) -> Vec<(String, u32, u64, Vec<u8>)> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut entries = Vec::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().display().to_string();
        let (mode, mtime) = (
            entry.header().mode().unwrap(),
            entry.header().mtime().unwrap(),
        );
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        entries.push((path, mode, mtime, data));
    }
    entries
}

/// The sidecars' folder of an archive's entries, written out under `dir`.
fn unpack_sidecars(entries: &[(String, u32, u64, Vec<u8>)], dir: &Path) -> PathBuf {
    for (path, _, _, data) in entries {
        if path.starts_with("sidecars/") && !path.ends_with('/') {
            let to = dir.join(path);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, data).unwrap();
        }
    }
    dir.join("sidecars")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the script with `cli` and `sidecar` as what it bundles; returns its
/// exit status, stderr and output folder.
fn release_tools(
    work: &Path,
    manifest: Option<&Path>,
) -> (std::process::ExitStatus, String, PathBuf) {
    release_tools_at(work, manifest, "@1600000000")
}

/// [`release_tools`], the stand-ins' file times set to `stamp` (`touch -d`).
fn release_tools_at(
    work: &Path,
    manifest: Option<&Path>,
    stamp: &str,
) -> (std::process::ExitStatus, String, PathBuf) {
    let (status, stderr, out, _) = release_tools_with(work, manifest, stamp, None);
    (status, stderr, out)
}

/// [`release_tools_at`], with `RELEASE_TAG` set to `tag`; also returns the release key.
fn release_tools_with(
    work: &Path,
    manifest: Option<&Path>,
    stamp: &str,
    tag: Option<&str>,
) -> (std::process::ExitStatus, String, PathBuf, PublicKey) {
    let true_bin = PathBuf::from("/usr/bin/true");
    let out = work.join("dist");
    let debug = work.join("debug");
    std::fs::create_dir_all(&debug).unwrap();
    let (cli, sidecar) = (
        debug.join("azd-wasm-host"),
        debug.join("azd-wasm-host-sidecar"),
    );
    std::fs::copy(&true_bin, &cli).unwrap();
    std::fs::copy(&true_bin, &sidecar).unwrap();
    // Modes a umask or a build could leave: the archive must not carry them.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&sidecar, std::fs::Permissions::from_mode(0o777)).unwrap();
    let touched = Command::new("touch")
        .args(["-m", "-d", stamp])
        .args([&cli, &sidecar])
        .status()
        .unwrap();
    assert!(touched.success());
    let mut cmd = Command::new(root().join("scripts/release-tools.sh"));
    cmd.env("OUT_DIR", &out)
        .env("SOURCE_DATE_EPOCH", EPOCH.to_string())
        .env("TOOLS_CLI", &cli)
        .env("TOOLS_SIDECAR", &sidecar)
        .env_remove("BASE_URL");
    if let Some(m) = manifest {
        cmd.env("TOOLS_MANIFEST", m);
    }
    let key = signed_by_a_release_key(&mut cmd, work);
    if let Some(tag) = tag {
        cmd.env("RELEASE_TAG", tag);
    }
    let output = cmd.output().unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        out,
        key,
    )
}

/// A stand-in for `scripts/release.sh --dev PLATFORM...` in `work`: a development CLI (a copy
/// of `true`) for each platform asked for, where release.sh leaves it under `dist`.
fn stand_in_release_sh(work: &Path, dist: &Path) -> PathBuf {
    let release = work.join("release.sh");
    std::fs::write(
        &release,
        format!(
            "#!/bin/sh\n[ \"$1\" = --dev ] || exit 9\nshift\nfor p; do\n  case $p in windows-*) e=.exe ;; *) e= ;; esac\n  mkdir -p '{d}'/$p/dev && cp /usr/bin/true '{d}'/$p/dev/azd-wasm-host$e\ndone\n",
            d = dist.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&release, std::fs::Permissions::from_mode(0o755)).unwrap();
    release
}

/// The time every archive entry must carry.
const EPOCH: u64 = 1_700_000_000;

fn linux_amd64() -> bool {
    cfg!(all(target_os = "linux", target_arch = "x86_64"))
}

#[test]
fn the_tools_source_is_what_azd_installs_and_carries_the_sidecar() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let tool_version = env!("CARGO_PKG_VERSION");
    let tag = format!("azd-ext-azd-wasm-host.tools_{tool_version}");
    let (status, stderr, out, key) =
        release_tools_with(work.path(), None, "@1600000000", Some(&tag));
    assert!(status.success(), "release-tools.sh failed:\n{stderr}");

    let registry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("registry.json")).unwrap()).unwrap();
    assert_eq!(azd_registry::errors(&registry), Vec::<String>::new());
    let manifest: serde_json::Value = serde_norway::from_str(
        &std::fs::read_to_string(root().join("host/cli/extension.yaml")).unwrap(),
    )
    .unwrap();
    let ext = &registry["extensions"][0];
    for key in ["id", "namespace", "displayName", "description", "tags"] {
        assert_eq!(
            ext[key], manifest[key],
            "registry's {key} is not extension.yaml's"
        );
    }
    assert_eq!(ext["namespace"], "wasm");
    let version = &ext["versions"][0];
    for key in [
        "version",
        "capabilities",
        "usage",
        "requiredAzdVersion",
        "examples",
    ] {
        assert_eq!(
            version[key], manifest[key],
            "registry's {key} is not extension.yaml's"
        );
    }
    assert_eq!(
        version["capabilities"],
        serde_json::json!(["custom-commands"])
    );
    assert_eq!(version["version"], env!("CARGO_PKG_VERSION"));

    let artifact = &version["artifacts"]["linux/amd64"];
    assert_eq!(artifact["entryPoint"], "azd-wasm-host");
    let archive = PathBuf::from(artifact["url"].as_str().unwrap());
    assert_eq!(archive, out.join("azd-wasm-host-tools-linux-amd64.tar.gz"));
    let bytes = std::fs::read(&archive).unwrap();
    assert_eq!(
        artifact["checksum"]["value"],
        hex::encode(sha2::Sha256::digest(&bytes))
    );
    assert_eq!(artifact["checksum"]["algorithm"], "sha256");

    let mut members = Vec::new();
    let mut note = String::new();
    let entries = tar_entries(&bytes);
    for (path, mode, mtime, data) in &entries {
        if path.ends_with("sidecar-build.json") {
            note = String::from_utf8(data.clone()).unwrap();
        }
        let executable = mode & 0o111 != 0;
        // Normalised: 0755 for folders and programs, 0644 otherwise, one time for all.
        assert_eq!(
            *mode,
            if executable { 0o755 } else { 0o644 },
            "{path}: mode {mode:o}"
        );
        assert_eq!(*mtime, EPOCH, "{path}");
        members.push((path.clone(), executable));
    }
    members.sort();
    let want = [
        ("azd-wasm-host", true),
        ("sidecars/", true),
        ("sidecars/linux-amd64/", true),
        ("sidecars/linux-amd64/azd-wasm-host", true),
        ("sidecars/linux-amd64/sidecar-build.json", false),
        ("sidecars/sidecars.sigstore.json", false),
    ]
    .map(|(p, x)| (p.to_owned(), x));
    assert_eq!(members, want);
    // The sidecars are the release's: its signed list names each, and verifies with its key.
    let unpacked = tempfile::tempdir().unwrap();
    let sidecars = unpack_sidecars(&entries, unpacked.path());
    let (statement, by) =
        azd_wasm_host_trust::verify_sidecars(&sidecars, &[(PathBuf::from("release"), key)])
            .unwrap();
    assert_eq!(statement.predicate.version, tool_version);
    assert_eq!(statement.subject.len(), 2);
    assert_eq!(by.short_id().len(), 16);
    // A sidecar from target/debug says so, for `package` to tell the author.
    let note: serde_json::Value = serde_json::from_str(&note).unwrap();
    assert_eq!(note["profile"], "dev");
    assert_eq!(note["profile_guided"], false);
}

/// A tool built without a release key takes the signer of its sidecars from the keys its user
/// trusts for the tool, never from those trusted for providers: with the release's key trusted
/// for providers (`trust add KEY`), the list the script signed is refused, saying so; added with
/// `trust add KEY --for tool`, it lands in `tool-keys/` and the list verifies.
#[test]
fn only_a_key_trusted_for_the_tool_verifies_its_sidecars() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (status, stderr, out, key) = release_tools_with(work.path(), None, "@1600000000", None);
    assert!(status.success(), "release-tools.sh failed:\n{stderr}");
    let bytes = std::fs::read(out.join("azd-wasm-host-tools-linux-amd64.tar.gz")).unwrap();
    let unpacked = tempfile::tempdir().unwrap();
    let sidecars = unpack_sidecars(&tar_entries(&bytes), unpacked.path());

    // A user's own trust folder, and the release key's public half as a file.
    let config = work.path().join("user-config");
    let public = work.path().join("release-key.pub");
    assert_eq!(
        PublicKey::from_pem(&std::fs::read_to_string(&public).unwrap()).unwrap(),
        key
    );
    let trust = azd_wasm_host_trust::TrustDir::at(config.join("wasm-host"));
    let cli = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"))
            .args(args)
            .env("AZD_CONFIG_DIR", &config)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {text}");
        text
    };
    let verify = || {
        azd_wasm_host_trust::verify_tool_sidecars(
            &sidecars,
            &trust.tool_keys(),
            &trust.trusted_keys(),
        )
    };

    cli(&[
        "trust",
        "add",
        public.to_str().unwrap(),
        "--name",
        "release",
    ]);
    let Err(e) = verify() else {
        panic!("a key trusted for providers verified the sidecars");
    };
    assert!(
        e.to_string().contains("which you trust for providers")
            && e.to_string().contains("--for tool"),
        "{e}"
    );

    let said = cli(&["trust", "add", public.to_str().unwrap(), "--for", "tool"]);
    assert!(said.contains("for the tool's sidecars"), "{said}");
    assert_eq!(trust.tool_keys().len(), 1);
    assert!(trust.tool_keys()[0].0.starts_with(trust.tool_keys_dir()));
    let (_, by) = verify().unwrap();
    assert_eq!(by, key);
    let list = cli(&["trust", "list"]);
    assert!(
        list.contains("keys trusted for the tool's sidecars:") && list.contains("tool-keys"),
        "{list}"
    );
    // Removed for the tool, it verifies no more (it is still trusted for providers).
    cli(&["trust", "remove", &key.short_id()[..8], "--for", "tool"]);
    assert!(trust.tool_keys().is_empty() && trust.trusted_keys().len() == 1);
    assert!(verify().is_err());
}

#[test]
fn a_manifest_whose_version_is_not_the_workspaces_is_refused() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("host/cli/extension.yaml")).unwrap();
    let wrong = text.replace(
        &format!("version: {}", env!("CARGO_PKG_VERSION")),
        "version: 9.9.9",
    );
    assert_ne!(
        wrong, text,
        "extension.yaml has no `version: <workspace version>` line"
    );
    let manifest = work.path().join("extension.yaml");
    std::fs::write(&manifest, wrong).unwrap();
    let (status, stderr, out) = release_tools(work.path(), Some(&manifest));
    assert!(!status.success(), "a wrong version was accepted:\n{stderr}");
    assert!(
        stderr.contains("'9.9.9'") && stderr.contains(env!("CARGO_PKG_VERSION")),
        "{stderr}"
    );
    assert!(
        !out.join("registry.json").exists(),
        "a registry was written anyway"
    );
}

/// The same inputs give the same archive, byte for byte.
#[test]
fn archives_are_reproducible() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (s1, e1, out1) = release_tools_at(one.path(), None, "@1600000000");
    assert!(s1.success(), "{e1}");
    // Other file times, other folders: the same entries, byte for byte, but for the signature
    // (ECDSA signs with a fresh nonce, and each run here signs with a key of its own).
    let (s2, e2, out2) = release_tools_at(two.path(), None, "@1650000000");
    assert!(s2.success(), "{e2}");
    let name = "azd-wasm-host-tools-linux-amd64.tar.gz";
    let unsigned = |out: &Path| {
        let mut entries = tar_entries(&std::fs::read(out.join(name)).unwrap());
        let before = entries.len();
        entries.retain(|(path, ..)| !path.ends_with("sidecars.sigstore.json"));
        assert_eq!(entries.len(), before - 1, "no signed list in {name}");
        entries
    };
    assert!(
        unsigned(&out1) == unsigned(&out2),
        "two runs on the same inputs made different archives"
    );
}

/// The script removes only what it made: a sidecar folder it was given
/// (TOOLS_SIDECARS) and the release builds' folder stay, whatever it bundles.
#[test]
fn the_script_never_removes_a_folder_it_did_not_make() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mine = work.path().join("my-sidecars");
    std::fs::create_dir_all(mine.join("linux-amd64")).unwrap();
    std::fs::copy("/usr/bin/true", mine.join("linux-amd64/azd-wasm-host")).unwrap();
    let dist = work.path().join("release-dist");
    let release = stand_in_release_sh(work.path(), &dist);
    let mut cmd = Command::new(root().join("scripts/release-tools.sh"));
    cmd.env("OUT_DIR", work.path().join("dist"))
        .env("RELEASE_SH", &release)
        .env("DIST_DIR", &dist)
        .env("TOOLS_SIDECARS", &mine)
        // Set without TOOLS_CLI: before, this made the exit trap remove TOOLS_SIDECARS.
        .env("TOOLS_SIDECAR", "/usr/bin/true")
        .env_remove("TOOLS_CLI")
        .env_remove("BASE_URL");
    signed_by_a_release_key(&mut cmd, work.path());
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        mine.join("linux-amd64/azd-wasm-host").is_file(),
        "the script removed TOOLS_SIDECARS, a folder it was given"
    );
    assert!(
        dist.join("linux-amd64/dev/azd-wasm-host").is_file(),
        "the script removed the release builds' folder"
    );
}

/// `all` releases the six platforms azd ships extensions for, as azd names them: a `.tar.gz`
/// for Linux and a `.zip` elsewhere, each `azd-wasm-host-tools-<os>-<arch>`, with entries of
/// normalised modes and one time, the Windows entry point an `.exe`, every sidecar and their
/// signed list in each; and the registry passes azd's `--strict` rules.
#[test]
fn all_releases_the_six_platforms_as_azd_names_and_packs_them() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (dist, sidecars) = (
        work.path().join("release-dist"),
        work.path().join("sidecars"),
    );
    let exe = |p: &str| {
        if p.starts_with("windows-") {
            "azd-wasm-host.exe"
        } else {
            "azd-wasm-host"
        }
    };
    let platforms: Vec<String> = PLATFORMS.iter().map(|p| p.slug()).collect();
    for p in &platforms {
        std::fs::create_dir_all(sidecars.join(p)).unwrap();
        std::fs::copy("/usr/bin/true", sidecars.join(p).join(exe(p))).unwrap();
    }
    let release = stand_in_release_sh(work.path(), &dist);
    let out = work.path().join("dist");
    let mut cmd = Command::new(root().join("scripts/release-tools.sh"));
    cmd.arg("all")
        .env("OUT_DIR", &out)
        .env("RELEASE_SH", &release)
        .env("DIST_DIR", &dist)
        .env("TOOLS_SIDECARS", &sidecars)
        .env("SOURCE_DATE_EPOCH", EPOCH.to_string())
        .env("BASE_URL", "https://example.invalid/releases/v1/")
        .env_remove("TOOLS_CLI")
        .env_remove("TOOLS_SIDECAR");
    let key = signed_by_a_release_key(&mut cmd, work.path());
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");

    let registry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("registry.json")).unwrap()).unwrap();
    assert_eq!(azd_registry::errors(&registry), Vec::<String>::new());
    let artifacts = registry["extensions"][0]["versions"][0]["artifacts"]
        .as_object()
        .unwrap();
    let mut keys: Vec<&str> = artifacts.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want: Vec<String> = azd_registry::platforms();
    want.sort_unstable();
    assert_eq!(keys, want, "one artifact per platform azd installs on");

    let all_sidecars: Vec<String> = platforms
        .iter()
        .map(|p| format!("sidecars/{p}/{}", exe(p)))
        .collect();
    for p in &platforms {
        let artifact = &artifacts[&p.replace('-', "/")];
        let kind = if p.starts_with("linux-") {
            "tar.gz"
        } else {
            "zip"
        };
        let name = format!("azd-wasm-host-tools-{p}.{kind}");
        assert_eq!(
            artifact["url"],
            format!("https://example.invalid/releases/v1/{name}")
        );
        assert_eq!(artifact["entryPoint"], exe(p));
        let bytes = std::fs::read(out.join(&name)).unwrap();
        assert_eq!(
            artifact["checksum"]["value"],
            hex::encode(sha2::Sha256::digest(&bytes)),
            "{name}"
        );
        let entries = if kind == "zip" {
            zip_entries(&bytes)
        } else {
            tar_entries(&bytes)
        };
        let mut files = Vec::new();
        for (path, mode, mtime, _) in &entries {
            let program = path.rsplit('/').next().unwrap_or_default();
            let executable =
                path.ends_with('/') || ["azd-wasm-host", "azd-wasm-host.exe"].contains(&program);
            assert_eq!(
                *mode,
                if executable { 0o755 } else { 0o644 },
                "{name}: {path}: mode {mode:o}"
            );
            assert_eq!(*mtime, EPOCH, "{name}: {path}");
            if !path.ends_with('/') {
                files.push(path.clone());
            }
        }
        let mut expected = vec![
            exe(p).to_owned(),
            "sidecars/sidecars.sigstore.json".to_owned(),
        ];
        expected.extend(all_sidecars.iter().cloned());
        expected.sort();
        files.sort();
        assert_eq!(files, expected, "{name}");
        let unpacked = tempfile::tempdir().unwrap();
        let signed = unpack_sidecars(&entries, unpacked.path());
        azd_wasm_host_trust::verify_sidecars(&signed, &[(PathBuf::from("release"), key.clone())])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Every entry of a `.zip`: its path, Unix mode, time (as seconds since 1970, UTC) and bytes.
fn zip_entries(bytes: &[u8]) -> Vec<(String, u32, u64, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut entries = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let mode = entry.unix_mode().expect("no Unix mode") & 0o7777;
        let t = entry.last_modified().unwrap();
        let days = days_from_civil(i64::from(t.year()), t.month().into(), t.day().into());
        let secs = days * 86_400
            + i64::from(t.hour()) * 3600
            + i64::from(t.minute()) * 60
            + i64::from(t.second());
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        entries.push((
            entry.name().to_owned(),
            mode,
            u64::try_from(secs).unwrap(),
            data,
        ));
    }
    entries
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[test]
fn a_tag_that_is_not_the_extensions_id_and_version_is_refused() {
    if !linux_amd64() {
        eprintln!("skipped: the script's stand-ins are this Linux amd64 machine's");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (status, stderr, out, _) = release_tools_with(
        work.path(),
        None,
        "@1600000000",
        Some("azd-ext-azd-wasm-host.tools_9.9.9"),
    );
    assert!(!status.success(), "a wrong tag was accepted:\n{stderr}");
    assert!(
        stderr.contains("azd-ext-azd-wasm-host.tools_9.9.9")
            && stderr.contains(&format!(
                "azd-ext-azd-wasm-host.tools_{}",
                env!("CARGO_PKG_VERSION")
            )),
        "{stderr}"
    );
    assert!(!out.join("registry.json").exists());
}

/// The release workflow runs on the tag azd's release recipe names for this extension, builds
/// each of the six platforms on a runner of its own, and releases through the script the tests
/// above check, azd's own `--strict` validation and an install over loopback; every script it
/// names is in the repository and runnable.
#[test]
fn the_release_workflow_is_the_recipe_for_this_extension() {
    let text = std::fs::read_to_string(root().join(".github/workflows/release-tools.yml")).unwrap();
    let workflow: serde_json::Value = serde_norway::from_str(&text).unwrap();
    let manifest: serde_json::Value = serde_norway::from_str(
        &std::fs::read_to_string(root().join("host/cli/extension.yaml")).unwrap(),
    )
    .unwrap();
    let id = manifest["id"].as_str().unwrap();
    assert_eq!(
        workflow["on"]["push"]["tags"],
        serde_json::json!([format!("azd-ext-{id}_*")]),
        "the workflow must run on the tag azd-ext-<id>_<version>"
    );
    let matrix = workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap();
    let mut built: Vec<String> = matrix
        .iter()
        .map(|m| m["platform"].as_str().unwrap().to_owned())
        .collect();
    built.sort();
    let mut want: Vec<String> = PLATFORMS.iter().map(|p| p.slug()).collect();
    want.sort();
    assert_eq!(built, want, "one build per platform azd installs on");
    for m in matrix {
        assert!(m["runner"].as_str().is_some_and(|r| !r.is_empty()), "{m}");
        assert!(m["target"].as_str().is_some_and(|t| !t.is_empty()), "{m}");
    }
    let release = serde_json::to_string(&workflow["jobs"]["release"]).unwrap();
    for step in [
        "scripts/release-tools.sh all",
        "extension source validate tools-dist/registry.json --strict",
        "scripts/release-install-check.sh",
        "RELEASE_SIGNING_KEY",
        "gh release create",
    ] {
        assert!(
            release.contains(step),
            "the release job does not run {step:?}"
        );
    }
    // Every script it names exists and can run.
    let mut named = 0;
    for (at, _) in text.match_indices("scripts/") {
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
            .collect();
        let path = root().join(name.trim_end_matches('.'));
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("the workflow names {name}: {e}"))
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "{name} is not executable");
        named += 1;
    }
    assert!(named >= 4, "only {named} scripts named");
}
