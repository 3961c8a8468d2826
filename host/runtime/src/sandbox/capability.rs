//! [`Capability`]: one thing a policy can grant a guest, in one module.
//!
//! A capability owns its `[policy]` fields ([`Capability::KEYS`]), the
//! interfaces through which a guest uses it ([`Capability::INTERFACES`]),
//! what `check` says each lets the guest reach under a policy
//! ([`Capability::reach`]) and the host side of those interfaces in the
//! linker ([`Capability::link`]), each served by the capability's own part of
//! the store and asking the instance's seal first where it reaches outside.
//! [`CAPABILITIES`] lists them; the engine links through it, `check` words
//! imports through it, and its tests hold it to [`Policy::fields`]: every
//! field is exactly one capability's, so a field added to the policy fails
//! them until a capability enforces it.
//!
//! What every guest has whatever its policy (clocks, randomness, streams, its
//! output to the log, progress) is not a capability: the engine links it and
//! `check` words it apart.

use wasmtime::component::Linker;

use super::{azd, credentials, environment, files, http, memory, network, time};
use crate::instance::store::HostState;
use azd_wasm_host_manifest::Policy;

/// One thing a policy can grant.
pub(crate) trait Capability {
    /// Its keys under `[policy]`, as [`Policy::fields`] names them.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "what the tests hold to `Policy::fields`")
    )]
    const KEYS: &'static [&'static str];
    /// The interfaces it serves, by name without a version; one ending in `/`
    /// is every interface of that package. None for a bound the store
    /// enforces by itself.
    const INTERFACES: &'static [&'static str];

    /// What an import of `interface` (one of [`Self::INTERFACES`]) lets the
    /// guest do under `policy`, in a few words.
    fn reach(interface: &str, policy: &Policy) -> &'static str;

    /// Puts the host side of its interfaces in `linker`, over wasmtime-wasi's
    /// where it serves one of WASI's.
    fn link(linker: &mut Linker<HostState>) -> wasmtime::Result<()>;
}

/// A [`Capability`] as a value, to go through them all.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    /// Its module's name.
    name: &'static str,
    /// Held to [`Policy::fields`] by the tests.
    #[cfg(test)]
    keys: &'static [&'static str],
    interfaces: &'static [&'static str],
    reach: fn(&str, &Policy) -> &'static str,
    link: fn(&mut Linker<HostState>) -> wasmtime::Result<()>,
}

const fn entry<C: Capability>(name: &'static str) -> Entry {
    Entry {
        name,
        #[cfg(test)]
        keys: C::KEYS,
        interfaces: C::INTERFACES,
        reach: C::reach,
        link: C::link,
    }
}

/// Every capability, in the order consent lists their fields.
pub(crate) const CAPABILITIES: [Entry; 8] = [
    entry::<files::Files>("files"),
    entry::<environment::Variables>("environment"),
    entry::<network::Sockets>("network"),
    entry::<http::Http>("http"),
    entry::<credentials::Tokens>("credentials"),
    entry::<azd::Services>("azd"),
    entry::<memory::Memory>("memory"),
    entry::<time::CallTime>("time"),
];

impl Entry {
    /// Whether it serves `interface` (a name without its version).
    fn serves(&self, interface: &str) -> bool {
        self.interfaces.iter().any(|&served| {
            if served.ends_with('/') {
                interface.starts_with(served)
            } else {
                interface == served
            }
        })
    }
}

/// Puts every capability's host side in `linker`.
pub(crate) fn link_all(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    CAPABILITIES.iter().try_for_each(|c| {
        (c.link)(linker).map_err(|e| e.context(format!("the {} capability", c.name)))
    })
}

/// What an import of `interface` lets the guest do under `policy`, when a
/// capability serves it.
pub(crate) fn reach(interface: &str, policy: &Policy) -> Option<&'static str> {
    CAPABILITIES
        .iter()
        .find(|c| c.serves(interface))
        .map(|c| (c.reach)(interface, policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_field_is_exactly_one_capabilitys() {
        let policy = Policy::default();
        let fields: Vec<&str> = policy.fields().iter().map(|f| f.key).collect();
        for key in &fields {
            let owners: Vec<&str> = CAPABILITIES
                .iter()
                .filter(|c| c.keys.contains(key))
                .map(|c| c.name)
                .collect();
            assert_eq!(owners.len(), 1, "`{key}` is enforced by {owners:?}");
        }
        for c in CAPABILITIES {
            for key in c.keys {
                assert!(
                    fields.contains(key),
                    "{} owns `{key}`, no policy field",
                    c.name
                );
            }
        }
        let owned: usize = CAPABILITIES.iter().map(|c| c.keys.len()).sum();
        assert_eq!(owned, fields.len(), "a key is listed twice");
    }

    #[test]
    fn every_interface_is_at_most_one_capabilitys_and_worded_for_it() {
        let granted = azd_wasm_host_manifest::Manifest::policy_of(
            r#"
name = "p"
component = "p.wasm"
[policy]
fs = [{ path = "out", access = "read-write" }]
env = ["HOME"]
network = ["db.example:5432"]
[policy.http]
allow = ["https://api.example"]
[policy.azd]
environment = "read"
prompt = true
credential_scopes = ["https://management.azure.com/.default"]
"#,
            std::path::Path::new("provider.toml"),
        )
        .expect("the manifest reads");
        for c in CAPABILITIES {
            for interface in c.interfaces {
                let name = interface.trim_end_matches('/');
                let named = format!("{name}{}", if interface.ends_with('/') { "/x" } else { "" });
                let owners: Vec<&str> = CAPABILITIES
                    .iter()
                    .filter(|o| o.serves(&named))
                    .map(|o| o.name)
                    .collect();
                assert_eq!(owners, [c.name], "{named} is served by {owners:?}");
                let words = reach(&named, &granted);
                assert!(
                    words.is_some_and(|w| !w.is_empty()),
                    "{named} under a grant"
                );
                let denied = reach(&named, &Policy::default());
                assert!(denied.is_some_and(|w| !w.is_empty()), "{named} under none");
            }
        }
        assert_eq!(reach("wasi:clocks/wall-clock", &granted), None);
    }
}
