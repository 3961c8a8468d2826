//! What a grant by name may reach: the one rule for the addresses a host
//! name resolves to, on the sockets path (`[policy] network`, [`super::network`])
//! and the HTTP path (`[policy.http]`, [`super::http::send`]) alike.
//!
//! A name is whatever DNS (or `/etc/hosts`) says it is at the moment it is
//! looked up: `localhost`, a name whose record an attacker controls, or one
//! that rebinds between two lookups can all point at this machine or at the
//! cloud's metadata service, which hands out the machine's credentials. So a
//! grant by name never reaches:
//!
//! | kind | IPv4 | IPv6 |
//! |---|---|---|
//! | unspecified ("this host"; Linux connects it to loopback) | `0.0.0.0/8` | `::` |
//! | loopback | `127.0.0.0/8` | `::1` |
//! | link-local (Azure's, AWS's and GCP's metadata at `169.254.169.254`) | `169.254.0.0/16` | `fe80::/10` |
//! | multicast, broadcast, reserved (nothing TCP reaches) | `224.0.0.0/4`, `240.0.0.0/4` (with `255.255.255.255`) | `ff00::/8` |
//! | a cloud's metadata or platform service outside link-local | `168.63.129.16` (Azure's WireServer), `100.100.100.200` (Alibaba Cloud) | `fd00:ec2::254` (AWS), `fd20:ce::254` (GCP) |
//!
//! An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`,
//! IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is judged as that
//! IPv4 address. Private ranges (`10/8`, `172.16/12`, `192.168/16`, carrier
//! NAT `100.64/10`, IPv6 unique-local `fc00::/7`) stay reachable by name: a
//! company's database or an Azure private endpoint resolves there, and is
//! what a name grant is for. An address the manifest names literally
//! (`127.0.0.1:8080`, `http://127.0.0.1:10000`) is reached whatever its kind:
//! the user consented to that very address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a grant by name may not reach an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Unspecified,
    Loopback,
    LinkLocal,
    /// Multicast, broadcast or reserved.
    NotUnicast,
    /// A cloud's metadata or platform service.
    Metadata,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unspecified => "an unspecified address",
            Self::Loopback => "a loopback address",
            Self::LinkLocal => "a link-local address (where cloud metadata services answer)",
            Self::NotUnicast => "a multicast, broadcast or reserved address",
            Self::Metadata => "a cloud metadata service's address",
        })
    }
}

/// Why a grant by name may not reach `ip`, or `None` when it may.
pub(crate) fn refused_by_name(ip: IpAddr) -> Option<Refused> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => refused_v4(v4),
            None => refused_v6(v6),
        },
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<Refused> {
    let [a, b, ..] = ip.octets();
    if a == 0 {
        Some(Refused::Unspecified)
    } else if a == 127 {
        Some(Refused::Loopback)
    } else if a == 169 && b == 254 {
        Some(Refused::LinkLocal)
    } else if a >= 224 {
        Some(Refused::NotUnicast)
    } else if [[168, 63, 129, 16], [100, 100, 100, 200]].contains(&ip.octets()) {
        Some(Refused::Metadata)
    } else {
        None
    }
}

/// The metadata services' IPv6 addresses: AWS's and GCP's.
const METADATA_V6: [Ipv6Addr; 2] = [
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254),
    Ipv6Addr::new(0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254),
];

fn refused_v6(ip: Ipv6Addr) -> Option<Refused> {
    let first = ip.segments()[0];
    if ip.is_unspecified() {
        Some(Refused::Unspecified)
    } else if ip.is_loopback() {
        Some(Refused::Loopback)
    } else if first & 0xffc0 == 0xfe80 {
        Some(Refused::LinkLocal)
    } else if first & 0xff00 == 0xff00 {
        Some(Refused::NotUnicast)
    } else if METADATA_V6.contains(&ip) {
        Some(Refused::Metadata)
    } else {
        None
    }
}

/// The IPv4 address an IPv6 one carries: IPv4-mapped (`::ffff:0:0/96`),
/// IPv4-compatible (`::/96` but `::` and `::1`), NAT64 (`64:ff9b::/96`, and
/// the local-use `64:ff9b:1::/48` in RFC 6052's /48 layout) or 6to4
/// (`2002::/16`, the IPv4 address in the next 32 bits).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    let tail = v4(s[6], s[7]);
    match s[..6] {
        [0, 0, 0, 0, 0, 0xffff] | [0x64, 0xff9b, 0, 0, 0, 0] => Some(tail),
        [0, 0, 0, 0, 0, 0] if !ip.is_unspecified() && !ip.is_loopback() => Some(tail),
        // RFC 6052, /48: two octets in bits 48..64, the u-octet, two more after it.
        [0x64, 0xff9b, 0x0001, ..] => Some(v4(s[3], s[4] << 8 | s[5] >> 8)),
        [0x2002, ..] => Some(v4(s[1], s[2])),
        _ => None,
    }
}

/// Whether `host` names this machine by definition: `localhost` and the
/// names under `.localhost` (RFC 6761), never looked up in DNS here. A grant
/// that names them names loopback as literally as `127.0.0.1` does, and
/// reaches loopback (only).
pub(crate) fn names_loopback(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(ip: &str) -> Option<Refused> {
        refused_by_name(ip.parse().unwrap())
    }

    /// IPv6 forms that carry an IPv4 address elsewhere than its last 32 bits
    /// (6to4, local-use NAT64 in RFC 6052's /48 layout) are judged as it.
    #[test]
    fn six_to_four_and_local_use_nat64_are_judged_as_the_address_they_carry() {
        assert_eq!(kind("2002:7f00:1::1"), Some(Refused::Loopback));
        assert_eq!(kind("2002:a9fe:a9fe::"), Some(Refused::LinkLocal));
        assert_eq!(kind("2002:0a00:0001::1"), None);
        // 127.0.0.1 and 169.254.169.254 at /48: a9fe, u-octet 00, a9fe.
        assert_eq!(kind("64:ff9b:1:7f00:0:100::"), Some(Refused::Loopback));
        assert_eq!(kind("64:ff9b:1:a9fe:a9:fe00::"), Some(Refused::LinkLocal));
        assert!(names_loopback("localhost") && names_loopback("LocalHost."));
        assert!(names_loopback("db.localhost"));
        assert!(!names_loopback("localhost.example.com") && !names_loopback("notlocalhost"));
    }

    /// Every range the rule names, at its edges, in both families and in every IPv6 form that
    /// carries an IPv4 address; and what stays reachable by name just outside each.
    #[test]
    fn a_name_never_reaches_this_host_its_link_or_a_metadata_service() {
        use Refused::*;
        let refused = [
            ("0.0.0.0", Unspecified),
            ("0.255.255.255", Unspecified),
            ("::", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("::1", Loopback),
            ("169.254.169.254", LinkLocal),
            ("169.254.0.0", LinkLocal),
            ("169.254.255.255", LinkLocal),
            ("fe80::1", LinkLocal),
            ("febf:ffff::1", LinkLocal),
            ("224.0.0.1", NotUnicast),
            ("239.255.255.250", NotUnicast),
            ("240.0.0.1", NotUnicast),
            ("255.255.255.255", NotUnicast),
            ("ff02::1", NotUnicast),
            ("168.63.129.16", Metadata),
            ("100.100.100.200", Metadata),
            ("fd00:ec2::254", Metadata),
            ("fd20:ce::254", Metadata),
            // IPv4 carried in IPv6: mapped, compatible, NAT64.
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::ffff:0.0.0.0", Unspecified),
            ("::127.0.0.1", Loopback),
            ("::169.254.169.254", LinkLocal),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::7f00:1", Loopback),
            ("::ffff:168.63.129.16", Metadata),
        ];
        for (ip, want) in refused {
            assert_eq!(kind(ip), Some(want), "{ip}");
        }
        for reachable in [
            "1.1.1.1",
            "126.255.255.255",
            "128.0.0.1",
            "169.253.255.255",
            "169.255.0.1",
            "223.255.255.255",
            "168.63.129.17",
            "100.100.100.201",
            // Private ranges: a company's hosts, an Azure private endpoint.
            "10.0.0.5",
            "172.16.0.1",
            "192.168.1.10",
            "100.64.0.1",
            "fd00::1",
            "fd00:ec2::253",
            "2001:db8::1",
            "2606:4700::1111",
            "fec0::1",
            "fe7f::1",
            "fec0::ffff:127.0.0.1",
            "::ffff:10.0.0.5",
            "64:ff9b::808:808",
        ] {
            assert_eq!(kind(reachable), None, "{reachable}");
        }
        assert!(Refused::LinkLocal.to_string().contains("metadata"));
    }
}
