//! Access tokens the way azd's own Go extensions get them
//! (`azdext.TokenProvider`): `azd auth token --output json --scope <scope>`.
//!
//! azd runs without this extension's own azd token and server address in its
//! environment (it has its own sign-in: `azd auth login`, or the credential
//! azd was given, such as `AZD_AUTH_ENDPOINT`), with no stdin, and is killed
//! if the call ends. Its answer is read, never logged; its error text is
//! passed on (it carries no secret).

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_core::{AccessToken, TokenError, TokenSource};

/// The longest `azd auth token` may take.
const AZD_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of azd's error text passed on.
const MAX_ERROR_CHARS: usize = 500;

/// Tokens from the azd CLI.
#[derive(Debug, Clone)]
pub struct AzdCliTokens {
    azd: OsString,
}

impl AzdCliTokens {
    /// Tokens from the azd at `azd` (a path, or a name looked up on PATH).
    pub fn new(azd: impl Into<OsString>) -> Self {
        Self { azd: azd.into() }
    }
}

#[async_trait]
impl TokenSource for AzdCliTokens {
    async fn token(&self, scope: &str) -> Result<AccessToken, TokenError> {
        let token = ask_azd(&self.azd, scope).await?;
        tracing::debug!(%scope, expires_on = token.expires_on, "access token obtained from azd");
        Ok(token)
    }
}

/// Runs `azd auth token --output json --scope <scope>` and reads its answer.
async fn ask_azd(azd: &OsStr, scope: &str) -> Result<AccessToken, TokenError> {
    let mut cmd = tokio::process::Command::new(azd);
    cmd.args(["auth", "token", "--output", "json", "--scope", scope])
        .env_remove("AZD_ACCESS_TOKEN")
        .env_remove("AZD_SERVER")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let shown = azd.to_string_lossy().into_owned();
    let out = match tokio::time::timeout(AZD_TIMEOUT, cmd.output()).await {
        Err(_) => {
            return Err(TokenError::new(
                "token-failed",
                format!("`{shown} auth token` did not answer within {AZD_TIMEOUT:?}"),
            ));
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(TokenError::new(
                "azd-not-found",
                format!(
                    "cannot run `{shown}` to get a token: it is not on PATH (set \
                     AZD_WASM_HOST_AZD to the azd executable)"
                ),
            ));
        }
        Ok(Err(e)) => {
            return Err(TokenError::new(
                "token-failed",
                format!("cannot run `{shown}`: {e}"),
            ));
        }
        Ok(Ok(out)) => out,
    };
    if !out.status.success() {
        return Err(azd_refused(&out));
    }
    parse_token(&out.stdout)
}

/// The error for an `azd auth token` that failed: its own words.
fn azd_refused(out: &std::process::Output) -> TokenError {
    let text = [&out.stdout[..], &out.stderr[..]]
        .iter()
        .map(|b| String::from_utf8_lossy(b).trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let text: String = azd_wasm_host_core::text::sanitize(&text)
        .chars()
        .take(MAX_ERROR_CHARS)
        .collect();
    let signed_out = text.contains("azd auth login") || text.contains("not logged in");
    TokenError::new(
        if signed_out {
            "not-signed-in"
        } else {
            "token-failed"
        },
        format!("azd could not give a token ({}): {text}", out.status),
    )
}

/// Reads azd's `{"token": "...", "expiresOn": "<RFC 3339>"}`.
fn parse_token(stdout: &[u8]) -> Result<AccessToken, TokenError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct AuthTokenResult {
        token: String,
        expires_on: String,
    }
    let bad = |why: String| {
        TokenError::new(
            "token-failed",
            format!("azd's answer is not a token: {why}"),
        )
    };
    let result: AuthTokenResult =
        serde_json::from_slice(stdout).map_err(|e| bad(format!("{e}")))?;
    if result.token.is_empty() {
        return Err(bad("the token is empty".to_owned()));
    }
    let expires = time::OffsetDateTime::parse(
        &result.expires_on,
        &time::format_description::well_known::Rfc3339,
    )
    .map_err(|e| bad(format!("expiresOn {:?}: {e}", result.expires_on)))?;
    Ok(AccessToken {
        token: result.token,
        expires_on: u64::try_from(expires.unix_timestamp()).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azds_answer_is_read_and_anything_else_is_refused() {
        let t = parse_token(br#"{"token":"eyJ0.x.y","expiresOn":"2030-01-02T03:04:05Z"}"#).unwrap();
        assert_eq!(t.token, "eyJ0.x.y");
        assert_eq!(t.expires_on, 1_893_553_445);
        let t = parse_token(br#"{"token":"a","expiresOn":"2030-01-02T04:04:05+01:00"}"#).unwrap();
        assert_eq!(t.expires_on, 1_893_553_445);
        for bad in [
            &br#"{"token":"","expiresOn":"2030-01-02T03:04:05Z"}"#[..],
            br#"{"token":"a","expiresOn":"tomorrow"}"#,
            br#"{"token":"a"}"#,
            b"Please run azd auth login",
        ] {
            let e = parse_token(bad).unwrap_err();
            assert_eq!(e.code, "token-failed");
            assert!(!e.message.contains("eyJ0"), "{}", e.message);
        }
    }
}
