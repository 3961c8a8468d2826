//! Directory grants, opened beneath the project so that nothing a guest can
//! change decides what the next instance is granted.
//!
//! At every `initialize` the project directory azd names is canonicalised and
//! opened; each grant inside the project is then opened from there one
//! directory at a time, never following a symbolic link (`O_NOFOLLOW` on each
//! step, through `cap-primitives`, the sandboxed file API wasmtime-wasi is
//! built on). A link anywhere on a grant's path (planted by an
//! earlier instance, or shipped in the project) refuses the grant with an
//! error that names it and where the link points; a link cannot redirect a
//! grant, not even to another place inside the project that was never
//! granted. The open directory handle, not its path, is what the guest gets,
//! so a link planted after the check changes nothing either.
//!
//! A grant outside the project exists only when the manifest says
//! `outside_project = true`; it is opened as the system resolves its path.
//!
//! The guest sees each grant at the path azd used for the project joined with
//! the grant's path, so the `project-path` it is given in `initialize` works.
//!
//! A read-write grant's missing folder is made for the provider (it is the
//! place it is meant to create things in). What the host made and the
//! provider left empty is removed again when the process ends
//! ([`remove_unused_dirs`]), so that a command that changes nothing (a
//! preview, a state refresh) leaves no trace in the project. Not earlier: a
//! later instance may hold the same folder open.

use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};

use azd_wasm_host_core::{EnvironmentName, ErrorCode, ProviderError};
use cap_primitives::ambient_authority;
use cap_primitives::fs::{DirOptions, FollowSymlinks};
use wasmtime_wasi::filesystem::Dir as WasiDir;
use wasmtime_wasi::{FsPerms, OpenMode};

use azd_wasm_host_manifest::{FsAccess, FsGrant, GrantLocation, lexical};

use super::azd_files::AzdFiles;

/// Folders made for read-write grants in this process: (the canonical
/// project, the folder relative to it), in the order they were made.
static MADE: parking_lot::Mutex<Vec<(PathBuf, PathBuf)>> = parking_lot::Mutex::new(Vec::new());

/// Removes the folders made for read-write grants that are still empty,
/// deepest first, each beneath its project (a link cannot point the removal
/// elsewhere). A folder with anything in it stays. Called when `listen` ends.
pub fn remove_unused_dirs() {
    let made = std::mem::take(&mut *MADE.lock());
    remove_empty(&made);
}

/// Adds folders made beneath `project` to [`MADE`].
fn remember_made(project: &Path, made: Vec<PathBuf>) {
    MADE.lock()
        .extend(made.into_iter().map(|m| (project.to_path_buf(), m)));
}

/// Removes each folder of `made` (project, relative path) that is empty,
/// last first.
fn remove_empty(made: &[(PathBuf, PathBuf)]) {
    for (project, rel) in made.iter().rev() {
        let removed = cap_primitives::fs::open_ambient_dir(project, ambient_authority())
            .and_then(|root| cap_primitives::fs::remove_dir(&root, rel));
        if removed.is_ok() {
            tracing::debug!(dir = %project.join(rel).display(), "removed an unused granted folder the host made");
        }
    }
}

/// One granted directory: the open handle, the path the guest sees it at, and
/// the host's own name for it ([`native_form`]).
#[derive(Clone)]
pub(crate) struct GrantedDir {
    pub(crate) dir: WasiDir,
    pub(crate) guest_path: String,
    pub(crate) native_path: String,
}

/// The error for a grant that cannot be opened safely.
fn refused(grant: &FsGrant, why: impl std::fmt::Display) -> ProviderError {
    ProviderError::host(
        ErrorCode::UnsafeGrant,
        format!("the provider's grant {:?} was refused: {why}", grant.path),
    )
    .with_suggestion(
        "grants are opened beneath the project without following symbolic links; replace the \
         link with a real directory, or change the grant in provider.toml",
    )
}

/// What an instance is granted of the file system: its directories, and
/// azd's files they reach ([`AzdFiles`]).
#[derive(Clone, Default)]
pub(crate) struct Grants {
    pub(crate) dirs: Vec<GrantedDir>,
    pub(crate) azd_files: AzdFiles,
}

/// Opens every fs grant of `grants` for a project at `project_path` (as azd
/// sent it) and the environment `env` (for `{env}`), and checks azd's files
/// the read-write ones reach ([`AzdFiles::watch`]).
#[cfg(test)]
pub(crate) fn open_grants(
    grants: &[FsGrant],
    project_path: &str,
    env: Option<&EnvironmentName>,
    provider: &str,
) -> Result<Grants, ProviderError> {
    open_grants_within(grants, project_path, env, provider, None)
}

/// [`open_grants`], a folder granted outside the project opened only where
/// `bounds` admits the folder it resolves to.
pub(crate) fn open_grants_within(
    grants: &[FsGrant],
    project_path: &str,
    env: Option<&EnvironmentName>,
    provider: &str,
    bounds: Option<&dyn crate::options::FolderBounds>,
) -> Result<Grants, ProviderError> {
    if grants.is_empty() {
        return Ok(Grants::default());
    }
    let project = Path::new(project_path);
    let (canonical, root) = open_project(project)?;
    let guest_base = lexical(project);

    let mut granted = Vec::with_capacity(grants.len());
    let mut writable = Vec::new();
    for grant in grants {
        let location = grant
            .locate(env.map(EnvironmentName::as_str))
            .map_err(|why| refused(grant, why))?;
        let opened = match &location {
            GrantLocation::Inside(rel) => {
                let mut made = Vec::new();
                let dir = open_inside(&root, rel, grant, &mut made);
                remember_made(&canonical, made);
                dir?.map(|dir| (dir, guest_base.join(rel)))
            }
            GrantLocation::Outside(path) => open_outside(project, path, grant, bounds)?,
        };
        let Some((dir, guest)) = opened else {
            tracing::warn!(provider, grant = %grant.path, "granted directory does not exist; not granted");
            continue;
        };
        if grant.access == FsAccess::ReadWrite {
            let identity = dir.try_clone().and_then(same_file::Handle::from_file);
            writable
                .push(identity.map_err(|e| refused(grant, format!("cannot identify it: {e}")))?);
        }
        granted.push(granted_dir(grant, dir, &guest, provider)?);
    }
    let shown = PathBuf::from(native_form(&canonical.to_string_lossy()));
    let azd_files = AzdFiles::watch(root, &canonical, shown, &writable, provider)?;
    Ok(Grants {
        dirs: granted,
        azd_files,
    })
}

/// The open directory `dir` of `grant`, which the guest sees at `guest`.
fn granted_dir(
    grant: &FsGrant,
    dir: File,
    guest: &Path,
    provider: &str,
) -> Result<GrantedDir, ProviderError> {
    let Some((guest_path, native_path)) = guest.to_str().map(|g| (guest_form(g), native_form(g)))
    else {
        return Err(refused(
            grant,
            format!("{} is not valid UTF-8", guest.display()),
        ));
    };
    let (perms, mode) = match grant.access {
        FsAccess::Read => (FsPerms::ReadOnly, OpenMode::READ),
        FsAccess::ReadWrite => (FsPerms::ReadWrite, OpenMode::READ | OpenMode::WRITE),
    };
    tracing::debug!(provider, dir = %guest_path, access = %grant.access, "granted directory");
    Ok(GrantedDir {
        dir: WasiDir::new(dir, perms, mode, false),
        guest_path,
        native_path,
    })
}

/// The project folder azd named (it must be absolute): its canonical path and
/// an open handle to it.
fn open_project(project: &Path) -> Result<(PathBuf, File), ProviderError> {
    let bad_project = |why: String| {
        ProviderError::host(
            ErrorCode::InvalidProjectPath,
            format!(
                "the project directory {}: {why}",
                azd_wasm_host_core::text::quote(&project.to_string_lossy())
            ),
        )
    };
    if !project.is_absolute() {
        return Err(bad_project("the path azd sent is not absolute".into()));
    }
    let canonical = std::fs::canonicalize(project).map_err(|e| bad_project(e.to_string()))?;
    let root = cap_primitives::fs::open_ambient_dir(&canonical, ambient_authority())
        .map_err(|e| bad_project(format!("cannot open it: {e}")))?;
    Ok((canonical, root))
}

/// Opens `rel` beneath `root` one component at a time without following a
/// link. A missing directory is created for a read-write grant (a place the
/// provider is meant to create things in, as azd creates `.azure/<env>`); for a
/// read-only grant there is nothing to show and `None` is returned. Folders it
/// made are added to `made`.
fn open_inside(
    root: &File,
    rel: &Path,
    grant: &FsGrant,
    made: &mut Vec<PathBuf>,
) -> Result<Option<File>, ProviderError> {
    use cap_primitives::fs::{create_dir, open_dir_nofollow};
    let mut dir = root
        .try_clone()
        .map_err(|e| refused(grant, format!("cannot open the project: {e}")))?;
    let mut walked = PathBuf::new();
    for part in rel.components() {
        let Component::Normal(name) = part else {
            return Err(refused(grant, "it is not a clean path inside the project"));
        };
        let name = Path::new(name);
        walked.push(name);
        let next = match open_dir_nofollow(&dir, name) {
            Ok(next) => next,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if grant.access != FsAccess::ReadWrite {
                    return Ok(None);
                }
                create_dir(&dir, name, &DirOptions::new())
                    .inspect(|()| made.push(walked.clone()))
                    .and_then(|()| open_dir_nofollow(&dir, name))
                    .map_err(|e| {
                        refused(grant, format!("cannot create {}: {e}", walked.display()))
                    })?
            }
            Err(e) => return Err(refused(grant, why_not_a_directory(&dir, name, &walked, e))),
        };
        dir = next;
    }
    Ok(Some(dir))
}

/// Why `name` in `parent` could not be opened as a directory, in words: a
/// symbolic link is named with its target.
fn why_not_a_directory(parent: &File, name: &Path, walked: &Path, error: io::Error) -> String {
    match cap_primitives::fs::stat(parent, name, FollowSymlinks::No) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = cap_primitives::fs::read_link_contents(parent, name).map_or_else(
                |_| "an unreadable target".to_owned(),
                |t| format!("{}", t.display()),
            );
            format!(
                "{} is a symbolic link (to {target}); a grant never follows links",
                walked.display()
            )
        }
        Ok(meta) if !meta.is_dir() => format!("{} is not a directory", walked.display()),
        _ => format!("cannot open {}: {error}", walked.display()),
    }
}

/// Opens a grant the manifest placed outside the project, as the system
/// resolves its path (relative paths start at the project).
fn open_outside(
    project: &Path,
    path: &Path,
    grant: &FsGrant,
    bounds: Option<&dyn crate::options::FolderBounds>,
) -> Result<Option<(File, PathBuf)>, ProviderError> {
    let full = project.join(path);
    let canonical = match std::fs::canonicalize(&full) {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(refused(
                grant,
                format!("cannot resolve {}: {e}", full.display()),
            ));
        }
    };
    let Some(bounds) = bounds else {
        let dir = cap_primitives::fs::open_ambient_dir(&canonical, ambient_authority())
            .map_err(|e| refused(grant, format!("cannot open {}: {e}", canonical.display())))?;
        return Ok(Some((dir, canonical)));
    };
    // Judged where it resolved, then opened there without following any
    // link: a link swapped in since it was resolved is refused, so what is
    // opened is what was judged.
    let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    bounds.admits(&project, &canonical, grant.access).map_err(|why| {
        ProviderError::host(
            ErrorCode::ForbiddenByPolicy,
            format!(
                "the provider's grant {:?} resolves to {}, which this machine's provider policy \
                 does not allow: {why}",
                grant.path,
                canonical.display()
            ),
        )
    })?;
    let dir = open_without_links(&canonical)
        .map_err(|e| refused(grant, format!("cannot open {}: {e}", canonical.display())))?;
    Ok(Some((dir, canonical)))
}

/// Opens the folder at `path`, a path the system resolved, one name at a
/// time from its root without following a link: one found there (swapped in
/// since `path` was resolved) fails the open.
fn open_without_links(path: &Path) -> io::Result<File> {
    let mut root = PathBuf::new();
    let mut names = Vec::new();
    for part in path.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => root.push(part.as_os_str()),
            Component::Normal(name) => names.push(name),
            Component::CurDir | Component::ParentDir => {
                return Err(io::Error::other("the path is not resolved"));
            }
        }
    }
    let mut dir = cap_primitives::fs::open_ambient_dir(&root, ambient_authority())?;
    for name in names {
        dir = cap_primitives::fs::open_dir_nofollow(&dir, Path::new(name))?;
    }
    Ok(dir)
}

/// How the guest names a host path: as it is, except on Windows, where the
/// guest's WASI paths are `/`-separated and absolute from `/`
/// ([`windows_guest_form`]). The project path the guest is given goes through
/// here too, so it lies beneath its granted folders on every platform.
pub(crate) fn guest_form(host: &str) -> String {
    #[cfg(windows)]
    return windows_guest_form(host);
    #[cfg(not(windows))]
    host.to_owned()
}

/// How the host names a granted folder to the user: as it is, except on
/// Windows, where it is written with `\` throughout and without the verbatim
/// prefix canonical paths carry ([`windows_native_form`]).
pub(crate) fn native_form(host: &str) -> String {
    #[cfg(windows)]
    return windows_native_form(host);
    #[cfg(not(windows))]
    host.to_owned()
}

/// `\\?\C:\proj\.azure/dev` → `C:\proj\.azure\dev`;
/// `\\?\UNC\server\share` → `\\server\share`.
#[cfg(any(windows, test))]
fn windows_native_form(host: &str) -> String {
    without_verbatim(host).replace('/', "\\")
}

/// `host` without a verbatim prefix (`\\?\C:\x` → `C:\x`,
/// `\\?\UNC\server\share` → `\\server\share`).
#[cfg(any(windows, test))]
fn without_verbatim(host: &str) -> String {
    if let Some(unc) = host.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{unc}")
    } else {
        host.strip_prefix(r"\\?\").unwrap_or(host).to_owned()
    }
}

/// `C:\proj\.azure/dev` → `/C:/proj/.azure/dev`; the verbatim prefixes
/// canonical paths carry (`\\?\C:\x`, `\\?\UNC\server\share`) are dropped,
/// and a share is `//server/share`.
#[cfg(any(windows, test))]
fn windows_guest_form(host: &str) -> String {
    let slashed = without_verbatim(host).replace('\\', "/");
    if azd_wasm_host_manifest::has_drive_prefix(&slashed) {
        format!("/{slashed}")
    } else {
        slashed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(path: &str, access: FsAccess) -> FsGrant {
        FsGrant {
            path: path.into(),
            access,
            outside_project: false,
        }
    }

    #[test]
    fn windows_paths_reach_the_guest_in_wasi_form() {
        for (host, guest) in [
            (r"C:\Users\me\proj", "/C:/Users/me/proj"),
            (
                r"C:\Users\me\proj\.azure/dev",
                "/C:/Users/me/proj/.azure/dev",
            ),
            (r"\\?\D:\data", "/D:/data"),
            (r"\\?\UNC\server\share\x", "//server/share/x"),
            (r"\\server\share", "//server/share"),
        ] {
            assert_eq!(windows_guest_form(host), guest, "{host}");
        }
        // Elsewhere a path reaches the guest as it is.
        if !cfg!(windows) {
            assert_eq!(guest_form("/home/me/a b"), "/home/me/a b");
        }
    }

    #[test]
    fn windows_paths_reach_the_user_in_native_form() {
        for (host, native, guest) in [
            (
                r"Z:\work\proj\.azure/dev",
                r"Z:\work\proj\.azure\dev",
                "/Z:/work/proj/.azure/dev",
            ),
            (r"\\?\D:\data", r"D:\data", "/D:/data"),
            (
                r"\\?\UNC\server\share\x",
                r"\\server\share\x",
                "//server/share/x",
            ),
        ] {
            assert_eq!(windows_native_form(host), native, "{host}");
            // The two forms of one grant are what the path map pairs.
            let map = super::super::PathMap::new(
                [(windows_guest_form(host), windows_native_form(host))],
                '\\',
            );
            let inside = format!("{native}\\out.txt");
            assert_eq!(map.to_native(&format!("{guest}/out.txt")), Some(inside));
        }
        if !cfg!(windows) {
            assert_eq!(native_form(r"/home/me/a\b"), r"/home/me/a\b");
        }
    }

    /// On Linux and macOS a grant's two names are one, so no value is ever
    /// translated.
    #[cfg(not(windows))]
    #[test]
    fn elsewhere_the_grants_translate_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let env = EnvironmentName::parse("dev").unwrap();
        let dirs = open_grants(
            &[
                grant(".", FsAccess::Read),
                grant("localinfra", FsAccess::ReadWrite),
                grant(".azure/{env}", FsAccess::ReadWrite),
            ],
            tmp.path().to_str().unwrap(),
            Some(&env),
            "p",
        )
        .unwrap()
        .dirs;
        assert_eq!(dirs.len(), 3);
        let map = super::super::PathMap::of_grants(&dirs);
        assert!(map.is_empty());
        for dir in &dirs {
            assert_eq!(dir.native_path, dir.guest_path);
            let inside = format!("{}/web", dir.guest_path);
            assert_eq!(map.to_native(&inside), None);
            assert_eq!(map.to_guest(&inside), None);
        }
    }

    #[test]
    fn lexical_names_are_clean() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(lexical(Path::new("/a/.")), Path::new("/a"));
    }

    #[test]
    fn a_missing_read_write_grant_is_created_and_a_read_grant_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().to_str().unwrap();
        let got = open_grants(
            &[
                grant("made/here", FsAccess::ReadWrite),
                grant("absent", FsAccess::Read),
            ],
            project,
            None,
            "p",
        )
        .unwrap()
        .dirs;
        assert_eq!(got.len(), 1);
        assert!(tmp.path().join("made/here").is_dir());
        assert!(got[0].guest_path.ends_with("made/here"));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_anywhere_on_the_path_refuses_the_grant() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("real")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::os::unix::fs::symlink("../outside", project.join("state")).unwrap();
        // A link that stays inside the project is refused too.
        std::os::unix::fs::symlink("real", project.join("inner")).unwrap();
        for path in ["state", "state/sub", "inner"] {
            let Err(e) = open_grants(
                &[grant(path, FsAccess::ReadWrite)],
                project.to_str().unwrap(),
                None,
                "p",
            ) else {
                panic!("{path} was granted");
            };
            assert_eq!(e.code(), Some("unsafe_grant"));
            assert!(e.message.contains("symbolic link"), "{}", e.message);
        }
        assert!(
            !tmp.path().join("outside/sub").exists(),
            "created through the link"
        );
    }

    #[test]
    fn the_environment_name_fills_the_placeholder() {
        let tmp = tempfile::tempdir().unwrap();
        let env = EnvironmentName::parse("dev").unwrap();
        let got = open_grants(
            &[grant(".azure/{env}", FsAccess::ReadWrite)],
            tmp.path().to_str().unwrap(),
            Some(&env),
            "p",
        )
        .unwrap()
        .dirs;
        assert!(got[0].guest_path.ends_with(".azure/dev"));
        let e = open_grants(
            &[grant(".azure/{env}", FsAccess::ReadWrite)],
            tmp.path().to_str().unwrap(),
            None,
            "p",
        )
        .err()
        .unwrap();
        assert!(e.message.contains("environment name"), "{}", e.message);
        let e = open_grants(&[grant(".", FsAccess::Read)], "relative/path", None, "p")
            .err()
            .unwrap();
        assert_eq!(e.code(), Some("invalid_project_path"));
        // A path as long as azd's messages allow is quoted bounded.
        let long = format!("/{}", "p".repeat(3_000_000));
        let e = open_grants(&[grant(".", FsAccess::Read)], &long, None, "p")
            .err()
            .unwrap();
        assert_eq!(e.code(), Some("invalid_project_path"));
        assert!(e.message.len() < 1024, "{}", e.message.len());
        assert!(e.message.contains("(3000001 bytes)"), "{}", e.message);
    }

    #[test]
    fn folders_made_for_a_grant_go_again_only_when_left_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(tmp.path()).unwrap();
        let root = cap_primitives::fs::open_ambient_dir(&project, ambient_authority()).unwrap();
        std::fs::create_dir(project.join("existing")).unwrap();
        let mut made = Vec::new();
        for path in ["state/deep", "used", "existing/inner"] {
            let g = grant(path, FsAccess::ReadWrite);
            open_inside(&root, Path::new(path), &g, &mut made)
                .unwrap()
                .unwrap();
        }
        let rels: Vec<_> = made.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(rels, ["state", "state/deep", "used", "existing/inner"]);
        std::fs::write(project.join("used/file"), "kept").unwrap();
        // A link planted where a made folder was is not followed.
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("inner")).unwrap();
        std::fs::remove_dir(project.join("existing/inner")).unwrap();
        std::fs::remove_dir(project.join("existing")).unwrap();
        std::os::unix::fs::symlink(outside.path(), project.join("existing")).unwrap();
        remove_empty(
            &made
                .into_iter()
                .map(|m| (project.clone(), m))
                .collect::<Vec<_>>(),
        );
        assert!(!project.join("state").exists(), "empty folders made go");
        assert!(project.join("used/file").exists(), "a folder in use stays");
        assert!(
            outside.path().join("inner").exists(),
            "a link redirected the removal"
        );
    }

    /// Bounds that admit folders beneath one resolved folder.
    struct Beneath(PathBuf);

    impl crate::options::FolderBounds for Beneath {
        fn admits(&self, _project: &Path, real: &Path, _access: FsAccess) -> Result<(), String> {
            if real.starts_with(&self.0) {
                Ok(())
            } else {
                Err(format!("only beneath {}", self.0.display()))
            }
        }
    }

    /// A folder outside the project is judged where it resolves, right
    /// before it is opened: a link in an admitted folder that points
    /// elsewhere is refused (`forbidden_by_policy`), a real folder there is opened.
    #[cfg(unix)]
    #[test]
    fn an_outside_folder_is_opened_only_where_the_bounds_admit_what_it_resolves_to() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let (shared, secret, project) = (root.join("shared"), root.join("secret"), root.join("p"));
        for d in [&shared.join("sub"), &secret, &project] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&secret, shared.join("link")).unwrap();
        let bounds = Beneath(shared.clone());
        let outside = |path: &Path| FsGrant {
            path: path.display().to_string(),
            access: FsAccess::Read,
            outside_project: true,
        };
        let project_path = project.display().to_string();
        let open = |g: FsGrant| open_grants_within(&[g], &project_path, None, "p", Some(&bounds));
        let got = open(outside(&shared.join("sub"))).unwrap();
        assert_eq!(got.dirs.len(), 1);
        let Err(e) = open(outside(&shared.join("link"))) else {
            panic!("a link out of the admitted folder was opened")
        };
        assert_eq!(e.code(), Some("forbidden_by_policy"), "{e:?}");
        assert!(e.message.contains(&secret.display().to_string()), "{e:?}");
        // `..` after the link is where the link leads, not where the path reads.
        let Err(_) = open(outside(&shared.join("link/../secret"))) else {
            panic!("a path through a link was judged by its spelling")
        };
        // What was judged is opened without following a link: one swapped in
        // since the path was resolved fails the open.
        assert!(open_without_links(&shared.join("sub")).is_ok());
        assert!(open_without_links(&shared.join("link")).is_err());
    }
}
