//! Extension tokens: the JWT azd hands an extension in `AZD_ACCESS_TOKEN` and checks on
//! every call and stream.
//!
//! azd signs with HS256 and a key that is random per run; the claims are `iss` = `azd`,
//! `sub` = the extension id, `aud` = [the server address], `iat`, `exp` (+1 hour) and the
//! custom claim `cap` listing the extension's capabilities. Validation has no leeway: a token
//! is refused once `exp` has passed, for another audience, another issuer, another key or
//! another algorithm.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::error::SimError;

/// The capability an extension needs to open the provisioning stream.
pub const PROVISIONING_CAPABILITY: &str = "provisioning-provider";

/// How long azd's tokens live.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(60 * 60);

/// The claims of an extension token, as azd writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtensionClaims {
    /// Issuer: always `azd` for a valid token.
    pub iss: String,
    /// Subject: the extension id.
    pub sub: String,
    /// Audience: the server address (`AZD_SERVER`), as a one-element list.
    pub aud: Vec<String>,
    /// Issued at, Unix seconds.
    pub iat: u64,
    /// Expires at, Unix seconds.
    pub exp: u64,
    /// The extension's capabilities (e.g. `provisioning-provider`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cap: Vec<String>,
    /// W3C trace context azd signs into the token (may be empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub traceparent: String,
}

impl ExtensionClaims {
    /// Claims for `extension_id` with `capabilities`, addressed to `audience`, issued now and
    /// valid for `lifetime`.
    pub fn new(
        audience: &str,
        extension_id: &str,
        capabilities: &[&str],
        lifetime: Duration,
    ) -> Self {
        let iat = unix_now();
        Self {
            iss: "azd".to_owned(),
            sub: extension_id.to_owned(),
            aud: vec![audience.to_owned()],
            iat,
            exp: iat.saturating_add(lifetime.as_secs()),
            cap: capabilities.iter().map(|c| (*c).to_owned()).collect(),
            traceparent: String::new(),
        }
    }

    /// Whether the claims grant `capability`.
    pub fn has_capability(&self, capability: &str) -> bool {
        self.cap.iter().any(|c| c == capability)
    }
}

/// The current time in Unix seconds.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The signing key of one simulated azd run, bound to its server address.
pub(crate) struct TokenKey {
    encoding: EncodingKey,
    decoding: DecodingKey,
    audience: String,
}

impl TokenKey {
    /// A fresh random 256-bit key, as azd makes one per run.
    pub(crate) fn random(audience: &str) -> Result<Self, SimError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| SimError::NoRandomness {
            what: "the token key",
            reason: e.to_string(),
        })?;
        Ok(Self::from_secret(&secret, audience))
    }

    /// A key from known bytes (tests).
    pub(crate) fn from_secret(secret: &[u8], audience: &str) -> Self {
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            audience: audience.to_owned(),
        }
    }

    /// The audience valid tokens must name.
    #[cfg(test)]
    pub(crate) fn audience(&self) -> &str {
        &self.audience
    }

    /// Signs `claims` with HS256.
    pub(crate) fn sign(&self, claims: &ExtensionClaims) -> String {
        #[allow(
            clippy::expect_used,
            reason = "HS256 over plain serde claims has no failure mode"
        )]
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
            .expect("signing plain claims with an HMAC key cannot fail")
    }

    /// Checks a raw token as azd does: HS256 only, this key, issuer `azd`, this audience,
    /// not expired (no leeway).
    pub(crate) fn verify(
        &self,
        token: &str,
    ) -> Result<ExtensionClaims, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.validate_exp = true;
        validation.set_issuer(&["azd"]);
        validation.set_audience(&[self.audience.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<ExtensionClaims>(token, &self.decoding, &validation)?;
        // azd checks expiry once more itself: `exp` before now is refused.
        if data.claims.exp < unix_now() {
            return Err(jsonwebtoken::errors::ErrorKind::ExpiredSignature.into());
        }
        Ok(data.claims)
    }
}

/// A random W3C `traceparent` (version 00, sampled), as azd passes to extensions.
pub(crate) fn random_traceparent() -> Result<String, SimError> {
    let mut ids = [0u8; 24];
    getrandom::fill(&mut ids).map_err(|e| SimError::NoRandomness {
        what: "a trace id",
        reason: e.to_string(),
    })?;
    // All-zero ids are invalid; randomness makes them practically impossible, but be exact.
    ids[0] |= 1;
    ids[16] |= 1;
    Ok(format!(
        "00-{}-{}-01",
        hex::encode(&ids[..16]),
        hex::encode(&ids[16..])
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUD: &str = "127.0.0.1:4242";

    fn key() -> TokenKey {
        TokenKey::from_secret(b"0123456789abcdef0123456789abcdef", AUD)
    }

    #[test]
    fn claims_are_what_azd_writes() {
        let before = unix_now();
        let c = ExtensionClaims::new(AUD, "my.ext", &["provisioning-provider"], TOKEN_LIFETIME);
        assert_eq!(c.iss, "azd");
        assert_eq!(c.sub, "my.ext");
        assert_eq!(c.aud, vec![AUD.to_owned()]);
        assert!(c.iat >= before && c.iat <= unix_now());
        assert_eq!(c.exp - c.iat, 3600);
        assert!(c.has_capability(PROVISIONING_CAPABILITY));
        assert!(!c.has_capability("custom-commands"));

        // On the wire: `aud` is a list and the capabilities are under `cap`.
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["aud"], serde_json::json!([AUD]));
        assert_eq!(json["cap"], serde_json::json!(["provisioning-provider"]));
        assert!(json.get("traceparent").is_none());
    }

    #[test]
    fn signed_token_verifies_and_round_trips() {
        let k = key();
        let c = ExtensionClaims::new(AUD, "my.ext", &["a", "b"], TOKEN_LIFETIME);
        let token = k.sign(&c);
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.alg, Algorithm::HS256);
        assert_eq!(k.verify(&token).unwrap(), c);
    }

    #[test]
    fn bad_tokens_are_refused() {
        let k = key();
        let good = ExtensionClaims::new(AUD, "my.ext", &[], TOKEN_LIFETIME);

        let other_key = TokenKey::from_secret(b"another key, another azd run....", AUD);
        assert!(k.verify(&other_key.sign(&good)).is_err(), "other key");

        let other_aud = ExtensionClaims::new("127.0.0.1:1", "my.ext", &[], TOKEN_LIFETIME);
        assert!(k.verify(&k.sign(&other_aud)).is_err(), "other audience");

        let mut other_iss = good.clone();
        other_iss.iss = "not-azd".into();
        assert!(k.verify(&k.sign(&other_iss)).is_err(), "other issuer");

        let mut expired = good.clone();
        expired.iat = unix_now() - 7200;
        expired.exp = unix_now() - 1;
        assert!(k.verify(&k.sign(&expired)).is_err(), "expired");

        let hs384 = jsonwebtoken::encode(
            &Header::new(Algorithm::HS384),
            &good,
            &EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef"),
        )
        .unwrap();
        assert!(k.verify(&hs384).is_err(), "other algorithm");

        assert!(k.verify("").is_err(), "empty");
        assert!(k.verify("not.a.jwt").is_err(), "garbage");
        let bearer = format!("Bearer {}", k.sign(&good));
        assert!(k.verify(&bearer).is_err(), "Bearer prefix");
        assert!(
            k.verify(&k.sign(&good)).is_ok(),
            "the good one still passes"
        );
    }

    #[test]
    fn random_keys_differ() {
        let a = TokenKey::random(AUD).unwrap();
        let b = TokenKey::random(AUD).unwrap();
        let c = ExtensionClaims::new(AUD, "x", &[], TOKEN_LIFETIME);
        assert!(a.verify(&a.sign(&c)).is_ok());
        assert!(b.verify(&a.sign(&c)).is_err());
        assert_eq!(a.audience(), AUD);
    }
}
