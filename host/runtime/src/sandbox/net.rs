//! The network rule: a guest reaches only the `host:port` destinations its
//! manifest lists, over TCP, and never asks the system resolver about any
//! other name.
//!
//! - An IP entry (`10.0.0.5:5432`, `[::1]:8080`) allows connects to exactly
//!   that address.
//! - A name entry (`db.example.com:5432`) lets the guest look that name up
//!   (`wasi:sockets/ip-name-lookup`); the host resolves it then, without
//!   blocking a thread of the async runtime, and each address the lookup
//!   hands the guest becomes connectable on the listed ports.
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
    Host, HostResolveAddressStream, ResolveAddressStream,
};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress, Network};
use wasmtime_wasi::sockets::{SocketAddrUse, WasiSocketsCtxView};

use crate::seal::Seal;

/// What one instance may reach on the network.
#[derive(Default)]
pub(crate) struct NetworkPolicy {
    /// Allowlisted names (lower case, no trailing dot) and their ports.
    names: HashMap<String, Arc<[u16]>>,
    /// Addresses a connect may go to: IP entries, and what lookups of
    /// allowlisted names returned. Shared with the connect check.
    connectable: Arc<Mutex<HashSet<SocketAddr>>>,
    /// Open lookups of allowlisted names (by resource) and the ports their
    /// addresses are allowed on.
    lookups: HashMap<u32, Arc<[u16]>>,
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
            lookups: HashMap::new(),
            seal,
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
        let seal = self.seal.clone();
        b.socket_addr_check(move |addr, usage| {
            let ok = seal.allows("a socket")
                && match usage {
                    SocketAddrUse::TcpConnect => connectable.lock().contains(&addr),
                    // `connect` first binds implicitly to the wildcard address.
                    SocketAddrUse::TcpBind => addr.ip().is_unspecified() && addr.port() == 0,
                    _ => false,
                };
            Box::pin(async move { ok })
        });
    }
}

/// Links `wasi:sockets/ip-name-lookup` to [`GuestLookup`] (in place of
/// wasmtime-wasi's unfiltered one).
pub(crate) struct FilteredLookup;

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
        let ports = self.policy.names.get(&name_key(&name)).cloned();
        if ports.is_none() && !literal {
            tracing::debug!(name = %azd_wasm_host_core::text::sanitize(&name), "guest name lookup refused: not allowlisted");
            return Err(ErrorCode::AccessDenied.into());
        }
        let stream = self.sockets.resolve_addresses(network, name)?;
        if let Some(ports) = ports {
            self.policy.lookups.insert(stream.rep(), ports);
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
        if let (Some(addr), Some(ports)) = (&next, self.policy.lookups.get(&rep)) {
            let ip = ip_of(addr);
            let mut connectable = self.policy.connectable.lock();
            connectable.extend(ports.iter().map(|port| SocketAddr::new(ip, *port)));
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
}
