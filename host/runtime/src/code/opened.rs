//! Precompiled code checked and loaded through one open handle.
//!
//! Native code is checked by its sha256 before wasmtime maps it. Hashing a
//! path and then mapping the path again leaves a window in which a rename
//! puts another file there; so the file is opened once (never through a
//! symbolic link), hashed through that handle, and what wasmtime maps is the
//! same open file: on Linux and macOS through `/proc/self/fd/N` or
//! `/dev/fd/N`, which open the very file the handle holds, whatever its path
//! names by then. Elsewhere (or when that fails), the bytes are read through
//! the handle, hashed again, and wasmtime loads that copy, so what runs is
//! exactly what was hashed.

use std::fs::File;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// A precompiled code file, open, with the sha256 of what the handle read.
#[derive(Debug)]
pub(crate) struct OpenedCode {
    file: File,
    path: PathBuf,
    sha256: String,
}

impl OpenedCode {
    /// Opens `path` (refusing a symbolic link or anything but a regular file)
    /// and hashes it through the handle.
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let mut file = open_no_follow(path)?;
        if !file.metadata()?.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let sha256 = hash(&mut file)?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
            sha256,
        })
    }

    /// The file's metadata, through the handle.
    pub(crate) fn metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.file.metadata()
    }

    /// The sha256 (hex) of the file as the handle read it.
    pub(crate) fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The component in this very file.
    #[allow(
        unsafe_code,
        reason = "deserializing precompiled code: the sha256 of what the handle read was just checked against the value its binding and signature give (shipped code) or against the tag made under the user's secret (a compile cache entry), and the file mapped is the one the handle hashed"
    )]
    pub(crate) fn deserialize(mut self, engine: &Engine) -> wasmtime::Result<Component> {
        if let Some(same) = same_file_path(&self.file) {
            // SAFETY: see the reason above.
            match unsafe { Component::deserialize_file(engine, &same) } {
                Ok(component) => return Ok(component),
                Err(e) => {
                    tracing::debug!(code = %self.path.display(), error = %format!("{e:#}"), "cannot map the precompiled code through its handle; loading a copy read through it");
                }
            }
        }
        self.file.rewind()?;
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes)?;
        if hex::encode(Sha256::digest(&bytes)) != self.sha256 {
            wasmtime::bail!("{} changed while it was being loaded", self.path.display());
        }
        // SAFETY: see the reason above; these bytes' sha256 matched just now.
        unsafe { Component::deserialize(engine, &bytes) }
    }
}

fn hash(file: &mut File) -> std::io::Result<String> {
    azd_wasm_host_core::files::sha256_read(file).map(hex::encode)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a symbolic link",
        ));
    }
    File::open(path)
}

/// A path that opens the very file `file` holds, where the system has one.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
fn same_file_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd as _;
    let dir = if cfg!(target_os = "macos") {
        "/dev/fd"
    } else {
        "/proc/self/fd"
    };
    let path = PathBuf::from(format!("{dir}/{}", file.as_raw_fd()));
    path.exists().then_some(path)
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
fn same_file_path(_file: &File) -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_of_what_the_handle_read_and_a_rename_after_it_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let code = dir.path().join("provider.cwasm");
        std::fs::write(&code, b"the signed code").unwrap();
        let opened = OpenedCode::open(&code).unwrap();
        assert_eq!(
            opened.sha256(),
            hex::encode(Sha256::digest(b"the signed code"))
        );
        // Another file renamed over the path after the check.
        let other = dir.path().join("other");
        std::fs::write(&other, b"code of the attacker's").unwrap();
        std::fs::rename(&other, &code).unwrap();
        if let Some(same) = same_file_path(&opened.file) {
            assert_eq!(std::fs::read(same).unwrap(), b"the signed code");
        }
        let mut file = opened.file;
        file.rewind().unwrap();
        let mut read = Vec::new();
        file.read_to_end(&mut read).unwrap();
        assert_eq!(read, b"the signed code");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::write(&real, b"x").unwrap();
        let link = dir.path().join("provider.cwasm");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(OpenedCode::open(&link).is_err());
        assert!(OpenedCode::open(dir.path()).is_err());
    }
}
