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

/// Why a file or folder is not one only its owner may change (or read): each says the fix.
#[derive(Debug, thiserror::Error)]
pub enum Unsafe {
    /// Its metadata could not be read.
    #[error("cannot inspect it: {0}")]
    Unreadable(std::io::Error),
    /// A folder above it could not be read.
    #[error("cannot inspect {}: {error}", folder.display())]
    FolderUnreadable {
        /// The folder.
        folder: PathBuf,
        /// What the system said (in the message, so not a `source`).
        error: std::io::Error,
    },
    /// Another user owns it.
    #[error("it belongs to user {owner}, not to user {me}")]
    Owner {
        /// Its owner's user id.
        owner: u32,
        /// This process's effective user id.
        me: u32,
    },
    /// Group or others may write to it.
    #[error("others may write to it (mode {mode:o}); `chmod go-w` it")]
    WritableByOthers {
        /// Its permission bits.
        mode: u32,
    },
    /// Group or others may read or write a file that must be private (a key).
    #[error(
        "others may read or write it (mode {mode:o}); a private key must be 0600: `chmod 600` it"
    )]
    ReadableByOthers {
        /// Its permission bits.
        mode: u32,
    },
    /// A folder above it belongs to a third user, who could replace it.
    #[error(
        "the folder {} belongs to user {owner}, neither root nor the file's owner ({file_owner}), \
         who could replace it",
        folder.display()
    )]
    FolderOwner {
        /// The folder.
        folder: PathBuf,
        /// The folder's owner.
        owner: u32,
        /// The file's owner.
        file_owner: u32,
    },
    /// Others may write to a folder above it (without the sticky bit), and could replace it.
    #[error(
        "others may write to the folder {} (mode {mode:o}), and could replace it; `chmod go-w` that \
         folder",
        folder.display()
    )]
    FolderWritableByOthers {
        /// The folder.
        folder: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// Whether a file or directory belongs to the current user and nobody else
/// may write to it.
#[cfg(unix)]
pub fn owned_by_user_alone(meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    use std::os::unix::fs::MetadataExt as _;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(Unsafe::Owner {
            owner: meta.uid(),
            me,
        });
    }
    if meta.is_dir() {
        return writable_by_owner_alone(meta);
    }
    Ok(())
}

/// On Windows the place is checked instead (the compile cache keeps only beneath the user's profile).
#[cfg(not(unix))]
pub fn owned_by_user_alone(_meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    Ok(())
}

/// Whether neither group nor others may write to it (on Windows: nothing is checked here).
#[cfg(unix)]
fn writable_by_owner_alone(meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    use std::os::unix::fs::MetadataExt as _;
    if meta.mode() & 0o022 != 0 {
        return Err(Unsafe::WritableByOthers {
            mode: meta.mode() & 0o777,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn writable_by_owner_alone(_meta: &std::fs::Metadata) -> Result<(), Unsafe> {
    Ok(())
}

/// Whether the file or folder at `path` (which must exist) is one only the
/// user can change: theirs, and not writable by group or others (files too).
/// `Err` says why not, with the fix. What the trust folder is held to. On
/// Windows, where owners and ACLs are read only through the Win32 security
/// API (which this crate does not call), nothing is checked.
pub fn only_user_may_write(path: &Path) -> Result<(), Unsafe> {
    let meta = std::fs::metadata(path).map_err(Unsafe::Unreadable)?;
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
pub fn private_to_user(path: &Path) -> Result<(), Unsafe> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).map_err(Unsafe::Unreadable)?;
    owned_by_user_alone(&meta)?;
    if meta.mode() & 0o077 != 0 {
        return Err(Unsafe::ReadableByOthers {
            mode: meta.mode() & 0o777,
        });
    }
    Ok(())
}

/// On Windows nothing is checked (see [`only_user_may_write`]).
#[cfg(not(unix))]
pub fn private_to_user(_path: &Path) -> Result<(), Unsafe> {
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
pub fn only_owner_may_change(path: &Path) -> Result<(), Unsafe> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).map_err(Unsafe::Unreadable)?;
    let owner = meta.uid();
    writable_by_owner_alone(&meta)?;
    let mut chains = vec![path.to_path_buf()];
    chains.extend(std::fs::canonicalize(path).ok());
    for chain in chains {
        for dir in chain.ancestors().skip(1) {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let d = std::fs::metadata(dir).map_err(|error| Unsafe::FolderUnreadable {
                folder: dir.to_path_buf(),
                error,
            })?;
            if d.uid() != 0 && d.uid() != owner {
                return Err(Unsafe::FolderOwner {
                    folder: dir.to_path_buf(),
                    owner: d.uid(),
                    file_owner: owner,
                });
            }
            if d.mode() & 0o022 != 0 && d.mode() & 0o1000 == 0 {
                return Err(Unsafe::FolderWritableByOthers {
                    folder: dir.to_path_buf(),
                    mode: d.mode() & 0o777,
                });
            }
        }
    }
    Ok(())
}

/// On Windows nothing is checked (see [`only_user_may_write`]).
#[cfg(not(unix))]
pub fn only_owner_may_change(_path: &Path) -> Result<(), Unsafe> {
    Ok(())
}
