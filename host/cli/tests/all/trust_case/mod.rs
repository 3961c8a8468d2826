//! What the trust tests share: a provider project (the C example), packaged
//! and unpacked as azd installs an extension, driven by `run` with the
//! unpacked sidecar as the extension, with a trust folder of its own.

#![allow(dead_code, reason = "each test binary uses part of it")]

use azd_wasm_host_fixtures::{c_hello_provider, output_text as text, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

/// A test's folder: the provider project, its azd project, its trust folder.
pub(crate) struct Case {
    pub(crate) root: tempfile::TempDir,
}

impl Case {
    pub(crate) fn new() -> Self {
        let case = Self {
            root: tempfile::tempdir().unwrap(),
        };
        let dir = case.provider();
        c_hello_provider(&dir);
        let project = case.project();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("azure.yaml"),
            "name: trusty\ninfra:\n  provider: c-hello\n  config:\n    name: trust\n",
        )
        .unwrap();
        case
    }

    /// A case whose provider's component is `component` (another
    /// provider's code, say) in place of the C example's.
    pub(crate) fn with_component(component: &[u8]) -> Self {
        let case = Self::new();
        std::fs::write(case.provider().join("build/c-hello.wasm"), component).unwrap();
        case
    }

    /// Replaces `from` with `to` in the provider's file `file` (relative to its folder).
    pub(crate) fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.provider().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{from:?} is not in {}", path.display());
        std::fs::write(&path, text.replace(from, to)).unwrap();
    }

    /// Names the provider `name` everywhere azd and the host match it (its
    /// manifest, extension.yaml's providers list, the project's azure.yaml).
    pub(crate) fn rename(&self, name: &str) {
        let old = azd_wasm_host_manifest::Manifest::load(&self.provider().join("provider.toml"))
            .unwrap()
            .name;
        self.edit(
            "provider.toml",
            &format!("name = \"{old}\""),
            &format!("name = \"{name}\""),
        );
        self.edit(
            "extension.yaml",
            &format!("  - name: {old}\n"),
            &format!("  - name: {name}\n"),
        );
        let azure = self.project().join("azure.yaml");
        let text = std::fs::read_to_string(&azure).unwrap();
        std::fs::write(
            &azure,
            text.replace(&format!("provider: {old}"), &format!("provider: {name}")),
        )
        .unwrap();
    }

    /// The installed sidecar's `approve` (what CI runs after installing).
    pub(crate) fn approve(&self, installed: &Path) -> Output {
        Command::new(installed.join("azd-wasm-host"))
            .args(["approve", "--manifest"])
            .arg(installed.join("provider.toml"))
            .env("AZD_CONFIG_DIR", self.config())
            .env_remove("AZD_WASM_HOST_ALLOW_UNSIGNED")
            .output()
            .unwrap()
    }

    /// `run provision --output json`: the error's code is in what it prints.
    pub(crate) fn provision_json(&self, installed: &Path, env: &[(&str, &str)]) -> Output {
        self.provision(installed, &["--output", "json"], env)
    }

    pub(crate) fn provider(&self) -> PathBuf {
        self.root.path().join("provider")
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    pub(crate) fn config(&self) -> PathBuf {
        self.root.path().join("azd-config")
    }

    /// The CLI with this case's trust folder.
    pub(crate) fn host(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(self.provider())
            .env("AZD_CONFIG_DIR", self.config())
            .env_remove("AZD_WASM_HOST_ALLOW_UNSIGNED")
            .output()
            .unwrap()
    }

    /// Edits the provider's manifest (`version` into extension.yaml).
    pub(crate) fn update(&self, version: &str, edit: impl FnOnce(&str) -> String) {
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

    /// The id the provider's `extension.yaml` names: the extension its
    /// package is signed for.
    pub(crate) fn extension_id(&self) -> String {
        let yaml = std::fs::read_to_string(self.provider().join("extension.yaml")).unwrap();
        yaml.lines()
            .find_map(|l| l.strip_prefix("id:"))
            .expect("extension.yaml names its id")
            .trim()
            .to_owned()
    }

    /// Where azd would install this provider's extension, for the case
    /// `name`: `<root>/<name>/<extension id>` (azd names an extension's
    /// folder after the extension, and consent keys on that name).
    pub(crate) fn place(&self, name: &str) -> PathBuf {
        self.root.path().join(name).join(self.extension_id())
    }

    /// `package ARGS` (this machine's sidecar), unpacked as azd unpacks an
    /// extension, into [`Case::place`]`(name)`; returns that folder.
    pub(crate) fn install(&self, name: &str, args: &[&str]) -> PathBuf {
        self.install_as(name, &self.extension_id(), args)
    }

    /// [`Case::install`] as the extension `extension`, whatever its package
    /// says (an extension source may name any id): into
    /// `<root>/<name>/<extension>`.
    pub(crate) fn install_as(&self, name: &str, extension: &str, args: &[&str]) -> PathBuf {
        let installed = self.root.path().join(name).join(extension);
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
        let bytes = std::fs::read(archive).unwrap();
        tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]))
            .unpack(&installed)
            .unwrap();
        installed
    }

    /// `run provision` of the project, served by the sidecar in `installed`.
    pub(crate) fn provision(
        &self,
        installed: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        self.provision_command(installed, args, env)
            .output()
            .unwrap()
    }

    pub(crate) fn provision_command(
        &self,
        installed: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Command {
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

pub(crate) fn succeeded(out: &Output) -> String {
    let t = text(out);
    assert!(out.status.success(), "{}\n{t}", out.status);
    assert!(t.contains("Hello, trust!"), "{t}");
    t
}

/// Refused with the error code `code` (`--output json`) and a message holding `what`.
pub(crate) fn refused_with(out: &Output, code: &str, what: &str) -> String {
    let t = refused(out, what);
    assert!(
        t.contains(&format!("\"code\": \"{code}\"")) || t.contains(&format!("\"code\":\"{code}\"")),
        "expected code {code} in:\n{t}"
    );
    t
}

pub(crate) fn refused(out: &Output, what: &str) -> String {
    let t = text(out);
    assert!(!out.status.success(), "it ran:\n{t}");
    assert!(t.contains(what), "expected {what:?} in:\n{t}");
    assert!(!t.contains("Hello, trust!"), "{t}");
    t
}

/// Runs `cmd` on a pseudo-terminal, typing `answer` once `prompt` shows;
/// returns what it wrote (scripts/e2e/answer-on-pty.py, as the e2e test does).
pub(crate) fn on_a_terminal(cmd: Command, prompt: &str, answer: &str) -> String {
    let (code, t) = on_a_terminal_ending(cmd, prompt, answer);
    assert_eq!(code, Some(0), "on a terminal:\n{t}");
    t
}

/// [`on_a_terminal`], returning how the driver ended too: the command's
/// exit code, or 3 when `prompt` never showed.
pub(crate) fn on_a_terminal_ending(
    cmd: Command,
    prompt: &str,
    answer: &str,
) -> (Option<i32>, String) {
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
    (out.status.code(), text(&out))
}

/// The CNCF distribution registry (Debian's docker-registry) on a free
/// loopback port, storing in a temporary folder; killed when dropped.
pub(crate) struct Registry {
    child: std::process::Child,
    pub(crate) address: String,
    _storage: tempfile::TempDir,
}

impl Registry {
    pub(crate) fn start() -> Self {
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

/// `<root>/<name>`, a trust folder that trusts nobody's key but allows
/// unsigned providers: what a stranger has, or what a provider would point
/// the tool at.
pub(crate) fn allowing_unsigned(root: &Path, name: &str) -> PathBuf {
    let config = root.join(name);
    std::fs::create_dir_all(config.join("wasm-host")).unwrap();
    std::fs::write(
        config.join("wasm-host/config.toml"),
        "allow_unsigned = true\n",
    )
    .unwrap();
    config
}
