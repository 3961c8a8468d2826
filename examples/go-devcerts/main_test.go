package main

// The provider's lifecycle, natively (go test): a temporary project, azdext.TestHost for azd.

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"azd-wasm-host/azdext"
)

const sample = `{"dir": "certs", "authority": "test CA", "certificates": [
	{"name": "api", "hosts": ["localhost", "api.localtest.me", "127.0.0.1"]},
	{"name": "web", "hosts": ["localhost"]}]}`

func start(t *testing.T, project, configJSON string, answers ...any) *Provider {
	t.Helper()
	azdext.SetHost(&azdext.TestHost{Name: "dev", Answers: answers})
	t.Cleanup(func() { azdext.SetHost(nil) })
	p := &Provider{}
	if err := p.Initialize(context.Background(), project, &azdext.ProvisioningOptions{ConfigJSON: configJSON}); err != nil {
		t.Fatal(err)
	}
	return p
}

func kinds(t *testing.T, p *Provider) string {
	t.Helper()
	r, err := p.Preview(context.Background(), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range r.Preview.Changes {
		out = append(out, c.Name+":"+c.ChangeType)
	}
	return strings.Join(out, " ")
}

func TestTheLifecycleIssuesVerifiableCertificatesAndRemovesThem(t *testing.T) {
	project := t.TempDir()
	ctx := context.Background()
	p := start(t, project, sample)
	if got := kinds(t, p); got != "ca:Create api:Create web:Create" {
		t.Fatal(got)
	}
	var steps []string
	r, err := p.Deploy(ctx, func(m string) { steps = append(steps, m) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Deployment.Outputs["DEVCERTS_COUNT"].Value != "2" || len(steps) != 4 {
		t.Fatalf("%v %q", r.Deployment.Outputs, steps)
	}
	ca, err := loadPair(p.files("certs", "ca"))
	if err != nil {
		t.Fatal(err)
	}
	api, err := loadPair(p.files("certs", "api"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	for _, host := range []string{"api.localtest.me", "127.0.0.1"} {
		if _, err := api.cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if _, err := api.cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "evil.example"}); err == nil {
		t.Error("the api certificate is valid for a host it does not name")
	}
	if info, _ := os.Stat(filepath.Join(project, "certs/api-key.pem")); info.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", info.Mode())
	}
	var listed map[string]struct{ Hosts []string }
	if err := json.Unmarshal([]byte(r.Deployment.Outputs["DEVCERTS_CERTIFICATES"].Value), &listed); err != nil || len(listed["api"].Hosts) != 3 {
		t.Fatalf("%v %v", err, listed)
	}

	// Nothing changed: skipped, and the files stay as they were.
	again, err := p.Deploy(ctx, func(string) {})
	if err != nil || again.SkippedReason != azdext.ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE {
		t.Fatalf("%v %+v", err, again)
	}

	// One certificate changes hosts, one is dropped: only those move.
	p = start(t, project, `{"authority": "test CA", "certificates": [{"name": "api", "hosts": ["localhost"]}]}`)
	if got := kinds(t, p); got != "ca:NoChange api:Modify web:Delete" {
		t.Fatal(got)
	}
	if _, err := p.Deploy(ctx, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(project, "certs/web.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("web.pem: %v", err)
	}
	after, _ := loadPair(p.files("certs", "ca"))
	if fingerprint(after.cert) != fingerprint(ca.cert) {
		t.Fatal("the authority was issued again")
	}

	// A tampered certificate is noticed.
	os.WriteFile(filepath.Join(project, "certs/api.pem"), api.certPEM, 0o644)
	if got := kinds(t, p); got != "ca:NoChange api:Modify" {
		t.Fatal(got)
	}

	// down without --force asks; "no" keeps everything.
	p = start(t, project, sample, false)
	_, err = p.Destroy(ctx, &azdext.ProvisioningDestroyOptions{}, func(string) {})
	var local *azdext.LocalError
	if !errors.As(err, &local) || local.Code != "destroy_not_confirmed" {
		t.Fatalf("%v", err)
	}
	if _, err := os.Stat(filepath.Join(project, "certs/ca.pem")); err != nil {
		t.Fatal(err)
	}
	d, err := p.Destroy(ctx, &azdext.ProvisioningDestroyOptions{Force: true}, func(string) {})
	if err != nil || len(d.InvalidatedEnvKeys) != 5 {
		t.Fatalf("%v %+v", err, d)
	}
	left, _ := os.ReadDir(filepath.Join(project, "certs"))
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestAConfigItCannotUseIsRefused(t *testing.T) {
	azdext.SetHost(&azdext.TestHost{Name: "dev"})
	defer azdext.SetHost(nil)
	for config, want := range map[string]string{
		`{"certificates": []}`: "no certificate",
		`{"dir": "../outside", "certificates": [{"name": "a", "hosts": ["x"]}]}`:           "inside the project",
		`{"certificates": [{"name": "A!", "hosts": ["x"]}]}`:                               "lower-case",
		`{"certificates": [{"name": "a", "hosts": ["not a host"]}]}`:                       "neither a host name",
		`{"certificates": [{"name": "a", "hosts": ["x"]}, {"name": "a", "hosts": ["y"]}]}`: "twice",
		`{"validDays": 1000, "certificates": [{"name": "a", "hosts": ["x"]}]}`:             "397",
	} {
		err := (&Provider{}).Initialize(context.Background(), t.TempDir(), &azdext.ProvisioningOptions{ConfigJSON: config})
		var local *azdext.LocalError
		if !errors.As(err, &local) || local.Code != "invalid_config" || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", config, err)
		}
	}
}
