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

macro_rules! repo_file {
    ($path:literal, $repo_path:literal) => {
        File {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../", $repo_path)),
        }
    };
}

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

/// Rust: the crate, and the guest SDK beside it (`azd-provider-sdk/`).
pub(crate) const RUST: &[File] = &[
    template!("Cargo.toml", "rust/Cargo.toml"),
    repo_file!("src/lib.rs", "examples/rust-hello/src/lib.rs"),
    template!("azd-provider-sdk/Cargo.toml", "rust/sdk-Cargo.toml"),
    repo_file!("azd-provider-sdk/src/lib.rs", "guest-sdk/src/lib.rs"),
    repo_file!("azd-provider-sdk/src/azd.rs", "guest-sdk/src/azd.rs"),
    repo_file!(
        "azd-provider-sdk/src/credentials.rs",
        "guest-sdk/src/credentials.rs"
    ),
    repo_file!("azd-provider-sdk/src/http.rs", "guest-sdk/src/http.rs"),
    repo_file!(
        "azd-provider-sdk/src/bindings.rs",
        "guest-sdk/src/bindings.rs"
    ),
    repo_file!("azd-provider-sdk/src/error.rs", "guest-sdk/src/error.rs"),
    repo_file!("azd-provider-sdk/src/log.rs", "guest-sdk/src/log.rs"),
    repo_file!("azd-provider-sdk/src/output.rs", "guest-sdk/src/output.rs"),
    repo_file!(
        "azd-provider-sdk/src/provider.rs",
        "guest-sdk/src/provider.rs"
    ),
    repo_file!("azd-provider-sdk/src/types.rs", "guest-sdk/src/types.rs"),
];

/// JavaScript: the module, its helpers (`lib/`) and the pinned ComponentizeJS and jco.
pub(crate) const JS: &[File] = &[
    template!("package.json", "js/package.json"),
    repo_file!("provider.js", "examples/js-hello/provider.js"),
    repo_file!("lib/azd-provider.js", "guest-sdk/js/azd-provider.js"),
    repo_file!("lib/azd-io.js", "guest-sdk/js/azd-io.js"),
    repo_file!(
        "lib/azd-provisioning.d.ts",
        "guest-sdk/js/azd-provisioning.d.ts"
    ),
];

/// TypeScript: the module, `tsconfig.json`, the JavaScript helpers (their JSDoc
/// types are the provider's types) and the pinned ComponentizeJS, jco and TypeScript.
pub(crate) const TS: &[File] = &[
    template!("package.json", "ts/package.json"),
    template!("tsconfig.json", "ts/tsconfig.json"),
    template!("provider.ts", "ts/provider.ts"),
    repo_file!("lib/azd-provider.js", "guest-sdk/js/azd-provider.js"),
    repo_file!("lib/azd-io.js", "guest-sdk/js/azd-io.js"),
    repo_file!(
        "lib/azd-provisioning.d.ts",
        "guest-sdk/js/azd-provisioning.d.ts"
    ),
];

/// Python: the module and its helper (`lib/`).
pub(crate) const PYTHON: &[File] = &[
    template!("provider.py", "python/provider.py"),
    repo_file!("lib/azd_provider.py", "guest-sdk/python/azd_provider.py"),
];

/// C: the provider and its helper header (`include/`).
pub(crate) const C: &[File] = &[
    repo_file!("provider.c", "examples/c-hello/provider.c"),
    repo_file!("include/azd_provider.h", "guest-sdk/c/azd_provider.h"),
];

/// Go: the module, the provider and its native tests, and the SDK (`azdext/`,
/// with the bindings generated for the world; `go.mod` replaces the module with it).
pub(crate) const GO: &[File] = &[
    template!("go.mod", "go/go.mod"),
    template!("main.go", "go/main.go"),
    template!("main_test.go", "go/main_test.go"),
    repo_file!("azdext/azd.go", "guest-sdk/go/azd.go"),
    repo_file!("azdext/azdhttp/codes.go", "guest-sdk/go/azdhttp/codes.go"),
    repo_file!("azdext/azdhttp/doc.go", "guest-sdk/go/azdhttp/doc.go"),
    repo_file!(
        "azdext/azdhttp/outside.go",
        "guest-sdk/go/azdhttp/outside.go"
    ),
    repo_file!(
        "azdext/azdhttp/response.go",
        "guest-sdk/go/azdhttp/response.go"
    ),
    repo_file!(
        "azdext/azdhttp/transport_wasip1.go",
        "guest-sdk/go/azdhttp/transport_wasip1.go"
    ),
    repo_file!(
        "azdext/component_wasip1.go",
        "guest-sdk/go/component_wasip1.go"
    ),
    repo_file!("azdext/convert.go", "guest-sdk/go/convert.go"),
    repo_file!("azdext/doc.go", "guest-sdk/go/doc.go"),
    repo_file!("azdext/errors.go", "guest-sdk/go/errors.go"),
    repo_file!("azdext/go.mod", "guest-sdk/go/go.mod"),
    repo_file!("azdext/httperror.go", "guest-sdk/go/httperror.go"),
    repo_file!("azdext/README.md", "guest-sdk/go/README.md"),
    repo_file!(
        "azdext/internal/wit/exports/export_azd_provisioning_0_1_0_provider/provider.go",
        "guest-sdk/go/internal/wit/exports/export_azd_provisioning_0_1_0_provider/provider.go"
    ),
    repo_file!(
        "azdext/internal/wit/exports/wit_exports/wit_exports.go",
        "guest-sdk/go/internal/wit/exports/wit_exports/wit_exports.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_credentials_credentials/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_credentials_credentials/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_credentials_credentials/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_credentials_credentials/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_log/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_log/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_log/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_log/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_progress/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_progress/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_progress/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_progress/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_provider/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_provider/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_provider/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_provider/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_types/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_types/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_1_0_types/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_1_0_types/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_2_0_environment/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_2_0_environment/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_2_0_environment/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_2_0_environment/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_2_0_prompt/empty.s",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_2_0_prompt/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/azd_provisioning_0_2_0_prompt/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/azd_provisioning_0_2_0_prompt/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_clocks_monotonic_clock/empty.s",
        "guest-sdk/go/internal/wit/imports/wasi_clocks_monotonic_clock/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_clocks_monotonic_clock/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/wasi_clocks_monotonic_clock/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_http_outgoing_handler/empty.s",
        "guest-sdk/go/internal/wit/imports/wasi_http_outgoing_handler/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_http_outgoing_handler/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/wasi_http_outgoing_handler/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_http_types/empty.s",
        "guest-sdk/go/internal/wit/imports/wasi_http_types/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_http_types/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/wasi_http_types/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_io_error/empty.s",
        "guest-sdk/go/internal/wit/imports/wasi_io_error/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_io_error/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/wasi_io_error/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_io_poll/empty.s",
        "guest-sdk/go/internal/wit/imports/wasi_io_poll/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_io_poll/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/wasi_io_poll/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_io_streams/empty.s",
        "guest-sdk/go/internal/wit/imports/wasi_io_streams/empty.s"
    ),
    repo_file!(
        "azdext/internal/wit/imports/wasi_io_streams/wit_bindings.go",
        "guest-sdk/go/internal/wit/imports/wasi_io_streams/wit_bindings.go"
    ),
    repo_file!(
        "azdext/internal/wit/runtime/handle.go",
        "guest-sdk/go/internal/wit/runtime/handle.go"
    ),
    repo_file!(
        "azdext/internal/wit/runtime/realloc_wasip1.go",
        "guest-sdk/go/internal/wit/runtime/realloc_wasip1.go"
    ),
    repo_file!(
        "azdext/internal/wit/runtime/runtime.go",
        "guest-sdk/go/internal/wit/runtime/runtime.go"
    ),
    repo_file!(
        "azdext/internal/wit/types/types.go",
        "guest-sdk/go/internal/wit/types/types.go"
    ),
    repo_file!("azdext/outside.go", "guest-sdk/go/outside.go"),
    repo_file!("azdext/provider.go", "guest-sdk/go/provider.go"),
    repo_file!("azdext/testhost.go", "guest-sdk/go/testhost.go"),
    repo_file!("azdext/types.go", "guest-sdk/go/types.go"),
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
    fn new_rust_projects_ship_every_source_file_of_the_sdk() {
        let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk/src");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&sdk).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let shipped = format!("azd-provider-sdk/src/{name}");
            if name.ends_with(".rs") && !RUST.iter().any(|f| f.path == shipped) {
                missing.push(name);
            }
        }
        assert!(
            missing.is_empty(),
            "RUST does not ship guest-sdk/src/{missing:?}"
        );
    }

    #[test]
    fn new_go_projects_ship_every_file_of_the_sdk() {
        let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk/go");
        let mut missing = Vec::new();
        let mut stack = vec![sdk.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(&sdk)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let shipped = format!("azdext/{rel}");
                if !rel.ends_with("_test.go") && !GO.iter().any(|f| f.path == shipped) {
                    missing.push(rel);
                }
            }
        }
        assert!(
            missing.is_empty(),
            "GO does not ship guest-sdk/go/{missing:?}"
        );
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
        for file in COMMON
            .iter()
            .chain(RUST)
            .chain(JS)
            .chain(TS)
            .chain(PYTHON)
            .chain(C)
            .chain(GO)
        {
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
