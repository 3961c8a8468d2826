//! ECDSA P-256 keys in the PEM files cosign uses: a signing key as PKCS#8
//! (`PRIVATE KEY`), a public key as SubjectPublicKeyInfo (`PUBLIC KEY`).
//! ring does the arithmetic; it takes the public key as the bare point, so
//! the one SubjectPublicKeyInfo layout P-256 has is wrapped and unwrapped here.

use std::fmt;

use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair as _,
    UnparsedPublicKey,
};
use sha2::Digest as _;

/// DER of SubjectPublicKeyInfo { algorithm: id-ecPublicKey with the curve
/// prime256v1, subjectPublicKey: BIT STRING of 66 bytes }, up to the point.
/// (RFC 5480: every uncompressed P-256 public key starts with these bytes.)
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
/// An uncompressed P-256 point: 0x04, x, y.
const POINT_LEN: usize = 65;

/// Why a key cannot be made, read or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The system's random generator failed (making a key, or a signature).
    #[error("the system's random generator failed")]
    Random,
    /// The text is not PEM.
    #[error("not a PEM file")]
    NotPem(#[source] pem::PemError),
    /// A cosign key protected by a password, which this host does not read.
    #[error(
        "this is a password-protected cosign key; sign with cosign's key exported as PKCS#8 \
         (`openssl`), or make a key with `azd-wasm-host keygen`"
    )]
    Encrypted,
    /// A PEM block of another kind than the one asked for.
    #[error("a `{found}` PEM block, not a {wanted}")]
    WrongBlock {
        /// The block's tag.
        found: String,
        /// What was asked for, as the message names it.
        wanted: &'static str,
    },
    /// A `PRIVATE KEY` block that is not an ECDSA P-256 key.
    #[error("not an ECDSA P-256 signing key ({0})")]
    NotSigningKey(String),
    /// A `PUBLIC KEY` block that is not an uncompressed ECDSA P-256 key.
    #[error("not an uncompressed ECDSA P-256 public key")]
    NotPublicKey,
    /// ring refused to sign.
    #[error("signing failed")]
    Signing,
}

/// A signing key.
pub struct KeyPair {
    pkcs8: Vec<u8>,
    pair: EcdsaKeyPair,
}

impl fmt::Debug for KeyPair {
    // The private half never prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("public", &self.public())
            .finish_non_exhaustive()
    }
}

impl KeyPair {
    /// A new random key.
    pub fn generate() -> Result<Self, KeyError> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
            .map_err(|_| KeyError::Random)?;
        Self::from_pkcs8(doc.as_ref().to_vec())
    }

    /// A key from its PEM (`-----BEGIN PRIVATE KEY-----`, PKCS#8, P-256).
    pub fn from_pem(text: &str) -> Result<Self, KeyError> {
        let block = pem::parse(text).map_err(KeyError::NotPem)?;
        match block.tag() {
            "PRIVATE KEY" => Self::from_pkcs8(block.contents().to_vec()),
            "ENCRYPTED SIGSTORE PRIVATE KEY" | "ENCRYPTED COSIGN PRIVATE KEY" => {
                Err(KeyError::Encrypted)
            }
            other => Err(KeyError::WrongBlock {
                found: other.to_owned(),
                wanted: "PKCS#8 `PRIVATE KEY`",
            }),
        }
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<Self, KeyError> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_ASN1_SIGNING,
            &pkcs8,
            &SystemRandom::new(),
        )
        .map_err(|e| KeyError::NotSigningKey(e.to_string()))?;
        Ok(Self { pkcs8, pair })
    }

    /// The key as PEM, for a file only its owner reads.
    pub fn to_pem(&self) -> String {
        pem::encode(&pem::Pem::new("PRIVATE KEY", self.pkcs8.clone()))
    }

    /// Its public half.
    pub fn public(&self) -> PublicKey {
        let mut point = [0u8; POINT_LEN];
        point.copy_from_slice(self.pair.public_key().as_ref());
        PublicKey { point }
    }

    /// An ASN.1 DER ECDSA signature over SHA-256 of `message`.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, KeyError> {
        let sig = self
            .pair
            .sign(&SystemRandom::new(), message)
            .map_err(|_| KeyError::Signing)?;
        Ok(sig.as_ref().to_vec())
    }
}

/// A public key that verifies signatures.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    point: [u8; POINT_LEN],
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.short_id())
    }
}

impl PublicKey {
    /// A key from its PEM (`-----BEGIN PUBLIC KEY-----`, a P-256 key).
    pub fn from_pem(text: &str) -> Result<Self, KeyError> {
        let block = pem::parse(text).map_err(KeyError::NotPem)?;
        if block.tag() != "PUBLIC KEY" {
            return Err(KeyError::WrongBlock {
                found: block.tag().to_owned(),
                wanted: "`PUBLIC KEY`",
            });
        }
        Self::from_spki(block.contents())
    }

    fn from_spki(der: &[u8]) -> Result<Self, KeyError> {
        let point = der
            .strip_prefix(P256_SPKI_PREFIX.as_slice())
            .filter(|p| p.len() == POINT_LEN && p[0] == 0x04)
            .ok_or(KeyError::NotPublicKey)?;
        let mut key = Self {
            point: [0; POINT_LEN],
        };
        key.point.copy_from_slice(point);
        Ok(key)
    }

    /// SubjectPublicKeyInfo DER.
    fn spki(&self) -> Vec<u8> {
        [P256_SPKI_PREFIX.as_slice(), self.point.as_slice()].concat()
    }

    /// The key as PEM.
    pub fn to_pem(&self) -> String {
        pem::encode(&pem::Pem::new("PUBLIC KEY", self.spki()))
    }

    /// The key's id: sha256 of its SubjectPublicKeyInfo, in hex (the hint a
    /// bundle names its key by).
    pub fn id(&self) -> String {
        hex::encode(sha2::Sha256::digest(self.spki()))
    }

    /// The first 16 hex digits of [`Self::id`], for messages.
    pub fn short_id(&self) -> String {
        self.id()[..16].to_owned()
    }

    /// Whether `signature` (ASN.1 DER) signs `message` with this key.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, &self.point)
            .verify(message, signature)
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn a_key_signs_and_its_public_half_verifies_through_pem() {
        let key = KeyPair::generate().unwrap();
        let again = KeyPair::from_pem(&key.to_pem()).unwrap();
        let public = PublicKey::from_pem(&again.public().to_pem()).unwrap();
        assert_eq!(public, key.public());
        let sig = again.sign(b"statement").unwrap();
        assert!(public.verifies(b"statement", &sig));
        assert!(!public.verifies(b"statemenT", &sig));
        let other = KeyPair::generate().unwrap().public();
        assert!(!other.verifies(b"statement", &sig));
        assert_ne!(other.id(), public.id());
        assert_eq!(public.id().len(), 64);
    }

    #[test]
    fn wrong_pem_blocks_are_refused_with_what_they_are() {
        let key = KeyPair::generate().unwrap();
        let e = PublicKey::from_pem(&key.to_pem()).unwrap_err();
        assert!(e.to_string().contains("`PRIVATE KEY`"), "{e}");
        let e = KeyPair::from_pem(&key.public().to_pem()).unwrap_err();
        assert!(e.to_string().contains("`PUBLIC KEY`"), "{e}");
        let cosign = pem::encode(&pem::Pem::new("ENCRYPTED SIGSTORE PRIVATE KEY", vec![1, 2]));
        let e = KeyPair::from_pem(&cosign).unwrap_err();
        assert!(e.to_string().contains("password-protected"), "{e}");
        assert!(matches!(
            KeyPair::from_pem(&cosign),
            Err(KeyError::Encrypted)
        ));
        // Not PEM at all: the PEM reader's words are kept as the cause.
        let e = PublicKey::from_pem("garbage").unwrap_err();
        assert!(matches!(e, KeyError::NotPem(_)), "{e:?}");
        assert!(std::error::Error::source(&e).is_some());
        // An RSA-sized SubjectPublicKeyInfo is not a P-256 key.
        let rsa = pem::encode(&pem::Pem::new("PUBLIC KEY", vec![0x30; 294]));
        assert!(matches!(
            PublicKey::from_pem(&rsa),
            Err(KeyError::NotPublicKey)
        ));
        let junk = pem::encode(&pem::Pem::new("PRIVATE KEY", vec![0x30; 40]));
        assert!(matches!(
            KeyPair::from_pem(&junk),
            Err(KeyError::NotSigningKey(_))
        ));
    }

    #[test]
    fn a_key_never_prints_its_private_half() {
        let key = KeyPair::generate().unwrap();
        let shown = format!("{key:?}");
        let private = key.to_pem();
        let body: String = private.lines().nth(1).unwrap().chars().take(20).collect();
        assert!(!shown.contains(&body), "{shown}");
        assert!(shown.contains(&key.public().short_id()), "{shown}");
    }
}
