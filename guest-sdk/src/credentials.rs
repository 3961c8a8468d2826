//! Azure access tokens (`azd:credentials`): a bearer token for a scope the manifest grants.
//!
//! ```toml
//! [policy.azd]
//! credential_scopes = ["https://storage.azure.com/.default"]
//! ```
//!
//! ```no_run
//! # fn f() -> Result<(), azd_provider_sdk::Error> {
//! let token = azd_provider_sdk::credentials::token("https://storage.azure.com/.default")?;
//! // send `Authorization: Bearer {token.token}`; it expires at token.expires_on (Unix seconds)
//! # Ok(()) }
//! ```
//!
//! The host asks azd (`azd auth token`, as azd's own Go extensions do), keeps the token until a
//! few minutes before it expires (so asking per request is cheap), and hands over the access
//! token alone: never a refresh token or a secret. An ungranted scope fails with code
//! `scope_not_granted` without asking azd.
//!
//! Off WebAssembly (native unit tests) there is no azd: `token` fails with code `unavailable`.

use crate::Error;

/// An access token and when it stops working.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    /// The bearer token. Never log it.
    pub token: String,
    /// When it expires: seconds since the Unix epoch (UTC).
    pub expires_on: u64,
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &"<redacted>")
            .field("expires_on", &self.expires_on)
            .finish()
    }
}

/// A token for `scope` (`https://management.azure.com/.default`,
/// `https://storage.azure.com/.default`, …). A refusal is an `auth` error whose code is the
/// host's in snake case (`scope_not_granted`, `azd_not_found`, `not_signed_in`,
/// `token_failed`), with the host's words.
pub fn token(scope: &str) -> Result<AccessToken, Error> {
    imp::token(scope).map_err(|(code, message)| {
        let suggestion = match code.as_str() {
            "scope-not-granted" => format!(
                "add \"{scope}\" to `credential_scopes` under [policy.azd] in provider.toml"
            ),
            "not-signed-in" => "run `azd auth login`".to_owned(),
            _ => String::new(),
        };
        Error::auth(code.replace('-', "_"), message).with_suggestion(suggestion)
    })
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use crate::bindings::credentials::azd::credentials::credentials::get_token;

    pub(super) fn token(scope: &str) -> Result<super::AccessToken, (String, String)> {
        get_token(scope)
            .map(|t| super::AccessToken {
                token: t.token,
                expires_on: t.expires_on,
            })
            .map_err(|e| (e.code, e.message))
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub(super) fn token(_scope: &str) -> Result<super::AccessToken, (String, String)> {
        Err((
            "unavailable".to_owned(),
            "access tokens come from azd through azd-wasm-host, which runs the component"
                .to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_there_is_no_token_and_the_error_says_why() {
        let e = token("https://storage.azure.com/.default").unwrap_err();
        assert_eq!(e.code(), Some("unavailable"));
        assert!(e.message().contains("azd-wasm-host"), "{}", e.message());
        let shown = format!(
            "{:?}",
            AccessToken {
                token: "secret-value".into(),
                expires_on: 1
            }
        );
        assert!(!shown.contains("secret-value"), "{shown}");
    }
}
