//! Consent: no new capability without the user's yes.
//!
//! For each provider the trust folder keeps the manifest the user last let
//! run (`consent/<name>.toml`). [`check`] compares the manifest about to run
//! with it ([`PolicyDiff`]):
//! - no record yet: the install was the user's choice; the manifest is
//!   recorded and runs;
//! - nothing more than before (the same, or fewer grants): it runs, and the
//!   record follows it, so a grant dropped and later asked for again is asked;
//! - more: [`Consent::Asks`], which the caller puts to the user (or refuses
//!   with, under `--no-prompt`) and [`Pending::approve`]s on a yes.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_runtime::{Manifest, PolicyDiff};
use serde::{Deserialize, Serialize};

use crate::store::TrustDir;

/// What the record says the user allowed.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    /// `provider.toml` as it was allowed.
    manifest: String,
}

/// Whether a provider may run with what its manifest grants.
#[derive(Debug)]
pub enum Consent {
    /// First seen: recorded as allowed.
    FirstSeen,
    /// It asks for nothing the user has not allowed.
    Allowed,
    /// It asks for more than the user allowed: not to run until approved.
    Asks(Pending),
}

/// Grants a provider asks for that the user has not allowed yet.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The provider.
    pub provider: String,
    /// Its version, when signed.
    pub version: Option<String>,
    /// The version the user last allowed, when known.
    pub allowed_version: Option<String>,
    /// What it asks for beyond what was allowed (and what it no longer asks for).
    pub diff: PolicyDiff,
    record: PathBuf,
    text: String,
}

/// Compares the manifest at `manifest_path` (the provider at `version`)
/// with what the user last allowed for it.
pub fn check(
    trust: &TrustDir,
    manifest_path: &Path,
    version: Option<&str>,
) -> anyhow::Result<Consent> {
    let text = std::fs::read_to_string(manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let manifest = Manifest::parse(&text, manifest_path)?;
    let record = record_path(trust, &manifest.name);
    let pending = Pending {
        provider: manifest.name.clone(),
        version: version.map(str::to_owned),
        allowed_version: None,
        diff: PolicyDiff::default(),
        record,
        text,
    };
    let previous = match std::fs::read_to_string(&pending.record) {
        Ok(previous) => previous,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            pending.approve()?;
            return Ok(Consent::FirstSeen);
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read {}", pending.record.display()));
        }
    };
    let previous: Record = toml::from_str(&previous).with_context(|| {
        format!(
            "{} is not a consent record (delete it to be asked afresh)",
            pending.record.display()
        )
    })?;
    let allowed = Manifest::parse(&previous.manifest, manifest_path)
        .with_context(|| format!("the manifest recorded in {}", pending.record.display()))?;
    let diff = PolicyDiff::between(&allowed.policy, &manifest.policy);
    let pending = Pending {
        allowed_version: previous.version.clone(),
        diff,
        ..pending
    };
    if pending.diff.asks_for_nothing_more() {
        if previous.manifest != pending.text || previous.version != pending.version {
            pending.approve()?;
        }
        return Ok(Consent::Allowed);
    }
    Ok(Consent::Asks(pending))
}

impl Pending {
    /// Records what the provider asks for as allowed.
    pub fn approve(&self) -> anyhow::Result<()> {
        let record = Record {
            provider: self.provider.clone(),
            version: self.version.clone(),
            manifest: self.text.clone(),
        };
        if let Some(dir) = self.record.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let body = format!(
            "# The grants of provider `{}` the user allowed (azd-wasm-host); delete to be asked afresh.\n{}",
            self.provider,
            toml::to_string(&record)?
        );
        // Written aside and renamed: a reader (another azd command) sees the old record or the new.
        let dir = self.record.parent().unwrap_or(Path::new("."));
        let mut aside = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut aside, body.as_bytes())?;
        aside
            .persist(&self.record)
            .map_err(|e| e.error)
            .with_context(|| format!("cannot write {}", self.record.display()))?;
        Ok(())
    }

    /// `provider `x` 1.3.0`.
    pub fn who(&self) -> String {
        match &self.version {
            Some(v) => format!("provider `{}` {v}", self.provider),
            None => format!("provider `{}`", self.provider),
        }
    }

    /// The new grants, one per line, each `  + …`.
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
        format!(
            "{} also asks for: {}. Allow?",
            self.who(),
            self.diff.more.join("; ")
        )
    }

    /// Since when the user allowed less: `(you allowed 1.2.0)`.
    pub fn since(&self) -> String {
        match &self.allowed_version {
            Some(v) => format!("than you allowed for {v}"),
            None => "than you allowed before".to_owned(),
        }
    }
}

fn record_path(trust: &TrustDir, provider: &str) -> PathBuf {
    let stem: String = provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    trust.consent_dir().join(format!("{stem}.toml"))
}
