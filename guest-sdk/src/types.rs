//! Constructors for the records a provider returns, and config parsing for the options it
//! receives. Constructors that take maps sort them, so the host always gets the sorted,
//! unique-key lists the WIT asks for.

use serde::de::DeserializeOwned;

use crate::Error;
use crate::bindings::azd::provisioning0_1_0::types::{
    DeployResult, Deployment, DeploymentPreview, DestroyResult, InputParameter, OutputParameter,
    Parameter, PlannedOutput, PreviewChange, ProvisioningOptions, ProvisioningState, Resource,
    SkippedReason,
};
use crate::output::sorted_map;

impl ProvisioningOptions {
    /// Parses the provider's `config:` section from `azure.yaml` (carried as JSON text) into
    /// `T`. An empty text counts as `{}`. A mismatch becomes a `validation` error naming the
    /// problem, so it can be returned to azd as it is.
    ///
    /// The raw text stays available in the `config` field.
    pub fn config<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let text = if self.config.trim().is_empty() {
            "{}"
        } else {
            &self.config
        };
        serde_json::from_str(text).map_err(|error| {
            Error::validation(
                "invalid_config",
                format!("the provider configuration in azure.yaml is not valid: {error}"),
            )
            .with_suggestion(format!(
                "check the `config:` section under `infra` (provider `{}`) in azure.yaml",
                self.provider
            ))
        })
    }
}

impl InputParameter {
    /// An input of the given type with its value and no default.
    pub fn new(type_: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            type_: type_.into(),
            default_value: String::new(),
            value: value.into(),
        }
    }

    /// Sets the default value.
    #[must_use]
    pub fn with_default(mut self, default_value: impl Into<String>) -> Self {
        self.default_value = default_value.into();
        self
    }
}

impl Resource {
    /// A resource by its id.
    pub fn new(id: impl Into<String>) -> Self {
        Self { id: id.into() }
    }
}

impl ProvisioningState {
    /// The state with the given outputs (sorted by name) and resources.
    pub fn new<K: Into<String>>(
        outputs: impl IntoIterator<Item = (K, OutputParameter)>,
        resources: impl IntoIterator<Item = Resource>,
    ) -> Self {
        Self {
            outputs: sorted_map(outputs),
            resources: resources.into_iter().collect(),
        }
    }

    /// Nothing is deployed.
    pub fn empty() -> Self {
        Self {
            outputs: Vec::new(),
            resources: Vec::new(),
        }
    }
}

impl Deployment {
    /// A deployment with the given input parameters and outputs (each sorted by name).
    pub fn new<K: Into<String>, L: Into<String>>(
        parameters: impl IntoIterator<Item = (K, InputParameter)>,
        outputs: impl IntoIterator<Item = (L, OutputParameter)>,
    ) -> Self {
        Self {
            parameters: sorted_map(parameters),
            outputs: sorted_map(outputs),
        }
    }

    /// A deployment that only has outputs.
    pub fn with_outputs<K: Into<String>>(
        outputs: impl IntoIterator<Item = (K, OutputParameter)>,
    ) -> Self {
        Self::new(Vec::<(String, InputParameter)>::new(), outputs)
    }
}

impl DeployResult {
    /// The layer was deployed.
    pub fn deployed(deployment: Deployment) -> Self {
        Self {
            deployment,
            skipped_reason: SkippedReason::Unspecified,
        }
    }

    /// Nothing changed since the recorded deployment, so nothing was done; `deployment`
    /// describes what is already there.
    pub fn skipped(deployment: Deployment) -> Self {
        Self {
            deployment,
            skipped_reason: SkippedReason::DeploymentState,
        }
    }
}

/// The kind of one change in a preview (azd's change type strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeType {
    /// The resource will be created.
    Create,
    /// The resource will be deleted.
    Delete,
    /// The resource will be deployed (changes not known in detail).
    Deploy,
    /// The resource is ignored.
    Ignore,
    /// The resource will be modified.
    Modify,
    /// The resource stays as it is.
    NoChange,
    /// The change cannot be previewed.
    Unsupported,
}

impl ChangeType {
    /// The string azd expects (`Create`, `NoChange`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "Create",
            Self::Delete => "Delete",
            Self::Deploy => "Deploy",
            Self::Ignore => "Ignore",
            Self::Modify => "Modify",
            Self::NoChange => "NoChange",
            Self::Unsupported => "Unsupported",
        }
    }
}

impl PreviewChange {
    /// One change to one resource.
    pub fn new(
        change_type: ChangeType,
        resource_id: impl Into<String>,
        resource_type: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            change_type: change_type.as_str().to_owned(),
            resource_id: resource_id.into(),
            resource_type: resource_type.into(),
            name: name.into(),
        }
    }
}

impl DeploymentPreview {
    /// A preview with a summary and nothing else yet.
    pub fn new(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            parameters: Vec::new(),
            outputs: Vec::new(),
            changes: Vec::new(),
        }
    }

    /// Adds one change.
    #[must_use]
    pub fn with_change(mut self, change: PreviewChange) -> Self {
        self.changes.push(change);
        self
    }

    /// Sets the outputs the deploy would produce (sorted by name).
    #[must_use]
    pub fn with_outputs<K: Into<String>>(
        mut self,
        outputs: impl IntoIterator<Item = (K, OutputParameter)>,
    ) -> Self {
        self.outputs = sorted_map(outputs);
        self
    }

    /// Sets the input parameters the deploy would use (sorted by name).
    #[must_use]
    pub fn with_parameters<K: Into<String>>(
        mut self,
        parameters: impl IntoIterator<Item = (K, InputParameter)>,
    ) -> Self {
        self.parameters = sorted_map(parameters);
        self
    }
}

impl DestroyResult {
    /// The environment keys that no longer hold; azd removes them from the environment.
    pub fn new<K: Into<String>>(invalidated_env_keys: impl IntoIterator<Item = K>) -> Self {
        Self {
            invalidated_env_keys: invalidated_env_keys.into_iter().map(Into::into).collect(),
        }
    }
}

impl Parameter {
    /// A plain (not secret) parameter with its current value.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            secret: false,
            value: value.into(),
            env_var_mapping: Vec::new(),
            local_prompt: false,
            using_env_var_mapping: false,
        }
    }

    /// Marks the value secret: the host never logs it.
    #[must_use]
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Maps the parameter to environment variables (and says the mapping is in use).
    #[must_use]
    pub fn with_env_var_mapping<K: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = K>,
    ) -> Self {
        self.env_var_mapping = names.into_iter().map(Into::into).collect();
        self.using_env_var_mapping = !self.env_var_mapping.is_empty();
        self
    }

    /// Asks azd to prompt for the value locally.
    #[must_use]
    pub fn with_local_prompt(mut self) -> Self {
        self.local_prompt = true;
        self
    }
}

impl PlannedOutput {
    /// An output `deploy` will produce.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::bindings::azd::provisioning0_1_0::types::{ErrorDetail, ErrorOrigin};

    fn options(config: &str) -> ProvisioningOptions {
        ProvisioningOptions {
            provider: "demo".into(),
            path: "infra".into(),
            module: "main".into(),
            deployment_stacks: Vec::new(),
            ignore_deployment_state: false,
            config: config.into(),
            name: String::new(),
            virtual_env: Vec::new(),
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Config {
        greeting: String,
        #[serde(default)]
        count: u32,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Optional {
        #[serde(default)]
        greeting: Option<String>,
    }

    #[test]
    fn config_parses_into_the_authors_type() {
        let parsed: Config = options(r#"{"greeting":"hi","count":3}"#).config().unwrap();
        assert_eq!(
            parsed,
            Config {
                greeting: "hi".into(),
                count: 3
            }
        );
    }

    #[test]
    fn empty_config_text_counts_as_an_empty_object() {
        let parsed: Optional = options("").config().unwrap();
        assert_eq!(parsed, Optional { greeting: None });
        let parsed: Optional = options("  ").config().unwrap();
        assert_eq!(parsed, Optional { greeting: None });
    }

    #[test]
    fn bad_config_is_a_validation_error_that_names_the_field_and_provider() {
        let error = options(r#"{"greeting": 5}"#)
            .config::<Config>()
            .unwrap_err();
        assert_eq!(error.origin(), ErrorOrigin::Local);
        let Some(ErrorDetail::Local(local)) = error.detail() else {
            panic!("expected local detail, got {error:?}");
        };
        assert_eq!(local.code, "invalid_config");
        assert_eq!(local.category, "validation");
        assert!(error.message().contains("invalid type"), "{error}");
        assert!(
            error.suggestion().contains("`demo`"),
            "{}",
            error.suggestion()
        );

        let error = options(r#"{"greting": "hi"}"#)
            .config::<Config>()
            .unwrap_err();
        assert!(error.message().contains("greting"), "{error}");

        let error = options("not json").config::<Config>().unwrap_err();
        assert_eq!(error.code(), Some("invalid_config"));
    }

    #[test]
    fn map_taking_constructors_sort_their_entries() {
        let state = ProvisioningState::new(
            [
                ("z", OutputParameter::bool(true)),
                ("a", OutputParameter::number(1)),
            ],
            [Resource::new("r1")],
        );
        let names: Vec<&str> = state.outputs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["a", "z"]);
        assert_eq!(state.resources, vec![Resource::new("r1")]);

        let deployment = Deployment::new(
            [
                ("y", InputParameter::new("string", "1")),
                ("b", InputParameter::new("string", "2")),
            ],
            [
                ("o2", OutputParameter::string("x")),
                ("o1", OutputParameter::string("y")),
            ],
        );
        let params: Vec<&str> = deployment
            .parameters
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        let outputs: Vec<&str> = deployment.outputs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(params, ["b", "y"]);
        assert_eq!(outputs, ["o1", "o2"]);

        let preview = DeploymentPreview::new("2 changes").with_outputs([
            ("q", OutputParameter::string("1")),
            ("p", OutputParameter::string("2")),
        ]);
        let outputs: Vec<&str> = preview.outputs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(outputs, ["p", "q"]);
    }

    #[test]
    fn deploy_results_set_the_skipped_reason() {
        let deployed = DeployResult::deployed(Deployment::with_outputs(Vec::<(String, _)>::new()));
        assert_eq!(deployed.skipped_reason, SkippedReason::Unspecified);
        let skipped = DeployResult::skipped(Deployment::with_outputs([(
            "url",
            OutputParameter::string("x"),
        )]));
        assert_eq!(skipped.skipped_reason, SkippedReason::DeploymentState);
        assert_eq!(skipped.deployment.outputs.len(), 1);
    }

    #[test]
    fn preview_change_uses_azd_change_type_strings() {
        let change = PreviewChange::new(ChangeType::NoChange, "id-1", "file", "a.txt");
        assert_eq!(change.change_type, "NoChange");
        assert_eq!(ChangeType::Create.as_str(), "Create");
        assert_eq!(ChangeType::Unsupported.as_str(), "Unsupported");
    }

    #[test]
    fn parameter_builder_sets_flags() {
        let parameter = Parameter::new("token", "s3cret")
            .secret()
            .with_env_var_mapping(["DEMO_TOKEN"])
            .with_local_prompt();
        assert!(parameter.secret);
        assert!(parameter.local_prompt);
        assert!(parameter.using_env_var_mapping);
        assert_eq!(parameter.env_var_mapping, vec!["DEMO_TOKEN".to_owned()]);
        let plain = Parameter::new("region", "westus").with_env_var_mapping(Vec::<String>::new());
        assert!(!plain.secret);
        assert!(!plain.using_env_var_mapping);
    }
}
