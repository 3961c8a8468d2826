//! The files `azd-wasm-host new` writes, packaged into the binary.
//!
//! The WIT package and the guest helpers are this repository's own files,
//! included as they are, so a new project always matches the host that made
//! it. The provider sources of Rust, JavaScript and C are the repository's
//! tested examples with their name replaced; the rest are templates under
//! `host/author/templates/` whose `{{key}}` placeholders [`fill`] replaces.

/// One file of a new project: where it goes (`/`-separated, relative to the
/// project folder) and what it holds (placeholders not yet filled).
pub(crate) struct File {
    pub(crate) path: &'static str,
    pub(crate) text: &'static str,
}

/// A file of the repository, as it is (`path` in the project, `repo_path` in the repository).
macro_rules! repo_file {
    ($path:literal, $repo_path:literal) => {
        File {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../", $repo_path)),
        }
    };
}

pub(crate) use repo_file;

/// A template of `templates/` (its placeholders filled by [`fill`]).
macro_rules! template {
    ($path:literal, $template:literal) => {
        File {
            path: $path,
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/templates/",
                $template
            )),
        }
    };
}

pub(crate) use template;

/// The WIT package, for every language: `wit/` (world 0.2.0 and, under
/// `deps/`, the released 0.1.0 it builds on, and `azd:credentials`, for a
/// provider that needs Azure access tokens).
pub(crate) const WIT: &[File] = &[
    repo_file!("wit/provisioning.wit", "wit/provisioning.wit"),
    repo_file!(
        "wit/deps/azd-provisioning-0.1.0/provisioning.wit",
        "wit/deps/azd-provisioning-0.1.0/provisioning.wit"
    ),
    repo_file!(
        "wit/deps/azd-credentials-0.1.0/credentials.wit",
        "wit/deps/azd-credentials-0.1.0/credentials.wit"
    ),
];

/// Every language's project files besides its own.
pub(crate) const COMMON: &[File] = &[
    template!("provider.toml", "common/provider.toml"),
    template!("config.schema.json", "common/config.schema.json"),
    template!("azure.yaml", "common/azure.yaml"),
    template!("extension.yaml", "common/extension.yaml"),
    template!(".gitignore", "common/gitignore"),
    template!("README.md", "common/README.md"),
    template!("tests/provider.test.toml", "common/provider.test.toml"),
];

/// The tools of JavaScript and TypeScript projects at the versions the
/// repository tests (`guest-sdk/js/package.json`), which new projects pin.
const JS_TOOLS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../guest-sdk/js/package.json"
));

/// The version `guest-sdk/js/package.json` pins `package` at.
pub(crate) fn js_tool_version(package: &str) -> String {
    serde_json::from_str::<serde_json::Value>(JS_TOOLS)
        .ok()
        .and_then(|v| v["devDependencies"][package].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("guest-sdk/js/package.json pins no {package}"))
}

/// `text` with every `{{key}}` of `values` replaced.
pub(crate) fn fill(text: &str, values: &[(&str, &str)]) -> String {
    values.iter().fold(text.to_owned(), |text, (key, value)| {
        text.replace(&format!("{{{{{key}}}}}"), value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_every_placeholder_and_nothing_else() {
        let text = fill("a {{name}} b {{name}} {x} {{other}}", &[("name", "todo")]);
        assert_eq!(text, "a todo b todo {x} {{other}}");
    }

    #[test]
    fn new_projects_pin_every_js_tool_exactly() {
        for tool in [
            "@bytecodealliance/componentize-js",
            "@bytecodealliance/jco",
            "@bytecodealliance/preview2-shim",
            "typescript",
        ] {
            let version = js_tool_version(tool);
            assert!(
                version.chars().all(|c| c.is_ascii_digit() || c == '.'),
                "{tool} is pinned loosely: {version}"
            );
        }
    }

    #[test]
    fn templates_name_only_known_placeholders() {
        let known = [
            "name",
            "language",
            "language_title",
            "component",
            "memory_mb",
            "build_extra",
            "extension_id",
            "gitignore_extra",
            "language_notes",
            "host_version",
            "componentize_js_version",
            "jco_version",
            "typescript_version",
            "preview2_shim_version",
        ];
        let languages = crate::lang::Language::all().iter();
        for file in COMMON.iter().chain(languages.flat_map(|l| l.guest().files)) {
            let mut rest = file.text;
            while let Some(start) = rest.find("{{") {
                let tail = &rest[start + 2..];
                let Some(end) = tail.find("}}") else { break };
                let key = &tail[..end];
                // Python f-strings and C use braces of their own; a placeholder is a bare word.
                if key.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !key.is_empty() {
                    assert!(
                        known.contains(&key),
                        "{}: unknown placeholder {{{{{key}}}}}",
                        file.path
                    );
                }
                rest = &tail[end + 2..];
            }
        }
    }
}
