package azdext

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	wit "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_1_0_types"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

// fake is a provider whose answers each test sets.
type fake struct {
	options  *ProvisioningOptions
	deploy   *ProvisioningDeployResult
	err      error
	panicVal any
}

func (f *fake) Initialize(_ context.Context, _ string, o *ProvisioningOptions) error {
	f.options = o
	return f.err
}
func (f *fake) State(context.Context, *ProvisioningStateOptions) (*ProvisioningStateResult, error) {
	return nil, f.err
}
func (f *fake) Deploy(_ context.Context, progress ProgressFunc) (*ProvisioningDeployResult, error) {
	if f.panicVal != nil {
		panic(f.panicVal)
	}
	progress("step one")
	return f.deploy, f.err
}
func (f *fake) Preview(context.Context, ProgressFunc) (*ProvisioningPreviewResult, error) {
	return nil, nil
}
func (f *fake) Destroy(context.Context, *ProvisioningDestroyOptions, ProgressFunc) (*ProvisioningDestroyResult, error) {
	return &ProvisioningDestroyResult{InvalidatedEnvKeys: []string{"A"}}, nil
}
func (f *fake) EnsureEnv(context.Context) error { return f.err }
func (f *fake) Parameters(context.Context) ([]*ProvisioningParameter, error) {
	return []*ProvisioningParameter{{Name: "p", Secret: true, Value: "s"}, nil}, nil
}
func (f *fake) PlannedOutputs(context.Context) ([]*ProvisioningPlannedOutput, error) {
	return []*ProvisioningPlannedOutput{{Name: "B"}}, nil
}

func serve(t *testing.T, f *fake) (exports, *[]string) {
	t.Helper()
	var reported []string
	Register(func() ProvisioningProvider { return f })
	t.Cleanup(func() { Register(nil) })
	return exports{report: func(m string) { reported = append(reported, m) }}, &reported
}

func TestNothingRegisteredIsAnErrorNotACrash(t *testing.T) {
	Register(nil)
	r := exports{}.Initialize("/p", wit.ProvisioningOptions{})
	if !r.IsErr() || !strings.Contains(r.Err().Message, "registered no provider") {
		t.Fatalf("%+v", r)
	}
	if d := r.Err().Detail.Some().Local(); d.Code != "no_provider" || d.Category != "internal" {
		t.Fatalf("%+v", d)
	}
	s := exports{}.State(wit.StateOptions{})
	if !s.IsErr() || s.Err().Detail.Some().Local().Code != "not_initialized" {
		t.Fatalf("%+v", s)
	}
}

func TestOptionsArriveDecodedAndOutputsLeaveSorted(t *testing.T) {
	f := &fake{deploy: &ProvisioningDeployResult{
		Deployment: &ProvisioningDeployment{Outputs: map[string]*ProvisioningOutputParameter{
			"ZED": {Type: "string", Value: "z"}, "ALPHA": {Type: "number", Value: "1"}, "NIL": nil,
		}},
		SkippedReason: ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE,
	}}
	e, reported := serve(t, f)
	init := e.Initialize("/p", wit.ProvisioningOptions{
		Config:     `{"name":"world","n":2}`,
		VirtualEnv: []witTypes.Tuple2[string, string]{{F0: "K", F1: "V"}},
	})
	if init.IsErr() {
		t.Fatal(init.Err().Message)
	}
	if f.options.Config["name"] != "world" || f.options.Config["n"] != float64(2) || f.options.VirtualEnv["K"] != "V" {
		t.Fatalf("%+v", f.options)
	}
	var decoded struct{ Name string }
	if err := f.options.DecodeConfig(&decoded); err != nil || decoded.Name != "world" {
		t.Fatalf("%v %+v", err, decoded)
	}
	r := e.Deploy()
	if r.IsErr() {
		t.Fatal(r.Err().Message)
	}
	var keys []string
	for _, o := range r.Ok().Deployment.Outputs {
		keys = append(keys, o.F0)
	}
	if strings.Join(keys, ",") != "ALPHA,NIL,ZED" || r.Ok().SkippedReason != wit.SkippedReason_DeploymentState {
		t.Fatalf("%v %+v", keys, r.Ok())
	}
	if len(*reported) != 1 || (*reported)[0] != "step one" {
		t.Fatalf("progress %q", *reported)
	}
	params := e.Parameters().Ok()
	if len(params) != 1 || !params[0].Secret {
		t.Fatalf("%+v", params)
	}
}

func TestAConfigThatIsNotAnObjectIsRefused(t *testing.T) {
	e, _ := serve(t, &fake{})
	r := e.Initialize("/p", wit.ProvisioningOptions{Config: `[1]`})
	if !r.IsErr() || r.Err().Detail.Some().Local().Code != "invalid_config" {
		t.Fatalf("%+v", r)
	}
}

func TestErrorsKeepTheirStructureAndChain(t *testing.T) {
	f := &fake{}
	e, _ := serve(t, f)
	e.Initialize("/p", wit.ProvisioningOptions{})

	f.err = fmt.Errorf("reading settings: %w", &LocalError{
		Message: "no such file", Code: "missing_settings", Category: LocalErrorCategoryUser,
		Suggestion: "create it", Links: []ErrorLink{{URL: "https://example.com", Title: "docs"}},
	})
	got := e.EnsureEnv().Err()
	if got.Message != "reading settings: no such file" || got.Origin != wit.ErrorOrigin_Local ||
		got.Suggestion != "create it" || got.Links[0].Url != "https://example.com" {
		t.Fatalf("%+v", got)
	}
	if d := got.Detail.Some(); d.Tag() != wit.ErrorDetail_Local || d.Local().Code != "missing_settings" || d.Local().Category != "user" {
		t.Fatalf("%+v", d)
	}

	f.err = &ServiceError{Message: "conflict", ErrorCode: "Conflict", StatusCode: 409, ServiceName: "management.azure.com"}
	got = e.EnsureEnv().Err()
	if d := got.Detail.Some(); got.Origin != wit.ErrorOrigin_Service || d.Service().StatusCode != 409 || d.Service().ErrorCode != "Conflict" {
		t.Fatalf("%+v", got)
	}
	back := fromWitError(got)
	var service *ServiceError
	if !errors.As(back, &service) || service.StatusCode != 409 || service.ServiceName != "management.azure.com" {
		t.Fatalf("%+v", back)
	}

	f.err = errors.New("plain")
	got = e.EnsureEnv().Err()
	if got.Message != "plain" || got.Origin != wit.ErrorOrigin_Unspecified || got.Detail.IsSome() {
		t.Fatalf("%+v", got)
	}
}

func TestAPanicBecomesAnInternalError(t *testing.T) {
	e, _ := serve(t, &fake{panicVal: "index out of range"})
	e.Initialize("/p", wit.ProvisioningOptions{})
	r := e.Deploy()
	if !r.IsErr() || !strings.Contains(r.Err().Message, "panicked: index out of range") ||
		r.Err().Detail.Some().Local().Code != "panic" {
		t.Fatalf("%+v", r)
	}
}

func TestNilResultsAreEmptyAnswers(t *testing.T) {
	e, _ := serve(t, &fake{})
	e.Initialize("/p", wit.ProvisioningOptions{})
	if r := e.Deploy(); r.IsErr() || len(r.Ok().Deployment.Outputs) != 0 {
		t.Fatalf("%+v", r)
	}
	if r := e.Preview(); r.IsErr() || r.Ok().Summary != "" {
		t.Fatalf("%+v", r)
	}
	if r := e.State(wit.StateOptions{}); r.IsErr() {
		t.Fatalf("%+v", r)
	}
}

func TestOutsideAComponentAzdIsUnreachableUntilATestHost(t *testing.T) {
	if _, err := EnvironmentName(); !errors.Is(err, ErrNotInComponent) {
		t.Fatalf("%v", err)
	}
	h := &TestHost{Name: "dev", Values: map[string]string{"A": "1"}, Answers: []any{true, "text", 1}}
	SetHost(h)
	defer SetHost(nil)
	if name, _ := EnvironmentName(); name != "dev" {
		t.Fatal(name)
	}
	if v, ok, _ := GetEnvValue("A"); v != "1" || !ok {
		t.Fatal(v, ok)
	}
	if err := SetEnvValue("B", "2"); err != nil || h.Values["B"] != "2" {
		t.Fatal(err, h.Values)
	}
	yes, _ := Confirm(ConfirmOptions{Message: "ok?"})
	text, _ := PromptText(TextOptions{Message: "name?"})
	index, _ := Select(SelectOptions{Message: "which?", Choices: []Choice{{Value: "a"}, {Value: "b"}}})
	if !yes || text != "text" || index != 1 {
		t.Fatal(yes, text, index)
	}
	if _, err := Confirm(ConfirmOptions{Message: "again?"}); err == nil {
		t.Fatal("an unscripted question was answered")
	}
	Logger().With("k", "v").Warn("careful", "n", 3)
	if len(h.Logs) != 1 || h.Logs[0] != "WARN careful k=v n=3" {
		t.Fatalf("%q", h.Logs)
	}
}
