//! How `package` (and `publish`) signs what it ships
//! ([`azd_wasm_host_trust`]): with the key `--sign` names, else the user's
//! default key (made on first use, its public half trusted on this
//! machine), or not at all under `--unsigned`. It signs after the code is
//! precompiled, so the signature names every file the host runs.
//!
//! A folder that already carries a signature verifying with a trusted key (a
//! provider `pull` fetched) ships that signature as it is; the code compiled
//! here for it is signed apart, by this user's key ([`azd_wasm_host_trust::sign_code`]).
//! A folder whose signature does not verify, or that `pull` kept unverified,
//! is never signed over unless `--resign` asks for it (with a warning naming
//! what failed): signing it would make content this user did not build run
//! under their key.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use azd_wasm_host_trust::{BUNDLE_FILE, CODE_BUNDLE_FILE, KeyPair, SignInputs, TrustDir, Verdict};

/// The file `pull` leaves in a folder it kept without verifying it (unsigned
/// providers allowed): why, so that `package` will not sign over it.
pub(crate) const UNVERIFIED_MARKER: &str = ".azd-wasm-host-unverified";

/// What signs each archive's folder.
pub(crate) enum Signer {
    /// A key: a new signature per archive.
    Key(Box<KeyPair>),
    /// The signature beside the manifest, verified; the code precompiled
    /// here is signed apart with `code_key`.
    Keep {
        bundle: PathBuf,
        code_key: Box<KeyPair>,
    },
    /// No signature.
    Unsigned,
}

impl Signer {
    /// The signer `package`'s arguments ask for.
    pub(crate) fn choose(
        sign: Option<&Path>,
        unsigned: bool,
        resign: bool,
        manifest: &Path,
    ) -> anyhow::Result<Self> {
        if unsigned {
            eprintln!(
                "warning: packaging unsigned: where it is installed it runs only if unsigned providers are allowed \
                 (AZD_WASM_HOST_ALLOW_UNSIGNED=true)"
            );
            return Ok(Self::Unsigned);
        }
        let trust = TrustDir::from_env()?;
        let dir = manifest.parent().unwrap_or(Path::new("."));
        let existing = dir.join(BUNDLE_FILE);
        let marker = dir.join(UNVERIFIED_MARKER);
        let failed = if existing.is_file() {
            match azd_wasm_host_trust::verify(manifest, &trust) {
                Ok(Verdict::Verified(v)) if !resign => {
                    eprintln!("==> keep its signature by key {} (verified)", v.key);
                    let code_key = key(sign, &trust)?;
                    return Ok(Self::Keep {
                        bundle: existing,
                        code_key,
                    });
                }
                Ok(Verdict::Verified(_)) => None,
                Ok(Verdict::Allowed(why)) => Some(why.to_string()),
                Err(why) => Some(why.to_string()),
            }
        } else if marker.is_file() {
            let why = std::fs::read_to_string(&marker).unwrap_or_default();
            Some(format!(
                "`pull` kept it without verifying it: {}",
                why.trim()
            ))
        } else {
            None
        };
        if let Some(why) = failed {
            over_a_failed_check(&existing, dir, &why, resign)?;
        }
        Ok(Self::Key(key(sign, &trust)?))
    }

    /// Signs the staged folder whose manifest is `manifest` (its code already
    /// precompiled); returns the names of the top-level files it wrote.
    pub(crate) fn sign(
        &self,
        manifest: &Path,
        version: &str,
        extension: Option<&str>,
    ) -> anyhow::Result<Vec<&'static str>> {
        let dir = manifest.parent().unwrap_or(Path::new("."));
        let out = dir.join(BUNDLE_FILE);
        match self {
            Self::Unsigned => return Ok(Vec::new()),
            Self::Keep { bundle, code_key } => {
                std::fs::copy(bundle, &out)
                    .with_context(|| format!("cannot copy {}", bundle.display()))?;
                if dir
                    .join(azd_wasm_host_manifest::package::PRECOMPILED_CODE)
                    .is_file()
                {
                    let code = azd_wasm_host_trust::sign_code(manifest, version, code_key)?;
                    let path = dir.join(CODE_BUNDLE_FILE);
                    std::fs::write(&path, code)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
            }
            Self::Key(key) => {
                let inputs = SignInputs {
                    manifest,
                    version,
                    extension,
                };
                let bundle = azd_wasm_host_trust::sign(&inputs, key)?;
                std::fs::write(&out, bundle)
                    .with_context(|| format!("cannot write {}", out.display()))?;
            }
        }
        // What is shipped must be what is signed (a kept signature must cover
        // the extension.yaml and manifest packaged with it).
        azd_wasm_host_trust::check_signed_files(manifest)
            .map_err(|e| anyhow::anyhow!("the package would not verify: {e}"))?;
        Ok(vec![BUNDLE_FILE])
    }
}

/// Refuses to sign over a provider that failed verification (`why`), unless `--resign`, which
/// signs over it with a warning: the bundle `existing` or, when there is none, the provider in
/// `dir`.
fn over_a_failed_check(existing: &Path, dir: &Path, why: &str, resign: bool) -> anyhow::Result<()> {
    let what = if existing.is_file() {
        format!("the signature {}", crate::paths::shown(existing))
    } else {
        format!("the provider in {}", crate::paths::shown(dir))
    };
    if !resign {
        bail!(
            "{what} did not verify: {why}\n`package` does not sign over a provider that failed \
             verification: that would make content you did not build run under your key. \
             If you trust it anyway, sign it as yours with --resign; or package it unsigned \
             with --unsigned"
        );
    }
    eprintln!(
        "warning: --resign: signing over {what}, which did not verify ({why}), with your \
         key: whoever trusts your key will run it"
    );
    Ok(())
}

/// The key `--sign` names, else the default key (made, and trusted on this
/// machine, when there is none yet).
fn key(sign: Option<&Path>, trust: &TrustDir) -> anyhow::Result<Box<KeyPair>> {
    if let Some(path) = sign {
        let key = azd_wasm_host_trust::read_key(path)?;
        eprintln!(
            "==> sign with key {} ({})",
            key.public().short_id(),
            crate::paths::shown(path)
        );
        return Ok(Box::new(key));
    }
    let (key, made) = trust.default_signing_key()?;
    let shown = crate::paths::shown(&trust.default_key());
    if made {
        eprintln!(
            "==> made your signing key {shown} (its public half {} is trusted on this machine; \
             give it to the people who install your providers: `azd-wasm-host trust add`)",
            crate::paths::shown(&trust.default_key().with_extension("pub"))
        );
    }
    eprintln!("==> sign with key {} ({shown})", key.public().short_id());
    Ok(Box::new(key))
}
