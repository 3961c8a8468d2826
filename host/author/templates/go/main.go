// {{name}}: an azd provisioning provider in Go, run by azd-wasm-host as a WebAssembly component.
//
// It "provisions" a greeting: azure.yaml's infra.config must name who to greet (`name`,
// required) and may pick the `greeting` word (default "Hello"). Deploy, preview and destroy
// report their steps on azd's spinner; deploy returns GREETING (string) and GREETING_LENGTH
// (number). A config without `name` is refused with a structured invalid_config error.
//
// The provider implements azdext.ProvisioningProvider, azd's own Go interface. Build:
// azd-wasm-host build ([build] in provider.toml). Test natively: go test ./...
package main

import (
	"context"
	"fmt"
	"strings"

	"azd-wasm-host/azdext"
)

func init() {
	azdext.Register(func() azdext.ProvisioningProvider { return &Provider{} })
}

// main is never called: a component runs its init functions, then answers azd.
func main() {}

// Provider greets the name azure.yaml gives.
type Provider struct {
	Name     string `json:"name"`
	Greeting string `json:"greeting"`
}

var configHelp = "Set `name: <who to greet>` under `infra.config` in azure.yaml."

func (p *Provider) Initialize(ctx context.Context, projectPath string, options *azdext.ProvisioningOptions) error {
	if err := options.DecodeConfig(p); err != nil {
		return err
	}
	if strings.TrimSpace(p.Name) == "" {
		return &azdext.LocalError{
			Message:    "the {{name}} config needs a non-empty `name`",
			Code:       "invalid_config",
			Category:   azdext.LocalErrorCategoryValidation,
			Suggestion: configHelp,
		}
	}
	if p.Greeting == "" {
		p.Greeting = "Hello"
	}
	azdext.Logger().Info("{{name}} initialized", "project", projectPath, "layer", options.Name)
	return nil
}

func (p *Provider) outputs() map[string]*azdext.ProvisioningOutputParameter {
	text := fmt.Sprintf("%s, %s!", p.Greeting, p.Name)
	return map[string]*azdext.ProvisioningOutputParameter{
		"GREETING":        {Type: "string", Value: text},
		"GREETING_LENGTH": {Type: "number", Value: fmt.Sprint(len(text))},
	}
}

func (p *Provider) State(ctx context.Context, options *azdext.ProvisioningStateOptions) (*azdext.ProvisioningStateResult, error) {
	return &azdext.ProvisioningStateResult{State: &azdext.ProvisioningState{
		Outputs:   p.outputs(),
		Resources: []*azdext.ProvisioningResource{{Id: "greeting/" + p.Name}},
	}}, nil
}

func (p *Provider) Deploy(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningDeployResult, error) {
	progress("Composing the greeting for " + p.Name)
	result := &azdext.ProvisioningDeployResult{Deployment: &azdext.ProvisioningDeployment{Outputs: p.outputs()}}
	progress("Greeting ready")
	return result, nil
}

func (p *Provider) Preview(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningPreviewResult, error) {
	progress("Comparing the greeting with the configuration")
	return &azdext.ProvisioningPreviewResult{Preview: &azdext.ProvisioningDeploymentPreview{
		Summary: "{{name}} would greet " + p.Name,
		Outputs: p.outputs(),
		Changes: []*azdext.ProvisioningDeploymentPreviewChange{{
			ChangeType: "Create", ResourceId: "greeting/" + p.Name, ResourceType: "hello/greeting", Name: p.Name,
		}},
	}}, nil
}

func (p *Provider) Destroy(ctx context.Context, options *azdext.ProvisioningDestroyOptions, progress azdext.ProgressFunc) (*azdext.ProvisioningDestroyResult, error) {
	forced := ""
	if options.Force {
		forced = " (forced)"
	}
	progress("Forgetting the greeting for " + p.Name + forced)
	return &azdext.ProvisioningDestroyResult{InvalidatedEnvKeys: []string{"GREETING", "GREETING_LENGTH"}}, nil
}

func (p *Provider) EnsureEnv(ctx context.Context) error { return nil }

func (p *Provider) Parameters(ctx context.Context) ([]*azdext.ProvisioningParameter, error) {
	return []*azdext.ProvisioningParameter{{Name: "name", Value: p.Name}, {Name: "greeting", Value: p.Greeting}}, nil
}

func (p *Provider) PlannedOutputs(ctx context.Context) ([]*azdext.ProvisioningPlannedOutput, error) {
	return []*azdext.ProvisioningPlannedOutput{{Name: "GREETING"}, {Name: "GREETING_LENGTH"}}, nil
}
