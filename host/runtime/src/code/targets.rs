//! The platforms `package` precompiles a component for: azd's, with the target wasmtime compiles
//! for on each (`azd_wasm_host_core::azd::PLATFORMS`, the one table of them).
//!
//! The code is compiled for the target's baseline CPU (wasmtime's defaults
//! when a target is named: x86-64 with SSE2, ARMv8.0), which every machine
//! of the platform has, never for the features of the machine that packages;
//! wasmtime still checks at load that the machine has every feature the code
//! uses.

#[cfg(feature = "compiler")]
use azd_wasm_host_core::azd::Platform;
pub use azd_wasm_host_core::azd::this_platform;

/// The platform `platform` names (`linux/amd64` or `linux-amd64`), to precompile for.
#[cfg(feature = "compiler")]
pub(crate) fn target_of(platform: &str) -> Result<Platform, crate::error::LoadError> {
    Platform::named(platform).ok_or_else(|| crate::error::LoadError::UnknownPlatform {
        platform: platform.to_owned(),
        known: Platform::known(),
    })
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
        let target = target_of(&here).unwrap();
        assert!(
            target.triple.starts_with(std::env::consts::ARCH),
            "{target:?}"
        );
    }
}
