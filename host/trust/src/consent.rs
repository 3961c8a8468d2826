//! Consent: no capability without the user's yes.
//!
//! For each provider the trust folder keeps the manifest the user last let
//! run, under who it is: the key that signed it, the azd extension it is
//! installed as and its name ([`Identity`]; `consent/<name>-<digest>.toml`, the
//! digest of all three, each compared again when the record is read). A
//! provider renamed, shipped by another extension or signed by another key
//! is another provider and inherits nothing. [`check`] compares the manifest
//! about to run with the record ([`PolicyDiff`]):
//! - no record yet: compared with the deny-all default. A provider that asks
//!   for nothing beyond it is recorded and runs; one that asks for anything
//!   (a directory, a variable, an origin, a higher limit, …) is asked about
//!   like an update, with the full list of its grants;
//! - nothing more than the record (the same, or fewer grants): it runs, and
//!   the record follows it, so a grant dropped and later asked for again is
//!   asked;
//! - more: [`Consent::Asks`], which the caller puts to the user (or refuses
//!   with, under `--no-prompt`) and [`Pending::approve`]s on a yes.
//!
//! What a question, a refusal or `approve` says of the provider (its name,
//! version, extension, key and grants) is quoted by `text::shown`: bare when
//! a plain token, else quoted with every control or invisible character
//! escaped, whatever the strings hold (a record or a pending grant made
//! without the manifest's checks too).
use std::path::{Path, PathBuf};

use azd_wasm_host_core::text::shown;
use azd_wasm_host_manifest::{Manifest, Policy, PolicyDiff};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::error::{ConsentError, StoreError};
use crate::store::TrustDir;

/// Who a provider is, for consent: all three must match a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The id of the key that signed it (`unsigned` when it runs unverified).
    pub key: String,
    /// The id of the azd extension it is installed as: the extension azd
    /// installed (its folder's name), never what a signature claims.
    pub extension: String,
    /// The provider's name.
    pub provider: String,
}

/// What the record says the user allowed.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    key: String,
    extension: String,
    provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    /// `provider.toml` as it was allowed.
    manifest: String,
}

/// Whether a provider may run with what its manifest grants.
#[derive(Debug)]
pub enum Consent {
    /// First seen, asking for nothing beyond the deny-all default: recorded.
    FirstSeen,
    /// It asks for nothing the user has not allowed.
    Allowed,
    /// It asks for more than the user allowed: not to run until approved.
    Asks(Box<Pending>),
}

/// Grants a provider asks for that the user has not allowed yet.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Who asks.
    pub identity: Identity,
    /// Its version, when signed.
    pub version: Option<String>,
    /// The version the user last allowed, when known.
    pub allowed_version: Option<String>,
    /// Whether the user never allowed this provider anything yet.
    pub first: bool,
    /// What it asks for beyond what was allowed (and what it no longer asks for).
    pub diff: PolicyDiff,
    record: PathBuf,
    text: String,
}

/// Compares the manifest at `manifest_path` (the provider `identity` at
/// `version`) with what the user last allowed it.
pub fn check(
    trust: &TrustDir,
    manifest_path: &Path,
    identity: &Identity,
    version: Option<&str>,
) -> Result<Consent, ConsentError> {
    trust.check_private().map_err(StoreError::from)?;
    let text = std::fs::read_to_string(manifest_path).map_err(|source| StoreError::Read {
        path: manifest_path.to_path_buf(),
        source,
    })?;
    let manifest = Manifest::parse(&text, manifest_path)?;
    if manifest.name != identity.provider {
        return Err(ConsentError::OtherProvider {
            path: manifest_path.to_path_buf(),
            is: manifest.name,
            expected: identity.provider.clone(),
        });
    }
    let record = record_path(trust, identity);
    let previous = recorded(&record, identity)?;
    let (allowed, allowed_version) = match &previous {
        Some(p) => (
            Manifest::policy_of(&p.manifest, manifest_path).map_err(|source| {
                ConsentError::Recorded {
                    path: record.clone(),
                    source,
                }
            })?,
            p.version.clone(),
        ),
        None => (Policy::default(), None),
    };
    let pending = Pending {
        identity: identity.clone(),
        version: version.map(str::to_owned),
        allowed_version,
        first: previous.is_none(),
        diff: PolicyDiff::between(&allowed, &manifest.policy),
        record,
        text,
    };
    if !pending.diff.asks_for_nothing_more() {
        return Ok(Consent::Asks(Box::new(pending)));
    }
    match previous {
        None => {
            pending.approve()?;
            Ok(Consent::FirstSeen)
        }
        Some(p) => {
            if p.manifest != pending.text || p.version != pending.version {
                pending.approve()?;
            }
            Ok(Consent::Allowed)
        }
    }
}

/// What `record` says the user last allowed `identity`, if it is a record of that provider.
fn recorded(record: &Path, identity: &Identity) -> Result<Option<Record>, ConsentError> {
    let text = match std::fs::read_to_string(record) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Read {
                path: record.to_path_buf(),
                source,
            }
            .into());
        }
    };
    let parsed: Record = toml::from_str(&text).map_err(|source| ConsentError::NotARecord {
        path: record.to_path_buf(),
        source,
    })?;
    // Another provider's record under this one's name is no record of it.
    let same = parsed.key == identity.key
        && parsed.extension == identity.extension
        && parsed.provider == identity.provider;
    Ok(same.then_some(parsed))
}

impl Pending {
    /// Records what the provider asks for as allowed.
    pub fn approve(&self) -> Result<(), StoreError> {
        let record = Record {
            key: self.identity.key.clone(),
            extension: self.identity.extension.clone(),
            provider: self.identity.provider.clone(),
            version: self.version.clone(),
            manifest: self.text.clone(),
        };
        let dir = self.record.parent().unwrap_or(Path::new("."));
        azd_wasm_host_core::files::create_private_dir(dir).map_err(|source| {
            StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            }
        })?;
        let body = format!(
            "# The grants of provider {} the user allowed (azd-wasm-host); delete to be asked afresh.\n{}",
            shown(&self.identity.provider),
            toml::to_string(&record).map_err(|source| StoreError::Encode {
                path: self.record.clone(),
                source,
            })?
        );
        // Written aside and renamed: a reader (another azd command) sees the old record or the new.
        let write = |source| StoreError::Write {
            path: self.record.clone(),
            source,
        };
        let mut aside = tempfile::NamedTempFile::new_in(dir).map_err(write)?;
        std::io::Write::write_all(&mut aside, body.as_bytes()).map_err(write)?;
        aside.persist(&self.record).map_err(|e| write(e.error))?;
        Ok(())
    }

    /// `provider `x` 1.3.0`.
    pub fn who(&self) -> String {
        let name = shown(&self.identity.provider);
        match &self.version {
            Some(v) => format!("provider `{name}` {}", shown(v)),
            None => format!("provider `{name}`"),
        }
    }

    /// Who it is in full: `provider `x` 1.3.0 (extension local.x, signed by key 3f2a…)`.
    pub fn who_in_full(&self) -> String {
        let extension = if self.identity.extension.is_empty() {
            "extension unknown".to_owned()
        } else {
            format!("extension {}", shown(&self.identity.extension))
        };
        let key = match self.identity.key.as_str() {
            UNSIGNED => "not signed".to_owned(),
            key => format!("signed by key {}", shown(key.get(..16).unwrap_or(key))),
        };
        format!("{} ({extension}, {key})", self.who())
    }

    /// The grants asked for, one per line, each `  + …`.
    pub fn lines(&self) -> String {
        self.diff
            .more
            .iter()
            .map(|m| format!("  + {m}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The question put to the user.
    pub fn question(&self) -> String {
        if self.first {
            format!(
                "{} runs here for the first time and asks for: {}. Allow?",
                self.who_in_full(),
                self.diff.more.join("; ")
            )
        } else {
            format!(
                "{} also asks for: {}. Allow?",
                self.who(),
                self.diff.more.join("; ")
            )
        }
    }

    /// Why it does not run until allowed: `asks for more than you allowed
    /// for 1.2.0`, or, the first time, what it is and that it asks at all.
    pub fn why(&self) -> String {
        match (&self.allowed_version, self.first) {
            (_, true) => format!(
                "{} runs here for the first time and asks for more than the deny-all default",
                self.who_in_full()
            ),
            (Some(v), false) => format!(
                "{} asks for more than you allowed for {}",
                self.who(),
                shown(v)
            ),
            (None, false) => format!("{} asks for more than you allowed before", self.who()),
        }
    }
}

/// The key id of a provider that runs unverified (unsigned providers allowed).
pub const UNSIGNED: &str = "unsigned";

/// `consent/<name>-<digest>.toml`: the name for a reader (only
/// `[A-Za-z0-9._-]` kept), the digest of the whole identity (exact bytes, so
/// names that differ in case or in other characters never share a file,
/// even on a disk that ignores case).
fn record_path(trust: &TrustDir, identity: &Identity) -> PathBuf {
    let readable: String = identity
        .provider
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect::<String>()
        .to_ascii_lowercase();
    let mut h = sha2::Sha256::new();
    for part in [&identity.key, &identity.extension, &identity.provider] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let digest = hex::encode(&h.finalize()[..16]);
    trust
        .consent_dir()
        .join(format!("{}-{digest}.toml", readable.trim_matches('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(key: &str, extension: &str, provider: &str) -> Identity {
        Identity {
            key: key.into(),
            extension: extension.into(),
            provider: provider.into(),
        }
    }

    /// A pending consent made without any check (as a record read back, or a
    /// bug, could make one): every string holds what spoofs a terminal.
    fn hostile(first: bool) -> Pending {
        let mut policy = Policy::default();
        policy.fs.push(azd_wasm_host_manifest::FsGrant {
            path: "certs\u{1b}[1A\u{1b}[2K".into(),
            access: azd_wasm_host_manifest::FsAccess::ReadWrite,
            outside_project: false,
        });
        policy.env.push("HOME\r  + nothing else".into());
        policy.env.push("PATH\n  + directory / (read-write)".into());
        policy
            .http
            .allow
            .push("https://evil.example\u{202e}moc.elgoog".into());
        policy.network.push("db\u{200b}:5432".into());
        Pending {
            identity: id(
                "0123456789abcdef\u{1b}]0;x\u{7}",
                "local.x\u{2066}",
                "todo\u{1b}[2K",
            ),
            version: Some("1.0.0\u{2028}".into()),
            allowed_version: Some("0.9\u{feff}".into()),
            first,
            diff: PolicyDiff::between(&Policy::default(), &policy),
            record: PathBuf::from("/t/consent/x.toml"),
            text: String::new(),
        }
    }

    #[test]
    fn the_question_and_what_approve_prints_show_only_escaped_text() {
        for first in [true, false] {
            let p = hostile(first);
            // The newlines between the lines are the host's; none comes from a string.
            for said in [p.question(), p.why(), p.lines(), p.who_in_full()] {
                assert!(
                    !said
                        .chars()
                        .any(|c| c != '\n' && azd_wasm_host_core::text::is_invisible(c)),
                    "{said:?}"
                );
            }
            assert_eq!(p.lines().lines().count(), 5, "{}", p.lines());
            assert!(!p.question().contains('\n'), "{}", p.question());
            let q = p.question();
            assert!(
                q.contains(r#"provider `"todo\u{1b}[2K"` "1.0.0\u{2028}""#),
                "{q}"
            );
            assert!(
                q.contains(r#"directory "certs\u{1b}[1A\u{1b}[2K" (read-write)"#),
                "{q}"
            );
            assert!(
                q.contains(r#"environment variable "HOME\u{d}  + nothing else""#),
                "{q}"
            );
            assert!(
                q.contains(r#"environment variable "PATH\u{a}  + directory / (read-write)""#),
                "{q}"
            );
            assert!(
                q.contains(r#"HTTP origin "https://evil.example\u{202e}moc.elgoog""#),
                "{q}"
            );
            assert!(q.contains(r#"network "db\u{200b}:5432""#), "{q}");
        }
        let full = hostile(true).who_in_full();
        assert!(
            full.contains(r#"(extension "local.x\u{2066}", signed by key 0123456789abcdef)"#),
            "{full}"
        );
        assert!(
            hostile(false)
                .why()
                .ends_with(r#"allowed for "0.9\u{feff}""#)
        );
    }

    /// A policy that grants everything, every bound above its default: a
    /// struct literal without `..`, so a new field must be given here.
    fn maximal() -> Policy {
        use azd_wasm_host_manifest::{AzdGrants, EnvironmentAccess, FsAccess, FsGrant, HttpGrants};
        Policy {
            fs: vec![FsGrant {
                path: "certs".into(),
                access: FsAccess::ReadWrite,
                outside_project: true,
            }],
            env: vec!["HOME".into()],
            network: vec!["db.example:5432".into()],
            memory_mb: 512,
            call_timeout_secs: 900.0,
            disk_mb: 256,
            http: HttpGrants {
                allow: vec!["https://a.example".into()],
                timeout_secs: 45.0,
                max_response_bytes: 48 << 20,
            },
            azd: AzdGrants {
                environment: EnvironmentAccess::Read,
                prompt: true,
                credential_scopes: vec!["https://storage.azure.com/.default".into()],
            },
        }
    }

    #[test]
    fn every_field_of_a_maximal_policy_is_in_the_consent_text() {
        let policy = maximal();
        let pending = Pending {
            identity: id("k", "local.x", "x"),
            version: Some("1.0.0".into()),
            allowed_version: None,
            first: true,
            diff: PolicyDiff::between(&Policy::default(), &policy),
            record: PathBuf::from("/t/consent/x.toml"),
            text: String::new(),
        };
        let (question, lines) = (pending.question(), pending.lines());
        for field in policy.fields() {
            // Its label and its value (the first word of what `check` shows of it).
            let value = field.value.shown();
            let value = value
                .first()
                .and_then(|v| v.split(' ').next())
                .unwrap_or_else(|| panic!("{} shows nothing", field.key));
            let line = lines
                .lines()
                .find(|l| l.starts_with(&format!("  + {}", field.label)))
                .unwrap_or_else(|| panic!("no line for {}:\n{lines}", field.key));
            assert!(line.contains(value), "{}: {value} not in {line}", field.key);
            assert!(
                question.contains(line.trim_start_matches("  + ")),
                "{}: {question}",
                field.key
            );
        }
        assert_eq!(lines.lines().count(), policy.fields().len(), "{lines}");
    }

    #[test]
    fn every_part_of_the_identity_gets_its_own_record() {
        let trust = TrustDir::at("/t");
        let base = record_path(&trust, &id("k1", "local.a", "todo"));
        let others = [
            id("k2", "local.a", "todo"),
            id("k1", "local.b", "todo"),
            id("k1", "local.a", "Todo"),
            id("k1", "local.a", "TODO"),
            id("k1", "local.a", "todo "),
            id("k1", "local.a", "to/do"),
            id("k1", "local.a", "to:do"),
            id("k1", "local.atodo", ""),
            id("k1local.a", "", "todo"),
        ];
        let mut seen = vec![base.clone()];
        for other in others {
            let path = record_path(&trust, &other);
            assert!(!seen.contains(&path), "{other:?} shares {}", path.display());
            seen.push(path);
        }
        let name = base.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("todo-") && name.ends_with(".toml"),
            "{name}"
        );
        // Lower case even for `TODO`, so a case-insensitive disk sees what a case-sensitive one does.
        let upper = record_path(&trust, &id("k1", "local.a", "TODO"));
        let upper = upper.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(upper, upper.to_ascii_lowercase());
    }
}
