package azdext

// The adapter between the generated exports (WIT's types) and the provider
// (this package's types): one place that turns maps into sorted lists, nil
// results into empty ones, Go errors into azd's structured errors, and a
// panic into an error instead of a trapped component.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	t "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_1_0_types"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

type exports struct {
	// report sends a progress message to azd for the request being served.
	report func(message string)
}

// call runs f, turning its error or panic into WIT's error.
func call[T any](f func() (T, error)) (result witTypes.Result[T, t.Error]) {
	defer func() {
		if p := recover(); p != nil {
			result = witTypes.Err[T](toWitError(&LocalError{
				Message:  fmt.Sprintf("the provider panicked: %v", p),
				Code:     "panic",
				Category: LocalErrorCategoryInternal,
			}))
		}
	}()
	value, err := f()
	if err != nil {
		return witTypes.Err[T](toWitError(err))
	}
	return witTypes.Ok[T, t.Error](value)
}

func (e exports) progress() ProgressFunc {
	return func(message string) {
		if e.report != nil {
			e.report(message)
		}
	}
}

func (e exports) Initialize(projectPath string, o t.ProvisioningOptions) witTypes.Result[witTypes.Unit, t.Error] {
	return call(func() (witTypes.Unit, error) {
		options, err := fromWitOptions(o)
		if err != nil {
			return witTypes.Unit{}, err
		}
		p, err := instance(true)
		if err != nil {
			return witTypes.Unit{}, err
		}
		return witTypes.Unit{}, p.Initialize(context.Background(), projectPath, options)
	})
}

func (e exports) State(o t.StateOptions) witTypes.Result[t.ProvisioningState, t.Error] {
	return call(func() (t.ProvisioningState, error) {
		p, err := instance(false)
		if err != nil {
			return t.ProvisioningState{}, err
		}
		r, err := p.State(context.Background(), &ProvisioningStateOptions{Hint: o.Hint})
		if err != nil || r == nil || r.State == nil {
			return t.ProvisioningState{Outputs: nil, Resources: nil}, err
		}
		resources := make([]t.Resource, 0, len(r.State.Resources))
		for _, res := range r.State.Resources {
			if res != nil {
				resources = append(resources, t.Resource{Id: res.Id})
			}
		}
		return t.ProvisioningState{Outputs: toWitOutputs(r.State.Outputs), Resources: resources}, nil
	})
}

func (e exports) Deploy() witTypes.Result[t.DeployResult, t.Error] {
	return call(func() (t.DeployResult, error) {
		p, err := instance(false)
		if err != nil {
			return t.DeployResult{}, err
		}
		r, err := p.Deploy(context.Background(), e.progress())
		if err != nil || r == nil {
			return t.DeployResult{}, err
		}
		out := t.DeployResult{SkippedReason: t.SkippedReason_Unspecified}
		if r.SkippedReason == ProvisioningSkippedReason_PROVISIONING_SKIPPED_REASON_DEPLOYMENT_STATE {
			out.SkippedReason = t.SkippedReason_DeploymentState
		}
		if r.Deployment != nil {
			out.Deployment = t.Deployment{
				Parameters: toWitInputs(r.Deployment.Parameters),
				Outputs:    toWitOutputs(r.Deployment.Outputs),
			}
		}
		return out, nil
	})
}

func (e exports) Preview() witTypes.Result[t.DeploymentPreview, t.Error] {
	return call(func() (t.DeploymentPreview, error) {
		p, err := instance(false)
		if err != nil {
			return t.DeploymentPreview{}, err
		}
		r, err := p.Preview(context.Background(), e.progress())
		if err != nil || r == nil || r.Preview == nil {
			return t.DeploymentPreview{}, err
		}
		changes := make([]t.PreviewChange, 0, len(r.Preview.Changes))
		for _, c := range r.Preview.Changes {
			if c != nil {
				changes = append(changes, t.PreviewChange{
					ChangeType: c.ChangeType, ResourceId: c.ResourceId,
					ResourceType: c.ResourceType, Name: c.Name,
				})
			}
		}
		return t.DeploymentPreview{
			Summary:    r.Preview.Summary,
			Parameters: toWitInputs(r.Preview.Parameters),
			Outputs:    toWitOutputs(r.Preview.Outputs),
			Changes:    changes,
		}, nil
	})
}

func (e exports) Destroy(o t.DestroyOptions) witTypes.Result[t.DestroyResult, t.Error] {
	return call(func() (t.DestroyResult, error) {
		p, err := instance(false)
		if err != nil {
			return t.DestroyResult{}, err
		}
		options := &ProvisioningDestroyOptions{Force: o.Force, Purge: o.Purge}
		r, err := p.Destroy(context.Background(), options, e.progress())
		if err != nil || r == nil {
			return t.DestroyResult{}, err
		}
		return t.DestroyResult{InvalidatedEnvKeys: r.InvalidatedEnvKeys}, nil
	})
}

func (e exports) EnsureEnv() witTypes.Result[witTypes.Unit, t.Error] {
	return call(func() (witTypes.Unit, error) {
		p, err := instance(false)
		if err != nil {
			return witTypes.Unit{}, err
		}
		return witTypes.Unit{}, p.EnsureEnv(context.Background())
	})
}

func (e exports) Parameters() witTypes.Result[[]t.Parameter, t.Error] {
	return call(func() ([]t.Parameter, error) {
		p, err := instance(false)
		if err != nil {
			return nil, err
		}
		params, err := p.Parameters(context.Background())
		if err != nil {
			return nil, err
		}
		out := make([]t.Parameter, 0, len(params))
		for _, q := range params {
			if q != nil {
				out = append(out, t.Parameter{
					Name: q.Name, Secret: q.Secret, Value: q.Value, EnvVarMapping: q.EnvVarMapping,
					LocalPrompt: q.LocalPrompt, UsingEnvVarMapping: q.UsingEnvVarMapping,
				})
			}
		}
		return out, nil
	})
}

func (e exports) PlannedOutputs() witTypes.Result[[]t.PlannedOutput, t.Error] {
	return call(func() ([]t.PlannedOutput, error) {
		p, err := instance(false)
		if err != nil {
			return nil, err
		}
		planned, err := p.PlannedOutputs(context.Background())
		if err != nil {
			return nil, err
		}
		out := make([]t.PlannedOutput, 0, len(planned))
		for _, o := range planned {
			if o != nil {
				out = append(out, t.PlannedOutput{Name: o.Name})
			}
		}
		return out, nil
	})
}

func fromWitOptions(o t.ProvisioningOptions) (*ProvisioningOptions, error) {
	options := &ProvisioningOptions{
		Provider:              o.Provider,
		Path:                  o.Path,
		Module:                o.Module,
		DeploymentStacks:      fromPairs(o.DeploymentStacks),
		IgnoreDeploymentState: o.IgnoreDeploymentState,
		ConfigJSON:            o.Config,
		Name:                  o.Name,
		VirtualEnv:            fromPairs(o.VirtualEnv),
		Config:                map[string]any{},
	}
	if o.Config != "" {
		if err := json.Unmarshal([]byte(o.Config), &options.Config); err != nil {
			return nil, &LocalError{
				Message:    "the provider's config is not a JSON object: " + err.Error(),
				Code:       "invalid_config",
				Category:   LocalErrorCategoryValidation,
				Suggestion: "Check the `infra.config` section of azure.yaml.",
			}
		}
	}
	return options, nil
}

func fromPairs(pairs []witTypes.Tuple2[string, string]) map[string]string {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.F0] = p.F1
	}
	return out
}

// sortedPairs is a map as WIT's list of pairs, sorted by key (the same answer every time);
// a nil value is converted as the zero parameter, which the host then refuses by name.
func sortedPairs[P any, W any](m map[string]*P, convert func(P) W) []witTypes.Tuple2[string, W] {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]witTypes.Tuple2[string, W], 0, len(m))
	for _, k := range keys {
		var v W
		if p := m[k]; p != nil {
			v = convert(*p)
		}
		out = append(out, witTypes.Tuple2[string, W]{F0: k, F1: v})
	}
	return out
}

func toWitOutputs(m map[string]*ProvisioningOutputParameter) []witTypes.Tuple2[string, t.OutputParameter] {
	return sortedPairs(m, func(p ProvisioningOutputParameter) t.OutputParameter {
		return t.OutputParameter{Type: p.Type, Value: p.Value}
	})
}

func toWitInputs(m map[string]*ProvisioningInputParameter) []witTypes.Tuple2[string, t.InputParameter] {
	return sortedPairs(m, func(p ProvisioningInputParameter) t.InputParameter {
		return t.InputParameter{Type: p.Type, DefaultValue: p.DefaultValue, Value: p.Value}
	})
}

func toWitLinks(links []ErrorLink) []t.ErrorLink {
	out := make([]t.ErrorLink, len(links))
	for i, l := range links {
		out[i] = t.ErrorLink{Url: l.URL, Title: l.Title}
	}
	return out
}

// toWitError is azd's WrapError for the component: a LocalError or
// ServiceError anywhere in err's chain gives its detail, and an HTTPError a
// local one (category dependency, code http_<its code>); the message is err's
// whole text, without the query of a URL http.Client put in it (a SAS
// signature, say).
func toWitError(err error) t.Error {
	var local *LocalError
	var service *ServiceError
	var transport *HTTPError
	switch {
	case errors.As(err, &local):
		return t.Error{
			Message: errorText(err), Origin: t.ErrorOrigin_Local, Suggestion: local.Suggestion,
			Links: toWitLinks(local.Links),
			Detail: witTypes.Some(t.MakeErrorDetailLocal(t.LocalError{
				Code: local.Code, Category: string(local.Category),
			})),
		}
	case errors.As(err, &service):
		return t.Error{
			Message: errorText(err), Origin: t.ErrorOrigin_Service, Suggestion: service.Suggestion,
			Links: toWitLinks(service.Links),
			Detail: witTypes.Some(t.MakeErrorDetailService(t.ServiceError{
				ErrorCode: service.ErrorCode, StatusCode: int32(service.StatusCode), ServiceName: service.ServiceName,
			})),
		}
	case errors.As(err, &transport):
		return t.Error{
			Message: errorText(err), Origin: t.ErrorOrigin_Local, Suggestion: transport.suggestion(),
			Links: []t.ErrorLink{},
			Detail: witTypes.Some(t.MakeErrorDetailLocal(t.LocalError{
				Code:     "http_" + strings.ReplaceAll(transport.Code, "-", "_"),
				Category: string(LocalErrorCategoryDependency),
			})),
		}
	default:
		text := errorText(err)
		suggestion := ""
		if strings.Contains(text, "dial tcp ") {
			// Go's own transport: the sandbox gives it no sockets.
			suggestion = noTransport
		}
		return t.Error{Message: text, Origin: t.ErrorOrigin_Unspecified, Suggestion: suggestion, Detail: witTypes.None[t.ErrorDetail]()}
	}
}

// noTransport is what to do when net/http dialled for itself inside the component.
const noTransport = "Inside the component Go's own HTTP transport cannot connect: add " +
	"`import _ \"azd-wasm-host/azdext/azdhttp\"` to the provider's main package, which sends " +
	"net/http's requests through the host (to the origins [policy.http] allow grants)."

// errorText is err's text, with the URL of a *url.Error in its chain shown without its query.
func errorText(err error) string {
	text := err.Error()
	var failed *url.Error
	if errors.As(err, &failed) && failed.URL != withoutQuery(failed.URL) {
		text = strings.ReplaceAll(text, failed.URL, withoutQuery(failed.URL)+"?…")
	}
	return text
}

// fromWitError is an error azd (through the host) returned to the provider.
func fromWitError(e t.Error) error {
	links := make([]ErrorLink, len(e.Links))
	for i, l := range e.Links {
		links[i] = ErrorLink{URL: l.Url, Title: l.Title}
	}
	if e.Detail.IsSome() {
		d := e.Detail.Some()
		if d.Tag() == t.ErrorDetail_Service {
			s := d.Service()
			return &ServiceError{
				Message: e.Message, ErrorCode: s.ErrorCode, StatusCode: int(s.StatusCode),
				ServiceName: s.ServiceName, Suggestion: e.Suggestion, Links: links,
			}
		}
		l := d.Local()
		return &LocalError{
			Message: e.Message, Code: l.Code, Category: LocalErrorCategory(l.Category),
			Suggestion: e.Suggestion, Links: links,
		}
	}
	return &LocalError{Message: e.Message, Suggestion: e.Suggestion, Links: links}
}
