//! Which of azd's two contracts the simulated azd serves, and the calls made under each.
//!
//! Every azd released so far (1.31.x up to 1.34.0) serves its extension services under `azdext`
//! only; the versioned contract (expected in an azd release after 1.34) under
//! `azd.extensions.v1`, with `azdext` kept as a bridge to the same handlers that counts every
//! call (azd's `extension.grpc.legacy_call_count`); once the bridge is removed, under
//! `azd.extensions.v1` only ([`ContractMode`]). The services here are generated under `azdext`:
//! [`ContractLayer`] sits in front of them, refuses a call under a package the mode does not
//! serve as azd's gRPC server refuses an unknown service (`UNIMPLEMENTED`, `unknown service
//! …`), moves a `azd.extensions.v1` call to the generated path, tells the handler which
//! contract the call came under ([`CalledUnder`], for the type URLs of error details), and
//! records every call ([`CallLog`]).

use std::future::Ready;
use std::sync::Arc;
use std::task::{Context, Poll};

use azd_wasm_host_proto::Contract;
use futures::future::Either;
use parking_lot::Mutex;
use tonic::Status;

/// The contracts a simulated azd serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContractMode {
    /// Every azd released so far (1.31.x up to 1.34.0): `azdext` only.
    Legacy,
    /// The versioned contract, expected in an azd release after 1.34: `azd.extensions.v1`,
    /// and `azdext` through the bridge.
    #[default]
    Both,
    /// azd once the bridge is gone: `azd.extensions.v1` only.
    V1,
}

impl ContractMode {
    /// Every mode.
    pub const ALL: [Self; 3] = [Self::Legacy, Self::Both, Self::V1];

    /// Whether calls under `contract` are served.
    pub fn serves(self, contract: Contract) -> bool {
        match self {
            Self::Legacy => contract == Contract::Legacy,
            Self::Both => true,
            Self::V1 => contract == Contract::V1,
        }
    }

    /// Its name on the command line (`legacy`, `both`, `v1`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Legacy => "legacy",
            Self::Both => "both",
            Self::V1 => "v1",
        }
    }
}

impl std::str::FromStr for ContractMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("{s:?} is not a contract mode: legacy, both or v1"))
    }
}

/// The contract a call came under, for its handler (a request extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CalledUnder(pub(crate) Contract);

impl CalledUnder {
    /// The contract of `request` (`azdext` when the layer did not say).
    pub(crate) fn of<T>(request: &tonic::Request<T>) -> Contract {
        request
            .extensions()
            .get::<Self>()
            .map_or(Contract::Legacy, |c| c.0)
    }
}

/// Every call made to the simulated azd, as its path was sent.
#[derive(Debug, Default)]
pub(crate) struct CallLog(Mutex<Vec<String>>);

impl CallLog {
    fn record(&self, path: &str) {
        self.0.lock().push(path.to_owned());
    }

    /// The paths called, in order.
    pub(crate) fn paths(&self) -> Vec<String> {
        self.0.lock().clone()
    }

    /// How many calls and streams came under `azdext` (what the versioned contract's bridge
    /// counts).
    pub(crate) fn legacy_calls(&self) -> usize {
        self.0
            .lock()
            .iter()
            .filter(|p| matches!(Contract::of_path(p), Some((Contract::Legacy, _))))
            .count()
    }
}

/// Puts [`Contracts`] in front of the simulated azd's services.
#[derive(Debug, Clone)]
pub(crate) struct ContractLayer {
    pub(crate) mode: ContractMode,
    pub(crate) log: Arc<CallLog>,
}

impl<S> tower_layer::Layer<S> for ContractLayer {
    type Service = Contracts<S>;

    fn layer(&self, inner: S) -> Contracts<S> {
        Contracts {
            inner,
            mode: self.mode,
            log: Arc::clone(&self.log),
        }
    }
}

/// The simulated azd's services under the contracts of its mode (see the module).
#[derive(Debug, Clone)]
pub(crate) struct Contracts<S> {
    inner: S,
    mode: ContractMode,
    log: Arc<CallLog>,
}

impl<S, B, R> tower_service::Service<http::Request<B>> for Contracts<S>
where
    S: tower_service::Service<http::Request<B>, Response = http::Response<R>>,
    R: Default,
{
    type Response = http::Response<R>;
    type Error = S::Error;
    type Future = Either<Ready<Result<http::Response<R>, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let path = request.uri().path().to_owned();
        if let Some((contract, method)) = Contract::of_path(&path) {
            self.log.record(&path);
            if !self.mode.serves(contract) {
                let service = method.split('/').next().unwrap_or_default();
                let refusal = Status::unimplemented(format!(
                    "unknown service {}.{service}",
                    contract.package()
                ));
                return Either::Left(std::future::ready(Ok(refusal.into_http())));
            }
            // The generated servers route by the `azdext` names.
            if let Some(uri) = Contract::Legacy.move_uri(request.uri()) {
                *request.uri_mut() = uri;
            }
            request.extensions_mut().insert(CalledUnder(contract));
        }
        Either::Right(self.inner.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_serve_what_azd_versions_serve() {
        assert!(ContractMode::Legacy.serves(Contract::Legacy));
        assert!(!ContractMode::Legacy.serves(Contract::V1));
        assert!(
            ContractMode::Both.serves(Contract::Legacy) && ContractMode::Both.serves(Contract::V1)
        );
        assert!(ContractMode::V1.serves(Contract::V1));
        assert!(!ContractMode::V1.serves(Contract::Legacy));
        for mode in ContractMode::ALL {
            assert_eq!(mode.name().parse::<ContractMode>(), Ok(mode));
        }
        assert!("v2".parse::<ContractMode>().is_err());
    }

    #[test]
    fn legacy_calls_are_counted_as_azd_counts_them() {
        let log = CallLog::default();
        for path in [
            "/azd.extensions.v1.ProvisioningService/Stream",
            "/azdext.ExtensionService/Ready",
            "/azdext.PromptService/Confirm",
        ] {
            log.record(path);
        }
        assert_eq!(log.legacy_calls(), 2);
        assert_eq!(log.paths().len(), 3);
    }
}
