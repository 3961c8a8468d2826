//! How `package` signs what it ships ([`azd_wasm_host_trust`]): with the key
//! `--sign` names, else the user's default key (made on first use, its public
//! half trusted on this machine), or not at all under `--unsigned`. A folder
//! that already carries a signature verifying with a trusted key (a provider
//! `pull` fetched) ships that signature as it is.

use std::path::Path;

use anyhow::Context as _;
use azd_wasm_host_trust::{BUNDLE_FILE, KeyPair, SignInputs, TrustDir, Verdict};

/// What signs each archive's folder.
pub(crate) enum Signer {
    /// A key: a new signature per archive.
    Key(Box<KeyPair>),
    /// The signature beside the manifest, verified.
    Keep(std::path::PathBuf),
    /// No signature.
    Unsigned,
}

impl Signer {
    /// The signer `package`'s arguments ask for.
    pub(crate) fn choose(
        sign: Option<&Path>,
        unsigned: bool,
        manifest: &Path,
    ) -> anyhow::Result<Self> {
        if unsigned {
            eprintln!(
                "warning: packaging unsigned: where it is installed it runs only if unsigned providers are allowed \
                 (AZD_WASM_HOST_ALLOW_UNSIGNED=true)"
            );
            return Ok(Self::Unsigned);
        }
        if let Some(path) = sign {
            let key = azd_wasm_host_trust::read_key(path)?;
            eprintln!(
                "==> sign with key {} ({})",
                key.public().short_id(),
                crate::paths::shown(path)
            );
            return Ok(Self::Key(Box::new(key)));
        }
        let trust = TrustDir::from_env()?;
        let existing = manifest
            .parent()
            .unwrap_or(Path::new("."))
            .join(BUNDLE_FILE);
        if existing.is_file()
            && let Ok(Verdict::Verified(v)) = azd_wasm_host_trust::verify(manifest, &trust)
        {
            eprintln!("==> keep its signature by key {} (verified)", v.key);
            return Ok(Self::Keep(existing));
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
        Ok(Self::Key(Box::new(key)))
    }

    /// Signs the staged folder whose manifest is `manifest`; returns the
    /// signature file's name in it, if any.
    pub(crate) fn sign(
        &self,
        manifest: &Path,
        version: &str,
    ) -> anyhow::Result<Option<&'static str>> {
        let out = manifest
            .parent()
            .unwrap_or(Path::new("."))
            .join(BUNDLE_FILE);
        match self {
            Self::Unsigned => return Ok(None),
            Self::Keep(existing) => {
                std::fs::copy(existing, &out)
                    .with_context(|| format!("cannot copy {}", existing.display()))?;
            }
            Self::Key(key) => {
                let bundle = azd_wasm_host_trust::sign(&SignInputs { manifest, version }, key)?;
                std::fs::write(&out, bundle)
                    .with_context(|| format!("cannot write {}", out.display()))?;
            }
        }
        Ok(Some(BUNDLE_FILE))
    }
}
