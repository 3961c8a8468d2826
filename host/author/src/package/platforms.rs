//! The platforms an extension source ships, and the host binary of each.
//!
//! `package` makes one archive per platform. By default that is this
//! machine's platform with this very binary; `--host PLATFORM=BINARY` and
//! `--hosts DIR` (the layout `scripts/release.sh` writes) add builds for
//! other platforms. A binary's own headers must say it runs on the platform
//! it is packaged for, so a Linux binary never ships as a Windows artifact.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// A platform as azd names it: `<GOOS>/<GOARCH>`.
pub(super) use azd_wasm_host_core::azd::{PLATFORMS as AZD_PLATFORMS, Platform};

/// What `package` needs of a platform beyond azd's table: the host binary's name there, this
/// machine's platform, and a platform named on the command line.
pub(super) trait Shipped: Sized {
    /// The host binary's file name: `azd-wasm-host`, `azd-wasm-host.exe` on Windows.
    fn exe_name(self) -> &'static str;
    /// This machine's platform, when azd installs extensions on it.
    fn this_machine() -> anyhow::Result<Self>;
    /// The platform `text` names (`linux/amd64` or `linux-amd64`), or an error listing them.
    fn parse(text: &str) -> anyhow::Result<Self>;
}

impl Shipped for Platform {
    fn exe_name(self) -> &'static str {
        if self.exe_suffix() == ".exe" {
            "azd-wasm-host.exe"
        } else {
            "azd-wasm-host"
        }
    }

    fn this_machine() -> anyhow::Result<Self> {
        let here = azd_wasm_host_core::azd::this_platform();
        Platform::named(&here).with_context(|| format!("azd has no extension artifacts for {here}"))
    }

    fn parse(text: &str) -> anyhow::Result<Self> {
        Platform::named(text).with_context(|| {
            format!(
                "`{text}` is not a platform azd installs extensions on ({})",
                Platform::known()
            )
        })
    }
}

/// The platform an executable's headers name (ELF, PE or a thin Mach-O),
/// when it is one of azd's.
pub(super) fn binary_platform(head: &[u8]) -> Option<Platform> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(head.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(head.get(at..at + 4)?.try_into().ok()?));
    let (os, arch) = if head.starts_with(b"\x7fELF") {
        // e_machine, little-endian on both of azd's Linux architectures.
        let arch = match u16_at(18)? {
            0x3e => "amd64",
            0xb7 => "arm64",
            _ => return None,
        };
        ("linux", arch)
    } else if head.starts_with(b"MZ") {
        let pe = usize::try_from(u32_at(0x3c)?).ok()?;
        if head.get(pe..pe + 4)? != b"PE\0\0" {
            return None;
        }
        let arch = match u16_at(pe + 4)? {
            0x8664 => "amd64",
            0xaa64 => "arm64",
            _ => return None,
        };
        ("windows", arch)
    } else if u32_at(0)? == 0xfeed_facf {
        let arch = match u32_at(4)? {
            0x0100_0007 => "amd64",
            0x0100_000c => "arm64",
            _ => return None,
        };
        ("darwin", arch)
    } else {
        return None;
    };
    AZD_PLATFORMS
        .into_iter()
        .find(|p| p.os == os && p.arch == arch)
}

/// One archive to make: a platform and the host binary it ships.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostBinary {
    pub(super) platform: Platform,
    pub(super) path: PathBuf,
    /// Built for this machine, so it can be stripped, started to prove it
    /// works, and shipped with code precompiled here.
    pub(super) native: bool,
}

/// The host binaries to package: those of `--host PLATFORM=BINARY` and of
/// `--hosts DIR` (`DIR/<os>-<arch>/azd-wasm-host[.exe]`), or else those
/// `defaults` gives (the sidecar builds, or this very binary).
pub(super) fn host_binaries(
    hosts: &[String],
    hosts_dir: Option<&Path>,
    defaults: impl FnOnce() -> anyhow::Result<Vec<(Platform, PathBuf)>>,
) -> anyhow::Result<Vec<HostBinary>> {
    let here = Platform::this_machine()?;
    let mut found: Vec<(Platform, PathBuf)> = Vec::new();
    for spec in hosts {
        let (platform, path) = spec.split_once('=').with_context(|| {
            format!("--host `{spec}` is not PLATFORM=BINARY (e.g. windows/amd64=azd-wasm-host.exe)")
        })?;
        found.push((Platform::parse(platform)?, PathBuf::from(path)));
    }
    if let Some(dir) = hosts_dir {
        let before = found.len();
        for platform in AZD_PLATFORMS {
            let path = dir.join(platform.slug()).join(platform.exe_name());
            if path.is_file() {
                found.push((platform, path));
            }
        }
        if found.len() == before {
            bail!(
                "{} holds no host builds: it should hold <os>-<arch>/azd-wasm-host[.exe], as \
                 scripts/release.sh writes them (e.g. {}/linux-arm64/azd-wasm-host)",
                dir.display(),
                dir.display()
            );
        }
    }
    if found.is_empty() {
        found = defaults()?;
    }
    let mut binaries: Vec<HostBinary> = Vec::with_capacity(found.len());
    for (platform, path) in found {
        if binaries.iter().any(|b| b.platform == platform) {
            bail!("two host binaries for {platform}: give one per platform");
        }
        check_binary(&path, platform)?;
        binaries.push(HostBinary {
            platform,
            path,
            native: platform == here,
        });
    }
    Ok(binaries)
}

/// `path` must be an executable for `platform`.
fn check_binary(path: &Path, platform: Platform) -> anyhow::Result<()> {
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .with_context(|| format!("cannot read the host binary {}", path.display()))?;
    match binary_platform(&head) {
        Some(p) if p == platform => Ok(()),
        Some(p) => bail!(
            "{} is a {p} executable, not one for {platform}",
            path.display()
        ),
        None => bail!(
            "{} is not an executable for any platform azd installs extensions on",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platforms_parse_in_both_forms_and_unknown_ones_are_refused() {
        let p = Platform::parse("windows/amd64").unwrap();
        assert_eq!(p, Platform::parse("windows-amd64").unwrap());
        assert_eq!(
            (p.key(), p.slug()),
            ("windows/amd64".into(), "windows-amd64".into())
        );
        assert_eq!(p.exe_name(), "azd-wasm-host.exe");
        assert_eq!(
            Platform::parse("darwin/arm64").unwrap().exe_name(),
            "azd-wasm-host"
        );
        let e = Platform::parse("plan9/amd64").unwrap_err().to_string();
        assert!(e.contains("linux/arm64"), "{e}");
        assert!(AZD_PLATFORMS.contains(&Platform::this_machine().unwrap()));
    }

    /// The smallest headers each format needs, built by hand.
    fn elf(machine: u16) -> Vec<u8> {
        let mut b = b"\x7fELF\x02\x01\x01".to_vec();
        b.resize(18, 0);
        b.extend_from_slice(&machine.to_le_bytes());
        b
    }
    fn pe(machine: u16) -> Vec<u8> {
        let mut b = b"MZ".to_vec();
        b.resize(0x3c, 0);
        b.extend_from_slice(&0x80u32.to_le_bytes());
        b.resize(0x80, 0);
        b.extend_from_slice(b"PE\0\0");
        b.extend_from_slice(&machine.to_le_bytes());
        b
    }
    fn macho(cpu: u32) -> Vec<u8> {
        let mut b = 0xfeed_facfu32.to_le_bytes().to_vec();
        b.extend_from_slice(&cpu.to_le_bytes());
        b
    }

    #[test]
    fn a_binary_says_its_platform_by_its_headers() {
        let named = |head: Vec<u8>| binary_platform(&head).map(|p| p.key());
        assert_eq!(named(elf(0x3e)).as_deref(), Some("linux/amd64"));
        assert_eq!(named(elf(0xb7)).as_deref(), Some("linux/arm64"));
        assert_eq!(named(pe(0x8664)).as_deref(), Some("windows/amd64"));
        assert_eq!(named(pe(0xaa64)).as_deref(), Some("windows/arm64"));
        assert_eq!(named(macho(0x0100_000c)).as_deref(), Some("darwin/arm64"));
        assert_eq!(named(macho(0x0100_0007)).as_deref(), Some("darwin/amd64"));
        // Other machines, truncated headers, a PE offset past the end, a script.
        for bad in [
            elf(0x28),
            pe(0x14c),
            elf(0x3e)[..19].to_vec(),
            pe(0x8664)[..0x82].to_vec(),
        ] {
            assert_eq!(binary_platform(&bad), None);
        }
        let mut far = pe(0x8664);
        far[0x3c..0x40].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(binary_platform(&far), None);
        assert_eq!(binary_platform(b"#!/bin/sh\n"), None);
        // This test's own executable is one of this machine's.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(binary_platform(&me), Platform::this_machine().ok());
    }

    fn no_defaults() -> anyhow::Result<Vec<(Platform, PathBuf)>> {
        anyhow::bail!("defaults asked for")
    }

    #[test]
    fn host_binaries_come_from_flags_or_a_release_folder_and_must_fit() {
        let dir = tempfile::tempdir().unwrap();
        let put = |rel: &str, bytes: Vec<u8>| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
            path
        };
        put("windows-amd64/azd-wasm-host.exe", pe(0x8664));
        put("linux-arm64/azd-wasm-host", elf(0xb7));
        let found = host_binaries(&[], Some(dir.path()), no_defaults).unwrap();
        let keys: Vec<String> = found.iter().map(|b| b.platform.key()).collect();
        assert_eq!(keys, ["windows/amd64", "linux/arm64"]);

        let linux = put("linux.bin", elf(0x3e));
        let e = host_binaries(
            &[format!("windows/amd64={}", linux.display())],
            None,
            no_defaults,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("is a linux/amd64 executable, not one for windows/amd64"),
            "{e}"
        );
        let e = host_binaries(
            &[format!("linux/arm64={}", linux.display())],
            None,
            no_defaults,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not one for linux/arm64"), "{e}");
        let twice = format!(
            "windows-amd64={}",
            dir.path().join("windows-amd64/azd-wasm-host.exe").display()
        );
        let e = host_binaries(&[twice], Some(dir.path()), no_defaults)
            .unwrap_err()
            .to_string();
        assert!(e.contains("two host binaries for windows/amd64"), "{e}");
        assert!(host_binaries(&["linux/amd64".into()], None, no_defaults).is_err());
        let empty = tempfile::tempdir().unwrap();
        let e = host_binaries(&[], Some(empty.path()), no_defaults)
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds no host builds"), "{e}");

        let me = std::env::current_exe().unwrap();
        let here = Platform::this_machine().unwrap();
        let found = host_binaries(&[], None, || Ok(vec![(here, me.clone())])).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].native && found[0].path == me);
        let e = host_binaries(&[], None, || Ok(vec![(here, linux.clone())]));
        assert_eq!(e.is_ok(), here.key() == "linux/amd64");
    }
}
