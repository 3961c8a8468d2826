//! `approve`: what CI runs once after `azd extension install`, where
//! nobody can answer azd's question: the provider's signature checked,
//! this machine's ceiling shown (and held), then what it asks allowed.

use std::path::Path;

use anyhow::Context as _;
use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_trust::ceiling::Candidate;
use azd_wasm_host_trust::consent::{self, Consent};
use azd_wasm_host_trust::{TrustDir, Verdict};

use crate::admission::{code_key_of, identity, signer_of, who};

/// `approve`: allows what the provider of `manifest` (default: the one
/// beside this binary) asks for, after checking its signature (every file it
/// names, the precompiled code included) and this machine's ceiling (what it
/// allows and refuses is printed; a provider beyond it is refused, and
/// nothing is recorded); prints what was allowed. What CI runs once after
/// `azd extension install`, where nobody can answer azd's question.
pub fn approve(manifest: Option<&Path>) -> anyhow::Result<()> {
    let manifest = crate::locate::locate_manifest(manifest)?;
    let trust = TrustDir::from_env()?;
    let ceiling = crate::ceiling::load(Some(&trust))?;
    let verdict = azd_wasm_host_trust::verify(&manifest, &trust)?;
    if let Verdict::Allowed(why) = &verdict {
        eprintln!("warning: {why}");
    }
    let code_key = code_key_of(&verdict);
    let (identity, version, _) = identity(&manifest, verdict)?;
    let policy = Manifest::load(&manifest)?.policy;
    let candidate = Candidate {
        provider: &identity.provider,
        extension: Some(&identity.extension),
        signer: signer_of(&identity),
        code_signer: code_key.as_deref(),
        policy: &policy,
    };
    let judged = ceiling.judge(&candidate);
    if !judged.is_empty() {
        println!(
            "this machine's provider policy:\n{}",
            crate::ceiling::lines(&judged)
        );
    }
    crate::ceiling::hold(&ceiling, &candidate, &who(&identity))?;
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
