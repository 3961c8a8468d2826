// devcerts: an azd provisioning provider in Go that provisions a local certificate authority
// and TLS certificates for development, run by azd-wasm-host as a WebAssembly component.
//
// It uses Go's own crypto/x509 inside the sandbox, and reaches only the folder azure.yaml
// names (granted in provider.toml) and the azd environment's folder, where it keeps its state.
// See README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"azd-wasm-host/azdext"
)

func init() {
	azdext.Register(func() azdext.ProvisioningProvider { return &Provider{} })
}

// main is never called: a component runs its init functions, then answers azd.
func main() {}

// Provider is the devcerts provider.
type Provider struct {
	project   string
	cfg       config
	statePath string
}

var outputNames = []string{"DEVCERTS_DIR", "DEVCERTS_CA_CERT", "DEVCERTS_CA_SHA256", "DEVCERTS_CERTIFICATES", "DEVCERTS_COUNT"}

func invalidState(path string, err error) error {
	return &azdext.LocalError{
		Message:    fmt.Sprintf("the devcerts state %s is unreadable: %v", path, err),
		Code:       "invalid_state",
		Category:   azdext.LocalErrorCategoryLocal,
		Suggestion: "Remove the file and run azd provision again: the certificates are issued anew.",
	}
}

func (p *Provider) Initialize(ctx context.Context, projectPath string, options *azdext.ProvisioningOptions) error {
	if err := options.DecodeConfig(&p.cfg); err != nil {
		return err
	}
	if err := p.cfg.check(); err != nil {
		return err
	}
	env, err := azdext.EnvironmentName()
	if err != nil {
		return fmt.Errorf("devcerts keeps its state in the azd environment's folder: %w", err)
	}
	p.project = filepath.Clean(projectPath)
	p.statePath = filepath.Join(p.project, ".azure", env, "devcerts-state.json")
	azdext.Logger().Debug("devcerts initialized", "project", p.project, "dir", p.cfg.Dir, "certificates", len(p.cfg.Certificates))
	return nil
}

func (p *Provider) outputs(st *state) map[string]*azdext.ProvisioningOutputParameter {
	if st.Authority == nil {
		return map[string]*azdext.ProvisioningOutputParameter{}
	}
	type entry struct {
		Cert     string   `json:"cert"`
		Key      string   `json:"key"`
		Hosts    []string `json:"hosts"`
		NotAfter string   `json:"notAfter"`
	}
	certs := map[string]entry{}
	for name, c := range st.Certificates {
		certs[name] = entry{
			Cert: st.Dir + "/" + name + ".pem", Key: st.Dir + "/" + name + "-key.pem",
			Hosts: c.Hosts, NotAfter: c.NotAfter.UTC().Format(time.RFC3339),
		}
	}
	listed, _ := json.Marshal(certs)
	return map[string]*azdext.ProvisioningOutputParameter{
		"DEVCERTS_DIR":          {Type: "string", Value: st.Dir},
		"DEVCERTS_CA_CERT":      {Type: "string", Value: st.Dir + "/ca.pem"},
		"DEVCERTS_CA_SHA256":    {Type: "string", Value: st.Authority.SHA256},
		"DEVCERTS_CERTIFICATES": {Type: "object", Value: string(listed)},
		"DEVCERTS_COUNT":        {Type: "number", Value: fmt.Sprint(len(st.Certificates))},
	}
}

func (p *Provider) State(ctx context.Context, options *azdext.ProvisioningStateOptions) (*azdext.ProvisioningStateResult, error) {
	st, err := p.loadState()
	if err != nil {
		return nil, err
	}
	var resources []*azdext.ProvisioningResource
	if st.Authority != nil {
		resources = append(resources, &azdext.ProvisioningResource{Id: "devcerts/" + st.Dir + "/ca"})
	}
	for _, name := range sortedNames(st.Certificates) {
		resources = append(resources, &azdext.ProvisioningResource{Id: "devcerts/" + st.Dir + "/" + name})
	}
	return &azdext.ProvisioningStateResult{State: &azdext.ProvisioningState{Outputs: p.outputs(st), Resources: resources}}, nil
}

func (p *Provider) Preview(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningPreviewResult, error) {
	st, err := p.loadState()
	if err != nil {
		return nil, err
	}
	progress("Comparing " + p.cfg.Dir + " with the configuration")
	counts := map[string]int{}
	var changes []*azdext.ProvisioningDeploymentPreviewChange
	for _, c := range p.plan(st, time.Now()) {
		counts[c.Kind]++
		kind := "devcerts/certificate"
		if c.Name == "ca" {
			kind = "devcerts/authority"
		}
		changes = append(changes, &azdext.ProvisioningDeploymentPreviewChange{
			ChangeType: c.Kind, ResourceId: "devcerts/" + p.cfg.Dir + "/" + c.Name, ResourceType: kind, Name: c.Name,
		})
	}
	summary := fmt.Sprintf("devcerts would create %d, modify %d and delete %d (%d unchanged)",
		counts["Create"], counts["Modify"], counts["Delete"], counts["NoChange"])
	// azd shows a provider's changes only for Azure resources; the summary reaches the
	// user as the last progress line.
	progress(summary)
	return &azdext.ProvisioningPreviewResult{Preview: &azdext.ProvisioningDeploymentPreview{
		Summary: summary,
		Outputs: p.outputs(st),
		Changes: changes,
	}}, nil
}

func (p *Provider) Deploy(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningDeployResult, error) {
	st, err := p.loadState()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	changes := p.plan(st, now)
	if !hasWork(changes) {
		progress("Every certificate is current")
		return &azdext.ProvisioningDeployResult{
			Deployment:    &azdext.ProvisioningDeployment{Outputs: p.outputs(st)},
			SkippedReason: azdext.ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE,
		}, nil
	}
	if err := p.apply(st, changes, now, progress); err != nil {
		return nil, err
	}
	progress(fmt.Sprintf("%d certificates in %s, trusted through %s/ca.pem", len(st.Certificates), st.Dir, st.Dir))
	return &azdext.ProvisioningDeployResult{Deployment: &azdext.ProvisioningDeployment{Outputs: p.outputs(st)}}, nil
}

func hasWork(changes []change) bool {
	for _, c := range changes {
		if c.Kind != "NoChange" {
			return true
		}
	}
	return false
}

// apply carries out the plan, recording each step in the state as it lands.
func (p *Provider) apply(st *state, changes []change, now time.Time, progress azdext.ProgressFunc) error {
	if err := os.MkdirAll(filepath.Join(p.project, p.cfg.Dir), 0o755); err != nil {
		return &azdext.LocalError{
			Message:    fmt.Sprintf("cannot create %s: %v", p.cfg.Dir, err),
			Code:       "dir_not_writable",
			Category:   azdext.LocalErrorCategoryLocal,
			Suggestion: "devcerts writes only where provider.toml's [policy] fs grants read-write: grant `" + p.cfg.Dir + "` there, or keep `dir: certs`.",
		}
	}
	for _, c := range changes {
		if c.Kind == "Delete" {
			progress("Removing " + c.Name + " (" + c.Why + ")")
			if err := p.remove(st.Dir, c.Name); err != nil {
				return err
			}
			delete(st.Certificates, c.Name)
		}
	}
	var ca *pair
	var err error
	if changes[0].Kind == "NoChange" {
		ca, err = loadPair(p.files(p.cfg.Dir, "ca"))
	} else {
		progress("Creating the certificate authority \"" + p.cfg.Authority + "\" (" + changes[0].Why + ")")
		ca, err = newAuthority(p.cfg.Authority, now)
		if err == nil {
			err = p.write("ca", ca)
		}
	}
	if err != nil {
		return err
	}
	st.Dir = p.cfg.Dir
	st.Authority = &issued{Subject: p.cfg.Authority, SHA256: fingerprint(ca.cert), NotAfter: ca.cert.NotAfter}
	for i, c := range p.cfg.Certificates {
		if changes[i+1].Kind == "NoChange" {
			continue
		}
		progress("Issuing " + c.Name + " for " + strings.Join(c.Hosts, ", ") + " (" + changes[i+1].Why + ")")
		leaf, err := newLeaf(ca, c, p.cfg.ValidDays, now)
		if err == nil {
			err = p.write(c.Name, leaf)
		}
		if err != nil {
			return err
		}
		st.Certificates[c.Name] = &issued{Hosts: c.Hosts, SHA256: fingerprint(leaf.cert), NotAfter: leaf.cert.NotAfter}
	}
	return p.saveState(st)
}

func (p *Provider) write(name string, pr *pair) error {
	certPath, keyPath := p.files(p.cfg.Dir, name)
	if err := writeFile(keyPath, pr.keyPEM, 0o600); err != nil {
		return err
	}
	return writeFile(certPath, pr.certPEM, 0o644)
}

func (p *Provider) remove(dir, name string) error {
	certPath, keyPath := p.files(dir, name)
	for _, f := range []string{certPath, keyPath} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (p *Provider) Destroy(ctx context.Context, options *azdext.ProvisioningDestroyOptions, progress azdext.ProgressFunc) (*azdext.ProvisioningDestroyResult, error) {
	st, err := p.loadState()
	if err != nil {
		return nil, err
	}
	done := &azdext.ProvisioningDestroyResult{InvalidatedEnvKeys: outputNames}
	if st.Authority == nil {
		progress("Nothing to remove: devcerts issued nothing in this environment")
		return done, nil
	}
	if !options.Force {
		no := false
		yes, err := azdext.Confirm(azdext.ConfirmOptions{
			Message:      fmt.Sprintf("Remove the certificate authority and %d certificates under %s?", len(st.Certificates), st.Dir),
			DefaultValue: &no,
			HelpMessage:  "Clients that trust " + st.Dir + "/ca.pem stop trusting anything devcerts issues later.",
		})
		if err != nil {
			return nil, err
		}
		if !yes {
			return nil, &azdext.LocalError{
				Message: "nothing was removed", Code: "destroy_not_confirmed", Category: azdext.LocalErrorCategoryUser,
				Suggestion: "Run azd down --force to remove the certificates without being asked.",
			}
		}
	}
	for _, name := range append(sortedNames(st.Certificates), "ca") {
		progress("Removing " + name)
		if err := p.remove(st.Dir, name); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(p.statePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return done, nil
}

func (p *Provider) EnsureEnv(ctx context.Context) error { return nil }

func (p *Provider) Parameters(ctx context.Context) ([]*azdext.ProvisioningParameter, error) {
	return []*azdext.ProvisioningParameter{
		{Name: "dir", Value: p.cfg.Dir},
		{Name: "authority", Value: p.cfg.Authority},
		{Name: "validDays", Value: fmt.Sprint(p.cfg.ValidDays)},
	}, nil
}

func (p *Provider) PlannedOutputs(ctx context.Context) ([]*azdext.ProvisioningPlannedOutput, error) {
	out := make([]*azdext.ProvisioningPlannedOutput, len(outputNames))
	for i, n := range outputNames {
		out[i] = &azdext.ProvisioningPlannedOutput{Name: n}
	}
	return out, nil
}

func sortedNames(m map[string]*issued) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
