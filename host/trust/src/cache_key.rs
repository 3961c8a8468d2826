//! The secret that authenticates the compile cache's entries.
//!
//! A compile cache entry is native code the host maps and runs. Who may
//! write the cache's folder is checked, but a folder is only as safe as the
//! variables that named it; so every entry carries a MAC (HMAC-SHA256) made
//! with a secret of the user's, and an entry whose MAC does not verify is
//! never mapped. The secret is `keys/cache.key` in the trust folder: 32
//! random bytes made on first use, owner-only (0600), read only after the
//! trust folder's own checks (not in a repository or project, nobody else may
//! change it). Whoever could read it could already change the trust folder.

use std::io::Read as _;
use std::path::Path;

use crate::error::StoreError;
use crate::store::{TrustDir, write_private_new};

/// The secret's file, in the trust folder's `keys/`.
const CACHE_KEY_FILE: &str = "cache.key";
/// Its length in bytes.
const SECRET_LEN: usize = 32;

impl TrustDir {
    /// The compile cache's secret: read from `keys/cache.key`, or made there
    /// on first use. Fails when the trust folder cannot be trusted, or when
    /// the file is not private to the user or not a secret of ours.
    pub fn cache_secret(&self) -> Result<[u8; SECRET_LEN], StoreError> {
        self.check_private()?;
        let path = self.root().join("keys").join(CACHE_KEY_FILE);
        if !path.exists() {
            make(&path)?;
        }
        read(&path)
    }
}

/// Writes a new secret at `path`, never over one another process made first.
fn make(path: &Path) -> Result<(), StoreError> {
    let mut secret = [0u8; SECRET_LEN];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut secret)
        .map_err(|_| StoreError::NoRandom)?;
    match write_private_new(path, &secret) {
        Ok(()) => Ok(()),
        // Another process made it first: theirs is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(StoreError::Write {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn read(path: &Path) -> Result<[u8; SECRET_LEN], StoreError> {
    azd_wasm_host_core::files::private_to_user(path).map_err(|why| StoreError::SecretRefused {
        path: path.to_path_buf(),
        why,
    })?;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(SECRET_LEN as u64 + 1).read_to_end(&mut bytes))
        .map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    bytes.try_into().map_err(|_| StoreError::NotASecret {
        path: path.to_path_buf(),
        len: SECRET_LEN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_made_once_private_and_kept() {
        let home = tempfile::tempdir().unwrap();
        let trust = TrustDir::at(home.path().join("azd/wasm-host"));
        let first = trust.cache_secret().unwrap();
        assert_eq!(trust.cache_secret().unwrap(), first, "kept");
        assert_ne!(first, [0u8; SECRET_LEN]);
        let path = trust.root().join("keys").join(CACHE_KEY_FILE);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = trust.cache_secret().unwrap_err().to_string();
            assert!(e.contains("chmod 600"), "{e}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::write(&path, b"short").unwrap();
        let e = trust.cache_secret().unwrap_err().to_string();
        assert!(e.contains("not a compile cache secret"), "{e}");
    }

    #[test]
    fn no_secret_comes_from_a_trust_folder_a_project_carries() {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("azure.yaml"), "name: p\n").unwrap();
        let trust = TrustDir::at(project.path().join("cfg/wasm-host"));
        let e = trust.cache_secret().unwrap_err().to_string();
        assert!(e.contains("azd project"), "{e}");
        assert!(!trust.root().join("keys").exists(), "nothing made");
    }
}
