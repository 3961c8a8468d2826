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
//! Consent, keyed by who signed the provider, the extension it is installed
//! as (its folder's name, which azd gives it: never the signature's claim,
//! which must agree) and its name: an installed provider that asks for grants the user has
//! not allowed it (the first time: anything beyond the deny-all default)
//! runs only after a yes, asked through azd's prompt while serving the first
//! Initialize (never before Ready, which azd waits for at most 15 s); under
//! `--no-prompt` the Initialize is refused naming the grants and the command
//! that approves them ([`approve`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use azd_wasm_host_core::text::shown;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, ErrorCode, Provider, ProviderError, ProviderFactory,
};
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_manifest::package::SignedCode;
use azd_wasm_host_trust::ceiling::Signer;

use crate::ceiling::{Judge, Signed};
use azd_wasm_host_trust::consent::{self, Consent, Identity, Pending};
use azd_wasm_host_trust::{BUNDLE_FILE, TrustDir, TrustError, Verdict};

/// What the trust check leaves to the start: the grants pending the user's
/// yes, what the signature says of the precompiled code, and the ceiling's
/// source that allows consent only ahead of time, if one does.
pub(crate) struct Checked {
    pub(crate) pending: Option<Pending>,
    pub(crate) signed_code: SignedCode,
    pub(crate) ahead_only: Option<PathBuf>,
    /// What a folder granted outside the project may resolve to.
    pub(crate) folder_bounds: Option<Arc<dyn azd_wasm_host_runtime::FolderBounds>>,
}

/// Checks the provider of `manifest` before it is loaded: this machine's
/// ceiling ([`crate::ceiling`]: a refusal is a [`crate::ceiling::Forbidden`]),
/// its signature and the user's consent. `Err` is the refusal, which its
/// Initialize answers.
pub(crate) fn check(manifest: &Path, name: Option<&str>) -> anyhow::Result<Checked> {
    let installed = is_installed(manifest);
    let signed = folder(manifest).join(BUNDLE_FILE).is_file();
    let trust = TrustDir::from_env();
    let ceiling = crate::ceiling::load(trust.as_ref().ok())?;
    let judge = Judge::new(&ceiling, manifest, name);
    let ahead_only = ceiling.forbids_prompt().map(Path::to_path_buf);
    let folder_bounds = crate::ceiling::folder_bounds(&ceiling);
    let checked = |pending, signed_code| Checked {
        pending,
        signed_code,
        ahead_only: ahead_only.clone(),
        folder_bounds: folder_bounds.clone(),
    };
    if !installed && !signed && !ceiling.requires_signed_development() {
        judge.hold(None, Signed::by(Signer::Development), &judge.plain())?;
        return Ok(checked(None, SignedCode::NotVerified));
    }
    let trust = trust?;
    let verdict = match azd_wasm_host_trust::verify_to_run(manifest, &trust) {
        // Unsigned, from its folder, where the ceiling wants it signed: the
        // ceiling's refusal names the rule (`signers.development`).
        Err(unsigned @ TrustError::Unsigned { .. }) if !installed => {
            judge.hold(None, Signed::by(Signer::Development), &judge.plain())?;
            return Err(unsigned.into());
        }
        verdict => verdict?,
    };
    let code_key = code_key_of(&verdict);
    if !installed {
        let (signer, signed_code) = match &verdict {
            Verdict::Verified(v) => (Signer::Key(&v.key_id), signed_code_of(v)),
            // Unsigned and from its folder, run because the user allows it:
            // still a provider in development to the ceiling.
            Verdict::Allowed(TrustError::Unsigned { .. }) => {
                (Signer::Development, SignedCode::NotVerified)
            }
            Verdict::Allowed(_) => (Signer::Unverified, SignedCode::NotVerified),
        };
        let signed = Signed {
            signer,
            code: code_key.as_deref(),
        };
        judge.hold(None, signed, &judge.plain())?;
        return Ok(checked(None, signed_code));
    }
    let (identity, version, signed_code) = identity(manifest, verdict)?;
    let signed = Signed {
        signer: signer_of(&identity),
        code: code_key.as_deref(),
    };
    judge.hold(Some(&identity.extension), signed, &who(&identity))?;
    let pending = pending(&trust, manifest, &identity, version.as_deref())?;
    Ok(checked(pending, signed_code))
}

/// The key that signed the precompiled code apart, when one did.
pub(crate) fn code_key_of(verdict: &Verdict) -> Option<String> {
    match verdict {
        Verdict::Verified(v) => v.code_key_id.clone(),
        Verdict::Allowed(_) => None,
    }
}

/// What a verified signature says of the precompiled code.
fn signed_code_of(v: &azd_wasm_host_trust::Verified) -> SignedCode {
    v.shipped
        .clone()
        .map_or(SignedCode::NoCode, SignedCode::Digests)
}

/// The grants the installed provider `identity` asks for beyond what the
/// user allowed it, if any.
fn pending(
    trust: &TrustDir,
    manifest: &Path,
    identity: &Identity,
    version: Option<&str>,
) -> anyhow::Result<Option<Pending>> {
    Ok(match consent::check(trust, manifest, identity, version)? {
        Consent::FirstSeen => {
            tracing::info!(record = %trust.consent_dir().display(), "first run of this provider, which asks for nothing beyond the deny-all default: recorded");
            None
        }
        Consent::Allowed => None,
        Consent::Asks(p) => {
            tracing::info!(more = ?p.diff.more, first = p.first, "the provider asks for grants not allowed yet");
            Some(*p)
        }
    })
}

/// Who signed an installed provider, as the ceiling judges it.
pub(crate) fn signer_of(identity: &Identity) -> Signer<'_> {
    if identity.key == consent::UNSIGNED {
        Signer::Unverified
    } else {
        Signer::Key(&identity.key)
    }
}

/// A provider as a ceiling's refusal names it: its name, extension and signer.
pub(crate) fn who(identity: &Identity) -> String {
    let signer = if identity.key == consent::UNSIGNED {
        "unsigned".to_owned()
    } else {
        format!("signed by key {}", identity.key)
    };
    format!(
        "provider {} (extension {}, {signer})",
        shown(&identity.provider),
        shown(&identity.extension)
    )
}

/// Who the provider is for consent, its version and what its signature
/// says of its precompiled code (a verified signature that names none
/// refuses any that appears later). Its extension is the one it is
/// installed as ([`installed_extension`]), never the signature's word: a
/// signature that names another extension is refused, so no signer can
/// claim another extension's consent. A provider run unverified (allowed
/// unsigned) is `unsigned`.
pub(crate) fn identity(
    manifest: &Path,
    verdict: Verdict,
) -> anyhow::Result<(Identity, Option<String>, SignedCode)> {
    let name = Manifest::load(manifest)?.name;
    let extension = installed_extension(manifest)?;
    Ok(match verdict {
        Verdict::Verified(v) => {
            tracing::debug!(key = %v.key, file = %v.key_file.display(), version = %v.statement.predicate.version, "signature verified");
            if let Some(claimed) = v.statement.predicate.extension.as_deref()
                && claimed != extension
            {
                anyhow::bail!(
                    "{} signs provider `{}` for extension {}, but it is installed as extension {} \
                     (the folder azd installed it in: {}); consent is kept per installed \
                     extension, so it does not run: install it from an extension source that \
                     names it {}, or ask its publisher for a package signed for {}",
                    path_shown(&folder(manifest).join(BUNDLE_FILE)),
                    shown(&name),
                    shown(claimed),
                    shown(&extension),
                    path_shown(folder(manifest)),
                    shown(claimed),
                    shown(&extension),
                );
            }
            let identity = Identity {
                key: v.key_id,
                extension,
                provider: name,
            };
            let code = v.shipped.map_or(SignedCode::NoCode, SignedCode::Digests);
            (identity, Some(v.statement.predicate.version), code)
        }
        Verdict::Allowed(why) => {
            tracing::warn!("running a provider that is not verified, as allowed: {why}");
            let identity = Identity {
                key: consent::UNSIGNED.to_owned(),
                extension,
                provider: name,
            };
            (identity, None, SignedCode::NotVerified)
        }
    })
}

/// The id of the extension the provider of `manifest` is installed as: the
/// name of its folder, which azd names after the extension it installs
/// (`extensions/<id>/` in its config folder), as the extension's entry in
/// azd's config names it. Not `extension.yaml`, which the package's author
/// wrote.
fn installed_extension(manifest: &Path) -> anyhow::Result<String> {
    let dir = folder(manifest);
    let canonical = std::fs::canonicalize(dir)
        .with_context(|| format!("cannot find the folder of {}", manifest.display()))?;
    let name = canonical
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| {
            format!(
                "the folder of {} has no name an extension id can be",
                manifest.display()
            )
        })?;
    if let Some((_, c)) = azd_wasm_host_core::text::find_invisible(name) {
        anyhow::bail!(
            "the folder of {} holds {}, a control or invisible character: no extension is \
             installed so",
            path_shown(manifest),
            azd_wasm_host_core::text::code_point(c)
        );
    }
    Ok(name.to_owned())
}

/// A path as a refusal shows it: its control and invisible characters escaped.
fn path_shown(path: &Path) -> String {
    azd_wasm_host_core::text::escape_invisible(&path.display().to_string()).into_owned()
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

/// What a refusal at no prompt suggests beside `approve`.
const UNASKED: &str = "or the azd command again without --no-prompt, to be asked";

/// A factory that asks for the pending grants before the first instance.
pub(crate) struct ConsentGate {
    inner: Arc<dyn ProviderFactory>,
    pending: tokio::sync::Mutex<Option<Pending>>,
    services: Arc<dyn AzdServices>,
    interactive: bool,
    /// The ceiling's source that allows consent only ahead of time, if one does.
    ahead_only: Option<PathBuf>,
    approve: String,
}

impl ConsentGate {
    pub(crate) fn wrap(
        inner: Arc<dyn ProviderFactory>,
        pending: Option<Pending>,
        services: Arc<dyn AzdServices>,
        interactive: bool,
        ahead_only: Option<PathBuf>,
        manifest: &Path,
    ) -> Arc<dyn ProviderFactory> {
        match pending {
            None => inner,
            Some(p) => Arc::new(Self {
                inner,
                pending: tokio::sync::Mutex::new(Some(p)),
                services,
                interactive,
                ahead_only,
                approve: approve_command(manifest),
            }),
        }
    }

    /// The refusal naming the pending grants and `approve`.
    fn refused(&self, message: String, then: &str) -> ProviderError {
        ProviderError::host(ErrorCode::ConsentRequired, message)
            .with_suggestion(format!("to allow them, run {} ({then})", self.approve))
    }

    /// Why nobody is asked, when nobody may be: the ceiling allows consent
    /// only ahead of time, or azd runs without prompts.
    fn unasked(&self, p: &Pending) -> Option<ProviderError> {
        let (why, then) = match (&self.ahead_only, self.interactive) {
            (Some(source), _) => (
                format!(
                    "this machine's provider policy {} allows consent only ahead of time",
                    source.display()
                ),
                "before the azd command",
            ),
            (None, false) => ("--no-prompt".to_owned(), UNASKED),
            (None, true) => return None,
        };
        Some(self.refused(
            format!(
                "{} and does not run until you allow it (not asked: {why}):\n{}",
                p.why(),
                p.lines()
            ),
            then,
        ))
    }

    async fn ask(&self, p: &Pending) -> Result<(), ProviderError> {
        let refused = |message: String, then: &str| self.refused(message, then);
        if let Some(refusal) = self.unasked(p) {
            return Err(refusal);
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
                    format!(
                        "cannot record your consent: {}",
                        azd_wasm_host_core::report::chain(&e)
                    ),
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
                UNASKED,
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

#[cfg(test)]
mod tests {
    use super::*;
    use azd_wasm_host_trust::{Statement, Verified};

    /// A provider installed as extension `installed` (its folder), and a
    /// verdict whose signature claims `claimed`.
    fn installed_as(root: &Path, installed: &str, claimed: Option<&str>) -> (PathBuf, Verdict) {
        let dir = root.join("extensions").join(installed);
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("provider.toml");
        std::fs::write(&manifest, "name = \"todo\"\ncomponent = \"c.wasm\"\n").unwrap();
        let verdict = Verdict::Verified(Verified {
            key_file: root.join("publisher.pub"),
            key: "0123456789abcdef".into(),
            key_id: "0123456789abcdef0123".into(),
            statement: Statement::new(Vec::new(), "todo", "1.0.0", claimed),
            shipped: None,
            code_key_id: None,
        });
        (manifest, verdict)
    }

    #[test]
    fn the_consent_identity_is_the_installed_extension_never_the_signers_claim() {
        let root = tempfile::tempdir().unwrap();
        // A signature claiming another extension's id gets neither that id nor a run.
        let (manifest, verdict) = installed_as(root.path(), "local.evil", Some("local.victim"));
        let e = format!("{:#}", identity(&manifest, verdict).unwrap_err());
        assert!(
            e.contains("for extension local.victim")
                && e.contains("installed as extension local.evil"),
            "{e}"
        );
        // Agreeing, or claiming nothing: the installed extension's id.
        for claimed in [Some("local.victim"), None] {
            let (manifest, verdict) = installed_as(root.path(), "local.victim", claimed);
            let (id, version, _) = identity(&manifest, verdict).unwrap();
            assert_eq!(id.extension, "local.victim", "{claimed:?}");
            assert_eq!(id.provider, "todo");
            assert_eq!(version.as_deref(), Some("1.0.0"));
        }
    }
}
