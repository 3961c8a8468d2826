//! The sidecar builds `package` ships when it is not given host binaries.
//!
//! The sidecar (`host/sidecar`, binary `azd-wasm-host-sidecar`) is the host
//! built without wasmtime's compilers and the author's toolchain: it runs
//! only the code `package` precompiles into each archive. Found:
//! - this machine's: the latest built of the one beside this binary, where
//!   cargo puts it when it builds the workspace
//!   (`target/<profile>/azd-wasm-host-sidecar`), the build of the sidecar's
//!   own profile (`target/sidecar/`), and the release folder's (profile-guided
//!   by `scripts/release.sh`), so that an older build left behind is not the
//!   one shipped; with none, it is built now, from the checkout this binary
//!   was built from, into `target/sidecar-auto/` (a folder of its own, so that
//!   a build under way in `target/` never waits for it);
//! - every other platform's in `target/release-dist/<os>-<arch>/`, where
//!   `scripts/release.sh` writes the sidecar of each platform.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use super::platforms::{AZD_PLATFORMS, Platform};

/// The sidecar's binary name, as cargo builds it.
const SIDECAR_BIN: &str = "azd-wasm-host-sidecar";
/// The package of the sidecar binary.
const SIDECAR_PACKAGE: &str = "azd-wasm-host-sidecar";

/// The sidecar builds to ship: this machine's and those of
/// `scripts/release.sh` for other platforms.
pub(super) fn default_sidecars() -> anyhow::Result<Vec<(Platform, PathBuf)>> {
    let here = Platform::this_machine()?;
    let exe = std::env::current_exe().context("cannot find this host's own binary")?;
    let exe_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let release_dist = exe_dir
        .parent()
        .map(|target| target.join("release-dist"))
        .unwrap_or_default();
    let in_dist = |p: Platform| release_dist.join(p.slug()).join(p.exe_name());
    let bin = format!("{SIDECAR_BIN}{}", std::env::consts::EXE_SUFFIX);
    let beside = exe_dir.join(&bin);
    // The shipping profile's build (`cargo build --profile sidecar`), beside this binary's profile.
    let profile = exe_dir
        .parent()
        .map(|target| target.join("sidecar").join(&bin))
        .unwrap_or_default();
    let native = match newest([beside, profile, in_dist(here)]) {
        Some(found) => found,
        None => build_here(here)?,
    };
    let mut found = vec![(here, native)];
    for p in AZD_PLATFORMS {
        if p != here && in_dist(p).is_file() {
            found.push((p, in_dist(p)));
        }
    }
    Ok(found)
}

/// The most recently modified of `candidates` that are files.
fn newest<const N: usize>(candidates: [PathBuf; N]) -> Option<PathBuf> {
    candidates
        .into_iter()
        .filter_map(|p| {
            let meta = p.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, p))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p)
}

/// Builds this machine's sidecar from the checkout this binary was built from
/// (with the same profile) and returns its path.
fn build_here(here: Platform) -> anyhow::Result<PathBuf> {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !checkout.join("host/sidecar/Cargo.toml").is_file() {
        bail!(
            "no sidecar build for {here} beside this binary, and no checkout to build it from: \
             build it with `cargo build --release -p {SIDECAR_PACKAGE}` (or scripts/release.sh), or \
             pass --host {here}=BINARY"
        );
    }
    let (profile, folder) = if cfg!(debug_assertions) {
        ("dev", "debug")
    } else {
        ("release", "release")
    };
    let target_dir = checkout.join("target").join("sidecar-auto");
    eprintln!(
        "==> build the sidecar for {here}: cargo build --profile {profile} -p {SIDECAR_PACKAGE}"
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "--profile",
            profile,
            "-p",
            SIDECAR_PACKAGE,
            "--target-dir",
        ])
        .arg(&target_dir)
        .current_dir(&checkout)
        .status()
        .with_context(|| format!("cannot run {}", Path::new(&cargo).display()))?;
    if !status.success() {
        bail!("building the sidecar failed ({status}); its output is above");
    }
    let built = target_dir
        .join(folder)
        .join(format!("{SIDECAR_BIN}{}", std::env::consts::EXE_SUFFIX));
    if !built.is_file() {
        bail!(
            "cargo built the sidecar, yet {} is missing",
            built.display()
        );
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use std::time::{Duration, SystemTime};

    use super::newest;

    #[test]
    fn the_latest_build_is_shipped_whatever_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b, c] = ["beside", "profile", "dist"].map(|n| dir.path().join(n));
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        for (path, age) in [(&a, 3), (&b, 1), (&c, 2)] {
            let f = std::fs::File::create(path).unwrap();
            f.set_modified(hour_ago - Duration::from_secs(age * 60))
                .unwrap();
        }
        assert_eq!(newest([a.clone(), b.clone(), c.clone()]), Some(b.clone()));
        std::fs::remove_file(&b).unwrap();
        assert_eq!(newest([a.clone(), b, c.clone()]), Some(c));
        assert_eq!(
            newest([dir.path().join("none"), dir.path().to_path_buf()]),
            None
        );
    }
}
