//! What a recording must never hold, found by name, by value and by shape:
//! the rules cassettes (`test --record`) and golden conversations
//! (`listen --record`) share.
//!
//! - **By name** ([`is_secret_name`]): a header, query parameter, JSON
//!   field, form field, XML element, parameter or config key whose name says
//!   it holds a credential (`password`, `*secret*`, `*token*`, `*signature*`,
//!   `connectionString`, `primaryMasterKey`, `key1`, `*SasToken`, `sasUri`,
//!   …).
//! - **By value** ([`SecretValues`]): every value the host knows to be
//!   secret (tokens it handed out, granted environment values, secret
//!   parameters and answers), wherever it appears, plain, percent-encoded
//!   (any mix of `%XX` and literal bytes, once or more: `%3D`, `%253D`; `+`
//!   for a space), in base64 (standard or URL-safe, padded or not, alone or
//!   inside a larger base64 text, wrapped at any column, itself
//!   percent-encoded) or in hex (lower or upper case; a hex value in either
//!   case), and also where JSON's string escapes (`\u0041…`) or XML's
//!   references (`&#x41;…`, `&amp;`) spell it, in any mix of the two as
//!   often as they are nested, or what a lenient reader drops cuts it (a
//!   lone surrogate escape, a byte that is not UTF-8).
//! - **By shape** ([`scrub_shapes`]): SAS signatures (`sig=…` in any URL,
//!   encoded or not, at any depth, whatever its name's encoding: `s%69g=`),
//!   user-info in URLs (`https://user:pass@host`), JWTs, PEM private keys,
//!   the key parts of connection strings (`AccountKey=`,
//!   `SharedAccessKey=`, `Password=`, …), and hex keys right after a name
//!   that says they are secret (`"key1": "9f86…"`, `primaryKey=…`,
//!   `<Key1>…`; hex under any other name, a request id or a digest, is not).
//! - Names as they read once percent-decoded until they no longer change
//!   ([`percent_decoded`]: `s%2569g` is `sig`).
//!
//! After redaction [`find_credential`] looks for what still looks like one
//! (a JWT, a private key, a connection string's key, an Azure storage key, a
//! hex key under a secret name, a long high-entropy string; in base64
//! wrapped at 64 or 76 columns too), so that a recording holding one is
//! refused.

mod escaped;
mod hex;
mod names;
mod percent;
mod query;
mod shapes;
mod values;
mod wrap;

pub use names::{REDACTED, is_secret_header, is_secret_name};
pub use percent::percent_decoded;
pub use shapes::{Finding, find_credential, find_unsafe_credential, scrub_shapes};
pub use values::SecretValues;
