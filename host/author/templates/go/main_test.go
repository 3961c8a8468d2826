package main

// The provider's own tests run natively: go test ./...

import (
	"context"
	"errors"
	"testing"

	"azd-wasm-host/azdext"
)

func TestDeployGreetsTheConfiguredName(t *testing.T) {
	p := &Provider{}
	options := &azdext.ProvisioningOptions{ConfigJSON: `{"name": "world", "greeting": "Hi"}`}
	if err := p.Initialize(context.Background(), "/project", options); err != nil {
		t.Fatal(err)
	}
	var steps []string
	result, err := p.Deploy(context.Background(), func(m string) { steps = append(steps, m) })
	if err != nil {
		t.Fatal(err)
	}
	if got := result.Deployment.Outputs["GREETING"].Value; got != "Hi, world!" {
		t.Errorf("GREETING = %q", got)
	}
	if len(steps) != 2 {
		t.Errorf("progress = %q", steps)
	}
}

func TestAConfigWithoutANameIsRefused(t *testing.T) {
	err := (&Provider{}).Initialize(context.Background(), "/project", &azdext.ProvisioningOptions{ConfigJSON: `{}`})
	var local *azdext.LocalError
	if !errors.As(err, &local) || local.Code != "invalid_config" {
		t.Fatalf("err = %v", err)
	}
}
