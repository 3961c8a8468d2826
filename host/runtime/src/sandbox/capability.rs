//! [`Capability`]: one thing a policy can grant a guest, in one module.
//!
//! A capability's module owns its `[policy]` fields ([`Capability::KEYS`]),
//! the interfaces through which a guest uses it ([`Capability::INTERFACES`]),
//! what `check` says each lets the guest reach under a policy
//! ([`Capability::reach`]), its part of the store, which the store hands it
//! through a view trait of the module's own (as wasmtime-wasi's `WasiView`),
//! and the host side of its interfaces in the linker (the module's `link`,
//! generic over any store that gives it its view), each asking the instance's
//! seal first where it reaches outside. `capabilities!` in the sandbox's
//! module names each capability once: from that one list come
//! [`CAPABILITIES`](super::CAPABILITIES), which `check` words imports through
//! and the tests hold to [`Policy::fields`] (every field is exactly one
//! capability's, so a field added to the policy fails them until a capability
//! enforces it), and [`link_all`](super::link_all), the engine's linker lines.
//!
//! What every guest has whatever its policy (clocks, randomness, streams, its
//! output to the log, progress) is not a capability: the engine links it and
//! `check` words it apart.

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
}

/// A [`Capability`] as a value, to go through them all.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    /// Its module's name.
    #[cfg(test)]
    pub(crate) name: &'static str,
    /// Held to [`Policy::fields`] by the tests.
    #[cfg(test)]
    pub(crate) keys: &'static [&'static str],
    interfaces: &'static [&'static str],
    reach: fn(&str, &Policy) -> &'static str,
}

impl Entry {
    /// The entry of `C`, whose module is `name`.
    pub(crate) const fn of<C: Capability>(name: &'static str) -> Self {
        #[cfg(not(test))]
        let _ = name;
        Entry {
            #[cfg(test)]
            name,
            #[cfg(test)]
            keys: C::KEYS,
            interfaces: C::INTERFACES,
            reach: C::reach,
        }
    }

    /// Whether it serves `interface` (a name without its version).
    pub(crate) fn serves(&self, interface: &str) -> bool {
        self.interfaces.iter().any(|&served| {
            if served.ends_with('/') {
                interface.starts_with(served)
            } else {
                interface == served
            }
        })
    }

    /// What an import of `interface` lets the guest do under `policy`, when
    /// this capability serves it.
    pub(crate) fn reach(&self, interface: &str, policy: &Policy) -> Option<&'static str> {
        self.serves(interface)
            .then(|| (self.reach)(interface, policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{CAPABILITIES, reach};

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
