//! The `[policy]` section: what a provider's sandbox may reach, its defaults
//! (deny-all), and the checks serde cannot make (ranges, formats, reserved
//! variables, grants that leave the project).

use std::path::PathBuf;

use azd_wasm_host_core::authority::{HttpOrigin, parse_host_port};
use azd_wasm_host_core::text::shown;
use serde::Deserialize;

use super::paths::{inside_path, portable_path};

/// Default linear-memory limit per instance, in MiB.
pub(super) const DEFAULT_MEMORY_MB: u64 = 256;
/// Default deadline per call, in seconds.
pub(super) const DEFAULT_CALL_TIMEOUT_SECS: f64 = 300.0;
/// Default bound on what one instance may write into its read-write grants, in MiB.
pub(super) const DEFAULT_DISK_MB: u64 = 64;
/// Largest disk bound (1 TiB).
const MAX_DISK_MB: u64 = 1 << 20;
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
pub(super) const RESERVED_ENV: &[&str] = &[
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
    /// What one instance may write into its read-write grants, in MiB: new
    /// files and folders, and growth of files (a write past this fails with
    /// WASI's no-space error).
    #[serde(default = "default_disk_mb")]
    pub disk_mb: u64,
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
pub(super) const DEFAULT_HTTP_TIMEOUT_SECS: f64 = 30.0;
/// Default bound on one response body read by the guest (32 MiB).
pub(super) const DEFAULT_HTTP_MAX_RESPONSE_BYTES: u64 = 32 << 20;

fn default_http_timeout_secs() -> f64 {
    DEFAULT_HTTP_TIMEOUT_SECS
}

fn default_http_max_response_bytes() -> u64 {
    DEFAULT_HTTP_MAX_RESPONSE_BYTES
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
            disk_mb: DEFAULT_DISK_MB,
            http: HttpGrants::default(),
            azd: AzdGrants::default(),
        }
    }
}

impl Policy {
    /// The deadline of one guest HTTP request: `[policy.http] timeout_secs`,
    /// but never longer than a call.
    pub fn http_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.http.timeout_secs.min(self.call_timeout_secs))
    }

    /// The deadline of one call.
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.call_timeout_secs)
    }

    /// What one instance may write into its read-write grants, in bytes.
    pub fn disk_bytes(&self) -> u64 {
        self.disk_mb.saturating_mul(1024 * 1024)
    }

    /// Whether some directory is granted read-write (so that `disk_mb` matters).
    pub fn writes_files(&self) -> bool {
        self.fs.iter().any(|g| g.access == FsAccess::ReadWrite)
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
    /// Whether the grant's path names the azd environment (`{env}`), so that
    /// it cannot be located without it.
    pub fn names_environment(&self) -> bool {
        self.path.contains("{env}")
    }

    /// Where the grant points for the environment `env` (used for `{env}`).
    pub fn locate(&self, env: Option<&str>) -> Result<GrantLocation, String> {
        let path = match (self.names_environment(), env) {
            (false, _) => self.path.clone(),
            (true, Some(env)) => self.path.replace("{env}", env),
            (true, None) => {
                return Err(format!(
                    "the grant {} needs the azd environment name",
                    shown(&self.path)
                ));
            }
        };
        let path =
            portable_path(&path).map_err(|why| format!("the grant {} {why}", shown(&self.path)))?;
        match inside_path(&path) {
            Some(rel) if !self.outside_project => Ok(GrantLocation::Inside(rel)),
            Some(_) => Err(format!(
                "the grant {} says outside_project = true but lies inside the project; \
                 remove outside_project",
                shown(&self.path)
            )),
            None if self.outside_project => Ok(GrantLocation::Outside(path)),
            None => Err(format!(
                "the grant {} points outside the project; only paths inside the project \
                 can be granted, unless the grant says outside_project = true",
                shown(&self.path)
            )),
        }
    }
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

fn default_disk_mb() -> u64 {
    DEFAULT_DISK_MB
}

impl Policy {
    /// Checks values serde cannot: ranges and formats. Returns the message.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.memory_mb == 0 || self.memory_mb > MAX_MEMORY_MB {
            return Err(format!(
                "memory_mb = {} is out of range (1..={MAX_MEMORY_MB})",
                self.memory_mb
            ));
        }
        if self.disk_mb == 0 || self.disk_mb > MAX_DISK_MB {
            return Err(format!(
                "disk_mb = {} is out of range (1..={MAX_DISK_MB})",
                self.disk_mb
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
                    "fs: path {} has a placeholder other than {{env}}",
                    shown(&grant.path)
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
                return Err(format!(
                    "env: {} is not an environment variable name",
                    shown(name)
                ));
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
            parse_host_port(dest).map_err(|why| format!("network: {} {why}", shown(dest)))?;
        }
        for scope in &self.azd.credential_scopes {
            check_scope(scope)
                .map_err(|why| format!("azd.credential_scopes: {} {why}", shown(scope)))?;
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
    pub(super) fn check(&self) -> Result<(), String> {
        for origin in &self.allow {
            HttpOrigin::parse(origin)
                .map_err(|why| format!("http.allow: {} {why}", shown(origin)))?;
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
