//! The manifest's `[build]` section: how `azd-wasm-host build` makes the
//! component. The runtime accepts the section and never reads it; the
//! author's toolchain reads it here.
//!
//! ```toml
//! [build]
//! language = "rust"      # a built-in recipe: a language of `crate::lang`
//! # engine = "quickjs"  # js only: QuickJS instead of ComponentizeJS (small, no files or fetch)
//! # command = "make"     # or the author's own command, run in the manifest's folder
//! # source = "."         # the provider's source, relative to the manifest
//! ```

use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

use crate::lang::{JsEngine, Language};

/// The `[build]` section: how `azd-wasm-host build` makes the component.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BuildSettings {
    /// A built-in recipe: the language the provider is written in.
    #[serde(default)]
    pub language: Option<Language>,
    /// A shell command of the author's, run in the manifest's folder, that
    /// writes the component (overrides `language`'s recipe).
    #[serde(default)]
    pub command: Option<String>,
    /// The provider's source (a file or folder, relative to the manifest):
    /// for `js` the module that exports `provider` (default `provider.js`),
    /// for `python` the module name's file (default `provider.py`), for `c`
    /// the C files' folder (default `.`), for `rust` the crate (default `.`).
    #[serde(default)]
    pub source: Option<String>,
    /// For `js`: the engine the component carries (default `componentize-js`).
    #[serde(default)]
    pub engine: Option<JsEngine>,
}

/// Checks the `[build]` section of the manifest at `path` (`azd-wasm-host
/// check` reports it beside the runtime's findings): `Ok` when there is none
/// or it is one `build` can follow.
pub fn check_build_section(path: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read provider manifest {}", path.display()))?;
    BuildSettings::parse(&text, path).map(drop)
}

/// The part of a manifest the toolchain reads (the runtime checks the rest).
#[derive(Deserialize)]
struct WithBuild {
    #[serde(default)]
    build: Option<BuildSettings>,
}

impl BuildSettings {
    /// The `[build]` section of the manifest text `text` (read from `path`),
    /// if it has one.
    pub(crate) fn parse(text: &str, path: &Path) -> anyhow::Result<Option<Self>> {
        let with: WithBuild = toml::from_str(text)
            .with_context(|| format!("provider manifest {}: `[build]`", path.display()))?;
        if let Some(b) = &with.build
            && b.engine.is_some()
            && b.language != Some(Language::Js)
        {
            anyhow::bail!(
                "provider manifest {}: `[build] engine` is for `language = \"js\"`",
                path.display()
            );
        }
        Ok(with.build)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_section_is_read_and_checked() {
        let path = Path::new("/p/provider.toml");
        let text = "name = \"x\"\ncomponent = \"c\"\n[build]\nlanguage = \"python\"\n";
        let b = BuildSettings::parse(text, path).unwrap().unwrap();
        assert_eq!(b.language, Some(Language::Python));
        assert_eq!(BuildSettings::parse("name = \"x\"\n", path).unwrap(), None);
        let e = format!(
            "{:#}",
            BuildSettings::parse("[build]\nlanguage = \"cobol\"\n", path).unwrap_err()
        );
        assert!(e.contains("cobol") && e.contains("/p/provider.toml"), "{e}");
        let e = format!(
            "{:#}",
            BuildSettings::parse("[build]\nextra = 1\n", path).unwrap_err()
        );
        assert!(e.contains("extra"), "{e}");
        let js = "[build]\nlanguage = \"js\"\nengine = \"quickjs\"\n";
        let b = BuildSettings::parse(js, path).unwrap().unwrap();
        assert_eq!(b.engine, Some(JsEngine::Quickjs));
        let e = format!(
            "{:#}",
            BuildSettings::parse("[build]\nlanguage = \"c\"\nengine = \"quickjs\"\n", path)
                .unwrap_err()
        );
        assert!(e.contains("engine"), "{e}");
    }
}
