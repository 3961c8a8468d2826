//! The azd capability: azd's own services, as a provider reaches them, the
//! `environment` and `prompt` imports of world 0.2.0 (`[policy.azd]
//! environment` and `prompt`).
//!
//! The runtime does not talk gRPC: it calls an [`AzdServices`] (the
//! extension's connection to azd in `listen`, the simulated azd in `run`, a
//! fake in tests). Each import checks the manifest's grant first
//! (`[policy.azd]`); a call that is not granted never reaches azd and returns
//! an `auth` error naming the grant to add. Secret answers are never logged.
//! azd reads and writes the environment's files for these calls, so azd's
//! files the grants reach are checked first (`sandbox::files::azd_files`): one
//! that became a link refuses the call, and the answer of the call it served.

use std::sync::Arc;

use azd_wasm_host_core::text::sanitize;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, EnvironmentName, ErrorCode, ProviderError, SelectQuestion,
    ServiceError, TextQuestion,
};
use tokio::sync::OnceCell;

use wasmtime::component::{HasSelf, Linker};

use super::capability::Capability;
use super::files::{AzdFiles, PathMap};
use crate::bindings::azd::provisioning0_1_0::types as wit;
use crate::bindings::azd::provisioning0_2_0::{environment, prompt};
use crate::instance::seal::Seal;
use azd_wasm_host_manifest::{AzdGrants, EnvironmentAccess, Policy};

/// azd's environment and questions to the user.
pub(crate) struct Services;

impl Capability for Services {
    const KEYS: &'static [&'static str] = &["azd.environment", "azd.prompt"];
    const INTERFACES: &'static [&'static str] =
        &["azd:provisioning/environment", "azd:provisioning/prompt"];

    fn reach(interface: &str, _policy: &Policy) -> &'static str {
        if interface == "azd:provisioning/prompt" {
            "questions to the user (only with [policy.azd] prompt)"
        } else {
            "azd environment values (only as [policy.azd] grants)"
        }
    }
}

/// The store's part for azd's services.
pub(crate) trait AzdView: Send {
    /// azd's services and what the manifest grants of them.
    fn azd(&mut self) -> &mut AzdAccess;
}

/// Serves `environment` and `prompt` from the store's [`AzdAccess`].
pub(super) fn link<T: AzdView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    environment::add_to_linker::<T, HasSelf<AzdAccess>>(linker, T::azd)?;
    prompt::add_to_linker::<T, HasSelf<AzdAccess>>(linker, T::azd)
}

/// The azd environment of the command, settled once, on first use: the name
/// azd passed (`AZD_ENVIRONMENT`), else the one azd reports as current, else
/// none. An invalid name is an error.
pub(crate) struct CommandEnvironment {
    given: Option<String>,
    services: Option<Arc<dyn AzdServices>>,
    settled: OnceCell<Result<Option<EnvironmentName>, ProviderError>>,
}

impl CommandEnvironment {
    pub(crate) fn new(given: Option<String>, services: Option<Arc<dyn AzdServices>>) -> Self {
        Self {
            given: given.filter(|e| !e.is_empty()),
            services,
            settled: OnceCell::new(),
        }
    }

    /// Whether settling it means asking azd (it passed no name).
    pub(crate) fn asks_azd(&self) -> bool {
        self.given.is_none() && self.services.is_some()
    }

    /// The environment, settled now if it is not yet.
    pub(crate) async fn get(&self) -> Result<Option<EnvironmentName>, ProviderError> {
        self.settled
            .get_or_init(|| async {
                let name = match (&self.given, &self.services) {
                    (Some(given), _) => given.clone(),
                    (None, Some(services)) => match services.current_environment().await {
                        Ok(name) => name,
                        Err(e) => {
                            tracing::debug!(error = %e, "azd has no current environment");
                            return Ok(None);
                        }
                    },
                    (None, None) => return Ok(None),
                };
                EnvironmentName::parse(&name).map(Some).map_err(|e| {
                    ProviderError::host(ErrorCode::InvalidEnvironmentName, e.to_string())
                        .with_suggestion("select a valid environment with `azd env select <name>`")
                })
            })
            .await
            .clone()
    }
}

/// What one instance may use of azd's services, and how to reach them.
#[derive(Clone)]
pub(crate) struct AzdAccess {
    pub(crate) grants: AzdGrants,
    /// `None` when nothing connects the host to azd (e.g. `check`).
    pub(crate) services: Option<Arc<dyn AzdServices>>,
    /// The environment the command runs in, settled when first needed.
    pub(crate) environment: Arc<CommandEnvironment>,
    /// Whether the user can be asked (false under `--no-prompt`).
    pub(crate) interactive: bool,
    /// Closed while the instance is made ahead of its Initialize.
    pub(crate) seal: Seal,
    /// The granted folders in both forms: a value naming a place in one is
    /// read in the guest's form and written in the host's.
    pub(crate) paths: PathMap,
    /// azd's files the read-write grants reach: checked before azd reads or
    /// writes the environment for the guest (azd would go through a link).
    pub(crate) files: AzdFiles,
}

/// What the guest gets for a call the seal refused (it is never used after).
fn sealed() -> wit::Error {
    error("sealed", "internal", Seal::REFUSAL.to_owned(), "")
}

/// The guest-facing error for a call that failed.
fn error(code: &str, category: &str, message: String, suggestion: &str) -> wit::Error {
    wit::Error {
        message,
        origin: wit::ErrorOrigin::Local,
        suggestion: suggestion.to_owned(),
        links: Vec::new(),
        detail: Some(wit::ErrorDetail::Local(wit::LocalError {
            code: code.to_owned(),
            category: category.to_owned(),
        })),
    }
}

fn not_granted(what: &str, grant: &str) -> wit::Error {
    error(
        "not_granted",
        "auth",
        format!("the provider is not granted {what}"),
        &format!("add `{grant}` under [policy.azd] in the provider's provider.toml"),
    )
}

fn failed(what: &str, e: &ServiceError) -> wit::Error {
    error(
        "azd_service_failed",
        "dependency",
        format!("azd could not {what}: {e}"),
        &e.suggestion,
    )
}

impl AzdAccess {
    /// The services, if the environment may be read (or written, with `write`).
    fn environment_services(&self, write: bool) -> Result<&Arc<dyn AzdServices>, wit::Error> {
        if !self.seal.allows("azd's environment") {
            return Err(sealed());
        }
        let allowed = match self.grants.environment {
            EnvironmentAccess::None => false,
            EnvironmentAccess::Read => !write,
            EnvironmentAccess::ReadWrite => true,
        };
        if !allowed {
            return Err(if write {
                not_granted("writing azd's environment", "environment = \"read-write\"")
            } else {
                not_granted("azd's environment", "environment = \"read\"")
            });
        }
        self.services.as_ref().ok_or_else(|| {
            error(
                "azd_unavailable",
                "dependency",
                "azd's services are not reachable here".to_owned(),
                "",
            )
        })
    }

    /// The services, if the environment may be read (or written, with
    /// `write`) and azd's files are plain: azd reads and writes them for it.
    fn environment_files(&self, write: bool) -> Result<&Arc<dyn AzdServices>, wit::Error> {
        let services = self.environment_services(write)?;
        self.files
            .check("before azd's environment was used")
            .map_err(|e| error("unsafe_azd_file", "validation", e.message, &e.suggestion))?;
        Ok(services)
    }

    /// The services, if the provider may ask the user.
    fn prompt_services(&self) -> Result<&Arc<dyn AzdServices>, wit::Error> {
        if !self.seal.allows("asking the user") {
            return Err(sealed());
        }
        if !self.grants.prompt {
            return Err(not_granted("asking the user", "prompt = true"));
        }
        self.services.as_ref().ok_or_else(|| {
            error(
                "azd_unavailable",
                "dependency",
                "azd's services are not reachable here".to_owned(),
                "",
            )
        })
    }

    /// The environment's name: the one the command runs in, else azd's current.
    async fn environment_name(
        &self,
        services: &Arc<dyn AzdServices>,
    ) -> Result<String, wit::Error> {
        let settled = self.environment.get().await.map_err(|e| {
            error(
                "invalid_environment_name",
                "validation",
                e.message.clone(),
                &e.suggestion,
            )
        })?;
        match settled {
            Some(name) => Ok(name.as_str().to_owned()),
            None => services
                .current_environment()
                .await
                .map_err(|e| failed("tell the current environment", &e)),
        }
    }
}

impl environment::Host for AzdAccess {
    async fn name(&mut self) -> Result<String, wit::Error> {
        let services = self.environment_services(false)?;
        self.environment_name(services).await
    }

    async fn get_value(&mut self, key: String) -> Result<Option<String>, wit::Error> {
        let services = self.environment_files(false)?;
        let env = self.environment_name(services).await?;
        let value = services
            .environment_value(&env, &key)
            .await
            .map_err(|e| failed("read the environment", &e))?;
        let value = self.paths.to_guest(&value).unwrap_or(value);
        Ok(Some(value).filter(|v| !v.is_empty()))
    }

    async fn get_values(&mut self) -> Result<Vec<(String, String)>, wit::Error> {
        let services = self.environment_files(false)?;
        let env = self.environment_name(services).await?;
        let mut values = services
            .environment_values(&env)
            .await
            .map_err(|e| failed("read the environment", &e))?;
        values.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, value) in &mut values {
            self.paths.guest_in_place(value);
        }
        Ok(values)
    }

    async fn set_value(&mut self, key: String, value: String) -> Result<(), wit::Error> {
        let services = self.environment_files(true)?;
        let value = self.paths.to_native(&value).unwrap_or(value);
        // The same grammar as an output's: azd writes the key into `.env` as
        // it is, so only a variable's name that does not steer, with a value
        // `.env` carries back whole.
        if let Err(why) = azd_wasm_host_core::dotenv::check_entry(&key, &value) {
            let sentence = why.sentence(&key);
            tracing::warn!(target: "azd_wasm_host", "refused a provider's environment value: {sentence}");
            return Err(error(why.code(), "validation", sentence, why.suggestion()));
        }
        let env = self.environment_name(services).await?;
        services
            .set_environment_value(&env, &key, &value)
            .await
            .map_err(|e| failed("write the environment", &e))
    }
}

impl prompt::Host for AzdAccess {
    fn interactive(&mut self) -> bool {
        self.grants.prompt && self.interactive
    }

    async fn confirm(&mut self, o: prompt::ConfirmOptions) -> Result<bool, wit::Error> {
        let services = self.prompt_services()?;
        services
            .confirm(ConfirmQuestion {
                message: sanitize(&o.message).into_owned(),
                default_value: o.default_value,
                help_message: sanitize(&o.help_message).into_owned(),
            })
            .await
            .map_err(|e| failed("ask the user", &e))
    }

    async fn text(&mut self, o: prompt::TextOptions) -> Result<String, wit::Error> {
        let services = self.prompt_services()?;
        services
            .prompt(TextQuestion {
                message: sanitize(&o.message).into_owned(),
                default_value: o.default_value,
                help_message: sanitize(&o.help_message).into_owned(),
                placeholder: sanitize(&o.placeholder).into_owned(),
                secret: o.secret,
                required: o.required,
            })
            .await
            .map_err(|e| failed("ask the user", &e))
    }

    async fn select(&mut self, o: prompt::SelectOptions) -> Result<u32, wit::Error> {
        let services = self.prompt_services()?;
        let count = o.choices.len();
        let index = services
            .select(SelectQuestion {
                message: sanitize(&o.message).into_owned(),
                choices: o
                    .choices
                    .into_iter()
                    .map(|c| (c.value, sanitize(&c.label).into_owned()))
                    .collect(),
                default_index: o.default_index,
                help_message: sanitize(&o.help_message).into_owned(),
            })
            .await
            .map_err(|e| failed("ask the user", &e))?;
        if usize::try_from(index).is_ok_and(|i| i < count) {
            Ok(index)
        } else {
            Err(failed(
                "ask the user",
                &ServiceError::new(format!("azd answered choice {index} of {count}")),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use azd_wasm_host_core::ServiceError;
    use parking_lot::Mutex;

    /// azd's environment, faked: one value, and what the guest wrote.
    #[derive(Default)]
    struct Env {
        values: Mutex<Vec<(String, String)>>,
    }

    #[async_trait::async_trait]
    impl AzdServices for Env {
        async fn current_environment(&self) -> Result<String, ServiceError> {
            Ok("dev".into())
        }
        async fn environment_values(&self, _: &str) -> Result<Vec<(String, String)>, ServiceError> {
            Ok(self.values.lock().clone())
        }
        async fn environment_value(&self, _: &str, key: &str) -> Result<String, ServiceError> {
            let values = self.values.lock();
            let found = values.iter().find(|(k, _)| k == key);
            Ok(found.map(|(_, v)| v.clone()).unwrap_or_default())
        }
        async fn set_environment_value(
            &self,
            _: &str,
            key: &str,
            value: &str,
        ) -> Result<(), ServiceError> {
            self.values.lock().push((key.to_owned(), value.to_owned()));
            Ok(())
        }
        async fn confirm(&self, _: ConfirmQuestion) -> Result<bool, ServiceError> {
            Err(ServiceError::new("not asked here"))
        }
        async fn prompt(&self, _: TextQuestion) -> Result<String, ServiceError> {
            Err(ServiceError::new("not asked here"))
        }
        async fn select(&self, _: SelectQuestion) -> Result<u32, ServiceError> {
            Err(ServiceError::new("not asked here"))
        }
    }

    fn access(env: &Arc<Env>, paths: PathMap) -> AzdAccess {
        let services: Arc<dyn AzdServices> = env.clone();
        AzdAccess {
            grants: AzdGrants {
                environment: EnvironmentAccess::ReadWrite,
                ..AzdGrants::default()
            },
            services: Some(services.clone()),
            environment: Arc::new(CommandEnvironment::new(Some("dev".into()), Some(services))),
            interactive: false,
            seal: Seal::none(),
            paths,
            files: AzdFiles::default(),
        }
    }

    #[tokio::test]
    async fn the_environment_holds_granted_paths_as_the_host_names_them() {
        let env = Arc::new(Env::default());
        let windows = PathMap::new(
            [("/Z:/proj/out".to_owned(), r"Z:\proj\out".to_owned())],
            '\\',
        );
        let mut azd = access(&env, windows);
        environment::Host::set_value(&mut azd, "A".into(), "/Z:/proj/out/web".into())
            .await
            .unwrap();
        environment::Host::set_value(&mut azd, "B".into(), "/Z:/proj/outer".into())
            .await
            .unwrap();
        assert_eq!(
            *env.values.lock(),
            [
                ("A".to_owned(), r"Z:\proj\out\web".to_owned()),
                ("B".to_owned(), "/Z:/proj/outer".to_owned()),
            ]
        );
        // Read back, the guest gets its own form.
        let a = environment::Host::get_value(&mut azd, "A".into()).await;
        assert_eq!(a.unwrap().as_deref(), Some("/Z:/proj/out/web"));
        let all = environment::Host::get_values(&mut azd).await.unwrap();
        assert_eq!(all[0].1, "/Z:/proj/out/web");
        assert_eq!(all[1].1, "/Z:/proj/outer");
        // Where the two forms agree, values cross as they are.
        let mut same = access(&env, PathMap::default());
        let a = environment::Host::get_value(&mut same, "A".into()).await;
        assert_eq!(a.unwrap().as_deref(), Some(r"Z:\proj\out\web"));
    }

    /// A provider granted azd's environment read-write still cannot set what
    /// would steer the next tool azd starts: azd hands `.env` to every one.
    #[tokio::test]
    async fn a_provider_cannot_set_a_variable_that_steers() {
        let env = Arc::new(Env::default());
        let mut azd = access(&env, PathMap::default());
        for name in [
            "AZD_CONFIG_DIR",
            "AZD_WASM_HOST_ALLOW_UNSIGNED",
            "PATH",
            "cargo",
            "LD_PRELOAD",
        ] {
            let e = environment::Host::set_value(&mut azd, name.into(), "/tmp/evil".into())
                .await
                .unwrap_err();
            assert!(e.message.contains(name), "{}", e.message);
            assert!(
                matches!(&e.detail, Some(wit::ErrorDetail::Local(l)) if l.code == "reserved_name"),
                "{name}"
            );
        }
        environment::Host::set_value(&mut azd, "GREETING".into(), "hi".into())
            .await
            .unwrap();
        assert_eq!(
            *env.values.lock(),
            [("GREETING".to_owned(), "hi".to_owned())]
        );
    }

    /// A key azd would write into `.env` as something else (`A="1" X` reads
    /// back as two variables), or a value it would read back as others, is
    /// refused naming it; nothing reaches azd's environment.
    #[tokio::test]
    async fn a_provider_sets_only_a_variables_name_with_a_value_env_carries_back() {
        let env = Arc::new(Env::default());
        let mut azd = access(&env, PathMap::default());
        for (key, value, code) in [
            ("A=\"1\" NODE_OPTIONS", "x", "invalid_name"),
            ("A=\"1\"\rSSL_CERT_FILE", "x", "invalid_name"),
            ("export\tRUSTFLAGS", "x", "invalid_name"),
            ("MY-VAR", "x", "invalid_name"),
            ("", "x", "invalid_name"),
            ("OK", "ends\\", "invalid_value"),
            ("OK", "ends\"", "invalid_value"),
        ] {
            let e = environment::Host::set_value(&mut azd, key.into(), value.into())
                .await
                .unwrap_err();
            assert!(
                matches!(&e.detail, Some(wit::ErrorDetail::Local(l)) if l.code == code),
                "{key:?}: {e:?}"
            );
        }
        assert!(env.values.lock().is_empty());
    }
}
