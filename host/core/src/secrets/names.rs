//! Names whose values are credentials.

/// What a secret reads as in a recording.
pub const REDACTED: &str = "REDACTED";

/// Parts of a name (lower case, letters and digits only) that say its value
/// is a credential.
const SECRET_PARTS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "signature",
    "credential",
    "connectionstring",
    "privatekey",
    "apikey",
    "accountkey",
    "accesskey",
    "masterkey",
    "sharedaccesskey",
    "signingkey",
    "encryptionkey",
    "storagekey",
    "subscriptionkey",
    "functionkey",
    "hostkey",
    "adminkey",
    "querykey",
    "primarykey",
    "secondarykey",
    "sasuri",
    "sasurl",
    "sastoken",
    "sharedaccesssignature",
    "authorization",
    "cookie",
    "assertion",
];

/// Whole names (lower case, letters and digits only) that are credentials.
const SECRET_NAMES: &[&str] = &["key", "key1", "key2", "sig", "pwd", "sas"];

/// Whether a value named `name` (a header, query parameter, JSON or form
/// field, XML element, parameter or config key) is a credential by its name.
/// Case, `_`, `-` and `.` are ignored: `client_secret`, `x-api-key`,
/// `PrimaryMasterKey` and `adminPassword` all are.
pub fn is_secret_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    !n.is_empty()
        && (SECRET_NAMES.contains(&n.as_str()) || SECRET_PARTS.iter().any(|part| n.contains(part)))
}

/// Whether the header `name` carries credentials: by [`is_secret_name`], or
/// any name with `key` in it (`x-ms-encryption-key`, `ocp-apim-subscription-key`, …).
pub fn is_secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    is_secret_name(&lower) || lower.contains("key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_hold_credentials_are_known_by_their_shape() {
        for secret in [
            "password",
            "adminPassword",
            "client_secret",
            "clientSecret",
            "accessToken",
            "refresh_token",
            "id_token",
            "primaryKey",
            "primaryMasterKey",
            "secondaryReadonlyMasterKey",
            "key1",
            "KEY2",
            "connectionString",
            "primaryConnectionString",
            "sasUri",
            "blobSasToken",
            "sharedAccessSignature",
            "sig",
            "x-api-key",
            "ApiKey",
            "Authorization",
            "client_assertion",
            "DB_PASSWORD",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        for plain in [
            "name",
            "location",
            "value",
            "keyName",
            "PartitionKey",
            "RowKey",
            "code",
            "id",
            "TableName",
            "permissions",
            "auth",
            "authority",
            "",
        ] {
            assert!(!is_secret_name(plain), "{plain}");
        }
        assert!(is_secret_header("x-ms-encryption-key"));
        assert!(is_secret_header("Ocp-Apim-Subscription-Key"));
        assert!(is_secret_header("x-custom-signature"));
        assert!(is_secret_header("proxy-authorization"));
        assert!(!is_secret_header("x-ms-version"));
        assert!(!is_secret_header("content-type"));
    }
}
