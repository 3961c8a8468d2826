//! rust-hello: a small azd provisioning provider in Rust, built on `azd-provider-sdk`.
//!
//! It "provisions" a greeting. azure.yaml's `infra.config` must name who to greet (`name`,
//! required) and may pick the `greeting` word (default `Hello`):
//!
//! ```yaml
//! infra:
//!   provider: rust-hello
//!   config:
//!     name: world
//!     greeting: Hi
//! ```
//!
//! Deploy, preview and destroy report their steps on azd's spinner. Deploy returns `GREETING`
//! (string), `GREETING_LENGTH` (number) and `GREETING_DETAILS` (object). A config that does not
//! parse, or names nobody, is refused with a structured `validation` error. It keeps no state
//! of its own, so it needs no files: the manifest's policy denies everything.

use azd_provider_sdk::prelude::*;
use azd_provider_sdk::serde_json::{Map, Value};
use serde::Deserialize;

/// The provider's `config:` section in azure.yaml.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Who to greet.
    name: String,
    /// The greeting word.
    #[serde(default = "default_greeting")]
    greeting: String,
}

fn default_greeting() -> String {
    "Hello".to_owned()
}

/// The outputs deploy produces, in the order `planned_outputs` lists them.
const OUTPUTS: [&str; 3] = ["GREETING", "GREETING_DETAILS", "GREETING_LENGTH"];

/// One provisioning layer's greeting.
struct Hello {
    name: String,
    greeting: String,
}

impl Hello {
    fn text(&self) -> String {
        format!("{}, {}!", self.greeting, self.name)
    }

    fn resource_id(&self) -> String {
        format!("greeting/{}", self.name)
    }

    fn outputs(&self) -> [(&'static str, Output); 3] {
        let text = self.text();
        let mut details = Map::new();
        details.insert("greeting".into(), Value::from(self.greeting.as_str()));
        details.insert("name".into(), Value::from(self.name.as_str()));
        [
            (
                "GREETING_LENGTH",
                Output::number(text.chars().count() as u64),
            ),
            ("GREETING", Output::string(text)),
            ("GREETING_DETAILS", Output::json_object(details)),
        ]
    }
}

impl Provider for Hello {
    fn initialize(project_path: String, options: ProvisioningOptions) -> Result<Self, Error> {
        let config: Config = options.config()?;
        if config.name.trim().is_empty() {
            return Err(Error::validation(
                "empty_name",
                "rust-hello has nobody to greet: `name` is empty",
            )
            .with_suggestion("set infra.config.name in azure.yaml, e.g. `name: world`"));
        }
        log::info(format!(
            "rust-hello initialized for {project_path} (layer '{}')",
            options.name
        ));
        Ok(Self {
            name: config.name,
            greeting: config.greeting,
        })
    }

    fn state(&mut self, _options: StateOptions) -> Result<ProvisioningState, Error> {
        Ok(ProvisioningState::new(
            self.outputs(),
            [Resource::new(self.resource_id())],
        ))
    }

    fn deploy(&mut self) -> Result<DeployResult, Error> {
        progress(format!("Composing the greeting for {}", self.name));
        let deployment = Deployment::with_outputs(self.outputs());
        progress("Greeting ready");
        Ok(DeployResult::deployed(deployment))
    }

    fn preview(&mut self) -> Result<DeploymentPreview, Error> {
        progress("Comparing the greeting with the configuration");
        Ok(
            DeploymentPreview::new(format!("rust-hello would greet {}", self.name))
                .with_outputs(self.outputs())
                .with_change(PreviewChange::new(
                    ChangeType::Create,
                    self.resource_id(),
                    "hello/greeting",
                    &self.name,
                )),
        )
    }

    fn destroy(&mut self, options: DestroyOptions) -> Result<DestroyResult, Error> {
        let forced = if options.force { " (forced)" } else { "" };
        progress(format!("Forgetting the greeting for {}{forced}", self.name));
        Ok(DestroyResult::new(OUTPUTS))
    }

    fn parameters(&mut self) -> Result<Vec<Parameter>, Error> {
        Ok(vec![
            Parameter::new("name", &self.name),
            Parameter::new("greeting", &self.greeting),
        ])
    }

    fn planned_outputs(&mut self) -> Result<Vec<PlannedOutput>, Error> {
        Ok(OUTPUTS.into_iter().map(PlannedOutput::new).collect())
    }
}

azd_provider_sdk::export!(Hello);

#[cfg(test)]
mod tests {
    use azd_provider_sdk::map_get;

    use super::*;

    fn options(config: &str) -> ProvisioningOptions {
        ProvisioningOptions {
            provider: "rust-hello".into(),
            path: "infra".into(),
            module: "main".into(),
            deployment_stacks: Vec::new(),
            ignore_deployment_state: false,
            config: config.into(),
            name: String::new(),
            virtual_env: Vec::new(),
        }
    }

    fn hello(config: &str) -> Result<Hello, Error> {
        Hello::initialize("/project".into(), options(config))
    }

    #[test]
    fn deploy_returns_typed_sorted_outputs() {
        let mut provider = hello(r#"{"name":"world","greeting":"Hi"}"#).unwrap();
        let result = provider.deploy().unwrap();
        let outputs = &result.deployment.outputs;
        let names: Vec<&str> = outputs.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, OUTPUTS);
        let greeting = map_get(outputs, "GREETING").unwrap();
        assert_eq!(
            (greeting.type_.as_str(), greeting.value.as_str()),
            ("string", "Hi, world!")
        );
        let length = map_get(outputs, "GREETING_LENGTH").unwrap();
        assert_eq!(
            (length.type_.as_str(), length.value.as_str()),
            ("number", "10")
        );
        let details = map_get(outputs, "GREETING_DETAILS").unwrap();
        assert_eq!(details.type_, "object");
        let details: Value = azd_provider_sdk::serde_json::from_str(&details.value).unwrap();
        assert_eq!(details["name"], "world");
    }

    #[test]
    fn greeting_defaults_to_hello() {
        let provider = hello(r#"{"name":"azd"}"#).unwrap();
        assert_eq!(provider.text(), "Hello, azd!");
    }

    #[test]
    fn bad_config_is_a_structured_validation_error() {
        for (config, code) in [
            ("{}", "invalid_config"),
            (r#"{"name":"x","greting":"typo"}"#, "invalid_config"),
            (r#"{"name":"  "}"#, "empty_name"),
        ] {
            let Err(error) = hello(config) else {
                panic!("config {config} was accepted");
            };
            assert_eq!(error.code(), Some(code), "config {config}");
            assert!(!error.suggestion().is_empty(), "config {config}");
        }
    }

    #[test]
    fn preview_and_destroy_describe_the_greeting() {
        let mut provider = hello(r#"{"name":"world"}"#).unwrap();
        let preview = provider.preview().unwrap();
        assert_eq!(preview.changes.len(), 1);
        assert_eq!(preview.changes[0].change_type, "Create");
        assert_eq!(preview.changes[0].resource_id, "greeting/world");
        let destroyed = provider
            .destroy(DestroyOptions {
                force: true,
                purge: false,
            })
            .unwrap();
        assert_eq!(destroyed.invalidated_env_keys, OUTPUTS);
        let planned: Vec<String> = provider
            .planned_outputs()
            .unwrap()
            .into_iter()
            .map(|output| output.name)
            .collect();
        assert_eq!(planned, OUTPUTS);
    }
}
