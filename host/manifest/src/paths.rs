//! Paths as a manifest writes them, read the same on every platform: `\`
//! separates names like `/`, a Windows absolute path is absolute only on
//! Windows, and whether a path stays beneath the project.

use std::path::{Path, PathBuf};

/// Whether a path starts with a Windows drive (`C:`).
pub fn has_drive_prefix(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// `path` with `.` and `..` resolved by its names alone (a `..` above the
/// root or the start is dropped); for a name shown or compared, never for a
/// path the host opens, since a link on the way would make it another place.
pub fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A path as a manifest writes it, for this platform. A manifest travels
/// between Windows and the rest, so `\` separates names on every platform,
/// like `/`. A Windows absolute path (`C:\dir`, `\\server\share`) is absolute
/// only on Windows; elsewhere it is refused rather than read as a folder named
/// `C:`. A drive-relative path (`C:dir`) means a different folder per drive's
/// working directory, and is refused everywhere.
pub(crate) fn portable_path(text: &str) -> Result<PathBuf, String> {
    let slashed = text.replace('\\', "/");
    let has_drive = has_drive_prefix(&slashed);
    if has_drive && slashed.as_bytes().get(2) != Some(&b'/') {
        return Err(
            "names a drive without a folder on it (write C:\\dir, or a project path)".into(),
        );
    }
    let windows_absolute = has_drive || slashed.starts_with("//");
    if windows_absolute && !cfg!(windows) {
        return Err(format!(
            "is a Windows path, and this host runs on {}",
            std::env::consts::OS
        ));
    }
    Ok(PathBuf::from(slashed))
}

/// `path` as a clean path beneath the project, if it stays beneath it: not
/// absolute (nor rooted, nor with a drive), and no `..` that climbs above the
/// start. `a/../b` is `b`; `.` is the project itself (empty).
pub(super) fn inside_path(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out.iter().collect())
}
