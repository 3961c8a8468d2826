package azdext

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"
)

// TestHost is a Host for a provider's own tests (go test, outside a
// component): an in-memory environment, scripted answers, and the log kept.
type TestHost struct {
	mu sync.Mutex
	// Name is the environment's name.
	Name string
	// Values is the environment; SetEnvValue writes here.
	Values map[string]string
	// Answers are the prompts' answers, in order: bool for Confirm, string
	// for PromptText, int for Select. A question without one fails.
	Answers []any
	// Tokens maps a scope to its token.
	Tokens map[string]string
	// Logs keeps every log line, as "LEVEL message".
	Logs []string
}

func (h *TestHost) Log(level slog.Level, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Logs = append(h.Logs, level.String()+" "+message)
}

func (h *TestHost) EnvironmentName() (string, error) { return h.Name, nil }

func (h *TestHost) GetEnvValue(key string) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.Values[key]
	return v, ok && v != "", nil
}

func (h *TestHost) GetEnvValues() (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.Values))
	keys := make([]string, 0, len(h.Values))
	for k := range h.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = h.Values[k]
	}
	return out, nil
}

func (h *TestHost) SetEnvValue(key, value string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.Values == nil {
		h.Values = map[string]string{}
	}
	h.Values[key] = value
	return nil
}

func (h *TestHost) Interactive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.Answers) > 0
}

// answer takes the next scripted answer, which must be a T.
func answer[T any](h *TestHost, question string) (T, error) {
	var zero T
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.Answers) == 0 {
		return zero, &LocalError{Message: "no answer scripted for: " + question, Code: "no_answer", Category: LocalErrorCategoryUser}
	}
	a := h.Answers[0]
	h.Answers = h.Answers[1:]
	typed, ok := a.(T)
	if !ok {
		return zero, fmt.Errorf("TestHost: the answer to %q is %T, not %T", question, a, zero)
	}
	return typed, nil
}

func (h *TestHost) Confirm(o ConfirmOptions) (bool, error) { return answer[bool](h, o.Message) }

func (h *TestHost) PromptText(o TextOptions) (string, error) { return answer[string](h, o.Message) }

func (h *TestHost) Select(o SelectOptions) (int, error) {
	i, err := answer[int](h, o.Message)
	if err == nil && (i < 0 || i >= len(o.Choices)) {
		return 0, fmt.Errorf("TestHost: the answer to %q is %d, not an index of its %d choices", o.Message, i, len(o.Choices))
	}
	return i, err
}

func (h *TestHost) AccessToken(scope string) (AccessToken, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.Tokens[scope]
	if !ok {
		return AccessToken{}, &LocalError{Message: "no token for scope " + scope, Code: "scope_not_granted", Category: LocalErrorCategoryAuth}
	}
	return AccessToken{Token: t}, nil
}
