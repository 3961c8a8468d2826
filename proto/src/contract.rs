//! The two names azd's extension services go by, and how a call picks one.
//!
//! Every azd released so far (1.31.x up to 1.34.0) serves its extension services under the
//! protobuf package `azdext`. azd's versioned contract, expected in a release after 1.34,
//! serves them under `azd.extensions.v1` and keeps the `azdext` names only as a frozen bridge
//! that counts every call made through it and is to be removed once nobody calls it. The
//! messages are the same in both (same names, fields and numbers: `azd/extensions/v1/*.proto`
//! beside `azdext/*.proto`, held to each other by this crate's tests), so one set of Rust types
//! serves both. Two things differ:
//!
//! - the path of every method: `/azdext.ProvisioningService/Stream` or
//!   `/azd.extensions.v1.ProvisioningService/Stream`;
//! - the type URL of a typed detail in a failed call's status:
//!   `type.googleapis.com/azdext.ActionableErrorDetail` or
//!   `type.googleapis.com/azd.extensions.v1.ActionableErrorDetail`.
//!
//! The generated clients and servers use the `azdext` paths; [`Contract::rewrite`] moves a
//! path to the other contract. An extension tries [`Contract::V1`] first and falls back to
//! [`Contract::Legacy`] when azd does not know it (`UNIMPLEMENTED`).

use std::fmt;

/// The package of the versioned contract.
const V1_PACKAGE: &str = "azd.extensions.v1";
/// The package of every azd released so far, and of the versioned contract's bridge.
const LEGACY_PACKAGE: &str = "azdext";
/// How a type URL names a message: this, then the message's full name.
const TYPE_URL_PREFIX: &str = "type.googleapis.com/";

/// Which package a call is made under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Contract {
    /// `azd.extensions.v1`: the versioned contract, expected in an azd release after 1.34.
    V1,
    /// `azdext`: every azd released so far (1.31.x up to 1.34.0), and the frozen bridge of
    /// the versioned contract.
    Legacy,
}

impl Contract {
    /// Both, the one to try first first.
    pub const NEWEST_FIRST: [Contract; 2] = [Contract::V1, Contract::Legacy];

    /// The protobuf package.
    pub fn package(self) -> &'static str {
        match self {
            Self::V1 => V1_PACKAGE,
            Self::Legacy => LEGACY_PACKAGE,
        }
    }

    /// The path of `method` of `service` (`ProvisioningService`, `Stream`).
    pub fn path(self, service: &str, method: &str) -> String {
        format!("/{}.{service}/{method}", self.package())
    }

    /// The contract a method path is under, and what follows the package
    /// (`ProvisioningService/Stream`). `None` for any other package
    /// (`azd.extensions.v1beta.…` included).
    pub fn of_path(path: &str) -> Option<(Self, &str)> {
        let rest = path.strip_prefix('/')?;
        Self::NEWEST_FIRST.into_iter().find_map(|contract| {
            let after = rest.strip_prefix(contract.package())?.strip_prefix('.')?;
            Some((contract, after))
        })
    }

    /// `path` (a method of either contract) under this one; `None` when `path` is under
    /// neither.
    pub fn rewrite(self, path: &str) -> Option<String> {
        let (_, method) = Self::of_path(path)?;
        Some(format!("/{}.{method}", self.package()))
    }

    /// `uri` with its method moved under this contract; `None` when it is under this
    /// one already, or under neither (nothing to move).
    #[cfg(any(feature = "client", feature = "server"))]
    pub fn move_uri(self, uri: &tonic::codegen::http::Uri) -> Option<tonic::codegen::http::Uri> {
        if Self::of_path(uri.path())?.0 == self {
            return None;
        }
        let mut parts = uri.clone().into_parts();
        parts.path_and_query = Some(self.rewrite(uri.path())?.try_into().ok()?);
        tonic::codegen::http::Uri::from_parts(parts).ok()
    }

    /// The type URL of message `name` (`ActionableErrorDetail`) of this contract.
    pub fn type_url(self, name: &str) -> String {
        format!("{TYPE_URL_PREFIX}{}.{name}", self.package())
    }

    /// The contract and message name a type URL names, under either contract; `None`
    /// for any other type.
    pub fn of_type_url(url: &str) -> Option<(Self, &str)> {
        // An `Any`'s type URL is `<anything>/<full name>`; gRPC's libraries write
        // `type.googleapis.com/`.
        let full_name = url.rsplit_once('/').map_or(url, |(_, name)| name);
        Self::NEWEST_FIRST.into_iter().find_map(|contract| {
            let name = full_name
                .strip_prefix(contract.package())?
                .strip_prefix('.')?;
            (!name.contains('.')).then_some((contract, name))
        })
    }
}

impl fmt::Display for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.package())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_move_between_the_contracts() {
        let legacy = "/azdext.ProvisioningService/Stream";
        let v1 = "/azd.extensions.v1.ProvisioningService/Stream";
        assert_eq!(Contract::V1.path("ProvisioningService", "Stream"), v1);
        assert_eq!(Contract::V1.rewrite(legacy).as_deref(), Some(v1));
        assert_eq!(Contract::Legacy.rewrite(v1).as_deref(), Some(legacy));
        assert_eq!(Contract::V1.rewrite(v1).as_deref(), Some(v1));
        assert_eq!(
            Contract::of_path(v1),
            Some((Contract::V1, "ProvisioningService/Stream"))
        );
        assert_eq!(
            Contract::of_path("/azdext.ExtensionService/Ready"),
            Some((Contract::Legacy, "ExtensionService/Ready"))
        );
    }

    #[cfg(feature = "client")]
    #[test]
    fn a_uri_moves_only_when_it_is_under_the_other_contract() {
        let uri = |s: &str| s.parse::<tonic::codegen::http::Uri>().unwrap();
        let legacy = uri("http://127.0.0.1:9/azdext.ExtensionService/Ready");
        let v1 = uri("http://127.0.0.1:9/azd.extensions.v1.ExtensionService/Ready");
        assert_eq!(Contract::V1.move_uri(&legacy), Some(v1.clone()));
        assert_eq!(Contract::Legacy.move_uri(&v1), Some(legacy.clone()));
        assert_eq!(Contract::V1.move_uri(&v1), None);
        assert_eq!(Contract::Legacy.move_uri(&legacy), None);
        let beta = uri("http://127.0.0.1:9/azd.extensions.v1beta.ComposeService/List");
        assert_eq!(Contract::Legacy.move_uri(&beta), None);
    }

    #[test]
    fn other_packages_are_neither() {
        for path in [
            "/azd.extensions.v1beta.ComposeService/ListResources",
            "/azdextra.X/Y",
            "azdext.ExtensionService/Ready",
            "/grpc.health.v1.Health/Check",
            "",
        ] {
            assert_eq!(Contract::of_path(path), None, "{path}");
            assert_eq!(Contract::V1.rewrite(path), None, "{path}");
        }
    }

    #[test]
    fn type_urls_of_both_contracts_are_read() {
        for contract in Contract::NEWEST_FIRST {
            let url = contract.type_url("ActionableErrorDetail");
            assert_eq!(
                Contract::of_type_url(&url),
                Some((contract, "ActionableErrorDetail"))
            );
        }
        assert_eq!(
            Contract::V1.type_url("ServiceErrorDetail"),
            "type.googleapis.com/azd.extensions.v1.ServiceErrorDetail"
        );
        for other in [
            "type.googleapis.com/google.rpc.ErrorInfo",
            "type.googleapis.com/azd.extensions.v1beta.ActionableErrorDetail",
            "type.googleapis.com/azd.extensions.v1.nested.Thing",
            "ActionableErrorDetail",
        ] {
            assert_eq!(Contract::of_type_url(other), None, "{other}");
        }
    }
}
