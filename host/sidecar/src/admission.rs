//! Trust before a provider runs: its signature, and the user's consent to
//! what it asks for.
//!
//! A provider installed as an extension (its `provider.toml` beside the
//! binary, as `package` lays it out and azd unpacks it) runs only when
//! signed by a key the user trusts, unless the user allows unsigned
//! providers; a signature that is there is checked for every provider, so a
//! changed one never runs. The signature names every file the host runs or
//! reads as policy; all are hashed here but the precompiled code, whose
//! signed sha256 goes to the runtime, which checks the code right before it
//! maps it. Checked before the component is loaded: a refused provider
//! still registers, and its first Initialize answers why.
//!
//! Consent, keyed by who signed the provider, the extension that ships it
//! and its name: an installed provider that asks for grants the user has
//! not allowed it (the first time: anything beyond the deny-all default)
//! runs only after a yes, asked through azd's prompt while serving the first
//! Initialize (never before Ready, which azd waits for at most 15 s); under
//! `--no-prompt` the Initialize is refused naming the grants and the command
//! that approves them ([`approve`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, ErrorCode, Provider, ProviderError, ProviderFactory,
};
use azd_wasm_host_manifest::package::SignedCode;
use azd_wasm_host_trust::consent::{self, Consent, Identity, Pending};
use azd_wasm_host_trust::{BUNDLE_FILE, TrustDir, Verdict};

/// What the trust check leaves to the start: the grants pending the user's
/// yes, and what the signature says of the precompiled code.
pub(crate) struct Checked {
    pub(crate) pending: Option<Pending>,
    pub(crate) signed_code: SignedCode,
}

/// Checks the provider of `manifest` before it is loaded. `Err` is the
/// refusal, which its Initialize answers.
pub(crate) fn check(manifest: &Path) -> anyhow::Result<Checked> {
    let installed = is_installed(manifest);
    let signed = folder(manifest).join(BUNDLE_FILE).is_file();
    if !installed && !signed {
        return Ok(Checked {
            pending: None,
            signed_code: SignedCode::NotVerified,
        });
    }
    let trust = TrustDir::from_env()?;
    let verdict = azd_wasm_host_trust::verify_to_run(manifest, &trust)?;
    let (identity, version, signed_code) = identity(manifest, verdict)?;
    if !installed {
        return Ok(Checked {
            pending: None,
            signed_code,
        });
    }
    let pending = match consent::check(&trust, manifest, &identity, version.as_deref())? {
        Consent::FirstSeen => {
            tracing::info!(record = %trust.consent_dir().display(), "first run of this provider, which asks for nothing beyond the deny-all default: recorded");
            None
        }
        Consent::Allowed => None,
        Consent::Asks(p) => {
            tracing::info!(more = ?p.diff.more, first = p.first, "the provider asks for grants not allowed yet");
            Some(*p)
        }
    };
    Ok(Checked {
        pending,
        signed_code,
    })
}

/// Who the provider is for consent, its version and what its signature
/// says of its precompiled code (a verified signature that names none
/// refuses any that appears later). A provider run unverified (allowed unsigned)
/// is `unsigned`, of the extension its installed folder is named after.
fn identity(
    manifest: &Path,
    verdict: Verdict,
) -> anyhow::Result<(Identity, Option<String>, SignedCode)> {
    let name = azd_wasm_host_manifest::Manifest::load(manifest)?.name;
    Ok(match verdict {
        Verdict::Verified(v) => {
            tracing::debug!(key = %v.key, file = %v.key_file.display(), version = %v.statement.predicate.version, "signature verified");
            let identity = Identity {
                key: v.key_id,
                extension: v.statement.predicate.extension.clone().unwrap_or_default(),
                provider: name,
            };
            let code = v.shipped.map_or(SignedCode::NoCode, SignedCode::Digests);
            (identity, Some(v.statement.predicate.version), code)
        }
        Verdict::Allowed(why) => {
            tracing::warn!("running a provider that is not verified, as allowed: {why}");
            let extension = std::fs::canonicalize(folder(manifest))
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            let identity = Identity {
                key: consent::UNSIGNED.to_owned(),
                extension,
                provider: name,
            };
            (identity, None, SignedCode::NotVerified)
        }
    })
}

/// Whether `manifest` is an installed extension's: in the binary's own
/// folder, or in the one a packaged sidecar handing its session over named
/// ([`crate::env::INSTALLED_DIR`]; it can only add checks: an installed
/// provider must be signed, unless allowed, and asks for consent).
fn is_installed(manifest: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let Some(dir) = canonical(folder(manifest)) else {
        return false;
    };
    let exe_dir = azd_wasm_host_core::files::exe_dir();
    let handed_over = crate::env::installed_dir().and_then(|d| canonical(&d));
    exe_dir.as_ref() == Some(&dir) || handed_over.as_ref() == Some(&dir)
}

fn folder(manifest: &Path) -> &Path {
    match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The command line that approves the pending grants: this binary's `approve`.
fn approve_command(manifest: &Path) -> String {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("azd-wasm-host"));
    format!(
        "\"{}\" approve --manifest \"{}\"",
        exe.display(),
        manifest.display()
    )
}

/// A factory that asks for the pending grants before the first instance.
pub(crate) struct ConsentGate {
    inner: Arc<dyn ProviderFactory>,
    pending: tokio::sync::Mutex<Option<Pending>>,
    services: Arc<dyn AzdServices>,
    interactive: bool,
    approve: String,
}

impl ConsentGate {
    pub(crate) fn wrap(
        inner: Arc<dyn ProviderFactory>,
        pending: Option<Pending>,
        services: Arc<dyn AzdServices>,
        interactive: bool,
        manifest: &Path,
    ) -> Arc<dyn ProviderFactory> {
        match pending {
            None => inner,
            Some(p) => Arc::new(Self {
                inner,
                pending: tokio::sync::Mutex::new(Some(p)),
                services,
                interactive,
                approve: approve_command(manifest),
            }),
        }
    }

    async fn ask(&self, p: &Pending) -> Result<(), ProviderError> {
        let refused = |message: String, then: &str| {
            ProviderError::host(ErrorCode::ConsentRequired, message)
                .with_suggestion(format!("to allow them, run {} ({then})", self.approve))
        };
        let unasked = "or the azd command again without --no-prompt, to be asked";
        if !self.interactive {
            return Err(refused(
                format!(
                    "{} and does not run until you allow it (not asked: --no-prompt):\n{}",
                    p.why(),
                    p.lines()
                ),
                unasked,
            ));
        }
        let question = ConfirmQuestion {
            message: p.question(),
            default_value: Some(false),
            help_message: if p.first {
                format!(
                    "Its provider.toml grants it:\n{}\nNo keeps the provider from running.",
                    p.lines()
                )
            } else {
                format!(
                    "Its new version's provider.toml grants more than you allowed before:\n{}\nNo keeps the provider from running.",
                    p.lines()
                )
            },
        };
        match self.services.confirm(question).await {
            Ok(true) => p.approve().map_err(|e| {
                ProviderError::host(
                    ErrorCode::ConsentRequired,
                    format!("cannot record your consent: {e:#}"),
                )
            }),
            Ok(false) => Err(refused(
                format!(
                    "you did not allow what {} also asks for, so it does not run:\n{}",
                    p.who(),
                    p.lines()
                ),
                "or answer yes when azd asks next time",
            )),
            Err(e) => Err(refused(
                format!(
                    "{} and azd could not ask you ({e}):\n{}",
                    p.why(),
                    p.lines()
                ),
                unasked,
            )),
        }
    }
}

#[async_trait::async_trait]
impl ProviderFactory for ConsentGate {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        {
            let mut pending = self.pending.lock().await;
            if let Some(p) = pending.as_ref() {
                self.ask(p).await?;
                tracing::info!(provider = %p.identity.provider, "the user allowed the new grants");
                *pending = None;
            }
        }
        self.inner.create().await
    }
}

/// `approve`: allows what the provider of `manifest` (default: the one
/// beside this binary) asks for, after checking its signature (every file it
/// names, the precompiled code included); prints what was allowed. What CI
/// runs once after `azd extension install`, where nobody can answer azd's
/// question.
pub fn approve(manifest: Option<&Path>) -> anyhow::Result<()> {
    let manifest = crate::locate::locate_manifest(manifest)?;
    let trust = TrustDir::from_env()?;
    let verdict = azd_wasm_host_trust::verify(&manifest, &trust)?;
    if let Verdict::Allowed(why) = &verdict {
        eprintln!("warning: {why}");
    }
    let (identity, version, _) = identity(&manifest, verdict)?;
    match consent::check(&trust, &manifest, &identity, version.as_deref())
        .context("checking consent")?
    {
        Consent::FirstSeen | Consent::Allowed => {
            println!("nothing to allow: it asks for nothing more than you allowed");
        }
        Consent::Asks(p) => {
            p.approve()?;
            println!("allowed for {}:\n{}", p.who_in_full(), p.lines());
        }
    }
    Ok(())
}
