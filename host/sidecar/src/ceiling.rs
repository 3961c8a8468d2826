//! The administrator's ceiling as the host applies it: read before any
//! provider runs, every refusal one error naming each field, what the
//! provider asks, what the ceiling allows and the file that says so; and
//! `policy show`, which prints the effective ceiling and its sources.

use std::path::Path;

use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_trust::TrustDir;
use azd_wasm_host_trust::ceiling::{Candidate, Ceiling, Judged, Signer};

/// A provider this machine's policy does not let run, or a policy that
/// cannot be used: answered as `forbidden_by_policy`.
#[derive(Debug)]
pub(crate) struct Forbidden(pub(crate) String);

impl std::fmt::Display for Forbidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Forbidden {}

/// The code a refusal before loading answers: `forbidden_by_policy` for the
/// ceiling's, `untrusted_provider` for the rest (signature, consent records).
pub(crate) fn code_of(refusal: &anyhow::Error) -> azd_wasm_host_core::ErrorCode {
    if refusal.is::<Forbidden>() {
        azd_wasm_host_core::ErrorCode::ForbiddenByPolicy
    } else {
        azd_wasm_host_core::ErrorCode::UntrustedProvider
    }
}

/// This machine's ceiling for the user of `trust`. A source that cannot be
/// used refuses every provider.
pub(crate) fn load(trust: Option<&TrustDir>) -> Result<Ceiling, Forbidden> {
    Ceiling::load(trust).map_err(|e| Forbidden(e.to_string()))
}

/// Refuses `candidate` when it asks beyond `ceiling`, naming every field it
/// exceeds; `who` says which provider.
pub(crate) fn hold(
    ceiling: &Ceiling,
    candidate: &Candidate<'_>,
    who: &str,
) -> Result<(), Forbidden> {
    let refusals = ceiling.refusals(candidate);
    if refusals.is_empty() {
        return Ok(());
    }
    Err(Forbidden(format!(
        "{who} asks for more than this machine's provider policy allows, so it does not run \
         (no consent lifts the policy; its owner can change it, `azd-wasm-host policy show` \
         prints it):\n{}",
        lines(&refusals)
    )))
}

/// A provider about to run, held to this machine's ceiling.
pub(crate) struct Judge<'a> {
    ceiling: &'a Ceiling,
    /// Its manifest, read only when there is a ceiling. One that does not
    /// read is judged by nothing here: the runtime reads the same file, and
    /// refuses it, before anything of it runs.
    read: Option<Manifest>,
    /// The name it is served as, when not its manifest's.
    served_as: Option<&'a str>,
}

impl<'a> Judge<'a> {
    pub(crate) fn new(ceiling: &'a Ceiling, manifest: &Path, served_as: Option<&'a str>) -> Self {
        let read = if ceiling.is_empty() {
            None
        } else {
            Manifest::resolve(manifest, None).ok()
        };
        Self {
            ceiling,
            read,
            served_as,
        }
    }

    /// "provider NAME", as a refusal of a provider run from its folder names it.
    pub(crate) fn plain(&self) -> String {
        match &self.read {
            Some(m) => format!("provider {}", azd_wasm_host_core::text::shown(&m.name)),
            None => "the provider".to_owned(),
        }
    }

    /// Refuses the provider, installed as `extension` and signed by
    /// `signer`, where it asks beyond the ceiling: under its manifest's name
    /// and under the one it is served as.
    pub(crate) fn hold(
        &self,
        extension: Option<&str>,
        signer: Signer<'_>,
        who: &str,
    ) -> Result<(), Forbidden> {
        let Some(m) = &self.read else { return Ok(()) };
        let names = std::iter::once(m.name.as_str()).chain(self.served_as.filter(|n| *n != m.name));
        for provider in names {
            let candidate = Candidate {
                provider,
                extension,
                signer,
                policy: &m.policy,
            };
            hold(self.ceiling, &candidate, who)?;
        }
        Ok(())
    }
}

/// Judged lines, one per answer, indented.
pub(crate) fn lines(judged: &[Judged]) -> String {
    judged
        .iter()
        .map(|j| format!("  {} {j}", if j.within { "ok" } else { "REFUSED" }))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `policy show`: every source looked at and what each sets, on stdout.
pub fn show() -> anyhow::Result<()> {
    let trust = TrustDir::from_env().ok();
    let ceiling = Ceiling::load(trust.as_ref())?;
    print!("{}", render(&ceiling));
    Ok(())
}

/// The text `policy show` prints.
pub fn render(ceiling: &Ceiling) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("sources (a provider must stay within every one there is):\n");
    for s in ceiling.sources() {
        let state = if s.rules.is_some() { "read" } else { "absent" };
        let _ = writeln!(
            out,
            "  {:<18} {state:<7} {}",
            s.place.to_string(),
            s.path.display()
        );
    }
    if ceiling.is_empty() {
        out.push_str(
            "\nno ceiling: what runs is decided by the keys you trust and the grants you allow\n",
        );
        return out;
    }
    out.push_str("\nceiling:\n");
    for (key, value, source) in ceiling.lines() {
        let _ = writeln!(out, "  {key:<32} {value}  ({})", source.display());
    }
    out
}
