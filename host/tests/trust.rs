//! Signed providers and consent, through the real binaries: the C example
//! packaged (signed by default, as `package` does), unpacked the way azd
//! unpacks an extension, and served by its shipped sidecar under `run`'s
//! simulated azd (`AZD_WASM_HOST_EXTENSION_COMMAND`), each test with a trust
//! folder of its own (`AZD_CONFIG_DIR`).
//!
//! - a changed component, a key not trusted and an unsigned provider are
//!   refused, each with its message; unsigned runs only where allowed;
//! - keygen, `package --sign`, trust add/list/remove;
//! - an update that asks for one more grant is refused under `--no-prompt`
//!   (naming it and the approve command), asked on a pseudo-terminal, and
//!   runs after a yes or `approve`; an update with fewer grants runs unasked.
//!
//! Needs the C example built and the sidecar built beside the CLI
//! (`scripts/test.sh` does both) and python3 (the pseudo-terminal).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use azd_wasm_host_fixtures::{copy_dir, output_text as text, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

/// A test's folder: the provider project, its azd project, its trust folder.
struct Case {
    root: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        let case = Self {
            root: tempfile::tempdir().unwrap(),
        };
        let example = repo_root().join("examples/c-hello");
        let wasm = example.join("build/c-hello.wasm");
        assert!(
            wasm.is_file(),
            "{} is not built: run scripts/build-examples.sh",
            wasm.display()
        );
        let dir = case.provider();
        std::fs::create_dir_all(dir.join("build")).unwrap();
        std::fs::copy(example.join("provider.toml"), dir.join("provider.toml")).unwrap();
        std::fs::copy(&wasm, dir.join("build/c-hello.wasm")).unwrap();
        let yaml = std::fs::read_to_string(repo_root().join("extension.yaml"))
            .unwrap()
            .replace("  - name: localfiles\n", "  - name: c-hello\n");
        std::fs::write(dir.join("extension.yaml"), yaml).unwrap();
        let project = case.project();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("azure.yaml"),
            "name: trusty\ninfra:\n  provider: c-hello\n  config:\n    name: trust\n",
        )
        .unwrap();
        case
    }

    fn provider(&self) -> PathBuf {
        self.root.path().join("provider")
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn config(&self) -> PathBuf {
        self.root.path().join("azd-config")
    }

    /// The CLI with this case's trust folder.
    fn host(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.provider())
            .env("AZD_CONFIG_DIR", self.config())
            .env_remove("AZD_WASM_HOST_ALLOW_UNSIGNED")
            .output()
            .unwrap()
    }

    /// Edits the provider's manifest (`version` into extension.yaml).
    fn update(&self, version: &str, edit: impl FnOnce(&str) -> String) {
        let manifest = self.provider().join("provider.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(&manifest, edit(&text)).unwrap();
        let yaml = self.provider().join("extension.yaml");
        let text = std::fs::read_to_string(&yaml).unwrap();
        let old = text
            .lines()
            .find(|l| l.starts_with("version:"))
            .unwrap()
            .to_owned();
        std::fs::write(&yaml, text.replace(&old, &format!("version: {version}"))).unwrap();
    }

    /// `package ARGS` (this machine's sidecar), unpacked into `name` as azd
    /// unpacks an extension; returns that folder.
    fn install(&self, name: &str, args: &[&str]) -> PathBuf {
        let dist = self.root.path().join(format!("dist-{name}"));
        let mut all = vec!["package", "--out", dist.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = self.host(&all);
        assert!(
            out.status.success(),
            "package failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let archive = std::fs::read_dir(&dist)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
            .unwrap();
        let installed = self.root.path().join(name);
        let bytes = std::fs::read(archive).unwrap();
        tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
            .unpack(&installed)
            .unwrap();
        installed
    }

    /// `run provision` of the project, served by the sidecar in `installed`.
    fn provision(&self, installed: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.provision_command(installed, args, env)
            .output()
            .unwrap()
    }

    fn provision_command(&self, installed: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(["run", "provision", "-e", "dev", "--provider"])
            .arg(installed.join("provider.toml"))
            .args(args)
            .current_dir(self.project())
            .env("AZD_CONFIG_DIR", self.config())
            .env("AZD_WASM_HOST_CACHE_DIR", self.root.path().join("cache"))
            .env(
                "AZD_WASM_HOST_EXTENSION_COMMAND",
                format!("'{}'", installed.join("azd-wasm-host").display()),
            )
            .env_remove("AZD_NO_PROMPT")
            .env_remove("AZD_WASM_HOST_ALLOW_UNSIGNED")
            .envs(env.iter().copied());
        cmd
    }
}

fn succeeded(out: &Output) -> String {
    let t = text(out);
    assert!(out.status.success(), "{}\n{t}", out.status);
    assert!(t.contains("Hello, trust!"), "{t}");
    t
}

fn refused(out: &Output, what: &str) -> String {
    let t = text(out);
    assert!(!out.status.success(), "it ran:\n{t}");
    assert!(t.contains(what), "expected {what:?} in:\n{t}");
    assert!(!t.contains("Hello, trust!"), "{t}");
    t
}

#[test]
fn signed_providers_run_and_changed_untrusted_or_unsigned_ones_are_refused() {
    let case = Case::new();
    // `package` made this user's signing key and trusts it here.
    let installed = case.install("v1", &[]);
    assert!(installed.join("provider.sigstore.json").is_file());
    assert!(case.config().join("wasm-host/keys/signing.key").is_file());
    succeeded(&case.provision(&installed, &[], &[]));

    // A changed component: refused, even where unsigned providers are allowed.
    let mut wasm = std::fs::read(installed.join("build/c-hello.wasm")).unwrap();
    wasm.extend_from_slice(b"\x00\x05\x04note");
    let changed = case.root.path().join("changed");
    copy_dir(&installed, &changed);
    std::fs::write(changed.join("build/c-hello.wasm"), &wasm).unwrap();
    let t = refused(
        &case.provision(&changed, &[], &[]),
        "c-hello.wasm was changed after it was signed",
    );
    assert!(t.contains("its sha256 is"), "{t}");
    refused(
        &case.provision(&changed, &[], &[("AZD_WASM_HOST_ALLOW_UNSIGNED", "true")]),
        "was changed after it was signed",
    );
    // A changed manifest: refused too.
    let changed = case.root.path().join("changed-manifest");
    copy_dir(&installed, &changed);
    let manifest = changed.join("provider.toml");
    let more = std::fs::read_to_string(&manifest).unwrap() + "env = [\"HOME\"]\n";
    std::fs::write(&manifest, more).unwrap();
    refused(
        &case.provision(&changed, &[], &[]),
        "provider.toml was changed after it was signed",
    );

    // A key this user does not trust (another user's trust folder).
    let stranger = case.root.path().join("stranger-config");
    let t = refused(
        &case.provision(
            &installed,
            &[],
            &[("AZD_CONFIG_DIR", stranger.to_str().unwrap())],
        ),
        "which you do not trust",
    );
    assert!(t.contains("azd-wasm-host trust add"), "{t}");

    // Unsigned: refused, unless allowed.
    let unsigned = case.install("unsigned", &["--unsigned"]);
    assert!(!unsigned.join("provider.sigstore.json").exists());
    let t = refused(
        &case.provision(&unsigned, &[], &[]),
        "provider `c-hello` is not signed",
    );
    assert!(t.contains("AZD_WASM_HOST_ALLOW_UNSIGNED=true"), "{t}");
    succeeded(&case.provision(&unsigned, &[], &[("AZD_WASM_HOST_ALLOW_UNSIGNED", "true")]));
    std::fs::write(
        case.config().join("wasm-host/config.toml"),
        "allow_unsigned = true\n",
    )
    .unwrap();
    succeeded(&case.provision(&unsigned, &[], &[]));
}

#[test]
fn keygen_package_sign_and_trust_add_list_remove() {
    let case = Case::new();
    let key = case.root.path().join("team.key");
    let out = case.host(&["keygen", "--out", key.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(key.with_extension("pub").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the signing key is readable by others");
    }
    // A key is never overwritten.
    let again = case.host(&["keygen", "--out", key.to_str().unwrap()]);
    assert!(
        !again.status.success() && text(&again).contains("never overwritten"),
        "{}",
        text(&again)
    );

    let installed = case.install("team", &["--sign", key.to_str().unwrap()]);
    // keygen --out trusts nothing: the team's key is not trusted yet.
    refused(
        &case.provision(&installed, &[], &[]),
        "which you do not trust",
    );
    let out = case.host(&[
        "trust",
        "add",
        key.with_extension("pub").to_str().unwrap(),
        "--name",
        "team",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    succeeded(&case.provision(&installed, &[], &[]));
    let list = text(&case.host(&["trust", "list"]));
    assert!(
        list.contains("team.pub") && list.contains("unsigned providers: refused"),
        "{list}"
    );
    let out = case.host(&["trust", "remove", "team"]);
    assert!(out.status.success(), "{}", text(&out));
    refused(
        &case.provision(&installed, &[], &[]),
        "which you do not trust",
    );
    // A private key is not a public one.
    let out = case.host(&["trust", "add", key.to_str().unwrap()]);
    assert!(
        !out.status.success() && text(&out).contains("not a public key"),
        "{}",
        text(&out)
    );
}

/// The grant an update adds: one HTTP origin.
const ORIGIN: &str = "\n[policy.http]\nallow = [\"https://example.com\"]\n";

#[test]
fn an_update_that_asks_for_more_runs_only_after_consent_and_one_that_asks_for_less_runs_unasked() {
    let case = Case::new();
    let v1 = case.install("v1", &[]);
    // The first run records what it was allowed.
    succeeded(&case.provision(&v1, &[], &[]));
    let record = case.config().join("wasm-host/consent/c-hello.toml");
    assert!(record.is_file());

    // 1.1.0 also asks for one HTTP origin and more memory.
    case.update("1.1.0", |t| {
        t.replace("memory_mb = 16", "memory_mb = 32") + ORIGIN
    });
    let v2 = case.install("v2", &[]);
    // Nobody to ask (azd --no-prompt): refused, naming the grants and the command that approves.
    let t = refused(
        &case.provision(&v2, &[], &[]),
        "provider `c-hello` 1.1.0 asks for more than you allowed for 0.1.0",
    );
    assert!(t.contains("+ HTTP origin https://example.com"), "{t}");
    assert!(t.contains("+ memory_mb 16 → 32"), "{t}");
    assert!(t.contains("approve --manifest"), "{t}");
    assert!(
        t.contains("does not run until you allow it (not asked: --no-prompt)"),
        "{t}"
    );
    // Asked and declined: still refused.
    refused(
        &case.provision(&v2, &["--no"], &[]),
        "you did not allow what provider `c-hello` 1.1.0 also asks for",
    );
    // Asked on a terminal (a pseudo-terminal), answered yes: it runs, and is not asked again.
    let t = on_a_terminal(case.provision_command(&v2, &[], &[]), "Allow?", "y");
    assert!(
        t.contains("provider `c-hello` 1.1.0 also asks for: HTTP origin https://example.com"),
        "{t}"
    );
    assert!(t.contains("Hello, trust!"), "{t}");
    succeeded(&case.provision(&v2, &[], &[]));

    // 1.2.0 drops the origin: runs unasked, under --no-prompt.
    case.update("1.2.0", |t| t.replace(ORIGIN, ""));
    let v3 = case.install("v3", &[]);
    succeeded(&case.provision(&v3, &[], &[]));

    // 1.3.0 asks for it again: asked again; `approve` (the command the refusal names) allows it.
    case.update("1.3.0", |t| t.to_owned() + "env = [\"HOME\"]\n");
    let v4 = case.install("v4", &[]);
    let t = refused(
        &case.provision(&v4, &[], &[]),
        "asks for more than you allowed for 1.2.0",
    );
    let approve = Command::new(v4.join("azd-wasm-host"))
        .args(["approve", "--manifest"])
        .arg(v4.join("provider.toml"))
        .env("AZD_CONFIG_DIR", case.config())
        .output()
        .unwrap();
    assert!(approve.status.success(), "{}\n{t}", text(&approve));
    assert!(
        text(&approve).contains("+ environment variable HOME"),
        "{}",
        text(&approve)
    );
    succeeded(&case.provision(&v4, &[], &[]));
}

/// Runs `cmd` on a pseudo-terminal, typing `answer` once `prompt` shows;
/// returns what it wrote (scripts/e2e/answer-on-pty.py, as the e2e test does).
fn on_a_terminal(cmd: Command, prompt: &str, answer: &str) -> String {
    let mut driver = Command::new("python3");
    driver
        .arg(repo_root().join("scripts/e2e/answer-on-pty.py"))
        .args([
            "--timeout",
            "120",
            "--question",
            prompt,
            "--answer",
            answer,
            "--",
        ])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        driver.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => driver.env(k, v),
            None => driver.env_remove(k),
        };
    }
    let out = driver
        .output()
        .expect("python3 is needed for the pseudo-terminal");
    let t = text(&out);
    assert!(out.status.success(), "on a terminal ({}):\n{t}", out.status);
    t
}

/// The CNCF distribution registry (Debian's docker-registry) on a free
/// loopback port, storing in a temporary folder; killed when dropped.
struct Registry {
    child: std::process::Child,
    address: String,
    _storage: tempfile::TempDir,
}

impl Registry {
    fn start() -> Self {
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n",
                storage.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("docker-registry is needed: run scripts/install-registry.sh");
        let registry = Self {
            child,
            address,
            _storage: storage,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(&registry.address).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the registry did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        registry
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn publish_then_pull_through_a_registry_gives_the_same_verified_provider() {
    let case = Case::new();
    let registry = Registry::start();
    let tag = format!("oci://{}/team/c-hello:0.1.0", registry.address);
    let out = case.host(&["publish", &tag]);
    assert!(out.status.success(), "{}", text(&out));
    let published = String::from_utf8_lossy(&out.stdout).into_owned();
    let digest = published
        .split(['(', ')'])
        .find(|w| w.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("no digest in {published:?}"))
        .to_owned();
    // publish signs a scratch copy: the project keeps no signature of its own.
    assert!(!case.provider().join("provider.sigstore.json").exists());

    let same = |pulled: &Path| {
        for file in ["provider.toml", "build/c-hello.wasm", "extension.yaml"] {
            let a = std::fs::read(case.provider().join(file)).unwrap();
            let b = std::fs::read(pulled.join(file)).unwrap();
            assert!(a == b, "{file} differs after publish and pull");
        }
        assert!(pulled.join("provider.sigstore.json").is_file());
    };
    let by_tag = case.root.path().join("by-tag");
    let out = case.host(&["pull", &tag, "--out", by_tag.to_str().unwrap()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains(&digest) && t.contains("c-hello 0.1.0, signed by key"),
        "{t}"
    );
    same(&by_tag);
    let by_digest = case.root.path().join("by-digest");
    let pinned = format!("oci://{}/team/c-hello@{digest}", registry.address);
    let out = case.host(&["pull", &pinned, "--out", by_digest.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    same(&by_digest);

    // Someone who does not trust the publisher's key keeps nothing.
    let stranger = case.root.path().join("stranger");
    let out = Command::new(BIN)
        .args(["pull", &tag, "--out"])
        .arg(&stranger)
        .env("AZD_CONFIG_DIR", case.root.path().join("stranger-config"))
        .current_dir(case.root.path())
        .output()
        .unwrap();
    let t = text(&out);
    assert!(
        !out.status.success() && t.contains("which you do not trust"),
        "{t}"
    );
    assert!(
        !stranger.exists(),
        "a refused pull left {}",
        stranger.display()
    );
    let leftovers: Vec<_> = std::fs::read_dir(case.root.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".pull-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A folder that is not empty is not pulled into.
    let out = case.host(&["pull", &tag, "--out", by_tag.to_str().unwrap()]);
    assert!(
        !out.status.success() && text(&out).contains("is not empty"),
        "{}",
        text(&out)
    );

    // pull --package: an extension source that keeps the publisher's signature, and runs.
    let packaged = case.root.path().join("packaged");
    let out = case.host(&[
        "pull",
        &tag,
        "--out",
        packaged.to_str().unwrap(),
        "--package",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("keep its signature"), "{}", text(&out));
    let archive = std::fs::read_dir(packaged.join("dist"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let installed = case.root.path().join("installed-from-registry");
    let bytes = std::fs::read(archive).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
        .unpack(&installed)
        .unwrap();
    assert_eq!(
        std::fs::read(installed.join("provider.sigstore.json")).unwrap(),
        std::fs::read(packaged.join("provider.sigstore.json")).unwrap()
    );
    succeeded(&case.provision(&installed, &[], &[]));

    // Nothing but a provider is pulled: a reference to nothing fails with the registry's word.
    let missing = format!("oci://{}/team/nothing:1.0.0", registry.address);
    let out = case.host(&[
        "pull",
        &missing,
        "--out",
        case.root.path().join("none").to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{}", text(&out));
}
