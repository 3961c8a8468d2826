//! The Go recipe: mainline Go, no other tool.
//!
//! A Go provider is a `main` package that imports the SDK (`azdext/`, module
//! `azd-wasm-host/azdext`, which `new go` copies into the project and its
//! `go.mod` replaces). The SDK carries the component bindings, generated
//! ahead of time by wit-bindgen 0.63.0's Go generator from [`WORLD_WIT`]
//! (the test below keeps them current), so `build` only runs:
//!
//! 1. `go build -buildmode=c-shared` for `GOOS=wasip1 GOARCH=wasm` (Go 1.25 or
//!    newer): a core module that imports WASI preview1 and the world's
//!    interfaces, and exports the provider through `//go:wasmexport`;
//! 2. the world's type information embedded into it, here, as
//!    `wasm-tools component embed` would;
//! 3. the module made a component with the WASI preview1 adapter, as for C.
//!
//! `-checklinkname=0`: the SDK's `cabi_realloc` takes raw memory from the
//! runtime's `sbrk` while the Go runtime is still starting (the adapter
//! allocates before any Go initializer has run), through a `go:linkname`.

use std::path::Path;

use anyhow::{Context as _, bail};
use wit_component::StringEncoding;
use wit_parser::Resolve;

use super::guest::Guest;
use crate::build::step::{Step, write_component};
use crate::templates::{File, repo_file, template};

/// The world Go providers are built for: the provider world, azd's
/// credentials and outbound HTTP (`wasi:http/outgoing-handler`, which the host
/// serves under `[policy.http]`). The SDK's bindings are generated from it,
/// and `build` embeds it into the module, so the two always agree.
pub(crate) const WORLD_WIT: &str = "\
// The world of Go providers (azd-wasm-host build): the provider world, azd's credentials and HTTP.
package local:go-provider;

world provider {
    include azd:provisioning/provisioning-provider@0.2.0;
    import azd:credentials/credentials@0.1.0;
    import wasi:http/outgoing-handler@0.2.12;
}
";

/// Go, and what to say when it is missing.
const GO: crate::tools::Need = crate::tools::Need {
    tool: "go",
    version: Some("Go 1.25 or newer"),
    get: "install it from https://go.dev/dl",
    var: azd_wasm_host_core::settings::GO,
};

/// The WASI packages [`WORLD_WIT`] imports from: `wasi:http` 0.2.12 (the
/// version the host's wasmtime-wasi-http serves) with the `wasi:io` and
/// `wasi:clocks` it uses, their interfaces only (no worlds, no docs).
/// Generated from that crate's WIT by the test `the_wasi_wit_is_the_hosts`.
const WASI_WIT: &str = include_str!("../../wit/wasi-http.wit");

/// The package [`WASI_WIT`] names first; a project whose WIT has it already
/// is not given a second copy.
const WASI_HTTP: &str = "wasi:http@0.2.12";

/// The oldest Go whose `go:wasmexport` and `-buildmode=c-shared` for wasip1
/// the SDK is built and tested with (its `go.mod` says the same).
const MIN_GO_MINOR: u32 = 25;

/// Go: build the main package at `source` (default: the manifest's folder).
pub(super) fn go(dir: &Path, source: Option<&str>, staged: &Path) -> anyhow::Result<()> {
    let package = source.map_or_else(|| dir.to_path_buf(), |s| dir.join(s));
    if !package.is_dir() {
        bail!(
            "no Go package folder at {} ([build] source)",
            package.display()
        );
    }
    let (go, pre) = GO.find(&crate::tools::Vars::process(), &["go"])?;
    check_version(&go, &pre, dir)?;
    let scratch = crate::build::step::scratch(staged, dir, "go", "Go")?;
    let core = scratch.path().join("core.wasm");
    Step::new("go build (GOOS=wasip1 GOARCH=wasm, c-shared)", go, &package)
        .args(pre)
        .args([
            "build",
            "-buildmode=c-shared",
            "-trimpath",
            "-ldflags=-checklinkname=0",
            "-o",
        ])
        .arg(&core)
        .arg(".")
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("CGO_ENABLED", "0")
        .run()?;
    let mut bytes =
        std::fs::read(&core).with_context(|| format!("cannot read {}", core.display()))?;
    eprintln!(
        "==> embed the world's types (azd:provisioning 0.2.0, azd:credentials 0.1.0, wasi:http 0.2.12)"
    );
    embed_world(&mut bytes, dir)?;
    write_component(&bytes, staged)
}

/// Refuses a Go older than [`MIN_GO_MINOR`], before it fails on the SDK's
/// `go.mod` (or starts fetching a newer toolchain) with a less clear message.
fn check_version(
    go: &std::ffi::OsStr,
    pre: &[std::ffi::OsString],
    dir: &Path,
) -> anyhow::Result<()> {
    let out = std::process::Command::new(go)
        .args(pre)
        .args(["env", "GOVERSION"])
        .current_dir(dir)
        .output()
        .with_context(|| format!("cannot run {}", go.to_string_lossy()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    match go_minor(&version) {
        Some(minor) if minor >= MIN_GO_MINOR => Ok(()),
        Some(_) => bail!(
            "{version} ({}) is too old for Go providers: they need Go 1.{MIN_GO_MINOR} or newer \
             (go:wasmexport and c-shared WebAssembly modules): {}, or set {} to a newer one",
            go.to_string_lossy(),
            GO.get,
            GO.var
        ),
        None if out.status.success() => Ok(()), // a development build ("devel …"): let go decide
        None => bail!(
            "`{} env GOVERSION` failed: {}",
            go.to_string_lossy(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    }
}

/// The minor version of a `go1.X[.Y]` version string.
fn go_minor(version: &str) -> Option<u32> {
    let rest = version.strip_prefix("go1.")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Embeds [`WORLD_WIT`] into the core module, as a `component-type` custom
/// section, over the project's WIT (`wit/`, which `new` wrote beside the SDK
/// it generated from it), or this host's own when the project has none (the
/// repository's examples), and [`WASI_WIT`] unless the project has wasi:http.
fn embed_world(core: &mut Vec<u8>, dir: &Path) -> anyhow::Result<()> {
    let mut resolve = Resolve::default();
    if let Some(wit) = crate::build::wit::project_wit(dir) {
        resolve
            .push_dir(&wit)
            .with_context(|| format!("cannot read the WIT package at {}", wit.display()))?;
    } else {
        // Dependencies first: each file is one package.
        for file in crate::templates::WIT.iter().rev() {
            resolve
                .push_str(file.path, file.text)
                .with_context(|| format!("this host's {} does not parse", file.path))?;
        }
    }
    if !resolve
        .package_names
        .keys()
        .any(|name| name.to_string() == WASI_HTTP)
    {
        resolve
            .push_str("wasi-http.wit", WASI_WIT)
            .context("this host's WASI WIT does not parse")?;
    }
    let package = resolve
        .push_str("go-provider.wit", WORLD_WIT)
        .context("the Go providers' world does not fit the project's WIT")?;
    let world = resolve.select_world(&[package], Some("provider"))?;
    wit_component::embed_component_metadata(core, &resolve, world, StringEncoding::UTF8)
        .context("cannot embed the world into the Go module")
}

/// Go: what `new` writes and how `build` makes the component.
pub(super) const GUEST: Guest = Guest {
    name: "go",
    title: "Go",
    summary: "Go (1.25+), on the azdext SDK (azd's ProvisioningProvider interface)",
    files: FILES,
    example: "go-hello",
    memory_mb: "64",
    build_extra: "",
    gitignore_extra: "",
    notes: NOTES,
    build: |r| go(r.dir, r.source, r.staged),
};

/// Go: the module, the provider and its native tests, and the SDK (`azdext/`,
/// with the bindings generated for the world; `go.mod` replaces the module with it).
const FILES: &[File] = &[
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

/// What a new project's README says of building it.
const NOTES: &str = "`build` needs Go 1.25 or newer (`go` on PATH, or `AZD_WASM_HOST_GO`) and nothing \
             else: it runs `go build -buildmode=c-shared` for `GOOS=wasip1 GOARCH=wasm`, and the host \
             makes the module a component (about 4 MB). The SDK is in `azdext/`: azd's own \
             `ProvisioningProvider` interface and types, plus azd's environment, prompts, access \
             tokens and a `slog` logger. `go test ./...` runs the provider's tests natively \
             (`azdext.TestHost` stands in for azd). Files are the `os` package's, in the folders \
             `[policy] fs` grants. For HTTP, `import _ \"azd-wasm-host/azdext/azdhttp\"`: Go's \
             own `net/http` then goes through the host, to the origins `[policy.http] allow` \
             grants (about 5 MB more), and `azdhttp.ResponseError` turns a service's refusal into \
             azd's error.";

#[cfg(test)]
mod tests {
    use super::*;

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
                if !rel.ends_with("_test.go") && !FILES.iter().any(|f| f.path == shipped) {
                    missing.push(rel);
                }
            }
        }
        assert!(
            missing.is_empty(),
            "FILES does not ship guest-sdk/go/{missing:?}"
        );
    }

    #[test]
    fn without_go_the_error_names_the_version_and_where_to_get_it() {
        let empty = tempfile::tempdir().unwrap();
        let vars = crate::tools::Vars::fixed([("PATH", empty.path().as_os_str())]);
        let err = GO.find(&vars, &["go"]).unwrap_err().to_string();
        assert!(
            err.contains("`go` (Go 1.25 or newer) is not on PATH")
                && err.contains("https://go.dev/dl")
                && err.contains("AZD_WASM_HOST_GO"),
            "{err}"
        );
    }

    /// A `go` that reports 1.24 is refused before it builds, with the remedy
    /// (`sh -c` stands in for it: no script is written and run).
    #[cfg(unix)]
    #[test]
    fn an_old_go_is_refused_with_the_remedy() {
        let dir = tempfile::tempdir().unwrap();
        let go_says = |version: &str| -> Vec<std::ffi::OsString> {
            ["-c", &format!("echo {version}"), "go"]
                .map(std::ffi::OsString::from)
                .to_vec()
        };
        let sh = std::ffi::OsStr::new("/bin/sh");
        let err = check_version(sh, &go_says("go1.24.3"), dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("go1.24.3")
                && err.contains("Go 1.25 or newer")
                && err.contains("https://go.dev/dl")
                && err.contains("AZD_WASM_HOST_GO"),
            "{err}"
        );
        check_version(sh, &go_says("go1.25.0"), dir.path()).unwrap();
    }

    #[test]
    fn go_versions_are_read_from_go_env() {
        assert_eq!(go_minor("go1.26.8"), Some(26));
        assert_eq!(go_minor("go1.25"), Some(25));
        assert_eq!(go_minor("go1.25rc1"), Some(25));
        assert_eq!(go_minor("devel go1.27-abc"), None);
        assert_eq!(go_minor(""), None);
    }

    /// Where the SDK keeps the generated bindings, and the import path the
    /// generated files use for the runtime types (the generator's own path,
    /// `go.bytecodealliance.org/pkg`, is not on the Go module proxy; the SDK
    /// implements the same API in `internal/wit/{types,runtime}`).
    const SDK_WIT: &str = "guest-sdk/go/internal/wit";
    const SDK_IMPORT: &str = "azd-wasm-host/azdext/internal/wit";
    const GENERATOR_RUNTIME: &str = "go.bytecodealliance.org/pkg/wit/";

    /// The SDK's bindings are exactly what wit-bindgen's Go generator writes
    /// for [`WORLD_WIT`] today: a change to the WIT that nobody regenerated
    /// fails here. `AZD_WASM_HOST_REGENERATE=1` rewrites them.
    #[test]
    fn the_go_sdk_bindings_match_the_world() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut resolve = wit_bindgen_core_go::wit_parser::Resolve::default();
        resolve.push_dir(root.join("wit")).unwrap();
        // From the file, not WASI_WIT: the one `the_wasi_wit_is_the_hosts` may just have rewritten.
        let wasi = std::fs::read_to_string(root.join(WASI_WIT_FILE)).unwrap();
        resolve.push_str("wasi-http.wit", &wasi).unwrap();
        let package = resolve.push_str("go-provider.wit", WORLD_WIT).unwrap();
        let world = resolve.select_world(&[package], Some("provider")).unwrap();
        let mut files = wit_bindgen_core_go::Files::default();
        let opts = wit_bindgen_go::Opts {
            format: wit_bindgen_go::Format::False,
            pkg_name: Some(SDK_IMPORT.to_owned()),
            quiet: true,
            ..Default::default()
        };
        opts.build()
            .generate(&mut resolve, world, &mut files)
            .unwrap();
        let regenerate = regenerate();
        let mut stale = Vec::new();
        let mut count = 0;
        for (name, bytes) in files.iter() {
            let text = String::from_utf8(bytes.to_vec())
                .unwrap()
                .replace(GENERATOR_RUNTIME, &format!("{SDK_IMPORT}/"));
            let path = root.join(SDK_WIT).join(name);
            count += 1;
            if regenerate {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(name.to_owned());
            }
        }
        assert!(count >= 8, "the generator wrote only {count} files");
        assert!(
            stale.is_empty(),
            "{SDK_WIT} is stale for {stale:?}: run AZD_WASM_HOST_REGENERATE=1 cargo test -p azd-wasm-host-author the_go_sdk_bindings"
        );
    }

    fn regenerate() -> bool {
        std::env::var_os("AZD_WASM_HOST_REGENERATE").is_some_and(|v| v == "1")
    }

    /// [`WASI_WIT`]'s file, from the repository's root.
    const WASI_WIT_FILE: &str = "host/author/wit/wasi-http.wit";

    /// The WIT folder of the wasmtime-wasi-http crate this workspace builds the
    /// host with (the WASI the host serves), as `cargo metadata` finds it.
    fn wasmtime_wasi_http_wit(root: &Path) -> std::path::PathBuf {
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "metadata",
                "--format-version",
                "1",
                "--offline",
                "--manifest-path",
            ])
            .arg(root.join("Cargo.toml"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let manifest = metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "wasmtime-wasi-http")
            .and_then(|p| p["manifest_path"].as_str())
            .expect("the workspace depends on wasmtime-wasi-http")
            .to_owned();
        Path::new(&manifest).parent().unwrap().join("wit")
    }

    /// [`WASI_WIT`] is what the host's wasmtime-wasi-http serves, printed
    /// again: wasi:http, wasi:io and wasi:clocks, without their worlds (which
    /// would pull in every other WASI package) and docs. An upgrade of
    /// wasmtime that changes them fails here; `AZD_WASM_HOST_REGENERATE=1`
    /// rewrites the file (then regenerate the Go bindings, and update
    /// [`WORLD_WIT`]'s version if it moved).
    #[test]
    fn the_wasi_wit_is_the_hosts() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut resolve = Resolve::default();
        resolve.push_dir(wasmtime_wasi_http_wit(&root)).unwrap();
        let find = |name: &str| {
            resolve
                .package_names
                .iter()
                .find(|(n, _)| n.to_string() == name)
                .map(|(_, id)| *id)
                .unwrap_or_else(|| panic!("wasmtime-wasi-http's WIT has no {name}"))
        };
        let [http, io, clocks] = [WASI_HTTP, "wasi:io@0.2.12", "wasi:clocks@0.2.12"].map(find);
        for id in [http, io, clocks] {
            resolve.packages[id].worlds.clear();
        }
        let mut printer = wit_component::WitPrinter::default();
        printer.emit_docs(false);
        printer.print(&resolve, http, &[io, clocks]).unwrap();
        let text = format!(
            "// Generated from wasmtime-wasi-http's WIT by the test the_wasi_wit_is_the_hosts\n\
             // (host/author/src/build/go.rs): the WASI the host serves, for the Go world. Do not edit.\n{}",
            printer.output
        );
        // It parses alone, as `build` pushes it.
        Resolve::default().push_str("wasi-http.wit", &text).unwrap();
        let path = root.join(WASI_WIT_FILE);
        if regenerate() {
            std::fs::write(&path, &text).unwrap();
        } else {
            assert!(
                std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()),
                "{WASI_WIT_FILE} is stale: run AZD_WASM_HOST_REGENERATE=1 cargo test -p azd-wasm-host-author the_wasi_wit_is_the_hosts"
            );
        }
    }
}
