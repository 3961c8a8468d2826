//! The network capability, `[policy] network`: a guest reaches only the `host:port` destinations its
//! manifest lists, over TCP, and never asks the system resolver about any
//! other name.
//!
//! - An IP entry (`10.0.0.5:5432`, `[::1]:8080`) allows connects to exactly
//!   that address.
//! - A name entry (`db.example.com:5432`) lets the guest look that name up
//!   (`wasi:sockets/ip-name-lookup`); the host resolves it then, without
//!   blocking a thread of the async runtime, and each address the lookup
//!   hands the guest becomes connectable on the listed ports, but those a
//!   grant by name never reaches ([`super::reach`]: this host, its link, a
//!   cloud's metadata service): a connect to one is refused (`access-denied`)
//!   and the log says what the name resolved to and the entry that would
//!   allow it, the address itself. `localhost` (and names under
//!   `.localhost`) name loopback by definition: their loopback addresses are
//!   reached, as a literal `127.0.0.1` is.
//! - A lookup of any other name is refused before the resolver sees it
//!   (`access-denied`), so a guest cannot leak data through DNS queries. An IP
//!   literal "resolves" to itself without a query.
//! - UDP and listening sockets are never allowed.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use azd_wasm_host_core::authority::parse_host_port;
use parking_lot::Mutex;
use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p2::SocketError;
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{
    self, Host, HostResolveAddressStream, ResolveAddressStream,
};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress, Network};
use wasmtime_wasi::sockets::{SocketAddrUse, WasiSocketsCtxView};

use super::capability::Capability;
use super::reach::{Refused, names_loopback, refused_by_name};
use crate::instance::seal::Seal;
use azd_wasm_host_manifest::Policy;

/// Addresses refused to a name that are kept to say why a connect failed.
const MAX_REFUSED_KEPT: usize = 64;

/// What one instance may reach on the network.
#[derive(Default)]
pub(crate) struct NetworkPolicy {
    /// Allowlisted names (lower case, no trailing dot) and their ports.
    names: HashMap<String, Arc<[u16]>>,
    /// Addresses a connect may go to: IP entries, and what lookups of
    /// allowlisted names returned. Shared with the connect check.
    connectable: Arc<Mutex<HashSet<SocketAddr>>>,
    /// Addresses allowlisted names resolved to that a grant by name may not
    /// reach: the name and why, for the connect check to say.
    refused: Arc<Mutex<HashMap<IpAddr, (String, Refused)>>>,
    /// Open lookups of allowlisted names (by resource): the name and the
    /// ports its addresses are allowed on.
    lookups: HashMap<u32, (String, Arc<[u16]>)>,
    /// Closed while the instance is made ahead of its Initialize.
    seal: Seal,
}

/// A host name as the allowlist compares it.
fn name_key(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl NetworkPolicy {
    /// The policy for `entries` (`host:port`, checked when the manifest was
    /// read), under `seal`.
    pub(crate) fn new(entries: &[String], seal: Seal) -> Self {
        let mut names: HashMap<String, Vec<u16>> = HashMap::new();
        let mut connectable = HashSet::new();
        for entry in entries {
            let Ok((host, port)) = parse_host_port(entry) else {
                continue;
            };
            match host.parse::<IpAddr>() {
                Ok(ip) => {
                    connectable.insert(SocketAddr::new(ip, port));
                }
                Err(_) => names.entry(name_key(&host)).or_default().push(port),
            }
        }
        Self {
            names: names.into_iter().map(|(k, v)| (k, v.into())).collect(),
            connectable: Arc::new(Mutex::new(connectable)),
            refused: Arc::default(),
            lookups: HashMap::new(),
            seal,
        }
    }

    /// An allowlisted `name` resolved to `ip`: connectable on its `ports`
    /// when a grant by name may reach it, else kept to say why a connect to
    /// it is refused.
    fn resolved(&self, name: &str, ports: &[u16], ip: IpAddr) {
        // `localhost` names loopback as literally as `127.0.0.1` does.
        let literal = names_loopback(name) && refused_by_name(ip) == Some(Refused::Loopback);
        match refused_by_name(ip).filter(|_| !literal) {
            None => {
                let mut connectable = self.connectable.lock();
                connectable.extend(ports.iter().map(|port| SocketAddr::new(ip, *port)));
            }
            Some(why) => {
                // Kept only to name in the log: a few are enough, whatever a name returns.
                let mut refused = self.refused.lock();
                if refused.len() < MAX_REFUSED_KEPT {
                    refused.insert(ip, (name.to_owned(), why));
                }
            }
        }
    }

    /// Applies the policy to a WASI context.
    pub(crate) fn configure(&self, b: &mut WasiCtxBuilder) {
        b.allow_udp(false);
        let any = !self.names.is_empty() || !self.connectable.lock().is_empty();
        b.allow_tcp(any);
        // Lookups go through [`GuestLookup`]: only allowlisted names reach the
        // resolver, and an IP literal resolves to itself.
        b.allow_ip_name_lookup(any);
        if !any {
            return;
        }
        let connectable = Arc::clone(&self.connectable);
        let refused = Arc::clone(&self.refused);
        let seal = self.seal.clone();
        b.socket_addr_check(move |addr, usage| {
            let ok = seal.allows("a socket")
                && match usage {
                    SocketAddrUse::TcpConnect => {
                        connectable.lock().contains(&addr) || {
                            say_refused(&refused.lock(), addr);
                            false
                        }
                    }
                    // `connect` first binds implicitly to the wildcard address.
                    SocketAddrUse::TcpBind => addr.ip().is_unspecified() && addr.port() == 0,
                    _ => false,
                };
            Box::pin(async move { ok })
        });
    }
}

/// TCP to the listed destinations, and lookups of the listed names.
pub(crate) struct Sockets;

impl Capability for Sockets {
    const KEYS: &'static [&'static str] = &["network"];
    const INTERFACES: &'static [&'static str] = &["wasi:sockets/"];

    fn reach(_interface: &str, _policy: &Policy) -> &'static str {
        "network (only allowlisted host:port)"
    }
}

/// The store's part for sockets: its name lookups behind the allowlist.
pub(crate) trait SocketsView: Send {
    /// Name lookups, behind the network allowlist.
    fn lookup(&mut self) -> GuestLookup<'_>;
}

/// wasmtime-wasi's sockets stay, their connects checked by the context's
/// address check ([`NetworkPolicy::configure`]); name lookups are served in
/// place of its unfiltered ones.
pub(super) fn link<T: SocketsView + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    ip_name_lookup::add_to_linker::<T, FilteredLookup>(linker, T::lookup)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Links `wasi:sockets/ip-name-lookup` to [`GuestLookup`] (in place of
/// wasmtime-wasi's unfiltered one).
struct FilteredLookup;

impl HasData for FilteredLookup {
    type Data<'a> = GuestLookup<'a>;
}

/// wasmtime-wasi's resolver behind the allowlist.
pub(crate) struct GuestLookup<'a> {
    pub(crate) sockets: WasiSocketsCtxView<'a>,
    pub(crate) policy: &'a mut NetworkPolicy,
}

impl network::Host for GuestLookup<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        self.sockets.convert_error_code(error)
    }

    fn network_error_code(
        &mut self,
        error: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        self.sockets.network_error_code(error)
    }
}

impl network::HostNetwork for GuestLookup<'_> {
    fn drop(&mut self, this: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.sockets, this)
    }
}

impl Host for GuestLookup<'_> {
    fn resolve_addresses(
        &mut self,
        network: Resource<Network>,
        name: String,
    ) -> Result<Resource<ResolveAddressStream>, SocketError> {
        let literal = name.parse::<IpAddr>().is_ok()
            || name
                .strip_prefix('[')
                .and_then(|n| n.strip_suffix(']'))
                .is_some_and(|n| n.parse::<Ipv6Addr>().is_ok());
        if !self.policy.seal.allows("a name lookup") {
            return Err(ErrorCode::AccessDenied.into());
        }
        let key = name_key(&name);
        let ports = self.policy.names.get(&key).cloned();
        if ports.is_none() && !literal {
            tracing::debug!(name = %azd_wasm_host_core::text::sanitize(&name), "guest name lookup refused: not allowlisted");
            return Err(ErrorCode::AccessDenied.into());
        }
        let stream = self.sockets.resolve_addresses(network, name)?;
        if let Some(ports) = ports {
            self.policy.lookups.insert(stream.rep(), (key, ports));
        }
        Ok(stream)
    }
}

impl HostResolveAddressStream for GuestLookup<'_> {
    fn resolve_next_address(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        let rep = stream.rep();
        let next = self.sockets.resolve_next_address(stream)?;
        if let (Some(addr), Some((name, ports))) = (&next, self.policy.lookups.get(&rep)) {
            self.policy.resolved(name, ports, ip_of(addr));
        }
        Ok(next)
    }

    fn subscribe(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<wasmtime_wasi::p2::DynPollable>> {
        self.sockets.subscribe(stream)
    }

    fn drop(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<()> {
        self.policy.lookups.remove(&stream.rep());
        HostResolveAddressStream::drop(&mut self.sockets, stream)
    }
}

/// Logs why a connect to `addr` is refused when an allowlisted name
/// resolved to it: what the name and the address are, and the entry that
/// would allow it.
fn say_refused(refused: &HashMap<IpAddr, (String, Refused)>, addr: SocketAddr) {
    if let Some((name, why)) = refused.get(&addr.ip()) {
        tracing::warn!(
            "guest connect to {addr} refused: `{}` resolved to it, {why}, which a `network` entry \
             by name never reaches; add \"{addr}\" to `network` in provider.toml if the provider \
             should reach it",
            azd_wasm_host_core::text::sanitize(name)
        );
    }
}

fn ip_of(addr: &IpAddress) -> IpAddr {
    match *addr {
        IpAddress::Ipv4((a, b, c, d)) => IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        IpAddress::Ipv6((a, b, c, d, e, f, g, h)) => {
            IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_into_addresses_and_names() {
        let p = NetworkPolicy::new(
            &[
                "10.0.0.5:5432".into(),
                "[::1]:8080".into(),
                "DB.Example.com.:5432".into(),
                "db.example.com:6432".into(),
            ],
            Seal::none(),
        );
        let c = p.connectable.lock();
        assert!(c.contains(&"10.0.0.5:5432".parse().unwrap()));
        assert!(c.contains(&"[::1]:8080".parse().unwrap()));
        assert_eq!(c.len(), 2);
        assert_eq!(&*p.names["db.example.com"], &[5432, 6432]);
    }

    /// The entries a name's lookup adds: what a grant by name may reach, on the name's ports;
    /// never loopback, link-local or metadata, which are kept to say why a connect failed.
    /// `localhost` names loopback by definition: its loopback addresses, and only those.
    #[test]
    fn a_names_addresses_become_connectable_only_when_a_name_may_reach_them() {
        let addresses = [
            "127.0.0.1",
            "::1",
            "169.254.169.254",
            "::ffff:127.0.0.1",
            "10.0.0.5",
        ];
        let p = NetworkPolicy::new(&["db.example.com:5432".into()], Seal::none());
        for ip in addresses {
            p.resolved("db.example.com", &[5432], ip.parse().unwrap());
        }
        let connectable = p.connectable.lock();
        assert_eq!(connectable.len(), 1);
        assert!(connectable.contains(&"10.0.0.5:5432".parse().unwrap()));
        assert_eq!(p.refused.lock().len(), 4);
        drop(connectable);

        let p = NetworkPolicy::new(&["localhost:5432".into()], Seal::none());
        for ip in addresses {
            p.resolved("localhost", &[5432], ip.parse().unwrap());
        }
        let connectable = p.connectable.lock();
        for reached in [
            "127.0.0.1:5432",
            "[::1]:5432",
            "[::ffff:127.0.0.1]:5432",
            "10.0.0.5:5432",
        ] {
            assert!(connectable.contains(&reached.parse().unwrap()), "{reached}");
        }
        assert_eq!(p.refused.lock().len(), 1, "link-local stays refused");
    }
}
