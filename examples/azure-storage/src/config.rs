//! The provider's `config:` section of azure.yaml, checked once at Initialize.

use azd_provider_sdk::Error;
use serde::Deserialize;

use crate::storage::Kind;

/// `infra.config` in azure.yaml.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// The storage account's name.
    pub account: String,
    /// How requests are signed.
    #[serde(default)]
    pub auth: Auth,
    /// Each service's endpoint; by default Azure's, from the account's name.
    #[serde(default)]
    pub endpoints: Endpoints,
    /// Blob containers.
    #[serde(default)]
    pub containers: Vec<String>,
    /// Queues.
    #[serde(default)]
    pub queues: Vec<String>,
    /// Tables.
    #[serde(default)]
    pub tables: Vec<String>,
}

/// How requests are signed.
#[derive(Deserialize, Debug, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Auth {
    /// A bearer token from azd (`azd auth login`) for `https://storage.azure.com/.default`.
    #[default]
    Token,
    /// The account key, from the environment variable `AZURE_STORAGE_KEY`.
    SharedKey,
}

/// Service endpoints (`https://<account>.<blob|queue|table>.core.windows.net` unless given).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Endpoints {
    pub blob: Option<String>,
    pub queue: Option<String>,
    pub table: Option<String>,
}

impl Config {
    /// Every declared resource, in deploy order, after checking each name.
    pub(crate) fn resources(&self) -> Result<Vec<(Kind, String)>, Error> {
        check_account(&self.account)?;
        let mut all: Vec<(Kind, String)> = Vec::new();
        for (kind, names) in [
            (Kind::Container, &self.containers),
            (Kind::Queue, &self.queues),
            (Kind::Table, &self.tables),
        ] {
            for name in names {
                kind.check_name(name).map_err(|why| {
                    Error::validation("invalid_name", format!("{} {name:?}: {why}", kind.noun()))
                        .with_suggestion(format!(
                            "rename it under infra.config.{} in azure.yaml",
                            kind.config_key()
                        ))
                })?;
                if all
                    .iter()
                    .any(|(k, n)| k == &kind && kind.same_name(n, name))
                {
                    return Err(Error::validation(
                        "duplicate_name",
                        format!("{} {name:?} is declared twice", kind.noun()),
                    ));
                }
                all.push((kind, name.clone()));
            }
        }
        Ok(all)
    }

    /// A service's endpoint, without a trailing slash. A bearer token goes only over HTTPS
    /// (Azure refuses one over plain HTTP, and it must not cross the wire in clear).
    pub(crate) fn endpoint(&self, kind: Kind) -> Result<String, Error> {
        let given = match kind {
            Kind::Container => &self.endpoints.blob,
            Kind::Queue => &self.endpoints.queue,
            Kind::Table => &self.endpoints.table,
        };
        let url = match given {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!(
                "https://{}.{}.core.windows.net",
                self.account,
                kind.service()
            ),
        };
        if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains('?') {
            return Err(Error::validation(
                "invalid_endpoint",
                format!(
                    "the {} endpoint {url:?} is not an http(s) URL without a query",
                    kind.service()
                ),
            )
            .with_suggestion("fix infra.config.endpoints in azure.yaml"));
        }
        if self.auth == Auth::Token && !url.starts_with("https://") {
            return Err(Error::validation(
                "token_over_http",
                format!(
                    "`auth: token` sends a bearer token, which goes only over https, not to {url}"
                ),
            )
            .with_suggestion(
                "use an https endpoint, or `auth: shared-key` for a local emulator such as Azurite",
            ));
        }
        Ok(url)
    }
}

/// 3 to 24 lower-case letters and digits (Azure's rule; Azurite's is devstoreaccount1).
fn check_account(name: &str) -> Result<(), Error> {
    let ok = (3..=24).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if ok {
        return Ok(());
    }
    Err(Error::validation(
        "invalid_account",
        format!("the storage account name {name:?} must be 3 to 24 lower-case letters and digits"),
    )
    .with_suggestion("set infra.config.account in azure.yaml to the account's name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Config {
        azd_provider_sdk::serde_json::from_str(json).unwrap()
    }

    #[test]
    fn endpoints_default_to_azure_and_can_point_at_azurite() {
        let c = parse(r#"{"account":"mystore","containers":["web"]}"#);
        assert_eq!(c.auth, Auth::Token);
        assert_eq!(
            c.endpoint(Kind::Container).unwrap(),
            "https://mystore.blob.core.windows.net"
        );
        assert_eq!(
            c.endpoint(Kind::Table).unwrap(),
            "https://mystore.table.core.windows.net"
        );
        let c = parse(
            r#"{"account":"devstoreaccount1","auth":"shared-key",
                "endpoints":{"queue":"http://127.0.0.1:10001/devstoreaccount1/"}}"#,
        );
        assert_eq!(c.auth, Auth::SharedKey);
        assert_eq!(
            c.endpoint(Kind::Queue).unwrap(),
            "http://127.0.0.1:10001/devstoreaccount1"
        );
        let c = parse(r#"{"account":"a12","endpoints":{"blob":"ftp://x"}}"#);
        assert!(c.endpoint(Kind::Container).is_err());
        let c = parse(r#"{"account":"a12","endpoints":{"blob":"http://127.0.0.1:10000/a12"}}"#);
        assert_eq!(
            c.endpoint(Kind::Container).unwrap_err().code(),
            Some("token_over_http")
        );
    }

    #[test]
    fn names_are_checked_by_each_services_rules() {
        let ok = parse(
            r#"{"account":"store1","containers":["web","up-loads"],"queues":["jobs-1"],"tables":["Audit2"]}"#,
        );
        let all = ok.resources().unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(all[0], (Kind::Container, "web".to_owned()));
        for bad in [
            r#"{"account":"Store","containers":["web"]}"#,
            r#"{"account":"store","containers":["Web"]}"#,
            r#"{"account":"store","containers":["a--b"]}"#,
            r#"{"account":"store","containers":["ab"]}"#,
            r#"{"account":"store","queues":["-jobs"]}"#,
            r#"{"account":"store","tables":["1audit"]}"#,
            r#"{"account":"store","tables":["au-dit"]}"#,
            r#"{"account":"store","tables":["tables"]}"#,
            r#"{"account":"store","tables":["Audit","audit"]}"#,
        ] {
            let e = parse(bad).resources().unwrap_err();
            assert!(
                e.suggestion().contains("azure.yaml") || e.code() == Some("duplicate_name"),
                "{bad}: {e}"
            );
        }
    }
}
