package main

// The provider natively (go test): Shared Key strings and signatures against values computed
// by hand from Azure's rules, and the lifecycle against a small fake of the three services
// (httptest), with azdext.TestHost for azd. The real service is Azurite, in the recorded
// tests (tests/*.test.toml).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"azd-wasm-host/azdext"
)

// Azurite's published key (the same in every Azurite, not a secret).
const azuriteKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

const date = "Fri, 05 Dec 2025 10:00:00 GMT"

func signed(t *testing.T, method, target, contentType string, table bool) *http.Request {
	t.Helper()
	t.Setenv(keyVariable, azuriteKey)
	sign, err := sharedKeySigner("devstoreaccount1")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Ms-Date", date)
	req.Header.Set("X-Ms-Version", storageVersion)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := sign(req, table); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSharedKeySignsWhatAzureStorageChecks(t *testing.T) {
	req := signed(t, "PUT", "http://127.0.0.1:10000/devstoreaccount1/web?restype=container", "", false)
	want := "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + date + "\nx-ms-version:2021-12-02\n/devstoreaccount1/devstoreaccount1/web\nrestype:container"
	if got := stringToSign(req, "devstoreaccount1"); got != want {
		t.Fatalf("%q", got)
	}
	// HMAC-SHA256 with the key, as Python's hmac computes it for the same string.
	if got := req.Header.Get("Authorization"); got != "SharedKey devstoreaccount1:I9Q9pG2g20rDDhZj0DH7lXya9iovQHoAQoLDQLZg/ws=" {
		t.Fatal(got)
	}
	req = signed(t, "POST", "http://127.0.0.1:10002/devstoreaccount1/Tables", "application/json", true)
	if got := req.Header.Get("Authorization"); got != "SharedKey devstoreaccount1:fkBJE0WiM+HLRsch2EFvuKzsUlnKHyatlHcI3nFVtYE=" {
		t.Fatal(got)
	}
}

func TestAMissingOrBrokenKeyIsAnAuthError(t *testing.T) {
	for value, code := range map[string]string{"": "no_storage_key", "not base64!": "invalid_storage_key"} {
		t.Setenv(keyVariable, value)
		_, err := sharedKeySigner("acct")
		var local *azdext.LocalError
		if !errors.As(err, &local) || local.Code != code || local.Category != azdext.LocalErrorCategoryAuth {
			t.Errorf("%q: %v", value, err)
		}
	}
}

func TestTheConfigIsCheckedBeforeAnythingIsSent(t *testing.T) {
	for config, part := range map[string]string{
		`{"account": "Bad_Name"}`:                                  "not a storage account name",
		`{"account": "acct", "auth": "password"}`:                  "auth must be token or shared-key",
		`{"account": "acct", "colour": "blue"}`:                    "unknown field",
		`{"account": "acct", "endpoints": {"file": "http://x"}}`:   "not a service",
		`{"account": "acct", "endpoints": {"blob": "ftp://x"}}`:    "not an http(s) URL",
		`{"account": "acct", "containers": ["Upper"]}`:             "not a valid container name",
		`{"account": "acct", "queues": ["a--b"]}`:                  "not a valid queue name",
		`{"account": "acct", "tables": ["tables"]}`:                "not a valid table name",
		`{"account": "acct", "containers": "web"}`:                 "does not fit",
		`{"account": "acct", "endpoints": {"blob": "http://x?a"}}`: "not an http(s) URL",
	} {
		err := (&Provider{}).Initialize(context.Background(), "/p", &azdext.ProvisioningOptions{ConfigJSON: config})
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("%s: %v", config, err)
		}
	}
}

// fake is the three services of one account, in memory, on one httptest server
// (endpoints /blob/acct, /queue/acct and /table/acct).
type fake struct {
	mu       sync.Mutex
	held     map[kind]map[string]bool
	requests []string
	refuse   bool // answer 403 with Azure Storage's XML error
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI()+" "+strings.SplitN(r.Header.Get("Authorization"), " ", 2)[0])
	if f.refuse {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationFailure</Code><Message>This request is not authorized.`+"\nRequestId:1</Message></Error>")
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3) // service, account, rest
	if len(parts) < 2 || r.Header.Get("X-Ms-Version") == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	k := map[string]kind{"blob": container, "queue": queue, "table": table}[parts[0]]
	if f.held[k] == nil {
		f.held[k] = map[string]bool{}
	}
	held := f.held[k]
	switch {
	case r.Method == "GET" && k == table:
		var items []string
		for _, name := range sortedKeys(held) {
			items = append(items, `{"TableName":"`+name+`"}`)
		}
		fmt.Fprint(w, `{"value":[`+strings.Join(items, ",")+`]}`)
	case r.Method == "GET":
		tag := map[kind]string{container: "Container", queue: "Queue"}[k]
		fmt.Fprint(w, "<EnumerationResults><"+tag+"s>")
		for _, name := range sortedKeys(held) {
			fmt.Fprint(w, "<"+tag+"><Name>"+name+"</Name></"+tag+">")
		}
		fmt.Fprint(w, "</"+tag+"s><NextMarker/></EnumerationResults>")
	case r.Method == "POST" || r.Method == "PUT":
		name := rest
		if k == table {
			body, _ := io.ReadAll(r.Body)
			name = strings.TrimSuffix(strings.TrimPrefix(string(body), `{"TableName":"`), `"}`)
		}
		if held[name] {
			w.WriteHeader(http.StatusConflict)
			return
		}
		held[name] = true
		w.WriteHeader(http.StatusCreated)
	case r.Method == "DELETE":
		name := strings.TrimSuffix(strings.TrimPrefix(rest, "Tables('"), "')")
		if !held[name] {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		delete(held, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unexpected", http.StatusMethodNotAllowed)
	}
}

func start(t *testing.T, f *fake, auth string, answers ...any) *Provider {
	t.Helper()
	server := httptest.NewServer(f)
	t.Cleanup(server.Close)
	t.Setenv(keyVariable, azuriteKey)
	azdext.SetHost(&azdext.TestHost{Name: "dev", Answers: answers, Tokens: map[string]string{storageScope: "tok"}})
	t.Cleanup(func() { azdext.SetHost(nil) })
	config := fmt.Sprintf(`{"account": "acct", "auth": %q, "endpoints": {"blob": "%[2]s/blob/acct", "queue": "%[2]s/queue/acct",
		"table": "%[2]s/table/acct"}, "containers": ["web", "uploads"], "queues": ["jobs"], "tables": ["audit"]}`, auth, server.URL)
	p := &Provider{}
	if err := p.Initialize(context.Background(), "/p", &azdext.ProvisioningOptions{ConfigJSON: config}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheLifecycleCreatesReadsAndDeletesTheDeclaredResources(t *testing.T) {
	f := &fake{held: map[kind]map[string]bool{container: {"other": true}}}
	p := start(t, f, "shared-key", false)
	ctx := context.Background()
	var steps []string
	progress := func(m string) { steps = append(steps, m) }

	preview, err := p.Preview(ctx, progress)
	if err != nil || preview.Preview.Summary != "4 to create, 0 unchanged in storage account acct" {
		t.Fatalf("%v %+v", err, preview)
	}
	deployed, err := p.Deploy(ctx, progress)
	if err != nil || deployed.SkippedReason != azdext.ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_UNSPECIFIED {
		t.Fatalf("%v %+v", err, deployed)
	}
	if got := deployed.Deployment.Outputs["AZURE_STORAGE_CONTAINERS"]; got.Type != "array" || got.Value != `["web","uploads"]` {
		t.Fatalf("%+v", got)
	}
	again, err := p.Deploy(ctx, progress)
	if err != nil || again.SkippedReason != azdext.ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE {
		t.Fatalf("%v %+v", err, again)
	}
	state, err := p.State(ctx, nil)
	if err != nil || len(state.State.Resources) != 4 || !strings.HasSuffix(state.State.Resources[3].Id, "/table/acct/Tables('audit')") {
		t.Fatalf("%v %+v", err, state)
	}
	// Answered "no": nothing goes.
	_, err = p.Destroy(ctx, &azdext.ProvisioningDestroyOptions{}, progress)
	var local *azdext.LocalError
	if !errors.As(err, &local) || local.Code != "not_confirmed" || len(f.held[table]) != 1 {
		t.Fatalf("%v", err)
	}
	if _, err := p.Destroy(ctx, &azdext.ProvisioningDestroyOptions{Force: true}, progress); err != nil {
		t.Fatal(err)
	}
	// What is not declared stays.
	if len(f.held[container]) != 1 || !f.held[container]["other"] || len(f.held[queue])+len(f.held[table]) != 0 {
		t.Fatalf("%v", f.held)
	}
	state, err = p.State(ctx, nil)
	if err != nil || len(state.State.Resources) != 0 || len(state.State.Outputs) != 0 {
		t.Fatalf("%v %+v", err, state)
	}
	want := []string{
		"Comparing 4 declared resources with storage account acct", "4 to create, 0 unchanged in storage account acct",
		"Creating container web", "Creating container uploads", "Creating queue jobs", "Creating table audit",
		"The container web exists", "The container uploads exists", "The queue jobs exists", "The table audit exists",
		"Deleting container web", "Deleting container uploads", "Deleting queue jobs", "Deleting table audit",
	}
	if strings.Join(steps, "|") != strings.Join(want, "|") {
		t.Fatalf("%q", steps)
	}
	for _, r := range f.requests {
		if !strings.HasSuffix(r, " SharedKey") {
			t.Fatalf("unsigned: %s", r)
		}
	}
}

func TestARefusalIsAzdsServiceErrorWithTheServicesCode(t *testing.T) {
	f := &fake{held: map[kind]map[string]bool{}, refuse: true}
	p := start(t, f, "token")
	_, err := p.Preview(context.Background(), func(string) {})
	var service *azdext.ServiceError
	if !errors.As(err, &service) {
		t.Fatalf("%v", err)
	}
	if service.ErrorCode != "AuthorizationFailure" || service.StatusCode != 403 || service.ServiceName != serviceName ||
		service.Message != "Azure Storage: 403 AuthorizationFailure: This request is not authorized." ||
		!strings.Contains(service.Suggestion, "refused the credentials") {
		t.Fatalf("%+v", service)
	}
	if len(f.requests) != 1 || !strings.HasSuffix(f.requests[0], " Bearer") {
		t.Fatalf("%q", f.requests)
	}
}

func TestAnUnreachableServiceNamesItsOrigin(t *testing.T) {
	f := &fake{held: map[kind]map[string]bool{}}
	p := start(t, f, "shared-key")
	p.account.endpoints[queue] = "http://127.0.0.1:1/acct" // nothing listens on port 1
	_, err := p.State(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "listing the queues of storage account acct") ||
		!strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("%v", err)
	}
}
