//! `scripts/release-tools.sh`: the author's tool as an azd extension source.
//!
//! Run on small stand-ins for the CLI and the sidecar (copies of `true`),
//! so that what is checked is the source the script writes: its registry
//! (read by azd: id, namespace, the `custom-commands` capability, one
//! artifact per platform whose checksum is its archive's), the archive's
//! layout (the CLI as entry point, the sidecar under `sidecars/<os>-<arch>/`
//! with what build it is), and that the registry says what
//! `host/cli/extension.yaml` says, read by a real YAML parser.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::Digest as _;

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
    let output = cmd.output().unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        out,
    )
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
    let (status, stderr, out) = release_tools(work.path(), None);
    assert!(status.success(), "release-tools.sh failed:\n{stderr}");

    let registry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("registry.json")).unwrap()).unwrap();
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
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().display().to_string();
        if path.ends_with("sidecar-build.json") {
            entry.read_to_string(&mut note).unwrap();
        }
        let mode = entry.header().mode().unwrap();
        let executable = mode & 0o111 != 0;
        // Normalised: 0755 for folders and programs, 0644 otherwise, one time for all.
        assert_eq!(
            mode,
            if executable { 0o755 } else { 0o644 },
            "{path}: mode {mode:o}"
        );
        assert_eq!(entry.header().mtime().unwrap(), EPOCH, "{path}");
        assert_eq!(entry.header().uid().unwrap(), 0, "{path}");
        members.push((path, executable));
    }
    members.sort();
    let want = [
        ("azd-wasm-host", true),
        ("sidecars/", true),
        ("sidecars/linux-amd64/", true),
        ("sidecars/linux-amd64/azd-wasm-host", true),
        ("sidecars/linux-amd64/sidecar-build.json", false),
    ]
    .map(|(p, x)| (p.to_owned(), x));
    assert_eq!(members, want);
    // A sidecar from target/debug says so, for `package` to tell the author.
    let note: serde_json::Value = serde_json::from_str(&note).unwrap();
    assert_eq!(note["profile"], "dev");
    assert_eq!(note["profile_guided"], false);
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
    // Other file times, other folders: the same bytes.
    let (s2, e2, out2) = release_tools_at(two.path(), None, "@1650000000");
    assert!(s2.success(), "{e2}");
    let name = "azd-wasm-host-tools-linux-amd64.tar.gz";
    assert!(
        std::fs::read(out1.join(name)).unwrap() == std::fs::read(out2.join(name)).unwrap(),
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
    // A stand-in for release.sh: leaves a development CLI where release.sh would.
    let release = work.path().join("release.sh");
    std::fs::write(
        &release,
        format!(
            "#!/bin/sh\nmkdir -p '{d}/linux-amd64/dev' && cp /usr/bin/true '{d}/linux-amd64/dev/azd-wasm-host'\n",
            d = dist.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&release, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = Command::new(root().join("scripts/release-tools.sh"))
        .env("OUT_DIR", work.path().join("dist"))
        .env("RELEASE_SH", &release)
        .env("DIST_DIR", &dist)
        .env("TOOLS_SIDECARS", &mine)
        // Set without TOOLS_CLI: before, this made the exit trap remove TOOLS_SIDECARS.
        .env("TOOLS_SIDECAR", "/usr/bin/true")
        .env_remove("TOOLS_CLI")
        .env_remove("BASE_URL")
        .output()
        .unwrap();
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
