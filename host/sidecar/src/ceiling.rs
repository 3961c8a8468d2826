//! The administrator's ceiling as the host applies it: read before any
//! provider runs, every refusal one error naming each field, what the
//! provider asks, what the ceiling allows and the file that says so; and
//! `policy show`, which prints the effective ceiling and its sources.

use std::path::Path;

use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_trust::TrustDir;
use azd_wasm_host_trust::ceiling::{Candidate, Ceiling, Judged, POLICY_ENV, Signer};

/// A provider this machine's policy does not let run, or a policy that
/// cannot be used: answered as `forbidden_by_policy`.
#[derive(Debug)]
pub struct Forbidden(pub(crate) String);

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
/// used refuses every provider, and so does a project whose `.env` names
/// one more (azd passes the project's values to what it starts; a project
/// may not choose the ceiling it is held to).
pub(crate) fn load(trust: Option<&TrustDir>) -> Result<Ceiling, Forbidden> {
    project_names_policy()?;
    Ceiling::load(trust).map_err(|e| Forbidden(e.to_string()))
}

/// Refuses when a `.env` of the project azd started this process in names
/// a provider policy: what `listen` refuses every provider for, and what
/// `run`, `test` and `watch` refuse to start for (the `listen` they start
/// may serve another folder, where no `.env` says so).
pub fn project_names_policy() -> Result<(), Forbidden> {
    if crate::launch::project_sets_policy() {
        return Err(Forbidden(format!(
            "the project's azd environment (.azure/<env>/.env) sets {POLICY_ENV}, which names a \
             provider policy: a project may not choose the policy it is held to, and ignoring it \
             could loosen the one it replaced, so no provider runs until it is removed from the \
             .env (set it in the shell or CI job instead)"
        )));
    }
    Ok(())
}

/// This machine's ceiling, as `policy show`, `policy check` and `check` read it.
pub fn machine_policy() -> anyhow::Result<Ceiling> {
    Ok(load(TrustDir::from_env().ok().as_ref())?)
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
    /// Its manifest as the runtime reads it (under the name it is served
    /// as), and its manifest's own name; read only when there is a ceiling.
    /// One that does not read cannot be judged, so it is refused.
    read: Result<Option<(Manifest, Option<String>)>, String>,
}

/// Who signed a provider, as the ceiling judges it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signed<'a> {
    pub(crate) signer: Signer<'a>,
    /// The key that signed its precompiled code apart, if one did.
    pub(crate) code: Option<&'a str>,
}

impl<'a> Signed<'a> {
    pub(crate) fn by(signer: Signer<'a>) -> Self {
        Self { signer, code: None }
    }
}

impl<'a> Judge<'a> {
    pub(crate) fn new(ceiling: &'a Ceiling, manifest: &Path, served_as: Option<&str>) -> Self {
        let read = if ceiling.is_empty() {
            Ok(None)
        } else {
            // As the runtime resolves it, so that what is judged is what runs.
            match Manifest::resolve(manifest, served_as) {
                Ok(m) => {
                    // Its own name, read apart only when it is served under another.
                    let own = served_as
                        .and_then(|_| Manifest::resolve(manifest, None).ok())
                        .map(|o| o.name);
                    Ok(Some((m, own)))
                }
                Err(e) => Err(format!(
                    "the provider cannot be held to this machine's provider policy, so it does \
                     not run: {}",
                    azd_wasm_host_core::report::chain(&e)
                )),
            }
        };
        Self { ceiling, read }
    }

    /// "provider NAME", as a refusal of a provider run from its folder names it.
    pub(crate) fn plain(&self) -> String {
        match &self.read {
            Ok(Some((m, _))) => format!("provider {}", azd_wasm_host_core::text::shown(&m.name)),
            _ => "the provider".to_owned(),
        }
    }

    /// Refuses the provider, installed as `extension` and signed as
    /// `signed` says, where it asks beyond the ceiling: under the name it is
    /// served as and under its manifest's own.
    pub(crate) fn hold(
        &self,
        extension: Option<&str>,
        signed: Signed<'_>,
        who: &str,
    ) -> Result<(), Forbidden> {
        let (m, own) = match &self.read {
            Ok(None) => return Ok(()),
            Ok(Some(read)) => read,
            Err(why) => return Err(Forbidden(why.clone())),
        };
        let names = std::iter::once(m.name.as_str()).chain(own.as_deref().filter(|n| *n != m.name));
        for provider in names {
            let candidate = Candidate {
                provider,
                extension,
                signer: signed.signer,
                code_signer: signed.code,
                policy: &m.policy,
            };
            hold(self.ceiling, &candidate, who)?;
        }
        Ok(())
    }
}

/// The ceiling's `grants.fs`, as the runtime asks right before it opens a
/// folder granted outside the project (where it resolved, links followed).
pub(crate) struct FolderCeiling(pub(crate) Ceiling);

impl azd_wasm_host_runtime::FolderBounds for FolderCeiling {
    fn admits(
        &self,
        project: &Path,
        real: &Path,
        access: azd_wasm_host_manifest::FsAccess,
    ) -> Result<(), String> {
        self.0.admits_folder(project, real, access)
    }
}

/// What the runtime holds folders outside the project to, when a source
/// bounds folders.
pub(crate) fn folder_bounds(
    ceiling: &Ceiling,
) -> Option<std::sync::Arc<dyn azd_wasm_host_runtime::FolderBounds>> {
    ceiling
        .bounds_folders()
        .then(|| std::sync::Arc::new(FolderCeiling(ceiling.clone())) as _)
}

/// Judged lines, one per answer, indented.
pub fn lines(judged: &[Judged]) -> String {
    judged
        .iter()
        .map(|j| format!("  {} {j}", if j.within { "ok" } else { "REFUSED" }))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `policy show`: every source looked at and what each sets, on stdout.
pub fn show() -> anyhow::Result<()> {
    let ceiling = machine_policy()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ceiling(dir: &Path, text: &str) -> Ceiling {
        let path = dir.join("policy.toml");
        std::fs::write(&path, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        Ceiling::from_files(&[path]).unwrap()
    }

    /// Under a ceiling, a provider whose manifest cannot be read as the
    /// runtime reads it is refused, never let through unjudged; and a
    /// provider is judged under the name it is served as too.
    #[test]
    fn a_provider_that_cannot_be_judged_is_refused_and_every_name_it_goes_by_is_judged() {
        let dir = tempfile::tempdir().unwrap();
        let c = ceiling(dir.path(), "[providers]\nblock_names = [\"legacy-*\"]\n");
        let dev = Signed::by(Signer::Development);
        let missing = Judge::new(&c, &dir.path().join("none/provider.toml"), None);
        let e = missing.hold(None, dev, "p").unwrap_err().to_string();
        assert!(
            e.contains("cannot be held to this machine's provider policy"),
            "{e}"
        );
        let manifest = dir.path().join("provider.toml");
        std::fs::write(&manifest, "name = \"todo\"\ncomponent = \"c.wasm\"\n").unwrap();
        assert!(Judge::new(&c, &manifest, None).hold(None, dev, "p").is_ok());
        let e = Judge::new(&c, &manifest, Some("legacy-todo"))
            .hold(None, dev, "p")
            .unwrap_err()
            .to_string();
        assert!(e.contains("providers.block_names"), "{e}");
        // No ceiling: nothing is read, nothing refused.
        let none = Ceiling::default();
        assert!(
            Judge::new(&none, &dir.path().join("none"), None)
                .hold(None, dev, "p")
                .is_ok()
        );
    }
}
