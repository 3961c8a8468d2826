//! The sidecars a release of the author's tool carries, signed as one list.
//!
//! The tool (`azd-wasm-host.tools`, made by `scripts/release-tools.sh`) ships
//! the sidecar of every platform in `sidecars/<os>-<arch>/`, and `package`
//! copies them into every provider's archive: whatever is there runs on
//! every machine those providers are installed on. So the release signs the
//! folder: [`SIDECARS_BUNDLE_FILE`] in it is a Sigstore bundle, as a
//! provider's signature is, whose statement names every file of the folder
//! with its sha256 and says they are the tool's sidecars at a version
//! ([`sign_sidecars`]). [`verify_sidecars`] holds the folder to it: the
//! signature verifies with one of the keys given, every file it names is there
//! and unchanged, and the folder holds nothing it does not name.
//!
//! Which keys those are is the tool's to say: the release key it was built
//! with, or, in a build without one, the keys the user trusts for the tool
//! (`tool-keys/` of the trust folder, [`crate::TrustDir::tool_keys`], added by
//! `trust add KEY --for tool`). Never a key trusted for providers
//! (`trusted-keys/`): the sidecars run wherever the user's providers are
//! installed, so trusting a publisher's providers must not make that
//! publisher able to replace them. [`verify_tool_sidecars`] says so when such
//! a key signed the list.

use std::path::{Path, PathBuf};

use crate::bundle::{Among, open_among};
use crate::envelope::{SIDECARS_PREDICATE_TYPE, Statement, Subject};
use crate::error::{SignError, TrustError};
use crate::keys::{KeyPair, PublicKey};
use crate::signing::{bundle_of, sha256_file, unchanged};

/// The signed list's file name, in the sidecars' folder.
pub const SIDECARS_BUNDLE_FILE: &str = "sidecars.sigstore.json";
/// What the statement says the files are (its predicate's `provider`).
pub const TOOL_SIDECARS: &str = "azd-wasm-host.tools/sidecars";

/// Every file of `dir`'s platform folders (`<os>-<arch>/<file>`), by its
/// name with `/`, sorted; anything else (a link, a nested folder, a file
/// at the top other than the signature) is an error: the signed list names
/// exactly what is there.
fn files_of(dir: &Path) -> Result<Vec<(String, PathBuf)>, SignError> {
    let read = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SignError::Read { path, source }
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read(dir))? {
        let entry = entry.map_err(read(dir))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(read(&path))?;
        if kind.is_file() && name == SIDECARS_BUNDLE_FILE {
            continue;
        }
        if !kind.is_dir() {
            return Err(SignError::NotAPlatform { path });
        }
        for inner in std::fs::read_dir(&path).map_err(read(&path))? {
            let inner = inner.map_err(read(&path))?;
            if !inner.file_type().map_err(read(&inner.path()))?.is_file() {
                return Err(SignError::NotAFile { path: inner.path() });
            }
            let file = inner.file_name().to_string_lossy().into_owned();
            files.push((format!("{name}/{file}"), inner.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// Signs the sidecars' folder `dir` of the tool at `version` with `key`;
/// returns the bundle's JSON, to be written as [`SIDECARS_BUNDLE_FILE`] in it.
pub fn sign_sidecars(dir: &Path, version: &str, key: &KeyPair) -> Result<String, SignError> {
    let subjects = files_of(dir)?
        .into_iter()
        .map(|(name, path)| Ok(Subject::sha256(name, sha256_file(&path)?)))
        .collect::<Result<Vec<_>, SignError>>()?;
    if subjects.is_empty() {
        return Err(SignError::Empty {
            path: dir.to_path_buf(),
        });
    }
    let statement = Statement {
        predicate_type: SIDECARS_PREDICATE_TYPE.to_owned(),
        ..Statement::new(subjects, TOOL_SIDECARS, version, None)
    };
    bundle_of(&statement, key)
}

/// The folder `dir`, checked against its signed list: signed by one of
/// `keys` (each with where it comes from, for messages), every file named
/// there and unchanged, nothing there unnamed. Returns the statement and
/// the key that signed it.
pub fn verify_sidecars(
    dir: &Path,
    keys: &[(PathBuf, PublicKey)],
) -> Result<(Statement, PublicKey), TrustError> {
    verify_tool_sidecars(dir, keys, &[])
}

/// [`verify_sidecars`] for the installed tool: `keys` may sign the list,
/// `not_for_the_tool` are the keys the user trusts for providers only, named
/// in the refusal when one of them signed it.
pub fn verify_tool_sidecars(
    dir: &Path,
    keys: &[(PathBuf, PublicKey)],
    not_for_the_tool: &[(PathBuf, PublicKey)],
) -> Result<(Statement, PublicKey), TrustError> {
    let bundle = dir.join(SIDECARS_BUNDLE_FILE);
    let text = std::fs::read_to_string(&bundle).map_err(|e| {
        TrustError::Mismatch(format!(
            "the sidecars in {} carry no signed list ({SIDECARS_BUNDLE_FILE}: {e}): a release of \
             the tool signs them; reinstall the tool (`azd extension install azd-wasm-host.tools \
             --force`) or pass the host binaries to ship (--host, --hosts)",
            dir.display()
        ))
    })?;
    let (statement, key) = match open_among(&text, &bundle, keys, SIDECARS_PREDICATE_TYPE)? {
        Among::Signed(statement, (_, key)) => (statement, key),
        Among::Unknown(_, key) => {
            if let Ok(Among::Signed(_, (file, by))) =
                open_among(&text, &bundle, not_for_the_tool, SIDECARS_PREDICATE_TYPE)
            {
                return Err(TrustError::Mismatch(format!(
                    "the sidecars in {} are signed by key {}, which you trust for providers \
                     ({}), not for the tool: a list of the tool's sidecars is checked only with \
                     the release key the tool was built with or a key you trust for the tool; \
                     if this key should sign the tool's sidecars, run `azd-wasm-host trust add \
                     KEY --for tool`, else reinstall the tool",
                    dir.display(),
                    by.short_id(),
                    file.display()
                )));
            }
            let from: Vec<String> = keys.iter().map(|(f, _)| f.display().to_string()).collect();
            return Err(TrustError::Mismatch(format!(
                "the sidecars in {} are signed by key {key}, which is not the tool's release key \
                 nor one you trust for the tool ({}): they are not the release's; reinstall the \
                 tool",
                dir.display(),
                if from.is_empty() {
                    "no key to check them with: this tool was built without a release key, and \
                     you trust no key for it (`azd-wasm-host trust add KEY --for tool`)"
                        .to_owned()
                } else {
                    from.join(", ")
                }
            )));
        }
    };
    if statement.predicate.provider != TOOL_SIDECARS {
        return Err(TrustError::Mismatch(format!(
            "{} signs `{}`, not the tool's sidecars",
            bundle.display(),
            statement.predicate.provider
        )));
    }
    check_files(dir, &bundle, &statement)?;
    Ok((statement, key))
}

/// Every file the statement names is in `dir`; every file in `dir` is named
/// and hashes to what was signed.
fn check_files(dir: &Path, bundle: &Path, statement: &Statement) -> Result<(), TrustError> {
    let present = files_of(dir).map_err(|e| TrustError::Mismatch(format!("{e:#}")))?;
    for subject in &statement.subject {
        if !present.iter().any(|(name, _)| *name == subject.name) {
            return Err(TrustError::Mismatch(format!(
                "{} signs {}, which is not there: reinstall the tool",
                bundle.display(),
                subject.name
            )));
        }
    }
    for (name, path) in &present {
        let signed = statement.sha256_of(name).ok_or_else(|| {
            TrustError::Mismatch(format!(
                "{} is not in the release's signed list {}: it was added after the release; \
                 reinstall the tool",
                path.display(),
                bundle.display()
            ))
        })?;
        unchanged(path, signed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a failed unwrap is a failed test"
    )]

    use std::path::{Path, PathBuf};

    use super::{SIDECARS_BUNDLE_FILE, sign_sidecars, verify_sidecars, verify_tool_sidecars};
    use crate::error::TrustError;
    use crate::keys::{KeyPair, PublicKey};

    /// A sidecars' folder of two platforms, signed by `key`.
    fn signed_folder(key: &KeyPair) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (platform, exe) in [
            ("linux-amd64", "azd-wasm-host"),
            ("windows-arm64", "azd-wasm-host.exe"),
        ] {
            std::fs::create_dir_all(dir.path().join(platform)).unwrap();
            std::fs::write(
                dir.path().join(platform).join(exe),
                format!("{platform} build"),
            )
            .unwrap();
            std::fs::write(dir.path().join(platform).join("sidecar-build.json"), "{}").unwrap();
        }
        let bundle = sign_sidecars(dir.path(), "1.2.3", key).unwrap();
        std::fs::write(dir.path().join(SIDECARS_BUNDLE_FILE), bundle).unwrap();
        dir
    }

    fn keys(key: &KeyPair) -> Vec<(PathBuf, PublicKey)> {
        vec![(PathBuf::from("the release key"), key.public())]
    }

    #[test]
    fn the_release_verifies_with_its_key_and_names_every_file() {
        let key = KeyPair::generate().unwrap();
        let dir = signed_folder(&key);
        let (statement, by) = verify_sidecars(dir.path(), &keys(&key)).unwrap();
        assert_eq!(by, key.public());
        assert_eq!(statement.predicate.version, "1.2.3");
        let names: Vec<&str> = statement.subject.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "linux-amd64/azd-wasm-host",
                "linux-amd64/sidecar-build.json",
                "windows-arm64/azd-wasm-host.exe",
                "windows-arm64/sidecar-build.json"
            ]
        );
    }

    fn refused(dir: &Path, keys: &[(PathBuf, PublicKey)]) -> String {
        match verify_sidecars(dir, keys) {
            Ok(_) => panic!("{} verified", dir.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_changed_added_or_missing_sidecar_is_refused() {
        let key = KeyPair::generate().unwrap();
        let changed = signed_folder(&key);
        std::fs::write(
            changed.path().join("linux-amd64/azd-wasm-host"),
            "another build",
        )
        .unwrap();
        let e = refused(changed.path(), &keys(&key));
        assert!(e.contains("was changed after it was signed"), "{e}");

        let added = signed_folder(&key);
        std::fs::create_dir_all(added.path().join("darwin-arm64")).unwrap();
        std::fs::write(added.path().join("darwin-arm64/azd-wasm-host"), "extra").unwrap();
        let e = refused(added.path(), &keys(&key));
        assert!(e.contains("is not in the release's signed list"), "{e}");

        let missing = signed_folder(&key);
        std::fs::remove_file(missing.path().join("windows-arm64/azd-wasm-host.exe")).unwrap();
        let e = refused(missing.path(), &keys(&key));
        assert!(
            e.contains("signs windows-arm64/azd-wasm-host.exe, which is not there"),
            "{e}"
        );

        let unsigned = signed_folder(&key);
        std::fs::remove_file(unsigned.path().join(SIDECARS_BUNDLE_FILE)).unwrap();
        let e = refused(unsigned.path(), &keys(&key));
        assert!(e.contains("carry no signed list"), "{e}");
    }

    #[test]
    fn another_key_or_a_changed_list_is_refused() {
        let key = KeyPair::generate().unwrap();
        let other = KeyPair::generate().unwrap();
        let dir = signed_folder(&other);
        let e = refused(dir.path(), &keys(&key));
        assert!(e.contains("not the tool's release key"), "{e}");
        assert!(matches!(
            verify_sidecars(dir.path(), &[]),
            Err(TrustError::Mismatch(m)) if m.contains("no key to check them with")
        ));

        // The list rewritten to bless another build: the signature no longer verifies.
        let dir = signed_folder(&key);
        let path = dir.path().join(SIDECARS_BUNDLE_FILE);
        let mut bundle: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let payload = bundle["dsseEnvelope"]["payload"]
            .as_str()
            .unwrap()
            .to_owned();
        let forged = payload.replacen('A', "B", 1);
        assert_ne!(forged, payload);
        bundle["dsseEnvelope"]["payload"] = forged.into();
        std::fs::write(&path, bundle.to_string()).unwrap();
        let e = refused(dir.path(), &keys(&key));
        assert!(
            e.contains("does not verify") || e.contains("not an in-toto statement"),
            "{e}"
        );
    }

    /// A key the user trusts for providers signs no list of the tool's sidecars: the refusal
    /// names the key, where it is trusted and how to trust it for the tool; trusted for the
    /// tool, the same list verifies.
    #[test]
    fn a_list_signed_by_a_key_trusted_for_providers_only_is_refused_saying_so() {
        let key = KeyPair::generate().unwrap();
        let dir = signed_folder(&key);
        let providers = vec![(PathBuf::from("trusted-keys/team.pub"), key.public())];
        let e = match verify_tool_sidecars(dir.path(), &[], &providers) {
            Ok(_) => panic!("a key trusted for providers signed the tool's sidecars"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(&key.public().short_id())
                && e.contains("you trust for providers (trusted-keys/team.pub), not for the tool")
                && e.contains("trust add KEY --for tool"),
            "{e}"
        );
        let tool = vec![(PathBuf::from("tool-keys/team.pub"), key.public())];
        let (_, by) = verify_tool_sidecars(dir.path(), &tool, &providers).unwrap();
        assert_eq!(by, key.public());
        // Signed by a stranger: not named as a provider key.
        let other = KeyPair::generate().unwrap();
        let e = match verify_tool_sidecars(signed_folder(&other).path(), &tool, &providers) {
            Ok(_) => panic!("a stranger's list verified"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("not the tool's release key") && !e.contains("trust for providers"),
            "{e}"
        );
    }

    #[test]
    fn a_link_or_a_stray_file_in_the_folder_is_refused_at_signing_and_verifying() {
        let key = KeyPair::generate().unwrap();
        let dir = signed_folder(&key);
        std::fs::write(dir.path().join("README"), "stray").unwrap();
        let e = refused(dir.path(), &keys(&key));
        assert!(e.contains("is not a platform's folder"), "{e}");
        assert!(sign_sidecars(dir.path(), "1.2.3", &key).is_err());
        #[cfg(unix)]
        {
            let dir = signed_folder(&key);
            let exe = dir.path().join("linux-amd64/azd-wasm-host");
            std::fs::remove_file(&exe).unwrap();
            std::os::unix::fs::symlink("/bin/sh", &exe).unwrap();
            let e = refused(dir.path(), &keys(&key));
            assert!(e.contains("is not a plain file"), "{e}");
        }
    }
}
