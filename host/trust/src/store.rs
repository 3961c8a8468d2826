//! The trust folder: `wasm-host/` in azd's config folder.
//!
//! ```text
//! $AZD_CONFIG_DIR (else ~/.azd)/wasm-host/
//!   config.toml          allow_unsigned = false
//!   trusted-keys/*.pub   the public keys whose providers run
//!   tool-keys/*.pub      the public keys that may sign the author's tool's sidecars (never a provider)
//!   keys/signing.key     the default signing key of `keygen` and `package` (owner-only)
//!   keys/cache.key       the secret the compile cache's entries are authenticated with (owner-only)
//!   consent/<name>-<id>.toml  what the user allowed each provider (by signer, extension and name)
//! ```
//!
//! What is there decides what runs, so it is used only while nobody but the
//! user can change it ([`TrustDir::check_private`]), as the compile cache is;
//! the folders are made private (0700).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{StoreError, TrustError};
use crate::keys::{KeyPair, PublicKey};

/// azd's config folder, when not `~/.azd` (azd reads it too).
pub const CONFIG_DIR_ENV: &str = "AZD_CONFIG_DIR";
/// `true`: run providers that are unsigned or signed by a key not trusted
/// (the setting `allow_unsigned` in `config.toml`, for one command).
pub const ALLOW_UNSIGNED_ENV: &str = azd_wasm_host_core::settings::ALLOW_UNSIGNED;

/// The trust folder.
#[derive(Debug, Clone)]
pub struct TrustDir {
    root: PathBuf,
    allow_unsigned_env: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    allow_unsigned: bool,
}

impl TrustDir {
    /// The user's: `$AZD_CONFIG_DIR/wasm-host`, else `~/.azd/wasm-host`,
    /// with [`ALLOW_UNSIGNED_ENV`] read.
    pub fn from_env() -> Result<Self, StoreError> {
        let config = match std::env::var_os(CONFIG_DIR_ENV).filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => dirs::home_dir().ok_or(StoreError::NoHome)?.join(".azd"),
        };
        let allow = std::env::var(ALLOW_UNSIGNED_ENV).ok().and_then(|v| {
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" => Some(true),
                "0" | "false" | "no" => Some(false),
                _ => None,
            }
        });
        Ok(Self {
            root: config.join("wasm-host"),
            allow_unsigned_env: allow,
        })
    }

    /// A trust folder at `root` (tests).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            allow_unsigned_env: None,
        }
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `trusted-keys/`.
    pub fn keys_dir(&self) -> PathBuf {
        self.root.join("trusted-keys")
    }

    /// `tool-keys/`: the keys trusted for the author's tool, which may sign
    /// the list of its sidecars (`verify_sidecars`) when it was built without
    /// a release key; a key there signs no provider, and one in
    /// `trusted-keys/` no sidecar list.
    pub fn tool_keys_dir(&self) -> PathBuf {
        self.root.join("tool-keys")
    }

    /// `consent/`.
    pub fn consent_dir(&self) -> PathBuf {
        self.root.join("consent")
    }

    /// The default signing key: `keys/signing.key`.
    pub fn default_key(&self) -> PathBuf {
        self.root.join("keys").join("signing.key")
    }

    /// Refuses a trust folder someone else could change: azd's config
    /// folder, `wasm-host/`, its folders and every file in them must belong
    /// to the user and be writable by nobody else (on Windows nothing is
    /// checked: see [`azd_wasm_host_core::files::only_user_may_write`]). What is
    /// not there yet is not checked.
    pub fn check_private(&self) -> Result<(), TrustError> {
        self.check_location()?;
        let mut paths: Vec<PathBuf> = self
            .root
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        paths.push(self.root.clone());
        paths.push(self.config_file());
        for dir in [
            self.keys_dir(),
            self.tool_keys_dir(),
            self.consent_dir(),
            self.root.join("keys"),
        ] {
            paths.push(dir.clone());
            if let Ok(entries) = std::fs::read_dir(&dir) {
                let mut files: Vec<PathBuf> =
                    entries.filter_map(Result::ok).map(|e| e.path()).collect();
                files.sort();
                paths.extend(files);
            }
        }
        for path in paths {
            if !path.exists() {
                continue;
            }
            if let Err(why) = azd_wasm_host_core::files::only_user_may_write(&path) {
                return Err(TrustError::UnsafeFolder {
                    path: path.display().to_string(),
                    why,
                });
            }
        }
        Ok(())
    }

    /// Refuses a trust folder that a repository or a project carries: one
    /// inside a git work tree, or inside an azd project (a folder with
    /// `azure.yaml`), could arrive with a clone and decide what runs. The
    /// folders from the trust folder up to, not including, the user's home
    /// folder are looked at (a home folder kept in git does not refuse
    /// `~/.azd`), and at most the filesystem's root's children.
    pub fn check_location(&self) -> Result<(), TrustError> {
        let home = dirs::home_dir();
        match azd_wasm_host_core::files::carried_by(&self.root, home.as_deref()) {
            Some(carried) => Err(TrustError::CarriedFolder {
                path: self.root.display().to_string(),
                inside: carried.inside.display().to_string(),
                what: carried.what,
            }),
            None => Ok(()),
        }
    }

    /// Whether unsigned providers may run: [`ALLOW_UNSIGNED_ENV`], else
    /// `allow_unsigned` in `config.toml` (a file that cannot be read allows nothing).
    pub fn allows_unsigned(&self) -> bool {
        self.allow_unsigned_env.unwrap_or_else(|| {
            std::fs::read_to_string(self.config_file())
                .ok()
                .and_then(|t| toml::from_str::<Config>(&t).ok())
                .unwrap_or_default()
                .allow_unsigned
        })
    }

    /// The trusted keys with their files, in file-name order. A file that is
    /// not a P-256 public key is skipped with a warning on stderr.
    pub fn trusted_keys(&self) -> Vec<(PathBuf, PublicKey)> {
        keys_in(&self.keys_dir())
    }

    /// The keys trusted for the tool ([`TrustDir::tool_keys_dir`]), as
    /// [`TrustDir::trusted_keys`] reads its own.
    pub fn tool_keys(&self) -> Vec<(PathBuf, PublicKey)> {
        keys_in(&self.tool_keys_dir())
    }

    /// Trusts `key`: writes it as `trusted-keys/<name>.pub` (`name` by
    /// default its short id); returns the file. Trusting a key twice keeps
    /// the first file.
    pub fn trust(&self, key: &PublicKey, name: Option<&str>) -> Result<PathBuf, StoreError> {
        trust_in(&self.keys_dir(), key, name)
    }

    /// Trusts `key` for the tool: as [`TrustDir::trust`], in `tool-keys/`.
    pub fn trust_for_tool(
        &self,
        key: &PublicKey,
        name: Option<&str>,
    ) -> Result<PathBuf, StoreError> {
        trust_in(&self.tool_keys_dir(), key, name)
    }

    /// The default signing key, made (and its public half trusted on this
    /// machine) when there is none yet; returns the key and whether it was made.
    pub fn default_signing_key(&self) -> Result<(KeyPair, bool), StoreError> {
        // Nothing is read from a folder someone else could have written.
        self.check_private()?;
        let path = self.default_key();
        if path.is_file() {
            return Ok((read_key(&path)?, false));
        }
        let key = KeyPair::generate()?;
        if let Err(e) = write_key(&path, &key) {
            // Another command made it first: that one is the key.
            if path.is_file() {
                return Ok((read_key(&path)?, false));
            }
            return Err(e);
        }
        self.trust(&key.public(), Some("signing"))?;
        Ok((key, true))
    }
}

/// The public keys in `dir` (`*.pub`) with their files, in file-name order.
/// A file that is not a P-256 public key is skipped with a warning on stderr.
fn keys_in(dir: &Path) -> Vec<(PathBuf, PublicKey)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pub"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let read = std::fs::read_to_string(&file)
                .map_err(|source| StoreError::Read {
                    path: file.clone(),
                    source,
                })
                .and_then(|t| PublicKey::from_pem(&t).map_err(StoreError::from));
            match read {
                Ok(key) => Some((file, key)),
                Err(e) => {
                    eprintln!(
                        "azd-wasm-host: warning: {} is not a trusted key: {}",
                        file.display(),
                        azd_wasm_host_core::report::chain(&e)
                    );
                    None
                }
            }
        })
        .collect()
}

/// Writes `key` as `<dir>/<name>.pub` (`name` by default its short id);
/// returns the file. A key already in `dir` keeps its first file.
fn trust_in(dir: &Path, key: &PublicKey, name: Option<&str>) -> Result<PathBuf, StoreError> {
    if let Some((file, _)) = keys_in(dir).into_iter().find(|(_, k)| k == key) {
        return Ok(file);
    }
    azd_wasm_host_core::files::create_private_dir(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let stem = name.map_or_else(|| key.short_id(), sanitize);
    let file = dir.join(format!("{stem}.pub"));
    if file.exists() {
        // The same key written there meanwhile is as good as ours.
        let same = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| PublicKey::from_pem(&t).ok());
        if same.as_ref() != Some(key) {
            return Err(StoreError::OtherKey { path: file });
        }
        return Ok(file);
    }
    write_readable(&file, &key.to_pem())?;
    Ok(file)
}

/// Reads a signing key file: one that nobody but its owner may read or
/// write (0600), as ssh holds its keys; any other is refused unread.
pub fn read_key(path: &Path) -> Result<KeyPair, StoreError> {
    let path_buf = || path.to_path_buf();
    if let Err(why) = azd_wasm_host_core::files::private_to_user(path) {
        return Err(StoreError::KeyRefused {
            path: path_buf(),
            why,
        });
    }
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::ReadKey {
        path: path_buf(),
        source,
    })?;
    KeyPair::from_pem(&text).map_err(|source| StoreError::NotAKey {
        path: path_buf(),
        source,
    })
}

/// Writes a signing key readable by its owner only, and its public half
/// beside it (`.pub`); refuses to overwrite a key. The key appears whole or
/// not at all (written aside, then linked into place), so two commands
/// making the default key at once cannot leave half of one.
pub fn write_key(path: &Path, key: &KeyPair) -> Result<(), StoreError> {
    if path.exists() {
        return Err(StoreError::KeyExists {
            path: path.to_path_buf(),
        });
    }
    write_private_new(path, key.to_pem().as_bytes()).map_err(|source| StoreError::WriteKey {
        path: path.to_path_buf(),
        source,
    })?;
    write_readable(&path.with_extension("pub"), &key.public().to_pem())?;
    Ok(())
}

/// Writes `bytes` to a new file `path` that only its owner may read or write
/// (0600 whatever the umask; its folder made private if missing). The file
/// appears whole or not at all (written aside, then linked into place), and
/// never over a file already there: an `AlreadyExists` error then.
pub(crate) fn write_private_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    azd_wasm_host_core::files::create_private_dir(&dir)?;
    let mut aside = tempfile::NamedTempFile::new_in(&dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        aside
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    use std::io::Write as _;
    aside.write_all(bytes)?;
    aside.as_file().sync_all()?;
    aside.persist_noclobber(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `text` to `path`, readable by all and writable by its owner only
/// whatever the umask (the trust folder refuses files others may write).
fn write_readable(path: &Path, text: &str) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o644);
    }
    use std::io::Write as _;
    options
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|source| StoreError::Write {
            path: path.to_path_buf(),
            source,
        })
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
