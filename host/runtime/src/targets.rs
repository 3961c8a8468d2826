//! The platforms `package` precompiles a component for, as azd names them
//! (`linux/amd64`), with the target wasmtime compiles for on each.
//!
//! The code is compiled for the target's baseline CPU (wasmtime's defaults
//! when a target is named: x86-64 with SSE2, ARMv8.0), which every machine
//! of the platform has, never for the features of the machine that packages;
//! wasmtime still checks at load that the machine has every feature the code
//! uses.

/// One platform precompiled code is made for.
#[cfg(feature = "compiler")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CodeTarget {
    /// azd's name: `<GOOS>/<GOARCH>`.
    pub(crate) platform: &'static str,
    /// The target triple (architecture and OS are what wasmtime checks).
    pub(crate) triple: &'static str,
}

/// The platforms the host ships on: the six azd installs extensions on. On
/// Windows the C library the sidecar was linked with (MinGW here, MSVC in the
/// release workflow) does not change the code wasmtime makes; architecture
/// and OS do.
#[cfg(feature = "compiler")]
pub(crate) const TARGETS: [CodeTarget; 6] = [
    CodeTarget::new("linux/amd64", "x86_64-unknown-linux-gnu"),
    CodeTarget::new("linux/arm64", "aarch64-unknown-linux-gnu"),
    CodeTarget::new("windows/amd64", "x86_64-pc-windows-gnu"),
    CodeTarget::new("windows/arm64", "aarch64-pc-windows-msvc"),
    CodeTarget::new("darwin/amd64", "x86_64-apple-darwin"),
    CodeTarget::new("darwin/arm64", "aarch64-apple-darwin"),
];

#[cfg(feature = "compiler")]
impl CodeTarget {
    const fn new(platform: &'static str, triple: &'static str) -> Self {
        Self { platform, triple }
    }
}

/// The target of `platform` (`linux/amd64` or `linux-amd64`).
#[cfg(feature = "compiler")]
pub(crate) fn target_of(platform: &str) -> anyhow::Result<CodeTarget> {
    let wanted = platform.replace('-', "/");
    TARGETS
        .into_iter()
        .find(|t| t.platform == wanted)
        .ok_or_else(|| {
            let known: Vec<&str> = TARGETS.iter().map(|t| t.platform).collect();
            anyhow::anyhow!(
                "no precompiled code can be made for `{platform}` (known: {})",
                known.join(", ")
            )
        })
}

/// The platform this binary runs on, as azd names it (`linux/amd64`).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "compiler")]
    #[test]
    fn platforms_are_found_by_either_spelling_and_unknown_ones_are_named() {
        assert_eq!(
            target_of("linux-arm64").unwrap().triple,
            "aarch64-unknown-linux-gnu"
        );
        assert_eq!(
            target_of("darwin/amd64").unwrap().triple,
            "x86_64-apple-darwin"
        );
        assert_eq!(
            target_of("windows-arm64").unwrap().triple,
            "aarch64-pc-windows-msvc"
        );
        let e = target_of("windows/386").unwrap_err().to_string();
        assert!(
            e.contains("windows/386") && e.contains("windows/arm64"),
            "{e}"
        );
    }

    #[cfg(feature = "compiler")]
    #[test]
    fn this_machine_is_one_of_the_targets() {
        let here = this_platform();
        assert!(TARGETS.iter().any(|t| t.platform == here), "{here}");
        let target = target_of(&here).unwrap();
        assert!(
            target.triple.starts_with(std::env::consts::ARCH),
            "{target:?}"
        );
    }
}
