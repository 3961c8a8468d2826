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
//! memory_mb = 256             # all memories and tables of an instance together
//! call_timeout_secs = 300     # deadline per call (fractions allowed)
//!
//! [policy.http]               # outbound HTTP (wasi:http/outgoing-handler)
//! allow = ["https://myaccount.blob.core.windows.net", "http://127.0.0.1:10000"]
//! timeout_secs = 30           # per request, at most call_timeout_secs
//! max_response_bytes = 33554432  # response body read per request
//!
//! [policy.azd]                # azd's own services (world 0.2.0)
//! environment = "read"        # "none" (default), "read", "read-write"
//! prompt = true               # may ask the user on azd's terminal
//! credential_scopes = ["https://storage.azure.com/.default"]  # tokens through azd
//! ```
//!
//! Everything in `[policy]` is optional; the default is deny-all.
//!
//! An optional `[build]` section says how `azd-wasm-host build` makes the
//! component: `language` picks a built-in recipe (`rust`, `js`, `python`,
//! `c`), or `command` runs a shell command of the author's (in the manifest's
//! folder) that must write the component. The runtime never reads it.
//!
//! Grants stay inside the project: a path that is absolute or climbs out with
//! `..` is refused unless the grant says `outside_project = true` in so many
//! words. Variables that carry azd's own credentials ([`RESERVED_ENV`]) can
//! never be granted.

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
pub const DEFAULT_CALL_TIMEOUT_SECS: f64 = 300.0;
/// Largest memory limit a 32-bit guest can use (4 GiB).
const MAX_MEMORY_MB: u64 = 4096;
/// Shortest deadline per call (one epoch tick would be meaningless below it).
const MIN_CALL_TIMEOUT_SECS: f64 = 0.001;
/// Longest deadline per call: a week.
const MAX_CALL_TIMEOUT_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// Environment variables no policy may grant: azd's credentials for this
/// extension (`AZD_ACCESS_TOKEN` and the server it opens, `AZD_SERVER`), the
/// key of azd's external credential endpoint, and the secrets Azure tools and
/// CI systems keep in the environment. A provider that needs a cloud token
/// asks for one through a scoped credential, never through these.
pub const RESERVED_ENV: &[&str] = &[
    "AZD_ACCESS_TOKEN",
    "AZD_SERVER",
    "AZD_AUTH_ENDPOINT",
    "AZD_AUTH_KEY",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_PASSWORD",
    "AZURE_FEDERATED_TOKEN",
    "ARM_CLIENT_SECRET",
    "ARM_ACCESS_KEY",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "SYSTEM_ACCESSTOKEN",
    "GITHUB_TOKEN",
    "IDENTITY_HEADER",
    "MSI_SECRET",
];

/// A parsed and checked provider manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The provider name registered with azd (`infra.provider` in `azure.yaml`).
    pub name: String,
    /// Absolute (or manifest-relative, resolved) path of the component.
    pub component: PathBuf,
    /// What the sandbox grants.
    pub policy: Policy,
    /// The manifest file, when the provider came from one (not a bare `.wasm`).
    pub source: Option<PathBuf>,
    /// How `azd-wasm-host build` makes the component (`None`: the manifest
    /// does not say).
    pub build: Option<BuildSettings>,
}

/// The `[build]` section: how `azd-wasm-host build` makes the component.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildSettings {
    /// A built-in recipe: the language the provider is written in.
    #[serde(default)]
    pub language: Option<BuildLanguage>,
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
}

/// The languages `azd-wasm-host build` knows how to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildLanguage {
    /// cargo, for `wasm32-wasip2` (or `wasm32-wasip1`, made a component by the host).
    Rust,
    /// componentize-qjs (npm), pinned in the project's `package.json`.
    Js,
    /// componentize-py (PyPI).
    Python,
    /// wit-bindgen's C bindings, a wasm32-wasi C compiler, made a component by the host.
    C,
}

impl BuildLanguage {
    /// The name `new` and the manifest use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Js => "js",
            Self::Python => "python",
            Self::C => "c",
        }
    }
}

/// What the guest may reach. The default grants nothing.
#[derive(Debug, Clone, PartialEq, Deserialize)]
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
    /// What all memories and tables of one instance may take together, in MiB.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// Deadline per call, in seconds (fractions allowed).
    #[serde(default = "default_call_timeout_secs")]
    pub call_timeout_secs: f64,
    /// Outbound HTTP the guest may make (`[policy.http]`).
    #[serde(default)]
    pub http: HttpGrants,
    /// azd's own services the guest may use (`[policy.azd]`).
    #[serde(default)]
    pub azd: AzdGrants,
}

/// Outbound HTTP through `wasi:http/outgoing-handler`: only to the origins
/// listed, each request bounded in time and in the response bytes it reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpGrants {
    /// `scheme://host[:port]` origins the guest may send requests to. `https`
    /// anywhere (TLS is done by the host, against the Mozilla root store);
    /// plaintext `http` only to a loopback host.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Deadline of one request (connect, first byte, and between bytes), in
    /// seconds; never past the call's own deadline.
    #[serde(default = "default_http_timeout_secs")]
    pub timeout_secs: f64,
    /// The most response-body bytes one request reads; a larger body fails
    /// the read with `HTTP-response-body-size`.
    #[serde(default = "default_http_max_response_bytes")]
    pub max_response_bytes: u64,
}

impl Default for HttpGrants {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            timeout_secs: DEFAULT_HTTP_TIMEOUT_SECS,
            max_response_bytes: DEFAULT_HTTP_MAX_RESPONSE_BYTES,
        }
    }
}

/// Default deadline of one guest HTTP request, in seconds.
pub const DEFAULT_HTTP_TIMEOUT_SECS: f64 = 30.0;
/// Default bound on one response body read by the guest (32 MiB).
pub const DEFAULT_HTTP_MAX_RESPONSE_BYTES: u64 = 32 << 20;

fn default_http_timeout_secs() -> f64 {
    DEFAULT_HTTP_TIMEOUT_SECS
}

fn default_http_max_response_bytes() -> u64 {
    DEFAULT_HTTP_MAX_RESPONSE_BYTES
}

/// An origin of `[policy.http] allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOrigin {
    /// `https` or `http`.
    pub https: bool,
    /// Lower-case host name or IP address (without brackets).
    pub host: String,
    /// The port, explicit or the scheme's.
    pub port: u16,
}

impl HttpOrigin {
    /// Parses `scheme://host[:port]`: no user, path, query or fragment, and
    /// plaintext only to loopback.
    pub fn parse(text: &str) -> Result<Self, String> {
        let uri: http::Uri = text
            .parse()
            .map_err(|_| "is not scheme://host[:port]".to_owned())?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            Some(other) => {
                return Err(format!(
                    "has the scheme `{other}`; use https:// (or http:// to loopback)"
                ));
            }
            None => return Err("has no scheme; write https://host".to_owned()),
        };
        let authority = uri.authority().ok_or("has no host")?;
        if authority.as_str().contains('@') {
            return Err("has user information; only scheme://host[:port] is allowed".to_owned());
        }
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            return Err(
                "has a path or query; grants are by origin, scheme://host[:port]".to_owned(),
            );
        }
        if authority.port_u16() == Some(0) {
            return Err("has port 0".to_owned());
        }
        let Some(origin) = Self::of_uri(&uri).filter(|o| !o.host.is_empty()) else {
            return Err("has no host".to_owned());
        };
        if !https && !is_loopback_host(&origin.host) {
            return Err(format!(
                "is plaintext HTTP to a host that is not loopback; use https://{}",
                authority
            ));
        }
        Ok(origin)
    }

    /// The origin a request URI addresses: `http` or `https`, the host
    /// lower-cased and without brackets, the scheme's port when none is given.
    /// `None` for another scheme or no host.
    pub fn of_uri(uri: &http::Uri) -> Option<Self> {
        let https = match uri.scheme_str()? {
            "https" => true,
            "http" => false,
            _ => return None,
        };
        let host = unbracketed(uri.host()?).to_ascii_lowercase();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        Some(Self { https, host, port })
    }
}

/// Whether `host` (without brackets) is this machine: `localhost`,
/// 127.0.0.0/8 or `::1`.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An IPv6 host as a URI writes it (`[::1]`) without its brackets.
fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// Whether a path starts with a Windows drive (`C:`).
pub(crate) fn has_drive_prefix(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

impl std::fmt::Display for HttpOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

/// What of azd's own services a provider may use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzdGrants {
    /// The azd environment's values.
    #[serde(default)]
    pub environment: EnvironmentAccess,
    /// Questions to the user on azd's terminal.
    #[serde(default)]
    pub prompt: bool,
    /// Scopes the guest may get Azure access tokens for, through azd
    /// (`azd:credentials`), e.g. `https://storage.azure.com/.default`.
    #[serde(default)]
    pub credential_scopes: Vec<String>,
}

/// Access to the azd environment's values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvironmentAccess {
    /// None (the default).
    #[default]
    None,
    /// Read its name and values.
    Read,
    /// Also set values.
    ReadWrite,
}

impl std::fmt::Display for EnvironmentAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Read => "read",
            Self::ReadWrite => "read-write",
        })
    }
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            fs: Vec::new(),
            env: Vec::new(),
            network: Vec::new(),
            memory_mb: DEFAULT_MEMORY_MB,
            call_timeout_secs: DEFAULT_CALL_TIMEOUT_SECS,
            http: HttpGrants::default(),
            azd: AzdGrants::default(),
        }
    }
}

impl Policy {
    /// Whether the policy grants nothing beyond computing.
    pub fn is_deny_all(&self) -> bool {
        self.fs.is_empty()
            && self.env.is_empty()
            && self.network.is_empty()
            && self.http.allow.is_empty()
            && self.azd == AzdGrants::default()
    }

    /// The deadline of one guest HTTP request: `[policy.http] timeout_secs`,
    /// but never longer than a call.
    pub fn http_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.http.timeout_secs.min(self.call_timeout_secs))
    }

    /// The deadline of one call.
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.call_timeout_secs)
    }

    /// The budget of one instance's memories and tables, in bytes.
    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }
}

/// One directory grant.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsGrant {
    /// Path relative to the project directory; `{env}` stands for the azd
    /// environment name. An absolute path, or one that climbs out with `..`,
    /// needs [`FsGrant::outside_project`].
    pub path: String,
    /// What the guest may do there.
    pub access: FsAccess,
    /// The manifest's explicit consent to a directory outside the project.
    #[serde(default)]
    pub outside_project: bool,
}

/// Where a grant points, once `{env}` is filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantLocation {
    /// Beneath the project: a clean relative path with no `.` or `..` (empty
    /// for the project itself).
    Inside(PathBuf),
    /// Outside the project (the grant says `outside_project = true`): as written,
    /// relative paths taken from the project.
    Outside(PathBuf),
}

impl FsGrant {
    /// Where the grant points for the environment `env` (used for `{env}`).
    pub fn locate(&self, env: Option<&str>) -> Result<GrantLocation, String> {
        let path = match (self.path.contains("{env}"), env) {
            (false, _) => self.path.clone(),
            (true, Some(env)) => self.path.replace("{env}", env),
            (true, None) => {
                return Err(format!(
                    "the grant {:?} needs the azd environment name",
                    self.path
                ));
            }
        };
        let path =
            portable_path(&path).map_err(|why| format!("the grant {:?} {why}", self.path))?;
        match inside_path(&path) {
            Some(rel) if !self.outside_project => Ok(GrantLocation::Inside(rel)),
            Some(_) => Err(format!(
                "the grant {:?} says outside_project = true but lies inside the project; \
                 remove outside_project",
                self.path
            )),
            None if self.outside_project => Ok(GrantLocation::Outside(path)),
            None => Err(format!(
                "the grant {:?} points outside the project; only paths inside the project \
                 can be granted, unless the grant says outside_project = true",
                self.path
            )),
        }
    }
}

/// A path as a manifest writes it, for this platform. A manifest travels
/// between Windows and the rest, so `\` separates names on every platform,
/// like `/`. A Windows absolute path (`C:\dir`, `\\server\share`) is absolute
/// only on Windows; elsewhere it is refused rather than read as a folder named
/// `C:`. A drive-relative path (`C:dir`) means a different folder per drive's
/// working directory, and is refused everywhere.
pub(crate) fn portable_path(text: &str) -> Result<PathBuf, String> {
    let slashed = text.replace('\\', "/");
    let has_drive = has_drive_prefix(&slashed);
    if has_drive && slashed.as_bytes().get(2) != Some(&b'/') {
        return Err(
            "names a drive without a folder on it (write C:\\dir, or a project path)".into(),
        );
    }
    let windows_absolute = has_drive || slashed.starts_with("//");
    if windows_absolute && !cfg!(windows) {
        return Err(format!(
            "is a Windows path, and this host runs on {}",
            std::env::consts::OS
        ));
    }
    Ok(PathBuf::from(slashed))
}

/// `path` as a clean path beneath the project, if it stays beneath it: not
/// absolute (nor rooted, nor with a drive), and no `..` that climbs above the
/// start. `a/../b` is `b`; `.` is the project itself (empty).
fn inside_path(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out.iter().collect())
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

fn default_call_timeout_secs() -> f64 {
    DEFAULT_CALL_TIMEOUT_SECS
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: String,
    component: PathBuf,
    #[serde(default)]
    policy: Policy,
    #[serde(default)]
    build: Option<BuildSettings>,
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
        let component = raw
            .component
            .to_str()
            .map_or(Ok(raw.component.clone()), portable_path)
            .map_err(|why| anyhow::anyhow!("{} {why}", at("component")))?;
        Ok(Self {
            name: raw.name,
            component: base.join(component),
            policy: raw.policy,
            source: Some(path.to_path_buf()),
            build: raw.build,
        })
    }

    /// The provider at `path` and its name: a `.wasm` path is a bare component
    /// ([`Manifest::for_component`]), anything else a manifest file. `name`,
    /// when given and not blank, overrides the name either way. This is the one
    /// place a provider's name is decided (`listen`, `check` and `run` use it).
    pub fn resolve(path: &Path, name: Option<&str>) -> anyhow::Result<Self> {
        let is_wasm = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("wasm"));
        if is_wasm {
            return Self::for_component(path, name);
        }
        let mut m = Self::load(path)?;
        if let Some(name) = name.filter(|n| !n.trim().is_empty()) {
            name.clone_into(&mut m.name);
        }
        Ok(m)
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
            build: None,
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
        if !(MIN_CALL_TIMEOUT_SECS..=MAX_CALL_TIMEOUT_SECS).contains(&self.call_timeout_secs) {
            return Err(format!(
                "call_timeout_secs = {} is out of range ({MIN_CALL_TIMEOUT_SECS}..={MAX_CALL_TIMEOUT_SECS})",
                self.call_timeout_secs
            ));
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
            // `{env}` is one directory name (checked when it is filled in), so
            // any placeholder stands for the check here.
            grant
                .locate(Some("env"))
                .map_err(|why| format!("fs: {why}"))?;
        }
        for name in &self.env {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(format!("env: {name:?} is not an environment variable name"));
            }
            if let Some(reserved) = RESERVED_ENV.iter().find(|r| r.eq_ignore_ascii_case(name)) {
                return Err(format!(
                    "env: {reserved} can never be granted: it carries azd's or the cloud's \
                     credentials (reserved: {})",
                    RESERVED_ENV.join(", ")
                ));
            }
        }
        for dest in &self.network {
            parse_host_port(dest).map_err(|why| format!("network: {dest:?} {why}"))?;
        }
        for scope in &self.azd.credential_scopes {
            check_scope(scope).map_err(|why| format!("azd.credential_scopes: {scope:?} {why}"))?;
        }
        self.http.check()
    }
}

/// A token scope as Entra ID names one: an `https://` resource URI ending in
/// `/.default` (or another permission), with nothing a command line could
/// misread.
fn check_scope(scope: &str) -> Result<(), &'static str> {
    let rest = scope
        .strip_prefix("https://")
        .ok_or("is not an https:// scope (e.g. https://management.azure.com/.default)")?;
    if !rest.contains('/') || rest.starts_with('/') {
        return Err("names no resource and permission (e.g. https://storage.azure.com/.default)");
    }
    if scope
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\')
    {
        return Err("holds spaces, quotes or control characters");
    }
    Ok(())
}

impl HttpGrants {
    /// Checks the origins and the bounds. Returns the message.
    fn check(&self) -> Result<(), String> {
        for origin in &self.allow {
            HttpOrigin::parse(origin).map_err(|why| format!("http.allow: {origin:?} {why}"))?;
        }
        let http = self;
        if !(http.timeout_secs > 0.0 && http.timeout_secs <= MAX_CALL_TIMEOUT_SECS) {
            return Err(format!(
                "http.timeout_secs = {} is out of range (above 0, at most {MAX_CALL_TIMEOUT_SECS})",
                http.timeout_secs
            ));
        }
        if http.max_response_bytes == 0 || http.max_response_bytes > MAX_MEMORY_MB << 20 {
            return Err(format!(
                "http.max_response_bytes = {} is out of range (1..={})",
                http.max_response_bytes,
                MAX_MEMORY_MB << 20
            ));
        }
        Ok(())
    }
}

/// Splits `host:port` (IPv6 hosts in brackets). The error says what is wrong.
pub fn parse_host_port(dest: &str) -> Result<(String, u16), &'static str> {
    let authority: http::uri::Authority = dest.parse().map_err(|_| "is not host:port")?;
    if authority.as_str().contains('@') {
        return Err("has user information; only host:port is allowed");
    }
    let port = match authority.port_u16() {
        None => return Err("is not host:port (the port is required)"),
        Some(0) => return Err("has a port that is not 1..=65535"),
        Some(p) => p,
    };
    let host = unbracketed(authority.host());
    if host.is_empty() {
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
            "provider manifest {} (from --manifest or {ENV_MANIFEST}) does not exist",
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
    fn timeouts_take_fractions_and_integers() {
        let policy = |body: &str| {
            parse(&format!(
                "name = \"x\"\ncomponent = \"c\"\n[policy]\n{body}\n"
            ))
        };
        let m = policy("call_timeout_secs = 0.25").unwrap();
        assert_eq!(
            m.policy.call_timeout(),
            std::time::Duration::from_millis(250)
        );
        assert_eq!(
            policy("call_timeout_secs = 30")
                .unwrap()
                .policy
                .call_timeout_secs,
            30.0
        );
        for bad in ["0", "-1", "0.0001", "nan", "inf", "1e9"] {
            let e = format!(
                "{:#}",
                policy(&format!("call_timeout_secs = {bad}")).unwrap_err()
            );
            assert!(e.contains("call_timeout_secs"), "{bad}: {e}");
        }
    }

    #[test]
    fn grants_stay_inside_the_project_unless_the_manifest_consents() {
        let grant = |path: &str, outside: bool| FsGrant {
            path: path.into(),
            access: FsAccess::Read,
            outside_project: outside,
        };
        let inside = |p: &str| GrantLocation::Inside(PathBuf::from(p));
        assert_eq!(grant(".", false).locate(None).unwrap(), inside(""));
        assert_eq!(
            grant("a/./b/../c", false).locate(None).unwrap(),
            inside("a/c")
        );
        assert_eq!(
            grant(".azure/{env}", false).locate(Some("dev")).unwrap(),
            inside(".azure/dev")
        );
        for outside in ["/etc", "..", "../x", "a/../../x"] {
            let e = grant(outside, false).locate(None).unwrap_err();
            assert!(e.contains("outside_project = true"), "{outside}: {e}");
            assert_eq!(
                grant(outside, true).locate(None).unwrap(),
                GrantLocation::Outside(PathBuf::from(outside))
            );
        }
        let e = grant("inside", true).locate(None).unwrap_err();
        assert!(e.contains("lies inside the project"), "{e}");
        assert!(grant(".azure/{env}", false).locate(None).is_err());
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nfs = [{ path = \"/etc\", access = \"read\" }]\n")
                .unwrap_err()
        );
        assert!(e.contains("outside the project"), "{e}");
    }

    #[test]
    fn manifest_paths_read_the_same_on_every_platform() {
        let grant = |path: &str, outside: bool| FsGrant {
            path: path.into(),
            access: FsAccess::Read,
            outside_project: outside,
        };
        let inside = |p: &str| GrantLocation::Inside(PathBuf::from(p));
        // Backslashes separate names, as on Windows, and still cannot climb out.
        assert_eq!(
            grant(".azure\\{env}", false).locate(Some("dev")).unwrap(),
            inside(".azure/dev")
        );
        assert_eq!(
            grant("a\\.\\b\\..\\c", false).locate(None).unwrap(),
            inside("a/c")
        );
        for climbs in ["..\\x", "a\\..\\..\\x", "\\etc"] {
            let e = grant(climbs, false).locate(None).unwrap_err();
            assert!(e.contains("outside_project = true"), "{climbs}: {e}");
        }
        // A drive with no folder on it is refused everywhere.
        let e = grant("C:data", true).locate(None).unwrap_err();
        assert!(e.contains("names a drive without a folder"), "{e}");
        for windows in [
            "C:\\Users\\me",
            "c:/data",
            "\\\\server\\share\\x",
            "//server/share",
        ] {
            let got = grant(windows, true).locate(None);
            if cfg!(windows) {
                assert!(
                    matches!(got, Ok(GrantLocation::Outside(_))),
                    "{windows}: {got:?}"
                );
            } else {
                let e = got.unwrap_err();
                assert!(e.contains("is a Windows path"), "{windows}: {e}");
            }
            // Never inside the project, on any platform.
            assert!(grant(windows, false).locate(None).is_err(), "{windows}");
        }
        let m = parse("name = \"x\"\ncomponent = \"build\\\\x.wasm\"\n").unwrap();
        assert_eq!(m.component, Path::new("/p/build/x.wasm"));
    }

    #[test]
    fn credentials_can_never_be_granted() {
        for name in RESERVED_ENV {
            let text = format!(
                "name = \"x\"\ncomponent = \"c\"\n[policy]\nenv = [\"{}\"]\n",
                name.to_lowercase()
            );
            let e = format!("{:#}", parse(&text).unwrap_err());
            assert!(
                e.contains(name) && e.contains("can never be granted"),
                "{e}"
            );
        }
        assert!(
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nenv = [\"AZURE_SUBSCRIPTION_ID\"]\n")
                .is_ok()
        );
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
        assert!(parse_host_port("a:99999").is_err());
        assert!(parse_host_port("u@a:1").is_err());
        assert!(parse_host_port("a b:1").is_err());
    }
}
