//! The sidecar builds `package` ships when it is not given host binaries,
//! and what each one is.
//!
//! The sidecar (`host/sidecar`, binary `azd-wasm-host-sidecar`) is the host
//! built without wasmtime's compilers and the author's toolchain: it runs
//! only the code `package` precompiles into each archive. Found, in order:
//! 1. installed as the author's tool (`azd extension install
//!    azd-wasm-host.tools`, made by `scripts/release-tools.sh`): the builds of
//!    every platform in `sidecars/<os>-<arch>/` beside this binary, so that
//!    `package` needs no Rust toolchain and ships what every author ships;
//! 2. in a checkout, this machine's: the latest of the size-optimised builds
//!    (the `sidecar` profile's, `target/sidecar/`, and `scripts/release.sh`'s
//!    in `target/release-dist/<os>-<arch>/`, profile-guided there), and, for a
//!    development build of this CLI only (the tests'), the debug build beside
//!    it, so that an older build left behind is not the one shipped; with
//!    none, a size-optimised one is built now, from the checkout this binary
//!    was built from: with a profile of the code it runs, as the release
//!    workflow builds it (`scripts/pgo.sh`, into `target/pgo/`), or, where
//!    that cannot run (no `llvm-profdata`, Windows), without one, into
//!    `target/sidecar-auto/`; each a folder of its own, so that a build under
//!    way in `target/` never waits for it; every other platform's in
//!    `target/release-dist/<os>-<arch>/`.
//!
//! [`describe`] says which build a binary is, from the note
//! `scripts/release.sh` writes beside it ([`BUILD_NOTE`]) or the profile
//! folder cargo put it in; `package` prints it with the size it ships.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use azd_wasm_host_core::settings;

use super::platforms::{AZD_PLATFORMS, Platform, Shipped as _};

/// The sidecar's binary name, as cargo builds it.
const SIDECAR_BIN: &str = "azd-wasm-host-sidecar";
/// The package of the sidecar binary.
const SIDECAR_PACKAGE: &str = "azd-wasm-host-sidecar";
/// The size-optimised profile (Cargo.toml's `[profile.sidecar]`).
const SIDECAR_PROFILE: &str = "sidecar";
/// Where the author's tool, installed into azd, keeps a sidecar per platform
/// (`sidecars/<os>-<arch>/azd-wasm-host[.exe]`).
pub(crate) const INSTALLED_SIDECARS: &str = "sidecars";
/// The note `scripts/release.sh` writes beside a sidecar build: one JSON
/// object, `{"profile": "sidecar", "profile_guided": true}`.
pub(crate) const BUILD_NOTE: &str = "sidecar-build.json";

/// The sidecar builds to ship: the installed tool's, or this machine's and
/// those of `scripts/release.sh` for other platforms.
pub(super) fn default_sidecars() -> anyhow::Result<Vec<(Platform, PathBuf)>> {
    let exe = std::env::current_exe().context("cannot find this host's own binary")?;
    let exe_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let installed = installed_sidecars(&exe_dir);
    if !installed.is_empty() {
        verify_installed(&exe_dir, &installed, &release_keys()?)?;
        return Ok(installed);
    }
    let here = Platform::this_machine()?;
    let target = exe_dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let in_dist = |p: Platform| {
        target
            .join("release-dist")
            .join(p.slug())
            .join(p.exe_name())
    };
    let bin = format!("{SIDECAR_BIN}{}", std::env::consts::EXE_SUFFIX);
    let mut candidates = vec![target.join(SIDECAR_PROFILE).join(&bin), in_dist(here)];
    if cfg!(debug_assertions) {
        // The tests' CLI ships the debug sidecar they build beside it, when it is the latest.
        candidates.push(exe_dir.join(&bin));
    }
    let native = match newest(candidates) {
        Some(found) => found,
        None => build_here(here)?,
    };
    let mut found = vec![(here, native)];
    for p in AZD_PLATFORMS {
        if p != here && in_dist(p).is_file() {
            found.push((p, in_dist(p)));
        }
    }
    Ok(found)
}

/// The sidecars the installed tool carries beside its binary, if any.
fn installed_sidecars(exe_dir: &Path) -> Vec<(Platform, PathBuf)> {
    AZD_PLATFORMS
        .into_iter()
        .map(|p| {
            (
                p,
                exe_dir
                    .join(INSTALLED_SIDECARS)
                    .join(p.slug())
                    .join(p.exe_name()),
            )
        })
        .filter(|(_, path)| path.is_file())
        .collect()
}

/// Holds the installed tool's sidecars to the release's signed list before
/// any is shipped: the tool's folder, the sidecars' folder and every file
/// in it must be the user's alone to change (a sidecar someone else can
/// replace would run wherever the user's providers are installed), and the
/// list must verify with one of `signers` ([`release_keys`]) and name each
/// file with its sha256 ([`azd_wasm_host_trust::verify_tool_sidecars`]).
fn verify_installed(
    exe_dir: &Path,
    installed: &[(Platform, PathBuf)],
    signers: &Signers,
) -> anyhow::Result<()> {
    let dir = exe_dir.join(INSTALLED_SIDECARS);
    let mut paths = vec![exe_dir.to_path_buf(), dir.clone()];
    for (_, sidecar) in installed {
        paths.extend(sidecar.parent().map(Path::to_path_buf));
        paths.push(sidecar.clone());
    }
    for path in &paths {
        if let Err(why) = azd_wasm_host_core::files::only_user_may_write(path) {
            bail!(
                "the installed tool's sidecar folder cannot be trusted: {}: {why}. `package` \
                 ships these sidecars in every provider it packages, so only you may be able to \
                 change them: fix it, or reinstall the tool (`azd extension install \
                 azd-wasm-host.tools --force`)",
                path.display()
            );
        }
    }
    let (statement, key) =
        azd_wasm_host_trust::verify_tool_sidecars(&dir, &signers.keys, &signers.for_providers)?;
    eprintln!(
        "==> the installed tool's sidecars ({} files) match the list release {} signed (key {})",
        statement.subject.len(),
        statement.predicate.version,
        key.short_id()
    );
    Ok(())
}

/// Public keys, each with where it comes from (for messages).
type Keys = Vec<(PathBuf, azd_wasm_host_trust::PublicKey)>;

/// Who may sign the tool's list of sidecars.
struct Signers {
    /// The keys the list may be signed by.
    keys: Keys,
    /// Keys the user trusts for providers only: never signers of the list,
    /// named when one of them signed it.
    for_providers: Keys,
}

/// The public key of the tool's releases, given when this binary was built
/// (`AZD_WASM_HOST_RELEASE_KEY`, a `PUBLIC KEY` PEM: what a release build
/// carries); without one (a build from a checkout), the keys the user
/// trusts for the tool (`tool-keys/` of their trust folder, held to its own
/// checks), never those they trust for providers.
fn release_keys() -> anyhow::Result<Signers> {
    release_keys_from(
        option_env!("AZD_WASM_HOST_RELEASE_KEY"),
        azd_wasm_host_trust::TrustDir::from_env,
    )
}

fn release_keys_from(
    built_with: Option<&str>,
    trust: impl FnOnce() -> Result<azd_wasm_host_trust::TrustDir, azd_wasm_host_trust::StoreError>,
) -> anyhow::Result<Signers> {
    if let Some(pem) = built_with.filter(|p| !p.trim().is_empty()) {
        let key = azd_wasm_host_trust::PublicKey::from_pem(pem)
            .context("the release key this binary was built with is not a public key")?;
        return Ok(Signers {
            keys: vec![(
                PathBuf::from("the release key this tool was built with"),
                key,
            )],
            for_providers: Vec::new(),
        });
    }
    let trust = trust()?;
    trust.check_private()?;
    Ok(Signers {
        keys: trust.tool_keys(),
        for_providers: trust.trusted_keys(),
    })
}

/// Which build the sidecar at `path` is, in a few words: what its
/// [`BUILD_NOTE`] says, else what the profile folder cargo built it in says.
pub(super) fn describe(path: &Path) -> String {
    let dir = path.parent().unwrap_or(Path::new(""));
    if let Ok(text) = std::fs::read_to_string(dir.join(BUILD_NOTE)) {
        let note: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let profile = note["profile"].as_str().unwrap_or("unknown");
        let guided = note["profile_guided"].as_bool().unwrap_or(false);
        return match (profile, guided) {
            (SIDECAR_PROFILE, true) => "size-optimised, profile-guided".to_owned(),
            (SIDECAR_PROFILE, false) => "size-optimised, without a profile".to_owned(),
            (other, _) => format!("built with the `{other}` profile, not size-optimised"),
        };
    }
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(SIDECAR_PROFILE) => "size-optimised, without a profile".to_owned(),
        Some("debug") => {
            "a debug build, not size-optimised (for tests: ship a scripts/release.sh build)"
                .to_owned()
        }
        Some("release") => "built with the `release` profile, not size-optimised".to_owned(),
        _ => "as given".to_owned(),
    }
}

/// Prints which build of the host `package` ships for `platform` (from
/// `source`) and its size as shipped (`staged`, stripped).
pub(super) fn announce(platform: Platform, source: &Path, staged: &Path) {
    let size = std::fs::metadata(staged).map_or(0, |m| m.len());
    eprintln!(
        "==> ship the host for {platform}: {}, {:.1} MB ({})",
        describe(source),
        size as f64 / 1e6,
        crate::paths::shown(source),
    );
}

/// The most recently modified of `candidates` that are files.
fn newest(candidates: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    candidates
        .into_iter()
        .filter_map(|p| {
            let meta = p.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, p))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p)
}

/// Builds this machine's size-optimised sidecar from the checkout this
/// binary was built from and returns its path.
fn build_here(here: Platform) -> anyhow::Result<PathBuf> {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let checkout = std::fs::canonicalize(&checkout).unwrap_or(checkout);
    if !checkout.join("host/sidecar/Cargo.toml").is_file() {
        bail!(
            "no sidecar build for {here} beside this binary, and no checkout to build it from: \
             install the author's tool (docs/packaging.md), build one with \
             `cargo build --profile {SIDECAR_PROFILE} -p {SIDECAR_PACKAGE}` (or scripts/release.sh), \
             or pass --host {here}=BINARY"
        );
    }
    if let Some(guided) = build_guided(&checkout, here) {
        return Ok(guided);
    }
    let target_dir = checkout.join("target").join("sidecar-auto");
    eprintln!(
        "==> build the size-optimised sidecar for {here}, once (several minutes): \
         cargo build --profile {SIDECAR_PROFILE} -p {SIDECAR_PACKAGE}"
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "--profile",
            SIDECAR_PROFILE,
            "-p",
            SIDECAR_PACKAGE,
            "--target-dir",
        ])
        .arg(&target_dir)
        .current_dir(&checkout)
        .status()
        .with_context(|| {
            format!(
                "cannot run {} to build the sidecar (install the author's tool instead: docs/packaging.md)",
                Path::new(&cargo).display()
            )
        })?;
    if !status.success() {
        bail!("building the sidecar failed ({status}); its output is above");
    }
    let built = target_dir
        .join(SIDECAR_PROFILE)
        .join(format!("{SIDECAR_BIN}{}", std::env::consts::EXE_SUFFIX));
    if !built.is_file() {
        bail!(
            "cargo built the sidecar, yet {} is missing",
            built.display()
        );
    }
    Ok(built)
}

/// This machine's sidecar built as the release workflow builds it, with a
/// profile of the code it runs (`scripts/pgo.sh` of `checkout`, driving this
/// binary; it installs nothing): its path, or `None`, having said why, when
/// it cannot be built so here (no bash, no `llvm-profdata` for rustc's LLVM,
/// or the script failed), and the build without a profile is to be made.
fn build_guided(checkout: &Path, here: Platform) -> Option<PathBuf> {
    let script = checkout.join("scripts").join("pgo.sh");
    if cfg!(windows) || !script.is_file() {
        return None;
    }
    eprintln!(
        "==> build the size-optimised sidecar for {here} with a profile of the code it runs, \
         once (several minutes): scripts/pgo.sh {}",
        here.slug()
    );
    let run = std::process::Command::new("bash")
        .arg(&script)
        .arg(here.slug())
        .env(settings::NO_APT, "1")
        .env("CARGO_TERM_QUIET", "true")
        .envs(std::env::current_exe().ok().map(|exe| (settings::BIN, exe)))
        .current_dir(checkout)
        .stderr(std::process::Stdio::inherit())
        .output();
    let why = match run {
        Ok(out) if out.status.success() => {
            let built = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if built.is_file() {
                return Some(built);
            }
            format!("it named no built sidecar ({})", built.display())
        }
        Ok(out) if out.status.code() == Some(3) => {
            "no llvm-profdata for rustc's LLVM (`rustup component add llvm-tools` gives one)".into()
        }
        Ok(out) => format!("it failed ({}); its output is above", out.status),
        Err(e) => format!("cannot run bash: {e}"),
    };
    eprintln!("==> scripts/pgo.sh: {why}: the sidecar is built without a profile");
    None
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use std::time::{Duration, SystemTime};

    use super::{
        BUILD_NOTE, INSTALLED_SIDECARS, build_guided, describe, installed_sidecars, newest,
        release_keys_from, verify_installed,
    };
    use crate::package::platforms::{AZD_PLATFORMS, Platform, Shipped as _};
    use azd_wasm_host_trust::{KeyPair, SIDECARS_BUNDLE_FILE, TrustDir, sign_sidecars};

    /// An installed tool's folder (private to the user, as azd makes it) carrying the sidecars
    /// of two platforms, signed by `key`.
    fn installed_tool(key: &KeyPair) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let sidecars = dir.path().join(INSTALLED_SIDECARS);
        for p in [AZD_PLATFORMS[0], AZD_PLATFORMS[4]] {
            std::fs::create_dir_all(sidecars.join(p.slug())).unwrap();
            std::fs::write(sidecars.join(p.slug()).join(p.exe_name()), p.slug()).unwrap();
        }
        let bundle = sign_sidecars(&sidecars, "0.1.0", key).unwrap();
        std::fs::write(sidecars.join(SIDECARS_BUNDLE_FILE), bundle).unwrap();
        dir
    }

    /// `package` from a checkout ships the build the checkout's `scripts/pgo.sh` gives, run
    /// for this platform, installing nothing and driving this binary; whenever the script
    /// cannot give one, the build without a profile is made instead.
    #[cfg(unix)]
    #[test]
    fn a_checkout_ships_the_profile_guided_build_its_script_gives() {
        let here = Platform::this_machine().unwrap();
        let checkout = tempfile::tempdir().unwrap();
        let scripts = checkout.path().join("scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        let built = checkout.path().join("built-sidecar");
        std::fs::write(&built, "sidecar").unwrap();
        let script = |body: &str| std::fs::write(scripts.join("pgo.sh"), body).unwrap();
        assert_eq!(build_guided(checkout.path(), here), None, "no script");
        script(&format!(
            "[ \"$1\" = {} ] && [ \"$AZD_WASM_HOST_NO_APT\" = 1 ] && [ -x \"$AZD_WASM_HOST_BIN\" ] || exit 1\necho {}\n",
            here.slug(),
            built.display()
        ));
        assert_eq!(build_guided(checkout.path(), here), Some(built));
        for (body, why) in [
            ("exit 3", "no llvm-profdata"),
            ("exit 1", "the script failed"),
            ("echo /nowhere", "it named no build"),
        ] {
            script(body);
            assert_eq!(build_guided(checkout.path(), here), None, "{why}");
        }
    }

    /// A build with a release key reads no trust folder.
    fn no_trust_dir() -> Result<TrustDir, azd_wasm_host_trust::StoreError> {
        panic!("a build with a release key read the trust folder")
    }

    /// A trust folder of its own (outside any git work tree), private as the user's is.
    fn trust_folder() -> (tempfile::TempDir, TrustDir) {
        let home = tempfile::tempdir().unwrap();
        let trust = TrustDir::at(home.path().join("azd").join("wasm-host"));
        (home, trust)
    }

    /// A CLI built without a release key never takes a key the user trusts for providers
    /// (`trusted-keys/`) as the signer of the tool's sidecars: such a list is refused, saying so.
    #[test]
    fn a_list_signed_by_a_key_trusted_only_for_providers_is_refused() {
        let key = KeyPair::generate().unwrap();
        let tool = installed_tool(&key);
        let found = installed_sidecars(tool.path());
        let (_home, trust) = trust_folder();
        trust.trust(&key.public(), Some("team")).unwrap();
        let refused = release_keys_from(None, || Ok(trust.clone()))
            .and_then(|keys| verify_installed(tool.path(), &found, &keys));
        let e = format!("{:#}", refused.unwrap_err());
        assert!(
            e.contains(&key.public().short_id())
                && e.contains("which you trust for providers")
                && e.contains("not for the tool")
                && e.contains("trust add KEY --for tool"),
            "{e}"
        );
    }

    /// The same list verifies once its key is trusted for the tool (`tool-keys/`), and a key
    /// trusted for the tool alone is no signer of providers.
    #[test]
    fn a_list_signed_by_a_key_trusted_for_the_tool_verifies() {
        let key = KeyPair::generate().unwrap();
        let tool = installed_tool(&key);
        let found = installed_sidecars(tool.path());
        let (_home, trust) = trust_folder();
        let file = trust.trust_for_tool(&key.public(), None).unwrap();
        assert!(
            file.starts_with(trust.tool_keys_dir()),
            "{}",
            file.display()
        );
        assert!(trust.trusted_keys().is_empty());
        let signers = release_keys_from(None, || Ok(trust.clone())).unwrap();
        assert_eq!(signers.keys.len(), 1);
        verify_installed(tool.path(), &found, &signers).unwrap();
        // `tool-keys/` is held to the trust folder's checks: others may not write to it.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let dir = trust.tool_keys_dir();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            let e = release_keys_from(None, || Ok(trust.clone())).err().unwrap();
            assert!(format!("{e:#}").contains("tool-keys"), "{e:#}");
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        // Trusted for both: still verifies, by the tool key.
        trust.trust(&key.public(), Some("team")).unwrap();
        let signers = release_keys_from(None, || Ok(trust.clone())).unwrap();
        verify_installed(tool.path(), &found, &signers).unwrap();
        // None at all: says how to add one.
        let (_home, empty) = trust_folder();
        let signers = release_keys_from(None, || Ok(empty.clone())).unwrap();
        let e = format!(
            "{:#}",
            verify_installed(tool.path(), &found, &signers).unwrap_err()
        );
        assert!(
            e.contains("no key to check them with") && e.contains("--for tool"),
            "{e}"
        );
    }

    #[test]
    fn the_installed_sidecars_ship_only_as_the_release_signed_them() {
        let key = KeyPair::generate().unwrap();
        let keys = release_keys_from(Some(&key.public().to_pem()), no_trust_dir).unwrap();
        assert_eq!(keys.keys.len(), 1);
        assert_eq!(keys.keys[0].1, key.public());
        assert!(keys.for_providers.is_empty());
        assert!(
            release_keys_from(Some("-----BEGIN PUBLIC KEY-----\nnope\n"), no_trust_dir).is_err()
        );

        let tool = installed_tool(&key);
        let found = installed_sidecars(tool.path());
        assert_eq!(found.len(), 2);
        verify_installed(tool.path(), &found, &keys).unwrap();

        // Another key's list, or a sidecar changed since: nothing ships.
        let other = release_keys_from(
            Some(&KeyPair::generate().unwrap().public().to_pem()),
            no_trust_dir,
        )
        .unwrap();
        let e = verify_installed(tool.path(), &found, &other).unwrap_err();
        assert!(
            format!("{e:#}").contains("not the tool's release key"),
            "{e:#}"
        );
        std::fs::write(&found[1].1, "replaced").unwrap();
        let e = verify_installed(tool.path(), &found, &keys).unwrap_err();
        assert!(
            format!("{e:#}").contains("was changed after it was signed"),
            "{e:#}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_sidecar_or_folder_others_can_write_is_refused_before_it_is_read() {
        use std::os::unix::fs::PermissionsExt as _;
        let key = KeyPair::generate().unwrap();
        let keys = release_keys_from(Some(&key.public().to_pem()), no_trust_dir).unwrap();
        let tool = installed_tool(&key);
        let found = installed_sidecars(tool.path());
        let folder = found[0].1.parent().unwrap().to_path_buf();
        for (path, mode) in [(&found[0].1, 0o666), (&folder, 0o777)] {
            let before = std::fs::metadata(path).unwrap().permissions();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = verify_installed(tool.path(), &found, &keys).unwrap_err();
            assert!(
                format!("{e:#}").contains("sidecar folder cannot be trusted")
                    && format!("{e:#}").contains(&path.display().to_string()),
                "{e:#}"
            );
            std::fs::set_permissions(path, before).unwrap();
        }
        verify_installed(tool.path(), &found, &keys).unwrap();
    }

    #[test]
    fn a_build_says_what_it_is_by_its_note_or_its_profile_folder() {
        let dir = tempfile::tempdir().unwrap();
        let in_folder = |folder: &str| {
            let d = dir.path().join(folder);
            std::fs::create_dir_all(&d).unwrap();
            d.join("azd-wasm-host")
        };
        assert_eq!(
            describe(&in_folder("sidecar")),
            "size-optimised, without a profile"
        );
        assert!(describe(&in_folder("debug")).starts_with("a debug build, not size-optimised"));
        assert!(describe(&in_folder("release")).contains("not size-optimised"));
        assert_eq!(describe(&in_folder("elsewhere")), "as given");
        let noted = in_folder("linux-amd64");
        let note = noted.with_file_name(BUILD_NOTE);
        std::fs::write(&note, r#"{"profile": "sidecar", "profile_guided": true}"#).unwrap();
        assert_eq!(describe(&noted), "size-optimised, profile-guided");
        std::fs::write(&note, r#"{"profile": "sidecar", "profile_guided": false}"#).unwrap();
        assert_eq!(describe(&noted), "size-optimised, without a profile");
        std::fs::write(&note, r#"{"profile": "dev"}"#).unwrap();
        assert!(describe(&noted).contains("`dev` profile, not size-optimised"));
        // A note that is no JSON says nothing it cannot back.
        std::fs::write(&note, "not json").unwrap();
        assert!(describe(&noted).contains("`unknown` profile"));
    }

    #[test]
    fn the_installed_tool_ships_the_sidecar_of_every_platform_it_carries() {
        let dir = tempfile::tempdir().unwrap();
        assert!(installed_sidecars(dir.path()).is_empty());
        let carried = [AZD_PLATFORMS[0], AZD_PLATFORMS[2]];
        for p in carried {
            let folder = dir.path().join(INSTALLED_SIDECARS).join(p.slug());
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join(p.exe_name()), b"binary").unwrap();
        }
        // A folder without its binary carries nothing.
        let empty = AZD_PLATFORMS[1];
        std::fs::create_dir_all(dir.path().join(INSTALLED_SIDECARS).join(empty.slug())).unwrap();
        let found: Vec<Platform> = installed_sidecars(dir.path())
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(found, carried);
    }

    #[test]
    fn the_latest_build_is_shipped_whatever_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b, c] = ["beside", "profile", "dist"].map(|n| dir.path().join(n));
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        for (path, age) in [(&a, 3), (&b, 1), (&c, 2)] {
            let f = std::fs::File::create(path).unwrap();
            f.set_modified(hour_ago - Duration::from_secs(age * 60))
                .unwrap();
        }
        assert_eq!(newest([a.clone(), b.clone(), c.clone()]), Some(b.clone()));
        std::fs::remove_file(&b).unwrap();
        assert_eq!(newest([a.clone(), b, c.clone()]), Some(c));
        assert_eq!(
            newest([dir.path().join("none"), dir.path().to_path_buf()]),
            None
        );
    }
}
