//go:build wasip1

package azdext

// Inside the component: the generated exports call the registered provider
// through convert.go's adapter, and Host is the component's imports.

import (
	"log/slog"
	"time"

	provider "azd-wasm-host/azdext/internal/wit/exports/export_azd_provisioning_0_1_0_provider"
	_ "azd-wasm-host/azdext/internal/wit/exports/wit_exports"
	credentials "azd-wasm-host/azdext/internal/wit/imports/azd_credentials_credentials"
	witlog "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_1_0_log"
	progress "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_1_0_progress"
	environment "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_2_0_environment"
	prompt "azd-wasm-host/azdext/internal/wit/imports/azd_provisioning_0_2_0_prompt"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

var defaultHost Host = componentHost{}

func init() {
	provider.Impl = exports{report: progress.Report}
}

type componentHost struct{}

func (componentHost) Log(level slog.Level, message string) {
	l := witlog.Level_Info
	switch {
	case level < slog.LevelDebug:
		l = witlog.Level_Trace
	case level < slog.LevelInfo:
		l = witlog.Level_Debug
	case level < slog.LevelWarn:
		l = witlog.Level_Info
	case level < slog.LevelError:
		l = witlog.Level_Warn
	default:
		l = witlog.Level_Error
	}
	witlog.Write(l, message)
}

func (componentHost) EnvironmentName() (string, error) {
	r := environment.Name()
	if r.IsErr() {
		return "", fromWitError(r.Err())
	}
	return r.Ok(), nil
}

func (componentHost) GetEnvValue(key string) (string, bool, error) {
	r := environment.GetValue(key)
	if r.IsErr() {
		return "", false, fromWitError(r.Err())
	}
	v := r.Ok()
	return v.SomeOr(""), v.IsSome(), nil
}

func (componentHost) GetEnvValues() (map[string]string, error) {
	r := environment.GetValues()
	if r.IsErr() {
		return nil, fromWitError(r.Err())
	}
	out := make(map[string]string, len(r.Ok()))
	for _, kv := range r.Ok() {
		out[kv.F0] = kv.F1
	}
	return out, nil
}

func (componentHost) SetEnvValue(key, value string) error {
	if r := environment.SetValue(key, value); r.IsErr() {
		return fromWitError(r.Err())
	}
	return nil
}

func (componentHost) Interactive() bool { return prompt.Interactive() }

func (componentHost) Confirm(o ConfirmOptions) (bool, error) {
	r := prompt.Confirm(prompt.ConfirmOptions{Message: o.Message, DefaultValue: optional(o.DefaultValue), HelpMessage: o.HelpMessage})
	if r.IsErr() {
		return false, fromWitError(r.Err())
	}
	return r.Ok(), nil
}

func (componentHost) PromptText(o TextOptions) (string, error) {
	r := prompt.Text(prompt.TextOptions{
		Message: o.Message, DefaultValue: optional(o.DefaultValue), HelpMessage: o.HelpMessage,
		Placeholder: o.Placeholder, Secret: o.Secret, Required: o.Required,
	})
	if r.IsErr() {
		return "", fromWitError(r.Err())
	}
	return r.Ok(), nil
}

func (componentHost) Select(o SelectOptions) (int, error) {
	d := witTypes.None[uint32]()
	if o.DefaultIndex != nil && *o.DefaultIndex >= 0 {
		d = witTypes.Some(uint32(*o.DefaultIndex))
	}
	choices := make([]prompt.Choice, len(o.Choices))
	for i, c := range o.Choices {
		choices[i] = prompt.Choice{Value: c.Value, Label: c.Label}
	}
	r := prompt.Select(prompt.SelectOptions{Message: o.Message, Choices: choices, DefaultIndex: d, HelpMessage: o.HelpMessage})
	if r.IsErr() {
		return 0, fromWitError(r.Err())
	}
	return int(r.Ok()), nil
}

// optional is an answer's default as WIT's option: none when the question has none.
func optional[T any](value *T) witTypes.Option[T] {
	if value == nil {
		return witTypes.None[T]()
	}
	return witTypes.Some(*value)
}

func (componentHost) AccessToken(scope string) (AccessToken, error) {
	r := credentials.GetToken(scope)
	if r.IsErr() {
		e := r.Err()
		return AccessToken{}, &LocalError{Message: e.Message, Code: e.Code, Category: LocalErrorCategoryAuth}
	}
	t := r.Ok()
	return AccessToken{Token: t.Token, ExpiresOn: time.Unix(int64(t.ExpiresOn), 0).UTC()}, nil
}
