//! The files azd writes in the project, kept plain while a provider holds a
//! read-write grant over them.
//!
//! azd writes `azure.yaml`, `.azure/config.json`, and each environment's
//! `.azure/<env>/.env` and `.azure/<env>/config.json` by path, following
//! links (`os.Create` truncates what a link names). A guest whose grant
//! covers one of those folders could swap the file for a link, say `.env`
//! for one to `~/.bashrc`, and azd would write the environment's values
//! there, or read them from there and hand them back through
//! `environment.get-values`. The guest's own filesystem refuses the links
//! that could do it ([`super::links`]); this check holds the files whatever
//! the route (a folder moved with a link in it, a link shipped in the
//! project, another process).
//!
//! **What is checked.** Only what an instance's read-write grants reach, so
//! that a link the user made where no grant reaches stays the user's affair:
//! an entry is reached when its folder is a read-write grant's folder or lies
//! beneath one. Grants are told apart by identity (device and inode, or
//! Windows' file index), not by name, so `.AZURE/dev` on a case-insensitive
//! disk or an `outside_project` grant on the project's parent counts too.
//! A reached `azure.yaml`, `config.json` or `.env` must be a regular file
//! with one name (a hard link would carry azd's writes to its other name; the
//! count is read on Unix), a reached `.azure` or environment folder a real
//! directory, and no entry of a reached `.azure` a symbolic link (azd would
//! take it for an environment). Nothing is ever followed: each folder is
//! opened from the project's handle without following a link, each entry
//! looked at with `lstat`.
//!
//! **When.** At Initialize, before the guest gets its grants: anything wrong
//! refuses the grants (`unsafe_grant`) and is left as it is, since it was
//! there before this instance (the user's, most likely). After every call
//! (`initialize`, `deploy`, `preview`, `destroy`, `state`, `parameters`, …,
//! whether it answered, failed, trapped or was stopped), and before every
//! read or write of azd's environment the guest asks for: anything wrong
//! makes the call's answer `unsafe_azd_file`, naming each path and where a
//! link pointed, retires the instance, and is logged as a warning.
//!
//! **Links are removed** (only the link: what it named is untouched). A link
//! found after Initialize's check appeared while the provider held the grant.
//! Left in place, the next azd command that saves the environment, which may
//! not involve this provider at all (`azd env set`), would write through it;
//! removed, azd writes a fresh file where it expects one, and the message
//! says where the link pointed, so nothing is lost that cannot be remade.
//! Anything else wrong (a hard link, a folder where a file belongs) is only
//! reported: removing it could lose azd's data.
//!
//! **Cost.** One scan is a handful of system calls, measured with `strace`
//! on Linux: for the usual `.azure/{env}` grant 9 (two folder opens, three
//! `lstat`s, their closes), about 4 µs; for a grant over the project's root
//! with one environment 20 (a listing of `.azure` besides), about 13 µs.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use azd_wasm_host_core::{ErrorCode, ProviderError, text};
use cap_primitives::fs::{FollowSymlinks, Metadata, open_dir_nofollow, read_base_dir, stat};
use same_file::Handle;

/// The folders azd keeps its files in, relative to the project.
const AZURE_DIR: &str = ".azure";
/// The files azd writes, relative to the project, `.azure` and an environment's folder.
const PROJECT_FILE: &str = "azure.yaml";
const CONFIG_FILE: &str = "config.json";
const DOTENV_FILE: &str = ".env";

/// Which of azd's folders an instance's read-write grants reach into.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Reach {
    /// The project's root: `azure.yaml`, `.azure` and all beneath it.
    root: bool,
    /// `.azure`: its `config.json`, and every entry and environment in it.
    azure: bool,
    /// Environment folders by their names in `.azure` (when `.azure` is not
    /// reached): their `.env` and `config.json`.
    envs: Vec<OsString>,
}

impl Reach {
    /// What the folders `granted` reach of the project opened as `root` (at
    /// `canonical`).
    fn of(root: &File, canonical: &Path, granted: &[Handle]) -> Self {
        let reached = |file: io::Result<File>| {
            file.and_then(Handle::from_file)
                .is_ok_and(|h| granted.contains(&h))
        };
        // The root itself, or a folder above it (an `outside_project` grant).
        let root_reached = reached(root.try_clone())
            || canonical
                .ancestors()
                .skip(1)
                .any(|up| Handle::from_path(up).is_ok_and(|h| granted.contains(&h)));
        let azure = open_dir_nofollow(root, Path::new(AZURE_DIR));
        let azure_reached = root_reached || azure.as_ref().is_ok_and(|a| reached(a.try_clone()));
        let mut envs = Vec::new();
        if let (false, Ok(azure)) = (azure_reached, &azure) {
            for entry in read_base_dir(azure).into_iter().flatten().flatten() {
                let name = entry.file_name();
                if reached(open_dir_nofollow(azure, Path::new(&name))) {
                    envs.push(name);
                }
            }
        }
        Self {
            root: root_reached,
            azure: azure_reached,
            envs,
        }
    }

    fn is_empty(&self) -> bool {
        !self.root && !self.azure && self.envs.is_empty()
    }
}

/// What is wrong with one of azd's entries.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Wrong {
    /// A symbolic link, and its target.
    Link(String),
    /// A file with more names than one (a hard link).
    Names(u64),
    /// Not the kind azd writes there ("a regular file", "a directory").
    NotA(&'static str),
}

/// One entry found wrong.
#[derive(Debug, Clone)]
struct Finding {
    /// Where, as the user names it.
    path: String,
    wrong: Wrong,
    removed: bool,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = &self.path;
        match &self.wrong {
            Wrong::Link(target) => {
                write!(f, "{path} is a symbolic link (to {})", text::quote(target))?;
                if self.removed {
                    f.write_str(", which the host removed (what it named is untouched)")?;
                }
                Ok(())
            }
            Wrong::Names(n) => write!(
                f,
                "{path} has {n} names (a hard link): what azd writes to it would appear under the others"
            ),
            Wrong::NotA(kind) => write!(f, "{path} is not {kind}"),
        }
    }
}

/// What one scan found; links are removed when `remove` is set.
struct Scan<'a> {
    /// The project's root as the user names it.
    shown: &'a Path,
    remove: bool,
    found: Vec<Finding>,
}

/// The kind azd writes at an entry.
#[derive(Clone, Copy)]
enum Kind {
    File,
    Dir,
}

impl Scan<'_> {
    /// Every entry of `reach` beneath `root`.
    fn run(&mut self, root: &File, reach: &Reach) {
        let top = Path::new("");
        let azure_name = Path::new(AZURE_DIR);
        if reach.root {
            self.look(root, top, PROJECT_FILE, Kind::File);
            if !self.look(root, top, AZURE_DIR, Kind::Dir) {
                return;
            }
        }
        let Ok(azure) = open_dir_nofollow(root, azure_name) else {
            return;
        };
        if reach.azure {
            self.look(&azure, azure_name, CONFIG_FILE, Kind::File);
            for entry in read_base_dir(&azure).into_iter().flatten().flatten() {
                let is_entry_dir = entry
                    .file_type()
                    .is_ok_and(|t| t.is_dir() || t.is_symlink());
                if is_entry_dir && self.look(&azure, azure_name, entry.file_name(), Kind::Dir) {
                    self.environment(&azure, &entry.file_name());
                }
            }
        } else {
            // The folders themselves are out of reach (`.azure` is not granted).
            for env in &reach.envs {
                self.environment(&azure, env);
            }
        }
    }

    /// The two files of the environment folder `name` in `.azure`.
    fn environment(&mut self, azure: &File, name: &std::ffi::OsStr) {
        let at = Path::new(AZURE_DIR);
        let Ok(env) = open_dir_nofollow(azure, Path::new(name)) else {
            return;
        };
        let at = at.join(name);
        self.look(&env, &at, DOTENV_FILE, Kind::File);
        self.look(&env, &at, CONFIG_FILE, Kind::File);
    }

    /// Looks at `name` in `dir` (at `at` in the project) without following
    /// it; whether it is there as `kind` wants (a finding otherwise, but for
    /// an entry that is not there at all).
    fn look(&mut self, dir: &File, at: &Path, name: impl AsRef<Path>, kind: Kind) -> bool {
        let name = name.as_ref();
        let meta = match stat(dir, name, FollowSymlinks::No) {
            Ok(meta) => meta,
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    tracing::debug!(path = %at.join(name).display(), error = %e, "cannot look at azd's file");
                }
                return false;
            }
        };
        let wrong = if meta.file_type().is_symlink() {
            let target = cap_primitives::fs::read_link_contents(dir, name)
                .map_or_else(|_| "?".to_owned(), |t| t.to_string_lossy().into_owned());
            Wrong::Link(target)
        } else if let Some(wrong) = not_plain(&meta, kind) {
            wrong
        } else {
            return true;
        };
        let removed = matches!(wrong, Wrong::Link(_)) && self.remove && remove_link(dir, name);
        self.found.push(Finding {
            path: self
                .shown
                .join(at)
                .join(name)
                .to_string_lossy()
                .into_owned(),
            wrong,
            removed,
        });
        false
    }
}

/// What is wrong with an entry that is not a link, if anything.
fn not_plain(meta: &Metadata, kind: Kind) -> Option<Wrong> {
    match kind {
        Kind::Dir if meta.is_dir() => None,
        Kind::Dir => Some(Wrong::NotA("a directory")),
        Kind::File if !meta.is_file() => Some(Wrong::NotA("a regular file")),
        Kind::File => names(meta).filter(|&n| n > 1).map(Wrong::Names),
    }
}

/// How many names a file has, where the platform says.
#[cfg(unix)]
fn names(meta: &Metadata) -> Option<u64> {
    Some(cap_primitives::fs::MetadataExt::nlink(meta))
}

#[cfg(not(unix))]
fn names(_: &Metadata) -> Option<u64> {
    None
}

/// Removes the link `name` in `dir`, not what it names; whether it went.
fn remove_link(dir: &File, name: &Path) -> bool {
    let removed = cap_primitives::fs::remove_file(dir, name);
    // Windows removes a link to a folder as a folder.
    #[cfg(windows)]
    let removed = removed.or_else(|_| cap_primitives::fs::remove_dir(dir, name));
    removed.is_ok()
}

/// azd's files in one instance's project, as far as its read-write grants
/// reach them (none: nothing to check).
#[derive(Clone, Default)]
pub(crate) struct AzdFiles(Option<Arc<Watched>>);

struct Watched {
    root: File,
    /// The project's root as the user names it (`native_form`).
    shown: PathBuf,
    reach: Reach,
    provider: String,
    /// The error of what a check during the current call found, for its answer.
    tripped: parking_lot::Mutex<Option<ProviderError>>,
}

impl AzdFiles {
    /// Watches the project opened as `root` (at `canonical`, which the user
    /// reads as `shown`) for a provider whose read-write grants are the
    /// folders `granted`. What they reach is checked now, before the guest
    /// has them: anything wrong refuses the grants and is left as it is.
    pub(crate) fn watch(
        root: File,
        canonical: &Path,
        shown: PathBuf,
        granted: &[Handle],
        provider: &str,
    ) -> Result<Self, ProviderError> {
        let reach = Reach::of(&root, canonical, granted);
        if reach.is_empty() {
            return Ok(Self(None));
        }
        let watched = Watched {
            root,
            shown,
            reach,
            provider: provider.to_owned(),
            tripped: parking_lot::Mutex::new(None),
        };
        let found = watched.scan(false);
        if !found.is_empty() {
            return Err(ProviderError::host(
                ErrorCode::UnsafeGrant,
                format!(
                    "the provider's read-write grants reach files azd writes that are not plain: {}",
                    joined(&found)
                ),
            )
            .with_suggestion(
                "azd follows links when it writes its files, so a provider granted their folder \
                 could redirect them; replace each with a regular file or folder, or narrow the \
                 grant in provider.toml",
            ));
        }
        Ok(Self(Some(Arc::new(watched))))
    }

    /// Checks azd's files now (`when`: "after `deploy`", …), removing links:
    /// the error for the call's answer when anything is wrong, now or at an
    /// earlier check during this instance.
    pub(crate) fn check(&self, when: &str) -> Result<(), ProviderError> {
        let Some(watched) = &self.0 else {
            return Ok(());
        };
        let found = watched.scan(true);
        let mut tripped = watched.tripped.lock();
        if !found.is_empty() {
            for finding in &found {
                tracing::warn!(provider = %watched.provider, "{finding}, found {when}");
            }
            tripped.get_or_insert_with(|| unsafe_file(&found, when));
        }
        tripped.as_ref().map_or(Ok(()), |e| Err(e.clone()))
    }
}

impl Watched {
    fn scan(&self, remove: bool) -> Vec<Finding> {
        let mut scan = Scan {
            shown: &self.shown,
            remove,
            found: Vec::new(),
        };
        scan.run(&self.root, &self.reach);
        scan.found
    }
}

fn joined(found: &[Finding]) -> String {
    let parts: Vec<String> = found.iter().map(ToString::to_string).collect();
    parts.join("; ")
}

/// The answer's error for files found wrong during a call.
fn unsafe_file(found: &[Finding], when: &str) -> ProviderError {
    ProviderError::host(
        ErrorCode::UnsafeAzdFile,
        format!(
            "files azd writes were not plain {when}, so azd must not use them: {}",
            joined(found)
        ),
    )
    .with_suggestion(
        "a provider with a read-write grant over azd's files made or moved a link there (or \
         something else did while it ran); its instance was stopped. Check what the link named, \
         and tell the provider's author",
    )
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::symlink;

    /// A project at `<tmp>/p` with `.azure/dev`; its canonical path and handle.
    #[cfg(unix)]
    fn project() -> (tempfile::TempDir, PathBuf, File) {
        let tmp = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(tmp.path()).unwrap().join("p");
        std::fs::create_dir_all(canonical.join(".azure/dev")).unwrap();
        std::fs::create_dir_all(canonical.join("infra")).unwrap();
        let root = File::open(&canonical).unwrap();
        (tmp, canonical, root)
    }

    #[cfg(unix)]
    fn handle(path: &Path) -> Handle {
        Handle::from_path(path).unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn what_a_grant_reaches_is_told_by_identity() {
        let (_tmp, p, root) = project();
        let reach = |granted: &[&Path]| {
            let handles: Vec<Handle> = granted.iter().map(|g| handle(g)).collect();
            Reach::of(&root, &p, &handles)
        };
        let everything = Reach {
            root: true,
            azure: true,
            envs: Vec::new(),
        };
        assert_eq!(reach(&[&p]), everything);
        // An outside_project grant on the project's parent reaches it all too.
        assert_eq!(reach(&[p.parent().unwrap()]), everything);
        assert_eq!(
            reach(&[&p.join(".azure")]),
            Reach {
                azure: true,
                ..Reach::default()
            }
        );
        assert_eq!(
            reach(&[&p.join("infra"), &p.join(".azure/dev")]),
            Reach {
                envs: vec!["dev".into()],
                ..Reach::default()
            }
        );
        assert!(reach(&[&p.join("infra")]).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn every_file_azd_writes_under_a_reached_root_is_checked() {
        let (_tmp, p, root) = project();
        std::fs::create_dir_all(p.join(".azure/prod")).unwrap();
        symlink("elsewhere.yaml", p.join("azure.yaml")).unwrap();
        symlink("/tmp", p.join(".azure/staging")).unwrap();
        std::fs::create_dir(p.join(".azure/config.json")).unwrap();
        std::fs::write(p.join(".azure/prod/.env"), "A=1\n").unwrap();
        std::fs::hard_link(p.join(".azure/prod/.env"), p.join("infra/copy")).unwrap();
        symlink("../../x", p.join(".azure/dev/config.json")).unwrap();
        // Not azd's: left alone.
        symlink("/etc", p.join("infra/link")).unwrap();
        std::fs::write(p.join(".azure/notes.txt"), "").unwrap();

        let granted = [handle(&p)];
        let e = AzdFiles::watch(root.try_clone().unwrap(), &p, p.clone(), &granted, "t")
            .err()
            .unwrap();
        assert_eq!(e.code(), Some("unsafe_grant"));
        for part in [
            "p/azure.yaml is a symbolic link (to \"elsewhere.yaml\")",
            "p/.azure/staging is a symbolic link (to \"/tmp\")",
            "p/.azure/config.json is not a regular file",
            "p/.azure/prod/.env has 2 names",
            "p/.azure/dev/config.json is a symbolic link (to \"../../x\")",
        ] {
            assert!(e.message.contains(part), "{part}: {}", e.message);
        }
        assert!(!e.message.contains("removed"), "{}", e.message);
        assert!(!e.message.contains("infra"), "{}", e.message);
        assert!(p.join("azure.yaml").symlink_metadata().is_ok(), "kept");

        // Found after a call: the links go, the rest stays and is reported.
        let watched = Watched {
            root,
            shown: p.clone(),
            reach: Reach::of(&File::open(&p).unwrap(), &p, &granted),
            provider: "t".into(),
            tripped: parking_lot::Mutex::new(None),
        };
        let files = AzdFiles(Some(Arc::new(watched)));
        let e = files.check("after `deploy`").unwrap_err();
        assert_eq!(e.code(), Some("unsafe_azd_file"));
        assert!(
            e.message.contains("not plain after `deploy`"),
            "{}",
            e.message
        );
        assert_eq!(e.message.matches("which the host removed").count(), 3);
        for gone in ["azure.yaml", ".azure/staging", ".azure/dev/config.json"] {
            assert!(p.join(gone).symlink_metadata().is_err(), "{gone}");
        }
        assert!(p.join(".azure/prod/.env").is_file());
        assert!(std::fs::read_link(p.join("infra/link")).is_ok());
        // The answer stays refused for the rest of the instance, though the links are gone.
        std::fs::remove_file(p.join("infra/copy")).unwrap();
        std::fs::remove_dir(p.join(".azure/config.json")).unwrap();
        assert_eq!(files.check("after `state`").unwrap_err().message, e.message);
    }

    #[cfg(unix)]
    #[test]
    fn plain_files_pass_and_no_reach_checks_nothing() {
        let (_tmp, p, root) = project();
        std::fs::write(p.join("azure.yaml"), "name: x\n").unwrap();
        std::fs::write(p.join(".azure/config.json"), "{}").unwrap();
        std::fs::write(p.join(".azure/dev/.env"), "A=1\n").unwrap();
        let files = AzdFiles::watch(root, &p, p.clone(), &[handle(&p)], "t").unwrap();
        files.check("after `deploy`").unwrap();
        let (_tmp, p, root) = project();
        symlink("/etc/passwd", p.join(".azure/dev/.env")).unwrap();
        let files = AzdFiles::watch(root, &p, p.clone(), &[handle(&p.join("infra"))], "t").unwrap();
        assert!(files.0.is_none());
        files.check("after `deploy`").unwrap();
    }
}
