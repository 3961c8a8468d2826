//! azure-storage: an azd provisioning provider for the containers, queues and tables of one
//! Azure Storage account, through the Storage REST API. It signs requests with a bearer token
//! from azd (Azure, over HTTPS) or with the account key (Azure, or Azurite, the local emulator).
//!
//! ```yaml
//! infra:
//!   provider: azure-storage
//!   config:
//!     account: mystorage            # the storage account (it must exist)
//!     auth: token                   # or shared-key: the key in AZURE_STORAGE_KEY
//!     endpoints:                    # optional; Azure's by default
//!       blob: http://127.0.0.1:10000/devstoreaccount1
//!     containers: [web, uploads]
//!     queues: [jobs]
//!     tables: [audit]
//! ```
//!
//! - **preview** lists what the account holds and shows each declared resource as `Create` or
//!   `NoChange`;
//! - **deploy** creates what is missing, a progress step each, and is skipped when nothing is;
//! - **state** reads what exists, so `azd env refresh` restores the outputs;
//! - **destroy** deletes the declared resources that exist (nothing else), asking first unless
//!   `--force`;
//! - the outputs are the account's name and endpoints and the names of what exists, as a
//!   Bicep template's would be: `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_BLOB_ENDPOINT`,
//!   `AZURE_STORAGE_QUEUE_ENDPOINT`, `AZURE_STORAGE_TABLE_ENDPOINT`, `AZURE_STORAGE_CONTAINERS`,
//!   `AZURE_STORAGE_QUEUES`, `AZURE_STORAGE_TABLES` (the last three JSON arrays).
//!
//! Requests reach only the origins the manifest's `[policy.http] allow` grants; a service's
//! refusal comes back as azd's service error with the service's own code and message.

mod auth;
mod config;
mod storage;

use azd_provider_sdk::OutputParameter;
use azd_provider_sdk::prelude::*;
use azd_provider_sdk::serde_json::Value;

use crate::auth::Signer;
use crate::config::{Auth, Config};
use crate::storage::{Account, Created, Kind};

/// The environment keys the outputs go to.
const OUTPUT_KEYS: [&str; 7] = [
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_BLOB_ENDPOINT",
    "AZURE_STORAGE_QUEUE_ENDPOINT",
    "AZURE_STORAGE_TABLE_ENDPOINT",
    "AZURE_STORAGE_CONTAINERS",
    "AZURE_STORAGE_QUEUES",
    "AZURE_STORAGE_TABLES",
];

struct AzureStorage {
    account: Account,
    /// Declared resources, in deploy order.
    declared: Vec<(Kind, String)>,
    /// `azd provision --no-state`: a deploy with nothing to create is not reported as skipped.
    ignore_deployment_state: bool,
}

/// What the account holds of each kind.
struct Existing([Vec<String>; 3]);

impl Existing {
    fn has(&self, kind: Kind, name: &str) -> bool {
        self.0[kind as usize]
            .iter()
            .any(|n| kind.same_name(n, name))
    }
}

impl AzureStorage {
    /// Lists each kind that has a declared resource.
    fn existing(&self) -> Result<Existing, Error> {
        let mut lists: [Vec<String>; 3] = Default::default();
        for kind in [Kind::Container, Kind::Queue, Kind::Table] {
            if self.declared.iter().any(|(k, _)| *k == kind) {
                lists[kind as usize] = self.account.list(kind)?;
            }
        }
        Ok(Existing(lists))
    }

    /// The declared resources that exist.
    fn present<'a>(&'a self, existing: &Existing) -> Vec<&'a (Kind, String)> {
        self.declared
            .iter()
            .filter(|(kind, name)| existing.has(*kind, name))
            .collect()
    }

    /// The outputs, with the names of `present` resources.
    fn outputs(&self, present: &[&(Kind, String)]) -> Vec<(&'static str, OutputParameter)> {
        let names = |kind: Kind| {
            Output::json_array(
                present
                    .iter()
                    .filter(|(k, _)| *k == kind)
                    .map(|(_, n)| Value::from(n.as_str()))
                    .collect(),
            )
        };
        vec![
            (OUTPUT_KEYS[0], Output::string(&self.account.name)),
            (
                OUTPUT_KEYS[1],
                Output::string(self.account.endpoint(Kind::Container)),
            ),
            (
                OUTPUT_KEYS[2],
                Output::string(self.account.endpoint(Kind::Queue)),
            ),
            (
                OUTPUT_KEYS[3],
                Output::string(self.account.endpoint(Kind::Table)),
            ),
            (OUTPUT_KEYS[4], names(Kind::Container)),
            (OUTPUT_KEYS[5], names(Kind::Queue)),
            (OUTPUT_KEYS[6], names(Kind::Table)),
        ]
    }

    /// Asks before deleting, unless forced; `Ok(false)` when the user said no.
    fn confirmed(&self, targets: &[&(Kind, String)], force: bool) -> Result<bool, Error> {
        if force {
            return Ok(true);
        }
        let listed: Vec<String> = targets
            .iter()
            .map(|(kind, name)| format!("{} {name}", kind.noun()))
            .collect();
        azd::prompt::confirm(
            &format!(
                "Delete {} from storage account {} ({})?",
                plural(targets.len(), "resource"),
                self.account.name,
                listed.join(", ")
            ),
            Some(false),
        )
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

impl Provider for AzureStorage {
    fn initialize(_project_path: String, options: ProvisioningOptions) -> Result<Self, Error> {
        let config: Config = options.config()?;
        let declared = config.resources()?;
        let endpoints = [
            config.endpoint(Kind::Container)?,
            config.endpoint(Kind::Queue)?,
            config.endpoint(Kind::Table)?,
        ];
        let signer = match config.auth {
            Auth::SharedKey => Signer::shared_key(&config.account)?,
            Auth::Token => Signer::Token,
        };
        Ok(Self {
            account: Account::new(config.account, endpoints, signer),
            declared,
            ignore_deployment_state: options.ignore_deployment_state,
        })
    }

    fn state(&mut self, _options: StateOptions) -> Result<ProvisioningState, Error> {
        let existing = self.existing()?;
        let present = self.present(&existing);
        if present.is_empty() {
            return Ok(ProvisioningState::empty());
        }
        let resources: Vec<Resource> = present
            .iter()
            .map(|(kind, name)| Resource::new(self.account.url(*kind, name)))
            .collect();
        Ok(ProvisioningState::new(self.outputs(&present), resources))
    }

    fn preview(&mut self) -> Result<DeploymentPreview, Error> {
        progress(format!(
            "Comparing {} with storage account {}",
            plural(self.declared.len(), "declared resource"),
            self.account.name
        ));
        let existing = self.existing()?;
        let mut preview = DeploymentPreview::new("");
        let mut creates = 0;
        for (kind, name) in &self.declared {
            let change = if existing.has(*kind, name) {
                ChangeType::NoChange
            } else {
                creates += 1;
                ChangeType::Create
            };
            preview = preview.with_change(PreviewChange::new(
                change,
                self.account.url(*kind, name),
                kind.resource_type(),
                name.as_str(),
            ));
        }
        let all: Vec<&(Kind, String)> = self.declared.iter().collect();
        preview.summary = format!(
            "{} to create, {} unchanged in storage account {}",
            creates,
            self.declared.len() - creates,
            self.account.name
        );
        // azd 1.31 lists only the changes of resource types it has a display name for (a
        // storage account, not its containers, queues or tables), so say the summary too.
        progress(&preview.summary);
        Ok(preview.with_outputs(self.outputs(&all)))
    }

    fn deploy(&mut self) -> Result<DeployResult, Error> {
        let existing = self.existing()?;
        let mut created = 0;
        for (kind, name) in &self.declared {
            if existing.has(*kind, name) {
                progress(format!("The {} {name} exists", kind.noun()));
                continue;
            }
            progress(format!("Creating {} {name}", kind.noun()));
            if self.account.create(*kind, name)? == Created::New {
                created += 1;
            }
        }
        let all: Vec<&(Kind, String)> = self.declared.iter().collect();
        let deployment = Deployment::with_outputs(self.outputs(&all));
        if created == 0 && !self.ignore_deployment_state {
            return Ok(DeployResult::skipped(deployment));
        }
        Ok(DeployResult::deployed(deployment))
    }

    fn destroy(&mut self, options: DestroyOptions) -> Result<DestroyResult, Error> {
        let existing = self.existing()?;
        let targets = self.present(&existing);
        if !targets.is_empty() && !self.confirmed(&targets, options.force)? {
            return Err(Error::user(
                "not_confirmed",
                "the deletion was not confirmed, so nothing was deleted",
            )
            .with_suggestion("run `azd down --force` to delete without asking"));
        }
        for (kind, name) in targets {
            progress(format!("Deleting {} {name}", kind.noun()));
            self.account.delete(*kind, name)?;
        }
        Ok(DestroyResult::new(OUTPUT_KEYS))
    }

    fn planned_outputs(&mut self) -> Result<Vec<PlannedOutput>, Error> {
        Ok(OUTPUT_KEYS.into_iter().map(PlannedOutput::new).collect())
    }
}

azd_provider_sdk::export!(AzureStorage);

#[cfg(test)]
mod tests {
    use super::*;

    fn options(config: &str) -> ProvisioningOptions {
        ProvisioningOptions {
            provider: "azure-storage".into(),
            path: String::new(),
            module: String::new(),
            deployment_stacks: Vec::new(),
            ignore_deployment_state: false,
            config: config.into(),
            name: String::new(),
            virtual_env: Vec::new(),
        }
    }

    #[test]
    fn initialize_refuses_bad_config_before_any_request() {
        let bad = AzureStorage::initialize(String::new(), options(r#"{"account":"x"}"#));
        assert_eq!(bad.err().unwrap().code(), Some("invalid_account"));
        let unknown =
            AzureStorage::initialize(String::new(), options(r#"{"account":"abc","blobs":[]}"#));
        assert_eq!(unknown.err().unwrap().code(), Some("invalid_config"));
        let ok = AzureStorage::initialize(
            String::new(),
            options(r#"{"account":"abc","containers":["web"],"tables":["audit"]}"#),
        )
        .unwrap();
        assert_eq!(
            ok.account.url(Kind::Table, "audit"),
            "https://abc.table.core.windows.net/Tables('audit')"
        );
        assert_eq!(
            ok.account.url(Kind::Container, "web"),
            "https://abc.blob.core.windows.net/web"
        );
    }

    #[test]
    fn natively_a_request_fails_as_an_azd_error_instead_of_panicking() {
        let mut p = AzureStorage::initialize(
            String::new(),
            options(r#"{"account":"abc","queues":["jobs"]}"#),
        )
        .unwrap();
        // Natively there is no azd to give a token: an auth error, not a panic.
        let e = p.preview().unwrap_err();
        assert_eq!(e.code(), Some("unavailable"), "{e}");
    }
}
