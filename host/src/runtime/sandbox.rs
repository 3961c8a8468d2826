//! The sandbox of one instance: a WASI context that grants exactly what the
//! manifest policy says and nothing else.
//!
//! The `WasiCtxBuilder` default is the starting point: no environment, no
//! preopened directories, no sockets, no name lookup, stdin closed. On top:
//! - each `fs` grant becomes a preopened directory at the *same absolute path*
//!   as on the host (so the project path the guest gets in `initialize` works
//!   as is), read-only or read-write;
//! - each allowlisted environment variable is copied from the host if set;
//! - TCP connects are allowed only to the addresses the allowlisted `host:port`
//!   entries resolve to (resolved when the instance is made); name lookup only
//!   when an entry names a host rather than an IP; UDP never;
//! - guest stdout/stderr go to the host's `tracing` log.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::host::LogStream;
use super::manifest::{FsAccess, Policy, parse_host_port};
use crate::error::ProviderError;

/// Environment variable holding the azd environment name (`{env}` in grants).
pub const ENV_ENVIRONMENT: &str = "AZD_ENVIRONMENT";

/// Builds the WASI context for one instance serving `project_path`.
pub(crate) fn build_wasi(
    policy: &Policy,
    project_path: &str,
    provider: &Arc<str>,
) -> Result<WasiCtx, ProviderError> {
    let mut b = WasiCtxBuilder::new();
    b.stdout(LogStream::new(provider.clone(), "stdout"));
    b.stderr(LogStream::new(provider.clone(), "stderr"));

    if !policy.fs.is_empty() {
        let project = Path::new(project_path);
        if !project.is_absolute() {
            return Err(ProviderError::validation(
                "invalid_project_path",
                format!("the project path {project_path:?} azd sent is not absolute"),
            ));
        }
        let env_name = std::env::var(ENV_ENVIRONMENT)
            .ok()
            .filter(|v| !v.is_empty());
        for grant in &policy.fs {
            let rel = if grant.path.contains("{env}") {
                let Some(env_name) = &env_name else {
                    return Err(ProviderError::validation(
                        "missing_environment",
                        format!(
                            "the provider policy grants {:?}, which needs the azd environment name, but {ENV_ENVIRONMENT} is not set",
                            grant.path
                        ),
                    )
                    .with_suggestion("run the command through azd, or set AZD_ENVIRONMENT"));
                };
                grant.path.replace("{env}", env_name)
            } else {
                grant.path.clone()
            };
            let dir = normalize(&project.join(&rel));
            // A read-write grant inside the project is a place the provider is meant
            // to create things in: make it when it is missing (as azd makes
            // `.azure/<env>`), so a fresh project works. A missing read-only grant
            // has nothing to show and is left out.
            if !dir.is_dir()
                && grant.access == FsAccess::ReadWrite
                && dir.starts_with(project)
                && project.is_dir()
                && let Err(e) = std::fs::create_dir_all(&dir)
            {
                tracing::debug!(provider = %provider, dir = %dir.display(), error = %e, "cannot create granted directory");
            }
            if !dir.is_dir() {
                tracing::warn!(provider = %provider, dir = %dir.display(), "granted directory does not exist; not granted");
                continue;
            }
            let Some(guest_path) = dir.to_str() else {
                return Err(ProviderError::validation(
                    "invalid_project_path",
                    format!("granted directory {} is not valid UTF-8", dir.display()),
                ));
            };
            let perms = match grant.access {
                FsAccess::Read => FsPerms::ReadOnly,
                FsAccess::ReadWrite => FsPerms::ReadWrite,
            };
            b.preopened_dir(&dir, guest_path, perms).map_err(|e| {
                ProviderError::local(
                    "sandbox_setup_failed",
                    crate::error::category::LOCAL,
                    format!("cannot open granted directory {}: {e}", dir.display()),
                )
            })?;
            tracing::debug!(provider = %provider, dir = guest_path, access = %grant.access, "granted directory");
        }
    }

    for name in &policy.env {
        if let Ok(value) = std::env::var(name) {
            b.env(name, value);
        }
    }

    b.allow_udp(false);
    if policy.network.is_empty() {
        b.allow_tcp(false);
        b.allow_ip_name_lookup(false);
    } else {
        let (allowed, needs_lookup) = resolve_allowlist(&policy.network, provider);
        let allowed = Arc::new(allowed);
        b.allow_tcp(true);
        b.allow_ip_name_lookup(needs_lookup);
        b.socket_addr_check(move |addr, usage| {
            let ok = match usage {
                SocketAddrUse::TcpConnect => allowed.contains(&addr),
                // `connect` binds implicitly to the wildcard address first.
                SocketAddrUse::TcpBind => addr.ip().is_unspecified() && addr.port() == 0,
                _ => false,
            };
            Box::pin(async move { ok })
        });
    }
    Ok(b.build())
}

/// Resolves `host:port` entries to socket addresses. Returns the set and
/// whether any entry names a host (so the guest needs name lookup).
fn resolve_allowlist(entries: &[String], provider: &str) -> (HashSet<SocketAddr>, bool) {
    let mut set = HashSet::new();
    let mut needs_lookup = false;
    for entry in entries {
        let Ok((host, port)) = parse_host_port(entry) else {
            continue; // checked when the manifest was read
        };
        if let Ok(ip) = host.parse::<IpAddr>() {
            set.insert(SocketAddr::new(ip, port));
            continue;
        }
        needs_lookup = true;
        match (host.as_str(), port).to_socket_addrs() {
            Ok(addrs) => set.extend(addrs),
            Err(e) => {
                tracing::warn!(provider, destination = %entry, error = %e, "cannot resolve allowlisted destination");
            }
        }
    }
    (set, needs_lookup)
}

/// Lexically removes `.` and `..` so the guest sees a clean absolute path.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_placeholder_needs_the_environment_name() {
        if std::env::var_os(ENV_ENVIRONMENT).is_some() {
            return; // only checkable where azd did not set it
        }
        let policy = Policy {
            fs: vec![super::super::manifest::FsGrant {
                path: ".azure/{env}".into(),
                access: FsAccess::ReadWrite,
            }],
            ..Policy::default()
        };
        let dir = std::env::temp_dir();
        let code = |project: &str| {
            build_wasi(&policy, project, &Arc::from("p"))
                .err()
                .and_then(|e| e.code().map(str::to_owned))
        };
        assert_eq!(
            code(dir.to_str().unwrap()).as_deref(),
            Some("missing_environment")
        );
        assert_eq!(
            code("relative/path").as_deref(),
            Some("invalid_project_path")
        );
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("/a/.")), Path::new("/a"));
    }
}
