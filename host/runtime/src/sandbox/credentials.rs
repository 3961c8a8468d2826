//! The credentials capability, the host side of `azd:credentials`: Azure
//! access tokens for the scopes the manifest grants (`[policy.azd]
//! credential_scopes`), none before Initialize (the seal).
//!
//! - A scope the manifest does not grant is refused without asking anyone.
//! - A granted scope is asked of the [`TokenSource`] the runtime was given
//!   (in `listen`: `azd auth token`, as azd's own Go extensions do it).
//! - The guest gets the access token and its expiry, nothing else. Tokens are
//!   never logged.
//! - A token is kept per scope, for this instance, until [`REFRESH_MARGIN`]
//!   before it expires.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_core::TokenSource;

use wasmtime::component::{HasSelf, Linker};

use super::capability::Capability;
use crate::bindings::credentials::azd::credentials::credentials::{
    self, AccessToken, CredentialError, Host,
};
use crate::instance::seal::Seal;
use azd_wasm_host_manifest::Policy;

/// Access tokens for the granted scopes.
pub(crate) struct Tokens;

impl Capability for Tokens {
    const KEYS: &'static [&'static str] = &["azd.credential_scopes"];
    const INTERFACES: &'static [&'static str] = &["azd:credentials/credentials"];

    fn reach(_interface: &str, policy: &Policy) -> &'static str {
        if policy.azd.credential_scopes.is_empty() {
            "access tokens: none granted (no [policy.azd] credential_scopes)"
        } else {
            "access tokens (only the granted scopes below)"
        }
    }
}

/// The store's part for tokens.
pub(crate) trait TokensView: Send {
    /// What the instance may get of access tokens, and the tokens it got.
    fn credentials(&mut self) -> &mut Credentials;
}

/// Serves `azd:credentials/credentials` from the store's [`Credentials`].
pub(super) fn link<T: TokensView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    credentials::add_to_linker::<T, HasSelf<Credentials>>(linker, T::credentials)
}

/// A kept token is asked for again this long before it expires.
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// What one instance may get of access tokens, and the tokens it got.
pub(crate) struct Credentials {
    provider: Arc<str>,
    /// The scopes the manifest grants.
    granted: Vec<String>,
    /// Where tokens come from; `None` when nothing can give one.
    source: Option<Arc<dyn TokenSource>>,
    /// Tokens given to the guest, by scope.
    kept: HashMap<String, AccessToken>,
    /// Closed while the instance is made ahead of its Initialize.
    seal: Seal,
}

impl Credentials {
    pub(crate) fn new(
        provider: Arc<str>,
        granted: Vec<String>,
        source: Option<Arc<dyn TokenSource>>,
        seal: Seal,
    ) -> Self {
        Self {
            provider,
            granted,
            source,
            kept: HashMap::new(),
            seal,
        }
    }
}

fn error(code: &str, message: impl Into<String>) -> CredentialError {
    CredentialError {
        code: code.to_owned(),
        message: message.into(),
    }
}

impl Host for Credentials {
    async fn get_token(&mut self, scope: String) -> Result<AccessToken, CredentialError> {
        if !self.seal.allows("an access token") {
            return Err(error("sealed", Seal::REFUSAL));
        }
        if !self.granted.contains(&scope) {
            return Err(error(
                "scope-not-granted",
                format!(
                    "the provider asked for a token for {scope:?}, which its manifest does not \
                     grant; add it to `credential_scopes` under [policy.azd] in provider.toml \
                     (granted: {})",
                    if self.granted.is_empty() {
                        "none".to_owned()
                    } else {
                        self.granted.join(", ")
                    }
                ),
            ));
        }
        if let Some(kept) = self.kept.get(&scope)
            && kept.expires_on > azd_wasm_host_core::clock::unix_secs() + REFRESH_MARGIN.as_secs()
        {
            return Ok(kept.clone());
        }
        let Some(source) = &self.source else {
            return Err(error(
                "azd-unavailable",
                "no access tokens can be had here: the host is not running under azd",
            ));
        };
        let token = source
            .token(&scope)
            .await
            .map_err(|e| error(&e.code, e.message))?;
        tracing::debug!(provider = %self.provider, %scope, expires_on = token.expires_on, "access token kept for the instance");
        let token = AccessToken {
            token: token.token,
            expires_on: token.expires_on,
        };
        self.kept.insert(scope, token.clone());
        Ok(token)
    }
}
