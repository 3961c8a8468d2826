// storage-go: an azd provisioning provider in Go for the containers, queues and tables of one
// Azure Storage account, through the Storage REST API with Go's own net/http (which the SDK's
// azdhttp package sends through the host). It does what examples/js-storage (JavaScript) and
// examples/azure-storage (Rust) do, with the same configuration and outputs:
//
//	infra:
//	  provider: storage-go
//	  config:
//	    account: mystorage            # the storage account (it must exist)
//	    auth: token                   # or shared-key: the key in AZURE_STORAGE_KEY
//	    endpoints:                    # optional; Azure's by default
//	      blob: http://127.0.0.1:10000/devstoreaccount1
//	    containers: [web, uploads]
//	    queues: [jobs]
//	    tables: [audit]
//
// preview lists what the account holds and shows each declared resource as Create or
// NoChange; deploy creates what is missing, a progress step each, and is skipped when nothing
// is; state reads what exists (azd env refresh); destroy deletes the declared resources that
// exist (nothing else), asking first unless --force. Build: azd-wasm-host build.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"azd-wasm-host/azdext"
	_ "azd-wasm-host/azdext/azdhttp" // net/http through the host, under [policy.http]
)

func init() {
	azdext.Register(func() azdext.ProvisioningProvider { return &Provider{} })
}

// main is never called: a component runs its init functions, then answers azd.
func main() {}

var outputKeys = []string{
	"AZURE_STORAGE_ACCOUNT_NAME",
	"AZURE_STORAGE_BLOB_ENDPOINT",
	"AZURE_STORAGE_QUEUE_ENDPOINT",
	"AZURE_STORAGE_TABLE_ENDPOINT",
	"AZURE_STORAGE_CONTAINERS",
	"AZURE_STORAGE_QUEUES",
	"AZURE_STORAGE_TABLES",
}

// Provider is the storage-go provider: what Initialize learned.
type Provider struct {
	account               *account
	declared              []resource
	ignoreDeploymentState bool
}

func (p *Provider) Initialize(_ context.Context, _ string, options *azdext.ProvisioningOptions) error {
	c, declared, endpoints, err := parseConfig(options)
	if err != nil {
		return err
	}
	sign := signer(tokenSigner)
	if c.Auth == "shared-key" {
		if sign, err = sharedKeySigner(c.Account); err != nil {
			return err
		}
	}
	p.account = &account{name: c.Account, endpoints: endpoints, sign: sign, client: http.DefaultClient}
	p.declared = declared
	p.ignoreDeploymentState = options.IgnoreDeploymentState
	return nil
}

// existing is what the account holds, of the kinds something is declared of.
func (p *Provider) existing(ctx context.Context) (map[resource]bool, error) {
	found := map[resource]bool{}
	for _, k := range kinds {
		if len(names(p.declared, k)) == 0 {
			continue
		}
		held, err := p.account.list(ctx, k)
		if err != nil {
			return nil, err
		}
		for _, name := range held {
			found[resource{k, name}] = true
		}
	}
	return found, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func stringOutput(value string) *azdext.ProvisioningOutputParameter {
	return &azdext.ProvisioningOutputParameter{Type: "string", Value: value}
}

func arrayOutput(values []string) *azdext.ProvisioningOutputParameter {
	data, _ := json.Marshal(values)
	return &azdext.ProvisioningOutputParameter{Type: "array", Value: string(data)}
}

func (p *Provider) outputs(present []resource) map[string]*azdext.ProvisioningOutputParameter {
	a := p.account
	return map[string]*azdext.ProvisioningOutputParameter{
		"AZURE_STORAGE_ACCOUNT_NAME":   stringOutput(a.name),
		"AZURE_STORAGE_BLOB_ENDPOINT":  stringOutput(a.endpoints[container]),
		"AZURE_STORAGE_QUEUE_ENDPOINT": stringOutput(a.endpoints[queue]),
		"AZURE_STORAGE_TABLE_ENDPOINT": stringOutput(a.endpoints[table]),
		"AZURE_STORAGE_CONTAINERS":     arrayOutput(names(present, container)),
		"AZURE_STORAGE_QUEUES":         arrayOutput(names(present, queue)),
		"AZURE_STORAGE_TABLES":         arrayOutput(names(present, table)),
	}
}

// present is the declared resources the account holds.
func (p *Provider) present(found map[resource]bool) []resource {
	var out []resource
	for _, r := range p.declared {
		if found[r] {
			out = append(out, r)
		}
	}
	return out
}

func (p *Provider) State(ctx context.Context, _ *azdext.ProvisioningStateOptions) (*azdext.ProvisioningStateResult, error) {
	found, err := p.existing(ctx)
	if err != nil {
		return nil, err
	}
	present := p.present(found)
	if len(present) == 0 {
		return &azdext.ProvisioningStateResult{State: &azdext.ProvisioningState{}}, nil
	}
	var resources []*azdext.ProvisioningResource
	for _, r := range present {
		resources = append(resources, &azdext.ProvisioningResource{Id: p.account.url(r.kind, r.name)})
	}
	return &azdext.ProvisioningStateResult{State: &azdext.ProvisioningState{Outputs: p.outputs(present), Resources: resources}}, nil
}

func (p *Provider) Preview(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningPreviewResult, error) {
	progress(fmt.Sprintf("Comparing %s with storage account %s", plural(len(p.declared), "declared resource"), p.account.name))
	found, err := p.existing(ctx)
	if err != nil {
		return nil, err
	}
	var changes []*azdext.ProvisioningDeploymentPreviewChange
	creates := 0
	for _, r := range p.declared {
		change := "NoChange"
		if !found[r] {
			change = "Create"
			creates++
		}
		changes = append(changes, &azdext.ProvisioningDeploymentPreviewChange{
			ChangeType: change, Name: r.name, ResourceType: resourceTypes[r.kind], ResourceId: p.account.url(r.kind, r.name),
		})
	}
	summary := fmt.Sprintf("%d to create, %d unchanged in storage account %s", creates, len(p.declared)-creates, p.account.name)
	progress(summary)
	return &azdext.ProvisioningPreviewResult{Preview: &azdext.ProvisioningDeploymentPreview{
		Summary: summary, Outputs: p.outputs(p.declared), Changes: changes,
	}}, nil
}

func (p *Provider) Deploy(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningDeployResult, error) {
	found, err := p.existing(ctx)
	if err != nil {
		return nil, err
	}
	created := 0
	for _, r := range p.declared {
		if found[r] {
			progress(fmt.Sprintf("The %s %s exists", r.kind, r.name))
			continue
		}
		progress(fmt.Sprintf("Creating %s %s", r.kind, r.name))
		made, err := p.account.create(ctx, r.kind, r.name)
		if err != nil {
			return nil, err
		}
		if made {
			created++
		}
	}
	result := &azdext.ProvisioningDeployResult{Deployment: &azdext.ProvisioningDeployment{Outputs: p.outputs(p.declared)}}
	if created == 0 && !p.ignoreDeploymentState {
		result.SkippedReason = azdext.ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE
	}
	return result, nil
}

func (p *Provider) Destroy(ctx context.Context, options *azdext.ProvisioningDestroyOptions, progress azdext.ProgressFunc) (*azdext.ProvisioningDestroyResult, error) {
	found, err := p.existing(ctx)
	if err != nil {
		return nil, err
	}
	targets := p.present(found)
	if len(targets) > 0 && !options.Force {
		listed := make([]string, len(targets))
		for i, r := range targets {
			listed[i] = string(r.kind) + " " + r.name
		}
		no := false
		yes, err := azdext.Confirm(azdext.ConfirmOptions{
			Message: fmt.Sprintf("Delete %s from storage account %s (%s)?", plural(len(targets), "resource"),
				p.account.name, strings.Join(listed, ", ")),
			DefaultValue: &no,
		})
		if err != nil {
			return nil, err
		}
		if !yes {
			return nil, &azdext.LocalError{
				Message: "the deletion was not confirmed, so nothing was deleted", Code: "not_confirmed",
				Category: azdext.LocalErrorCategoryUser, Suggestion: "run `azd down --force` to delete without asking",
			}
		}
	}
	for _, r := range targets {
		progress(fmt.Sprintf("Deleting %s %s", r.kind, r.name))
		if err := p.account.remove(ctx, r.kind, r.name); err != nil {
			return nil, err
		}
	}
	return &azdext.ProvisioningDestroyResult{InvalidatedEnvKeys: outputKeys}, nil
}

func (p *Provider) EnsureEnv(context.Context) error { return nil }

func (p *Provider) Parameters(context.Context) ([]*azdext.ProvisioningParameter, error) {
	return nil, nil
}

func (p *Provider) PlannedOutputs(context.Context) ([]*azdext.ProvisioningPlannedOutput, error) {
	out := make([]*azdext.ProvisioningPlannedOutput, len(outputKeys))
	for i, name := range outputKeys {
		out[i] = &azdext.ProvisioningPlannedOutput{Name: name}
	}
	return out, nil
}
