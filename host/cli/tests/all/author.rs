//! The author's toolchain end to end, as a new provider author runs it:
//! `new` in a folder outside the repository (with a space and non-ASCII
//! letters in its path), `build`, `run provision`, `package`, and then the
//! packaged extension itself, unpacked the way azd unpacks it, serving the
//! provider from its precompiled code under the simulated azd.
//!
//! Each language needs its build tools: JavaScript needs npm (componentize-qjs
//! comes from the npm registry), Python `componentize-py`, C a wasm32-wasi C
//! compiler and nothing else (no `wit-bindgen` is on the PATH these builds
//! see: `build` generates the C bindings itself), Rust a toolchain with a
//! wasm32 std or its source. `scripts/test.sh` installs them all (`scripts/build-examples.sh`,
//! `scripts/build-rust-example.sh`) and puts `.tools/` on PATH for this test;
//! a missing tool fails the test, unless `AZD_WASM_HOST_SKIP_EXAMPLES=1`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; timings are printed for the note"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use azd_wasm_host_core::json::object_to_struct;
use azd_wasm_host_fixtures::repo_root;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{SimAzd, SimOptions, SpawnOptions};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

/// PATH and tool variables with the repository's pinned tools (`.tools/`),
/// and without any folder that holds a `wit-bindgen`.
fn with_tools(cmd: &mut Command) -> &mut Command {
    let tools = repo_root().join(".tools");
    let mut path = vec![tools.join("venv/bin")];
    let wit_bindgen = format!("wit-bindgen{}", std::env::consts::EXE_SUFFIX);
    path.extend(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|dir| !dir.join(&wit_bindgen).exists()),
    );
    cmd.env("PATH", std::env::join_paths(path).unwrap());
    let python = tools.join("venv/bin/python");
    if python.is_file() && std::env::var_os("AZD_WASM_HOST_CC").is_none() {
        cmd.env(
            "AZD_WASM_HOST_CC",
            format!("{} -m ziglang cc", python.display()),
        )
        .env("ZIG_GLOBAL_CACHE_DIR", tools.join("zig-cache"))
        .env("ZIG_LOCAL_CACHE_DIR", tools.join("zig-cache"));
    }
    cmd
}

fn host(dir: &Path, args: &[&str], cache: &Path) -> Output {
    let mut cmd = Command::new(BIN);
    with_tools(&mut cmd)
        .args(args)
        .current_dir(dir)
        .env("AZD_WASM_HOST_CACHE_DIR", cache)
        // A trust folder of the test's own: `package` makes its signing key there.
        .env("AZD_CONFIG_DIR", cache.with_file_name("azd-config"))
        .env_remove("AZURE_ENV_NAME");
    cmd.output().unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Whether `build` of this language may be skipped here: it failed for a
/// missing tool and the caller allowed skipping.
fn skip_missing_tool(out: &Output, language: &str) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let missing = stderr.contains("is not on PATH")
        || stderr.contains("no Rust toolchain")
        || stderr.contains("no C compiler");
    if !out.status.success()
        && missing
        && std::env::var("AZD_WASM_HOST_SKIP_EXAMPLES").is_ok_and(|v| v == "1")
    {
        println!(
            "skipped: {language} (a build tool is missing; AZD_WASM_HOST_SKIP_EXAMPLES=1)\n{stderr}"
        );
        return true;
    }
    false
}

/// new → build → run provision → package → the packaged extension serving it.
async fn author_flow(language: &str, name: &str) {
    let root = tempfile::tempdir().unwrap();
    let parent = root.path().join("my providers (ü)");
    std::fs::create_dir_all(&parent).unwrap();
    let dir = parent.join(name);
    let cache = root.path().join("cache");

    let out = host(&parent, &["new", language, name], &cache);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out, "new");
    assert!(
        said.contains(&format!("Created the {language} provider `{name}`")),
        "{said}"
    );
    assert!(dir.join("provider.toml").is_file() && dir.join("wit/provisioning.wit").is_file());
    // A second `new` into the same folder is refused and changes nothing.
    let again = host(&parent, &["new", language, name], &cache);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));

    let started = Instant::now();
    let out = host(&dir, &["build"], &cache);
    if skip_missing_tool(&out, language) {
        return;
    }
    ok(&out, "build");
    if language == "c" {
        // The bindings were generated in this process, not by a wit-bindgen.
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("==> C bindings of world provisioning-provider (wit-bindgen-c"),
            "{said}"
        );
    }
    let component = dir.join("build").join(format!("{name}.wasm"));
    assert!(component.is_file());
    println!(
        "{language}: build took {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // The sample project is the provider's folder: `run` finds provider.toml and azure.yaml there.
    let out = host(&dir, &["run", "provision", "--output", "json"], &cache);
    let report: Value = serde_json::from_str(&ok(&out, "run provision")).unwrap();
    assert_eq!(
        report["outputs"]["GREETING"]["value"], "Hello, world!",
        "{report}"
    );
    let env = std::fs::read_to_string(dir.join(".azure/dev/.env")).unwrap();
    // As azd writes it: double-quoted, `!` escaped.
    assert!(env.contains(r#"GREETING="Hello, world\!""#), "{env}");

    // The first test `new` wrote passes, every step of it: its last two
    // provision with configs the config schema refuses, named by pointer.
    let out = host(&dir, &["test", "--output", "json"], &cache);
    let tests: Value = serde_json::from_str(&ok(&out, "test")).unwrap();
    assert_eq!(
        (&tests["passed"], &tests["failed"]),
        (&1.into(), &0.into()),
        "{tests}"
    );
    assert_eq!(
        tests["tests"][0]["steps"].as_array().map(Vec::len),
        Some(6),
        "{tests}"
    );
    // The same refusal fails a test that expected the provider to run.
    let test_file = dir.join("tests/provider.test.toml");
    let text = std::fs::read_to_string(&test_file).unwrap();
    let violating = text.replacen(
        "config = { name = \"world\", greeting = \"Hello\" }",
        "config = { name = [\"world\"], greeting = \"Hello\" }",
        1,
    );
    assert_ne!(violating, text);
    std::fs::write(&test_file, violating).unwrap();
    let out = host(&dir, &["test", "--output", "json"], &cache);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let failed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        failed.contains("does not match the provider's config schema")
            && failed.contains(r#"at \"/name\": want string, but got array"#),
        "{failed}"
    );
    std::fs::write(&test_file, text).unwrap();
    // `check` prints the schema `new` wrote.
    let checked = ok(&host(&dir, &["check", "provider.toml"], &cache), "check");
    assert!(
        checked.contains("config schema (azure.yaml's infra.config, checked at every Initialize)")
            && checked.contains(r#""required": ["name"]"#),
        "{checked}"
    );

    let out = host(&dir, &["package"], &cache);
    let printed = ok(&out, "package");
    let id = format!("local.{name}");
    assert!(
        printed.contains(&format!("azd extension install {id}")),
        "{printed}"
    );
    let registry: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dist/registry.json")).unwrap())
            .unwrap();
    let ext = &registry["extensions"][0];
    assert_eq!(ext["id"], id.as_str());
    let version = &ext["versions"][0];
    assert_eq!(version["providers"][0]["name"], name);
    assert_eq!(version["providers"][0]["type"], "provisioning-provider");
    assert_eq!(
        version["capabilities"],
        json!(["provisioning-provider", "metadata"])
    );
    // This machine's archive (other platforms' are there too when their sidecars
    // were built into target/release-dist).
    let artifacts = version["artifacts"].as_object().unwrap();
    let here = azd_wasm_host_runtime::this_platform();
    let artifact = artifacts
        .get(&here)
        .unwrap_or_else(|| panic!("no {here} artifact in {artifacts:?}"));
    let archive = PathBuf::from(artifact["url"].as_str().unwrap());
    let bytes = std::fs::read(&archive).unwrap();
    use sha2::Digest as _;
    assert_eq!(
        artifact["checksum"]["value"],
        hex::encode(sha2::Sha256::digest(&bytes))
    );

    // Unpacked as azd unpacks it, into `<config>/extensions/<id>/`: the
    // extension's folder holds exactly what it needs.
    let installed = root.path().join("azd-config/extensions").join(id.as_str());
    tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
        .unpack(&installed)
        .unwrap();
    let mut members: Vec<String> = walk(&installed)
        .into_iter()
        .map(|p| {
            p.strip_prefix(&installed)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    members.sort();
    assert_eq!(members.len(), 9, "{members:?}");
    assert_eq!(members[0], "azd-metadata.json");
    assert_eq!(members[1], "azd-wasm-host");
    assert_eq!(members[2], format!("build/{name}.wasm"));
    assert_eq!(members[3], "config.schema.json", "{members:?}");
    assert_eq!(members[4], "extension.yaml", "{members:?}");
    assert_eq!(members[5], "precompiled/binding.toml", "{members:?}");
    assert_eq!(members[6], "precompiled/provider.cwasm", "{members:?}");
    // Signed with the key `package` made in the test's trust folder, after
    // the precompile: the signature names every file the host runs or reads
    // as policy (azd's metadata is what azd reads at install, from the archive
    // whose sha256 the registry names; the host does not act on it).
    assert_eq!(members[7], "provider.sigstore.json", "{members:?}");
    let signature = std::fs::read_to_string(installed.join("provider.sigstore.json")).unwrap();
    let bundle: serde_json::Value = serde_json::from_str(&signature).unwrap();
    use base64::Engine as _;
    let statement: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(bundle["dsseEnvelope"]["payload"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let signed: Vec<&str> = statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for file in &members[2..] {
        if file != "provider.sigstore.json" {
            assert!(
                signed.contains(&file.as_str()),
                "{file} is not signed: {signed:?}"
            );
        }
    }
    assert!(
        cache
            .with_file_name("azd-config")
            .join("wasm-host/keys/signing.key")
            .is_file()
    );
    // The entry point is the sidecar, which carries no compiler.
    let version = Command::new(installed.join("azd-wasm-host"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).contains("packaged sidecar"),
        "{version:?}"
    );
    assert_eq!(members[8], "provider.toml");
    // azd's metadata, as the shipped binary prints it for `azd extension install`.
    let metadata = Command::new(installed.join("azd-wasm-host"))
        .arg("metadata")
        .output()
        .unwrap();
    assert!(metadata.status.success(), "{metadata:?}");
    let metadata: Value = serde_json::from_slice(&metadata.stdout).unwrap();
    assert_eq!(metadata["schemaVersion"], "1.0");
    assert_eq!(metadata["id"], id.as_str());
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.schema.json")).unwrap())
            .unwrap();
    assert_eq!(metadata["configuration"]["project"], schema);
    served_from_package(&installed, name).await;
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The cache entries (`.cwasm`) a `listen` wrote into `cache`.
fn compiled_into(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|f| f.ends_with(".cwasm"))
                .collect()
        })
        .unwrap_or_default()
}

/// The unpacked extension, started as azd starts it (no manifest named: the
/// one beside the binary), serves the provider without compiling it: its
/// compile cache stays empty. Another host binary pointed at the same
/// folder must not trust that native code (it was not shipped beside it),
/// and compiles the component instead.
async fn served_from_package(installed: &Path, name: &str) {
    let own = installed.with_file_name("listen-cache");
    serve_once(
        installed,
        name,
        &installed.join("azd-wasm-host"),
        &own,
        false,
    )
    .await;
    let compiled = compiled_into(&own);
    assert!(
        compiled.is_empty(),
        "the packaged extension compiled the component instead of using its precompiled code: {compiled:?}"
    );
    let other = installed.with_file_name("other-host-cache");
    serve_once(installed, name, Path::new(BIN), &other, true).await;
    assert!(
        !compiled_into(&other).is_empty(),
        "a host binary from elsewhere ran the package's precompiled code instead of compiling"
    );
}

/// One Initialize + Deploy through `binary` serving the unpacked extension.
async fn serve_once(installed: &Path, name: &str, binary: &Path, cache: &Path, by_manifest: bool) {
    let project = tempfile::tempdir().unwrap();
    let sim = SimAzd::start(SimOptions::default()).await.unwrap();
    let mut cmd = tokio::process::Command::new(binary);
    cmd.env("AZD_WASM_HOST_CACHE_DIR", cache)
        .env(
            "AZD_WASM_HOST_LOG_FILE",
            installed.with_file_name("listen.log"),
        )
        .env("AZD_CONFIG_DIR", installed.ancestors().nth(2).unwrap())
        .env_remove("AZD_WASM_HOST_MANIFEST");
    if by_manifest {
        cmd.env("AZD_WASM_HOST_MANIFEST", installed.join("provider.toml"));
    }
    let opts = SpawnOptions {
        capture_stderr: true,
        cwd: Some(project.path().to_path_buf()),
        environment: Some("dev".into()),
        ..SpawnOptions::default()
    };
    let mut ext = sim.spawn_extension_with(cmd, opts).await.unwrap();
    let p = sim.provider(name, Duration::from_secs(30)).await.unwrap();
    let config = json!({ "name": "package" });
    let options = pb::ProvisioningOptions {
        provider: name.to_owned(),
        config: Some(object_to_struct(config.as_object().unwrap())),
        ..Default::default()
    };
    // A config the schema refuses is refused by the serving binary itself.
    let refused = pb::ProvisioningOptions {
        config: Some(object_to_struct(json!({ "name": "" }).as_object().unwrap())),
        ..options.clone()
    };
    match p
        .initialize(project.path().to_str().unwrap(), refused)
        .await
    {
        Err(azd_wasm_host_sim::CallError::Extension(e)) => {
            let e = azd_wasm_host_core::ProviderError::from_wire(&e);
            assert_eq!(e.code(), Some("invalid_config"), "{e:?}");
            assert!(
                e.message.contains(r#"at "/name": length must be >=1"#),
                "{e:?}"
            );
        }
        other => panic!("expected invalid_config, got {other:?}"),
    }
    p.initialize(project.path().to_str().unwrap(), options)
        .await
        .unwrap();
    let deployed = p.deploy(|_| {}).await.unwrap().deployment.unwrap().outputs;
    assert_eq!(deployed["GREETING"].value, "Hello, package!");
    sim.shutdown().await;
    let status = ext.wait(Duration::from_secs(10)).await.unwrap();
    assert!(status.success(), "{status}\n{}", ext.stderr_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_js_provider_goes_from_new_to_a_packaged_extension() {
    author_flow("js", "todo").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_ts_provider_goes_from_new_to_a_packaged_extension() {
    author_flow("ts", "todo-ts").await;
}

/// tsc checks a TypeScript provider against the provider interface's types (the
/// helpers' `Provider`): a wrong return type fails the build, naming the line, and the
/// component built before stays.
#[test]
fn a_typescript_provider_of_the_wrong_shape_fails_its_build() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    ok(&host(root.path(), &["new", "ts", "shape"], &cache), "new");
    let dir = root.path().join("shape");
    let out = host(&dir, &["build"], &cache);
    if skip_missing_tool(&out, "ts") {
        return;
    }
    ok(&out, "build");
    // A clone of the project with its lock file and no node_modules (as CI checks it out)
    // builds too: `npm ci` installs exactly what the lock holds.
    assert!(dir.join("package-lock.json").is_file());
    std::fs::remove_dir_all(dir.join("node_modules")).unwrap();
    let out = host(&dir, &["build"], &cache);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(&out, "build from the lock file");
    assert!(said.contains("npm ci"), "{said}");
    let component = dir.join("build/shape.wasm");
    let built = std::fs::read(&component).unwrap();
    let source = std::fs::read_to_string(dir.join("provider.ts")).unwrap();
    let wrong = source.replace(
        r#"return [{ name: "GREETING" }, { name: "GREETING_LENGTH" }];"#,
        "return [{ name: 42 }];",
    );
    assert_ne!(wrong, source, "the template changed: update this test");
    std::fs::write(dir.join("provider.ts"), wrong).unwrap();
    let out = host(&dir, &["build"], &cache);
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("provider.ts(") && said.contains("error TS2322"),
        "{said}"
    );
    assert!(said.contains("PlannedOutput"), "{said}");
    assert_eq!(
        std::fs::read(&component).unwrap(),
        built,
        "a failed build replaced the component"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_rust_provider_goes_from_new_to_a_packaged_extension() {
    author_flow("rust", "todo-rs").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_python_provider_goes_from_new_to_a_packaged_extension() {
    author_flow("python", "todo-py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_c_provider_goes_from_new_to_a_packaged_extension() {
    author_flow("c", "todo-c").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_go_provider_goes_from_new_to_a_packaged_extension() {
    author_flow("go", "todo-go").await;
}

/// A new Go project's own tests pass natively (`go test`, the SDK's TestHost
/// standing in for azd), and a Go compile error fails `build`, naming the
/// file and line, with the component built before left in place.
#[test]
fn a_go_provider_tests_natively_and_a_compile_error_fails_its_build() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    ok(
        &host(root.path(), &["new", "go", "shape-go"], &cache),
        "new",
    );
    let dir = root.path().join("shape-go");
    let out = host(&dir, &["build"], &cache);
    if skip_missing_tool(&out, "go") {
        return;
    }
    ok(&out, "build");
    let test = Command::new("go")
        .args(["test", "./..."])
        .current_dir(&dir)
        .output()
        .unwrap();
    ok(&test, "go test");
    let component = dir.join("build/shape-go.wasm");
    let built = std::fs::read(&component).unwrap();
    let source = std::fs::read_to_string(dir.join("main.go")).unwrap();
    let wrong = source.replace(
        "return []*azdext.ProvisioningPlannedOutput{{Name: \"GREETING\"}",
        "return []*azdext.ProvisioningPlannedOutput{{Name: 42}",
    );
    assert_ne!(wrong, source, "the template changed: update this test");
    std::fs::write(dir.join("main.go"), wrong).unwrap();
    let out = host(&dir, &["build"], &cache);
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("main.go:") && said.contains("42"), "{said}");
    assert!(
        said.contains("go build") && said.contains("failed"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&component).unwrap(),
        built,
        "a failed build replaced the component"
    );
}

/// `new js todo` in a fresh folder: the folder, the project in it, and a compile cache.
fn new_js_todo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("p");
    let cache = root.path().join("cache");
    ok(
        &host(root.path(), &["new", "js", "todo", "--dir", "p"], &cache),
        "new",
    );
    (root, dir, cache)
}

#[test]
fn package_refuses_a_provider_name_the_extension_does_not_list() {
    let (_root, dir, cache) = new_js_todo();
    let ext = dir.join("extension.yaml");
    let text = std::fs::read_to_string(&ext)
        .unwrap()
        .replace("  - name: todo", "  - name: tudo");
    std::fs::write(&ext, text).unwrap();
    let out = host(&dir, &["package"], &cache);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no concrete found") && stderr.contains("tudo"),
        "{stderr}"
    );
    assert!(
        !dir.join("dist").exists(),
        "package wrote something before its checks passed"
    );
}

/// The member names of a `.tar.gz`, sorted.
fn archive_members(archive: &Path) -> Vec<String> {
    let bytes = std::fs::read(archive).unwrap();
    let mut names: Vec<String> = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
        .entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with('/'))
        .collect();
    names.sort();
    names
}

/// The text of the member `name` of the .tar.gz at `archive`.
fn archive_file(archive: &Path, name: &str) -> String {
    let bytes = std::fs::read(archive).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().to_string_lossy() == name {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
            return text;
        }
    }
    panic!("{} has no {name}", archive.display());
}

/// A file that starts as an executable of another platform does (what
/// `package` reads of a host binary it cannot run).
fn foreign_binary(path: &Path, head: &[u8]) {
    let mut bytes = head.to_vec();
    bytes.resize(4096, 0);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn package_ships_an_archive_per_platform_each_with_its_entry_point() {
    let (root, dir, cache) = new_js_todo();
    let out = host(&dir, &["build"], &cache);
    if skip_missing_tool(&out, "js") {
        return;
    }
    ok(&out, "build");
    // A PE (amd64) and a thin Mach-O (arm64): their headers are all `package` reads.
    let windows = root.path().join("win.exe");
    let mut pe = b"MZ".to_vec();
    pe.resize(0x3c, 0);
    pe.extend_from_slice(&0x80u32.to_le_bytes());
    pe.resize(0x80, 0);
    pe.extend_from_slice(b"PE\0\0\x64\x86");
    foreign_binary(&windows, &pe);
    // The same for Windows on arm64 (machine 0xaa64).
    let windows_arm = root.path().join("win-arm.exe");
    let pe_len = pe.len();
    pe[pe_len - 2..].copy_from_slice(&[0x64, 0xaa]);
    foreign_binary(&windows_arm, &pe);
    let mac = root.path().join("mac");
    foreign_binary(&mac, &[0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 0x01]);

    // A binary for another platform than the one it is given for is refused, and nothing is written.
    let wrong = format!("linux/arm64={}", mac.display());
    let out = host(&dir, &["package", "--host", &wrong], &cache);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is a darwin/arm64 executable, not one for linux/arm64"),
        "{stderr}"
    );
    assert!(
        !dir.join("dist").exists(),
        "package wrote something before its checks passed"
    );

    // This machine's platform, as azd names it; the tests run on Linux.
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "amd64"
    };
    let native = format!("linux/{arch}");
    let hosts = [
        format!("windows/amd64={}", windows.display()),
        format!("windows/arm64={}", windows_arm.display()),
        format!("darwin-arm64={}", mac.display()),
        format!("{native}={BIN}"),
    ];
    let mut args = vec!["package"];
    for h in &hosts {
        args.extend(["--host", h.as_str()]);
    }
    let printed = ok(&host(&dir, &args, &cache), "package");
    let registry: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dist/registry.json")).unwrap())
            .unwrap();
    let artifacts = registry["extensions"][0]["versions"][0]["artifacts"]
        .as_object()
        .unwrap();
    let mut keys: Vec<&str> = artifacts.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "darwin/arm64",
            native.as_str(),
            "windows/amd64",
            "windows/arm64"
        ]
    );
    for (platform, exe) in [
        ("windows/amd64", "azd-wasm-host.exe"),
        ("windows/arm64", "azd-wasm-host.exe"),
        ("darwin/arm64", "azd-wasm-host"),
        (native.as_str(), "azd-wasm-host"),
    ] {
        let artifact = &artifacts[platform];
        assert_eq!(artifact["entryPoint"], exe, "{platform}");
        let archive = PathBuf::from(artifact["url"].as_str().unwrap());
        assert!(
            printed.contains(&format!("{} ({platform})", archive.display())),
            "{printed}"
        );
        let members = archive_members(&archive);
        assert!(members.contains(&exe.to_owned()), "{platform}: {members:?}");
        assert!(
            members.contains(&"build/todo.wasm".to_owned()),
            "{platform}: {members:?}"
        );
        assert!(
            members.contains(&"precompiled/provider.cwasm".to_owned()),
            "{platform}: {members:?}"
        );
        // The code is bound to its platform.
        let binding = archive_file(&archive, "precompiled/binding.toml");
        assert!(
            binding.contains(&format!("platform = \"{platform}\"")),
            "{platform}: {binding}"
        );
        use sha2::Digest as _;
        assert_eq!(
            artifact["checksum"]["value"],
            hex::encode(sha2::Sha256::digest(std::fs::read(&archive).unwrap())),
            "{platform}"
        );
    }
}
