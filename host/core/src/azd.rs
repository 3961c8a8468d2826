//! What azd defines that the tool must agree with, each once: the platforms azd installs
//! extensions on ([`PLATFORMS`]: azd's `ValidPlatforms`, with the target each is built and
//! precompiled for and its executables' suffix) and the capabilities an extension may declare
//! ([`CAPABILITIES`]: azd's `ValidCapabilities`). The author's packager, the runtime's
//! precompiler and the test fixtures read them here; the scripts and the release workflow, which
//! cannot, are tested against them (`host/cli/tests/all/platforms.rs`).

/// A platform azd installs extensions on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// Go's `GOOS`, as azd names it: `linux`, `windows`, `darwin`.
    pub os: &'static str,
    /// Go's `GOARCH`: `amd64`, `arm64`.
    pub arch: &'static str,
    /// The target triple the runtime precompiles a component for. Only its architecture and OS
    /// matter to the code wasmtime makes (and checks at load): a Windows sidecar linked with
    /// MinGW (`scripts/release.sh`) or MSVC (the release workflow) runs the same code.
    pub triple: &'static str,
}

/// The platforms, in azd's order (`ValidPlatforms`).
pub const PLATFORMS: [Platform; 6] = [
    Platform::new("windows", "amd64", "x86_64-pc-windows-gnu"),
    Platform::new("windows", "arm64", "aarch64-pc-windows-msvc"),
    Platform::new("darwin", "amd64", "x86_64-apple-darwin"),
    Platform::new("darwin", "arm64", "aarch64-apple-darwin"),
    Platform::new("linux", "amd64", "x86_64-unknown-linux-gnu"),
    Platform::new("linux", "arm64", "aarch64-unknown-linux-gnu"),
];

impl Platform {
    const fn new(os: &'static str, arch: &'static str, triple: &'static str) -> Self {
        Self { os, arch, triple }
    }

    /// azd's name: `linux/amd64` (the keys of a registry's `artifacts`).
    pub fn key(self) -> String {
        format!("{}/{}", self.os, self.arch)
    }

    /// The name in file names: `linux-amd64`.
    pub fn slug(self) -> String {
        format!("{}-{}", self.os, self.arch)
    }

    /// What its executables' names end with: `.exe` on Windows, else nothing.
    pub fn exe_suffix(self) -> &'static str {
        if self.os == "windows" { ".exe" } else { "" }
    }

    /// The platform `text` names, as azd does (`linux/amd64`) or in file names (`linux-amd64`).
    pub fn named(text: &str) -> Option<Self> {
        PLATFORMS
            .into_iter()
            .find(|p| text == p.key() || text == p.slug())
    }

    /// Every platform's azd name, for a message listing them.
    pub fn known() -> String {
        let keys: Vec<String> = PLATFORMS.iter().map(|p| p.key()).collect();
        keys.join(", ")
    }
}

impl std::fmt::Display for Platform {
    /// azd's name: `linux/amd64`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.arch)
    }
}

/// The platform this binary runs on, as azd names it (`linux/amd64`; another machine's as Rust
/// names its OS and architecture).
pub fn this_platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        os => os,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        arch => arch,
    };
    format!("{os}/{arch}")
}

/// The capabilities an extension may declare (`ValidCapabilities`, azd 1.31's pkg/extensions).
pub const CAPABILITIES: [&str; 8] = [
    "custom-commands",
    "lifecycle-events",
    "mcp-server",
    "service-target-provider",
    "framework-service-provider",
    "metadata",
    PROVISIONING_PROVIDER,
    "validation-provider",
];

/// The capability, and the provider type, of a provisioning provider.
pub const PROVISIONING_PROVIDER: &str = "provisioning-provider";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_platform_is_named_either_way_and_only_as_azd_names_it() {
        let p = Platform::named("windows-amd64").unwrap();
        assert_eq!(Some(p), Platform::named("windows/amd64"));
        assert_eq!(
            (p.key(), p.slug(), p.exe_suffix()),
            ("windows/amd64".into(), "windows-amd64".into(), ".exe")
        );
        assert_eq!(Platform::named("linux/arm64").unwrap().exe_suffix(), "");
        for wrong in [
            "linux/x86_64",
            "Linux/amd64",
            "linux_amd64",
            "",
            "windows/amd64 ",
        ] {
            assert_eq!(Platform::named(wrong), None, "{wrong:?}");
        }
    }

    #[test]
    fn each_triple_is_its_platforms_architecture_and_os() {
        for p in PLATFORMS {
            let arch = if p.arch == "amd64" {
                "x86_64-"
            } else {
                "aarch64-"
            };
            let os = match p.os {
                "darwin" => "-apple-darwin",
                "windows" => "-pc-windows-",
                _ => "-unknown-linux-",
            };
            assert!(p.triple.starts_with(arch) && p.triple.contains(os), "{p:?}");
        }
        assert!(
            PLATFORMS.iter().any(|p| p.key() == this_platform())
                || cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64")))
        );
    }
}
