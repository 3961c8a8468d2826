package azdext

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Host is how the SDK reaches azd. Inside a component it is the component's
// imports (each refused by the host unless the manifest grants it); outside,
// the functions below return ErrNotInComponent until a test calls SetHost
// (TestHost is a ready-made one).
type Host interface {
	Log(level slog.Level, message string)
	EnvironmentName() (string, error)
	GetEnvValue(key string) (value string, ok bool, err error)
	GetEnvValues() (map[string]string, error)
	SetEnvValue(key, value string) error
	Interactive() bool
	Confirm(options ConfirmOptions) (bool, error)
	PromptText(options TextOptions) (string, error)
	Select(options SelectOptions) (int, error)
	AccessToken(scope string) (AccessToken, error)
}

var current struct {
	sync.RWMutex
	host Host
}

// SetHost replaces the host (tests); nil restores the default.
func SetHost(h Host) {
	current.Lock()
	defer current.Unlock()
	current.host = h
}

func host() Host {
	current.RLock()
	defer current.RUnlock()
	if current.host != nil {
		return current.host
	}
	return defaultHost
}

// ConfirmOptions is a yes/no question (azd's PromptService).
type ConfirmOptions struct {
	Message string
	// DefaultValue is the answer under --no-prompt; nil fails there.
	DefaultValue *bool
	HelpMessage  string
}

// TextOptions is a question with a typed answer.
type TextOptions struct {
	Message      string
	DefaultValue *string
	HelpMessage  string
	Placeholder  string
	// Secret hides the answer as it is typed.
	Secret   bool
	Required bool
}

// Choice is one answer of a Select.
type Choice struct {
	Value string
	Label string
}

// SelectOptions is a question with a list of answers.
type SelectOptions struct {
	Message      string
	Choices      []Choice
	DefaultIndex *int
	HelpMessage  string
}

// AccessToken is a Microsoft Entra token azd gave for one scope.
type AccessToken struct {
	Token     string
	ExpiresOn time.Time
}

// EnvironmentName is the name of azd's environment for this command.
// Needs `[policy.azd] environment = "read"`.
func EnvironmentName() (string, error) { return host().EnvironmentName() }

// GetEnvValue is one value of azd's environment; ok is false when it is not set.
// Needs `[policy.azd] environment = "read"`.
func GetEnvValue(key string) (value string, ok bool, err error) { return host().GetEnvValue(key) }

// GetEnvValues is every value of azd's environment.
// Needs `[policy.azd] environment = "read"`.
func GetEnvValues() (map[string]string, error) { return host().GetEnvValues() }

// SetEnvValue sets a value; azd saves it to the environment's .env.
// Needs `[policy.azd] environment = "read-write"`.
func SetEnvValue(key, value string) error { return host().SetEnvValue(key, value) }

// Interactive tells whether azd can ask the user (false under --no-prompt).
func Interactive() bool { return host().Interactive() }

// Confirm asks a yes/no question on azd's terminal. Needs `[policy.azd] prompt = true`.
func Confirm(options ConfirmOptions) (bool, error) { return host().Confirm(options) }

// PromptText asks for a line of text. Needs `[policy.azd] prompt = true`.
func PromptText(options TextOptions) (string, error) { return host().PromptText(options) }

// Select asks for one of options.Choices and returns its index.
// Needs `[policy.azd] prompt = true`.
func Select(options SelectOptions) (int, error) { return host().Select(options) }

// GetAccessToken asks azd for a token for scope (for example
// "https://storage.azure.com/.default"). Needs the scope under
// `[policy.azd] credential_scopes`. The host never logs the token.
func GetAccessToken(scope string) (AccessToken, error) { return host().AccessToken(scope) }

// Logger writes to the host's log (azd-wasm-host's stderr under --debug),
// never to the user's terminal.
func Logger() *slog.Logger { return slog.New(logHandler{}) }

type logHandler struct {
	attrs []slog.Attr
	group string
}

func (logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	message := r.Message
	add := func(a slog.Attr) bool {
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		message += " " + key + "=" + a.Value.String()
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	host().Log(r.Level, message)
	return nil
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{attrs: append(append([]slog.Attr{}, h.attrs...), attrs...), group: h.group}
}

func (h logHandler) WithGroup(name string) slog.Handler {
	if h.group != "" {
		name = h.group + "." + name
	}
	return logHandler{attrs: h.attrs, group: name}
}

// outside is the host outside a component: nothing reaches azd.
type outside struct{}

func (outside) Log(slog.Level, string)                   {}
func (outside) EnvironmentName() (string, error)         { return "", ErrNotInComponent }
func (outside) GetEnvValue(string) (string, bool, error) { return "", false, ErrNotInComponent }
func (outside) GetEnvValues() (map[string]string, error) { return nil, ErrNotInComponent }
func (outside) SetEnvValue(string, string) error         { return ErrNotInComponent }
func (outside) Interactive() bool                        { return false }
func (outside) Confirm(ConfirmOptions) (bool, error)     { return false, ErrNotInComponent }
func (outside) PromptText(TextOptions) (string, error)   { return "", ErrNotInComponent }
func (outside) Select(SelectOptions) (int, error)        { return 0, ErrNotInComponent }
func (outside) AccessToken(string) (AccessToken, error)  { return AccessToken{}, ErrNotInComponent }
