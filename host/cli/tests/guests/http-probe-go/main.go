// http-probe in Go: the Go route of the host's [policy.http] tests (host/cli/tests/http.rs).
//
// The same config and outputs as the Rust and Python probes: deploy sends each request
// infra.config.requests lists through plain net/http (the SDK's transport over wasi:http) and
// reports what came back in RESULTS ({status, bytes, body} or {error}); with token_scope it
// first asks azd for an access token and sends it as each request's bearer, and TOKEN says how
// that went (expires_on and length, or code and error; never the token). With fail_on_error
// deploy fails on the first failure, with the transport's error as it is. Go's own options: a
// request's timeout_ms (its context's deadline), chunked (its body sent without a length) and
// left_open (its response neither read nor closed).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"azd-wasm-host/azdext"
	_ "azd-wasm-host/azdext/azdhttp" // net/http through the host
)

func init() {
	azdext.Register(func() azdext.ProvisioningProvider { return &probe{} })
}

func main() {}

type request struct {
	URL    string `json:"url"`
	Method string `json:"method"`
	Body   string `json:"body"`
	// Go's own: the request's context ends after TimeoutMs, a Chunked body is sent without
	// its length (streamed), and a response LeftOpen is neither read nor closed (the
	// collector finds it, and the transport releases it).
	TimeoutMs int  `json:"timeout_ms"`
	Chunked   bool `json:"chunked"`
	LeftOpen  bool `json:"left_open"`
}

type probe struct {
	Requests    []request `json:"requests"`
	FailOnError bool      `json:"fail_on_error"`
	TokenScope  string    `json:"token_scope"`
}

func (p *probe) Initialize(_ context.Context, _ string, options *azdext.ProvisioningOptions) error {
	return options.DecodeConfig(p)
}

func jsonOutput(v any) *azdext.ProvisioningOutputParameter {
	text, _ := json.Marshal(v)
	return &azdext.ProvisioningOutputParameter{Type: "object", Value: string(text)}
}

func (p *probe) Deploy(ctx context.Context, progress azdext.ProgressFunc) (*azdext.ProvisioningDeployResult, error) {
	outputs := map[string]*azdext.ProvisioningOutputParameter{}
	var failures []error
	bearer := ""
	if p.TokenScope != "" {
		token, err := azdext.GetAccessToken(p.TokenScope)
		var local *azdext.LocalError
		switch {
		case errors.As(err, &local):
			outputs["TOKEN"] = jsonOutput(map[string]any{"code": strings.ReplaceAll(local.Code, "_", "-"), "error": local.Message})
			failures = append(failures, err)
		case err != nil:
			outputs["TOKEN"] = jsonOutput(map[string]any{"code": "unknown", "error": err.Error()})
			failures = append(failures, err)
		default:
			outputs["TOKEN"] = jsonOutput(map[string]any{"expires_on": token.ExpiresOn.Unix(), "length": len(token.Token)})
			bearer = "Bearer " + token.Token
		}
	}
	results := []any{}
	for _, r := range p.Requests {
		progress("Requesting " + r.URL)
		result, err := send(ctx, r, bearer)
		if err != nil {
			failures = append(failures, err)
			result = map[string]any{"error": err.Error()}
		}
		results = append(results, result)
	}
	if p.FailOnError && len(failures) > 0 {
		return nil, failures[0]
	}
	outputs["RESULTS"] = &azdext.ProvisioningOutputParameter{Type: "array", Value: mustJSON(results)}
	return &azdext.ProvisioningDeployResult{Deployment: &azdext.ProvisioningDeployment{Outputs: outputs}}, nil
}

func mustJSON(v any) string {
	text, _ := json.Marshal(v)
	return string(text)
}

func send(ctx context.Context, r request, bearer string) (map[string]any, error) {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
		if r.Chunked {
			body = io.MultiReader(body) // hides the length
		}
	}
	if r.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(r.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		return nil, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if r.LeftOpen {
		status := resp.StatusCode
		resp = nil
		runtime.GC()
		runtime.Gosched() // the collector's cleanups run
		return map[string]any{"status": status, "left_open": true}, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	shown := data
	if len(shown) > 200 {
		shown = shown[:200]
	}
	return map[string]any{"status": resp.StatusCode, "bytes": len(data), "body": string(shown)}, nil
}

func (p *probe) State(context.Context, *azdext.ProvisioningStateOptions) (*azdext.ProvisioningStateResult, error) {
	return &azdext.ProvisioningStateResult{State: &azdext.ProvisioningState{}}, nil
}

func (p *probe) Preview(context.Context, azdext.ProgressFunc) (*azdext.ProvisioningPreviewResult, error) {
	return &azdext.ProvisioningPreviewResult{Preview: &azdext.ProvisioningDeploymentPreview{Summary: "http-probe sends requests on deploy only"}}, nil
}

func (p *probe) Destroy(context.Context, *azdext.ProvisioningDestroyOptions, azdext.ProgressFunc) (*azdext.ProvisioningDestroyResult, error) {
	return &azdext.ProvisioningDestroyResult{}, nil
}

func (p *probe) EnsureEnv(context.Context) error { return nil }

func (p *probe) Parameters(context.Context) ([]*azdext.ProvisioningParameter, error) {
	return nil, nil
}

func (p *probe) PlannedOutputs(context.Context) ([]*azdext.ProvisioningPlannedOutput, error) {
	return []*azdext.ProvisioningPlannedOutput{{Name: "RESULTS"}, {Name: "TOKEN"}}, nil
}
