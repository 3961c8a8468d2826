//! The ceiling: what an administrator lets no provider on this machine be
//! granted, whatever the user consents to.
//!
//! The user decides what a provider may touch (trusted keys, consent); the
//! ceiling bounds those decisions from outside, as a browser's enterprise
//! extension settings bound what a user may install. It is read from every
//! place it may be kept ([`Ceiling::load`]):
//!
//! | source | where |
//! |---|---|
//! | machine-wide | `/etc/azd/wasm-host/policy.toml`; macOS `/Library/Application Support/azd/wasm-host/policy.toml`; Windows `%ProgramData%\azd\wasm-host\policy.toml` |
//! | azd's config folder | `policy.toml` in the trust folder: `$AZD_CONFIG_DIR/wasm-host/`, else `~/.azd/wasm-host/` |
//! | one more file | the one [`POLICY_ENV`] names (a CI job's stricter ceiling) |
//!
//! A provider must stay within **every** source: the tighter wins, field by
//! field, so adding a source can only take away. No source is today's
//! behaviour. A source that is there but cannot be trusted (someone other
//! than its owner and root may change it), cannot be read, or says
//! something this host does not know refuses every provider until fixed:
//! a ceiling is never skipped because it is broken.
//!
//! What a source says ([`Rules`]): which signers' providers may run and
//! whether unsigned ones may; which provider names and extension ids are
//! allowed or blocked; whether consent may be given at azd's prompt or only
//! ahead of time (`approve`); and under `[grants]`, for each `[policy]` key
//! of a provider's manifest, the most it may grant ([`judge`]).

mod judge;
mod pattern;
mod rules;
mod shown;

use std::path::{Path, PathBuf};

pub use judge::{Candidate, Judged, Signer};
pub use rules::Rules;

use crate::TrustDir;

/// Names one more ceiling file, read as a source beside the others (it can
/// only tighten).
pub const POLICY_ENV: &str = azd_wasm_host_core::settings::POLICY;

/// The file's name, machine-wide and in the trust folder.
pub const POLICY_FILE: &str = "policy.toml";

/// Where a source is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The machine's ([`machine_path`]).
    Machine,
    /// azd's config folder's (the trust folder).
    ConfigFolder,
    /// Named by [`POLICY_ENV`], or given to `policy check --policy`.
    Named,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Machine => "machine-wide",
            Self::ConfigFolder => "azd config folder",
            Self::Named => "named",
        })
    }
}

/// One place a ceiling may be kept, and what it says there.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Where it is kept.
    pub place: Place,
    /// What it says; `None`: there is no file.
    pub rules: Option<Rules>,
}

/// Why no provider runs: a ceiling is there but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CeilingError {
    /// Someone other than its owner and root may change it.
    #[error(
        "this machine's provider policy {path} cannot be trusted: {why}. A policy decides what \
         every provider here may do, so only its owner (and root) may be able to change it; \
         until that is fixed no provider runs"
    )]
    Unsafe {
        path: PathBuf,
        /// Why (in the message, so not a `source`: a chain would say it twice).
        why: azd_wasm_host_core::files::Unsafe,
    },
    /// It cannot be read, or says something this host does not know.
    #[error(
        "this machine's provider policy {path} cannot be read: {why}; until it is fixed no \
         provider runs (docs/trust.md, \"A ceiling for platform teams\", has its schema)"
    )]
    Invalid { path: PathBuf, why: String },
}

/// The machine-wide ceiling's file on this platform.
pub fn machine_path() -> PathBuf {
    if cfg!(windows) {
        let data = std::env::var_os("ProgramData")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| PathBuf::from(r"C:\ProgramData"));
        data.join("azd").join("wasm-host").join(POLICY_FILE)
    } else if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/azd/wasm-host").join(POLICY_FILE)
    } else {
        PathBuf::from("/etc/azd/wasm-host").join(POLICY_FILE)
    }
}

/// Every source, in the order they are shown and judged.
#[derive(Debug, Clone, Default)]
pub struct Ceiling {
    sources: Vec<Source>,
}

impl Ceiling {
    /// This machine's ceiling for the user of `trust`: the machine-wide
    /// file, the trust folder's (when the user has one), and the one
    /// [`POLICY_ENV`] names.
    pub fn load(trust: Option<&TrustDir>) -> Result<Self, CeilingError> {
        let named = std::env::var_os(POLICY_ENV).filter(|v| !v.is_empty());
        Self::load_with(trust, named.map(PathBuf::from))
    }

    /// [`Ceiling::load`] with `named` as the file [`POLICY_ENV`] names:
    /// absolute, and not one a repository or an azd project carries.
    pub fn load_with(
        trust: Option<&TrustDir>,
        named: Option<PathBuf>,
    ) -> Result<Self, CeilingError> {
        let mut places = vec![(machine_path(), Place::Machine, false)];
        if let Some(trust) = trust {
            places.push((trust.root().join(POLICY_FILE), Place::ConfigFolder, false));
        }
        if let Some(named) = named {
            named_by_env(&named)?;
            places.push((named, Place::Named, true));
        }
        Self::read(places)
    }

    /// A ceiling of these files alone (`policy check --policy`), each of
    /// which must be there.
    pub fn from_files(paths: &[PathBuf]) -> Result<Self, CeilingError> {
        Self::read(
            paths
                .iter()
                .map(|p| (p.clone(), Place::Named, true))
                .collect(),
        )
    }

    /// `places`: each file, where it is kept, and whether it must be there.
    pub fn read(places: Vec<(PathBuf, Place, bool)>) -> Result<Self, CeilingError> {
        let mut sources = Vec::new();
        for (path, place, required) in places {
            let rules = read_source(&path, required)?;
            sources.push(Source { path, place, rules });
        }
        Ok(Self { sources })
    }

    /// Every place looked at, with what each says.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// Whether no source sets anything: today's behaviour.
    pub fn is_empty(&self) -> bool {
        self.sources.iter().all(|s| s.rules.is_none())
    }

    fn present(&self) -> impl Iterator<Item = (&Path, &Rules)> {
        self.sources
            .iter()
            .filter_map(|s| s.rules.as_ref().map(|r| (s.path.as_path(), r)))
    }

    /// Every answer of every source for `candidate`.
    pub fn judge(&self, candidate: &Candidate<'_>) -> Vec<Judged> {
        self.present()
            .flat_map(|(path, rules)| judge::judge(rules, path, candidate))
            .collect()
    }

    /// The answers `candidate` fails: empty when it may run.
    pub fn refusals(&self, candidate: &Candidate<'_>) -> Vec<Judged> {
        let mut all = self.judge(candidate);
        all.retain(|j| !j.within);
        all
    }

    /// Whether a folder granted outside the project may be opened where the
    /// system resolved it, `real`, with `access`: within a `grants.fs` entry
    /// of every source that sets one, each entry resolved the same way
    /// (relative ones from `project`). `Err` names the source and what it
    /// allows. Only entries outside the project count (one inside it names
    /// a folder of the project's, which a link there could move). What the
    /// runtime asks right before it opens such a folder,
    /// so that no link makes a grant judged by its spelling reach elsewhere.
    pub fn admits_folder(
        &self,
        project: &Path,
        real: &Path,
        access: azd_wasm_host_manifest::FsAccess,
    ) -> Result<(), String> {
        for (path, rules) in self.present() {
            let Some(max) = &rules.grants.fs else {
                continue;
            };
            // Entries outside the project only, as the judge compares them:
            // one inside it resolves through folders the project controls.
            let outside = max.iter().filter(|m| m.path.outside());
            if !outside.into_iter().any(|m| m.admits(project, real, access)) {
                return Err(format!(
                    "grants.fs allows {} ({})",
                    shown::fs_shown(max),
                    path.display()
                ));
            }
        }
        Ok(())
    }

    /// Whether some source bounds folders (`grants.fs`).
    pub fn bounds_folders(&self) -> bool {
        self.present().any(|(_, r)| r.grants.fs.is_some())
    }

    /// The source that forbids consent at azd's prompt, if one does.
    pub fn forbids_prompt(&self) -> Option<&Path> {
        self.present()
            .find(|(_, r)| r.consent_prompt == Some(false))
            .map(|(p, _)| p)
    }

    /// Whether a provider run from a folder must be signed (a source says
    /// `development = false`, or names signers or refuses unverified
    /// providers without saying `development = true`).
    pub fn requires_signed_development(&self) -> bool {
        self.present().any(|(_, r)| !r.signers.allow_development())
    }

    /// The effective ceiling, a line per source and field, for `policy show`.
    pub fn lines(&self) -> Vec<(String, String, PathBuf)> {
        self.present()
            .flat_map(|(path, rules)| {
                rules
                    .shown()
                    .into_iter()
                    .map(move |(k, v)| (k, v, path.to_path_buf()))
            })
            .collect()
    }
}

/// The rules at `path`; `None` when there is no file and none is required.
fn read_source(path: &Path, required: bool) -> Result<Option<Rules>, CeilingError> {
    let invalid = |why: String| CeilingError::Invalid {
        path: path.to_path_buf(),
        why,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(e) => return Err(invalid(format!("{e}"))),
        Ok(_) => {}
    }
    azd_wasm_host_core::files::only_owner_may_change(path).map_err(|why| CeilingError::Unsafe {
        path: path.to_path_buf(),
        why,
    })?;
    let text = std::fs::read_to_string(path).map_err(|e| invalid(format!("{e}")))?;
    Rules::parse(&text).map(Some).map_err(invalid)
}

/// The file [`POLICY_ENV`] names: absolute, and not one a repository or
/// an azd project carries (a project may not choose its own ceiling).
fn named_by_env(path: &Path) -> Result<(), CeilingError> {
    let refused = |why: String| CeilingError::Invalid {
        path: path.to_path_buf(),
        why,
    };
    if !path.is_absolute() {
        return Err(refused(format!(
            "{POLICY_ENV} must name it by an absolute path"
        )));
    }
    let home = dirs::home_dir();
    match azd_wasm_host_core::files::carried_by(path, home.as_deref()) {
        Some(c) => Err(refused(format!(
            "it lies inside {} {}, which a clone carries: a ceiling must be kept where the \
             project under it cannot change it",
            c.what,
            c.inside.display()
        ))),
        None => Ok(()),
    }
}
