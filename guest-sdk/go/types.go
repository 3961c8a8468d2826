package azdext

import "encoding/json"

// ProvisioningOptions are the options of one provisioning layer in azure.yaml.
type ProvisioningOptions struct {
	// Provider is the provider name the layer selects.
	Provider string
	// Path is the infrastructure folder, relative to the project.
	Path string
	// Module is the entry point's name inside Path.
	Module string
	// DeploymentStacks holds the deployment-stack settings.
	DeploymentStacks map[string]string
	// IgnoreDeploymentState asks for a deploy even when nothing changed (--no-state).
	IgnoreDeploymentState bool
	// Config is the provider's own `config:` section, decoded from JSON.
	Config map[string]any
	// ConfigJSON is the same section as JSON object text.
	ConfigJSON string
	// Name is the layer's name (empty for the default layer).
	Name string
	// VirtualEnv holds the plan-time outputs of earlier layers.
	VirtualEnv map[string]string
}

// DecodeConfig fills v (a pointer, usually to a struct with json tags) from
// the provider's `config:` section.
func (o *ProvisioningOptions) DecodeConfig(v any) error {
	text := o.ConfigJSON
	if text == "" {
		text = "{}"
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return &LocalError{
			Message:    "the provider's config in azure.yaml does not fit: " + err.Error(),
			Code:       "invalid_config",
			Category:   LocalErrorCategoryValidation,
			Suggestion: "Check the `infra.config` section of azure.yaml.",
		}
	}
	return nil
}

// ProvisioningStateOptions are the options of a State call.
type ProvisioningStateOptions struct {
	// Hint is a deployment name hint.
	Hint string
}

// ProvisioningStateResult is the answer to State.
type ProvisioningStateResult struct {
	State *ProvisioningState
}

// ProvisioningState is what is deployed now.
type ProvisioningState struct {
	Outputs   map[string]*ProvisioningOutputParameter
	Resources []*ProvisioningResource
}

// ProvisioningOutputParameter is a value a deployment produced. Type is one
// of "string", "number", "bool", "object" or "array" (object and array values
// are JSON text); the host refuses anything else, because azd cannot read it.
type ProvisioningOutputParameter struct {
	Type  string
	Value string
}

// ProvisioningInputParameter is a value going into a deployment.
type ProvisioningInputParameter struct {
	Type         string
	DefaultValue string
	Value        string
}

// ProvisioningResource is a resource the provider manages.
type ProvisioningResource struct {
	Id string
}

// ProvisioningDeployment holds a deployment's parameters and outputs.
type ProvisioningDeployment struct {
	Parameters map[string]*ProvisioningInputParameter
	Outputs    map[string]*ProvisioningOutputParameter
}

// ProvisioningSkippedReason says why a deploy did nothing.
type ProvisioningSkippedReason int32

const (
	// ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_UNSPECIFIED: the deploy was not skipped.
	ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_UNSPECIFIED ProvisioningSkippedReason = 0
	// ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE: nothing changed since the recorded deployment.
	ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE ProvisioningSkippedReason = 1
)

// ProvisioningDeployResult is the answer to Deploy.
type ProvisioningDeployResult struct {
	Deployment    *ProvisioningDeployment
	SkippedReason ProvisioningSkippedReason
}

// ProvisioningDeploymentPreviewChange is one change a deploy would make.
type ProvisioningDeploymentPreviewChange struct {
	// ChangeType is one of Create, Delete, Deploy, Ignore, Modify, NoChange, Unsupported.
	ChangeType   string
	ResourceId   string
	ResourceType string
	Name         string
}

// ProvisioningDeploymentPreview is what a deploy would do.
type ProvisioningDeploymentPreview struct {
	Summary    string
	Parameters map[string]*ProvisioningInputParameter
	Outputs    map[string]*ProvisioningOutputParameter
	Changes    []*ProvisioningDeploymentPreviewChange
}

// ProvisioningPreviewResult is the answer to Preview.
type ProvisioningPreviewResult struct {
	Preview *ProvisioningDeploymentPreview
}

// ProvisioningDestroyOptions are the options of Destroy (azd down --force --purge).
type ProvisioningDestroyOptions struct {
	Force bool
	Purge bool
}

// ProvisioningDestroyResult is the answer to Destroy.
type ProvisioningDestroyResult struct {
	// InvalidatedEnvKeys are environment keys that no longer hold; azd removes them.
	InvalidatedEnvKeys []string
}

// ProvisioningParameter is an input the provider needs (azd pipeline config).
// The host never logs the Value of a Secret parameter.
type ProvisioningParameter struct {
	Name               string
	Secret             bool
	Value              string
	EnvVarMapping      []string
	LocalPrompt        bool
	UsingEnvVarMapping bool
}

// ProvisioningPlannedOutput is an output the provider will produce.
type ProvisioningPlannedOutput struct {
	Name string
}
