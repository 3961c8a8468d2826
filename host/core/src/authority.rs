//! Where a host may connect: `host:port` authorities and HTTP origins, read by
//! one parser, and the one rule for what is loopback (where plaintext may go).
//!
//! The manifest's `network` and `[policy.http]` grants, the HTTP gate that
//! checks each guest request, and the address of azd (`AZD_SERVER`) all read
//! their text here, so that they can never disagree on what a host is.

/// Splits `host:port` (IPv6 hosts in brackets). The error says what is wrong.
pub fn parse_host_port(dest: &str) -> Result<(String, u16), &'static str> {
    let authority: http::uri::Authority = dest.parse().map_err(|_| "is not host:port")?;
    if authority.as_str().contains('@') {
        return Err("has user information; only host:port is allowed");
    }
    let port = match authority.port_u16() {
        None => return Err("is not host:port (the port is required)"),
        Some(0) => return Err("has a port that is not 1..=65535"),
        Some(p) => p,
    };
    let host = unbracketed(authority.host());
    if host.is_empty() {
        return Err("has no valid host");
    }
    Ok((host.to_owned(), port))
}

/// An origin of `[policy.http] allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOrigin {
    /// `https` or `http`.
    pub https: bool,
    /// Lower-case host name or IP address (without brackets).
    pub host: String,
    /// The port, explicit or the scheme's.
    pub port: u16,
}

/// Why a text is not an origin [`HttpOrigin::parse`] takes; each message
/// follows the text it is about ("`ftp://x` has the scheme `ftp`; …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OriginError {
    /// Not a URI at all.
    #[error("is not scheme://host[:port]")]
    NotAnOrigin,
    /// A scheme other than `https` or `http`.
    #[error("has the scheme `{0}`; use https:// (or http:// to loopback)")]
    Scheme(String),
    /// No scheme.
    #[error("has no scheme; write https://host")]
    NoScheme,
    /// No host.
    #[error("has no host")]
    NoHost,
    /// A user (and password) before the host.
    #[error("has user information; only scheme://host[:port] is allowed")]
    UserInfo,
    /// A path or a query after the host.
    #[error("has a path or query; grants are by origin, scheme://host[:port]")]
    PathOrQuery,
    /// Port 0.
    #[error("has port 0")]
    PortZero,
    /// `http://` to a host that is not loopback (the authority as written).
    #[error("is plaintext HTTP to a host that is not loopback; use https://{0}")]
    PlaintextBeyondLoopback(String),
}

impl HttpOrigin {
    /// Parses `scheme://host[:port]`: no user, path, query or fragment, and
    /// plaintext only to loopback.
    pub fn parse(text: &str) -> Result<Self, OriginError> {
        let uri: http::Uri = text.parse().map_err(|_| OriginError::NotAnOrigin)?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            Some(other) => return Err(OriginError::Scheme(other.to_owned())),
            None => return Err(OriginError::NoScheme),
        };
        let authority = uri.authority().ok_or(OriginError::NoHost)?;
        if authority.as_str().contains('@') {
            return Err(OriginError::UserInfo);
        }
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            return Err(OriginError::PathOrQuery);
        }
        if authority.port_u16() == Some(0) {
            return Err(OriginError::PortZero);
        }
        let Some(origin) = Self::of_uri(&uri).filter(|o| !o.host.is_empty()) else {
            return Err(OriginError::NoHost);
        };
        if !https && !is_loopback_host(&origin.host) {
            return Err(OriginError::PlaintextBeyondLoopback(authority.to_string()));
        }
        Ok(origin)
    }

    /// The origin a request URI addresses: `http` or `https`, the host
    /// lower-cased and without brackets, the scheme's port when none is given.
    /// `None` for another scheme or no host.
    pub fn of_uri(uri: &http::Uri) -> Option<Self> {
        let https = match uri.scheme_str()? {
            "https" => true,
            "http" => false,
            _ => return None,
        };
        let host = unbracketed(uri.host()?).to_ascii_lowercase();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        Some(Self { https, host, port })
    }
}

/// Whether `host` (without brackets) is this machine: `localhost`,
/// 127.0.0.0/8 or `::1`.
pub fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An IPv6 host as a URI writes it (`[::1]`) without its brackets.
fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

impl std::fmt::Display for HttpOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(parse_host_port("a.b:1").unwrap(), ("a.b".to_owned(), 1));
        assert_eq!(parse_host_port("[::1]:80").unwrap(), ("::1".to_owned(), 80));
        assert!(parse_host_port("a.b").is_err());
        assert!(parse_host_port(":80").is_err());
        assert!(parse_host_port("a:0").is_err());
        assert!(parse_host_port("a:99999").is_err());
        assert!(parse_host_port("u@a:1").is_err());
        assert!(parse_host_port("a b:1").is_err());
    }

    #[test]
    fn origins_and_loopback() {
        let o = HttpOrigin::parse("https://Example.COM").unwrap();
        assert_eq!(
            (o.https, o.host.as_str(), o.port),
            (true, "example.com", 443)
        );
        assert_eq!(o.to_string(), "https://example.com:443");
        let o = HttpOrigin::parse("http://[::1]:8080").unwrap();
        assert_eq!(o.to_string(), "http://[::1]:8080");
        for bad in [
            "http://example.com",
            "ftp://x",
            "https://u@x",
            "https://x/p",
            "x",
        ] {
            assert!(HttpOrigin::parse(bad).is_err(), "{bad}");
        }
        for lo in ["localhost", "LOCALHOST", "127.0.0.1", "127.9.9.9", "::1"] {
            assert!(is_loopback_host(lo), "{lo}");
        }
        for far in ["10.0.0.1", "example.com", "::2", "localhost.example.com"] {
            assert!(!is_loopback_host(far), "{far}");
        }
    }
}
