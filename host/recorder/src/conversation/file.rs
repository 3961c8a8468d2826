//! The file of a golden conversation: the user's alone, and replaced whole.

use std::io::Write as _;
use std::path::Path;

/// Empties the file at `path` (or makes it), readable and writable by its
/// owner only.
pub(crate) fn private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    // A file that was there before keeps its mode through `open`.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    drop(file);
    Ok(())
}

/// The `safe` list of the conversation already at `path` (if it is one),
/// with `more` added.
pub(crate) fn previous_safe(path: &Path, more: &[String]) -> Vec<String> {
    // Its first line, `{"from":"recording", …, "safe":[…]}` (only that is read).
    let first: Option<serde_json::Value> = std::fs::File::open(path)
        .ok()
        .and_then(|f| std::io::BufRead::lines(std::io::BufReader::new(f)).next())
        .and_then(Result::ok)
        .and_then(|l| serde_json::from_str(&l).ok());
    let mut safe: Vec<String> = first
        .filter(|l| l["from"] == "recording")
        .and_then(|l| l["safe"].as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    for s in more {
        if !s.is_empty() && !safe.contains(s) {
            safe.push(s.clone());
        }
    }
    safe
}

/// Puts `text` in place of the file at `path`, whole, readable by its owner
/// only (a temporary file's mode, renamed into place).
pub(crate) fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut aside = tempfile::NamedTempFile::new_in(dir)?;
    aside.write_all(text.as_bytes())?;
    aside.persist(path).map_err(|e| e.error)?;
    Ok(())
}
