//! The provider manifest (`provider.toml`): which component to load, under
//! which name, and what its sandbox may reach.
//!
//! ```toml
//! name = "localfiles"                 # provider name registered with azd
//! component = "build/localfiles.wasm" # relative to this file
//!
//! [policy]
//! fs = [
//!   { path = ".", access = "read" },               # relative to the azd project
//!   { path = ".azure/{env}", access = "read-write" }, # {env} = AZD_ENVIRONMENT
//! ]
//! env = ["AZD_ENVIRONMENT"]   # environment variables the guest may read
//! network = []                # "host:port" TCP destinations
//! memory_mb = 256             # linear-memory limit per instance
//! call_timeout_secs = 300     # deadline per call
//! ```
//!
//! Everything in `[policy]` is optional; the default is deny-all.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;

/// Environment variable naming the manifest (overridden by `--manifest`).
pub const ENV_MANIFEST: &str = "AZD_WASM_HOST_MANIFEST";
/// File name looked for beside the executable.
pub const DEFAULT_MANIFEST_NAME: &str = "provider.toml";
/// Default linear-memory limit per instance, in MiB.
pub const DEFAULT_MEMORY_MB: u64 = 256;
/// Default deadline per call, in seconds.
pub const DEFAULT_CALL_TIMEOUT_SECS: u64 = 300;
/// Largest memory limit a 32-bit guest can use (4 GiB).
const MAX_MEMORY_MB: u64 = 4096;

/// A parsed and checked provider manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The provider name registered with azd (`infra.provider` in `azure.yaml`).
    pub name: String,
    /// Absolute (or manifest-relative, resolved) path of the component.
    pub component: PathBuf,
    /// What the sandbox grants.
    pub policy: Policy,
    /// The manifest file, when the provider came from one (not a bare `.wasm`).
    pub source: Option<PathBuf>,
}

/// What the guest may reach. The default grants nothing.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Directories the guest may open, relative to the azd project.
    #[serde(default)]
    pub fs: Vec<FsGrant>,
    /// Environment variables the guest may read (values come from the host).
    #[serde(default)]
    pub env: Vec<String>,
    /// `host:port` TCP destinations the guest may connect to.
    #[serde(default)]
    pub network: Vec<String>,
    /// Linear-memory limit per instance, in MiB.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// Deadline per call, in seconds.
    #[serde(default = "default_call_timeout_secs")]
    pub call_timeout_secs: u64,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            fs: Vec::new(),
            env: Vec::new(),
            network: Vec::new(),
            memory_mb: DEFAULT_MEMORY_MB,
            call_timeout_secs: DEFAULT_CALL_TIMEOUT_SECS,
        }
    }
}

impl Policy {
    /// Whether the policy grants nothing beyond computing.
    pub fn is_deny_all(&self) -> bool {
        self.fs.is_empty() && self.env.is_empty() && self.network.is_empty()
    }
}

/// One directory grant.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsGrant {
    /// Path relative to the project directory (absolute paths are taken as is);
    /// `{env}` stands for the azd environment name.
    pub path: String,
    /// What the guest may do there.
    pub access: FsAccess,
}

/// Access to a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsAccess {
    /// Read files and list directories.
    Read,
    /// Also create, write, rename and delete.
    ReadWrite,
}

impl std::fmt::Display for FsAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Read => "read",
            Self::ReadWrite => "read-write",
        })
    }
}

fn default_memory_mb() -> u64 {
    DEFAULT_MEMORY_MB
}

fn default_call_timeout_secs() -> u64 {
    DEFAULT_CALL_TIMEOUT_SECS
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: String,
    component: PathBuf,
    #[serde(default)]
    policy: Policy,
}

impl Manifest {
    /// Reads and checks a manifest file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read provider manifest {}", path.display()))?;
        Self::parse(&text, path)
    }

    /// Parses manifest text; `path` names the file in errors and anchors the
    /// relative component path.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        let raw: RawManifest = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("invalid provider manifest {}: {e}", path.display()))?;
        let at = |field: &str| format!("provider manifest {}: `{field}`", path.display());
        if raw.name.trim().is_empty() {
            bail!("{} must not be empty", at("name"));
        }
        if raw.component.as_os_str().is_empty() {
            bail!("{} must not be empty", at("component"));
        }
        raw.policy
            .check()
            .map_err(|msg| anyhow::anyhow!("{} {msg}", at("policy")))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Ok(Self {
            name: raw.name,
            component: base.join(&raw.component),
            policy: raw.policy,
            source: Some(path.to_path_buf()),
        })
    }

    /// A manifest for a bare component: name from `name` or the file stem,
    /// deny-all policy with default limits.
    pub fn for_component(component: &Path, name: Option<&str>) -> anyhow::Result<Self> {
        let name = match name {
            Some(n) if !n.trim().is_empty() => n.to_owned(),
            _ => component
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .with_context(|| {
                    format!(
                        "cannot derive a provider name from {}: pass --provider-name",
                        component.display()
                    )
                })?,
        };
        Ok(Self {
            name,
            component: component.to_path_buf(),
            policy: Policy::default(),
            source: None,
        })
    }
}

impl Policy {
    /// Checks values serde cannot: ranges and formats. Returns the message.
    fn check(&self) -> Result<(), String> {
        if self.memory_mb == 0 || self.memory_mb > MAX_MEMORY_MB {
            return Err(format!(
                "memory_mb = {} is out of range (1..={MAX_MEMORY_MB})",
                self.memory_mb
            ));
        }
        if self.call_timeout_secs == 0 {
            return Err("call_timeout_secs must be at least 1".to_owned());
        }
        for grant in &self.fs {
            if grant.path.trim().is_empty() {
                return Err("fs: a grant has an empty path (use \".\" for the project)".to_owned());
            }
            let unknown = grant.path.replace("{env}", "");
            if unknown.contains('{') || unknown.contains('}') {
                return Err(format!(
                    "fs: path {:?} has a placeholder other than {{env}}",
                    grant.path
                ));
            }
        }
        for name in &self.env {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(format!("env: {name:?} is not an environment variable name"));
            }
        }
        for dest in &self.network {
            parse_host_port(dest).map_err(|why| format!("network: {dest:?} {why}"))?;
        }
        Ok(())
    }
}

/// Splits `host:port` (IPv6 hosts in brackets). The error says what is wrong.
pub fn parse_host_port(dest: &str) -> Result<(String, u16), &'static str> {
    let (host, port) = dest
        .rsplit_once(':')
        .ok_or("is not host:port (the port is required)")?;
    let port: u16 = port
        .parse()
        .map_err(|_| "has a port that is not 1..=65535")?;
    if port == 0 {
        return Err("has a port that is not 1..=65535");
    }
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() || host.contains(['/', ' ', '[', ']']) {
        return Err("has no valid host");
    }
    Ok((host.to_owned(), port))
}

/// Finds the manifest: `explicit` (the `--manifest` flag), else
/// `AZD_WASM_HOST_MANIFEST`, else `provider.toml` beside the executable. The
/// error lists every place tried.
pub fn locate_manifest(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        bail!(
            "provider manifest {} (from --manifest) does not exist",
            p.display()
        );
    }
    let mut tried = vec!["--manifest: not given".to_owned()];
    match std::env::var_os(ENV_MANIFEST) {
        Some(v) if !v.is_empty() => {
            let p = PathBuf::from(v);
            if p.is_file() {
                return Ok(p);
            }
            bail!(
                "provider manifest {} (from {ENV_MANIFEST}) does not exist",
                p.display()
            );
        }
        _ => tried.push(format!("{ENV_MANIFEST}: not set")),
    }
    match std::env::current_exe() {
        Ok(exe) => {
            let p = exe
                .parent()
                .unwrap_or(Path::new("."))
                .join(DEFAULT_MANIFEST_NAME);
            if p.is_file() {
                return Ok(p);
            }
            tried.push(format!("{}: not found", p.display()));
        }
        Err(e) => tried.push(format!("beside the executable: cannot locate it ({e})")),
    }
    bail!(
        "no provider manifest found; tried:\n  - {}\npass --manifest PATH (a provider.toml or a .wasm component)",
        tried.join("\n  - ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Manifest> {
        Manifest::parse(text, Path::new("/p/provider.toml"))
    }

    #[test]
    fn full_manifest_parses() {
        let m = parse(
            r#"
name = "localfiles"
component = "build/localfiles.wasm"
[policy]
fs = [ { path = ".", access = "read" }, { path = ".azure/{env}", access = "read-write" } ]
env = ["AZD_ENVIRONMENT"]
network = ["example.com:443", "[::1]:8080"]
memory_mb = 64
call_timeout_secs = 5
"#,
        )
        .unwrap();
        assert_eq!(m.name, "localfiles");
        assert_eq!(m.component, Path::new("/p/build/localfiles.wasm"));
        assert_eq!(m.policy.fs[1].access, FsAccess::ReadWrite);
        assert_eq!(m.policy.memory_mb, 64);
        assert!(!m.policy.is_deny_all());
    }

    #[test]
    fn defaults_deny_all() {
        let m = parse("name = \"x\"\ncomponent = \"x.wasm\"\n").unwrap();
        assert!(m.policy.is_deny_all());
        assert_eq!(m.policy.memory_mb, DEFAULT_MEMORY_MB);
        assert_eq!(m.policy.call_timeout_secs, DEFAULT_CALL_TIMEOUT_SECS);
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let e = format!("{:#}", parse("name = \"x\"\n").unwrap_err());
        assert!(
            e.contains("/p/provider.toml") && e.contains("component"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nfs = [{ path = \".\", access = \"write\" }]\n")
                .unwrap_err()
        );
        assert!(e.contains("write") && e.contains("line 4"), "{e}");
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nnetwork = [\"example.com\"]\n")
                .unwrap_err()
        );
        assert!(e.contains("network") && e.contains("port"), "{e}");
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nmemory_mb = 0\n").unwrap_err()
        );
        assert!(e.contains("memory_mb"), "{e}");
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\nextra = 1\n").unwrap_err()
        );
        assert!(e.contains("extra"), "{e}");
    }

    #[test]
    fn bare_component_uses_the_stem() {
        let m = Manifest::for_component(Path::new("/a/b/demo.wasm"), None).unwrap();
        assert_eq!(m.name, "demo");
        assert!(m.policy.is_deny_all());
        let m = Manifest::for_component(Path::new("/a/b/demo.wasm"), Some("other")).unwrap();
        assert_eq!(m.name, "other");
    }

    #[test]
    fn explicit_manifest_must_exist() {
        let e = locate_manifest(Some(Path::new("/nonexistent/provider.toml"))).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/provider.toml"));
    }

    #[test]
    fn host_port_forms() {
        assert_eq!(parse_host_port("a.b:1").unwrap(), ("a.b".to_owned(), 1));
        assert_eq!(parse_host_port("[::1]:80").unwrap(), ("::1".to_owned(), 80));
        assert!(parse_host_port("a.b").is_err());
        assert!(parse_host_port(":80").is_err());
        assert!(parse_host_port("a:0").is_err());
    }
}
