//! The log file, bounded while the process runs ([`RollingFile`]).
//!
//! Before each write the file's size is looked at (one `fstat`); a write that
//! would take it past its bound first moves it to `<file>.1` (replacing the
//! one there) and starts a new file. So the file on disk never grows past its
//! bound by more than a line per process writing to it, and the two files
//! together hold at most about twice the bound, however much is logged.
//!
//! Several `listen` processes may append to one file. Rotation happens under
//! an exclusive lock on `<file>.lock` beside it, and the decision is made
//! again under that lock from the file the path names, not from the one this
//! process has open: when another process has already moved the file aside,
//! the path names a new, small file, which this process opens and appends to
//! instead of moving it over the one just rotated. A process still writing to
//! the moved file finds it past the bound at its next line and follows.
//! (Where the lock cannot be taken, the rotation goes ahead without it.)
//!
//! Every file is created owner-only (0600 on Unix) in the private log folder,
//! and an existing one opened with wider permissions is narrowed; the rotated
//! file keeps its mode.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A log file that is moved aside when it reaches its bound.
pub(super) struct RollingFile {
    path: PathBuf,
    bound: u64,
    file: File,
}

impl RollingFile {
    /// Opens `path` for appending (created owner-only), to be rotated past
    /// `bound` bytes.
    pub(super) fn open(path: &Path, bound: u64) -> io::Result<Self> {
        Ok(Self {
            path: path.to_owned(),
            bound,
            file: open_private(path, true)?,
        })
    }

    /// Whether `size` bytes and `incoming` more pass the bound (an empty file
    /// takes any line).
    fn full(&self, size: u64, incoming: usize) -> bool {
        size > 0 && size.saturating_add(incoming as u64) > self.bound
    }

    /// Moves the file aside (unless another process just did) and opens the
    /// one the path names now.
    fn rotate(&mut self, incoming: usize) -> io::Result<()> {
        let lock = open_private(&with_suffix(&self.path, ".lock"), false)?;
        // Unlocked when `lock` is closed, at the end of this function. Where
        // it cannot be taken, the rotation goes ahead without it (nothing is
        // logged about it: this is the log's own writer).
        let _locked = lock.lock();
        let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        if self.full(size, incoming) {
            move_aside(&self.path)?;
        }
        self.file = open_private(&self.path, true)?;
        Ok(())
    }
}

impl Write for RollingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let size = self.file.metadata()?.len();
        if self.full(size, buf.len()) {
            // A line that cannot be written within the bound is dropped.
            self.rotate(buf.len())?;
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Moves the file at `path` to `<path>.1`; where that fails (a file there
/// another process holds open, on Windows), empties it instead, so the bound
/// holds either way.
fn move_aside(path: &Path) -> io::Result<()> {
    let rotated = with_suffix(path, ".1");
    if std::fs::rename(path, &rotated).is_ok() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&rotated);
    if std::fs::rename(path, &rotated).is_ok() {
        return Ok(());
    }
    OpenOptions::new().write(true).open(path)?.set_len(0)
}

/// Opens `path` for writing (appending, when `append`), creating it
/// owner-only; an existing file others may read is narrowed to owner-only.
fn open_private(path: &Path, append: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true);
    if append {
        options.append(true);
    } else {
        options.write(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        options.mode(0o600);
        let file = options.open(path)?;
        if file.metadata()?.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use super::*;

    const BOUND: u64 = 1000;

    fn size(path: &Path) -> u64 {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }

    fn line(n: usize) -> Vec<u8> {
        format!("{n:0>99}\n").into_bytes()
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn it_rotates_past_its_bound_while_it_runs_and_stays_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.log");
        let rotated = with_suffix(&path, ".1");
        let mut log = RollingFile::open(&path, BOUND).unwrap();
        for n in 0..100 {
            log.write_all(&line(n)).unwrap();
            assert!(size(&path) <= BOUND, "{} after line {n}", size(&path));
            assert!(size(&rotated) <= BOUND, "{}", size(&rotated));
        }
        // 10 KB written: rotated, the newest lines kept, whole.
        let now = std::fs::read_to_string(&path).unwrap();
        let before = std::fs::read_to_string(&rotated).unwrap();
        assert!(
            now.ends_with(&String::from_utf8(line(99)).unwrap()),
            "{now}"
        );
        assert_eq!(before.len() as u64, BOUND);
        assert!(before.lines().chain(now.lines()).all(|l| l.len() == 99));
        #[cfg(unix)]
        for file in [&path, &rotated, &with_suffix(&path, ".lock")] {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_could_read_is_made_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.log");
        std::fs::write(&path, b"old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut log = RollingFile::open(&path, BOUND).unwrap();
        log.write_all(b"new\n").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\nnew\n");
    }

    /// Two writers on one file (as two `listen` processes): the first to
    /// pass the bound rotates; the other follows to the new file instead of
    /// moving it over the rotated one; both stay within the bound.
    #[test]
    fn writers_sharing_the_file_rotate_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.log");
        let rotated = with_suffix(&path, ".1");
        let mut a = RollingFile::open(&path, BOUND).unwrap();
        let mut b = RollingFile::open(&path, BOUND).unwrap();
        for n in 0..10 {
            a.write_all(&line(n)).unwrap();
        }
        assert_eq!(size(&path), BOUND);
        a.write_all(&line(10)).unwrap(); // a rotates
        assert_eq!(size(&rotated), BOUND);
        b.write_all(&line(11)).unwrap(); // b holds the moved file: it follows
        assert_eq!(size(&rotated), BOUND, "the rotated file was replaced");
        assert_eq!(size(&path), 200);
        for n in 12..200 {
            let w = if n % 3 == 0 { &mut a } else { &mut b };
            w.write_all(&line(n)).unwrap();
            assert!(size(&path) <= BOUND, "{}", size(&path));
            assert!(size(&rotated) <= BOUND, "{}", size(&rotated));
        }
        let now = std::fs::read_to_string(&path).unwrap();
        assert!(now.ends_with(&String::from_utf8(line(199)).unwrap()));
    }

    #[test]
    fn a_line_longer_than_the_bound_gets_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.log");
        let mut log = RollingFile::open(&path, BOUND).unwrap();
        log.write_all(&line(1)).unwrap();
        log.write_all(&[b'x'; 3000]).unwrap();
        assert_eq!(size(&path), 3000);
        assert_eq!(size(&with_suffix(&path, ".1")), 100);
        log.write_all(&line(2)).unwrap();
        assert_eq!(size(&path), 100);
    }
}
