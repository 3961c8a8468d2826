//! The ceiling's patterns, and the one spelling of each grant they are
//! compared in: a grant written another way (another case of a host, a
//! trailing dot, a default port written out, an IPv6 address written long, a
//! path through `..`) is the same grant, so it is judged as the same.

use std::net::IpAddr;

use azd_wasm_host_core::authority::{HttpOrigin, parse_host_port};

/// A host as it is compared: lower case, no trailing dot, an IP address in
/// its shortest form (`0:0::1` is `::1`; an IPv4-mapped IPv6 address is its
/// IPv4 address), without brackets.
pub(crate) fn canonical_host(host: &str) -> String {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return match ip {
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or_else(|| v6.to_string(), |v4| v4.to_string()),
            IpAddr::V4(v4) => v4.to_string(),
        };
    }
    bare.trim_end_matches('.').to_ascii_lowercase()
}

/// A host pattern: one host, or `*.suffix` for every host beneath `suffix`
/// (at least one label more; not `suffix` itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostPattern {
    /// This host alone.
    Exact(String),
    /// Any host ending in `.suffix`.
    Beneath(String),
}

impl HostPattern {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        match text.strip_prefix("*.") {
            Some(suffix) => {
                let suffix = canonical_host(suffix);
                if suffix.is_empty() || suffix.contains('*') || !suffix.contains('.') {
                    return Err(format!(
                        "`*.{suffix}` is too wide: a wildcard stands for hosts beneath a domain \
                         of two labels or more (`*.blob.core.windows.net`)"
                    ));
                }
                Ok(Self::Beneath(suffix))
            }
            None if text.contains('*') => {
                Err("has `*` where only a leading `*.` is a wildcard".to_owned())
            }
            None => Ok(Self::Exact(canonical_host(text))),
        }
    }

    /// Whether this pattern covers `asked`, a canonical host.
    pub(crate) fn covers(&self, asked: &str) -> bool {
        match self {
            Self::Exact(h) => h == asked,
            Self::Beneath(suffix) => {
                asked
                    .strip_suffix(suffix.as_str())
                    .is_some_and(|head| head.ends_with('.') && head.len() > 1)
                    && asked.parse::<IpAddr>().is_err()
            }
        }
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exact(h) if h.contains(':') => write!(f, "[{h}]"),
            Self::Exact(h) => f.write_str(h),
            Self::Beneath(s) => write!(f, "*.{s}"),
        }
    }
}

/// An HTTP origin pattern: `https://host[:port]`, the host may be `*.suffix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OriginPattern {
    https: bool,
    host: HostPattern,
    port: u16,
}

impl OriginPattern {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (scheme, rest) = text
            .split_once("://")
            .ok_or("is not scheme://host[:port]")?;
        let (https, default_port) = match scheme.to_ascii_lowercase().as_str() {
            "https" => (true, 443),
            "http" => (false, 80),
            other => return Err(format!("has the scheme `{other}`; an origin is https://…")),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') || rest.contains('?') || rest.contains('@') || rest.contains('#') {
            return Err("has a path, query or user; an origin is scheme://host[:port]".to_owned());
        }
        let (host, port) = split_port(rest)?;
        Ok(Self {
            https,
            host: HostPattern::parse(host)?,
            port: port.unwrap_or(default_port),
        })
    }

    /// Whether this pattern covers the manifest's origin `asked`.
    pub(crate) fn covers(&self, asked: &HttpOrigin) -> bool {
        self.https == asked.https
            && self.port == asked.port
            && self.host.covers(&canonical_host(&asked.host))
    }
}

impl std::fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (scheme, default) = if self.https {
            ("https", 443)
        } else {
            ("http", 80)
        };
        write!(f, "{scheme}://{}", self.host)?;
        if self.port != default {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

/// A manifest's origin in the one spelling patterns are compared with.
pub(crate) fn origin_of(text: &str) -> Option<HttpOrigin> {
    HttpOrigin::parse(text).ok().map(|o| HttpOrigin {
        host: canonical_host(&o.host),
        ..o
    })
}

/// `host` and the port after its last `:` (IPv6 hosts in brackets).
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let port_at = match text.strip_prefix('[') {
        Some(inner) => inner.find(']').map(|i| i + 2).filter(|&i| i < text.len()),
        None => text.rfind(':'),
    };
    match port_at {
        Some(i) if text.as_bytes().get(i) == Some(&b':') => {
            let port = text[i + 1..]
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("has a port `{}` that is not 1..=65535", &text[i + 1..]))?;
            Ok((&text[..i], Some(port)))
        }
        _ if text.is_empty() => Err("has no host".to_owned()),
        _ => Ok((text, None)),
    }
}

/// A network destination pattern: `host:port`, the host may be `*.suffix`
/// and the port `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DestinationPattern {
    host: HostPattern,
    port: Option<u16>,
}

impl DestinationPattern {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let (host, port) = match text.strip_suffix(":*") {
            Some(host) => (host, None),
            None => {
                let (host, port) = split_port(text)?;
                (
                    host,
                    Some(port.ok_or("names no port (write host:port, or host:*)")?),
                )
            }
        };
        Ok(Self {
            host: HostPattern::parse(host)?,
            port,
        })
    }

    /// Whether this pattern covers the manifest's `host:port`.
    pub(crate) fn covers(&self, asked: &str) -> bool {
        parse_host_port(asked).is_ok_and(|(host, port)| {
            self.port.is_none_or(|p| p == port) && self.host.covers(&canonical_host(&host))
        })
    }
}

impl std::fmt::Display for DestinationPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}:{p}", self.host),
            None => write!(f, "{}:*", self.host),
        }
    }
}

/// A credential scope in the one spelling scopes are compared in: scheme
/// and host in lower case, no trailing dot, no default port; the rest as
/// written.
pub(crate) fn canonical_scope(scope: &str) -> String {
    let Some(rest) = scope
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .map(|_| &scope[8..])
    else {
        return scope.to_owned();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = authority.strip_suffix(":443").unwrap_or(authority);
    format!("https://{}{path}", canonical_host(authority))
}

/// A name pattern (an environment variable, a provider, an extension): the
/// name, or a prefix and `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamePattern {
    text: String,
    /// Whether case is ignored when matching.
    fold: bool,
}

impl NamePattern {
    /// `fold`: compare without regard to ASCII case.
    pub(crate) fn parse(text: &str, fold: bool) -> Result<Self, String> {
        let star = text.find('*');
        if text.is_empty() || star.is_some_and(|i| i + 1 != text.len()) {
            return Err("is not a name, or a prefix ending in `*`".to_owned());
        }
        Ok(Self {
            text: text.to_owned(),
            fold,
        })
    }

    pub(crate) fn matches(&self, name: &str) -> bool {
        let (pattern, name) = if self.fold {
            (self.text.to_ascii_lowercase(), name.to_ascii_lowercase())
        } else {
            (self.text.clone(), name.to_owned())
        };
        match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == pattern,
        }
    }
}

impl std::fmt::Display for NamePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_written_another_way_is_the_same_host() {
        for (a, b) in [
            ("Management.Azure.COM", "management.azure.com"),
            ("management.azure.com.", "management.azure.com"),
            ("[0:0::1]", "::1"),
            ("::ffff:10.0.0.1", "10.0.0.1"),
        ] {
            assert_eq!(canonical_host(a), canonical_host(b), "{a} {b}");
        }
    }

    #[test]
    fn a_wildcard_covers_hosts_beneath_never_the_domain_or_a_lookalike() {
        let p = HostPattern::parse("*.blob.core.windows.net").unwrap();
        assert!(p.covers("acct.blob.core.windows.net"));
        assert!(!p.covers("blob.core.windows.net"));
        assert!(!p.covers("evilblob.core.windows.net"));
        assert!(!p.covers("acct.blob.core.windows.net.evil.com"));
        assert!(HostPattern::parse("*.net").is_err());
        assert!(HostPattern::parse("a*.net.com").is_err());
    }

    #[test]
    fn origins_are_compared_with_default_ports_and_case_undone() {
        let p = OriginPattern::parse("https://management.azure.com").unwrap();
        for asked in [
            "https://management.azure.com",
            "https://MANAGEMENT.azure.com:443",
            "https://management.azure.com.",
        ] {
            assert!(p.covers(&origin_of(asked).unwrap()), "{asked}");
        }
        for asked in [
            "https://management.azure.com:8443",
            "http://localhost",
            "https://management.azure.com.evil.io",
        ] {
            assert!(!p.covers(&origin_of(asked).unwrap()), "{asked}");
        }
        assert_eq!(
            OriginPattern::parse("HTTPS://Example.com:443/")
                .unwrap()
                .to_string(),
            "https://example.com"
        );
        assert!(OriginPattern::parse("https://x.com/path").is_err());
    }

    #[test]
    fn destinations_need_a_port_or_a_star() {
        let p = DestinationPattern::parse("*.database.windows.net:1433").unwrap();
        assert!(p.covers("db1.Database.Windows.Net:1433"));
        assert!(!p.covers("db1.database.windows.net:1434"));
        let any = DestinationPattern::parse("[::1]:*").unwrap();
        assert!(any.covers("[0::1]:5432"));
        assert!(DestinationPattern::parse("host").is_err());
    }

    #[test]
    fn scopes_and_names() {
        assert_eq!(
            canonical_scope("HTTPS://Storage.Azure.com:443/.default"),
            "https://storage.azure.com/.default"
        );
        let n = NamePattern::parse("TF_VAR_*", false).unwrap();
        assert!(n.matches("TF_VAR_x") && !n.matches("tf_var_x"));
        assert!(
            NamePattern::parse("contoso.*", true)
                .unwrap()
                .matches("Contoso.Infra")
        );
        assert!(NamePattern::parse("a*b", true).is_err());
    }
}
