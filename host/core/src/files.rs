//! Files only the user may change, and their digests: the rules every place
//! the host keeps something (the compile cache, the trust folder, consent
//! records) and every check of a signed file apply the same way.

use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Creates `dir` and its missing parents, readable and writable by the user
/// alone (0700 on Unix; on Windows the per-user folder's ACL is private).
#[cfg(unix)]
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates `dir` and its missing parents; on Windows the per-user folder's
/// ACL already keeps them private.
#[cfg(not(unix))]
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Whether a file or directory belongs to the current user and nobody else
/// may write to it.
#[cfg(unix)]
pub fn owned_by_user_alone(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "it belongs to user {}, not to user {me}",
            meta.uid()
        ));
    }
    if meta.is_dir() {
        return writable_by_owner_alone(meta);
    }
    Ok(())
}

/// On Windows the place is checked instead (the compile cache keeps only beneath the user's profile).
#[cfg(not(unix))]
pub fn owned_by_user_alone(_meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

/// Whether neither group nor others may write to it (on Windows: nothing is checked here).
#[cfg(unix)]
fn writable_by_owner_alone(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "others may write to it (mode {:o}); `chmod go-w` it",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn writable_by_owner_alone(_meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

/// Whether the file or folder at `path` (which must exist) is one only the
/// user can change: theirs, and not writable by group or others (files too).
/// `Err` says why not, with the fix. What the trust folder is held to. On
/// Windows, where owners and ACLs are read only through the Win32 security
/// API (which this crate does not call), nothing is checked.
pub fn only_user_may_write(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot inspect it: {e}"))?;
    owned_by_user_alone(&meta)?;
    writable_by_owner_alone(&meta)
}

/// What makes a folder one a repository or a project carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// The folder at or above it that is the work tree's or the project's root.
    pub inside: PathBuf,
    /// "the git work tree" or "the azd project".
    pub what: &'static str,
}

/// Whether `path` lies inside a git work tree or an azd project (a folder
/// with `azure.yaml`): what arrives with a clone, so nothing that decides
/// what runs may be kept there (the trust folder, the compile cache). The
/// folders from `path` up to, not including, `home` are looked at (a home
/// folder kept in git does not carry `~/.azd`), and at most the filesystem's
/// root's children; both as `path` is named and as the system resolves it.
pub fn carried_by(path: &Path, home: Option<&Path>) -> Option<Carried> {
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let mut starts = vec![path.to_path_buf()];
    starts.extend(real_path_of(path));
    for start in starts {
        for dir in start.ancestors() {
            if home.as_deref() == Some(dir) || dir.parent().is_none() {
                break;
            }
            let what = if dir.join(".git").exists() {
                "the git work tree"
            } else if dir.join("azure.yaml").is_file() || dir.join("azure.yml").is_file() {
                "the azd project"
            } else {
                continue;
            };
            return Some(Carried {
                inside: dir.to_path_buf(),
                what,
            });
        }
    }
    None
}

/// `path`, or its nearest existing ancestor, as the system resolves it
/// (links followed), with what is missing put back on.
pub fn real_path_of(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return Some(missing.iter().rev().fold(real, |p: PathBuf, m| p.join(m)));
        }
        missing.push(at.file_name()?.to_owned());
        at = at.parent()?;
    }
}

/// The folder of the running binary, as the system resolves it (links
/// followed): the one place "installed" (an extension's folder, as azd lays
/// it out) and "beside the binary" (precompiled code, the packaged manifest)
/// are measured from, so the two can never disagree.
pub fn exe_dir() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(exe).ok()?;
    exe.parent().map(Path::to_path_buf)
}

/// Whether the file at `path` is one nobody but its owner may read or write
/// (0600 or stricter): what a private key is held to, as ssh holds its keys.
/// On Windows nothing is checked (see [`only_user_may_write`]).
#[cfg(unix)]
pub fn private_to_user(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot inspect it: {e}"))?;
    owned_by_user_alone(&meta)?;
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "others may read or write it (mode {:o}); a private key must be 0600: `chmod 600` it",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// On Windows nothing is checked (see [`only_user_may_write`]).
#[cfg(not(unix))]
pub fn private_to_user(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// The sha256 of a file, streamed (no copy of a big file in memory); what
/// the compile cache keys by, a package's artifacts are listed by and a
/// signature covers.
pub fn sha256_file(path: &Path) -> std::io::Result<[u8; 32]> {
    sha256_read(File::open(path)?)
}

/// The sha256 of what `reader` holds from where it stands to its end,
/// streamed: a file opened once and hashed through that handle.
pub fn sha256_read(reader: impl std::io::Read) -> std::io::Result<[u8; 32]> {
    let mut hasher = Sha256::new();
    // Read in 1 MiB pieces: a 36 MB precompiled component is hashed at every start.
    let mut reader = std::io::BufReader::with_capacity(1 << 20, reader);
    std::io::copy(&mut reader, &mut hasher)?;
    Ok(hasher.finalize().into())
}

/// Whether the file at `path` can be changed only by its owner and root:
/// it, and every folder above it (as named and as the system resolves it),
/// belongs to root or to the file's owner and is writable by nobody else; a
/// folder others may write to is accepted only with the sticky bit (`/tmp`),
/// where they cannot rename or remove what is not theirs. What an
/// administrator's policy is held to: its owner decides, nobody else. `Err`
/// names the place and the fix. On Windows nothing is checked (see
/// [`only_user_may_write`]).
#[cfg(unix)]
pub fn only_owner_may_change(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot inspect it: {e}"))?;
    let owner = meta.uid();
    writable_by_owner_alone(&meta)?;
    let mut chains = vec![path.to_path_buf()];
    chains.extend(std::fs::canonicalize(path).ok());
    for chain in chains {
        for dir in chain.ancestors().skip(1) {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let d = std::fs::metadata(dir)
                .map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
            if d.uid() != 0 && d.uid() != owner {
                return Err(format!(
                    "the folder {} belongs to user {}, neither root nor the file's owner ({owner}), \
                     who could replace it",
                    dir.display(),
                    d.uid()
                ));
            }
            if d.mode() & 0o022 != 0 && d.mode() & 0o1000 == 0 {
                return Err(format!(
                    "others may write to the folder {} (mode {:o}), and could replace it; \
                     `chmod go-w` that folder",
                    dir.display(),
                    d.mode() & 0o777
                ));
            }
        }
    }
    Ok(())
}

/// On Windows nothing is checked (see [`only_user_may_write`]).
#[cfg(not(unix))]
pub fn only_owner_may_change(_path: &Path) -> Result<(), String> {
    Ok(())
}
