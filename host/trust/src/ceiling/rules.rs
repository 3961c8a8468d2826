//! What one ceiling file says, read and checked: its schema (serde's, every
//! table closed to unknown keys) and each pattern parsed, so that a file
//! that says something this host would not enforce is refused whole.

use std::path::{Path, PathBuf};

use azd_wasm_host_manifest::{EnvironmentAccess, FsAccess};
use serde::Deserialize;

use super::pattern::{DestinationPattern, NamePattern, OriginPattern, canonical_scope};
use crate::PublicKey;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    #[serde(default)]
    signers: RawSigners,
    #[serde(default)]
    providers: RawProviders,
    #[serde(default)]
    consent: RawConsent,
    #[serde(default)]
    grants: RawGrants,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSigners {
    keys: Option<Vec<String>>,
    unsigned: Option<bool>,
    development: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProviders {
    allow_names: Option<Vec<String>>,
    block_names: Option<Vec<String>>,
    allow_extensions: Option<Vec<String>>,
    block_extensions: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConsent {
    prompt: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrants {
    fs: Option<Vec<RawFs>>,
    env: Option<Vec<String>>,
    network: Option<Vec<String>>,
    memory_mb: Option<u64>,
    call_timeout_secs: Option<f64>,
    disk_mb: Option<u64>,
    #[serde(default)]
    http: RawHttp,
    #[serde(default)]
    azd: RawAzd,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFs {
    path: String,
    access: FsAccess,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    allow: Option<Vec<String>>,
    timeout_secs: Option<f64>,
    max_response_bytes: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAzd {
    environment: Option<EnvironmentAccess>,
    prompt: Option<bool>,
    credential_scopes: Option<Vec<String>>,
}

/// One file's rules. `None` everywhere is "this file sets no ceiling here".
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub(crate) signers: Signers,
    pub(crate) providers: Providers,
    /// `[consent] prompt`: whether consent may be given at azd's prompt.
    pub(crate) consent_prompt: Option<bool>,
    pub(crate) grants: Grants,
}

/// `[signers]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Signers {
    /// The keys whose providers may run, by whole id (with the file a key was read from).
    pub(crate) keys: Option<Vec<(String, Option<PathBuf>)>>,
    /// Whether a provider no trusted key verifies may run at all.
    pub(crate) unsigned: Option<bool>,
    /// Whether a provider run from a folder, not installed, may run unsigned.
    pub(crate) development: Option<bool>,
}

impl Signers {
    /// Whether a provider run from its folder, unsigned, may run: unless
    /// `development = false`, or, left unsaid, the file names its signers
    /// or refuses unverified providers (an unsigned provider from a folder is
    /// no listed key's and is unverified).
    pub(crate) fn allow_development(&self) -> bool {
        self.development
            .unwrap_or(self.keys.is_none() && self.unsigned != Some(false))
    }
}

/// `[providers]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Providers {
    pub(crate) allow_names: Option<Vec<NamePattern>>,
    pub(crate) block_names: Option<Vec<NamePattern>>,
    pub(crate) allow_extensions: Option<Vec<NamePattern>>,
    pub(crate) block_extensions: Option<Vec<NamePattern>>,
}

/// `[grants]`: the most a provider's `[policy]` may grant, key by key.
#[derive(Debug, Clone, Default)]
pub(crate) struct Grants {
    pub(crate) fs: Option<Vec<FsCeiling>>,
    pub(crate) env: Option<Vec<NamePattern>>,
    pub(crate) network: Option<Vec<DestinationPattern>>,
    pub(crate) memory_mb: Option<u64>,
    pub(crate) call_timeout_secs: Option<f64>,
    pub(crate) disk_mb: Option<u64>,
    pub(crate) http_allow: Option<Vec<OriginPattern>>,
    pub(crate) http_timeout_secs: Option<f64>,
    pub(crate) http_max_response_bytes: Option<u64>,
    pub(crate) azd_environment: Option<EnvironmentAccess>,
    pub(crate) azd_prompt: Option<bool>,
    pub(crate) azd_credential_scopes: Option<Vec<String>>,
}

/// A ceiling's rule for one `[policy]` key, as the judge applies it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rule<'a> {
    Directories(&'a [FsCeiling]),
    Variables(&'a [NamePattern]),
    Destinations(&'a [DestinationPattern]),
    Origins(&'a [OriginPattern]),
    Scopes(&'a [String]),
    Environment(EnvironmentAccess),
    Leave(bool),
    Limit(f64),
}

impl Grants {
    /// Every field of the ceiling's `[grants]`, under the key of the
    /// `[policy]` field it bounds; `None` where this file sets no ceiling.
    /// Destructured without `..`: a field added here does not compile until
    /// it is listed.
    pub(crate) fn rules(&self) -> [(&'static str, Option<Rule<'_>>); 12] {
        let Grants {
            fs,
            env,
            network,
            memory_mb,
            call_timeout_secs,
            disk_mb,
            http_allow,
            http_timeout_secs,
            http_max_response_bytes,
            azd_environment,
            azd_prompt,
            azd_credential_scopes,
        } = self;
        let limit = |v: Option<f64>| v.map(Rule::Limit);
        [
            ("fs", fs.as_deref().map(Rule::Directories)),
            ("env", env.as_deref().map(Rule::Variables)),
            ("network", network.as_deref().map(Rule::Destinations)),
            ("http.allow", http_allow.as_deref().map(Rule::Origins)),
            (
                "azd.credential_scopes",
                azd_credential_scopes.as_deref().map(Rule::Scopes),
            ),
            ("azd.environment", azd_environment.map(Rule::Environment)),
            ("azd.prompt", azd_prompt.map(Rule::Leave)),
            ("memory_mb", limit(memory_mb.map(|v| v as f64))),
            ("call_timeout_secs", limit(*call_timeout_secs)),
            ("disk_mb", limit(disk_mb.map(|v| v as f64))),
            ("http.timeout_secs", limit(*http_timeout_secs)),
            (
                "http.max_response_bytes",
                limit(http_max_response_bytes.map(|v| v as f64)),
            ),
        ]
    }
}

/// The most of one folder: it and everything beneath it, with at most `access`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FsCeiling {
    pub(crate) path: GrantPath,
    pub(crate) access: FsAccess,
    /// As the file writes it.
    pub(crate) written: String,
}

impl FsCeiling {
    /// Whether the folder the system resolved, `real`, lies at or beneath
    /// this entry resolved the same way (relative to `project`), with no
    /// more than its access.
    pub(crate) fn admits(&self, project: &Path, real: &Path, access: FsAccess) -> bool {
        if self.access == FsAccess::Read && access == FsAccess::ReadWrite {
            return false;
        }
        let written = PathBuf::from(self.written.replace('\\', "/"));
        let full = if written.is_absolute() {
            written
        } else {
            project.join(written)
        };
        std::fs::canonicalize(full).is_ok_and(|mine| real.starts_with(mine))
    }
}

/// A folder as compared: its root (none for a relative path, `/`, a
/// Windows drive `C:`, or `//` for a UNC share) and its names with `.` and
/// `..` resolved (`..` kept only where it climbs above a relative start),
/// compared as written: a case-insensitive file system makes a grant in
/// another case a refusal, never a folder the ceiling did not name.
/// `{env}` is a name like any other, so it matches only `{env}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GrantPath {
    pub(crate) root: String,
    pub(crate) names: Vec<String>,
}

impl GrantPath {
    /// `text` as a manifest writes a path (`\` or `/`), resolved lexically.
    pub(crate) fn of(text: &str) -> Self {
        let slashed = text.replace('\\', "/");
        let bytes = slashed.as_bytes();
        let (root, rest) = if let Some(rest) = slashed.strip_prefix("//") {
            ("//".to_owned(), rest)
        } else if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            (slashed[..2].to_ascii_uppercase(), &slashed[2..])
        } else if let Some(rest) = slashed.strip_prefix('/') {
            ("/".to_owned(), rest)
        } else {
            (String::new(), slashed.as_str())
        };
        let absolute = !root.is_empty();
        let mut names: Vec<String> = Vec::new();
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => match names.last() {
                    Some(last) if last != ".." => {
                        names.pop();
                    }
                    _ if absolute => {}
                    _ => names.push("..".to_owned()),
                },
                _ => names.push(part.to_owned()),
            }
        }
        Self { root, names }
    }

    /// Whether this folder is `other` or lies beneath it.
    pub(crate) fn within(&self, other: &Self) -> bool {
        self.root == other.root && self.names.starts_with(&other.names)
    }

    /// Whether the path leaves the project: rooted, or climbing above it.
    pub(crate) fn outside(&self) -> bool {
        !self.root.is_empty() || self.names.first().is_some_and(|n| n == "..")
    }
}

/// Whether environment variable names are compared without regard to case here.
pub(crate) const FOLD_VARIABLES: bool = cfg!(windows);

impl Rules {
    /// Reads `text`, the file at `path`. The error names what is wrong.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let raw: RawRules = toml::from_str(text).map_err(|e| located(text, &e))?;
        Ok(Self {
            signers: Signers {
                keys: raw
                    .signers
                    .keys
                    .map(|keys| keys.iter().map(|k| key_of(k)).collect())
                    .transpose()?,
                unsigned: raw.signers.unsigned,
                development: raw.signers.development,
            },
            providers: Providers {
                allow_names: names("providers.allow_names", raw.providers.allow_names, true)?,
                block_names: names("providers.block_names", raw.providers.block_names, true)?,
                allow_extensions: names(
                    "providers.allow_extensions",
                    raw.providers.allow_extensions,
                    true,
                )?,
                block_extensions: names(
                    "providers.block_extensions",
                    raw.providers.block_extensions,
                    true,
                )?,
            },
            consent_prompt: raw.consent.prompt,
            grants: grants(raw.grants)?,
        })
    }
}

/// A parse error as its line, column and message, never the file's text
/// (a file that is not a policy at all may hold anything).
fn located(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
            format!("line {line}, column {column}: {}", e.message())
        }
        None => e.message().to_owned(),
    }
}

fn grants(raw: RawGrants) -> Result<Grants, String> {
    let positive = |key: &str, v: Option<f64>| match v {
        Some(v) if !(v.is_finite() && v > 0.0) => {
            Err(format!("grants.{key} = {v} is not a positive number"))
        }
        _ => Ok(v),
    };
    Ok(Grants {
        fs: raw
            .fs
            .map(|list| {
                list.into_iter()
                    .map(|f| {
                        if f.path.trim().is_empty() {
                            return Err(
                                "grants.fs: a path is empty (`.` is the project)".to_owned()
                            );
                        }
                        Ok(FsCeiling {
                            path: GrantPath::of(&f.path),
                            access: f.access,
                            written: f.path,
                        })
                    })
                    .collect()
            })
            .transpose()?,
        env: names("grants.env", raw.env, FOLD_VARIABLES)?,
        network: parsed("grants.network", raw.network, DestinationPattern::parse)?,
        memory_mb: raw.memory_mb,
        call_timeout_secs: positive("call_timeout_secs", raw.call_timeout_secs)?,
        disk_mb: raw.disk_mb,
        http_allow: parsed("grants.http.allow", raw.http.allow, OriginPattern::parse)?,
        http_timeout_secs: positive("http.timeout_secs", raw.http.timeout_secs)?,
        http_max_response_bytes: raw.http.max_response_bytes,
        azd_environment: raw.azd.environment,
        azd_prompt: raw.azd.prompt,
        azd_credential_scopes: raw
            .azd
            .credential_scopes
            .map(|s| s.iter().map(|s| canonical_scope(s)).collect()),
    })
}

fn names(
    key: &str,
    list: Option<Vec<String>>,
    fold: bool,
) -> Result<Option<Vec<NamePattern>>, String> {
    parsed(key, list, |t| NamePattern::parse(t, fold))
}

fn parsed<T>(
    key: &str,
    list: Option<Vec<String>>,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<Vec<T>>, String> {
    list.map(|list| {
        list.iter()
            .map(|t| {
                parse(t)
                    .map_err(|why| format!("{key}: {} {why}", azd_wasm_host_core::text::shown(t)))
            })
            .collect()
    })
    .transpose()
}

/// A signer: a key's whole id (64 hex digits), or the absolute path of its
/// public key (`.pub`, PEM), read now; a short id is refused (16 hex digits
/// can be matched by another key with enough work).
fn key_of(text: &str) -> Result<(String, Option<PathBuf>), String> {
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok((text.to_ascii_lowercase(), None));
    }
    if text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "signers.keys: {text} is a short key id; write the whole id (64 hex digits, \
             `azd-wasm-host policy show` prints it for a key file) or the key's .pub file"
        ));
    }
    let path = Path::new(text);
    if !path.is_absolute() {
        return Err(format!(
            "signers.keys: {} is neither a key id (64 hex digits) nor the absolute path of a \
             public key file",
            azd_wasm_host_core::text::shown(text)
        ));
    }
    azd_wasm_host_core::files::only_owner_may_change(path).map_err(|why| {
        format!(
            "signers.keys: {}: {why} (a key the policy trusts is held as the policy is)",
            path.display()
        )
    })?;
    let pem = std::fs::read_to_string(path)
        .map_err(|e| format!("signers.keys: cannot read {}: {e}", path.display()))?;
    let key = PublicKey::from_pem(&pem).map_err(|e| {
        format!(
            "signers.keys: {}: {}",
            path.display(),
            azd_wasm_host_core::report::chain(&e)
        )
    })?;
    Ok((key.id(), Some(path.to_path_buf())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_keeps_its_root_and_resolves_dots_lexically() {
        let of = GrantPath::of;
        assert!(!of("//srv/share/x").within(&of("/srv/share")));
        assert!(!of("/srv/share/x").within(&of("//srv/share")));
        assert!(of("c:\\data\\x").within(&of("C:/data")));
        assert!(!of("C:/data").within(&of("D:/data")));
        assert_eq!(of("/a/../../b"), of("/b"));
        assert_eq!(of("a/../../b").names, ["..", "b"]);
        assert!(of("a/../../b").outside() && !of("a/./b").outside());
        assert!(!of("Out").within(&of("out")));
    }
}
